//! A run's full specification: what it plays, under which cell, with whom, from which seed.
//!
//! A [`RunSpec`]'s canonical JSON hashes to its run key; a completed key is never run twice.
//! Scenarios resolve study files into run specifications; the engine plays them.

use agora_agents::llm::{Framing, HistoryFormat, Layout, PersonaContent, PersonaFormat, PromptOptions};
use agora_agents::PolicySpec;
use agora_environments::{EnvSpec, Frame, Variant};
use serde::{Deserialize, Serialize};

use crate::seed::hex_digest;

/// What a factor's change means for interpretation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema)]
pub enum Level {
    /// The canonical apparatus.
    Baseline,
    /// Re-renders information the agents already have.
    Representation,
    /// Changes what the agents are given.
    Design,
    /// Probes whether the paradigm is recognised.
    Contamination,
    /// The profile methods' presentation checks (answer-field name, layout, task identifier, opening):
    /// an opt-in family of its own, reported apart and never part of the paper's
    /// representation level (S, Δmax, the perturbation Holm family, Tier 2).
    Presentation,
}

impl Level {
    /// Lower-case name used in the store and in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Baseline => "baseline",
            Level::Representation => "representation",
            Level::Design => "design",
            Level::Contamination => "contamination",
            Level::Presentation => "presentation",
        }
    }
}

/// One factor of the apparatus. Prompt factors act on LLM-backed agents only; memory and group
/// size change the game itself and act on every agent.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub enum Factor {
    /// Persona rendered as bullets or as a table.
    PersonaFormat(PersonaFormat),
    /// History rendered as narrative prose, or with summary statistics.
    HistoryFormat(HistoryFormat),
    /// The two actions listed in the opposite order.
    ReversedActionOrder,
    /// Agents given names instead of letters.
    NamedAgents,
    /// The answer field renamed (letters, digits and `_` only).
    AnswerField(String),
    /// Inline layout, or one sentence per line.
    Layout(Layout),
    /// An administrative task identifier added.
    TaskId(String),
    /// An alternative opening sentence.
    Opening(String),
    /// Self-interested or prosocial persona.
    PersonaContent(PersonaContent),
    /// Moralised or risk framing of the actions.
    Framing(Framing),
    /// Reason step by step before answering.
    StepByStep,
    /// Sampling temperature.
    Temperature(#[schemars(range(min = 0.0, max = 2.0))] f64),
    /// Memory window.
    Memory(#[schemars(range(min = 1))] u32),
    /// Group size (public goods group, naming population).
    GroupSize(#[schemars(range(min = 2))] usize),
    /// The paradigm named inside the prompt.
    Priming,
    /// A recognition probe asked outside the behavioural session ("which experiment is this?").
    RecognitionProbe,
    /// Each action of a two-action game played as the other one with this probability, after
    /// the agent chose it (the noise of Axelrod's tournaments); the agents see the action played.
    Noise(f64),
}

impl Factor {
    /// Whether `env`'s game has this factor to vary: framing where the game frames its
    /// actions, action order where it offers labelled choices, group size where it has a group,
    /// history format and memory where its prompts show history (not in one-shot games); every
    /// other factor applies to every game.
    pub fn applies_to(&self, env: &EnvSpec) -> bool {
        let game = env.game();
        match self {
            Factor::Framing(f) => {
                let frame = if *f == Framing::Risk { Frame::Risk } else { Frame::Moral };
                game.framing(Variant::C0, frame).is_some()
            }
            Factor::ReversedActionOrder => !game.wording(Variant::C0).labels.is_empty(),
            Factor::GroupSize(n) => env.clone().set_group_size(*n),
            // One-shot games show no earlier game, so there is no history to render or window.
            Factor::HistoryFormat(_) | Factor::Memory(_) => game.memory() > 0,
            // An action is flipped to the other one: games of two actions only.
            Factor::Noise(_) => game.wording(Variant::C0).labels.len() == 2,
            _ => true,
        }
    }

    /// Why this factor's value cannot be a cell's change, if it cannot: a value outside what
    /// the factor allows, or the baseline value itself (a cell must change something).
    pub fn check(&self) -> Result<(), String> {
        let baseline = |v: &str| Err(format!("{} `{v}` is the baseline; a cell must change it", self.name()));
        match self {
            Factor::Memory(0) => Err("memory must be at least 1".into()),
            Factor::GroupSize(n) if *n < 2 => Err("group size must be at least 2".into()),
            Factor::Temperature(t) if !(0.0..=2.0).contains(t) => {
                Err(format!("temperature must lie in [0, 2], got {t}"))
            }
            Factor::Noise(p) if !(*p > 0.0 && *p <= 0.5) => Err(format!("noise must lie in (0, 0.5], got {p}")),
            Factor::PersonaFormat(v) if *v == PersonaFormat::default() => baseline(v.as_str()),
            Factor::HistoryFormat(v) if *v == HistoryFormat::default() => baseline(v.as_str()),
            Factor::Layout(v) if *v == Layout::default() => baseline(v.as_str()),
            Factor::PersonaContent(v) if *v == PersonaContent::default() => baseline(v.as_str()),
            Factor::Framing(v) if *v == Framing::default() => baseline(v.as_str()),
            Factor::AnswerField(v) if v.is_empty() || !v.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') => {
                Err(format!("answer field `{v}`: letters, digits and _ only"))
            }
            _ => Ok(()),
        }
    }

    /// The level this factor belongs to.
    pub fn level(&self) -> Level {
        match self {
            Factor::PersonaFormat(_) | Factor::HistoryFormat(_) | Factor::ReversedActionOrder | Factor::NamedAgents => {
                Level::Representation
            }
            Factor::AnswerField(_) | Factor::Layout(_) | Factor::TaskId(_) | Factor::Opening(_) => Level::Presentation,
            Factor::PersonaContent(_)
            | Factor::Framing(_)
            | Factor::StepByStep
            | Factor::Temperature(_)
            | Factor::Memory(_)
            | Factor::GroupSize(_)
            | Factor::Noise(_) => Level::Design,
            Factor::Priming | Factor::RecognitionProbe => Level::Contamination,
        }
    }

    /// Short name of the factor (what it varies), for validation messages.
    pub fn name(&self) -> &'static str {
        match self {
            Factor::PersonaFormat(_) => "persona format",
            Factor::HistoryFormat(_) => "history format",
            Factor::ReversedActionOrder => "action order",
            Factor::NamedAgents => "agent names",
            Factor::AnswerField(_) => "answer field",
            Factor::Layout(_) => "layout",
            Factor::TaskId(_) => "task identifier",
            Factor::Opening(_) => "opening sentence",
            Factor::PersonaContent(_) => "persona content",
            Factor::Framing(_) => "framing",
            Factor::StepByStep => "reasoning instruction",
            Factor::Temperature(_) => "temperature",
            Factor::Memory(_) => "memory window",
            Factor::GroupSize(_) => "group size",
            Factor::Priming => "priming",
            Factor::RecognitionProbe => "recognition probe",
            Factor::Noise(_) => "noise",
        }
    }
}

/// One fully specified run. Its canonical JSON hashes to the run key.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RunSpec {
    /// Name of the study the run belongs to.
    pub study: String,
    /// Name of the study block the run belongs to.
    pub block: String,
    /// The environment and its parameters.
    pub environment: EnvSpec,
    /// The version of the environment.
    pub variant: Variant,
    /// Name of the cell (`baseline` or a perturbation cell).
    pub cell: String,
    /// The cell's level.
    pub level: Level,
    /// The factors the cell changes; empty at baseline.
    pub factors: Vec<Factor>,
    /// Name of the roster filling the seats.
    pub roster: String,
    /// The roster's model family (`classical` for classical agents).
    pub family: String,
    /// One policy per seat, committed seats included.
    pub seats: Vec<PolicySpec>,
    /// Seats held by committed agents.
    pub committed: Vec<usize>,
    /// The committed-fraction sweep's name and value, if the block sweeps it.
    pub sweep: Option<(String, f64)>,
    /// The point of a block's `Grid` or `Zip` sweep (`rounds=5 memory=1`), if it has one; left
    /// out of the canonical serialisation when absent, so that the run keys of studies without
    /// such a sweep are what they were before it existed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub point: Option<String>,
    /// Index of this seeded replicate within its condition, 0-based.
    pub run_index: u32,
    /// The run's seed, derived from the master seed and what identifies the run (block, cell, roster, index…).
    pub seed: u64,
}

impl RunSpec {
    /// The probability that an action is played as the other one ([`Factor::Noise`]; 0 without).
    pub fn noise(&self) -> f64 {
        self.factors.iter().find_map(|f| if let Factor::Noise(p) = f { Some(*p) } else { None }).unwrap_or(0.0)
    }

    /// The runs table's `sweep_name` and `sweep_value`: the committed fraction's name and
    /// value, or a sweep point's label without a value.
    pub fn sweep_columns(&self) -> (Option<&str>, Option<f64>) {
        match (&self.sweep, &self.point) {
            (Some((n, v)), _) => (Some(n.as_str()), Some(*v)),
            (None, Some(p)) => (Some(p.as_str()), None),
            (None, None) => (None, None),
        }
    }

    /// Canonical serialisation.
    pub fn canonical_json(&self) -> String {
        serde_json::to_string(self).expect("invariant: run specifications serialise")
    }

    /// The run key: hex SHA-256 of the canonical serialisation.
    pub fn key(&self) -> String {
        hex_digest(self.canonical_json().as_bytes())
    }

    /// The supplementary arm the run's environment belongs to (`baseline` when none).
    pub fn arm(&self) -> String {
        self.environment.arm()
    }

    /// The prompt options this run's cell sets (what LLM seats are shown), with the reasoning
    /// instruction wherever the game asks for reasoning before every answer.
    pub fn prompt_options(&self) -> PromptOptions {
        let mut o = prompt_options(&self.factors);
        o.step_by_step |= self.environment.game().reasons_first();
        o
    }

    /// Decisions the run will ask for, and whether that count is an upper bound (runs that may
    /// stop early).
    pub fn expected_decisions(&self) -> (u64, bool) {
        if self.is_probe() {
            return (0, false);
        }
        self.environment.expected_decisions()
    }

    /// Whether this run is a recognition probe's session: asked outside the behavioural
    /// session, it plays no game and records no decision (see the engine's `probe` module).
    pub fn is_probe(&self) -> bool {
        self.factors.contains(&Factor::RecognitionProbe)
    }
}

/// The prompt options a list of factors sets (the canonical baseline for none).
pub fn prompt_options(factors: &[Factor]) -> PromptOptions {
    let mut o = PromptOptions::default();
    for f in factors {
        match f {
            Factor::PersonaFormat(v) => o.persona_format = *v,
            Factor::HistoryFormat(v) => o.history_format = *v,
            Factor::ReversedActionOrder => o.reversed_actions = true,
            Factor::NamedAgents => o.named_agents = true,
            Factor::AnswerField(v) => o.answer_field = v.clone(),
            Factor::Layout(v) => o.layout = *v,
            Factor::TaskId(v) => o.task_id = Some(v.clone()),
            Factor::Opening(v) => o.opening = Some(v.clone()),
            Factor::PersonaContent(v) => o.persona_content = *v,
            Factor::Framing(v) => o.framing = *v,
            Factor::StepByStep => o.step_by_step = true,
            Factor::Temperature(t) => o.temperature = Some(*t),
            Factor::Priming => o.priming = true,
            Factor::RecognitionProbe => o.recognition_probe = true,
            Factor::Memory(_) | Factor::GroupSize(_) | Factor::Noise(_) => {}
        }
    }
    o
}
