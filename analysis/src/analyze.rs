//! `agora analyze`: the instrument's tables and the ladder verdicts, from a store.
//!
//! Models are rosters (classical rosters form the family `classical`). Every number here is
//! computed from the store's records; every test is one of [`crate::stats`]. Each analysis
//! lives in its own module, with its row type; this one runs them in turn. The row types,
//! tables and constants are re-exported here, where callers have always found them.

use std::path::Path;

use serde::Serialize;

use crate::anchors::AnchorTable;
use crate::claims::ClaimTable;
use crate::common::Index;
use crate::error::AnalysisError;
use crate::outcomes::{run_outcomes, RunOutcome};
use crate::{
    acceptance, baselines, contrasts, directional, divergent, equivalence, formation, heterogeneity, ladder,
    perturbation, punishment, tipping, wasserstein,
};

pub use crate::acceptance::AcceptanceRow;
pub use crate::baselines::BaselineRow;
pub use crate::common::PRIMARY;
pub use crate::contrasts::{ContrastRow, MIN_RUNS};
pub use crate::directional::DirectionalRow;
pub use crate::divergent::{DivergentRow, FOLLOWS_PAYOFFS, FOLLOWS_SCRIPT};
pub use crate::equivalence::EquivalenceRow;
pub use crate::formation::ConvergenceRow;
pub use crate::heterogeneity::HeterogeneityRow;
pub use crate::ladder::Verdict;
pub use crate::perturbation::PerturbationRow;
pub use crate::punishment::{MeanInterval, PunishmentEffectRow, PunishmentRow};
pub use crate::summary::TippingCurve;
pub use crate::tables::{to_csv, Table};
pub use crate::wasserstein::WassersteinRow;

/// Everything `agora analyze` reports.
#[derive(Clone, Debug, Serialize)]
pub struct Analysis {
    /// The study analysed; `None` for the whole store.
    pub study: Option<String>,
    /// Number of runs analysed.
    pub runs: usize,
    /// TOST equivalence with point anchors, per equivalence claim and model.
    pub equivalence: Vec<EquivalenceRow>,
    /// Directional agreement with the human effect, per direction or majority claim and model.
    pub directional: Vec<DirectionalRow>,
    /// The audit grid: every cell against its baseline, Holm-adjusted within its family of tests.
    pub contrasts: Vec<ContrastRow>,
    /// Range of cell means (Δmax) and sign stability per model, primary outcome and perturbation level.
    pub perturbation: Vec<PerturbationRow>,
    /// Behaviour under the divergent payoffs (C3), per model and environment arm.
    pub divergent: Vec<DivergentRow>,
    /// Acceptance functions of the fixed-offer ultimatum arm, per model and variant.
    pub acceptance: Vec<AcceptanceRow>,
    /// Between-model heterogeneity of each primary outcome's baseline means.
    pub heterogeneity: Vec<HeterogeneityRow>,
    /// Each model against each classical roster on the primary outcomes.
    pub baselines: Vec<BaselineRow>,
    /// Tipping curves of the committed-minority sweeps, per block and roster.
    pub tipping: Vec<TippingCurve>,
    /// Distance of each model's 11–20 requests to the published distribution, with a bootstrap interval.
    pub wasserstein: Vec<WassersteinRow>,
    /// Naming-game convention formation per model, block and variant.
    pub convergence: Vec<ConvergenceRow>,
    /// Spearman's ρ across models between punishment spending and contribution change.
    pub punishment: Vec<PunishmentRow>,
    /// The punishment effect on final-round contributions, per model.
    pub punishment_effect: Vec<PunishmentEffectRow>,
    /// The ladder's verdict on each claim.
    pub verdicts: Vec<Verdict>,
}

/// Runs the whole analysis on a store (of one study, or of all).
pub fn analyze(path: &Path, study: Option<&str>) -> Result<Analysis, AnalysisError> {
    let outcomes = run_outcomes(path, study)?;
    Ok(analyze_outcomes(&outcomes, study))
}

/// Runs the whole analysis on run outcomes already read from a store.
pub fn analyze_outcomes(outcomes: &[RunOutcome], study: Option<&str>) -> Analysis {
    let anchors = AnchorTable::shipped();
    let claims = &ClaimTable::shipped().claims;
    let idx = Index::new(outcomes);
    let models = idx.models();
    let tipping = tipping::tipping(outcomes);
    let contrasts = contrasts::contrasts(&idx, &models);
    let punishment_effect = punishment::punishment_effect(&idx, &models, &contrasts);
    let verdicts = claims.iter().map(|c| ladder::ladder(c, &idx, &models, &contrasts, &tipping, anchors)).collect();
    Analysis {
        study: study.map(str::to_string),
        runs: outcomes.len(),
        equivalence: equivalence::equivalence(claims, anchors, &idx, &models),
        directional: directional::directional(claims, &idx, &models),
        contrasts,
        perturbation: perturbation::perturbation(claims, &idx, &models),
        divergent: divergent::divergent(&idx, &models),
        acceptance: acceptance::acceptance(&idx, &models),
        heterogeneity: heterogeneity::heterogeneity(&idx, &models),
        baselines: baselines::baselines(&idx, &models),
        tipping,
        wasserstein: wasserstein::wasserstein(anchors, &idx, &models),
        convergence: formation::convergence(outcomes),
        punishment: punishment::punishment(&idx, &models),
        punishment_effect,
        verdicts,
    }
}
