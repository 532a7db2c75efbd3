//! Conditional cooperator for the public goods game.

use agora_environments::{Action, ActionSpace, Context, EnvKind, Feedback, Observation, Role};
use rand::{Rng, RngCore};
use serde::{Deserialize, Serialize};

use crate::classical::{check_non_negative, check_share};
use crate::error::AgentError;
use crate::policy::{Decision, Policy, PolicyMeta};

/// Parameters, with their sources.
///
/// - `initial = 0.5`: first-round contributions near half the endowment (Ledyard 1995;
///   Fischbacher, Gächter & Fehr 2001).
/// - `slope = 0.43`: contribution on the belief about the others' contribution
///   (Fischbacher & Gächter 2010, AER 100:541–556); below one, so cooperation is imperfect
///   and a group of conditional cooperators declines round by round.
/// - `intercept = 0.0`: share of the endowment contributed whatever the others do.
/// - `initial_sd = 0.15`: spread of first-round shares between agents. Not from a source: it
///   makes seeded runs differ, as human groups do.
/// - `punish_rate = 0.25`: punishment points per point a target contributed below the
///   punisher. The direction (punishing those below oneself, more for larger deviations)
///   follows Fehr & Gächter (2000, AER 90:980–994); the magnitude is a choice.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct ConditionalCooperatorParams {
    /// Mean first-round contribution, as a share of the endowment.
    #[schemars(range(min = 0.0, max = 1.0))]
    pub initial: f64,
    /// Standard deviation of the first-round share between agents.
    #[schemars(range(min = 0.0))]
    pub initial_sd: f64,
    /// Contribution per point of the others' mean contribution last round.
    #[schemars(range(min = 0.0))]
    pub slope: f64,
    /// Share of the endowment contributed whatever the others do.
    #[schemars(range(min = 0.0, max = 1.0))]
    pub intercept: f64,
    /// Punishment points per point a target contributed below the punisher.
    #[schemars(range(min = 0.0))]
    pub punish_rate: f64,
}

impl Default for ConditionalCooperatorParams {
    fn default() -> Self {
        ConditionalCooperatorParams { initial: 0.5, initial_sd: 0.15, slope: 0.43, intercept: 0.0, punish_rate: 0.25 }
    }
}

impl ConditionalCooperatorParams {
    /// Checks that every parameter lies in its range; the error names the first that does not.
    pub fn validate(&self) -> Result<(), AgentError> {
        let policy = CONDITIONAL_COOPERATOR.name;
        check_share(policy, "initial", self.initial)?;
        check_non_negative(policy, "initial_sd", self.initial_sd)?;
        check_non_negative(policy, "slope", self.slope)?;
        check_share(policy, "intercept", self.intercept)?;
        check_non_negative(policy, "punish_rate", self.punish_rate)
    }
}

/// Contributes in proportion to what the others contributed last round (slope below one) and
/// punishes members who contributed less than itself.
///
/// Every seat is the same *representative* agent: it applies the population's average slope
/// (0.43) to the others' mean, so a group of four shrinks geometrically by that factor each
/// round from its opening half endowment (10 → about 4 → 2 → 1 points) and, with amounts
/// rounded to whole points, contributes nothing from about round 5 on. Free riders,
/// hump-shaped contributors and the unclassified others of Fischbacher, Gächter & Fehr (2001)
/// are drawn seat by seat instead by [`super::CooperationTypes`] (`cooperation-types`), the
/// parameterisation of `scenarios/studies/replication.ron`; this policy is kept as it was so
/// that the studies and stores that use it keep their runs.
#[derive(Clone, Debug)]
pub struct ConditionalCooperator {
    params: ConditionalCooperatorParams,
    others_last: OthersLast,
}

impl ConditionalCooperator {
    /// A conditional cooperator with no memory of a previous round.
    pub fn new(params: ConditionalCooperatorParams) -> Self {
        ConditionalCooperator { params, others_last: OthersLast::default() }
    }
}

pub(crate) static CONDITIONAL_COOPERATOR: PolicyMeta = PolicyMeta {
    name: "conditional-cooperator",
    family: "classical",
    memory_depth: Some(1),
    stochastic: true,
    environments: &[EnvKind::PublicGoods],
    description:
        "contributes slope x the others' previous mean (imperfect conditional cooperation); punishes those below itself",
    reference:
        "Fischbacher, Gaechter & Fehr (2001) Econ. Letters 71:397-404; Fischbacher & Gaechter (2010) AER 100:541-556",
};

/// A standard normal draw (Box–Muller), from the engine's stream.
pub(crate) fn standard_normal(rng: &mut dyn RngCore) -> f64 {
    let u1: f64 = rng.random::<f64>().max(f64::MIN_POSITIVE);
    let u2: f64 = rng.random();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

/// A first-round contribution of the endowment `e`: a share drawn around `initial` with spread
/// `initial_sd`, kept in [0, 1].
pub(crate) fn opening_contribution(initial: f64, initial_sd: f64, e: f64, rng: &mut dyn RngCore) -> f64 {
    (initial + initial_sd * standard_normal(rng)).clamp(0.0, 1.0) * e
}

/// Punishment of each of the others: `rate` points per point it contributed below `own`, at most
/// `max_each`.
pub(crate) fn punish_below(own: i64, others: &[i64], rate: f64, max_each: i64) -> Action {
    let points = others
        .iter()
        .map(|c| {
            let below = (own - c).max(0) as f64;
            ((rate * below).round() as i64).min(max_each)
        })
        .collect();
    Action::Allocation(points)
}

/// The others' mean contribution in the last contribution stage an agent saw; `None` before
/// the first.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct OthersLast(Option<f64>);

impl OthersLast {
    /// The remembered mean, if a contribution stage has been seen.
    pub(crate) fn mean(&self) -> Option<f64> {
        self.0
    }

    /// Remembers the others' mean contribution of a contribution stage's feedback; any other
    /// stage, or one where there were no others, leaves the memory as it was.
    pub(crate) fn update(&mut self, feedback: &Feedback) {
        if !feedback.own.iter().any(|(r, _)| *r == Role::Contributor) || feedback.others.is_empty() {
            return;
        }
        let sum: f64 = feedback.others.iter().map(Action::value).sum();
        self.0 = Some(sum / feedback.others.len() as f64);
    }
}

impl Policy for ConditionalCooperator {
    fn meta(&self) -> &'static PolicyMeta {
        &CONDITIONAL_COOPERATOR
    }

    fn decide(&mut self, obs: &Observation, rng: &mut dyn RngCore) -> Decision {
        match (&obs.space, &obs.context) {
            (ActionSpace::Allocation { max_each, .. }, Context::Contributions { own, others, .. }) => {
                Decision::Ready(punish_below(*own, others, self.params.punish_rate, *max_each))
            }
            (ActionSpace::Amount { min, max }, _) => {
                let e = *max as f64;
                let wanted = match self.others_last.mean() {
                    None => opening_contribution(self.params.initial, self.params.initial_sd, e, rng),
                    Some(others) => self.params.intercept * e + self.params.slope * others,
                };
                Decision::Ready(Action::Amount((wanted.round() as i64).clamp(*min, *max)))
            }
            // Outside its environment the engine never asks; answer legally all the same.
            (space, _) => Decision::Ready(space.sample(rng)),
        }
    }

    fn update(&mut self, feedback: &Feedback) {
        self.others_last.update(feedback);
    }

    fn reset(&mut self) {
        self.others_last = OthersLast::default();
    }
}
