//! The record hash: SHA-256 over what the store keeps of a run's society, byte for byte.
//!
//! A run's records are encoded once, as the store keeps them (the decisions, payoffs and
//! interactions as the three JSON values of its `run_rows` row, see [`crate::run_rows`]), and
//! the hash is computed over those bytes and the other stored values, so that the hash of a
//! stored run can be recomputed from the store alone (`Store::verify`) and no
//! second text form of a record exists. Nothing in it is formatted by `Debug`.
//!
//! The hash covers what the society did and was told, and nothing of how fast or where it was
//! served: the same study with the same seeds and the same replies gives the same hash. Two
//! stored values of a model call are kept beside the record but left out of its hash: its
//! latency (wall-clock time, different on every live call; a person's response time in
//! `agora serve`) and its endpoint (which of a model's servers answered, chosen by load when a
//! model has several). `agora verify` therefore does not cover them: a latency or an endpoint
//! edited by hand goes unnoticed.
//!
//! The bytes hashed, in order (integers as 8 bytes little-endian, reals as the 8 bytes of
//! their bit pattern (−0 as 0, as the store keeps it), a text as its length and then its
//! UTF-8 bytes, an absent value as the byte 0 and a present one as the byte 1 followed by the
//! value):
//!
//! 1. the text `agora-record-8` and the run key;
//! 2. the number of agents, then for each agent in seat order its seat, policy, family and
//!    whether it is committed (1 or 0);
//! 3. the decisions, the payoffs and the interactions, each as its stored JSON text;
//! 4. the number of model calls, then for each call in the order (seat, slot, kind, attempt):
//!    seat, slot, kind, attempt, round, role, model, served model id, the request as sent (the
//!    messages in full), the raw reply, the action (optional), the reason (optional), the parse
//!    status, the detail and the prompt and completion token counts (optional);
//! 5. the number of metrics, then each metric in the byte order of its name: name and value.
//!
//! The store's schema 8 introduced this hash. Schema 7's, `agora-record-7`, also hashed each
//! call's endpoint (after the served model id) and latency (after the detail); it is kept as
//! [`v7`], for the upgrade from schema 7 only: opening a schema-7 store replaces a run's hash
//! with this one where the run still hashes to its stored hash under [`v7`], and keeps the
//! stored hash otherwise, so that a run altered before the upgrade still fails to verify after
//! it. A store of schema 6 or earlier had neither hash, and each of its runs is hashed this way
//! from what the store holds.

use sha2::{Digest, Sha256};

use crate::run_records::RunRecords;
use crate::run_rows::RowValues;

/// What the hash starts with: the definition's name, so that a hash of another definition
/// cannot be mistaken for one of this.
const DOMAIN: &str = "agora-record-8";

/// One agent of a run, as stored.
#[derive(Clone, Copy, Debug)]
pub struct AgentRow<'a> {
    /// The seat.
    pub seat: u32,
    /// The policy's registry name.
    pub policy: &'a str,
    /// The policy's model family.
    pub family: &'a str,
    /// Whether the seat is held by a committed agent.
    pub committed: bool,
}

/// One model call of a run, as stored (the request as sent, in full), less what is kept beside
/// the record and out of its hash: the endpoint that answered and the latency.
#[derive(Clone, Copy, Debug)]
pub struct CallRow<'a> {
    /// The seat that made the call.
    pub seat: u32,
    /// The seat's decision slot.
    pub slot: u64,
    /// `decision` or `probe`.
    pub kind: &'a str,
    /// The attempt within the slot, 1-based.
    pub attempt: u32,
    /// The round of the decision.
    pub round: u32,
    /// The seat's role.
    pub role: &'a str,
    /// The model's name in the study.
    pub model: &'a str,
    /// The model id the server was asked for.
    pub served_id: &'a str,
    /// The request as sent, in full.
    pub request: &'a str,
    /// The reply, unaltered.
    pub raw_reply: &'a str,
    /// The action made of it, if any.
    pub action: Option<&'a str>,
    /// The reason given, if any.
    pub reason: Option<&'a str>,
    /// What was made of the reply.
    pub parse_status: &'a str,
    /// Why, where it says.
    pub detail: &'a str,
    /// Tokens in the prompt, as reported.
    pub prompt_tokens: Option<u64>,
    /// Tokens in the reply, as reported.
    pub completion_tokens: Option<u64>,
}

impl<'a> From<&'a agora_agents::llm::Transcript> for CallRow<'a> {
    fn from(t: &'a agora_agents::llm::Transcript) -> Self {
        CallRow {
            seat: t.seat,
            slot: t.slot,
            kind: &t.kind,
            attempt: t.attempt,
            round: t.round,
            role: &t.role,
            model: &t.model,
            served_id: &t.served_id,
            request: &t.messages_json,
            raw_reply: &t.raw_reply,
            action: t.action.as_deref(),
            reason: t.reason.as_deref(),
            parse_status: &t.parse_status,
            detail: &t.detail,
            prompt_tokens: t.prompt_tokens,
            completion_tokens: t.completion_tokens,
        }
    }
}

/// The stored JSON values of a run's decisions, payoffs and interactions.
#[derive(Clone, Copy, Debug)]
pub struct RowsText<'a> {
    /// The decisions' JSON text.
    pub decisions: &'a str,
    /// The payoffs' JSON text.
    pub payoffs: &'a str,
    /// The interactions' JSON text.
    pub interactions: &'a str,
}

/// The record hash of a run's records: its decisions, payoffs and interactions encoded as the
/// store keeps them, then hashed with the rest ([`record_hash`]). Errors name a record the
/// store cannot keep.
pub fn of_run(rec: &RunRecords) -> Result<String, String> {
    let rows = crate::run_rows::encode(&rec.decisions, &rec.payoffs, &rec.interactions)?;
    Ok(with_rows(rec, &rows))
}

/// The record hash of a run over `rows`, its decisions, payoffs and interactions as encoded
/// for the store (the record lists themselves are not read: they may have been let go of).
pub fn with_rows(rec: &RunRecords, rows: &RowValues) -> String {
    let agents: Vec<AgentRow> = rec
        .agents
        .iter()
        .map(|a| AgentRow { seat: a.seat, policy: a.policy, family: a.family, committed: a.committed })
        .collect();
    let calls: Vec<CallRow> = rec.transcripts.iter().map(CallRow::from).collect();
    let metrics: Vec<(&str, f64)> = rec.metrics.iter().map(|(n, v)| (n.as_str(), *v)).collect();
    let text = RowsText { decisions: &rows.decisions, payoffs: &rows.payoffs, interactions: &rows.interactions };
    record_hash(&rec.key, &agents, text, &calls, &metrics)
}

/// SHA-256 as written into bytes of the layout above.
struct Writer(Sha256);

impl Writer {
    fn int(&mut self, v: u64) {
        self.0.update(v.to_le_bytes());
    }
    fn real(&mut self, v: f64) {
        // −0 as 0: a store keeps a real with no fractional part as an integer, without the
        // sign of a zero.
        self.int(if v == 0.0 { 0 } else { v.to_bits() });
    }
    fn text(&mut self, s: &str) {
        self.int(s.len() as u64);
        self.0.update(s.as_bytes());
    }
    fn some_text(&mut self, s: Option<&str>) {
        match s {
            Some(s) => {
                self.0.update([1]);
                self.text(s);
            }
            None => self.0.update([0]),
        }
    }
    fn some_int(&mut self, v: Option<u64>) {
        match v {
            Some(v) => {
                self.0.update([1]);
                self.int(v);
            }
            None => self.0.update([0]),
        }
    }
}

/// The record hash of a run (lower-case hex) from its stored values. Agents are taken in
/// seat order, calls in (seat, slot, kind, attempt) order and metrics in the byte order of
/// their names, whatever order they are given in.
pub fn record_hash<'a>(
    key: &str,
    agents: &[AgentRow<'a>],
    rows: RowsText<'_>,
    calls: &[CallRow<'a>],
    metrics: &[(&'a str, f64)],
) -> String {
    let calls: Vec<(&CallRow, Option<&v7::Served>)> = calls.iter().map(|c| (c, None)).collect();
    hash_of(DOMAIN, key, agents, rows, &calls, metrics)
}

/// The layout both definitions share: `served` is each call's endpoint and latency where the
/// definition ([`v7`]) hashes them, and `None` where it does not.
fn hash_of(
    domain: &str,
    key: &str,
    agents: &[AgentRow<'_>],
    rows: RowsText<'_>,
    calls: &[(&CallRow<'_>, Option<&v7::Served<'_>>)],
    metrics: &[(&str, f64)],
) -> String {
    let mut w = Writer(Sha256::new());
    w.text(domain);
    w.text(key);
    let mut agents: Vec<&AgentRow> = agents.iter().collect();
    agents.sort_by_key(|a| a.seat);
    w.int(agents.len() as u64);
    for a in agents {
        w.int(u64::from(a.seat));
        w.text(a.policy);
        w.text(a.family);
        w.int(u64::from(a.committed));
    }
    w.text(rows.decisions);
    w.text(rows.payoffs);
    w.text(rows.interactions);
    let mut calls: Vec<&(&CallRow, Option<&v7::Served>)> = calls.iter().collect();
    calls.sort_by(|(a, _), (b, _)| (a.seat, a.slot, a.kind, a.attempt).cmp(&(b.seat, b.slot, b.kind, b.attempt)));
    w.int(calls.len() as u64);
    for (c, served) in calls {
        w.int(u64::from(c.seat));
        w.int(c.slot);
        w.text(c.kind);
        w.int(u64::from(c.attempt));
        w.int(u64::from(c.round));
        w.text(c.role);
        w.text(c.model);
        w.text(c.served_id);
        if let Some(s) = served {
            w.text(s.endpoint);
        }
        w.text(c.request);
        w.text(c.raw_reply);
        w.some_text(c.action);
        w.some_text(c.reason);
        w.text(c.parse_status);
        w.text(c.detail);
        if let Some(s) = served {
            w.real(s.latency_ms);
        }
        w.some_int(c.prompt_tokens);
        w.some_int(c.completion_tokens);
    }
    let mut metrics: Vec<&(&str, f64)> = metrics.iter().collect();
    metrics.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    w.int(metrics.len() as u64);
    for (name, value) in metrics {
        w.text(name);
        w.real(*value);
    }
    format!("{:x}", w.0.finalize())
}

/// Schema 7's record hash (`agora-record-7`), kept for the upgrade from schema 7 only: a run
/// of a schema-7 store is given this schema's hash only where its stored hash is still the
/// hash of its stored values under this definition (`store/verify.rs`). Nothing new is hashed
/// this way.
///
/// # Layout
///
/// The bytes of [`record_hash`](super::record_hash) with `agora-record-7` in place of
/// `agora-record-8` and two more fields of each model call: its endpoint, as a text after the
/// served model id, and its latency in milliseconds, as a real after the detail. This is
/// schema 7's definition byte for byte (`git show 44763b2^:engine/src/record_hash.rs`);
/// `tests/llm.rs` checks it against a definition written out there, itself checked against
/// the hashes a schema-7 build stored.
pub mod v7 {
    use super::{hash_of, AgentRow, CallRow, RowsText};

    /// What schema 7's hash read first.
    const DOMAIN: &str = "agora-record-7";

    /// The two stored values of a model call that schema 7 hashed and schema 8 does not.
    #[derive(Clone, Copy, Debug)]
    pub struct Served<'a> {
        /// The server that answered.
        pub endpoint: &'a str,
        /// Milliseconds the call took.
        pub latency_ms: f64,
    }

    /// The record hash schema 7 gave a run (lower-case hex) from its stored values, each call
    /// with its endpoint and latency; the same canonical orders as [`super::record_hash`].
    pub fn record_hash<'a>(
        key: &str,
        agents: &[AgentRow<'a>],
        rows: RowsText<'_>,
        calls: &[(CallRow<'a>, Served<'a>)],
        metrics: &[(&'a str, f64)],
    ) -> String {
        let calls: Vec<(&CallRow, Option<&Served>)> = calls.iter().map(|(c, s)| (c, Some(s))).collect();
        hash_of(DOMAIN, key, agents, rows, &calls, metrics)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ROWS: RowsText<'static> =
        RowsText { decisions: "[[1,1,0,\"player\",\"c1\",1,1,null]]", payoffs: "[]", interactions: "[]" };

    fn call(reason: Option<&'static str>) -> CallRow<'static> {
        CallRow {
            seat: 0,
            slot: 0,
            kind: "decision",
            attempt: 1,
            round: 1,
            role: "player",
            model: "m",
            served_id: "m",
            request: "{}",
            raw_reply: "r",
            action: Some("c1"),
            reason,
            parse_status: "ok",
            detail: "",
            prompt_tokens: Some(3),
            completion_tokens: None,
        }
    }

    /// The bytes of the one small record of the tests below, written out independently of
    /// [`Writer`] as the layout documents them: schema 8's, or with `served` (endpoint and
    /// latency) schema 7's, which hashed the serving facts (as schema 7's own test wrote it,
    /// `git show 44763b2^:engine/src/record_hash.rs`).
    fn documented_bytes(served: Option<(&str, f64)>) -> Vec<u8> {
        let mut b: Vec<u8> = Vec::new();
        let text = |b: &mut Vec<u8>, s: &str| {
            b.extend((s.len() as u64).to_le_bytes());
            b.extend(s.as_bytes());
        };
        let int = |b: &mut Vec<u8>, v: u64| b.extend(v.to_le_bytes());
        text(&mut b, if served.is_some() { "agora-record-7" } else { "agora-record-8" });
        text(&mut b, "k");
        int(&mut b, 1);
        int(&mut b, 0);
        text(&mut b, "tit-for-tat");
        text(&mut b, "classical");
        int(&mut b, 0);
        text(&mut b, ROWS.decisions);
        text(&mut b, "[]");
        text(&mut b, "[]");
        int(&mut b, 1);
        for v in [0, 0] {
            int(&mut b, v);
        }
        text(&mut b, "decision");
        int(&mut b, 1);
        int(&mut b, 1);
        let endpoint = served.map(|(e, _)| e);
        for s in ["player", "m", "m"].into_iter().chain(endpoint).chain(["{}", "r"]) {
            text(&mut b, s);
        }
        b.push(1);
        text(&mut b, "c1");
        b.push(1);
        text(&mut b, "why \"not\"");
        text(&mut b, "ok");
        text(&mut b, "");
        if let Some((_, latency_ms)) = served {
            int(&mut b, latency_ms.to_bits());
        }
        b.push(1);
        int(&mut b, 3);
        b.push(0);
        int(&mut b, 1);
        text(&mut b, "cooperation");
        int(&mut b, 1.0f64.to_bits());
        b
    }

    /// The layout, written out independently of [`Writer`], for one small record.
    #[test]
    fn the_hash_is_sha256_of_the_documented_bytes() {
        let agent = AgentRow { seat: 0, policy: "tit-for-tat", family: "classical", committed: false };
        let got = record_hash("k", &[agent], ROWS, &[call(Some("why \"not\""))], &[("cooperation", 1.0)]);
        assert_eq!(got, format!("{:x}", Sha256::digest(documented_bytes(None))));
    }

    /// Schema 7's layout, written out independently of [`Writer`], for the same small record.
    #[test]
    fn schema_7s_hash_is_sha256_of_schema_7s_bytes() {
        let agent = AgentRow { seat: 0, policy: "tit-for-tat", family: "classical", committed: false };
        let served = v7::Served { endpoint: "http://x/v1", latency_ms: 1.5 };
        let got = v7::record_hash("k", &[agent], ROWS, &[(call(Some("why \"not\"")), served)], &[("cooperation", 1.0)]);
        assert_eq!(got, format!("{:x}", Sha256::digest(documented_bytes(Some(("http://x/v1", 1.5))))));
        // The other way: schema 7 hashed the serving facts, so they move its hash, and the two
        // definitions never agree.
        let slower = v7::Served { latency_ms: 2.5, ..served };
        let slower =
            v7::record_hash("k", &[agent], ROWS, &[(call(Some("why \"not\"")), slower)], &[("cooperation", 1.0)]);
        assert_ne!(got, slower);
        assert_ne!(got, record_hash("k", &[agent], ROWS, &[call(Some("why \"not\""))], &[("cooperation", 1.0)]));
    }

    #[test]
    fn an_absent_value_and_an_empty_one_hash_differently_and_order_is_canonical() {
        let h = |c: CallRow<'static>| record_hash("k", &[], ROWS, &[c], &[]);
        assert_ne!(h(call(None)), h(call(Some(""))));
        // A text that reads like another field's encoding cannot collide with it: lengths lead.
        assert_ne!(h(call(Some("a|b"))), h(call(Some("a"))));
        let mut second = call(None);
        second.attempt = 2;
        let a = record_hash("k", &[], ROWS, &[call(None), second], &[("b", 1.0), ("a", 2.0)]);
        let b = record_hash("k", &[], ROWS, &[second, call(None)], &[("a", 2.0), ("b", 1.0)]);
        assert_eq!(a, b, "calls and metrics are hashed in their canonical order");
    }

    /// Issue 40: two live calls with the same reply hash the same, however long each took and
    /// whichever of a model's servers answered.
    #[test]
    fn issue_40_latency_and_endpoint_stay_out_of_the_hash() {
        let t = agora_agents::llm::Transcript {
            seat: 0,
            slot: 0,
            attempt: 1,
            kind: "decision".into(),
            round: 1,
            role: "player".into(),
            model: "m".into(),
            served_id: "m".into(),
            endpoint: "http://a/v1".into(),
            messages_json: "{}".into(),
            raw_reply: "r".into(),
            action: Some("c1".into()),
            reason: None,
            parse_status: "ok".into(),
            detail: String::new(),
            latency_ms: 1.5,
            prompt_tokens: Some(3),
            completion_tokens: Some(1),
        };
        let other = agora_agents::llm::Transcript { endpoint: "http://b/v1".into(), latency_ms: 870.25, ..t.clone() };
        let h = |t: &agora_agents::llm::Transcript| record_hash("k", &[], ROWS, &[CallRow::from(t)], &[]);
        assert_eq!(h(&t), h(&other));
        let replied = agora_agents::llm::Transcript { raw_reply: "r.".into(), ..t.clone() };
        assert_ne!(h(&t), h(&replied), "the reply itself is hashed");
    }
}
