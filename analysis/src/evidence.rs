//! The transcript audit's evidence as the store holds it: the tables the certification ladder
//! reads to grade Tier 3 ([`crate::mechanism`]). The audit (the `agora-audit` crate, `agora
//! audit`) writes them; the instrument only reads them, and never imports the audit.
//!
//! - `TABLES` (their layouts are `agora_records::families::audit`'s): the audit run's tables
//!   (codebooks, coders, segments, coded responses and sentences);
//! - `GATE`: `audit_gate`, the coder-validation gate's decision per coder, codebook and
//!   audited model, with the default gate (at least [`MIN_LABELLERS`] human labellers agreeing
//!   with each other at κ ≥ [`MIN_HUMAN_KAPPA`], at most [`MAX_HUMAN_DISAGREEMENT`] of their
//!   sentences without a majority, κ ≥ 0.8 against their reference on the model's own text,
//!   the floors of responses, sentences and coder errors; the docs chapter "The transcript
//!   audit"), with the labellers' number and agreement. The audit writes it whenever the codes
//!   or the human labels it rests on change (`agora audit`, `agora audit import`), so a stored
//!   decision is the current one;
//! - the dependency and intervention estimates (`DEPENDENCY`, `FAITHFULNESS`).

use agora_records::families::audit::CoderKeyRef;
use rusqlite::Connection;
use serde::{Deserialize, Serialize};

/// Fewest human-referenced sentences of a code a Tier-3 claim relies on (30): with 30, the 95 %
/// Wilson interval of a recall of 0.8 spans about ±0.15; with fewer the recall "Auditing LLM
/// Behavior with SUVA: From Stated Values to Actions" asks to report beside the effect is
/// hardly measured.
pub const MIN_CODE_SUPPORT: u64 = 30;

/// Fewest human labellers on a model's text for the gate (2): "Auditing LLM Behavior with SUVA:
/// From Stated Values to Actions" has "several people code a few hundred sentences and [...]
/// compute their agreement with each other before computing the coder's agreement with them".
/// One person's labels cannot be checked against anyone's, so one labeller is no reference.
pub const MIN_LABELLERS: usize = 2;

/// Least agreement of the human labellers with each other on a model's text (κ 0.7): Cohen's κ
/// for two labellers on the sentences both labelled, the mean of the pairwise Cohen's κ (Light's
/// κ) for more. **Agora's choice, not the paper's**: the paper asks for the humans' agreement
/// and names no threshold for it. It lies between the 0.667 Krippendorff (2004) accepts for
/// tentative conclusions and the 0.8 the coder must reach against the humans; the humans are
/// not held to the coder's 0.8 because the sentences they disagree on are left out of the
/// reference (at most [`MAX_HUMAN_DISAGREEMENT`] of them), so the coder is then judged on the
/// sentences they read alike.
pub const MIN_HUMAN_KAPPA: f64 = 0.7;

/// Largest share of a model's sentences labelled by two or more humans that may lack a
/// reference because the humans disagree (20 %). **Agora's choice, not the paper's**: the
/// sentences the humans disagree on are the hard ones, and leaving many out would let the
/// coder's κ be measured on the easy rest.
pub const MAX_HUMAN_DISAGREEMENT: f64 = 0.2;

/// Whether a coder's codes on a model's text count.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// κ at least the threshold: the codes count.
    Validated,
    /// Below the threshold or not validated, shown because unvalidated codes were allowed.
    Unvalidated,
    /// Below the threshold or not validated: the codes are refused for every statistic.
    Refused,
}

impl Status {
    /// `validated`, `unvalidated` or `refused`.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Validated => "validated",
            Status::Unvalidated => "unvalidated",
            Status::Refused => "refused",
        }
    }

    /// The status a stored `as_str` names.
    pub fn parse(s: &str) -> Option<Status> {
        [Status::Validated, Status::Unvalidated, Status::Refused].into_iter().find(|x| x.as_str() == s)
    }
}

/// The gate's decision for one coder on one model's text.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Validation {
    /// The audited model.
    pub model: String,
    /// The machine coder.
    pub coder: String,
    /// The decision.
    pub status: Status,
    /// κ against the human reference, if it could be computed.
    pub kappa: Option<f64>,
    /// Sentences it rests on.
    pub n: usize,
    /// Responses those sentences come from.
    pub responses: usize,
    /// The threshold.
    pub min_kappa: f64,
    /// Per code of the reference: the code, its human-referenced sentences, and the coder's
    /// recall on them.
    pub recall: Vec<(String, u64, Option<f64>)>,
    /// Responses with reasoning the coder failed on, of the model's responses with reasoning.
    pub coder_errors: (usize, usize),
    /// Why: `κ = 0.650 < 0.8 (40 sentences)`, `no human labels`, ….
    pub reason: String,
}

impl Validation {
    /// Whether the codes may be shown (validated, or unvalidated codes allowed).
    pub fn shown(&self) -> bool {
        self.status != Status::Refused
    }

    /// The decision as reports print it: `refused: κ = 0.650 < 0.8 (40 sentences)`.
    pub fn label(&self) -> String {
        format!("{}: {}", self.status.as_str(), self.reason)
    }

    /// Human-referenced sentences of `code` on the model's text (0 when the code has none).
    pub fn support(&self, code: &str) -> u64 {
        self.recall.iter().find(|(c, _, _)| c == code).map_or(0, |(_, n, _)| *n)
    }

    /// The coder's recall of `code` against the human reference, where the reference uses it.
    pub fn recall_of(&self, code: &str) -> Option<f64> {
        self.recall.iter().find(|(c, _, _)| c == code).and_then(|(_, _, r)| *r)
    }

    /// Per-code recall as reports print it: `altruism 0.600 (40), fairness 1.000 (31)`.
    pub fn recall_text(&self) -> String {
        let parts: Vec<String> = self
            .recall
            .iter()
            .filter(|(_, n, _)| *n > 0)
            .map(|(c, n, r)| format!("{c} {} ({n})", r.map_or_else(|| "-".into(), |r| format!("{r:.3}"))))
            .collect();
        parts.join(", ")
    }
}

pub use agora_records::reads::evidence::GATE_HUMAN_COLUMNS;

/// The reason a stored decision without the human labellers' agreement reads: refused.
pub const GATE_HUMANS_NOT_RECORDED: &str = "the human labellers' agreement with each other is not recorded in this \
     gate decision (written before Agora recorded it); rerun `agora audit`";

pub use agora_records::reads::{has_column, has_table};

/// The stored gate decisions of a coder and codebook, one per audited model; none where the
/// store has no `audit_gate`.
///
/// A decision without the human labellers' agreement (a store written before Agora recorded
/// it: the columns [`GATE_HUMAN_COLUMNS`] missing, or NULL) reads refused,
/// [`GATE_HUMANS_NOT_RECORDED`]; so does a decision recorded under a looser rule for the
/// humans than [`MIN_LABELLERS`], [`MIN_HUMAN_KAPPA`] and [`MAX_HUMAN_DISAGREEMENT`]. A value
/// the audit never writes (an unknown status, a validated decision whose humans fail the rule
/// it records, a κ outside [−1, 1]) is an error naming the column.
pub fn read_gate(conn: &Connection, key: CoderKeyRef<'_>) -> rusqlite::Result<Vec<Validation>> {
    agora_records::reads::evidence::gate(conn, key, |r| {
        let status = r.status;
        let recall = r.agreement.recall_json;
        let bad = |what: &str, col: usize| {
            rusqlite::Error::FromSqlConversionFailure(
                col,
                rusqlite::types::Type::Text,
                format!("audit_gate.{what}: not a stored gate value").into(),
            )
        };
        let mut v = Validation {
            model: r.model,
            coder: key.coder.to_string(),
            status: Status::parse(&status).ok_or_else(|| bad("status", 1))?,
            kappa: r.agreement.kappa,
            n: r.agreement.n as usize,
            responses: r.agreement.responses as usize,
            min_kappa: r.agreement.min_kappa,
            recall: serde_json::from_str(&recall).map_err(|_| bad("recall_json", 6))?,
            coder_errors: (r.agreement.coder_failed as usize, r.agreement.coder_of as usize),
            reason: r.reason,
        };
        let labellers = r.labellers;
        let human_kappa = r.human_kappa;
        let sentences = r.human_sentences;
        let disagreements = r.human_disagreements;
        let min_human = r.min_human_kappa;
        let max_disagreement = r.max_human_disagreement;
        let (Some(labellers), Some(sentences), Some(disagreements), Some(min_human), Some(max_disagreement)) =
            (labellers, sentences, disagreements, min_human, max_disagreement)
        else {
            v.status = Status::Refused;
            v.reason = GATE_HUMANS_NOT_RECORDED.to_string();
            return Ok(v);
        };
        if labellers < 0 {
            return Err(bad("labellers", 10));
        }
        if human_kappa.is_some_and(|k| !(-1.0..=1.0).contains(&k)) {
            return Err(bad("human_kappa", 11));
        }
        if sentences < 0 || disagreements < 0 || disagreements > sentences {
            return Err(bad("human_disagreements", 13));
        }
        if v.status != Status::Refused {
            // The audit writes a decision that counts only where the humans met the rule it
            // records beside it.
            if (labellers as usize) < MIN_LABELLERS {
                return Err(bad("labellers", 10));
            }
            if human_kappa.is_none_or(|k| k < min_human) {
                return Err(bad("human_kappa", 11));
            }
            if sentences == 0 || disagreements as f64 > max_disagreement * sentences as f64 {
                return Err(bad("human_disagreements", 13));
            }
            if min_human < MIN_HUMAN_KAPPA || max_disagreement > MAX_HUMAN_DISAGREEMENT {
                v.status = Status::Refused;
                v.reason = format!(
                    "the gate decision was recorded under a looser rule for the human labellers (κ ≥ {min_human}, at \
                     most {} % disagreement) than Agora's (κ ≥ {MIN_HUMAN_KAPPA}, at most {} %); rerun `agora audit`",
                    max_disagreement * 100.0,
                    MAX_HUMAN_DISAGREEMENT * 100.0
                );
            }
        }
        Ok(v)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `audit_gate` as stores written before the human labellers were recorded hold it.
    const GATE_SCHEMA_BEFORE_LABELLERS: &str = "
        CREATE TABLE audit_gate (coder TEXT NOT NULL, codebook TEXT NOT NULL, codebook_version INTEGER NOT NULL,
            codebook_sha256 TEXT NOT NULL, model TEXT NOT NULL, status TEXT NOT NULL, kappa REAL, n INTEGER NOT NULL,
            responses INTEGER NOT NULL, min_kappa REAL NOT NULL, recall_json TEXT NOT NULL, coder_failed INTEGER NOT NULL,
            coder_of INTEGER NOT NULL, reason TEXT NOT NULL,
            PRIMARY KEY (coder, codebook, codebook_version, codebook_sha256, model)) WITHOUT ROWID;";

    const VALIDATED: &str = "'lexicon', 'default', 1, 'abc', 'm1', 'validated', 0.85, 240, 120, 0.8, '[]', 1, 120,
        'κ = 0.850 ≥ 0.8 (240 sentences, 120 responses)'";

    fn read(conn: &Connection) -> rusqlite::Result<Vec<Validation>> {
        read_gate(conn, CoderKeyRef { coder: "lexicon", codebook: "default", version: 1, sha256: "abc" })
    }

    /// A store with the current `audit_gate` and one decision whose humans are `humans`
    /// (labellers, human_kappa, human_sentences, human_disagreements, min_human_kappa,
    /// max_human_disagreement).
    fn store_with(humans: &str) -> Connection {
        let conn = Connection::open_in_memory().expect("db");
        conn.execute_batch(agora_records::families::audit::GATE).expect("schema");
        conn.execute_batch(&format!("INSERT INTO audit_gate VALUES ({VALIDATED}, {humans});")).expect("row");
        conn
    }

    #[test]
    fn a_decision_written_before_the_labellers_were_recorded_is_refused() {
        // Regression (issue 39): a store's validated decision said nothing of how many humans
        // labelled or whether they agreed; it must not pass the ladder's gate as it stands.
        let conn = Connection::open_in_memory().expect("db");
        conn.execute_batch(GATE_SCHEMA_BEFORE_LABELLERS).expect("schema");
        conn.execute_batch(&format!("INSERT INTO audit_gate VALUES ({VALIDATED});")).expect("row");
        let v = read(&conn).expect("read");
        assert_eq!((v.len(), v[0].status, v[0].reason.as_str()), (1, Status::Refused, GATE_HUMANS_NOT_RECORDED));
        assert_eq!((v[0].kappa, v[0].n), (Some(0.85), 240), "the rest of the decision reads as stored");
        // The same table given the columns later, left NULL: not recorded either.
        for c in GATE_HUMAN_COLUMNS {
            conn.execute_batch(&format!("ALTER TABLE audit_gate ADD COLUMN {c}")).expect("column");
        }
        let v = read(&conn).expect("read");
        assert_eq!((v[0].status, v[0].reason.as_str()), (Status::Refused, GATE_HUMANS_NOT_RECORDED));
    }

    #[test]
    fn a_recorded_decision_reads_as_stored_where_its_humans_meet_the_rule() {
        let conn = store_with("2, 0.85, 240, 10, 0.7, 0.2");
        let v = read(&conn).expect("read");
        assert_eq!((v[0].status, v[0].kappa), (Status::Validated, Some(0.85)));
        // Recorded under a looser rule for the humans than Agora's now: refused, rerun.
        let conn = store_with("2, 0.65, 240, 10, 0.6, 0.2");
        let v = read(&conn).expect("read");
        assert_eq!(v[0].status, Status::Refused);
        assert!(v[0].reason.contains("looser rule") && v[0].reason.ends_with("rerun `agora audit`"), "{}", v[0].reason);
    }

    #[test]
    fn values_the_audit_never_writes_are_errors_naming_the_column() {
        for (humans, column) in [
            ("1, 0.85, 240, 10, 0.7, 0.2", "audit_gate.labellers"),
            ("-1, 0.85, 240, 10, 0.7, 0.2", "audit_gate.labellers"),
            ("2, 0.5, 240, 10, 0.7, 0.2", "audit_gate.human_kappa"),
            ("2, NULL, 240, 10, 0.7, 0.2", "audit_gate.human_kappa"),
            ("2, 1.5, 240, 10, 0.7, 0.2", "audit_gate.human_kappa"),
            ("2, 0.85, 240, 60, 0.7, 0.2", "audit_gate.human_disagreements"),
            ("2, 0.85, 10, 20, 0.7, 0.2", "audit_gate.human_disagreements"),
        ] {
            let e = read(&store_with(humans)).expect_err(humans);
            assert!(e.to_string().contains(column), "{humans}: {e}");
        }
        // A refused decision may record humans who fail the rule: that is why it is refused.
        let conn = store_with("1, NULL, 0, 0, 0.7, 0.2");
        conn.execute("UPDATE audit_gate SET status = 'refused'", []).expect("refused");
        assert_eq!(read(&conn).expect("read")[0].status, Status::Refused);
    }
}
