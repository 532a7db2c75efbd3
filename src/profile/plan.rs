//! The profile's schedule: every slot of every task, version and presentation (seed 000 §M05,
//! §A0–§D0, the A-S1/A-S2/B-S1/C-S1/D-S1 check schedules), before anything is asked.
//!
//! A–D single decisions: fifteen slots per input of every version's reference presentation,
//! the responder's unscored full curve on the original version only (§A5), and fifteen slots
//! per retested input of each scheduled check at its version's condition. B4: fifteen live
//! episodes per payoff, switch direction and version (twelve rounds each), with each scheduled
//! check asked as a side query at rounds 8 and 12 of the episodes at its condition.

use agora_environments::profile::render::{Presentation, TextLayout};
use agora_environments::profile::schedule::Schedules;
use agora_environments::profile::tasks::{inputs, Input, B4_DIRECTIONS};
use agora_environments::profile::versions::Version;
use agora_environments::profile::{Level, Operation, Task, VERSION_IDS};

/// The reference presentation's name in the records.
pub const REFERENCE: &str = "reference";

/// The B4 rounds at which a check's side queries are asked (§B4: "rounds 8 and 12").
pub const B4_CHECK_ROUNDS: [u32; 2] = [8, 12];

/// B4's rounds per episode (§B4).
pub const B4_ROUNDS: u32 = 12;

/// One single-decision slot.
#[derive(Clone, Debug)]
pub struct Slot {
    /// The task.
    pub task: Task,
    /// Index of the version (0 = Q00).
    pub version: usize,
    /// `reference` or the operation.
    pub presentation: Option<Operation>,
    /// The input.
    pub input: Input,
    /// 0-based response slot.
    pub slot: u32,
}

/// One B4 episode and the checks asked beside it.
#[derive(Clone, Debug)]
pub struct Episode {
    /// Index of the version.
    pub version: usize,
    /// The payoff condition.
    pub level: Level,
    /// `l-to-r` or `r-to-l`.
    pub direction: &'static str,
    /// 0-based episode.
    pub episode: u32,
    /// The checks asked as side queries at rounds 8 and 12.
    pub checks: Vec<Operation>,
}

/// The slots of one task.
#[derive(Clone, Debug, Default)]
pub struct TaskPlan {
    /// Single decisions.
    pub slots: Vec<Slot>,
    /// B4's episodes.
    pub episodes: Vec<Episode>,
}

impl TaskPlan {
    /// Calls asked at the first attempt: one per slot, twelve per episode plus its side queries.
    pub fn calls(&self) -> usize {
        self.slots.len()
            + self.episodes.iter().map(|e| B4_ROUNDS as usize + e.checks.len() * B4_CHECK_ROUNDS.len()).sum::<usize>()
    }
}

/// The name of a presentation in records.
pub fn presentation_name(op: Option<Operation>) -> &'static str {
    op.map_or(REFERENCE, Operation::name)
}

/// Whether a check at `level` retests `input` (the points the measure's local replacement uses,
/// `analysis::profile::replace` and `consistency`).
pub fn retested(input: &Input, level: Level) -> bool {
    if input.level != level || !input.scored {
        return false;
    }
    let p = input.point.as_str();
    match input.task {
        Task::Risk => matches!(p, "p-40" | "p-50" | "p-60"),
        Task::Urns => p.starts_with("known-50-"),
        Task::Dated => p.starts_with("r100-") || p.starts_with("r300-"),
        Task::Lotteries => p.starts_with("P1-") || p == "G2",
        _ => true,
    }
}

/// The presentation an operation makes of `version` (the reference presentation for `None`).
pub fn presentation(op: Option<Operation>, task: Task, version: &Version, version_index: usize) -> Presentation {
    let mut p = Presentation::reference();
    let Some(op) = op else { return p };
    match op {
        Operation::AnswerField => {
            let alt = if version.answer.field() == "response" { "answer" } else { "response" };
            p.answer_field = Some(alt.to_string());
        }
        Operation::InlineLayout => p.layout = TextLayout::Inline,
        Operation::SentenceLineBreaks => p.layout = TextLayout::SentencePerLine,
        Operation::TaskIdentifier => {
            let index = Task::ALL.iter().position(|t| *t == task).unwrap_or(0);
            p.task_id = Some(format!("P{:02}-{}", index + 1, VERSION_IDS[version_index]));
        }
        Operation::AlternativeOpening => {
            let alt = "The following describes a decision.";
            let other = "Below is a decision to make.";
            p.opening = Some(if version.opening == alt { other } else { alt }.to_string());
        }
        Operation::ActionLabels | Operation::ReversibleLabels => p.alt_labels = true,
        Operation::ActionOrder | Operation::ResponseOrder | Operation::OptionOrder => p.reversed = true,
        Operation::HistoryTable => p.history_table = true,
        Operation::TableLayout => p.table_layout = true,
    }
    p
}

/// The plan of `task` with `responses` slots per input (15 in the seed).
pub fn task_plan(task: Task, schedules: &Schedules, responses: u32) -> TaskPlan {
    let rows = schedules.rows(task.schedule());
    let mut plan = TaskPlan::default();
    if task == Task::B4 {
        for (v, row) in rows.iter().enumerate().take(VERSION_IDS.len()) {
            for level in Level::ALL {
                for direction in B4_DIRECTIONS {
                    for episode in 0..responses {
                        let checks = if row.level == level { row.checks.clone() } else { Vec::new() };
                        plan.episodes.push(Episode { version: v, level, direction, episode, checks });
                    }
                }
            }
        }
        return plan;
    }
    let all = inputs(task);
    for (v, row) in rows.iter().enumerate().take(VERSION_IDS.len()) {
        for input in &all {
            // The responder's unscored full curve: the original version only (§A5).
            if !input.scored && v != 0 {
                continue;
            }
            for slot in 0..responses {
                plan.slots.push(Slot { task, version: v, presentation: None, input: input.clone(), slot });
            }
        }
        for op in &row.checks {
            for input in all.iter().filter(|i| retested(i, row.level)) {
                for slot in 0..responses {
                    plan.slots.push(Slot { task, version: v, presentation: Some(*op), input: input.clone(), slot });
                }
            }
        }
    }
    plan
}
