//! The additional-check schedules (the profile methods A-S1, A-S2, B-S1, C-S1, D-S1, E-S1) as a data
//! file, `assets/profile/schedules.ron`: for each schedule kind, one row per question version
//! with the condition it is checked at (E-S1: the anchor items it retests instead) and the
//! operations applied there, each a separate check.
//!
//! A row naming an operation its tasks lack (an action-label check in an amount task, a
//! history table in a menu), a version out of order or a condition that is not low, middle or
//! high is refused with the file and the field.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

use super::{Anchor, Level, Operation, ProfileInputError, ScheduleKind, VERSION_IDS};

/// One scheduled location: a version, its condition and its operations.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// Q00–Q10.
    pub version: String,
    /// The condition checked (`middle` for the questionnaire, which has one).
    pub level: Level,
    /// E-S1: which anchor items are retested; `None` elsewhere.
    pub anchor: Option<Anchor>,
    /// The operations, each a separate check.
    pub checks: Vec<Operation>,
}

/// Every schedule kind's rows.
#[derive(Clone, Debug, PartialEq)]
pub struct Schedules(pub BTreeMap<ScheduleKind, Vec<Row>>);

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    version: u32,
    schedules: BTreeMap<String, Vec<RawRow>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRow {
    version: String,
    #[serde(default)]
    condition: Option<String>,
    #[serde(default)]
    anchor: Option<String>,
    checks: Vec<String>,
}

const KINDS: [ScheduleKind; 5] =
    [ScheduleKind::AAmount, ScheduleKind::ABinary, ScheduleKind::B, ScheduleKind::CD, ScheduleKind::E];

impl Schedules {
    /// Parses and checks a schedules file's text.
    pub fn parse(file: &Path, text: &str) -> Result<Schedules, ProfileInputError> {
        let err = |field: String, reason: String| ProfileInputError::new(file.display().to_string(), field, reason);
        let raw: File = ron::Options::default()
            .with_default_extension(ron::extensions::Extensions::IMPLICIT_SOME)
            .from_str(text)
            .map_err(|e| err(format!("line {}", e.span.start.line), e.code.to_string()))?;
        if raw.version != 1 {
            return Err(err("version".into(), format!("is {}, this build reads 1", raw.version)));
        }
        let mut out = BTreeMap::new();
        for (name, rows) in &raw.schedules {
            let Some(kind) = KINDS.into_iter().find(|k| k.name() == name) else {
                return Err(err(
                    format!("schedules.{name}"),
                    format!("is not a schedule; the schedules are {}", KINDS.map(ScheduleKind::name).join(", ")),
                ));
            };
            if rows.len() != VERSION_IDS.len() {
                return Err(err(
                    format!("schedules.{name}"),
                    format!("has {} rows, one per version Q00–Q10 is needed", rows.len()),
                ));
            }
            let mut parsed = Vec::new();
            for (i, row) in rows.iter().enumerate() {
                let at = format!("schedules.{name}[{i}]");
                if row.version != VERSION_IDS[i] {
                    return Err(err(
                        format!("{at}.version"),
                        format!("is `{}`, expected `{}`", row.version, VERSION_IDS[i]),
                    ));
                }
                // The questionnaire's rows name anchors, the others conditions.
                let (level, anchor) = match (kind, &row.condition, &row.anchor) {
                    (ScheduleKind::E, None, Some(a)) => {
                        let anchor = Anchor::ALL.into_iter().find(|x| x.name() == a).ok_or_else(|| {
                            err(format!("{at}.anchor"), format!("`{a}` is not both, first or second"))
                        })?;
                        (Level::Middle, Some(anchor))
                    }
                    (ScheduleKind::E, _, _) => {
                        return Err(err(
                            at,
                            "an E-S1 row names its `anchor` (both, first or second), no condition".into(),
                        ))
                    }
                    (_, Some(c), None) => {
                        let level = Level::ALL.into_iter().find(|l| l.name() == c).ok_or_else(|| {
                            err(format!("{at}.condition"), format!("`{c}` is not low, middle or high"))
                        })?;
                        (level, None)
                    }
                    _ => return Err(err(at, "a row names its `condition` (low, middle or high), no anchor".into())),
                };
                let mut checks = Vec::new();
                for (j, c) in row.checks.iter().enumerate() {
                    let op = Operation::from_name(c).filter(|op| kind.operations().contains(op)).ok_or_else(|| {
                        err(
                            format!("{at}.checks[{j}]"),
                            format!(
                                "`{c}` is not an operation of the {name} schedule's tasks; they have {}",
                                kind.operations().iter().map(|o| o.name()).collect::<Vec<_>>().join(", ")
                            ),
                        )
                    })?;
                    if checks.contains(&op) {
                        return Err(err(format!("{at}.checks[{j}]"), format!("`{c}` is listed twice")));
                    }
                    checks.push(op);
                }
                parsed.push(Row { version: row.version.clone(), level, anchor, checks });
            }
            out.insert(kind, parsed);
        }
        if let Some(missing) = KINDS.iter().find(|k| !out.contains_key(k)) {
            return Err(err("schedules".into(), format!("has no `{}` schedule", missing.name())));
        }
        Ok(Schedules(out))
    }

    /// Loads `path`.
    pub fn load(path: &Path) -> Result<Schedules, ProfileInputError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| ProfileInputError::new(path.display().to_string(), "", format!("cannot be read: {e}")))?;
        Schedules::parse(path, &text)
    }

    /// The rows of one schedule kind.
    pub fn rows(&self, kind: ScheduleKind) -> &[Row] {
        self.0.get(&kind).map_or(&[], Vec::as_slice)
    }

    /// K: the number of checks of one kind across the eleven versions.
    pub fn checks(&self, kind: ScheduleKind) -> usize {
        self.rows(kind).iter().map(|r| r.checks.len()).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shipped() -> Schedules {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../assets/profile/schedules.ron");
        Schedules::load(&path).unwrap()
    }

    #[test]
    fn the_shipped_schedules_have_the_seeds_check_counts() {
        let s = shipped();
        // K = 25 everywhere but the A binary tasks, 27 there (BASE all seven, each other two).
        assert_eq!(s.checks(ScheduleKind::AAmount), 25);
        assert_eq!(s.checks(ScheduleKind::ABinary), 27);
        assert_eq!(s.checks(ScheduleKind::B), 25);
        assert_eq!(s.checks(ScheduleKind::CD), 25);
        // E-S1: BASE tests all five operations on both anchors, each other version two.
        assert_eq!(s.checks(ScheduleKind::E), 25);
        let e = s.rows(ScheduleKind::E);
        assert_eq!(e[0].anchor, Some(Anchor::Both));
        assert_eq!(e[10].anchor, Some(Anchor::Second));
        assert_eq!(e[10].checks, vec![Operation::ReversibleLabels, Operation::OptionOrder]);
        let b = s.rows(ScheduleKind::B);
        assert_eq!(b[3].level, Level::High);
        assert_eq!(b[3].checks, vec![Operation::HistoryTable, Operation::ResponseOrder]);
    }

    #[test]
    fn an_operation_the_tasks_lack_is_refused_with_its_field() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../assets/profile/schedules.ron");
        let text = std::fs::read_to_string(&path).unwrap();
        // C01 of the amount schedule: answer-field and sentence line breaks → action labels.
        let bad = text.replacen("\"sentence-line-breaks\"", "\"action-labels\"", 1);
        let e = Schedules::parse(&path, &bad).unwrap_err();
        assert!(e.field.starts_with("schedules.a-amount[") && e.field.contains("checks"), "{e}");
        assert!(e.reason.contains("action-labels"), "{e}");
    }
}
