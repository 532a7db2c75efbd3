//! A study made in pieces or interrupted gives the store of one uninterrupted run: shards
//! merged analyse like a single run, a merge refuses a source whose runs no longer hash to their
//! record hashes, and runs killed at random points and resumed give the same records.

use std::path::Path;
use std::process::{Command, Output};

mod common;
use common::{agora, record_hashes, s, shipped_study, text};

#[test]
fn a_study_sharded_three_ways_and_merged_analyses_like_a_single_run() {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = |name: &str| s(&dir.path().join(name)).to_string();
    let study = shipped_study("classical.ron");
    let single = agora(&["run", &study, "--runs", "2", "--store", &p("single.sqlite")]);
    assert!(single.status.success(), "{}", text(&single));
    for i in 1..=3 {
        let o = agora(&[
            "run",
            &study,
            "--runs",
            "2",
            "--shard",
            &format!("{i}/3"),
            "--store",
            &p(&format!("shard{i}.sqlite")),
        ]);
        assert!(o.status.success(), "{}", text(&o));
    }
    let m =
        agora(&["merge", "--into", &p("merged.sqlite"), &p("shard1.sqlite"), &p("shard2.sqlite"), &p("shard3.sqlite")]);
    assert!(m.status.success(), "{}", text(&m));
    // Merging a shard again adds nothing.
    let again = agora(&["merge", "--into", &p("merged.sqlite"), &p("shard2.sqlite")]);
    assert!(text(&again).contains(" 0 runs added"), "{}", text(&again));
    assert_eq!(record_hashes(Path::new(&p("merged.sqlite"))), record_hashes(Path::new(&p("single.sqlite"))));
    for s in ["single", "merged"] {
        let o = agora(&["analyze", "--store", &p(&format!("{s}.sqlite")), "--out", &p(s)]);
        assert!(o.status.success(), "{}", text(&o));
    }
    let read = |s: &str| std::fs::read_to_string(dir.path().join(s).join("analysis.json")).expect("analysis");
    assert!(read("single") == read("merged"), "the merged shards give the same analysis");
}

/// Every stored run's key and decisions, in key order.
fn stored_decisions(store: &Path) -> Vec<(String, String)> {
    let c = rusqlite::Connection::open(store).expect("open");
    let mut st = c
        .prepare("SELECT r.run_key, x.decisions FROM runs r JOIN run_rows x USING (run_id) ORDER BY r.run_key")
        .expect("query");
    st.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).expect("rows").map(|r| r.expect("row")).collect()
}

/// Changes one decision's value in the store's first run, leaving its record hash as it was;
/// returns the run's key.
fn alter_first_run(c: &rusqlite::Connection) -> String {
    let key: String = c
        .query_row("SELECT run_key FROM runs WHERE run_id = (SELECT min(run_id) FROM run_rows)", [], |r| r.get(0))
        .expect("a run");
    let altered = c
        .execute(
            "UPDATE run_rows SET decisions = json_set(decisions, '$[0][5]', json_extract(decisions, '$[0][5]') + 1)
             WHERE run_id = (SELECT run_id FROM runs WHERE run_key = ?1)",
            [&key],
        )
        .expect("altered");
    assert_eq!(altered, 1);
    key
}

/// Issue 40: `agora merge` recomputes every source run's record hash before it takes a row. A
/// source holding a run altered after it was written (its hash left stale) is refused, exit 2,
/// naming the file and the run, whether the target lacks the run or holds it already (where it
/// used to count as "already present"), and nothing is written; an untouched source merges.
#[test]
fn issue_40_merge_refuses_a_source_whose_run_no_longer_hashes_to_its_record_hash() {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = |name: &str| s(&dir.path().join(name)).to_string();
    let study = shipped_study("classical.ron");
    for i in 1..=2 {
        let shard = p(&format!("shard{i}.sqlite"));
        let o = agora(&["run", &study, "--runs", "2", "--shard", &format!("{i}/2"), "--store", &shard]);
        assert!(o.status.success(), "{}", text(&o));
    }
    let target = p("target.sqlite");
    let o = agora(&["merge", "--into", &target, &p("shard1.sqlite")]);
    assert!(o.status.success(), "{}", text(&o));
    let before = (record_hashes(Path::new(&target)), stored_decisions(Path::new(&target)));
    // One decision's value changed in shard 1, its record hash left as it was.
    let c = rusqlite::Connection::open(p("shard1.sqlite")).expect("open");
    let key = alter_first_run(&c);
    drop(c);
    let refused = |o: &Output| {
        assert_eq!(o.status.code(), Some(2), "{}", text(o));
        assert!(text(o).contains(&p("shard1.sqlite")) && text(o).contains(&format!("run {key}")), "{}", text(o));
    };
    // Held by the target already, with the listed untouched shard before it: nothing is taken.
    let o = agora(&["merge", "--into", &target, &p("shard2.sqlite"), &p("shard1.sqlite")]);
    refused(&o);
    assert_eq!((record_hashes(Path::new(&target)), stored_decisions(Path::new(&target))), before, "target unchanged");
    // New to the target: refused, and no target made.
    let fresh = p("fresh.sqlite");
    refused(&agora(&["merge", "--into", &fresh, &p("shard1.sqlite")]));
    assert!(!Path::new(&fresh).exists(), "no target made");
    // The untouched shard still merges.
    let o = agora(&["merge", "--into", &target, &p("shard2.sqlite")]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(record_hashes(Path::new(&target)).len() > before.0.len(), "{}", text(&o));
    assert!(agora(&["verify", "--store", &target]).status.success());
}

/// Issue 40: a schema-7 store altered by hand before this build opened it (one decision
/// changed, its hash left stale) is not re-blessed by the upgrade to schema 8. The upgrade
/// checks each run against the hash schema 7 stored for it first: the altered run keeps its
/// stale hash, with a warning naming it, so `agora verify` names that run alone and
/// `agora merge` refuses the store, exit 2, whether an earlier command or the merge itself
/// upgraded it. The untouched runs get schema 8's hashes, and an untouched schema-7 store
/// merges and verifies.
#[test]
fn issue_40_merge_refuses_a_schema_7_source_altered_before_its_upgrade() {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = |name: &str| s(&dir.path().join(name)).to_string();
    let v7 = p("v7.sqlite");
    let o = agora(&["run", &shipped_study("classical.ron"), "--runs", "1", "--store", &v7]);
    assert!(o.status.success(), "{}", text(&o));
    let fresh = record_hashes(Path::new(&v7));
    // What schema 7 left: the same values under schema 7's hashes, with version 7.
    let old = agora_engine::store::Store::open_read(Path::new(&v7))
        .expect("opens")
        .schema_7_hashes()
        .expect("schema 7's hashes");
    assert_eq!(old.len(), fresh.len());
    let c = rusqlite::Connection::open(&v7).expect("open");
    for (key, hash) in &old {
        c.execute("UPDATE runs SET record_hash = ?1 WHERE run_key = ?2", [hash, key]).expect("old hash");
    }
    c.pragma_update(None, "user_version", 7).expect("schema 7");
    let untouched = p("untouched.sqlite");
    c.execute("VACUUM INTO ?1", [&untouched]).expect("a copy, through SQLite");
    // One decision's value changed, its schema-7 hash left as it was.
    let key = alter_first_run(&c);
    let copy = p("copy.sqlite");
    c.execute("VACUUM INTO ?1", [&copy]).expect("a copy, through SQLite");
    drop(c);
    let version = |s: &str| -> i64 {
        rusqlite::Connection::open(s).expect("open").query_row("PRAGMA user_version", [], |r| r.get(0)).expect("v")
    };
    assert_eq!((version(&v7), version(&copy), version(&untouched)), (7, 7, 7));

    // Opened by this build: upgraded, the altered run alone named, with exit 1.
    let o = agora(&["verify", "--store", &v7]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    assert_eq!(version(&v7), i64::from(agora_engine::store::SCHEMA_VERSION), "upgraded to this build's schema");
    let stdout = String::from_utf8_lossy(&o.stdout).into_owned();
    let named: Vec<&str> = stdout.lines().filter(|l| l.starts_with("run ")).collect();
    let stale: Vec<(String, String)> = old.iter().filter(|(k, _)| *k == key).cloned().collect();
    assert_eq!(named.len(), 1, "{t}");
    assert!(named[0].starts_with(&format!("run {key}: stored hash {}", stale[0].1)), "{t}");
    assert!(t.contains(&format!("1 of {} runs do not hash", fresh.len())), "{t}");
    assert!(
        t.contains(&format!("1 of {} runs kept a record hash that does not verify under schema 7", fresh.len())),
        "{t}"
    );
    assert!(t.contains(&format!("written): {key}.")), "the warning names the run: {t}");
    // Every other run has schema 8's hash, a fresh store's; the altered one its schema-7 hash.
    let upgraded = record_hashes(Path::new(&v7));
    assert_eq!(upgraded.iter().filter(|h| !fresh.contains(h)).cloned().collect::<Vec<_>>(), stale);
    assert_eq!(upgraded.len(), fresh.len());

    // `agora merge` refuses it, upgraded already or upgraded by the merge, and makes no target.
    let target = p("target.sqlite");
    for source in [&v7, &copy] {
        let o = agora(&["merge", "--into", &target, source]);
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        assert!(text(&o).contains(source.as_str()) && text(&o).contains(&format!("run {key}")), "{}", text(&o));
        assert!(!Path::new(&target).exists(), "no target made");
    }
    assert_eq!(version(&copy), i64::from(agora_engine::store::SCHEMA_VERSION));

    // The other way: the untouched schema-7 store upgrades quietly, merges and verifies, with a
    // fresh store's hashes.
    let o = agora(&["merge", "--into", &target, &untouched]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(!text(&o).contains("warning"), "{}", text(&o));
    assert_eq!(record_hashes(Path::new(&untouched)), fresh);
    assert_eq!(record_hashes(Path::new(&target)), fresh);
    assert!(agora(&["verify", "--store", &target]).status.success());
}

#[test]
fn sigkill_at_random_points_then_resume_gives_the_uninterrupted_store() {
    let dir = tempfile::tempdir().expect("tempdir");
    let study = shipped_study("tipping.ron");
    let reference = dir.path().join("reference.sqlite");
    let o = agora(&["run", &study, "--runs", "3", "--store", s(&reference)]);
    assert!(o.status.success(), "{}", text(&o));
    let want = record_hashes(&reference);
    // Kill points spread over the run, from a fixed seed.
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut partial = 0;
    for attempt in 0..4 {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        // Kill once a seeded number of runs (up to half the plan) is committed, plus a few ms.
        let threshold = 1 + ((state >> 33) % (want.len() as u64 / 2)) as usize;
        let delay_ms = (state >> 13) % 7;
        let store = dir.path().join(format!("killed{attempt}.sqlite"));
        let mut child = Command::new(env!("CARGO_BIN_EXE_agora"))
            .args(["run", &study, "--runs", "3", "--threads", "1", "--store", s(&store)])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("spawns");
        let started = std::time::Instant::now();
        while started.elapsed() < std::time::Duration::from_secs(120) {
            let committed = rusqlite::Connection::open_with_flags(&store, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
                .and_then(|c| c.query_row("SELECT COUNT(*) FROM runs", [], |r| r.get::<_, i64>(0)))
                .unwrap_or(0) as usize;
            if committed >= threshold || child.try_wait().ok().flatten().is_some() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        // Where no kill so far landed part-way (each run finished in the moment between its
        // threshold being seen and the kill: a test held up on a loaded machine), the last one
        // holds the store's write lock from its threshold on, so that the run cannot commit
        // another run, let alone finish, before the kill.
        let lock = (attempt == 3 && partial == 0).then(|| {
            let c = rusqlite::Connection::open(&store).expect("open");
            c.busy_timeout(std::time::Duration::from_secs(120)).expect("busy timeout");
            c.execute_batch("BEGIN IMMEDIATE").expect("lock");
            c
        });
        std::thread::sleep(std::time::Duration::from_millis(delay_ms));
        // Child::kill sends SIGKILL on Unix.
        let _ = child.kill();
        let _ = child.wait();
        drop(lock);
        if store.exists() {
            let n = record_hashes(&store).len();
            if n > 0 && n < want.len() {
                partial += 1;
            }
        }
        let resumed = agora(&["run", &study, "--runs", "3", "--store", s(&store)]);
        assert!(resumed.status.success(), "attempt {attempt} (killed after {threshold} runs): {}", text(&resumed));
        assert_eq!(record_hashes(&store), want, "attempt {attempt}: killed after {threshold} runs, then resumed");
    }
    assert!(partial > 0, "at least one kill landed part-way through the study");
}
