//! End-to-end tests of the `agora` binary: the shipped studies' headline results, resume,
//! export, listings, and bad input answered with a clear message and exit code 2.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use agora_analysis::summarize;

fn agora(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_agora"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("agora runs")
}

fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

fn study(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/studies").join(name).display().to_string()
}

fn store_in(dir: &tempfile::TempDir, name: &str) -> PathBuf {
    dir.path().join(name)
}

#[test]
fn classical_study_reproduces_the_classical_baselines() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = store_in(&dir, "classical.sqlite");
    let out = agora(&["run", &study("classical.ron"), "--store", store.to_str().expect("utf8")]);
    assert!(out.status.success(), "{}", text(&out));
    let printed = text(&out);
    assert!(printed.contains("== public-goods / baseline (pgg) =="), "{printed}");
    assert!(printed.contains("== naming-game / baseline (naming-mng) =="), "{printed}");

    let (groups, _) = summarize(&store, Some("classical")).expect("summaries");
    let find = |block: &str, roster: &str, variant: &str| {
        groups
            .iter()
            .find(|g| {
                g.condition.block == block
                    && g.condition.roster == roster
                    && g.condition.variant == variant
                    && g.condition.cell == "baseline"
            })
            .unwrap_or_else(|| panic!("{block}/{roster}/{variant}"))
    };
    // Conditional cooperators decline over the ten rounds by clearly more than 0.10 of endowment.
    let cc = find("pgg", "conditional-cooperator", "C0");
    assert_eq!(cc.runs, 30);
    let decline = cc.metrics["contribution_r1"].mean - cc.metrics["contribution_last"].mean;
    assert!(decline > 0.10, "conditional cooperators decline by {decline}");
    assert!(cc.metrics["contribution_change"].median < -0.10);
    // The minimal naming game forms a convention in every run, in every variant.
    for v in ["C0", "C1", "C2", "C3"] {
        let mng = find("naming-mng", "minimal-naming", v);
        assert_eq!(mng.metrics["convention"].mean, 1.0, "{v}: every run forms a convention");
        assert_eq!(mng.metrics["convention"].n, 30);
    }
    // The store holds every planned run; a second call resumes and finds nothing to do.
    let again = agora(&["run", &study("classical.ron"), "--store", store.to_str().expect("utf8")]);
    assert!(again.status.success());
    assert!(text(&again).contains(" 0 runs executed"), "{}", text(&again));
}

#[test]
fn tipping_study_overturns_above_a_critical_fraction_and_holds_below() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = store_in(&dir, "tipping.sqlite");
    let out = agora(&["run", &study("tipping.ron"), "--store", store.to_str().expect("utf8")]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("critical mass"), "{}", text(&out));
    let (_, curves) = summarize(&store, Some("tipping")).expect("summaries");
    let mc = curves.iter().find(|c| c.roster == "memory-coordination").expect("memory-coordination curve");
    let critical = mc.critical.expect("the convention is overturned at some fraction");
    let failure = mc.largest_failure.expect("and held at a smaller one");
    assert!(failure < critical);
    assert!(mc.monotone, "held below the critical fraction, overturned from it on: {:?}", mc.points);
    // Every run of every point: 20 runs per fraction, 13 fractions.
    assert_eq!(mc.points.len(), 13);
    assert!(mc.points.iter().all(|p| p.3 == 20));
}

#[test]
fn check_and_dry_run_print_the_plan() {
    let out = agora(&["check", &study("classical.ron")]);
    assert!(out.status.success(), "{}", text(&out));
    let t = text(&out);
    assert!(t.contains("valid") && t.contains("naming-mng") && t.contains("total:"), "{t}");
    let out = agora(&["run", &study("tipping.ron"), "--dry-run"]);
    assert!(out.status.success());
    assert!(text(&out).contains("520 runs"), "{}", text(&out));
}

#[test]
fn listings() {
    let envs = text(&agora(&["list", "environments"]));
    for e in ["prisoners-dilemma", "public-goods", "bargaining", "money-request", "naming-game"] {
        assert!(envs.contains(e), "{envs}");
    }
    let agents = text(&agora(&["list", "agents"]));
    for a in
        ["conditional-cooperator", "roth-erev", "minimal-naming", "memory-coordination", "committed", "tit-for-tat"]
    {
        assert!(agents.contains(a), "{agents}");
    }
    let cells = text(&agora(&["list", "cells"]));
    assert!(cells.contains("memory-3") && cells.contains("design"), "{cells}");
    let anchors = text(&agora(&["list", "anchors"]));
    assert!(anchors.contains("Oosterbeek") && anchors.contains("4,0,3,6,1,6,32,30,12,6"), "{anchors}");
}

#[test]
fn export_writes_tables_pandas_can_load() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = store_in(&dir, "s.sqlite");
    let out = agora(&["run", &study("tipping.ron"), "--store", store.to_str().expect("utf8"), "--runs", "1"]);
    assert!(out.status.success(), "{}", text(&out));
    for (format, magic) in [("parquet", b"PAR1".as_slice()), ("csv", b"run_id".as_slice())] {
        let outdir = dir.path().join(format);
        let o = agora(&[
            "export",
            "--store",
            store.to_str().expect("utf8"),
            "--format",
            format,
            "--out",
            outdir.to_str().expect("utf8"),
        ]);
        assert!(o.status.success(), "{}", text(&o));
        let runs = std::fs::read(outdir.join(format!("runs.{format}"))).expect("runs table");
        assert!(runs.starts_with(magic), "{format} runs table starts with {magic:?}");
        assert!(text(&o).contains("interactions"));
    }
    let csv = std::fs::read_to_string(dir.path().join("csv/runs.csv")).expect("csv");
    assert_eq!(csv.lines().count(), 1 + 26, "header and one run per fraction and roster");
}

fn write_study(dir: &tempfile::TempDir, body: &str) -> String {
    let studies = dir.path().join("studies");
    std::fs::create_dir_all(&studies).expect("mkdir");
    std::fs::create_dir_all(dir.path().join("cells")).expect("mkdir");
    let p = studies.join("bad.ron");
    std::fs::write(&p, body).expect("write");
    p.display().to_string()
}

#[test]
fn bad_input_exits_2_with_a_message_naming_file_and_field() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cases = [
        ("Study(version: 1, name: \"x\", master_seed: 1, runs: 2, blocks: [], extra: 1)", "extra"),
        ("Study(version: 1, name: \"x\", master_seed: 1, runs: 2, blocks: [Block(name: \"b\", environment: Poker(), rosters: [])])", "Poker"),
        (
            "Study(version: 1, name: \"x\", master_seed: 1, runs: 2, blocks: [Block(name: \"b\", environment: NamingGame(memory: 0), rosters: [Roster(name: \"r\", members: [Member(policy: MinimalNaming)])])])",
            "memory",
        ),
        (
            "Study(version: 1, name: \"x\", master_seed: 1, runs: 2, blocks: [Block(name: \"b\", environment: NamingGame(tipping: Tipping(fraction: 1.2)), rosters: [Roster(name: \"r\", members: [Member(policy: MinimalNaming)])])])",
            "tipping.fraction",
        ),
        (
            "Study(version: 1, name: \"x\", master_seed: 1, runs: 2, blocks: [Block(name: \"b\", environment: NamingGame(pool: 1), rosters: [Roster(name: \"r\", members: [Member(policy: MinimalNaming)])])])",
            "pool",
        ),
        (
            "Study(version: 1, name: \"x\", master_seed: 1, runs: 2, blocks: [Block(name: \"b\", environment: PrisonersDilemma(), rosters: [Roster(name: \"r\", members: [Member(policy: Oracle)])])])",
            "Oracle",
        ),
        ("Study(version: 1, name: \"x\", master_seed: -4, runs: 2, blocks: [])", "bad.ron"),
        ("not ron at all {", "bad.ron"),
    ];
    for (body, needle) in cases {
        let path = write_study(&dir, body);
        for cmd in ["check", "run"] {
            let never = dir.path().join("never.sqlite");
            let o = if cmd == "run" {
                agora(&[cmd, &path, "--store", never.to_str().expect("utf8")])
            } else {
                agora(&[cmd, &path])
            };
            let t = text(&o);
            assert_eq!(o.status.code(), Some(2), "{cmd} {body}: {t}");
            assert!(t.contains(needle) && t.contains("bad.ron"), "{cmd}: expected `{needle}` in: {t}");
            assert!(!t.contains("panicked"), "{t}");
        }
    }
    assert!(!dir.path().join("never.sqlite").exists(), "bad input writes no store");
    let missing = agora(&["check", "/no/such/study.ron"]);
    assert_eq!(missing.status.code(), Some(2), "{}", text(&missing));
    assert!(text(&missing).contains("/no/such/study.ron"));
    let bad_shard = agora(&["run", &study("tipping.ron"), "--shard", "4/3", "--dry-run"]);
    assert_eq!(bad_shard.status.code(), Some(2), "{}", text(&bad_shard));
}

#[test]
fn corrupt_store_is_refused_with_exit_2() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = store_in(&dir, "broken.sqlite");
    std::fs::write(&store, b"SQLite format 3\0 but then the file ends").expect("write");
    let o = agora(&["run", &study("tipping.ron"), "--runs", "1", "--store", store.to_str().expect("utf8")]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("broken.sqlite") && text(&o).contains("truncated"), "{}", text(&o));
    let o = agora(&["summary", "--store", store.to_str().expect("utf8")]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
}
