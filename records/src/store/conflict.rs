//! The one-plan rule: runs stored under one name (study, block, roster, payoff version, cell and
//! sweep point) mean one configuration. A plan that would give a stored name another meaning is
//! found here, before anything runs; `agora run` and the Python package refuse it alike.

use crate::error::StoreError;
use crate::spec::RunSpec;

use super::Store;

/// A name of the store that a plan would give another meaning: a condition whose stored runs
/// were made under a different configuration (anything of the run's specification but its
/// study name, index and seed).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Conflict {
    /// The condition's block.
    pub block: String,
    /// The condition's roster.
    pub roster: String,
    /// The condition's payoff version.
    pub variant: &'static str,
    /// The condition's cell.
    pub cell: String,
    /// The first differing field of the specification, as a dotted path.
    pub field: String,
    /// Its stored value.
    pub was: String,
    /// The plan's value.
    pub now: String,
}

impl Conflict {
    /// What the conflict is, in one sentence naming the store it is in.
    pub fn describe(&self, store: &std::path::Path) -> String {
        format!(
            "block `{}` (roster `{}`, {}, cell `{}`) already has runs in {} made under another configuration: `{}` \
             was {}, now {}",
            self.block,
            self.roster,
            self.variant,
            self.cell,
            store.display(),
            self.field,
            self.was,
            self.now
        )
    }
}

/// A specification's configuration: everything but its index, seed and study name (the name is
/// what a version changes).
fn configuration(json: &str) -> Option<serde_json::Value> {
    let mut v: serde_json::Value = serde_json::from_str(json).ok()?;
    let o = v.as_object_mut()?;
    o.remove("run_index");
    o.remove("seed");
    o.remove("study");
    Some(v)
}

/// The first path at which two values differ, with both sides.
fn first_difference(a: &serde_json::Value, b: &serde_json::Value, path: &str) -> Option<(String, String, String)> {
    use serde_json::Value;
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let keys: std::collections::BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            keys.into_iter().find_map(|k| {
                let p = if path.is_empty() { k.clone() } else { format!("{path}.{k}") };
                match (x.get(k), y.get(k)) {
                    (Some(u), Some(v)) => first_difference(u, v, &p),
                    (u, v) => Some((p, format!("{u:?}"), format!("{v:?}"))),
                }
            })
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            x.iter().zip(y).enumerate().find_map(|(i, (u, v))| first_difference(u, v, &format!("{path}[{i}]")))
        }
        _ if a == b => None,
        _ => Some((path.to_string(), a.to_string(), b.to_string())),
    }
}

impl Store {
    /// The first condition of `runs` whose stored runs, under the runs' study name, were made
    /// under another configuration: its runs would be pooled with the new ones under one name.
    /// Adding runs, blocks or cells is no conflict.
    pub fn first_conflict(&self, runs: &[RunSpec]) -> Result<Option<Conflict>, StoreError> {
        let sql = |source| StoreError::Sqlite { path: self.path.clone(), source };
        let Some(study) = runs.first().map(|r| r.study.clone()) else { return Ok(None) };
        type Condition = (String, String, String, String, Option<String>, Option<u64>);
        // The first stored run of each condition of the study, read in one pass: a query per
        // condition would scan the runs table once per condition.
        let mut stored: std::collections::HashMap<Condition, String> = std::collections::HashMap::new();
        let mut st = self
            .conn
            .prepare(
                "SELECT block, roster, variant, cell, sweep_name, sweep_value, spec_json FROM runs WHERE study = ?1
                 ORDER BY run_id",
            )
            .map_err(sql)?;
        let mut rows = st.query([&study]).map_err(sql)?;
        while let Some(row) = rows.next().map_err(sql)? {
            let condition: Condition = (
                row.get(0).map_err(sql)?,
                row.get(1).map_err(sql)?,
                row.get(2).map_err(sql)?,
                row.get(3).map_err(sql)?,
                row.get(4).map_err(sql)?,
                row.get::<_, Option<f64>>(5).map_err(sql)?.map(f64::to_bits),
            );
            if let std::collections::hash_map::Entry::Vacant(slot) = stored.entry(condition) {
                slot.insert(row.get(6).map_err(sql)?);
            }
        }
        let mut seen = std::collections::HashSet::new();
        for r in runs {
            let (sweep_name, sweep_value) = r.sweep_columns();
            let condition: Condition = (
                r.block.clone(),
                r.roster.clone(),
                r.variant.as_str().to_string(),
                r.cell.clone(),
                sweep_name.map(str::to_string),
                sweep_value.map(f64::to_bits),
            );
            let Some(stored) = stored.get(&condition) else { continue };
            if !seen.insert(condition.clone()) {
                continue;
            }
            let (Some(old), Some(new)) = (configuration(stored), configuration(&r.canonical_json())) else { continue };
            if let Some((field, was, now)) = first_difference(&old, &new, "") {
                return Ok(Some(Conflict {
                    block: r.block.clone(),
                    roster: r.roster.clone(),
                    variant: r.variant.as_str(),
                    cell: r.cell.clone(),
                    field,
                    was,
                    now,
                }));
            }
        }
        Ok(None)
    }
}
