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

/// Prints, per model, the calls a plan will make and a rough count of prompt tokens (the first
/// prompt of each condition, at four characters a token, times its calls).
pub fn print_call_estimate(plan: &Plan) {
    if !uses_llm(plan) {
        println!("LLM calls: none (classical rosters)");
        return;
    }
    let renderer = PromptRenderer::new();
    let mut per_model: BTreeMap<String, (usize, u64, bool, f64)> = BTreeMap::new();
    let mut prompt_chars: BTreeMap<String, f64> = BTreeMap::new();
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
        let chars = *prompt_chars.entry(condition).or_insert_with(|| first_prompt_chars(&renderer, r, llm_seats[0].0));
        for (_, model) in llm_seats.iter().take(1) {
            let e = per_model.entry(model.to_string()).or_insert((0, 0, false, 0.0));
            e.0 += 1;
            e.1 += calls;
            e.2 |= upper;
            e.3 += calls as f64 * chars / 4.0;
        }
    }
    println!("{:<24} {:>7} {:>14} {:>18}", "model", "runs", "calls", "~prompt tokens");
    for (model, (runs, calls, upper, tokens)) in per_model {
        println!(
            "{:<24} {:>7} {:>14} {:>18}",
            model,
            runs,
            format!("{}{calls}", if upper { "<=" } else { "" }),
            format!("{:.0}", tokens)
        );
    }
}

fn first_prompt_chars(renderer: &PromptRenderer, r: &RunSpec, seat: usize) -> f64 {
    let Ok(mut env) = r.environment.build(r.variant) else { return 0.0 };
    let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(r.seed);
    let requests = env.pending(&mut rng);
    let obs = requests.iter().find(|q| q.agent == seat).or(requests.first()).map(|q| q.observation.clone());
    match obs.and_then(|o| renderer.render(&r.environment, &o, &[], seat, &r.prompt_options()).ok()) {
        Some(p) => p.messages.iter().map(|m| m.content.chars().count()).sum::<usize>() as f64,
        None => 0.0,
    }
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
