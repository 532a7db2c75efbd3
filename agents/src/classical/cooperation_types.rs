//! A population of conditional-contribution types for the public goods game (Fischbacher,
//! Gächter & Fehr 2001), each seat drawing its own type.

use agora_environments::{Action, ActionSpace, Context, EnvKind, Feedback, Observation};
use rand::{Rng, RngCore};
use serde::{Deserialize, Serialize};

use crate::classical::conditional_cooperator::{opening_contribution, punish_below, OthersLast};
use crate::classical::{check_non_negative, check_share};
use crate::error::AgentError;
use crate::policy::{Decision, Policy, PolicyMeta};

/// The contribution types of Fischbacher, Gächter & Fehr (2001), elicited with the strategy
/// method: a contribution for every possible average contribution of the other members.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ContributorType {
    /// Contributes more the more the others contribute (slope below one).
    ConditionalCooperator,
    /// Contributes nothing whatever the others do.
    FreeRider,
    /// Rises with the others' contribution up to half the endowment, then falls.
    HumpShaped,
    /// None of the three patterns ("others" in FGF 2001): no relation to the others' contribution.
    Other,
}

/// Parameters, every one with its source or the reason for it.
///
/// - `conditional = 0.50`, `free_rider = 0.295`, `hump_shaped = 0.136`: the shares of the
///   three types among the 44 subjects of Fischbacher, Gächter & Fehr (2001, Economics Letters
///   71:397–404; groups of 4, endowment 20, MPCR 0.4: the game played here). The remaining
///   0.069 are FGF's unclassified "others" (anchor `cc-types` in `assets/anchors.ron`).
/// - `slope = 0.43`: the slope of contribution on the belief about the others' contribution
///   (Fischbacher & Gächter 2010, AER 100:541–556; anchor `cc-slope`), read as the slope of
///   the *population's* average schedule. Free riders, the symmetric hump (it rises and falls
///   by the same amount over the others' range, so its least-squares slope over that range is
///   zero) and the belief-independent others add no slope to that average, so the conditional
///   cooperators carry all of it: their own slope is `slope / conditional` = 0.86, below one
///   (imperfect conditional cooperation, FGF 2001 and F&G 2010). Nothing is fitted to a
///   trajectory.
/// - `initial = 0.5`, `initial_sd = 0.15`: round 1, before there is any contribution to
///   condition on, every type opens near half the endowment (Ledyard 1995; anchor `pgg-r1`),
///   with the same spread between agents as [`super::ConditionalCooperatorParams`] (not from a
///   source: it makes seeded runs differ, as human groups do).
/// - `punish_rate = 0.25`: in the punishment arm, points per point a member contributed below
///   the punisher, as [`super::ConditionalCooperatorParams`] (direction from Fehr & Gächter
///   2000, magnitude a choice); free riders never punish, since punishing only costs them.
///
/// Modelling choices that are not parameters: from round 2 an agent's belief about the others
/// is their mean contribution in the previous round (the quantity the strategy method
/// conditions on); the hump rises with the conditional cooperators' slope to a peak at half
/// the endowment and falls symmetrically to zero at the full endowment (FGF 2001 describe a
/// rise to about half, then a fall); the unclassified others contribute a uniform draw from 0
/// to the endowment each round, the pattern with no relation to the others; and amounts are
/// rounded stochastically (down or up with the probability of the fraction), so that integer
/// play keeps the schedule's mean instead of stalling on a rounding floor.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct CooperationTypesParams {
    /// Share of conditional cooperators.
    #[schemars(range(min = 0.0, max = 1.0))]
    pub conditional: f64,
    /// Share of free riders.
    #[schemars(range(min = 0.0, max = 1.0))]
    pub free_rider: f64,
    /// Share of hump-shaped contributors; the rest, up to one, are the unclassified others.
    #[schemars(range(min = 0.0, max = 1.0))]
    pub hump_shaped: f64,
    /// Slope of the population's average contribution on the others' mean contribution.
    #[schemars(range(min = 0.0))]
    pub slope: f64,
    /// Mean first-round contribution, as a share of the endowment.
    #[schemars(range(min = 0.0, max = 1.0))]
    pub initial: f64,
    /// Standard deviation of the first-round share between agents.
    #[schemars(range(min = 0.0))]
    pub initial_sd: f64,
    /// Punishment points per point a member contributed below the punisher.
    #[schemars(range(min = 0.0))]
    pub punish_rate: f64,
}

impl Default for CooperationTypesParams {
    fn default() -> Self {
        CooperationTypesParams {
            conditional: 0.50,
            free_rider: 0.295,
            hump_shaped: 0.136,
            slope: 0.43,
            initial: 0.5,
            initial_sd: 0.15,
            punish_rate: 0.25,
        }
    }
}

impl CooperationTypesParams {
    /// Checks that every parameter lies in its range; the error names the first that does not.
    pub fn validate(&self) -> Result<(), AgentError> {
        let policy = COOPERATION_TYPES.name;
        let bad = |field: &'static str, reason: String| AgentError::InvalidParameter { policy, field, reason };
        for (field, v) in
            [("conditional", self.conditional), ("free_rider", self.free_rider), ("hump_shaped", self.hump_shaped)]
        {
            check_share(policy, field, v)?;
        }
        let total = self.conditional + self.free_rider + self.hump_shaped;
        if total > 1.0 + 1e-9 {
            return Err(bad("hump_shaped", format!("the three shares sum to {total}, more than one")));
        }
        check_non_negative(policy, "slope", self.slope)?;
        if self.slope > 0.0 && self.conditional == 0.0 {
            return Err(bad("conditional", "must be positive to carry a positive slope".into()));
        }
        check_share(policy, "initial", self.initial)?;
        check_non_negative(policy, "initial_sd", self.initial_sd)?;
        check_non_negative(policy, "punish_rate", self.punish_rate)
    }

    /// The conditional cooperators' own slope: the population's slope carried by their share.
    pub fn conditional_slope(&self) -> f64 {
        if self.conditional > 0.0 {
            self.slope / self.conditional
        } else {
            0.0
        }
    }

    /// The type a uniform draw `u` in [0, 1) falls on: conditional cooperators first, then
    /// free riders, hump-shaped contributors and the others.
    pub fn type_of(&self, u: f64) -> ContributorType {
        let a = self.conditional;
        let b = a + self.free_rider;
        let c = b + self.hump_shaped;
        if u < a {
            ContributorType::ConditionalCooperator
        } else if u < b {
            ContributorType::FreeRider
        } else if u < c {
            ContributorType::HumpShaped
        } else {
            ContributorType::Other
        }
    }

    /// The mean contribution (points) of `kind` when the others contributed `belief` on
    /// average, out of `endowment`; `None` for the others, whose draw does not depend on it.
    pub fn schedule(&self, kind: ContributorType, belief: f64, endowment: f64) -> Option<f64> {
        let s = self.conditional_slope();
        match kind {
            ContributorType::ConditionalCooperator => Some(s * belief),
            ContributorType::FreeRider => Some(0.0),
            ContributorType::HumpShaped => Some(s * belief.min(endowment - belief).max(0.0)),
            ContributorType::Other => None,
        }
    }
}

/// Draws its contribution type at its first decision (shares of Fischbacher, Gächter & Fehr
/// 2001) and contributes by that type's schedule on the others' previous mean; a group of four
/// is a random draw of types, as a laboratory group is.
#[derive(Clone, Debug)]
pub struct CooperationTypes {
    params: CooperationTypesParams,
    kind: Option<ContributorType>,
    others_last: OthersLast,
}

impl CooperationTypes {
    /// An agent whose type is not drawn yet, with no memory of a previous round.
    pub fn new(params: CooperationTypesParams) -> Self {
        CooperationTypes { params, kind: None, others_last: OthersLast::default() }
    }

    /// The agent's type, once drawn.
    pub fn contributor_type(&self) -> Option<ContributorType> {
        self.kind
    }

    fn kind(&mut self, rng: &mut dyn RngCore) -> ContributorType {
        let params = &self.params;
        *self.kind.get_or_insert_with(|| params.type_of(rng.random::<f64>()))
    }
}

pub(crate) static COOPERATION_TYPES: PolicyMeta = PolicyMeta {
    name: "cooperation-types",
    family: "classical",
    memory_depth: Some(1),
    stochastic: true,
    environments: &[EnvKind::PublicGoods],
    description: "draws a conditional-contribution type (50% conditional cooperator, 29.5% free rider, 13.6% hump) and follows its schedule",
    reference: "Fischbacher, Gaechter & Fehr (2001) Econ. Letters 71:397-404; Fischbacher & Gaechter (2010) AER 100:541-556",
};

/// `x` rounded down or up with the probability of its fraction, so that its mean is `x`.
fn stochastic_round(x: f64, rng: &mut dyn RngCore) -> i64 {
    let floor = x.floor();
    let up = rng.random::<f64>() < x - floor;
    floor as i64 + i64::from(up)
}

impl Policy for CooperationTypes {
    fn meta(&self) -> &'static PolicyMeta {
        &COOPERATION_TYPES
    }

    fn decide(&mut self, obs: &Observation, rng: &mut dyn RngCore) -> Decision {
        let kind = self.kind(rng);
        match (&obs.space, &obs.context) {
            (ActionSpace::Allocation { max_each, .. }, Context::Contributions { own, others, .. }) => {
                let rate = if kind == ContributorType::FreeRider { 0.0 } else { self.params.punish_rate };
                Decision::Ready(punish_below(*own, others, rate, *max_each))
            }
            (ActionSpace::Amount { min, max }, _) => {
                let e = *max as f64;
                let wanted = match self.others_last.mean() {
                    None => opening_contribution(self.params.initial, self.params.initial_sd, e, rng),
                    Some(belief) => match self.params.schedule(kind, belief, e) {
                        Some(x) => x,
                        None => rng.random::<f64>() * e,
                    },
                };
                let amount = stochastic_round(wanted.clamp(0.0, e), rng);
                Decision::Ready(Action::Amount(amount.clamp(*min, *max)))
            }
            // Outside its environment the engine never asks; answer legally all the same.
            (space, _) => Decision::Ready(space.sample(rng)),
        }
    }

    fn update(&mut self, feedback: &Feedback) {
        self.others_last.update(feedback);
    }

    fn reset(&mut self) {
        self.kind = None;
        self.others_last = OthersLast::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_xoshiro::Xoshiro256PlusPlus;

    #[test]
    fn defaults_are_the_published_shares_and_the_derived_slope() {
        let p = CooperationTypesParams::default();
        p.validate().expect("defaults are valid");
        assert!((p.conditional_slope() - 0.86).abs() < 1e-12, "0.43 / 0.50");
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
        let n = 200_000;
        let mut counts = [0usize; 4];
        for _ in 0..n {
            let i = match p.type_of(rng.random::<f64>()) {
                ContributorType::ConditionalCooperator => 0,
                ContributorType::FreeRider => 1,
                ContributorType::HumpShaped => 2,
                ContributorType::Other => 3,
            };
            counts[i] += 1;
        }
        let share = |i: usize| counts[i] as f64 / n as f64;
        for (i, want) in [(0, 0.50), (1, 0.295), (2, 0.136), (3, 0.069)] {
            assert!((share(i) - want).abs() < 0.005, "type {i}: {} against {want}", share(i));
        }
    }

    #[test]
    fn schedules_have_the_published_shapes() {
        let p = CooperationTypesParams::default();
        let s = |k, b| p.schedule(k, b, 20.0).expect("a schedule");
        assert!((s(ContributorType::ConditionalCooperator, 20.0) - 17.2).abs() < 1e-9);
        assert_eq!(s(ContributorType::FreeRider, 20.0), 0.0);
        assert!((s(ContributorType::HumpShaped, 10.0) - 8.6).abs() < 1e-9, "peak at half the endowment");
        assert!((s(ContributorType::HumpShaped, 5.0) - s(ContributorType::HumpShaped, 15.0)).abs() < 1e-9);
        assert_eq!(s(ContributorType::HumpShaped, 20.0), 0.0);
        assert!(p.schedule(ContributorType::Other, 10.0, 20.0).is_none());
        // The population's average schedule has the published slope: a least-squares line
        // through the type-weighted schedule over the others' range 0..=20 (the others'
        // mean schedule is flat at half the endowment).
        let xs: Vec<f64> = (0..=20).map(f64::from).collect();
        let ys: Vec<f64> = xs
            .iter()
            .map(|&b| {
                0.50 * s(ContributorType::ConditionalCooperator, b)
                    + 0.136 * s(ContributorType::HumpShaped, b)
                    + 0.069 * 10.0
            })
            .collect();
        let (mx, my) = (xs.iter().sum::<f64>() / 21.0, ys.iter().sum::<f64>() / 21.0);
        let cov: f64 = xs.iter().zip(&ys).map(|(x, y)| (x - mx) * (y - my)).sum();
        let var: f64 = xs.iter().map(|x| (x - mx).powi(2)).sum();
        assert!((cov / var - 0.43).abs() < 1e-9, "pooled slope {}", cov / var);
    }

    #[test]
    fn stochastic_rounding_keeps_the_mean() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
        let n = 100_000;
        let total: i64 = (0..n).map(|_| stochastic_round(2.3, &mut rng)).sum();
        assert!((total as f64 / n as f64 - 2.3).abs() < 0.01);
        assert_eq!(stochastic_round(4.0, &mut rng), 4);
    }

    #[test]
    fn bad_shares_are_named() {
        let p = CooperationTypesParams { free_rider: 0.6, ..Default::default() };
        let msg = p.validate().expect_err("shares above one").to_string();
        assert!(msg.contains("hump_shaped") && msg.contains("more than one"), "{msg}");
        let p = CooperationTypesParams { conditional: 1.5, ..Default::default() };
        assert!(p.validate().expect_err("out of range").to_string().contains("conditional"));
    }
}
