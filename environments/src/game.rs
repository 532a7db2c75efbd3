//! The one trait a game implements to describe itself, and the types its description uses.
//!
//! A game's parameters (the value a study file writes, e.g. `PrisonersDilemma(rounds: 10)`)
//! implement [`Game`]: validation, population, memory, expected decisions, the wording a
//! human participant would be shown, the metric definitions, and the run-level outcomes
//! computed from what a run recorded. Everything else about a run is the [`Environment`] the
//! game builds for one variant.

use std::sync::Arc;

use crate::action::Action;
use crate::error::EnvError;
use crate::kind::{Role, Variant};
use crate::observation::{Feedback, Observation};
use crate::Environment;

/// How the human literature moves an outcome, for the directional claims and the report.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Direction {
    /// Humans show more of it than the game-theoretic prediction (or it rises over rounds).
    Higher,
    /// Humans show less of it (or it falls over rounds).
    Lower,
    /// No directional claim.
    None,
}

/// What counts as payoff-consistent play under the divergent C3 payoffs, for one metric.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum C3Rule {
    /// The metric is the share of decisions consistent with the C3 payoffs already.
    ShareConsistent,
    /// Higher values are the profitable direction under C3.
    Higher,
    /// Lower values are the profitable direction under C3.
    Lower,
}

/// One run-level outcome a game reports.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct MetricDef {
    /// Name in the `metrics` table (`cooperation`, `contribution_r1`, ...); a family of
    /// metrics is written with a placeholder (`accept_{offer}`).
    pub name: &'static str,
    /// Unit, as a reader would say it (`share of rounds`, `points`, `interactions`).
    pub unit: &'static str,
    /// Whether the metric is a primary outcome of the game.
    pub primary: bool,
    /// How the human literature moves it.
    pub human_direction: Direction,
    /// How it is read under the C3 payoffs, if it is.
    pub c3: Option<C3Rule>,
}

impl MetricDef {
    /// A secondary metric without a human direction or C3 reading.
    pub const fn secondary(name: &'static str, unit: &'static str) -> MetricDef {
        MetricDef { name, unit, primary: false, human_direction: Direction::None, c3: None }
    }

    /// A primary metric.
    pub const fn primary(name: &'static str, unit: &'static str, human_direction: Direction) -> MetricDef {
        MetricDef { name, unit, primary: true, human_direction, c3: None }
    }

    /// The same metric with a C3 reading.
    pub const fn with_c3(self, rule: C3Rule) -> MetricDef {
        MetricDef { c3: Some(rule), ..self }
    }
}

/// How a canonical human effect is read from the runs of one cell.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum EffectRule {
    /// A run-level change (last minus first round, or the modelled change over the rounds):
    /// the cell's statistic is the median of its runs' changes, and the effect keeps its sign
    /// where sign × median > 0.
    Change,
    /// A 0/1 run-level outcome whose human effect is that it happens in the majority of runs:
    /// the statistic is the share of runs where it happened minus one half.
    Majority,
}

/// The canonical human effect of an environment, as the instrument paper ("Benchmarking large
/// language model agent societies against human behavioural distributions") defines it:
///
/// > "the change in contributions between the first and last round, the modelled change in
/// > cooperation across the ten rounds, or, for a rate outcome, formation of a convention in
/// > the majority of runs."
///
/// One per environment at most; Tier 2 reads it for every claim of the environment (sign
/// stability S over the baseline and the cells of each level, and not reversed under C3).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct CanonicalEffect {
    /// The arm the effect is read from.
    pub arm: &'static str,
    /// The run-level metric holding each run's effect (one of the game's [`MetricDef`]s).
    pub metric: &'static str,
    /// +1: the human effect is a rise (or formation); −1: a decline.
    pub sign: f64,
    /// How a cell's statistic is read.
    pub rule: EffectRule,
    /// The effect in words, as the verdicts name it.
    pub text: &'static str,
}

/// A column of the table printed after a run (`agora run`, `agora summary`): a metric of one
/// arm, its header and how the runs of a condition are aggregated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SummaryColumn {
    /// The metric (one of the game's [`MetricDef`]s).
    pub metric: &'static str,
    /// The header printed above it (at most a few words).
    pub header: &'static str,
    /// Whether the runs' median is printed instead of their mean.
    pub median: bool,
}

impl SummaryColumn {
    /// A column of the runs' mean.
    pub const fn mean(metric: &'static str, header: &'static str) -> SummaryColumn {
        SummaryColumn { metric, header, median: false }
    }

    /// A column of the runs' median.
    pub const fn median(metric: &'static str, header: &'static str) -> SummaryColumn {
        SummaryColumn { metric, header, median: true }
    }
}

/// A headline outcome: the run-level metric of an arm that the cross-model tables (baselines,
/// heterogeneity, recognition) report and the perturbation family of tests contrasts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Headline {
    /// The arm.
    pub arm: &'static str,
    /// The metric (one of the game's [`MetricDef`]s).
    pub metric: &'static str,
}

/// How the divergent payoffs (C3) are read in an arm: the share v of decisions consistent with
/// the altered payoffs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Divergent {
    /// The arm.
    pub arm: &'static str,
    /// The run-level metric v is read from.
    pub metric: &'static str,
    /// Whether v is one minus the metric (the metric counts the script's choice).
    pub complement: bool,
    /// What counts as consistent with the altered payoffs, in words.
    pub rule: &'static str,
}

/// How an action indicator is read from one decision.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum IndicatorRule {
    /// 1 when the choice has this index, else 0.
    Choice(u32),
    /// (amount − min) / (max − min) of the decision's action space.
    Share,
    /// 1 when the choice is the option better for A (binary-allocation states).
    BetterForA,
}

/// The action indicator of one role: what the transcript audit's dependency estimate regresses
/// on the stated values, oriented so that 1 (or more) is the prosocial action.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Indicator {
    /// The role's name in the store.
    pub role: &'static str,
    /// The indicator's name.
    pub name: &'static str,
    /// What it is, in words.
    pub definition: &'static str,
    /// Whether it is 0 or 1 (then the logit robustness check runs too).
    pub binary: bool,
    /// How it is read from the action.
    pub rule: IndicatorRule,
}

/// A role without an action indicator, and why (`*`: every role of the game).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct NoIndicator {
    /// The role, or `*`.
    pub role: &'static str,
    /// Why no indicator is defined.
    pub why: &'static str,
}

/// What a game declares about its outcomes, as the engine records it with every run (the
/// store's `declarations` table) and the analysis reads it back: the metrics, the headline
/// outcomes, the canonical human effect, the C3 reading and the audit's action indicators.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Declaration {
    /// The environment's name in the store.
    pub environment: &'static str,
    /// Its place in the game registry (the order tables list environments in).
    pub order: usize,
    /// The run-level metrics.
    pub metrics: &'static [MetricDef],
    /// The headline outcomes, per arm.
    pub headline: &'static [Headline],
    /// The canonical human effect, where the environment has one.
    pub canonical: Option<CanonicalEffect>,
    /// The C3 reading, per arm.
    pub divergent: &'static [Divergent],
    /// The action indicators, per role.
    pub indicators: &'static [Indicator],
    /// Roles without an indicator, and why.
    pub no_indicator: &'static [NoIndicator],
}

/// How a history's summary line is written (the history-summary cell).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SummaryKind {
    /// Average points and how often the agent's choice equalled the other's.
    Matches,
    /// Average points and the agent's average decision.
    MeanDecision,
}

/// The evaluative framing of a design-level cell: the two actions relabelled in place.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Frame {
    /// The actions relabelled in moral terms (acting fairly, exploiting).
    Moral,
    /// The actions relabelled in terms of risk (the riskier, the safer option).
    Risk,
}

/// How a framing cell relabels one role's two actions in place: the framed labels stand
/// wherever the variant's labels would (the rules, the question, the answer schema, the
/// history), and a reply is read against them. The choice index keeps its meaning.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Framed {
    /// The role whose two actions are relabelled.
    pub role: Role,
    /// The labels in semantic order: `labels[i]` replaces the label of choice `i`.
    pub labels: [&'static str; 2],
}

/// What a decision falls back to when a model gives no legal answer within its attempts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub enum Fallback {
    /// A uniformly random legal action, from a stream derived from the run seed and the slot.
    Random,
    /// The first option as this agent's list shows it (the naming game's baseline arm).
    FirstListed,
}

/// The rules of a game as a participant reads them: a template of `assets/prompts/` and the
/// values it is rendered with.
#[derive(Clone, Debug, PartialEq)]
pub struct Rules {
    /// Template file name, e.g. `prisoners-dilemma.j2`.
    pub template: &'static str,
    /// The values the template reads.
    pub values: serde_json::Value,
}

/// The wording a human participant would be shown for one variant of a game: neutral, with
/// nothing about who or what the participant is.
#[derive(Clone, Debug, PartialEq)]
pub struct Wording {
    /// The paradigm's usual name (for the priming cell and the recognition probe).
    pub paradigm: &'static str,
    /// Words whose mention in a free answer means the paradigm was recognised.
    pub keywords: &'static [&'static str],
    /// The choice labels in semantic order (index 0 is the game's first action); empty where
    /// every decision is an amount.
    pub labels: Arc<[String]>,
    /// What one stage of history is called (`round`, `game`).
    pub unit: &'static str,
    /// The columns of the history table.
    pub history_columns: Vec<&'static str>,
    /// The verb phrase that opens a narrative history line (`you chose`); `{role}` is replaced
    /// by the agent's role in that stage.
    pub narrative_verb: &'static str,
    /// Whether the agent plays one fixed, named partner for the whole run.
    pub fixed_partner: bool,
    /// How the history summary is written.
    pub summary: SummaryKind,
}

impl Wording {
    /// An action as the participant reads it: a choice by its label, an amount as a number.
    pub fn format_action(&self, action: &Action) -> String {
        match action {
            Action::Choice(i) => self.labels.get(*i as usize).cloned().unwrap_or_else(|| i.to_string()),
            Action::Amount(a) => a.to_string(),
            Action::Allocation(v) => format!("{v:?}"),
        }
    }
}

/// Two-action labels in the order a prompt lists them: as written, or reversed by the
/// action-order cell.
pub fn in_order(labels: &[String], reversed: bool) -> Vec<String> {
    let mut l = labels.to_vec();
    if reversed {
        l.reverse();
    }
    l
}

/// What one run recorded, as a game reads it to compute its outcomes.
#[derive(Clone, Copy, Debug)]
pub struct RunView<'a> {
    /// The variant played.
    pub variant: Variant,
    /// Every decision, in stage order.
    pub decisions: &'a [RecordedDecision<'a>],
    /// Every pairwise meeting (naming and coordination games), in order.
    pub interactions: &'a [RecordedInteraction],
    /// Whether the run's prompts listed the options in reverse order (the action-order cell),
    /// for outcomes that depend on where an option stood in the list.
    pub reversed_labels: bool,
}

#[cfg(test)]
impl<'a> RunView<'a> {
    /// A run of C0, its labels in order, as `decisions` and `interactions` record it.
    pub(crate) fn c0(decisions: &'a [RecordedDecision<'a>], interactions: &'a [RecordedInteraction]) -> RunView<'a> {
        RunView { variant: Variant::C0, decisions, interactions, reversed_labels: false }
    }
}

/// The value of the outcome called `name`, if the run reported it.
#[cfg(test)]
pub(crate) fn outcome_named(outcomes: &[(String, f64)], name: &str) -> Option<f64> {
    outcomes.iter().find(|(k, _)| k == name).map(|x| x.1)
}

/// One recorded decision, as the store holds it (borrowing its role's name, so that reading a
/// run's records costs no allocation per decision).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RecordedDecision<'a> {
    /// Round, game or interaction, 1-based.
    pub round: u32,
    /// Seat of the agent.
    pub seat: u32,
    /// The role's store name (`player`, `contributor`, ...).
    pub role: &'a str,
    /// The numeric value of the action.
    pub value: f64,
    /// The value's natural maximum.
    pub scale: f64,
    /// What the agent faced, where that matters.
    pub context: Option<f64>,
}

/// One recorded pairwise meeting.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecordedInteraction {
    /// 1-based interaction number.
    pub t: u32,
    /// The name both proposed, when they matched.
    pub matched: Option<u32>,
}

/// A game: everything specific to it, in one place.
///
/// Implemented by the game's parameters. Six methods are required: building one run, its
/// wording and rules, its metrics and outcomes, and how many decisions a run asks for. The
/// rest has defaults that fit a two-player game without arms: no parameter to check, no
/// history shown (a game that shows history keeps its memory window), the question "Which
/// option do you choose?". Which game it is, the registry line says
/// ([`crate::EnvSpec::kind`]); a symmetric 2×2 game implements none of it (see
/// `games/two_by_two.rs`).
pub trait Game: Send + Sync + std::fmt::Debug {
    /// Checks every parameter; the error names the field. By default there is nothing to check.
    fn validate(&self) -> Result<(), EnvError> {
        Ok(())
    }

    /// Builds the environment of one run in `variant` (parameters already validated).
    fn build_env(&self, variant: Variant) -> Result<Box<dyn Environment>, EnvError>;

    /// The memory window shown to agents (stages of history in a prompt); by default none (a
    /// game of one decision).
    fn memory(&self) -> u32 {
        0
    }

    /// Sets the memory window (the perturbation library's memory cell); a game without history
    /// ignores it (the default).
    fn set_memory(&mut self, _memory: u32) {}

    /// The wording a participant reads in `variant`.
    fn wording(&self, variant: Variant) -> Wording;

    /// The rules text of `variant` as one decision's observation shows them; `reversed` lists
    /// two-action choices in the opposite order (the action-order cell).
    fn rules(&self, obs: &Observation, reversed: bool) -> Result<Rules, EnvError>;

    /// The question put to an agent before one decision.
    fn question(&self, _obs: &Observation) -> String {
        "Which option do you choose?".into()
    }

    /// The run-level metrics this game reports.
    fn metrics(&self) -> &'static [MetricDef];

    /// Computes the run-level outcomes from what the run recorded, in [`Game::metrics`] order
    /// (a metric without a value for this run is left out).
    fn outcomes(&self, run: &RunView<'_>) -> Vec<(String, f64)>;

    /// Whether [`Game::outcomes`] reads the run's decisions; when it does not, the engine hands
    /// it an empty list instead of a view of every decision.
    fn outcomes_read_decisions(&self) -> bool {
        true
    }

    /// Decisions a run asks for, and whether that count is an upper bound (runs that may stop
    /// early).
    fn expected_decisions(&self) -> (u64, bool);

    /// The parameter, as spelled in study files, that sets a run's length (what a run too long
    /// for [`crate::games::MAX_DECISIONS`] is refused by).
    fn length_field(&self) -> &'static str {
        "rounds"
    }

    /// Number of seats.
    fn population(&self) -> usize {
        2
    }

    /// Sets the group size where the game has one; false where group size is not a factor of
    /// this game (the group-size cells then leave it out).
    fn set_group_size(&mut self, _size: usize) -> bool {
        false
    }

    /// The supplementary arm this specification belongs to (`baseline` when none).
    fn arm(&self) -> String {
        "baseline".into()
    }

    /// Seats held by committed agents from the start, with the choice they always make.
    fn committed_seats(&self) -> Vec<(usize, u32)> {
        Vec::new()
    }

    /// Seats that play their own policy until the game commits them part-way (the naming
    /// game's tipping arm from a formed convention); recorded as committed agents.
    fn committed_later(&self) -> Vec<usize> {
        Vec::new()
    }

    /// The table-row cells of one history entry, under [`Wording::history_columns`].
    fn history_cells(&self, fb: &Feedback, wording: &Wording) -> Vec<String> {
        let own: Vec<String> = fb.own.iter().map(|(_, a)| wording.format_action(a)).collect();
        let others: Vec<String> = fb.others.iter().map(|a| wording.format_action(a)).collect();
        vec![own.join(", "), others.join(", ")]
    }

    /// Whether an LLM seat is asked, in every cell, to reason before its answer (a `reasoning`
    /// field before the answer, as the step-by-step cell asks). `false` (the default) leaves
    /// that to the step-by-step cell; a game whose source prompt asks for reasoning says `true`.
    fn reasons_first(&self) -> bool {
        false
    }

    /// What an LLM decision falls back to after its last unusable attempt.
    fn fallback(&self) -> Fallback {
        Fallback::Random
    }

    /// The headline outcomes of each arm ([`Headline`]); none by default.
    fn headline(&self) -> &'static [Headline] {
        &[]
    }

    /// The columns of the table printed after a run of `arm` ([`SummaryColumn`]); none by
    /// default, and then the table shows every metric the runs report.
    fn summary(&self, _arm: &str) -> &'static [SummaryColumn] {
        &[]
    }

    /// The environment's canonical human effect ([`CanonicalEffect`]); none by default (the
    /// instrument paper names one for public goods, the repeated dilemma and the naming game).
    fn canonical_effect(&self) -> Option<CanonicalEffect> {
        None
    }

    /// How the divergent payoffs (C3) are read in each arm ([`Divergent`]); none by default.
    fn divergent(&self) -> &'static [Divergent] {
        &[]
    }

    /// The action indicator of each role the audit can regress ([`Indicator`]); none by default.
    fn indicators(&self) -> &'static [Indicator] {
        &[]
    }

    /// Roles without an indicator, and why ([`NoIndicator`]).
    fn no_indicator(&self) -> &'static [NoIndicator] {
        &[]
    }

    /// The labels a framing cell puts in place of the variant's two action labels. A game
    /// declares framing only where both frames relabel the same role's same two actions
    /// defensibly, and then answers for both frames and every variant; `None` (the default)
    /// means the game has no framing and the framing cells do not run in it.
    fn framing(&self, _variant: Variant, _frame: Frame) -> Option<Framed> {
        None
    }
}

/// The [`Game`] methods of parameters that keep their settings in plain fields: the memory
/// window in `memory`, and where named, the seat count in a field of its own, which the
/// group-size cells may set when it is given as `group`.
///
/// `game_fields!(memory)`, `game_fields!(population: population, memory)` or
/// `game_fields!(group: group_size, memory)`, inside an `impl Game`.
macro_rules! game_fields {
    (memory) => {
        fn memory(&self) -> u32 {
            self.memory
        }

        fn set_memory(&mut self, memory: u32) {
            self.memory = memory;
        }
    };
    (population: $seats:ident, memory) => {
        fn population(&self) -> usize {
            self.$seats
        }

        $crate::game::game_fields!(memory);
    };
    (group: $seats:ident, memory) => {
        $crate::game::game_fields!(population: $seats, memory);

        fn set_group_size(&mut self, size: usize) -> bool {
            self.$seats = size;
            true
        }
    };
}
pub(crate) use game_fields;

/// A role's default question where a game has nothing more specific to say.
pub fn default_question(role: Role) -> String {
    format!("Your decision as {}?", role.as_str())
}
