//! Roth–Erev reinforcement learner, three-parameter form (Erev & Roth 1998).

use std::collections::BTreeMap;

use agora_environments::{Action, ActionSpace, EnvKind, Feedback, Observation, PayoffBounds, Role};
use rand::{Rng, RngCore};
use serde::{Deserialize, Serialize};

use crate::classical::check_share;
use crate::error::AgentError;
use crate::policy::{Decision, Policy, PolicyMeta};

/// Parameters.
///
/// - `phi = 0.1`: forgetting; `epsilon = 0.2`: experimentation (the common values of
///   Erev & Roth 1998, AER 88:848–881).
/// - `strength = 9.0`: initial propensity strength S(1), so that q_k(1) = S(1)·A(1)/M with A(1)
///   the mean absolute payoff (Erev & Roth 1998 estimate S(1) = 9).
/// - `levels = 11`: integer ranges wider than this are discretised into this many evenly
///   spaced amounts (contributions 0, 2, 4, …, 20; offers 0, 10, …, 100).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct RothErevParams {
    /// Forgetting rate φ: the share of every propensity lost each update.
    #[schemars(range(min = 0.0, max = 1.0))]
    pub phi: f64,
    /// Experimentation ε: the share of the reinforcement spilled to the actions not chosen.
    #[schemars(extend("minimum" = 0.0, "exclusiveMaximum" = 1.0))]
    pub epsilon: f64,
    /// Initial propensity strength S(1).
    #[schemars(extend("exclusiveMinimum" = 0.0))]
    pub strength: f64,
    /// Most arms an integer range is discretised into.
    #[schemars(range(min = 2))]
    pub levels: usize,
}

impl Default for RothErevParams {
    fn default() -> Self {
        RothErevParams { phi: 0.1, epsilon: 0.2, strength: 9.0, levels: 11 }
    }
}

impl RothErevParams {
    /// Checks that every parameter lies in its range; the error names the first that does not.
    pub fn validate(&self) -> Result<(), AgentError> {
        let bad = |field: &'static str, reason: String| AgentError::InvalidParameter {
            policy: ROTH_EREV.name,
            field,
            reason,
        };
        check_share(ROTH_EREV.name, "phi", self.phi)?;
        if !(0.0..1.0).contains(&self.epsilon) {
            return Err(bad("epsilon", format!("must lie in [0, 1), got {}", self.epsilon)));
        }
        if self.strength.is_nan() || self.strength <= 0.0 {
            return Err(bad("strength", format!("must be positive, got {}", self.strength)));
        }
        if self.levels < 2 {
            return Err(bad("levels", format!("must be at least 2, got {}", self.levels)));
        }
        Ok(())
    }
}

/// Propensities of one role's decision.
#[derive(Clone, Debug)]
struct Table {
    q: Vec<f64>,
    bounds: PayoffBounds,
    /// Index chosen in the current stage, awaiting its payoff.
    pending: Option<usize>,
}

/// Chooses each action with probability proportional to its propensity and reinforces the
/// chosen action with the payoff above the minimum, spilling a share ε to the others:
/// q_k(t+1) = (1−φ)·q_k(t) + E_k, E_k = R·(1−ε) for the chosen action and R·ε/(M−1) otherwise,
/// R = x − x_min.
#[derive(Clone, Debug)]
pub struct RothErev {
    params: RothErevParams,
    tables: BTreeMap<Role, Table>,
}

impl RothErev {
    /// A learner with no propensity tables yet; each role's table is made on its first decision.
    pub fn new(params: RothErevParams) -> Self {
        RothErev { params, tables: BTreeMap::new() }
    }

    /// Number of arms for a space.
    fn arms(&self, space: &ActionSpace) -> usize {
        match space {
            ActionSpace::Choice { labels } => labels.len(),
            ActionSpace::Amount { min, max } => ((max - min + 1) as usize).min(self.params.levels),
            ActionSpace::Allocation { max_each, .. } => ((max_each + 1) as usize).min(self.params.levels),
        }
    }

    /// The action of arm `k` in `space` (arms beyond a shrunken range clamp to its top).
    fn action(&self, space: &ActionSpace, k: usize, arms: usize) -> Action {
        let spread = |lo: i64, hi: i64| -> i64 {
            if ((hi - lo + 1) as usize) <= self.params.levels && arms == (hi - lo + 1) as usize {
                lo + k as i64
            } else {
                lo + ((k as f64) * (hi - lo) as f64 / (arms - 1).max(1) as f64).round() as i64
            }
        };
        match space {
            ActionSpace::Choice { .. } => Action::Choice(k as u32),
            ActionSpace::Amount { min, max } => Action::Amount(spread(*min, *max).clamp(*min, *max)),
            ActionSpace::Allocation { targets, max_each } => {
                Action::Allocation(vec![spread(0, *max_each).min(*max_each); *targets])
            }
        }
    }

    /// Current choice probabilities of a role's table, if it exists.
    pub fn probabilities(&self, role: Role) -> Option<Vec<f64>> {
        self.tables.get(&role).map(|t| {
            let total: f64 = t.q.iter().sum();
            t.q.iter().map(|q| q / total).collect()
        })
    }
}

pub(crate) static ROTH_EREV: PolicyMeta = PolicyMeta {
    name: "roth-erev",
    family: "classical",
    memory_depth: None,
    stochastic: true,
    environments: EnvKind::ALL,
    description:
        "reinforcement learner: propensities with forgetting phi and experimentation epsilon; one table per role",
    reference: "Roth & Erev (1995) GEB 8:164-212; Erev & Roth (1998) AER 88:848-881",
};

impl Policy for RothErev {
    fn meta(&self) -> &'static PolicyMeta {
        &ROTH_EREV
    }

    fn decide(&mut self, obs: &Observation, rng: &mut dyn RngCore) -> Decision {
        let m = self.arms(&obs.space);
        let strength = self.params.strength;
        let table = self.tables.entry(obs.role).or_insert_with(|| {
            let q1 = (strength * obs.payoffs.mean_abs / m as f64).max(1e-6);
            Table { q: vec![q1; m], bounds: obs.payoffs, pending: None }
        });
        let arms = table.q.len();
        let total: f64 = table.q.iter().sum();
        let mut draw = rng.random::<f64>() * total;
        let mut k = arms - 1;
        for (i, q) in table.q.iter().enumerate() {
            if draw < *q {
                k = i;
                break;
            }
            draw -= q;
        }
        table.pending = Some(k);
        let action = self.action(&obs.space, k, arms);
        Decision::Ready(action)
    }

    fn update(&mut self, feedback: &Feedback) {
        let (phi, eps) = (self.params.phi, self.params.epsilon);
        for (role, _) in &feedback.own {
            let Some(table) = self.tables.get_mut(role) else {
                continue;
            };
            let Some(k) = table.pending.take() else {
                continue;
            };
            let m = table.q.len();
            let r = (feedback.payoff - table.bounds.min).max(0.0);
            for (i, q) in table.q.iter_mut().enumerate() {
                let e = if i == k { r * (1.0 - eps) } else { r * eps / (m - 1).max(1) as f64 };
                // A floor keeps every action possible, as Erev & Roth's cutoff does.
                *q = ((1.0 - phi) * *q + e).max(1e-9);
            }
        }
    }

    fn reset(&mut self) {
        self.tables.clear();
    }
}
