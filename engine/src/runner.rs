//! The concurrent runner.
//!
//! Runs are stepped stage by stage. Every live run is brought to its Decide point; the deferred
//! decisions of all of them are awaited together on one async runtime (so that a serving engine
//! sees full batches); then every run resolves its stage. Completed runs are committed to the
//! store one transaction each, and run keys already in the store are skipped, which is what
//! makes an interrupted study resumable.
//!
//! When no seat of any run can defer (classical rosters), runs are independent from start to
//! finish and are spread over worker threads instead.
//!
//! A run whose model server gives no reply for one of its decisions
//! ([`agora_agents::AgentError::Server`]) is set aside, not recorded, while the other runs go
//! on; once every run has been played, the runs set aside are played again (their calls
//! already answered come from the reply cache, so a run played again records what it would
//! have recorded at once), in at most [`RunnerOptions::retry_passes`] further passes with a
//! growing wait between them. What is still missing after that is reported
//! ([`RunnerReport::missing`]), never recorded.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;

use crate::spec::RunSpec;
use tokio::task::JoinSet;

use crate::error::EngineError;
use agora_agents::llm::TranscriptSink;

use crate::run::RunWorld;
use crate::store::{PreparedRun, Store};

/// Builds the policies of a run, one per seat, where a specification alone is not enough;
/// policies that call a model record their calls in the run's transcript sink.
pub type PolicyFactory = std::sync::Arc<
    dyn Fn(&RunSpec, &TranscriptSink) -> Result<Vec<Box<dyn agora_agents::Policy>>, String> + Send + Sync,
>;

/// How to run a plan.
#[derive(Clone)]
pub struct RunnerOptions {
    /// Runs stepped together when decisions may be deferred.
    pub max_live: usize,
    /// Worker threads for plans whose decisions are all synchronous (the calling thread writes
    /// what they play).
    pub threads: usize,
    /// Stop after committing this many runs (a controlled interruption).
    pub stop_after: Option<usize>,
    /// Builds policies instead of [`agora_agents::PolicySpec::build`]; runs then go through
    /// the gathering path, since such policies may defer.
    pub policy_factory: Option<PolicyFactory>,
    /// Worker threads of the runtime deferred decisions are awaited on (default: one per
    /// core); a caller playing many small plans at once (`agora serve`, one per society) asks
    /// for fewer.
    pub async_workers: Option<usize>,
    /// Further passes over the runs whose model server gave no reply (0: none).
    pub retry_passes: u32,
    /// The wait before the first further pass; it doubles before each next one, up to 30 s.
    pub retry_backoff: std::time::Duration,
    /// Set by another thread to stop the call after the run being committed (a caller's
    /// Ctrl-C): the runs committed so far are kept, and the same plan run again resumes.
    pub cancel: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
}

impl Default for RunnerOptions {
    fn default() -> Self {
        RunnerOptions {
            max_live: 256,
            threads: std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
            stop_after: None,
            policy_factory: None,
            async_workers: None,
            retry_passes: 8,
            retry_backoff: std::time::Duration::from_millis(500),
            cancel: None,
        }
    }
}

/// Progress after each committed run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Progress {
    /// Runs executed and committed so far in this call.
    pub done: usize,
    /// Runs this call has to execute (those not already in the store).
    pub total: usize,
    /// Runs skipped because the store already holds them.
    pub skipped: usize,
}

/// What a call to [`execute`] did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RunnerReport {
    /// Runs executed and committed.
    pub executed: usize,
    /// Runs skipped because the store already held them.
    pub skipped: usize,
    /// Decisions recorded across the executed runs.
    pub decisions: u64,
    /// True when `stop_after` ended the call before the plan was complete.
    pub interrupted: bool,
    /// Runs not recorded because their model server gave no reply in any pass, with the last
    /// failure of each, in plan order.
    pub missing: Vec<Missing>,
    /// Further passes made over runs set aside.
    pub passes: u32,
}

impl RunnerReport {
    /// What a call that left runs unrecorded says of them: how many of the `planned` runs of
    /// `study` are missing after how many further passes, that rerunning the same `invocation`
    /// (a command, a call) retries them, and the last failure; `None` when none is missing.
    pub fn missing_summary(&self, study: &str, planned: usize, invocation: &str) -> Option<String> {
        let last = self.missing.last()?;
        Some(format!(
            "{study}: {} of {planned} runs missing after {} further pass(es) — rerun the same {invocation} to retry them \
             (they are not recorded; every reply already received is cached). Last failure: run {}: {}",
            self.missing.len(),
            self.passes,
            last.run_key,
            last.reason
        ))
    }
}

/// A run left unrecorded: its key and the server's last failure.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Missing {
    /// The run key.
    pub run_key: String,
    /// Why its last pass stopped.
    pub reason: String,
}

/// Runs every run of `runs` not yet in `store`, committing each as it completes.
pub fn execute(
    runs: &[RunSpec],
    store: &mut Store,
    opts: &RunnerOptions,
    progress: &mut dyn FnMut(Progress),
) -> Result<RunnerReport, EngineError> {
    let done = store.completed_keys()?;
    // Each run's key is computed once, here, and handed to the world that plays it.
    let todo: Vec<(&RunSpec, String)> =
        runs.iter().map(|r| (r, r.key())).filter(|(_, key)| !done.contains(key)).collect();
    let mut report = RunnerReport { skipped: runs.len() - todo.len(), ..RunnerReport::default() };
    let total = todo.len();
    let all_sync = opts.policy_factory.is_none() && todo.iter().all(|(r, _)| r.seats.iter().all(|s| !s.is_async()));
    let mut commit = |mut run: PreparedRun, report: &mut RunnerReport| -> Result<bool, EngineError> {
        report.decisions += run.decisions() as u64;
        store.commit_prepared(&mut run)?;
        report.executed += 1;
        progress(Progress { done: report.executed, total, skipped: report.skipped });
        let cancelled = opts.cancel.as_ref().is_some_and(|c| c.load(Ordering::Relaxed));
        Ok(cancelled || opts.stop_after.is_some_and(|n| report.executed >= n))
    };
    // Classical runs go to worker threads even when there is one: it plays and encodes while
    // this thread hashes and writes the run before (with more, each worker hashes its own).
    if all_sync && total > 1 {
        run_threaded(&todo, opts.threads, &mut |rec, rep| commit(rec, rep), &mut report)?;
    } else {
        let factory = opts.policy_factory.clone();
        let build = move |spec: &RunSpec, key: &str| match &factory {
            Some(f) => {
                let sink = TranscriptSink::default();
                let policies = f(spec, &sink).map_err(|m| EngineError::Decision {
                    run: key.to_string(),
                    seat: 0,
                    source: agora_agents::AgentError::Failed(m),
                })?;
                RunWorld::with_policies(spec, key.to_string(), policies, sink)
            }
            None => RunWorld::with_key(spec, key.to_string()),
        };
        let mut pending: Vec<(&RunSpec, String)> = todo.clone();
        let mut wait = opts.retry_backoff;
        loop {
            let set_aside = run_gathered(
                &pending,
                opts.max_live.max(1),
                opts.async_workers,
                &build,
                &mut |rec, rep| commit(rec, rep),
                &mut report,
            )?;
            if report.interrupted || set_aside.is_empty() {
                break;
            }
            if report.passes >= opts.retry_passes {
                report.missing = set_aside
                    .into_iter()
                    .map(|(i, reason)| Missing { run_key: pending[i].1.clone(), reason })
                    .collect();
                break;
            }
            pending = set_aside.into_iter().map(|(i, _)| pending[i].clone()).collect();
            report.passes += 1;
            std::thread::sleep(wait);
            wait = (wait * 2).min(std::time::Duration::from_secs(30));
        }
    }
    Ok(report)
}

type Commit<'a> = dyn FnMut(PreparedRun, &mut RunnerReport) -> Result<bool, EngineError> + 'a;

/// Independent runs on worker threads (at least one), each encoded where it was played and
/// hashed there too when there are several workers (by the calling thread when there is one);
/// the calling thread writes them in completion order.
fn run_threaded(
    todo: &[(&RunSpec, String)],
    threads: usize,
    commit: &mut Commit,
    report: &mut RunnerReport,
) -> Result<(), EngineError> {
    let threads = threads.max(1);
    let next = AtomicUsize::new(0);
    let stop = std::sync::atomic::AtomicBool::new(false);
    let (tx, rx) = mpsc::sync_channel::<Result<PreparedRun, EngineError>>(threads * 4);
    std::thread::scope(|scope| -> Result<(), EngineError> {
        for _ in 0..threads.min(todo.len()) {
            let tx = tx.clone();
            let (next, stop) = (&next, &stop);
            scope.spawn(move || loop {
                if stop.load(Ordering::Relaxed) {
                    return;
                }
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some((spec, key)) = todo.get(i) else { return };
                let played = RunWorld::with_key(spec, key.clone()).and_then(RunWorld::run_to_end);
                // One worker: the thread that writes hashes each run, while this one plays the
                // next (hashing is a fifth of a recorded run's work, writing less than half of
                // what is left). More workers: each hashes its own, the writer only writes.
                let result = if threads == 1 {
                    played.and_then(|r| Ok(PreparedRun::unhashed(r)?))
                } else {
                    played.and_then(|r| Ok(PreparedRun::new(r)?))
                };
                if tx.send(result).is_err() {
                    return;
                }
            });
        }
        drop(tx);
        let mut outcome = Ok(());
        for result in rx.iter() {
            if outcome.is_err() || stop.load(Ordering::Relaxed) {
                continue;
            }
            match result.and_then(|rec| commit(rec, report)) {
                Ok(true) => {
                    report.interrupted = true;
                    stop.store(true, Ordering::Relaxed);
                }
                Ok(false) => {}
                Err(e) => {
                    stop.store(true, Ordering::Relaxed);
                    outcome = Err(e);
                }
            }
        }
        outcome
    })
}

/// Live runs stepped together; deferred decisions of all of them awaited at once. Returns the
/// runs set aside because their model server gave no reply (their index in `todo` and the
/// failure), in `todo`'s order; any other failure stops the call.
fn run_gathered(
    todo: &[(&RunSpec, String)],
    max_live: usize,
    workers: Option<usize>,
    build: &dyn Fn(&RunSpec, &str) -> Result<RunWorld, EngineError>,
    commit: &mut Commit,
    report: &mut RunnerReport,
) -> Result<Vec<(usize, String)>, EngineError> {
    // Every live run advances on its own: when the last awaited decision of a run's stage
    // arrives, that run resolves and begins its next stage at once, while the other runs'
    // requests stay in flight. No run waits for another's slow reply (no head-of-line
    // blocking across runs), and a finished run's slot is refilled straight away. A run's
    // records depend only on its own decisions, so the order replies arrive in does not
    // change them.
    // One worker per core: requests, replies, parsing and the reply cache spread over all of
    // them, while this thread steps the runs (rendering their prompts) and commits them.
    let workers = workers.unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get())).max(1);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .enable_all()
        .build()
        .map_err(EngineError::Runtime)?;
    let mut queue = todo.iter().enumerate();
    // A live run: its world, the decisions its open stage awaits, its index in `todo`. A slot's
    // decisions carry the run's index, so that replies still in flight for a run set aside are
    // not given to the run that takes its slot.
    let mut slots: Vec<Option<Live>> = Vec::new();
    let mut set_aside: Vec<(usize, String)> = Vec::new();
    let mut set: JoinSet<(usize, usize, usize, Result<agora_environments::Action, agora_agents::AgentError>)> =
        JoinSet::new();
    let _guard = rt.enter();

    // Steps the run in `slot` until it awaits decisions or ends; an ended run is committed and
    // its slot emptied. Returns true when `stop_after` asks to stop.
    let mut advance = |slot: usize,
                       slots: &mut Vec<Option<Live>>,
                       set: &mut JoinSet<_>,
                       report: &mut RunnerReport|
     -> Result<bool, EngineError> {
        loop {
            let Some(live) = slots[slot].as_mut() else { return Ok(false) };
            if live.run.is_done() {
                let live = slots[slot].take().expect("invariant: the slot holds a run");
                return commit(PreparedRun::new(live.run.into_records())?, report);
            }
            // Ready stages are played at once; a stage that awaits decisions stays open.
            let deferred = live.run.play_ready()?;
            if deferred.is_empty() {
                continue;
            }
            live.waiting = deferred.len();
            let index = live.index;
            for (seat, fut) in deferred {
                set.spawn(async move { (slot, index, seat, fut.await) });
            }
            return Ok(false);
        }
    };

    loop {
        // Fill empty slots with new runs.
        for slot in 0..max_live {
            if slots.len() <= slot {
                slots.push(None);
            }
            if slots[slot].is_none() {
                let Some((index, (spec, key))) = queue.next() else { break };
                slots[slot] = Some(Live { run: build(spec, key)?, waiting: 0, index });
                if advance(slot, &mut slots, &mut set, report)? {
                    report.interrupted = true;
                    return Ok(set_aside);
                }
            }
        }
        if set.is_empty() {
            // Every slot is empty: each run either awaits a reply or has been committed.
            if queue.len() == 0 {
                set_aside.sort_by_key(|(i, _)| *i);
                return Ok(set_aside);
            }
            continue;
        }
        // Wait for at least one reply, then take every reply already there.
        let mut answers = vec![rt.block_on(set.join_next()).expect("invariant: the set is not empty")];
        while let Some(more) = set.try_join_next() {
            answers.push(more);
        }
        for joined in answers {
            let (slot, index, seat, result) = joined.map_err(|e| EngineError::Decision {
                run: "unknown".into(),
                seat: 0,
                source: agora_agents::AgentError::Failed(format!("decision task failed: {e}")),
            })?;
            // A reply for a run set aside (its slot emptied or holding another run) is dropped:
            // what the server answered is in the reply cache for the run's next pass.
            let Some(live) = slots[slot].as_mut().filter(|l| l.index == index) else { continue };
            let action = match result {
                Ok(action) => action,
                Err(agora_agents::AgentError::Server(reason)) => {
                    slots[slot] = None;
                    set_aside.push((index, format!("seat {seat}: {reason}")));
                    continue;
                }
                Err(source) => return Err(EngineError::Decision { run: live.run.key().to_string(), seat, source }),
            };
            live.run.supply(seat, action);
            live.waiting -= 1;
            if live.waiting == 0 {
                live.run.finish_stage()?;
                if advance(slot, &mut slots, &mut set, report)? {
                    report.interrupted = true;
                    return Ok(set_aside);
                }
            }
        }
    }
}

/// A run in progress in one of the gathering runner's slots.
struct Live {
    run: RunWorld,
    /// Decisions its open stage still awaits.
    waiting: usize,
    /// Its index in the call's runs.
    index: usize,
}

impl std::fmt::Debug for RunnerOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunnerOptions")
            .field("max_live", &self.max_live)
            .field("threads", &self.threads)
            .field("stop_after", &self.stop_after)
            .field("policy_factory", &self.policy_factory.is_some())
            .field("async_workers", &self.async_workers)
            .field("retry_passes", &self.retry_passes)
            .field("retry_backoff", &self.retry_backoff)
            .field("cancel", &self.cancel.is_some())
            .finish()
    }
}
