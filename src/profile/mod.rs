//! `agora profile`: each model's individual baseline in isolated decisions (seed 000): the
//! tasks of categories A–D under eleven frozen question versions and their scheduled
//! presentation checks, and General Robustness's 23 conditions; the records go into the
//! store's `profile_*` tables, the ranges into `profile.json`, `profile.md` and `profile.csv`.
//!
//! The study file (`ProfileStudy(...)`) names the models (declared in a models file), the tasks
//! (all seventeen by default), the master seed and whether General Robustness runs. Fifteen
//! responses per input and thirty per GR condition are the seed's; fewer are an explicit
//! opt-in (`reduced_protocol: true`), marked in every output.

mod ask;
mod plan;
mod store;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::Arc;

use agora_agents::llm::{LlmClient, ModelSpec};
use agora_analysis::profile::gr_binary::{binary_comparison, BinaryCounts};
use agora_analysis::profile::gr_open::{derive_seed, open_comparison};
use agora_analysis::profile::rows::{profile_table, ProfileLine, ResponseRow};
use agora_engine::store::SqliteCache;
use agora_engine::Store;
use agora_environments::profile::gr::{Format, Wording};
use agora_environments::profile::render::render;
use agora_environments::profile::schedule::Schedules;
use agora_environments::profile::tasks::{b4_input, b4_opponent, b4_round, score, Decoded, Input, Round};
use agora_environments::profile::versions::{self, Loaded};
use agora_environments::profile::{ProfileInputError, Task, VERSION_IDS};
use anyhow::Context as _;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::BadInput;
use ask::{Answer, Ask, Asked, Asker};
use plan::{presentation, presentation_name, task_plan, Cells, Episode, Slot, TaskPlan, B4_CHECK_ROUNDS, B4_ROUNDS};

pub use plan::REFERENCE;

/// Arguments of `agora profile`.
#[derive(clap::Args, Debug)]
pub struct ProfileArgs {
    /// The profile study file (`ProfileStudy(...)`).
    study: Option<PathBuf>,
    /// Store file.
    #[arg(long, default_value = crate::DEFAULT_STORE)]
    store: PathBuf,
    /// Models file (`Models(version: 1, models: [...])`); default: the study's include_models.
    #[arg(long)]
    models: Option<PathBuf>,
    /// Print the calls per model and category, and the store size to expect, without asking.
    #[arg(long)]
    dry_run: bool,
    /// Answer from the store's reply cache only; a missing reply is an error.
    #[arg(long)]
    replay: bool,
    /// Output directory for profile.json, profile.md and profile.csv.
    #[arg(long, default_value = "profile")]
    out: PathBuf,
    /// Directory holding versions/, versions.lock, schedules.ron and gr.ron (default: the
    /// checkout's assets/profile).
    #[arg(long)]
    assets: Option<PathBuf>,
    /// Check every version file and write its hash to versions.lock (review the versions
    /// first: a frozen file is what a study runs).
    #[arg(long)]
    freeze: bool,
}

/// A profile study file.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, rename = "ProfileStudy")]
struct ProfileStudy {
    version: u32,
    name: String,
    master_seed: u64,
    #[serde(default)]
    include_models: Option<String>,
    /// Model names; empty = every declared model.
    #[serde(default)]
    models: Vec<String>,
    /// Task names; empty = all seventeen.
    #[serde(default)]
    tasks: Vec<String>,
    #[serde(default = "fifteen")]
    responses: u32,
    #[serde(default = "yes")]
    general_robustness: bool,
    #[serde(default = "thirty")]
    gr_responses: u32,
    /// Opt-in to fewer responses than the seed's 15 and 30 (tests, smoke runs).
    #[serde(default)]
    reduced_protocol: bool,
}

fn fifteen() -> u32 {
    15
}
fn thirty() -> u32 {
    agora_environments::profile::gr::RESPONSES as u32
}
fn yes() -> bool {
    true
}

fn bad(e: ProfileInputError) -> anyhow::Error {
    BadInput(e.to_string()).into()
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
        Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/profile")
    }
}

/// The society prompts' cell files (`scenarios/cells`) whose presentation checks the profile reuses.
fn cells_dir() -> PathBuf {
    let here = Path::new("scenarios/cells");
    if here.join("task-id.ron").exists() {
        here.to_path_buf()
    } else {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/cells")
    }
}

impl ProfileStudy {
    fn load(path: &Path) -> anyhow::Result<ProfileStudy> {
        let text =
            std::fs::read_to_string(path).map_err(|e| BadInput(format!("{}: cannot be read: {e}", path.display())))?;
        let s: ProfileStudy = ron::Options::default()
            .from_str(&text)
            .map_err(|e| BadInput(format!("{}: line {}: {}", path.display(), e.span.start.line, e.code)))?;
        let field = |f: &str, why: String| BadInput(format!("{}: field `{f}`: {why}", path.display()));
        if s.version != 1 {
            return Err(field("version", format!("is {}, this build reads 1", s.version)).into());
        }
        if s.name.trim().is_empty() {
            return Err(field("name", "is empty".into()).into());
        }
        if s.responses == 0 || s.gr_responses == 0 {
            return Err(field("responses", "must be at least 1".into()).into());
        }
        if (s.responses != 15 || s.gr_responses != thirty()) && !s.reduced_protocol {
            return Err(field(
                "responses",
                format!(
                    "{} and {} differ from seed 000's 15 per input and 30 per GR condition; set `reduced_protocol: true` to run a reduced study on purpose",
                    s.responses, s.gr_responses
                ),
            )
            .into());
        }
        for (i, t) in s.tasks.iter().enumerate() {
            if Task::from_name(t).is_none() {
                let names: Vec<&str> = Task::ALL.iter().map(|t| t.name()).collect();
                return Err(field(
                    &format!("tasks[{i}]"),
                    format!("`{t}` is not a task; the tasks are {}", names.join(", ")),
                )
                .into());
            }
        }
        Ok(s)
    }

    fn tasks(&self) -> Vec<Task> {
        if self.tasks.is_empty() {
            Task::ALL.to_vec()
        } else {
            Task::ALL.into_iter().filter(|t| self.tasks.iter().any(|n| n == t.name())).collect()
        }
    }
}

fn load_models(study_path: &Path, study: &ProfileStudy, models: Option<&Path>) -> anyhow::Result<Vec<ModelSpec>> {
    let path = match (models, &study.include_models) {
        (Some(p), _) => p.to_path_buf(),
        (None, Some(inc)) => study_path.parent().unwrap_or(Path::new(".")).join(inc),
        (None, None) => {
            return Err(BadInput(format!(
                "{}: no models: give --models FILE or `include_models`",
                study_path.display()
            ))
            .into())
        }
    };
    let file = agora_scenarios::ModelsFile::load(&path)?;
    let mut out = Vec::new();
    for m in &file.models {
        m.validate().map_err(|e| BadInput(format!("models file {}: {e}", path.display())))?;
    }
    if study.models.is_empty() {
        out = file.models.clone();
    } else {
        for (i, name) in study.models.iter().enumerate() {
            let m = file.models.iter().find(|m| &m.name == name).ok_or_else(|| {
                BadInput(format!(
                    "{}: field `models[{i}]`: `{name}` is not declared in {}",
                    study_path.display(),
                    path.display()
                ))
            })?;
            out.push(m.clone());
        }
    }
    if out.is_empty() {
        return Err(BadInput(format!("models file {} declares no model", path.display())).into());
    }
    Ok(out)
}

/// `agora profile`.
pub fn main(args: ProfileArgs) -> anyhow::Result<()> {
    let assets = assets_dir(args.assets.as_deref());
    let versions_dir = assets.join("versions");
    let lock = assets.join("versions.lock");
    if args.freeze {
        let l = versions::freeze(&versions_dir, &lock).map_err(bad)?;
        for (task, sha) in &l {
            println!("{task}: {sha}");
        }
        println!("froze {} version files into {}", l.len(), lock.display());
        return Ok(());
    }
    let study_path = args.study.as_deref().ok_or_else(|| BadInput("give a profile study file (or --freeze)".into()))?;
    let study = ProfileStudy::load(study_path)?;
    let tasks = study.tasks();
    let schedules = Schedules::load(&assets.join("schedules.ron")).map_err(bad)?;
    let loaded = versions::load(&versions_dir, &lock, &tasks).map_err(bad)?;
    let wording = Wording::load(&assets.join("gr.ron")).map_err(bad)?;
    let cells = Cells::load(&cells_dir())?;
    let models = load_models(study_path, &study, args.models.as_deref())?;
    let plans: Vec<(Task, TaskPlan)> = tasks.iter().map(|t| (*t, task_plan(*t, &schedules, study.responses))).collect();
    if args.dry_run {
        print_dry_run(&study, &models, &plans, &loaded, &cells);
        return Ok(());
    }
    drop(Store::open(&args.store)?);
    let mut conn =
        rusqlite::Connection::open(&args.store).with_context(|| format!("opening {}", args.store.display()))?;
    conn.busy_timeout(std::time::Duration::from_secs(60))?;
    store::create(&conn).with_context(|| format!("creating the profile tables in {}", args.store.display()))?;
    store::record_study(&conn, &study.name, study.master_seed, study.responses, study.gr_responses, &loaded)
        .map_err(|e| BadInput(format!("{}: {e}", args.store.display())))?;
    let cache: Arc<SqliteCache> = Arc::new(SqliteCache::open(&args.store)?);
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().context("starting the runtime")?;
    let mut report = Vec::new();
    for spec in &models {
        let key = crate::audit_llm::api_key(spec, args.replay)?;
        let client = if args.replay { None } else { Some(LlmClient::new(spec.clone(), key).map_err(BadInput)?) };
        if let Some(c) = &client {
            rt.block_on(c.check_reachable())?;
        }
        let asker = Arc::new(Asker {
            spec: spec.clone(),
            client,
            cache: cache.clone(),
            master_seed: study.master_seed,
            from_cache: Default::default(),
            sent: Default::default(),
        });
        let ctx = Ctx {
            study: study.name.clone(),
            asker: asker.clone(),
            loaded: Arc::new(loaded.clone()),
            cells: cells.clone(),
        };
        for (task, plan) in &plans {
            let done = store::done_keys(&conn, &study.name, &spec.name, task.name())?;
            let rows = rt.block_on(run_task(&ctx, plan, &done))?;
            store::write_rows(&mut conn, &study.name, spec, &rows)?;
        }
        if study.general_robustness {
            let done = store::done_gr(&conn, &study.name, &spec.name)?;
            let rows = rt.block_on(run_gr(&ctx, &wording, study.gr_responses, &done))?;
            store::write_gr(&mut conn, &study.name, spec, &rows)?;
        }
        eprintln!(
            "{}: {} requests sent, {} replies from the cache",
            spec.name,
            asker.sent.load(Ordering::Relaxed),
            asker.from_cache.load(Ordering::Relaxed)
        );
        report.push(model_profile(&conn, &study, spec)?);
    }
    write_outputs(&args.out, &study, &report)?;
    for m in &report {
        println!("{}", m.markdown());
    }
    println!("profile written to {}", args.out.display());
    Ok(())
}

fn print_dry_run(
    study: &ProfileStudy,
    models: &[ModelSpec],
    plans: &[(Task, TaskPlan)],
    loaded: &[Loaded],
    cells: &Cells,
) {
    println!(
        "profile study `{}`: {} tasks, {} responses per input{}",
        study.name,
        plans.len(),
        study.responses,
        if study.reduced_protocol { " (reduced protocol, opted in)" } else { "" }
    );
    for l in loaded {
        println!("  versions {}: sha256 {}", l.task.name(), l.sha256);
    }
    let mut per_category: BTreeMap<char, usize> = BTreeMap::new();
    for (task, plan) in plans {
        *per_category.entry(task.category()).or_default() += plan.calls();
    }
    let gr = if study.general_robustness { 23 * study.gr_responses as usize } else { 0 };
    let total: usize = per_category.values().sum::<usize>() + gr;
    let texts = distinct_texts(plans, loaded, cells);
    for m in models {
        println!("model {} ({}): calls at the first attempt", m.name, m.served_id);
        for (c, n) in &per_category {
            println!("  category {c}: {n}");
        }
        println!("  general robustness: {gr}");
        println!("  total: {total} (up to {} with every retry)", total * m.max_attempts.max(1) as usize);
        println!(
            "  store: {total} response rows and at least as many attempt rows (raw replies); {} distinct question texts, {:.1} MB, stored once each (B4's later rounds, which depend on the episode, not counted)",
            texts.0, texts.1 as f64 / 1e6
        );
    }
    for (task, plan) in plans {
        println!("  {}: {} calls", task.name(), plan.calls());
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
            if seen.insert(agora_environments::profile::versions::sha256_hex(text.as_bytes())) {
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

/// What every question of one model shares.
struct Ctx {
    study: String,
    cells: Cells,
    asker: Arc<Asker>,
    loaded: Arc<Vec<Loaded>>,
}

impl Ctx {
    fn version(&self, task: Task, v: usize) -> &agora_environments::profile::versions::Version {
        let l = self.loaded.iter().find(|l| l.task == task).expect("every planned task is loaded");
        &l.versions[v]
    }
}

/// One recorded slot.
#[derive(Clone, Debug)]
pub struct Recorded {
    /// The analysis row.
    pub row: ResponseRow,
    /// The question as asked.
    pub prompt: String,
    /// The attempts.
    pub asked: Asked,
}

fn slot_key(
    study: &str,
    task: Task,
    version: usize,
    pres: &str,
    input: &Input,
    direction: &str,
    round: u32,
    slot: u32,
) -> String {
    format!(
        "profile/{study}/{}/{}/{pres}/{}/{}/{}/{direction}/{round}/{slot}",
        task.name(),
        VERSION_IDS[version],
        input.level.name(),
        input.point,
        input.branch
    )
}

/// Renders, asks and decodes one input.
async fn ask_one(
    ctx: &Ctx,
    task: Task,
    version: usize,
    op: Option<agora_environments::profile::Operation>,
    input: &Input,
    key: &str,
) -> Result<(ResponseRow, String, Asked, Option<Decoded>), String> {
    let v = ctx.version(task, version);
    let p = presentation(op, &ctx.cells);
    let r = render(input, v, &p).map_err(|e| format!("{key}: {e}"))?;
    let ask = match r.max {
        Some(max) => Ask::Amount { max },
        None => Ask::Choice { labels: r.shown.iter().map(|(l, _)| l.clone()).collect() },
    };
    let asked = ctx.asker.ask(&r.text, &r.field, &ask, key).await?;
    let decoded = asked.answer.and_then(|a| match a {
        Answer::Label(i) => r.decode_choice(i),
        Answer::Amount(x) => r.decode_amount(x),
    });
    let row = ResponseRow {
        task: task.name().into(),
        version: VERSION_IDS[version].into(),
        presentation: presentation_name(op).into(),
        level: input.level.name().into(),
        point: input.point.clone(),
        branch: input.branch.clone(),
        direction: String::new(),
        round: 0,
        slot: 0,
        scored: input.scored,
        value: decoded.as_ref().map(Decoded::text),
        score: decoded.as_ref().map(|d| score(input, d)),
    };
    Ok((row, r.text, asked, decoded))
}

async fn run_slot(ctx: Arc<Ctx>, s: Slot) -> Result<Recorded, String> {
    let pres = presentation_name(s.presentation);
    let key = slot_key(&ctx.study, s.task, s.version, pres, &s.input, "", 0, s.slot);
    let (mut row, prompt, asked, _) = ask_one(&ctx, s.task, s.version, s.presentation, &s.input, &key).await?;
    row.slot = s.slot;
    Ok(Recorded { row, prompt, asked })
}

/// One live B4 episode: twelve rounds against the scripted opponent, with the check side
/// queries at rounds 1, 8 and 12 (they see the same history and do not advance the episode). A
/// round without a valid answer ends the episode: its later rounds are recorded missing.
async fn run_episode(ctx: Arc<Ctx>, e: Episode) -> Result<Vec<Recorded>, String> {
    let mut out = Vec::new();
    let mut history: Vec<Round> = Vec::new();
    let mut ended = false;
    for round in 1..=B4_ROUNDS {
        let input = b4_input(e.level, round, &history);
        let opponent = b4_opponent(e.direction, round);
        let mut ops: Vec<Option<agora_environments::profile::Operation>> = vec![None];
        if B4_CHECK_ROUNDS.contains(&round) {
            ops.extend(e.checks.iter().map(|o| Some(*o)));
        }
        let mut own = None;
        for op in ops {
            let pres = presentation_name(op);
            let key = slot_key(&ctx.study, Task::B4, e.version, pres, &input, e.direction, round, e.episode);
            let rec = if ended {
                let row = ResponseRow {
                    task: "b4".into(),
                    version: VERSION_IDS[e.version].into(),
                    presentation: pres.into(),
                    level: e.level.name().into(),
                    point: input.point.clone(),
                    branch: String::new(),
                    direction: String::new(),
                    round,
                    slot: e.episode,
                    scored: true,
                    value: None,
                    score: None,
                };
                Recorded { row, prompt: String::new(), asked: Asked { answer: None, attempts: Vec::new() } }
            } else {
                let (row, prompt, asked, decoded) = ask_one(&ctx, Task::B4, e.version, op, &input, &key).await?;
                if op.is_none() {
                    own = decoded.as_ref().and_then(|d| match d {
                        Decoded::Option(k) => Some(*k),
                        Decoded::Amount(_) => None,
                    });
                }
                Recorded { row, prompt, asked }
            };
            let mut rec = rec;
            rec.row.direction = e.direction.into();
            rec.row.round = round;
            rec.row.slot = e.episode;
            rec.row.score = rec.row.value.as_ref().map(|v| if v == opponent { 100.0 } else { 0.0 });
            out.push(rec);
        }
        match own {
            Some(k) if !ended => history.push(b4_round(e.level, round, k, opponent)),
            _ => ended = true,
        }
    }
    Ok(out)
}

async fn run_task(
    ctx: &Ctx,
    plan: &TaskPlan,
    done: &std::collections::HashSet<String>,
) -> anyhow::Result<Vec<Recorded>> {
    let ctx = Arc::new(Ctx {
        study: ctx.study.clone(),
        asker: ctx.asker.clone(),
        loaded: ctx.loaded.clone(),
        cells: ctx.cells.clone(),
    });
    let limit =
        Arc::new(tokio::sync::Semaphore::new((ctx.asker.spec.concurrency * ctx.asker.spec.endpoints.len()).max(1) * 2));
    let mut set = tokio::task::JoinSet::new();
    let mut index = 0usize;
    for s in &plan.slots {
        let key = slot_key(&ctx.study, s.task, s.version, presentation_name(s.presentation), &s.input, "", 0, s.slot);
        if done.contains(&key) {
            continue;
        }
        let permit = limit.clone().acquire_owned().await.context("the runtime closed")?;
        let (c, s) = (ctx.clone(), s.clone());
        index += 1;
        set.spawn(async move {
            let r = run_slot(c, s).await.map(|r| vec![r]);
            drop(permit);
            (index, r)
        });
    }
    for e in &plan.episodes {
        let first = b4_input(e.level, 1, &[]);
        let key = slot_key(&ctx.study, Task::B4, e.version, REFERENCE, &first, e.direction, 1, e.episode);
        if done.contains(&key) {
            continue;
        }
        let permit = limit.clone().acquire_owned().await.context("the runtime closed")?;
        let (c, e) = (ctx.clone(), e.clone());
        index += 1;
        set.spawn(async move {
            let r = run_episode(c, e).await;
            drop(permit);
            (index, r)
        });
    }
    let mut results = Vec::new();
    while let Some(joined) = set.join_next().await {
        let (i, r) = joined.context("a profile question panicked")?;
        results.push((i, r.map_err(|e| anyhow::anyhow!(e))?));
    }
    // Records in plan order, whatever order the answers came in.
    results.sort_by_key(|(i, _)| *i);
    Ok(results.into_iter().flat_map(|(_, r)| r).collect())
}

/// One General Robustness slot's record.
#[derive(Clone, Debug)]
pub struct GrRecorded {
    /// The condition's identifier.
    pub condition: &'static str,
    /// `open` or `binary`.
    pub format: &'static str,
    /// `reference`, `core` or `secondary`.
    pub class: &'static str,
    /// 0-based slot.
    pub slot: u32,
    /// The economic value: dollars given (open) or `equal` / `self-only` (binary).
    pub value: Option<String>,
    /// Whether the adopted answer matches the requested format exactly.
    pub strict: bool,
    /// The question.
    pub prompt: String,
    /// The attempts.
    pub asked: Asked,
}

async fn run_gr(
    ctx: &Ctx,
    wording: &Wording,
    responses: u32,
    done: &std::collections::HashSet<String>,
) -> anyhow::Result<Vec<GrRecorded>> {
    let conditions = wording.conditions().map_err(|(f, r)| BadInput(format!("gr.ron: field `{f}`: {r}")))?;
    let limit =
        Arc::new(tokio::sync::Semaphore::new((ctx.asker.spec.concurrency * ctx.asker.spec.endpoints.len()).max(1) * 2));
    let mut set = tokio::task::JoinSet::new();
    let mut index = 0usize;
    for c in conditions {
        for slot in 0..responses {
            let key = format!("profile/{}/gr/{}/{slot}", ctx.study, c.id);
            if done.contains(&key) {
                continue;
            }
            let permit = limit.clone().acquire_owned().await.context("the runtime closed")?;
            let asker = ctx.asker.clone();
            let c = c.clone();
            index += 1;
            set.spawn(async move {
                let ask = match c.format {
                    Format::Open => Ask::Amount { max: agora_environments::profile::gr::OPEN_MAX },
                    Format::Binary => Ask::Choice { labels: c.shown.iter().map(|(l, _)| l.clone()).collect() },
                };
                let r = asker.ask(&c.text, &c.field, &ask, &key).await.map(|asked| {
                    let value = asked.answer.and_then(|a| match (a, c.format) {
                        (Answer::Amount(x), Format::Open) => Some(x.to_string()),
                        (Answer::Label(i), Format::Binary) => c.shown.get(i).map(|(_, m)| (*m).to_string()),
                        _ => None,
                    });
                    let strict =
                        value.is_some() && asked.attempts.last().is_some_and(|a| ask.strict(&a.reply, &c.field));
                    GrRecorded {
                        condition: c.id,
                        format: if c.format == Format::Open { "open" } else { "binary" },
                        class: c.class,
                        slot,
                        value,
                        strict,
                        prompt: c.text.clone(),
                        asked,
                    }
                });
                drop(permit);
                (index, r)
            });
        }
    }
    let mut results = Vec::new();
    while let Some(joined) = set.join_next().await {
        let (i, r) = joined.context("a GR question panicked")?;
        results.push((i, r.map_err(|e| anyhow::anyhow!(e))?));
    }
    results.sort_by_key(|(i, _)| *i);
    Ok(results.into_iter().map(|(_, r)| r).collect())
}

/// One model's profile: the table, and GR's comparisons.
#[derive(Clone, Debug, Serialize)]
pub struct ModelProfile {
    /// The model's name in the study.
    pub model: String,
    /// Its served id.
    pub served_id: String,
    /// Whether the study ran fewer responses than the seed (opted in).
    pub reduced_protocol: bool,
    /// The table.
    pub measures: Vec<ProfileLine>,
    /// General Robustness.
    pub general_robustness: Option<serde_json::Value>,
}

fn fmt_range(r: Option<[f64; 2]>) -> String {
    r.map_or("–".into(), |[a, b]| format!("[{a:.1}, {b:.1}]"))
}

impl ModelProfile {
    /// The table as Markdown.
    pub fn markdown(&self) -> String {
        let mut s = format!(
            "## Profile of {} ({}){}\n\n| measure | centre | inner | outer | coverage | status |\n|---|---|---|---|---|---|\n",
            self.model,
            self.served_id,
            if self.reduced_protocol { " — reduced protocol" } else { "" }
        );
        for l in &self.measures {
            s.push_str(&format!(
                "| {} | {} | {} | {} | {}/{} ref, {}/{} checks | {} |\n",
                l.measure,
                l.centre.map_or("–".into(), |c| format!("{c:.1}")),
                fmt_range(l.inner),
                fmt_range(l.outer),
                l.coverage.reference_valid,
                l.coverage.reference_slots,
                l.coverage.check_valid,
                l.coverage.check_slots,
                l.status
            ));
        }
        if let Some(gr) = &self.general_robustness {
            s.push_str(&format!(
                "\nGeneral Robustness: {} of {} slots usable, {} of {} adopted answers strictly in the requested format.\n",
                gr["usable"], gr["slots"], gr["strict"], gr["usable"]
            ));
        }
        s
    }
}

fn model_profile(conn: &rusqlite::Connection, study: &ProfileStudy, spec: &ModelSpec) -> anyhow::Result<ModelProfile> {
    let rows = store::read_rows(conn, &study.name, &spec.name)?;
    let measures = profile_table(&rows);
    let gr = if study.general_robustness { Some(gr_summary(conn, &study.name, &spec.name)?) } else { None };
    Ok(ModelProfile {
        model: spec.name.clone(),
        served_id: spec.served_id.clone(),
        reduced_protocol: study.reduced_protocol,
        measures,
        general_robustness: gr,
    })
}

/// GR's 21 comparisons of one model (§GR1, §GR2), with usable and strict counts (§GR3).
fn gr_summary(conn: &rusqlite::Connection, study: &str, model: &str) -> anyhow::Result<serde_json::Value> {
    let rows = store::read_gr(conn, study, model)?;
    let mut by: BTreeMap<String, Vec<(String, Option<String>, bool, String)>> = BTreeMap::new();
    for (condition, format, class, value, strict) in &rows {
        by.entry(condition.clone()).or_default().push((format.clone(), value.clone(), *strict, class.clone()));
    }
    let slots = rows.len();
    let usable = rows.iter().filter(|r| r.3.is_some()).count();
    let strict = rows.iter().filter(|r| r.3.is_some() && r.4).count();
    let mut comparisons = Vec::new();
    let values = |id: &str| -> Vec<Option<String>> {
        by.get(id).map(|v| v.iter().map(|x| x.1.clone()).collect()).unwrap_or_default()
    };
    for (id, list) in &by {
        let (format, class) = (&list[0].0, &list[0].3);
        if class == "reference" {
            continue;
        }
        let reference = if format == "open" { "OE-REF" } else { "BI-REF" };
        let (r, c) = (values(reference), values(id));
        let complete =
            r.iter().all(Option::is_some) && c.iter().all(Option::is_some) && !r.is_empty() && r.len() == c.len();
        let result = if !complete {
            json!({"status": format!("unavailable: {} of {} reference and {} of {} check answers usable (GR3 needs every slot)",
                r.iter().flatten().count(), r.len(), c.iter().flatten().count(), c.len())})
        } else if format == "open" {
            let amounts =
                |v: &[Option<String>]| -> Vec<u32> { v.iter().flatten().filter_map(|x| x.parse().ok()).collect() };
            match open_comparison(&amounts(&r), &amounts(&c), 10_000, 0.95, derive_seed(model, id)) {
                Ok(o) => serde_json::to_value(o)?,
                Err(e) => json!({"status": format!("unavailable: {e}")}),
            }
        } else {
            let counts = |v: &[Option<String>]| BinaryCounts {
                equal: v.iter().flatten().filter(|x| *x == "equal").count() as u64,
                self_only: v.iter().flatten().filter(|x| *x == "self-only").count() as u64,
            };
            match binary_comparison(counts(&r), counts(&c), 0.05) {
                Ok(b) => serde_json::to_value(b)?,
                Err(e) => json!({"status": format!("unavailable: {e}")}),
            }
        };
        comparisons.push(json!({"condition": id, "format": format, "class": class, "result": result}));
    }
    Ok(json!({
        "slots": slots,
        "usable": usable,
        "strict": strict,
        "strict_share": if usable > 0 { Some(strict as f64 / usable as f64) } else { None },
        "strict_denominator": usable,
        "comparisons": comparisons,
    }))
}

fn write_outputs(out: &Path, study: &ProfileStudy, models: &[ModelProfile]) -> anyhow::Result<()> {
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    let json =
        json!({"study": study.name, "master_seed": study.master_seed, "responses": study.responses, "models": models});
    std::fs::write(out.join("profile.json"), serde_json::to_string_pretty(&json)?)?;
    let md: String = models.iter().map(ModelProfile::markdown).collect::<Vec<_>>().join("\n");
    std::fs::write(out.join("profile.md"), md)?;
    let mut csv = String::from("model,measure,centre,inner_low,inner_high,outer_low,outer_high,checks,reference_valid,reference_slots,check_valid,check_slots,status\n");
    let num = |x: Option<f64>| x.map_or(String::new(), |v| format!("{v}"));
    for m in models {
        for l in &m.measures {
            csv.push_str(&format!(
                "{},{},{},{},{},{},{},{},{},{},{},{},\"{}\"\n",
                m.model,
                l.measure,
                num(l.centre),
                num(l.inner.map(|r| r[0])),
                num(l.inner.map(|r| r[1])),
                num(l.outer.map(|r| r[0])),
                num(l.outer.map(|r| r[1])),
                l.checks,
                l.coverage.reference_valid,
                l.coverage.reference_slots,
                l.coverage.check_valid,
                l.coverage.check_slots,
                l.status.replace('"', "'")
            ));
        }
    }
    std::fs::write(out.join("profile.csv"), csv)?;
    Ok(())
}

/// Every model's profile table in a store (for the report): (model, served id, lines).
pub fn stored_profiles(conn: &rusqlite::Connection) -> anyhow::Result<Vec<(String, String, Vec<ProfileLine>)>> {
    let mut out = Vec::new();
    for (study, model, served) in store::profiled_models(conn)? {
        let rows = store::read_rows(conn, &study, &model)?;
        out.push((model, served, profile_table(&rows)));
    }
    Ok(out)
}
