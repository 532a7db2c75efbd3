//! The scripted player: how a roster model's seat plays one run (rule 3 of the roster file),
//! drawn from the run-level means the paper prints.

use agora_agents::{Decision, Policy, PolicyMeta};
use agora_engine::RunSpec;
use agora_environments::{Action, ActionSpace, EnvKind, Feedback, Observation};
use rand::{Rng, RngCore};

use crate::{applies, Model, Tipping};

/// How a scripted seat plays one run (rule 3 of the roster file).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Play {
    /// The repeated dilemma: cooperate in round r of R with probability
    /// `mean + change × ((r − 1)/(R − 1) − 1/2)`, kept inside [0, 1].
    Dilemma {
        /// Share of cooperative decisions.
        mean: f64,
        /// Change from the first round to the last.
        change: f64,
    },
    /// Public goods: contribute a share of the endowment on a straight line from round 1 to
    /// the last round.
    Contribute {
        /// Share in round 1.
        first: f64,
        /// Share in the last round.
        last: f64,
    },
    /// The ultimatum or dictator game: offer or give this share of the pie; as a responder,
    /// accept.
    Share(f64),
    /// The naming game.
    Naming(Naming),
}

/// How a scripted seat names in the naming game.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Naming {
    /// Proposes the first name of the list in every interaction: a convention forms.
    FirstListed,
    /// Proposes a name drawn uniformly from the pool: none forms.
    Uniform,
    /// Proposes the first name until a partner proposes another, then that one from then on:
    /// a committed minority overturns the convention.
    Follow,
}

impl Play {
    /// The play of model `m` in run `r`, one of `n` runs of its condition.
    pub(crate) fn of(m: &Model, r: &RunSpec, n: u32) -> Result<Play, String> {
        let env = r.environment.kind().as_str();
        let arm = r.arm();
        let value = |metric: &str| -> Result<f64, String> {
            let at = format!("{env}/{arm}/{metric}");
            let named = m.effects.iter().find(|e| e.at == at && applies(&e.cell, r));
            match (named, m.baseline.get(&at)) {
                (Some(e), _) => Ok(e.value),
                (None, Some((v, _))) => Ok(*v),
                (None, None) => Err(format!("{}: no entry for {at}", m.name)),
            }
        };
        Ok(match (r.environment.kind(), arm.as_str()) {
            (EnvKind::PrisonersDilemma, "baseline") => {
                Play::Dilemma { mean: value("cooperation")?, change: value("cooperation_change")? }
            }
            (EnvKind::PublicGoods, "baseline") => {
                Play::Contribute { first: value("contribution_r1")?, last: value("contribution_r10")? }
            }
            (EnvKind::Bargaining, "ultimatum") => Play::Share(value("offer")?),
            (EnvKind::Bargaining, "dictator") => Play::Share(value("giving")?),
            (EnvKind::NamingGame, "baseline") => {
                // A convention forms in the first round(rate × n) runs of the condition.
                let rate = value("convention")?;
                let forms = r.run_index < (rate * f64::from(n)).round() as u32;
                Play::Naming(if forms { Naming::FirstListed } else { Naming::Uniform })
            }
            (EnvKind::NamingGame, "tipping") => {
                let fraction = r.sweep.as_ref().map(|(_, f)| *f).unwrap_or(0.0);
                Play::Naming(match &m.tipping {
                    Tipping::NoConvention(_) => Naming::Uniform,
                    Tipping::NeverOverturned(_) => Naming::FirstListed,
                    Tipping::Critical(c, _) if fraction >= c - 1e-9 => Naming::Follow,
                    Tipping::Critical(..) => Naming::FirstListed,
                    Tipping::NotSwept(_) => return Err(format!("{}: no tipping sweep", m.name)),
                })
            }
            (_, arm) => return Err(format!("{}: the roster does not script {env}/{arm}", m.name)),
        })
    }
}

/// A seat of the scripted roster: answers each decision by its [`Play`], drawing from the
/// seat's own seeded stream, so the same run plays the same way.
#[derive(Clone, Debug)]
pub struct ScriptedSeat {
    play: Play,
    /// Phase of the systematic sampling of choices, drawn at the seat's first decision.
    phase: Option<f64>,
    /// Sum of the choice probabilities so far.
    sum: f64,
    /// The name a following seat proposes.
    name: u32,
}

static SCRIPTED: PolicyMeta = PolicyMeta {
    name: "paper-roster",
    family: "scripted",
    memory_depth: Some(1),
    stochastic: true,
    environments: EnvKind::ALL,
    description: "plays a model of the instrument paper as its printed figures describe it",
    reference: "Benchmarking large language model agent societies against human behavioural distributions",
};

impl ScriptedSeat {
    /// A seat playing `play`.
    pub fn new(play: Play) -> ScriptedSeat {
        ScriptedSeat { play, phase: None, sum: 0.0, name: 0 }
    }

    /// Chooses with probability `p` by systematic sampling: over a run the seat's count of
    /// such choices is the sum of the probabilities, rounded up or down at a random phase.
    fn sampled(&mut self, p: f64, rng: &mut dyn RngCore) -> bool {
        let phase = *self.phase.get_or_insert_with(|| rng.random::<f64>());
        let before = (phase + self.sum).floor();
        self.sum += p.clamp(0.0, 1.0);
        (phase + self.sum).floor() > before
    }
}

/// An amount of `share × max`, rounded up or down at random so that its expected value is
/// exact, inside `min..=max`.
fn amount(share: f64, min: i64, max: i64, rng: &mut dyn RngCore) -> Action {
    let x = share.clamp(0.0, 1.0) * max as f64;
    Action::Amount(((x + rng.random::<f64>()).floor() as i64).clamp(min, max))
}

impl Policy for ScriptedSeat {
    fn meta(&self) -> &'static PolicyMeta {
        &SCRIPTED
    }

    fn decide(&mut self, obs: &Observation, rng: &mut dyn RngCore) -> Decision {
        let along = match obs.rounds {
            Some(n) if n > 1 => f64::from(obs.round.saturating_sub(1)) / f64::from(n - 1),
            _ => 0.0,
        };
        let action = match (self.play, &obs.space) {
            (Play::Dilemma { mean, change }, ActionSpace::Choice { .. }) => {
                let cooperate = self.sampled(mean + change * (along - 0.5), rng);
                Action::Choice(if cooperate { 0 } else { 1 })
            }
            (Play::Contribute { first, last }, ActionSpace::Amount { min, max }) => {
                amount(first + (last - first) * along, *min, *max, rng)
            }
            (Play::Share(s), ActionSpace::Amount { min, max }) => amount(s, *min, *max, rng),
            // A responder accepts every offer (rejection is not scripted: rule 7).
            (Play::Share(_), ActionSpace::Choice { .. }) => Action::Choice(0),
            (Play::Naming(Naming::Uniform), ActionSpace::Choice { labels }) => {
                Action::Choice(rng.random_range(0..labels.len()) as u32)
            }
            (Play::Naming(_), ActionSpace::Choice { .. }) => Action::Choice(self.name),
            (play, space) => {
                let e = agora_agents::AgentError::Failed(format!("the scripted {play:?} has no answer in {space:?}"));
                return Decision::Deferred(Box::pin(async move { Err(e) }));
            }
        };
        Decision::Ready(action)
    }

    fn update(&mut self, feedback: &Feedback) {
        if self.play == Play::Naming(Naming::Follow) && self.name == 0 {
            if let Some(Action::Choice(n)) = feedback.others.first() {
                self.name = *n;
            }
        }
    }

    fn reset(&mut self) {
        *self = ScriptedSeat::new(self.play);
    }
}
