//! From the store's profile records to each measure's centre and ranges: the glue between the
//! collected responses (one row per scheduled slot) and the pure computations of
//! [`super::measure`] and [`super::combine`].
//!
//! # Components (the profile methods §A0–§D3)
//! A response row carries its task, question version, presentation (`reference` or the check's
//! operation), condition, decision point, branch (B1–B3's two histories), slot and, for B4, the
//! switch direction and round; its decoded economic value and its score (0–100, or 100 for the
//! counted choice; B4 rows score 100 for a choice that matches the opponent). A point's score is
//! the mean over its fifteen slots. From those:
//!
//! | measure | a version's points | a check at condition c |
//! |---|---|---|
//! | an A task | condition means (UGR: the mean of its four scored offers) | that condition's mean |
//! | B1–B3 | δ_c = after − comparison | δ_c |
//! | B4 | H, matches in rounds 8–12 | matches at rounds 8 and 12 at c, reference and check |
//! | C1 | 27 points, stake then p | p = 40, 50, 60 % at c |
//! | C2 | 18 points, prize, known probability, colour | 50 %, red and blue, at c |
//! | C3 | 12 immediate points, gap then grade | 100 % and 300 % at c |
//! | C4 | 12 δ = delayed − immediate | 100 % and 300 % at c |
//! | D1 | six triples [p_XY, p_YZ, p_XZ] | P1's triple at c |
//! | D2 | 9 points, stake then G1–G3 | G2 at c |
//! | D3 | six menus (XY, XYDX, XYDY) | P1's menus at c |
//! | E1–E9 | the item means (u, their mean) | the anchor items' means (z) |
//!
//! # Coverage (§M05: "A–D require all scheduled valid observations")
//! A measure's result needs every scheduled slot of its tasks valid, reference and checks
//! alike; otherwise it is unavailable, with its coverage given. §E0's softer rule holds for
//! the questionnaire (E1–E9): an item mean needs five of its fifteen ratings valid (a third of
//! its slots), and an unavailable check cell withholds only the outer range.
//! Missing answers are never replaced. The responder's unscored curve is outside the score and
//! outside coverage.

use std::collections::BTreeMap;

use serde::Serialize;

use super::combine::{combine, AMeasure, Ranges};
use super::consistency::Menus;
use super::measure::{
    profile_measure, B4Check, B4Version, D1Check, D1Version, D3Check, D3Version, LinearCheck, LinearVersion, Versions,
};
use super::questionnaire;
use super::range::measure_range;
use super::replace::Linear;
use super::{Condition, ProfileError, VERSIONS};

/// The reference presentation's name in the records.
pub const REFERENCE: &str = "reference";

/// One scheduled slot's record (a row of the store's `profile_responses`).
pub use agora_records::families::profile::ResponseRow;

/// Coverage of a measure's slots.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Coverage {
    /// Reference slots with a valid answer.
    pub reference_valid: usize,
    /// Reference slots scheduled.
    pub reference_slots: usize,
    /// Check slots with a valid answer.
    pub check_valid: usize,
    /// Check slots scheduled.
    pub check_slots: usize,
}

impl Coverage {
    fn add(&mut self, row: &ResponseRow) {
        let valid = usize::from(row.score.is_some());
        if row.presentation == REFERENCE {
            self.reference_slots += 1;
            self.reference_valid += valid;
        } else {
            self.check_slots += 1;
            self.check_valid += valid;
        }
    }

    fn merge(self, other: Coverage) -> Coverage {
        Coverage {
            reference_valid: self.reference_valid + other.reference_valid,
            reference_slots: self.reference_slots + other.reference_slots,
            check_valid: self.check_valid + other.check_valid,
            check_slots: self.check_slots + other.check_slots,
        }
    }

    /// Whether the centre and inner range are available.
    pub fn reference_complete(&self) -> bool {
        self.reference_slots > 0 && self.reference_valid == self.reference_slots
    }

    /// Whether the outer range is available too.
    pub fn checks_complete(&self) -> bool {
        self.reference_complete() && self.check_valid == self.check_slots
    }
}

/// One line of a model's profile table.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ProfileLine {
    /// `a1` … `d3`, or `a:<task>` for a Category A task's own range.
    pub measure: String,
    /// M, when available.
    pub centre: Option<f64>,
    /// I, when available.
    pub inner: Option<[f64; 2]>,
    /// O, when available.
    pub outer: Option<[f64; 2]>,
    /// K, the checked results entering O.
    pub checks: usize,
    /// The slots behind the line.
    pub coverage: Coverage,
    /// `available`, `outer unavailable` or `unavailable`, with the reason.
    pub status: String,
}

impl ProfileLine {
    /// The line of `measure` without M, I or O: `status` says why, `coverage` is what its
    /// slots held.
    fn unavailable(measure: &str, coverage: Coverage, status: String) -> ProfileLine {
        ProfileLine {
            measure: measure.to_string(),
            centre: None,
            inner: None,
            outer: None,
            checks: 0,
            coverage,
            status,
        }
    }
}

/// The Category A measures and their tasks (record names), in weight order (§A0 line 169).
pub const A_MEASURES: [(&str, AMeasure, &[&str]); 5] = [
    ("a1", AMeasure::A1, &["dictator", "ultimatum-proposer"]),
    ("a2", AMeasure::A2, &["prisoners-dilemma", "stag-hunt", "public-goods"]),
    ("a3", AMeasure::A3, &["trust-investor"]),
    ("a4", AMeasure::A4, &["trust-trustee"]),
    ("a5", AMeasure::A5, &["ultimatum-responder", "third-party"]),
];

const LEVELS: [&str; 3] = ["low", "middle", "high"];
const CONDITIONS: [Condition; 3] = [Condition::Low, Condition::Middle, Condition::High];

fn condition(level: &str) -> Result<Condition, ProfileError> {
    LEVELS
        .iter()
        .position(|l| *l == level)
        .map(|i| CONDITIONS[i])
        .ok_or_else(|| ProfileError::new("level", format!("`{level}` is not low, middle or high")))
}

/// The rows of one (version, presentation) of one task.
struct Cell<'a> {
    rows: Vec<&'a ResponseRow>,
}

impl Cell<'_> {
    fn select(&self, level: &str, point: &str, branch: &str) -> Vec<&ResponseRow> {
        self.rows.iter().copied().filter(|r| r.level == level && r.point == point && r.branch == branch).collect()
    }

    /// A point's score: the mean over its slots (all valid, by the coverage rule).
    fn mean(&self, level: &str, point: &str, branch: &str) -> Result<f64, ProfileError> {
        let rows = self.select(level, point, branch);
        let scores: Vec<f64> = rows.iter().filter_map(|r| r.score).collect();
        if scores.is_empty() {
            return Err(ProfileError::new(
                format!("{level}/{point}{}", if branch.is_empty() { String::new() } else { format!("/{branch}") }),
                "has no valid response",
            ));
        }
        Ok(scores.iter().sum::<f64>() / scores.len() as f64)
    }

    /// The shares of `keys` among a menu's answers.
    fn shares(&self, level: &str, point: &str, keys: [&str; 2]) -> Result<[f64; 2], ProfileError> {
        let rows = self.select(level, point, "");
        let values: Vec<&str> = rows.iter().filter_map(|r| r.value.as_deref()).collect();
        if values.is_empty() {
            return Err(ProfileError::new(format!("{level}/{point}"), "has no valid response"));
        }
        let n = values.len() as f64;
        Ok(keys.map(|k| values.iter().filter(|v| **v == k).count() as f64 / n))
    }

    /// An A task's condition mean: the mean of its scored points there.
    fn condition_mean(&self, level: &str) -> Result<f64, ProfileError> {
        let mut points: Vec<&str> =
            self.rows.iter().filter(|r| r.level == level && r.scored).map(|r| r.point.as_str()).collect();
        points.sort_unstable();
        points.dedup();
        if points.is_empty() {
            return Err(ProfileError::new(level, "has no scored point"));
        }
        let means = points.iter().map(|p| self.mean(level, p, "")).collect::<Result<Vec<_>, _>>()?;
        Ok(means.iter().sum::<f64>() / means.len() as f64)
    }

    fn delta(&self, level: &str) -> Result<f64, ProfileError> {
        Ok(self.mean(level, "", "after")? - self.mean(level, "", "comparison")?)
    }

    fn triple(&self, level: &str, set: &str) -> Result<[f64; 3], ProfileError> {
        Ok([
            self.mean(level, &format!("{set}-XY"), "")? / 100.0,
            self.mean(level, &format!("{set}-YZ"), "")? / 100.0,
            self.mean(level, &format!("{set}-XZ"), "")? / 100.0,
        ])
    }

    fn menus(&self, level: &str, set: &str) -> Result<Menus, ProfileError> {
        Ok(Menus {
            two: self.shares(level, &format!("{set}-XY"), ["X", "Y"])?,
            dx: self.shares(level, &format!("{set}-XYDX"), ["X", "Y"])?,
            dy: self.shares(level, &format!("{set}-XYDY"), ["X", "Y"])?,
        })
    }

    /// The rows scheduled at `level` (every level when none) in `rounds`, whatever their status.
    fn scheduled(&self, level: Option<&str>, rounds: &[u32]) -> u32 {
        self.rows.iter().filter(|r| level.is_none_or(|l| r.level == l) && rounds.contains(&r.round)).count() as u32
    }

    fn matches(&self, level: Option<&str>, rounds: &[u32]) -> u32 {
        self.rows
            .iter()
            .filter(|r| level.is_none_or(|l| r.level == l) && rounds.contains(&r.round))
            .filter(|r| r.score == Some(100.0))
            .count() as u32
    }

    /// The condition the cell's rows are at (a check is made at one condition).
    fn level(&self) -> Result<&str, ProfileError> {
        let first = self.rows.first().map(|r| r.level.as_str()).ok_or_else(|| ProfileError::new("rows", "is empty"))?;
        if let Some(other) = self.rows.iter().find(|r| r.level != first) {
            return Err(ProfileError::new("level", format!("a check spans {first} and {}", other.level)));
        }
        Ok(first)
    }
}

/// A measure computed from one task's rows (C3 and C4 share `dated`; D1–D3 `lotteries`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// A weighted-sum measure; `Linear::A` is one Category A task's own range.
    Linear(Linear),
    B4,
    D1,
    D3,
    /// A questionnaire measure (E1–E9): item means, their equal-weight mean, anchor checks.
    E,
}

fn linear_points(kind: Linear, cell: &Cell<'_>) -> Result<Vec<f64>, ProfileError> {
    let mut points = Vec::new();
    for level in LEVELS {
        match kind {
            Linear::B1 | Linear::B2 | Linear::B3 => points.push(cell.delta(level)?),
            Linear::C1 => {
                for p in (1..=9).map(|t| t * 10) {
                    points.push(cell.mean(level, &format!("p-{p}"), "")?);
                }
            }
            Linear::C2 => {
                for known in [25, 50, 75] {
                    for colour in ["red", "blue"] {
                        points.push(cell.mean(level, &format!("known-{known}-{colour}"), "")?);
                    }
                }
            }
            Linear::C3 => {
                for grade in [30, 100, 300, 600] {
                    points.push(cell.mean(level, &format!("r{grade}-immediate"), "")?);
                }
            }
            Linear::C4 => {
                for grade in [30, 100, 300, 600] {
                    points.push(
                        cell.mean(level, &format!("r{grade}-delayed"), "")?
                            - cell.mean(level, &format!("r{grade}-immediate"), "")?,
                    );
                }
            }
            Linear::D2 => {
                for pair in ["G1", "G2", "G3"] {
                    points.push(cell.mean(level, pair, "")?);
                }
            }
            Linear::A => points.push(cell.condition_mean(level)?),
        }
    }
    Ok(points)
}

fn linear_check(kind: Linear, cell: &Cell<'_>) -> Result<Vec<f64>, ProfileError> {
    let level = cell.level()?;
    Ok(match kind {
        Linear::A => vec![cell.condition_mean(level)?],
        Linear::B1 | Linear::B2 | Linear::B3 => vec![cell.delta(level)?],
        Linear::C1 => ["p-40", "p-50", "p-60"].iter().map(|p| cell.mean(level, p, "")).collect::<Result<_, _>>()?,
        Linear::C2 => {
            ["known-50-red", "known-50-blue"].iter().map(|p| cell.mean(level, p, "")).collect::<Result<_, _>>()?
        }
        Linear::C3 => {
            ["r100-immediate", "r300-immediate"].iter().map(|p| cell.mean(level, p, "")).collect::<Result<_, _>>()?
        }
        Linear::C4 => [100, 300]
            .iter()
            .map(|g| {
                Ok(cell.mean(level, &format!("r{g}-delayed"), "")?
                    - cell.mean(level, &format!("r{g}-immediate"), "")?)
            })
            .collect::<Result<_, ProfileError>>()?,
        Linear::D2 => vec![cell.mean(level, "G2", "")?],
    })
}

/// The rows of one task, by version, then by presentation.
type ByVersion<'a> = BTreeMap<&'a str, BTreeMap<&'a str, Cell<'a>>>;

fn by_version<'a>(rows: &[&'a ResponseRow]) -> ByVersion<'a> {
    let mut out: ByVersion<'a> = BTreeMap::new();
    for r in rows {
        out.entry(r.version.as_str())
            .or_default()
            .entry(r.presentation.as_str())
            .or_insert_with(|| Cell { rows: Vec::new() })
            .rows
            .push(r);
    }
    out
}

/// The measure's eleven versions from a task's rows.
fn versions(kind: Kind, rows: &[&ResponseRow]) -> Result<Versions, ProfileError> {
    let grouped = by_version(rows);
    if grouped.len() != VERSIONS {
        return Err(ProfileError::new(
            "versions",
            format!("the records hold {} question versions, not {VERSIONS}", grouped.len()),
        ));
    }
    let mut linear = Vec::new();
    let mut b4 = Vec::new();
    let mut d1 = Vec::new();
    let mut d3 = Vec::new();
    for (version, cells) in &grouped {
        let at = |e: ProfileError| ProfileError::new(format!("{version}.{}", e.field), e.reason);
        let reference =
            cells.get(REFERENCE).ok_or_else(|| ProfileError::new(*version, "has no reference responses"))?;
        let checks: Vec<(&str, &Cell<'_>)> =
            cells.iter().filter(|(p, _)| **p != REFERENCE).map(|(p, c)| (*p, c)).collect();
        match kind {
            Kind::Linear(l) => {
                let points = linear_points(l, reference).map_err(at)?;
                let mut out = Vec::new();
                for (_, c) in &checks {
                    out.push(LinearCheck {
                        condition: condition(c.level()?)?,
                        values: linear_check(l, c).map_err(at)?,
                    });
                }
                linear.push(LinearVersion { points, checks: out });
            }
            Kind::B4 => {
                // Scored over the choices the schedule holds (450 under the full protocol, fewer
                // under a reduced one), so the same answers give the same result.
                let matches = reference.matches(None, &[8, 9, 10, 11, 12]);
                let scored = reference.scheduled(None, &[8, 9, 10, 11, 12]);
                let mut out = Vec::new();
                for (_, c) in &checks {
                    let level = c.level()?;
                    out.push(B4Check {
                        condition: condition(level)?,
                        reference_matches: reference.matches(Some(level), &[8, 12]),
                        check_matches: c.matches(Some(level), &[8, 12]),
                        checked: c.scheduled(Some(level), &[8, 12]),
                    });
                }
                b4.push(B4Version { matches, scored, checks: out });
            }
            Kind::D1 => {
                let points = per_set_and_level(|level, set| reference.triple(level, set)).map_err(at)?;
                let mut out = Vec::new();
                for (_, c) in &checks {
                    let level = c.level()?;
                    out.push(D1Check { condition: condition(level)?, values: c.triple(level, "P1").map_err(at)? });
                }
                d1.push(D1Version { points, checks: out });
            }
            Kind::E => {
                return Err(ProfileError::new("kind", "a questionnaire measure is scored by `questionnaire_line`"))
            }
            Kind::D3 => {
                let points = per_set_and_level(|level, set| reference.menus(level, set)).map_err(at)?;
                let mut out = Vec::new();
                for (_, c) in &checks {
                    let level = c.level()?;
                    let m = c.menus(level, "P1").map_err(at)?;
                    out.push(D3Check { condition: condition(level)?, two: m.two, dx: m.dx, dy: m.dy });
                }
                d3.push(D3Version { points, checks: out });
            }
        }
    }
    Ok(match kind {
        Kind::Linear(l) => Versions::Linear(l, linear),
        Kind::B4 => Versions::B4(b4),
        Kind::D1 => Versions::D1(d1),
        Kind::D3 | Kind::E => Versions::D3(d3),
    })
}

/// A D measure's reference points: menu set P1 at each level, then P2 at each level.
fn per_set_and_level<T>(mut point: impl FnMut(&str, &str) -> Result<T, ProfileError>) -> Result<Vec<T>, ProfileError> {
    let mut points = Vec::new();
    for set in ["P1", "P2"] {
        for level in LEVELS {
            points.push(point(level, set)?);
        }
    }
    Ok(points)
}

/// Rows of the measure: a check row enters only the measures whose points it retests (a D check
/// retests P1's menus for D1 and D3 and G2 for D2; C3 reads the immediate payments only).
fn relevant(kind: Kind, row: &ResponseRow) -> bool {
    let check = row.presentation != REFERENCE;
    match kind {
        Kind::Linear(Linear::C3) => row.point.ends_with("-immediate"),
        Kind::Linear(Linear::D2) => row.point.starts_with('G'),
        Kind::D1 => row.point.starts_with("P") && !row.point.contains('D') && (!check || row.point.starts_with("P1")),
        Kind::D3 => {
            (row.point.ends_with("-XY") || row.point.contains("XYD")) && (!check || row.point.starts_with("P1"))
        }
        _ => true,
    }
}

/// The item means of one cell (reference or check) of a questionnaire version: each item's mean
/// over its valid ratings, `None` where too few are valid (§E0: 5 of 15).
fn item_means<'a>(cell: &Cell<'a>) -> BTreeMap<&'a str, (Option<f64>, usize, usize)> {
    let mut by_item: BTreeMap<&'a str, Vec<&'a ResponseRow>> = BTreeMap::new();
    for r in &cell.rows {
        by_item.entry(r.point.as_str()).or_default().push(r);
    }
    by_item
        .into_iter()
        .map(|(item, rows)| {
            let scores: Vec<f64> = rows.iter().filter_map(|r| r.score).collect();
            (item, (questionnaire::item_mean(&scores, rows.len()), scores.len(), rows.len()))
        })
        .collect()
}

/// A questionnaire measure's line (§E0): per version u = the mean of its item means, each
/// check's z replacing its anchor items' means; M and I need every reference item mean, a
/// check item mean that is unavailable withholds O only. A study that asked fewer items than
/// the measure has (a reduced run) says so in the status.
fn questionnaire_line(measure: &str, rows: &[&ResponseRow]) -> ProfileLine {
    let mut coverage = Coverage::default();
    for r in rows {
        coverage.add(r);
    }
    let unavailable = |status: String| ProfileLine::unavailable(measure, coverage, status);
    let grouped = by_version(rows);
    if grouped.len() != VERSIONS {
        return unavailable(format!(
            "unavailable: the records hold {} question versions, not {VERSIONS}",
            grouped.len()
        ));
    }
    let (mut reference, mut checked) = (Vec::new(), Vec::new());
    let mut outer_missing: Vec<String> = Vec::new();
    let mut items = 0;
    for (version, cells) in &grouped {
        let Some(ref_cell) = cells.get(REFERENCE) else {
            return unavailable(format!("unavailable: {version} has no reference responses"));
        };
        let means = item_means(ref_cell);
        let mut values = Vec::new();
        for (item, (mean, valid, slots)) in &means {
            match mean {
                Some(m) => values.push(*m),
                None => {
                    return unavailable(format!(
                        "unavailable: {version}/{item} has {valid} of {slots} ratings valid, fewer than {}",
                        questionnaire::minimum_valid(*slots)
                    ))
                }
            }
        }
        items = values.len();
        let u = match questionnaire::version_result(&values) {
            Ok(u) => u,
            Err(e) => return unavailable(format!("unavailable: {version}: {e}")),
        };
        reference.push(u);
        for (presentation, cell) in cells.iter().filter(|(p, _)| **p != REFERENCE) {
            let mut replaced = Vec::new();
            for (item, (mean, valid, slots)) in item_means(cell) {
                match (mean, means.get(item).and_then(|m| m.0)) {
                    (Some(check), Some(base)) => replaced.push((base, check)),
                    _ => outer_missing.push(format!("{version}/{presentation}/{item} ({valid} of {slots} valid)")),
                }
            }
            if let Ok(z) = questionnaire::checked_result(u, values.len(), &replaced) {
                checked.push(z);
            }
        }
    }
    // M and I from the reference results alone (O computed here only when every check is in).
    let r = match measure_range(&reference, if checked.is_empty() { &reference } else { &checked }) {
        Ok(r) => r,
        Err(e) => return unavailable(format!("unavailable: {e}")),
    };
    let full = crate::tasks::Task::from_name(measure)
        .and_then(crate::tasks::items::e_s2)
        .map_or(items, |(listed, _)| listed.len());
    let reduced = if items < full { format!(" (reduced: {items} of {full} items)") } else { String::new() };
    let (outer, checks, status) = if !outer_missing.is_empty() {
        (
            None,
            0,
            format!("outer unavailable: check cells with too few valid ratings: {}{reduced}", outer_missing.join(", ")),
        )
    } else if checked.is_empty() {
        (None, 0, format!("outer unavailable: no check was scheduled{reduced}"))
    } else {
        (Some(r.outer), checked.len(), format!("available{reduced}"))
    };
    ProfileLine {
        measure: measure.to_string(),
        centre: Some(r.centre),
        inner: Some(r.inner),
        outer,
        checks,
        coverage,
        status,
    }
}

fn line(measure: &str, kind: Kind, rows: &[&ResponseRow]) -> ProfileLine {
    if kind == Kind::E {
        return questionnaire_line(measure, rows);
    }
    // The responder's unscored curve is outside the score and outside coverage.
    let scored: Vec<&ResponseRow> = rows.iter().copied().filter(|r| r.scored && relevant(kind, r)).collect();
    let mut coverage = Coverage::default();
    for r in &scored {
        coverage.add(r);
    }
    let unavailable = |status: String| ProfileLine::unavailable(measure, coverage, status);
    if !coverage.checks_complete() {
        return unavailable(format!(
            "unavailable: {} of {} reference and {} of {} check slots valid (A–D need every scheduled observation)",
            coverage.reference_valid, coverage.reference_slots, coverage.check_valid, coverage.check_slots
        ));
    }
    match versions(kind, &scored).and_then(|v| profile_measure(&v)) {
        Err(e) => unavailable(format!("unavailable: {e}")),
        Ok(p) => ProfileLine {
            measure: measure.to_string(),
            centre: Some(p.range.centre),
            inner: Some(p.range.inner),
            outer: Some(p.range.outer),
            checks: p.range.checks,
            coverage,
            status: "available".into(),
        },
    }
}

/// The measures a task's rows enter, with how each is computed.
fn task_measures(task: &str) -> Vec<(String, Kind)> {
    match task {
        "b1" => vec![("b1".into(), Kind::Linear(Linear::B1))],
        "b2" => vec![("b2".into(), Kind::Linear(Linear::B2))],
        "b3" => vec![("b3".into(), Kind::Linear(Linear::B3))],
        "b4" => vec![("b4".into(), Kind::B4)],
        "risk" => vec![("c1".into(), Kind::Linear(Linear::C1))],
        "urns" => vec![("c2".into(), Kind::Linear(Linear::C2))],
        "dated" => vec![("c3".into(), Kind::Linear(Linear::C3)), ("c4".into(), Kind::Linear(Linear::C4))],
        "lotteries" => vec![("d1".into(), Kind::D1), ("d2".into(), Kind::Linear(Linear::D2)), ("d3".into(), Kind::D3)],
        "e1" | "e2" | "e3" | "e4" | "e5" | "e6" | "e7" | "e8" | "e9" => vec![(task.into(), Kind::E)],
        other => vec![(format!("a:{other}"), Kind::Linear(Linear::A))],
    }
}

/// One model's profile table from its rows: each Category A task's range, the combined A1–A5
/// whose tasks were all collected, and B1–D3.
pub fn profile_table(rows: &[ResponseRow]) -> Vec<ProfileLine> {
    let mut tasks: BTreeMap<&str, Vec<&ResponseRow>> = BTreeMap::new();
    for r in rows {
        tasks.entry(r.task.as_str()).or_default().push(r);
    }
    let mut lines = Vec::new();
    let mut a_tasks: BTreeMap<String, ProfileLine> = BTreeMap::new();
    for (task, rows) in &tasks {
        for (measure, kind) in task_measures(task) {
            let l = line(&measure, kind, rows);
            if kind == Kind::Linear(Linear::A) {
                a_tasks.insert(task.to_string(), l);
            } else {
                lines.push(l);
            }
        }
    }
    let mut combined = Vec::new();
    for (name, measure, names) in A_MEASURES {
        let parts: Vec<&ProfileLine> = names.iter().filter_map(|t| a_tasks.get(*t)).collect();
        if parts.len() != names.len() {
            continue;
        }
        combined.push(combine_line(name, measure, &parts));
    }
    let mut out: Vec<ProfileLine> = combined;
    for (_, _, names) in A_MEASURES {
        for t in names {
            if let Some(l) = a_tasks.remove(*t) {
                out.push(l);
            }
        }
    }
    out.extend(a_tasks.into_values());
    out.extend(lines);
    out
}

fn combine_line(name: &str, measure: AMeasure, parts: &[&ProfileLine]) -> ProfileLine {
    let coverage = parts.iter().fold(Coverage::default(), |c, p| c.merge(p.coverage));
    let base = ProfileLine {
        checks: parts.iter().map(|p| p.checks).sum(),
        ..ProfileLine::unavailable(name, coverage, String::new())
    };
    if let Some(missing) = parts.iter().find(|p| p.centre.is_none()) {
        return ProfileLine { status: format!("unavailable: {} is unavailable", missing.measure), checks: 0, ..base };
    }
    let ranges: Vec<Ranges> =
        parts.iter().filter_map(|p| Some(Ranges { centre: p.centre?, inner: p.inner?, outer: p.outer? })).collect();
    match combine(&measure.weights(), &ranges) {
        Ok(r) => ProfileLine {
            centre: Some(r.centre),
            inner: Some(r.inner),
            outer: Some(r.outer),
            status: "available".into(),
            ..base
        },
        Err(e) => ProfileLine { status: format!("unavailable: {e}"), checks: 0, ..base },
    }
}

#[cfg(test)]
mod tests;
