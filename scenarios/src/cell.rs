//! Cell overlays: one factor of the canonical baseline changed.

use std::path::{Path, PathBuf};

use agora_environments::EnvKind;
use serde::{Deserialize, Serialize};

use crate::error::ScenarioError;
use crate::{ron_options, FORMAT_VERSION};

/// What a factor's change means for interpretation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Level {
    /// The canonical apparatus.
    Baseline,
    /// Re-renders information the agents already have.
    Representation,
    /// Changes what the agents are given.
    Design,
    /// Probes whether the paradigm is recognised.
    Contamination,
}

impl Level {
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Baseline => "baseline",
            Level::Representation => "representation",
            Level::Design => "design",
            Level::Contamination => "contamination",
        }
    }
}

/// One factor of the apparatus. Prompt factors act on LLM-backed agents only; memory and group
/// size change the game itself and act on every agent.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Factor {
    /// Persona rendered as bullets or as a table.
    PersonaFormat(String),
    /// History rendered as narrative prose, or with summary statistics.
    HistoryFormat(String),
    /// The two actions listed in the opposite order.
    ReversedActionOrder,
    /// Agents given names instead of letters.
    NamedAgents,
    /// The answer field renamed.
    AnswerField(String),
    /// Inline layout, or one sentence per line.
    Layout(String),
    /// An administrative task identifier added.
    TaskId(String),
    /// An alternative opening sentence.
    Opening(String),
    /// Self-interested or prosocial persona.
    PersonaContent(String),
    /// Moralised or risk framing of the actions.
    Framing(String),
    /// Reason step by step before answering.
    StepByStep,
    /// Sampling temperature.
    Temperature(f64),
    /// Memory window.
    Memory(u32),
    /// Group size (public goods group, naming population).
    GroupSize(usize),
    /// The paradigm named inside the prompt.
    Priming,
    /// A recognition probe asked outside the behavioural session ("which experiment is this?").
    RecognitionProbe,
}

impl Factor {
    /// The level this factor belongs to.
    pub fn level(&self) -> Level {
        match self {
            Factor::PersonaFormat(_)
            | Factor::HistoryFormat(_)
            | Factor::ReversedActionOrder
            | Factor::NamedAgents
            | Factor::AnswerField(_)
            | Factor::Layout(_)
            | Factor::TaskId(_)
            | Factor::Opening(_) => Level::Representation,
            Factor::PersonaContent(_)
            | Factor::Framing(_)
            | Factor::StepByStep
            | Factor::Temperature(_)
            | Factor::Memory(_)
            | Factor::GroupSize(_) => Level::Design,
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
        }
    }
}

/// A cell overlay file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Cell {
    pub version: u32,
    pub name: String,
    pub level: Level,
    #[serde(default)]
    pub description: String,
    /// Environments the cell runs in.
    pub environments: Vec<EnvKind>,
    pub factors: Vec<Factor>,
    /// Declares a deliberate change of several factors at once.
    #[serde(default)]
    pub compound: bool,
}

impl Cell {
    /// The implicit baseline cell: no factor changed.
    pub fn baseline() -> Cell {
        Cell {
            version: FORMAT_VERSION,
            name: "baseline".into(),
            level: Level::Baseline,
            description: "the canonical apparatus".into(),
            environments: EnvKind::ALL.to_vec(),
            factors: Vec::new(),
            compound: false,
        }
    }

    /// Parses and validates a cell file's text.
    pub fn parse(path: &Path, text: &str) -> Result<Cell, ScenarioError> {
        let cell: Cell = ron_options().from_str(text).map_err(|e| ScenarioError::parse(path, e))?;
        cell.validate(path)?;
        Ok(cell)
    }

    /// Reads a cell file.
    pub fn load(path: &Path) -> Result<Cell, ScenarioError> {
        let text =
            std::fs::read_to_string(path).map_err(|source| ScenarioError::Read { path: path.to_path_buf(), source })?;
        Cell::parse(path, &text)
    }

    /// One factor unless declared compound; every factor of the declared level.
    pub fn validate(&self, path: &Path) -> Result<(), ScenarioError> {
        if self.version != FORMAT_VERSION {
            return Err(ScenarioError::invalid(
                path,
                "version",
                format!("expected {FORMAT_VERSION}, got {}", self.version),
            ));
        }
        if self.name.is_empty() || self.name == "baseline" {
            return Err(ScenarioError::invalid(path, "name", "must be non-empty and not `baseline`"));
        }
        if self.factors.is_empty() {
            return Err(ScenarioError::invalid(path, "factors", "a cell must change one factor"));
        }
        if self.factors.len() > 1 && !self.compound {
            let names: Vec<&str> = self.factors.iter().map(Factor::name).collect();
            return Err(ScenarioError::invalid(
                path,
                "factors",
                format!(
                    "changes {} factors ({}); a cell changes exactly one unless declared `compound: true`",
                    names.len(),
                    names.join(", ")
                ),
            ));
        }
        if self.level == Level::Baseline {
            return Err(ScenarioError::invalid(path, "level", "a cell cannot be the baseline"));
        }
        for (i, f) in self.factors.iter().enumerate() {
            if !self.compound && f.level() != self.level {
                return Err(ScenarioError::invalid(
                    path,
                    format!("factors[{i}]"),
                    format!(
                        "{} is a {}-level factor, but the cell is declared {}",
                        f.name(),
                        f.level().as_str(),
                        self.level.as_str()
                    ),
                ));
            }
            match f {
                Factor::Memory(0) => {
                    return Err(ScenarioError::invalid(path, format!("factors[{i}]"), "memory must be at least 1"))
                }
                Factor::GroupSize(n) if *n < 2 => {
                    return Err(ScenarioError::invalid(path, format!("factors[{i}]"), "group size must be at least 2"))
                }
                Factor::Temperature(t) if !(0.0..=2.0).contains(t) => {
                    return Err(ScenarioError::invalid(
                        path,
                        format!("factors[{i}]"),
                        format!("temperature must lie in [0, 2], got {t}"),
                    ))
                }
                Factor::PersonaFormat(v) if !["bullets", "table"].contains(&v.as_str()) => {
                    return Err(ScenarioError::invalid(
                        path,
                        format!("factors[{i}]"),
                        format!("persona format `{v}`: expected bullets or table"),
                    ))
                }
                Factor::HistoryFormat(v) if !["narrative", "summary"].contains(&v.as_str()) => {
                    return Err(ScenarioError::invalid(
                        path,
                        format!("factors[{i}]"),
                        format!("history format `{v}`: expected narrative or summary"),
                    ))
                }
                Factor::Layout(v) if !["inline", "sentence-per-line"].contains(&v.as_str()) => {
                    return Err(ScenarioError::invalid(
                        path,
                        format!("factors[{i}]"),
                        format!("layout `{v}`: expected inline or sentence-per-line"),
                    ))
                }
                Factor::PersonaContent(v) if !["self-interested", "prosocial"].contains(&v.as_str()) => {
                    return Err(ScenarioError::invalid(
                        path,
                        format!("factors[{i}]"),
                        format!("persona content `{v}`: expected self-interested or prosocial"),
                    ))
                }
                Factor::Framing(v) if !["moral", "risk"].contains(&v.as_str()) => {
                    return Err(ScenarioError::invalid(
                        path,
                        format!("factors[{i}]"),
                        format!("framing `{v}`: expected moral or risk"),
                    ))
                }
                Factor::AnswerField(v) if v.is_empty() || !v.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') => {
                    return Err(ScenarioError::invalid(
                        path,
                        format!("factors[{i}]"),
                        format!("answer field `{v}`: letters, digits and _ only"),
                    ))
                }
                Factor::GroupSize(_) => {
                    if let Some(e) =
                        self.environments.iter().find(|e| !matches!(e, EnvKind::PublicGoods | EnvKind::NamingGame))
                    {
                        return Err(ScenarioError::invalid(
                            path,
                            "environments",
                            format!("{} has no group size to vary", e.as_str()),
                        ));
                    }
                }
                _ => {}
            }
        }
        if self.environments.is_empty() {
            return Err(ScenarioError::invalid(path, "environments", "name at least one environment"));
        }
        Ok(())
    }
}

/// Loads every cell file of a directory, sorted by name.
pub fn load_dir(dir: &Path) -> Result<Vec<(PathBuf, Cell)>, ScenarioError> {
    let entries = std::fs::read_dir(dir).map_err(|source| ScenarioError::Read { path: dir.to_path_buf(), source })?;
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "ron"))
        .collect();
    paths.sort();
    paths.into_iter().map(|p| Cell::load(&p).map(|c| (p, c))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Cell, ScenarioError> {
        Cell::parse(Path::new("cells/test.ron"), text)
    }

    #[test]
    fn one_factor_cell_parses() {
        let c = parse(
            "Cell(version: 1, name: \"memory-3\", level: Design, environments: [NamingGame], factors: [Memory(3)])",
        )
        .expect("valid");
        assert_eq!(c.factors, vec![Factor::Memory(3)]);
    }

    #[test]
    fn two_factors_need_compound() {
        let text = "Cell(version: 1, name: \"x\", level: Design, environments: [NamingGame], factors: [Memory(3), Temperature(0.2)])";
        let msg = parse(text).expect_err("rejected").to_string();
        assert!(msg.contains("cells/test.ron") && msg.contains("compound"), "{msg}");
        let text = "Cell(version: 1, name: \"x\", level: Design, environments: [NamingGame], factors: [Memory(3), Temperature(0.2)], compound: true)";
        assert!(parse(text).is_ok());
    }

    #[test]
    fn level_must_match_factor() {
        let text =
            "Cell(version: 1, name: \"x\", level: Representation, environments: [NamingGame], factors: [Memory(3)])";
        let msg = parse(text).expect_err("rejected").to_string();
        assert!(msg.contains("design-level"), "{msg}");
    }

    #[test]
    fn unknown_field_points_at_line_and_column() {
        let text = "Cell(\n  version: 1,\n  name: \"x\",\n  colour: 3,\n)";
        match parse(text) {
            Err(ScenarioError::Parse { line, column, message, .. }) => {
                assert_eq!(line, 4);
                assert!(column >= 1);
                assert!(message.contains("colour"), "{message}");
            }
            other => panic!("expected a parse error, got {other:?}"),
        }
    }

    #[test]
    fn memory_zero_is_impossible() {
        let text = "Cell(version: 1, name: \"x\", level: Design, environments: [NamingGame], factors: [Memory(0)])";
        assert!(matches!(parse(text), Err(ScenarioError::Invalid { .. })));
    }
}

/// The prompt options a list of factors sets (the canonical baseline for none).
pub fn prompt_options(factors: &[Factor]) -> agora_agents::llm::PromptOptions {
    use agora_agents::llm::{Framing, HistoryFormat, Layout, PersonaContent, PersonaFormat, PromptOptions};
    let mut o = PromptOptions::default();
    for f in factors {
        match f {
            Factor::PersonaFormat(v) => {
                o.persona_format = if v == "table" { PersonaFormat::Table } else { PersonaFormat::Bullets }
            }
            Factor::HistoryFormat(v) => {
                o.history_format = if v == "summary" { HistoryFormat::Summary } else { HistoryFormat::Narrative }
            }
            Factor::ReversedActionOrder => o.reversed_actions = true,
            Factor::NamedAgents => o.named_agents = true,
            Factor::AnswerField(v) => o.answer_field = v.clone(),
            Factor::Layout(v) => o.layout = if v == "inline" { Layout::Inline } else { Layout::SentencePerLine },
            Factor::TaskId(v) => o.task_id = Some(v.clone()),
            Factor::Opening(v) => o.opening = Some(v.clone()),
            Factor::PersonaContent(v) => {
                o.persona_content =
                    if v == "prosocial" { PersonaContent::Prosocial } else { PersonaContent::SelfInterested }
            }
            Factor::Framing(v) => o.framing = if v == "risk" { Framing::Risk } else { Framing::Moral },
            Factor::StepByStep => o.step_by_step = true,
            Factor::Temperature(t) => o.temperature = Some(*t),
            Factor::Priming => o.priming = true,
            Factor::RecognitionProbe => o.recognition_probe = true,
            Factor::Memory(_) | Factor::GroupSize(_) => {}
        }
    }
    o
}
