//! Asking one isolated decision (the profile methods §M03, §M05): one user message in a fresh context —
//! no system prompt, persona, goal sentence, request for reasons or history from other
//! decisions — with the answer asked in one JSON field. A retry is another attempt at the same
//! slot; the first valid answer is kept; a slot without one stays missing (no fallback).
//!
//! A failure at the server is not an answer. A transport failure (connection refused, time-out,
//! HTTP 429 or 5xx once the client's retries are spent) leaves the slot unasked: the runner asks
//! it again in a later pass of the same invocation, and a later invocation asks what is still
//! unasked, as if the failure had never happened (the same attempt numbers, seeds and cache
//! keys). A run of consecutive transport failures ([`BREAKER`]) pauses the pass: the questions
//! not yet sent wait for the next one. A failure of the request itself (a reply without content,
//! HTTP 400, 413, 422 …) is a failed attempt at the slot (status `error`), as an unusable answer
//! is: after the attempt limit the slot is `missing`, which `--retry-missing` asks again. A
//! failure that every request shares (no endpoint, a wrong key or model: HTTP 401, 403, 404)
//! stops the study. `missing` is kept for a model's unusable answers after the attempt limit.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

use agora_agents::llm::{
    parse_cut_reply, parse_reply, ChatRequest, Message, ModelSpec, ParseOutcome, Session, SessionError, StructuredMode,
};
use agora_environments::{Action, ActionSpace};
use serde_json::{json, Value};

/// What a model is asked to answer.
#[derive(Clone, Debug)]
pub enum Ask {
    /// A whole number from 0 to `max`.
    Amount {
        /// The largest legal answer.
        max: i64,
    },
    /// One of these labels, in display order.
    Choice {
        /// The labels.
        labels: Vec<String>,
    },
}

impl Ask {
    fn space(&self) -> ActionSpace {
        match self {
            Ask::Amount { max } => ActionSpace::Amount { min: 0, max: *max },
            Ask::Choice { labels } => ActionSpace::Choice { labels: labels.clone().into() },
        }
    }

    fn schema(&self, field: &str) -> Value {
        let prop = match self {
            Ask::Amount { max } => json!({"type": "integer", "minimum": 0, "maximum": max}),
            Ask::Choice { labels } => json!({"type": "string", "enum": labels}),
        };
        json!({"type": "object", "properties": {field: prop}, "required": [field], "additionalProperties": false})
    }

    /// Whether `content` is exactly the requested format: a JSON object whose only key is the
    /// field, holding a legal value (GR3's strict compliance).
    pub fn strict(&self, content: &str, field: &str) -> bool {
        let Ok(Value::Object(m)) = serde_json::from_str::<Value>(content.trim()) else { return false };
        if m.len() != 1 {
            return false;
        }
        match (self, m.get(field)) {
            (Ask::Amount { max }, Some(Value::Number(n))) => n.as_i64().is_some_and(|x| (0..=*max).contains(&x)),
            (Ask::Choice { labels }, Some(Value::String(s))) => labels.contains(s),
            _ => false,
        }
    }
}

/// The answer read from a reply: an index into the labels, or the amount stated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Answer {
    /// The label at this display index.
    Label(usize),
    /// The amount stated.
    Amount(i64),
}

/// One attempt's record (a row of the store's `profile_attempts`).
pub use agora_records::families::profile::Attempt;

/// A slot's outcome.
#[derive(Clone, Debug)]
pub struct Asked {
    /// The first valid answer, if any.
    pub answer: Option<Answer>,
    /// Every attempt made.
    pub attempts: Vec<Attempt>,
}

/// Consecutive transport failures after which a pass stops sending: the questions left wait for
/// the next pass.
pub const BREAKER: usize = 16;

/// Why a slot has no record yet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    /// What happened, with the slot.
    pub reason: String,
    /// Whether asking again later may succeed (a transport failure, or a question not sent
    /// because the pass paused); otherwise the study stops.
    pub transient: bool,
}

impl From<String> for Failure {
    fn from(reason: String) -> Failure {
        Failure { reason, transient: false }
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.reason)
    }
}

/// What the concurrent questions of one model share.
pub struct Asker {
    /// The declaration.
    pub spec: ModelSpec,
    /// The model session the questions are asked through (the store's reply cache; in
    /// replay, answers from it only).
    pub session: Session,
    /// The master seed the sampling seeds derive from.
    pub master_seed: u64,
    /// A failure every request shares (see the module documentation): once set, no further
    /// question is sent in this invocation.
    pub outage: OnceLock<String>,
    /// Set when [`BREAKER`] transport failures came in a row: no further question is sent in
    /// this pass ([`Asker::next_pass`] clears it).
    pub paused: Mutex<Option<String>>,
    /// Transport failures since the last reply.
    pub streak: AtomicUsize,
    /// Attempts already made at a slot asked again by `--retry-missing` (slot key → the last
    /// attempt number recorded); a retry continues the slot's attempt numbers.
    pub retry: HashMap<String, u32>,
    /// Answered slots of a B4 episode asked again by `--retry-missing`: their recorded attempts,
    /// whose adopted answer is kept (read again from its reply, not asked).
    pub kept: HashMap<String, Vec<Attempt>>,
}

impl Asker {
    /// A model's asker (see the fields).
    pub fn new(
        spec: ModelSpec,
        session: Session,
        master_seed: u64,
        retry: HashMap<String, u32>,
        kept: HashMap<String, Vec<Attempt>>,
    ) -> Asker {
        Asker {
            spec,
            session,
            master_seed,
            outage: OnceLock::new(),
            paused: Mutex::new(None),
            streak: AtomicUsize::new(0),
            retry,
            kept,
        }
    }

    /// Clears a paused pass, so that the next one sends again.
    pub fn next_pass(&self) {
        *self.paused.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = None;
        self.streak.store(0, Ordering::Relaxed);
    }

    /// Why no question may be sent now, and whether a later pass may send it.
    fn stopped(&self) -> Option<Failure> {
        if let Some(reason) = self.outage.get() {
            return Some(Failure { reason: format!("not asked after the server failed: {reason}"), transient: false });
        }
        let paused = self.paused.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        paused.as_ref().map(|reason| Failure {
            reason: format!("not asked in this pass after {BREAKER} failures in a row: {reason}"),
            transient: true,
        })
    }

    /// Asks `text` at `slot_key` until a valid answer or the declared attempts run out. An error
    /// is returned when the server fails (the slot is not answered and nothing more is sent:
    /// [`Asker::outage`]) and in replay when a reply is not cached (the study cannot be
    /// reproduced).
    pub async fn ask(&self, text: &str, field: &str, ask: &Ask, slot_key: &str) -> Result<Asked, Failure> {
        let space = ask.space();
        let read = |reply: &str, cut: bool| -> Result<Answer, String> {
            let outcome = if cut { parse_cut_reply(reply, &space, field) } else { parse_reply(reply, &space, field) };
            match outcome {
                ParseOutcome::Parsed { action: Action::Choice(i), .. } => Ok(Answer::Label(i as usize)),
                ParseOutcome::Parsed { action: Action::Amount(x), .. } => Ok(Answer::Amount(x)),
                ParseOutcome::Parsed { .. } => Err("illegal".into()),
                other => Err(other.status().to_string()),
            }
        };
        self.ask_with(text, field, ask, slot_key, &read).await
    }

    /// [`Asker::ask`] with the answer read by `read` (the reply and whether the server cut it
    /// → the answer, or the attempt's status saying why there is none): GR reads the whole
    /// reply by its full-answer review.
    pub async fn ask_with(
        &self,
        text: &str,
        field: &str,
        ask: &Ask,
        slot_key: &str,
        read: &(dyn Fn(&str, bool) -> Result<Answer, String> + Sync),
    ) -> Result<Asked, Failure> {
        if let Some(stop) = self.stopped() {
            return Err(stop);
        }
        let space = ask.space();
        if let Some(kept) = self.kept.get(slot_key) {
            let answer = kept.last().and_then(|a| match parse_reply(&a.reply, &space, field) {
                ParseOutcome::Parsed { action, .. } => Some(action),
                _ => match parse_cut_reply(&a.reply, &space, field) {
                    ParseOutcome::Parsed { action, .. } => Some(action),
                    _ => None,
                },
            });
            let answer = match answer {
                Some(Action::Choice(i)) => Answer::Label(i as usize),
                Some(Action::Amount(x)) => Answer::Amount(x),
                _ => return Err(format!("{slot_key}: the recorded answer no longer reads as an answer").into()),
            };
            return Ok(Asked { answer: Some(answer), attempts: kept.clone() });
        }
        let mut attempts = Vec::new();
        let first = self.retry.get(slot_key).map_or(1, |done| done + 1);
        for attempt in first..first + self.spec.max_attempts.max(1) {
            // A stop reaches every slot, in flight too, before its next attempt: the slot stays
            // unasked and is asked later from its first attempt (cached).
            if let Some(stop) = self.stopped() {
                return Err(stop);
            }
            let req = ChatRequest {
                messages: vec![Message { role: "user".into(), content: text.to_string() }],
                temperature: self.spec.temperature,
                max_tokens: self.spec.max_tokens,
                seed: self.spec.send_seed.then(|| {
                    agora_engine::seed::derive(self.master_seed, &["profile", slot_key, &attempt.to_string()])
                        % (1 << 31)
                }),
                schema: (self.spec.structured != StructuredMode::Instructions).then(|| ask.schema(field)),
                chat_template_kwargs: self.spec.template_kwargs(),
            };
            let request_json = serde_json::to_string(&req).map_err(|e| e.to_string())?;
            let slot = format!("{slot_key}/{attempt}");
            let (reply, key) = match self.session.call(&self.spec.name, &req, &request_json, &slot).await {
                Ok(r) => {
                    self.streak.store(0, Ordering::Relaxed);
                    (r.reply, r.key)
                }
                Err(SessionError::NotCached) => {
                    let why = "run without --replay to call the server";
                    return Err(format!("replay: no cached reply for {slot_key} attempt {attempt}; {why}").into());
                }
                Err(SessionError::Call(e)) if e.per_request() => {
                    // The request itself failed: a failed attempt, recorded with the failure (no
                    // reply is cached for it).
                    self.streak.store(0, Ordering::Relaxed);
                    attempts.push(Attempt {
                        attempt,
                        status: "error".into(),
                        reply: e.to_string(),
                        cache_key: Session::key(&self.spec, &request_json, &slot),
                    });
                    continue;
                }
                Err(SessionError::Call(e @ agora_agents::llm::CallError::Exhausted { .. })) => {
                    // Not an answer, and not an attempt: the slot stays unasked for a later pass.
                    let reason = e.to_string();
                    if self.streak.fetch_add(1, Ordering::Relaxed) + 1 >= BREAKER {
                        let mut paused = self.paused.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                        paused.get_or_insert_with(|| reason.clone());
                    }
                    return Err(Failure { reason: format!("{slot_key}: {reason}"), transient: true });
                }
                Err(e) => {
                    // A failure every request shares: nothing more is sent.
                    let reason = e.to_string();
                    let _ = self.outage.set(reason.clone());
                    return Err(format!("{slot_key}: {reason}").into());
                }
            };
            match read(&reply.content, reply.truncated()) {
                Ok(answer) => {
                    attempts.push(Attempt {
                        attempt,
                        status: "ok".into(),
                        reply: reply.content.clone(),
                        cache_key: key,
                    });
                    return Ok(Asked { answer: Some(answer), attempts });
                }
                Err(status) => attempts.push(Attempt { attempt, status, reply: reply.content.clone(), cache_key: key }),
            }
        }
        Ok(Asked { answer: None, attempts })
    }
}
