//! Responses per arm to detect a difference between two proportions, inflated by the design
//! effect of replicates clustered within states.
//!
//! The audit's sample sizes ("Auditing LLM Behavior with SUVA: From Stated Values to Actions",
//! §240.5.3 "How many samples?"): the requirements check reads them, and `agora stats` serves
//! them. (The behavioural profile has no power calculation: its ranges are not confidence
//! intervals, and General Robustness's thirty responses per condition are fixed by protocol.)
//!
//! # Formula
//! For a gap p₁ − p₀ tested two-sided at level α with power 1 − β (the SUVA audit paper eq. 240.9,
//! line 284):
//! n = (z_{1−α/2} + z_{1−β})²·[p₁(1−p₁) + p₀(1−p₀)]/(p₁ − p₀)².
//! With m replicates per state and intraclass correlation ρ, every sample size is inflated by
//! deff = 1 + (m − 1)ρ (Kish 1965; line 290); the responses per arm are ⌈n·deff⌉, rounded up
//! after multiplying (Table 240.4's 188 = ⌈94.19 × 1.99⌉; ⌈94.19⌉ × 1.99 would give 190).
//! ρ is estimated within an arm by one-way ANOVA over states (lines 292–299):
//! m = n/k, MSB = Σ_s n_s(ȳ_s − ȳ)²/(k − 1), MSW = Σ_s Σ_r (y_sr − ȳ_s)²/(n − k),
//! ρ = max(0, (MSB − MSW)/(MSB + (m − 1)MSW)); with two arms, m and ρ are the means of the
//! arms' (lines 304–307: pooling the arms "would count the reciprocity effect itself as
//! between-state variance").
//!
//! # References
//! Kish (1965) Survey Sampling (design effect); Fleiss, Levin & Paik (2003) Statistical Methods
//! for Rates and Proportions (two-proportion sample size); Donner & Koval (1980) (one-way ANOVA
//! intraclass correlation).

use serde::Serialize;

use agora_analysis::stats::dist::norm_ppf;

/// Why a sample-size computation refuses its input: the field (a path into the input, e.g.
/// `arms[1].states`) and the reason.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("`{field}`: {reason}")]
pub struct SampleSizeError {
    /// The offending field.
    pub field: String,
    /// What is wrong with it.
    pub reason: String,
}

impl SampleSizeError {
    fn new(field: impl Into<String>, reason: impl Into<String>) -> Self {
        SampleSizeError { field: field.into(), reason: reason.into() }
    }
}

/// Refuses an empty `values` or a non-finite number in it.
fn finite(field: &str, values: &[f64]) -> Result<(), SampleSizeError> {
    if values.is_empty() {
        return Err(SampleSizeError::new(field, "is empty"));
    }
    match values.iter().position(|v| !v.is_finite()) {
        Some(i) => Err(SampleSizeError::new(format!("{field}[{i}]"), "is not a finite number")),
        None => Ok(()),
    }
}

/// Refuses a value outside [lo, hi] (or a non-finite one).
fn within(field: &str, value: f64, lo: f64, hi: f64) -> Result<(), SampleSizeError> {
    if !value.is_finite() {
        return Err(SampleSizeError::new(field, "is not a finite number"));
    }
    if value < lo || value > hi {
        return Err(SampleSizeError::new(field, format!("{value} lies outside [{lo}, {hi}]")));
    }
    Ok(())
}

/// deff = 1 + (m − 1)ρ for `replicates` m ≥ 1 per state and intraclass correlation `icc` ρ in
/// [0, 1].
pub fn design_effect(replicates: f64, icc: f64) -> Result<f64, SampleSizeError> {
    if !(replicates.is_finite() && replicates >= 1.0) {
        return Err(SampleSizeError::new("replicates", format!("{replicates} is not a number ≥ 1")));
    }
    within("icc", icc, 0.0, 1.0)?;
    Ok(1.0 + (replicates - 1.0) * icc)
}

/// A sample-size plan.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SampleSize {
    /// p₁, the proportion to detect.
    pub p1: f64,
    /// p₀, the baseline proportion.
    pub p0: f64,
    /// Two-sided level α.
    pub alpha: f64,
    /// Power 1 − β.
    pub power: f64,
    /// z_{1−α/2}.
    pub z_alpha: f64,
    /// z_{1−β}.
    pub z_power: f64,
    /// n of eq. 240.9, unrounded.
    pub n_independent_exact: f64,
    /// ⌈n⌉: responses per arm if responses were independent.
    pub n_independent: u64,
    /// The design effect applied.
    pub deff: f64,
    /// n·deff, unrounded.
    pub n_clustered_exact: f64,
    /// ⌈n·deff⌉: responses per arm with clustered replicates.
    pub n_clustered: u64,
}

fn proportion(field: &str, p: f64) -> Result<(), SampleSizeError> {
    if !(p.is_finite() && p > 0.0 && p < 1.0) {
        return Err(SampleSizeError::new(field, format!("{p} is not a proportion in (0, 1)")));
    }
    Ok(())
}

/// Responses per arm to detect p₁ against p₀ (two-sided α, power 1 − β), independent and with
/// design effect `deff` (≥ 1).
pub fn samples_per_arm(p1: f64, p0: f64, alpha: f64, power: f64, deff: f64) -> Result<SampleSize, SampleSizeError> {
    // A rate may be 0 or 1 (a model that never, or always, takes an option): the variance
    // p(1 − p) is then 0 and the formula holds as long as the two rates differ.
    for (field, p) in [("p1", p1), ("p0", p0)] {
        if !(p.is_finite() && (0.0..=1.0).contains(&p)) {
            return Err(SampleSizeError::new(field, format!("{p} is not a proportion in [0, 1]")));
        }
    }
    if p1 == p0 {
        return Err(SampleSizeError::new("p1", "equals p0: there is no gap to detect"));
    }
    proportion("alpha", alpha)?;
    proportion("power", power)?;
    if !(deff.is_finite() && deff >= 1.0) {
        return Err(SampleSizeError::new("deff", format!("{deff} is not a design effect ≥ 1")));
    }
    let (z_alpha, z_power) = (norm_ppf(1.0 - alpha / 2.0), norm_ppf(power));
    let n = (z_alpha + z_power).powi(2) * (p1 * (1.0 - p1) + p0 * (1.0 - p0)) / (p1 - p0).powi(2);
    Ok(SampleSize {
        p1,
        p0,
        alpha,
        power,
        z_alpha,
        z_power,
        n_independent_exact: n,
        n_independent: n.ceil() as u64,
        deff,
        n_clustered_exact: n * deff,
        n_clustered: (n * deff).ceil() as u64,
    })
}

/// The one-way ANOVA intraclass correlation of one arm.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Icc {
    /// k, the number of states.
    pub states: usize,
    /// n, the number of responses.
    pub n: usize,
    /// m = n/k, replicates per state.
    pub replicates: f64,
    /// Mean square between states.
    pub msb: f64,
    /// Mean square within states.
    pub msw: f64,
    /// ρ = max(0, (MSB − MSW)/(MSB + (m − 1)MSW)).
    pub icc: f64,
}

/// ρ of one arm from its responses grouped by state (the SUVA audit paper's `icc_oneway`).
pub fn icc_oneway(states: &[Vec<f64>]) -> Result<Icc, SampleSizeError> {
    if states.len() < 2 {
        return Err(SampleSizeError::new("states", "needs at least two states"));
    }
    for (s, y) in states.iter().enumerate() {
        finite(&format!("states[{s}]"), y)?;
    }
    let k = states.len();
    let n: usize = states.iter().map(Vec::len).sum();
    if n <= k {
        return Err(SampleSizeError::new("states", "needs more responses than states (some state with two or more)"));
    }
    let m = n as f64 / k as f64;
    let grand = states.iter().flatten().sum::<f64>() / n as f64;
    let means: Vec<f64> = states.iter().map(|y| y.iter().sum::<f64>() / y.len() as f64).collect();
    let ssb: f64 = states.iter().zip(&means).map(|(y, mu)| y.len() as f64 * (mu - grand).powi(2)).sum();
    let ssw: f64 = states.iter().zip(&means).map(|(y, mu)| y.iter().map(|v| (v - mu).powi(2)).sum::<f64>()).sum();
    let (msb, msw) = (ssb / (k - 1) as f64, ssw / (n - k) as f64);
    let denominator = msb + (m - 1.0) * msw;
    if denominator <= 0.0 {
        return Err(SampleSizeError::new(
            "states",
            "every response is the same: the intraclass correlation is undefined",
        ));
    }
    Ok(Icc { states: k, n, replicates: m, msb, msw, icc: 0.0_f64.max((msb - msw) / denominator) })
}

/// Per-arm ICCs and their means (m̄, ρ̄), as the SUVA audit paper pools its help and harm arms.
pub fn icc_by_arm(arms: &[Vec<Vec<f64>>]) -> Result<(Vec<Icc>, f64, f64), SampleSizeError> {
    if arms.is_empty() {
        return Err(SampleSizeError::new("arms", "is empty"));
    }
    let per_arm = arms
        .iter()
        .enumerate()
        .map(|(a, states)| {
            icc_oneway(states).map_err(|e| SampleSizeError::new(format!("arms[{a}].{}", e.field), e.reason))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let count = per_arm.len() as f64;
    let m = per_arm.iter().map(|i| i.replicates).sum::<f64>() / count;
    let icc = per_arm.iter().map(|i| i.icc).sum::<f64>() / count;
    Ok((per_arm, m, icc))
}

#[cfg(test)]
mod tests {
    fn close(got: f64, want: f64, tol: f64, what: &str) {
        assert!((got - want).abs() <= tol, "{what}: got {got}, want {want} (±{tol})");
    }
    use super::*;

    #[test]
    fn seed_003_fixture() {
        // The SUVA audit paper §240.14 line 914: "n per arm 0.45 vs 0.30, deff 1.8: 288", with
        // design_effect(5, 0.2) (line 901).
        let deff = design_effect(5.0, 0.2).expect("deff");
        close(deff, 1.8, 1e-12, "deff");
        assert_eq!(samples_per_arm(0.45, 0.30, 0.05, 0.8, deff).expect("n").n_clustered, 288);
    }

    #[test]
    fn seed_003_table_240_4() {
        // The SUVA audit paper Table 240.4 (lines 318–323), "baseline prosocial rate of 0.40 (two-sided alpha
        // 0.05, power 0.8)": gap 0.20 → 95 / 188, 0.10 → 385 / 767, 0.05 → 1531 / 3052
        // (independent / clustered), with "design effect = 1.99" (line 316).
        let rows = [(0.20, 95, 188), (0.10, 385, 767), (0.05, 1531, 3052)];
        for (gap, independent, clustered) in rows {
            let s = samples_per_arm(0.40 + gap, 0.40, 0.05, 0.8, 1.0).expect("n");
            assert_eq!(s.n_independent, independent, "gap {gap}");
            assert_eq!(s.n_clustered, independent, "gap {gap}: deff 1 leaves n");
            // The clustered column used the unrounded design effect, printed only as 1.99: every
            // printed value lies between the plans at the ends of that rounding interval,
            // [1.985, 1.995).
            let lo = samples_per_arm(0.40 + gap, 0.40, 0.05, 0.8, 1.985).expect("n").n_clustered;
            let hi = samples_per_arm(0.40 + gap, 0.40, 0.05, 0.8, 1.995).expect("n").n_clustered;
            assert!(lo <= clustered && clustered <= hi, "gap {gap}: {clustered} outside [{lo}, {hi}]");
        }
        // With deff 1.99 exactly, the first row is reproduced; the other two need more digits
        // of the design effect than the seed prints (766 and 3046 at 1.99).
        assert_eq!(samples_per_arm(0.60, 0.40, 0.05, 0.8, 1.99).expect("n").n_clustered, 188);
        // Rounding up before multiplying would not give 188 anywhere in [1.985, 1.995).
        assert!((95.0_f64 * 1.985).ceil() > 188.0);
    }

    #[test]
    fn seed_003_design_effect_inputs() {
        // The SUVA audit paper lines 315–316: "ICC within arm: {'harm': 0.207, 'help': 0.292}", "replicates per
        // state m = 4.98, ICC = 0.250, design effect = 1.99"; the ICC is the arms' mean (line
        // 306). From these printed values deff = 1 + 3.98 × 0.2495 ≈ 1.993, printed as 1.99.
        let deff = design_effect(4.98, (0.207 + 0.292) / 2.0).expect("deff");
        close(deff, 1.99, 0.005, "deff");
        // With it, Table 240.4's clustered column comes out 188, 767 and 3051: the last differs
        // from the seed's 3052 by the rounding of the printed ICCs.
        let clustered: Vec<u64> = [0.20, 0.10, 0.05]
            .iter()
            .map(|gap| samples_per_arm(0.40 + gap, 0.40, 0.05, 0.8, deff).expect("n").n_clustered)
            .collect();
        assert_eq!(clustered, vec![188, 767, 3051]);
    }

    #[test]
    fn icc_oneway_extremes() {
        // Derived from the formula: identical state means give MSB = 0, so ρ = max(0, −) = 0;
        // no variation within states (MSW = 0) gives ρ = MSB/MSB = 1.
        let same = icc_oneway(&[vec![0.0, 1.0], vec![1.0, 0.0]]).expect("icc");
        assert_eq!((same.icc, same.replicates, same.states, same.n), (0.0, 2.0, 2, 4));
        let apart = icc_oneway(&[vec![0.0, 0.0], vec![1.0, 1.0]]).expect("icc");
        assert_eq!(apart.icc, 1.0);
        let (_, m, icc) =
            icc_by_arm(&[vec![vec![0.0, 1.0], vec![1.0, 0.0]], vec![vec![0.0, 0.0], vec![1.0, 1.0]]]).expect("arms");
        assert_eq!((m, icc), (2.0, 0.5));
    }

    #[test]
    fn refuses_bad_input_naming_the_field() {
        assert_eq!(samples_per_arm(0.4, 0.4, 0.05, 0.8, 1.0).unwrap_err().field, "p1");
        assert_eq!(samples_per_arm(1.2, 0.4, 0.05, 0.8, 1.0).unwrap_err().field, "p1");
        assert_eq!(samples_per_arm(0.6, f64::NAN, 0.05, 0.8, 1.0).unwrap_err().field, "p0");
        // A rate of 0 is a proportion: (z_0.975 + z_0.8)² · (0.1 · 0.9 + 0) / 0.1² = 70.639918 (scipy) → 71.
        let zero = samples_per_arm(0.1, 0.0, 0.05, 0.8, 1.0).expect("p0 = 0");
        assert!((zero.n_independent_exact - 70.639_918).abs() < 1e-5, "{zero:?}");
        assert_eq!(zero.n_independent, 71);
        assert_eq!(samples_per_arm(0.9, 1.0, 0.05, 0.8, 1.0).expect("p0 = 1").n_independent, 71);
        assert_eq!(samples_per_arm(0.6, 0.4, 0.05, 1.0, 1.0).unwrap_err().field, "power");
        assert_eq!(samples_per_arm(0.6, 0.4, 0.05, 0.8, 0.5).unwrap_err().field, "deff");
        assert_eq!(design_effect(0.5, 0.2).unwrap_err().field, "replicates");
        assert_eq!(design_effect(5.0, 1.2).unwrap_err().field, "icc");
        assert_eq!(icc_oneway(&[vec![1.0]]).unwrap_err().field, "states");
        assert_eq!(icc_oneway(&[vec![1.0], vec![]]).unwrap_err().field, "states[1]");
        assert_eq!(icc_oneway(&[vec![1.0], vec![2.0]]).unwrap_err().field, "states");
        assert_eq!(icc_oneway(&[vec![1.0, 1.0], vec![1.0, 1.0]]).unwrap_err().field, "states");
        assert_eq!(icc_by_arm(&[vec![vec![1.0, 0.0], vec![f64::NAN]]]).unwrap_err().field, "arms[0].states[1][0]");
    }
}
