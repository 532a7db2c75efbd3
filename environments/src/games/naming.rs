//! Naming game with committed minorities (Centola & Baronchelli 2015; Centola et al. 2018).
//!
//! 24 agents are paired at random; each proposes a name from a shared pool of ten and both are
//! rewarded when the names match. A convention is recorded when at least 95 % of the last 50
//! interactions match; a run is capped at 3,000 interactions.
//!
//! *Tipping arm*: a committed minority always proposes an alternative name against an
//! established convention. The convention is either written into every other agent's memory
//! at the start ([`Onset::Established`], the classical sweep) or formed first, by the same
//! agents under the canonical rule, before the committed agents are introduced
//! ([`Onset::Formed`], the arm for language models); a run in which no convention forms then
//! has no convention to overturn and records only that.
//! *Shuffled-pool arm*: every agent sees its own random permutation of the pool, so that a
//! shared prior over list position cannot masquerade as coordination.

use rand::seq::SliceRandom;
use rand::RngCore;
use serde::{Deserialize, Serialize};

pub mod convention;
pub mod network;

pub use convention::{first_convention, ConventionEvent, ConventionWindow};

use crate::error::{at_least_one, at_least_two, invalid, EnvError};
use crate::game::{
    CanonicalEffect, Direction, Divergent, EffectRule, Fallback, Game, Headline, MetricDef, NoIndicator, Rules,
    RunView, SummaryColumn, SummaryKind, Wording,
};
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
    MetricDef::secondary("convention_position", "mean 1-based position of the convention's name in the agents' lists"),
    MetricDef::secondary("convention_first_listed", "share of agents whose list shows the convention's name first"),
    MetricDef::secondary("committed_share", "committed agents as a share of the population (k/N)"),
    MetricDef::primary("overturned", "share of runs", Direction::Higher),
    MetricDef::secondary("overturn_time", "interactions"),
    MetricDef::secondary("match_share", "share of interactions"),
    MetricDef::secondary("interactions", "interactions"),
];

/// How the convention a committed minority contests comes about.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub enum Onset {
    /// Every uncommitted agent starts with a memory full of the `established` name, and the
    /// committed agents propose the `alternative` from the first interaction.
    #[default]
    Established,
    /// Every agent, the future committed ones included, plays the canonical naming game until
    /// the convention rule holds (at most `cap` interactions); only then do the first
    /// k = round(fraction × N) seats become committed to the `alternative` (or, when the
    /// convention formed on the alternative, to the `established` index), for at most `cap`
    /// more interactions. Without a convention the run ends: nothing to overturn.
    Formed,
}

impl Onset {
    fn is_established(&self) -> bool {
        *self == Onset::Established
    }
}

/// A committed minority contesting an established convention.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Tipping {
    /// Share of the population that is committed, in [0, 1]; the committed count is the
    /// nearest integer to `fraction × population` (the realised share k/N is recorded).
    #[schemars(range(min = 0.0, max = 1.0))]
    pub fraction: f64,
    /// Index of the name everyone holds at the start.
    pub established: u32,
    /// Index of the name the committed agents always propose.
    pub alternative: u32,
    /// How the contested convention comes about (left out of the run specification when it is
    /// the default, so run keys of existing studies do not change).
    #[serde(skip_serializing_if = "Onset::is_established")]
    #[schemars(extend("default" = "Established"))]
    pub onset: Onset,
}

impl Default for Tipping {
    fn default() -> Self {
        Tipping { fraction: 0.25, established: 0, alternative: 1, onset: Onset::Established }
    }
}

impl Tipping {
    /// The name the committed agents propose against a convention formed on `formed`.
    pub fn contesting(&self, formed: u32) -> u32 {
        if formed == self.alternative {
            self.established
        } else {
            self.alternative
        }
    }
}

/// Parameters of the naming game.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct NgParams {
    /// Agents in the population.
    #[schemars(range(min = 2))]
    pub population: usize,
    /// Number of names offered (the first `pool` names of the variant's list).
    #[schemars(range(min = 2))]
    pub pool: usize,
    /// Interactions each agent remembers.
    #[schemars(range(min = 1))]
    pub memory: u32,
    /// Interactions the convention rule looks back over.
    #[schemars(range(min = 1, max = super::MAX_DECISIONS))]
    pub window: u32,
    /// Share of matches in the window that records a convention, in (0, 1].
    #[schemars(extend("exclusiveMinimum" = 0.0, "maximum" = 1.0))]
    pub threshold: f64,
    /// Most interactions in a run.
    #[schemars(range(min = 1))]
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
    #[schemars(extend("default" = null))]
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

    /// The tipping arm whose convention forms first, if this is one.
    fn formed_first(&self) -> Option<&Tipping> {
        self.tipping.as_ref().filter(|t| t.onset == Onset::Formed)
    }
}

impl Game for NgParams {
    fn validate(&self) -> Result<(), EnvError> {
        at_least_two("population", self.population)?;
        if self.pool < 2 {
            return Err(invalid("pool", format!("needs at least 2 names, got {}", self.pool)));
        }
        at_least_one("memory", self.memory)?;
        at_least_one("window", self.window)?;
        if u64::from(self.window) > super::MAX_DECISIONS {
            // The convention rule keeps the window's interactions: sized before the run starts.
            return Err(invalid(
                "window",
                format!("{} interactions; a run holds at most {} decisions", self.window, super::MAX_DECISIONS),
            ));
        }
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

    crate::game::game_fields!(group: population, memory);

    /// Seats of committed agents (the first seats; pairing is random, so position is immaterial)
    /// with the name they always propose.
    /// With a convention formed first, the committed seats play as their roster says until
    /// the onset, and the environment makes their choice after it: none is committed from the
    /// start.
    fn committed_seats(&self) -> Vec<(usize, u32)> {
        match &self.tipping {
            Some(t) if t.onset == Onset::Established => {
                (0..self.committed_count()).map(|s| (s, t.alternative)).collect()
            }
            _ => Vec::new(),
        }
    }

    fn committed_later(&self) -> Vec<usize> {
        match self.formed_first() {
            Some(_) => (0..self.committed_count()).collect(),
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

    fn summary(&self, arm: &str) -> &'static [SummaryColumn] {
        const TIPPING: &[SummaryColumn] =
            &[SummaryColumn::mean("overturned", "overturned"), SummaryColumn::median("overturn_time", "median t")];
        const FORMATION: &[SummaryColumn] = &[
            SummaryColumn::mean("convention", "convention"),
            SummaryColumn::median("convention_time", "median t"),
            SummaryColumn::mean("match_share", "matches"),
        ];
        if arm.starts_with("tipping") {
            TIPPING
        } else {
            FORMATION
        }
    }

    fn headline(&self) -> &'static [Headline] {
        &[Headline { arm: "baseline", metric: "convention" }]
    }

    /// "formation of a convention in the majority of runs" (the instrument paper's canonical
    /// effects, for a rate outcome).
    fn canonical_effect(&self) -> Option<CanonicalEffect> {
        Some(CanonicalEffect {
            arm: "baseline",
            metric: "convention",
            sign: 1.0,
            rule: EffectRule::Majority,
            text: "a convention forms in the majority of runs",
        })
    }

    /// v counts mismatches: one minus the share of interactions that match.
    fn divergent(&self) -> &'static [Divergent] {
        &[Divergent {
            arm: "baseline",
            metric: "match_share",
            complement: true,
            rule: "mismatching pays: share of interactions that mismatch",
        }]
    }

    fn no_indicator(&self) -> &'static [NoIndicator] {
        &[NoIndicator { role: "*", why: "symmetric names: no option is the prosocial one" }]
    }

    fn outcomes_read_decisions(&self) -> bool {
        // Only the shuffled arm's positions come from the decisions (each seat's own order).
        self.shuffled_pool
    }

    fn outcomes(&self, run: &RunView<'_>) -> Vec<(String, f64)> {
        let seq: Vec<(u32, Option<u32>)> = run.interactions.iter().map(|i| (i.t, i.matched)).collect();
        let matched = seq.iter().filter(|x| x.1.is_some()).count() as f64;
        let mut out = vec![
            ("match_share".to_string(), matched / seq.len().max(1) as f64),
            ("interactions".to_string(), seq.len() as f64),
        ];
        if self.tipping.is_some() {
            out.push(("committed_share".into(), self.committed_count() as f64 / self.population as f64));
        }
        if let Some(t) = self.formed_first() {
            // Formation first, under the canonical rule; then the contest, with a fresh window
            // from the onset.
            let Some(formed) = first_convention(seq.iter().copied(), self.window, self.threshold, |_| true) else {
                out.push(("convention".into(), 0.0));
                return out;
            };
            out.push(("convention".into(), 1.0));
            out.push(("convention_time".into(), f64::from(formed.t)));
            out.push(("convention_name".into(), f64::from(formed.name)));
            out.extend(self.convention_position(run, formed.name));
            let alternative = t.contesting(formed.name);
            let after = seq.iter().copied().filter(|(i, _)| *i > formed.t);
            let ev = first_convention(after, self.window, self.threshold, |n| n == alternative);
            out.push(("overturned".into(), if ev.is_some() { 1.0 } else { 0.0 }));
            if let Some(ev) = ev {
                out.push(("overturn_time".into(), f64::from(ev.t - formed.t)));
            }
            return out;
        }
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
                out.extend(self.convention_position(run, ev.name));
            }
        }
        out
    }

    fn length_field(&self) -> &'static str {
        "cap"
    }

    fn expected_decisions(&self) -> (u64, bool) {
        let phases = if self.formed_first().is_some() { 2 } else { 1 };
        (u64::from(self.cap) * 2 * phases, true)
    }
}

impl NgParams {
    /// Where the convention's name stood in each agent's list: its mean 1-based position over
    /// the agents whose position is known, and the share of them that saw it first. In the
    /// shuffled-pool arm each decision records the position of the chosen name in the agent's
    /// own list, so an agent's position is known once it has proposed the name; in the fixed
    /// order every agent sees the name at its pool index (counted from the end where the
    /// action-order cell reversed the list).
    fn convention_position(&self, run: &RunView<'_>, name: u32) -> Vec<(String, f64)> {
        let fixed = if run.reversed_labels { self.pool as f64 - f64::from(name) } else { f64::from(name) + 1.0 };
        if !self.shuffled_pool {
            // Every seat saw the pool in the same order, so each position below is `fixed`:
            // their mean is `fixed` exactly (a sum of equal whole numbers over their count) and
            // the share listed first is all or none. Only whether a seat chose the name counts,
            // and a meeting matched on it says two did: the name of a convention always has
            // one, in the window the rule held in.
            if !run.interactions.iter().any(|i| i.matched == Some(name)) {
                return Vec::new();
            }
            return vec![
                ("convention_position".into(), fixed),
                ("convention_first_listed".into(), if fixed == 1.0 { 1.0 } else { 0.0 }),
            ];
        }
        self.positions_by_seat(run, name, fixed)
    }

    /// [`NgParams::convention_position`] from each seat's last position of the name.
    fn positions_by_seat(&self, run: &RunView<'_>, name: u32, fixed: f64) -> Vec<(String, f64)> {
        // Each seat's last position of the name, by seat (read in seat order below).
        let mut by_seat: Vec<Option<f64>> = Vec::new();
        for d in run.decisions.iter().filter(|d| d.value == f64::from(name)) {
            let position = match (self.shuffled_pool, d.context) {
                (true, Some(p)) if run.reversed_labels => Some(self.pool as f64 + 1.0 - p),
                (true, context) => context,
                (false, _) => Some(fixed),
            };
            if let Some(p) = position {
                let seat = d.seat as usize;
                if by_seat.len() <= seat {
                    by_seat.resize(seat + 1, None);
                }
                by_seat[seat] = Some(p);
            }
        }
        let positions: Vec<f64> = by_seat.into_iter().flatten().collect();
        if positions.is_empty() {
            return Vec::new();
        }
        let n = positions.len() as f64;
        vec![
            ("convention_position".into(), crate::outcome::mean(positions.iter().copied())),
            ("convention_first_listed".into(), positions.iter().filter(|p| **p == 1.0).count() as f64 / n),
        ]
    }
}

/// One run of the naming game.
pub struct NamingGame {
    params: NgParams,
    variant: Variant,
    table: NgVariant,
    /// The pool's names, shared by every observation.
    labels: std::sync::Arc<[String]>,
    /// The choice among them every decision has.
    space: ActionSpace,
    t: u32,
    pair: (usize, usize),
    orders: Option<Vec<Vec<u32>>>,
    rule: ConventionWindow,
    /// (interaction, name) at which the run's end condition was met.
    reached: Option<(u32, u32)>,
    /// With a convention formed first: the interaction at which it formed and the name the
    /// committed seats propose from then on.
    onset: Option<(u32, u32)>,
    /// The committed seats' choices in the current interaction (made by the environment after
    /// the onset, not asked of their agents).
    automatic: Vec<(usize, u32)>,
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
        let labels: std::sync::Arc<[String]> = table.names[..params.pool].to_vec().into();
        Ok(NamingGame {
            params,
            variant,
            table,
            space: ActionSpace::Choice { labels: labels.clone() },
            labels,
            t: 0,
            pair: (0, 1),
            orders: None,
            rule,
            reached: None,
            onset: None,
            automatic: Vec::new(),
        })
    }

    /// The interaction and name at which the end condition was met, if it was.
    pub fn reached(&self) -> Option<(u32, u32)> {
        self.reached
    }

    fn labels(&self) -> std::sync::Arc<[String]> {
        self.labels.clone()
    }

    /// Writes the order in which `agent` sees the pool into `out` (its contents replaced).
    fn order_into(&mut self, agent: usize, rng: &mut dyn RngCore, out: &mut Vec<u32>) {
        let pool = self.params.pool as u32;
        if !self.params.shuffled_pool {
            // The pool in its own order. A list already that long holds it: the lists of a
            // game's requests are written here only (its stages' requests are rewritten in
            // place, and an agent reads its observation without changing it).
            if out.len() != pool as usize {
                out.clear();
                out.extend(0..pool);
            }
            debug_assert!(out.iter().copied().eq(0..pool));
            return;
        }
        out.clear();
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
        out.extend_from_slice(&orders[agent]);
    }
}

/// The two names of a meeting, checked as [`check_actions`] checks them (the same errors), without
/// a list per meeting.
fn check_pair(actions: &[(usize, Action)], (a, b): (usize, usize), space: &ActionSpace) -> Result<[u32; 2], EnvError> {
    match actions {
        [(x, first), (y, second)] if (*x, *y) == (a, b) && space.contains(first) && space.contains(second) => {
            Ok([choice_index(first), choice_index(second)])
        }
        _ => {
            let checked = check_actions(actions, &[(a, space), (b, space)])?;
            Ok([choice_index(checked[0]), choice_index(checked[1])])
        }
    }
}

impl Environment for NamingGame {
    fn kind(&self) -> EnvKind {
        EnvKind::NamingGame
    }

    fn population(&self) -> usize {
        self.params.population
    }

    fn next_stage(&mut self, rng: &mut dyn RngCore) -> Vec<Request> {
        let mut out = Vec::new();
        self.pending_into(rng, &mut out);
        out
    }

    fn pending_into(&mut self, rng: &mut dyn RngCore, out: &mut Vec<Request>) {
        if self.is_done() {
            out.clear();
            return;
        }
        let (a, b) = crate::draw_pair(rng, self.params.population);
        self.pair = (a, b);
        let bounds = PayoffBounds {
            min: self.table.match_payoff.min(self.table.mismatch_payoff),
            mean_abs: (self.table.match_payoff.abs() + self.table.mismatch_payoff.abs()) / 2.0,
        };
        let committed = self.params.committed_count();
        self.automatic.clear();
        if let Some((_, name)) = self.onset {
            self.automatic.extend([a, b].into_iter().filter(|s| *s < committed).map(|s| (s, name)));
        }
        // The last stage's requests are rewritten in place: their lists of names keep their
        // memory.
        let mut kept = 0;
        for agent in [a, b] {
            if self.automatic.iter().any(|(s, _)| *s == agent) {
                continue;
            }
            if kept == out.len() {
                out.push(Request {
                    agent,
                    observation: Observation {
                        env: EnvKind::NamingGame,
                        variant: self.variant,
                        role: Role::Namer,
                        round: 0,
                        rounds: None,
                        space: ActionSpace::Choice { labels: self.labels() },
                        context: Context::Names { order: Vec::new() },
                        payoffs: bounds,
                        memory: self.params.memory,
                    },
                });
            }
            let r = &mut out[kept];
            r.agent = agent;
            let o = &mut r.observation;
            (o.env, o.variant, o.role, o.round, o.rounds) =
                (EnvKind::NamingGame, self.variant, Role::Namer, self.t + 1, None);
            if !matches!(&o.space, ActionSpace::Choice { labels } if std::sync::Arc::ptr_eq(labels, &self.labels)) {
                o.space = ActionSpace::Choice { labels: self.labels() };
            }
            (o.payoffs, o.memory) = (bounds, self.params.memory);
            if !matches!(o.context, Context::Names { .. }) {
                o.context = Context::Names { order: Vec::new() };
            }
            if let Context::Names { order } = &mut o.context {
                self.order_into(agent, rng, order);
            }
            kept += 1;
        }
        out.truncate(kept);
    }

    fn resolve(&mut self, actions: &[(usize, Action)], rng: &mut dyn RngCore) -> Result<Step, EnvError> {
        let mut step = Step::default();
        self.resolve_into(actions, rng, &mut step)?;
        Ok(step)
    }

    fn resolve_into(
        &mut self,
        actions: &[(usize, Action)],
        _rng: &mut dyn RngCore,
        step: &mut Step,
    ) -> Result<(), EnvError> {
        let (a, b) = self.pair;
        let merged: Vec<(usize, Action)>;
        let actions = if self.automatic.is_empty() {
            actions
        } else {
            let auto = |s: usize| self.automatic.iter().find(|(x, _)| *x == s).map(|(_, n)| Action::Choice(*n));
            let asked = |s: usize| actions.iter().find(|(x, _)| *x == s).map(|(_, act)| act.clone());
            merged = [a, b].into_iter().filter_map(|s| auto(s).or_else(|| asked(s)).map(|act| (s, act))).collect();
            &merged[..]
        };
        let names = check_pair(actions, (a, b), &self.space)?;
        self.t += 1;
        let matched = names[0] == names[1];
        let pay = if matched { self.table.match_payoff } else { self.table.mismatch_payoff };
        self.rule.push(matched.then_some(names[0]));
        if self.reached.is_none() {
            if let Some(name) = self.rule.convention() {
                match (&self.params.tipping, self.onset) {
                    // Formation first: the convention is the onset, and the contest starts
                    // with a fresh window.
                    (Some(t), None) if t.onset == Onset::Formed => {
                        self.onset = Some((self.t, t.contesting(name)));
                        self.rule = ConventionWindow::new(self.params.window, self.params.threshold);
                    }
                    (Some(_), Some((_, alternative))) if name == alternative => self.reached = Some((self.t, name)),
                    (Some(t), None) if name == t.alternative => self.reached = Some((self.t, name)),
                    (Some(_), _) => {}
                    (None, _) => self.reached = Some((self.t, name)),
                }
            }
        }
        // The position of each chosen name in its agent's own list (the shuffled-pool arm), so
        // that the convention's position can be read from the records.
        let position = |seat: usize, name: u32| {
            self.orders.as_ref().and_then(|o| o[seat].iter().position(|n| *n == name)).map(|p| p as f64 + 1.0)
        };
        let positions = [position(a, names[0]), position(b, names[1])];
        step.round = self.t;
        step.interaction = Some(Interaction { a, b, name_a: names[0], name_b: names[1], matched });
        step.decisions.clear();
        step.payoffs.clear();
        // The last step's feedback is rewritten in place: its lists keep their memory.
        step.feedback.truncate(2);
        for (k, (seat, other)) in [(a, b), (b, a)].into_iter().enumerate() {
            step.decisions.push(DecisionRow::choice(seat, Role::Namer, names[k], positions[k]));
            step.payoffs.push((seat, pay));
            if step.feedback.len() == k {
                let fb = Feedback { round: 0, own: Vec::new(), others: Vec::new(), partner: None, payoff: 0.0 };
                step.feedback.push((seat, fb));
            }
            let (s, fb) = &mut step.feedback[k];
            *s = seat;
            fb.round = self.t;
            fb.own.clear();
            fb.own.push((Role::Namer, Action::Choice(names[k])));
            fb.others.clear();
            fb.others.push(Action::Choice(names[1 - k]));
            fb.partner = Some(other);
            fb.payoff = pay;
        }
        Ok(())
    }

    fn is_done(&self) -> bool {
        let stopped = self.params.stop_at_convention && self.reached.is_some();
        match (self.params.formed_first(), self.onset) {
            // No convention within the cap: nothing to overturn. After the onset the contest
            // has a cap of its own.
            (Some(_), None) => self.t >= self.params.cap,
            (Some(_), Some((onset, _))) => self.t - onset >= self.params.cap || stopped,
            (None, _) => self.t >= self.params.cap || stopped,
        }
    }

    fn prehistory(&self, agent: usize) -> Vec<Feedback> {
        let Some(t) = self.params.tipping.as_ref().filter(|t| t.onset == Onset::Established) else {
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
mod tests;
