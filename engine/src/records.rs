//! What a run records, and its hash.

use agora_scenarios::RunSpec;
use sha2::{Digest, Sha256};

/// One decision.
#[derive(Clone, Debug, PartialEq)]
pub struct DecisionRecord {
    /// Stage number within the run, 1-based.
    pub step: u32,
    /// Round, game or interaction, 1-based.
    pub round: u32,
    pub seat: u32,
    pub role: &'static str,
    /// The action; stored and hashed as its compact text (`c1`, `a17`, `[0,3,0]`).
    pub action: agora_environments::Action,
    pub value: f64,
    pub scale: f64,
    pub context: Option<f64>,
}

/// One payoff.
#[derive(Clone, Debug, PartialEq)]
pub struct PayoffRecord {
    pub step: u32,
    pub round: u32,
    pub seat: u32,
    pub payoff: f64,
}

/// One naming-game meeting.
#[derive(Clone, Debug, PartialEq)]
pub struct InteractionRecord {
    pub t: u32,
    pub a: u32,
    pub b: u32,
    pub name_a: u32,
    pub name_b: u32,
    pub matched: bool,
}

/// Who sat where.
#[derive(Clone, Debug, PartialEq)]
pub struct AgentRecord {
    pub seat: u32,
    pub policy: &'static str,
    pub family: &'static str,
    pub committed: bool,
}

/// Everything one run recorded.
#[derive(Clone, Debug, PartialEq)]
pub struct RunRecords {
    pub key: String,
    pub spec: RunSpec,
    pub agents: Vec<AgentRecord>,
    pub steps: u32,
    pub decisions: Vec<DecisionRecord>,
    pub payoffs: Vec<PayoffRecord>,
    pub interactions: Vec<InteractionRecord>,
    /// Model calls, in (seat, slot, attempt) order.
    pub transcripts: Vec<agora_agents::llm::Transcript>,
}

impl RunRecords {
    /// Empty records of the run `spec`, whose key (`spec.key()`) the caller has computed.
    pub fn new(spec: &RunSpec, key: String) -> Self {
        RunRecords {
            key,
            spec: spec.clone(),
            agents: Vec::new(),
            steps: 0,
            decisions: Vec::new(),
            payoffs: Vec::new(),
            interactions: Vec::new(),
            transcripts: Vec::new(),
        }
    }

    /// SHA-256 over every record, floats by their bit patterns, so that two runs hash alike
    /// exactly when they recorded the same thing.
    pub fn hash(&self) -> String {
        let mut h = Sha256::new();
        h.update(self.key.as_bytes());
        for a in &self.agents {
            h.update(format!("A{}|{}|{}|{}\n", a.seat, a.policy, a.family, a.committed).as_bytes());
        }
        for d in &self.decisions {
            h.update(
                format!(
                    "D{}|{}|{}|{}|{}|{:x}|{:x}|{:?}\n",
                    d.step,
                    d.round,
                    d.seat,
                    d.role,
                    d.action.encode(),
                    d.value.to_bits(),
                    d.scale.to_bits(),
                    d.context.map(f64::to_bits)
                )
                .as_bytes(),
            );
        }
        for p in &self.payoffs {
            h.update(format!("P{}|{}|{}|{:x}\n", p.step, p.round, p.seat, p.payoff.to_bits()).as_bytes());
        }
        for i in &self.interactions {
            h.update(format!("I{}|{}|{}|{}|{}|{}\n", i.t, i.a, i.b, i.name_a, i.name_b, i.matched).as_bytes());
        }
        for t in &self.transcripts {
            h.update(
                format!(
                    "T{}|{}|{}|{}|{}|{}|{}|{}|{}|{}\n",
                    t.seat,
                    t.slot,
                    t.attempt,
                    t.kind,
                    t.round,
                    t.role,
                    t.model,
                    t.endpoint,
                    t.parse_status,
                    t.latency_ms.to_bits()
                )
                .as_bytes(),
            );
            for part in [&t.messages_json, &t.raw_reply, &t.detail] {
                h.update((part.len() as u64).to_le_bytes());
                h.update(part.as_bytes());
            }
            h.update(
                format!("{:?}|{:?}|{:?}|{:?}\n", t.action, t.reason, t.prompt_tokens, t.completion_tokens).as_bytes(),
            );
        }
        h.finalize().iter().map(|b| format!("{b:02x}")).collect()
    }
}
