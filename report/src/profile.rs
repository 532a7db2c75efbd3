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

/// The self-described measures shown beside the behavioural ones (E1–E5, the shipped items).
pub const SELF_DESCRIBED: [&str; 5] = ["e1", "e2", "e3", "e4", "e5"];

/// The behavioural measures (categories A–D) the self-description sits beside.
pub const BEHAVIOURAL: [&str; 16] =
    ["a1", "a2", "a3", "a4", "a5", "b1", "b2", "b3", "b4", "c1", "c2", "c3", "c4", "d1", "d2", "d3"];

/// Agora's own declared pairing of a self-described measure with a behavioural one: E2
/// (consideration) beside A1 (generosity). Neither the profile methods nor the IPIP ties a
/// questionnaire measure to a game measure; this pairing is Agora's, declared here before any
/// result, and only its rank correlation across models is shown.
pub const DECLARED_PAIRING: (&str, &str) = ("e2", "a1");

/// The two-sided 95 % normal quantile.
const Z_975: f64 = 1.959_963_984_540_054;

/// One model's self-description beside its behaviour: the lines of [`SELF_DESCRIBED`] and of
/// [`BEHAVIOURAL`], `None` where the profile lacks the measure.
pub struct SelfRow<'a> {
    pub model: String,
    pub served_id: String,
    pub described: Vec<Option<&'a ProfileLine>>,
    pub behaviour: Vec<Option<&'a ProfileLine>>,
}

/// The declared pairing's rank correlation across the models with both centres.
#[derive(Clone, Debug, PartialEq)]
pub struct PairingRho {
    /// Models with both centres available.
    pub n: usize,
    /// Spearman's ρ, when n ≥ 3 and neither side is constant.
    pub rho: Option<f64>,
    /// Its 95 % interval (Fisher's z with Bonett and Wright's variance), when n ≥ 4.
    pub interval: Option<[f64; 2]>,
}

/// Spearman's ρ of the paired centres and its 95 % interval.
///
/// # Formula
/// ρ is Pearson's correlation of the midranks; z = atanh ρ with standard error
/// √((1 + ρ²/2)/(n − 3)) (Bonett and Wright 2000), the interval tanh(z ± 1.96·se).
///
/// # References
/// Bonett, D. G. and Wright, T. A. (2000), Sample size requirements for estimating Pearson,
/// Kendall and Spearman correlations, Psychometrika 65(1), 23–28.
pub fn pairing_rho(pairs: &[(f64, f64)]) -> PairingRho {
    let n = pairs.len();
    let (x, y): (Vec<f64>, Vec<f64>) = pairs.iter().copied().unzip();
    let rho = agora_analysis::stats::spearman(&x, &y).ok().map(|s| s.rho);
    let interval = rho.filter(|_| n >= 4).map(|r| {
        // ρ = ±1 has an infinite z: the interval is taken just inside it.
        let r = r.clamp(-1.0 + 1e-12, 1.0 - 1e-12);
        let se = ((1.0 + r * r / 2.0) / (n as f64 - 3.0)).sqrt();
        let z = r.atanh();
        [(z - Z_975 * se).tanh(), (z + Z_975 * se).tanh()]
    });
    PairingRho { n, rho, interval }
}

/// Every profiled model's self-description beside its behaviour, and the declared pairing.
pub fn self_description(profiles: &[StoredProfile]) -> (Vec<SelfRow<'_>>, PairingRho) {
    let rows: Vec<SelfRow<'_>> = profiles
        .iter()
        .filter(|(_, _, lines)| lines.iter().any(|l| SELF_DESCRIBED.contains(&l.measure.as_str())))
        .map(|(model, served_id, lines)| {
            let line = |m: &str| lines.iter().find(|l| l.measure == m);
            SelfRow {
                model: model.clone(),
                served_id: served_id.clone(),
                described: SELF_DESCRIBED.iter().map(|m| line(m)).collect(),
                behaviour: BEHAVIOURAL.iter().map(|m| line(m)).collect(),
            }
        })
        .collect();
    let (e, b) = DECLARED_PAIRING;
    let pairs: Vec<(f64, f64)> = profiles
        .iter()
        .filter_map(|(_, _, lines)| {
            let centre = |m: &str| lines.iter().find(|l| l.measure == m).and_then(|l| l.centre);
            Some((centre(e)?, centre(b)?))
        })
        .collect();
    (rows, pairing_rho(&pairs))
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

    #[test]
    fn the_declared_pairing_has_a_rank_correlation_with_an_interval() {
        // Five models: A1 ranks 1–5, E2 ranks 2, 4, 3, 5, 1. Σd² = 22, so
        // ρ = 1 − 6·22/(5·24) = −0.1 (scipy.stats.spearmanr gives −0.1); z = atanh(−0.1) =
        // −0.100335, se = √((1 + 0.01/2)/2) = 0.708872, tanh(z ± 1.959964·se) = [−0.90327, 0.85887].
        let pairs = [(45.0, 10.0), (55.0, 20.0), (50.0, 30.0), (60.0, 40.0), (40.0, 50.0)];
        let r = super::pairing_rho(&pairs);
        assert_eq!(r.n, 5);
        assert!((r.rho.unwrap() + 0.1).abs() < 1e-12, "{r:?}");
        let [lo, hi] = r.interval.unwrap();
        assert!((lo + 0.90327).abs() < 1e-5 && (hi - 0.85887).abs() < 1e-5, "{r:?}");
        // Three models: ρ but no interval; two: neither.
        assert!(super::pairing_rho(&pairs[..3]).interval.is_none());
        assert!(super::pairing_rho(&pairs[..2]).rho.is_none());
    }

    #[test]
    fn the_self_description_sits_beside_behaviour_for_each_model() {
        let profiles: Vec<super::StoredProfile> = (0..5)
            .map(|k| {
                let k = k as f64;
                (format!("m{k}"), format!("m{k}-1"), vec![line("e2", 40.0 + k), line("a1", 50.0 - k), line("c1", k)])
            })
            .collect();
        let (rows, rho) = super::self_description(&profiles);
        assert_eq!(rows.len(), 5);
        assert!(rows[2].described[1].is_some_and(|l| l.centre == Some(42.0)));
        assert!(rows[2].described[0].is_none(), "E1 was not asked");
        assert!(rows[2].behaviour[9].is_some_and(|l| l.measure == "c1"));
        assert_eq!(rho.rho, Some(-1.0));
    }
}
