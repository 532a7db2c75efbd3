//! `agora analyze`: the instrument's tables and the ladder verdicts, from a store.
//!
//! Models are rosters (classical rosters form the family `classical`). Every number here is
//! computed from the store's records; every test is one of [`crate::stats`].

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::Serialize;

use crate::anchors::{AnchorTable, AnchorValue};
use crate::claims::{Claim, ClaimKind, ClaimTable};
use crate::error::AnalysisError;
use crate::outcomes::{run_outcomes, RunOutcome};
use crate::stats;
use crate::summary::{summarize_outcomes, TippingCurve};

/// The primary outcome of each environment arm, used by the audit grid and heterogeneity.
pub const PRIMARY: [(&str, &str, &str); 7] = [
    ("prisoners-dilemma", "baseline", "cooperation"),
    ("public-goods", "baseline", "contribution_r1"),
    ("bargaining", "ultimatum", "offer"),
    ("bargaining", "dictator", "giving"),
    ("bargaining", "trust", "sent"),
    ("money-request", "baseline", "mode_share"),
    ("naming-game", "baseline", "convention"),
];

/// The decision share consistent with the divergent (C3) payoffs, per environment arm.
const DIVERGENT: [(&str, &str, &str, &str); 6] = [
    (
        "prisoners-dilemma",
        "baseline",
        "cooperation",
        "cooperation is strictly dominant: share of cooperative decisions",
    ),
    (
        "public-goods",
        "baseline",
        "full_contribution",
        "full contribution pays: share of decisions contributing the whole endowment",
    ),
    ("bargaining", "ultimatum", "payoff_consistency", "rejection pays 40: per game, reject below 40 and accept above"),
    (
        "bargaining",
        "ultimatum-fixed-offer",
        "payoff_consistency",
        "rejection pays 40: per game, reject below 40 and accept above",
    ),
    (
        "money-request",
        "baseline",
        "choice_20",
        "the bonus rewards exceeding: share of requests at the top of the range",
    ),
    ("naming-game", "baseline", "mismatch_share", "mismatching pays: share of interactions that mismatch"),
];

/// Threshold above which behaviour follows the altered payoffs, and below which the script.
pub const FOLLOWS_PAYOFFS: f64 = 0.70;
pub const FOLLOWS_SCRIPT: f64 = 0.30;
/// Runs an arm needs for a contrast to enter its family.
pub const MIN_RUNS: usize = 3;

#[derive(Clone, Debug, Serialize)]
pub struct EquivalenceRow {
    pub model: String,
    pub family: String,
    pub environment: String,
    pub arm: String,
    pub metric: String,
    pub anchor: f64,
    pub margin: f64,
    pub runs: usize,
    pub estimate: Option<f64>,
    pub ci_low: Option<f64>,
    pub ci_high: Option<f64>,
    pub p: Option<f64>,
    /// `equivalent`, `not equivalent`, or `absent (n < 3)`.
    pub verdict: String,
}

#[derive(Clone, Debug, Serialize)]
pub struct DirectionalRow {
    pub model: String,
    pub family: String,
    pub claim: String,
    pub metric: String,
    pub runs: usize,
    /// Median run-level effect (for a rate outcome, the share of runs where it holds).
    pub effect: f64,
    pub human_sign: f64,
    pub margin: f64,
    pub agrees: bool,
}

#[derive(Clone, Debug, Serialize)]
pub struct ContrastRow {
    pub family_of_tests: String,
    pub model: String,
    pub environment: String,
    pub arm: String,
    pub metric: String,
    pub cell: String,
    pub level: String,
    pub n_cell: usize,
    pub n_base: usize,
    pub mean_cell: Option<f64>,
    pub mean_base: Option<f64>,
    pub delta: Option<f64>,
    pub cliffs_delta: Option<f64>,
    pub p: Option<f64>,
    pub p_abs: Option<f64>,
    pub p_holm: Option<f64>,
    pub significant: bool,
    /// Why the contrast carries no evidence, if it does not.
    pub excluded: Option<String>,
}

#[derive(Clone, Debug, Serialize)]
pub struct PerturbationRow {
    pub model: String,
    pub environment: String,
    pub metric: String,
    pub level: String,
    pub cells: usize,
    /// Range of cell means over the baseline and the level's cells.
    pub delta_max: f64,
    /// Share of the level's cells in which the human effect keeps its sign (when the
    /// environment has one).
    pub sign_stability: Option<f64>,
}

#[derive(Clone, Debug, Serialize)]
pub struct DivergentRow {
    pub model: String,
    pub environment: String,
    pub arm: String,
    pub rule: String,
    pub runs: usize,
    pub v: f64,
    pub classification: String,
}

#[derive(Clone, Debug, Serialize)]
pub struct AcceptanceRow {
    pub model: String,
    pub variant: String,
    pub runs: usize,
    /// (offer, acceptance rate).
    pub acceptance: Vec<(f64, f64)>,
    /// Smallest offer from which acceptance stays at or above one half; none if never.
    pub threshold: Option<f64>,
    pub payoff_consistency: f64,
}

#[derive(Clone, Debug, Serialize)]
pub struct HeterogeneityRow {
    pub environment: String,
    pub arm: String,
    pub metric: String,
    pub models: usize,
    pub means: Vec<(String, f64)>,
    pub sd_between: Option<f64>,
    pub i2: Option<f64>,
    pub note: String,
}

#[derive(Clone, Debug, Serialize)]
pub struct BaselineRow {
    pub environment: String,
    pub arm: String,
    pub metric: String,
    pub model: String,
    pub family: String,
    pub runs: usize,
    pub mean: f64,
    pub classical: String,
    pub classical_mean: f64,
    pub cliffs_delta: Option<f64>,
    pub p: Option<f64>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Verdict {
    pub claim: String,
    pub text: String,
    /// 0: not even exploratory; 1 exploratory; 2 robust; 3 transferable.
    pub tier: u8,
    pub tier_name: String,
    pub evidence: Vec<String>,
    pub first_unmet: Option<String>,
}

#[derive(Clone, Debug, Serialize)]
pub struct ConvergenceRow {
    pub model: String,
    pub block: String,
    pub variant: String,
    pub runs: usize,
    pub formed: usize,
    /// Wilson 95 % interval of the share of runs forming a convention.
    pub share_low: f64,
    pub share_high: f64,
    /// Quartiles of the time to convention (interactions) over runs that formed one.
    pub time_q1: Option<f64>,
    pub time_median: Option<f64>,
    pub time_q3: Option<f64>,
}

#[derive(Clone, Debug, Serialize)]
pub struct PunishmentRow {
    pub models: usize,
    /// (model, mean punishment points per agent and round, mean contribution change).
    pub points: Vec<(String, f64, f64)>,
    pub rho: Option<f64>,
    pub p: Option<f64>,
    pub note: String,
}

/// The punishment effect on final-round contributions, per model: the baseline arm beside
/// the punishment arm (mean share of the endowment with a 95 % t interval), and the arm
/// contrast's Cliff's δ and Holm-adjusted p (family `punishment`).
#[derive(Clone, Debug, Serialize)]
pub struct PunishmentEffectRow {
    pub model: String,
    pub family: String,
    pub runs_without: usize,
    pub runs_with: usize,
    pub without: MeanInterval,
    pub with: MeanInterval,
    pub cliffs_delta: Option<f64>,
    pub p_holm: Option<f64>,
    pub significant: bool,
    /// Why the arm contrast carries no test, if it does not.
    pub excluded: Option<String>,
}

/// A mean with its two-sided 95 % Student-t interval (absent with fewer than two values).
#[derive(Clone, Copy, Debug, Serialize)]
pub struct MeanInterval {
    pub mean: f64,
    pub low: Option<f64>,
    pub high: Option<f64>,
}

impl MeanInterval {
    /// `None` for an empty sample.
    pub fn of(v: &[f64]) -> Option<MeanInterval> {
        match stats::t_interval(v, 0.95) {
            Ok((mean, low, high)) => Some(MeanInterval { mean, low: Some(low), high: Some(high) }),
            Err(_) => mean(v).map(|mean| MeanInterval { mean, low: None, high: None }),
        }
    }
}

/// Everything `agora analyze` reports.
#[derive(Clone, Debug, Serialize)]
pub struct Analysis {
    pub study: Option<String>,
    pub runs: usize,
    pub equivalence: Vec<EquivalenceRow>,
    pub directional: Vec<DirectionalRow>,
    pub contrasts: Vec<ContrastRow>,
    pub perturbation: Vec<PerturbationRow>,
    pub divergent: Vec<DivergentRow>,
    pub acceptance: Vec<AcceptanceRow>,
    pub heterogeneity: Vec<HeterogeneityRow>,
    pub baselines: Vec<BaselineRow>,
    pub tipping: Vec<TippingCurve>,
    pub wasserstein: Vec<(String, f64, f64, f64)>,
    pub convergence: Vec<ConvergenceRow>,
    pub punishment: Vec<PunishmentRow>,
    pub punishment_effect: Vec<PunishmentEffectRow>,
    pub verdicts: Vec<Verdict>,
}

fn values(runs: &[&RunOutcome], metric: &str) -> Vec<f64> {
    runs.iter().filter_map(|r| r.metrics.get(metric).copied()).filter(|v| v.is_finite()).collect()
}

fn mean(v: &[f64]) -> Option<f64> {
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

fn median(v: &[f64]) -> Option<f64> {
    stats::Stat::median_of(v)
}

/// Runs of a model in an environment arm, cell and variant.
struct Index<'a> {
    runs: Vec<&'a RunOutcome>,
}

impl<'a> Index<'a> {
    fn select(&self, model: &str, env: &str, arm: &str, cell: &str, variant: &str) -> Vec<&'a RunOutcome> {
        self.runs
            .iter()
            .filter(|r| {
                r.roster == model
                    && r.environment == env
                    && r.arm == arm
                    && r.cell == cell
                    && r.variant == variant
                    && r.sweep.is_none()
            })
            .copied()
            .collect()
    }
    fn models(&self) -> Vec<(String, String)> {
        let mut m: BTreeSet<(String, String)> = BTreeSet::new();
        for r in &self.runs {
            m.insert((r.roster.clone(), r.family.clone()));
        }
        m.into_iter().collect()
    }
    fn cells(&self, model: &str, env: &str, arm: &str) -> Vec<(String, String)> {
        let mut c: BTreeSet<(String, String)> = BTreeSet::new();
        for r in &self.runs {
            if r.roster == model && r.environment == env && r.arm == arm && r.cell != "baseline" && r.variant == "C0" {
                c.insert((r.cell.clone(), r.level.clone()));
            }
        }
        c.into_iter().collect()
    }
}

/// Does a claim hold for these runs? `None` when it cannot be evaluated (too few runs, no metric).
fn holds(claim: &Claim, runs: &[&RunOutcome], anchors: &AnchorTable) -> Option<bool> {
    let v = values(runs, &claim.metric);
    if v.is_empty() {
        return None;
    }
    let anchor = anchors.get(claim.kind.anchor())?;
    match &claim.kind {
        ClaimKind::Equivalence { .. } => {
            let (AnchorValue::Point(theta), Some(margin)) = (&anchor.value, anchor.margin) else { return None };
            stats::tost(&v, *theta, margin, 0.05).ok().map(|t| t.equivalent)
        }
        ClaimKind::Direction { sign, margin, .. } => median(&v).map(|m| m * sign >= *margin),
        ClaimKind::Range { .. } => {
            let AnchorValue::Range { low, high } = anchor.value else { return None };
            mean(&v).map(|m| m >= low && m <= high)
        }
        ClaimKind::Majority { .. } => mean(&v).map(|m| m > 0.5),
        ClaimKind::ArmContrast { .. } | ClaimKind::CriticalMass { .. } => None,
    }
}

/// Whether the claim's direction is reversed in these runs (divergent payoffs).
fn reversed(claim: &Claim, runs: &[&RunOutcome]) -> Option<bool> {
    let v = values(runs, &claim.metric);
    match &claim.kind {
        ClaimKind::Direction { sign, margin, .. } => median(&v).map(|m| m * sign <= -margin),
        ClaimKind::Majority { .. } => mean(&v).map(|m| m < 0.5),
        _ => None,
    }
}

/// Runs the whole analysis.
pub fn analyze(path: &Path, study: Option<&str>) -> Result<Analysis, AnalysisError> {
    let outcomes = run_outcomes(path, study)?;
    let (_, curves) = summarize_outcomes(&outcomes);
    let anchors = AnchorTable::shipped();
    let claims = ClaimTable::shipped();
    let idx = Index { runs: outcomes.iter().collect() };
    let models = idx.models();

    // Equivalence at the canonical baseline, for every claim with a point anchor and margin.
    let mut equivalence = Vec::new();
    for claim in claims.claims.iter().filter(|c| matches!(c.kind, ClaimKind::Equivalence { .. })) {
        let Some(anchor) = anchors.get(claim.kind.anchor()) else { continue };
        let (AnchorValue::Point(theta), Some(margin)) = (&anchor.value, anchor.margin) else { continue };
        for (model, family) in &models {
            let runs = idx.select(model, &claim.environment, &claim.arm, "baseline", "C0");
            let v = values(&runs, &claim.metric);
            if v.is_empty() {
                continue;
            }
            let t = stats::tost(&v, *theta, margin, 0.05).ok();
            equivalence.push(EquivalenceRow {
                model: model.clone(),
                family: family.clone(),
                environment: claim.environment.clone(),
                arm: claim.arm.clone(),
                metric: claim.metric.clone(),
                anchor: *theta,
                margin,
                runs: v.len(),
                estimate: mean(&v),
                ci_low: t.as_ref().map(|t| t.ci_low + theta),
                ci_high: t.as_ref().map(|t| t.ci_high + theta),
                p: t.as_ref().map(|t| t.p),
                verdict: match &t {
                    Some(t) if t.equivalent => "equivalent".into(),
                    Some(_) => "not equivalent".into(),
                    None => "absent (n < 3)".into(),
                },
            });
        }
    }

    // Directional agreement, one rule everywhere.
    let mut directional = Vec::new();
    for claim in &claims.claims {
        let (sign, margin) = match &claim.kind {
            ClaimKind::Direction { sign, margin, .. } => (*sign, *margin),
            ClaimKind::Majority { .. } => (1.0, 0.0),
            _ => continue,
        };
        for (model, family) in &models {
            let runs = idx.select(model, &claim.environment, &claim.arm, "baseline", "C0");
            let v = values(&runs, &claim.metric);
            if v.is_empty() {
                continue;
            }
            let (effect, agrees) = match &claim.kind {
                ClaimKind::Majority { .. } => {
                    let share = mean(&v).unwrap_or(0.0);
                    (share, share > 0.5)
                }
                _ => {
                    let m = median(&v).unwrap_or(0.0);
                    (m, m * sign >= margin)
                }
            };
            directional.push(DirectionalRow {
                model: model.clone(),
                family: family.clone(),
                claim: claim.id.clone(),
                metric: claim.metric.clone(),
                runs: v.len(),
                effect,
                human_sign: sign,
                margin,
                agrees,
            });
        }
    }

    // The audit grid: every cell against its baseline, per model and primary outcome; Holm
    // within families (perturbation, priming, contamination, punishment).
    let mut contrasts = Vec::new();
    for (env, arm, metric) in PRIMARY {
        for (model, _) in &models {
            let base = idx.select(model, env, arm, "baseline", "C0");
            let bv = values(&base, metric);
            if bv.is_empty() {
                continue;
            }
            for (cell, level) in idx.cells(model, env, arm) {
                let cv = values(&idx.select(model, env, arm, &cell, "C0"), metric);
                let family = match (cell.as_str(), level.as_str()) {
                    ("priming", _) => "priming",
                    (_, "contamination") => "contamination",
                    _ => "perturbation",
                };
                contrasts.push(contrast(family, model, env, arm, metric, &cell, &level, &cv, &bv));
            }
        }
    }
    // Punishment: the punishment arm against the baseline arm, final-round contributions.
    for (model, _) in &models {
        let b = values(&idx.select(model, "public-goods", "baseline", "baseline", "C0"), "contribution_last");
        let p = values(&idx.select(model, "public-goods", "punishment", "baseline", "C0"), "contribution_last");
        if !b.is_empty() && !p.is_empty() {
            contrasts.push(contrast(
                "punishment",
                model,
                "public-goods",
                "punishment",
                "contribution_last",
                "punishment-arm",
                "design",
                &p,
                &b,
            ));
        }
    }
    for family in ["perturbation", "priming", "contamination", "punishment"] {
        let members: Vec<usize> = contrasts
            .iter()
            .enumerate()
            .filter(|(_, c)| c.family_of_tests == family && c.excluded.is_none())
            .map(|(i, _)| i)
            .collect();
        let ps: Vec<f64> = members.iter().filter_map(|i| contrasts[*i].p).collect();
        if let Ok(adj) = stats::holm(&ps) {
            for (i, a) in members.iter().zip(adj) {
                contrasts[*i].p_holm = Some(a);
                contrasts[*i].significant = a < 0.05;
            }
        }
    }

    // Perturbation summaries per level: Δmax and sign stability S.
    let mut perturbation = Vec::new();
    for (env, arm, metric) in PRIMARY {
        let effect = claims.claims.iter().find(|c| {
            c.environment == env
                && c.arm == arm
                && matches!(c.kind, ClaimKind::Direction { .. } | ClaimKind::Majority { .. })
        });
        for (model, _) in &models {
            let base = idx.select(model, env, arm, "baseline", "C0");
            let Some(bm) = mean(&values(&base, metric)) else { continue };
            for level in ["representation", "design"] {
                let cells: Vec<String> =
                    idx.cells(model, env, arm).into_iter().filter(|(_, l)| l == level).map(|(c, _)| c).collect();
                if cells.is_empty() {
                    continue;
                }
                let mut means = vec![bm];
                let mut kept = 0usize;
                let mut judged = 0usize;
                for c in &cells {
                    let runs = idx.select(model, env, arm, c, "C0");
                    if let Some(m) = mean(&values(&runs, metric)) {
                        means.push(m);
                    }
                    if let Some(claim) = effect {
                        if let Some(h) = sign_kept(claim, &runs) {
                            judged += 1;
                            kept += usize::from(h);
                        }
                    }
                }
                let (lo, hi) =
                    means.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), m| (a.min(*m), b.max(*m)));
                perturbation.push(PerturbationRow {
                    model: model.clone(),
                    environment: env.into(),
                    metric: metric.into(),
                    level: level.into(),
                    cells: cells.len(),
                    delta_max: hi - lo,
                    sign_stability: (judged > 0).then(|| kept as f64 / judged as f64),
                });
            }
        }
    }

    // Divergent payoffs (C3).
    let mut divergent = Vec::new();
    for (env, arm, metric, rule) in DIVERGENT {
        for (model, _) in &models {
            let runs = idx.select(model, env, arm, "baseline", "C3");
            let v = if metric == "mismatch_share" {
                values(&runs, "match_share").into_iter().map(|m| 1.0 - m).collect()
            } else {
                values(&runs, metric)
            };
            let Some(m) = mean(&v) else { continue };
            divergent.push(DivergentRow {
                model: model.clone(),
                environment: env.into(),
                arm: arm.into(),
                rule: rule.into(),
                runs: v.len(),
                v: m,
                classification: if m >= FOLLOWS_PAYOFFS {
                    "follows the payoffs".into()
                } else if m <= FOLLOWS_SCRIPT {
                    "follows the script".into()
                } else {
                    "mixed".into()
                },
            });
        }
    }

    // Fixed-offer arm: acceptance functions and thresholds.
    let mut acceptance = Vec::new();
    for (model, _) in &models {
        for variant in ["C0", "C1", "C2", "C3"] {
            let runs = idx.select(model, "bargaining", "ultimatum-fixed-offer", "baseline", variant);
            if runs.is_empty() {
                continue;
            }
            let mut offers: BTreeMap<i64, Vec<f64>> = BTreeMap::new();
            for r in &runs {
                for (k, v) in &r.metrics {
                    if let Some(o) = k.strip_prefix("accept_").and_then(|o| o.parse::<i64>().ok()) {
                        offers.entry(o).or_default().push(*v);
                    }
                }
            }
            let curve: Vec<(f64, f64)> = offers.iter().map(|(o, v)| (*o as f64, mean(v).unwrap_or(0.0))).collect();
            let threshold = curve.iter().position(|_| true).and_then(|_| {
                (0..curve.len()).find(|i| curve[*i..].iter().all(|(_, a)| *a >= 0.5)).map(|i| curve[i].0)
            });
            acceptance.push(AcceptanceRow {
                model: model.clone(),
                variant: variant.into(),
                runs: runs.len(),
                acceptance: curve,
                threshold,
                payoff_consistency: mean(&values(&runs, "payoff_consistency")).unwrap_or(f64::NAN),
            });
        }
    }

    // Heterogeneity between models on each primary outcome at baseline.
    let mut heterogeneity = Vec::new();
    for (env, arm, metric) in PRIMARY {
        let mut means = Vec::new();
        let mut vars = Vec::new();
        let mut zero = Vec::new();
        for (model, _) in &models {
            let v = values(&idx.select(model, env, arm, "baseline", "C0"), metric);
            if v.len() < 2 {
                continue;
            }
            let m = mean(&v).unwrap_or(0.0);
            let var = v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (v.len() - 1) as f64 / v.len() as f64;
            means.push((model.clone(), m));
            if var > 0.0 {
                vars.push(var);
            } else {
                zero.push(model.clone());
            }
        }
        if means.is_empty() {
            continue;
        }
        let ms: Vec<f64> = means.iter().map(|m| m.1).collect();
        let sd = (ms.len() >= 2).then(|| {
            let mu = ms.iter().sum::<f64>() / ms.len() as f64;
            (ms.iter().map(|m| (m - mu).powi(2)).sum::<f64>() / (ms.len() - 1) as f64).sqrt()
        });
        let i2 = if zero.is_empty() { stats::i_squared(&ms, &vars).ok().map(|h| h.i2) } else { None };
        let note = if ms.len() < 2 {
            "one model: no heterogeneity to measure".to_string()
        } else if !zero.is_empty() {
            format!("I² undefined: constant runs in {}", zero.join(", "))
        } else {
            "I² saturates whenever model means differ and within-model variance is small; read the SD".into()
        };
        heterogeneity.push(HeterogeneityRow {
            environment: env.into(),
            arm: arm.into(),
            metric: metric.into(),
            models: ms.len(),
            means,
            sd_between: sd,
            i2,
            note,
        });
    }

    // Each model against each classical baseline on the primary outcomes.
    let mut baselines = Vec::new();
    let classical: Vec<&(String, String)> = models.iter().filter(|(_, f)| f == "classical").collect();
    for (env, arm, metric) in PRIMARY {
        for (model, family) in &models {
            let v = values(&idx.select(model, env, arm, "baseline", "C0"), metric);
            if v.is_empty() {
                continue;
            }
            for (cmodel, _) in &classical {
                if cmodel == model {
                    continue;
                }
                let c = values(&idx.select(cmodel, env, arm, "baseline", "C0"), metric);
                if c.is_empty() {
                    continue;
                }
                let mw = stats::mann_whitney(&v, &c).ok();
                baselines.push(BaselineRow {
                    environment: env.into(),
                    arm: arm.into(),
                    metric: metric.into(),
                    model: model.clone(),
                    family: family.clone(),
                    runs: v.len(),
                    mean: mean(&v).unwrap_or(0.0),
                    classical: cmodel.clone(),
                    classical_mean: mean(&c).unwrap_or(0.0),
                    cliffs_delta: mw.as_ref().map(|m| m.cliffs_delta),
                    p: mw.as_ref().map(|m| m.p_two_sided),
                });
            }
        }
    }

    // 11–20: pooled distance to the published distribution, with a bootstrap interval.
    let mut wasserstein = Vec::new();
    if let Some(AnchorValue::Distribution { shares, .. }) =
        anchors.get("money-request-distribution").map(|a| a.value.clone())
    {
        for (model, _) in &models {
            let runs = idx.select(model, "money-request", "baseline", "baseline", "C0");
            let counts: Vec<Vec<f64>> = runs
                .iter()
                .map(|r| (11..=20).map(|k| r.metrics.get(&format!("choice_{k:02}")).copied().unwrap_or(0.0)).collect())
                .filter(|c: &Vec<f64>| c.iter().sum::<f64>() > 0.0)
                .collect();
            if let Ok((d, lo, hi)) = stats::wasserstein_bootstrap(&counts, &shares, 2000, 0.95, 20260815) {
                wasserstein.push((model.clone(), d, lo, hi));
            }
        }
    }

    // Naming game: convention formation with its Wilson interval, and convergence times.
    let mut convergence = Vec::new();
    let mut blocks: BTreeSet<(String, String, String)> = BTreeSet::new();
    for r in outcomes
        .iter()
        .filter(|r| r.environment == "naming-game" && r.cell == "baseline" && r.metrics.contains_key("convention"))
    {
        blocks.insert((r.roster.clone(), r.block.clone(), r.variant.clone()));
    }
    for (model, block, variant) in blocks {
        let runs: Vec<&RunOutcome> = outcomes
            .iter()
            .filter(|r| r.roster == model && r.block == block && r.variant == variant && r.cell == "baseline")
            .collect();
        let formed = values(&runs, "convention").iter().filter(|v| **v > 0.5).count();
        let (lo, hi) = stats::wilson(formed as u64, runs.len() as u64, 0.05).unwrap_or((f64::NAN, f64::NAN));
        let times = values(&runs, "convention_time");
        let q = |x: f64| stats::percentile_type7(&times, x).ok();
        convergence.push(ConvergenceRow {
            model,
            block,
            variant,
            runs: runs.len(),
            formed,
            share_low: lo,
            share_high: hi,
            time_q1: q(25.0),
            time_median: q(50.0),
            time_q3: q(75.0),
        });
    }

    // Punishment analysis: across models, Spearman between punishment spending and the change
    // in contributions under punishment.
    let mut punishment = Vec::new();
    let mut pts = Vec::new();
    for (model, _) in &models {
        let runs = idx.select(model, "public-goods", "punishment", "baseline", "C0");
        if let (Some(p), Some(c)) =
            (mean(&values(&runs, "punishment_points")), mean(&values(&runs, "contribution_change")))
        {
            pts.push((model.clone(), p, c));
        }
    }
    if !pts.is_empty() {
        let xs: Vec<f64> = pts.iter().map(|p| p.1).collect();
        let ys: Vec<f64> = pts.iter().map(|p| p.2).collect();
        let sp = stats::spearman(&xs, &ys);
        let note = match &sp {
            Ok(_) => "Spearman's rho across models".to_string(),
            Err(e) => format!("not computed: {e} (one value per model)"),
        };
        punishment.push(PunishmentRow {
            models: pts.len(),
            rho: sp.as_ref().ok().map(|s| s.rho),
            p: sp.as_ref().ok().map(|s| s.p),
            points: pts,
            note,
        });
    }

    // The punishment effect per model: final-round contributions in both arms, with the arm
    // contrast (after Holm) beside them.
    let mut punishment_effect = Vec::new();
    for (model, family) in &models {
        let b = values(&idx.select(model, "public-goods", "baseline", "baseline", "C0"), "contribution_last");
        let p = values(&idx.select(model, "public-goods", "punishment", "baseline", "C0"), "contribution_last");
        let (Some(without), Some(with)) = (MeanInterval::of(&b), MeanInterval::of(&p)) else { continue };
        let c = contrasts.iter().find(|c| c.family_of_tests == "punishment" && &c.model == model);
        punishment_effect.push(PunishmentEffectRow {
            model: model.clone(),
            family: family.clone(),
            runs_without: b.len(),
            runs_with: p.len(),
            without,
            with,
            cliffs_delta: c.and_then(|c| c.cliffs_delta),
            p_holm: c.and_then(|c| c.p_holm),
            significant: c.is_some_and(|c| c.significant),
            excluded: c.and_then(|c| c.excluded.clone()),
        });
    }

    let verdicts = claims.claims.iter().map(|c| ladder(c, &idx, &models, &contrasts, &curves, anchors)).collect();
    Ok(Analysis {
        study: study.map(str::to_string),
        runs: outcomes.len(),
        equivalence,
        directional,
        contrasts,
        perturbation,
        divergent,
        acceptance,
        heterogeneity,
        baselines,
        tipping: curves,
        wasserstein,
        convergence,
        punishment,
        punishment_effect,
        verdicts,
    })
}

/// Whether the human effect keeps its sign in these runs (direction and majority claims).
fn sign_kept(claim: &Claim, runs: &[&RunOutcome]) -> Option<bool> {
    let v = values(runs, &claim.metric);
    match &claim.kind {
        ClaimKind::Direction { sign, .. } => median(&v).map(|m| m * sign > 0.0),
        ClaimKind::Majority { .. } => mean(&v).map(|m| m > 0.5),
        _ => None,
    }
}

#[allow(clippy::too_many_arguments)]
fn contrast(
    family: &str,
    model: &str,
    env: &str,
    arm: &str,
    metric: &str,
    cell: &str,
    level: &str,
    cv: &[f64],
    bv: &[f64],
) -> ContrastRow {
    let pooled_constant = cv.iter().chain(bv).all(|x| *x == bv.first().copied().unwrap_or(0.0));
    let excluded = if cv.len() < MIN_RUNS || bv.len() < MIN_RUNS {
        Some(format!("fewer than {MIN_RUNS} runs in an arm ({} vs {})", cv.len(), bv.len()))
    } else if pooled_constant {
        Some("pooled values are constant".into())
    } else {
        None
    };
    let mw = if cv.is_empty() || bv.is_empty() { None } else { stats::mann_whitney(cv, bv).ok() };
    ContrastRow {
        family_of_tests: family.into(),
        model: model.into(),
        environment: env.into(),
        arm: arm.into(),
        metric: metric.into(),
        cell: cell.into(),
        level: level.into(),
        n_cell: cv.len(),
        n_base: bv.len(),
        mean_cell: mean(cv),
        mean_base: mean(bv),
        delta: mean(cv).zip(mean(bv)).map(|(a, b)| a - b),
        cliffs_delta: mw.as_ref().map(|m| m.cliffs_delta),
        p: if excluded.is_none() { mw.as_ref().map(|m| m.p_two_sided) } else { None },
        p_abs: if excluded.is_none() { mw.as_ref().map(|m| m.p_abs) } else { None },
        p_holm: None,
        significant: false,
        excluded,
    }
}

/// Grades one claim on the ladder.
fn ladder(
    claim: &Claim,
    idx: &Index,
    models: &[(String, String)],
    contrasts: &[ContrastRow],
    curves: &[TippingCurve],
    anchors: &AnchorTable,
) -> Verdict {
    let mut evidence = Vec::new();
    let names = ["not exploratory", "Tier 1 exploratory", "Tier 2 robust", "Tier 3 transferable"];
    let verdict = |tier: u8, evidence: Vec<String>, unmet: Option<String>| Verdict {
        claim: claim.id.clone(),
        text: claim.text.clone(),
        tier,
        tier_name: names[tier as usize].into(),
        evidence,
        first_unmet: unmet,
    };
    // Tier 1: holds at baseline in at least one model.
    let mut holding: Vec<(String, String)> = Vec::new();
    match &claim.kind {
        ClaimKind::CriticalMass { anchor } => {
            let Some(AnchorValue::Range { low, high }) = anchors.get(anchor).map(|a| a.value.clone()) else {
                return verdict(0, evidence, Some("anchor has no range".into()));
            };
            for c in curves {
                let line = match (c.largest_failure, c.critical) {
                    (Some(f), Some(s)) => {
                        let hit = s >= low && f <= high;
                        if hit {
                            holding.push((c.roster.clone(), "classical".into()));
                        }
                        format!(
                            "{}: held at {f:.3}, overturned from {s:.3} (human {low}-{high}){}",
                            c.roster,
                            if hit { ": overlaps" } else { "" }
                        )
                    }
                    (None, Some(s)) => {
                        format!("{}: overturned already at the smallest fraction tested, {s:.3}", c.roster)
                    }
                    _ => format!("{}: never overturned in the fractions tested", c.roster),
                };
                evidence.push(line);
            }
        }
        ClaimKind::ArmContrast { sign, .. } => {
            for c in contrasts.iter().filter(|c| c.family_of_tests == "punishment") {
                let ok = c.significant && c.delta.is_some_and(|d| d * sign > 0.0);
                evidence.push(format!(
                    "{}: Δ = {}, Cliff's δ = {}, Holm p = {}{}",
                    c.model,
                    fmt(c.delta),
                    fmt(c.cliffs_delta),
                    fmt(c.p_holm),
                    c.excluded.as_ref().map(|e| format!(" (excluded: {e})")).unwrap_or_default()
                ));
                if ok {
                    let fam = models.iter().find(|m| m.0 == c.model).map(|m| m.1.clone()).unwrap_or_default();
                    holding.push((c.model.clone(), fam));
                }
            }
        }
        _ => {
            for (model, family) in models {
                let runs = idx.select(model, &claim.environment, &claim.arm, "baseline", "C0");
                match holds(claim, &runs, anchors) {
                    Some(true) => {
                        holding.push((model.clone(), family.clone()));
                        evidence.push(format!("{model}: holds at baseline ({} runs)", runs.len()));
                    }
                    Some(false) => evidence.push(format!("{model}: does not hold at baseline ({} runs)", runs.len())),
                    None => {}
                }
            }
        }
    }
    if evidence.is_empty() {
        return verdict(0, evidence, Some(format!("no runs of {} / {} in the store", claim.environment, claim.arm)));
    }
    if holding.is_empty() {
        let unmet = match &claim.kind {
            ClaimKind::CriticalMass { .. } => "the tipping bracket overlaps the human critical mass in no model",
            ClaimKind::ArmContrast { .. } => {
                "the contrast is significant in the human direction (after Holm) in no model"
            }
            _ => "holds at baseline in no model",
        };
        return verdict(0, evidence, Some(unmet.into()));
    }
    // Tier 2: sign stability >= 0.8 across cells at both levels in >= 3 families, not reversed
    // under C3.
    let mut stable_families = BTreeSet::new();
    let mut first_gap: Option<String> = None;
    for (model, family) in &holding {
        let mut ok = true;
        for level in ["representation", "design"] {
            let cells: Vec<String> = idx
                .cells(model, &claim.environment, &claim.arm)
                .into_iter()
                .filter(|(_, l)| l == level)
                .map(|(c, _)| c)
                .collect();
            let judged: Vec<bool> = cells
                .iter()
                .filter_map(|c| {
                    let runs = idx.select(model, &claim.environment, &claim.arm, c, "C0");
                    sign_kept(claim, &runs).or_else(|| holds(claim, &runs, anchors))
                })
                .collect();
            if judged.is_empty() {
                ok = false;
                first_gap.get_or_insert(format!("sign stability across {level}-level cells: none run for {model}"));
                break;
            }
            let s = judged.iter().filter(|k| **k).count() as f64 / judged.len() as f64;
            evidence.push(format!("{model}: sign stability {s:.2} over {} {level}-level cells", judged.len()));
            if s < 0.8 {
                ok = false;
                first_gap.get_or_insert(format!("sign stability {s:.2} < 0.8 at the {level} level for {model}"));
            }
        }
        let c3 = idx.select(model, &claim.environment, &claim.arm, "baseline", "C3");
        if reversed(claim, &c3) == Some(true) {
            ok = false;
            evidence.push(format!("{model}: reversed under divergent payoffs (C3)"));
            first_gap.get_or_insert(format!("reversed under C3 for {model}"));
        }
        if ok {
            stable_families.insert(family.clone());
        }
    }
    if stable_families.len() < 3 {
        let unmet = first_gap.unwrap_or_else(|| {
            format!(
                "robust in {} model famil{} ({}); three are needed",
                stable_families.len(),
                if stable_families.len() == 1 { "y" } else { "ies" },
                stable_families.iter().cloned().collect::<Vec<_>>().join(", ")
            )
        });
        return verdict(1, evidence, Some(unmet));
    }
    // Tier 3: equivalence with the anchor, and a transcript audit consistent with the human
    // mechanism.
    if !matches!(claim.kind, ClaimKind::Equivalence { .. }) {
        return verdict(
            2,
            evidence,
            Some("equivalence with a point anchor: this claim's anchor is a direction or a range".into()),
        );
    }
    verdict(2, evidence, Some("transcript audit consistent with the human mechanism: no audit has been run".into()))
}

fn fmt(x: Option<f64>) -> String {
    x.map_or("-".into(), |v| if v != 0.0 && v.abs() < 1e-3 { format!("{v:.2e}") } else { format!("{v:.3}") })
}

/// A table for Markdown and CSV output.
pub struct Table {
    pub name: &'static str,
    pub title: &'static str,
    pub columns: Vec<&'static str>,
    pub rows: Vec<Vec<String>>,
}

impl Analysis {
    /// Every table, for Markdown and CSV.
    pub fn tables(&self) -> Vec<Table> {
        let f = fmt;
        let b = |x: bool| if x { "yes".to_string() } else { "no".to_string() };
        vec![
            Table {
                name: "equivalence",
                title: "Equivalence with human anchors (TOST, 90 % CI, canonical baseline)",
                columns: vec![
                    "model",
                    "family",
                    "environment",
                    "arm",
                    "outcome",
                    "anchor",
                    "margin",
                    "runs",
                    "estimate",
                    "ci_low",
                    "ci_high",
                    "p",
                    "verdict",
                ],
                rows: self
                    .equivalence
                    .iter()
                    .map(|r| {
                        vec![
                            r.model.clone(),
                            r.family.clone(),
                            r.environment.clone(),
                            r.arm.clone(),
                            r.metric.clone(),
                            f(Some(r.anchor)),
                            f(Some(r.margin)),
                            r.runs.to_string(),
                            f(r.estimate),
                            f(r.ci_low),
                            f(r.ci_high),
                            f(r.p),
                            r.verdict.clone(),
                        ]
                    })
                    .collect(),
            },
            Table {
                name: "directional",
                title: "Directional agreement (median run-level effect must clear 0.10 in the human direction)",
                columns: vec![
                    "model",
                    "family",
                    "claim",
                    "outcome",
                    "runs",
                    "effect",
                    "human sign",
                    "margin",
                    "agrees",
                ],
                rows: self
                    .directional
                    .iter()
                    .map(|r| {
                        vec![
                            r.model.clone(),
                            r.family.clone(),
                            r.claim.clone(),
                            r.metric.clone(),
                            r.runs.to_string(),
                            f(Some(r.effect)),
                            f(Some(r.human_sign)),
                            f(Some(r.margin)),
                            b(r.agrees),
                        ]
                    })
                    .collect(),
            },
            Table {
                name: "contrasts",
                title: "Audit grid: every contrast (exact Mann–Whitney, Cliff's δ, Holm within family)",
                columns: vec![
                    "family",
                    "model",
                    "environment",
                    "arm",
                    "outcome",
                    "cell",
                    "level",
                    "n_cell",
                    "n_base",
                    "mean_cell",
                    "mean_base",
                    "delta",
                    "cliffs_delta",
                    "p",
                    "p_abs",
                    "p_holm",
                    "significant",
                    "excluded",
                ],
                rows: self
                    .contrasts
                    .iter()
                    .map(|r| {
                        vec![
                            r.family_of_tests.clone(),
                            r.model.clone(),
                            r.environment.clone(),
                            r.arm.clone(),
                            r.metric.clone(),
                            r.cell.clone(),
                            r.level.clone(),
                            r.n_cell.to_string(),
                            r.n_base.to_string(),
                            f(r.mean_cell),
                            f(r.mean_base),
                            f(r.delta),
                            f(r.cliffs_delta),
                            f(r.p),
                            f(r.p_abs),
                            f(r.p_holm),
                            b(r.significant),
                            r.excluded.clone().unwrap_or_default(),
                        ]
                    })
                    .collect(),
            },
            Table {
                name: "perturbation",
                title: "Perturbation library per level: Δmax and sign stability S",
                columns: vec!["model", "environment", "outcome", "level", "cells", "delta_max", "S"],
                rows: self
                    .perturbation
                    .iter()
                    .map(|r| {
                        vec![
                            r.model.clone(),
                            r.environment.clone(),
                            r.metric.clone(),
                            r.level.clone(),
                            r.cells.to_string(),
                            f(Some(r.delta_max)),
                            f(r.sign_stability),
                        ]
                    })
                    .collect(),
            },
            Table {
                name: "divergent",
                title: "Divergent payoffs (C3): share v of decisions consistent with the altered payoffs",
                columns: vec!["model", "environment", "arm", "rule", "runs", "v", "classification"],
                rows: self
                    .divergent
                    .iter()
                    .map(|r| {
                        vec![
                            r.model.clone(),
                            r.environment.clone(),
                            r.arm.clone(),
                            r.rule.clone(),
                            r.runs.to_string(),
                            f(Some(r.v)),
                            r.classification.clone(),
                        ]
                    })
                    .collect(),
            },
            Table {
                name: "acceptance",
                title: "Fixed-offer arm: acceptance functions, thresholds and payoff consistency",
                columns: vec!["model", "variant", "runs", "acceptance by offer", "threshold", "payoff_consistency"],
                rows: self
                    .acceptance
                    .iter()
                    .map(|r| {
                        vec![
                            r.model.clone(),
                            r.variant.clone(),
                            r.runs.to_string(),
                            r.acceptance.iter().map(|(o, a)| format!("{o:.0}:{a:.2}")).collect::<Vec<_>>().join(" "),
                            r.threshold.map_or("none".into(), |t| format!("{t:.0}")),
                            f(Some(r.payoff_consistency)),
                        ]
                    })
                    .collect(),
            },
            Table {
                name: "heterogeneity",
                title: "Between-model heterogeneity of baseline means",
                columns: vec!["environment", "arm", "outcome", "models", "means", "sd_between", "I2", "note"],
                rows: self
                    .heterogeneity
                    .iter()
                    .map(|r| {
                        vec![
                            r.environment.clone(),
                            r.arm.clone(),
                            r.metric.clone(),
                            r.models.to_string(),
                            r.means.iter().map(|(m, v)| format!("{m}={v:.3}")).collect::<Vec<_>>().join(" "),
                            f(r.sd_between),
                            f(r.i2),
                            r.note.clone(),
                        ]
                    })
                    .collect(),
            },
            Table {
                name: "baselines",
                title: "Classical-baseline comparison (exact Mann–Whitney, Cliff's δ)",
                columns: vec![
                    "environment",
                    "arm",
                    "outcome",
                    "model",
                    "family",
                    "runs",
                    "mean",
                    "classical",
                    "classical_mean",
                    "cliffs_delta",
                    "p",
                ],
                rows: self
                    .baselines
                    .iter()
                    .map(|r| {
                        vec![
                            r.environment.clone(),
                            r.arm.clone(),
                            r.metric.clone(),
                            r.model.clone(),
                            r.family.clone(),
                            r.runs.to_string(),
                            f(Some(r.mean)),
                            r.classical.clone(),
                            f(Some(r.classical_mean)),
                            f(r.cliffs_delta),
                            f(r.p),
                        ]
                    })
                    .collect(),
            },
            Table {
                name: "tipping",
                title: "Tipping sweeps: share of runs overturned per committed fraction",
                columns: vec!["roster", "fraction", "committed", "runs", "overturned", "median t"],
                rows: self
                    .tipping
                    .iter()
                    .flat_map(|c| {
                        c.points.iter().map(move |p| {
                            vec![
                                c.roster.clone(),
                                format!("{:.3}", p.0),
                                format!("{}/{}", p.1, p.2),
                                p.3.to_string(),
                                format!("{:.2}", p.4),
                                p.5.map_or("-".into(), |t| format!("{t:.0}")),
                            ]
                        })
                    })
                    .collect(),
            },
            Table {
                name: "wasserstein",
                title: "11–20 game: normalised Wasserstein distance to the published distribution (bootstrap 95 % CI)",
                columns: vec!["model", "distance", "ci_low", "ci_high"],
                rows: self
                    .wasserstein
                    .iter()
                    .map(|(m, d, lo, hi)| vec![m.clone(), f(Some(*d)), f(Some(*lo)), f(Some(*hi))])
                    .collect(),
            },
            Table {
                name: "convergence",
                title: "Naming game: convention formation (Wilson 95 % CI) and time to convention",
                columns: vec![
                    "model",
                    "block",
                    "variant",
                    "runs",
                    "formed",
                    "share_low",
                    "share_high",
                    "t_q1",
                    "t_median",
                    "t_q3",
                ],
                rows: self
                    .convergence
                    .iter()
                    .map(|r| {
                        vec![
                            r.model.clone(),
                            r.block.clone(),
                            r.variant.clone(),
                            r.runs.to_string(),
                            r.formed.to_string(),
                            f(Some(r.share_low)),
                            f(Some(r.share_high)),
                            f(r.time_q1),
                            f(r.time_median),
                            f(r.time_q3),
                        ]
                    })
                    .collect(),
            },
            Table {
                name: "punishment-effect",
                title: "Punishment effect on final-round contributions (share of endowment, 95 % t interval)",
                columns: vec![
                    "model",
                    "runs without",
                    "without",
                    "without 95% CI",
                    "runs with",
                    "with",
                    "with 95% CI",
                    "cliffs_delta",
                    "p_holm",
                    "significant",
                    "excluded",
                ],
                rows: self
                    .punishment_effect
                    .iter()
                    .map(|r| {
                        let ci = |m: &MeanInterval| match (m.low, m.high) {
                            (Some(l), Some(h)) => format!("[{l:.3}, {h:.3}]"),
                            _ => "-".into(),
                        };
                        vec![
                            r.model.clone(),
                            r.runs_without.to_string(),
                            f(Some(r.without.mean)),
                            ci(&r.without),
                            r.runs_with.to_string(),
                            f(Some(r.with.mean)),
                            ci(&r.with),
                            f(r.cliffs_delta),
                            f(r.p_holm),
                            if r.significant { "yes".into() } else { "no".into() },
                            r.excluded.clone().unwrap_or_default(),
                        ]
                    })
                    .collect(),
            },
            Table {
                name: "punishment",
                title: "Punishment: spending against contribution change across models (Spearman)",
                columns: vec!["models", "points (model: punishment points, contribution change)", "rho", "p", "note"],
                rows: self
                    .punishment
                    .iter()
                    .map(|r| {
                        vec![
                            r.models.to_string(),
                            r.points
                                .iter()
                                .map(|(m, p, c)| format!("{m}: {p:.2}, {c:.3}"))
                                .collect::<Vec<_>>()
                                .join("; "),
                            f(r.rho),
                            f(r.p),
                            r.note.clone(),
                        ]
                    })
                    .collect(),
            },
            Table {
                name: "verdicts",
                title: "Certification ladder: verdict per claim",
                columns: vec!["claim", "text", "tier", "first unmet condition", "evidence"],
                rows: self
                    .verdicts
                    .iter()
                    .map(|v| {
                        vec![
                            v.claim.clone(),
                            v.text.clone(),
                            v.tier_name.clone(),
                            v.first_unmet.clone().unwrap_or_else(|| "-".into()),
                            v.evidence.join("; "),
                        ]
                    })
                    .collect(),
            },
        ]
    }

    /// All tables as Markdown.
    pub fn to_markdown(&self) -> String {
        let mut s = format!(
            "# Agora analysis{}\n\n{} runs analysed.\n",
            self.study.as_ref().map(|s| format!(": {s}")).unwrap_or_default(),
            self.runs
        );
        for t in self.tables() {
            s.push_str(&format!("\n## {}\n\n", t.title));
            if t.rows.is_empty() {
                s.push_str("No data in this store.\n");
                continue;
            }
            s.push_str(&format!("| {} |\n|{}\n", t.columns.join(" | "), "---|".repeat(t.columns.len())));
            for r in &t.rows {
                s.push_str(&format!(
                    "| {} |\n",
                    r.iter().map(|c| c.replace('|', "\\|")).collect::<Vec<_>>().join(" | ")
                ));
            }
        }
        s
    }
}

/// CSV text of a table (RFC 4180 quoting).
pub fn to_csv(t: &Table) -> String {
    let q =
        |c: &str| if c.contains([',', '"', '\n']) { format!("\"{}\"", c.replace('"', "\"\"")) } else { c.to_string() };
    let mut s = t.columns.iter().map(|c| q(c)).collect::<Vec<_>>().join(",");
    s.push('\n');
    for r in &t.rows {
        s.push_str(&r.iter().map(|c| q(c)).collect::<Vec<_>>().join(","));
        s.push('\n');
    }
    s
}
