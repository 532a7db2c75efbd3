//! A human seat as the engine sees it: one more policy whose decisions are deferred. Its
//! decision is the page an LLM seat's prompt is made of (the same rules, labels, history and
//! payoffs), posted to the [`Desk`](crate::desk::Desk) for the seat's participant, and awaited
//! until they answer or the decision time runs out; then the seat's stand-in (a classical
//! policy, fed the same observations all along) plays it. Every decision goes into the run's
//! transcripts with who made it: `human` with the participant's opaque id and response time, or
//! the stand-in with the reason.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use agora_agents::llm::{PromptOptions, PromptRenderer, Transcript, TranscriptSink};
use agora_agents::{AgentError, Decision, Policy, PolicyMeta};
use agora_environments::{EnvSpec, Feedback, Observation};
use rand::RngCore;

use crate::desk::{Desk, Submitted};
use crate::page::Page;

/// Decisions in a row a participant may miss before the stand-in plays the rest of their seat.
pub const MISSES_BEFORE_DROPPED: u32 = 2;

/// What a human seat needs beyond its specification.
pub struct HumanSeat {
    /// The desk decisions are posted to.
    pub desk: Arc<Desk>,
    /// The society (index into the desk's societies).
    pub society: usize,
    /// The society's run key.
    pub run_key: String,
    /// The seat.
    pub seat: usize,
    /// The participant's opaque id; `None` when nobody took the seat.
    pub participant: Option<String>,
    /// The game.
    pub environment: EnvSpec,
    /// The run's prompt options (its cell's factors).
    pub options: PromptOptions,
    /// The templates the LLM seats' prompts come from.
    pub renderer: Arc<PromptRenderer>,
    /// The run's transcripts.
    pub transcripts: TranscriptSink,
    /// Time for one decision.
    pub decision_time: Duration,
}

/// A seat played by a person, with its stand-in.
pub struct HumanPolicy {
    seat: Arc<HumanSeat>,
    stand_in: Box<dyn Policy>,
    stand_in_name: &'static str,
    history: Vec<Feedback>,
    slot: u64,
    missed: Arc<AtomicU32>,
}

impl HumanPolicy {
    /// A human seat with `stand_in` for the decisions nobody makes.
    pub fn new(seat: HumanSeat, stand_in: Box<dyn Policy>) -> HumanPolicy {
        let stand_in_name = stand_in.meta().name;
        HumanPolicy {
            seat: Arc::new(seat),
            stand_in,
            stand_in_name,
            history: Vec::new(),
            slot: 0,
            missed: Arc::default(),
        }
    }
}

fn transcript(seat: &HumanSeat, slot: u64, obs: &Observation) -> Transcript {
    Transcript {
        seat: seat.seat as u32,
        slot,
        attempt: 1,
        kind: "decision".into(),
        round: obs.round,
        role: obs.role.as_str().into(),
        model: "human".into(),
        served_id: seat.participant.clone().unwrap_or_default(),
        endpoint: agora_agents::HUMAN_ENDPOINT.into(),
        messages_json: String::new(),
        raw_reply: String::new(),
        action: None,
        reason: None,
        parse_status: String::new(),
        detail: String::new(),
        latency_ms: 0.0,
        prompt_tokens: None,
        completion_tokens: None,
    }
}

impl Policy for HumanPolicy {
    fn meta(&self) -> &'static PolicyMeta {
        &agora_agents::HUMAN
    }

    fn decide(&mut self, obs: &Observation, rng: &mut dyn RngCore) -> Decision {
        let slot = self.slot;
        self.slot += 1;
        // The stand-in decides every decision, from the seat's own stream, so that its play is
        // the same whether or not the person answers.
        let stand = match self.stand_in.decide(obs, rng) {
            Decision::Ready(a) => a,
            Decision::Deferred(_) => obs.space.sample(rng),
        };
        let seat = self.seat.clone();
        let mut base = transcript(&seat, slot, obs);
        let standing_in = |base: &mut Transcript, why: String| {
            base.served_id = String::new();
            base.model = format!("stand-in:{}", self.stand_in_name);
            base.action = Some(stand.encode());
            base.parse_status = "fallback".into();
            base.detail = why;
        };
        let Some(participant) = seat.participant.clone() else {
            standing_in(&mut base, "seat not taken: nobody joined before the waiting room closed".into());
            seat.transcripts.push(base);
            return Decision::Ready(stand);
        };
        if self.missed.load(Ordering::SeqCst) >= MISSES_BEFORE_DROPPED {
            standing_in(
                &mut base,
                format!("participant {participant} missed {MISSES_BEFORE_DROPPED} decisions in a row: stand-in from then on"),
            );
            seat.transcripts.push(base);
            return Decision::Ready(stand);
        }
        let page = match seat.renderer.render(&seat.environment, obs, &self.history, seat.seat, &seat.options) {
            Ok(r) => Page::from_rendered(&r, obs),
            Err(e) => return Decision::Deferred(Box::pin(async move { Err(AgentError::Failed(e)) })),
        };
        base.messages_json = page.record_json();
        // A decision the participant made before a restart is read back, not asked again.
        if let Some(answer) = seat.desk.stored_answer(&seat.run_key, seat.seat, slot) {
            let action = answer.action.clone();
            record_answer(&mut base, &answer);
            base.detail = "answered before the server restarted".into();
            seat.transcripts.push(base);
            return Decision::Ready(action);
        }
        let rx = seat.desk.post(seat.society, seat.seat, slot, page, &participant);
        let missed = self.missed.clone();
        let stand_in_name = self.stand_in_name;
        Decision::Deferred(Box::pin(async move {
            let (nonce, mut rx) = rx;
            let started = Instant::now();
            let answer = tokio::select! {
                r = &mut rx => r.ok(),
                () = tokio::time::sleep(seat.decision_time) => None,
            };
            // Withdrawn under the desk's lock: a submission that took the decision first has
            // already been sent, and is read here.
            let answer = match answer {
                Some(a) => Some(a),
                None if seat.desk.withdraw(seat.society, seat.seat, &nonce) => None,
                None => rx.await.ok(),
            };
            match answer {
                Some(a) => {
                    missed.store(0, Ordering::SeqCst);
                    record_answer(&mut base, &a);
                    seat.transcripts.push(base);
                    Ok(a.action)
                }
                None => {
                    missed.fetch_add(1, Ordering::SeqCst);
                    base.model = format!("stand-in:{stand_in_name}");
                    base.action = Some(stand.encode());
                    base.parse_status = "fallback".into();
                    base.latency_ms = started.elapsed().as_secs_f64() * 1000.0;
                    base.detail = format!(
                        "participant {} gave no answer within {} s: stand-in {stand_in_name} played",
                        base.served_id,
                        seat.decision_time.as_secs()
                    );
                    seat.transcripts.push(base);
                    Ok(stand)
                }
            }
        }))
    }

    fn update(&mut self, feedback: &Feedback) {
        self.history.push(feedback.clone());
        self.stand_in.update(feedback);
    }

    fn reset(&mut self) {
        self.history.clear();
        self.stand_in.reset();
        self.slot = 0;
    }
}

fn record_answer(t: &mut Transcript, a: &Submitted) {
    t.action = Some(a.action.encode());
    t.raw_reply = a.raw.clone();
    t.parse_status = "ok".into();
    t.latency_ms = a.response_ms;
}
