//! `agora analyze`: the instrument's tables and the ladder verdicts, from a store.
//!
//! Models are rosters (classical rosters form the family `classical`: graded apart on the
//! ladder and kept out of cross-model statistics unless [`Options`] asks for them). Every
//! number here is computed from the store's `runs` and `metrics` tables; every test is one of
//! [`crate::stats`]; Tier 3 reads the transcript audit's tables where `agora audit` wrote them
//! ([`crate::mechanism`]). Each analysis lives in its own module, with its row type; this one runs
//! them in turn. The row types, tables and constants are re-exported here, where callers have
//! always found them. Every entry resting on fewer than three runs is absent.

use std::path::Path;

use serde::Serialize;

use crate::anchors::AnchorTable;
use crate::claims::ClaimTable;
use crate::common::{Index, PRESENTATION};
use crate::declared::Declared;
use crate::error::AnalysisError;
use crate::outcomes::{run_outcomes, RunOutcome};
use crate::{
    acceptance, baselines, contrasts, directional, divergent, equivalence, formation, heterogeneity, label_prior,
    ladder, perturbation, punishment, recognition, tipping, wasserstein,
};

pub use crate::acceptance::AcceptanceRow;
pub use crate::baselines::BaselineRow;
pub use crate::common::Options;
pub use crate::contrasts::{ContrastCount, ContrastRow, FAMILIES, MIN_RUNS};
pub use crate::directional::DirectionalRow;
pub use crate::divergent::{DivergentRow, FOLLOWS_PAYOFFS, FOLLOWS_SCRIPT};
pub use crate::equivalence::EquivalenceRow;
pub use crate::formation::ConvergenceRow;
pub use crate::heterogeneity::HeterogeneityRow;
pub use crate::label_prior::LabelPriorRow;
pub use crate::ladder::{Grade, Verdict};
pub use crate::mechanism::AuditEvidence;
pub use crate::perturbation::PerturbationRow;
pub use crate::punishment::{MeanInterval, PunishmentEffectRow, PunishmentRow};
pub use crate::recognition::RecognitionRow;
pub use crate::table::{to_csv, Table};
pub use crate::tipping::{CriticalMassRow, TippingCurve};
pub use crate::wasserstein::WassersteinRow;

/// Everything `agora analyze` reports.
#[derive(Clone, Debug, Serialize)]
pub struct Analysis {
    /// The study analysed; `None` for the whole store.
    pub study: Option<String>,
    /// Number of runs analysed.
    pub runs: usize,
    /// The options the analysis ran with.
    pub options: Options,
    /// TOST equivalence with the anchors' values, per claim, value and model.
    pub equivalence: Vec<EquivalenceRow>,
    /// Directional agreement with the human effect, per direction or majority claim and model.
    pub directional: Vec<DirectionalRow>,
    /// The audit grid: every cell against its baseline, and the re-skins against C0,
    /// Holm-adjusted within its family of tests (perturbation, priming, punishment, contamination).
    pub contrasts: Vec<ContrastRow>,
    /// The perturbation family's counts: blocks (model × environment) with a significant
    /// perturbation, and significant computable contrasts per level.
    pub contrast_counts: Vec<ContrastCount>,
    /// The profile methods' presentation checks against the baseline: their own Holm family, reported
    /// apart and never part of S, Δmax, the perturbation family or Tier 2.
    pub presentation: Vec<ContrastRow>,
    /// Range of cell means (Δmax) and sign stability S of each environment's canonical human
    /// effect, per model and perturbation level.
    pub perturbation: Vec<PerturbationRow>,
    /// Behaviour under the divergent payoffs (C3), per model and environment arm.
    pub divergent: Vec<DivergentRow>,
    /// Acceptance functions of the fixed-offer ultimatum arm, per model and variant.
    pub acceptance: Vec<AcceptanceRow>,
    /// Between-model heterogeneity of each primary outcome's baseline means.
    pub heterogeneity: Vec<HeterogeneityRow>,
    /// Each model against each classical roster on the primary outcomes.
    pub baselines: Vec<BaselineRow>,
    /// Tipping curves of the committed-minority sweeps, per block and roster, on the realised
    /// committed fraction.
    pub tipping: Vec<TippingCurve>,
    /// The critical mass per model and per family, graded against the human bracket.
    pub critical_mass: Vec<CriticalMassRow>,
    /// Distance of each model's 11–20 requests to the published distribution, with a bootstrap interval.
    pub wasserstein: Vec<WassersteinRow>,
    /// Naming-game convention formation per model, block and variant.
    pub convergence: Vec<ConvergenceRow>,
    /// The naming game's label-prior diagnostic per model: baseline against shuffled pool.
    pub label_prior: Vec<LabelPriorRow>,
    /// The recognition probe beside behaviour, per primary outcome.
    pub recognition: Vec<RecognitionRow>,
    /// Spearman's ρ across models between punishment spending and contribution change.
    pub punishment: Vec<PunishmentRow>,
    /// The punishment effect on final-round contributions, per model.
    pub punishment_effect: Vec<PunishmentEffectRow>,
    /// The ladder's verdict on each claim.
    pub verdicts: Vec<Verdict>,
    /// The store's deposits, each with every deviation from it (empty: no deposit).
    pub deposit: crate::deposit::DepositSection,
}

/// Runs the whole analysis on a store (of one study, or of all), with the default options.
pub fn analyze(path: &Path, study: Option<&str>) -> Result<Analysis, AnalysisError> {
    analyze_with(path, study, &Options::default())
}

/// Runs the whole analysis on a store (of one study, or of all).
pub fn analyze_with(path: &Path, study: Option<&str>, options: &Options) -> Result<Analysis, AnalysisError> {
    analyze_against(path, study, options, None)
}

/// As [`analyze_with`], grading the claims that `human` has anchors for against the lab's own
/// human runs instead of their published anchors ([`crate::human_anchors`]).
pub fn analyze_against(
    path: &Path,
    study: Option<&str>,
    options: &Options,
    human: Option<&crate::human_anchors::HumanAnchors>,
) -> Result<Analysis, AnalysisError> {
    let outcomes = run_outcomes(path, study)?;
    let declared = Declared::read_path(path)?;
    let audit = crate::mechanism::read(path, study)?;
    let mut analysis = analyze_outcomes_graded(&outcomes, &declared, study, options, audit.as_ref(), human);
    let graded =
        crate::deposit::Graded { claims: ClaimTable::shipped(), anchors: AnchorTable::shipped(), options, human };
    analysis.deposit = crate::deposit::check(path, study, &graded)?;
    Ok(analysis)
}

/// Runs the whole analysis on run outcomes already read from a store, with the games'
/// declarations read from the same store ([`Declared::read_path`]), with the default options.
pub fn analyze_outcomes(outcomes: &[RunOutcome], declared: &Declared, study: Option<&str>) -> Analysis {
    analyze_outcomes_with(outcomes, declared, study, &Options::default())
}

/// Runs the whole analysis on run outcomes already read from a store, without a transcript
/// audit (Tier 3 names it as missing).
pub fn analyze_outcomes_with(
    outcomes: &[RunOutcome],
    declared: &Declared,
    study: Option<&str>,
    options: &Options,
) -> Analysis {
    analyze_outcomes_audited(outcomes, declared, study, options, None)
}

/// Runs the whole analysis on run outcomes already read from a store, with the transcript
/// audit's evidence where the store holds one ([`crate::mechanism::read`]).
pub fn analyze_outcomes_audited(
    outcomes: &[RunOutcome],
    declared: &Declared,
    study: Option<&str>,
    options: &Options,
    audit: Option<&AuditEvidence>,
) -> Analysis {
    analyze_outcomes_graded(outcomes, declared, study, options, audit, None)
}

/// As [`analyze_outcomes_audited`], with the lab's own human anchors where given.
pub fn analyze_outcomes_graded(
    outcomes: &[RunOutcome],
    declared: &Declared,
    study: Option<&str>,
    options: &Options,
    audit: Option<&AuditEvidence>,
    human: Option<&crate::human_anchors::HumanAnchors>,
) -> Analysis {
    let anchors = AnchorTable::shipped();
    let table = ClaimTable::shipped();
    let claims = &table.claims;
    let idx = Index::new(outcomes, declared);
    let effects = declared.effects();
    let models = idx.models();
    let tipping = tipping::tipping(outcomes);
    let critical_anchor = claims
        .iter()
        .find(|c| matches!(c.kind, crate::claims::ClaimKind::CriticalMass { .. }))
        .map_or("naming-critical-mass", |c| c.kind.anchor());
    let critical_mass = tipping::critical_mass(outcomes, &tipping, anchors, critical_anchor);
    let (presentation, contrasts): (Vec<ContrastRow>, Vec<ContrastRow>) =
        contrasts::contrasts(&idx, &models).into_iter().partition(|c| c.family_of_tests == PRESENTATION);
    let punishment_effect = punishment::punishment_effect(&idx, &models, &contrasts);
    let inputs = ladder::Inputs {
        idx: &idx,
        models: &models,
        contrasts: &contrasts,
        critical_mass: &critical_mass,
        anchors,
        audit,
        human,
    };
    let verdicts = claims.iter().map(|c| ladder::ladder(c, &inputs)).collect();
    Analysis {
        study: study.map(str::to_string),
        runs: outcomes.len(),
        options: *options,
        equivalence: equivalence::equivalence(claims, anchors, &idx, &models),
        directional: directional::directional(claims, &idx, &models),
        contrast_counts: contrasts::counts(&contrasts),
        contrasts,
        presentation,
        perturbation: perturbation::perturbation(&effects, &idx, &models),
        divergent: divergent::divergent(&idx, &models),
        acceptance: acceptance::acceptance(&idx, &models),
        heterogeneity: heterogeneity::heterogeneity(&idx, &models, options),
        baselines: baselines::baselines(&idx, &models),
        tipping,
        critical_mass,
        wasserstein: wasserstein::wasserstein(claims, anchors, &idx, &models),
        convergence: formation::convergence(outcomes),
        label_prior: label_prior::label_prior(&idx, &models),
        recognition: recognition::recognition(&idx, &models, options),
        punishment: punishment::punishment(&idx, &models, options),
        punishment_effect,
        verdicts,
        deposit: crate::deposit::DepositSection::default(),
    }
}
