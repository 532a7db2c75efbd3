//! Naming game with committed minorities (Centola & Baronchelli 2015; Centola et al. 2018).
//!
//! 24 agents are paired at random; each proposes a name from a shared pool of ten and both are
//! rewarded when the names match. A convention is recorded when at least 95 % of the last 50
//! interactions match; a run is capped at 3,000 interactions.
//!
//! *Tipping arm*: a committed minority always proposes an alternative name against a
//! convention that every other agent holds at the start (their memory is full of it).
//! *Shuffled-pool arm*: every agent sees its own random permutation of the pool, so that a
//! shared prior over list position cannot masquerade as coordination.

use rand::seq::SliceRandom;
use rand::RngCore;
use serde::{Deserialize, Serialize};

pub mod convention;
pub mod network;

pub use convention::{first_convention, ConventionEvent, ConventionWindow};

use crate::error::{at_least_one, invalid, EnvError};
use crate::game::{Direction, Fallback, Game, MetricDef, Rules, RunView, SummaryKind, Wording};
use crate::kind::{EnvKind, Role, Variant};
use crate::observation::{Context, Feedback, Observation, PayoffBounds};
use crate::DecisionRow;
use crate::{check_actions, choice_index, num, Action, ActionSpace, Environment, Interaction, Request, Step};

/// One line for `agora list environments`.
pub const DESCRIPTION: &str =
    "naming game: 24 agents, pool of 10 names, memory 5, convention at 95% of last 50 matching, cap 3000; tipping and shuffled-pool arms";

/// Naming game pool and rewards of one variant.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NgVariant {
    /// The situation as a participant reads it.
    pub cover_story: String,
    /// The pool, in the order the baseline lists it; a run offers the first `pool` names.
    pub names: Vec<String>,
    /// What each agent earns when the two names match.
    pub match_payoff: f64,
    /// What each agent earns when they differ.
    pub mismatch_payoff: f64,
}

crate::shipped_variants!(variants, NgVariant, "naming-game.ron", |v: &NgVariant| {
    if v.names.len() >= 2 {
        Ok(())
    } else {
        Err("needs at least two names".to_string())
    }
});

/// The metrics of a run: whether and when a convention formed (or, in the tipping arm, the
/// committed minority's name took over), and how often meetings matched.
pub const METRICS: &[MetricDef] = &[
    MetricDef::primary("convention", "share of runs", Direction::Higher),
    MetricDef::secondary("convention_time", "interactions"),
    MetricDef::secondary("convention_name", "index of the name in the variant's pool"),
    MetricDef::primary("overturned", "share of runs", Direction::Higher),
    MetricDef::secondary("overturn_time", "interactions"),
    MetricDef::secondary("match_share", "share of interactions"),
    MetricDef::secondary("interactions", "interactions"),
];

/// A committed minority contesting an established convention.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Tipping {
    /// Share of the population that is committed, in [0, 1]; the committed count is the
    /// nearest integer to `fraction × population`.
    pub fraction: f64,
    /// Index of the name everyone holds at the start.
    pub established: u32,
    /// Index of the name the committed agents always propose.
    pub alternative: u32,
}

impl Default for Tipping {
    fn default() -> Self {
        Tipping { fraction: 0.25, established: 0, alternative: 1 }
    }
}

/// Parameters of the naming game.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct NgParams {
    /// Agents in the population.
    pub population: usize,
    /// Number of names offered (the first `pool` names of the variant's list).
    pub pool: usize,
    /// Interactions each agent remembers.
    pub memory: u32,
    /// Interactions the convention rule looks back over.
    pub window: u32,
    /// Share of matches in the window that records a convention.
    pub threshold: f64,
    /// Most interactions in a run.
    pub cap: u32,
    /// End the run once the convention (in the tipping arm: the alternative) is recorded.
    pub stop_at_convention: bool,
    /// The tipping arm: a committed minority against an established convention.
    pub tipping: Option<Tipping>,
    /// The shuffled-pool arm: each agent sees its own permutation of the pool.
    pub shuffled_pool: bool,
    /// What an LLM decision without a legal answer falls back to; by default the arm's own
    /// rule: the first-listed name in the baseline, a random name in the shuffled-pool arm
    /// (left out of the run specification when unset, so run keys do not change).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fallback: Option<Fallback>,
}

impl Default for NgParams {
    fn default() -> Self {
        NgParams {
            population: 24,
            pool: 10,
            memory: 5,
            window: 50,
            threshold: 0.95,
            cap: 3000,
            stop_at_convention: true,
            tipping: None,
            shuffled_pool: false,
            fallback: None,
        }
    }
}

impl NgParams {
    /// Number of committed agents.
    pub fn committed_count(&self) -> usize {
        self.tipping.as_ref().map_or(0, |t| (t.fraction * self.population as f64).round() as usize)
    }
}

impl Game for NgParams {
    fn kind(&self) -> EnvKind {
        EnvKind::NamingGame
    }

    fn validate(&self) -> Result<(), EnvError> {
        if self.population < 2 {
            return Err(invalid("population", format!("must be at least 2, got {}", self.population)));
        }
        if self.pool < 2 {
            return Err(invalid("pool", format!("needs at least 2 names, got {}", self.pool)));
        }
        at_least_one("memory", self.memory)?;
        at_least_one("window", self.window)?;
        if !(self.threshold > 0.0 && self.threshold <= 1.0) {
            return Err(invalid("threshold", format!("must lie in (0, 1], got {}", self.threshold)));
        }
        at_least_one("cap", self.cap)?;
        if let Some(t) = &self.tipping {
            if !(0.0..=1.0).contains(&t.fraction) {
                return Err(invalid("tipping.fraction", format!("must lie in [0, 1], got {}", t.fraction)));
            }
            if t.established as usize >= self.pool || t.alternative as usize >= self.pool {
                return Err(invalid("tipping", format!("names must index the pool of {}", self.pool)));
            }
            if t.established == t.alternative {
                return Err(invalid("tipping", "the alternative must differ from the established name"));
            }
            if self.committed_count() >= self.population {
                return Err(invalid("tipping.fraction", "leaves no uncommitted agent"));
            }
        }
        Ok(())
    }

    fn build_env(&self, variant: Variant) -> Result<Box<dyn Environment>, EnvError> {
        Ok(Box::new(NamingGame::new(self.clone(), variant, variants().get(variant).clone())?))
    }

    fn population(&self) -> usize {
        self.population
    }

    fn memory(&self) -> u32 {
        self.memory
    }

    fn set_memory(&mut self, memory: u32) {
        self.memory = memory;
    }

    fn set_group_size(&mut self, size: usize) -> bool {
        self.population = size;
        true
    }

    /// Seats of committed agents (the first seats; pairing is random, so position is immaterial)
    /// with the name they always propose.
    fn committed_seats(&self) -> Vec<(usize, u32)> {
        match &self.tipping {
            Some(t) => (0..self.committed_count()).map(|s| (s, t.alternative)).collect(),
            None => Vec::new(),
        }
    }

    fn arm(&self) -> String {
        match (&self.tipping, self.shuffled_pool) {
            (Some(_), true) => "tipping-shuffled-pool".into(),
            (Some(_), false) => "tipping".into(),
            (None, true) => "shuffled-pool".into(),
            (None, false) => "baseline".into(),
        }
    }

    fn fallback(&self) -> Fallback {
        self.fallback.unwrap_or(if self.shuffled_pool { Fallback::Random } else { Fallback::FirstListed })
    }

    fn wording(&self, variant: Variant) -> Wording {
        Wording {
            paradigm: "naming game",
            keywords: &["naming game", "coordination game"],
            labels: variants().get(variant).names.clone().into(),
            unit: "round",
            history_columns: vec!["you picked", "your partner picked"],
            narrative_verb: "you picked",
            fixed_partner: false,
            summary: SummaryKind::Matches,
        }
    }

    fn rules(&self, obs: &Observation, reversed: bool) -> Result<Rules, EnvError> {
        let d = variants().get(obs.variant);
        let mut names = obs.labels_shown(reversed);
        if names.is_empty() {
            names = d.names[..self.pool.min(d.names.len())].to_vec();
        }
        Ok(Rules {
            template: "naming-game.j2",
            values: serde_json::json!({
                "cover_story": d.cover_story, "n": self.population, "names": names,
                "match_payoff": num(d.match_payoff), "mismatch_payoff": num(d.mismatch_payoff),
            }),
        })
    }

    fn question(&self, _obs: &Observation) -> String {
        "Which name do you pick?".into()
    }

    fn metrics(&self) -> &'static [MetricDef] {
        METRICS
    }

    fn outcomes(&self, run: &RunView<'_>) -> Vec<(String, f64)> {
        let seq: Vec<(u32, Option<u32>)> = run.interactions.iter().map(|i| (i.t, i.matched)).collect();
        let matched = seq.iter().filter(|x| x.1.is_some()).count() as f64;
        let mut out = vec![
            ("match_share".to_string(), matched / seq.len().max(1) as f64),
            ("interactions".to_string(), seq.len() as f64),
        ];
        let (formed, time) = match &self.tipping {
            None => ("convention", "convention_time"),
            Some(_) => ("overturned", "overturn_time"),
        };
        let alternative = self.tipping.as_ref().map(|t| t.alternative);
        let ev = first_convention(seq, self.window, self.threshold, |n| alternative.is_none_or(|a| a == n));
        out.push((formed.into(), if ev.is_some() { 1.0 } else { 0.0 }));
        if let Some(ev) = ev {
            out.push((time.into(), f64::from(ev.t)));
            if self.tipping.is_none() {
                // Which name the convention formed on: compared across the baseline and the
                // shuffled-pool arm, it shows whether a prior over list position or over the
                // label itself drives coordination.
                out.push(("convention_name".into(), f64::from(ev.name)));
            }
        }
        out
    }

    fn expected_decisions(&self) -> (u64, bool) {
        (u64::from(self.cap) * 2, true)
    }
}

/// One run of the naming game.
pub struct NamingGame {
    params: NgParams,
    variant: Variant,
    table: NgVariant,
    /// The pool's names, shared by every observation.
    labels: std::sync::Arc<[String]>,
    t: u32,
    pair: (usize, usize),
    orders: Option<Vec<Vec<u32>>>,
    rule: ConventionWindow,
    /// (interaction, name) at which the run's end condition was met.
    reached: Option<(u32, u32)>,
}

impl NamingGame {
    /// A run with the given parameters and variant table; fails when the variant has fewer names than the pool.
    pub fn new(params: NgParams, variant: Variant, table: NgVariant) -> Result<Self, EnvError> {
        if params.pool > table.names.len() {
            return Err(invalid(
                "pool",
                format!(
                    "variant {} has {} names, fewer than the pool of {}",
                    variant.as_str(),
                    table.names.len(),
                    params.pool
                ),
            ));
        }
        let rule = ConventionWindow::new(params.window, params.threshold);
        let labels = table.names[..params.pool].to_vec().into();
        Ok(NamingGame { params, variant, table, labels, t: 0, pair: (0, 1), orders: None, rule, reached: None })
    }

    /// The interaction and name at which the end condition was met, if it was.
    pub fn reached(&self) -> Option<(u32, u32)> {
        self.reached
    }

    fn labels(&self) -> std::sync::Arc<[String]> {
        self.labels.clone()
    }

    fn order(&mut self, agent: usize, rng: &mut dyn RngCore) -> Vec<u32> {
        let pool = self.params.pool as u32;
        if !self.params.shuffled_pool {
            return (0..pool).collect();
        }
        let n = self.params.population;
        let orders = self.orders.get_or_insert_with(|| {
            (0..n)
                .map(|_| {
                    let mut o: Vec<u32> = (0..pool).collect();
                    o.shuffle(rng);
                    o
                })
                .collect()
        });
        orders[agent].clone()
    }
}

impl Environment for NamingGame {
    fn kind(&self) -> EnvKind {
        EnvKind::NamingGame
    }

    fn population(&self) -> usize {
        self.params.population
    }

    fn pending(&mut self, rng: &mut dyn RngCore) -> Vec<Request> {
        if self.is_done() {
            return Vec::new();
        }
        let (a, b) = crate::draw_pair(rng, self.params.population);
        self.pair = (a, b);
        let bounds = PayoffBounds {
            min: self.table.match_payoff.min(self.table.mismatch_payoff),
            mean_abs: (self.table.match_payoff.abs() + self.table.mismatch_payoff.abs()) / 2.0,
        };
        let labels = self.labels();
        [a, b]
            .into_iter()
            .map(|agent| Request {
                agent,
                observation: Observation {
                    env: EnvKind::NamingGame,
                    variant: self.variant,
                    role: Role::Namer,
                    round: self.t + 1,
                    rounds: None,
                    space: ActionSpace::Choice { labels: labels.clone() },
                    context: Context::Names { order: self.order(agent, rng) },
                    payoffs: bounds,
                    memory: self.params.memory,
                },
            })
            .collect()
    }

    fn resolve(&mut self, actions: &[(usize, Action)], _rng: &mut dyn RngCore) -> Result<Step, EnvError> {
        let space = ActionSpace::Choice { labels: self.labels() };
        let (a, b) = self.pair;
        let names: Vec<u32> =
            check_actions(actions, &[(a, &space), (b, &space)])?.into_iter().map(choice_index).collect();
        self.t += 1;
        let matched = names[0] == names[1];
        let pay = if matched { self.table.match_payoff } else { self.table.mismatch_payoff };
        self.rule.push(matched.then_some(names[0]));
        if self.reached.is_none() {
            if let Some(name) = self.rule.convention() {
                let counts = match &self.params.tipping {
                    Some(t) => name == t.alternative,
                    None => true,
                };
                if counts {
                    self.reached = Some((self.t, name));
                }
            }
        }
        let mut step = Step {
            round: self.t,
            interaction: Some(Interaction { a, b, name_a: names[0], name_b: names[1], matched }),
            ..Step::default()
        };
        for (k, (seat, other)) in [(a, b), (b, a)].into_iter().enumerate() {
            step.decisions.push(DecisionRow {
                agent: seat,
                role: Role::Namer,
                action: Action::Choice(names[k]),
                value: f64::from(names[k]),
                scale: 1.0,
                context: None,
            });
            step.payoffs.push((seat, pay));
            step.feedback.push((
                seat,
                Feedback {
                    round: self.t,
                    own: vec![(Role::Namer, Action::Choice(names[k]))],
                    others: vec![Action::Choice(names[1 - k])],
                    partner: Some(other),
                    payoff: pay,
                },
            ));
        }
        Ok(step)
    }

    fn is_done(&self) -> bool {
        self.t >= self.params.cap || (self.params.stop_at_convention && self.reached.is_some())
    }

    fn prehistory(&self, agent: usize) -> Vec<Feedback> {
        let Some(t) = &self.params.tipping else {
            return Vec::new();
        };
        if agent < self.params.committed_count() {
            return Vec::new();
        }
        (0..self.params.memory)
            .map(|_| Feedback {
                round: 0,
                own: vec![(Role::Namer, Action::Choice(t.established))],
                others: vec![Action::Choice(t.established)],
                partner: None,
                payoff: self.table.match_payoff,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::EnvSpec;
    use rand::SeedableRng;

    #[test]
    fn all_matching_play_records_a_convention_at_interaction_50() {
        let mut env = EnvSpec::NamingGame(NgParams::default()).build(Variant::C0).expect("builds");
        let mut rng = rand::rngs::StdRng::seed_from_u64(5);
        let mut last = None;
        while !env.is_done() {
            let req = env.pending(&mut rng);
            let acts: Vec<(usize, Action)> = req.iter().map(|r| (r.agent, Action::Choice(4))).collect();
            let s = env.resolve(&acts, &mut rng).expect("legal");
            assert!(s.interaction.as_ref().expect("recorded").matched);
            last = Some(s.round);
        }
        assert_eq!(last, Some(50));
    }

    #[test]
    fn never_matching_play_runs_to_the_cap() {
        let p = NgParams { cap: 300, ..NgParams::default() };
        let mut env = EnvSpec::NamingGame(p).build(Variant::C0).expect("builds");
        let mut rng = rand::rngs::StdRng::seed_from_u64(5);
        let mut steps = 0;
        while !env.is_done() {
            let req = env.pending(&mut rng);
            assert_ne!(req[0].agent, req[1].agent);
            let acts = vec![(req[0].agent, Action::Choice(0)), (req[1].agent, Action::Choice(1))];
            env.resolve(&acts, &mut rng).expect("legal");
            steps += 1;
        }
        assert_eq!(steps, 300);
    }

    #[test]
    fn c3_rewards_mismatching() {
        let mut env = EnvSpec::NamingGame(NgParams::default()).build(Variant::C3).expect("builds");
        let mut rng = rand::rngs::StdRng::seed_from_u64(5);
        let req = env.pending(&mut rng);
        let s = env
            .resolve(&[(req[0].agent, Action::Choice(0)), (req[1].agent, Action::Choice(1))], &mut rng)
            .expect("legal");
        assert_eq!(s.payoffs[0].1, 100.0);
    }

    #[test]
    fn tipping_arm_seats_and_prehistory() {
        let p = NgParams {
            tipping: Some(Tipping { fraction: 0.25, established: 0, alternative: 1 }),
            ..NgParams::default()
        };
        assert_eq!(p.committed_count(), 6);
        assert_eq!(p.committed_seats()[5], (5, 1));
        let env = EnvSpec::NamingGame(p.clone()).build(Variant::C0).expect("builds");
        assert!(env.prehistory(0).is_empty(), "committed agents need no memory");
        let h = env.prehistory(10);
        assert_eq!(h.len(), 5);
        assert!(h.iter().all(|f| f.others == vec![Action::Choice(0)]));
        let bad = NgParams { tipping: Some(Tipping { fraction: 1.5, ..Tipping::default() }), ..NgParams::default() };
        assert!(matches!(bad.validate(), Err(EnvError::InvalidParameter { field: "tipping.fraction", .. })));
    }

    #[test]
    fn tipping_ends_only_on_the_alternative() {
        let p = NgParams { tipping: Some(Tipping::default()), cap: 200, ..NgParams::default() };
        let mut env = EnvSpec::NamingGame(p).build(Variant::C0).expect("builds");
        let mut rng = rand::rngs::StdRng::seed_from_u64(5);
        // Everyone keeps the established name: a convention on it is no tipping.
        while !env.is_done() {
            let req = env.pending(&mut rng);
            let acts: Vec<(usize, Action)> = req.iter().map(|r| (r.agent, Action::Choice(0))).collect();
            env.resolve(&acts, &mut rng).expect("legal");
        }
    }

    #[test]
    fn shuffled_pool_gives_each_agent_its_own_order() {
        let p = NgParams { shuffled_pool: true, ..NgParams::default() };
        let mut env = EnvSpec::NamingGame(p).build(Variant::C0).expect("builds");
        let mut rng = rand::rngs::StdRng::seed_from_u64(5);
        let mut orders = std::collections::BTreeSet::new();
        for _ in 0..40 {
            let req = env.pending(&mut rng);
            for r in &req {
                let Context::Names { order } = &r.observation.context else { panic!("names context") };
                let mut sorted = order.clone();
                sorted.sort();
                assert_eq!(sorted, (0..10).collect::<Vec<u32>>());
                orders.insert(order.clone());
            }
            let acts: Vec<(usize, Action)> = req.iter().map(|r| (r.agent, Action::Choice(0))).collect();
            env.resolve(&acts, &mut rng).expect("legal");
        }
        assert!(orders.len() > 5, "orders differ between agents");
    }

    #[test]
    fn pool_smaller_than_two_is_rejected() {
        let p = NgParams { pool: 1, ..NgParams::default() };
        assert!(matches!(p.validate(), Err(EnvError::InvalidParameter { field: "pool", .. })));
    }

    #[test]
    fn shipped_variants_pool_and_rewards() {
        assert_eq!(variants().get(Variant::C0).names.len(), 10);
        assert!(variants().get(Variant::C0).match_payoff > variants().get(Variant::C0).mismatch_payoff);
        assert!(variants().get(Variant::C3).match_payoff < variants().get(Variant::C3).mismatch_payoff);
    }

    #[test]
    fn the_fallback_follows_the_arm_and_leaves_run_keys_alone() {
        assert_eq!(NgParams::default().fallback(), Fallback::FirstListed);
        assert_eq!(NgParams { shuffled_pool: true, ..NgParams::default() }.fallback(), Fallback::Random);
        let set = NgParams { fallback: Some(Fallback::Random), ..NgParams::default() };
        assert_eq!(set.fallback(), Fallback::Random);
        // Unset, the field is not serialised: the run keys of existing studies are unchanged.
        let json = serde_json::to_string(&NgParams::default()).expect("serialises");
        assert!(!json.contains("fallback"), "{json}");
    }

    #[test]
    fn outcomes_record_the_name_a_convention_formed_on() {
        use crate::game::RecordedInteraction;
        let interactions: Vec<RecordedInteraction> =
            (1..=60).map(|t| RecordedInteraction { t, matched: Some(if t % 7 == 0 { 2 } else { 4 }) }).collect();
        let out = NgParams::default().outcomes(&RunView {
            variant: Variant::C0,
            decisions: &[],
            interactions: &interactions,
        });
        let get = |n: &str| out.iter().find(|(k, _)| k == n).map(|x| x.1);
        assert_eq!(get("convention"), Some(1.0));
        assert_eq!(get("convention_time"), Some(50.0));
        assert_eq!(get("convention_name"), Some(4.0), "the name most matched on in the window");
        let tipping = NgParams { tipping: Some(Tipping::default()), ..NgParams::default() };
        let out = tipping.outcomes(&RunView { variant: Variant::C0, decisions: &[], interactions: &interactions });
        assert!(out.iter().all(|(k, _)| k != "convention_name"), "the tipping arm's name is its alternative");
    }
}
