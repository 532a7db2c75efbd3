//! The LLM-backed policy.

use std::collections::VecDeque;
use std::sync::Arc;

use agora_environments::{Action, ActionSpace, EnvSpec, Fallback, Feedback, Observation};
use rand::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use super::client::{ChatRequest, LlmClient};
use super::parse::{parse_cut_reply, parse_reply, ParseOutcome};
use super::prompt::{paradigm, PromptOptions, PromptRenderer, SystemMemo};
use super::session::{Session, SessionError};
use super::transcript::Transcript;
use crate::error::AgentError;
use crate::policy::{Decision, Policy, PolicyMeta};

/// What every LLM policy of a study shares: the model session (clients, reply cache, replay)
/// and the templates.
#[derive(Clone)]
pub struct LlmContext {
    /// The model session every seat asks through.
    pub session: Arc<Session>,
    /// The prompt templates.
    pub renderer: Arc<PromptRenderer>,
}

/// Who the policy is within its run.
#[derive(Clone, Debug)]
pub struct LlmSeat {
    /// The run's key, part of every cache key of the seat's calls.
    pub run_key: String,
    /// The run's seed, from which request seeds and the fallback action are derived.
    pub run_seed: u64,
    /// The seat's index in the roster.
    pub seat: usize,
    /// The environment the run plays.
    pub environment: EnvSpec,
    /// The run's prompt options.
    pub options: PromptOptions,
    /// Where this seat's calls are recorded (shared by the run's seats).
    pub transcripts: super::TranscriptSink,
    /// The run's seed derivation.
    pub derive: DeriveSeed,
}

/// An agent whose decisions come from a language model.
pub struct LlmPolicy {
    ctx: LlmContext,
    client: Arc<LlmClient>,
    /// Shared with the seat's decisions in flight (never copied per decision).
    seat: Arc<LlmSeat>,
    /// The feedback kept, shared with the decision in flight; a decision ends before the next
    /// feedback arrives, so an update writes in place.
    history: Arc<VecDeque<Feedback>>,
    slot: u64,
    probed: bool,
    /// The seat's last system message, reused while its rules and action space stay the same.
    memo: Arc<std::sync::Mutex<SystemMemo>>,
}

/// A seed derivation: a 64-bit seed from a parent seed and labelled parts. The engine hands
/// its one derivation (`agora_engine::seed::derive`) to every LLM seat, so that request seeds
/// and fallback draws come from the same scheme as every other stream of a run.
pub type DeriveSeed = fn(u64, &[&str]) -> u64;

/// The first option of a choice as this agent's list shows it (its own order of the pool,
/// reversed by the action-order cell); none where the decision is not a choice.
fn first_listed(obs: &Observation, reversed: bool) -> Option<Action> {
    let ActionSpace::Choice { labels } = &obs.space else { return None };
    let first = obs.labels_shown(reversed).into_iter().next()?;
    labels.iter().position(|l| *l == first).map(|i| Action::Choice(i as u32))
}

/// The fields every call of one decision slot shares; each call fills in the rest.
fn blank_transcript(seat: &LlmSeat, slot: u64, obs: &Observation, spec: &super::ModelSpec) -> Transcript {
    Transcript {
        model: spec.name.clone(),
        served_id: spec.served_id.clone(),
        ..Transcript::decision(seat.seat, slot, obs)
    }
}

/// One call of a decision slot, with what it borrows from the slot.
struct Ask<'a> {
    session: &'a Session,
    client: &'a LlmClient,
    seat: &'a LlmSeat,
    slot: u64,
    slot_id: &'a str,
    attempt: u32,
    kind: &'static str,
}

/// Makes one call of `req`: the reply cached under the request's key, or the server's reply
/// (kept in the cache); with `replay`, a miss is an error. The request's seed is this call's
/// (derived from the seat, slot, kind and attempt). Returns the request as sent, in JSON, and
/// the reply.
async fn ask(a: Ask<'_>, req: &mut ChatRequest) -> Result<(String, super::cache::CachedReply), AgentError> {
    let Ask { session, client, seat, slot, slot_id, attempt, kind } = a;
    let spec = client.spec();
    req.seed = spec.send_seed.then(|| {
        (seat.derive)(seat.run_seed, &["llm", &seat.seat.to_string(), &slot.to_string(), kind, &attempt.to_string()])
            % (1 << 31)
    });
    // Sized up front: the request is kept in the run's transcripts until the run is committed,
    // so it should carry no spare capacity from a serialiser's doubling, nor cost its copies.
    let mut bytes = Vec::with_capacity(req.size_hint());
    serde_json::to_writer(&mut bytes, &*req).map_err(|e| AgentError::Failed(e.to_string()))?;
    bytes.shrink_to_fit();
    let request_json = String::from_utf8(bytes).map_err(|e| AgentError::Failed(e.to_string()))?;
    let slot_key = format!("{slot_id}/{kind}/{attempt}");
    let reply = match session.call(&spec.name, req, &request_json, &slot_key).await {
        Ok(r) => r.reply,
        Err(SessionError::NotCached) => {
            return Err(AgentError::Failed(format!(
                "replay: no cached reply for model `{}`, run {}, seat {}, decision {slot}, attempt {attempt}; run without --replay to call the server",
                spec.name, seat.run_key, seat.seat
            )))
        }
        Err(e) => return Err(AgentError::Server(e.to_string())),
    };
    Ok((request_json, reply))
}

/// A request of a decision slot before its seed is set: the messages, the slot's sampling
/// parameters and the schema.
fn slot_request(
    spec: &super::ModelSpec,
    seat: &LlmSeat,
    messages: Vec<super::client::Message>,
    schema: Option<serde_json::Value>,
    kind: &str,
) -> ChatRequest {
    // A decision asked to reason step by step first gets the larger reasoning budget.
    let max_tokens = if kind == "decision" { spec.reply_budget(seat.options.step_by_step) } else { spec.max_tokens };
    ChatRequest {
        messages,
        temperature: seat.options.temperature.unwrap_or(spec.temperature),
        max_tokens,
        seed: None,
        schema,
        chat_template_kwargs: spec.template_kwargs(),
    }
}

impl LlmPolicy {
    /// A policy for `seat` playing model `model` of `ctx`.
    pub fn new(ctx: &LlmContext, model: &str, seat: LlmSeat) -> Result<LlmPolicy, AgentError> {
        let client = ctx.session.clients().get(model).cloned().ok_or_else(|| AgentError::InvalidParameter {
            policy: super::llm_meta().name,
            field: "model",
            reason: format!("no model named `{model}` is declared"),
        })?;
        Ok(LlmPolicy {
            ctx: ctx.clone(),
            client,
            seat: Arc::new(seat),
            history: Arc::default(),
            slot: 0,
            probed: false,
            memo: Arc::default(),
        })
    }
}

impl Policy for LlmPolicy {
    fn meta(&self) -> &'static PolicyMeta {
        super::llm_meta()
    }

    fn decide(&mut self, obs: &Observation, _rng: &mut dyn RngCore) -> Decision {
        let slot = self.slot;
        self.slot += 1;
        let history = self.history.clone();
        let ask_probe = self.seat.options.recognition_probe && !self.probed;
        self.probed |= ask_probe;
        // The prompt is rendered inside the decision, on whichever runtime worker polls it, so
        // that rendering spreads over the cores instead of queueing on the runner's thread.
        let renderer = self.ctx.renderer.clone();
        let client = self.client.clone();
        let session = self.ctx.session.clone();
        let sink = self.seat.transcripts.clone();
        let seat = self.seat.clone();
        let obs = obs.clone();
        let memo = self.memo.clone();
        Decision::Deferred(Box::pin(async move {
            // One decision of a seat at a time: the memo's lock is never contended.
            let rendered = {
                let mut memo = memo.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                let (front, back) = history.as_slices();
                let history: std::borrow::Cow<'_, [Feedback]> = if back.is_empty() {
                    std::borrow::Cow::Borrowed(front)
                } else {
                    std::borrow::Cow::Owned(history.iter().cloned().collect())
                };
                renderer.render_with(&seat.environment, &obs, &history, seat.seat, &seat.options, &mut memo)
            }
            .map_err(AgentError::Failed)?;
            let probe = ask_probe.then(|| renderer.render_probe(&seat.environment, &obs, &seat.options));
            let spec = client.spec();
            let slot_id = format!("{}/{}/{}", seat.run_key, seat.seat, slot);
            let base = blank_transcript(&seat, slot, &obs, spec);
            let ask_with = |attempt: u32, kind: &'static str| Ask {
                session: &session,
                client: &client,
                seat: &seat,
                slot,
                slot_id: &slot_id,
                attempt,
                kind,
            };
            let mut records = Vec::new();
            if let Some(probe) = probe {
                let mut req = slot_request(spec, &seat, probe.map_err(AgentError::Failed)?, None, "probe");
                let (request_json, reply) = ask(ask_with(1, "probe"), &mut req).await?;
                let (_, keywords) = paradigm(&seat.environment);
                let text = super::parse::strip_deliberation(&reply.content).to_lowercase();
                let recognised = keywords.iter().any(|k| text.contains(k));
                records.push(Transcript {
                    attempt: 1,
                    kind: "probe".into(),
                    endpoint: reply.endpoint.clone(),
                    messages_json: request_json,
                    raw_reply: reply.content.clone(),
                    parse_status: if recognised { "recognised" } else { "not-recognised" }.into(),
                    detail: format!("looked for: {}", keywords.join(" | ")),
                    latency_ms: reply.latency_ms,
                    prompt_tokens: reply.prompt_tokens,
                    completion_tokens: reply.completion_tokens,
                    ..base.clone()
                });
            }
            if seat.options.recognition_probe {
                // The probe cell's run is a probe session (the engine's `ProbeSession`): asked
                // outside the behavioural session, it plays no game, so no behavioural call is
                // spent. The session ignores the action; a legal one, drawn from the run's seed,
                // keeps the interface whole.
                for t in records {
                    sink.push(t);
                }
                let mut rng = Xoshiro256PlusPlus::seed_from_u64((seat.derive)(
                    seat.run_seed,
                    &["probe-session", &seat.seat.to_string(), &slot.to_string()],
                ));
                return Ok(obs.space.sample(&mut rng));
            }
            let super::prompt::Rendered { messages, schema, field, space } = rendered;
            let schema = (spec.structured != super::model::StructuredMode::Instructions).then_some(schema);
            let mut req = slot_request(spec, &seat, messages, schema, "decision");
            let mut chosen = None;
            for attempt in 1..=spec.max_attempts {
                let (request_json, reply) = ask(ask_with(attempt, "decision"), &mut req).await?;
                // The reply is read against the labels the prompt showed (a framing cell's labels
                // in place of the variant's); a choice's index keeps its meaning. A reply cut at
                // the token limit is recorded as `truncated`: its decision stands where the answer
                // was complete before the cut, and is asked again where not.
                let cut = reply.truncated();
                let outcome = if cut {
                    parse_cut_reply(&reply.content, &space, &field)
                } else {
                    parse_reply(&reply.content, &space, &field)
                };
                let mut t = Transcript {
                    attempt,
                    endpoint: reply.endpoint.clone(),
                    messages_json: request_json,
                    raw_reply: reply.content.clone(),
                    parse_status: if cut { "truncated".into() } else { outcome.status().into() },
                    latency_ms: reply.latency_ms,
                    prompt_tokens: reply.prompt_tokens,
                    completion_tokens: reply.completion_tokens,
                    ..base.clone()
                };
                match outcome {
                    ParseOutcome::Parsed { action, reason } => {
                        if cut {
                            t.detail =
                                "cut at the token limit after the answer was complete: the decision stands".into();
                        }
                        t.action = Some(action.encode());
                        t.reason = reason;
                        records.push(t);
                        chosen = Some(action);
                        break;
                    }
                    ParseOutcome::Illegal(d) if cut => {
                        t.detail = format!("cut at the token limit; the answer was complete but illegal: {d}");
                        records.push(t);
                    }
                    ParseOutcome::Unparsable(d) | ParseOutcome::Illegal(d) | ParseOutcome::Truncated(d) => {
                        t.detail = d;
                        records.push(t);
                    }
                }
            }
            let action = match chosen {
                Some(a) => a,
                None => {
                    // The game's fallback: a uniformly random legal action from a stream derived
                    // from the run seed and the slot, or (the naming game's baseline arm) the
                    // first option as this agent's list shows it.
                    let first = first_listed(&obs, seat.options.reversed_actions);
                    let (a, how): (Action, &str) = match (seat.environment.game().fallback(), first) {
                        (Fallback::FirstListed, Some(a)) => (a, "the first-listed option"),
                        _ => {
                            let mut rng = Xoshiro256PlusPlus::seed_from_u64((seat.derive)(
                                seat.run_seed,
                                &["fallback", &seat.seat.to_string(), &slot.to_string()],
                            ));
                            (obs.space.sample(&mut rng), "random legal action")
                        }
                    };
                    records.push(Transcript {
                        attempt: spec.max_attempts + 1,
                        action: Some(a.encode()),
                        parse_status: "fallback".into(),
                        detail: format!("no legal answer in {} attempts; {how}", spec.max_attempts),
                        ..base.clone()
                    });
                    a
                }
            };
            for t in records {
                sink.push(t);
            }
            Ok(action)
        }))
    }

    fn update(&mut self, feedback: &Feedback) {
        let history = Arc::make_mut(&mut self.history);
        history.push_back(feedback.clone());
        while history.len() > 64 {
            history.pop_front();
        }
    }

    fn reset(&mut self) {
        Arc::make_mut(&mut self.history).clear();
        self.slot = 0;
        self.probed = false;
    }
}
