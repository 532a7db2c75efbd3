//! Category E's questionnaire scoring: a response position to a 0–100 item score, an item's
//! mean over its valid ratings, a question version's result and a check's locally replaced
//! result (the profile methods §E0–§E9).
//!
//! # Formula
//! - item score: y = 25(r − 1) for a positive-keyed item, y = 25(5 − r) for a reverse-keyed
//!   one, r ∈ {1,…,5} the decoded position (§E0: "positions are decoded first", so a scale
//!   shown in another order or under other labels scores the same);
//! - item mean b_i over the item's valid ratings, available with at least a third of its
//!   scheduled slots valid (§E0: "5–15 required" of fifteen);
//! - version result u = (1/n) Σ b_i, every item at weight 1/n whatever its valid count;
//! - checked result z = u + (1/n) Σ_{i∈J} (b_i^check − b_i^ref), J the items the check retests.
//!
//! The eleven u and the checked z then give M, I and O ([`super::range`]). Availability
//! (§E0): M and I need every reference item mean; a check item mean that is unavailable leaves
//! M and I and withholds O only.
//!
//! # References
//! The profile methods, §E0 (shared method) and the worked examples of §E1–§E9, each a test
//! below.

use serde::{Deserialize, Serialize};

use super::{finite, ProfileError};

/// An item's scoring direction (E-S2: plus or minus).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Key {
    /// Higher positions point toward the measure's high end.
    Positive,
    /// Higher positions point toward its low end; reversed before combining.
    Reverse,
}

impl Key {
    /// `positive` or `reverse`, as records write it.
    pub fn name(self) -> &'static str {
        match self {
            Key::Positive => "positive",
            Key::Reverse => "reverse",
        }
    }

    /// The key named `name`.
    pub fn from_name(name: &str) -> Option<Key> {
        [Key::Positive, Key::Reverse].into_iter().find(|k| k.name() == name)
    }
}

/// The 0–100 score of response position `r` (1–5) of an item keyed `key`.
pub fn item_score(r: u8, key: Key) -> Result<f64, ProfileError> {
    if !(1..=5).contains(&r) {
        return Err(ProfileError::new("position", format!("{r} is not a response position 1–5")));
    }
    let r = f64::from(r);
    Ok(match key {
        Key::Positive => 25.0 * (r - 1.0),
        Key::Reverse => 25.0 * (5.0 - r),
    })
}

/// The fewest valid ratings an item mean needs out of `scheduled` slots: a third, rounded up
/// (five of fifteen, §E0; one of a reduced study's one or two).
pub fn minimum_valid(scheduled: usize) -> usize {
    scheduled.div_ceil(3).max(1)
}

/// An item's mean over its valid scores, or `None` when fewer than [`minimum_valid`] of its
/// `scheduled` slots hold one (the cell is unavailable; missing ratings are never filled in).
pub fn item_mean(scores: &[f64], scheduled: usize) -> Option<f64> {
    if scores.is_empty() || scores.len() < minimum_valid(scheduled) || scores.iter().any(|s| !s.is_finite()) {
        return None;
    }
    Some(scores.iter().sum::<f64>() / scores.len() as f64)
}

/// u: the equal-weight mean of a version's item means.
pub fn version_result(means: &[f64]) -> Result<f64, ProfileError> {
    finite("means", means)?;
    Ok(means.iter().sum::<f64>() / means.len() as f64)
}

/// z: `u` with the checked items' means replaced, each at weight 1/`n`; `replaced` holds
/// (b^ref, b^check) per checked item.
pub fn checked_result(u: f64, n: usize, replaced: &[(f64, f64)]) -> Result<f64, ProfileError> {
    if n == 0 {
        return Err(ProfileError::new("n", "a measure has at least one item"));
    }
    if replaced.len() > n {
        return Err(ProfileError::new("replaced", format!("{} checked items of a {n}-item measure", replaced.len())));
    }
    finite("u", &[u])?;
    let flat: Vec<f64> = replaced.iter().flat_map(|(a, b)| [*a, *b]).collect();
    super::finite_items("replaced", &flat)?;
    Ok(u + replaced.iter().map(|(r, c)| c - r).sum::<f64>() / n as f64)
}

#[cfg(test)]
mod tests {
    use super::super::testing::close;
    use super::*;

    const TOL: f64 = 1e-9;

    /// u for one version whose item `first` has mean `b` and whose other `n − 1` means are
    /// `others` (the shape of every worked example in §E1–§E9).
    fn u_with(b: f64, others: f64, n: usize) -> f64 {
        let mut means = vec![b];
        means.extend(std::iter::repeat_n(others, n - 1));
        version_result(&means).unwrap()
    }

    #[test]
    fn positions_score_0_to_100_in_the_keyed_direction() {
        let positive: Vec<f64> = (1..=5).map(|r| item_score(r, Key::Positive).unwrap()).collect();
        let reverse: Vec<f64> = (1..=5).map(|r| item_score(r, Key::Reverse).unwrap()).collect();
        assert_eq!(positive, [0.0, 25.0, 50.0, 75.0, 100.0]);
        assert_eq!(reverse, [100.0, 75.0, 50.0, 25.0, 0.0]);
        assert!(item_score(0, Key::Positive).is_err());
        assert!(item_score(6, Key::Reverse).is_err());
    }

    #[test]
    fn e1_worked_example() {
        // §E1: BF01 (+): nine of fifteen at position 3, six at position 2 → item mean 40; the
        // other nine means 50 → u = 49; a check raising BF01 to 60 → z = 51.
        let scores: Vec<f64> = std::iter::repeat_n(item_score(3, Key::Positive).unwrap(), 9)
            .chain(std::iter::repeat_n(item_score(2, Key::Positive).unwrap(), 6))
            .collect();
        let b = item_mean(&scores, 15).unwrap();
        close(b, 40.0, TOL, "E1 item mean");
        let u = u_with(b, 50.0, 10);
        close(u, 49.0, TOL, "E1 u");
        close(checked_result(u, 10, &[(40.0, 60.0)]).unwrap(), 51.0, TOL, "E1 z");
    }

    #[test]
    fn e2_to_e5_worked_examples() {
        // §E2: BF07 (+) at position 4 → 75; others 50 → u = 52.5; BF07 75 → 95 → z = 54.5.
        close(item_score(4, Key::Positive).unwrap(), 75.0, TOL, "E2 item");
        let u = u_with(75.0, 50.0, 10);
        close(u, 52.5, TOL, "E2 u");
        close(checked_result(u, 10, &[(75.0, 95.0)]).unwrap(), 54.5, TOL, "E2 z");
        // §E3: BF03 (+) at position 5 → 100; others 75 → u = 77.5; BF03 100 → 80 → z = 75.5.
        close(item_score(5, Key::Positive).unwrap(), 100.0, TOL, "E3 item");
        let u = u_with(100.0, 75.0, 10);
        close(u, 77.5, TOL, "E3 u");
        close(checked_result(u, 10, &[(100.0, 80.0)]).unwrap(), 75.5, TOL, "E3 z");
        // §E4: BF04 (−) at position 4 → 25(5 − 4) = 25; others 50 → u = 47.5; 25 → 45 → 49.5.
        close(item_score(4, Key::Reverse).unwrap(), 25.0, TOL, "E4 reverse-keyed item");
        let u = u_with(25.0, 50.0, 10);
        close(u, 47.5, TOL, "E4 u");
        close(checked_result(u, 10, &[(25.0, 45.0)]).unwrap(), 49.5, TOL, "E4 z");
        // §E5: BF15 (+) at position 4 → 75; others 50 → u = 52.5; the check moves BF05 (not
        // BF15) 50 → 70 → z = 54.5.
        let u = u_with(75.0, 50.0, 10);
        close(u, 52.5, TOL, "E5 u");
        close(checked_result(u, 10, &[(50.0, 70.0)]).unwrap(), 54.5, TOL, "E5 z");
    }

    #[test]
    fn e6_to_e9_worked_examples_on_eight_items() {
        // §E6, §E7: position 4 → 75, others 50 → u = 53.125; 75 → 95 → z = 55.625.
        let u = u_with(item_score(4, Key::Positive).unwrap(), 50.0, 8);
        close(u, 53.125, TOL, "E6/E7 u");
        close(checked_result(u, 8, &[(75.0, 95.0)]).unwrap(), 55.625, TOL, "E6/E7 z");
        // §E8, §E9: position 2 → 25, others 50 → u = 46.875; 25 → 45 → z = 49.375.
        let u = u_with(item_score(2, Key::Positive).unwrap(), 50.0, 8);
        close(u, 46.875, TOL, "E8/E9 u");
        close(checked_result(u, 8, &[(25.0, 45.0)]).unwrap(), 49.375, TOL, "E8/E9 z");
    }

    #[test]
    fn an_item_mean_needs_a_third_of_its_slots_valid() {
        // §E0: "The cell mean uses its 5–15 valid ratings, and fewer than five makes the cell
        // unavailable."
        assert_eq!(minimum_valid(15), 5);
        assert_eq!(minimum_valid(1), 1);
        assert_eq!(item_mean(&[50.0; 5], 15), Some(50.0));
        assert_eq!(item_mean(&[50.0; 4], 15), None);
        assert_eq!(item_mean(&[], 1), None);
    }

    #[test]
    fn a_check_with_no_change_leaves_u() {
        close(checked_result(47.0, 10, &[(30.0, 30.0), (80.0, 80.0)]).unwrap(), 47.0, TOL, "unchanged");
        assert!(checked_result(47.0, 1, &[(1.0, 2.0), (3.0, 4.0)]).is_err());
    }
}
