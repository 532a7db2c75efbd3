//! The 11–20 money request game (Arad & Rubinstein 2012).
//!
//! Each agent requests an integer between 11 and 20 and receives it, plus a bonus of 20 if the
//! request is exactly one below the other's. 50 one-shot games per run; in a population larger
//! than two, each game pairs two seats at random.

use rand::RngCore;
use serde::{Deserialize, Serialize};

use crate::error::{at_least_one, at_least_two, EnvError};
use crate::game::{
    Direction, Divergent, Game, Headline, MetricDef, NoIndicator, Rules, RunView, SummaryColumn, SummaryKind, Wording,
};
use crate::kind::{EnvKind, Role, Variant};
use crate::observation::{Context, Observation, PayoffBounds};
use crate::{amount, check_actions, outcome, Action, ActionSpace, DecisionRow, Environment, Request, Step};

/// One line for `agora list environments`.
pub const DESCRIPTION: &str =
    "11-20 money request: request 11..20, bonus 20 for exactly one below the other; 50 one-shot games";

/// When the bonus is paid.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum BonusRule {
    /// The request is exactly one below the other's (the canonical game).
    Undercut,
    /// The request is exactly one above the other's (divergent payoffs).
    Exceed,
}

/// 11–20 money request numbers of one variant.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MrVariant {
    /// The situation as a participant reads it.
    pub cover_story: String,
    /// The lowest request.
    pub min: i64,
    /// The highest request.
    pub max: i64,
    /// The bonus for the rule's relation to the other's request.
    pub bonus: i64,
    /// When the bonus is paid.
    pub rule: BonusRule,
    /// The surface the rules and the question read in (a re-skin names its own act, what is
    /// received, the participant's noun and the goal); C0's words by default.
    #[serde(default)]
    pub words: MrWords,
}

/// How one variant of the 11-20 game words the request.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MrWords {
    /// What each does (`request an amount of money`).
    pub act: String,
    /// What each receives (`the amount requested`).
    pub receives: String,
    /// Who asks, as the bonus sentence opens (`A participant who asks for`).
    pub who: String,
    /// What the goal is to earn as much of (`as much money`).
    pub goal: String,
    /// The question before the answer (`How much do you request?`).
    pub question: String,
}

impl Default for MrWords {
    fn default() -> MrWords {
        MrWords {
            act: "request an amount of money".into(),
            receives: "the amount requested".into(),
            who: "A participant who asks for".into(),
            goal: "as much money".into(),
            question: "How much do you request?".into(),
        }
    }
}

crate::shipped_variants!(variants, MrVariant, "money-request.ron", |v: &MrVariant| {
    if v.min <= v.max {
        Ok(())
    } else {
        Err(format!("min {} exceeds max {}", v.min, v.max))
    }
});

/// The metrics of a run: the distribution of requests over the ten-point range
/// (`choice_11` is the lowest request in every variant) and the share at the human mode.
pub const METRICS: &[MetricDef] = &[
    MetricDef::secondary("choice_{request}", "share of requests at this position of the range"),
    MetricDef::primary("mode_share", "share of requests at the human mode (17 in C0)", Direction::Higher),
    MetricDef::secondary("request_below_top", "share of requests below the top of the range (20 in C0)"),
];

/// Parameters of the money request game.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct MrParams {
    /// One-shot games per run.
    #[schemars(range(min = 1))]
    pub games: u32,
    /// Seats; each game draws two of them.
    #[schemars(range(min = 2))]
    pub population: usize,
    /// Earlier games shown to an agent. 0 (the default, as the paper's one-shot games): each
    /// game is a fresh encounter and the prompt shows no earlier game; a positive value is an
    /// opt-in beyond the paper (classical learners learn from their own payoffs either way).
    pub memory: u32,
}

impl Default for MrParams {
    fn default() -> Self {
        MrParams { games: 50, population: 2, memory: 0 }
    }
}

impl Game for MrParams {
    fn validate(&self) -> Result<(), EnvError> {
        at_least_two("population", self.population)?;
        at_least_one("games", self.games)?;
        Ok(())
    }

    fn build_env(&self, variant: Variant) -> Result<Box<dyn Environment>, EnvError> {
        Ok(Box::new(MoneyRequest::new(self.clone(), variant, variants().get(variant).clone())))
    }

    crate::game::game_fields!(population: population, memory);

    fn wording(&self, _variant: Variant) -> Wording {
        Wording {
            paradigm: "11-20 money request game",
            keywords: &["11-20", "11–20", "11 to 20", "money request"],
            labels: Vec::new().into(),
            unit: "game",
            history_columns: vec!["you requested", "the other requested"],
            narrative_verb: "you requested",
            fixed_partner: false,
            summary: SummaryKind::MeanDecision,
        }
    }

    fn rules(&self, obs: &Observation, _reversed: bool) -> Result<Rules, EnvError> {
        let d = variants().get(obs.variant);
        Ok(Rules {
            template: "money-request.j2",
            values: serde_json::json!({
                "cover_story": d.cover_story, "games": self.games, "min": d.min, "max": d.max, "bonus": d.bonus,
                "population": self.population, "one_shot": self.memory == 0,
                "rule": format!("{:?}", d.rule),
                "act": d.words.act, "receives": d.words.receives, "who": d.words.who, "goal": d.words.goal,
            }),
        })
    }

    fn question(&self, obs: &Observation) -> String {
        variants().get(obs.variant).words.question.clone()
    }

    fn metrics(&self) -> &'static [MetricDef] {
        METRICS
    }

    fn summary(&self, _arm: &str) -> &'static [SummaryColumn] {
        const COLUMNS: &[SummaryColumn] = &[
            SummaryColumn::mean("mode_share", "at mode 17"),
            SummaryColumn::mean("choice_20", "at 20"),
            SummaryColumn::mean("choice_19", "at 19"),
        ];
        COLUMNS
    }

    fn headline(&self) -> &'static [Headline] {
        &[Headline { arm: "baseline", metric: "mode_share" }]
    }

    fn divergent(&self) -> &'static [Divergent] {
        &[Divergent {
            arm: "baseline",
            metric: "choice_20",
            complement: false,
            rule: "the bonus rewards exceeding: share of requests at the top of the range",
        }]
    }

    fn no_indicator(&self) -> &'static [NoIndicator] {
        &[NoIndicator { role: "*", why: "the 11-20 request has no prosocial direction" }]
    }

    fn outcomes(&self, run: &RunView<'_>) -> Vec<(String, f64)> {
        // Position in the range: 0 is the lowest request (11 in C0); the context holds the
        // lowest request allowed.
        let mut counts: std::collections::BTreeMap<i64, f64> = std::collections::BTreeMap::new();
        for d in run.decisions.iter().filter(|d| d.role == Role::Requester.as_str()) {
            *counts.entry((d.value - d.context.unwrap_or(0.0)) as i64).or_default() += 1.0;
        }
        let total: f64 = counts.values().sum();
        if counts.is_empty() {
            return Vec::new();
        }
        let mut out: Vec<(String, f64)> =
            counts.iter().map(|(idx, n)| (format!("choice_{:02}", idx + 11), n / total)).collect();
        // The human mode is 17 in the canonical range, the seventh value of ten.
        out.push(("mode_share".into(), counts.get(&6).copied().unwrap_or(0.0) / total));
        // Level-0 play requests the top of the range; humans request less (Arad & Rubinstein
        // 2012), the side of the prediction a sign-stability reading needs.
        let top = run
            .decisions
            .iter()
            .filter(|d| d.role == Role::Requester.as_str())
            .map(|d| (d.value >= d.scale) as u8 as f64);
        out.push(("request_below_top".into(), 1.0 - outcome::mean(top)));
        out
    }

    fn length_field(&self) -> &'static str {
        "games"
    }

    fn expected_decisions(&self) -> (u64, bool) {
        (u64::from(self.games) * 2, false)
    }
}

/// One run of the money request game.
pub struct MoneyRequest {
    params: MrParams,
    variant: Variant,
    table: MrVariant,
    game: u32,
    pair: (usize, usize),
}

impl MoneyRequest {
    /// A battery with the given parameters and variant table, before its first game.
    pub fn new(params: MrParams, variant: Variant, table: MrVariant) -> Self {
        MoneyRequest { params, variant, table, game: 0, pair: (0, 1) }
    }

    /// Payoff of requesting `own` against `other`.
    pub fn payoff(table: &MrVariant, own: i64, other: i64) -> f64 {
        let bonus = match table.rule {
            BonusRule::Undercut => own + 1 == other,
            BonusRule::Exceed => own == other + 1,
        };
        (own + if bonus { table.bonus } else { 0 }) as f64
    }

    fn space(&self) -> ActionSpace {
        ActionSpace::Amount { min: self.table.min, max: self.table.max }
    }
}

impl Environment for MoneyRequest {
    fn kind(&self) -> EnvKind {
        EnvKind::MoneyRequest
    }

    fn population(&self) -> usize {
        self.params.population
    }

    fn next_stage(&mut self, rng: &mut dyn RngCore) -> Vec<Request> {
        let (a, b) = crate::draw_pair(rng, self.params.population);
        self.pair = (a.min(b), a.max(b));
        let t = &self.table;
        let span = (t.max - t.min + 1) as f64;
        let bounds = PayoffBounds { min: t.min as f64, mean_abs: (t.min + t.max) as f64 / 2.0 + t.bonus as f64 / span };
        let observation = Observation {
            env: EnvKind::MoneyRequest,
            variant: self.variant,
            role: Role::Requester,
            round: self.game + 1,
            rounds: Some(self.params.games),
            space: self.space(),
            context: Context::None,
            payoffs: bounds,
            memory: self.params.memory,
        };
        Request::each([self.pair.0, self.pair.1], &observation)
    }

    fn resolve(&mut self, actions: &[(usize, Action)], _rng: &mut dyn RngCore) -> Result<Step, EnvError> {
        let space = self.space();
        let (a, b) = self.pair;
        let r: Vec<i64> = check_actions(actions, &[(a, &space), (b, &space)])?.into_iter().map(amount).collect();
        self.game += 1;
        let mut step = Step { round: self.game, ..Step::default() };
        for (k, (seat, other)) in [(a, b), (b, a)].into_iter().enumerate() {
            let pay = Self::payoff(&self.table, r[k], r[1 - k]);
            // The context is the lowest request allowed, so that readers can place the choice in
            // the range.
            let (max, min) = (self.table.max as f64, self.table.min as f64);
            let row = DecisionRow::amount(seat, Role::Requester, r[k], max, Some(min));
            step.push_paired(row, (other, Action::Amount(r[1 - k])), pay);
        }
        Ok(step)
    }

    fn is_done(&self) -> bool {
        self.game >= self.params.games
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::RecordedDecision;

    #[test]
    fn canonical_bonus_for_exactly_one_below() {
        let t = variants().get(Variant::C0);
        assert_eq!(MoneyRequest::payoff(t, 17, 18), 37.0);
        assert_eq!(MoneyRequest::payoff(t, 18, 17), 18.0);
        assert_eq!(MoneyRequest::payoff(t, 20, 20), 20.0);
        assert_eq!(MoneyRequest::payoff(t, 16, 18), 16.0);
    }

    #[test]
    fn divergent_bonus_for_exactly_one_above() {
        let t = variants().get(Variant::C3);
        assert_eq!(MoneyRequest::payoff(t, 18, 17), 38.0);
        assert_eq!(MoneyRequest::payoff(t, 17, 18), 17.0);
    }

    #[test]
    fn shifted_range_in_c2() {
        let t = variants().get(Variant::C2);
        assert_eq!((t.min, t.max), (21, 30));
        assert_eq!(MoneyRequest::payoff(t, 27, 28), 47.0);
    }

    #[test]
    fn shipped_variants_range_bonus_and_rule() {
        let mr = variants().get(Variant::C0);
        assert_eq!((mr.min, mr.max, mr.bonus, mr.rule), (11, 20, 20, BonusRule::Undercut));
        assert_eq!(variants().get(Variant::C3).rule, BonusRule::Exceed);
    }

    #[test]
    fn requests_below_the_top_and_one_shot_rules() {
        let d: Vec<RecordedDecision> = [20.0, 17.0, 19.0, 20.0]
            .iter()
            .enumerate()
            .map(|(i, v)| RecordedDecision {
                round: i as u32 + 1,
                seat: 0,
                role: "requester",
                value: *v,
                scale: 20.0,
                context: Some(11.0),
            })
            .collect();
        let out = MrParams::default().outcomes(&RunView::c0(&d, &[]));
        assert!(out.contains(&("request_below_top".to_string(), 0.5)));
        // One-shot by default: no memory, and the rules say only what is true.
        assert_eq!(MrParams::default().memory, 0);
        use rand::SeedableRng;
        let mut env = crate::EnvSpec::MoneyRequest(MrParams::default()).build(Variant::C0).expect("builds");
        let obs = env.pending(&mut rand::rngs::StdRng::seed_from_u64(1)).remove(0).observation;
        assert_eq!(obs.memory, 0);
        let v = MrParams::default().rules(&obs, false).expect("rules").values;
        assert_eq!(v["one_shot"], true);
        assert_eq!(v["population"], 2);
    }
}
