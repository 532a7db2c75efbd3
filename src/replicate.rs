//! `agora replicate`: runs `scenarios/studies/replication.ron` and prints every figure the
//! instrument paper reports for its classical baselines beside Agora's, as a Markdown table
//! (`agora_analysis::replication`), from the run-level outcomes the store holds for the runs of
//! this plan (no other runs of the store, whatever they are). `--verdicts` plays the paper's
//! scripted roster instead and prints its verdict table.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use agora_analysis::{run_outcomes, RunOutcome};
use agora_engine::{execute, RunnerOptions, Store};
use agora_scenarios::plan::default_cells_dir;
use agora_scenarios::{Plan, Study};
use anyhow::Context as _;

use crate::BadInput;

/// Arguments of `agora replicate`.
#[derive(clap::Args, Debug)]
pub struct ReplicateArgs {
    /// Store file (the runs are resumed from it, and kept in it). A store of its own by
    /// default, so that its runs are never pooled with a study's by `agora analyze`:
    /// `replication.sqlite`, and `paper-replay.sqlite` with `--verdicts`.
    #[arg(long)]
    store: Option<PathBuf>,
    /// Seeded runs per condition (default: the study's 30, the paper's count per baseline); the
    /// first runs keep their seeds whatever the count.
    #[arg(long)]
    runs: Option<u32>,
    /// Instead of the classical baselines: play the paper's twelve models, scripted from its
    /// printed figures (`replay/paper-roster.ron`), through the instrument's games at
    /// the paper's run counts, grade the store on the ladder and print the verdict table beside
    /// the paper's conclusions.
    #[arg(long)]
    verdicts: bool,
}

/// Where the shipped study lives: the working directory's checkout when run there, else the
/// one the binary was built from.
fn study_path() -> PathBuf {
    let rel = Path::new("scenarios/studies/replication.ron");
    if rel.exists() {
        rel.to_path_buf()
    } else {
        Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
    }
}

/// Runs the replication study and prints the table.
pub fn main(args: ReplicateArgs) -> anyhow::Result<()> {
    if args.verdicts {
        if args.runs.is_some() {
            return Err(
                BadInput("--runs: the replay runs the paper's counts; leave it out with --verdicts".into()).into()
            );
        }
        let store = args.store.unwrap_or_else(|| PathBuf::from("paper-replay.sqlite"));
        let roster = agora_replay::PaperRoster::shipped();
        let started = std::time::Instant::now();
        let progress = crate::progress::Progress::start("replicate --verdicts", None, "");
        progress.detail("playing the scripted roster and grading it");
        let analysis = roster
            .play(&agora_replay::instrument_path(), &store)
            .map_err(|e| anyhow::anyhow!("the paper replay: {e}"))?;
        progress.finish();
        eprintln!(
            "{}: played and graded in {} ({:.1} s)",
            agora_replay::REPLAY_STUDY,
            store.display(),
            started.elapsed().as_secs_f64()
        );
        print!("{}", agora_replay::report(&analysis));
        return Ok(());
    }
    let store_path = args.store.unwrap_or_else(|| PathBuf::from("replication.sqlite"));
    let path = study_path();
    let mut study = Study::load(&path)?;
    if let Some(n) = args.runs {
        if n == 0 {
            return Err(BadInput("--runs must be at least 1".into()).into());
        }
        study.runs = n;
        for b in &mut study.blocks {
            b.runs = None;
            b.cell_runs = None;
        }
    }
    let plan = Plan::resolve(&study, &path, &default_cells_dir(&path))?;
    let mut store = Store::open(&store_path)?;
    let claim = store.claim("agora replicate")?;
    let source = std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    store.record_study(&plan.study_record(), &source)?;
    let started = std::time::Instant::now();
    let report = execute(&plan.runs, &mut store, &RunnerOptions::default(), &mut |_| {})?;
    drop(store);
    drop(claim);
    eprintln!(
        "{}: {} runs executed, {} already in {} ({:.1} s)",
        plan.study,
        report.executed,
        report.skipped,
        store_path.display(),
        started.elapsed().as_secs_f64()
    );
    let keys: HashSet<String> = plan.runs.iter().map(|r| r.key()).collect();
    let outcomes: Vec<RunOutcome> =
        run_outcomes(&store_path, Some(&plan.study))?.into_iter().filter(|o| keys.contains(&o.run_key)).collect();
    let per_condition = study.runs;
    print!(
        "{}",
        agora_analysis::replication::table(&outcomes, per_condition, plan.runs.len(), args.runs)
            .map_err(anyhow::Error::msg)?
    );
    Ok(())
}
