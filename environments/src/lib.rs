//! The game registry of Agora: one module per game.
//!
//! Each game lives in [`games`] as one module: its parameters (the [`Game`] trait: validation,
//! population, memory, expected decisions, the wording a participant reads, its metrics and
//! run-level outcomes), its variants file `assets/environments/<game>.ron` (C0–C3 as data, not
//! forks) and its [`Environment`], which plays one run. A game proceeds in *stages*: the
//! environment lists the decisions it needs ([`Environment::pending`]), the engine gathers them
//! from the agents' policies, and the environment resolves them ([`Environment::resolve`]) into
//! a [`Step`] of records. Adding a game: see "Adding a game" in README.

/// The symmetric 2×2 games, one registry line each: `Name = "name"`, the name its study files
/// and the store use, which also names its variants file and its rules template. A 2×2 game is
/// those two files and this line ([`games::two_by_two`]). The list is handed to `kinds!`, which
/// places the games between the ones given before and after them, and to `games!`.
macro_rules! with_two_by_two_games {
    ($callback:ident { $($before:tt)* } { $($after:tt)* }) => {
        $callback! {
            $($before)*
            StagHunt = "stag-hunt",
            Coordination = "coordination",
            $($after)*
        }
    };
}

pub mod action;
pub mod error;
pub mod game;
pub mod games;
pub mod kind;
pub mod layout;
pub mod observation;
pub mod outcome;
pub mod variants;

pub use action::{Action, ActionSpace};
pub use error::EnvError;
pub use game::{Declaration, Fallback, Frame, Game, MetricDef, Rules, RunView, Wording};
pub use games::{
    bargaining, declaration, declarations, money_request, naming, prisoners_dilemma, public_goods, two_by_two, EnvSpec,
};
pub use kind::{EnvKind, Role, Variant};
pub use observation::{Context, Feedback, Observation, PayoffBounds};

use rand::RngCore;

/// One decision the environment needs from one agent in the current stage.
#[derive(Clone, Debug, PartialEq)]
pub struct Request {
    /// Seat of the agent in the population (0-based).
    pub agent: usize,
    /// What the agent is shown.
    pub observation: Observation,
}

impl Request {
    /// The same decision put to each of `seats`, in that order.
    pub fn each(seats: impl IntoIterator<Item = usize>, observation: &Observation) -> Vec<Request> {
        seats.into_iter().map(|agent| Request { agent, observation: observation.clone() }).collect()
    }
}

/// One recorded decision, with the numeric reading the analysis uses.
#[derive(Clone, Debug, PartialEq)]
pub struct DecisionRow {
    /// Seat of the agent that decided.
    pub agent: usize,
    /// The part it played in the decision.
    pub role: Role,
    /// What it chose.
    pub action: Action,
    /// Numeric value of the action: the choice index, the amount, or the allocation's total.
    pub value: f64,
    /// The natural maximum of the value (endowment, pie, amount available); `value / scale` is
    /// the share the analysis reports. 1 for binary choices.
    pub scale: f64,
    /// What the agent faced, where that matters (offer faced, amount received).
    pub context: Option<f64>,
}

impl DecisionRow {
    /// A choice by its index: the index is the value, on a scale of 1.
    pub fn choice(agent: usize, role: Role, choice: u32, context: Option<f64>) -> DecisionRow {
        DecisionRow { agent, role, action: Action::Choice(choice), value: f64::from(choice), scale: 1.0, context }
    }

    /// An amount: the amount is the value, on the scale given (the most it could have been).
    pub fn amount(agent: usize, role: Role, amount: i64, scale: f64, context: Option<f64>) -> DecisionRow {
        DecisionRow { agent, role, action: Action::Amount(amount), value: amount as f64, scale, context }
    }
}

/// A pairwise meeting in a naming game: who met whom, what each proposed, whether they matched.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Interaction {
    /// Seat of the first agent of the pair.
    pub a: usize,
    /// Seat of the second agent of the pair.
    pub b: usize,
    /// The name the first agent proposed (index into the pool).
    pub name_a: u32,
    /// The name the second agent proposed (index into the pool).
    pub name_b: u32,
    /// Whether the two proposed the same name.
    pub matched: bool,
}

/// Everything a resolved stage produced.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Step {
    /// Round (repeated games), game (one-shot batteries) or interaction (naming game), 1-based.
    pub round: u32,
    /// Every decision taken in this stage, in request order.
    pub decisions: Vec<DecisionRow>,
    /// Payoffs realised in this stage, per agent.
    pub payoffs: Vec<(usize, f64)>,
    /// What each agent learns once the stage is resolved.
    pub feedback: Vec<(usize, Feedback)>,
    /// The pairwise meeting this stage was, in the naming game.
    pub interaction: Option<Interaction>,
}

impl Step {
    /// Records one seat's move in a stage where two seats move at once, each against the other:
    /// its decision, its payoff, and what it learns (its own action, the partner's, the payoff).
    pub fn push_paired(&mut self, decision: DecisionRow, partner: (usize, Action), payoff: f64) {
        let (seat, role, own) = (decision.agent, decision.role, decision.action.clone());
        self.decisions.push(decision);
        self.payoffs.push((seat, payoff));
        let (partner, theirs) = partner;
        let feedback = Feedback {
            round: self.round,
            own: vec![(role, own)],
            others: vec![theirs],
            partner: Some(partner),
            payoff,
        };
        self.feedback.push((seat, feedback));
    }
}

/// A game: legal actions, observations, payoff resolution, end condition.
///
/// Implementations hold their own state for one run; the engine owns randomness and passes the
/// run's stream in, so the same seed gives the same game.
pub trait Environment: Send + Sync {
    /// Which game this is.
    fn kind(&self) -> EnvKind;
    /// Number of seats; two by default, as [`Game::population`].
    fn population(&self) -> usize {
        2
    }
    /// The decisions needed next; empty once the game has ended.
    fn pending(&mut self, rng: &mut dyn RngCore) -> Vec<Request> {
        if self.is_done() {
            return Vec::new();
        }
        self.next_stage(rng)
    }
    /// The decisions of the next stage, asked for by [`Environment::pending`] only while the
    /// game has not ended.
    fn next_stage(&mut self, rng: &mut dyn RngCore) -> Vec<Request>;
    /// Resolves the stage opened by the last [`Environment::pending`] call.
    ///
    /// `actions` holds one action per request, in request order. An action outside the legal
    /// space is an error, not silently repaired: repairing is the policy's business.
    fn resolve(&mut self, actions: &[(usize, Action)], rng: &mut dyn RngCore) -> Result<Step, EnvError>;
    /// Whether the game has ended.
    fn is_done(&self) -> bool;
    /// As [`Environment::pending`], into `out` (whose requests it replaces): a game may reuse
    /// the memory of the last stage's requests. The requests are those `pending` returns.
    fn pending_into(&mut self, rng: &mut dyn RngCore, out: &mut Vec<Request>) {
        *out = self.pending(rng);
    }
    /// As [`Environment::resolve`], into `step` (which it replaces): a game may reuse the
    /// memory of the last stage's step. The step is the one `resolve` returns; after an error
    /// its content is unspecified.
    fn resolve_into(
        &mut self,
        actions: &[(usize, Action)],
        rng: &mut dyn RngCore,
        step: &mut Step,
    ) -> Result<(), EnvError> {
        *step = self.resolve(actions, rng)?;
        Ok(())
    }
    /// What an agent remembers before the first stage (e.g. an established convention).
    fn prehistory(&self, _agent: usize) -> Vec<Feedback> {
        Vec::new()
    }
}

/// Convenient imports for users of this crate.
pub mod prelude {
    pub use crate::{
        Action, ActionSpace, Context, DecisionRow, EnvError, EnvKind, EnvSpec, Environment, Feedback, Game,
        Interaction, Observation, PayoffBounds, Request, Role, Step, Variant,
    };
}

/// Checks that `actions` answer exactly the open requests, in order, with legal actions.
pub(crate) fn check_actions<'a>(
    actions: &'a [(usize, Action)],
    open: &[(usize, &ActionSpace)],
) -> Result<Vec<&'a Action>, EnvError> {
    let same = actions.len() == open.len() && actions.iter().zip(open).all(|((a, _), (b, _))| a == b);
    if !same {
        return Err(EnvError::ActionMismatch {
            expected: open.iter().map(|(a, _)| *a).collect(),
            got: actions.iter().map(|(a, _)| *a).collect(),
        });
    }
    actions
        .iter()
        .zip(open)
        .map(|((agent, action), (_, space))| {
            if space.contains(action) {
                Ok(action)
            } else {
                Err(EnvError::IllegalAction { agent: *agent, action: action.encode() })
            }
        })
        .collect()
}

/// A number as a person writes it (3, not 3.0).
pub(crate) fn num(x: f64) -> String {
    format!("{x}")
}

/// Reads an integer amount out of an action already checked against an `Amount` space.
pub(crate) fn amount(action: &Action) -> i64 {
    match action {
        Action::Amount(a) => *a,
        other => other.value() as i64,
    }
}

/// Reads a choice index out of an action already checked against a `Choice` space.
pub(crate) fn choice_index(action: &Action) -> u32 {
    match action {
        Action::Choice(c) => *c,
        other => other.value() as u32,
    }
}

/// Two distinct seats drawn uniformly from `0..n` (n ≥ 2), in draw order.
pub(crate) fn draw_pair(rng: &mut dyn RngCore, n: usize) -> (usize, usize) {
    use rand::Rng;
    let a = rng.random_range(0..n);
    let mut b = rng.random_range(0..n - 1);
    if b >= a {
        b += 1;
    }
    (a, b)
}
