//! Actions and the spaces they are drawn from.

use rand::{Rng, RngCore};
use serde::{Deserialize, Serialize};

/// One decision's content.
///
/// A [`Action::Choice`] indexes the environment's *semantic* action list (index 0 is the
/// cooperative action of the dilemma in every variant), never the order in which a prompt
/// happens to list the labels.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Action {
    /// Index into a discrete set of labelled options.
    Choice(u32),
    /// An integer amount (contribution, offer, request).
    Amount(i64),
    /// One integer amount per target (punishment points), targets in seat order.
    Allocation(Vec<i64>),
}

impl Action {
    /// Compact text form for the store: `c1`, `a17`, `[0,3,0]`.
    pub fn encode(&self) -> String {
        match self {
            Action::Choice(i) => format!("c{i}"),
            Action::Amount(a) => format!("a{a}"),
            Action::Allocation(v) => {
                let parts: Vec<String> = v.iter().map(|x| x.to_string()).collect();
                format!("[{}]", parts.join(","))
            }
        }
    }

    /// Numeric value: the index, the amount or the allocation's total.
    pub fn value(&self) -> f64 {
        match self {
            Action::Choice(i) => f64::from(*i),
            Action::Amount(a) => *a as f64,
            Action::Allocation(v) => v.iter().sum::<i64>() as f64,
        }
    }
}

/// The legal actions of one decision.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum ActionSpace {
    /// Pick one of these labels (semantic order).
    Choice {
        /// The options' labels, indexed by [`Action::Choice`].
        labels: std::sync::Arc<[String]>,
    },
    /// Pick an integer in `min..=max`.
    Amount {
        /// The smallest legal amount.
        min: i64,
        /// The largest legal amount.
        max: i64,
    },
    /// Pick an integer in `0..=max_each` for each of `targets` targets.
    Allocation {
        /// Number of targets, one amount each.
        targets: usize,
        /// The largest amount any one target may receive.
        max_each: i64,
    },
}

impl ActionSpace {
    /// Whether `action` is legal here.
    pub fn contains(&self, action: &Action) -> bool {
        match (self, action) {
            (ActionSpace::Choice { labels }, Action::Choice(i)) => (*i as usize) < labels.len(),
            (ActionSpace::Amount { min, max }, Action::Amount(a)) => (min..=max).contains(&a),
            (ActionSpace::Allocation { targets, max_each }, Action::Allocation(v)) => {
                v.len() == *targets && v.iter().all(|x| (0..=*max_each).contains(x))
            }
            _ => false,
        }
    }

    /// A uniformly random legal action (the documented fallback rule: never the first listed).
    pub fn sample(&self, rng: &mut dyn RngCore) -> Action {
        match self {
            ActionSpace::Choice { labels } => Action::Choice(rng.random_range(0..labels.len().max(1)) as u32),
            ActionSpace::Amount { min, max } => Action::Amount(rng.random_range(*min..=*max)),
            ActionSpace::Allocation { targets, max_each } => {
                Action::Allocation((0..*targets).map(|_| rng.random_range(0..=*max_each)).collect())
            }
        }
    }

    /// The natural maximum of an action's value, used to express it as a share.
    pub fn scale(&self) -> f64 {
        match self {
            ActionSpace::Choice { .. } => 1.0,
            ActionSpace::Amount { max, .. } => (*max as f64).max(1.0),
            ActionSpace::Allocation { targets, max_each } => ((*targets as i64) * max_each).max(1) as f64,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn contains_checks_bounds_and_kind() {
        let s = ActionSpace::Amount { min: 11, max: 20 };
        assert!(s.contains(&Action::Amount(11)));
        assert!(s.contains(&Action::Amount(20)));
        assert!(!s.contains(&Action::Amount(21)));
        assert!(!s.contains(&Action::Choice(0)));
        let a = ActionSpace::Allocation { targets: 3, max_each: 10 };
        assert!(a.contains(&Action::Allocation(vec![0, 10, 3])));
        assert!(!a.contains(&Action::Allocation(vec![0, 11, 3])));
        assert!(!a.contains(&Action::Allocation(vec![0, 1])));
    }

    #[test]
    fn sample_is_legal_and_not_always_first() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        let s = ActionSpace::Choice { labels: (0..10).map(|i| i.to_string()).collect::<Vec<_>>().into() };
        let draws: Vec<Action> = (0..200).map(|_| s.sample(&mut rng)).collect();
        assert!(draws.iter().all(|a| s.contains(a)));
        assert!(draws.iter().any(|a| *a != Action::Choice(0)));
    }

    #[test]
    fn encode_is_compact() {
        assert_eq!(Action::Choice(1).encode(), "c1");
        assert_eq!(Action::Amount(17).encode(), "a17");
        assert_eq!(Action::Allocation(vec![0, 3]).encode(), "[0,3]");
    }
}
