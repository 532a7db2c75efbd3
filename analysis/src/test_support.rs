//! Hand-built run outcomes for the unit tests.

use std::collections::BTreeMap;

use crate::outcomes::RunOutcome;

/// Where a run sits.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Place<'a> {
    pub roster: &'a str,
    pub family: &'a str,
    pub environment: &'a str,
    pub arm: &'a str,
    pub cell: &'a str,
    pub level: &'a str,
    pub variant: &'a str,
}

impl<'a> Place<'a> {
    pub(crate) fn new(
        roster: &'a str,
        family: &'a str,
        environment: &'a str,
        arm: &'a str,
        cell: &'a str,
        level: &'a str,
        variant: &'a str,
    ) -> Place<'a> {
        Place { roster, family, environment, arm, cell, level, variant }
    }

    /// The canonical baseline of an environment arm.
    pub(crate) fn base(roster: &'a str, family: &'a str, environment: &'a str, arm: &'a str) -> Place<'a> {
        Place::new(roster, family, environment, arm, "baseline", "baseline", "C0")
    }
}

/// One run at `place` with these metrics.
pub(crate) fn run(out: &mut Vec<RunOutcome>, place: Place, metrics: &[(&str, f64)]) -> usize {
    out.push(RunOutcome {
        run_id: out.len() as i64 + 1,
        run_key: format!("k{:06}", out.len() + 1),
        study: "test".into(),
        block: "main".into(),
        environment: place.environment.into(),
        arm: place.arm.into(),
        variant: place.variant.into(),
        cell: place.cell.into(),
        level: place.level.into(),
        roster: place.roster.into(),
        family: place.family.into(),
        sweep: None,
        point: None,
        committed: 0,
        population: 4,
        metrics: metrics.iter().map(|(k, v)| (k.to_string(), *v)).collect::<BTreeMap<_, _>>(),
    });
    out.len() - 1
}

/// One run per value of `metric` at `place`.
pub(crate) fn runs(out: &mut Vec<RunOutcome>, place: Place, metric: &str, vals: &[f64]) {
    for v in vals {
        run(out, place, &[(metric, *v)]);
    }
}
