//! The models and their behavioural profile: the profile tables, the joined society decisions and
//! the self-description beside behaviour.

use super::*;

pub(super) fn one_decimal(x: Option<f64>) -> String {
    x.filter(|v| v.is_finite()).map_or_else(|| "–".into(), |v| format!("{v:.1}"))
}

pub(super) fn range(r: Option<[f64; 2]>) -> String {
    r.map_or_else(|| "–".into(), |[a, b]| format!("[{a:.1}, {b:.1}]"))
}

/// A profile line's centre with its inner range, or its status where the centre is unavailable.
pub(super) fn centre_and_inner(l: Option<&ProfileLine>, what: &str) -> String {
    match l {
        None => format!("{what} not in this profile"),
        Some(l) if l.centre.is_some() => format!("{} {}", one_decimal(l.centre), range(l.inner)),
        Some(l) => l.status.clone(),
    }
}

/// The behavioural profile (the profile methods, `agora profile`): each model's table, the
/// self-description beside behaviour, and the models joined to their own decisions in the
/// store's society runs.
#[derive(Serialize)]
pub(super) struct ProfileView<'a> {
    /// The profile figure's number on the page, if drawn.
    pub(super) figure: Option<usize>,
    pub(super) tables: Vec<ProfileTable<'a>>,
    pub(super) self_description: Option<SelfDescriptionView>,
    pub(super) joined: Vec<JoinedView<'a>>,
}

/// One model's profile.
#[derive(Serialize)]
pub(super) struct ProfileTable<'a> {
    pub(super) model: &'a str,
    pub(super) served_id: &'a str,
    pub(super) lines: Vec<ProfileLineRow<'a>>,
}

#[derive(Serialize)]
pub(super) struct ProfileLineRow<'a> {
    pub(super) measure: &'a str,
    pub(super) name: String,
    pub(super) scale: &'static str,
    pub(super) centre: String,
    pub(super) inner: String,
    pub(super) outer: String,
    pub(super) checks: usize,
    pub(super) coverage: Coverage,
    pub(super) status: &'a str,
}

/// A profiled model beside its society decisions, or the note saying why there are none.
#[derive(Serialize)]
pub(super) struct JoinedView<'a> {
    pub(super) model: &'a str,
    pub(super) served_id: &'a str,
    pub(super) note: Option<&'a str>,
    pub(super) rows: Vec<JoinedRowView<'a>>,
}

#[derive(Serialize)]
pub(super) struct JoinedRowView<'a> {
    pub(super) outcome: &'a str,
    pub(super) society: String,
    pub(super) decisions: usize,
    pub(super) fallbacks: usize,
    pub(super) runs: usize,
    pub(super) task: &'a str,
    pub(super) task_centre: String,
    pub(super) measure: &'a str,
    pub(super) measure_centre: String,
}

pub(super) fn behavioural_profile<'a>(p: &Page<'a>) -> Option<ProfileView<'a>> {
    if p.profiles.is_empty() {
        return None;
    }
    let tables = p
        .profiles
        .iter()
        .map(|(model, served_id, lines)| ProfileTable {
            model,
            served_id,
            lines: lines
                .iter()
                .map(|l| ProfileLineRow {
                    measure: &l.measure,
                    name: measure_name(&l.measure),
                    scale: if signed(&l.measure) { "−100..100" } else { "0–100" },
                    centre: one_decimal(l.centre),
                    inner: range(l.inner),
                    outer: range(l.outer),
                    checks: l.checks,
                    coverage: l.coverage,
                    status: &l.status,
                })
                .collect(),
        })
        .collect();
    let joined = p
        .joined
        .iter()
        .map(|j| JoinedView {
            model: &j.model,
            served_id: &j.served_id,
            note: j.note.as_deref(),
            rows: j
                .rows
                .iter()
                .map(|r| JoinedRowView {
                    outcome: r.outcome,
                    society: one_decimal(r.society),
                    decisions: r.decisions,
                    fallbacks: r.fallbacks,
                    runs: r.runs,
                    task: &r.task,
                    task_centre: centre_and_inner(r.task_line, &r.task),
                    measure: r.measure,
                    measure_centre: centre_and_inner(r.measure_line, r.measure),
                })
                .collect(),
        })
        .collect();
    Some(ProfileView {
        figure: p.figures.iter().position(|(c, _)| *c == crate::figures::profile::CAPTION),
        tables,
        self_description: self_description(p.profiles),
        joined,
    })
}

/// The self-description (E1–E5) of each model beside its behavioural measures (A–D): an
/// exploratory view, with Agora's one declared pairing and its rank correlation across models.
#[derive(Serialize)]
pub(super) struct SelfDescriptionView {
    /// The declared pairing's self-described measure, its id in capitals and its name.
    pub(super) described: String,
    pub(super) described_name: String,
    /// The declared pairing's behavioural measure, its id in capitals and its name.
    pub(super) behaviour: String,
    pub(super) behaviour_name: String,
    /// The measures' ids in capitals, E1–E5 then A–D.
    pub(super) columns: Vec<String>,
    pub(super) rows: Vec<SelfRowView>,
    /// The models with both centres of the pairing.
    pub(super) n: usize,
    /// Spearman's ρ across them, where there are enough.
    pub(super) rho: Option<String>,
    /// Its 95 % interval, where there are enough.
    pub(super) interval: Option<[String; 2]>,
}

#[derive(Serialize)]
pub(super) struct SelfRowView {
    pub(super) model: String,
    pub(super) served_id: String,
    /// Each measure's centre [inner range], or why it is missing.
    pub(super) cells: Vec<String>,
}

pub(super) fn self_description(profiles: &[StoredProfile]) -> Option<SelfDescriptionView> {
    use crate::profile::{self_description, BEHAVIOURAL, DECLARED_PAIRING, SELF_DESCRIBED};
    let (rows, rho) = self_description(profiles);
    if rows.is_empty() {
        return None;
    }
    let (e, b) = DECLARED_PAIRING;
    Some(SelfDescriptionView {
        described: e.to_uppercase(),
        described_name: measure_name(e),
        behaviour: b.to_uppercase(),
        behaviour_name: measure_name(b),
        columns: SELF_DESCRIBED.iter().chain(BEHAVIOURAL.iter()).map(|m| m.to_uppercase()).collect(),
        rows: rows
            .iter()
            .map(|r| SelfRowView {
                model: r.model.clone(),
                served_id: r.served_id.clone(),
                cells: r
                    .described
                    .iter()
                    .zip(SELF_DESCRIBED)
                    .chain(r.behaviour.iter().zip(BEHAVIOURAL))
                    .map(|(l, m)| centre_and_inner(*l, m))
                    .collect(),
            })
            .collect(),
        n: rho.n,
        rho: rho.rho.map(|r| format!("{r:.2}")),
        interval: rho.interval.map(|[lo, hi]| [format!("{lo:.2}"), format!("{hi:.2}")]),
    })
}
