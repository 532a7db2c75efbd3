//! Wiring LLM seats into a run: clients, the reply cache, the policy factory, call estimates
//! and the parse/fallback report.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use agora_agents::llm::{LlmClient, LlmContext, LlmPolicy, LlmSeat, PromptRenderer, TranscriptSink};
use agora_agents::Policy;
use agora_engine::runner::PolicyFactory;
use agora_engine::store::SqliteCache;
use agora_scenarios::{Plan, RunSpec};
use anyhow::Context as _;
use rand::SeedableRng;

use crate::BadInput;

/// What LLM seats of a plan share.
pub struct LlmRun {
    ctx: LlmContext,
}

impl LlmRun {
    /// Builds each seat of a run: LLM seats from the shared context, classical seats from
    /// their specifications.
    pub fn factory(&self) -> PolicyFactory {
        let ctx = self.ctx.clone();
        Arc::new(move |spec: &RunSpec, transcripts: &TranscriptSink| {
            let options = spec.prompt_options();
            spec.seats
                .iter()
                .enumerate()
                .map(|(seat, p)| match p.model() {
                    Some(model) => LlmPolicy::new(
                        &ctx,
                        model,
                        LlmSeat {
                            run_key: spec.key(),
                            run_seed: spec.seed,
                            seat,
                            environment: spec.environment.clone(),
                            options: options.clone(),
                            transcripts: transcripts.clone(),
                            derive: agora_engine::seed::derive,
                        },
                    )
                    .map(|p| Box::new(p) as Box<dyn Policy>)
                    .map_err(|e| e.to_string()),
                    None => Ok(p.build()),
                })
                .collect()
        })
    }
}

fn uses_llm(plan: &Plan) -> bool {
    plan.runs.iter().any(|r| r.seats.iter().any(|s| s.is_async()))
}

/// Prepares clients and the cache when the plan has LLM seats: reads API keys from the
/// variables the study names, and (unless replaying) checks that every model answers.
pub fn prepare(plan: &Plan, store: &Path, replay: bool) -> anyhow::Result<Option<LlmRun>> {
    if !uses_llm(plan) {
        return Ok(None);
    }
    let used: std::collections::BTreeSet<&str> =
        plan.runs.iter().flat_map(|r| r.seats.iter().filter_map(|s| s.model())).collect();
    let mut clients = BTreeMap::new();
    for m in plan.models.iter().filter(|m| used.contains(m.name.as_str())) {
        let key = match &m.api_key_env {
            Some(var) => match std::env::var(var) {
                Ok(k) if !k.is_empty() => Some(k),
                _ if replay => None,
                _ => {
                    return Err(BadInput(format!(
                        "model `{}`: environment variable {var} (its API key) is not set",
                        m.name
                    ))
                    .into())
                }
            },
            None => None,
        };
        let client = LlmClient::new(m.clone(), key).map_err(BadInput)?;
        clients.insert(m.name.clone(), Arc::new(client));
    }
    if !replay {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().context("starting the runtime")?;
        for c in clients.values() {
            rt.block_on(c.check_reachable())?;
        }
    }
    let cache = SqliteCache::open(store)?;
    Ok(Some(LlmRun {
        ctx: LlmContext { clients, renderer: Arc::new(PromptRenderer::new()), cache: Arc::new(cache), replay },
    }))
}

/// Prints, per model, the calls a plan will make, a rough count of prompt tokens (the first
/// prompt of each condition, at four characters a token, times its calls) and the store those
/// calls are expected to take ([`store_bytes_per_call`]).
pub fn print_call_estimate(plan: &Plan) {
    if !uses_llm(plan) {
        println!("LLM calls: none (classical rosters)");
        return;
    }
    let renderer = PromptRenderer::new();
    // Per model: runs, calls, whether the calls are an upper bound, prompt tokens, store bytes.
    let mut per_model: BTreeMap<String, (usize, u64, bool, f64, f64)> = BTreeMap::new();
    let mut first: BTreeMap<String, Option<FirstPrompt>> = BTreeMap::new();
    for r in &plan.runs {
        let llm_seats: Vec<(usize, &str)> =
            r.seats.iter().enumerate().filter_map(|(i, s)| s.model().map(|m| (i, m))).collect();
        if llm_seats.is_empty() {
            continue;
        }
        let (decisions, upper) = r.expected_decisions();
        let share = llm_seats.len() as f64 / r.seats.len() as f64;
        let probes = if r.prompt_options().recognition_probe { llm_seats.len() as u64 } else { 0 };
        let calls = (decisions as f64 * share).round() as u64 + probes;
        let condition = format!("{}|{}|{}|{}", r.block, r.variant.as_str(), r.cell, r.environment.arm());
        let prompt = first.entry(condition).or_insert_with(|| first_prompt(&renderer, r, llm_seats[0].0)).as_ref();
        for (_, model) in llm_seats.iter().take(1) {
            let spec = plan.models.iter().find(|m| m.name == *model);
            let e = per_model.entry(model.to_string()).or_insert((0, 0, false, 0.0, 0.0));
            e.0 += 1;
            e.1 += calls;
            e.2 |= upper;
            if let Some(p) = prompt {
                e.3 += calls as f64 * p.chars as f64 / 4.0;
                e.4 += calls as f64 * store_bytes_per_call(&p.request_json, spec);
            }
        }
    }
    println!("{:<24} {:>7} {:>14} {:>18} {:>12}", "model", "runs", "calls", "~prompt tokens", "~store");
    for (model, (runs, calls, upper, tokens, store)) in per_model {
        let bound = if upper { "<=" } else { "" };
        println!(
            "{:<24} {:>7} {:>14} {:>18} {:>12}",
            model,
            runs,
            format!("{bound}{calls}"),
            format!("{:.0}", tokens),
            format!("{bound}{}", human_bytes(store))
        );
    }
    println!(
        "(~store: transcripts and reply cache, from each condition's first prompt with a {REPLY_BYTES}-byte reply; \
         the static text of the prompts is stored once and not counted)"
    );
}

/// 1234567 → "1.23 MB" (decimal units, three significant digits).
fn human_bytes(b: f64) -> String {
    let (value, unit) = match b {
        b if b >= 1e9 => (b / 1e9, "GB"),
        b if b >= 1e6 => (b / 1e6, "MB"),
        b if b >= 1e3 => (b / 1e3, "kB"),
        b => (b, "B"),
    };
    let decimals = if value >= 100.0 {
        0
    } else if value >= 10.0 {
        1
    } else {
        2
    };
    format!("{value:.decimals$} {unit}")
}

/// The first prompt of a condition: its length in characters, and the request it makes.
struct FirstPrompt {
    chars: usize,
    request_json: String,
}

fn first_prompt(renderer: &PromptRenderer, r: &RunSpec, seat: usize) -> Option<FirstPrompt> {
    let mut env = r.environment.build(r.variant).ok()?;
    let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(r.seed);
    let requests = env.pending(&mut rng);
    let obs = requests.iter().find(|q| q.agent == seat).or(requests.first()).map(|q| q.observation.clone())?;
    let p = renderer.render(&r.environment, &obs, &[], seat, &r.prompt_options()).ok()?;
    let req = agora_agents::llm::ChatRequest {
        messages: p.messages.clone(),
        temperature: 1.0,
        max_tokens: 256,
        seed: Some(1 << 30),
        schema: Some(p.schema.clone()),
        chat_template_kwargs: None,
    };
    Some(FirstPrompt {
        chars: p.messages.iter().map(|m| m.content.chars().count()).sum(),
        request_json: serde_json::to_string(&req).ok()?,
    })
}

/// The reply length the store estimate assumes (a short structured answer).
const REPLY_BYTES: usize = 64;

/// The store one call is expected to add, from a request like the ones it will make: the
/// list of parts its transcript row keeps (part ids taken as 7 digits), the longest line of
/// the user message as new text (a history line or the question: a call's one new part, with
/// its 16-byte hash in the table and its index), the row's other columns with a
/// [`REPLY_BYTES`]-byte reply, and the reply cache's row (its 64-character key in the table
/// and its index, the reply and the facts kept with it). Static parts are left out: they are
/// written once per store.
fn store_bytes_per_call(request_json: &str, spec: Option<&agora_agents::llm::ModelSpec>) -> f64 {
    use agora_engine::request_parts::{cut, encode_list, pieces};
    let list = encode_list(&pieces(request_json), |_| Ok(1_000_000)).map(|l| l.len()).unwrap_or(0);
    let user = request_json.find("\"role\":\"user\"").unwrap_or(0);
    let new_text = cut(&request_json[user..]).iter().map(|p| p.len()).max().unwrap_or(0);
    let (name, served, endpoint) = spec
        .map(|m| (m.name.len(), m.served_id.len(), m.endpoints.first().map_or(0, String::len)))
        .unwrap_or((0, 0, 0));
    let integers = 9 * 4; // run, seat, slot, attempt, round, tokens, latency, key overhead
    let row = integers + name + served + endpoint + "decision".len() + "ok".len() + REPLY_BYTES + list;
    let part = new_text + 2 * 16 + 8;
    let reply_json = REPLY_BYTES
        + endpoint
        + r#"{"content":"","prompt_tokens":,"completion_tokens":,"endpoint":"","latency_ms":}"#.len()
        + 16;
    let cache = 2 * 64 + name + reply_json;
    (row + part + cache) as f64
}

/// Prints, per model, calls by parse status and the share of decisions that fell back.
pub fn print_transcript_summary(store: &Path, study: &str) -> anyhow::Result<()> {
    let conn = rusqlite::Connection::open_with_flags(store, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)?;
    let mut st = conn.prepare(
        "SELECT t.model, t.kind, t.parse_status, COUNT(*) FROM transcripts t JOIN runs r USING (run_id)
         WHERE r.study = ?1 GROUP BY 1, 2, 3
         UNION ALL
         SELECT t.model, t.kind, 'truncated-standing', COUNT(*) FROM transcripts t JOIN runs r USING (run_id)
         WHERE r.study = ?1 AND t.parse_status = 'truncated' AND t.action IS NOT NULL GROUP BY 1, 2
         ORDER BY 1, 2, 3",
    )?;
    let rows: Vec<(String, String, String, i64)> =
        st.query_map([study], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?.collect::<Result<_, _>>()?;
    let mut models: BTreeMap<String, BTreeMap<String, i64>> = BTreeMap::new();
    for (model, kind, status, n) in rows {
        *models.entry(model).or_default().entry(format!("{kind}:{status}")).or_default() += n;
    }
    println!("\n== LLM calls ==");
    for (model, counts) in models {
        let get = |k: &str| *counts.get(k).unwrap_or(&0);
        let calls =
            get("decision:ok") + get("decision:unparsable") + get("decision:illegal") + get("decision:truncated");
        let fallback = get("decision:fallback");
        let decisions = get("decision:ok") + get("decision:truncated-standing") + fallback;
        let pct = |n: i64, d: i64| if d == 0 { 0.0 } else { 100.0 * n as f64 / d as f64 };
        println!(
            "{model}: {calls} calls for {decisions} decisions; parsed {:.1} %, unparsable {:.1} %, illegal {:.1} %, cut at the token limit {:.1} % of calls; fallback {:.1} % of decisions{}",
            pct(get("decision:ok"), calls),
            pct(get("decision:unparsable"), calls),
            pct(get("decision:illegal"), calls),
            pct(get("decision:truncated"), calls),
            pct(fallback, decisions),
            if get("probe:recognised") + get("probe:not-recognised") > 0 {
                format!("; recognition probe: {} of {} recognised", get("probe:recognised"), get("probe:recognised") + get("probe:not-recognised"))
            } else {
                String::new()
            }
        );
    }
    Ok(())
}
