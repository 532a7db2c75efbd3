//! The runner of `agora profile`: each model's individual baseline in isolated decisions (the profile methods): the
//! tasks of categories A–E under eleven frozen question versions and their scheduled
//! presentation checks, and General Robustness's 23 conditions; the records go into the
//! store's `profile_*` tables, the ranges into `profile.json`, `profile.md` and `profile.csv`.
//!
//! The study file (`ProfileStudy(...)`) names the models (declared in a models file), the tasks
//! (categories A–E by default; E6–E9 only when named, with a lab's own pairs file), the master
//! seed and whether General Robustness runs. Fifteen responses per input and thirty per GR condition are the seed's; fewer are an explicit
//! opt-in (`reduced_protocol: true`), marked in every output.

mod ask;
mod gr;
mod output;
mod plan;
mod run;
mod store;

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::tasks::catalogue::b4_input;
use crate::tasks::gr::Wording;
use crate::tasks::render::render;
use crate::tasks::schedule::Schedules;
use crate::tasks::versions::{self, Loaded};
use crate::tasks::{ProfileInputError, Task};
use agora_agents::llm::ModelSpec;
use agora_engine::store::SqliteCache;
use agora_engine::Store;
use serde::Deserialize;

use crate::error::Error;
use crate::tasks::items::{ItemFile, ItemKind};
use ask::Asker;
use plan::{presentation, task_plan, task_plan_of, Cells, TaskPlan};
use run::Ctx;

pub use output::stored_profiles;

/// What `agora profile` is asked to do.
#[derive(Clone, Debug, Default)]
pub struct ProfileOptions {
    /// The profile study file (`ProfileStudy(...)`).
    pub study: Option<PathBuf>,
    /// Store file.
    pub store: PathBuf,
    /// Models file (`Models(version: 1, models: [...])`); default: the study's include_models.
    pub models: Option<PathBuf>,
    /// Print the calls per model and category, and the store size to expect, without asking.
    pub dry_run: bool,
    /// Answer from the store's reply cache only; a missing reply is an error.
    pub replay: bool,
    /// Output directory for profile.json, profile.md and profile.csv.
    pub out: PathBuf,
    /// Directory holding versions/, versions.lock, schedules.ron and gr.ron (default: the
    /// checkout's assets/profile).
    pub assets: Option<PathBuf>,
    /// Check every version file and write its hash to versions.lock (review the versions
    /// first: a frozen file is what a study runs).
    pub freeze: bool,
    /// A recovery pass: ask the slots left `missing` (unusable answers after the attempt limit)
    /// again at the same slots, continuing their attempt numbers, with the model file's attempt
    /// limit and token limit (which may be raised for it); the pass and any changed setting are
    /// recorded in `profile_passes`.
    pub retry_missing: bool,
}

/// What `agora profile` did, for the command line to print: the library prints nothing.
#[derive(Clone, Debug)]
pub enum ProfileOutcome {
    /// `--freeze`: the version files and the other inputs hashed into their locks.
    Frozen {
        /// (task, SHA-256) of each version file.
        versions: Vec<(String, String)>,
        /// The versions lock written.
        lock: PathBuf,
        /// (input, SHA-256) of the schedules, GR wording, item file and cells.
        inputs: BTreeMap<String, String>,
        /// The inputs lock written.
        inputs_lock: PathBuf,
    },
    /// `--dry-run`: what a run would ask, nothing asked.
    DryRun(DryRun),
    /// The profiles, written to `out`.
    Written {
        /// Each model's profile.
        profiles: Vec<output::ModelProfile>,
        /// Each model's requests sent and replies from the cache, as (model, sent, cached).
        calls: Vec<(String, u64, u64)>,
        /// The output directory.
        out: PathBuf,
    },
}

/// What a profile study would ask (`--dry-run`).
#[derive(Clone, Debug)]
pub struct DryRun {
    /// The study's name.
    pub study: String,
    /// Tasks planned.
    pub tasks: usize,
    /// Responses per input.
    pub responses: u32,
    /// Whether the study opted into the reduced protocol.
    pub reduced_protocol: bool,
    /// (task, SHA-256) of each version file.
    pub versions: Vec<(String, String)>,
    /// Calls at the first attempt per category.
    pub per_category: BTreeMap<char, usize>,
    /// General Robustness's calls.
    pub general_robustness: usize,
    /// Calls in all at the first attempt.
    pub total: usize,
    /// (name, served id, attempt limit) of each model.
    pub models: Vec<(String, String, u32)>,
    /// Distinct question texts and their bytes.
    pub texts: (usize, usize),
    /// (task, calls) per task.
    pub per_task: Vec<(String, usize)>,
}

impl std::fmt::Display for DryRun {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "profile study `{}`: {} tasks, {} responses per input{}",
            self.study,
            self.tasks,
            self.responses,
            if self.reduced_protocol { " (reduced protocol, opted in)" } else { "" }
        )?;
        for (task, sha) in &self.versions {
            writeln!(f, "  versions {task}: sha256 {sha}")?;
        }
        for (name, served, attempts) in &self.models {
            writeln!(f, "model {name} ({served}): calls at the first attempt")?;
            for (c, n) in &self.per_category {
                writeln!(f, "  category {c}: {n}")?;
            }
            writeln!(f, "  general robustness: {}", self.general_robustness)?;
            writeln!(
                f,
                "  total: {} (up to {} with every retry)",
                self.total,
                self.total * (*attempts).max(1) as usize
            )?;
            writeln!(
                f,
                "  store: {} response rows and at least as many attempt rows (raw replies); {} distinct question texts, {:.1} MB, stored once each (B4's later rounds, which depend on the episode, not counted)",
                self.total, self.texts.0, self.texts.1 as f64 / 1e6
            )?;
        }
        for (task, calls) in &self.per_task {
            writeln!(f, "  {task}: {calls} calls")?;
        }
        Ok(())
    }
}

/// A profile study file (`agora profile STUDY`): which models and tasks, how many responses per
/// input, and the seed every sampling seed derives from.
#[derive(Clone, Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename = "ProfileStudy")]
pub struct ProfileStudy {
    /// File format version; must be 1.
    #[schemars(range(min = 1, max = 1))]
    version: u32,
    /// The study's name, part of every slot's key in the store.
    #[schemars(length(min = 1))]
    name: String,
    /// The seed every request's sampling seed derives from.
    master_seed: u64,
    /// A models file (`Models(version: 1, models: [...])`), relative to the study file; `--models
    /// FILE` takes its place.
    #[serde(default)]
    include_models: Option<String>,
    /// Model names; empty = every declared model.
    #[serde(default)]
    models: Vec<String>,
    /// Task names (`dictator`, `ultimatum-proposer`, … `e1`–`e5`; `e6`–`e9` need `pair_items`);
    /// empty = every task but the user-supplied E6–E9.
    #[serde(default)]
    tasks: Vec<String>,
    /// Responses per input: the profile methods' 15; fewer needs `reduced_protocol`.
    #[serde(default = "fifteen")]
    #[schemars(range(min = 1, max = 1000))]
    responses: u32,
    /// Whether General Robustness is asked.
    #[serde(default = "yes")]
    general_robustness: bool,
    /// Responses per General Robustness condition: the profile methods' 30; fewer needs
    /// `reduced_protocol`.
    #[serde(default = "thirty")]
    #[schemars(range(min = 1, max = 10000))]
    gr_responses: u32,
    /// Opt-in to fewer responses than the seed's 15 and 30 (tests, smoke runs).
    #[serde(default)]
    reduced_protocol: bool,
    /// A lab's own item file of pairs for E6–E9 (never shipped; see `tasks::items`), relative to
    /// the study file. Needed when the study names e6–e9.
    #[serde(default)]
    pair_items: Option<String>,
    /// Ask only each questionnaire measure's first N items (E-S2's order, anchors first): a
    /// reduced study, which needs `reduced_protocol: true`.
    #[serde(default)]
    #[schemars(range(min = 1))]
    questionnaire_items: Option<usize>,
}

fn fifteen() -> u32 {
    15
}
fn thirty() -> u32 {
    crate::tasks::gr::RESPONSES as u32
}
fn yes() -> bool {
    true
}

fn bad(e: ProfileInputError) -> Error {
    Error::BadInput(e.to_string())
}

/// The assets directory: `--assets`, else the checkout's `assets/profile`.
fn assets_dir(arg: Option<&Path>) -> PathBuf {
    if let Some(a) = arg {
        return a.to_path_buf();
    }
    let here = Path::new("assets/profile");
    if here.join("versions.lock").exists() {
        here.to_path_buf()
    } else {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../assets/profile")
    }
}

/// The society prompts' cell files (`scenarios/cells`) whose presentation checks the profile reuses.
/// The society cells the presentation checks reuse ([`Cells::load`]).
/// Further passes over the questions whose server failed in transport, within one invocation.
const RETRY_PASSES: u32 = 8;

/// The shipped item file of E1–E5 under `assets/profile/items/`.
const SHIPPED_ITEMS: &str = "ipip50";

const CHECK_CELLS: [&str; 6] =
    ["answer-field", "task-id", "alt-opening", "layout-inline", "layout-sentence-per-line", "reversed-actions"];

/// Every input of a profile beside the question versions, by name, with the SHA-256 of its
/// file: the schedules, the GR wording and the cells the checks reuse.
fn input_hashes(assets: &Path) -> crate::error::Result<BTreeMap<String, String>> {
    let mut files: Vec<(String, PathBuf)> = vec![
        ("schedules".into(), assets.join("schedules.ron")),
        ("gr".into(), assets.join("gr.ron")),
        (format!("items:{SHIPPED_ITEMS}"), assets.join("items").join(format!("{SHIPPED_ITEMS}.ron"))),
    ];
    files.extend(CHECK_CELLS.iter().map(|c| (format!("cell:{c}"), cells_dir().join(format!("{c}.ron")))));
    let mut out = BTreeMap::new();
    for (name, file) in files {
        let bytes =
            std::fs::read(&file).map_err(|e| Error::BadInput(format!("{}: cannot be read: {e}", file.display())))?;
        out.insert(name, crate::tasks::versions::sha256_hex(&bytes));
    }
    Ok(out)
}

/// The inputs' hashes, each checked against `lock` (`assets/profile/inputs.lock`, written by
/// `--freeze`): a changed or unfrozen input is refused, naming it.
fn check_inputs(assets: &Path, lock: &Path) -> crate::error::Result<BTreeMap<String, String>> {
    let now = input_hashes(assets)?;
    let frozen: BTreeMap<String, String> = match std::fs::read_to_string(lock) {
        Ok(text) => ron::from_str(&text).map_err(|e| Error::BadInput(format!("{}: {e}", lock.display())))?,
        Err(e) => {
            return Err(Error::BadInput(format!(
                "{}: cannot be read ({e}): run `agora profile --freeze` after reviewing the schedules, the GR wording and the cells",
                lock.display()
            )))
        }
    };
    for (name, sha) in &now {
        match frozen.get(name) {
            Some(f) if f == sha => {}
            Some(f) => {
                return Err(Error::BadInput(format!(
                    "{}: `{name}` is {sha} but was frozen as {f}: the input changed after freezing; review it and run `agora profile --freeze`",
                    lock.display()
                )))
            }
            None => {
                return Err(Error::BadInput(format!(
                    "{}: `{name}` is not frozen: run `agora profile --freeze` after reviewing it",
                    lock.display()
                )))
            }
        }
    }
    Ok(now)
}

fn cells_dir() -> PathBuf {
    let here = Path::new("scenarios/cells");
    if here.join("task-id.ron").exists() {
        here.to_path_buf()
    } else {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios/cells")
    }
}

impl ProfileStudy {
    /// Reads and checks a profile study file; bad input is [`BadInput`] naming the file and field.
    pub fn load(path: &Path) -> crate::error::Result<ProfileStudy> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| Error::BadInput(format!("{}: cannot be read: {e}", path.display())))?;
        let s: ProfileStudy = ron::Options::default()
            .from_str(&text)
            .map_err(|e| Error::BadInput(format!("{}: line {}: {}", path.display(), e.span.start.line, e.code)))?;
        let field = |f: &str, why: String| Error::BadInput(format!("{}: field `{f}`: {why}", path.display()));
        if s.version != 1 {
            return Err(field("version", format!("is {}, this build reads 1", s.version)));
        }
        if s.name.trim().is_empty() {
            return Err(field("name", "is empty".into()));
        }
        if s.responses == 0 || s.gr_responses == 0 {
            return Err(field("responses", "must be at least 1".into()));
        }
        if (s.responses != 15 || s.gr_responses != thirty()) && !s.reduced_protocol {
            return Err(field(
                "responses",
                format!(
                    "{} and {} differ from the profile methods' 15 per input and 30 per GR condition; set `reduced_protocol: true` to run a reduced study on purpose",
                    s.responses, s.gr_responses
                ),
            ));
        }
        if let Some(n) = s.questionnaire_items {
            if n == 0 || !s.reduced_protocol {
                return Err(field(
                    "questionnaire_items",
                    format!("{n} items per questionnaire measure is a reduced study: it needs at least 1 and `reduced_protocol: true`"),
                ));
            }
        }
        if s.pair_items.is_none() {
            if let Some(t) = s.tasks.iter().find(|t| Task::from_name(t).is_some_and(Task::user_items)) {
                return Err(field(
                    "pair_items",
                    format!("`{t}` reads its pairs from a lab's own item file, which Agora does not ship: give it as `pair_items`"),
                ));
            }
        }
        for (i, t) in s.tasks.iter().enumerate() {
            if Task::from_name(t).is_none() {
                let names: Vec<&str> = Task::ALL.iter().map(|t| t.name()).collect();
                return Err(field(
                    &format!("tasks[{i}]"),
                    format!("`{t}` is not a task; the tasks are {}", names.join(", ")),
                ));
            }
        }
        Ok(s)
    }

    fn tasks(&self) -> Vec<Task> {
        if self.tasks.is_empty() {
            Task::defaults()
        } else {
            Task::ALL.into_iter().filter(|t| self.tasks.iter().any(|n| n == t.name())).collect()
        }
    }
}

fn load_models(study_path: &Path, study: &ProfileStudy, models: Option<&Path>) -> crate::error::Result<Vec<ModelSpec>> {
    let path = match (models, &study.include_models) {
        (Some(p), _) => p.to_path_buf(),
        (None, Some(inc)) => study_path.parent().unwrap_or(Path::new(".")).join(inc),
        (None, None) => {
            return Err(Error::BadInput(format!(
                "{}: no models: give --models FILE or `include_models`",
                study_path.display()
            )))
        }
    };
    let file = agora_scenarios::ModelsFile::load(&path)?;
    let mut out = Vec::new();
    for m in &file.models {
        m.validate().map_err(|e| Error::BadInput(format!("models file {}: {e}", path.display())))?;
    }
    if study.models.is_empty() {
        out = file.models.clone();
    } else {
        for (i, name) in study.models.iter().enumerate() {
            let m = file.models.iter().find(|m| &m.name == name).ok_or_else(|| {
                Error::BadInput(format!(
                    "{}: field `models[{i}]`: `{name}` is not declared in {}",
                    study_path.display(),
                    path.display()
                ))
            })?;
            out.push(m.clone());
        }
    }
    if out.is_empty() {
        return Err(Error::BadInput(format!("models file {} declares no model", path.display())));
    }
    Ok(out)
}

/// `agora profile`: freezes the inputs, plans a dry run, or asks the models and writes their
/// profiles; returns what it did, for the caller to print.
pub fn main(args: ProfileOptions) -> crate::error::Result<ProfileOutcome> {
    let assets = assets_dir(args.assets.as_deref());
    let versions_dir = assets.join("versions");
    let lock = assets.join("versions.lock");
    let inputs_lock = assets.join("inputs.lock");
    if args.freeze {
        let l = versions::freeze(&versions_dir, &lock).map_err(bad)?;
        let inputs = input_hashes(&assets)?;
        let text = ron::ser::to_string_pretty(&inputs, ron::ser::PrettyConfig::default())?;
        std::fs::write(&inputs_lock, text + "\n").map_err(Error::write(&inputs_lock))?;
        let versions = l.into_iter().map(|(task, sha)| (task.to_string(), sha.to_string())).collect();
        return Ok(ProfileOutcome::Frozen { versions, lock, inputs, inputs_lock });
    }
    let study_path =
        args.study.as_deref().ok_or_else(|| Error::BadInput("give a profile study file (or --freeze)".into()))?;
    let study = ProfileStudy::load(study_path)?;
    let tasks = study.tasks();
    let schedules = Schedules::load(&assets.join("schedules.ron")).map_err(bad)?;
    let loaded = versions::load(&versions_dir, &lock, &tasks).map_err(bad)?;
    let wording = Wording::load(&assets.join("gr.ron")).map_err(bad)?;
    let cells = Cells::load(&cells_dir())?;
    let mut inputs = check_inputs(&assets, &inputs_lock)?;
    let items = study_items(study_path, &study, &assets, &tasks, &mut inputs)?;
    let models = load_models(study_path, &study, args.models.as_deref())?;
    let plans: Vec<(Task, TaskPlan)> = tasks
        .iter()
        .map(|t| {
            let plan = match items.iter().find(|f| f.measures().contains(t)) {
                Some(f) => {
                    let mut all = f.inputs(*t);
                    all.truncate(study.questionnaire_items.unwrap_or(all.len()));
                    task_plan_of(*t, &schedules, study.responses, all)
                }
                None => task_plan(*t, &schedules, study.responses),
            };
            (*t, plan)
        })
        .collect();
    if args.dry_run {
        return Ok(ProfileOutcome::DryRun(dry_run(&study, &models, &plans, &loaded, &cells)));
    }
    // The profile's tables on a connection of the store opened (and checked) by the engine:
    // the store file is opened through SQLite alone.
    let mut conn = Store::open(&args.store)?.connect()?;
    conn.busy_timeout(std::time::Duration::from_secs(60))?;
    store::create(&conn)?;
    store::record_study(&conn, &study, &loaded)
        .map_err(|e| Error::BadInput(format!("{}: {e}", args.store.display())))?;
    store::record_inputs(&conn, &study.name, &inputs)
        .map_err(|e| Error::BadInput(format!("{}: {e}", args.store.display())))?;
    let cache: Arc<SqliteCache> = Arc::new(SqliteCache::open(&args.store)?);
    let rt = agora_agents::llm::session::runtime().map_err(|e| Error::runtime(format!("starting the runtime: {e}")))?;
    let mut report = Vec::new();
    let mut incomplete = Vec::new();
    let mut calls = Vec::new();
    for spec in &models {
        let changed = store::check_settings(&conn, &study.name, spec, args.retry_missing)
            .map_err(|e| Error::BadInput(format!("{}: {e}", args.store.display())))?;
        let session = agora_engine::llm_seats::model_session_on(cache.clone(), [spec], args.replay, &rt)?;
        let (retry, redo, kept) = if args.retry_missing {
            let redo = store::episodes_missing(&conn, &study.name, &spec.name)?;
            let kept = store::kept_b4(&conn, &study.name, &spec.name, &redo)?;
            (store::missing(&conn, &study.name, &spec.name)?, redo, kept)
        } else {
            Default::default()
        };
        let asker = Arc::new(Asker::new(spec.clone(), session, study.master_seed, retry, kept));
        let ctx = Arc::new(Ctx {
            study: study.name.clone(),
            asker: asker.clone(),
            loaded: loaded.clone(),
            cells: cells.clone(),
        });
        // A recovery pass asks only the slots left missing: slots never asked yet would get
        // their first answer under the pass's settings, mixing two configurations in one
        // profile. They are asked by a plain run first.
        if args.retry_missing {
            let mut unasked = 0;
            for (task, plan) in &plans {
                let done = store::done_keys(&conn, &study.name, &spec.name, task.name(), false)?;
                unasked += run::jobs(&ctx, plan, &done, &Default::default()).len();
            }
            if study.general_robustness {
                let done = store::done_gr(&conn, &study.name, &spec.name, false)?;
                unasked += gr::jobs(&ctx, &wording, study.gr_responses, &done)?.len();
            }
            if unasked > 0 {
                return Err(Error::BadInput(format!(
                    "model `{}`: {unasked} question(s) of profile study `{}` have not been asked yet: run it without --retry-missing first; a recovery pass asks again only the slots left missing",
                    spec.name, study.name
                )));
            }
        }
        let limit = run::in_flight(spec);
        // Records are committed every few hundred jobs, so an interrupted study resumes there.
        let batch = (16 * limit).max(512);
        // Jobs whose server failed in transport are asked again in later passes of this
        // invocation (their questions already answered come from the reply cache), after a
        // wait that starts at eight transport backoffs and doubles, up to RETRY_PASSES passes or
        // two passes in a row in which the server answered nothing.
        let (mut asked, mut recorded_jobs) = (0, 0);
        let mut failed: Vec<(String, ask::Failure)> = Vec::new();
        let mut only: Option<HashSet<String>> = None;
        let mut wait = std::time::Duration::from_millis(spec.backoff_ms.saturating_mul(8).max(1));
        let (mut passes, mut idle) = (0, 0);
        loop {
            asker.next_pass();
            let replies_before = asker.session.calls().1;
            let recorded_before = recorded_jobs;
            failed.clear();
            for (task, plan) in &plans {
                let done = store::done_keys(&conn, &study.name, &spec.name, task.name(), args.retry_missing)?;
                let mut jobs = run::jobs(&ctx, plan, &done, &redo);
                keep_only(&mut jobs, only.as_ref());
                if only.is_none() {
                    asked += jobs.len();
                }
                while !jobs.is_empty() {
                    let rest = jobs.split_off(batch.min(jobs.len()));
                    let (recorded, fails) = rt.block_on(run::in_order(limit, std::mem::replace(&mut jobs, rest)))?;
                    recorded_jobs += recorded.len();
                    store::write_rows(&mut conn, &study.name, spec, recorded.iter().flatten())?;
                    failed.extend(fails);
                }
            }
            if study.general_robustness {
                let done = store::done_gr(&conn, &study.name, &spec.name, args.retry_missing)?;
                let mut jobs = gr::jobs(&ctx, &wording, study.gr_responses, &done)?;
                keep_only(&mut jobs, only.as_ref());
                if only.is_none() {
                    asked += jobs.len();
                }
                let (recorded, fails) = rt.block_on(run::in_order(limit, jobs))?;
                recorded_jobs += recorded.len();
                store::write_gr(&mut conn, &study.name, spec, &recorded)?;
                failed.extend(fails);
            }
            let fatal = failed.iter().any(|(_, f)| !f.transient);
            // Two passes in a row without a reply from the server end the passes early.
            idle =
                if asker.session.calls().1 > replies_before || recorded_jobs > recorded_before { 0 } else { idle + 1 };
            if failed.is_empty() || fatal || idle >= 2 || passes >= RETRY_PASSES {
                break;
            }
            passes += 1;
            only = Some(failed.iter().map(|(id, _)| id.clone()).collect());
            std::thread::sleep(wait);
            wait = (wait * 2).min(std::time::Duration::from_secs(30));
        }
        // The failure that stopped the others (they say "not asked …") is the one reported.
        let failure =
            failed.iter().find(|(_, f)| !f.reason.starts_with("not asked")).or(failed.first()).map(|(_, f)| f.clone());
        let kind = if args.retry_missing { "retry-missing" } else { "ask" };
        let outcome = match &failure {
            None => "complete".to_string(),
            Some(e) => format!("stopped: {} question(s) not asked after {passes} further pass(es): {e}", failed.len()),
        };
        store::record_pass(&conn, &study.name, spec, kind, &changed, asked, &outcome)?;
        calls.push((spec.name.clone(), asker.session.calls().1 as u64, asker.session.calls().0 as u64));
        if let Some(e) = failure {
            cache.flush();
            if !e.transient {
                return Err(Error::Stopped(format!(
                    "model `{}`: stopped: {e}. {recorded_jobs} of {asked} questions were answered and recorded before it; the rest were not asked, and nothing was recorded for them. Run the same command again to resume: it asks them as if the failure had not happened.",
                    spec.name
                )));
            }
            incomplete.push(format!(
                "model `{}`: {} of {asked} questions missing after {passes} further pass(es) (last failure: {e})",
                spec.name,
                failed.len()
            ));
            continue;
        }
        report.push(output::model_profile(&conn, &study, spec)?);
    }
    if !incomplete.is_empty() {
        return Err(Error::Stopped(format!(
            "{} — rerun the same command to retry them: they were not recorded, and each reply already received is cached. No profile was written.",
            incomplete.join("; ")
        )));
    }
    output::write_outputs(&args.out, &study, &report)?;
    Ok(ProfileOutcome::Written { profiles: report, calls, out: args.out })
}

/// The item files of the study's questionnaire tasks: the shipped IPIP-50 adaptations from the
/// assets (hashed into the inputs lock), and the lab's pairs file the study names, whose hash is
/// recorded beside the study's inputs (it is the lab's, never frozen by Agora).
fn study_items(
    study_path: &Path,
    study: &ProfileStudy,
    assets: &Path,
    tasks: &[Task],
    inputs: &mut BTreeMap<String, String>,
) -> crate::error::Result<Vec<ItemFile>> {
    let mut out = Vec::new();
    if tasks.iter().any(|t| Task::SHIPPED_QUESTIONNAIRE.contains(t)) {
        let path = assets.join("items").join(format!("{SHIPPED_ITEMS}.ron"));
        out.push(ItemFile::load(&path).map_err(bad)?);
    }
    if let Some(rel) = &study.pair_items {
        let path = study_path.parent().unwrap_or(Path::new(".")).join(rel);
        let file = ItemFile::load(&path).map_err(bad)?;
        if file.kind != ItemKind::Pairs {
            return Err(Error::BadInput(format!(
                "{}: `kind` is {:?}; `pair_items` reads a Pairs file",
                path.display(),
                file.kind
            )));
        }
        if let Some(t) = tasks.iter().find(|t| t.user_items() && !file.measures().contains(t)) {
            return Err(Error::BadInput(format!("{}: holds no items of `{t}`, which the study names", path.display())));
        }
        let bytes =
            std::fs::read(&path).map_err(|e| Error::BadInput(format!("{}: cannot be read: {e}", path.display())))?;
        inputs.insert(format!("items:{}", file.name), crate::tasks::versions::sha256_hex(&bytes));
        out.push(file);
    }
    Ok(out)
}

/// Keeps the jobs `only` names, when it names any (a later pass).
fn keep_only<T>(jobs: &mut Vec<run::Job<T>>, only: Option<&HashSet<String>>) {
    if let Some(only) = only {
        jobs.retain(|(id, _)| only.contains(id));
    }
}

fn dry_run(
    study: &ProfileStudy,
    models: &[ModelSpec],
    plans: &[(Task, TaskPlan)],
    loaded: &[Loaded],
    cells: &Cells,
) -> DryRun {
    let mut per_category: BTreeMap<char, usize> = BTreeMap::new();
    for (task, plan) in plans {
        *per_category.entry(task.category()).or_default() += plan.calls();
    }
    let general_robustness = if study.general_robustness { 23 * study.gr_responses as usize } else { 0 };
    let total: usize = per_category.values().sum::<usize>() + general_robustness;
    DryRun {
        study: study.name.clone(),
        tasks: plans.len(),
        responses: study.responses,
        reduced_protocol: study.reduced_protocol,
        versions: loaded.iter().map(|l| (l.task.name().to_string(), l.sha256.clone())).collect(),
        per_category,
        general_robustness,
        total,
        models: models.iter().map(|m| (m.name.clone(), m.served_id.clone(), m.max_attempts)).collect(),
        texts: distinct_texts(plans, loaded, cells),
        per_task: plans.iter().map(|(t, p)| (t.name().to_string(), p.calls())).collect(),
    }
}

/// The distinct question texts a plan asks (rendered once per input and presentation) and
/// their bytes; B4 counts its first round only.
fn distinct_texts(plans: &[(Task, TaskPlan)], loaded: &[Loaded], cells: &Cells) -> (usize, usize) {
    let mut seen = std::collections::HashSet::new();
    let mut bytes = 0;
    for (task, plan) in plans {
        let Some(l) = loaded.iter().find(|l| l.task == *task) else { continue };
        let mut add = |text: String| {
            if seen.insert(crate::tasks::versions::sha256_hex(text.as_bytes())) {
                bytes += text.len();
            }
        };
        for s in plan.slots.iter().filter(|s| s.slot == 0) {
            let v = &l.versions[s.version];
            if let Ok(r) = render(&s.input, v, &presentation(s.presentation, cells)) {
                add(r.text);
            }
        }
        for e in plan.episodes.iter().filter(|e| e.episode == 0) {
            let v = &l.versions[e.version];
            if let Ok(r) = render(&b4_input(e.level, 1, &[]), v, &presentation(None, cells)) {
                add(r.text);
            }
        }
    }
    (seen.len(), bytes)
}
