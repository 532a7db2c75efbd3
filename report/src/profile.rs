//! The behavioural profile in the report (the profile methods, written by `agora profile`): the measures'
//! names and scales, and the join of each profiled model's measures to the same model's own
//! decisions in the store's society runs.
//!
//! The join is descriptive: the profile asks isolated one-shot questions, the society runs play
//! repeated games against other agents, so the two numbers sit side by side on the same 0–100
//! scale and nothing is tested.

use agora_profile::score::rows::ProfileLine;

use super::queries::SocietyOutcome;

/// A profiled model: its name, served id and profile lines.
pub type StoredProfile = (String, String, Vec<ProfileLine>);

/// The profile's measures in table order: id, name, and whether the scale is −100..100 (the
/// others are 0–100).
pub const MEASURES: [(&str, &str, bool); 25] = [
    ("a1", "generosity", false),
    ("a2", "cooperation", false),
    ("a3", "trust", false),
    ("a4", "reciprocation", false),
    ("a5", "fairness enforcement", false),
    ("b1", "conditional cooperation", true),
    ("b2", "retaliation", true),
    ("b3", "forgiveness", true),
    ("b4", "matching a partner's switch", false),
    ("c1", "risk taking", false),
    ("c2", "comfort with unknown odds", false),
    ("c3", "willingness to wait", false),
    ("c4", "the pull of now", true),
    ("d1", "compatibility", false),
    ("d2", "choosing the better offer", false),
    ("d3", "regularity", false),
    ("e1", "sociability (self-described)", false),
    ("e2", "consideration (self-described)", false),
    ("e3", "organization and care (self-described)", false),
    ("e4", "calmness of tone (self-described)", false),
    ("e5", "openness to ideas (self-described)", false),
    ("e6", "reserved (0) or outgoing (100) (self-described)", false),
    ("e7", "details (0) or possibilities (100) (self-described)", false),
    ("e8", "personal values (0) or analysis (100) (self-described)", false),
    ("e9", "planning (0) or flexibility (100) (self-described)", false),
];

/// A measure's name (a Category A task's own line is named by its task).
pub fn measure_name(id: &str) -> String {
    match id.strip_prefix("a:") {
        Some(task) => format!("{task} (task of {})", a_measure_of(task).unwrap_or("-")),
        None => MEASURES.iter().find(|m| m.0 == id).map_or_else(String::new, |m| m.1.to_string()),
    }
}

/// Whether a measure is on the −100..100 scale.
pub fn signed(id: &str) -> bool {
    MEASURES.iter().any(|m| m.0 == id && m.2)
}

/// The position of a measure in table order (unknown ids last).
pub fn order(id: &str) -> usize {
    MEASURES.iter().position(|m| m.0 == id).unwrap_or(MEASURES.len())
}

/// The combined Category A measure a task enters.
pub fn a_measure_of(task: &str) -> Option<&'static str> {
    agora_profile::score::rows::A_MEASURES.iter().find(|(_, _, tasks)| tasks.contains(&task)).map(|(name, _, _)| *name)
}

/// How a society outcome is read off a role's decisions.
#[derive(Clone, Copy)]
enum Read {
    /// The mean of value / scale (the share given, offered, contributed, sent or returned).
    Share,
    /// The mean of the value (1 for the counted choice, 0 otherwise).
    Value,
    /// One minus the mean of the value (the prisoner's dilemma: choice 0 is to cooperate).
    ChoiceZero,
}

/// A society game's outcome and the profile task measuring the same quantity on the same
/// 0–100 scale: (environment, role, outcome in words, profile task, reading).
const CORRESPONDENCES: [(&str, &str, &str, &str, Read); 8] = [
    (
        "prisoners-dilemma",
        "player",
        "prisoner's dilemma: % of decisions cooperating",
        "prisoners-dilemma",
        Read::ChoiceZero,
    ),
    ("stag-hunt", "player", "stag hunt: % of decisions choosing B (the joint-reward action)", "stag-hunt", Read::Value),
    ("public-goods", "contributor", "public goods: contribution, % of the endowment", "public-goods", Read::Share),
    ("bargaining", "dictator", "dictator: giving, % of the pie", "dictator", Read::Share),
    ("bargaining", "proposer", "ultimatum proposer: offer, % of the pie", "ultimatum-proposer", Read::Share),
    ("bargaining", "investor", "trust investor: sent, % of the endowment", "trust-investor", Read::Share),
    ("bargaining", "trustee", "trust trustee: returned, % of what was received", "trust-trustee", Read::Share),
    (
        "bargaining",
        "responder",
        "ultimatum responder: % of offers rejected (the offers it met, not the profile's schedule)",
        "ultimatum-responder",
        Read::Value,
    ),
];

/// One society outcome of a model beside its profile lines.
pub struct JoinedRow<'a> {
    /// The outcome in words.
    pub outcome: &'static str,
    /// The outcome on the 0–100 scale, over the model's own non-fallback decisions.
    pub society: Option<f64>,
    /// Decisions counted, fallbacks left out, runs.
    pub decisions: usize,
    pub fallbacks: usize,
    pub runs: usize,
    /// The profile line of the same task (`a:<task>`), if the task was profiled.
    pub task: String,
    pub task_line: Option<&'a ProfileLine>,
    /// The combined measure the task enters (`a1` …), if it is in the profile.
    pub measure: &'static str,
    pub measure_line: Option<&'a ProfileLine>,
}

/// A profiled model joined to its society decisions.
pub struct Joined<'a> {
    pub model: String,
    pub served_id: String,
    pub rows: Vec<JoinedRow<'a>>,
    /// Why there is no row, when there is none.
    pub note: Option<String>,
}

/// Joins each profiled model to the society outcomes of the same model name and served id.
pub fn join<'a>(profiles: &'a [StoredProfile], outcomes: &[SocietyOutcome]) -> Vec<Joined<'a>> {
    profiles
        .iter()
        .map(|(model, served_id, lines)| {
            let line = |m: &str| lines.iter().find(|l| l.measure == m);
            let mine: Vec<&SocietyOutcome> =
                outcomes.iter().filter(|o| &o.model == model && &o.served_id == served_id).collect();
            let mut rows = Vec::new();
            for (environment, role, outcome, task, read) in CORRESPONDENCES {
                let Some(o) = mine.iter().find(|o| o.environment == environment && o.role == role) else { continue };
                // No decision left after the fallbacks (or a zero scale): no figure.
                let society = Some(match read {
                    Read::Share => 100.0 * o.mean_share,
                    Read::Value => 100.0 * o.mean_value,
                    Read::ChoiceZero => 100.0 * (1.0 - o.mean_value),
                })
                .filter(|v| o.decisions > 0 && v.is_finite());
                let measure = a_measure_of(task).unwrap_or("-");
                rows.push(JoinedRow {
                    outcome,
                    society,
                    decisions: o.decisions,
                    fallbacks: o.fallbacks,
                    runs: o.runs,
                    task: format!("a:{task}"),
                    task_line: line(&format!("a:{task}")),
                    measure,
                    measure_line: line(measure),
                });
            }
            let note = rows.is_empty().then(|| {
                let other_ids: std::collections::BTreeSet<&str> = outcomes
                    .iter()
                    .filter(|o| &o.model == model && &o.served_id != served_id)
                    .map(|o| o.served_id.as_str())
                    .collect();
                if !other_ids.is_empty() {
                    format!(
                        "no society runs of this model as served id {served_id}: the store's society decisions of \
                         {model} were served as {}, a different model configuration, so they are not joined",
                        other_ids.into_iter().collect::<Vec<_>>().join(", ")
                    )
                } else if mine.is_empty() {
                    "no society runs of this model in this store (no decision of its in a baseline cell with C0 payoffs)"
                        .to_string()
                } else {
                    "no society decisions of this model in a game the profile measures (prisoner's dilemma, stag hunt, \
                     public goods, dictator, ultimatum, trust)"
                        .to_string()
                }
            });
            Joined { model: model.clone(), served_id: served_id.clone(), rows, note }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use agora_profile::score::rows::{Coverage, ProfileLine};

    use super::{join, SocietyOutcome};

    fn line(measure: &str, centre: f64) -> ProfileLine {
        ProfileLine {
            measure: measure.into(),
            centre: Some(centre),
            inner: Some([centre - 10.0, centre + 10.0]),
            outer: None,
            checks: 0,
            coverage: Coverage::default(),
            status: "outer unavailable".into(),
        }
    }

    fn outcome(model: &str, served: &str, environment: &str, role: &str, share: f64, value: f64) -> SocietyOutcome {
        SocietyOutcome {
            model: model.into(),
            served_id: served.into(),
            environment: environment.into(),
            role: role.into(),
            decisions: 4,
            fallbacks: 1,
            runs: 2,
            mean_share: share,
            mean_value: value,
        }
    }

    #[test]
    fn joins_on_name_and_served_id_and_says_why_a_model_has_no_row() {
        let profiles = vec![
            ("m".to_string(), "m-1".to_string(), vec![line("a2", 40.0), line("a:prisoners-dilemma", 30.0)]),
            ("other".to_string(), "o-2".to_string(), vec![line("a1", 50.0)]),
            ("none".to_string(), "n-1".to_string(), vec![line("a1", 50.0)]),
        ];
        let outcomes = vec![
            // Choice 0 is to cooperate: a mean value of 0.25 is 75 % cooperation.
            outcome("m", "m-1", "prisoners-dilemma", "player", 0.25, 0.25),
            outcome("m", "m-1", "bargaining", "investor", 0.6, 6.0),
            outcome("m", "m-1", "naming-game", "player", 0.0, 3.0),
            outcome("other", "o-1", "bargaining", "dictator", 0.3, 30.0),
        ];
        let j = join(&profiles, &outcomes);
        assert_eq!(j[0].rows.len(), 2, "the naming game measures nothing the profile does");
        let pd = &j[0].rows[0];
        assert_eq!((pd.society, pd.decisions, pd.fallbacks, pd.runs), (Some(75.0), 4, 1, 2));
        assert_eq!((pd.task.as_str(), pd.measure), ("a:prisoners-dilemma", "a2"));
        assert_eq!(pd.task_line.and_then(|l| l.centre), Some(30.0));
        assert_eq!(pd.measure_line.and_then(|l| l.centre), Some(40.0));
        let trust = &j[0].rows[1];
        assert_eq!((trust.society, trust.measure), (Some(60.0), "a3"));
        assert!(trust.task_line.is_none() && trust.measure_line.is_none(), "the task was not profiled");
        assert!(j[1].rows.is_empty() && j[1].note.as_deref().is_some_and(|n| n.contains("served as o-1")));
        assert!(j[2].rows.is_empty() && j[2].note.as_deref().is_some_and(|n| n.starts_with("no society runs")));
    }
}
