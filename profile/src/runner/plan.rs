//! The profile's schedule: every slot of every task, version and presentation (the profile methods §M05,
//! §A0–§E0, the A-S1/A-S2/B-S1/C-S1/D-S1/E-S1 check schedules), before anything is asked.
//!
//! E1–E9: fifteen slots per item of every version's reference presentation, and fifteen per
//! anchor item a scheduled check retests (E-S1: both anchors under Q00, one under each other).
//!
//! A–D single decisions: fifteen slots per input of every version's reference presentation,
//! the responder's unscored full curve on the original version only (§A5), and fifteen slots
//! per retested input of each scheduled check at its version's condition. B4: fifteen live
//! episodes per payoff, switch direction and version (twelve rounds each), with each scheduled
//! check asked as a side query at rounds 1, 8 and 12 of the episodes at its condition.

use crate::tasks::catalogue::{inputs, Input, B4_DIRECTIONS};
use crate::tasks::render::{Presentation, TextLayout};
use crate::tasks::schedule::Schedules;
use crate::tasks::{Level, Operation, Task, VERSION_IDS};

/// The reference presentation's name in the records.
pub const REFERENCE: &str = "reference";

/// The B4 rounds at which a check's side queries are asked (§B4: "rounds 1, 8 and 12"; round 1,
/// before any history, is recorded but only rounds 8 and 12 enter the score replacement).
pub const B4_CHECK_ROUNDS: [u32; 3] = [1, 8, 12];

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
/// `crate::score::replace` and `consistency`).
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

/// The society prompts' presentation cells the profile's checks reuse: the answer-field name,
/// the two layouts, the task identifier, the alternative opening and the reversed order are
/// read from `scenarios/cells/` (the same files `agora run` applies), not copied.
#[derive(Clone, Debug)]
pub struct Cells {
    answer_field: String,
    task_id: String,
    opening: String,
    inline: TextLayout,
    per_line: TextLayout,
    reversed: bool,
}

impl Cells {
    /// Loads the six cells from `dir`.
    pub fn load(dir: &std::path::Path) -> crate::error::Result<Cells> {
        let options = |name: &str| -> crate::error::Result<agora_agents::llm::PromptOptions> {
            let cell = agora_scenarios::cell::Cell::load(&dir.join(format!("{name}.ron")))?;
            Ok(agora_engine::spec::prompt_options(&cell.factors))
        };
        let layout = |l: agora_agents::llm::Layout| match l {
            agora_agents::llm::Layout::Default => TextLayout::AsWritten,
            agora_agents::llm::Layout::Inline => TextLayout::Inline,
            agora_agents::llm::Layout::SentencePerLine => TextLayout::SentencePerLine,
        };
        let missing = |name: &str, what: &str| {
            crate::Error::BadInput(format!("{}: the cell sets no {what}", dir.join(format!("{name}.ron")).display()))
        };
        Ok(Cells {
            answer_field: options("answer-field")?.answer_field,
            task_id: options("task-id")?.task_id.ok_or_else(|| missing("task-id", "task identifier"))?,
            opening: options("alt-opening")?.opening.ok_or_else(|| missing("alt-opening", "opening sentence"))?,
            inline: layout(options("layout-inline")?.layout),
            per_line: layout(options("layout-sentence-per-line")?.layout),
            reversed: options("reversed-actions")?.reversed_actions,
        })
    }
}

/// The presentation an operation makes of a version (the reference presentation for `None`).
pub fn presentation(op: Option<Operation>, cells: &Cells) -> Presentation {
    let mut p = Presentation::reference();
    let Some(op) = op else { return p };
    match op {
        Operation::AnswerField => p.answer_field = Some(cells.answer_field.clone()),
        Operation::InlineLayout => p.layout = cells.inline,
        Operation::SentenceLineBreaks => p.layout = cells.per_line,
        Operation::TaskIdentifier => p.task_id = Some(cells.task_id.clone()),
        Operation::AlternativeOpening => p.opening = Some(cells.opening.clone()),
        Operation::ActionLabels | Operation::ReversibleLabels => p.alt_labels = true,
        Operation::ActionOrder | Operation::ResponseOrder | Operation::OptionOrder => p.reversed = cells.reversed,
        Operation::HistoryTable => p.history_table = true,
        Operation::TableLayout => p.table_layout = true,
    }
    p
}

/// The plan of `task` with `responses` slots per input (15 in the seed).
pub fn task_plan(task: Task, schedules: &Schedules, responses: u32) -> TaskPlan {
    task_plan_of(task, schedules, responses, inputs(task))
}

/// The plan of `task` over the inputs `all` (a questionnaire's items from its item file,
/// perhaps a reduced study's first few).
pub fn task_plan_of(task: Task, schedules: &Schedules, responses: u32, all: Vec<Input>) -> TaskPlan {
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
    // §E0, E-S1: each check retests the row's anchor items of the measure (both under the
    // original instruction, one under each other), not a condition's points.
    let anchors = crate::tasks::items::e_s2(task).map(|(_, a)| [a[0].to_string(), a[1].to_string()]);
    let retests = |input: &Input, row: &crate::tasks::schedule::Row| match (&anchors, row.anchor) {
        (Some(a), Some(anchor)) => anchor.items(a).contains(&input.point.as_str()),
        _ => retested(input, row.level),
    };
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
            for input in all.iter().filter(|i| retests(i, row)) {
                for slot in 0..responses {
                    plan.slots.push(Slot { task, version: v, presentation: Some(*op), input: input.clone(), slot });
                }
            }
        }
    }
    plan
}
