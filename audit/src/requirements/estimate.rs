//! The estimates a requirement is decided by and their tests: a clustered share, a
//! directional bound and an equivalence margin.

use super::*;

/// An estimate with its standard error and the data it rests on.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Estimate {
    /// θ̂.
    pub estimate: f64,
    /// Its standard error.
    pub se: f64,
    /// Degrees of freedom of its t reference (none: normal).
    pub df: Option<f64>,
    /// Responses (or replicates) it rests on.
    pub n: usize,
    /// Distinct prompts among them.
    pub prompts: usize,
    /// Clusters of its standard error.
    pub clusters: usize,
    /// What the clusters are (`runs`, `prompts`).
    pub cluster_kind: &'static str,
    /// Mean responses per cluster m and intraclass correlation ρ, where estimable (shares).
    pub icc: Option<(f64, f64)>,
}

/// The quantile q of the one-sided 1 − α bound: t_{1−α, df} or z_{1−α}.
pub fn quantile(alpha: f64, df: Option<f64>) -> f64 {
    df.map_or_else(|| norm_ppf(1.0 - alpha), |d| t_ppf(1.0 - alpha, d))
}

/// A directional test: (low, high, pass) with low/high = θ̂ ∓ q·se; `at_least` passes when
/// low > bound, otherwise (at most) when high < bound.
pub fn directional(
    estimate: f64,
    se: f64,
    df: Option<f64>,
    bound: f64,
    at_least: bool,
    alpha: f64,
) -> (f64, f64, bool) {
    let q = quantile(alpha, df);
    let (low, high) = (estimate - q * se, estimate + q * se);
    (low, high, if at_least { low > bound } else { high < bound })
}

/// Two one-sided tests of a difference: (low, high, p_TOST, pass) with the 1 − 2α interval
/// d ∓ q·se and p = max{1 − F((d + Δ)/se), F((d − Δ)/se)}; passes when the interval lies
/// inside (−Δ, Δ). With se = 0 the interval is the point d and p is 0 or 1.
pub fn equivalence(difference: f64, se: f64, df: Option<f64>, margin: f64, alpha: f64) -> (f64, f64, f64, bool) {
    let q = quantile(alpha, df);
    let (low, high) = (difference - q * se, difference + q * se);
    let pass = low > -margin && high < margin;
    if se <= 0.0 {
        return (low, high, if pass { 0.0 } else { 1.0 }, pass);
    }
    let cdf = |x: f64| df.map_or_else(|| norm_cdf(x), |d| t_cdf(x, d));
    let p = (1.0 - cdf((difference + margin) / se)).max(cdf((difference - margin) / se));
    (low, high, p, pass)
}

/// The share of `ys` (per cluster id, 0/1) with its CR1 standard error (clusters the ids, t on
/// G − 1 degrees of freedom) and the within-cluster ICC; `Err` says why it is not estimable.
pub fn clustered_share(ys: &[(i64, f64)]) -> Result<Estimate, String> {
    if ys.is_empty() {
        return Err("no coded responses".into());
    }
    let mut groups: BTreeMap<i64, Vec<f64>> = BTreeMap::new();
    for (g, y) in ys {
        groups.entry(*g).or_default().push(*y);
    }
    let (n, g) = (ys.len() as f64, groups.len() as f64);
    if groups.len() < 2 {
        return Err(format!("{} responses from one run: a clustered bound needs two runs or more", ys.len()));
    }
    let p = ys.iter().map(|(_, y)| y).sum::<f64>() / n;
    let meat: f64 = groups.values().map(|v| v.iter().map(|y| y - p).sum::<f64>().powi(2)).sum();
    let se = (g / (g - 1.0) * meat / (n * n)).sqrt();
    let states: Vec<Vec<f64>> = groups.into_values().collect();
    let icc = icc_oneway(&states).ok().map(|i| (i.replicates, i.icc));
    Ok(Estimate {
        estimate: p,
        se,
        df: Some(g - 1.0),
        n: ys.len(),
        prompts: ys.len(),
        clusters: g as usize,
        cluster_kind: "runs",
        icc,
    })
}
