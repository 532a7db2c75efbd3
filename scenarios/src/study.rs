//! The study file format.

use std::path::Path;

use agora_agents::llm::ModelSpec;
use agora_agents::PolicySpec;
use agora_environments::{EnvSpec, Variant};
use serde::{Deserialize, Serialize};

use crate::error::ScenarioError;
pub use crate::roster::{Member, Roster};
use crate::{ron_options, FORMAT_VERSION};

/// A study: a master seed, run counts and blocks.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Study {
    /// File format version; must equal [`FORMAT_VERSION`] (1).
    #[schemars(range(min = FORMAT_VERSION, max = FORMAT_VERSION))]
    pub version: u32,
    /// Name of the study, recorded with every run; not empty, and without `@` (the store's
    /// mark of a study's later versions).
    pub name: String,
    /// What the study is for, in prose.
    #[serde(default)]
    pub description: String,
    /// Seed from which every run's seed is derived.
    pub master_seed: u64,
    /// Seeded runs per baseline cell, unless a block says otherwise. A plan holds at most
    /// 1,000,000 runs.
    #[schemars(range(min = 1))]
    pub runs: u32,
    /// Language models the rosters may name (`Llm(model: "...")`).
    #[serde(default)]
    pub models: Vec<ModelSpec>,
    /// A models file (path relative to the study file) whose models are added to `models`;
    /// `agora run --models FILE` uses FILE instead.
    #[serde(default)]
    pub include_models: Option<String>,
    /// The study's blocks, in order; block names are unique.
    #[schemars(length(min = 1))]
    pub blocks: Vec<Block>,
    /// A published run count this study reproduces, printed beside the plan's own count by
    /// `agora run --dry-run` and `agora check`.
    #[serde(default)]
    pub reference: Option<RunCountReference>,
    /// What people are shown around the game when its human seats are played in a browser
    /// (`agora serve`); required when a roster has a `Human` seat.
    #[serde(default)]
    pub participants: Option<Participants>,
}

/// The pages around a game for its human participants, and the session's time limits.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Participants {
    /// The consent text; a participant plays only after agreeing to it, and the agreement is
    /// recorded.
    pub consent: String,
    /// The instructions, shown after consent and before the comprehension questions.
    pub instructions: String,
    /// Questions a participant must answer correctly before playing.
    #[serde(default)]
    pub comprehension: Vec<Question>,
    /// Wrong answers allowed per question before the participant is released with a
    /// completion code of their own (`NOCONSENT`-style codes are the pool's convention).
    #[serde(default = "default_retries")]
    pub retries: u32,
    /// Seconds a society's first participant waits for the others; seats still empty then
    /// are played by their stand-in, recorded as such.
    #[serde(default = "default_wait")]
    #[schemars(range(min = 1))]
    pub wait_seconds: u64,
    /// Seconds a participant has for one decision; after that the seat's stand-in plays it
    /// (recorded as such), and the participant's later decisions too once they miss two.
    #[serde(default = "default_decision")]
    #[schemars(range(min = 1))]
    pub decision_seconds: u64,
    /// Hours a session code stays valid after it is created.
    #[serde(default = "default_code_hours")]
    #[schemars(range(min = 1))]
    pub code_hours: u64,
}

/// A comprehension question with its options and the index of the right one.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Question {
    /// The question.
    pub text: String,
    /// The options shown (at least two).
    #[schemars(length(min = 2))]
    pub options: Vec<String>,
    /// Index of the right option, counted from 0.
    pub answer: usize,
}

fn default_retries() -> u32 {
    2
}
fn default_wait() -> u64 {
    120
}
fn default_decision() -> u64 {
    120
}
fn default_code_hours() -> u64 {
    72
}

impl Participants {
    fn check(&self, path: &Path) -> Result<(), ScenarioError> {
        let bad = |field: &str, why: &str| Err(ScenarioError::invalid(path, format!("participants.{field}"), why));
        if self.consent.trim().is_empty() {
            return bad("consent", "empty: a participant must be told what they agree to");
        }
        if self.instructions.trim().is_empty() {
            return bad("instructions", "empty");
        }
        for (i, q) in self.comprehension.iter().enumerate() {
            if q.text.trim().is_empty() || q.options.len() < 2 {
                return bad(&format!("comprehension[{i}]"), "a question needs its text and at least two options");
            }
            if q.answer >= q.options.len() {
                return bad(&format!("comprehension[{i}].answer"), "is not the index of one of its options");
            }
        }
        for (field, value) in [
            ("wait_seconds", self.wait_seconds),
            ("decision_seconds", self.decision_seconds),
            ("code_hours", self.code_hours),
        ] {
            if value == 0 {
                return bad(field, "a time limit must be at least 1");
            }
        }
        Ok(())
    }
}

/// A published count of runs, to compare a plan with.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunCountReference {
    /// Model runs in the publication (every model together).
    #[schemars(range(min = 1))]
    pub model_runs: u64,
    /// Models in the publication's roster.
    #[schemars(range(min = 1))]
    pub models: u32,
    /// Runs of classical agents in the publication.
    #[serde(default)]
    pub classical_runs: Option<u64>,
    /// Where the figures come from, and what they include that a plan cannot (partial rosters).
    pub source: String,
}

/// A file of model declarations, for `agora run --models FILE`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename = "Models")]
pub struct ModelsFile {
    /// File format version; must equal [`FORMAT_VERSION`] (1).
    #[schemars(range(min = FORMAT_VERSION, max = FORMAT_VERSION))]
    pub version: u32,
    /// The models declared; a name declared twice, here or in the study, is refused.
    pub models: Vec<ModelSpec>,
}

impl ModelsFile {
    /// Reads a models file and checks its version.
    pub fn load(path: &Path) -> Result<ModelsFile, ScenarioError> {
        let text =
            std::fs::read_to_string(path).map_err(|source| ScenarioError::Read { path: path.to_path_buf(), source })?;
        let f: ModelsFile = ron_options().from_str(&text).map_err(|e| ScenarioError::parse(path, e))?;
        if f.version != FORMAT_VERSION {
            return Err(ScenarioError::invalid(
                path,
                "version",
                format!("expected {FORMAT_VERSION}, got {}", f.version),
            ));
        }
        Ok(f)
    }
}

fn default_variants() -> Vec<Variant> {
    vec![Variant::C0]
}

fn default_cells() -> Vec<String> {
    vec!["baseline".into()]
}

/// One environment with its variants, rosters and cells.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Block {
    /// Name of the block, recorded with every run; unique in the study.
    pub name: String,
    /// The environment and its parameters, e.g. `PrisonersDilemma(rounds: 10)`; omitted
    /// parameters take their defaults.
    pub environment: EnvSpec,
    /// Variants run at baseline (default: C0 only); perturbation cells run in C0 or the first.
    #[serde(default = "default_variants")]
    #[schemars(length(min = 1))]
    pub variants: Vec<Variant>,
    /// The populations that play, each its own condition; may be empty when `model_rosters`
    /// adds them.
    pub rosters: Vec<Roster>,
    /// Cell names: `baseline` or the name of a file (without `.ron`) in the cells directory
    /// (`../cells` beside the study's directory, or `--cells DIR`).
    #[serde(default = "default_cells")]
    pub cells: Vec<String>,
    /// Runs per baseline cell (default: the study's `runs`).
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub runs: Option<u32>,
    /// Runs per perturbation cell (default: the block's `runs`, else the study's).
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub cell_runs: Option<u32>,
    /// A parameter swept across values, each value its own condition.
    #[serde(default)]
    pub sweep: Option<Sweep>,
    /// Adds one roster per declared model, every seat played by that model (the roster is
    /// named after the model).
    #[serde(default)]
    pub model_rosters: bool,
    /// A round-robin tournament of strategies in place of rosters: every pair a two-seat
    /// roster `A vs B`, `repetitions` runs each, at the baseline and at each noise level.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tournament: Option<crate::tournament::Tournament>,
}

/// A swept parameter, or several: each value (each combination of values) is a point, a
/// condition of its block with run keys and seeds of its own, like the baseline it varies.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub enum Sweep {
    /// Committed fraction of the naming game's tipping arm, `from..=to` in steps of `step`.
    CommittedFraction {
        /// The first value.
        #[schemars(range(min = 0.0, max = 1.0))]
        from: f64,
        /// The last value, included; at least `from`.
        #[schemars(range(min = 0.0, max = 1.0))]
        to: f64,
        /// The increment between values.
        #[schemars(extend("exclusiveMinimum" = 0.0))]
        step: f64,
    },
    /// Every combination of the parameters' values, the first parameter varying slowest:
    /// `Grid([Param(path: "rounds", values: [5, 10]), Param(path: "memory", values: [1, 3])])`
    /// is four points.
    Grid(Vec<Param>),
    /// The parameters' values taken together, position by position (every parameter with as
    /// many values): `Zip([Param(path: "rounds", values: [5, 10]), Param(path: "memory",
    /// values: [1, 3])])` is two points, rounds 5 with memory 1 and rounds 10 with memory 3.
    Zip(Vec<Param>),
}

/// One parameter of a `Grid` or `Zip` sweep and the values it takes: `values`, or `range`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Param {
    /// A field of the block's environment parameters, nested fields joined with dots
    /// (`tipping.fraction`); the fields are those `agora list environments --params` shows.
    pub path: String,
    /// The values, as the field takes them: numbers, `true`/`false`, or strings for a field
    /// that takes a name (`"Formed"`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<SweepValue>,
    /// Numbers from `from` to `to` in steps of `step`, in place of `values`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub range: Option<Range>,
}

/// A value a swept field takes (inlined in the schema: a number, a flag or a string).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(untagged)]
#[schemars(inline)]
pub enum SweepValue {
    /// A whole number.
    Integer(i64),
    /// A number with a fraction.
    Number(f64),
    /// A yes-or-no value.
    Flag(bool),
    /// A name, such as an enumerated field's variant.
    Text(String),
}

impl SweepValue {
    /// The value as the environment's parameters serialise it.
    pub fn to_json(&self) -> serde_json::Value {
        match self {
            SweepValue::Integer(i) => serde_json::Value::from(*i),
            SweepValue::Number(x) => serde_json::Value::from(*x),
            SweepValue::Flag(b) => serde_json::Value::from(*b),
            SweepValue::Text(t) => serde_json::Value::from(t.as_str()),
        }
    }
}

impl std::fmt::Display for SweepValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SweepValue::Integer(i) => write!(f, "{i}"),
            SweepValue::Number(x) => write!(f, "{x}"),
            SweepValue::Flag(b) => write!(f, "{b}"),
            SweepValue::Text(t) => write!(f, "{t}"),
        }
    }
}

/// Numbers from `from` to `to` (included) in steps of `step`, rounded to six decimals.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Range {
    /// The first value.
    pub from: f64,
    /// The last value, included when the steps reach it; at least `from`.
    pub to: f64,
    /// The increment between values.
    #[schemars(extend("exclusiveMinimum" = 0.0))]
    pub step: f64,
}

impl Range {
    /// How many values the range holds (checked before they are listed; `None` when the range
    /// is malformed).
    pub fn len(&self) -> Option<f64> {
        let ok = self.step > 0.0 && self.from <= self.to && self.from.is_finite() && self.to.is_finite();
        ok.then(|| ((self.to - self.from) / self.step + 1e-9).floor() + 1.0)
    }

    /// The values, whole numbers as integers (so that an integer field takes them).
    pub fn values(&self) -> Vec<SweepValue> {
        stepped(self.from, self.to, self.step)
            .into_iter()
            .map(|x| {
                if x.fract() == 0.0 && x.abs() < 9.0e15 {
                    SweepValue::Integer(x as i64)
                } else {
                    SweepValue::Number(x)
                }
            })
            .collect()
    }
}

/// `from..=to` in steps of `step`, each rounded to six decimals so that 0.1 + 3 × 0.025 reads
/// 0.175.
fn stepped(from: f64, to: f64, step: f64) -> Vec<f64> {
    let mut v = Vec::new();
    let mut k = 0u32;
    loop {
        let x = ((from + f64::from(k) * step) * 1e6).round() / 1e6;
        if x > to + 1e-9 || k > 1_000_000 {
            break;
        }
        v.push(x);
        k += 1;
    }
    v
}

impl Sweep {
    /// The committed fractions swept, rounded to six decimals (none for a `Grid` or `Zip`).
    pub fn values(&self) -> Vec<f64> {
        match self {
            Sweep::CommittedFraction { from, to, step } => {
                let mut v = stepped(*from, *to, *step);
                // The committed-fraction sweep has always stopped after 100,001 values.
                v.truncate(100_001);
                v
            }
            Sweep::Grid(_) | Sweep::Zip(_) => Vec::new(),
        }
    }

    /// The swept parameter's name, as recorded in each run's `sweep`.
    pub fn name(&self) -> &'static str {
        match self {
            Sweep::CommittedFraction { .. } => "committed_fraction",
            Sweep::Grid(_) => "grid",
            Sweep::Zip(_) => "zip",
        }
    }
}

impl Study {
    /// Parses a study file's text (validation happens when the plan is resolved).
    pub fn parse(path: &Path, text: &str) -> Result<Study, ScenarioError> {
        let study: Study = ron_options().from_str(text).map_err(|e| ScenarioError::parse(path, e))?;
        study.checked(path)
    }

    /// Reads a study from JSON (the study file's fields, as its JSON Schema describes them:
    /// the Python package's dict), with the same checks as [`Study::parse`]; `path` names it in
    /// errors.
    pub fn from_json(path: &Path, json: &str) -> Result<Study, ScenarioError> {
        let study: Study = serde_json::from_str(json).map_err(|e| ScenarioError::Parse {
            path: path.to_path_buf(),
            line: e.line(),
            column: e.column(),
            message: e.to_string(),
        })?;
        study.checked(path)
    }

    /// The checks every study passes once parsed.
    fn checked(self, path: &Path) -> Result<Study, ScenarioError> {
        let study = self;
        if study.version != FORMAT_VERSION {
            return Err(ScenarioError::invalid(
                path,
                "version",
                format!("expected {FORMAT_VERSION}, got {}", study.version),
            ));
        }
        let human = study
            .blocks
            .iter()
            .find(|b| b.rosters.iter().any(|r| r.members.iter().any(|m| matches!(m.policy, PolicySpec::Human(_)))));
        match (&study.participants, human) {
            (None, Some(b)) => {
                return Err(ScenarioError::invalid(
                    path,
                    "participants",
                    format!("block `{}` has human seats: declare the participants' consent and instructions", b.name),
                ))
            }
            (Some(p), _) => p.check(path)?,
            (None, None) => {}
        }
        if let Some(r) = &study.reference {
            if r.models == 0 || r.model_runs == 0 {
                return Err(ScenarioError::invalid(
                    path,
                    "reference",
                    "a published run count needs at least one model and one run",
                ));
            }
        }
        Ok(study)
    }

    /// Reads a study file.
    pub fn load(path: &Path) -> Result<Study, ScenarioError> {
        let text =
            std::fs::read_to_string(path).map_err(|source| ScenarioError::Read { path: path.to_path_buf(), source })?;
        Study::parse(path, &text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PEOPLE: &str = r#"Study(version: 1, name: "p", master_seed: 1, runs: 1,
        blocks: [Block(name: "pd", environment: PrisonersDilemma(rounds: 2),
            rosters: [Roster(name: "people", members: [Member(policy: Human(TitForTat))])])]PARTICIPANTS)"#;

    fn parse(participants: &str) -> Result<Study, ScenarioError> {
        Study::parse(Path::new("p.ron"), &PEOPLE.replace("PARTICIPANTS", participants))
    }

    #[test]
    fn human_seats_need_the_participant_pages_and_sound_questions() {
        let e = parse("").expect_err("no pages").to_string();
        assert!(e.contains("participants") && e.contains("block `pd` has human seats"), "{e}");
        let ok = r#", participants: Participants(consent: "c", instructions: "i",
            comprehension: [Question(text: "q", options: ["a", "b"], answer: 1)])"#;
        let s = parse(ok).expect("parses");
        let p = s.participants.expect("pages");
        assert_eq!((p.retries, p.wait_seconds, p.decision_seconds, p.code_hours), (2, 120, 120, 72));
        let e = parse(&ok.replace("answer: 1", "answer: 2")).expect_err("answer index").to_string();
        assert!(e.contains("participants.comprehension[0].answer"), "{e}");
        let e = parse(&ok.replace("consent: \"c\"", "consent: \" \"")).expect_err("empty consent").to_string();
        assert!(e.contains("participants.consent"), "{e}");
        let e = parse(&ok.replace("options: [\"a\", \"b\"]", "options: [\"a\"]")).expect_err("one option").to_string();
        assert!(e.contains("at least two options"), "{e}");
        // Each time limit of 0 is reported under its own name.
        for field in ["wait_seconds", "decision_seconds", "code_hours"] {
            let e =
                parse(&ok.replace("answer: 1)]", &format!("answer: 1)], {field}: 0"))).expect_err(field).to_string();
            assert!(e.contains(&format!("participants.{field}`")), "{field}: {e}");
        }
    }
}
