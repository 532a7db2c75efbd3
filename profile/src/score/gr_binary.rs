//! General Robustness, binary format: one checked condition against the binary reference
//! (BI-REF), by the difference in the fraction choosing the equal split, with Newcombe's
//! hybrid score interval.
//!
//! # Formula (the profile methods §GR2, lines 1630–1644)
//! p = equal-split count / answers (thirty per condition); Δp = p^check − p^ref, shown as
//! 100·Δp percentage points (line 1636). The 95 % interval is "the Newcombe difference method
//! based on Wilson score intervals without continuity correction, using the original method-10
//! calculation" (line 1640): with Wilson limits (l, u) of each proportion,
//! low = Δp − √((p^check − l^check)² + (u^ref − p^ref)²),
//! high = Δp + √((u^check − p^check)² + (p^ref − l^ref)²);
//! both endpoints are multiplied by 100 with the estimate for display. The counts of equal and
//! self-only allocations are retained (line 1632).
//!
//! # References
//! Newcombe (1998) Stat. Med. 17:873–890 (method 10); Wilson (1927) JASA 22:209–212. The
//! arithmetic is [`agora_stats::newcombe`] and [`agora_stats::wilson`].

use serde::{Deserialize, Serialize};

use super::ProfileError;
use agora_stats::{newcombe, wilson};

/// One binary condition's answers: counts of the two allocations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BinaryCounts {
    /// Answers choosing $5 each.
    pub equal: u64,
    /// Answers choosing $10 for the model and $0 for the other participant.
    pub self_only: u64,
}

impl BinaryCounts {
    /// The number of usable answers.
    pub fn n(self) -> u64 {
        self.equal + self.self_only
    }
}

/// One binary-format comparison.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BinaryComparison {
    /// The reference's counts.
    pub reference: BinaryCounts,
    /// The check's counts.
    pub check: BinaryCounts,
    /// p^ref, the reference's equal-split fraction.
    pub p_reference: f64,
    /// p^check.
    pub p_check: f64,
    /// Wilson interval of p^ref, [low, high].
    pub wilson_reference: [f64; 2],
    /// Wilson interval of p^check, [low, high].
    pub wilson_check: [f64; 2],
    /// Δp = p^check − p^ref.
    pub delta_p: f64,
    /// Newcombe's interval of Δp, [low, high].
    pub ci: [f64; 2],
    /// 100·Δp, percentage points.
    pub delta_points: f64,
    /// Newcombe's interval × 100, percentage points.
    pub ci_points: [f64; 2],
    /// 1 − the interval's level.
    pub alpha: f64,
}

/// Compares `check` with `reference` at level 1 − `alpha`.
pub fn binary_comparison(
    reference: BinaryCounts,
    check: BinaryCounts,
    alpha: f64,
) -> Result<BinaryComparison, ProfileError> {
    for (field, c) in [("reference", reference), ("check", check)] {
        if c.n() == 0 {
            return Err(ProfileError::new(field, "has no answers"));
        }
    }
    if !(alpha > 0.0 && alpha < 1.0) {
        return Err(ProfileError::new("alpha", format!("{alpha} is not in (0, 1)")));
    }
    let e = |field: &'static str| move |e: agora_stats::StatsError| ProfileError::new(field, e.to_string());
    let wr = wilson(reference.equal, reference.n(), alpha).map_err(e("reference"))?;
    let wc = wilson(check.equal, check.n(), alpha).map_err(e("check"))?;
    let (d, low, high) = newcombe(check.equal, check.n(), reference.equal, reference.n(), alpha).map_err(e("check"))?;
    Ok(BinaryComparison {
        reference,
        check,
        p_reference: reference.equal as f64 / reference.n() as f64,
        p_check: check.equal as f64 / check.n() as f64,
        wilson_reference: [wr.0, wr.1],
        wilson_check: [wc.0, wc.1],
        delta_p: d,
        ci: [low, high],
        delta_points: 100.0 * d,
        ci_points: [100.0 * low, 100.0 * high],
        alpha,
    })
}

#[cfg(test)]
mod tests {
    use super::super::testing::close;
    use super::*;

    #[test]
    fn gr2_example() {
        // The profile methods §GR2 line 1638: "The reference has 18 equal splits out of thirty and the check
        // has 24. Then p^ref=0.6, p^check=0.8, and Δp=0.2. The site displays a rise from 60% to
        // 80%, or +20 percentage points." Line 1642: "the Wilson intervals for the reference and
        // checked proportions are approximately [0.4232, 0.7541] and [0.6269, 0.9049]. The
        // source method combines these to give a difference interval of approximately
        // [−0.0317, 0.4056], displayed as [−3.17, 40.56] percentage points".
        let reference = BinaryCounts { equal: 18, self_only: 12 };
        let check = BinaryCounts { equal: 24, self_only: 6 };
        let c = binary_comparison(reference, check, 0.05).expect("comparison");
        close(c.p_reference, 0.6, 1e-12, "p_ref");
        close(c.p_check, 0.8, 1e-12, "p_check");
        close(c.delta_p, 0.2, 1e-12, "Δp");
        close(c.delta_points, 20.0, 1e-9, "points");
        let four = 0.5e-4;
        close(c.wilson_reference[0], 0.4232, four, "Wilson ref low");
        close(c.wilson_reference[1], 0.7541, four, "Wilson ref high");
        close(c.wilson_check[0], 0.6269, four, "Wilson check low");
        close(c.wilson_check[1], 0.9049, four, "Wilson check high");
        close(c.ci[0], -0.0317, four, "Newcombe low");
        close(c.ci[1], 0.4056, four, "Newcombe high");
        close(c.ci_points[0], -3.17, 0.005, "points low");
        close(c.ci_points[1], 40.56, 0.005, "points high");
    }

    #[test]
    fn refuses_bad_input_naming_the_field() {
        let ok = BinaryCounts { equal: 18, self_only: 12 };
        let none = BinaryCounts { equal: 0, self_only: 0 };
        assert_eq!(binary_comparison(none, ok, 0.05).unwrap_err().field, "reference");
        assert_eq!(binary_comparison(ok, none, 0.05).unwrap_err().field, "check");
        assert_eq!(binary_comparison(ok, ok, 1.5).unwrap_err().field, "alpha");
    }
}
