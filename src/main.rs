//! `agora`: run, check, list and export Agora studies.
//!
//! Exit codes: 0 success; 1 a failure while running; 2 bad input (a malformed or impossible
//! study or cell file, an unknown name, bad arguments, a store that is not an intact Agora
//! store).

mod audit;
mod calibrate;
mod help;
mod huge_pages;
mod list;
mod llm;
mod network;
mod prereg;
mod profile;
mod progress;
mod reference;
mod replicate;
mod run;
mod serve;
mod shard_auto;
mod stats;
mod summary;

/// mimalloc in place of the system allocator: an LLM decision makes many small, short-lived
/// allocations on several threads (prompts, JSON, HTTP buffers), where glibc's malloc spent a
/// quarter of the engine's CPU.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use agora_agents::PolicySpec;
use agora_engine::files::write_named;
use agora_engine::{EngineError, Store, StoreError};
use agora_records::families::FamilyError;
use agora_scenarios::{Plan, ScenarioError, Shard};
use anyhow::Context as _;
use clap::{Parser, Subcommand, ValueEnum};

/// Default store file, relative to the working directory.
const DEFAULT_STORE: &str = "agora.sqlite";

#[derive(Parser, Debug)]
#[command(name = "agora", version, about = "Simulate societies of agents in classic social-behaviour experiments")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run a study into the store (resuming where an earlier run stopped) and print summaries.
    Run {
        /// Study file (RON).
        study: PathBuf,
        /// Store file.
        #[arg(long, default_value = DEFAULT_STORE)]
        store: PathBuf,
        /// Run only part i of N of the plan (for several machines): `i/N`, or `auto` to read
        /// the task's index and count from a Slurm job array (SLURM_ARRAY_TASK_ID, _COUNT, _MIN,
        /// _MAX) or a Kubernetes Indexed Job (JOB_COMPLETION_INDEX, with AGORA_SHARD_COUNT).
        #[arg(long)]
        shard: Option<String>,
        /// Print the resolved plan without running it.
        #[arg(long)]
        dry_run: bool,
        /// Run at most this many seeded runs per condition (quick looks; seeds are unchanged).
        #[arg(long)]
        runs: Option<u32>,
        /// Worker threads for classical rosters (default: all cores).
        #[arg(long)]
        threads: Option<usize>,
        /// Runs kept live at once when agents wait on a model server (default 256); with the
        /// models' concurrency limits this bounds the requests in flight.
        #[arg(long)]
        live: Option<usize>,
        /// Directory of cell files (default: ../cells beside the study's directory).
        #[arg(long)]
        cells: Option<PathBuf>,
        /// A file of model declarations to add to the study's (`Models(version: 1, models: [...])`).
        #[arg(long)]
        models: Option<PathBuf>,
        /// Answer every LLM decision from the store's reply cache; a miss is an error and no
        /// server is called.
        #[arg(long)]
        replay: bool,
        /// Store whose reply cache to use (default: the store itself), e.g. to replay a study
        /// into a fresh store.
        #[arg(long)]
        cache: Option<PathBuf>,
        /// Where the store already holds runs of this study's names under another
        /// configuration, store this one as the study's next version (`NAME@2`, `NAME@3`, …)
        /// instead of refusing it; a rerun resumes the version its configuration matches.
        #[arg(long)]
        new_version: bool,
        /// A deposit (`agora prereg`): every file is checked against its manifest, the plan
        /// against the deposit (a plan that differs is refused, naming the first differing
        /// field), and the deposit's hash is recorded with every run.
        #[arg(long)]
        prereg: Option<PathBuf>,
        /// Run a plan that differs from its --prereg deposit, as the study's next version
        /// (`NAME@2`, never pooled with the deposited plan), recording this reason with its runs.
        #[arg(long, requires = "prereg")]
        deviate: Option<String>,
    },
    /// Deposit a study before its first run: the plan, claims with their margins and tests,
    /// anchors, codebook and gate, analysis options and the build, as readable files, a manifest
    /// whose SHA-256 names the deposit, and one archive to upload to a public registry.
    Prereg(prereg::PreregArgs),
    /// Validate a study and print its plan.
    Check {
        /// Study file (RON).
        study: PathBuf,
        /// Directory of cell files (default: ../cells beside the study's directory).
        #[arg(long)]
        cells: Option<PathBuf>,
        /// A file of model declarations to add to the study's (`Models(version: 1, models: [...])`).
        #[arg(long)]
        models: Option<PathBuf>,
    },
    /// List environments, agents, cells or anchors.
    List {
        /// What to list.
        what: list::ListWhat,
        /// Directory of cell files.
        #[arg(long, default_value = "scenarios/cells")]
        cells: PathBuf,
        /// With `environments` or `agents`: each one as a study file writes it, with every
        /// parameter at its default, one a line.
        #[arg(long)]
        params: bool,
    },
    /// Print per-condition summaries of a store.
    Summary {
        /// Store file.
        #[arg(long, default_value = DEFAULT_STORE)]
        store: PathBuf,
        /// Only this study.
        #[arg(long)]
        study: Option<String>,
    },
    /// Analyse a store: equivalence, directional agreement, audit grid, contrasts, divergent
    /// payoffs, acceptance functions, heterogeneity, classical baselines, ladder verdicts;
    /// written as Markdown, CSV and JSON.
    Analyze {
        /// Store file.
        #[arg(long, default_value = DEFAULT_STORE)]
        store: PathBuf,
        /// Output directory.
        #[arg(long, default_value = "out/analysis")]
        out: PathBuf,
        /// Only this study.
        #[arg(long)]
        study: Option<String>,
        /// Count classical rosters in the cross-model statistics (I², the between-model SD,
        /// Spearman's ρ across models); by default they are kept out, as the paper does.
        #[arg(long)]
        classical_in_cross_model: bool,
        /// Grade the claims this file has anchors for (`agora anchors --from-store`) against
        /// the lab's own human runs instead of their published anchors.
        #[arg(long)]
        human_anchors: Option<PathBuf>,
    },
    /// Compute each claim's outcome from the store's human runs (`agora serve`), with n,
    /// interval, date and study hash: anchors `agora analyze --human-anchors` grades against.
    Anchors {
        /// The store holding the human runs.
        #[arg(long)]
        from_store: PathBuf,
        /// Only this study's runs.
        #[arg(long)]
        study: Option<String>,
        /// The anchors file to write.
        #[arg(long, default_value = "out/human-anchors.ron")]
        out: PathBuf,
    },
    /// The main job: run the classical and tipping studies into the store, analyse them and
    /// write the report.
    Demo {
        /// Store file the two studies are run into.
        #[arg(long, default_value = DEFAULT_STORE)]
        store: PathBuf,
        /// Output directory for the analysis and the report.
        #[arg(long, default_value = "out/report")]
        out: PathBuf,
    },
    /// Play a study's human seats with people in a browser, beside its LLM and classical seats,
    /// into the store (consent, instructions, waiting room, completion codes; admin page).
    Serve(serve::ServeArgs),
    /// Write one self-contained HTML report (tables and figures) of a store.
    Report {
        /// Store file.
        #[arg(long, default_value = DEFAULT_STORE)]
        store: PathBuf,
        /// Output directory (report.html and its figures).
        #[arg(long, default_value = "out/report")]
        out: PathBuf,
        /// The prompt whose replicates the reasoning tree draws, as `run_id:seat:slot` (by
        /// default the audited prompt with most replicates).
        #[arg(long)]
        tree_prompt: Option<String>,
    },
    /// Combine stores (e.g. the shards of a plan run on several machines) into one. Every
    /// source's record hashes are recomputed first; a source with a run that does not hash to
    /// its stored hash is refused (exit 2, naming the file and the run) and nothing is written.
    Merge {
        /// The store to write (created if missing).
        #[arg(long)]
        into: PathBuf,
        /// Stores to read.
        #[arg(required = true)]
        stores: Vec<PathBuf>,
    },
    /// Recompute every run's record hash from what a store holds and compare it with the
    /// stored one (exit 1 naming each run that differs).
    Verify {
        /// Store file.
        #[arg(long, default_value = DEFAULT_STORE)]
        store: PathBuf,
    },
    /// Play the naming or coordination game on a network of up to millions of agents, with an
    /// optional committed minority; prints the outcome as JSON.
    Network(network::NetworkArgs),
    /// Run the paper's classical baselines (scenarios/studies/replication.ron) and print the
    /// paper-replication table: each figure the paper reports beside Agora's, with a 95 % CI.
    Replicate(replicate::ReplicateArgs),
    /// Measure the certification ladder's error rates: play declared families of scripted
    /// models (null and faithful) through run, audit, labels, prefill and analyze over many
    /// seeds, and write each claim's pass rate per tier with its Wilson interval.
    Calibrate(calibrate::CalibrateArgs),
    /// Audit the store's LLM transcripts: split each reply into pre-action reasoning, action and
    /// post-hoc rationale, code the reasoning's sentences against a codebook, write the audit's
    /// tables into the store and audit.md, audit.json and CSV tables into --out.
    Audit(audit::AuditArgs),
    /// Profile each model alone (the profile methods): categories A–D under eleven question versions and
    /// their presentation checks, and General Robustness; writes the ranges into --out.
    Profile(profile::ProfileArgs),
    /// One statistic on JSON from stdin, answered as JSON on stdout (fields in README).
    Stats {
        /// The statistic.
        test: stats::Test,
    },
    /// Export the store's tables for pandas or polars users.
    Export {
        /// Store file.
        #[arg(long, default_value = DEFAULT_STORE)]
        store: PathBuf,
        /// File format of the tables.
        #[arg(long, value_enum, default_value_t = ExportFormat::Parquet)]
        format: ExportFormat,
        /// Output directory.
        #[arg(long, default_value = "out/export")]
        out: PathBuf,
    },
    /// Write the file formats' reference: a JSON Schema per file type (`schemas/`) and the book's
    /// pages (`docs/src/reference/`), generated from the types that parse the files.
    Reference {
        /// Directory the `schemas/` and `docs/src/reference/` folders are written under (the
        /// repository's root by default).
        #[arg(long, default_value = ".")]
        out: PathBuf,
    },
}

/// The file format of `agora export`.
#[derive(Clone, Copy, Debug, ValueEnum)]
enum ExportFormat {
    Parquet,
    Csv,
}

/// An error that is the user's input, not a failure of the run: exit code 2.
#[derive(Debug)]
pub(crate) struct BadInput(pub(crate) String);

impl std::fmt::Display for BadInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for BadInput {}

/// Restores the default action for SIGPIPE (Rust ignores it, so a closed pipe turns every
/// `println!` into a panic): `agora list cells | head` then ends quietly, as command-line tools do.
#[cfg(unix)]
#[expect(unsafe_code, reason = "setting a signal disposition has no safe wrapper in libc")]
fn default_sigpipe() {
    // SAFETY: called once at the start of main, before any thread is spawned; SIG_DFL is a valid
    // disposition for SIGPIPE.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

#[cfg(not(unix))]
fn default_sigpipe() {}

fn main() -> ExitCode {
    default_sigpipe();
    agora_agents::llm::raise_open_file_limit();
    let parsed =
        help::command::<Cli>().try_get_matches().and_then(|m| <Cli as clap::FromArgMatches>::from_arg_matches(&m));
    let cli = match parsed {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            let bad = e.chain().any(|c| {
                c.is::<BadInput>()
                    || c.downcast_ref::<agora_profile::Error>().is_some_and(agora_profile::Error::is_bad_input)
                    || c.downcast_ref::<agora_audit::Error>().is_some_and(agora_audit::Error::is_bad_input)
                    || c.is::<ScenarioError>()
                    || match c.downcast_ref::<agora_serve::ServeError>() {
                        Some(agora_serve::ServeError::BadInput(_) | agora_serve::ServeError::Study(_)) => true,
                        Some(
                            agora_serve::ServeError::Engine(EngineError::Store(e)) | agora_serve::ServeError::Store(e),
                        ) => e.is_refusal(),
                        Some(agora_serve::ServeError::Family(FamilyError::Newer { .. })) => true,
                        _ => false,
                    }
                    || matches!(c.downcast_ref::<EngineError>(), Some(EngineError::Store(e)) if e.is_refusal())
                    || c.downcast_ref::<StoreError>().is_some_and(StoreError::is_refusal)
                    || matches!(c.downcast_ref::<FamilyError>(), Some(FamilyError::Newer { .. }))
            });
            ExitCode::from(if bad { 2 } else { 1 })
        }
    }
}

/// Refuses an output directory that cannot be one: `--out` (or a folder above it) is an existing
/// file. Said before anything is computed, naming the file, instead of failing at the first write.
fn check_out_dir(out: &Path) -> anyhow::Result<()> {
    if let Some(file) = out.ancestors().find(|a| !a.as_os_str().is_empty() && a.exists() && !a.is_dir()) {
        return Err(BadInput(format!(
            "--out {}: {} exists and is not a directory; name a directory to write into",
            out.display(),
            file.display()
        ))
        .into());
    }
    Ok(())
}

/// Loads a study (with its cells and an optional models file) into its plan; a model a roster
/// names that no declaration gives is refused, as `run` would refuse it at the server.
fn load_plan(study: &Path, cells: Option<&Path>, models: Option<&Path>) -> anyhow::Result<Plan> {
    let plan = Plan::load_with_models(study, cells, models)?;
    // Every model a roster names must be declared (in the study or the --models file): `check`
    // says so before anything runs, as `run` would when it reaches the server.
    let declared: std::collections::BTreeSet<&str> = plan.models.iter().map(|m| m.name.as_str()).collect();
    let unknown: std::collections::BTreeSet<&str> = plan
        .runs
        .iter()
        .flat_map(|r| r.seats.iter().filter_map(|s| s.model()))
        .filter(|m| !declared.contains(m))
        .collect();
    if let Some(first) = unknown.first() {
        return Err(BadInput(format!(
            "{}: model `{first}` is named by a roster but not declared{} (declare it in the study's `models` or \
             pass --models FILE)",
            study.display(),
            if declared.is_empty() {
                String::new()
            } else {
                format!("; declared: {}", declared.iter().copied().collect::<Vec<_>>().join(", "))
            }
        ))
        .into());
    }
    Ok(plan)
}

fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Run {
            study,
            store,
            shard,
            dry_run,
            runs,
            threads,
            live,
            cells,
            models,
            replay,
            cache,
            new_version,
            prereg,
            deviate,
        } => {
            huge_pages::none();
            let mut plan = load_plan(&study, cells.as_deref(), models.as_deref())?;
            if let Some(r) = plan.runs.iter().find(|r| r.seats.iter().any(|p| p.stand_in().is_some())) {
                return Err(BadInput(format!(
                    "{}: block `{}` has human seats; people play them in a browser with `agora serve {}`",
                    study.display(),
                    r.block,
                    study.display()
                ))
                .into());
            }
            if let Some(r) = plan.runs.iter().find(|r| r.seats.iter().any(|p| matches!(p, PolicySpec::Python(_)))) {
                return Err(BadInput(format!(
                    "{}: block `{}` has a Python policy seat; play it from Python with the `agora` package \
                     (`agora.run`), which holds the policy's code",
                    study.display(),
                    r.block
                ))
                .into());
            }
            if let Some(n) = runs {
                if n == 0 {
                    return Err(BadInput("--runs must be at least 1".into()).into());
                }
                plan = plan.limit_runs(n);
            }
            if let Some(s) = &shard {
                let shard: Shard = if s.trim() == "auto" {
                    let auto = shard_auto::from_env(|k| std::env::var_os(k).map(|v| v.to_string_lossy().into_owned()))
                        .map_err(BadInput)?;
                    eprintln!("--shard auto: shard {}/{} ({})", auto.shard.index, auto.shard.count, auto.scheduler);
                    auto.shard
                } else {
                    s.parse()?
                };
                plan = plan.shard(shard);
            }
            let prereg = match &prereg {
                Some(dir) => Some(prereg::check_run(dir, &plan, deviate.as_deref())?),
                None => None,
            };
            if dry_run {
                run::print_plan(&plan);
                return Ok(());
            }
            let flags =
                run::RunFlags { threads, live, replay, cache: cache.as_deref(), new_version, prereg: prereg.as_ref() };
            run::run_plan(&plan, &study, &store, &flags)
        }
        Command::Check { study, cells, models } => {
            let plan = load_plan(&study, cells.as_deref(), models.as_deref())?;
            println!("{}: valid", study.display());
            run::print_plan(&plan);
            Ok(())
        }
        Command::List { what, cells, params: true } => list::list_params(what, &cells),
        Command::List { what, cells, params: false } => list::list(what, &cells),
        Command::Stats { test } => stats::main(test),
        Command::Network(args) => network::main(args),
        Command::Replicate(args) => replicate::main(args),
        Command::Calibrate(args) => calibrate::main(args),
        Command::Audit(args) => audit::main(args),
        Command::Profile(args) => profile::main(args),
        Command::Prereg(args) => prereg::main(args),
        Command::Serve(args) => serve::main(args),
        Command::Demo { store, out } => {
            check_out_dir(&out)?;
            // The studies of this checkout: from the working directory when run there,
            // else from where the binary was built.
            let root = if Path::new("scenarios/studies/classical.ron").exists() {
                Path::new(".")
            } else {
                Path::new(env!("CARGO_MANIFEST_DIR"))
            };
            for name in ["classical.ron", "tipping.ron"] {
                let study = root.join("scenarios/studies").join(name);
                let plan = load_plan(&study, None, None)?;
                run::run_plan(&plan, &study, &store, &run::RunFlags::default())?;
            }
            let analysis = agora_analysis::analyze::analyze(&store, None)?;
            let dir = out.join("analysis");
            std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
            write_named(&dir.join("analysis.md"), analysis.to_markdown())?;
            write_named(&dir.join("analysis.json"), serde_json::to_string_pretty(&analysis)?)?;
            for t in analysis.tables() {
                write_named(&dir.join(format!("{}.csv", t.name)), agora_analysis::analyze::to_csv(&t))?;
            }
            let path = agora_report::write(&store, &out)?;
            println!("\nanalysis tables in {}\nreport written to {}", dir.display(), path.display());
            Ok(())
        }
        Command::Report { store, out, tree_prompt } => {
            check_out_dir(&out)?;
            let reader = Store::open_read(&store)?.reader_path().to_path_buf();
            if let Some(t) = &tree_prompt {
                let ok = t.split(':').count() == 3 && t.split(':').all(|p| p.parse::<i64>().is_ok());
                if !ok {
                    return Err(
                        BadInput(format!("--tree-prompt `{t}`: expected run_id:seat:slot (three integers)")).into()
                    );
                }
                // The run it names must be one of the store's.
                let run: i64 = t.split(':').next().and_then(|r| r.parse().ok()).unwrap_or_default();
                let conn = rusqlite::Connection::open_with_flags(&reader, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)?;
                let found: i64 = agora_records::reads::runs::runs_with_id(&conn, run)?;
                if found == 0 {
                    return Err(
                        BadInput(format!("--tree-prompt `{t}`: store {} holds no run {run}", store.display())).into()
                    );
                }
            }
            let progress = progress::Progress::start("report", None, "");
            progress.detail("drawing the tables and figures");
            let path =
                agora_report::write_with(&reader, &out, &agora_report::Options { tree_prompt }).map_err(|e| {
                    match e.downcast_ref::<agora_report::TreePromptError>() {
                        Some(bad) => BadInput(bad.to_string()).into(),
                        None => e,
                    }
                })?;
            progress.finish();
            println!("report written to {}", path.display());
            Ok(())
        }
        Command::Merge { into, stores } => {
            for s in &stores {
                if !s.exists() {
                    return Err(BadInput(format!("store {} does not exist", s.display())).into());
                }
            }
            // Every source is verified before the target is opened: a source with a run altered
            // after it was written is refused (exit 2) and nothing is written (issue 40).
            let sources =
                stores.iter().map(|s| agora_engine::store::MergeSource::verify(s)).collect::<Result<Vec<_>, _>>()?;
            let mut out = Store::open(&into)?;
            let _claim = out.claim("agora merge")?;
            for s in &sources {
                let r = out.merge_verified(s)?;
                println!("{}: {} runs added, {} already present", s.path().display(), r.added, r.already_present);
            }
            println!("{}: {} runs", into.display(), out.run_count()?);
            Ok(())
        }
        Command::Verify { store } => {
            let v = Store::open_read(&store)?.verify()?;
            for m in &v.mismatches {
                println!("run {}: stored hash {}, its stored values hash to {}", m.run_key, m.stored, m.recomputed);
            }
            anyhow::ensure!(
                v.mismatches.is_empty(),
                "{}: {} of {} runs do not hash to their stored record hash",
                store.display(),
                v.mismatches.len(),
                v.runs
            );
            println!("{}: {} runs, each record hash is the hash of its stored values", store.display(), v.runs);
            Ok(())
        }
        Command::Analyze { store, out, study, classical_in_cross_model, human_anchors } => {
            check_out_dir(&out)?;
            let reader = Store::open_read(&store)?.reader_path().to_path_buf();
            summary::check_study(&reader, study.as_deref())?;
            summary::check_versions(&reader, study.as_deref())?;
            let human = match &human_anchors {
                Some(p) => {
                    let text = std::fs::read_to_string(p)
                        .map_err(|e| BadInput(format!("--human-anchors {}: {e}", p.display())))?;
                    Some(
                        agora_analysis::human_anchors::HumanAnchors::parse(&text)
                            .map_err(|e| BadInput(format!("--human-anchors {}: {e}", p.display())))?,
                    )
                }
                None => None,
            };
            let started = std::time::Instant::now();
            let options = agora_analysis::Options { classical_in_cross_model };
            let progress = progress::Progress::start("analyze", None, "");
            progress.detail("reading the store and grading the claims");
            let analysis =
                agora_analysis::analyze::analyze_against(&reader, study.as_deref(), &options, human.as_ref())?;
            progress.finish();
            std::fs::create_dir_all(&out).with_context(|| format!("creating {}", out.display()))?;
            write_named(&out.join("analysis.md"), analysis.to_markdown())?;
            write_named(&out.join("analysis.json"), serde_json::to_string_pretty(&analysis)?)?;
            for t in analysis.tables() {
                write_named(&out.join(format!("{}.csv", t.name)), agora_analysis::analyze::to_csv(&t))?;
            }
            println!(
                "{} runs analysed in {:.2} s; tables in {}",
                analysis.runs,
                started.elapsed().as_secs_f64(),
                out.display()
            );
            for v in &analysis.verdicts {
                println!("{:<20} {:<22} {}", v.claim, v.tier_name, v.first_unmet.as_deref().unwrap_or("-"));
            }
            Ok(())
        }
        Command::Anchors { from_store, study, out } => {
            if out.is_dir() {
                return Err(
                    BadInput(format!("--out {}: a directory; name the anchors file to write", out.display())).into()
                );
            }
            let reader = Store::open_read(&from_store).context("--from-store")?.reader_path().to_path_buf();
            let anchors = agora_analysis::human_anchors::from_store(&reader, study.as_deref())?;
            if anchors.anchors.is_empty() {
                return Err(BadInput(format!(
                    "{}: no human run (every seat a person, no stand-in decision) at a claim's baseline",
                    from_store.display()
                ))
                .into());
            }
            if let Some(dir) = out.parent().filter(|d| !d.as_os_str().is_empty()) {
                std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
            }
            std::fs::write(&out, anchors.to_ron()).with_context(|| format!("writing {}", out.display()))?;
            println!(
                "{:<22} {:<18} {:>4} {:>8} {:>19} {:>8}  provenance",
                "claim", "metric", "n", "mean", "95 % CI", "left out"
            );
            for a in &anchors.anchors {
                println!(
                    "{:<22} {:<18} {:>4} {:>8.3} {:>19} {:>8}  {} ({}), {}",
                    a.claim,
                    a.metric,
                    a.n,
                    a.mean,
                    format!("[{:.3}, {:.3}]", a.ci_low, a.ci_high),
                    a.excluded,
                    a.study,
                    &a.study_hash[..a.study_hash.len().min(12)],
                    a.date
                );
            }
            println!("written to {}", out.display());
            Ok(())
        }
        Command::Summary { store, study } => {
            let reader = Store::open_read(&store)?.reader_path().to_path_buf();
            summary::print(&reader, study.as_deref())
        }
        Command::Reference { out } => reference::write(&out),
        Command::Export { store, format, out } => {
            check_out_dir(&out)?;
            let reader = Store::open_read(&store)?.reader_path().to_path_buf();
            let format = match format {
                ExportFormat::Parquet => agora_report::export::Format::Parquet,
                ExportFormat::Csv => agora_report::export::Format::Csv,
            };
            let tables = agora_engine::store::TABLES.len() as u64;
            let progress = progress::Progress::start("export", Some(tables), "tables");
            let written = agora_report::export::export_with(&reader, format, &out, &mut |table, i| {
                progress.set(i as u64);
                progress.detail(format!("writing {table}"));
            })?;
            progress.set(tables);
            progress.finish();
            for (table, path, rows) in written {
                println!("{table:<13} {rows:>9} rows  {}", path.display());
            }
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An output directory that is a file, or lies under one, is refused naming the file.
    #[test]
    fn an_out_directory_that_is_a_file_is_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("f");
        std::fs::write(&file, "x").expect("write");
        for out in [file.clone(), file.join("below")] {
            let e = check_out_dir(&out).expect_err("a file");
            assert!(e.is::<BadInput>() && e.to_string().contains(&file.display().to_string()), "{e}");
        }
        check_out_dir(&dir.path().join("new/dir")).expect("a directory to make");
    }
}
