//! Repeated 2×2 coordination game: both players choose L or R at the same time; a match pays
//! each `g`, a mismatch pays nothing (the profile methods' task B4 game, g = 20, 40 or 60; 40 here).
//! Choice index 0 is L, index 1 is R.

use serde::{Deserialize, Serialize};

use super::two_by_two::{matched_rounds, TwoByTwo};
use crate::error::{at_least_one, finite, EnvError};
use crate::game::{in_order, Direction, Game, Headline, MetricDef, NoIndicator, Rules, RunView, SummaryKind, Wording};
use crate::kind::{EnvKind, Variant};
use crate::observation::Observation;
use crate::variants::two_labels;
use crate::{num, Environment};

/// One line for `agora list environments`.
pub const DESCRIPTION: &str =
    "coordination: 2 agents, 12 rounds, L or R, a match pays g = 40 to each in C0, a mismatch 0";

/// Payoffs and labels of one variant.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CgVariant {
    /// The situation as a participant reads it.
    pub cover_story: String,
    /// The two actions, L first.
    pub labels: std::sync::Arc<[String]>,
    /// What each earns when both choose alike (the parameter `g` of the profile methods).
    pub match_payoff: f64,
    /// What each earns when they differ.
    pub mismatch_payoff: f64,
}

crate::shipped_variants!(variants, CgVariant, "coordination.ron", |v: &CgVariant| two_labels(&v.labels));

/// The metrics of a run: how often the two chose alike, overall and in the last five rounds
/// (rounds 8–12 of 12: the profile methods scores adaptation there).
pub const METRICS: &[MetricDef] = &[
    MetricDef::primary("coordination", "share of rounds with equal choices", Direction::Higher),
    MetricDef::secondary("coordination_late", "share of the last five rounds with equal choices"),
];

/// Parameters of the coordination game.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CgParams {
    /// Rounds played.
    pub rounds: u32,
    /// Rounds of history shown to an agent.
    pub memory: u32,
    /// Replaces the variant's match payoff (the profile's conditions g = 20, 40, 60).
    pub g: Option<f64>,
}

impl Default for CgParams {
    fn default() -> Self {
        CgParams { rounds: 12, memory: 5, g: None }
    }
}

impl CgParams {
    /// The payoff matrix of `variant`, `[own][other]`, with `g` applied.
    pub fn matrix(&self, variant: Variant) -> [[f64; 2]; 2] {
        let d = variants().get(variant);
        let hit = self.g.unwrap_or(d.match_payoff);
        [[hit, d.mismatch_payoff], [d.mismatch_payoff, hit]]
    }
}

impl Game for CgParams {
    fn validate(&self) -> Result<(), EnvError> {
        at_least_one("rounds", self.rounds)?;
        at_least_one("memory", self.memory)?;
        finite("g", self.g)?;
        Ok(())
    }

    fn build_env(&self, variant: Variant) -> Result<Box<dyn Environment>, EnvError> {
        let labels = variants().get(variant).labels.clone();
        let m = self.matrix(variant);
        Ok(Box::new(TwoByTwo::new(EnvKind::Coordination, variant, m, labels, self.rounds, self.memory)))
    }

    fn memory(&self) -> u32 {
        self.memory
    }

    fn set_memory(&mut self, memory: u32) {
        self.memory = memory;
    }

    fn wording(&self, variant: Variant) -> Wording {
        Wording {
            paradigm: "coordination game",
            keywords: &["coordination game", "matching game"],
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
            template: "coordination.j2",
            values: serde_json::json!({
                "cover_story": d.cover_story, "rounds": self.rounds, "labels": labels,
                "match_payoff": num(m[0][0]), "mismatch_payoff": num(m[0][1]),
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
        &[Headline { arm: "baseline", metric: "coordination" }]
    }

    fn no_indicator(&self) -> &'static [NoIndicator] {
        &[NoIndicator { role: "*", why: "symmetric options: no option is the prosocial one" }]
    }

    fn outcomes(&self, run: &RunView<'_>) -> Vec<(String, f64)> {
        let matched = matched_rounds(run.decisions);
        if matched.is_empty() {
            return Vec::new();
        }
        let share = |m: &[(u32, bool)]| m.iter().filter(|x| x.1).count() as f64 / m.len() as f64;
        let late = &matched[matched.len().saturating_sub(5)..];
        vec![("coordination".into(), share(&matched)), ("coordination_late".into(), share(late))]
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

    #[test]
    fn a_match_pays_g_and_a_mismatch_nothing() {
        for (g, variant) in [(None, Variant::C0), (Some(20.0), Variant::C0), (Some(60.0), Variant::C1)] {
            let mut env = EnvSpec::Coordination(CgParams { g, ..CgParams::default() }).build(variant).expect("builds");
            let mut rng = rand::rngs::StdRng::seed_from_u64(1);
            let want = g.unwrap_or(40.0);
            for (a, b, pay) in [(0, 0, want), (1, 1, want), (0, 1, 0.0), (1, 0, 0.0)] {
                env.pending(&mut rng);
                let s = env.resolve(&[(0, Action::Choice(a)), (1, Action::Choice(b))], &mut rng).expect("legal");
                assert_eq!((s.payoffs[0].1, s.payoffs[1].1), (pay, pay));
            }
        }
    }

    #[test]
    fn twelve_rounds_and_c3_rewards_differing() {
        let mut env = EnvSpec::Coordination(CgParams::default()).build(Variant::C3).expect("builds");
        let mut rng = rand::rngs::StdRng::seed_from_u64(1);
        let mut rounds = 0;
        while !env.is_done() {
            env.pending(&mut rng);
            let s = env.resolve(&[(0, Action::Choice(0)), (1, Action::Choice(1))], &mut rng).expect("legal");
            assert!(s.payoffs[0].1 > 0.0);
            rounds += 1;
        }
        assert_eq!(rounds, 12);
    }

    #[test]
    fn late_coordination_reads_the_last_five_rounds() {
        let mut decisions = Vec::new();
        for round in 1..=12u32 {
            // The players match in rounds 1-6 and 11-12 only.
            let b = if (7..=10).contains(&round) { 1.0 } else { 0.0 };
            for (seat, value) in [(0, 0.0), (1, b)] {
                decisions.push(RecordedDecision { round, seat, role: "player", value, scale: 1.0, context: None });
            }
        }
        let out = CgParams::default().outcomes(&RunView {
            variant: Variant::C0,
            decisions: &decisions,
            interactions: &[],
            reversed_labels: false,
        });
        assert_eq!(out, vec![("coordination".into(), 8.0 / 12.0), ("coordination_late".into(), 2.0 / 5.0)]);
    }
}
