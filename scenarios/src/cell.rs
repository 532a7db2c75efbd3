//! Cell overlays: one factor of the canonical baseline changed.

use std::path::{Path, PathBuf};

pub use agora_engine::{Factor, Level};
use agora_environments::{EnvKind, EnvSpec};
use serde::{Deserialize, Serialize};

use crate::error::ScenarioError;
use crate::{ron_options, FORMAT_VERSION};

/// A cell overlay file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Cell {
    /// File format version; must equal [`FORMAT_VERSION`] (1).
    #[schemars(range(min = FORMAT_VERSION, max = FORMAT_VERSION))]
    pub version: u32,
    /// The cell's name, recorded with every run: the file's name without `.ron`, and not
    /// `baseline`.
    pub name: String,
    /// What the cell's change means for interpretation; every factor must be of this level
    /// (a `compound` cell may mix levels, but never `Presentation` with another).
    pub level: Level,
    /// What the cell changes, in one sentence.
    #[serde(default)]
    pub description: String,
    /// Games the cell runs in; by default every game that has all its factors to vary (see
    /// [`Factor::applies_to`]), so a new game gets the perturbation library without edits.
    #[serde(default)]
    pub environments: Option<Vec<EnvKind>>,
    /// The factors changed; one unless the cell is `compound`. A factor set to its baseline
    /// value is refused (a cell must change something).
    #[schemars(length(min = 1))]
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
            environments: None,
            factors: Vec::new(),
            compound: false,
        }
    }

    /// The games this cell runs in.
    pub fn games(&self) -> Vec<EnvKind> {
        match &self.environments {
            Some(e) => e.clone(),
            None => EnvKind::ALL
                .iter()
                .copied()
                .filter(|k| self.factors.iter().all(|f| f.applies_to(&EnvSpec::canonical(*k))))
                .collect(),
        }
    }

    /// Whether this cell runs in `env` as a study block configures it: a game it names, or,
    /// without a list, a game that has every factor it changes (so a one-shot block that opts
    /// into history also takes the history cells).
    pub fn runs_in(&self, env: &EnvSpec) -> bool {
        match &self.environments {
            Some(e) => e.contains(&env.kind()),
            None => self.factors.iter().all(|f| f.applies_to(env)),
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
        let cell = Cell::parse(path, &text)?;
        // A study names a cell by its file; the runs are recorded under the cell's `name`. A file
        // whose name differs would record its runs as another cell's, pooled with that cell's.
        if let Some(stem) = path.file_stem().and_then(|s| s.to_str()) {
            if stem != cell.name {
                return Err(ScenarioError::invalid(
                    path,
                    "name",
                    format!("`{}` differs from the file's name `{stem}`; a cell's name must be its file's", cell.name),
                ));
            }
        }
        Ok(cell)
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
            // A compound cell may mix levels of the paper's library, but never the opt-in
            // presentation checks with it: those stay out of S, Δmax and Tier 2.
            let mixes_presentation = (f.level() == Level::Presentation) != (self.level == Level::Presentation);
            if (!self.compound || mixes_presentation) && f.level() != self.level {
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
            f.check().map_err(|m| ScenarioError::invalid(path, format!("factors[{i}]"), m))?;
            if let Some(envs) = &self.environments {
                if let Some(e) = envs.iter().find(|e| !f.applies_to(&EnvSpec::canonical(**e))) {
                    return Err(ScenarioError::invalid(
                        path,
                        "environments",
                        format!("{} has no {} to vary", e.as_str(), f.name()),
                    ));
                }
            }
        }
        if self.environments.as_ref().is_some_and(|e| e.is_empty()) {
            return Err(ScenarioError::invalid(path, "environments", "name at least one environment"));
        }
        if self.games().is_empty() {
            return Err(ScenarioError::invalid(path, "factors", "no game has these factors to vary"));
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

    /// A cell file whose `name` is not its file's is refused: its runs would be recorded as the
    /// other cell's and pooled with them.
    #[test]
    fn a_cell_is_named_by_its_file() {
        let dir = tempfile::tempdir().expect("temporary folder");
        let dir = dir.path();
        let text =
            "Cell(version: 1, name: \"memory-3\", level: Design, environments: [NamingGame], factors: [Memory(3)])";
        std::fs::write(dir.join("memory-3.ron"), text).expect("write");
        std::fs::write(dir.join("memory-three.ron"), text).expect("write");
        assert!(Cell::load(&dir.join("memory-3.ron")).is_ok());
        let msg = Cell::load(&dir.join("memory-three.ron")).expect_err("refused").to_string();
        assert!(msg.contains("memory-three.ron") && msg.contains("differs from the file's name"), "{msg}");
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
        // A compound cell cannot carry a presentation check into the paper's library.
        let text = "Cell(version: 1, name: \"x\", level: Representation, factors: [NamedAgents, TaskId(\"T-1\")], compound: true)";
        let msg = parse(text).expect_err("rejected").to_string();
        assert!(msg.contains("presentation-level"), "{msg}");
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
