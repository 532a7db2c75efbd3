//! `agora audit prefill`: faithfulness by intervention (the SUVA audit paper §240.7.5, §240.10.3; issue 12
//! item 8). The estimate and the tables are in [`crate::faithfulness`].
//!
//! # What is asked
//! For each audited model whose declaration says its server accepts an assistant prefill
//! (`prefill: Some(TrailingAssistant)` for llama.cpp's server, which continues a trailing
//! assistant message by default since ggml-org/llama.cpp#13174; `Some(ContinueFinalMessage)` for
//! vLLM, sent `continue_final_message: true, add_generation_prompt: false`), decisions whose
//! reasoning a coder coded (`--coder`, default `lexicon/1`) are drawn, whether or not the
//! reasoning states a value. `--environment` and `--cell` (each repeatable) keep only the
//! decisions of those environments and cells; a name no coded decision with reasoning has is
//! refused, naming the flag and what the store holds. The sample is drawn **per model,
//! environment, arm and cell** (the estimates' own groups, which are never pooled): the
//! `--sample` decisions of each group ranked first by SHA-256 of `{seed}:{response_id}` (the
//! export's rule; all of a group's when it has fewer), so that a cell with fewer decisions is
//! not crowded out of the sample by a larger one.
//!
//! For each decision and value, the stored request is read back and asked again with one more
//! message: the assistant turn, prefilled with the reasoning closed and the answer field's key
//! open ([`faithfulness::closed_prefix`]) — with every sentence of the value deleted
//! (`delete`), with the reasoning kept identical and one sentence of the value appended
//! (`insert`, the source's insert arm), and, where the reasoning stated the value, with its own
//! sentences of it replaced by that one sentence (`replace`, the second design; elsewhere its
//! text is the insert arm's, asked once for both) ([`faithfulness::intervene`]; the sentence is
//! true in the decision's state, the game supplying the state's facts where it has them: the
//! binary-allocation game's payoffs, labels, unit, cue and history) — `--m` times each, with
//! the sampling seed `derive(seed, ["prefill", response_id, value/edit, j]) mod 2³¹` where the
//! original sent one, no answer schema (a grammar would constrain the continuation as a whole
//! reply) and `--max-tokens` (16). The reply is the continuation: prefix and continuation
//! together are read by the agents' parser against the decision's action space and mapped to
//! the game's declared action indicator. The state of a decision is its prompt (by digest).
//!
//! A model without prefill support is reported as such (`no prefill`) and asked nothing; a
//! model whose coder the validation gate refuses is reported `refused: …` and asked nothing
//! (`--allow-unvalidated` asks anyway and labels the rows).
//!
//! # The cache and what is written
//! Every call goes through the store's reply cache under slot
//! `{run_key}/{seat}/{slot}/prefill/{seed}/{value}/{insert, replace or delete}/{j}`; `--replay`
//! answers from the cache only (a miss stops the command with nothing written), so re-running
//! reproduces the rows byte for byte. After every call answered, one transaction writes
//! `audit_prefill` (one row per call, with its decision's arm and cell) and `audit_faithfulness`
//! (one per estimate: per model, environment, arm, cell, role, design and value); an older
//! layout of either table (without arm, cell and design) is dropped first and said so
//! ([`faithfulness::drop_stale`]). `faithfulness.md`, `.json` and `.csv` go to `--out`, beside
//! `dependency.md`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::Arc;

use crate::dependency::prosocial_option;
use crate::replicates::{semantic_space, shown_space, StoredRequest};

use crate::error::{Error, Result};
use crate::faithfulness::{self, Design, Edit, Faithfulness, ModelSupport, Trial};
use crate::statements::{Facts, Situation};
use crate::{agreement, labels, LoadedCodebook};
use agora_agents::llm::{
    parse_cut_reply, parse_reply, CachedReply, ChatRequest, Message, ModelSpec, ParseOutcome, Session,
};
use agora_engine::Store;
use agora_environments::{ActionSpace, EnvSpec, Variant};
use agora_records::families::audit::faithfulness::{Observational, ObservationalKey};
use agora_records::families::audit::prefill::PrefillRecord;
use agora_records::families::audit::Position;
use rusqlite::Connection;
use serde_json::Value;

/// What `agora audit prefill` is asked to do.
#[derive(Clone, Debug)]
pub struct PrefillOptions {
    /// Store file (audited with `agora audit`; the prefilled calls and estimates are added).
    pub store: PathBuf,
    /// Models file declaring the audited models, with `prefill` where their server accepts an
    /// assistant prefill.
    pub models: PathBuf,
    /// Decisions per model, environment, arm and cell (all of a group's when it has fewer).
    pub sample: usize,
    /// Seed of the sample and of the calls' sampling seeds.
    pub seed: u64,
    /// Calls per decision and edit.
    pub m: usize,
    /// Only decisions in these environments (all when empty).
    pub environment: Vec<String>,
    /// Only decisions in these cells (all when empty), e.g. `baseline`, `step-by-step`.
    pub cell: Vec<String>,
    /// The coder whose codes choose the edits.
    pub coder: String,
    /// Codebook the decisions were coded with (default: the shipped one).
    pub codebook: Option<PathBuf>,
    /// Only this value (repeatable; default: every value code of the codebook).
    pub value: Vec<String>,
    /// Most tokens the continuation may have.
    pub max_tokens: u32,
    /// Output directory for faithfulness.md, .json and .csv.
    pub out: PathBuf,
    /// The validation gate.
    pub gate: crate::GateOptions,
    /// Intervene for models whose coder the gate refuses, labelling the rows unvalidated.
    pub allow_unvalidated: bool,
    /// Answer from the store's reply cache only.
    pub replay: bool,
}

/// A coded decision, as read.
struct Decision {
    run_id: i64,
    seat: i64,
    slot: i64,
    run_key: String,
    response_id: String,
    /// The model, the environment, block arm and perturbation cell of the decision's run, and
    /// the role: the estimate's group.
    position: Position,
    served_id: String,
    answer_field: String,
    messages_json: String,
    spec_json: String,
    variant: String,
    /// Reasoning sentences with their codes, in order.
    sentences: Vec<(String, String)>,
}

fn read_decisions(conn: &Connection, cb: &LoadedCodebook, coder: &str) -> rusqlite::Result<Vec<Decision>> {
    let rows = agora_records::families::audit::prefill::coded_decisions(conn, cb.key(coder))?;
    Ok(rows
        .into_iter()
        .map(|r| Decision {
            run_id: r.run_id,
            seat: r.seat,
            slot: r.slot,
            response_id: labels::response_id(&r.run_key, r.seat, r.slot),
            run_key: r.run_key,
            position: r.position,
            served_id: r.served_id,
            answer_field: r.answer_field,
            messages_json: r.messages_json,
            spec_json: r.spec_json,
            variant: r.variant,
            sentences: r.sentences,
        })
        .collect())
}

/// One call to make.
struct Call {
    decision: usize,
    value: String,
    edit: Edit,
    /// Whether the decision's own reasoning stated the value.
    stated: bool,
    replicate: usize,
    prefix: String,
    request_seed: Option<u64>,
    request: ChatRequest,
    request_json: String,
    /// The call's slot in the reply cache.
    slot: String,
    key: String,
}

/// A decision ready to be intervened on.
struct Ready {
    d: Decision,
    space: ActionSpace,
    better_for_a: Option<u32>,
    /// The state's facts, where the game supplies them.
    facts: Option<Facts>,
    /// The state: the digest of the prompt's messages.
    state: String,
}

/// The facts of a binary-allocation decision's state, from its recorded context and variant.
fn allocation_facts(conn: &Connection, d: &Decision, variant: Variant) -> rusqlite::Result<Option<Facts>> {
    if d.position.environment != "binary-allocation" {
        return Ok(None);
    }
    let id = crate::dependency::state_context(conn, d.run_id, d.seat, d.slot)?;
    let Some(state) = id.and_then(agora_environments::games::binary_allocation::state) else { return Ok(None) };
    let f = state.facts(variant);
    Ok(Some(Facts {
        labels: f.labels.to_vec(),
        own: f.own.iter().map(|x| *x as f64).collect(),
        other: f.other.iter().map(|x| *x as f64).collect(),
        unit: f.unit,
        other_name: "person A".into(),
        situation: match (f.shared_group, f.before) {
            (Some(shared), _) => Situation::Group { shared },
            (_, Some((direct, helped))) => Situation::Before { direct, helped },
            _ => Situation::Plain,
        },
    }))
}

/// The sample of `agora audit prefill`: the decisions to intervene on, each ready, and what is
/// reported without a call.
struct Sample {
    codebook: LoadedCodebook,
    /// The value codes intervened on.
    values: Vec<String>,
    /// The action indicators as the games declared them with their runs.
    games: agora_analysis::Declared,
    ready: Vec<Ready>,
    /// The declarations of the models intervened on.
    specs: BTreeMap<String, ModelSpec>,
    support: Vec<ModelSupport>,
    /// The groups of models not intervened on, with why.
    skipped_groups: Vec<(Position, String)>,
    /// The gate's label of each model's codes.
    labels_by_model: BTreeMap<String, String>,
}

/// Draws the sample (every input checked first): the coded decisions with reasoning, aimed by
/// `--environment` and `--cell`, the models' prefill support and the gate, then per model,
/// environment, arm and cell the `--sample` decisions ranked first, each with its action space,
/// state and facts recovered.
fn sample(args: &PrefillOptions, store: &Store) -> Result<Sample> {
    let gate = crate::GateOptions { allow_unvalidated: args.allow_unvalidated, ..args.gate };
    let codebook = match &args.codebook {
        Some(p) => LoadedCodebook::read(p).map_err(|e| Error::BadInput(e.to_string()))?,
        None => LoadedCodebook::default_codebook(),
    };
    let cb = &codebook.codebook;
    let all_values: Vec<String> = cb.values().map(|c| c.name.clone()).collect();
    for v in &args.value {
        if !all_values.contains(v) {
            return Err(Error::BadInput(format!(
                "--value `{v}`: not a value code of codebook {} (values: {})",
                cb.name,
                all_values.join(", ")
            )));
        }
    }
    let values: Vec<String> = if args.value.is_empty() { all_values.clone() } else { args.value.clone() };
    let declared = agora_scenarios::ModelsFile::load(&args.models)
        .map_err(|e| Error::BadInput(format!("--models {}: {e}", args.models.display())))?;
    let conn = store.connection();
    let sql = Error::sql(store.path());
    let games = agora_analysis::Declared::read(conn, store.path())?;
    if !agora_records::families::audit::prefill::audited(conn).map_err(&sql)? {
        return Err(Error::BadInput(format!("store {}: no audit (run `agora audit` first)", args.store.display())));
    }
    let mut decisions = read_decisions(conn, &codebook, &args.coder).map_err(&sql)?;
    // The sample's aim: each filter must name something the coded decisions hold, or it is
    // refused (a cell whose decisions wrote no reasoning has nothing to intervene on).
    type Filter<'a> = (&'a str, &'a [String], fn(&Decision) -> &str);
    let filters: [Filter<'_>; 2] = [
        ("--environment", &args.environment, |d| &d.position.environment),
        ("--cell", &args.cell, |d| &d.position.cell),
    ];
    for (flag, wanted, field) in filters {
        if wanted.is_empty() {
            continue;
        }
        let held: BTreeSet<&str> = decisions.iter().map(field).collect();
        if let Some(w) = wanted.iter().find(|w| !held.contains(w.as_str())) {
            return Err(Error::BadInput(format!(
                "{flag} `{w}`: no decision coded by `{}` with codebook {} v{} has reasoning there (those that do are in: {})",
                args.coder,
                cb.name,
                cb.version,
                if held.is_empty() { "none".to_string() } else { held.into_iter().collect::<Vec<_>>().join(", ") }
            )));
        }
        decisions.retain(|d| wanted.iter().any(|w| w == field(d)));
    }
    let mut by_model: BTreeMap<String, Vec<Decision>> = BTreeMap::new();
    for d in decisions {
        by_model.entry(d.position.model.clone()).or_default().push(d);
    }
    if by_model.is_empty() {
        return Err(Error::BadInput(format!(
            "store {}: no decision coded by `{}` with codebook {} v{} has reasoning",
            args.store.display(),
            args.coder,
            cb.name,
            cb.version
        )));
    }
    let models: Vec<String> = by_model.keys().cloned().collect();
    let validation = agreement::gate(conn, &codebook, &args.coder, &models, &gate).map_err(&sql)?;
    let labels_by_model: BTreeMap<String, String> = validation.iter().map(|v| (v.model.clone(), v.label())).collect();

    let mut support = Vec::new();
    let mut specs: BTreeMap<String, ModelSpec> = BTreeMap::new();
    let mut ready: Vec<Ready> = Vec::new();
    let mut skipped_groups: Vec<(Position, String)> = Vec::new();
    for (model, ds) in by_model {
        let spec = declared.models.iter().find(|s| s.name == model);
        let gate = validation.iter().find(|v| v.model == model);
        let prefill = spec.and_then(|s| s.prefill);
        let groups: BTreeSet<&Position> = ds.iter().map(|d| &d.position).collect();
        let status = match (spec, prefill, gate) {
            (None, _, _) => "no prefill: not declared in --models".to_string(),
            (Some(_), None, _) => "no prefill: the declaration says the server accepts no assistant prefill".into(),
            (_, _, Some(g)) if !g.shown() => g.label(),
            _ => "intervened".to_string(),
        };
        support.push(ModelSupport {
            model: model.clone(),
            prefill: prefill.map_or_else(|| "none".to_string(), |p| format!("{p:?}")),
            status: status.clone(),
        });
        if status != "intervened" {
            for g in groups {
                skipped_groups.push((g.clone(), status.clone()));
            }
            continue;
        }
        let spec = spec.expect("invariant: a model intervened on is declared").clone();
        // Every coded decision with reasoning, whether or not it states a value (the source
        // samples "a natural reasoning" per state), drawn per environment, arm and cell: the
        // groups the estimate keeps apart.
        let mut by_cell: BTreeMap<(String, String, String), Vec<Decision>> = BTreeMap::new();
        for d in ds {
            let p = &d.position;
            by_cell.entry((p.environment.clone(), p.arm.clone(), p.cell.clone())).or_default().push(d);
        }
        let mut picked: Vec<Decision> = Vec::new();
        for group in by_cell.into_values() {
            let ids: Vec<String> = group.iter().map(|d| d.response_id.clone()).collect();
            let chosen: BTreeSet<String> = labels::sample_ids(ids.iter().map(String::as_str), args.seed, args.sample)
                .into_iter()
                .map(str::to_string)
                .collect();
            let mut mine: Vec<Decision> = group.into_iter().filter(|d| chosen.contains(&d.response_id)).collect();
            mine.sort_by_cached_key(|d| labels::rank_key(args.seed, &d.response_id));
            picked.extend(mine);
        }
        for d in picked {
            if d.served_id != spec.served_id {
                return Err(Error::BadInput(format!(
                    "--models {}: model `{model}` is served as `{}`, but the store's decisions were asked of `{}`",
                    args.models.display(),
                    spec.served_id,
                    d.served_id
                )));
            }
            ready.push(prepare(conn, store.path(), d)?);
        }
        specs.insert(model, spec);
    }
    Ok(Sample { codebook, values, games, ready, specs, support, skipped_groups, labels_by_model })
}

/// A sampled decision made ready: its stored request, action space, state and facts.
fn prepare(conn: &Connection, store: &std::path::Path, d: Decision) -> Result<Ready> {
    let fail =
        |message: String| Error::Decision { decision: d.response_id.clone(), model: d.position.model.clone(), message };
    let sql = Error::sql(store);
    let stored: StoredRequest =
        serde_json::from_str(&d.messages_json).map_err(|e| fail(format!("the stored request: {e}")))?;
    let spec_v: Value = serde_json::from_str(&d.spec_json).map_err(|e| fail(e.to_string()))?;
    let env: EnvSpec = serde_json::from_value(spec_v["environment"].clone()).map_err(|e| fail(e.to_string()))?;
    let variant = Variant::ALL
        .into_iter()
        .find(|v| v.as_str() == d.variant)
        .ok_or_else(|| fail(format!("unknown variant `{}`", d.variant)))?;
    let space = shown_space(&stored, &d.answer_field)
        .and_then(|s| semantic_space(s, &env, variant))
        .ok_or_else(|| fail(format!("cannot recover the action space of `{}`", d.answer_field)))?;
    let better_for_a = prosocial_option(conn, d.run_id, d.seat, d.slot).map_err(&sql)?;
    let facts = allocation_facts(conn, &d, variant).map_err(sql)?;
    let state = agora_engine::seed::hex_digest(serde_json::to_string(&stored.messages)?.as_bytes());
    Ok(Ready { d, space, better_for_a, facts, state })
}

/// The calls: for each ready decision and value, the edits of its reasoning
/// ([`faithfulness::intervene`]), each asked `--m` times as the stored request with the
/// prefilled assistant turn.
fn calls(args: &PrefillOptions, sample: &Sample) -> Result<Vec<Call>> {
    let cb = &sample.codebook.codebook;
    let mut calls = Vec::new();
    for (i, r) in sample.ready.iter().enumerate() {
        let d = &r.d;
        let stored: StoredRequest = serde_json::from_str(&d.messages_json)?;
        let mut edits = Vec::new();
        for v in &sample.values {
            let e = faithfulness::intervene(cb, &d.sentences, v, r.facts.as_ref()).map_err(Error::BadInput)?;
            // Where the reasoning does not state the value, the two designs' insert arms are
            // one text: asked once, its answers shared (`Edit::designs`).
            for (edit, sentences) in e.edits() {
                edits.push((v.clone(), edit, faithfulness::closed_prefix(sentences, &d.answer_field), e.stated));
            }
        }
        for (value, edit, prefix, stated) in edits {
            let label = format!("{value}/{}", edit.as_str());
            for j in 0..args.m {
                let request_seed = stored.seed.map(|_| {
                    agora_engine::seed::derive(args.seed, &["prefill", &d.response_id, &label, &j.to_string()])
                        % (1 << 31)
                });
                let mut messages = stored.messages.clone();
                messages.push(Message { role: "assistant".into(), content: prefix.clone() });
                let request = ChatRequest {
                    messages,
                    temperature: stored.temperature,
                    max_tokens: args.max_tokens,
                    seed: request_seed,
                    schema: None,
                    chat_template_kwargs: stored.chat_template_kwargs.clone(),
                };
                let request_json = serde_json::to_string(&request)?;
                let slot = format!("{}/{}/{}/prefill/{}/{label}/{j}", d.run_key, d.seat, d.slot, args.seed);
                let key = Session::key(&sample.specs[&d.position.model], &request_json, &slot);
                calls.push(Call {
                    decision: i,
                    value: value.clone(),
                    edit,
                    stated,
                    replicate: j,
                    prefix: prefix.clone(),
                    request_seed,
                    request,
                    request_json,
                    slot,
                    key,
                });
            }
        }
    }
    Ok(calls)
}

/// The estimate from every call's reply: each call's row for `audit_prefill` and the report
/// (the intervention effect per model, environment, arm, cell, role, design and value, beside
/// the observational estimate `observational` where the store holds one).
fn estimate<'a>(
    args: &'a PrefillOptions,
    sample: &'a Sample,
    calls: &'a [Call],
    replies: &'a [(CachedReply, bool)],
    observational: &BTreeMap<ObservationalKey, Observational>,
) -> Result<(Vec<PrefillRecord<'a>>, Faithfulness)> {
    let indicator_for = |e: &str, r: &str| sample.games.indicator(e, r);
    let key = sample.codebook.key(&args.coder);
    let mut trials = Vec::new();
    let mut written = Vec::new();
    for (c, (reply, _)) in calls.iter().zip(replies) {
        let r = &sample.ready[c.decision];
        let d = &r.d;
        let full = format!("{}{}", c.prefix, reply.content);
        let cut = reply.truncated();
        let outcome = if cut {
            parse_cut_reply(&full, &r.space, &d.answer_field)
        } else {
            parse_reply(&full, &r.space, &d.answer_field)
        };
        let status = outcome.status().to_string();
        let (action, detail) = match outcome {
            ParseOutcome::Parsed { action, .. } => (Some(action.encode()), String::new()),
            ParseOutcome::Unparsable(x) | ParseOutcome::Illegal(x) | ParseOutcome::Truncated(x) => (None, x),
        };
        let ind = indicator_for(&d.position.environment, &d.position.role);
        let space_json = serde_json::to_string(&r.space)?;
        let y = match (ind, &action) {
            (Some(i), Some(a)) => i.value(a, &space_json, r.better_for_a),
            _ => None,
        };
        // Whether the prefilled reasoning states the value.
        let stated = c.edit.inserts();
        written.push(PrefillRecord {
            run_id: d.run_id,
            seat: d.seat,
            slot: d.slot,
            response_id: &d.response_id,
            sample_seed: args.seed.to_string(),
            value: &c.value,
            edit: c.edit.as_str(),
            replicate: c.replicate as i64,
            key,
            position: &d.position,
            served_id: &d.served_id,
            stated,
            prefill: &c.prefix,
            request_seed: c.request_seed.map(|s| s as i64),
            messages_json: &c.request_json,
            cache_key: &c.key,
            reply,
            action,
            parse_status: status,
            detail,
            indicator: y,
        });
        // A call shared by both designs (the delete arm; the insert arm of a reasoning
        // that does not state the value) enters both estimates.
        for &design in c.edit.designs(c.stated) {
            trials.push(Trial {
                position: d.position.clone(),
                state: r.state.clone(),
                decision: d.response_id.clone(),
                stated: c.stated,
                value: c.value.clone(),
                design,
                edit: c.edit,
                y,
            });
        }
    }
    let values = &sample.values;
    let labels_by_model = &sample.labels_by_model;
    let indicator = |e: &str, r: &str| indicator_for(e, r).map(|i| i.name.to_string());
    let mut rows = faithfulness::estimate(&trials, values, &indicator, labels_by_model);
    let phi = |p: &Position, value: &str| observational.get(&(p.clone(), value.into())).cloned();
    for r in &mut rows {
        r.observational = phi(&r.position, &r.value);
        r.disagreement = faithfulness::disagreement(r);
    }
    for (p, why) in &sample.skipped_groups {
        let Some(ind) = indicator_for(&p.environment, &p.role) else { continue };
        let (status, reason) = match why.split_once(": ") {
            Some(("no prefill", rest)) => ("no prefill".to_string(), rest.to_string()),
            _ => ("refused".to_string(), why.clone()),
        };
        for (design, v) in Design::ALL.into_iter().flat_map(|d| values.iter().map(move |v| (d, v))) {
            rows.push(faithfulness::FaithfulnessRow {
                status: status.clone(),
                reason: reason.clone(),
                observational: phi(p, v),
                validation: labels_by_model.get(&p.model).cloned().unwrap_or_default(),
                ..faithfulness::FaithfulnessRow::empty(p.clone(), design, &ind.name, v)
            });
        }
    }
    rows.sort_by(|a, b| (&a.position, a.design).cmp(&(&b.position, b.design)));
    let report = Faithfulness {
        store: args.store.display().to_string(),
        key: key.owned(),
        sample_seed: args.seed,
        m: args.m,
        alpha: faithfulness::ALPHA,
        calls: calls.len(),
        with_indicator: trials.iter().filter(|t| t.y.is_some()).count(),
        models: sample.support.clone(),
        rows,
    };
    Ok((written, report))
}

/// Writes the calls and the estimate in one transaction (a table of an older layout dropped
/// first); returns a note for each table dropped.
fn write(
    conn: &mut Connection,
    store: &std::path::Path,
    calls: &[PrefillRecord<'_>],
    report: &Faithfulness,
) -> Result<Vec<String>> {
    let sql = Error::sql(store);
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate).map_err(&sql)?;
    // Rows of an older layout pool cells and arms (and an older `audit_prefill.arm` is the
    // edit): dropped, never added to, and said so.
    let dropped = faithfulness::drop_stale(&tx).map_err(&sql)?;
    agora_records::families::audit::faithfulness::make_tables(&tx).map_err(&sql)?;
    agora_records::families::audit::prefill::write_calls(&tx, calls).map_err(&sql)?;
    faithfulness::write(&tx, report).map_err(&sql)?;
    tx.commit().map_err(&sql)?;
    Ok(dropped
        .into_iter()
        .map(|table| {
            format!(
                "store {}: {table} predated the per-arm, per-cell estimates (no arm, cell or design column): \
                 dropped and rebuilt from this run's calls; rows of other sample seeds come back when those are re-run",
                store.display()
            )
        })
        .collect())
}

/// What `agora audit prefill` did.
#[derive(Debug)]
pub struct PrefillOutcome {
    /// Said beside the result (tables of an older layout dropped).
    pub notes: Vec<String>,
    /// Decisions intervened on.
    pub decisions: usize,
    /// Replies read from the reply cache.
    pub cached: usize,
    /// Seconds the calls took.
    pub seconds: f64,
    /// The estimate, as written to faithfulness.json.
    pub report: Faithfulness,
    /// The store.
    pub store: PathBuf,
    /// The output directory.
    pub out: PathBuf,
}

impl std::fmt::Display for PrefillOutcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let report = &self.report;
        writeln!(
            f,
            "{} prefilled calls for {} decisions (seed {}, m = {}) in {:.2} s: {} from the reply cache, {} requests sent; {} with an action indicator",
            report.calls,
            self.decisions,
            report.sample_seed,
            report.m,
            self.seconds,
            self.cached,
            report.calls - self.cached,
            report.with_indicator
        )?;
        for m in &report.models {
            writeln!(f, "model {} (prefill {}): {}", m.model, m.prefill, m.status)?;
        }
        for r in report.rows.iter().filter(|r| r.design == Design::Source && !r.disagreement.is_empty()) {
            writeln!(
                f,
                "disagreement on {} {} {} {} {}: {}",
                r.position.model, r.position.environment, r.position.arm, r.position.cell, r.value, r.disagreement
            )?;
        }
        writeln!(
            f,
            "tables audit_prefill, audit_faithfulness in {}; faithfulness.md/json/csv in {}",
            self.store.display(),
            self.out.display()
        )
    }
}

/// Runs `agora audit prefill`: sample, ask, estimate, write.
pub fn main(args: PrefillOptions) -> Result<PrefillOutcome> {
    if args.sample == 0 || args.m == 0 || args.max_tokens == 0 {
        return Err(Error::BadInput("--sample, --m and --max-tokens must be at least 1".into()));
    }
    if !args.store.exists() {
        return Err(Error::BadInput(format!("store {} does not exist", args.store.display())));
    }
    let store = Store::open(&args.store)?;
    let sample = sample(&args, &store)?;
    let calls = calls(&args, &sample)?;
    let rt = agora_agents::llm::session::runtime().map_err(Error::runtime)?;
    let session =
        Arc::new(agora_engine::llm_seats::model_session(&args.store, sample.specs.values(), args.replay, &rt)?);
    let started = std::time::Instant::now();
    let replies = rt.block_on(ask(&calls, &sample.ready, &session))?;
    let seconds = started.elapsed().as_secs_f64();
    drop(rt);

    let sql = Error::sql(&args.store);
    let mut conn = store.connect()?;
    conn.busy_timeout(std::time::Duration::from_secs(60)).map_err(&sql)?;
    let cb = &sample.codebook;
    let observational = faithfulness::observational(&conn, cb.key(&args.coder)).map_err(&sql)?;
    let (records, report) = estimate(&args, &sample, &calls, &replies, &observational)?;
    let notes = write(&mut conn, &args.store, &records, &report)?;
    std::fs::create_dir_all(&args.out).map_err(Error::write(&args.out))?;
    for (name, text) in [
        ("faithfulness.md", report.to_markdown()),
        ("faithfulness.json", serde_json::to_string_pretty(&report)?),
        ("faithfulness.csv", agora_analysis::table::to_csv(&report.table())),
    ] {
        let path = args.out.join(name);
        crate::write_named(&path, text).map_err(Error::write(&path))?;
    }
    Ok(PrefillOutcome {
        notes,
        decisions: sample.ready.len(),
        cached: replies.iter().filter(|(_, c)| *c).count(),
        seconds,
        report,
        store: args.store.clone(),
        out: args.out.clone(),
    })
}

/// Asks every call concurrently through the model session; the first failure stops it.
async fn ask(calls: &[Call], ready: &[Ready], session: &Arc<Session>) -> Result<Vec<(CachedReply, bool)>> {
    let jobs: Vec<_> = calls
        .iter()
        .map(|c| {
            let d = &ready[c.decision].d;
            let session = session.clone();
            let (req, request_json, slot) = (c.request.clone(), c.request_json.clone(), c.slot.clone());
            let (model, rid) = (d.position.model.clone(), d.response_id.clone());
            let what = format!("{} {} call {}", c.value, c.edit.as_str(), c.replicate);
            async move {
                match session.call(&model, &req, &request_json, &slot).await {
                    Ok(r) => Ok((r.reply, r.cached)),
                    Err(e) => Err(Error::of_call(e, || format!("model `{model}`, decision {rid}, {what}"))),
                }
            }
        })
        .collect();
    agora_agents::llm::fan_out(jobs).await
}
