//! Centre, inner range and outer range of one measure (or, in Category A, of one task).
//!
//! # Formula (the profile methods §M04, lines 111–137)
//! With u₀,…,u₁₀ the eleven question versions' complete reference results (u₀ for BASE) and
//! z₁,…,z_K the K results recalculated after each scheduled check's local replacement
//! ([`super::replace`], [`super::consistency`]):
//!
//! - centre M = (u₀ + ⋯ + u₁₀)/11 (line 117);
//! - inner I = [min_q u_q, max_q u_q] (line 121);
//! - outer O = [min(I_low, z₁,…,z_K), max(I_high, z₁,…,z_K)] (line 127).
//!
//! M uses the reference results only; checks enter O. The ranges describe variation across the
//! specified questions and checks: "they are not confidence intervals" (line 137). In Category A
//! this runs per task; [`super::combine`] then weights the tasks.

use serde::Serialize;

use super::{finite, ProfileError, VERSIONS};

/// A measure's (or an A task's) centre and ranges.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MeasureRange {
    /// M: the mean of the eleven reference results ("Average result").
    pub centre: f64,
    /// I = [low, high]: min and max of the reference results ("When we ask differently").
    pub inner: [f64; 2],
    /// O = [low, high]: I extended by the checked results ("With extra checks").
    pub outer: [f64; 2],
    /// The number of reference results (always 11).
    pub versions: usize,
    /// K, the number of checked results.
    pub checks: usize,
}

/// M, I and O from the eleven reference results `reference` (BASE first) and the K ≥ 1 checked
/// results `checked`, both on the measure's scale.
pub fn measure_range(reference: &[f64], checked: &[f64]) -> Result<MeasureRange, ProfileError> {
    finite("reference", reference)?;
    if reference.len() != VERSIONS {
        return Err(ProfileError::new(
            "reference",
            format!("needs the eleven question versions' results (BASE, C01–C10), got {}", reference.len()),
        ));
    }
    finite("checked", checked)?;
    let centre = reference.iter().sum::<f64>() / VERSIONS as f64;
    let inner = [
        reference.iter().copied().fold(f64::INFINITY, f64::min),
        reference.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    ];
    let outer = [checked.iter().copied().fold(inner[0], f64::min), checked.iter().copied().fold(inner[1], f64::max)];
    Ok(MeasureRange { centre, inner, outer, versions: VERSIONS, checks: checked.len() })
}

#[cfg(test)]
mod tests {
    use super::super::testing::close;
    use super::*;

    #[test]
    fn seed_m04_example() {
        // The profile methods §M04 line 131: "Suppose the eleven reference results are 30, 32, 34, 36, 38,
        // 40, 42, 44, 46, 48 and 50. Their sum is 440, giving M=40 and I=[30,50]. If the
        // smallest and largest checked results are 25 and 55, then O=[25,55]. The average
        // remains 40."
        let u = [30.0, 32.0, 34.0, 36.0, 38.0, 40.0, 42.0, 44.0, 46.0, 48.0, 50.0];
        assert_eq!(u.iter().sum::<f64>(), 440.0);
        let r = measure_range(&u, &[25.0, 55.0]).expect("valid");
        close(r.centre, 40.0, 1e-12, "M");
        assert_eq!(r.inner, [30.0, 50.0]);
        assert_eq!(r.outer, [25.0, 55.0]);
        assert_eq!((r.versions, r.checks), (11, 2));
    }

    #[test]
    fn checks_inside_the_inner_range_leave_the_outer_equal_to_it() {
        // §M04 line 137: "The outer range contains the inner range and may coincide with it."
        // Checked results 40 (A1 line 232's reference u) and 42 (A4 line 385's z) lie inside
        // line 131's inner range [30, 50].
        let u = [30.0, 32.0, 34.0, 36.0, 38.0, 40.0, 42.0, 44.0, 46.0, 48.0, 50.0];
        let r = measure_range(&u, &[40.0, 42.0]).expect("valid");
        assert_eq!(r.outer, r.inner);
    }

    #[test]
    fn refuses_bad_input_naming_the_field() {
        let u = [30.0, 32.0, 34.0, 36.0, 38.0, 40.0, 42.0, 44.0, 46.0, 48.0, 50.0];
        assert_eq!(measure_range(&u[..10], &[25.0]).unwrap_err().field, "reference");
        assert_eq!(measure_range(&[], &[25.0]).unwrap_err().field, "reference");
        assert_eq!(measure_range(&u, &[]).unwrap_err().field, "checked");
        assert_eq!(measure_range(&u, &[25.0, f64::NAN]).unwrap_err().field, "checked[1]");
        let mut bad = u;
        bad[3] = f64::INFINITY;
        assert_eq!(measure_range(&bad, &[25.0]).unwrap_err().field, "reference[3]");
    }
}
