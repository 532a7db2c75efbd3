//! Repeated prisoner's dilemma: two agents, simultaneous choices, ten rounds.
//!
//! Canonical payoffs `(R, S, T, P) = (3, 0, 5, 1)`; choice 0 cooperates, choice 1 defects.
//! A run is a run of a symmetric 2×2 game ([`TwoByTwo`]) with the matrix `[[R, S], [T, P]]`.

use serde::{Deserialize, Serialize};

use crate::error::{at_least_one, EnvError};
use crate::game::{
    in_order, CanonicalEffect, Direction, Divergent, EffectRule, Frame, Framed, Game, Headline, Indicator,
    IndicatorRule, MetricDef, Rules, RunView, SummaryColumn, SummaryKind, Wording,
};
use crate::games::two_by_two::{Plays, TwoByTwo};
use crate::kind::{EnvKind, Role, Variant};
use crate::observation::Observation;
use crate::variants::two_labels;
use crate::{num, outcome, Environment};

/// One line for `agora list environments`.
pub const DESCRIPTION: &str = "repeated prisoner's dilemma: 2 agents, 10 rounds, (R,S,T,P) = (3,0,5,1) in C0";

/// Payoffs `(R, S, T, P)` and labels (index 0 cooperates) of one variant.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PdVariant {
    /// The situation as a participant reads it.
    pub cover_story: String,
    /// The two options, cooperative first.
    pub labels: std::sync::Arc<[String]>,
    /// Reward for mutual cooperation.
    pub r: f64,
    /// Sucker's payoff.
    pub s: f64,
    /// Temptation.
    pub t: f64,
    /// Punishment for mutual defection.
    pub p: f64,
}

impl PdVariant {
    /// The payoff matrix, `[own][other]` (0 cooperates): `[[R, S], [T, P]]`.
    pub fn matrix(&self) -> [[f64; 2]; 2] {
        [[self.r, self.s], [self.t, self.p]]
    }
}

crate::shipped_variants!(variants, PdVariant, "prisoners-dilemma.ron", |v: &PdVariant| two_labels(&v.labels));

/// The metrics of a run: cooperation is choice 0.
pub const METRICS: &[MetricDef] = &[
    MetricDef::primary("cooperation", "share of decisions", Direction::Higher),
    MetricDef::secondary("cooperation_r1", "share of decisions"),
    MetricDef::secondary("cooperation_last", "share of decisions"),
    MetricDef::primary("cooperation_change", "modelled change, first to last round", Direction::Lower),
    MetricDef::secondary(
        "defection_endgame_rise",
        "share defecting in the last round minus the share the earlier rounds' linear trend predicts for it",
    ),
];

/// Parameters of the repeated dilemma.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct PdParams {
    /// Rounds played.
    #[schemars(range(min = 1))]
    pub rounds: u32,
    /// Rounds of history shown to an agent.
    #[schemars(range(min = 1))]
    pub memory: u32,
}

impl Default for PdParams {
    fn default() -> Self {
        PdParams { rounds: 10, memory: 5 }
    }
}

impl Game for PdParams {
    fn validate(&self) -> Result<(), EnvError> {
        at_least_one("rounds", self.rounds)?;
        at_least_one("memory", self.memory)?;
        Ok(())
    }

    fn build_env(&self, variant: Variant) -> Result<Box<dyn Environment>, EnvError> {
        let table = variants().get(variant);
        let plays = Plays { rounds: self.rounds, memory: self.memory, g: None };
        Ok(Box::new(TwoByTwo::new(EnvKind::PrisonersDilemma, variant, table.matrix(), table.labels.clone(), plays)))
    }

    crate::game::game_fields!(memory);

    fn wording(&self, variant: Variant) -> Wording {
        Wording {
            paradigm: "prisoner's dilemma",
            keywords: &["prisoner"],
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
        let labels = in_order(&d.labels, reversed);
        Ok(Rules {
            template: "prisoners-dilemma.j2",
            values: serde_json::json!({
                "cover_story": d.cover_story, "rounds": self.rounds, "labels": labels,
                "coop": d.labels[0], "defect": d.labels[1],
                "r": num(d.r), "s": num(d.s), "t": num(d.t), "p": num(d.p),
            }),
        })
    }

    /// Both frames relabel the player's two actions in place, by semantic index (index 0
    /// cooperates in every variant): cooperating is acting fairly and the riskier option (it
    /// risks the sucker's payoff), defecting is exploiting and the safer option. The mapping is
    /// the same in C1-C3; the cells run in C0, where it matches the payoffs.
    fn framing(&self, _variant: Variant, frame: Frame) -> Option<Framed> {
        let labels = match frame {
            Frame::Moral => ["act fairly", "exploit"],
            Frame::Risk => ["the riskier option", "the safer option"],
        };
        Some(Framed { role: Role::Player, labels })
    }

    fn metrics(&self) -> &'static [MetricDef] {
        METRICS
    }

    fn summary(&self, _arm: &str) -> &'static [SummaryColumn] {
        const COLUMNS: &[SummaryColumn] = &[
            SummaryColumn::mean("cooperation", "cooperation"),
            SummaryColumn::mean("cooperation_r1", "round 1"),
            SummaryColumn::mean("cooperation_last", "last round"),
            SummaryColumn::median("cooperation_change", "median change"),
        ];
        COLUMNS
    }

    fn headline(&self) -> &'static [Headline] {
        &[Headline { arm: "baseline", metric: "cooperation" }]
    }

    /// "the modelled change in cooperation across the ten rounds" (the instrument paper's
    /// canonical effects), a decline in the human literature.
    fn canonical_effect(&self) -> Option<CanonicalEffect> {
        Some(CanonicalEffect {
            arm: "baseline",
            metric: "cooperation_change",
            sign: -1.0,
            rule: EffectRule::Change,
            text: "cooperation declines across the ten rounds (modelled change)",
        })
    }

    fn divergent(&self) -> &'static [Divergent] {
        &[Divergent {
            arm: "baseline",
            metric: "cooperation",
            complement: false,
            rule: "cooperation is strictly dominant: share of cooperative decisions",
        }]
    }

    fn indicators(&self) -> &'static [Indicator] {
        &[Indicator {
            role: "player",
            name: "cooperate",
            definition: "1 when the player cooperates (choice 0), 0 when it defects",
            binary: true,
            rule: IndicatorRule::Choice(0),
        }]
    }

    fn outcomes(&self, run: &RunView<'_>) -> Vec<(String, f64)> {
        let mut out = outcome::choice_zero_share(run.decisions, Role::Player.as_str(), "cooperation");
        // The endgame effect, isolated from the trend: defection in the final round against the
        // defection the earlier rounds' least-squares line predicts for it (their mean where
        // they have no trend to fit, one round or one round number); choice 1 is defection. A
        // steady decline of cooperation, with no endgame, scores zero.
        let rounds = outcome::per_round(run.decisions, Role::Player.as_str());
        if let Some((last, earlier)) = rounds.split_last().filter(|(_, e)| !e.is_empty()) {
            let mean = outcome::mean_over_rounds(earlier, |r| r.value);
            let points: Vec<(f64, f64)> = earlier.iter().map(|r| (f64::from(r.round), r.value)).collect();
            let centre = earlier.iter().map(|r| f64::from(r.round)).sum::<f64>() / earlier.len() as f64;
            let predicted = outcome::slope(&points).map_or(mean, |b| mean + b * (f64::from(last.round) - centre));
            out.push(("defection_endgame_rise".into(), last.value - predicted));
        }
        out
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

    fn play(variant: Variant, a: u32, b: u32) -> (f64, f64) {
        let mut env = EnvSpec::PrisonersDilemma(PdParams::default()).build(variant).expect("builds");
        let mut rng = rand::rngs::StdRng::seed_from_u64(1);
        env.pending(&mut rng);
        let s = env.resolve(&[(0, Action::Choice(a)), (1, Action::Choice(b))], &mut rng).expect("legal");
        (s.payoffs[0].1, s.payoffs[1].1)
    }

    #[test]
    fn canonical_payoff_table() {
        assert_eq!(play(Variant::C0, 0, 0), (3.0, 3.0));
        assert_eq!(play(Variant::C0, 0, 1), (0.0, 5.0));
        assert_eq!(play(Variant::C0, 1, 0), (5.0, 0.0));
        assert_eq!(play(Variant::C0, 1, 1), (1.0, 1.0));
    }

    #[test]
    fn variant_payoff_tables() {
        assert_eq!(play(Variant::C1, 0, 1), (0.0, 5.0));
        assert_eq!(play(Variant::C2, 0, 0), (5.0, 5.0));
        assert_eq!(play(Variant::C2, 1, 1), (3.0, 3.0));
        // C3: cooperating beats defecting against either move.
        let t = variants().get(Variant::C3);
        for other in 0..2 {
            assert!(t.matrix()[0][other] > t.matrix()[1][other]);
        }
    }

    #[test]
    fn ends_after_ten_rounds_and_rejects_illegal_actions() {
        let mut env = EnvSpec::PrisonersDilemma(PdParams::default()).build(Variant::C0).expect("builds");
        let mut rng = rand::rngs::StdRng::seed_from_u64(1);
        let mut rounds = 0;
        while !env.is_done() {
            let req = env.pending(&mut rng);
            assert_eq!(req.len(), 2);
            env.resolve(&[(0, Action::Choice(0)), (1, Action::Choice(1))], &mut rng).expect("legal");
            rounds += 1;
        }
        assert_eq!(rounds, 10);
        assert!(env.pending(&mut rng).is_empty());
        let mut env = EnvSpec::PrisonersDilemma(PdParams::default()).build(Variant::C0).expect("builds");
        env.pending(&mut rng);
        let err = env.resolve(&[(0, Action::Choice(2)), (1, Action::Choice(1))], &mut rng);
        assert!(matches!(err, Err(EnvError::IllegalAction { agent: 0, .. })));
    }

    #[test]
    fn zero_rounds_is_rejected() {
        let err = EnvSpec::PrisonersDilemma(PdParams { rounds: 0, memory: 5 }).validate();
        assert!(matches!(err, Err(EnvError::InvalidParameter { field: "rounds", .. })));
    }

    #[test]
    fn shipped_variants_c0_c1_c2_are_dilemmas_and_c3_makes_cooperation_dominant() {
        for v in [Variant::C0, Variant::C1, Variant::C2] {
            let p = variants().get(v);
            assert!(p.t > p.r && p.r > p.p && p.p > p.s, "{v:?} is a prisoner's dilemma");
            assert!(2.0 * p.r > p.t + p.s, "{v:?}: mutual cooperation beats alternation");
        }
        let c0 = variants().get(Variant::C0);
        assert_eq!((c0.r, c0.s, c0.t, c0.p), (3.0, 0.0, 5.0, 1.0));
        assert_eq!(variants().get(Variant::C1).r, c0.r, "C1 keeps the payoffs");
        assert_ne!(variants().get(Variant::C1).labels, c0.labels, "C1 changes the labels");
        let c3 = variants().get(Variant::C3);
        assert!(c3.r > c3.t && c3.s > c3.p, "cooperation strictly dominant under C3");
    }

    fn decisions(choices: &[(u32, u32, f64)]) -> Vec<RecordedDecision<'static>> {
        choices
            .iter()
            .map(|(round, seat, value)| RecordedDecision {
                round: *round,
                seat: *seat,
                role: "player",
                value: *value,
                scale: 1.0,
                context: None,
            })
            .collect()
    }

    #[test]
    fn the_endgame_rise_is_last_round_defection_beyond_the_earlier_rounds_trend() {
        let rise = |d: &[RecordedDecision]| {
            let out = PdParams::default().outcomes(&RunView::c0(d, &[]));
            crate::game::outcome_named(&out, "defection_endgame_rise")
        };
        // Rounds 1-2 flat at half defecting, then everyone defects in round 3: a rise of 0.5.
        let d = decisions(&[(1, 0, 1.0), (1, 1, 0.0), (2, 0, 0.0), (2, 1, 1.0), (3, 0, 1.0), (3, 1, 1.0)]);
        assert_eq!(rise(&d), Some(0.5));
        // A straight decline of cooperation from 0.5 to 0.1 over ten rounds (defection 0.5 to 0.9)
        // has no endgame: zero, where the earlier rounds' mean would give +0.22.
        // Ninety players, 45 defecting in round 1 and four more each round: 0.5 to 0.9.
        let straight: Vec<(u32, u32, f64)> = (1..=10u32)
            .flat_map(|r| {
                let defecting = 45 + (r - 1) * 4;
                (0..90u32).map(move |seat| (r, seat, if seat < defecting { 1.0 } else { 0.0 }))
            })
            .collect();
        let no_endgame = rise(&decisions(&straight)).expect("a rise");
        assert!(no_endgame.abs() < 1e-12, "no endgame: {no_endgame}");
        // One earlier round: against its value.
        let two = decisions(&[(1, 0, 0.0), (1, 1, 0.0), (2, 0, 1.0), (2, 1, 0.0)]);
        assert_eq!(rise(&two), Some(0.5));
        let one_round = decisions(&[(1, 0, 1.0), (1, 1, 0.0)]);
        assert_eq!(rise(&one_round), None, "no earlier round to compare with");
    }
}
