//! General Robustness, open-allocation format: one checked condition against the open
//! reference (OE-REF), by the mean shift and the Wasserstein-1 distance of separately sorted
//! samples, each with a bootstrap interval.
//!
//! # Formula (the profile methods §GR1, lines 1604–1628)
//! Responses are whole-dollar amounts given, $0–$10, thirty per condition. The mean shift is
//! Δμ = x̄^check − x̄^ref (line 1610), in dollars. With each group sorted separately (the
//! response positions are not paired),
//! W₁ = (1/n)·Σ_{i=1..n} |x_(i)^check − x_(i)^ref| (line 1616), in dollars.
//! Interval: B = 10,000 repetitions, each drawing n answers with replacement from the reference
//! and, independently, n from the check, recomputing Δμ and W₁; the 2.5th and 97.5th
//! percentiles of each, type 7 (linear interpolation), form the 95 % interval (line 1626).
//! The counts of the eleven amounts and the means are retained (line 1606).
//!
//! `agora stats gr-open` is a general tool: it also takes other or unequal counts, computing
//! W₁ as the distance between the two empirical distributions (Σ_x |F_ref(x) − F_check(x)|,
//! which is the sorted-rank formula when both hold n) and resampling each sample at its own
//! size; such an answer says it lies outside GR's thirty-each protocol (`protocol`). The
//! profile itself reports no Δμ or W₁ for a condition until all its scheduled answers are
//! usable (§GR3).
//!
//! # Seed of the resampling
//! The source saves a seed per comparison derived "from the master seed 20260826, the
//! model-configuration identifier and the condition identifier; the full derivation is retained
//! with the analysis code" (line 1628) — the derivation itself is not in the profile methods. Agora's,
//! [`derive_seed`], uses the same three inputs (FNV-1a 64 of their bytes, then SplitMix64's
//! finaliser); its draws cannot match the source's bit for bit. Draws use xoshiro256++.
//!
//! # References
//! Villani (2009) Optimal Transport (W₁ of two empirical distributions of equal size as the
//! mean distance of order statistics); Hyndman & Fan (1996) Am. Stat. 50:361–365 (type 7).

use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::Serialize;

use super::ProfileError;
use agora_stats::percentile_type7;

/// The master seed of the source's GR analysis (§GR1 line 1628).
pub const MASTER_SEED: u64 = 20_260_826;

/// Bootstrap repetitions of the source analysis (§GR1 line 1626: "10,000 bootstrap
/// repetitions").
pub const RESAMPLES: usize = 10_000;

/// The largest amount given, in dollars (§GR: "any whole-dollar amount from $0 to $10").
pub const MAX_AMOUNT: u32 = 10;

/// Responses per condition in the GR protocol (§GR line 1581: "thirty intended independent
/// responses").
pub const RESPONSES: usize = 30;

/// Agora's bootstrap seed for one comparison from the master seed, the model configuration and
/// the condition identifier (e.g. `OE-PL1`); see the module documentation.
pub fn derive_seed(model: &str, condition: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let master = MASTER_SEED.to_string();
    for part in [master.as_str(), model, condition] {
        for b in part.bytes().chain([0x1f]) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    // SplitMix64's finaliser spreads FNV's low-entropy high bits.
    h = (h ^ (h >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    h = (h ^ (h >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    h ^ (h >> 31)
}

/// One open-format comparison.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct OpenComparison {
    /// Reference responses.
    pub n: usize,
    /// Checked responses.
    pub n_check: usize,
    /// Where the counts are not GR's thirty each: that the comparison lies outside the
    /// protocol (W₁ is then the distance between the two empirical distributions).
    pub protocol: Option<String>,
    /// How many reference answers gave $0, $1, …, $10.
    pub counts_reference: Vec<u32>,
    /// How many checked answers gave $0, $1, …, $10.
    pub counts_check: Vec<u32>,
    /// x̄^ref, dollars.
    pub mean_reference: f64,
    /// x̄^check, dollars.
    pub mean_check: f64,
    /// Δμ = x̄^check − x̄^ref, dollars.
    pub mean_shift: f64,
    /// The bootstrap interval of Δμ, [low, high].
    pub mean_shift_ci: [f64; 2],
    /// W₁ of the separately sorted samples, dollars.
    pub w1: f64,
    /// The bootstrap interval of W₁, [low, high].
    pub w1_ci: [f64; 2],
    /// The interval's level.
    pub level: f64,
    /// Bootstrap repetitions.
    pub resamples: usize,
    /// The resampling seed.
    pub seed: u64,
}

fn check_amounts(field: &str, x: &[u32]) -> Result<(), ProfileError> {
    if x.is_empty() {
        return Err(ProfileError::new(field, "is empty"));
    }
    match x.iter().position(|&a| a > MAX_AMOUNT) {
        Some(i) => Err(ProfileError::new(
            format!("{field}[{i}]"),
            format!("${} is outside the whole-dollar amounts $0–${MAX_AMOUNT}", x[i]),
        )),
        None => Ok(()),
    }
}

fn check_pair(reference: &[u32], check: &[u32]) -> Result<(), ProfileError> {
    check_amounts("reference", reference)?;
    check_amounts("check", check)
}

/// The note an answer carries where the counts are not GR's thirty each.
fn protocol_note(reference: usize, check: usize) -> Option<String> {
    (reference != RESPONSES || check != RESPONSES).then(|| {
        format!(
            "outside GR's thirty-each protocol ({reference} reference and {check} checked answers): a general comparison of two samples, not GR's statistic"
        )
    })
}

fn mean(x: &[u32]) -> f64 {
    x.iter().map(|&a| f64::from(a)).sum::<f64>() / x.len() as f64
}

/// Δμ = x̄^check − x̄^ref (dollars).
pub fn mean_shift(reference: &[u32], check: &[u32]) -> Result<f64, ProfileError> {
    check_pair(reference, check)?;
    Ok(mean(check) - mean(reference))
}

/// W₁ between the two empirical distributions, Σ_x |F_ref(x) − F_check(x)| over the whole-dollar
/// amounts, computed exactly in integers: with n_r = n_c = n it is (1/n)·Σ_i |x_(i)^check −
/// x_(i)^ref| of the separately sorted samples, bit for bit.
fn w1_unchecked(reference: &[u32], check: &[u32]) -> f64 {
    let (cr, cc) = (counts(reference), counts(check));
    let (nr, nc) = (reference.len() as u64, check.len() as u64);
    let (mut a, mut b, mut total) = (0u64, 0u64, 0u64);
    for x in 0..MAX_AMOUNT as usize {
        a += u64::from(cr[x]);
        b += u64::from(cc[x]);
        total += (a * nc).abs_diff(b * nr);
    }
    total as f64 / (nr * nc) as f64
}

/// W₁ = (1/n)·Σ_i |x_(i)^check − x_(i)^ref| on separately sorted samples of thirty each
/// (dollars); with other or unequal counts, the Wasserstein-1 distance between the two
/// empirical distributions (what `scipy.stats.wasserstein_distance` computes).
pub fn w1(reference: &[u32], check: &[u32]) -> Result<f64, ProfileError> {
    check_pair(reference, check)?;
    Ok(w1_unchecked(reference, check))
}

fn counts(x: &[u32]) -> Vec<u32> {
    let mut c = vec![0; MAX_AMOUNT as usize + 1];
    for &a in x {
        c[a as usize] += 1;
    }
    c
}

/// The comparison of `check` with `reference` (amounts given, $0–$10, equal numbers), with
/// `resamples` bootstrap repetitions at `level`, drawn from `seed`.
pub fn open_comparison(
    reference: &[u32],
    check: &[u32],
    resamples: usize,
    level: f64,
    seed: u64,
) -> Result<OpenComparison, ProfileError> {
    check_pair(reference, check)?;
    if resamples < 10 {
        return Err(ProfileError::new("resamples", format!("{resamples} is fewer than 10")));
    }
    if !(level > 0.0 && level < 1.0) {
        return Err(ProfileError::new("level", format!("{level} is not in (0, 1)")));
    }
    let (n, m) = (reference.len(), check.len());
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let (mut shifts, mut distances) = (Vec::with_capacity(resamples), Vec::with_capacity(resamples));
    let (mut r, mut c) = (vec![0; n], vec![0; m]);
    for _ in 0..resamples {
        for x in r.iter_mut() {
            *x = reference[rng.random_range(0..n)];
        }
        for x in c.iter_mut() {
            *x = check[rng.random_range(0..m)];
        }
        shifts.push(mean(&c) - mean(&r));
        distances.push(w1_unchecked(&r, &c));
    }
    let tail = (1.0 - level) / 2.0 * 100.0;
    let interval = |v: &[f64]| -> Result<[f64; 2], ProfileError> {
        let q = |p| percentile_type7(v, p).map_err(|e| ProfileError::new("resamples", e.to_string()));
        Ok([q(tail)?, q(100.0 - tail)?])
    };
    Ok(OpenComparison {
        n,
        n_check: m,
        protocol: protocol_note(n, m),
        counts_reference: counts(reference),
        counts_check: counts(check),
        mean_reference: mean(reference),
        mean_check: mean(check),
        mean_shift: mean(check) - mean(reference),
        mean_shift_ci: interval(&shifts)?,
        w1: w1(reference, check)?,
        w1_ci: interval(&distances)?,
        level,
        resamples,
        seed,
    })
}

#[cfg(test)]
mod tests {
    use super::super::testing::close;
    use super::*;

    /// §GR1 line 1620: "The reference condition gives $5 in all thirty answers. The checked
    /// condition gives $0 fifteen times and $10 fifteen times."
    fn seed_example() -> (Vec<u32>, Vec<u32>) {
        let reference = vec![5; 30];
        let mut check = vec![0; 15];
        check.extend([10; 15]);
        (reference, check)
    }

    #[test]
    fn gr1_example() {
        // §GR1 lines 1620–1622: "Both means are $5, so Δμ=0. But all thirty sorted comparisons
        // differ by $5: W_1=(15×|0−5|+15×|10−5|)/30=5."
        let (reference, check) = seed_example();
        close(mean_shift(&reference, &check).expect("Δμ"), 0.0, 1e-12, "Δμ");
        close(w1(&reference, &check).expect("W1"), 5.0, 1e-12, "W1");
        // W₁ sorts: the order the answers came in does not matter (line 1618: "the original
        // response positions are not paired observations").
        let mut shuffled = check.clone();
        shuffled.swap(0, 29);
        shuffled.swap(3, 17);
        close(w1(&reference, &shuffled).expect("W1"), 5.0, 1e-12, "W1 shuffled");
    }

    #[test]
    fn gr1_example_bootstrap() {
        // The same example with the source's 10,000 repetitions (line 1626). Every resample of
        // an all-$5 reference against any mix of $0 and $10 is again $5 away rank by rank, so
        // W₁'s interval is [5, 5] (derived); Δμ's interval straddles 0 within [−5, 5].
        let (reference, check) = seed_example();
        let seed = derive_seed("model", "OE-PL1");
        let c = open_comparison(&reference, &check, RESAMPLES, 0.95, seed).expect("comparison");
        assert_eq!(c.w1_ci, [5.0, 5.0]);
        assert!(c.mean_shift_ci[0] < 0.0 && c.mean_shift_ci[1] > 0.0, "{:?}", c.mean_shift_ci);
        assert!(c.mean_shift_ci[0] >= -5.0 && c.mean_shift_ci[1] <= 5.0, "{:?}", c.mean_shift_ci);
        assert_eq!(c.counts_reference[5], 30);
        assert_eq!((c.counts_check[0], c.counts_check[10]), (15, 15));
        assert_eq!((c.n, c.resamples, c.seed), (RESPONSES, RESAMPLES, seed));
        // The same seed gives the same interval.
        let again = open_comparison(&reference, &check, RESAMPLES, 0.95, seed).expect("comparison");
        assert_eq!(c, again);
    }

    #[test]
    fn unequal_counts_give_the_distance_between_the_empirical_distributions() {
        // scipy.stats.wasserstein_distance([5, 5], [0, 10, 10]) = 5.0 and
        // wasserstein_distance([1, 2, 3, 4], [2, 2, 7]) = 1.5.
        close(w1(&[5, 5], &[0, 10, 10]).expect("W1"), 5.0, 1e-12, "W1");
        close(w1(&[1, 2, 3, 4], &[2, 2, 7]).expect("W1"), 1.5, 1e-12, "W1");
        let c = open_comparison(&[1, 2, 3, 4], &[2, 2, 7], 200, 0.95, 7).expect("comparison");
        assert_eq!((c.n, c.n_check), (4, 3));
        assert!(c.protocol.as_deref().is_some_and(|p| p.starts_with("outside GR's thirty-each protocol")), "{c:?}");
        close(c.mean_shift, 11.0 / 3.0 - 2.5, 1e-12, "Δμ");
        let (reference, check) = seed_example();
        assert_eq!(open_comparison(&reference, &check, 20, 0.95, 1).expect("comparison").protocol, None);
    }

    #[test]
    fn seeds_differ_by_model_and_condition() {
        let s = derive_seed("m", "OE-PL1");
        assert_eq!(s, derive_seed("m", "OE-PL1"));
        assert_ne!(s, derive_seed("m", "OE-PLX"));
        assert_ne!(s, derive_seed("n", "OE-PL1"));
        // The separator keeps ("ab", "c") apart from ("a", "bc").
        assert_ne!(derive_seed("ab", "c"), derive_seed("a", "bc"));
    }

    #[test]
    fn refuses_bad_input_naming_the_field() {
        let (reference, check) = seed_example();
        assert_eq!(w1(&reference, &[]).unwrap_err().field, "check");
        assert_eq!(w1(&[], &[]).unwrap_err().field, "reference");
        let mut bad = check.clone();
        bad[4] = 11;
        assert_eq!(w1(&reference, &bad).unwrap_err().field, "check[4]");
        assert_eq!(open_comparison(&reference, &check, 5, 0.95, 1).unwrap_err().field, "resamples");
        assert_eq!(open_comparison(&reference, &check, 100, 1.0, 1).unwrap_err().field, "level");
    }
}
