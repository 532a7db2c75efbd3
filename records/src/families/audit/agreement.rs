//! Agreement between coders (`audit_agreement`, `agora audit agreement`): the rows it compares
//! and writes.

use rusqlite::{params, Connection};
use serde::Serialize;

use super::{make, AGREEMENT};

/// A sentence: run id, seat, slot, sentence index.
pub type SentenceKey = (i64, i64, i64, i64);

/// One human label, with the audited model of its sentence.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HumanLabel {
    /// The sentence.
    pub key: SentenceKey,
    /// The model that wrote it.
    pub model: String,
    /// The human coder.
    pub coder: String,
    /// The code.
    pub code: String,
    /// The sentence's text when labelled.
    pub text: String,
}

/// One machine code of a reasoning sentence.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MachineCode {
    /// The sentence.
    pub key: SentenceKey,
    /// The model that wrote it.
    pub model: String,
    /// The coder's identity (`lexicon/1`).
    pub coder: String,
    /// SHA-256 of the codebook it coded with.
    pub codebook_sha256: String,
    /// The code.
    pub code: String,
    /// The sentence's text.
    pub text: String,
}

/// κ of one coder against one reference.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AgreementRow {
    /// The audited model, or `all` (human pairs over every model).
    pub model: String,
    /// `humans` (two human coders) or `coder` (a machine coder against the human reference).
    pub kind: String,
    /// The reference: the first human of a pair, or `human reference`.
    pub reference: String,
    /// The second human of a pair, or the machine coder.
    pub coder: String,
    /// SHA-256 of the codebook the machine coder coded with (empty for human pairs).
    pub coder_codebook_sha256: String,
    /// Sentences compared.
    pub n: usize,
    /// Responses those sentences come from.
    pub responses: usize,
    /// Observed agreement.
    pub p_o: Option<f64>,
    /// Chance agreement from the two marginals.
    pub p_e: Option<f64>,
    /// Cohen's κ; none when it cannot be computed (see `note`).
    pub kappa: Option<f64>,
    /// Its asymptotic standard error.
    pub se: Option<f64>,
    /// Lower end of its 95 % interval.
    pub ci_low: Option<f64>,
    /// Upper end of its 95 % interval.
    pub ci_high: Option<f64>,
    /// The threshold (machine coders only).
    pub min_kappa: Option<f64>,
    /// `validated` or `refused` (machine coders only).
    pub verdict: Option<String>,
    /// Sentences of the model with human labels but no reference (the humans disagree).
    pub excluded_disagreements: usize,
    /// Sentences left out because their text changed since they were labelled.
    pub excluded_text_changed: usize,
    /// Why κ is missing, if it is.
    pub note: Option<String>,
    /// The codes, in the order of the confusion matrix.
    pub labels: Vec<String>,
    /// Counts: row i is the reference's code i, column j the coder's code j.
    pub confusion: Vec<Vec<u64>>,
    /// How often the reference uses each code.
    pub support: Vec<u64>,
    /// Per-code recall of the coder against the reference.
    pub recall: Vec<Option<f64>>,
    /// Per-code precision of the coder against the reference.
    pub precision: Vec<Option<f64>>,
}

/// Replaces the agreement rows of a codebook (name and version) with `rows`, in one
/// transaction.
pub fn write(conn: &mut Connection, codebook: &str, version: u32, rows: &[AgreementRow]) -> rusqlite::Result<()> {
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    make(&tx, AGREEMENT)?;
    tx.execute(
        "DELETE FROM audit_agreement WHERE codebook = ?1 AND codebook_version = ?2",
        params![codebook, version],
    )?;
    {
        let mut put = tx.prepare(
            "INSERT INTO audit_agreement (codebook, codebook_version, model, kind, reference, coder, coder_codebook_sha256,
                n, p_o, p_e, kappa, se, ci_low, ci_high, min_kappa, verdict, excluded_disagreements, excluded_text_changed,
                note, labels_json, confusion_json, support_json, recall_json, precision_json)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21,
                ?22, ?23, ?24)",
        )?;
        for r in rows {
            put.execute(params![
                codebook,
                version,
                r.model,
                r.kind,
                r.reference,
                r.coder,
                r.coder_codebook_sha256,
                r.n,
                r.p_o,
                r.p_e,
                r.kappa,
                r.se,
                r.ci_low,
                r.ci_high,
                r.min_kappa,
                r.verdict,
                r.excluded_disagreements,
                r.excluded_text_changed,
                r.note,
                json(&r.labels),
                json(&r.confusion),
                json(&r.support),
                json(&r.recall),
                json(&r.precision)
            ])?;
        }
    }
    tx.commit()
}

/// A value as a JSON text column.
fn json<T: Serialize + ?Sized>(v: &T) -> String {
    serde_json::to_string(v).expect("invariant: plain data serialises")
}
