//! Asking a task's slots: single decisions and B4's live episodes, at most a bounded number in
//! flight, records returned in plan order whatever order the answers came in.

use crate::error::Error;
use std::collections::HashSet;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use crate::score::rows::ResponseRow;
use crate::tasks::catalogue::{b4_input, b4_opponent, b4_round, score, Decoded, Input, Round};
use crate::tasks::render::render;
use crate::tasks::versions::{Loaded, Version};
use crate::tasks::{Operation, Task, VERSION_IDS};
use agora_agents::llm::ModelSpec;

use super::ask::{Answer, Ask, Asked, Asker, Failure};
use super::plan::{presentation, presentation_name, Cells, Episode, Slot, TaskPlan, B4_CHECK_ROUNDS, B4_ROUNDS};

/// What every question of one model shares.
pub struct Ctx {
    /// The study's name (part of every slot key).
    pub study: String,
    /// The presentation cells the checks reuse.
    pub cells: Cells,
    /// The model's asker.
    pub asker: Arc<Asker>,
    /// The frozen versions of the study's tasks.
    pub loaded: Vec<Loaded>,
}

impl Ctx {
    fn version(&self, task: Task, v: usize) -> &Version {
        let l = self.loaded.iter().find(|l| l.task == task).expect("every planned task is loaded");
        &l.versions[v]
    }
}

/// One recorded slot.
#[derive(Clone, Debug)]
pub struct Recorded {
    /// The analysis row.
    pub row: ResponseRow,
    /// The slot's key: the store's resume key and the reply cache's slot.
    pub slot_key: String,
    /// The question as asked (empty for a B4 round after its episode ended).
    pub prompt: String,
    /// The attempts.
    pub asked: Asked,
}

/// A job of a task: one single decision, or one B4 episode with its side queries, with its
/// identity (the slot key of its first question), by which a later pass asks it again.
pub type Job<T> = (String, Pin<Box<dyn Future<Output = Result<T, Failure>> + Send>>);

/// How many slots of one model are kept going at once: twice the requests its endpoints take.
pub fn in_flight(spec: &ModelSpec) -> usize {
    (spec.concurrency * spec.endpoints.len()).max(1) * 2
}

/// Runs `jobs` with at most `limit` at once; the results come back in job order, and the
/// failed jobs beside them, each with its identity and failure, in job order (the jobs that
/// succeeded are kept, so that what was answered before a server failed is recorded).
pub async fn in_order<T: Send + 'static>(
    limit: usize,
    jobs: Vec<Job<T>>,
) -> crate::error::Result<(Vec<T>, Vec<(String, Failure)>)> {
    let permits = Arc::new(tokio::sync::Semaphore::new(limit.max(1)));
    let mut set = tokio::task::JoinSet::new();
    for (i, (id, job)) in jobs.into_iter().enumerate() {
        let permit =
            permits.clone().acquire_owned().await.map_err(|e| Error::runtime(format!("the runtime closed: {e}")))?;
        set.spawn(async move {
            let r = job.await;
            drop(permit);
            (i, id, r)
        });
    }
    let mut results = Vec::with_capacity(set.len());
    let mut failures = Vec::new();
    while let Some(joined) = set.join_next().await {
        match joined.map_err(|e| Error::runtime(format!("a profile question panicked: {e}")))? {
            (i, _, Ok(r)) => results.push((i, r)),
            (i, id, Err(e)) => failures.push((i, id, e)),
        }
    }
    results.sort_by_key(|(i, _)| *i);
    failures.sort_by_key(|(i, _, _)| *i);
    Ok((results.into_iter().map(|(_, r)| r).collect(), failures.into_iter().map(|(_, id, e)| (id, e)).collect()))
}

#[expect(clippy::too_many_arguments, reason = "a slot is named by all of its coordinates")]
fn slot_key(
    study: &str,
    task: Task,
    version: usize,
    op: Option<Operation>,
    input: &Input,
    direction: &str,
    round: u32,
    slot: u32,
) -> String {
    format!(
        "profile/{study}/{}/{}/{}/{}/{}/{}/{direction}/{round}/{slot}",
        task.name(),
        VERSION_IDS[version],
        presentation_name(op),
        input.level.name(),
        input.point,
        input.branch
    )
}

/// The record of `input` at a slot, before its answer is known.
fn blank_row(task: Task, version: usize, op: Option<Operation>, input: &Input, slot: u32) -> ResponseRow {
    ResponseRow {
        task: task.name().into(),
        version: VERSION_IDS[version].into(),
        presentation: presentation_name(op).into(),
        level: input.level.name().into(),
        point: input.point.clone(),
        branch: input.branch.clone(),
        direction: String::new(),
        round: 0,
        slot,
        scored: input.scored,
        value: None,
        score: None,
    }
}

/// Renders, asks and decodes one input into `row`.
async fn ask_one(
    ctx: &Ctx,
    task: Task,
    version: usize,
    op: Option<Operation>,
    input: &Input,
    mut row: ResponseRow,
    slot_key: String,
) -> Result<(Recorded, Option<Decoded>), Failure> {
    let r = render(input, ctx.version(task, version), &presentation(op, &ctx.cells))
        .map_err(|e| Failure::from(format!("{slot_key}: {e}")))?;
    let ask = match r.max {
        Some(max) => Ask::Amount { max },
        None => Ask::Choice { labels: r.shown.iter().map(|(l, _)| l.clone()).collect() },
    };
    let asked = ctx.asker.ask(&r.text, &r.field, &ask, &slot_key).await?;
    let decoded = asked.answer.and_then(|a| match a {
        Answer::Label(i) => r.decode_choice(i),
        Answer::Amount(x) => r.decode_amount(x),
    });
    row.value = decoded.as_ref().map(Decoded::text);
    row.score = decoded.as_ref().map(|d| score(input, d));
    Ok((Recorded { row, slot_key, prompt: r.text, asked }, decoded))
}

async fn run_slot(ctx: Arc<Ctx>, s: Slot, key: String) -> Result<Vec<Recorded>, Failure> {
    let row = blank_row(s.task, s.version, s.presentation, &s.input, s.slot);
    let (rec, _) = ask_one(&ctx, s.task, s.version, s.presentation, &s.input, row, key).await?;
    Ok(vec![rec])
}

/// One live B4 episode: twelve rounds against the scripted opponent, with the check side
/// queries at rounds 1, 8 and 12 (they see the same history and do not advance the episode). A
/// round without a valid answer ends the episode: its later rounds are recorded as ended.
async fn run_episode(ctx: Arc<Ctx>, e: Episode) -> Result<Vec<Recorded>, Failure> {
    let mut out = Vec::new();
    let mut history: Vec<Round> = Vec::new();
    let mut ended = false;
    for round in 1..=B4_ROUNDS {
        let input = b4_input(e.level, round, &history);
        let opponent = b4_opponent(e.direction, round);
        let mut ops: Vec<Option<Operation>> = vec![None];
        if B4_CHECK_ROUNDS.contains(&round) {
            ops.extend(e.checks.iter().map(|o| Some(*o)));
        }
        let mut own = None;
        for op in ops {
            let key = slot_key(&ctx.study, Task::B4, e.version, op, &input, e.direction, round, e.episode);
            let mut row = blank_row(Task::B4, e.version, op, &input, e.episode);
            row.direction = e.direction.into();
            row.round = round;
            let mut rec = if ended {
                Recorded {
                    row,
                    slot_key: key,
                    prompt: String::new(),
                    asked: Asked { answer: None, attempts: Vec::new() },
                }
            } else {
                let (rec, decoded) = ask_one(&ctx, Task::B4, e.version, op, &input, row, key).await?;
                if op.is_none() {
                    own = match decoded {
                        Some(Decoded::Option(k)) => Some(k),
                        _ => None,
                    };
                }
                rec
            };
            // A B4 choice scores 100 when it matches the opponent's script.
            rec.row.score = rec.row.value.as_ref().map(|v| if v == opponent { 100.0 } else { 0.0 });
            out.push(rec);
        }
        match own {
            Some(k) if !ended => history.push(b4_round(e.level, round, k, opponent)),
            _ => ended = true,
        }
    }
    Ok(out)
}

/// A B4 episode's identity among a model's rows: `{version}/{level}/{direction}/{episode}`.
pub fn episode_id(version: &str, level: &str, direction: &str, episode: u32) -> String {
    format!("{version}/{level}/{direction}/{episode}")
}

/// The jobs of a task's plan that `done` (the slot keys already recorded) does not hold; a B4
/// episode is done when its first round is, unless `redo` names it ([`episode_id`]: an episode
/// with a missing slot, asked again by `--retry-missing` from its first round — the rounds
/// before the missing one read their replies from the cache).
pub fn jobs(
    ctx: &Arc<Ctx>,
    plan: &TaskPlan,
    done: &HashSet<String>,
    redo: &HashSet<String>,
) -> Vec<Job<Vec<Recorded>>> {
    let mut out: Vec<Job<Vec<Recorded>>> = Vec::new();
    for s in &plan.slots {
        let key = slot_key(&ctx.study, s.task, s.version, s.presentation, &s.input, "", 0, s.slot);
        if !done.contains(&key) {
            out.push((key.clone(), Box::pin(run_slot(ctx.clone(), s.clone(), key))));
        }
    }
    for e in &plan.episodes {
        let first = b4_input(e.level, 1, &[]);
        let key = slot_key(&ctx.study, Task::B4, e.version, None, &first, e.direction, 1, e.episode);
        let id = episode_id(VERSION_IDS[e.version], e.level.name(), e.direction, e.episode);
        if !done.contains(&key) || redo.contains(&id) {
            out.push((key, Box::pin(run_episode(ctx.clone(), e.clone()))));
        }
    }
    out
}
