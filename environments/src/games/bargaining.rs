//! Bargaining battery: ultimatum (proposer and responder), dictator and trust games.
//!
//! A run plays 50 one-shot games of one kind between the seats of a small population; roles
//! are drawn at random for every game. The supplementary fixed-offer arm presents responders
//! with a schedule of offers (10, 20, 25, 30, 33, 37, 40, 45, 50 points, twenty games each), so
//! that an acceptance function is identified on the same decisions for every roster.

use rand::seq::SliceRandom;
use rand::RngCore;
use serde::{Deserialize, Serialize};

use crate::error::{at_least_one, at_least_two, invalid, EnvError};
use crate::game::{
    default_question, in_order, C3Rule, Direction, Divergent, Game, Headline, Indicator, IndicatorRule, MetricDef,
    Rules, RunView, SummaryColumn, SummaryKind, Wording,
};
use crate::kind::{EnvKind, Role, Variant};
use crate::observation::{Context, Feedback, Observation, PayoffBounds};
use crate::variants::two_labels;
use crate::{
    amount, check_actions, choice_index, num, outcome, Action, ActionSpace, DecisionRow, Environment, Request, Step,
};

/// One line for `agora list environments`.
pub const DESCRIPTION: &str =
    "bargaining battery: ultimatum (pie 100), dictator, trust; 50 one-shot games; fixed-offer responder arm";

/// Bargaining battery numbers of one variant (ultimatum, dictator, trust).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BargainVariant {
    /// The situation as a participant reads it.
    pub cover_story: String,
    /// Points divided in the ultimatum and dictator games.
    pub pie: i64,
    /// What the ultimatum responder receives on rejection.
    pub responder_outside: f64,
    /// What the ultimatum proposer receives on rejection.
    pub proposer_outside: f64,
    /// The investor's endowment in the trust game.
    pub trust_endowment: i64,
    /// What the trustee receives per point sent.
    pub trust_multiplier: i64,
    /// Responder labels: index 0 accepts, index 1 rejects.
    pub labels: std::sync::Arc<[String]>,
    /// The unit of the sums as the rules and questions name it, singular and plural (a re-skin
    /// names its own: `dollar`/`dollars`).
    #[serde(default = "default_unit")]
    pub unit: [String; 2],
}

fn default_unit() -> [String; 2] {
    ["point".into(), "points".into()]
}

crate::shipped_variants!(variants, BargainVariant, "bargaining.ron", |v: &BargainVariant| two_labels(&v.labels));

/// The metrics of a run: each role's mean decision as a share of what it could give, the
/// responder's rejections, the acceptance function of the fixed-offer arm, and how often a
/// responder's choice agreed with the payoffs.
pub const METRICS: &[MetricDef] = &[
    MetricDef::primary("offer", "share of the pie", Direction::Higher),
    MetricDef::primary("rejection", "share of decisions", Direction::Higher),
    MetricDef::primary("giving", "share of the pie", Direction::Higher),
    MetricDef::primary("sent", "share of the endowment", Direction::Higher),
    MetricDef::primary("returned", "share of the amount received", Direction::Higher),
    MetricDef::secondary("accept_{offer}", "share of decisions at this offer"),
    MetricDef::secondary("payoff_consistency", "share of decisions").with_c3(C3Rule::ShareConsistent),
];

/// Which game of the battery.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub enum BargainGame {
    /// A proposer offers a split; the responder accepts or rejects it.
    Ultimatum,
    /// An allocator gives a recipient what it likes.
    Dictator,
    /// An investor sends points that are multiplied; the trustee returns what it likes.
    Trust,
}

impl BargainGame {
    /// Lower-case name, as the rules template reads it.
    pub fn as_str(self) -> &'static str {
        match self {
            BargainGame::Ultimatum => "ultimatum",
            BargainGame::Dictator => "dictator",
            BargainGame::Trust => "trust",
        }
    }
}

/// The fixed-offer responder schedule.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct FixedOffers {
    /// The offers presented, in points.
    pub offers: Vec<i64>,
    /// Games per offer.
    pub games_each: u32,
}

impl Default for FixedOffers {
    fn default() -> Self {
        FixedOffers { offers: vec![10, 20, 25, 30, 33, 37, 40, 45, 50], games_each: 20 }
    }
}

/// Parameters of the battery.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct BargainParams {
    /// Which game of the battery.
    pub game: BargainGame,
    /// One-shot games per run (ignored by the fixed-offer arm, whose schedule sets the count).
    #[schemars(range(min = 1))]
    pub games: u32,
    /// Seats; each game draws two of them.
    #[schemars(range(min = 2))]
    pub population: usize,
    /// Earlier games shown to an agent. 0 (the default, as the paper's one-shot games): each
    /// game is a fresh encounter and the prompt shows no earlier game; a positive value is an
    /// opt-in beyond the paper (classical learners learn from their own payoffs either way).
    pub memory: u32,
    /// The fixed-offer responder arm.
    pub fixed_offers: Option<FixedOffers>,
}

impl Default for BargainParams {
    fn default() -> Self {
        BargainParams { game: BargainGame::Ultimatum, games: 50, population: 2, memory: 0, fixed_offers: None }
    }
}

impl Game for BargainParams {
    fn validate(&self) -> Result<(), EnvError> {
        at_least_two("population", self.population)?;
        at_least_one("games", self.games)?;
        if let Some(f) = &self.fixed_offers {
            if self.game != BargainGame::Ultimatum {
                return Err(invalid("fixed_offers", "the fixed-offer arm exists only for the ultimatum game"));
            }
            if f.offers.is_empty() || f.games_each == 0 {
                return Err(invalid("fixed_offers", "needs at least one offer and one game per offer"));
            }
            if let Some(o) = f.offers.iter().find(|o| **o < 0) {
                return Err(invalid("fixed_offers", format!("offer {o} is negative")));
            }
        }
        Ok(())
    }

    fn build_env(&self, variant: Variant) -> Result<Box<dyn Environment>, EnvError> {
        Ok(Box::new(Bargaining::new(self.clone(), variant, variants().get(variant).clone())))
    }

    crate::game::game_fields!(population: population, memory);

    fn arm(&self) -> String {
        match (self.game, &self.fixed_offers) {
            (_, Some(_)) => "ultimatum-fixed-offer".into(),
            (game, None) => game.as_str().into(),
        }
    }

    fn wording(&self, variant: Variant) -> Wording {
        let (paradigm, keywords): (&'static str, &'static [&'static str]) = match self.game {
            BargainGame::Ultimatum => ("ultimatum game", &["ultimatum"]),
            BargainGame::Dictator => ("dictator game", &["dictator"]),
            BargainGame::Trust => ("trust game", &["trust game", "investment game"]),
        };
        Wording {
            paradigm,
            keywords,
            // Only the ultimatum responder chooses between labelled actions.
            labels: match self.game {
                BargainGame::Ultimatum => variants().get(variant).labels.clone(),
                BargainGame::Dictator | BargainGame::Trust => Vec::new().into(),
            },
            unit: "game",
            history_columns: vec!["your role", "your decision", "the other's decision"],
            narrative_verb: "as the {role} you chose",
            fixed_partner: false,
            summary: SummaryKind::MeanDecision,
        }
    }

    fn rules(&self, obs: &Observation, reversed: bool) -> Result<Rules, EnvError> {
        let d = variants().get(obs.variant);
        let labels = in_order(&d.labels, reversed);
        Ok(Rules {
            template: "bargaining.j2",
            values: serde_json::json!({
                "cover_story": d.cover_story, "game": self.game.as_str(), "games": obs.rounds.unwrap_or(self.games),
                "population": self.population, "one_shot": self.memory == 0, "fixed": self.fixed_offers.is_some(),
                "pie": d.pie, "labels": labels, "accept": d.labels[0], "reject": d.labels[1],
                "proposer_outside": num(d.proposer_outside), "responder_outside": num(d.responder_outside),
                "trust_endowment": d.trust_endowment, "trust_multiplier": d.trust_multiplier,
                "units": d.unit[1],
            }),
        })
    }

    fn question(&self, obs: &Observation) -> String {
        // The variant's unit (C1 and C2 re-skin it).
        let units = &variants().get(obs.variant).unit[1];
        match (obs.role, &obs.context) {
            (Role::Proposer, _) => format!("You are the proposer in this game. How many {units} do you offer the responder?"),
            (Role::Responder, Context::Offer { offer, pie }) => {
                // The variant's own words for the two actions (C1 and C2 re-skin them).
                let labels = &variants().get(obs.variant).labels;
                // In the fixed-offer arm the offer comes from the study's schedule, not from a
                // proposer, and the prompt says so.
                let from = if self.fixed_offers.is_some() { "You are offered" } else { "The proposer offers you" };
                format!(
                    "You are the responder in this game. {from} {offer} of the {pie} {units}. Do you {} or {}?",
                    labels[0], labels[1]
                )
            }
            (Role::Dictator, _) => format!("You are the allocator in this game. How many {units} do you give the recipient?"),
            (Role::Investor, _) => format!("You are the investor in this game. How many {units} do you send?"),
            (Role::Trustee, Context::Received { amount }) => format!(
                "You are the trustee in this game. You received {amount} {units}. How many do you return to the investor?"
            ),
            (role, _) => default_question(role),
        }
    }

    fn history_cells(&self, fb: &Feedback, wording: &Wording) -> Vec<String> {
        let own: Vec<String> = fb.own.iter().map(|(_, a)| wording.format_action(a)).collect();
        let others: Vec<String> = fb.others.iter().map(|a| wording.format_action(a)).collect();
        let role = fb.own.first().map(|(r, _)| r.as_str()).unwrap_or("-");
        vec![role.to_string(), own.join(", "), others.join(", ")]
    }

    // No framing (the default): the responder's accept/reject has no defensible risk reading
    // (the offer is known, so neither is the riskier option) and neither is exploiting; the
    // other roles choose amounts. The framing cells do not run in the battery.

    fn metrics(&self) -> &'static [MetricDef] {
        METRICS
    }

    fn summary(&self, arm: &str) -> &'static [SummaryColumn] {
        const ULTIMATUM: &[SummaryColumn] =
            &[SummaryColumn::mean("offer", "offer/pie"), SummaryColumn::mean("rejection", "rejection")];
        const DICTATOR: &[SummaryColumn] = &[SummaryColumn::mean("giving", "giving")];
        const TRUST: &[SummaryColumn] =
            &[SummaryColumn::mean("sent", "sent"), SummaryColumn::mean("returned", "returned")];
        const FIXED_OFFER: &[SummaryColumn] = &[
            SummaryColumn::mean("accept_10", "acc 10"),
            SummaryColumn::mean("accept_20", "acc 20"),
            SummaryColumn::mean("accept_30", "acc 30"),
            SummaryColumn::mean("accept_37", "acc 37"),
            SummaryColumn::mean("accept_40", "acc 40"),
            SummaryColumn::mean("accept_50", "acc 50"),
        ];
        match arm {
            "ultimatum" => ULTIMATUM,
            "dictator" => DICTATOR,
            "trust" => TRUST,
            "ultimatum-fixed-offer" => FIXED_OFFER,
            _ => &[],
        }
    }

    fn headline(&self) -> &'static [Headline] {
        &[
            Headline { arm: "ultimatum", metric: "offer" },
            Headline { arm: "dictator", metric: "giving" },
            Headline { arm: "trust", metric: "sent" },
        ]
    }

    fn divergent(&self) -> &'static [Divergent] {
        const RULE: &str = "rejection pays 40: per game, reject below 40 and accept above";
        &[
            Divergent { arm: "ultimatum", metric: "payoff_consistency", complement: false, rule: RULE },
            Divergent { arm: "ultimatum-fixed-offer", metric: "payoff_consistency", complement: false, rule: RULE },
        ]
    }

    fn indicators(&self) -> &'static [Indicator] {
        &[
            Indicator {
                role: "responder",
                name: "accept",
                definition: "1 when the ultimatum responder accepts (choice 0), 0 when it rejects",
                binary: true,
                rule: IndicatorRule::Choice(0),
            },
            Indicator {
                role: "proposer",
                name: "offer_share",
                definition: "the ultimatum offer as a share of the pie (amount / maximum)",
                binary: false,
                rule: IndicatorRule::Share,
            },
            Indicator {
                role: "dictator",
                name: "give_share",
                definition: "the dictator's gift as a share of the pie (amount / maximum)",
                binary: false,
                rule: IndicatorRule::Share,
            },
            Indicator {
                role: "investor",
                name: "send_share",
                definition: "the amount the investor sends as a share of the endowment (amount / maximum)",
                binary: false,
                rule: IndicatorRule::Share,
            },
            Indicator {
                role: "trustee",
                name: "return_share",
                definition: "the amount the trustee returns as a share of what it holds (amount / maximum); a trustee who holds nothing is left out",
                binary: false,
                rule: IndicatorRule::Share,
            },
        ]
    }

    fn outcomes(&self, run: &RunView<'_>) -> Vec<(String, f64)> {
        let mut out = Vec::new();
        for (role, name, share) in [
            (Role::Proposer, "offer", true),
            (Role::Responder, "rejection", false),
            (Role::Dictator, "giving", true),
            (Role::Investor, "sent", true),
            (Role::Trustee, "returned", true),
        ] {
            let rounds = outcome::per_round(run.decisions, role.as_str());
            if !rounds.is_empty() {
                out.push((name.into(), outcome::mean_over_rounds(&rounds, |r| if share { r.share } else { r.value })));
            }
        }
        let responses: Vec<(f64, f64)> = run
            .decisions
            .iter()
            .filter(|d| d.role == Role::Responder.as_str())
            .map(|d| (d.context.unwrap_or(f64::NAN), d.value))
            .collect();
        if self.fixed_offers.is_some() {
            let mut by_offer: Vec<(f64, Vec<f64>)> = Vec::new();
            for (offer, reject) in &responses {
                match by_offer.iter_mut().find(|(o, _)| o == offer) {
                    Some((_, v)) => v.push(*reject),
                    None => by_offer.push((*offer, vec![*reject])),
                }
            }
            by_offer.sort_by(|a, b| a.0.total_cmp(&b.0));
            for (offer, rejects) in by_offer {
                out.push((format!("accept_{offer:02.0}"), 1.0 - outcome::mean(rejects)));
            }
        }
        if !responses.is_empty() {
            // Accepting pays when the offer exceeds what rejection brings (0 in C0–C2, 40 in
            // C3), rejecting when it falls below; at equality either is consistent.
            let outside = variants().get(run.variant).responder_outside;
            let consistent = responses
                .iter()
                .filter(|(offer, reject)| {
                    if *offer > outside {
                        *reject == 0.0
                    } else if *offer < outside {
                        *reject == 1.0
                    } else {
                        true
                    }
                })
                .count();
            out.push(("payoff_consistency".into(), consistent as f64 / responses.len() as f64));
        }
        out
    }

    fn length_field(&self) -> &'static str {
        if self.fixed_offers.is_some() {
            "fixed_offers.games_each"
        } else {
            "games"
        }
    }

    fn expected_decisions(&self) -> (u64, bool) {
        match &self.fixed_offers {
            Some(f) => (f.offers.len() as u64 * u64::from(f.games_each), false),
            None => match self.game {
                BargainGame::Dictator => (u64::from(self.games), false),
                BargainGame::Ultimatum => (u64::from(self.games) * 2, false),
                BargainGame::Trust => (u64::from(self.games) * 2, true),
            },
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stage {
    /// First mover: proposer, dictator or investor.
    First,
    /// Second mover: responder or trustee, facing `amount`.
    Second { amount: i64 },
}

/// One run of the battery.
pub struct Bargaining {
    params: BargainParams,
    variant: Variant,
    table: BargainVariant,
    /// Games completed.
    game: u32,
    stage: Stage,
    /// (first mover, second mover) of the current game.
    seats: (usize, usize),
    /// Remaining fixed offers, drawn from the back.
    schedule: Option<Vec<i64>>,
}

impl Bargaining {
    /// A battery with the given parameters and variant table, before its first game.
    pub fn new(params: BargainParams, variant: Variant, table: BargainVariant) -> Self {
        Bargaining { params, variant, table, game: 0, stage: Stage::First, seats: (0, 1), schedule: None }
    }

    fn total_games(&self) -> u32 {
        match &self.params.fixed_offers {
            Some(f) => f.offers.len() as u32 * f.games_each,
            None => self.params.games,
        }
    }

    fn bounds(&self) -> PayoffBounds {
        match self.params.game {
            BargainGame::Trust => PayoffBounds { min: 0.0, mean_abs: self.table.trust_endowment as f64 },
            _ => PayoffBounds {
                min: 0.0f64.min(self.table.responder_outside).min(self.table.proposer_outside),
                mean_abs: self.table.pie as f64 / 2.0,
            },
        }
    }

    fn responder_space(&self) -> ActionSpace {
        ActionSpace::Choice { labels: self.table.labels.clone() }
    }

    fn space_and_role(&self) -> (ActionSpace, Role, Context) {
        match (self.params.game, self.stage) {
            (BargainGame::Ultimatum, Stage::First) => {
                (ActionSpace::Amount { min: 0, max: self.table.pie }, Role::Proposer, Context::None)
            }
            (BargainGame::Ultimatum, Stage::Second { amount }) => {
                (self.responder_space(), Role::Responder, Context::Offer { offer: amount, pie: self.table.pie })
            }
            (BargainGame::Dictator, _) => {
                (ActionSpace::Amount { min: 0, max: self.table.pie }, Role::Dictator, Context::None)
            }
            (BargainGame::Trust, Stage::First) => {
                (ActionSpace::Amount { min: 0, max: self.table.trust_endowment }, Role::Investor, Context::None)
            }
            (BargainGame::Trust, Stage::Second { amount }) => {
                (ActionSpace::Amount { min: 0, max: amount }, Role::Trustee, Context::Received { amount })
            }
        }
    }

    fn feedback(
        &self,
        agent: usize,
        own: (Role, Action),
        other: Option<Action>,
        partner: Option<usize>,
        payoff: f64,
    ) -> (usize, Feedback) {
        (agent, Feedback { round: self.game, own: vec![own], others: other.into_iter().collect(), partner, payoff })
    }

    fn end_game(&mut self) {
        self.game += 1;
        self.stage = Stage::First;
    }
}

impl Environment for Bargaining {
    fn kind(&self) -> EnvKind {
        EnvKind::Bargaining
    }

    fn population(&self) -> usize {
        self.params.population
    }

    fn next_stage(&mut self, rng: &mut dyn RngCore) -> Vec<Request> {
        if self.stage == Stage::First {
            // Roles are drawn afresh for every game.
            self.seats = crate::draw_pair(rng, self.params.population);
            if let Some(f) = &self.params.fixed_offers {
                let schedule = self.schedule.get_or_insert_with(|| {
                    let mut s: Vec<i64> =
                        f.offers.iter().flat_map(|o| std::iter::repeat_n(*o, f.games_each as usize)).collect();
                    s.shuffle(rng);
                    s
                });
                let offer = schedule.pop().expect("invariant: schedule holds one offer per remaining game");
                self.stage = Stage::Second { amount: offer };
            }
        }
        let (space, role, context) = self.space_and_role();
        let agent = match self.stage {
            Stage::First => self.seats.0,
            Stage::Second { .. } => self.seats.1,
        };
        vec![Request {
            agent,
            observation: Observation {
                env: EnvKind::Bargaining,
                variant: self.variant,
                role,
                round: self.game + 1,
                rounds: Some(self.total_games()),
                space,
                context,
                payoffs: self.bounds(),
                memory: self.params.memory,
            },
        }]
    }

    fn resolve(&mut self, actions: &[(usize, Action)], _rng: &mut dyn RngCore) -> Result<Step, EnvError> {
        let (space, role, _) = self.space_and_role();
        let agent = match self.stage {
            Stage::First => self.seats.0,
            Stage::Second { .. } => self.seats.1,
        };
        let action = check_actions(actions, &[(agent, &space)])?[0].clone();
        let (first, second) = self.seats;
        let mut step = Step { round: self.game + 1, ..Step::default() };
        let t = &self.table;
        match (self.params.game, self.stage) {
            (BargainGame::Ultimatum, Stage::First) => {
                let offer = amount(&action);
                step.decisions.push(DecisionRow::amount(agent, role, offer, t.pie as f64, None));
                self.stage = Stage::Second { amount: offer };
            }
            (BargainGame::Ultimatum, Stage::Second { amount: offer }) => {
                let accept = choice_index(&action) == 0;
                step.decisions.push(DecisionRow::choice(agent, role, choice_index(&action), Some(offer as f64)));
                let (p_pay, r_pay) = if accept {
                    ((t.pie - offer) as f64, offer as f64)
                } else {
                    (t.proposer_outside, t.responder_outside)
                };
                let fixed = self.params.fixed_offers.is_some();
                if !fixed {
                    step.payoffs.push((first, p_pay));
                    let fb = self.feedback(
                        first,
                        (Role::Proposer, Action::Amount(offer)),
                        Some(action.clone()),
                        Some(second),
                        p_pay,
                    );
                    step.feedback.push(fb);
                }
                step.payoffs.push((second, r_pay));
                let partner = if fixed { None } else { Some(first) };
                let fb = self.feedback(second, (Role::Responder, action), Some(Action::Amount(offer)), partner, r_pay);
                step.feedback.push(fb);
                self.end_game();
            }
            (BargainGame::Dictator, _) => {
                let give = amount(&action);
                step.decisions.push(DecisionRow::amount(agent, role, give, t.pie as f64, None));
                let (d_pay, r_pay) = ((t.pie - give) as f64, give as f64);
                step.payoffs.extend([(first, d_pay), (second, r_pay)]);
                let fb = self.feedback(first, (Role::Dictator, action), None, Some(second), d_pay);
                step.feedback.push(fb);
                self.end_game();
            }
            (BargainGame::Trust, Stage::First) => {
                let sent = amount(&action);
                step.decisions.push(DecisionRow::amount(agent, role, sent, t.trust_endowment as f64, None));
                if sent == 0 {
                    // Nothing to return: the game ends with the investor keeping the endowment.
                    let e = t.trust_endowment as f64;
                    step.payoffs.extend([(first, e), (second, 0.0)]);
                    let fb = self.feedback(first, (Role::Investor, action), None, Some(second), e);
                    step.feedback.push(fb);
                    self.end_game();
                } else {
                    self.stage = Stage::Second { amount: sent * t.trust_multiplier };
                }
            }
            (BargainGame::Trust, Stage::Second { amount: received }) => {
                let returned = amount(&action);
                let sent = received / t.trust_multiplier;
                let scale = received as f64;
                step.decisions.push(DecisionRow::amount(agent, role, returned, scale, Some(received as f64)));
                let i_pay = (t.trust_endowment - sent + returned) as f64;
                let r_pay = (received - returned) as f64;
                step.payoffs.extend([(first, i_pay), (second, r_pay)]);
                let fb = self.feedback(
                    first,
                    (Role::Investor, Action::Amount(sent)),
                    Some(action.clone()),
                    Some(second),
                    i_pay,
                );
                step.feedback.push(fb);
                let fb = self.feedback(second, (Role::Trustee, action), Some(Action::Amount(sent)), Some(first), r_pay);
                step.feedback.push(fb);
                self.end_game();
            }
        }
        Ok(step)
    }

    fn is_done(&self) -> bool {
        self.game >= self.total_games()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::EnvSpec;
    use rand::SeedableRng;

    fn answer(env: &mut dyn Environment, rng: &mut rand::rngs::StdRng, f: impl Fn(&Request) -> Action) -> Step {
        let req = env.pending(rng);
        let acts: Vec<(usize, Action)> = req.iter().map(|r| (r.agent, f(r))).collect();
        env.resolve(&acts, rng).expect("legal")
    }

    /// A run of `p` in `variant`, with the stream the tests draw from.
    fn start(p: BargainParams, variant: Variant) -> (Box<dyn Environment>, rand::rngs::StdRng) {
        let env = EnvSpec::Bargaining(p).build(variant).expect("builds");
        (env, rand::rngs::StdRng::seed_from_u64(3))
    }

    /// The payoffs of a stage, lowest first.
    fn sorted_payoffs(s: &Step) -> Vec<f64> {
        let mut pay: Vec<f64> = s.payoffs.iter().map(|p| p.1).collect();
        pay.sort_by(f64::total_cmp);
        pay
    }

    #[test]
    fn ultimatum_accept_and_reject_payoffs_by_variant() {
        for (variant, outside) in [(Variant::C0, 0.0), (Variant::C3, 40.0)] {
            let (mut env, mut rng) = start(BargainParams::default(), variant);
            answer(env.as_mut(), &mut rng, |_| Action::Amount(30));
            let s = answer(env.as_mut(), &mut rng, |r| {
                assert_eq!(r.observation.context, Context::Offer { offer: 30, pie: 100 });
                Action::Choice(0)
            });
            assert_eq!(sorted_payoffs(&s), vec![30.0, 70.0]);
            answer(env.as_mut(), &mut rng, |_| Action::Amount(30));
            let s = answer(env.as_mut(), &mut rng, |_| Action::Choice(1));
            let responder = s.decisions[0].agent;
            let r_pay = s.payoffs.iter().find(|p| p.0 == responder).expect("paid").1;
            assert_eq!(r_pay, outside, "{variant:?} rejection payoff");
        }
    }

    #[test]
    fn battery_plays_fifty_games() {
        for game in [BargainGame::Ultimatum, BargainGame::Dictator, BargainGame::Trust] {
            let p = BargainParams { game, ..BargainParams::default() };
            let (mut env, mut rng) = start(p, Variant::C0);
            let mut games = 0;
            while !env.is_done() {
                let s = answer(env.as_mut(), &mut rng, |r| {
                    r.observation.space.sample(&mut rand::rngs::StdRng::seed_from_u64(9))
                });
                if !s.payoffs.is_empty() {
                    games += 1;
                }
            }
            assert_eq!(games, 50, "{game:?}");
        }
    }

    #[test]
    fn trust_returns_from_the_tripled_amount() {
        let p = BargainParams { game: BargainGame::Trust, ..BargainParams::default() };
        let (mut env, mut rng) = start(p, Variant::C0);
        answer(env.as_mut(), &mut rng, |_| Action::Amount(50));
        let s = answer(env.as_mut(), &mut rng, |r| {
            assert_eq!(r.observation.space, ActionSpace::Amount { min: 0, max: 150 });
            Action::Amount(60)
        });
        assert_eq!(sorted_payoffs(&s), vec![90.0, 110.0]);
        assert_eq!(s.decisions[0].scale, 150.0);
    }

    #[test]
    fn dictator_gives() {
        let p = BargainParams { game: BargainGame::Dictator, ..BargainParams::default() };
        let (mut env, mut rng) = start(p, Variant::C0);
        let s = answer(env.as_mut(), &mut rng, |_| Action::Amount(28));
        assert_eq!(sorted_payoffs(&s), vec![28.0, 72.0]);
    }

    #[test]
    fn fixed_offer_arm_presents_each_offer_twenty_times() {
        let p = BargainParams { fixed_offers: Some(FixedOffers::default()), ..BargainParams::default() };
        let (mut env, mut rng) = start(p, Variant::C3);
        let mut seen = std::collections::BTreeMap::new();
        while !env.is_done() {
            let s = answer(env.as_mut(), &mut rng, |r| {
                assert_eq!(r.observation.role, Role::Responder);
                Action::Choice(1)
            });
            *seen.entry(s.decisions[0].context.expect("offer recorded") as i64).or_insert(0) += 1;
            assert_eq!(s.payoffs, vec![(s.decisions[0].agent, 40.0)]);
        }
        assert_eq!(seen.len(), 9);
        assert!(seen.values().all(|n| *n == 20));
    }

    #[test]
    fn fixed_offers_outside_ultimatum_are_rejected() {
        let p = BargainParams {
            game: BargainGame::Dictator,
            fixed_offers: Some(FixedOffers::default()),
            ..BargainParams::default()
        };
        assert!(matches!(p.validate(), Err(EnvError::InvalidParameter { field: "fixed_offers", .. })));
    }

    #[test]
    fn shipped_variants_pie_and_outside_options() {
        assert_eq!(variants().get(Variant::C0).pie, 100);
        assert_eq!(variants().get(Variant::C0).responder_outside, 0.0);
        assert_eq!(variants().get(Variant::C3).responder_outside, 40.0);
    }
}
