//! The requirements file: its format, its defaults, reading it and checking it (every error
//! names the file and the line and column, or the field).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::*;

/// The shipped requirements file.
pub const DEFAULT_REQUIREMENTS_RON: &str = include_str!("../../../assets/requirements.ron");

/// Where the shipped requirements file lives in the repository.
pub const DEFAULT_REQUIREMENTS_PATH: &str = "assets/requirements.ron";

/// The format version this build reads.
pub const VERSION: u32 = 1;

fn default_alpha() -> f64 {
    0.05
}

fn default_power() -> f64 {
    0.8
}

fn every_model() -> String {
    "*".into()
}

fn default_estimator() -> String {
    "lpm-fe".into()
}

/// A requirements file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Requirements {
    /// Format version ([`VERSION`]).
    pub version: u32,
    /// Name of the specification.
    pub name: String,
    /// Free text.
    #[serde(default)]
    pub description: Option<String>,
    /// One-sided level α of every test (0.05).
    #[serde(default = "default_alpha")]
    pub alpha: f64,
    /// Power of the sample-size plan (0.8).
    #[serde(default = "default_power")]
    pub power: f64,
    /// Intraclass correlation the plan assumes where the data give none (0).
    #[serde(default)]
    pub assumed_icc: f64,
    /// The requirements.
    pub requirements: Vec<Requirement>,
}

/// One requirement.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Requirement {
    /// Its name, unique in the file.
    pub name: String,
    /// The statistic it is about.
    pub about: About,
    /// The models it applies to: a model's name, or `*` for every audited model.
    #[serde(default = "every_model")]
    pub model: String,
    /// The test.
    pub test: Test,
}

/// The statistic a requirement is about.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub enum About {
    /// The occurrence share of a stated value among coded responses.
    Share {
        /// The environment.
        environment: String,
        /// The value code.
        value: String,
        /// Only this cell (every cell when none).
        #[serde(default)]
        cell: Option<String>,
    },
    /// The dependency coefficient of the action indicator on a stated value.
    Dependency {
        /// The environment.
        environment: String,
        /// The value code.
        value: String,
        /// The role (needed where the environment has indicators for several roles).
        #[serde(default)]
        role: Option<String>,
        /// The block arm (needed where the store has estimates of several arms: the estimates
        /// are kept apart per arm and cell, never pooled).
        #[serde(default)]
        arm: Option<String>,
        /// The cell (needed where the store has estimates of several cells).
        #[serde(default)]
        cell: Option<String>,
        /// `lpm-fe` (default) or `logit-ame`.
        #[serde(default = "default_estimator")]
        estimator: String,
    },
    /// One of the SUVA audit paper's own statistics of the binary-allocation game, estimated
    /// from the model's actions (not from coded reasoning, so the coder gate does not apply).
    Statistic(SeedStatistic),
}

/// The statistics the SUVA audit paper writes requirements on (§240.8, Table 240.9), read from
/// the model's binary-allocation decisions at the canonical condition (C0, cell `baseline`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub enum SeedStatistic {
    /// β_I: the weight on self-interest (Eq. 240.5, the distributional treatment).
    BetaI,
    /// β_C: the weight on competition (Eq. 240.5).
    BetaC,
    /// β_D: the weight on difference aversion (Eq. 240.5).
    BetaD,
    /// β_W: the weight on social welfare (Eq. 240.5).
    BetaW,
    /// γ_I: the change in the self-interest weight for an ingroup match (Eq. 240.7, the group
    /// treatment).
    GammaI,
    /// γ_C: the same for competition (Eq. 240.7).
    GammaC,
    /// γ_D: the same for difference aversion (Eq. 240.7).
    GammaD,
    /// γ_W: the same for social welfare (Eq. 240.7).
    GammaW,
    /// R: the prosocial share after A helped minus after A harmed, direct reciprocity (Eq. 240.8).
    RecipDirect,
    /// R under indirect reciprocity (Eq. 240.8).
    RecipIndirect,
}

impl SeedStatistic {
    /// The paper's name (`beta_W`, `gamma_I`, `recip_direct`).
    pub fn name(self) -> &'static str {
        match self {
            SeedStatistic::BetaI => "beta_I",
            SeedStatistic::BetaC => "beta_C",
            SeedStatistic::BetaD => "beta_D",
            SeedStatistic::BetaW => "beta_W",
            SeedStatistic::GammaI => "gamma_I",
            SeedStatistic::GammaC => "gamma_C",
            SeedStatistic::GammaD => "gamma_D",
            SeedStatistic::GammaW => "gamma_W",
            SeedStatistic::RecipDirect => "recip_direct",
            SeedStatistic::RecipIndirect => "recip_indirect",
        }
    }

    /// The binary-allocation treatment (the runs' arm) it is estimated from.
    pub fn treatment(self) -> &'static str {
        match self {
            SeedStatistic::BetaI | SeedStatistic::BetaC | SeedStatistic::BetaD | SeedStatistic::BetaW => {
                "distributional"
            }
            SeedStatistic::GammaI | SeedStatistic::GammaC | SeedStatistic::GammaD | SeedStatistic::GammaW => "group",
            SeedStatistic::RecipDirect => "direct-reciprocity",
            SeedStatistic::RecipIndirect => "indirect-reciprocity",
        }
    }

    /// The coefficient's name in its regression.
    pub fn coefficient(self) -> &'static str {
        match self {
            SeedStatistic::BetaI => "self_interest",
            SeedStatistic::BetaC => "competition",
            SeedStatistic::BetaD => "difference_aversion",
            SeedStatistic::BetaW => "social_welfare",
            SeedStatistic::GammaI => "ingroup:self_interest",
            SeedStatistic::GammaC => "ingroup:competition",
            SeedStatistic::GammaD => "ingroup:difference_aversion",
            SeedStatistic::GammaW => "ingroup:social_welfare",
            SeedStatistic::RecipDirect | SeedStatistic::RecipIndirect => "helped",
        }
    }
}

/// A requirement's test.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub enum Test {
    /// Directional: the one-sided lower bound must exceed the bound.
    AtLeast(f64),
    /// Directional: the one-sided upper bound must fall below the bound.
    AtMost(f64),
    /// Invariance: the difference against another model or cell lies within ±margin (TOST).
    Invariant {
        /// Δ.
        margin: f64,
        /// What the statistic is compared with.
        against: Against,
    },
}

impl Test {
    /// `at_least`, `at_most` or `equivalent` (the SUVA audit paper's names).
    pub fn kind(&self) -> &'static str {
        match self {
            Test::AtLeast(_) => "at_least",
            Test::AtMost(_) => "at_most",
            Test::Invariant { .. } => "equivalent",
        }
    }

    /// The bound, or the margin Δ.
    pub fn bound(&self) -> f64 {
        match self {
            Test::AtLeast(b) | Test::AtMost(b) => *b,
            Test::Invariant { margin, .. } => *margin,
        }
    }
}

/// The other side of an invariance requirement.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub enum Against {
    /// The same statistic of another model (or model version).
    Model(String),
    /// The same model's share in another cell (share requirements with a cell only).
    Cell(String),
    /// Zero: the statistic itself lies within ±margin (the SUVA audit paper's "equivalent"
    /// requirements on γ_W and γ_I).
    Zero,
}

/// What is wrong with a requirements file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RequirementsError {
    /// The file could not be read.
    #[error("requirements {}: cannot read: {message}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        message: String,
    },
    /// The file is not valid RON for the format.
    #[error("requirements {}:{line}:{column}: {message}", path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// Line of the error.
        line: usize,
        /// Column of the error.
        column: usize,
        /// What is wrong.
        message: String,
    },
    /// A field's value is not allowed.
    #[error("requirements {}: {field}: {message}", path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// The field (`requirements[1].test.margin`).
        field: String,
        /// What is wrong.
        message: String,
    },
}

/// A parsed and validated requirements file with its provenance.
#[derive(Clone, Debug, PartialEq)]
pub struct LoadedRequirements {
    /// The requirements.
    pub requirements: Requirements,
    /// Where they were read from.
    pub path: PathBuf,
    /// SHA-256 of the file's text.
    pub sha256: String,
}

impl LoadedRequirements {
    /// The shipped file.
    pub fn default_requirements() -> LoadedRequirements {
        Requirements::parse(DEFAULT_REQUIREMENTS_RON, Path::new(DEFAULT_REQUIREMENTS_PATH))
            .unwrap_or_else(|e| panic!("the shipped requirements are valid: {e}"))
    }

    /// Reads, parses and validates a file.
    pub fn read(path: &Path) -> Result<LoadedRequirements, RequirementsError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| RequirementsError::Read { path: path.to_path_buf(), message: e.to_string() })?;
        Requirements::parse(&text, path)
    }

    /// Checks every value a requirement names against the codebook's value codes.
    pub fn check_codebook(&self, codebook: &Codebook) -> Result<(), RequirementsError> {
        let values: Vec<&str> = codebook.values().map(|c| c.name.as_str()).collect();
        for (i, r) in self.requirements.requirements.iter().enumerate() {
            let (About::Share { value, .. } | About::Dependency { value, .. }) = &r.about else { continue };
            if !values.contains(&value.as_str()) {
                return Err(RequirementsError::Invalid {
                    path: self.path.clone(),
                    field: format!("requirements[{i}].about.value"),
                    message: format!(
                        "`{value}` is not a value code of codebook {} (values: {})",
                        codebook.name,
                        values.join(", ")
                    ),
                });
            }
        }
        Ok(())
    }
}

impl Requirements {
    /// Parses and validates requirements text; `path` names the source in errors.
    pub fn parse(text: &str, path: &Path) -> Result<LoadedRequirements, RequirementsError> {
        let requirements: Requirements =
            ron::Options::default().from_str(text).map_err(|e| RequirementsError::Parse {
                path: path.to_path_buf(),
                line: e.span.start.line,
                column: e.span.start.col,
                message: e.code.to_string(),
            })?;
        requirements.validate().map_err(|(field, message)| RequirementsError::Invalid {
            path: path.to_path_buf(),
            field,
            message,
        })?;
        Ok(LoadedRequirements { requirements, path: path.to_path_buf(), sha256: hex_digest(text.as_bytes()) })
    }

    fn validate(&self) -> Result<(), (String, String)> {
        let bad = |field: &str, message: String| Err((field.to_string(), message));
        if self.version != VERSION {
            return bad("version", format!("{} is not a version this build reads ({VERSION})", self.version));
        }
        if self.name.trim().is_empty() {
            return bad("name", "is empty".into());
        }
        if !(self.alpha > 0.0 && self.alpha < 0.5) {
            return bad("alpha", format!("{} is not a level in (0, 0.5)", self.alpha));
        }
        if !(self.power > 0.0 && self.power < 1.0) {
            return bad("power", format!("{} is not a power in (0, 1)", self.power));
        }
        if !(0.0..=1.0).contains(&self.assumed_icc) {
            return bad("assumed_icc", format!("{} is not an intraclass correlation in [0, 1]", self.assumed_icc));
        }
        if self.requirements.is_empty() {
            return bad("requirements", "is empty".into());
        }
        let mut names = BTreeSet::new();
        for (i, r) in self.requirements.iter().enumerate() {
            let f = |rest: &str| format!("requirements[{i}].{rest}");
            if r.name.trim().is_empty() {
                return Err((f("name"), "is empty".into()));
            }
            if !names.insert(r.name.as_str()) {
                return Err((f("name"), format!("`{}` names an earlier requirement too", r.name)));
            }
            if r.model.trim().is_empty() {
                return Err((f("model"), "is empty (a model's name, or `*` for every model)".into()));
            }
            let share = matches!(r.about, About::Share { .. });
            match &r.about {
                About::Share { environment, value, cell } => {
                    if environment.is_empty() {
                        return Err((f("about.environment"), "is empty".into()));
                    }
                    if value.is_empty() {
                        return Err((f("about.value"), "is empty".into()));
                    }
                    if cell.as_deref() == Some("") {
                        return Err((f("about.cell"), "is empty".into()));
                    }
                }
                About::Dependency { environment, value, role, arm, cell, estimator } => {
                    if environment.is_empty() {
                        return Err((f("about.environment"), "is empty".into()));
                    }
                    if value.is_empty() {
                        return Err((f("about.value"), "is empty".into()));
                    }
                    for (name, x) in [("about.role", role), ("about.arm", arm), ("about.cell", cell)] {
                        if x.as_deref() == Some("") {
                            return Err((f(name), "is empty".into()));
                        }
                    }
                    if estimator != "lpm-fe" && estimator != "logit-ame" {
                        return Err((f("about.estimator"), format!("`{estimator}` is not `lpm-fe` or `logit-ame`")));
                    }
                }
                About::Statistic(_) => {}
            }
            match &r.test {
                Test::AtLeast(b) | Test::AtMost(b) => {
                    if !b.is_finite() || (share && !(0.0..=1.0).contains(b)) {
                        return Err((
                            f("test"),
                            format!("bound {b} is not {}", if share { "a share in [0, 1]" } else { "finite" }),
                        ));
                    }
                }
                Test::Invariant { margin, against } => {
                    if !(margin.is_finite() && *margin > 0.0) {
                        return Err((f("test.margin"), format!("{margin} is not a positive margin")));
                    }
                    match against {
                        Against::Model(m) => {
                            if m.is_empty() || m == "*" {
                                return Err((f("test.against"), "Model(..) names one model".into()));
                            }
                            if *m == r.model {
                                return Err((f("test.against"), format!("compares model `{m}` with itself")));
                            }
                        }
                        Against::Cell(c) => {
                            let About::Share { cell, .. } = &r.about else {
                                return Err((f("test.against"), "Cell(..) applies to Share requirements only".into()));
                            };
                            let Some(cell) = cell else {
                                return Err((f("about.cell"), "Cell(..) compares two cells: name this one".into()));
                            };
                            if c.is_empty() || c == cell {
                                return Err((f("test.against"), format!("`{c}` is not a cell other than `{cell}`")));
                            }
                        }
                        Against::Zero => {
                            if share {
                                return Err((f("test.against"), "Zero applies to a coefficient, not a share".into()));
                            }
                        }
                    }
                }
            }
        }
        Ok(())
    }
}
