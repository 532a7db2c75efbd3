//! Engine tests: determinism of records, resume after an interruption, and the deferred-decision
//! path gathering decisions across runs (the store's layouts are tests/store_layouts.rs). They
//! live beside the CLI tests because they load shipped studies through the scenarios crate,
//! which sits above the engine.

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use agora_agents::{Decision, Policy, PolicyMeta, PolicySpec};
use agora_engine::{execute, record_hash, RunWorld, RunnerOptions, Store};
use agora_environments::{EnvKind, Feedback, Observation};
use agora_scenarios::{Plan, RunSpec};
use agora_test_support::Gate;
use rand::RngCore;

mod common;
use common::{run_plan_into, shipped_plan};

/// The baseline (C0) prisoner's-dilemma runs of the shipped classical study, its runs limited
/// to ten.
fn classical_dilemma_runs() -> Vec<RunSpec> {
    let p = shipped_plan("classical.ron", 10);
    p.runs.iter().filter(|r| r.block == "pd" && r.variant == agora_environments::Variant::C0).cloned().collect()
}

#[test]
fn every_shipped_study_records_identically_twice() {
    let dir = tempfile::tempdir().expect("tempdir");
    for study in ["classical.ron", "tipping.ron"] {
        let p = shipped_plan(study, 2);
        let threaded = RunnerOptions { threads: 2, ..RunnerOptions::default() };
        let single = RunnerOptions { threads: 1, ..RunnerOptions::default() };
        // A policy factory sends classical runs through the path that steps live runs together
        // (the one model-backed runs take), as no thread count does.
        let factory: agora_engine::runner::PolicyFactory =
            Arc::new(|spec: &RunSpec, _: &agora_agents::llm::TranscriptSink| {
                Ok(spec.seats.iter().map(|s| s.build()).collect())
            });
        let gathered = RunnerOptions { policy_factory: Some(factory), max_live: 5, ..RunnerOptions::default() };
        let a = run_plan_into(dir.path(), &format!("{study}-a.sqlite"), &p, &threaded);
        let b = run_plan_into(dir.path(), &format!("{study}-b.sqlite"), &p, &single);
        let c = run_plan_into(dir.path(), &format!("{study}-c.sqlite"), &p, &gathered);
        assert_eq!(a.run_count().expect("count"), p.runs.len() as u64);
        for (other, how) in [(&b, "one worker thread"), (&c, "stepped together")] {
            assert_eq!(
                a.records_digest().expect("digest"),
                other.records_digest().expect("digest"),
                "{study}: same plan and seeds give identical records on two worker threads and {how}"
            );
        }
    }
}

#[test]
fn different_seeds_give_different_records() {
    let p = shipped_plan("classical.ron", 1);
    let run = p.runs.iter().find(|r| r.block == "naming").expect("naming run").clone();
    let mut other = run.clone();
    other.seed ^= 1;
    let a = RunWorld::new(&run).expect("builds").run_to_end().expect("runs");
    let b = RunWorld::new(&other).expect("builds").run_to_end().expect("runs");
    assert_ne!(a.interactions, b.interactions);
}

#[test]
fn interrupted_run_resumes_to_the_same_store() {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = shipped_plan("classical.ron", 2);
    let whole = run_plan_into(dir.path(), "whole.sqlite", &p, &RunnerOptions::default());
    // One worker thread (the calling thread hashes and writes) and two (each worker hashes).
    for threads in [1, 2] {
        let path = dir.path().join(format!("resumed-{threads}.sqlite"));
        {
            let mut store = Store::open(&path).expect("opens");
            let opts = RunnerOptions { stop_after: Some(17), threads, ..RunnerOptions::default() };
            let report = execute(&p.runs, &mut store, &opts, &mut |_| {}).expect("runs");
            assert!(report.interrupted);
            assert_eq!(store.run_count().expect("count"), 17);
        }
        let mut store = Store::open(&path).expect("reopens");
        let opts = RunnerOptions { threads, ..RunnerOptions::default() };
        let report = execute(&p.runs, &mut store, &opts, &mut |_| {}).expect("resumes");
        assert_eq!(report.skipped, 17);
        assert_eq!(report.executed, p.runs.len() - 17);
        assert_eq!(store.run_count().expect("count"), p.runs.len() as u64);
        assert_eq!(store.records_digest().expect("digest"), whole.records_digest().expect("digest"));
        // A third call finds nothing to do.
        let report = execute(&p.runs, &mut store, &opts, &mut |_| {}).expect("noop");
        assert_eq!((report.executed, report.skipped), (0, p.runs.len()));
    }
}

#[test]
fn zero_worker_threads_run_on_one() {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = shipped_plan("classical.ron", 1);
    let opts = RunnerOptions { threads: 0, ..RunnerOptions::default() };
    let store = run_plan_into(dir.path(), "zero.sqlite", &p, &opts);
    assert_eq!(store.run_count().expect("count"), p.runs.len() as u64);
}

/// A policy that answers later, like an LLM call, counting how many answers are in flight.
/// Each answer is held until `together` are in flight at once (then all go on, and later ones
/// pass at once), so that how many are gathered does not depend on how fast the runner starts
/// the runs.
struct Delayed {
    inner: Box<dyn Policy>,
    in_flight: Arc<AtomicUsize>,
    peak: Arc<AtomicUsize>,
    together: usize,
    gathered: Gate,
}

/// Waits for the gate; a hang guard opens it after a minute (for every waiter), so that a
/// runner that never gets there fails the test's assertions rather than hanging.
async fn held(gate: &Gate) {
    if tokio::time::timeout(std::time::Duration::from_secs(60), gate.opened()).await.is_err() {
        gate.open();
    }
}

static DELAYED: PolicyMeta = PolicyMeta {
    name: "delayed",
    family: "test",
    memory_depth: None,
    stochastic: true,
    environments: &[EnvKind::PrisonersDilemma],
    description: "wraps a policy and answers later",
    reference: "test double",
};

impl Policy for Delayed {
    fn meta(&self) -> &'static PolicyMeta {
        &DELAYED
    }
    fn decide(&mut self, obs: &Observation, rng: &mut dyn RngCore) -> Decision {
        let Decision::Ready(action) = self.inner.decide(obs, rng) else { panic!("inner policy is synchronous") };
        let (in_flight, peak, together, gathered) =
            (self.in_flight.clone(), self.peak.clone(), self.together, self.gathered.clone());
        // The wait must not draw from the agent's stream, or the wrapped play would change.
        Decision::Deferred(Box::pin(async move {
            let now = in_flight.fetch_add(1, Ordering::SeqCst) + 1;
            peak.fetch_max(now, Ordering::SeqCst);
            if now >= together {
                gathered.open();
            }
            held(&gathered).await;
            in_flight.fetch_sub(1, Ordering::SeqCst);
            Ok(action)
        }))
    }
    fn update(&mut self, feedback: &Feedback) {
        self.inner.update(feedback);
    }
}

#[test]
fn deferred_decisions_of_all_live_runs_are_in_flight_together() {
    let runs = classical_dilemma_runs();
    assert_eq!(runs.len(), 10);
    let dir = tempfile::tempdir().expect("tempdir");
    let sync = run_plan_into(
        dir.path(),
        "sync.sqlite",
        &Plan { study: "x".into(), master_seed: 0, runs: runs.clone(), models: vec![], reference: None },
        &RunnerOptions::default(),
    );

    let in_flight = Arc::new(AtomicUsize::new(0));
    let peak = Arc::new(AtomicUsize::new(0));
    let (f, pk) = (in_flight.clone(), peak.clone());
    // Every answer waits until the first stage of all ten runs (20 decisions) is in flight.
    let gathered = Gate::new();
    let factory: agora_engine::runner::PolicyFactory =
        Arc::new(move |spec: &RunSpec, _: &agora_agents::llm::TranscriptSink| {
            Ok(spec
                .seats
                .iter()
                .map(|s: &PolicySpec| {
                    Box::new(Delayed {
                        inner: s.build(),
                        in_flight: f.clone(),
                        peak: pk.clone(),
                        together: 20,
                        gathered: gathered.clone(),
                    }) as Box<dyn Policy>
                })
                .collect::<Vec<_>>())
        });
    let opts = RunnerOptions { policy_factory: Some(factory), max_live: 64, ..RunnerOptions::default() };
    let mut store = Store::open(&dir.path().join("deferred.sqlite")).expect("opens");
    execute(&runs, &mut store, &opts, &mut |_| {}).expect("runs");
    // 10 runs × 2 seats answer each stage together.
    assert_eq!(peak.load(Ordering::SeqCst), 20, "every live run's decisions were in flight at once");
    // The agents' metadata differs (a wrapper), but what was decided is the same.
    let decisions = |s: &Store| -> Vec<(String, i64, i64, String)> {
        let mut st = s
            .connection()
            .prepare("SELECT r.run_key, d.step, d.seat, d.action FROM decisions d JOIN runs r USING (run_id) ORDER BY 1, 2, 3")
            .expect("query");
        st.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
            .expect("rows")
            .map(|r| r.expect("row"))
            .collect()
    };
    let (a, b) = (decisions(&store), decisions(&sync));
    assert_eq!(a.len(), 200);
    assert!(a == b, "deferred and synchronous play recorded different decisions");
}

/// A policy that answers after a millisecond, or once a gate is open where it has one, and
/// counts its answers.
struct Paced {
    inner: Box<dyn Policy>,
    hold: Option<Gate>,
    answered: Arc<AtomicUsize>,
}

impl Policy for Paced {
    fn meta(&self) -> &'static PolicyMeta {
        &DELAYED
    }
    fn decide(&mut self, obs: &Observation, rng: &mut dyn RngCore) -> Decision {
        let Decision::Ready(action) = self.inner.decide(obs, rng) else { panic!("inner policy is synchronous") };
        let (hold, answered) = (self.hold.clone(), self.answered.clone());
        Decision::Deferred(Box::pin(async move {
            if let Some(gate) = hold {
                held(&gate).await;
            }
            tokio::time::sleep(std::time::Duration::from_millis(1)).await;
            answered.fetch_add(1, Ordering::SeqCst);
            Ok(action)
        }))
    }
    fn update(&mut self, feedback: &Feedback) {
        self.inner.update(feedback);
    }
}

#[test]
fn a_slow_run_does_not_hold_back_the_others() {
    let runs = classical_dilemma_runs();
    let slow_key = runs[0].key();
    let slow_answers = Arc::new(AtomicUsize::new(0));
    let fast_answers = Arc::new(AtomicUsize::new(0));
    let (s, f) = (slow_answers.clone(), fast_answers.clone());
    // The slow run's decisions are held until the nine others are committed: if they waited
    // for it, they would never be (and the hold's guard would let it go after a minute).
    let others_done = Gate::new();
    let hold = others_done.clone();
    let factory: agora_engine::runner::PolicyFactory =
        Arc::new(move |spec: &RunSpec, _: &agora_agents::llm::TranscriptSink| {
            let slow = spec.key() == slow_key;
            Ok(spec
                .seats
                .iter()
                .map(|seat: &PolicySpec| {
                    Box::new(Paced {
                        inner: seat.build(),
                        hold: slow.then(|| hold.clone()),
                        answered: if slow { s.clone() } else { f.clone() },
                    }) as Box<dyn Policy>
                })
                .collect::<Vec<_>>())
        });
    let opts = RunnerOptions { policy_factory: Some(factory), max_live: 64, ..RunnerOptions::default() };
    let dir = tempfile::tempdir().expect("tempdir");
    let mut store = Store::open(&dir.path().join("paced.sqlite")).expect("opens");
    // How many of the slow run's decisions had been answered when each run was committed.
    let mut at_commit = Vec::new();
    execute(&runs, &mut store, &opts, &mut |_| {
        at_commit.push(slow_answers.load(Ordering::SeqCst));
        if at_commit.len() == 9 {
            others_done.open();
        }
    })
    .expect("runs");
    assert_eq!(at_commit.len(), 10);
    // In lockstep every run would wait for the slow one; here the nine fast runs are done
    // before it has answered anything.
    assert_eq!(at_commit[..9], [0; 9], "the fast runs waited for the slow one: {at_commit:?}");
    assert_eq!(at_commit[9], 20, "the slow run is committed last, complete");
    assert_eq!(fast_answers.load(Ordering::SeqCst), 180);
}

#[test]
fn the_stag_hunt_and_the_coordination_game_run_from_a_study_and_record_their_metrics() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir_all(dir.path().join("studies")).expect("mkdir");
    let study = dir.path().join("studies/new-games.ron");
    std::fs::write(
        &study,
        r#"Study(version: 1, name: "new-games", master_seed: 5, runs: 3, blocks: [
            Block(name: "sh", environment: StagHunt(g: Some(9.0)), variants: [C0, C3],
                  rosters: [Roster(name: "roth-erev", members: [Member(policy: RothErev())])],
                  cells: ["baseline", "memory-3"], cell_runs: 2),
            Block(name: "cg", environment: Coordination(),
                  rosters: [Roster(name: "memory-coordination", members: [Member(policy: MemoryCoordination())])]),
        ])"#,
    )
    .expect("write");
    let plan = Plan::load(&study, Some(&Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/cells")))
        .expect("a study of the new games resolves");
    let store = run_plan_into(dir.path(), "new.sqlite", &plan, &RunnerOptions::default());
    assert_eq!(store.run_count().expect("count"), plan.runs.len() as u64);
    let c = store.connection();
    let metric = |env: &str, name: &str| -> i64 {
        c.query_row(
            "SELECT COUNT(*) FROM metrics m JOIN runs r USING (run_id) WHERE r.environment = ?1 AND m.name = ?2
               AND m.value BETWEEN 0 AND 1",
            [env, name],
            |r| r.get(0),
        )
        .expect("count")
    };
    // 3 runs in each of C0 and C3 at baseline; the memory cell, like every cell, runs in C0.
    assert_eq!(metric("stag-hunt", "stag"), 8);
    assert_eq!(metric("stag-hunt", "coordination"), 8);
    assert_eq!(metric("coordination", "coordination"), 3);
    assert_eq!(metric("coordination", "coordination_late"), 3);
    let decisions: i64 = c
        .query_row(
            "SELECT COUNT(*) FROM decisions d JOIN runs r USING (run_id) WHERE r.environment = 'coordination'",
            [],
            |r| r.get(0),
        )
        .expect("count");
    assert_eq!(decisions, 3 * 12 * 2, "12 rounds, two players");
}

#[test]
fn the_reply_cache_writes_in_batches_and_loses_nothing_it_was_given() {
    use agora_agents::llm::{CachedReply, ReplyCache};
    use agora_engine::store::{SqliteCache, FLUSH_AT};
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("cache.sqlite");
    drop(Store::open(&path).expect("store"));
    let reply = |content: &str| CachedReply {
        content: content.into(),
        prompt_tokens: Some(3),
        completion_tokens: None,
        endpoint: "http://x".into(),
        latency_ms: 1.5,
        finish_reason: None,
    };
    let in_table = |p: &Path| -> i64 {
        rusqlite::Connection::open(p)
            .expect("open")
            .query_row("SELECT COUNT(*) FROM llm_cache", [], |r| r.get(0))
            .expect("count")
    };
    let cache = SqliteCache::open(&path).expect("cache");
    cache.put("k0", "m", &reply("first"));
    cache.put("k0", "m", &reply("second"));
    assert_eq!(cache.get("k0"), Some(reply("first")), "a waiting reply is served, the first one kept");
    assert_eq!(in_table(&path), 0, "one reply waits for a batch");
    for i in 1..FLUSH_AT {
        cache.put(&format!("k{i}"), "m", &reply(&i.to_string()));
    }
    // A full batch is written without waiting for the drop (a stall past FLUSH_AFTER may have
    // written part of it earlier, never more than was put).
    let written = in_table(&path);
    assert!(written > 0 && written <= FLUSH_AT as i64, "{written} written after {FLUSH_AT} puts");
    cache.put("late", "m", &reply("late"));
    drop(cache);
    assert_eq!(in_table(&path), FLUSH_AT as i64 + 1, "dropping the cache writes what waits");
    let again = SqliteCache::open(&path).expect("cache");
    assert_eq!(again.get("k0"), Some(reply("first")));
    assert_eq!(again.get("late"), Some(reply("late")));
    assert_eq!(again.len(), FLUSH_AT as u64 + 1);
}

/// Plays a run stage by stage through the two stage schedules (Observe → Decide, then
/// Resolve → Record), as the engine did before ready stages were played in one pass.
fn stage_by_stage(spec: &RunSpec) -> agora_engine::RunRecords {
    let mut run = RunWorld::new(spec).expect("builds");
    while !run.is_done() {
        assert!(run.begin_stage().is_empty(), "classical decisions are ready at once");
        run.finish_stage().expect("stage resolves");
    }
    run.into_records()
}

#[test]
fn ready_stages_played_in_one_pass_record_what_stage_by_stage_play_records() {
    let mut compared = std::collections::BTreeSet::new();
    for study in ["classical.ron", "tipping.ron"] {
        for spec in &shipped_plan(study, 1).runs {
            let one_pass = RunWorld::new(spec).expect("builds").run_to_end().expect("runs");
            let stepped = stage_by_stage(spec);
            assert_eq!(record_hash::of_run(&one_pass), record_hash::of_run(&stepped), "{}", spec.key());
            assert_eq!(one_pass.decisions, stepped.decisions, "{}", spec.key());
            assert_eq!(one_pass.interactions, stepped.interactions, "{}", spec.key());
            assert_eq!(one_pass.steps, stepped.steps, "{}", spec.key());
            compared.insert(spec.environment.kind());
        }
    }
    assert!(compared.len() >= 5, "every classical game was compared: {compared:?}");
}

#[test]
fn a_run_records_the_same_into_a_threads_spare_lists_as_into_fresh_ones() {
    // On one thread runs follow each other, each recording into the lists the one before let
    // go of (longer or shorter, of another game); each run is also played alone on a thread
    // of its own, whose lists are fresh. The records must be the same.
    let specs: Vec<RunSpec> = ["classical.ron", "tipping.ron"].iter().flat_map(|s| shipped_plan(s, 1).runs).collect();
    let mut compared = 0;
    for (i, spec) in specs.iter().enumerate() {
        // Dropped at the end of the iteration: its lists are the next run's.
        let rec = RunWorld::new(spec).expect("builds").run_to_end().expect("runs");
        if i % 5 == 0 || !rec.interactions.is_empty() && i % 2 == 0 {
            let spec = spec.clone();
            let alone = std::thread::spawn(move || RunWorld::new(&spec).expect("builds").run_to_end().expect("runs"))
                .join()
                .expect("thread");
            assert_eq!(rec, alone, "{}", alone.key);
            assert_eq!(record_hash::of_run(&rec), record_hash::of_run(&alone), "{}", alone.key);
            compared += 1;
        }
    }
    assert!(compared > 20, "{compared} runs compared");
}

/// Defers every third decision of its seat and answers the rest at once, with the wrapped
/// policy's own choices: stages mix ready and awaited decisions in every order.
struct SometimesDeferred {
    inner: Box<dyn Policy>,
    asked: u64,
}

static SOMETIMES: PolicyMeta = PolicyMeta {
    name: "sometimes-deferred",
    family: "test",
    memory_depth: None,
    stochastic: true,
    environments: &[EnvKind::PrisonersDilemma, EnvKind::PublicGoods],
    description: "wraps a policy and defers every third decision",
    reference: "test double",
};

impl Policy for SometimesDeferred {
    fn meta(&self) -> &'static PolicyMeta {
        &SOMETIMES
    }
    fn decide(&mut self, obs: &Observation, rng: &mut dyn RngCore) -> Decision {
        let Decision::Ready(action) = self.inner.decide(obs, rng) else { panic!("inner policy is synchronous") };
        self.asked += 1;
        if self.asked % 3 == 1 {
            Decision::Deferred(Box::pin(async move {
                tokio::time::sleep(std::time::Duration::from_millis(1)).await;
                Ok(action)
            }))
        } else {
            Decision::Ready(action)
        }
    }
    fn update(&mut self, feedback: &Feedback) {
        self.inner.update(feedback);
    }
}

#[test]
fn stages_that_mix_ready_and_awaited_decisions_record_what_synchronous_play_records() {
    let p = shipped_plan("classical.ron", 2);
    let runs: Vec<RunSpec> = p.runs.iter().filter(|r| r.block == "pd" || r.block == "pgg").take(24).cloned().collect();
    assert!(runs.iter().any(|r| r.seats.len() > 2), "a game with more than two seats per stage is included");
    let dir = tempfile::tempdir().expect("tempdir");
    let plan_of = |runs: &[RunSpec]| Plan {
        study: "x".into(),
        master_seed: 0,
        runs: runs.to_vec(),
        models: vec![],
        reference: None,
    };
    let sync = run_plan_into(dir.path(), "sync.sqlite", &plan_of(&runs), &RunnerOptions::default());
    let factory: agora_engine::runner::PolicyFactory =
        Arc::new(move |spec: &RunSpec, _: &agora_agents::llm::TranscriptSink| {
            Ok(spec
                .seats
                .iter()
                .enumerate()
                .map(|(i, s): (usize, &PolicySpec)| {
                    // Seats start their cycle at different points, so the awaited decision of a
                    // stage is sometimes the first, sometimes a later one.
                    Box::new(SometimesDeferred { inner: s.build(), asked: i as u64 }) as Box<dyn Policy>
                })
                .collect::<Vec<_>>())
        });
    let opts = RunnerOptions { policy_factory: Some(factory), max_live: 8, ..RunnerOptions::default() };
    let mixed = run_plan_into(dir.path(), "mixed.sqlite", &plan_of(&runs), &opts);
    let rows = |s: &Store| -> Vec<(String, i64, i64, String, f64)> {
        let mut st = s
            .connection()
            .prepare(
                "SELECT r.run_key, d.step, d.seat, d.action, p.payoff FROM decisions d JOIN runs r USING (run_id)
                 JOIN payoffs p ON p.run_id = d.run_id AND p.step = d.step AND p.seat = d.seat ORDER BY 1, 2, 3",
            )
            .expect("query");
        st.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)))
            .expect("rows")
            .map(|r| r.expect("row"))
            .collect()
    };
    let (a, b) = (rows(&mixed), rows(&sync));
    assert!(a.len() > 200, "{} decisions", a.len());
    assert!(a == b, "mixed and synchronous play recorded different decisions or payoffs");
}

#[test]
fn the_engine_records_each_games_declaration_and_the_analysis_reads_it_from_the_store() {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = shipped_plan("classical.ron", 1);
    drop(run_plan_into(dir.path(), "s.sqlite", &p, &RunnerOptions::default()));
    let path = dir.path().join("s.sqlite");
    let declared = |path: &Path| {
        let c = rusqlite::Connection::open(path).expect("open");
        let mut st =
            c.prepare("SELECT environment, declaration_json FROM declarations ORDER BY environment").expect("q");
        st.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))
            .expect("rows")
            .collect::<Result<Vec<_>, _>>()
            .expect("read")
    };
    let rows = declared(&path);
    let played: std::collections::BTreeSet<&str> = p.runs.iter().map(|r| r.environment.kind().as_str()).collect();
    assert_eq!(rows.iter().map(|(e, _)| e.as_str()).collect::<std::collections::BTreeSet<_>>(), played);
    // Each row is the game's own declaration, byte for byte.
    for (env, json) in &rows {
        let kind = *EnvKind::ALL.iter().find(|k| k.as_str() == env).expect("a game");
        assert_eq!(json, &serde_json::to_string(&agora_environments::declaration(kind)).expect("json"));
    }
    let analysis = agora_analysis::analyze::analyze(&path, None).expect("analyses");
    assert!(analysis.baselines.iter().any(|b| b.environment == "public-goods" && b.metric == "contribution_r1"));

    // A store without them (schema 5) is refused by the analysis, naming the store, and gets
    // them when it is next opened for writing.
    let c = rusqlite::Connection::open(&path).expect("open");
    c.execute_batch("DROP TABLE declarations; PRAGMA user_version = 5;").expect("downgrade");
    drop(c);
    let e = agora_analysis::analyze::analyze(&path, None).expect_err("no declarations").to_string();
    assert!(e.contains("s.sqlite") && e.contains("no declaration of it"), "{e}");
    drop(Store::open(&path).expect("a schema-5 store opens and is upgraded"));
    assert_eq!(declared(&path), rows);
    assert!(agora_analysis::analyze::analyze(&path, None).is_ok());
}
