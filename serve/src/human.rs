//! A human seat as the engine sees it: one more policy whose decisions are deferred. Its
//! decision is the page an LLM seat's prompt is made of (the same rules, labels, history and
//! payoffs), posted to the [`Desk`](crate::desk::Desk) for the seat's participant, and awaited
//! until they answer or the decision time runs out; then the seat's stand-in (a classical
//! policy, fed the same observations all along) plays it. Every decision goes into the run's
//! transcripts with who made it: `human` with the participant's opaque id and response time, or
//! the stand-in with the reason.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use agora_agents::llm::{PromptOptions, PromptRenderer, Transcript, TranscriptSink};
use agora_agents::{AgentError, Decision, Policy, PolicyMeta};
use agora_environments::{EnvSpec, Feedback, Observation};
use rand::RngCore;

use crate::desk::{Desk, Outcome, Submitted, TimedOut};
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
        attempt: 1,
        model: "human".into(),
        served_id: seat.participant.clone().unwrap_or_default(),
        endpoint: agora_agents::HUMAN_ENDPOINT.into(),
        ..Transcript::decision(seat.seat, slot, obs)
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
        // A decision posted before a restart is read back, never asked again: the participant's
        // answer, or the stand-in's play where it timed out. Either is replayed only against
        // the very page the participant was shown.
        if let Some(outcome) = seat.desk.stored(&seat.run_key, seat.seat, slot) {
            if outcome.page_version() != page.version {
                let why = format!(
                    "run {}: decision {slot} of seat {} replays as page {} but participant {participant} was shown \
                     page {}; the run is not played on with a history they never saw",
                    seat.run_key,
                    seat.seat,
                    page.version,
                    outcome.page_version()
                );
                return Decision::Deferred(Box::pin(async move { Err(AgentError::Failed(why)) }));
            }
            let action = match outcome {
                Outcome::Answered(answer) => {
                    self.missed.store(0, Ordering::SeqCst);
                    record_answer(&mut base, &answer);
                    base.detail = "answered before the server restarted".into();
                    answer.action
                }
                Outcome::TimedOut(t) => {
                    self.missed.fetch_add(1, Ordering::SeqCst);
                    record_timeout(&mut base, self.stand_in_name, &t, seat.decision_time);
                    base.detail.push_str(" (before the server restarted)");
                    t.action
                }
            };
            seat.transcripts.push(base);
            return Decision::Ready(action);
        }
        let rx = seat.desk.post(seat.society, seat.seat, slot, page, &participant);
        let missed = self.missed.clone();
        let stand_in_name = self.stand_in_name;
        Decision::Deferred(Box::pin(async move {
            let (nonce, mut rx) = rx;
            let answer = tokio::select! {
                r = &mut rx => r.ok(),
                () = tokio::time::sleep(seat.decision_time) => None,
            };
            if let Some(a) = answer {
                missed.store(0, Ordering::SeqCst);
                record_answer(&mut base, &a);
                seat.transcripts.push(base);
                return Ok(a.action);
            }
            // Taken back and stored as the stand-in's under the desk's lock, before the engine
            // hears of it; a submission that took the decision first has been stored and sent,
            // and is read here.
            let timed_out = seat.desk.time_out(seat.society, seat.seat, &nonce, &stand).map_err(|e| {
                AgentError::Failed(format!(
                    "decision {slot} of seat {} timed out and could not be stored: {e}",
                    seat.seat
                ))
            })?;
            match timed_out {
                Some(t) => {
                    missed.fetch_add(1, Ordering::SeqCst);
                    record_timeout(&mut base, stand_in_name, &t, seat.decision_time);
                    seat.transcripts.push(base);
                    Ok(t.action)
                }
                None => {
                    let a = rx.await.map_err(|_| {
                        AgentError::Failed(format!(
                            "invariant: decision {slot} of seat {} was closed with neither an answer nor a timeout",
                            seat.seat
                        ))
                    })?;
                    missed.store(0, Ordering::SeqCst);
                    record_answer(&mut base, &a);
                    seat.transcripts.push(base);
                    Ok(a.action)
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

/// The transcript of a decision that timed out: the stand-in's play, with the participant's id
/// and the page they were shown.
fn record_timeout(t: &mut Transcript, stand_in_name: &str, out: &TimedOut, decision_time: Duration) {
    t.model = format!("stand-in:{stand_in_name}");
    t.action = Some(out.action.encode());
    t.parse_status = "fallback".into();
    t.latency_ms = out.latency_ms;
    t.detail = format!(
        "participant {} gave no answer within {} s: stand-in {stand_in_name} played",
        t.served_id,
        decision_time.as_secs()
    );
}

fn record_answer(t: &mut Transcript, a: &Submitted) {
    t.action = Some(a.action.encode());
    t.raw_reply = a.raw.clone();
    t.parse_status = "ok".into();
    t.latency_ms = a.response_ms;
}
