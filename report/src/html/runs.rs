//! The runs' own sections: the naming runs, the transcript excerpts and the studies.

use super::*;

/// A naming-game run for the drill-down, with its first interactions.
#[derive(Serialize)]
pub(super) struct NamingRunView<'a> {
    pub(super) roster: &'a str,
    pub(super) arm: &'a str,
    pub(super) variant: &'a str,
    pub(super) cell: &'a str,
    /// The committed fraction, where the run is part of a sweep.
    pub(super) sweep: Option<String>,
    pub(super) run_index: i64,
    pub(super) steps: i64,
    pub(super) meetings: Vec<MeetingRow>,
}

#[derive(Serialize)]
pub(super) struct MeetingRow {
    pub(super) t: u32,
    pub(super) a: u32,
    pub(super) b: u32,
    pub(super) name_a: u32,
    pub(super) name_b: u32,
    pub(super) matched: bool,
}

pub(super) fn naming_run(r: &NamingRun) -> NamingRunView<'_> {
    NamingRunView {
        roster: &r.roster,
        arm: &r.arm,
        variant: &r.variant,
        cell: &r.cell,
        sweep: (r.sweep >= 0.0).then(|| format!("{:.3}", r.sweep)),
        run_index: r.run_index,
        steps: r.steps,
        meetings: r
            .meetings
            .iter()
            .map(|m| MeetingRow { t: m.t, a: m.a, b: m.b, name_a: m.name_a, name_b: m.name_b, matched: m.matched })
            .collect(),
    }
}

/// A model reply (untrusted text: the template escapes it).
#[derive(Serialize)]
pub(super) struct ExcerptRow<'a> {
    pub(super) model: &'a str,
    pub(super) role: &'a str,
    pub(super) parse_status: &'a str,
    pub(super) raw_reply: &'a str,
}

#[derive(Serialize)]
pub(super) struct StudyRow<'a> {
    pub(super) study: &'a str,
    pub(super) plan_hash: &'a str,
    pub(super) master_seed: &'a str,
    pub(super) runs: i64,
}
