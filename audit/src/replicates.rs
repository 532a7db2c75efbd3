//! `agora audit replicates`: the replicate side query (the SUVA audit paper §240.7.4; issue 12 item 6).
//!
//! Within-prompt dependency of the action on the stated values is identified only from
//! repeated identical prompts, and in a society run almost every prompt is unique. This
//! re-asks a seeded sample of stored decision prompts `--m` times each with fresh sampling
//! seeds, advancing no game, and keeps the replies in the store's `audit_replicates` table
//! ([`REPLICATES_SCHEMA`]), which `agora audit` codes and regresses
//! ([`crate::dependency`]).
//!
//! # The sample
//! The population is every terminal decision transcript (status `ok`, or `truncated` with an
//! action; fallbacks have no reply to repeat) of the runs in scope. For each model on its own,
//! a decision's response id `{run_key}:{seat}:{slot}` is ranked by the hex SHA-256 of
//! `{seed}:{response_id}` and the `--sample` smallest are taken (all when fewer): the rule of
//! `agora audit export` ([`labels::sample_ids`]), so a sample does not depend on row order and
//! a larger one extends a smaller. The sample can be aimed: `--environment`, `--cell`,
//! `--variant` and `--role` keep the decisions of those games, cells, conditions and roles (a
//! name the store does not hold is refused, naming what it holds), and `--with-reasoning`
//! keeps the decisions whose original reply `agora audit` found to hold pre-action reasoning,
//! so that no replicate is asked of a prompt whose replies have nothing to code.
//!
//! # The request
//! A transcript's `messages_json` is the request as the policy serialised it (messages,
//! temperature, token budget, seed, answer schema, template arguments), so the original request
//! is read back, rebuilt as the client's request and checked to serialise to the stored text
//! byte for byte; its cache key (model, request, slot `{run_key}/{seat}/{slot}/decision/{attempt}`)
//! is recomputed and looked up in the reply cache. Replicate `j` (0-based) sends the same
//! request with one change: the sampling seed becomes
//! `derive(seed, ["replicate", response_id, j]) mod 2³¹` (the engine's seed derivation), where
//! the original sent a seed at all (a model that does not send seeds sends none, and its
//! replicates differ only by the server's own sampling). Same messages, schema, temperature
//! and token budget: the model's declaration in `--models` supplies only where to send it, and
//! must agree with the store on the served id and on whether a schema is sent.
//!
//! Each reply goes through the reply cache under the key of model, request and slot
//! `{run_key}/{seat}/{slot}/replicate/{seed}/{j}`, so `--replay` answers from the cache only
//! (a miss is an error, no server is called) and writes the same rows byte for byte. The reply
//! is read by the agents' parser against the decision's action space, recovered from the
//! request (its schema, or the answer format the system message shows) and the game's labels
//! in semantic order; the original reply must read back as the stored action under the
//! recovered space, or the prompt is refused. One call per replicate: an unparsable reply is
//! kept as such (no second attempt), and only replicates with an action enter the estimate.
//!
//! # What is written
//! One row per replicate in `audit_replicates` (replacing a row of the same decision, seed and
//! index), all in one transaction after every call has answered: a failure writes nothing
//! (replies already received stay in the cache). Nothing else changes: not `transcripts`,
//! whose rows are hashed into each run's record hash, and no run's records.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::labels;
use crate::segment;
use agora_agents::llm::{
    parse_cut_reply, parse_reply, CachedReply, ChatRequest, Message, ModelSpec, ParseOutcome, Session, StructuredMode,
};
use agora_engine::Store;
use agora_environments::{ActionSpace, EnvSpec, Frame, Variant};
use agora_records::families::audit::replicates as records;
use serde_json::Value;

/// What `agora audit replicates` is asked to do.
#[derive(Clone, Debug)]
pub struct ReplicatesOptions {
    /// Store file (its decision transcripts are sampled; the replicates are added to it).
    pub store: PathBuf,
    /// Models file declaring the audited models (`Models(version: 1, models: [...])`): where
    /// their servers are. Name and served id must match the store's transcripts.
    pub models: PathBuf,
    /// Prompts per model (all of a model's when it has fewer).
    pub sample: usize,
    /// Replicates per prompt (at least 2).
    pub m: usize,
    /// Seed of the sample (decisions ranked by SHA-256 of `{seed}:{response_id}`) and of the
    /// replicates' sampling seeds.
    pub seed: u64,
    /// Only this study's runs.
    pub study: Option<String>,
    /// Only this model (repeatable; default: every model with decisions in scope).
    pub model: Vec<String>,
    /// Only decisions in this environment (repeatable), e.g. `binary-allocation`.
    pub environment: Vec<String>,
    /// Only decisions in this cell (repeatable), e.g. `baseline`, `step-by-step`.
    pub cell: Vec<String>,
    /// Only decisions under this condition (repeatable): C0, C1, C2 or C3.
    pub variant: Vec<String>,
    /// Only decisions of this role (repeatable), e.g. `dictator`.
    pub role: Vec<String>,
    /// Only decisions whose original reply has pre-action reasoning to code, as `agora audit`
    /// found (the store must have been audited): a replicate of a decision without reasoning
    /// has nothing for the dependency estimate to code.
    pub with_reasoning: bool,
    /// Answer from the store's reply cache only; a replicate not cached stops the command with
    /// nothing written.
    pub replay: bool,
}

/// The original request as the policy serialised it ([`ChatRequest`]'s fields, in order).
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct StoredRequest {
    pub(super) messages: Vec<Message>,
    pub(super) temperature: f64,
    pub(super) max_tokens: u32,
    pub(super) seed: Option<u64>,
    pub(super) schema: Option<Value>,
    #[serde(default)]
    pub(super) chat_template_kwargs: Option<Value>,
}

impl StoredRequest {
    fn request(&self, seed: Option<u64>) -> ChatRequest {
        ChatRequest {
            messages: self.messages.clone(),
            temperature: self.temperature,
            max_tokens: self.max_tokens,
            seed,
            schema: self.schema.clone(),
            chat_template_kwargs: self.chat_template_kwargs.clone(),
        }
    }
}

/// Reads a stored request back and rebuilds it as the client's request, checking that the
/// rebuilt request serialises to the stored text byte for byte (so that it is the request that
/// was sent, and hashes to the same cache key).
fn rebuild(messages_json: &str) -> Result<(StoredRequest, ChatRequest), String> {
    let stored: StoredRequest =
        serde_json::from_str(messages_json).map_err(|e| format!("the stored request does not read back: {e}"))?;
    let req = stored.request(stored.seed);
    let again = serde_json::to_string(&req).map_err(|e| e.to_string())?;
    if again != messages_json {
        return Err("the rebuilt request does not serialise to the stored one byte for byte".into());
    }
    Ok((stored, req))
}

/// What the request showed of the decision's action space.
#[derive(Debug, PartialEq)]
pub(super) enum Shown {
    Labels(Vec<String>),
    Amount(i64, i64),
    Allocation(usize, i64),
}

/// The answer field's space from the request's schema, or else from the answer format the
/// system message shows (`"action": "<one of: A, B>"`, `<a whole number from 0 to 20>`,
/// `[<3 whole numbers from 0 to 10, …>]`).
pub(super) fn shown_space(stored: &StoredRequest, field: &str) -> Option<Shown> {
    if let Some(prop) = stored.schema.as_ref().map(|s| &s["properties"][field]).filter(|p| !p.is_null()) {
        if let Some(e) = prop["enum"].as_array() {
            return e.iter().map(|v| v.as_str().map(str::to_string)).collect::<Option<Vec<_>>>().map(Shown::Labels);
        }
        return match prop["type"].as_str()? {
            "integer" => Some(Shown::Amount(prop["minimum"].as_i64()?, prop["maximum"].as_i64()?)),
            "array" => Some(Shown::Allocation(
                usize::try_from(prop["minItems"].as_u64()?).ok()?,
                prop["items"]["maximum"].as_i64()?,
            )),
            _ => None,
        };
    }
    let system = &stored.messages.first()?.content;
    let at = system.rfind(&format!("\"{field}\": "))? + field.len() + 4;
    let rest = &system[at..];
    if let Some(r) = rest.strip_prefix("\"<one of: ") {
        let labels = &r[..r.find(">\"")?];
        return Some(Shown::Labels(labels.split(", ").map(str::to_string).collect()));
    }
    if let Some(r) = rest.strip_prefix("<a whole number from ") {
        let (min, r) = r.split_once(" to ")?;
        return Some(Shown::Amount(min.parse().ok()?, r[..r.find('>')?].parse().ok()?));
    }
    let r = rest.strip_prefix("[<")?;
    let (targets, r) = r.split_once(" whole numbers from 0 to ")?;
    Some(Shown::Allocation(targets.parse().ok()?, r[..r.find(',')?].parse().ok()?))
}

/// The decision's action space in semantic order: amounts as shown; for a choice, the game's
/// labels for the variant (or a framing's, where the shown labels are the framed ones), cut to
/// as many as were shown, which must be the shown labels in some order.
pub(super) fn semantic_space(shown: Shown, env: &EnvSpec, variant: Variant) -> Option<ActionSpace> {
    match shown {
        Shown::Amount(min, max) => Some(ActionSpace::Amount { min, max }),
        Shown::Allocation(targets, max_each) => Some(ActionSpace::Allocation { targets, max_each }),
        Shown::Labels(labels) => {
            let game = env.game();
            let mut candidates: Vec<Vec<String>> = vec![game.wording(variant).labels.to_vec()];
            for frame in [Frame::Moral, Frame::Risk] {
                if let Some(f) = game.framing(variant, frame) {
                    candidates.push(f.labels.iter().map(|l| l.to_string()).collect());
                }
            }
            let wanted: BTreeSet<&String> = labels.iter().collect();
            candidates.into_iter().find_map(|c| {
                let head = c.get(..labels.len())?;
                (head.iter().collect::<BTreeSet<_>>() == wanted && wanted.len() == labels.len())
                    .then(|| ActionSpace::Choice { labels: head.to_vec().into() })
            })
        }
    }
}

/// A reply read as the policy reads it: (status, action, reason, detail).
fn read_reply(
    reply: &CachedReply,
    space: &ActionSpace,
    field: &str,
) -> (String, Option<String>, Option<String>, String) {
    let cut = reply.truncated();
    let outcome =
        if cut { parse_cut_reply(&reply.content, space, field) } else { parse_reply(&reply.content, space, field) };
    let status = if cut { "truncated".to_string() } else { outcome.status().to_string() };
    match outcome {
        ParseOutcome::Parsed { action, reason } => {
            let detail = if cut {
                "cut at the token limit after the answer was complete: the decision stands".to_string()
            } else {
                String::new()
            };
            (status, Some(action.encode()), reason, detail)
        }
        ParseOutcome::Illegal(d) if cut => {
            (status, None, None, format!("cut at the token limit; the answer was complete but illegal: {d}"))
        }
        ParseOutcome::Unparsable(d) | ParseOutcome::Illegal(d) | ParseOutcome::Truncated(d) => (status, None, None, d),
    }
}

/// A sampled decision, with what its replicates need.
struct Prompt {
    run_id: i64,
    run_key: String,
    seat: i64,
    slot: i64,
    attempt: i64,
    response_id: String,
    model: String,
    served_id: String,
    round: i64,
    role: String,
    stored: StoredRequest,
    original_key: String,
    answer_field: String,
    space: ActionSpace,
}

// A decision transcript as read.
use agora_records::families::audit::replicates::SampledDecision as Row;

/// Everything a sampled decision's replicates need, checked: the request rebuilt byte for byte,
/// the action space recovered and the original reply reading back as the stored action.
fn prepare(row: Row) -> Result<Prompt> {
    let response_id = labels::response_id(&row.run_key, row.seat, row.slot);
    let fail = |message: String| Error::Decision { decision: response_id.clone(), model: row.model.clone(), message };
    let (stored, _) = rebuild(&row.messages_json).map_err(fail)?;
    let spec: Value = serde_json::from_str(&row.spec_json).map_err(|e| fail(format!("run specification: {e}")))?;
    let env: EnvSpec = serde_json::from_value(spec["environment"].clone())
        .map_err(|e| fail(format!("run specification's environment: {e}")))?;
    let variant = Variant::ALL
        .into_iter()
        .find(|v| v.as_str() == row.variant)
        .ok_or_else(|| fail(format!("unknown variant `{}`", row.variant)))?;
    let answer_field = segment::asked_answer_field(&row.messages_json, &row.spec_json);
    let space =
        shown_space(&stored, &answer_field).and_then(|s| semantic_space(s, &env, variant)).ok_or_else(|| {
            fail(format!("cannot recover the action space of the `{answer_field}` field from the request"))
        })?;
    let original = CachedReply {
        content: row.raw_reply.clone(),
        prompt_tokens: None,
        completion_tokens: None,
        endpoint: String::new(),
        latency_ms: 0.0,
        finish_reason: (row.parse_status == "truncated").then(|| "length".to_string()),
    };
    let (_, action, _, _) = read_reply(&original, &space, &answer_field);
    if action.as_deref() != Some(row.action.as_str()) {
        return Err(fail(format!(
            "the original reply reads as {} under the recovered action space, the store holds {}",
            action.as_deref().unwrap_or("no action"),
            row.action
        )));
    }
    let original_key = Session::key_of(
        &row.model,
        &row.served_id,
        &row.messages_json,
        &format!("{}/{}/{}/decision/{}", row.run_key, row.seat, row.slot, row.attempt),
    );
    Ok(Prompt {
        run_id: row.run_id,
        run_key: row.run_key,
        seat: row.seat,
        slot: row.slot,
        attempt: row.attempt,
        response_id,
        model: row.model,
        served_id: row.served_id,
        round: row.round,
        role: row.role,
        stored,
        original_key,
        answer_field,
        space,
    })
}

/// One replicate as asked and answered.
struct Asked {
    prompt: usize,
    replicate: usize,
    seed: Option<u64>,
    request_json: String,
    key: String,
    reply: CachedReply,
    cached: bool,
}

/// The sample of `agora audit replicates`: the prompts, each checked, and the declarations of
/// their models.
struct Sample {
    prompts: Vec<Prompt>,
    specs: BTreeMap<String, ModelSpec>,
    /// Whether each prompt's original reply is in the reply cache.
    originals_cached: Vec<bool>,
}

/// Draws the sample (every input checked first): the decision transcripts in scope, aimed by
/// the filters, then per model the `--sample` ranked first, each prompt rebuilt and checked
/// against its model's declaration.
fn sample(args: &ReplicatesOptions, store: &Store) -> Result<Sample> {
    let declared = agora_scenarios::ModelsFile::load(&args.models)
        .map_err(|e| Error::BadInput(format!("--models {}: {e}", args.models.display())))?;
    let conn = store.connection();
    let sql = Error::sql(store.path());
    if let Some(s) = &args.study {
        let n = agora_records::families::audit::reads::study_runs(conn, s).map_err(&sql)?;
        if n == 0 {
            return Err(Error::BadInput(format!("--study: store {} holds no study `{s}`", args.store.display())));
        }
    }
    let mut rows = records::decisions(conn, args.study.as_deref(), agora_agents::HUMAN_ENDPOINT).map_err(&sql)?;
    // The sample's aim: each filter must name something the store holds, or it is refused.
    type Filter<'a> = (&'a str, &'a Vec<String>, fn(&Row) -> &str);
    let filters: [Filter<'_>; 4] = [
        ("--environment", &args.environment, |r| &r.environment),
        ("--cell", &args.cell, |r| &r.cell),
        ("--variant", &args.variant, |r| &r.variant),
        ("--role", &args.role, |r| &r.role),
    ];
    for (flag, wanted, field) in filters {
        if wanted.is_empty() {
            continue;
        }
        let held: BTreeSet<&str> = rows.iter().map(field).collect();
        if let Some(w) = wanted.iter().find(|w| !held.contains(w.as_str())) {
            return Err(Error::BadInput(format!(
                "{flag} `{w}`: no decision transcript in scope has it (the store has: {})",
                held.into_iter().collect::<Vec<_>>().join(", ")
            )));
        }
        rows.retain(|r| wanted.iter().any(|w| w == field(r)));
    }
    if args.with_reasoning {
        if !rows.is_empty() && rows.iter().all(|r| r.reasoning.is_none()) {
            return Err(Error::BadInput(format!(
                "--with-reasoning: store {} has not been audited (run `agora audit` first)",
                args.store.display()
            )));
        }
        rows.retain(|r| r.reasoning == Some(true));
    }
    let mut by_model: BTreeMap<String, Vec<Row>> = BTreeMap::new();
    for r in rows {
        by_model.entry(r.model.clone()).or_default().push(r);
    }
    let in_store: Vec<String> = by_model.keys().cloned().collect();
    for m in &args.model {
        if !by_model.contains_key(m) {
            return Err(Error::BadInput(format!(
                "--model `{m}`: the store holds no decision transcript of it in scope (models: {})",
                if in_store.is_empty() { "none".to_string() } else { in_store.join(", ") }
            )));
        }
    }
    if !args.model.is_empty() {
        by_model.retain(|m, _| args.model.contains(m));
    }
    if by_model.is_empty() {
        return Err(Error::BadInput(format!(
            "store {}: no decision transcript with an action{} to replicate",
            args.store.display(),
            args.study.as_ref().map(|s| format!(" in study `{s}`")).unwrap_or_default()
        )));
    }
    let mut specs: BTreeMap<String, ModelSpec> = BTreeMap::new();
    for m in by_model.keys() {
        let spec = declared.models.iter().find(|s| s.name == *m).ok_or_else(|| {
            Error::BadInput(format!(
                "--models {}: no model `{m}` is declared, and the store's decisions to replicate are by it (declared: {})",
                args.models.display(),
                declared.models.iter().map(|s| s.name.as_str()).collect::<Vec<_>>().join(", ")
            ))
        })?;
        specs.insert(m.clone(), spec.clone());
    }

    // The sample, each prompt checked before any call.
    let mut prompts = Vec::new();
    for (model, rows) in by_model {
        let spec = &specs[&model];
        let ids: Vec<String> = rows.iter().map(|r| labels::response_id(&r.run_key, r.seat, r.slot)).collect();
        let chosen: BTreeSet<String> = labels::sample_ids(ids.iter().map(String::as_str), args.seed, args.sample)
            .into_iter()
            .map(str::to_string)
            .collect();
        let mut picked: Vec<(String, Row)> = ids.into_iter().zip(rows).filter(|(id, _)| chosen.contains(id)).collect();
        picked.sort_by_cached_key(|(id, _)| labels::rank_key(args.seed, id));
        for (_, row) in picked {
            if row.served_id != spec.served_id {
                return Err(Error::BadInput(format!(
                    "--models {}: model `{model}` is served as `{}`, but the store's decisions were asked of `{}`",
                    args.models.display(),
                    spec.served_id,
                    row.served_id
                )));
            }
            let p = prepare(row)?;
            if p.stored.schema.is_some() != (spec.structured != StructuredMode::Instructions) {
                return Err(Error::BadInput(format!(
                    "--models {}: model `{model}` is declared with structured: {:?}, but its stored requests {} a schema",
                    args.models.display(),
                    spec.structured,
                    if p.stored.schema.is_some() { "carry" } else { "carry no" }
                )));
            }
            prompts.push(p);
        }
    }
    let originals_cached = prompts
        .iter()
        .map(|p| agora_records::families::audit::reads::cached(conn, &p.original_key))
        .collect::<rusqlite::Result<Vec<bool>>>()
        .map_err(&sql)?;
    Ok(Sample { prompts, specs, originals_cached })
}

/// Each replicate's reply read as the policy reads it, as its row of `audit_replicates`, with
/// the count of each parse status.
fn read<'a>(
    args: &ReplicatesOptions,
    prompts: &'a [Prompt],
    asked: &'a [Asked],
) -> Result<(Vec<records::ReplicateRecord<'a>>, BTreeMap<String, usize>)> {
    let mut statuses: BTreeMap<String, usize> = BTreeMap::new();
    let mut replies = Vec::new();
    for a in asked {
        let p = &prompts[a.prompt];
        let (status, action, reason, detail) = read_reply(&a.reply, &p.space, &p.answer_field);
        *statuses.entry(status.clone()).or_default() += 1;
        replies.push(records::ReplicateRecord {
            run_id: p.run_id,
            seat: p.seat,
            slot: p.slot,
            response_id: &p.response_id,
            original_attempt: p.attempt,
            sample_seed: args.seed.to_string(),
            replicate: a.replicate as i64,
            model: &p.model,
            served_id: &p.served_id,
            round: p.round,
            role: &p.role,
            request_seed: a.seed.map(|s| s as i64),
            messages_json: &a.request_json,
            cache_key: &a.key,
            original_cache_key: &p.original_key,
            answer_field: &p.answer_field,
            space_json: serde_json::to_string(&p.space)?,
            reply: &a.reply,
            action,
            reason,
            parse_status: status,
            detail,
        });
    }
    Ok((replies, statuses))
}

/// What `agora audit replicates` did.
#[derive(Clone, Debug)]
pub struct ReplicatesOutcome {
    /// Replicates asked and written.
    pub replicates: usize,
    /// Prompts sampled, per model.
    pub per_model: BTreeMap<String, usize>,
    /// The sample's seed.
    pub seed: u64,
    /// Replicates per prompt.
    pub m: usize,
    /// Seconds the calls took.
    pub seconds: f64,
    /// Replies read from the reply cache.
    pub cached: usize,
    /// Replicates per parse status.
    pub statuses: BTreeMap<String, usize>,
    /// Original requests whose cache key the reply cache holds.
    pub originals_cached: usize,
    /// The store.
    pub store: PathBuf,
}

impl std::fmt::Display for ReplicatesOutcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let prompts: usize = self.per_model.values().sum();
        writeln!(
            f,
            "{} replicates of {} prompts ({}; seed {}, m = {}) in {:.2} s: {} from the reply cache, {} requests sent; {}",
            self.replicates,
            prompts,
            self.per_model.iter().map(|(m, n)| format!("{m}: {n}")).collect::<Vec<_>>().join(", "),
            self.seed,
            self.m,
            self.seconds,
            self.cached,
            self.replicates - self.cached,
            self.statuses.iter().map(|(s, n)| format!("{n} {s}")).collect::<Vec<_>>().join(", ")
        )?;
        writeln!(
            f,
            "original requests rebuilt byte for byte: {prompts} of {prompts}; their cache keys found in the reply cache: {} of {prompts}",
            self.originals_cached
        )?;
        writeln!(f, "table audit_replicates in {}; code and estimate with `agora audit`", self.store.display())
    }
}

/// Runs `agora audit replicates`: sample, ask, read, write.
pub fn main(args: ReplicatesOptions) -> Result<ReplicatesOutcome> {
    if args.sample == 0 {
        return Err(Error::BadInput("--sample must be at least 1".into()));
    }
    if args.m < 2 {
        return Err(Error::BadInput(format!(
            "--m must be at least 2 (got {}): within-prompt dependency needs repeated replies to one prompt",
            args.m
        )));
    }
    if !args.store.exists() {
        return Err(Error::BadInput(format!("store {} does not exist", args.store.display())));
    }
    let store = Store::open(&args.store)?;
    let sample = sample(&args, &store)?;
    let rt = agora_agents::llm::session::runtime().map_err(Error::runtime)?;
    let session =
        Arc::new(agora_engine::llm_seats::model_session(&args.store, sample.specs.values(), args.replay, &rt)?);
    let started = std::time::Instant::now();
    let asked = rt.block_on(ask(&sample.prompts, &session, args.seed, args.m))?;
    let seconds = started.elapsed().as_secs_f64();
    drop(rt);

    // Everything answered: write the rows in one transaction.
    let (replies, statuses) = read(&args, &sample.prompts, &asked)?;
    let sql = Error::sql(&args.store);
    let mut conn = store.connect()?;
    conn.busy_timeout(std::time::Duration::from_secs(60)).map_err(&sql)?;
    records::write(&mut conn, &replies).map_err(&sql)?;
    let per_model: BTreeMap<String, usize> = sample.prompts.iter().fold(BTreeMap::new(), |mut m, p| {
        *m.entry(p.model.clone()).or_default() += 1;
        m
    });
    Ok(ReplicatesOutcome {
        replicates: asked.len(),
        per_model,
        seed: args.seed,
        m: args.m,
        seconds,
        cached: asked.iter().filter(|a| a.cached).count(),
        statuses,
        originals_cached: sample.originals_cached.iter().filter(|c| **c).count(),
        store: args.store.clone(),
    })
}

/// Asks every replicate of every prompt, concurrently (each endpoint's limit holds), through
/// the model session; the first failure stops it.
async fn ask(prompts: &[Prompt], session: &Arc<Session>, seed: u64, m: usize) -> Result<Vec<Asked>> {
    let mut jobs = Vec::new();
    for (i, p) in prompts.iter().enumerate() {
        for j in 0..m {
            let request_seed = p
                .stored
                .seed
                .map(|_| agora_engine::seed::derive(seed, &["replicate", &p.response_id, &j.to_string()]) % (1 << 31));
            let req = p.stored.request(request_seed);
            let request_json = serde_json::to_string(&req)?;
            let slot = format!("{}/{}/{}/replicate/{seed}/{j}", p.run_key, p.seat, p.slot);
            let session = session.clone();
            let (model, response_id) = (p.model.clone(), p.response_id.clone());
            jobs.push(async move {
                match session.call(&model, &req, &request_json, &slot).await {
                    Ok(r) => Ok(Asked {
                        prompt: i,
                        replicate: j,
                        seed: request_seed,
                        request_json,
                        key: r.key,
                        reply: r.reply,
                        cached: r.cached,
                    }),
                    Err(e) => Err(Error::of_call(e, || {
                        format!("model `{model}`, decision {response_id}, replicate {j} of seed {seed}")
                    })),
                }
            });
        }
    }
    agora_agents::llm::fan_out(jobs).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stored(schema: Option<Value>, system: &str) -> StoredRequest {
        StoredRequest {
            messages: vec![
                Message { role: "system".into(), content: system.into() },
                Message { role: "user".into(), content: "Round 1.".into() },
            ],
            temperature: 0.7,
            max_tokens: 256,
            seed: Some(5),
            schema,
            chat_template_kwargs: None,
        }
    }

    #[test]
    fn a_stored_request_rebuilds_byte_for_byte() {
        let req = stored(Some(serde_json::json!({"type": "object"})), "S").request(Some(5));
        let json = serde_json::to_string(&req).expect("json");
        let (back, again) = rebuild(&json).expect("rebuilds");
        assert_eq!(serde_json::to_string(&again).expect("json"), json);
        assert_eq!(back.seed, Some(5));
        assert!(rebuild(&json.replace("\"temperature\":0.7", "\"temperature\":0.70")).is_err());
    }

    #[test]
    fn the_space_is_read_from_the_schema_or_the_answer_format() {
        let schema = serde_json::json!({"type": "object", "properties": {
            "action": {"type": "string", "enum": ["B", "A"]},
            "amount": {"type": "integer", "minimum": 0, "maximum": 20},
            "alloc": {"type": "array", "items": {"type": "integer", "minimum": 0, "maximum": 10}, "minItems": 3, "maxItems": 3}}});
        let s = stored(Some(schema), "");
        assert_eq!(shown_space(&s, "action"), Some(Shown::Labels(vec!["B".into(), "A".into()])));
        assert_eq!(shown_space(&s, "amount"), Some(Shown::Amount(0, 20)));
        assert_eq!(shown_space(&s, "alloc"), Some(Shown::Allocation(3, 10)));
        let text = |example: &str| {
            stored(None, &format!("Rules.\nAnswer with a JSON object only, of the form {example}. Write it."))
        };
        assert_eq!(
            shown_space(
                &text(r#"{"action": "<one of: Option F, Option J>", "reason": "<one short sentence, optional>"}"#),
                "action"
            ),
            Some(Shown::Labels(vec!["Option F".into(), "Option J".into()]))
        );
        assert_eq!(
            shown_space(&text(r#"{"selection": <a whole number from 11 to 20>, "reason": "<…>"}"#), "selection"),
            Some(Shown::Amount(11, 20))
        );
        assert_eq!(
            shown_space(
                &text(r#"{"action": [<3 whole numbers from 0 to 10, one per other member in the order given>]}"#),
                "action"
            ),
            Some(Shown::Allocation(3, 10))
        );
    }

    #[test]
    fn shown_labels_map_to_the_semantic_order() {
        let env: EnvSpec = serde_json::from_value(serde_json::json!({"PrisonersDilemma": {"rounds": 2}})).expect("env");
        let labels = env.game().wording(Variant::C0).labels.to_vec();
        let reversed: Vec<String> = labels.iter().rev().cloned().collect();
        assert_eq!(
            semantic_space(Shown::Labels(reversed), &env, Variant::C0),
            Some(ActionSpace::Choice { labels: labels.clone().into() })
        );
        assert_eq!(semantic_space(Shown::Labels(vec!["nope".into(), labels[0].clone()]), &env, Variant::C0), None);
        if let Some(f) = env.game().framing(Variant::C0, Frame::Moral) {
            let framed: Vec<String> = f.labels.iter().rev().map(|l| l.to_string()).collect();
            let space = semantic_space(Shown::Labels(framed), &env, Variant::C0).expect("framed");
            let reply = CachedReply {
                content: format!("{{\"action\": \"{}\"}}", f.labels[0]),
                prompt_tokens: None,
                completion_tokens: None,
                endpoint: String::new(),
                latency_ms: 0.0,
                finish_reason: None,
            };
            assert_eq!(read_reply(&reply, &space, "action").1.as_deref(), Some("c0"));
        }
    }
}
