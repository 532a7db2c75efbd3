//! What a run records, and its hash.

use crate::pool::{Held, Pool};
use crate::spec::RunSpec;
use agora_environments::game::{RecordedDecision, RecordedInteraction, RunView};
use serde::{Deserialize, Serialize};

/// One decision.
#[derive(Clone, Debug, PartialEq)]
pub struct DecisionRecord {
    /// Stage number within the run, 1-based.
    pub step: u32,
    /// Round, game or interaction, 1-based.
    pub round: u32,
    /// Seat of the agent that decided.
    pub seat: u32,
    /// The part it played, as the role's store name.
    pub role: &'static str,
    /// The action; stored and hashed as its compact text (`c1`, `a17`, `[0,3,0]`).
    pub action: agora_environments::Action,
    /// Numeric value of the action: the choice index, the amount, or the allocation's total.
    pub value: f64,
    /// The natural maximum of the value; `value / scale` is the share the analysis reports.
    pub scale: f64,
    /// What the agent faced, where that matters (offer faced, amount received).
    pub context: Option<f64>,
}

/// One payoff.
#[derive(Clone, Debug, PartialEq)]
pub struct PayoffRecord {
    /// Stage number within the run, 1-based.
    pub step: u32,
    /// Round, game or interaction, 1-based.
    pub round: u32,
    /// Seat of the agent paid.
    pub seat: u32,
    /// The payoff realised in the stage.
    pub payoff: f64,
}

/// One naming-game meeting.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct InteractionRecord {
    /// Interaction number within the run, 1-based.
    pub t: u32,
    /// Seat of the first agent of the pair.
    pub a: u32,
    /// Seat of the second agent of the pair.
    pub b: u32,
    /// The name the first agent proposed (index into the pool).
    pub name_a: u32,
    /// The name the second agent proposed (index into the pool).
    pub name_b: u32,
    /// Whether the two proposed the same name.
    pub matched: bool,
}

/// Who sat where.
#[derive(Clone, Debug, PartialEq)]
pub struct AgentRecord {
    /// The seat, 0-based.
    pub seat: u32,
    /// Registry name of the policy in the seat.
    pub policy: &'static str,
    /// The policy's model family.
    pub family: &'static str,
    /// Whether the seat is held by a committed agent.
    pub committed: bool,
}

/// Everything one run recorded.
#[derive(Clone, Debug, PartialEq)]
pub struct RunRecords {
    /// The run key.
    pub key: String,
    /// The run's specification.
    pub spec: RunSpec,
    /// Who sat where, in seat order.
    pub agents: Vec<AgentRecord>,
    /// Stages played.
    pub steps: u32,
    /// Every decision, in stage order.
    pub decisions: Vec<DecisionRecord>,
    /// Every payoff, in stage order.
    pub payoffs: Vec<PayoffRecord>,
    /// Every naming-game meeting, in order; empty for other games.
    pub interactions: Vec<InteractionRecord>,
    /// Model calls, in (seat, slot, attempt) order.
    pub transcripts: Vec<agora_agents::llm::Transcript>,
    /// The run-level outcomes the game computed from these records, in the game's order.
    pub metrics: Vec<(String, f64)>,
}

/// The bulk record lists of runs that have been let go on this thread, kept for the next run
/// (one of each): a run then records into memory that is already the size of the longest
/// run seen and already mapped, instead of growing fresh lists by doubling (each growth a copy
/// of all recorded so far, each new page zeroed by the kernel on first touch). What a run
/// records is the same either way; only where it is written changes.
#[derive(Default)]
struct Spare {
    decisions: Vec<DecisionRecord>,
    payoffs: Vec<PayoffRecord>,
    interactions: Vec<InteractionRecord>,
}

/// Lists larger than this many bytes are freed rather than kept.
const SPARE_LIMIT: usize = 64 << 20;

/// Spare lists of finished runs, emptied: about one set for each run between being played and
/// being let go of, for the runs that follow, whichever thread plays them.
static SPARES: Pool<Spare> = Pool::new();

/// The views a game reads a run's records through to compute its outcomes, kept from run to
/// run so that an outcome does not take (and first touch) memory the size of the records.
#[derive(Default)]
struct Views {
    decisions: Vec<RecordedDecision<'static>>,
    interactions: Vec<RecordedInteraction>,
}

impl Held for Views {
    fn bytes(&self) -> usize {
        self.decisions.capacity() * std::mem::size_of::<RecordedDecision<'static>>()
            + self.interactions.capacity() * std::mem::size_of::<RecordedInteraction>()
    }
}

static VIEWS: Pool<Views> = Pool::new();

impl Held for Spare {
    fn bytes(&self) -> usize {
        self.decisions.capacity() * std::mem::size_of::<DecisionRecord>()
            + self.payoffs.capacity() * std::mem::size_of::<PayoffRecord>()
            + self.interactions.capacity() * std::mem::size_of::<InteractionRecord>()
    }
}

/// `list`, emptied, if it is not too large to keep (else an empty list); `list` is left empty.
fn kept<T>(list: &mut Vec<T>) -> Vec<T> {
    let mut list = std::mem::take(list);
    if list.capacity() * std::mem::size_of::<T>() > SPARE_LIMIT {
        return Vec::new();
    }
    list.clear();
    list
}

impl Drop for RunRecords {
    fn drop(&mut self) {
        self.let_go_of_lists();
    }
}

impl RunRecords {
    /// Empty records of the run `spec`, whose key (`spec.key()`) the caller has computed.
    /// Their lists are spares of an earlier run when there are some (empty, with room).
    pub fn new(spec: &RunSpec, key: String) -> Self {
        let Spare { decisions, payoffs, interactions } = SPARES.take_any().unwrap_or_default();
        RunRecords {
            key,
            spec: spec.clone(),
            agents: Vec::new(),
            steps: 0,
            decisions,
            payoffs,
            interactions,
            transcripts: Vec::new(),
            metrics: Vec::new(),
        }
    }

    /// Empties the decisions, payoffs and interactions, keeping their memory as spares for a
    /// run that follows (once they have been hashed and encoded for the store, say).
    pub fn let_go_of_lists(&mut self) {
        SPARES.give(Spare {
            decisions: kept(&mut self.decisions),
            payoffs: kept(&mut self.payoffs),
            interactions: kept(&mut self.interactions),
        });
    }

    /// Asks the run's game for its outcomes from the records (called once the run has ended).
    pub fn compute_metrics(&mut self) {
        // The game reads the records through views kept from run to run ([`VIEWS`]).
        let reversed = self.spec.prompt_options().reversed_actions;
        let mut views = VIEWS.take_any().unwrap_or_default();
        let Views { decisions, interactions } = &mut views;
        decisions.clear();
        if self.spec.environment.game().outcomes_read_decisions() {
            decisions.extend(self.decisions.iter().map(|d| RecordedDecision {
                round: d.round,
                seat: d.seat,
                role: d.role,
                value: d.value,
                scale: d.scale,
                context: d.context,
            }));
        }
        interactions.clear();
        interactions.extend(
            self.interactions.iter().map(|i| RecordedInteraction { t: i.t, matched: i.matched.then_some(i.name_a) }),
        );
        self.metrics = outcomes(&self.spec.environment, self.spec.variant, reversed, decisions, interactions);
        decisions.clear();
        interactions.clear();
        VIEWS.give(views);
        if self.spec.is_probe() {
            // A probe session plays no game: its one outcome is how many of its seats named
            // the paradigm.
            let graded: Vec<bool> = self
                .transcripts
                .iter()
                .filter(|t| t.kind == "probe")
                .filter_map(|t| match t.parse_status.as_str() {
                    "recognised" => Some(true),
                    "not-recognised" => Some(false),
                    _ => None,
                })
                .collect();
            self.metrics = if graded.is_empty() {
                Vec::new()
            } else {
                vec![("recognised".into(), graded.iter().filter(|r| **r).count() as f64 / graded.len() as f64)]
            };
        }
    }
}

/// The game's outcomes of one run, non-finite values left out (a store holds numbers).
pub fn outcomes(
    env: &agora_environments::EnvSpec,
    variant: agora_environments::Variant,
    reversed_labels: bool,
    decisions: &[RecordedDecision],
    interactions: &[RecordedInteraction],
) -> Vec<(String, f64)> {
    let view = RunView { variant, decisions, interactions, reversed_labels };
    env.game().outcomes(&view).into_iter().filter(|(_, v)| v.is_finite()).collect()
}
