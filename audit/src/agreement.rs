//! Agreement with human labels and the validation gate (the SUVA audit paper §240.6.2, §240.10.2).
//!
//! Cohen's κ ([`cohen_kappa`]) is computed, per audited model on that model's own text:
//! 1. **between human coders first**: for every pair of human coders, on the sentences both
//!    labelled (the first name in alphabetical order is the reference; κ is symmetric). The
//!    humans' agreement with each other on the model's text ([`ConsensusRow::human_kappa`]) is
//!    that pair's κ when two labelled, and the mean of the pairwise κ of the pairs that share a
//!    sentence (Light's κ) when more did; Fleiss' κ is not used, because it needs every
//!    sentence labelled by the same number of humans;
//! 2. **then each machine coder against the human reference**: the reference code of a
//!    sentence is the code a strict majority of the human coders who labelled it gave, where at
//!    least two labelled it (two must agree). A sentence one human labelled has no reference:
//!    one person's reading is not checked against anyone's. A sentence without a majority (the
//!    humans disagree) has no reference either and is left out of every coder's κ, and counted.
//!    A machine code whose sentence text differs from the labelled text (the reply was
//!    segmented differently since) is left out and counted.
//!
//! Each row carries n, p_o, p_e, κ with its asymptotic standard error and 95 % interval, the
//! confusion matrix over the codebook's codes (rows: the reference, columns: the coder) and
//! per-code recall and precision of the coder against the reference.
//!
//! **The gate** ([`GateOptions`]). A machine coder's codes on a model's text count for a
//! statistic only when, on that model's text:
//! 1. at least [`MIN_LABELLERS`] (2) humans labelled it, they agree with each other at κ ≥
//!    [`MIN_HUMAN_KAPPA`] (0.7, Agora's choice: the paper asks for the humans' agreement and
//!    names no threshold), and they disagree (no strict majority) on at most
//!    [`MAX_HUMAN_DISAGREEMENT`] (20 %, Agora's choice) of the sentences two or more labelled,
//!    so that the coder is not judged on the easy sentences alone;
//! 2. the human reference covers at least 100 responses and 200 of their sentences (the floor:
//!    "Auditing LLM Behavior with SUVA: From Stated Values to Actions" validates its coder on
//!    100 responses, 301 sentences, §240.6.2 and Table 240.5, and has people "code a few hundred sentences";
//!    below that, κ's interval is too wide for a threshold to mean anything: on the 14
//!    sentences of the committed fixture it runs from 0.60 to 1.05);
//! 3. the coder failed (its output for a response did not validate) on at most 5 % of the
//!    model's responses with reasoning; failed responses are exported for labelling, and a
//!    labelled sentence of one counts against κ as [`CODER_ERROR`];
//! 4. κ against the human reference is at least the threshold (0.8 by default, the seed's
//!    `min_kappa`).
//!
//! Otherwise the codes are refused with the first unmet condition: `refused: 1 human labeller on
//! this model's text (…)`, `refused: the 2 human labellers agree with each other at κ = 0.490 <
//! 0.7 (…)`, `refused: 14 sentences of 7
//! responses with a human reference (the gate needs 100 responses and 200 sentences; κ = …)`,
//! `refused: κ = x < 0.8 (n sentences, m responses)`, `refused: no human labels` when the store
//! holds none for the codebook, or with the reason κ could not be computed. Allowing
//! unvalidated codes shows them labelled `unvalidated: …` instead. Per-code recall is reported
//! beside κ, as the seed asks ("report the coder's per-code recall alongside any per-code
//! effect"); a code a Tier-3 claim relies on must have at least 30 human-referenced sentences
//! of the model's text, so that its recall is measured (checked where the ladder reads the
//! audit, `agora_analysis::mechanism`).
//!
//! Human labels are matched to machine codes by codebook name and version; machine coders are
//! told apart by their identity and the SHA-256 of the codebook they coded with.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use rusqlite::{Connection, OpenFlags};
use serde::Serialize;

use super::codebook::{Codebook, LoadedCodebook};
use super::labels::{has_table, LabelsError};
use agora_stats::cohen_kappa;

/// The default threshold: codes from a coder below κ 0.8 on a model's text are refused.
pub const DEFAULT_MIN_KAPPA: f64 = 0.8;
/// The default floor of responses with a human reference on a model's text: the seed's
/// validation sample ("Lexicon coder against gold labels on 100 responses").
pub const DEFAULT_MIN_RESPONSES: usize = 100;
/// The default floor of sentences with a human reference on a model's text: two per response
/// of the floor, the lower end of "a few hundred sentences" (the seed's sample has 301).
pub const DEFAULT_MIN_SENTENCES: usize = 200;
/// The default floor of human-referenced sentences of a code a Tier-3 claim relies on (30): the
/// ladder's rule, [`agora_analysis::evidence::MIN_CODE_SUPPORT`].
pub const DEFAULT_MIN_CODE_SUPPORT: u64 = agora_analysis::evidence::MIN_CODE_SUPPORT;
/// The default ceiling on the share of a model's responses the coder failed on.
pub const DEFAULT_MAX_CODER_ERRORS: f64 = 0.05;
/// The humans' rule (Agora's choice of thresholds, declared with the ladder that reads the
/// stored gate): at least two labellers, κ ≥ 0.7 with each other, at most 20 % of their
/// sentences without a majority.
pub use agora_analysis::evidence::{MAX_HUMAN_DISAGREEMENT, MIN_HUMAN_KAPPA, MIN_LABELLERS};

/// The coder-validation gate's rule.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GateOptions {
    /// Codes count on a model's text when the coder's κ there is at least this (0.8).
    pub min_kappa: f64,
    /// Fewest responses with a human reference on the model's text (100).
    pub min_responses: usize,
    /// Fewest sentences with a human reference on the model's text (200).
    pub min_sentences: usize,
    /// Fewest human-referenced sentences of a code a Tier-3 claim relies on (30).
    pub min_code_support: u64,
    /// Largest share of the model's responses the coder may fail on (0.05).
    pub max_coder_errors: f64,
    /// Fewest human labellers on the model's text (2; never fewer).
    pub min_labellers: usize,
    /// Least agreement of the human labellers with each other (κ 0.7).
    pub min_human_kappa: f64,
    /// Largest share of the sentences two or more humans labelled that they disagree on (0.2).
    pub max_human_disagreement: f64,
    /// Show codes the gate refuses, labelled unvalidated, instead of refusing them.
    pub allow_unvalidated: bool,
}

impl Default for GateOptions {
    fn default() -> GateOptions {
        GateOptions {
            min_kappa: DEFAULT_MIN_KAPPA,
            min_responses: DEFAULT_MIN_RESPONSES,
            min_sentences: DEFAULT_MIN_SENTENCES,
            min_code_support: DEFAULT_MIN_CODE_SUPPORT,
            max_coder_errors: DEFAULT_MAX_CODER_ERRORS,
            min_labellers: MIN_LABELLERS,
            min_human_kappa: MIN_HUMAN_KAPPA,
            max_human_disagreement: MAX_HUMAN_DISAGREEMENT,
            allow_unvalidated: false,
        }
    }
}

impl GateOptions {
    /// Checks the settings, naming the option at fault.
    pub fn check(&self) -> Result<(), String> {
        check_min_kappa(self.min_kappa)?;
        if !(self.max_coder_errors.is_finite() && (0.0..=1.0).contains(&self.max_coder_errors)) {
            return Err(format!("--max-coder-errors {}: expected a share in [0, 1]", self.max_coder_errors));
        }
        if self.min_labellers < MIN_LABELLERS {
            return Err(format!(
                "the gate needs at least {MIN_LABELLERS} human labellers, not {}: one person's labels are no reference",
                self.min_labellers
            ));
        }
        if !(self.min_human_kappa.is_finite() && self.min_human_kappa > -1.0 && self.min_human_kappa <= 1.0) {
            return Err(format!("min_human_kappa {}: expected a number in (-1, 1]", self.min_human_kappa));
        }
        if !(self.max_human_disagreement.is_finite() && (0.0..=1.0).contains(&self.max_human_disagreement)) {
            return Err(format!("max_human_disagreement {}: expected a share in [0, 1]", self.max_human_disagreement));
        }
        Ok(())
    }

    /// The rule in words, as reports state it.
    pub fn describe(&self) -> String {
        format!(
            "at least {} human labellers agree with each other at κ ≥ {} (Cohen's κ; with more than two, the mean \
             pairwise κ) and disagree on at most {} % of the sentences two or more labelled, and the coder reaches \
             κ ≥ {} against their reference on at least {} responses and {} sentences of the model's text, \
             the coder failing on at most {} % of its responses; a code a Tier-3 claim relies on needs {} \
             human-referenced sentences",
            self.min_labellers,
            self.min_human_kappa,
            self.max_human_disagreement * 100.0,
            self.min_kappa,
            self.min_responses,
            self.min_sentences,
            self.max_coder_errors * 100.0,
            self.min_code_support
        )
    }
}

/// The rule for the human reference, as reports state it.
pub const CONSENSUS_RULE: &str = "The human reference of a sentence is the code a strict majority of the human coders who labelled it gave, where at least two labelled it (with two, both must agree). A sentence one human labelled has no reference. Sentences where the humans disagree have no reference and are left out of every machine coder's kappa, and counted; the humans' agreement with each other is Cohen's kappa for two labellers, the mean pairwise kappa (Light's kappa) for more.";

/// The table's layout, kept with every table of the store in `agora_records`.
pub use agora_records::families::audit::AGREEMENT as SCHEMA;

pub use agora_records::families::audit::agreement::{HumanLabel, MachineCode, SentenceKey};

/// The human reference of one sentence.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reference {
    /// The majority code; none where the humans disagree or only one labelled the sentence.
    pub code: Option<String>,
    /// The labelled text.
    pub text: String,
    /// How many human coders labelled it.
    pub humans: usize,
    /// The model that wrote it.
    pub model: String,
}

/// The human reference of every labelled sentence (see the [module documentation](self)).
pub fn consensus(labels: &[HumanLabel]) -> BTreeMap<SentenceKey, Reference> {
    let mut by_key: BTreeMap<SentenceKey, Vec<&HumanLabel>> = BTreeMap::new();
    for l in labels {
        by_key.entry(l.key).or_default().push(l);
    }
    by_key
        .into_iter()
        .map(|(k, ls)| {
            let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
            for l in &ls {
                *counts.entry(&l.code).or_default() += 1;
            }
            let code = counts
                .iter()
                .find(|(_, c)| ls.len() >= MIN_LABELLERS && **c * 2 > ls.len())
                .map(|(code, _)| (*code).to_string());
            (k, Reference { code, text: ls[0].text.clone(), humans: ls.len(), model: ls[0].model.clone() })
        })
        .collect()
}

pub use agora_records::families::audit::agreement::AgreementRow;

/// The human labels of one model, and the humans' agreement with each other there.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ConsensusRow {
    /// The audited model.
    pub model: String,
    /// Sentences labelled by at least one human coder.
    pub labelled: usize,
    /// Of them, labelled by two or more.
    pub multiply_labelled: usize,
    /// Sentences with a reference.
    pub with_reference: usize,
    /// Sentences two or more humans labelled where they disagree (no strict majority, no
    /// reference).
    pub disagreements: usize,
    /// Human coders with a label on the model's text.
    pub labellers: usize,
    /// Pairs of them who labelled a sentence in common.
    pub human_pairs: usize,
    /// The humans' agreement with each other: the pair's Cohen's κ where one pair shares
    /// sentences, the mean of the pairs' κ (Light's κ) where several do; none where no pair
    /// shares a sentence or a pair's κ is undefined (see `human_note`).
    pub human_kappa: Option<f64>,
    /// Why `human_kappa` is missing, if it is.
    pub human_note: Option<String>,
}

impl ConsensusRow {
    /// The share of the sentences two or more humans labelled that they disagree on.
    pub fn disagreement_share(&self) -> Option<f64> {
        (self.multiply_labelled > 0).then(|| self.disagreements as f64 / self.multiply_labelled as f64)
    }

    /// Which κ `human_kappa` is, in words.
    pub fn human_kappa_kind(&self) -> String {
        if self.human_pairs > 1 {
            format!("the mean of {} pairwise Cohen's κ", self.human_pairs)
        } else {
            "Cohen's κ".to_string()
        }
    }

    /// The humans' agreement summed up: `2 human labellers, κ = 0.851 with each other (Cohen's
    /// κ), 2 of 16 sentences (12.5 %) without a majority`.
    pub fn humans_text(&self) -> String {
        format!(
            "{} human labeller{}, κ = {} with each other ({}), {} of {} sentences ({:.1} %) without a majority",
            self.labellers,
            if self.labellers == 1 { "" } else { "s" },
            self.human_kappa.map_or_else(|| "-".to_string(), |k| format!("{k:.3}")),
            self.human_kappa_kind(),
            self.disagreements,
            self.multiply_labelled,
            self.disagreement_share().unwrap_or(0.0) * 100.0
        )
    }
}

/// The humans' agreement with each other from their pairs' rows on one model's text: (pairs
/// sharing a sentence, κ, why κ is missing).
fn human_agreement(pairs: &[AgreementRow]) -> (usize, Option<f64>, Option<String>) {
    let shared: Vec<&AgreementRow> = pairs.iter().filter(|r| r.n > 0).collect();
    if shared.is_empty() {
        return (0, None, Some("no sentence labelled by two human coders".into()));
    }
    if let Some(p) = shared.iter().find(|r| r.kappa.is_none()) {
        let why = p.note.clone().unwrap_or_default();
        return (shared.len(), None, Some(format!("κ between `{}` and `{}` undefined: {why}", p.reference, p.coder)));
    }
    let sum: f64 = shared.iter().filter_map(|r| r.kappa).sum();
    (shared.len(), Some(sum / shared.len() as f64), None)
}

fn row(
    model: &str,
    kind: &str,
    reference: &str,
    coder: &str,
    sha: &str,
    codes: &[String],
    pairs: &[(&str, &str)],
) -> AgreementRow {
    let mut labels: Vec<String> = codes.to_vec();
    let extra: BTreeSet<&str> =
        pairs.iter().flat_map(|(a, b)| [*a, *b]).filter(|c| !codes.iter().any(|x| x == c)).collect();
    labels.extend(extra.into_iter().map(str::to_string));
    let m = labels.len();
    let mut out = AgreementRow {
        model: model.into(),
        kind: kind.into(),
        reference: reference.into(),
        coder: coder.into(),
        coder_codebook_sha256: sha.into(),
        n: pairs.len(),
        responses: 0,
        p_o: None,
        p_e: None,
        kappa: None,
        se: None,
        ci_low: None,
        ci_high: None,
        min_kappa: None,
        verdict: None,
        excluded_disagreements: 0,
        excluded_text_changed: 0,
        note: None,
        confusion: vec![vec![0; m]; m],
        support: vec![0; m],
        recall: vec![None; m],
        precision: vec![None; m],
        labels,
    };
    if pairs.is_empty() {
        out.note = Some(if kind == "humans" {
            "no sentence labelled by both".into()
        } else {
            "no sentence of this model's text with a human reference".into()
        });
        return out;
    }
    let y1: Vec<&str> = pairs.iter().map(|p| p.0).collect();
    let y2: Vec<&str> = pairs.iter().map(|p| p.1).collect();
    let ls: Vec<&str> = out.labels.iter().map(String::as_str).collect();
    match cohen_kappa(&y1, &y2, Some(&ls), 0.05) {
        Ok(k) => {
            out.p_o = Some(k.p_o);
            out.p_e = Some(k.p_e);
            out.kappa = Some(k.kappa);
            out.se = Some(k.se);
            out.ci_low = Some(k.ci_low);
            out.ci_high = Some(k.ci_high);
            out.confusion = k.confusion;
            out.support = k.support;
            out.recall = k.recall;
            out.precision = k.precision;
        }
        Err(e) => {
            // Only a single shared label can fail here: the inputs are non-empty, of equal
            // length, and every label is among `labels`.
            let agree = pairs.iter().filter(|(a, b)| a == b).count();
            out.p_o = Some(agree as f64 / pairs.len() as f64);
            out.note = Some(format!("kappa undefined: {e}"));
            for (a, b) in pairs {
                let i = ls.iter().position(|l| l == a).unwrap_or(0);
                let j = ls.iter().position(|l| l == b).unwrap_or(0);
                out.confusion[i][j] += 1;
                out.support[i] += 1;
            }
        }
    }
    out
}

/// How many responses (run, seat, slot) the sentences `keys` come from.
fn responses_of<'a>(keys: impl Iterator<Item = &'a SentenceKey>) -> usize {
    keys.map(|k| (k.0, k.1, k.2)).collect::<BTreeSet<_>>().len()
}

/// Every agreement row: human pairs per model (and over all models when there are several),
/// then each machine coder against the human reference per model; with the consensus counts.
pub fn compute(
    codes: &[String],
    labels: &[HumanLabel],
    machine: &[MachineCode],
) -> (Vec<ConsensusRow>, Vec<AgreementRow>) {
    let reference = consensus(labels);
    let mut models: BTreeSet<&str> = labels.iter().map(|l| l.model.as_str()).collect();
    models.extend(machine.iter().map(|m| m.model.as_str()));
    let label_models: BTreeSet<&str> = labels.iter().map(|l| l.model.as_str()).collect();
    let mut consensus_rows = Vec::new();
    let mut rows = Vec::new();
    let human_pairs = |scope: Option<&str>, rows: &mut Vec<AgreementRow>| {
        let in_scope: Vec<&HumanLabel> = labels.iter().filter(|l| scope.is_none_or(|m| l.model == m)).collect();
        let coders: BTreeSet<&str> = in_scope.iter().map(|l| l.coder.as_str()).collect();
        let coders: Vec<&str> = coders.into_iter().collect();
        let by: BTreeMap<(&str, SentenceKey), &str> =
            in_scope.iter().map(|l| ((l.coder.as_str(), l.key), l.code.as_str())).collect();
        for (i, a) in coders.iter().enumerate() {
            for b in &coders[i + 1..] {
                let both: Vec<(SentenceKey, (&str, &str))> = in_scope
                    .iter()
                    .filter(|l| l.coder == *a)
                    .filter_map(|l| by.get(&(*b, l.key)).map(|cb| (l.key, (l.code.as_str(), *cb))))
                    .collect();
                let pairs: Vec<(&str, &str)> = both.iter().map(|(_, p)| *p).collect();
                let mut r = row(scope.unwrap_or("all"), "humans", a, b, "", codes, &pairs);
                r.responses = responses_of(both.iter().map(|(k, _)| k));
                rows.push(r);
            }
        }
    };
    for model in &models {
        let refs: Vec<&Reference> = reference.values().filter(|r| r.model == *model).collect();
        let first_pair = rows.len();
        human_pairs(Some(model), &mut rows);
        if label_models.contains(model) {
            let (human_pairs, human_kappa, human_note) = human_agreement(&rows[first_pair..]);
            let labellers: BTreeSet<&str> =
                labels.iter().filter(|l| l.model == *model).map(|l| l.coder.as_str()).collect();
            consensus_rows.push(ConsensusRow {
                model: (*model).to_string(),
                labelled: refs.len(),
                multiply_labelled: refs.iter().filter(|r| r.humans >= MIN_LABELLERS).count(),
                with_reference: refs.iter().filter(|r| r.code.is_some()).count(),
                disagreements: refs.iter().filter(|r| r.humans >= MIN_LABELLERS && r.code.is_none()).count(),
                labellers: labellers.len(),
                human_pairs,
                human_kappa,
                human_note,
            });
        }
        let mut coders: BTreeMap<(&str, &str), Vec<&MachineCode>> = BTreeMap::new();
        for m in machine.iter().filter(|m| m.model == *model) {
            coders.entry((m.coder.as_str(), m.codebook_sha256.as_str())).or_default().push(m);
        }
        for ((coder, sha), codes_of) in coders {
            let mut pairs = Vec::new();
            let mut keys = Vec::new();
            let (mut disagreements, mut changed) = (0, 0);
            for m in codes_of {
                let Some(r) = reference.get(&m.key) else { continue };
                match &r.code {
                    // One human's label is no reference: as if unlabelled.
                    None if r.humans < MIN_LABELLERS => {}
                    None => disagreements += 1,
                    Some(_) if r.text.trim() != m.text.trim() => changed += 1,
                    Some(c) => {
                        pairs.push((c.as_str(), m.code.as_str()));
                        keys.push(m.key);
                    }
                }
            }
            let mut r = row(model, "coder", "human reference", coder, sha, codes, &pairs);
            r.responses = responses_of(keys.iter());
            r.excluded_disagreements = disagreements;
            r.excluded_text_changed = changed;
            if pairs.is_empty() && !label_models.contains(model) {
                r.note = Some("no human labels on this model's text".into());
            }
            rows.push(r);
        }
    }
    if label_models.len() > 1 {
        human_pairs(None, &mut rows);
    }
    (consensus_rows, rows)
}

/// How many labels one human coder gave.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct HumanCoder {
    /// The name given on import.
    pub coder: String,
    /// Labels of the codebook.
    pub labels: usize,
}

/// The agreement report of a store and codebook.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Agreement {
    /// The store.
    pub store: String,
    /// The codebook's name.
    pub codebook: String,
    /// The codebook's version.
    pub codebook_version: u32,
    /// The gate's threshold.
    pub min_kappa: f64,
    /// The gate's threshold for the humans' agreement with each other.
    pub min_human_kappa: f64,
    /// The gate's rule in words.
    pub gate_rule: String,
    /// How the human reference is formed.
    pub consensus_rule: String,
    /// The human coders.
    pub humans: Vec<HumanCoder>,
    /// Per model: labelled sentences, references, disagreements.
    pub consensus: Vec<ConsensusRow>,
    /// κ rows (see [`compute`]).
    pub rows: Vec<AgreementRow>,
    /// The gate's decision per machine coder (and codebook SHA-256) and model.
    pub validation: Vec<Validation>,
}

/// Computes the agreement of every human pair and machine coder with codebook `codebook`
/// (name and version) in the store at `path`, writes it to `audit_agreement` (replacing the
/// codebook's earlier rows) and returns it. A store without human labels for the codebook is
/// bad input.
pub fn agreement(path: &Path, codebook: &LoadedCodebook, gate: &GateOptions) -> Result<Agreement, LabelsError> {
    gate.check().map_err(LabelsError::Option)?;
    let min_kappa = gate.min_kappa;
    let sql = |source| LabelsError::Store { path: path.to_path_buf(), source };
    let mut conn = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_WRITE).map_err(sql)?;
    conn.busy_timeout(std::time::Duration::from_secs(30)).map_err(sql)?;
    let cb = &codebook.codebook;
    if !has_table(&conn, "audit_sentences").map_err(sql)? {
        return Err(LabelsError::NotAudited {
            path: path.to_path_buf(),
            message: "no `audit_sentences` table: run `agora audit` on it first".into(),
        });
    }
    let labels = load_labels(&conn, &cb.name, cb.version).map_err(sql)?;
    if labels.is_empty() {
        let legacy = labels_without_export(&conn, &cb.name, cb.version).map_err(sql)?;
        return Err(LabelsError::NotAudited {
            path: path.to_path_buf(),
            message: format!(
                "no human labels for codebook {} v{}: export a sample with `agora audit export` and import labels with `agora audit import`{}",
                cb.name,
                cb.version,
                if legacy > 0 {
                    format!(
                        " ({legacy} labels were imported before Agora recorded exports and carry no export id: nothing says they were made blind; import them again from a blind export)"
                    )
                } else {
                    String::new()
                }
            ),
        });
    }
    let machine = load_machine(&conn, &cb.name, cb.version, None).map_err(sql)?;
    let errors = load_coder_errors(&conn, &cb.name, cb.version).map_err(sql)?;
    let codes: Vec<String> = cb.codes.iter().map(|c| c.name.clone()).collect();
    let (consensus, mut rows) = compute(&codes, &labels, &machine);
    let mut validation = Vec::new();
    let refuse = GateOptions { allow_unvalidated: false, ..*gate };
    for r in rows.iter_mut().filter(|r| r.kind == "coder") {
        let key = (r.model.clone(), r.coder.clone(), r.coder_codebook_sha256.clone());
        let e = errors.get(&key).copied().unwrap_or((0, 0));
        let humans = consensus.iter().find(|c| c.model == r.model);
        let v = validate(Some(r), humans, true, &r.model, &r.coder, &refuse, e);
        r.min_kappa = Some(min_kappa);
        r.verdict = Some(v.status.as_str().to_string());
        validation.push(v);
    }
    let mut humans: BTreeMap<&str, usize> = BTreeMap::new();
    for l in &labels {
        *humans.entry(&l.coder).or_default() += 1;
    }
    agora_records::families::audit::agreement::write(&mut conn, &cb.name, cb.version, &rows).map_err(sql)?;
    Ok(Agreement {
        store: path.display().to_string(),
        codebook: cb.name.clone(),
        codebook_version: cb.version,
        min_kappa,
        min_human_kappa: gate.min_human_kappa,
        gate_rule: gate.describe(),
        consensus_rule: CONSENSUS_RULE.into(),
        humans: humans.into_iter().map(|(c, n)| HumanCoder { coder: c.to_string(), labels: n }).collect(),
        consensus,
        rows,
        validation,
    })
}

mod gate;
#[cfg(test)]
use gate::kappa_text;
mod tables;
pub use gate::*;

#[cfg(test)]
mod tests;
