//! `agora report`: one self-contained HTML file with the analysis tables and figures (SVG,
//! drawn with plotters and inlined), and each figure beside it as PNG and SVG.
//!
//! `queries` reads the store, `figures` draws, `html` assembles the page from the minijinja
//! templates in `templates/` (escaping everything taken from the store: model replies are
//! untrusted text).

use std::path::{Path, PathBuf};

use anyhow::Context as _;

mod audit;
pub mod export;
mod figures;
mod html;
mod profile;
pub use audit::TreePromptError;
pub use profile::{pairing_rho, PairingRho};
mod queries;

/// What a report may be asked for beyond the store.
#[derive(Default)]
pub struct Options {
    /// The prompt whose replicates the reasoning tree draws, as `run_id:seat:slot`; by default
    /// the prompt with most replicates.
    pub tree_prompt: Option<String>,
}

/// Writes `report.html` into `out` and returns its path.
pub fn write(store: &Path, out: &Path) -> anyhow::Result<PathBuf> {
    write_with(store, out, &Options::default())
}

/// Writes `report.html` into `out` with `options` and returns its path.
pub fn write_with(store: &Path, out: &Path, options: &Options) -> anyhow::Result<PathBuf> {
    // Read.
    let analysis = agora_analysis::analyze::analyze(store, None)?;
    // The lab's own participants (`agora serve`), where the store holds human runs.
    let humans = agora_analysis::human_anchors::from_store(store, None)?.anchors;
    let conn = queries::open(store)?;
    let contribution_by_round = queries::contribution_by_round(&conn)?;
    let matching_over_time = queries::matching_over_time(&conn)?;
    // The tipping run drawn is the one closest to the smallest committed fraction that
    // succeeded with people: the top of the human critical-mass bracket.
    let (_, smallest_success) = figures::anchor_band("naming-critical-mass")?;
    let tipping_run = queries::tipping_run(&conn, smallest_success)?;
    let request_distributions = queries::request_distributions(&conn)?;
    let (studies, models, probes) = (queries::studies(&conn)?, queries::models(&conn)?, queries::probes(&conn)?);
    let (naming_runs, excerpts) = (queries::naming_runs(&conn)?, queries::excerpts(&conn)?);
    let audit = audit::AuditTables {
        occurrence: audit::occurrence(&conn)?,
        dependency: audit::dependency(&conn)?,
        agreement: audit::agreement(&conn)?,
        requirements: audit::requirements(&conn)?,
        tree: audit::tree(&conn, options.tree_prompt.as_deref())?,
    };
    // The behavioural profiles (`agora profile`), joined to the same models' society decisions.
    let profiles = agora_profile::runner::stored_profiles(&conn)?;
    let society = if profiles.is_empty() { Vec::new() } else { queries::society_outcomes(&conn)? };
    let joined = profile::join(&profiles, &society);
    let tree = audit.tree.as_ref().filter(|t| !t.paths.is_empty()).map(|t| figures::tree::Node::from_paths(&t.paths));
    let tree_title = audit.tree.as_ref().map(|t| {
        format!(
            "Reasoning tree of {} responses ({})",
            t.paths.len(),
            if t.replicates { "replicates of one prompt" } else { "one condition" }
        )
    });

    // Draw, and write each figure beside the page as SVG and PNG.
    let figures = figures::build(&figures::Inputs {
        analysis: &analysis,
        contribution_by_round: &contribution_by_round,
        matching_over_time: &matching_over_time,
        tipping_run: tipping_run.as_ref(),
        request_distributions: &request_distributions,
        tree: tree.as_ref().zip(tree_title.as_deref()),
        profiles: &profiles,
    })?;
    let fig_dir = out.join("figures");
    std::fs::create_dir_all(&fig_dir).with_context(|| format!("creating {}", fig_dir.display()))?;
    for (i, (caption, fig)) in figures.iter().enumerate() {
        let stem = html::figure_stem(i, caption);
        for (ext, bytes) in [("svg", fig.svg.as_bytes()), ("png", fig.png.as_slice())] {
            let path = fig_dir.join(format!("{stem}.{ext}"));
            crate::write_named(&path, bytes)?;
        }
    }

    // Assemble the page.
    let page = html::page(
        &analysis,
        &html::Page {
            studies: &studies,
            figures: &figures,
            models: &models,
            probes: &probes,
            naming_runs: &naming_runs,
            excerpts: &excerpts,
            audit: &audit,
            tree: tree.as_ref(),
            profiles: &profiles,
            joined: &joined,
            humans: &humans,
            tournaments: &agora_analysis::tournament::tables(store, None)?,
        },
    )?;
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    let path = out.join("report.html");
    crate::write_named(&path, page)?;
    Ok(path)
}

pub(crate) use agora_engine::files::write_named;
