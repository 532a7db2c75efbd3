//! Binary allocation (the SUVA audit paper §240.3–240.5; Leng & Yuan 2024): person B, the agent, chooses
//! between two allocations, B1 and B2, each giving some points to person A and some to B;
//! person A makes no choice.
//!
//! # States
//! A payoff configuration is `(a1, b1, a2, b2)`: what A and B receive under B1 and under B2,
//! each one of L = 4 levels (0, 200, 400, 600 in C0). The treatments:
//! - `Distributional`: every configuration whose two options differ, L⁴ − L² = 240 (Eq. 240.3);
//! - `Group`: those 240 × four identity cues (a drawn color, a preferred painter, a shared
//!   hometown, a shared school) × ingroup or outgroup = 1,920;
//! - `DirectReciprocity`, `IndirectReciprocity`: the configurations in which one option is
//!   better for A without being better for B (a1 > a2 and b1 ≤ b2, or the mirror image),
//!   2·C(L,2)·(L + C(L,2)) = 120 (Eq. 240.4), × A having helped or harmed B (direct) or another
//!   person (indirect) = 240 each.
//!
//! Every state has an id, `10_000 · treatment code + index` (codes 0–3 in the order above; the
//! index counts the treatment's states in the order [`state`] documents), recorded as the
//! decision's `context`, so that a stored row alone gives the state back: [`state`] maps an id
//! to its configuration, cue and history. The payoffs in `points` are the variant's levels at
//! the configuration's level indices. `analysis::motives` mirrors this enumeration (a test at
//! the workspace root checks that both agree on every id).
//!
//! # A run
//! One run plays every state of its treatment `replicates` times, in an order shuffled by the
//! run's seed; each decision is one state, asked on its own (no history is shown). Seat 1 is
//! person B, who decides; seat 0 is person A, who is paid and never asked. Choice index 0 is
//! B1, index 1 is B2.
//!
//! # Variants
//! C1 re-tells the situation with other labels and units; C2 shifts every level by 100. The
//! levels of every variant are equally spaced, so the four motive signs of the SUVA audit paper (which
//! depend on payoff differences only) are the same in every variant. C3 is C0 (marked
//! `same_as_c0`): in a dictator choice the human result, giving up points for A, never pays
//! B, so no payoffs make it "no longer the profitable one"; the selfish prediction and the human
//! result already diverge in C0.

use std::sync::{Arc, OnceLock};

use rand::seq::SliceRandom;
use rand::RngCore;
use serde::{Deserialize, Serialize};

use crate::error::{at_least_one, invalid, EnvError};
use crate::game::{
    in_order, Direction, Game, Headline, Indicator, IndicatorRule, MetricDef, Rules, RunView, SummaryKind, Wording,
};
use crate::kind::{EnvKind, Role, Variant};
use crate::observation::{Context, Feedback, Observation, PayoffBounds};
use crate::variants::two_labels;
use crate::{check_actions, choice_index, outcome, Action, ActionSpace, DecisionRow, Environment, Request, Step};

/// One line for `agora list environments`.
pub const DESCRIPTION: &str =
    "binary allocation (the SUVA audit paper): person B picks B1 or B2, each paying A and B one of \
     0/200/400/600; 240 distributional states (or group-identity, direct or indirect reciprocity), 5 replicates each";

/// Payoff levels per payoff (L).
pub const LEVELS: usize = 4;
/// Distributional configurations: L⁴ − L² (Eq. 240.3).
pub const N_DISTRIBUTIONAL: u32 = 240;
/// Reciprocity configurations: 2·C(L,2)·(L + C(L,2)) (Eq. 240.4).
pub const N_RECIPROCITY: u32 = 120;
/// A state id is `ID_STRIDE · treatment code + index`.
pub const ID_STRIDE: u32 = 10_000;
/// The most replicates a run may ask for (a run is one sequence of decisions; more samples
/// are more runs).
pub const MAX_REPLICATES: u32 = 1_000;
/// The seat of person B, who decides.
pub const CHOOSER: usize = 1;
/// The seat of person A, who makes no choice.
pub const PASSIVE: usize = 0;

/// Which of the SUVA audit paper's four experiments a run plays.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema)]
pub enum Treatment {
    /// The 240 configurations, no cue and no history (code 0).
    Distributional,
    /// The 240 configurations × 4 identity cues × ingroup/outgroup (code 1).
    Group,
    /// The 120 reciprocity configurations × A helped/harmed B (code 2).
    DirectReciprocity,
    /// The 120 reciprocity configurations × A helped/harmed another person (code 3).
    IndirectReciprocity,
}

impl Treatment {
    /// Every treatment, by code.
    pub const ALL: [Treatment; 4] =
        [Treatment::Distributional, Treatment::Group, Treatment::DirectReciprocity, Treatment::IndirectReciprocity];

    /// The treatment's code in a state id.
    pub fn code(self) -> u32 {
        self as u32
    }

    /// Number of states.
    pub fn states(self) -> u32 {
        match self {
            Treatment::Distributional => N_DISTRIBUTIONAL,
            Treatment::Group => N_DISTRIBUTIONAL * 8,
            Treatment::DirectReciprocity | Treatment::IndirectReciprocity => N_RECIPROCITY * 2,
        }
    }

    /// Name in the store (the run's arm).
    pub fn as_str(self) -> &'static str {
        match self {
            Treatment::Distributional => "distributional",
            Treatment::Group => "group",
            Treatment::DirectReciprocity => "direct-reciprocity",
            Treatment::IndirectReciprocity => "indirect-reciprocity",
        }
    }
}

/// The identity cue of a group state (the SUVA audit paper: the first two follow the minimal group
/// paradigm of Chen & Li 2009, the last two are affiliations).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Cue {
    /// A color assigned by a random draw.
    Color,
    /// The preferred one of two painters.
    Painter,
    /// The hometown.
    Hometown,
    /// The school.
    School,
}

impl Cue {
    /// The four cues, in enumeration order.
    pub const ALL: [Cue; 4] = [Cue::Color, Cue::Painter, Cue::Hometown, Cue::School];

    /// The sentence a participant reads: whether B and A share the cue.
    pub fn sentence(self, ingroup: bool) -> &'static str {
        match (self, ingroup) {
            (Cue::Color, true) => "A random draw gave you and person A the same color.",
            (Cue::Color, false) => "A random draw gave you and person A different colors.",
            (Cue::Painter, true) => "Shown pictures by two painters, you and person A liked the same painter better.",
            (Cue::Painter, false) => {
                "Shown pictures by two painters, you and person A liked different painters better."
            }
            (Cue::Hometown, true) => "You and person A grew up in the same town.",
            (Cue::Hometown, false) => "You and person A grew up in different towns.",
            (Cue::School, true) => "You and person A went to the same school.",
            (Cue::School, false) => "You and person A went to different schools.",
        }
    }
}

/// What person A did before a reciprocity state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum History {
    /// A chose the option that gave the other more and A less.
    Helped,
    /// A chose the option that gave the other less and A more.
    Harmed,
}

/// One state: a payoff configuration, with its cue or history.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct State {
    /// The treatment it belongs to.
    pub treatment: Treatment,
    /// Its index among the treatment's states.
    pub index: u32,
    /// The configuration's index in the distributional grid (the cluster of the SUVA audit paper's
    /// regressions: one payoff configuration).
    pub config: u32,
    /// Level indices (0..L) of `(a1, b1, a2, b2)`.
    pub levels: [u8; 4],
    /// The identity cue and whether A shares it (group states).
    pub cue: Option<(Cue, bool)>,
    /// What A did before, and whether to B (`true`, direct) or to another person (indirect).
    pub history: Option<History>,
}

impl State {
    /// The state's id (the decision's `context`).
    pub fn id(&self) -> u32 {
        ID_STRIDE * self.treatment.code() + self.index
    }

    /// `(a1, b1, a2, b2)` at the given levels (L of them).
    pub fn payoffs(&self, levels: &[i64]) -> [i64; 4] {
        self.levels.map(|l| levels[l as usize])
    }

    /// The option (0 = B1, 1 = B2) better for A, where the two differ for A.
    pub fn better_for_a(&self) -> Option<u32> {
        let [a1, _, a2, _] = self.levels;
        match a1.cmp(&a2) {
            std::cmp::Ordering::Greater => Some(0),
            std::cmp::Ordering::Less => Some(1),
            std::cmp::Ordering::Equal => None,
        }
    }
}

/// What a state says, as the decider (person B) reads it under one variant: the facts a
/// sentence about the state can be checked against (the transcript audit's prefill states a
/// value only in terms these make true).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StateFacts {
    /// The two options' labels, B1 first.
    pub labels: [String; 2],
    /// What person B (the decider) receives under each option.
    pub own: [i64; 2],
    /// What person A receives under each option.
    pub other: [i64; 2],
    /// What the payoffs are counted in.
    pub unit: String,
    /// Group states: whether A shares the cue with B.
    pub shared_group: Option<bool>,
    /// Reciprocity states: whether A's earlier choice was about B (direct) or another person,
    /// and whether it gave them more (helped).
    pub before: Option<(bool, bool)>,
}

impl State {
    /// The state's facts under `variant`.
    pub fn facts(&self, variant: Variant) -> StateFacts {
        let v = variants().get(variant);
        let [a1, b1, a2, b2] = self.payoffs(&v.levels);
        StateFacts {
            labels: [v.labels[0].clone(), v.labels[1].clone()],
            own: [b1, b2],
            other: [a1, a2],
            unit: v.unit.clone(),
            shared_group: self.cue.map(|(_, shared)| shared),
            before: self.history.map(|h| (self.treatment == Treatment::DirectReciprocity, h == History::Helped)),
        }
    }
}

/// The distributional grid: level indices `(a1, b1, a2, b2)` in lexicographic order, without
/// the configurations whose two options are identical.
pub fn payoff_grid() -> &'static [[u8; 4]] {
    static GRID: OnceLock<Vec<[u8; 4]>> = OnceLock::new();
    GRID.get_or_init(|| {
        let l = LEVELS as u8;
        let mut grid = Vec::new();
        for a1 in 0..l {
            for b1 in 0..l {
                for a2 in 0..l {
                    for b2 in 0..l {
                        if (a1, b1) != (a2, b2) {
                            grid.push([a1, b1, a2, b2]);
                        }
                    }
                }
            }
        }
        grid
    })
}

/// Whether one option is better for A without being better for B (Eq. 240.4's condition).
pub fn is_reciprocity_config(c: [u8; 4]) -> bool {
    let [a1, b1, a2, b2] = c;
    (a1 > a2 && b1 <= b2) || (a2 > a1 && b2 <= b1)
}

/// The reciprocity grid: the distributional grid's indices whose configuration meets
/// [`is_reciprocity_config`], in grid order.
pub fn reciprocity_grid() -> &'static [u32] {
    static GRID: OnceLock<Vec<u32>> = OnceLock::new();
    GRID.get_or_init(|| {
        payoff_grid().iter().enumerate().filter(|(_, c)| is_reciprocity_config(**c)).map(|(i, _)| i as u32).collect()
    })
}

/// The state with id `id`, or `None` for an id outside every treatment.
///
/// Within a treatment, index `i` is: distributional, grid configuration `i`; group,
/// configuration `i / 8`, cue `(i % 8) / 2` (color, painter, hometown, school), ingroup when
/// `i` is even; reciprocity, reciprocity configuration `i / 2`, A helped when `i` is even.
pub fn state(id: u32) -> Option<State> {
    let (code, index) = (id / ID_STRIDE, id % ID_STRIDE);
    let treatment = *Treatment::ALL.get(code as usize)?;
    if index >= treatment.states() {
        return None;
    }
    let grid = payoff_grid();
    let (config, cue, history) = match treatment {
        Treatment::Distributional => (index, None, None),
        Treatment::Group => (index / 8, Some((Cue::ALL[((index % 8) / 2) as usize], (index & 1) == 0)), None),
        Treatment::DirectReciprocity | Treatment::IndirectReciprocity => {
            let history = if (index & 1) == 0 { History::Helped } else { History::Harmed };
            (reciprocity_grid()[(index / 2) as usize], None, Some(history))
        }
    };
    Some(State { treatment, index, config, levels: grid[config as usize], cue, history })
}

/// The situation, labels, unit and payoff levels of one variant.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BaVariant {
    /// The situation as a participant reads it, before the rules (may be empty).
    pub cover_story: String,
    /// The two options, B1 first.
    pub labels: Arc<[String]>,
    /// What the payoffs are counted in (`points`).
    pub unit: String,
    /// The L payoff levels, equally spaced and increasing.
    pub levels: Vec<i64>,
    /// Whether this variant repeats C0 because no version of its kind exists (C3).
    pub same_as_c0: bool,
}

crate::shipped_variants!(variants, BaVariant, "binary-allocation.ron", |v: &BaVariant| {
    two_labels(&v.labels)?;
    if v.levels.len() != LEVELS {
        return Err(format!("levels must hold {LEVELS} payoffs, got {}", v.levels.len()));
    }
    let step = v.levels[1] - v.levels[0];
    if step <= 0 || v.levels.windows(2).any(|w| w[1] - w[0] != step) {
        return Err(format!("levels must be equally spaced and increasing, got {:?}", v.levels));
    }
    Ok(())
});

/// The metrics of a run.
pub const METRICS: &[MetricDef] = &[
    MetricDef::primary(
        "prosocial",
        "share of decisions choosing the option better for A, where the options differ for A",
        Direction::Higher,
    ),
    MetricDef::secondary("b1_share", "share of decisions choosing B1"),
    MetricDef::secondary("reciprocity", "prosocial share after A helped minus after A harmed (Eq. 240.8)"),
];

/// Parameters of the binary-allocation game.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct BaParams {
    /// Which experiment: its states are played.
    pub treatment: Treatment,
    /// Times each state is asked in a run (the SUVA audit paper: 5, or 2 in the group treatment).
    #[schemars(range(min = 1, max = MAX_REPLICATES))]
    pub replicates: u32,
}

impl Default for BaParams {
    fn default() -> Self {
        BaParams { treatment: Treatment::Distributional, replicates: 5 }
    }
}

impl BaParams {
    fn decisions(&self) -> u32 {
        self.treatment.states() * self.replicates
    }
}

/// The state an observation of this game shows (its `Context::State`).
pub fn observed_state(obs: &Observation) -> Option<State> {
    match obs.context {
        Context::State { id } => state(id),
        _ => None,
    }
}

/// The sentence that sets the scene of a state: its cue or A's earlier choice (none in the
/// distributional treatment).
fn scene(s: &State, unit: &str) -> Option<String> {
    if let Some((cue, ingroup)) = s.cue {
        return Some(cue.sentence(ingroup).to_string());
    }
    let whom = match s.treatment {
        Treatment::DirectReciprocity => "you",
        _ => "another person",
    };
    let (to_them, to_a) = match s.history? {
        History::Helped => ("more", "fewer"),
        History::Harmed => ("fewer", "more"),
    };
    Some(format!(
        "In an earlier decision like this one, person A chose the option that gave {whom} {to_them} {unit} and \
         person A {to_a}."
    ))
}

impl Game for BaParams {
    fn validate(&self) -> Result<(), EnvError> {
        at_least_one("replicates", self.replicates)?;
        if self.replicates > MAX_REPLICATES {
            return Err(invalid("replicates", format!("must be at most {MAX_REPLICATES}, got {}", self.replicates)));
        }
        Ok(())
    }

    fn build_env(&self, variant: Variant) -> Result<Box<dyn Environment>, EnvError> {
        Ok(Box::new(BinaryAllocation::new(self.clone(), variant, variants().get(variant).clone())))
    }

    fn arm(&self) -> String {
        self.treatment.as_str().into()
    }

    fn wording(&self, variant: Variant) -> Wording {
        Wording {
            paradigm: "binary dictator game",
            keywords: &["dictator", "social value orientation", "decomposed game"],
            labels: variants().get(variant).labels.clone(),
            unit: "decision",
            history_columns: vec!["you chose"],
            narrative_verb: "you chose",
            fixed_partner: true,
            summary: SummaryKind::MeanDecision,
        }
    }

    fn rules(&self, obs: &Observation, reversed: bool) -> Result<Rules, EnvError> {
        let d = variants().get(obs.variant);
        Ok(Rules {
            template: "binary-allocation.j2",
            values: serde_json::json!({
                "cover_story": d.cover_story, "decisions": obs.rounds.unwrap_or_else(|| self.decisions()),
                "labels": in_order(&d.labels, reversed), "unit": d.unit,
            }),
        })
    }

    fn question(&self, obs: &Observation) -> String {
        let d = variants().get(obs.variant);
        let Some(s) = observed_state(obs) else { return "Which option do you choose?".into() };
        let [a1, b1, a2, b2] = s.payoffs(&d.levels);
        let unit = &d.unit;
        let offer = |label: &str, a: i64, b: i64| {
            format!("Under {label}, person A receives {a} {unit} and you receive {b} {unit}.")
        };
        let mut parts: Vec<String> = scene(&s, unit).into_iter().collect();
        parts.push(offer(&d.labels[0], a1, b1));
        parts.push(offer(&d.labels[1], a2, b2));
        parts.push("Which option do you choose?".into());
        parts.join(" ")
    }

    fn history_cells(&self, fb: &Feedback, wording: &Wording) -> Vec<String> {
        vec![fb.own.iter().map(|(_, a)| wording.format_action(a)).collect::<Vec<_>>().join(", ")]
    }

    /// The SUVA audit paper's prompt asks the model to reason briefly, step by step, and then
    /// answer: the transcript audit codes that pre-action reasoning, so every decision asks
    /// for it.
    fn reasons_first(&self) -> bool {
        true
    }

    fn metrics(&self) -> &'static [MetricDef] {
        METRICS
    }

    /// The distributional treatment: the 240 configurations without cue or history.
    fn headline(&self) -> &'static [Headline] {
        &[Headline { arm: "distributional", metric: "prosocial" }]
    }

    fn indicators(&self) -> &'static [Indicator] {
        &[Indicator {
            role: "dictator",
            name: "prosocial",
            definition: "1 when person B chooses the option better for A (the SUVA audit paper's prosocial option, Eq. 240.8), 0 for the other; states in which both options give A the same are left out",
            binary: true,
            rule: IndicatorRule::BetterForA,
        }]
    }

    fn outcomes(&self, run: &RunView<'_>) -> Vec<(String, f64)> {
        // (state, choice) of every decision whose context names a state.
        let choices: Vec<(State, u32)> = run
            .decisions
            .iter()
            .filter(|d| d.role == Role::Dictator.as_str())
            .filter_map(|d| Some((state(d.context? as u32)?, d.value as u32)))
            .collect();
        if choices.is_empty() {
            return Vec::new();
        }
        let mut out = Vec::new();
        let prosocial: Vec<f64> =
            choices.iter().filter_map(|(s, c)| s.better_for_a().map(|p| f64::from(u8::from(p == *c)))).collect();
        if !prosocial.is_empty() {
            out.push(("prosocial".into(), outcome::mean(prosocial)));
        }
        out.push(("b1_share".into(), outcome::mean(choices.iter().map(|(_, c)| f64::from(u8::from(*c == 0))))));
        // Eq. 240.8: the mean over states of each state's prosocial rate, after A helped minus
        // after A harmed.
        let mut per_state: std::collections::BTreeMap<u32, (History, Vec<f64>)> = std::collections::BTreeMap::new();
        for (s, c) in &choices {
            if let (Some(h), Some(p)) = (s.history, s.better_for_a()) {
                per_state.entry(s.id()).or_insert((h, Vec::new())).1.push(f64::from(u8::from(p == *c)));
            }
        }
        let arm = |h: History| -> Vec<f64> {
            per_state.values().filter(|(x, _)| *x == h).map(|(_, v)| outcome::mean(v.iter().copied())).collect()
        };
        let (helped, harmed) = (arm(History::Helped), arm(History::Harmed));
        if !helped.is_empty() && !harmed.is_empty() {
            out.push(("reciprocity".into(), outcome::mean(helped) - outcome::mean(harmed)));
        }
        out
    }

    fn length_field(&self) -> &'static str {
        "replicates"
    }

    fn expected_decisions(&self) -> (u64, bool) {
        // In u64: a replicate count near u32's bound must be refused by its size, not overflow.
        (u64::from(self.treatment.states()) * u64::from(self.replicates), false)
    }
}

/// One run of the binary-allocation game.
pub struct BinaryAllocation {
    params: BaParams,
    variant: Variant,
    table: BaVariant,
    /// State ids in play order, drawn at the first stage from the run's stream.
    order: Vec<u32>,
    /// Decisions taken so far.
    taken: u32,
}

impl BinaryAllocation {
    /// A run with the given parameters and variant table, before its first decision.
    pub fn new(params: BaParams, variant: Variant, table: BaVariant) -> Self {
        BinaryAllocation { params, variant, table, order: Vec::new(), taken: 0 }
    }

    fn current(&self) -> State {
        state(self.order[self.taken as usize]).expect("invariant: the play order holds ids of the treatment")
    }

    fn space(&self) -> ActionSpace {
        ActionSpace::Choice { labels: self.table.labels.clone() }
    }
}

impl Environment for BinaryAllocation {
    fn kind(&self) -> EnvKind {
        EnvKind::BinaryAllocation
    }

    fn next_stage(&mut self, rng: &mut dyn RngCore) -> Vec<Request> {
        if self.order.is_empty() {
            let t = self.params.treatment;
            let ids = (0..t.states()).map(|i| ID_STRIDE * t.code() + i);
            self.order = ids.flat_map(|id| std::iter::repeat_n(id, self.params.replicates as usize)).collect();
            self.order.shuffle(rng);
        }
        let levels = &self.table.levels;
        let mean = levels.iter().sum::<i64>() as f64 / LEVELS as f64;
        vec![Request {
            agent: CHOOSER,
            observation: Observation {
                env: EnvKind::BinaryAllocation,
                variant: self.variant,
                role: Role::Dictator,
                round: self.taken + 1,
                rounds: Some(self.params.decisions()),
                space: self.space(),
                context: Context::State { id: self.current().id() },
                payoffs: PayoffBounds { min: levels[0] as f64, mean_abs: mean.abs() },
                memory: 0,
            },
        }]
    }

    fn resolve(&mut self, actions: &[(usize, Action)], _rng: &mut dyn RngCore) -> Result<Step, EnvError> {
        let space = self.space();
        let action = check_actions(actions, &[(CHOOSER, &space)])?[0].clone();
        let s = self.current();
        let [a1, b1, a2, b2] = s.payoffs(&self.table.levels);
        let c = choice_index(&action);
        let (a, b) = if c == 0 { (a1, b1) } else { (a2, b2) };
        self.taken += 1;
        Ok(Step {
            round: self.taken,
            // The state id is the context: with the run's variant it gives the state back exactly.
            decisions: vec![DecisionRow::choice(CHOOSER, Role::Dictator, c, Some(f64::from(s.id())))],
            payoffs: vec![(PASSIVE, a as f64), (CHOOSER, b as f64)],
            feedback: vec![(
                CHOOSER,
                Feedback {
                    round: self.taken,
                    own: vec![(Role::Dictator, action)],
                    others: Vec::new(),
                    partner: Some(PASSIVE),
                    payoff: b as f64,
                },
            )],
            interaction: None,
        })
    }

    fn is_done(&self) -> bool {
        self.taken >= self.params.decisions()
    }
}

#[cfg(test)]
mod tests;
