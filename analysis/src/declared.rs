//! What the games declare about their outcomes, read back from the store.
//!
//! Each game declares, beside its metric definitions, its headline outcomes per arm, its
//! canonical human effect (where the instrument paper names one), how the divergent payoffs
//! (C3) are read, and the action indicator of each role the transcript audit regresses. The
//! engine records the declaration with the runs of the game (the store's `declarations`
//! table); the analysis reads it from there and restates none of it. A store whose runs play
//! an environment it holds no declaration of is refused, never analysed with a guess.

use std::collections::BTreeMap;
use std::path::Path;

use rusqlite::Connection;
use serde::{Deserialize, Serialize};

use crate::error::AnalysisError;

/// How a canonical human effect is read from a cell's runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum EffectRule {
    /// A run-level change (last minus first round, or the modelled change over the rounds):
    /// the cell's statistic is the median of its runs' changes, as in the directional rule,
    /// and the effect keeps its sign where `sign` × median > 0.
    Change,
    /// A 0/1 run-level outcome whose human effect is that it happens in the majority of runs:
    /// the statistic is the share of runs where it happened minus one half.
    Majority,
}

/// The canonical human effect of one environment: what sign stability (S) and the divergent
/// payoffs (C3) are read from at Tier 2, for every claim of the environment. The instrument
/// paper ("Benchmarking large language model agent societies against human behavioural
/// distributions") names three: "the change in contributions between the first and last round,
/// the modelled change in cooperation across the ten rounds, or, for a rate outcome, formation
/// of a convention in the majority of runs".
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CanonicalEffect {
    /// Environment the effect belongs to (filled from the declaration it came with).
    #[serde(default)]
    pub environment: String,
    /// Arm of the environment the effect is read from (the canonical arm).
    pub arm: String,
    /// Run-level metric holding each run's effect.
    pub metric: String,
    /// +1: the human effect is a rise (or formation); −1: a decline.
    pub sign: f64,
    /// How a cell's statistic is read.
    pub rule: EffectRule,
    /// The effect in words, as the verdicts name it.
    pub text: String,
}

/// A headline outcome of an arm.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Headline {
    /// The arm.
    pub arm: String,
    /// The run-level metric.
    pub metric: String,
}

/// How the divergent payoffs (C3) are read in an arm.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Divergent {
    /// The arm.
    pub arm: String,
    /// The run-level metric the share v is read from.
    pub metric: String,
    /// Whether v is one minus the metric.
    pub complement: bool,
    /// What counts as consistent with the altered payoffs, in words.
    pub rule: String,
}

/// How an action indicator is read from an encoded action.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum IndicatorRule {
    /// 1 when the choice has this index, else 0.
    Choice(u32),
    /// (amount − min) / (max − min) of the decision's action space.
    Share,
    /// 1 when the choice is the option better for A (binary-allocation states).
    BetterForA,
}

/// The action indicator of one environment and role.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Indicator {
    /// The environment's name in the store (filled from the declaration it came with).
    #[serde(default)]
    pub environment: String,
    /// The role's name in the store.
    pub role: String,
    /// The indicator's name.
    pub name: String,
    /// What it is, in words.
    pub definition: String,
    /// Whether it is 0 or 1 (then the logit robustness check runs too).
    pub binary: bool,
    /// How it is read from the action.
    pub rule: IndicatorRule,
}

impl Indicator {
    /// The indicator of an encoded action (`c1`, `a17`) of a decision whose action space is
    /// `space_json` (as `agora audit replicates` stores it: `{"Amount": {"min": 0, "max": 20}}`),
    /// with `better_for_a` the option better for A where the game has one; `None` where it is
    /// undefined (an amount space without room, a state without a prosocial option, an action of
    /// the wrong kind).
    pub fn value(&self, action: &str, space_json: &str, better_for_a: Option<u32>) -> Option<f64> {
        let choice = || action.strip_prefix('c').and_then(|c| c.parse::<u32>().ok());
        match self.rule {
            IndicatorRule::Choice(i) => choice().map(|c| f64::from(u8::from(c == i))),
            IndicatorRule::BetterForA => {
                let (c, pro) = (choice()?, better_for_a?);
                Some(f64::from(u8::from(c == pro)))
            }
            IndicatorRule::Share => {
                let a: f64 = action.strip_prefix('a')?.parse::<i64>().ok()? as f64;
                let space: serde_json::Value = serde_json::from_str(space_json).ok()?;
                let amount = &space["Amount"];
                let (min, max) = (amount["min"].as_i64()? as f64, amount["max"].as_i64()? as f64);
                (max > min).then(|| (a - min) / (max - min))
            }
        }
    }
}

/// A role without an action indicator (`*`: every role of the environment), and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NoIndicator {
    /// The role, or `*`.
    pub role: String,
    /// Why no indicator is defined.
    pub why: String,
}

/// One run-level metric as the game defines it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MetricDecl {
    /// Name in the `metrics` table (a family is written with a placeholder: `choice_{request}`).
    pub name: String,
    /// Unit, in words.
    pub unit: String,
    /// Whether it is a primary outcome of the game.
    pub primary: bool,
}

/// What one game declares.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Declaration {
    /// The environment's name in the store.
    pub environment: String,
    /// Its place in the game registry: tables list environments in this order.
    pub order: usize,
    /// The run-level metrics.
    pub metrics: Vec<MetricDecl>,
    /// The headline outcomes, per arm.
    pub headline: Vec<Headline>,
    /// The canonical human effect, if the environment has one.
    pub canonical: Option<CanonicalEffect>,
    /// The C3 reading, per arm.
    pub divergent: Vec<Divergent>,
    /// The action indicators, per role.
    pub indicators: Vec<Indicator>,
    /// Roles without an indicator.
    pub no_indicator: Vec<NoIndicator>,
}

/// The declarations of a store's environments, in registry order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Declared {
    list: Vec<Declaration>,
}

impl Declared {
    /// Declarations from their JSON text (as the store keeps them, or as a build of the
    /// environments serialises them); the error names the declaration that does not read.
    pub fn from_json<S: AsRef<str>>(texts: impl IntoIterator<Item = S>) -> Result<Declared, String> {
        let mut by_env: BTreeMap<(usize, String), Declaration> = BTreeMap::new();
        for text in texts {
            let mut d: Declaration = serde_json::from_str(text.as_ref()).map_err(|e| format!("a declaration: {e}"))?;
            if let Some(c) = d.canonical.as_mut() {
                c.environment.clone_from(&d.environment);
            }
            for i in &mut d.indicators {
                i.environment.clone_from(&d.environment);
            }
            by_env.insert((d.order, d.environment.clone()), d);
        }
        Ok(Declared { list: by_env.into_values().collect() })
    }

    /// Declarations as a build of the games hands them out (any value that serialises as the
    /// engine records it: the games' `declarations()`), for outcomes not read from a
    /// store (the replay).
    pub fn from_values<T: Serialize>(values: &[T]) -> Result<Declared, String> {
        let texts: Result<Vec<String>, String> =
            values.iter().map(|v| serde_json::to_string(v).map_err(|e| e.to_string())).collect();
        Declared::from_json(texts?)
    }

    /// The declarations a store holds; refused where a stored run's environment has none (a
    /// store written before declarations were recorded is upgraded by opening it for writing,
    /// as `agora run` and `agora merge` do).
    pub fn read(conn: &Connection, path: &Path) -> Result<Declared, AnalysisError> {
        let refuse = |message: String| AnalysisError::Declarations { path: path.to_path_buf(), message };
        let sql = |source| AnalysisError::Store { path: path.to_path_buf(), source };
        let texts = agora_records::reads::declarations::declaration_texts(conn).map_err(sql)?;
        let declared = Declared::from_json(texts).map_err(refuse)?;
        let envs = agora_records::reads::declarations::run_environments(conn).map_err(sql)?;
        if let Some(e) = envs.iter().find(|e| declared.get(e).is_none()) {
            return Err(refuse(format!(
                "runs of `{e}` but no declaration of it: the store predates declarations; \
                 open it for writing once (`agora run` or `agora merge` into it) to upgrade it"
            )));
        }
        Ok(declared)
    }

    /// The declarations of a store file.
    pub fn read_path(path: &Path) -> Result<Declared, AnalysisError> {
        let conn = crate::outcomes::open(path)?;
        Declared::read(&conn, path)
    }

    /// Every declaration, in registry order.
    pub fn all(&self) -> &[Declaration] {
        &self.list
    }

    /// The declaration of an environment.
    pub fn get(&self, environment: &str) -> Option<&Declaration> {
        self.list.iter().find(|d| d.environment == environment)
    }

    /// Every (environment, arm, metric) headline outcome, in registry order.
    pub fn headline(&self) -> Vec<(&str, &str, &str)> {
        self.list
            .iter()
            .flat_map(|d| d.headline.iter().map(move |h| (d.environment.as_str(), h.arm.as_str(), h.metric.as_str())))
            .collect()
    }

    /// The canonical human effects, in registry order.
    pub fn effects(&self) -> Vec<CanonicalEffect> {
        self.list.iter().filter_map(|d| d.canonical.clone()).collect()
    }

    /// The canonical human effect of an environment.
    pub fn effect(&self, environment: &str) -> Option<&CanonicalEffect> {
        self.get(environment).and_then(|d| d.canonical.as_ref())
    }

    /// Every (environment, C3 reading), in registry order.
    pub fn divergent(&self) -> Vec<(&str, &Divergent)> {
        self.list.iter().flat_map(|d| d.divergent.iter().map(move |v| (d.environment.as_str(), v))).collect()
    }

    /// Every action indicator, in registry order.
    pub fn indicators(&self) -> Vec<&Indicator> {
        self.list.iter().flat_map(|d| d.indicators.iter()).collect()
    }

    /// The action indicator of an environment and role, if the game declares one.
    pub fn indicator(&self, environment: &str, role: &str) -> Option<&Indicator> {
        self.get(environment)?.indicators.iter().find(|i| i.role == role)
    }

    /// Every (environment, role, why) without an indicator, in registry order.
    pub fn left_out(&self) -> Vec<(&str, &str, &str)> {
        self.list
            .iter()
            .flat_map(|d| d.no_indicator.iter().map(move |n| (d.environment.as_str(), n.role.as_str(), n.why.as_str())))
            .collect()
    }

    /// Why an environment and role have no indicator.
    pub fn left_out_reason(&self, environment: &str, role: &str) -> String {
        self.get(environment)
            .and_then(|d| d.no_indicator.iter().find(|n| n.role == "*" || n.role == role))
            .map_or_else(|| "no action indicator is declared for it".to_string(), |n| n.why.clone())
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// The declarations of this build's games, as the engine records them: the fixture
    /// `tests/fixtures/declarations.json` (held to the games by the workspace's
    /// `declarations_fixture` test; this crate never imports the games).
    pub(crate) fn shipped() -> &'static Declared {
        static D: std::sync::OnceLock<Declared> = std::sync::OnceLock::new();
        D.get_or_init(|| {
            let values: Vec<serde_json::Value> =
                serde_json::from_str(include_str!("../tests/fixtures/declarations.json")).expect("the fixture");
            Declared::from_values(&values).expect("read")
        })
    }

    #[test]
    fn the_games_declarations_read_back_with_the_three_canonical_effects() {
        let d = shipped();
        let effects: Vec<(String, String, f64)> =
            d.effects().into_iter().map(|e| (e.environment, e.metric, e.sign)).collect();
        assert_eq!(
            effects,
            [
                ("prisoners-dilemma".into(), "cooperation_change".into(), -1.0),
                ("public-goods".into(), "contribution_change".into(), -1.0),
                ("naming-game".into(), "convention".into(), 1.0),
            ]
        );
        assert_eq!(
            d.headline()[..2],
            [("prisoners-dilemma", "baseline", "cooperation"), ("public-goods", "baseline", "contribution_r1")]
        );
        assert_eq!(d.indicator("bargaining", "trustee").map(|i| i.name.as_str()), Some("return_share"));
        assert!(d.left_out_reason("naming-game", "namer").contains("symmetric"));
        assert!(d.effect("bargaining").is_none() && d.effect("money-request").is_none());
    }
}
