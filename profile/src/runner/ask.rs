//! Asking one isolated decision (the profile methods §M03, §M05): one user message in a fresh context —
//! no system prompt, persona, goal sentence, request for reasons or history from other
//! decisions — with the answer asked in one JSON field. A retry is another attempt at the same
//! slot; the first valid answer is kept; a slot without one stays missing (no fallback).
//!
//! A failure at the server (connection refused, time-out, HTTP 429 or 5xx once the client's
//! retries are spent, or a refusal) is not an answer: the slot stays unasked, every question
//! not yet sent stops, and the study ends with the reason; a resume asks those slots as if the
//! failure had never happened (the same attempt numbers, seeds and cache keys). `missing` is kept
//! for a model's unusable answers after the attempt limit.

use std::collections::HashMap;
use std::sync::OnceLock;

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

/// One attempt's record.
#[derive(Clone, Debug)]
pub struct Attempt {
    /// 1-based.
    pub attempt: u32,
    /// `ok`, `unparsable`, `illegal`, `truncated` or `error`.
    pub status: String,
    /// The reply text (or the failure).
    pub reply: String,
    /// The reply cache key.
    pub cache_key: String,
}

/// A slot's outcome.
#[derive(Clone, Debug)]
pub struct Asked {
    /// The first valid answer, if any.
    pub answer: Option<Answer>,
    /// Every attempt made.
    pub attempts: Vec<Attempt>,
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
    /// The first server failure: once set, no further question is sent.
    pub outage: OnceLock<String>,
    /// Attempts already made at a slot asked again by `--retry-missing` (slot key → the last
    /// attempt number recorded); a retry continues the slot's attempt numbers.
    pub retry: HashMap<String, u32>,
    /// Answered slots of a B4 episode asked again by `--retry-missing`: their recorded attempts,
    /// whose adopted answer is kept (read again from its reply, not asked).
    pub kept: HashMap<String, Vec<Attempt>>,
}

impl Asker {
    /// Asks `text` at `slot_key` until a valid answer or the declared attempts run out. An error
    /// is returned when the server fails (the slot is not answered and nothing more is sent:
    /// [`Asker::outage`]) and in replay when a reply is not cached (the study cannot be
    /// reproduced).
    pub async fn ask(&self, text: &str, field: &str, ask: &Ask, slot_key: &str) -> Result<Asked, String> {
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
    ) -> Result<Asked, String> {
        if let Some(reason) = self.outage.get() {
            return Err(format!("not asked after the server failed: {reason}"));
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
                _ => return Err(format!("{slot_key}: the recorded answer no longer reads as an answer")),
            };
            return Ok(Asked { answer: Some(answer), attempts: kept.clone() });
        }
        let mut attempts = Vec::new();
        let first = self.retry.get(slot_key).map_or(1, |done| done + 1);
        for attempt in first..first + self.spec.max_attempts.max(1) {
            // A failure at the server stops every slot, in flight too, before its next attempt:
            // the slot stays unasked and a resume asks it from its first attempt (cached).
            if let Some(reason) = self.outage.get() {
                return Err(format!("not asked after the server failed: {reason}"));
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
            let (reply, key) =
                match self.session.call(&self.spec.name, &req, &request_json, &format!("{slot_key}/{attempt}")).await {
                    Ok(r) => (r.reply, r.key),
                    Err(SessionError::NotCached) => {
                        return Err(format!(
                    "replay: no cached reply for {slot_key} attempt {attempt}; run without --replay to call the server"
                ))
                    }
                    Err(e) => {
                        // Not an answer, and not an attempt: the slot stays unasked.
                        let reason = e.to_string();
                        let _ = self.outage.set(reason.clone());
                        return Err(format!("{slot_key}: {reason}"));
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
