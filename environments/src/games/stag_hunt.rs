//! Stag hunt: two players choose A or B at the same time, repeated over rounds.
//!
//! Canonical payoffs (row player's, the profile methods task A2): A against A pays 2, A against B pays 4,
//! B against A pays 0, B against B pays `g` (5, 7 or 9 in the profile's conditions; 7 here).
//! Choosing B is the jointly rewarding coordination action: it pays most when the other also
//! chooses it and nothing when the other does not. Choice index 0 is A, index 1 is B.

use serde::{Deserialize, Serialize};

use super::two_by_two::TwoByTwo;
use crate::error::{at_least_one, finite, EnvError};
use crate::game::{
    in_order, Direction, Game, Headline, Indicator, IndicatorRule, MetricDef, Rules, RunView, SummaryKind, Wording,
};
use crate::kind::{EnvKind, Role, Variant};
use crate::observation::Observation;
use crate::variants::two_labels;
use crate::{num, outcome, Environment};

/// One line for `agora list environments`.
pub const DESCRIPTION: &str = "stag hunt: 2 agents, 10 rounds, A/A 2, A/B 4, B/A 0, B/B g = 7 in C0";

/// Payoffs and labels of one variant (index 0 is A, the safe action; index 1 is B).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShVariant {
    /// The situation as a participant reads it.
    pub cover_story: String,
    /// The two actions, A first.
    pub labels: std::sync::Arc<[String]>,
    /// A against A.
    pub aa: f64,
    /// A against B.
    pub ab: f64,
    /// B against A.
    pub ba: f64,
    /// B against B (the parameter `g` of the profile methods).
    pub bb: f64,
}

crate::shipped_variants!(variants, ShVariant, "stag-hunt.ron", |v: &ShVariant| two_labels(&v.labels));

/// The metrics of a run: how often B, the jointly rewarding action, was chosen.
pub const METRICS: &[MetricDef] = &[
    MetricDef::primary("stag", "share of decisions choosing B", Direction::None),
    MetricDef::secondary("stag_r1", "share of decisions choosing B"),
    MetricDef::secondary("stag_last", "share of decisions choosing B"),
    MetricDef::secondary("coordination", "share of rounds with equal choices"),
];

/// Parameters of the stag hunt.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ShParams {
    /// Rounds played (1 for a one-shot decision).
    pub rounds: u32,
    /// Rounds of history shown to an agent.
    pub memory: u32,
    /// Replaces the variant's B-against-B payoff (the profile's conditions g = 5, 7, 9).
    pub g: Option<f64>,
}

impl Default for ShParams {
    fn default() -> Self {
        ShParams { rounds: 10, memory: 5, g: None }
    }
}

impl ShParams {
    /// The payoff matrix of `variant`, `[own][other]`, with `g` applied.
    pub fn matrix(&self, variant: Variant) -> [[f64; 2]; 2] {
        let d = variants().get(variant);
        [[d.aa, d.ab], [d.ba, self.g.unwrap_or(d.bb)]]
    }
}

impl Game for ShParams {
    fn validate(&self) -> Result<(), EnvError> {
        at_least_one("rounds", self.rounds)?;
        at_least_one("memory", self.memory)?;
        finite("g", self.g)?;
        Ok(())
    }

    fn build_env(&self, variant: Variant) -> Result<Box<dyn Environment>, EnvError> {
        let labels = variants().get(variant).labels.clone();
        Ok(Box::new(TwoByTwo::new(EnvKind::StagHunt, variant, self.matrix(variant), labels, self.rounds, self.memory)))
    }

    fn memory(&self) -> u32 {
        self.memory
    }

    fn set_memory(&mut self, memory: u32) {
        self.memory = memory;
    }

    fn wording(&self, variant: Variant) -> Wording {
        Wording {
            paradigm: "stag hunt",
            keywords: &["stag hunt", "stag-hunt", "assurance game"],
            labels: variants().get(variant).labels.clone(),
            unit: "round",
            history_columns: vec!["you chose", "the other chose"],
            narrative_verb: "you chose",
            fixed_partner: true,
            summary: SummaryKind::Matches,
        }
    }

    fn rules(&self, obs: &Observation, reversed: bool) -> Result<Rules, EnvError> {
        let d = variants().get(obs.variant);
        let m = self.matrix(obs.variant);
        let labels = in_order(&d.labels, reversed);
        Ok(Rules {
            template: "stag-hunt.j2",
            values: serde_json::json!({
                "cover_story": d.cover_story, "rounds": self.rounds, "labels": labels,
                "a": d.labels[0], "b": d.labels[1],
                "aa": num(m[0][0]), "ab": num(m[0][1]), "ba": num(m[1][0]), "bb": num(m[1][1]),
            }),
        })
    }

    fn question(&self, _obs: &Observation) -> String {
        "Which option do you choose?".into()
    }

    fn metrics(&self) -> &'static [MetricDef] {
        METRICS
    }

    fn headline(&self) -> &'static [Headline] {
        &[Headline { arm: "baseline", metric: "stag" }]
    }

    fn indicators(&self) -> &'static [Indicator] {
        &[Indicator {
            role: "player",
            name: "stag",
            definition: "1 when the player chooses B, the stag (choice 1), 0 for A, the safe action",
            binary: true,
            rule: IndicatorRule::Choice(1),
        }]
    }

    fn outcomes(&self, run: &RunView<'_>) -> Vec<(String, f64)> {
        let rounds = outcome::per_round(run.decisions, Role::Player.as_str());
        let (Some(first), Some(last)) = (rounds.first(), rounds.last()) else {
            return Vec::new();
        };
        let matched = super::two_by_two::matched_rounds(run.decisions);
        vec![
            ("stag".into(), outcome::mean_over_rounds(&rounds, |r| r.value)),
            ("stag_r1".into(), first.value),
            ("stag_last".into(), last.value),
            ("coordination".into(), matched.iter().filter(|m| m.1).count() as f64 / matched.len() as f64),
        ]
    }

    fn expected_decisions(&self) -> (u64, bool) {
        (u64::from(self.rounds) * 2, false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::RecordedDecision;
    use crate::{Action, EnvSpec};
    use rand::SeedableRng;

    fn play(p: ShParams, variant: Variant, a: u32, b: u32) -> (f64, f64) {
        let mut env = EnvSpec::StagHunt(p).build(variant).expect("builds");
        let mut rng = rand::rngs::StdRng::seed_from_u64(1);
        env.pending(&mut rng);
        let s = env.resolve(&[(0, Action::Choice(a)), (1, Action::Choice(b))], &mut rng).expect("legal");
        (s.payoffs[0].1, s.payoffs[1].1)
    }

    #[test]
    fn canonical_payoff_table_is_seed_000s() {
        let p = ShParams::default();
        assert_eq!(play(p.clone(), Variant::C0, 0, 0), (2.0, 2.0));
        assert_eq!(play(p.clone(), Variant::C0, 0, 1), (4.0, 0.0));
        assert_eq!(play(p.clone(), Variant::C0, 1, 0), (0.0, 4.0));
        assert_eq!(play(p, Variant::C0, 1, 1), (7.0, 7.0));
        for g in [5.0, 7.0, 9.0] {
            assert_eq!(play(ShParams { g: Some(g), ..ShParams::default() }, Variant::C0, 1, 1), (g, g));
        }
    }

    #[test]
    fn c0_to_c2_are_stag_hunts_and_c3_makes_a_dominant() {
        for v in [Variant::C0, Variant::C1, Variant::C2] {
            let m = ShParams::default().matrix(v);
            // Two pure equilibria: B/B pays most, A is the safe action.
            assert!(m[1][1] > m[0][1] && m[0][1] > m[0][0] && m[0][0] > m[1][0], "{v:?}");
        }
        let m = ShParams::default().matrix(Variant::C3);
        assert!(m[0][0] > m[1][0] && m[0][1] > m[1][1], "A strictly dominant under C3");
    }

    #[test]
    fn outcomes_count_b_choices_and_coordination() {
        let d = |round, seat, value| RecordedDecision { round, seat, role: "player", value, scale: 1.0, context: None };
        let decisions = vec![d(1, 0, 1.0), d(1, 1, 1.0), d(2, 0, 1.0), d(2, 1, 0.0)];
        let out = ShParams::default().outcomes(&RunView {
            variant: Variant::C0,
            decisions: &decisions,
            interactions: &[],
            reversed_labels: false,
        });
        let get = |n: &str| out.iter().find(|(k, _)| k == n).map(|x| x.1);
        assert_eq!(get("stag"), Some(0.75));
        assert_eq!(get("stag_r1"), Some(1.0));
        assert_eq!(get("stag_last"), Some(0.5));
        assert_eq!(get("coordination"), Some(0.5));
    }
}
