//! Public goods game with an optional punishment stage.
//!
//! Four agents receive an endowment of 20 points per round for ten rounds and choose a
//! contribution to a group account that returns MPCR 0.4 per point to every member. In the
//! punishment arm each agent may then spend up to 10 points on each other member; each point
//! costs the punisher 1 and removes 3 from the target (Fehr & Gächter 2000).

use rand::RngCore;
use serde::{Deserialize, Serialize};

use crate::error::{at_least_one, at_least_two, EnvError};
use crate::game::{
    default_question, C3Rule, CanonicalEffect, Direction, Divergent, EffectRule, Game, Headline, Indicator,
    IndicatorRule, MetricDef, NoIndicator, RecordedDecision, Rules, RunView, SummaryColumn, SummaryKind, Wording,
};
use crate::kind::{EnvKind, Role, Variant};
use crate::observation::{Context, Feedback, Observation, PayoffBounds};
use crate::{amount, check_actions, num, outcome, Action, ActionSpace, DecisionRow, Environment, Request, Step};

/// One line for `agora list environments`.
pub const DESCRIPTION: &str =
    "public goods: 4 agents, endowment 20, MPCR 0.4, 10 rounds; punishment arm 1:3 up to 10 per target";

/// Public goods numbers of one variant.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PgVariant {
    /// The situation; `{n}` and `{endowment}` are filled in.
    pub cover_story: String,
    /// Points each member receives per round.
    pub endowment: i64,
    /// Marginal per-capita return of the group account.
    pub mpcr: f64,
    /// Cost to the punisher of one punishment point.
    pub punishment_cost: f64,
    /// Points removed from the target per punishment point.
    pub punishment_impact: f64,
    /// Most points one agent may spend on one target in one round.
    pub punishment_max: i64,
    /// The unit of the endowment as the rules name it, singular and plural (a re-skin names
    /// its own: `credit`/`credits`).
    #[serde(default = "default_unit")]
    pub unit: [String; 2],
    /// The common pool as the rules name it (a re-skin names its own: `garden fund`).
    #[serde(default = "default_account")]
    pub account: String,
}

fn default_unit() -> [String; 2] {
    ["point".into(), "points".into()]
}

fn default_account() -> String {
    "group account".into()
}

crate::shipped_variants!(variants, PgVariant, "public-goods.ron", |_: &PgVariant| Ok(()));

/// The metrics of a run: contributions as a share of the endowment.
pub const METRICS: &[MetricDef] = &[
    MetricDef::secondary("contribution", "share of endowment"),
    MetricDef::primary("contribution_r1", "share of endowment", Direction::Higher),
    MetricDef::secondary("contribution_last", "share of endowment"),
    MetricDef::primary("contribution_r10", "share of endowment", Direction::Higher),
    MetricDef::primary("contribution_change", "share of endowment, round 1 to last", Direction::Lower),
    MetricDef::secondary("punishment_points", "points per punisher and round"),
    MetricDef::secondary("full_contribution", "share of decisions").with_c3(C3Rule::ShareConsistent),
    MetricDef::secondary("cc_slope", "own contribution share on the others' previous-round mean share"),
    MetricDef::secondary("cc_conditional_share", "share of contributors"),
    MetricDef::secondary("cc_free_rider_share", "share of contributors"),
];

/// Parameters of the public goods game.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct PgParams {
    /// Members of the group.
    #[schemars(range(min = 2))]
    pub group_size: usize,
    /// Rounds played.
    #[schemars(range(min = 1))]
    pub rounds: u32,
    /// Whether each round has a punishment stage after contributions.
    pub punishment: bool,
    /// Rounds of history shown to an agent.
    #[schemars(range(min = 1))]
    pub memory: u32,
}

impl Default for PgParams {
    fn default() -> Self {
        PgParams { group_size: 4, rounds: 10, punishment: false, memory: 5 }
    }
}

impl Game for PgParams {
    fn validate(&self) -> Result<(), EnvError> {
        at_least_two("group_size", self.group_size)?;
        at_least_one("rounds", self.rounds)?;
        at_least_one("memory", self.memory)?;
        Ok(())
    }

    fn build_env(&self, variant: Variant) -> Result<Box<dyn Environment>, EnvError> {
        Ok(Box::new(PublicGoods::new(self.clone(), variant, variants().get(variant).clone())))
    }

    crate::game::game_fields!(group: group_size, memory);

    fn arm(&self) -> String {
        if self.punishment { "punishment" } else { "baseline" }.into()
    }

    fn wording(&self, _variant: Variant) -> Wording {
        let mut history_columns = vec!["you contributed", "others contributed"];
        if self.punishment {
            history_columns.push("your deductions");
        }
        Wording {
            paradigm: "public goods game",
            keywords: &["public good", "public-good"],
            labels: Vec::new().into(),
            unit: "round",
            history_columns,
            narrative_verb: "you contributed",
            fixed_partner: false,
            summary: SummaryKind::MeanDecision,
        }
    }

    fn rules(&self, obs: &Observation, _reversed: bool) -> Result<Rules, EnvError> {
        let d = variants().get(obs.variant);
        let cover =
            d.cover_story.replace("{n}", &self.group_size.to_string()).replace("{endowment}", &d.endowment.to_string());
        Ok(Rules {
            template: "public-goods.j2",
            values: serde_json::json!({
                "cover_story": cover, "n": self.group_size, "rounds": self.rounds, "endowment": d.endowment,
                "mpcr": num(d.mpcr), "punishment": self.punishment, "punishment_max": d.punishment_max,
                "punishment_cost": num(d.punishment_cost), "punishment_impact": num(d.punishment_impact),
                "unit": d.unit[0], "units": d.unit[1], "account": d.account,
            }),
        })
    }

    fn question(&self, obs: &Observation) -> String {
        match (obs.role, &obs.context, &obs.space) {
            (Role::Contributor, _, ActionSpace::Amount { max, .. }) => {
                format!("How many of your {max} points do you put into the group account?")
            }
            (Role::Contributor, _, _) => "How much do you contribute?".into(),
            (Role::Punisher, Context::Contributions { own, others, .. }, _) => format!(
                "This round you contributed {own}; the other members contributed {} (in this order). How many deduction points do you assign to each of them?",
                others.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(", ")
            ),
            (role, _, _) => default_question(role),
        }
    }

    fn history_cells(&self, fb: &Feedback, wording: &Wording) -> Vec<String> {
        let own: Vec<String> = fb.own.iter().map(|(_, a)| wording.format_action(a)).collect();
        let others: Vec<String> = fb.others.iter().map(|a| wording.format_action(a)).collect();
        let mut cells = vec![own.first().cloned().unwrap_or_default(), others.join(", ")];
        if self.punishment {
            cells.push(own.get(1).cloned().unwrap_or_else(|| "-".into()));
        }
        cells
    }

    fn metrics(&self) -> &'static [MetricDef] {
        METRICS
    }

    /// Rounds 1 and 10 of the baseline, as the instrument paper reports them.
    fn summary(&self, arm: &str) -> &'static [SummaryColumn] {
        const BASE: &[SummaryColumn] = &[
            SummaryColumn::mean("contribution_r1", "contrib r1"),
            SummaryColumn::mean("contribution_last", "contrib r10"),
            SummaryColumn::median("contribution_change", "median change"),
        ];
        const PUNISHMENT: &[SummaryColumn] = &[
            SummaryColumn::mean("contribution_r1", "contrib r1"),
            SummaryColumn::mean("contribution_last", "contrib r10"),
            SummaryColumn::median("contribution_change", "median change"),
            SummaryColumn::mean("punishment_points", "punish pts"),
        ];
        if arm == "punishment" {
            PUNISHMENT
        } else {
            BASE
        }
    }

    fn headline(&self) -> &'static [Headline] {
        &[
            Headline { arm: "baseline", metric: "contribution_r1" },
            Headline { arm: "baseline", metric: "contribution_r10" },
        ]
    }

    /// "the change in contributions between the first and last round" (the instrument paper's
    /// canonical effects), a decline in the human literature.
    fn canonical_effect(&self) -> Option<CanonicalEffect> {
        Some(CanonicalEffect {
            arm: "baseline",
            metric: "contribution_change",
            sign: -1.0,
            rule: EffectRule::Change,
            text: "contributions decline between the first and last round",
        })
    }

    fn divergent(&self) -> &'static [Divergent] {
        &[Divergent {
            arm: "baseline",
            metric: "full_contribution",
            complement: false,
            rule: "full contribution pays: share of decisions contributing the whole endowment",
        }]
    }

    fn indicators(&self) -> &'static [Indicator] {
        &[Indicator {
            role: "contributor",
            name: "contribution_share",
            definition: "the contribution as a share of the endowment (amount / maximum)",
            binary: false,
            rule: IndicatorRule::Share,
        }]
    }

    fn no_indicator(&self) -> &'static [NoIndicator] {
        &[NoIndicator { role: "punisher", why: "punishment is an allocation over several targets, not one indicator" }]
    }

    fn outcomes(&self, run: &RunView<'_>) -> Vec<(String, f64)> {
        let mut out = Vec::new();
        let rounds = outcome::per_round(run.decisions, Role::Contributor.as_str());
        if let (Some(first), Some(last)) = (rounds.first(), rounds.last()) {
            out.push(("contribution".into(), outcome::mean_over_rounds(&rounds, |r| r.share)));
            out.push(("contribution_r1".into(), first.share));
            out.push(("contribution_last".into(), last.share));
            out.push(("contribution_change".into(), last.share - first.share));
        }
        if let Some(r10) = rounds.iter().find(|r| r.round == 10) {
            out.push(("contribution_r10".into(), r10.share));
        }
        let punished = outcome::per_round(run.decisions, Role::Punisher.as_str());
        if !punished.is_empty() {
            out.push(("punishment_points".into(), outcome::mean_over_rounds(&punished, |r| r.value)));
        }
        let contributions: Vec<f64> = run
            .decisions
            .iter()
            .filter(|d| d.role == Role::Contributor.as_str())
            .map(|d| if d.value >= d.scale { 1.0 } else { 0.0 })
            .collect();
        if !contributions.is_empty() {
            out.push(("full_contribution".into(), outcome::mean(contributions)));
        }
        out.extend(conditional_cooperation(run.decisions));
        out
    }

    fn expected_decisions(&self) -> (u64, bool) {
        let stages = if self.punishment { 2 } else { 1 };
        (u64::from(self.rounds) * self.group_size as u64 * stages, false)
    }
}

/// Correlation an agent's contributions need with the others' previous-round mean to count as
/// a conditional cooperator in play.
pub const CONDITIONAL_CORRELATION: f64 = 0.5;

/// The conditional-cooperation pattern in play (Fischbacher, Gächter & Fehr 2001 measured it
/// with the strategy method; a run only shows it in play): `cc_slope`, the least-squares slope
/// of each contributor's share in round t on the mean share of the others of its group in
/// round t − 1, pooled over contributors and rounds 2..R; and the types, as shares of
/// contributors: free riders contribute nothing in any round; conditional cooperators are the
/// others whose contributions correlate (Pearson) at least [`CONDITIONAL_CORRELATION`] with the
/// others' previous-round mean. The hump-shaped type needs the strategy method's full schedule
/// and is not identified in play.
pub fn conditional_cooperation(decisions: &[RecordedDecision<'_>]) -> Vec<(String, f64)> {
    use std::collections::BTreeMap;
    let role = Role::Contributor.as_str();
    // round -> seat -> share
    let mut by_round: BTreeMap<u32, BTreeMap<u32, f64>> = BTreeMap::new();
    for d in decisions.iter().filter(|d| d.role == role) {
        by_round.entry(d.round).or_default().insert(d.seat, d.value / d.scale);
    }
    let seats: Vec<u32> = by_round
        .values()
        .flat_map(|m| m.keys().copied())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    if by_round.len() < 2 || seats.len() < 2 {
        return Vec::new();
    }
    let mut pooled = Vec::new();
    let (mut conditional, mut free_riders) = (0usize, 0usize);
    for &seat in &seats {
        let mut pts = Vec::new();
        let mut all_zero = true;
        for (round, row) in &by_round {
            let Some(own) = row.get(&seat) else { continue };
            all_zero &= *own == 0.0;
            let Some(prev) = round.checked_sub(1).and_then(|r| by_round.get(&r)) else { continue };
            let others: Vec<f64> = prev.iter().filter(|(s, _)| **s != seat).map(|(_, v)| *v).collect();
            if !others.is_empty() {
                pts.push((outcome::mean(others.iter().copied()), *own));
            }
        }
        if all_zero {
            free_riders += 1;
        } else if outcome::correlation(&pts).is_some_and(|r| r >= CONDITIONAL_CORRELATION) {
            conditional += 1;
        }
        pooled.extend(pts);
    }
    let n = seats.len() as f64;
    let mut out = Vec::new();
    if let Some(b) = outcome::slope(&pooled) {
        out.push(("cc_slope".into(), b));
    }
    out.push(("cc_conditional_share".into(), conditional as f64 / n));
    out.push(("cc_free_rider_share".into(), free_riders as f64 / n));
    out
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stage {
    Contribute,
    Punish,
}

/// One run of the public goods game.
pub struct PublicGoods {
    params: PgParams,
    variant: Variant,
    table: PgVariant,
    round: u32,
    stage: Stage,
    contributions: Vec<i64>,
}

impl PublicGoods {
    /// A run with the given parameters and variant table, before its first round.
    pub fn new(params: PgParams, variant: Variant, table: PgVariant) -> Self {
        PublicGoods { params, variant, table, round: 0, stage: Stage::Contribute, contributions: Vec::new() }
    }

    /// Round payoff before punishment: `E − c_i + MPCR · Σ c`.
    pub fn base_payoff(table: &PgVariant, contributions: &[i64], i: usize) -> f64 {
        let total: i64 = contributions.iter().sum();
        (table.endowment - contributions[i]) as f64 + table.mpcr * total as f64
    }

    fn bounds(&self) -> PayoffBounds {
        let e = self.table.endowment as f64;
        let n = self.params.group_size as f64;
        let mut min = e * self.table.mpcr.min(1.0);
        if self.params.punishment {
            let most = (n - 1.0) * self.table.punishment_max as f64;
            min -= most * (self.table.punishment_cost + self.table.punishment_impact);
        }
        PayoffBounds { min, mean_abs: e / 2.0 + self.table.mpcr * n * e / 2.0 }
    }

    fn others(&self, i: usize) -> Vec<i64> {
        self.contributions.iter().enumerate().filter(|(j, _)| *j != i).map(|(_, c)| *c).collect()
    }

    fn space(&self) -> ActionSpace {
        match self.stage {
            Stage::Contribute => ActionSpace::Amount { min: 0, max: self.table.endowment },
            Stage::Punish => {
                ActionSpace::Allocation { targets: self.params.group_size - 1, max_each: self.table.punishment_max }
            }
        }
    }

    fn finish_round(&mut self, punishment: Option<&[Vec<i64>]>, step: &mut Step) {
        let n = self.params.group_size;
        let mut pay: Vec<f64> = (0..n).map(|i| Self::base_payoff(&self.table, &self.contributions, i)).collect();
        if let Some(alloc) = punishment {
            for (i, row) in alloc.iter().enumerate() {
                let targets = (0..n).filter(|j| *j != i);
                for (points, j) in row.iter().zip(targets) {
                    pay[i] -= self.table.punishment_cost * *points as f64;
                    pay[j] -= self.table.punishment_impact * *points as f64;
                }
            }
        }
        for (i, p) in pay.iter().enumerate() {
            step.payoffs.push((i, *p));
            let mut own = vec![(Role::Contributor, Action::Amount(self.contributions[i]))];
            if let Some(alloc) = punishment {
                own.push((Role::Punisher, Action::Allocation(alloc[i].clone())));
            }
            step.feedback.push((
                i,
                Feedback {
                    round: self.round,
                    own,
                    others: self.others(i).into_iter().map(Action::Amount).collect(),
                    partner: None,
                    payoff: *p,
                },
            ));
        }
    }
}

impl Environment for PublicGoods {
    fn kind(&self) -> EnvKind {
        EnvKind::PublicGoods
    }

    fn population(&self) -> usize {
        self.params.group_size
    }

    fn next_stage(&mut self, _rng: &mut dyn RngCore) -> Vec<Request> {
        let space = self.space();
        let bounds = self.bounds();
        (0..self.params.group_size)
            .map(|agent| {
                let (role, context) = match self.stage {
                    Stage::Contribute => (Role::Contributor, Context::None),
                    Stage::Punish => (
                        Role::Punisher,
                        Context::Contributions {
                            own: self.contributions[agent],
                            others: self.others(agent),
                            endowment: self.table.endowment,
                        },
                    ),
                };
                Request {
                    agent,
                    observation: Observation {
                        env: EnvKind::PublicGoods,
                        variant: self.variant,
                        role,
                        round: self.round + 1,
                        rounds: Some(self.params.rounds),
                        space: space.clone(),
                        context,
                        payoffs: bounds,
                        memory: self.params.memory,
                    },
                }
            })
            .collect()
    }

    fn resolve(&mut self, actions: &[(usize, Action)], _rng: &mut dyn RngCore) -> Result<Step, EnvError> {
        let space = self.space();
        let open: Vec<(usize, &ActionSpace)> = (0..self.params.group_size).map(|i| (i, &space)).collect();
        let checked = check_actions(actions, &open)?;
        let mut step = Step { round: self.round + 1, ..Step::default() };
        match self.stage {
            Stage::Contribute => {
                self.contributions = checked.iter().map(|a| amount(a)).collect();
                for (i, c) in self.contributions.iter().enumerate() {
                    let endowment = self.table.endowment as f64;
                    step.decisions.push(DecisionRow::amount(i, Role::Contributor, *c, endowment, None));
                }
                if self.params.punishment {
                    self.stage = Stage::Punish;
                } else {
                    self.round += 1;
                    self.finish_round(None, &mut step);
                }
            }
            Stage::Punish => {
                let alloc: Vec<Vec<i64>> = checked
                    .iter()
                    .map(|a| match a {
                        Action::Allocation(v) => v.clone(),
                        _ => Vec::new(),
                    })
                    .collect();
                for (i, row) in alloc.iter().enumerate() {
                    step.decisions.push(DecisionRow {
                        agent: i,
                        role: Role::Punisher,
                        action: Action::Allocation(row.clone()),
                        value: row.iter().sum::<i64>() as f64,
                        scale: space.scale(),
                        context: Some(self.contributions[i] as f64),
                    });
                }
                self.round += 1;
                self.stage = Stage::Contribute;
                self.finish_round(Some(&alloc), &mut step);
            }
        }
        Ok(step)
    }

    fn is_done(&self) -> bool {
        self.round >= self.params.rounds
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::EnvSpec;
    use rand::SeedableRng;

    fn amounts(v: &[i64]) -> Vec<(usize, Action)> {
        v.iter().enumerate().map(|(i, a)| (i, Action::Amount(*a))).collect()
    }

    #[test]
    fn canonical_round_payoffs() {
        let mut env = EnvSpec::PublicGoods(PgParams::default()).build(Variant::C0).expect("builds");
        let mut rng = rand::rngs::StdRng::seed_from_u64(1);
        let req = env.pending(&mut rng);
        assert_eq!(req.len(), 4);
        assert_eq!(req[0].observation.space, ActionSpace::Amount { min: 0, max: 20 });
        let s = env.resolve(&amounts(&[20, 10, 0, 10]), &mut rng).expect("legal");
        // Pool 40, return 0.4 * 40 = 16 to each.
        let pay: Vec<f64> = s.payoffs.iter().map(|p| p.1).collect();
        assert_eq!(pay, vec![16.0, 26.0, 36.0, 26.0]);
        assert_eq!(s.decisions[0].scale, 20.0);
    }

    #[test]
    fn punishment_costs_one_and_removes_three() {
        let params = PgParams { punishment: true, ..PgParams::default() };
        let mut env = EnvSpec::PublicGoods(params).build(Variant::C0).expect("builds");
        let mut rng = rand::rngs::StdRng::seed_from_u64(1);
        env.pending(&mut rng);
        let s = env.resolve(&amounts(&[20, 20, 20, 0]), &mut rng).expect("legal");
        assert!(s.payoffs.is_empty(), "payoffs wait for the punishment stage");
        let req = env.pending(&mut rng);
        assert_eq!(req[0].observation.role, Role::Punisher);
        assert_eq!(
            req[0].observation.context,
            Context::Contributions { own: 20, others: vec![20, 20, 0], endowment: 20 }
        );
        // Agent 0 spends 10 on agent 3; nobody else punishes.
        let alloc = vec![
            (0, Action::Allocation(vec![0, 0, 10])),
            (1, Action::Allocation(vec![0, 0, 0])),
            (2, Action::Allocation(vec![0, 0, 0])),
            (3, Action::Allocation(vec![0, 0, 0])),
        ];
        let s = env.resolve(&alloc, &mut rng).expect("legal");
        let pay: Vec<f64> = s.payoffs.iter().map(|p| p.1).collect();
        // Pool 60 → 24 each; agent 3 keeps 20 more and loses 30; agent 0 pays 10.
        assert_eq!(pay, vec![14.0, 24.0, 24.0, 14.0]);
        let too_much = vec![
            (0, Action::Allocation(vec![0, 0, 11])),
            (1, Action::Allocation(vec![0, 0, 0])),
            (2, Action::Allocation(vec![0, 0, 0])),
            (3, Action::Allocation(vec![0, 0, 0])),
        ];
        env.pending(&mut rng);
        env.resolve(&amounts(&[0, 0, 0, 0]), &mut rng).expect("legal");
        env.pending(&mut rng);
        assert!(matches!(env.resolve(&too_much, &mut rng), Err(EnvError::IllegalAction { agent: 0, .. })));
    }

    #[test]
    fn c3_makes_full_contribution_pay() {
        let mut env = EnvSpec::PublicGoods(PgParams::default()).build(Variant::C3).expect("builds");
        let mut rng = rand::rngs::StdRng::seed_from_u64(1);
        env.pending(&mut rng);
        let s = env.resolve(&amounts(&[20, 0, 0, 0]), &mut rng).expect("legal");
        // Contributing everything returns 1.2 · 20 = 24 > 20 kept.
        assert_eq!(s.payoffs[0].1, 24.0);
        assert_eq!(s.payoffs[1].1, 44.0);
    }

    #[test]
    fn group_size_one_is_rejected() {
        let p = PgParams { group_size: 1, ..PgParams::default() };
        assert!(matches!(p.validate(), Err(EnvError::InvalidParameter { field: "group_size", .. })));
    }

    #[test]
    fn shipped_variants_are_social_dilemmas_except_c3() {
        let c0 = variants().get(Variant::C0);
        assert_eq!((c0.endowment, c0.mpcr), (20, 0.4));
        assert_eq!((c0.punishment_cost, c0.punishment_impact, c0.punishment_max), (1.0, 3.0, 10));
        for v in [Variant::C0, Variant::C1, Variant::C2] {
            let p = variants().get(v);
            assert!(p.mpcr < 1.0 && 4.0 * p.mpcr > 1.0, "{v:?} is a social dilemma");
        }
        assert!(variants().get(Variant::C3).mpcr > 1.0, "full contribution pays under C3");
    }

    #[test]
    fn conditional_cooperation_in_play_slope_and_types() {
        // Seat 0 free-rides; seat 1 copies the others' previous mean; seat 2 moves against it;
        // seat 3 contributes a varying amount that seat 1 follows.
        let rows: [[f64; 4]; 4] = [
            [0.0, 10.0, 20.0, 8.0],
            [0.0, 28.0 / 3.0, 2.0, 16.0],
            [0.0, 6.0, 16.0, 4.0],
            [0.0, 20.0 / 3.0, 10.0, 12.0],
        ];
        let mut d = Vec::new();
        for (r, row) in rows.iter().enumerate() {
            for (seat, v) in row.iter().enumerate() {
                d.push(RecordedDecision {
                    round: r as u32 + 1,
                    seat: seat as u32,
                    role: "contributor",
                    value: *v,
                    scale: 20.0,
                    context: None,
                });
            }
        }
        let out = conditional_cooperation(&d);
        let get = |n: &str| crate::game::outcome_named(&out, n);
        assert_eq!(get("cc_free_rider_share"), Some(0.25));
        // Seat 1's share in round t equals the others' mean share in t - 1 exactly (r = 1);
        // seat 2 moves against it; seat 3 decides on its own schedule.
        let own = |seat: usize| {
            (1..4)
                .map(|r| {
                    (
                        rows[r - 1].iter().enumerate().filter(|(s, _)| *s != seat).map(|(_, v)| v / 20.0).sum::<f64>()
                            / 3.0,
                        rows[r][seat] / 20.0,
                    )
                })
                .collect::<Vec<_>>()
        };
        assert!((crate::outcome::correlation(&own(1)).expect("spread") - 1.0).abs() < 1e-9);
        assert!(crate::outcome::correlation(&own(2)).expect("spread") < 0.5);
        let expected = [0usize, 1, 2, 3]
            .iter()
            .filter(|s| **s != 0)
            .filter(|s| crate::outcome::correlation(&own(**s)).is_some_and(|r| r >= CONDITIONAL_CORRELATION))
            .count() as f64
            / 4.0;
        assert_eq!(get("cc_conditional_share"), Some(expected));
        let pooled: Vec<(f64, f64)> = (0..4).flat_map(own).collect();
        assert_eq!(get("cc_slope"), crate::outcome::slope(&pooled));
        // The round-10 outcome exists only where a tenth round was played.
        let out = PgParams::default().outcomes(&RunView::c0(&d, &[]));
        assert!(out.iter().all(|(k, _)| k != "contribution_r10"));
    }
}
