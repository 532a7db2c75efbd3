//! A study's versions in a store: the one-plan rule applied to a whole plan. An edited study run
//! into a store that holds the old configuration is refused, or (when asked) stored as the
//! study's next version (`NAME@2`, `NAME@3`, …), never pooled with the old runs.

use std::path::Path;

use agora_engine::store::{Conflict, Store};
use agora_engine::EngineError;

use crate::Plan;

/// The name of a study's `k`-th version: the study's own name for the first.
pub fn version_name(study: &str, k: u32) -> String {
    if k <= 1 {
        study.to_string()
    } else {
        format!("{study}@{k}")
    }
}

/// The plan under another study name: a version of the study (`NAME@2`). Every run keeps its
/// seed, derived from the study file's own name, so the versions are compared on the same seeds.
pub fn renamed(plan: &Plan, name: &str) -> Plan {
    let mut p = plan.clone();
    p.study = name.to_string();
    for r in &mut p.runs {
        r.study = name.to_string();
    }
    p
}

/// The first version of the plan's study, from its `from`-th on, under which the store holds no
/// run of another configuration, with the first conflict met on the way (`None` when the
/// `from`-th version was free).
pub fn free_version_from(plan: &Plan, store: &Store, from: u32) -> Result<(Plan, Option<Conflict>), EngineError> {
    let mut first = None;
    for k in from.. {
        let p = renamed(plan, &version_name(&plan.study, k));
        match store.first_conflict(&p.runs)? {
            None => return Ok((p, first)),
            Some(c) => {
                first.get_or_insert(c);
            }
        }
    }
    unreachable!("invariant: a store holds finitely many versions")
}

/// Where a plan goes in a store.
#[derive(Debug)]
pub enum Placement {
    /// Under its own name: nothing stored conflicts with it.
    Own(Plan),
    /// As the study's next free version (asked for), with the sentence saying why.
    NewVersion(Plan, String),
    /// Refused: the message says what conflicts and what to do.
    Refused(String),
}

/// Places a plan in a store under the one-plan rule: refused when a name already in the store
/// would take another meaning, or (with `new_version`) moved to the study's first free version.
/// `study` and `store_path` name the study and the store in the messages; `new_version_flag` is
/// how the caller asks for a new version (`--new-version`, `new_version=True`).
pub fn place(
    plan: &Plan,
    study: &Path,
    store: &Store,
    store_path: &Path,
    new_version: bool,
    new_version_flag: &str,
) -> Result<Placement, EngineError> {
    let (placed, conflict) = free_version_from(plan, store, 1)?;
    let Some(c) = conflict else { return Ok(Placement::Own(placed)) };
    let what = c.describe(store_path);
    if new_version {
        let line = format!("{}: {what}; stored as version `{}`", study.display(), placed.study);
        return Ok(Placement::NewVersion(placed, line));
    }
    Ok(Placement::Refused(format!(
        "{}: {what}; runs under one name must mean one thing — pass {new_version_flag} to store it as `{}`, rename \
         the study or the block, or use another store (adding runs, blocks or cells is allowed)",
        study.display(),
        placed.study
    )))
}
