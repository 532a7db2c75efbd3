//! The coder-validation gate: whether a machine coder's codes on a model's text count (at least
//! two human labellers who agree with each other, κ against their reference at or above the
//! threshold, with the floors of responses, sentences and coder errors), and the store reads it
//! is decided from.

use super::*;
pub use agora_analysis::evidence::{Status, Validation};
use agora_records::families::audit::gate::{CoderAgreement, GateRow};
use agora_records::families::audit::CoderKeyRef;

/// κ printed with enough decimals (three or more) that it does not read as the threshold when
/// it falls on the other side of it.
pub(super) fn kappa_text(kappa: f64, min: f64) -> String {
    for d in 3..=8 {
        let s = format!("{kappa:.d$}");
        let printed: f64 = s.parse().unwrap_or(kappa);
        if (printed >= min) == (kappa >= min) {
            return s;
        }
    }
    format!("{kappa}")
}

/// The gate's decision for `coder` on `model`'s text from its agreement row (none when the
/// coder has no row there) and the human labels of the model's text (none when the model has
/// none), given whether the store holds any human label for the codebook and the coder's
/// failures on the model's responses with reasoning (failed, of).
///
/// The humans are checked first: their labels are the reference every other condition rests on.
pub fn validate(
    row: Option<&AgreementRow>,
    humans: Option<&ConsensusRow>,
    any_labels: bool,
    model: &str,
    coder: &str,
    gate: &GateOptions,
    coder_errors: (usize, usize),
) -> Validation {
    let min_kappa = gate.min_kappa;
    let below = if gate.allow_unvalidated { Status::Unvalidated } else { Status::Refused };
    let (failed, of) = coder_errors;
    let error_share = if of == 0 { 0.0 } else { failed as f64 / of as f64 };
    let (status, reason) = match (row, humans.map(|h| humans_unmet(h, gate))) {
        _ if !any_labels => (below, "no human labels".to_string()),
        (_, None) => (below, "no human labels on this model's text".to_string()),
        (_, Some(Some(why))) => (below, why),
        (None, _) => (below, "no human labels on this model's text".to_string()),
        (Some(r), Some(None)) => match r.kappa {
            None if r.n == 0 => (below, r.note.clone().unwrap_or_else(|| "no human labels".into())),
            None => (below, format!("κ undefined, every sentence has the same code ({} sentences)", r.n)),
            Some(k) if r.responses < gate.min_responses || r.n < gate.min_sentences => (
                below,
                format!(
                    "{} sentences of {} responses with a human reference (the gate needs {} responses and {} sentences; κ = {} there)",
                    r.n,
                    r.responses,
                    gate.min_responses,
                    gate.min_sentences,
                    kappa_text(k, min_kappa)
                ),
            ),
            Some(_) if error_share > gate.max_coder_errors => (
                below,
                format!(
                    "the coder failed on {failed} of {of} responses ({:.1} % > {} %)",
                    error_share * 100.0,
                    gate.max_coder_errors * 100.0
                ),
            ),
            Some(k) if k >= min_kappa => (
                Status::Validated,
                format!(
                    "κ = {} ≥ {min_kappa} ({} sentences, {} responses){}",
                    kappa_text(k, min_kappa),
                    r.n,
                    r.responses,
                    humans.map(|h| format!("; {}", h.humans_text())).unwrap_or_default()
                ),
            ),
            Some(k) => (
                below,
                format!(
                    "κ = {} < {min_kappa} ({} sentences, {} responses){}",
                    kappa_text(k, min_kappa),
                    r.n,
                    r.responses,
                    humans.map(|h| format!("; {}", h.humans_text())).unwrap_or_default()
                ),
            ),
        },
    };
    let recall = row.map_or_else(Vec::new, |r| {
        r.labels
            .iter()
            .enumerate()
            .map(|(i, c)| (c.clone(), r.support.get(i).copied().unwrap_or(0), r.recall.get(i).copied().flatten()))
            .collect()
    });
    Validation {
        model: model.into(),
        coder: coder.into(),
        status,
        kappa: row.and_then(|r| r.kappa),
        n: row.map_or(0, |r| r.n),
        responses: row.map_or(0, |r| r.responses),
        min_kappa,
        recall,
        coder_errors,
        reason,
    }
}

/// The first condition on the human labellers of a model's text that `gate` finds unmet, in
/// words; none when they meet it (enough labellers, agreeing with each other, disagreeing on few
/// sentences).
pub fn humans_unmet(h: &ConsensusRow, gate: &GateOptions) -> Option<String> {
    let min_h = gate.min_human_kappa;
    if h.labellers < gate.min_labellers {
        return Some(format!(
            "{} human labeller{} on this model's text (the gate needs {}, labelling the same sentences, who agree \
             with each other at κ ≥ {min_h} before the coder is compared with them)",
            h.labellers,
            if h.labellers == 1 { "" } else { "s" },
            gate.min_labellers
        ));
    }
    let Some(k) = h.human_kappa else {
        return Some(format!(
            "the {} human labellers' κ with each other cannot be computed ({}; the gate needs κ ≥ {min_h})",
            h.labellers,
            h.human_note.as_deref().unwrap_or("no sentence labelled by two")
        ));
    };
    if k < min_h {
        return Some(format!(
            "the {} human labellers agree with each other at κ = {} < {min_h} ({}, {} sentences labelled by two or \
             more): their labels are no reference for the coder",
            h.labellers,
            kappa_text(k, min_h),
            h.human_kappa_kind(),
            h.multiply_labelled
        ));
    }
    let share = h.disagreement_share().unwrap_or(0.0);
    if share > gate.max_human_disagreement {
        return Some(format!(
            "the human labellers disagree on {} of the {} sentences two or more labelled ({:.1} % > {} %): the coder \
             would be judged on the sentences they read alike only",
            h.disagreements,
            h.multiply_labelled,
            share * 100.0,
            gate.max_human_disagreement * 100.0
        ));
    }
    None
}

/// (model, coder, codebook SHA-256) → (responses with reasoning the coder failed on, responses
/// with reasoning).
pub use agora_records::families::audit::gate::CoderErrors;

/// Per model, coder and codebook SHA-256 of a codebook (name and version): the responses with
/// reasoning the coder failed on, of the responses with reasoning.
pub use agora_records::families::audit::gate::load_coder_errors;

/// Checks a threshold: a finite number in (−1, 1].
pub fn check_min_kappa(min_kappa: f64) -> Result<(), String> {
    if min_kappa.is_finite() && min_kappa > -1.0 && min_kappa <= 1.0 {
        Ok(())
    } else {
        Err(format!("--min-kappa {min_kappa}: expected a number in (-1, 1]"))
    }
}

/// The human labels of a codebook (name and version) in the store, with their models: those
/// imported from a recorded blind export. Labels imported before Agora recorded exports carry
/// no export id, and nothing says they were made blind: they do not count
/// ([`labels_without_export`] counts them).
pub use agora_records::families::audit::gate::load_labels;

/// The labels of a codebook (name and version) imported before Agora recorded exports (no export
/// id): they do not count for the gate.
pub use agora_records::families::audit::gate::labels_without_export;

/// What a reasoning sentence counts as when its coder's reply for the response failed
/// validation (the wrong number of codes, an unknown code): a label of its own, so that a
/// human-labelled sentence the coder could not code is a disagreement in κ, not left out —
/// a coder cannot pass the gate by failing on the hard sentences.
pub const CODER_ERROR: &str = "(coder error)";

/// The machine codes of a codebook's reasoning sentences in the store (of one coder and
/// codebook SHA-256 when given), with their models; a sentence of a response whose coder
/// output failed validation reads [`CODER_ERROR`].
pub fn load_machine(
    conn: &Connection,
    codebook: &str,
    version: u32,
    only: Option<(&str, &str)>,
) -> rusqlite::Result<Vec<MachineCode>> {
    agora_records::families::audit::gate::load_machine(conn, codebook, version, only, CODER_ERROR)
}

/// The gate's decisions for `coder`'s codes (with `codebook`, as the store holds them now) on
/// each of `models`' text.
pub fn gate(
    conn: &Connection,
    codebook: &LoadedCodebook,
    coder: &str,
    models: &[String],
    gate: &GateOptions,
) -> rusqlite::Result<Vec<Validation>> {
    Ok(decide(conn, codebook, coder, models, gate)?.into_iter().map(|(v, _)| v).collect())
}

/// [`gate`], each decision with the human labels of the model's text it rests on (none where
/// the model has none).
fn decide(
    conn: &Connection,
    codebook: &LoadedCodebook,
    coder: &str,
    models: &[String],
    gate: &GateOptions,
) -> rusqlite::Result<Vec<(Validation, Option<ConsensusRow>)>> {
    let cb = &codebook.codebook;
    let labels = load_labels(conn, &cb.name, cb.version)?;
    let machine = load_machine(conn, &cb.name, cb.version, Some((coder, &codebook.sha256)))?;
    let errors = load_coder_errors(conn, &cb.name, cb.version)?;
    let codes: Vec<String> = cb.codes.iter().map(|c| c.name.clone()).collect();
    let (consensus, rows) = compute(&codes, &labels, &machine);
    Ok(models
        .iter()
        .map(|m| {
            let r = rows.iter().find(|r| r.kind == "coder" && r.model == *m && r.coder == coder);
            let humans = consensus.iter().find(|c| c.model == *m);
            let e = errors.get(&(m.clone(), coder.to_string(), codebook.sha256.clone())).copied().unwrap_or((0, 0));
            (validate(r, humans, !labels.is_empty(), m, coder, gate, e), humans.cloned())
        })
        .collect())
}

/// Writes the gate's decision (the default gate, the one the ladder grades with) for every
/// coder and codebook of the store's coded responses on each model's text into `audit_gate`,
/// replacing the table's rows, in one transaction: the audit calls it whenever the codes or the
/// human labels change. A codebook that is not in `audit_codebooks` cannot be checked against
/// its labels: its coder is refused, saying so. Returns the decisions written.
pub fn record_gates(conn: &mut Connection) -> rusqlite::Result<usize> {
    agora_records::families::audit::gate::record_gates(conn, write_gates)
}

/// [`record_gates`] inside the caller's transaction (the label import writes the labels and the
/// decisions they change together).
pub fn write_gates(conn: &Connection) -> rusqlite::Result<usize> {
    let keys = agora_records::families::audit::gate::coded_keys(conn)?;
    let gate_options = GateOptions::default();
    let mut decisions = Vec::new();
    for (key, models) in keys {
        let coder = &key.coder;
        let source =
            agora_records::families::audit::gate::codebook_source(conn, &key.codebook, key.version, &key.sha256)?;
        let parsed = source.as_deref().and_then(|s| Codebook::parse(s, Path::new("audit_codebooks")).ok());
        let validations = match parsed {
            Some(cb) => decide(conn, &cb, coder, &models, &gate_options)?,
            None => models
                .iter()
                .map(|m| {
                    let mut v = validate(None, None, false, m, coder, &gate_options, (0, 0));
                    v.reason = "the codebook coded with is not in audit_codebooks".into();
                    (v, None)
                })
                .collect(),
        };
        decisions.push((key, validations));
    }
    let records: Vec<(CoderKeyRef, GateRow)> = decisions
        .iter()
        .flat_map(|(key, validations)| {
            validations.iter().map(move |(v, humans)| {
                let h = humans.clone().unwrap_or_default();
                let row = GateRow {
                    model: v.model.clone(),
                    status: v.status.as_str().to_string(),
                    agreement: CoderAgreement {
                        kappa: v.kappa,
                        n: v.n as i64,
                        responses: v.responses as i64,
                        min_kappa: v.min_kappa,
                        recall_json: serde_json::to_string(&v.recall).expect("invariant: a recall list serialises"),
                        coder_failed: v.coder_errors.0 as i64,
                        coder_of: v.coder_errors.1 as i64,
                    },
                    reason: v.reason.clone(),
                    labellers: Some(h.labellers as i64),
                    human_kappa: h.human_kappa,
                    human_sentences: Some(h.multiply_labelled as i64),
                    human_disagreements: Some(h.disagreements as i64),
                    min_human_kappa: Some(gate_options.min_human_kappa),
                    max_human_disagreement: Some(gate_options.max_human_disagreement),
                };
                (CoderKeyRef { coder: &v.coder, ..key.borrowed() }, row)
            })
        })
        .collect();
    // The table holds only the current decisions, rewritten here in full: a store's older
    // layout (without the human labellers' columns) is replaced, not altered.
    agora_records::families::audit::gate::write_gates(conn, records)
}
