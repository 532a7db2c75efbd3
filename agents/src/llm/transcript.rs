//! The record of one model call, and the sink a run's calls are gathered in.

use std::sync::{Arc, Mutex};

use agora_environments::Observation;
use serde::{Deserialize, Serialize};

/// One model call as recorded: what was sent, what came back, what was made of it. The
/// default is the empty record: every text empty, every number zero, nothing optional set.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Transcript {
    /// The seat that made the call.
    pub seat: u32,
    /// The seat's n-th decision in the run (0-based); probes use the slot of the first decision.
    pub slot: u64,
    /// 1-based attempt within the slot.
    pub attempt: u32,
    /// `decision` or `probe`.
    pub kind: String,
    /// The round of the decision.
    pub round: u32,
    /// The seat's role in the decision.
    pub role: String,
    /// The model's name in the study.
    pub model: String,
    /// The model id the server was asked for.
    pub served_id: String,
    /// Base URL of the server that answered; empty for a fallback.
    pub endpoint: String,
    /// The request as sent, in JSON: messages and sampling parameters.
    pub messages_json: String,
    /// The reply's content, unaltered.
    pub raw_reply: String,
    /// The parsed action (encoded), or the fallback action.
    pub action: Option<String>,
    /// The reason the model gave with a parsed action, if any; a reason the token limit cut
    /// ends with [`CUT_MARK`](super::parse::CUT_MARK).
    pub reason: Option<String>,
    /// `ok`, `unparsable`, `illegal`, `truncated`, `fallback`, `recognised` or
    /// `not-recognised`. `truncated`: the server cut the reply at the token limit
    /// (`finish_reason: "length"`); with an action, the answer was complete before the cut and
    /// the decision stands; without one, the slot is asked again like an unparsable reply.
    pub parse_status: String,
    /// Why a reply was rejected, what the probe looked for, or why the fallback was taken.
    pub detail: String,
    /// Milliseconds the call took; zero for a fallback.
    pub latency_ms: f64,
    /// Tokens in the prompt, as the server reported them.
    pub prompt_tokens: Option<u64>,
    /// Tokens in the reply, as the server reported them.
    pub completion_tokens: Option<u64>,
}

impl Transcript {
    /// The record of a call about the decision `obs` asks of `seat` in its `slot`, before the
    /// call fills it in: no attempt, model, endpoint, request, reply or outcome yet.
    pub fn decision(seat: usize, slot: u64, obs: &Observation) -> Transcript {
        Transcript {
            seat: seat as u32,
            slot,
            kind: "decision".into(),
            round: obs.round,
            role: obs.role.as_str().into(),
            ..Transcript::default()
        }
    }
}

/// Where the model calls of one run are gathered: every LLM seat of the run pushes into it,
/// and the engine drains it into the run's records when the run ends. It travels beside the
/// policies, not through the [`Policy`](crate::Policy) trait, which knows nothing of models.
#[derive(Clone, Debug, Default)]
pub struct TranscriptSink(Arc<Mutex<Vec<Transcript>>>);

impl TranscriptSink {
    /// Records one call.
    pub fn push(&self, t: Transcript) {
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push(t);
    }

    /// Hands over every call recorded so far, in (seat, slot, probe first, attempt) order:
    /// calls of different seats arrive in whatever order their replies came back.
    pub fn drain(&self) -> Vec<Transcript> {
        let mut v = std::mem::take(&mut *self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner));
        v.sort_by(|a, b| {
            (a.seat, a.slot, a.kind != "probe", a.attempt).cmp(&(b.seat, b.slot, b.kind != "probe", b.attempt))
        });
        v
    }
}
