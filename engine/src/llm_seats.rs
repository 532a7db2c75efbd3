//! A plan's LLM seats: their clients and reply cache ([`prepare`], over the one constructor of
//! a model session, [`model_session`]), the policy factory the
//! runner builds them with ([`LlmSeats::factory`]), the calls a plan will make
//! ([`call_estimates`]) and the parse and fallback counts of a study's calls
//! (`agora_engine::store::transcript_counts`).

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use agora_agents::llm::{
    CallError, LlmContext, LlmPolicy, LlmSeat, ModelSpec, PromptRenderer, Session, TranscriptSink,
};
use agora_agents::Policy;
use rand::SeedableRng;

use crate::runner::PolicyFactory;
use crate::spec::RunSpec;
use crate::store::SqliteCache;
use crate::EngineError;

/// What LLM seats of a plan share.
pub struct LlmSeats {
    ctx: LlmContext,
}

impl LlmSeats {
    /// The model session the seats ask through (its counts of calls answered).
    pub fn session(&self) -> &Arc<Session> {
        &self.ctx.session
    }

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
                            derive: crate::seed::derive,
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

/// Why a plan's LLM seats cannot be prepared.
#[derive(Debug, thiserror::Error)]
pub enum PrepareError {
    /// A model declaration cannot be used (an API key variable not set, a bad field): bad
    /// input.
    #[error("{0}")]
    Declaration(String),
    /// A model's server does not answer.
    #[error(transparent)]
    Server(#[from] CallError),
    /// The reply cache cannot be opened.
    #[error(transparent)]
    Store(#[from] EngineError),
}

/// Whether any run has a seat played by a language model.
pub fn uses_llm(runs: &[RunSpec]) -> bool {
    runs.iter().any(|r| r.seats.iter().any(|s| s.model().is_some()))
}

/// Prepares the model session when the runs have LLM seats ([`Session`]: the models they use,
/// keys from the environment, the store's reply cache), every server checked unless replaying.
pub fn prepare(
    runs: &[RunSpec],
    models: &[ModelSpec],
    store: &Path,
    replay: bool,
) -> Result<Option<LlmSeats>, PrepareError> {
    if !uses_llm(runs) {
        return Ok(None);
    }
    let used: std::collections::BTreeSet<&str> =
        runs.iter().flat_map(|r| r.seats.iter().filter_map(|s| s.model())).collect();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| PrepareError::Declaration(format!("starting the runtime: {e}")))?;
    let session = model_session(store, models.iter().filter(|m| used.contains(m.name.as_str())), replay, &rt)?;
    Ok(Some(LlmSeats { ctx: LlmContext { session: Arc::new(session), renderer: Arc::new(PromptRenderer::new()) } }))
}

/// The one way a command opens a model session over a store: the declared `models` (their
/// clients, keys from the environment), the store's reply cache, and the replay switch (answers
/// from the cache only, no server asked). Unless replaying, one endpoint of each model must
/// answer, checked on `rt`.
pub fn model_session<'a>(
    store: &Path,
    models: impl IntoIterator<Item = &'a ModelSpec>,
    replay: bool,
    rt: &tokio::runtime::Runtime,
) -> Result<Session, PrepareError> {
    let cache = Arc::new(SqliteCache::open(store).map_err(EngineError::from)?);
    model_session_on(cache, models, replay, rt)
}

/// [`model_session`] over a reply cache already open, for a command that asks its models one
/// session at a time and shares the store's cache between them (the profile).
pub fn model_session_on<'a>(
    cache: Arc<SqliteCache>,
    models: impl IntoIterator<Item = &'a ModelSpec>,
    replay: bool,
    rt: &tokio::runtime::Runtime,
) -> Result<Session, PrepareError> {
    let session = Session::new(models, cache, replay).map_err(PrepareError::Declaration)?;
    rt.block_on(session.check_reachable())?;
    Ok(session)
}

/// The calls a model will be asked for by a plan's runs.
#[derive(Clone, Debug, PartialEq)]
pub struct CallEstimate {
    /// The model.
    pub model: String,
    /// Runs with one of its seats.
    pub runs: usize,
    /// Calls at the first attempt.
    pub calls: u64,
    /// Whether `calls` is an upper bound (a game that may end early).
    pub upper: bool,
    /// Prompt tokens: the first prompt of each condition at four characters a token, times
    /// its calls.
    pub prompt_tokens: f64,
    /// The store those calls are expected to take ([`store_bytes_per_call`]).
    pub store_bytes: f64,
}

/// Per model, the calls the runs will make, their prompt tokens and the store they take.
pub fn call_estimates(runs: &[RunSpec], models: &[ModelSpec]) -> Vec<CallEstimate> {
    let renderer = PromptRenderer::new();
    let mut per_model: BTreeMap<String, CallEstimate> = BTreeMap::new();
    let mut first: BTreeMap<String, Option<FirstPrompt>> = BTreeMap::new();
    for r in runs {
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
            let spec = models.iter().find(|m| m.name == *model);
            let e = per_model.entry(model.to_string()).or_insert_with(|| CallEstimate {
                model: model.to_string(),
                runs: 0,
                calls: 0,
                upper: false,
                prompt_tokens: 0.0,
                store_bytes: 0.0,
            });
            e.runs += 1;
            e.calls += calls;
            e.upper |= upper;
            if let Some(p) = prompt {
                e.prompt_tokens += calls as f64 * p.chars as f64 / 4.0;
                e.store_bytes += calls as f64 * store_bytes_per_call(&p.request_json, spec);
            }
        }
    }
    per_model.into_values().collect()
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
pub const REPLY_BYTES: usize = 64;

/// The store one call is expected to add, from a request like the ones it will make: the
/// list of parts its transcript row keeps (part ids taken as 7 digits), the longest line of
/// the user message as new text (a history line or the question: a call's one new part, with
/// its 16-byte hash in the table and its index), the row's other columns with a
/// [`REPLY_BYTES`]-byte reply, and the reply cache's row (its 64-character key in the table
/// and its index, the reply and the facts kept with it). Static parts are left out: they are
/// written once per store.
pub fn store_bytes_per_call(request_json: &str, spec: Option<&agora_agents::llm::ModelSpec>) -> f64 {
    use crate::request_parts::{cut, encode_list, pieces};
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
