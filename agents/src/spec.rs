//! Policies as written in study files, and the registry behind `agora list agents`.

use agora_environments::EnvKind;
use serde::{Deserialize, Serialize};

use crate::classical::{self, *};
use crate::error::AgentError;
use crate::policy::{Policy, PolicyMeta};

/// A policy with its parameters, e.g. `RothErev(phi: 0.1)` or `ConditionalCooperator()`;
/// omitted fields take their documented defaults.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub enum PolicySpec {
    /// Cooperates in every round of the prisoner's dilemma.
    AlwaysCooperate,
    /// Defects in every round of the prisoner's dilemma.
    AlwaysDefect,
    /// Cooperates first, then copies the partner's previous move.
    TitForTat,
    /// Cooperates until the partner's first defection, then always defects.
    GrimTrigger,
    /// Cooperates first, then cooperates exactly when both moved alike last round (Pavlov).
    WinStayLoseShift,
    /// Cooperates unless the partner defected in each of the last two rounds.
    TitForTwoTats,
    /// Defects first, then copies the partner's previous move.
    SuspiciousTitForTat,
    /// Tit-for-tat that cooperates after a defection with probability `generosity`; see
    /// [`GenerousTitForTat`].
    GenerousTitForTat(#[serde(default)] GenerousParams),
    /// Cooperates with probability `cooperate` each round; see [`RandomPlay`].
    Random(#[serde(default)] RandomParams),
    /// Plays the given integers in turn, cycling, each read in the decision's action space; see [`Sequence`].
    Sequence(#[schemars(length(min = 1))] Vec<i64>),
    /// Contributes in proportion to the others' previous contributions; see [`ConditionalCooperator`].
    ConditionalCooperator(#[serde(default)] ConditionalCooperatorParams),
    /// Draws a conditional-contribution type per seat and follows its schedule; see [`CooperationTypes`].
    CooperationTypes(#[serde(default)] CooperationTypesParams),
    /// Reinforcement learner of Erev & Roth; see [`RothErev`].
    RothErev(#[serde(default)] RothErevParams),
    /// Minimal naming-game agent; see [`MinimalNaming`].
    MinimalNaming,
    /// Proposes the name its partners used most often recently; see [`MemoryCoordination`].
    MemoryCoordination(#[serde(default)] MemoryCoordinationParams),
    /// Committed minority member that always proposes the name with this index; see [`Committed`].
    Committed(u32),
    /// A language model declared in the study's `models`.
    Llm {
        /// The model's name in the study's `models`.
        model: String,
    },
    /// A person in a browser (`agora serve`); the classical policy named here plays the seat's
    /// decisions where nobody took the seat or its participant stopped answering, and the record
    /// says so decision by decision.
    Human(Box<PolicySpec>),
    /// A policy written in Python, played through the `agora` Python package; its identity
    /// (module, name and source hash or declared version) is part of the run key, so an edited
    /// policy never shares a name with the old one's runs.
    Python(PythonPolicy),
}

/// The identity of a policy written in Python: what the run key knows of it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PythonPolicy {
    /// The module that defines it (`__module__`).
    pub module: String,
    /// Its qualified name in that module (`__qualname__`).
    pub name: String,
    /// `sha256:` and the hash of its source, or the version it declares (`__version__`).
    pub version: String,
}

impl PolicySpec {
    /// The policy's metadata.
    pub fn meta(&self) -> &'static PolicyMeta {
        match self {
            PolicySpec::AlwaysCooperate => &classical::scripted_meta::ALWAYS_COOPERATE,
            PolicySpec::AlwaysDefect => &classical::scripted_meta::ALWAYS_DEFECT,
            PolicySpec::TitForTat => &classical::scripted_meta::TIT_FOR_TAT,
            PolicySpec::GrimTrigger => &classical::scripted_meta::GRIM_TRIGGER,
            PolicySpec::WinStayLoseShift => &classical::scripted_meta::WIN_STAY_LOSE_SHIFT,
            PolicySpec::TitForTwoTats => &classical::scripted_meta::TIT_FOR_TWO_TATS,
            PolicySpec::SuspiciousTitForTat => &classical::scripted_meta::SUSPICIOUS_TIT_FOR_TAT,
            PolicySpec::GenerousTitForTat(_) => &classical::scripted_meta::GENEROUS_TIT_FOR_TAT,
            PolicySpec::Random(_) => &classical::scripted_meta::RANDOM,
            PolicySpec::Sequence(_) => &classical::scripted_meta::SEQUENCE,
            PolicySpec::ConditionalCooperator(_) => &classical::meta::CONDITIONAL_COOPERATOR,
            PolicySpec::CooperationTypes(_) => &classical::meta::COOPERATION_TYPES,
            PolicySpec::RothErev(_) => &classical::meta::ROTH_EREV,
            PolicySpec::MinimalNaming => &classical::meta::MINIMAL_NAMING,
            PolicySpec::MemoryCoordination(_) => &classical::meta::MEMORY_COORDINATION,
            PolicySpec::Committed(_) => &classical::meta::COMMITTED,
            PolicySpec::Llm { .. } => crate::llm::llm_meta(),
            PolicySpec::Human(_) => &HUMAN,
            PolicySpec::Python(_) => &PYTHON,
        }
    }

    /// The classical policy standing in for a human seat.
    pub fn stand_in(&self) -> Option<&PolicySpec> {
        match self {
            PolicySpec::Human(s) => Some(s),
            _ => None,
        }
    }

    /// Checks parameters and that the policy has a rule for `env`.
    pub fn validate_for(&self, env: EnvKind) -> Result<(), AgentError> {
        let meta = self.meta();
        if !meta.environments.contains(&env) {
            return Err(AgentError::unsupported(meta.name, env, meta.environments));
        }
        match self {
            PolicySpec::Sequence(moves) if moves.is_empty() => Err(AgentError::InvalidParameter {
                policy: meta.name,
                field: "moves",
                reason: "a sequence needs at least one move".into(),
            }),
            PolicySpec::ConditionalCooperator(p) => p.validate(),
            PolicySpec::CooperationTypes(p) => p.validate(),
            PolicySpec::RothErev(p) => p.validate(),
            PolicySpec::GenerousTitForTat(p) => p.validate(),
            PolicySpec::Random(p) => p.validate(),
            PolicySpec::Human(stand_in) => match **stand_in {
                PolicySpec::Human(_) | PolicySpec::Llm { .. } => Err(AgentError::InvalidParameter {
                    policy: HUMAN.name,
                    field: "stand_in",
                    reason: format!("the stand-in must be a classical policy, not {}", stand_in.meta().name),
                }),
                _ => stand_in.validate_for(env),
            },
            PolicySpec::MemoryCoordination(MemoryCoordinationParams { memory: Some(0) }) => {
                Err(AgentError::InvalidParameter {
                    policy: meta.name,
                    field: "memory",
                    reason: "must be at least 1".into(),
                })
            }
            _ => Ok(()),
        }
    }

    /// Whether the policy may answer with a deferred decision (classical policies never do).
    pub fn is_async(&self) -> bool {
        matches!(self, PolicySpec::Llm { .. } | PolicySpec::Human(_))
    }

    /// The model an LLM seat plays.
    pub fn model(&self) -> Option<&str> {
        match self {
            PolicySpec::Llm { model } => Some(model),
            _ => None,
        }
    }

    /// A fresh policy. An LLM seat needs a model context to exist (see
    /// [`crate::llm::LlmPolicy::new`]); built from its specification alone it is unbound and
    /// fails its first decision with a clear error instead of playing.
    pub fn build(&self) -> Box<dyn Policy> {
        match self {
            PolicySpec::AlwaysCooperate => Box::new(AlwaysCooperate),
            PolicySpec::AlwaysDefect => Box::new(AlwaysDefect),
            PolicySpec::TitForTat => Box::<TitForTat>::default(),
            PolicySpec::GrimTrigger => Box::<GrimTrigger>::default(),
            PolicySpec::WinStayLoseShift => Box::<WinStayLoseShift>::default(),
            PolicySpec::TitForTwoTats => Box::<TitForTwoTats>::default(),
            PolicySpec::SuspiciousTitForTat => Box::<SuspiciousTitForTat>::default(),
            PolicySpec::GenerousTitForTat(p) => Box::new(GenerousTitForTat::new(p.clone())),
            PolicySpec::Random(p) => Box::new(RandomPlay::new(p.clone())),
            PolicySpec::Sequence(m) => Box::new(Sequence::new(m.clone())),
            PolicySpec::ConditionalCooperator(p) => Box::new(ConditionalCooperator::new(p.clone())),
            PolicySpec::CooperationTypes(p) => Box::new(CooperationTypes::new(p.clone())),
            PolicySpec::RothErev(p) => Box::new(RothErev::new(p.clone())),
            PolicySpec::MinimalNaming => Box::<MinimalNaming>::default(),
            PolicySpec::MemoryCoordination(p) => Box::new(MemoryCoordination::new(p.clone())),
            PolicySpec::Committed(n) => Box::new(Committed::new(*n)),
            PolicySpec::Llm { model } => Box::new(UnboundLlm(model.clone())),
            PolicySpec::Human(_) => Box::new(UnboundHuman),
            PolicySpec::Python(p) => Box::new(UnboundPython(p.clone())),
        }
    }

    /// One specification of every policy with default parameters.
    pub fn registry() -> Vec<PolicySpec> {
        vec![
            PolicySpec::ConditionalCooperator(ConditionalCooperatorParams::default()),
            PolicySpec::CooperationTypes(CooperationTypesParams::default()),
            PolicySpec::RothErev(RothErevParams::default()),
            PolicySpec::MinimalNaming,
            PolicySpec::MemoryCoordination(MemoryCoordinationParams::default()),
            PolicySpec::Committed(1),
            PolicySpec::AlwaysCooperate,
            PolicySpec::AlwaysDefect,
            PolicySpec::TitForTat,
            PolicySpec::GrimTrigger,
            PolicySpec::WinStayLoseShift,
            PolicySpec::TitForTwoTats,
            PolicySpec::SuspiciousTitForTat,
            PolicySpec::GenerousTitForTat(GenerousParams::default()),
            PolicySpec::Random(RandomParams::default()),
            PolicySpec::Sequence(vec![0, 1]),
        ]
    }
}

/// An LLM seat built without a model context.
struct UnboundLlm(String);

impl Policy for UnboundLlm {
    fn meta(&self) -> &'static PolicyMeta {
        crate::llm::llm_meta()
    }
    fn decide(&mut self, _obs: &agora_environments::Observation, _rng: &mut dyn rand::RngCore) -> crate::Decision {
        let model = self.0.clone();
        crate::Decision::Deferred(Box::pin(async move {
            Err(AgentError::Failed(format!("LLM seat for model `{model}` was built without a model context")))
        }))
    }
}

/// The `endpoint` a person's decision (or its stand-in's) is recorded with in the transcripts:
/// what the transcript audit, which reads models' text, leaves out.
pub const HUMAN_ENDPOINT: &str = "browser";

/// What a human seat is.
pub static HUMAN: PolicyMeta = PolicyMeta {
    name: "human",
    family: "human",
    memory_depth: None,
    stochastic: true,
    environments: agora_environments::EnvKind::ALL,
    description: "a person answering in a browser (`agora serve`), shown the page an LLM seat's prompt is made of",
    reference: "the study's participant pages; docs chapter \"Sessions with people\"",
};

/// A human seat built outside `agora serve`: it fails its first decision instead of playing,
/// so that no stand-in is ever recorded as a person.
struct UnboundHuman;

impl Policy for UnboundHuman {
    fn meta(&self) -> &'static PolicyMeta {
        &HUMAN
    }
    fn decide(&mut self, _obs: &agora_environments::Observation, _rng: &mut dyn rand::RngCore) -> crate::Decision {
        crate::Decision::Deferred(Box::pin(async {
            Err(AgentError::Failed("a human seat is played through `agora serve`, not `agora run`".into()))
        }))
    }
}

/// What a seat played by a Python policy is; the policy's own identity is in its specification.
pub static PYTHON: PolicyMeta = PolicyMeta {
    name: "python",
    family: "classical",
    memory_depth: None,
    stochastic: true,
    environments: agora_environments::EnvKind::ALL,
    description:
        "a Python callable or class with `decide(observation, rng)`, played through the `agora` Python package",
    reference: "the researcher's own code; docs chapter \"From Python\"",
};

/// A Python seat built outside the Python package: it fails its first decision instead of
/// playing, since only the package holds the callable.
struct UnboundPython(PythonPolicy);

impl Policy for UnboundPython {
    fn meta(&self) -> &'static PolicyMeta {
        &PYTHON
    }
    fn decide(&mut self, _obs: &agora_environments::Observation, _rng: &mut dyn rand::RngCore) -> crate::Decision {
        let p = self.0.clone();
        crate::Decision::Deferred(Box::pin(async move {
            Err(AgentError::Failed(format!(
                "Python policy `{}.{}` ({}) is played through the `agora` Python package, not `agora run`",
                p.module, p.name, p.version
            )))
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_names_are_unique_and_every_policy_plays_something() {
        let reg = PolicySpec::registry();
        let mut names: Vec<&str> = reg.iter().map(|p| p.meta().name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), reg.len());
        for p in &reg {
            assert!(!p.meta().environments.is_empty());
            assert!(p.meta().environments.iter().any(|e| p.validate_for(*e).is_ok()));
        }
    }

    #[test]
    fn unsupported_environment_is_named() {
        let err = PolicySpec::ConditionalCooperator(Default::default()).validate_for(EnvKind::NamingGame);
        let msg = err.expect_err("rejected").to_string();
        assert!(
            msg.contains("conditional-cooperator") && msg.contains("naming-game") && msg.contains("public-goods"),
            "{msg}"
        );
    }

    #[test]
    fn bad_parameters_are_named() {
        let p = PolicySpec::RothErev(RothErevParams { phi: 1.5, ..Default::default() });
        let msg = p.validate_for(EnvKind::PrisonersDilemma).expect_err("rejected").to_string();
        assert!(msg.contains("phi"), "{msg}");
    }
}
