//! End-to-end tests of the `agora` binary: the shipped studies' headline results,
//! export, listings, and bad input answered with a clear message and exit code 2.

use std::path::PathBuf;
use std::process::Command;

use agora_analysis::summarize;

mod common;
use common::{agora, agora_stats, assert_stats_refused, s, shipped_study, text};

fn store_in(dir: &tempfile::TempDir, name: &str) -> PathBuf {
    dir.path().join(name)
}

#[test]
fn classical_study_reproduces_the_classical_baselines() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = store_in(&dir, "classical.sqlite");
    let out = agora(&["run", &shipped_study("classical.ron"), "--store", s(&store)]);
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
    // The analysis of the classical study: every table and a verdict per claim, in seconds.
    let out_dir = dir.path().join("analysis");
    let a = agora(&["analyze", "--store", s(&store), "--out", s(&out_dir)]);
    assert!(a.status.success(), "{}", text(&a));
    let secs: f64 = text(&a)
        .split(" runs analysed in ")
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .and_then(|x| x.parse().ok())
        .expect("timing");
    assert!(secs < 60.0, "analysis took {secs} s");
    for t in [
        "equivalence",
        "directional",
        "contrasts",
        "perturbation",
        "divergent",
        "acceptance",
        "heterogeneity",
        "baselines",
        "wasserstein",
        "convergence",
        "punishment",
        "punishment-effect",
        "verdicts",
    ] {
        let csv = std::fs::read_to_string(out_dir.join(format!("{t}.csv"))).unwrap_or_else(|_| panic!("{t}.csv"));
        assert!(csv.lines().count() >= 2, "{t}.csv has rows");
    }
    let md = std::fs::read_to_string(out_dir.join("analysis.md")).expect("markdown");
    assert!(md.contains("Certification ladder") && md.contains("Tier 1 exploratory"), "verdicts present");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("analysis.json")).expect("json")).expect("parses");
    let verdicts = json["verdicts"].as_array().expect("verdicts");
    assert!(
        verdicts.len() >= 10 && verdicts.iter().all(|v| v["first_unmet"].is_string()),
        "every verdict names its first unmet condition"
    );
    // Classical rosters stay out of the cross-model statistics unless asked for.
    let means = |json: &serde_json::Value| -> usize {
        json["heterogeneity"]
            .as_array()
            .expect("heterogeneity")
            .iter()
            .map(|r| r["means"].as_array().map_or(0, Vec::len))
            .sum()
    };
    assert_eq!(means(&json), 0, "no model, no cross-model means");
    let with_dir = dir.path().join("analysis-with-classical");
    let a = agora(&["analyze", "--store", s(&store), "--out", s(&with_dir), "--classical-in-cross-model"]);
    assert!(a.status.success(), "{}", text(&a));
    let with: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(with_dir.join("analysis.json")).expect("json")).expect("parses");
    assert!(means(&with) > 0, "asked for, the classical rosters enter the cross-model statistics");
    // The conditional cooperator's first-round contributions are equivalent to the human 0.5.
    let eq = json["equivalence"].as_array().expect("equivalence");
    assert!(eq.iter().any(|r| r["model"] == "conditional-cooperator" && r["verdict"] == "equivalent"));
    // The punishment effect per model: its means are those the arm contrast tested.
    let effect = json["punishment_effect"].as_array().expect("punishment effect");
    let contrasts = json["contrasts"].as_array().expect("contrasts");
    assert!(!effect.is_empty());
    for r in effect {
        let c = contrasts
            .iter()
            .find(|c| c["family_of_tests"] == "punishment" && c["model"] == r["model"])
            .expect("the arm contrast of this model");
        assert_eq!(r["without"]["mean"].as_f64(), c["mean_base"].as_f64(), "{r}");
        assert_eq!(r["with"]["mean"].as_f64(), c["mean_cell"].as_f64(), "{r}");
        let (lo, m, hi) = (r["with"]["low"].as_f64(), r["with"]["mean"].as_f64(), r["with"]["high"].as_f64());
        assert!(lo <= m && m <= hi, "{r}");
    }

    // The store holds every planned run; a second call resumes and finds nothing to do.
    let again = agora(&["run", &shipped_study("classical.ron"), "--store", s(&store)]);
    assert!(again.status.success());
    assert!(text(&again).contains(" 0 runs executed"), "{}", text(&again));
}

#[test]
fn tipping_study_overturns_above_a_critical_fraction_and_holds_below() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = store_in(&dir, "tipping.sqlite");
    let out = agora(&["run", &shipped_study("tipping.ron"), "--store", s(&store)]);
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
    let out = agora(&["check", &shipped_study("classical.ron")]);
    assert!(out.status.success(), "{}", text(&out));
    let t = text(&out);
    assert!(t.contains("valid") && t.contains("naming-mng") && t.contains("total:"), "{t}");
    let out = agora(&["run", &shipped_study("tipping.ron"), "--dry-run"]);
    assert!(out.status.success());
    assert!(text(&out).contains("520 runs"), "{}", text(&out));
}

#[test]
fn the_instrument_dry_run_prints_its_cells_arms_and_run_counts_beside_the_papers() {
    let out = agora(&["run", &shipped_study("instrument.ron"), "--dry-run"]);
    assert!(out.status.success(), "{}", text(&out));
    let t = text(&out);
    // The paper's count, from the study file, beside the plan's own per model.
    assert!(t.contains("the paper: 9115 model runs for 12 models"), "{t}");
    let per_model: Vec<&str> = t.lines().filter(|l| l.starts_with("model runs for ")).collect();
    assert_eq!(per_model.len(), 3, "three models in the example roster: {per_model:?}");
    // The arms, the tipping sweep included, and the Table 1 cells; no presentation check.
    for arm in ["ultimatum-fixed-offer", "shuffled-pool", "tipping", "punishment"] {
        assert!(t.contains(arm), "{arm}: {t}");
    }
    for cell in ["persona-table", "history-summary", "framing-risk", "population-48", "recognition-probe"] {
        assert!(t.contains(cell), "{cell}");
    }
    for check in ["answer-field", "layout-inline", "task-id", "alt-opening"] {
        assert!(!t.contains(check), "{check} is not part of the instrument");
    }
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
    let out = agora(&["run", &shipped_study("tipping.ron"), "--store", s(&store), "--runs", "1"]);
    assert!(out.status.success(), "{}", text(&out));
    for (format, magic) in [("parquet", b"PAR1".as_slice()), ("csv", b"run_id".as_slice())] {
        let outdir = dir.path().join(format);
        let o = agora(&["export", "--store", s(&store), "--format", format, "--out", s(&outdir)]);
        assert!(o.status.success(), "{}", text(&o));
        let runs = std::fs::read(outdir.join(format!("runs.{format}"))).expect("runs table");
        assert!(runs.starts_with(magic), "{format} runs table starts with {magic:?}");
        assert!(text(&o).contains("interactions"));
    }
    let csv = std::fs::read_to_string(dir.path().join("csv/runs.csv")).expect("csv");
    assert_eq!(csv.lines().count(), 1 + 26, "header and one run per fraction and roster");

    // Integer columns stay integers (the views declare them `INT`): read back with polars, and
    // with pandas and polars in Python where installed (CI installs them and requires it).
    use polars::prelude::*;
    let int_columns = [
        ("decisions", &["step", "round", "seat"][..]),
        ("payoffs", &["step", "round", "seat"][..]),
        ("interactions", &["t", "a", "b", "matched"][..]),
    ];
    for (table, columns) in int_columns {
        let path = dir.path().join(format!("parquet/{table}.parquet"));
        let df = ParquetReader::new(std::fs::File::open(&path).expect("parquet")).finish().expect("read back");
        for c in columns {
            assert_eq!(df.column(c).expect("column").dtype(), &DataType::Int64, "{table}.{c}");
        }
    }
    assert!(
        std::fs::read_dir(dir.path().join("parquet"))
            .expect("dir")
            .all(|e| { !e.expect("entry").file_name().to_string_lossy().ends_with(".partial") }),
        "no temporary file is left behind"
    );
    let script = r#"
import sys, pandas, polars
d = pandas.read_parquet(sys.argv[1] + "/decisions.parquet")
i = pandas.read_parquet(sys.argv[1] + "/interactions.parquet")
assert str(d["round"].dtype) == "int64", d["round"].dtype
assert len(d[d["round"] == 1]) > 0, "round == 1 selects rows"
assert list(d.groupby("round").size().index) == sorted(d["round"].unique()), "rounds in numeric order"
for c in ["t", "a", "b", "matched"]:
    assert str(i[c].dtype) == "int64", (c, i[c].dtype)
p = polars.read_parquet(sys.argv[1] + "/decisions.parquet")
assert p.schema["round"] == polars.Int64, p.schema["round"]
print("python ok")
"#;
    let have = std::process::Command::new("python3").args(["-c", "import pandas, pyarrow, polars"]).status();
    if have.is_ok_and(|s| s.success()) {
        let o = std::process::Command::new("python3")
            .args(["-c", script, s(&dir.path().join("parquet"))])
            .output()
            .expect("python3");
        assert!(o.status.success(), "{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    } else if std::env::var_os("AGORA_REQUIRE_PYTHON").is_some() {
        panic!("AGORA_REQUIRE_PYTHON is set, but python3 cannot import pandas, pyarrow and polars");
    } else {
        eprintln!("export: pandas/pyarrow/polars not installed; the Python read-back is skipped");
    }
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
            let o = if cmd == "run" { agora(&[cmd, &path, "--store", s(&never)]) } else { agora(&[cmd, &path]) };
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
    let bad_shard = agora(&["run", &shipped_study("tipping.ron"), "--shard", "4/3", "--dry-run"]);
    assert_eq!(bad_shard.status.code(), Some(2), "{}", text(&bad_shard));
}

#[test]
fn corrupt_store_is_refused_with_exit_2() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = store_in(&dir, "broken.sqlite");
    std::fs::write(&store, b"SQLite format 3\0 but then the file ends").expect("write");
    let o = agora(&["run", &shipped_study("tipping.ron"), "--runs", "1", "--store", s(&store)]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("broken.sqlite") && text(&o).contains("truncated"), "{}", text(&o));
    let o = agora(&["summary", "--store", s(&store)]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
}

#[test]
fn stats_command_answers_json_and_rejects_bad_input() {
    let o = agora_stats("mann-whitney", r#"{"x": [1, 2, 3, 4, 5], "y": [0, 0.5, 0.7]}"#);
    assert!(o.status.success(), "{}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(v["u"], 15.0);
    assert!((v["p_two_sided"].as_f64().expect("p") - 2.0 / 56.0).abs() < 1e-12, "2 / C(8, 3)");
    assert_eq!(v["excluded"], serde_json::Value::Null);
    // Regression (instrument fidelity): constant pooled values answered p = 1 silently.
    let o = agora_stats("mann-whitney", r#"{"x": [0, 0, 0], "y": [0, 0]}"#);
    assert!(o.status.success(), "{}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert!(v["excluded"].as_str().is_some_and(|e| e.contains("constant")), "{v}");
    assert_eq!(v["p_two_sided"], serde_json::Value::Null, "no p value where no test was possible");
    let o = agora_stats("tost", r#"{"values": [0.41, 0.39, 0.42, 0.40, 0.38], "theta": 0.4, "margin": 0.05}"#);
    assert!(o.status.success());
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(v["equivalent"], true);
    let o = agora_stats(
        "wasserstein-1120",
        r#"{"runs": [[0,0,0,0,0,0,10,5,3,2],[1,0,0,0,0,2,8,6,2,1]], "resamples": 200, "seed": 3}"#,
    );
    assert!(o.status.success(), "{}", text(&o));
    for (test, input, needle) in [
        ("holm", r#"{"p": [0.2, 1.4]}"#, "not a probability"),
        ("mann-whitney", r#"{"x": [], "y": [1]}"#, "`x`"),
        ("spearman", r#"{"x": [1, 2, 3, 4], "y": [1, 2, 3]}"#, "differ in length"),
        ("tost", r#"{"values": [0.1, 0.2, 0.3], "theta": 0.4}"#, "margin"),
        ("wilson", r#"{"k": 5, "n": 3}"#, "5 successes out of 3"),
        ("i2", r#"{"means": [0.1, 0.2], "variances": [0.01, 0.0]}"#, "positive"),
        ("newcombe", "not json", "stdin"),
        ("holm", r#"{"p": [0.1], "extra": 1}"#, "extra"),
    ] {
        assert_stats_refused(test, input, &[needle]);
    }
}

#[test]
fn network_command_tips_a_scale_free_population_and_refuses_bad_parameters() {
    let o = agora(&[
        "network",
        "--agents",
        "2000",
        "--topology",
        "scale-free",
        "--degree",
        "3",
        "--game",
        "memory-coordination",
        "--committed",
        "0.3",
        "--max-interactions",
        "2000000",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    assert_eq!(v["committed"], 600);
    assert_eq!(v["convention"], 1, "30 % committed carry the alternative: {v}");
    assert_eq!(v["alternative_share"], 1.0);
    for (args, field) in [
        (vec!["network", "--agents", "10", "--topology", "ring", "--degree", "3"], "lattice degree 3"),
        (vec!["network", "--committed", "1.5"], "--committed 1.5"),
        (vec!["network", "--agents", "1"], "population 1"),
        (vec!["network", "--pool", "40", "--agents", "100"], "name pool 40"),
    ] {
        let o = agora(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
        assert!(text(&o).contains(field), "{args:?}: {}", text(&o));
    }
}

#[test]
fn bench_harness_runs_every_section_and_writes_its_table() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("results.md");
    // This build's `agora` stands in for an earlier build: the comparison's path runs.
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_agora-bench"))
        .args(["--quick", "--out", s(&out), "--baseline", env!("CARGO_BIN_EXE_agora")])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("agora-bench runs");
    assert!(o.status.success(), "{}", text(&o));
    let md = std::fs::read_to_string(&out).expect("results table");
    assert!(md.contains("| benchmark | setting | result | notes |"), "{md}");
    for needle in [
        "engine = ",
        "ECS cost",
        "Python reference",
        "scale-free (m = 3) · 5,000 agents",
        "memory-5 coordination · small world",
        "peak in flight",
        "head-of-line",
        "exact Mann–Whitney",
        "`agora analyze` on a store of",
        "sweep: 2,000 points",
        "recorded study through `agora run` (12 runs, C0–C3, --threads 1)",
    ] {
        assert!(md.contains(needle), "{needle} missing from\n{md}");
    }
}

/// Regression: `agora list cells | head` panicked when the pipe closed ("failed printing to
/// stdout: Broken pipe"). The instrument's dry run prints far more than a pipe buffer holds.
#[test]
fn a_closed_pipe_ends_a_listing_quietly() {
    use std::io::Read;
    let mut child = Command::new(env!("CARGO_BIN_EXE_agora"))
        .args(["run", "scenarios/studies/instrument.ron", "--dry-run"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawns");
    let mut first = [0u8; 1];
    child.stdout.take().expect("stdout").read_exact(&mut first).expect("one byte");
    // The read end is dropped here: every later write meets a closed pipe.
    let out = child.wait_with_output().expect("waits");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
}

/// `agora run` turns transparent huge pages off for itself before the runs (src/huge_pages.rs):
/// read from the running process's status while it plays a study.
#[cfg(target_os = "linux")]
#[test]
fn agora_runs_without_transparent_huge_pages() {
    // Only where this process (the test) has huge pages on: elsewhere `agora run` would show
    // them off whether or not it turned them off itself.
    let thp_of = |status: &str| {
        std::fs::read_to_string(status)
            .ok()
            .and_then(|s| s.lines().find(|l| l.starts_with("THP_enabled:")).map(|l| l.ends_with('1')))
    };
    if thp_of("/proc/self/status") != Some(true) {
        eprintln!("skipped: this kernel shows no transparent huge pages for this process");
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let store = dir.path().join("s.sqlite");
    // The store's write lock is held, so that the run waits to claim its store (it turns huge
    // pages off before it opens the store) and is still there to be looked at, however long the
    // test takes to look.
    drop(agora_engine::Store::open(&store).expect("a store"));
    let lock = rusqlite::Connection::open(&store).expect("open");
    lock.execute_batch("BEGIN IMMEDIATE").expect("lock");
    let mut child = Command::new(env!("CARGO_BIN_EXE_agora"))
        .args(["run", "scenarios/studies/classical.ron", "--runs", "3", "--store", s(&store)])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawns");
    let status = format!("/proc/{}/status", child.id());
    let started = std::time::Instant::now();
    let mut off = false;
    // Until the run command has begun (before it, the process has the system's default).
    while started.elapsed() < std::time::Duration::from_secs(60) && child.try_wait().expect("wait").is_none() {
        if thp_of(&status) == Some(false) {
            off = true;
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    let _ = child.kill();
    let exited = child.wait().expect("wait");
    drop(lock);
    assert!(off, "agora run kept transparent huge pages on (it ended {exited})");
}

#[test]
fn the_llm_slice_in_readme_plans_fifteen_runs_against_the_local_model() {
    let o = agora(&["check", &shipped_study("llm-slice.ron")]);
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(t.contains("total: 15 runs, <=348 decisions"), "{t}");
    assert!(t.contains("model runs for gemma-3-270m: 15"), "{t}");
}

#[test]
fn a_study_with_human_seats_is_checked_but_not_run_without_people() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = store_in(&dir, "people.sqlite");
    let out = agora(&["check", &shipped_study("people.ron")]);
    assert!(out.status.success(), "{}", text(&out));
    let out = agora(&["run", &shipped_study("people.ron"), "--store", s(&store)]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("block `pd-people` has human seats; people play them in a browser with `agora serve"),
        "{}",
        text(&out)
    );
    assert!(!store.exists(), "nothing written");
    // A stand-in must be classical.
    let bad = dir.path().join("bad.ron");
    std::fs::write(
        &bad,
        std::fs::read_to_string(shipped_study("people.ron"))
            .expect("study")
            .replace("Human(TitForTat)", "Human(Human(TitForTat))"),
    )
    .expect("write");
    let out = agora(&["check", s(&bad)]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("stand-in must be a classical policy"), "{}", text(&out));
    // Anchors need a store with human runs; a bad anchors file is refused by name.
    let out = agora(&["anchors", "--from-store", s(&dir.path().join("none.sqlite"))]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let classical = store_in(&dir, "classical.sqlite");
    assert!(agora(&["run", &shipped_study("classical.ron"), "--runs", "1", "--store", s(&classical)]).status.success());
    let out = agora(&["anchors", "--from-store", s(&classical), "--out", s(&dir.path().join("a.ron"))]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("no human run"), "{}", text(&out));
    let bad_anchors = dir.path().join("bad-anchors.ron");
    std::fs::write(&bad_anchors, "HumanAnchors(version: 1, anchors: [HumanAnchor(claim: \"nope\")])").expect("write");
    let out = agora(&[
        "analyze",
        "--store",
        s(&classical),
        "--human-anchors",
        s(&bad_anchors),
        "--out",
        s(&dir.path().join("an")),
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("--human-anchors"), "{}", text(&out));
    // `agora serve` refuses a study without human seats, naming it.
    let out = agora(&["serve", &shipped_study("classical.ron"), "--store", s(&store)]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("no `participants`"), "{}", text(&out));
}

/// A `--study` that names no study of the store is an error naming the studies it holds (a
/// typo used to print nothing and exit 0); the right name still prints.
#[test]
fn a_study_name_that_matches_nothing_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = store_in(&dir, "s.sqlite");
    let out = agora(&["run", &shipped_study("tipping.ron"), "--store", s(&store), "--runs", "1"]);
    assert!(out.status.success(), "{}", text(&out));
    let o = agora(&["summary", "--store", s(&store), "--study", "tiping"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("--study `tiping`") && text(&o).contains("its studies: tipping"), "{}", text(&o));
    let o = agora(&["summary", "--store", s(&store), "--study", "tipping"]);
    assert!(o.status.success() && text(&o).contains("== tipping"), "{}", text(&o));
    // analyze too: a typo grades nothing and says so.
    let out = dir.path().join("analysis");
    let o = agora(&["analyze", "--store", s(&store), "--study", "tiping", "--out", s(&out)]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("--study `tiping`") && !out.exists(), "{}", text(&o));
}

/// `agora list` prints the names a study file takes beside the store's names: a study made of
/// nothing but the listed names passes `agora check`, for every agent in a game it plays.
#[test]
fn list_prints_the_names_a_study_file_takes() {
    let envs = text(&agora(&["list", "environments"]));
    let env_names: std::collections::BTreeMap<String, String> = envs
        .lines()
        .skip(1)
        .map(|l| {
            let mut w = l.split_whitespace();
            (w.next().expect("name").to_string(), w.next().expect("study-file name").to_string())
        })
        .collect();
    assert!(env_names.len() >= 5, "{envs}");
    let agents = text(&agora(&["list", "agents"]));
    let dir = tempfile::tempdir().expect("tempdir");
    let mut n = 0;
    let lines: Vec<&str> = agents.lines().skip(1).collect();
    for (i, line) in lines.iter().enumerate().filter(|(_, l)| !l.starts_with(' ')) {
        let name = lines[i + 1..]
            .iter()
            .take_while(|l| l.starts_with(' '))
            .find_map(|l| l.trim().strip_prefix("in a study file: "))
            .unwrap_or_else(|| panic!("no study-file line for {line}"));
        let env = line.split_whitespace().last().expect("an environment").trim_end_matches(',');
        let env = &env_names[env];
        let body = format!(
            "Study(version: 1, name: \"x\", master_seed: 1, runs: 1, blocks: [Block(name: \"b\", environment: {env}, \
             rosters: [Roster(name: \"r\", members: [Member(policy: {name})])])])"
        );
        let path = write_study(&dir, &body);
        let o = agora(&["check", &path]);
        assert!(o.status.success(), "`{name}` in {env}: {}", text(&o));
        n += 1;
    }
    assert!(n >= 10, "{agents}");
}

/// An admin token that is set but shorter than 16 characters is refused (exit 2), not silently
/// replaced by a fresh one the operator never sees coming.
#[test]
fn serve_refuses_a_short_admin_token() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = dir.path().join("s.sqlite");
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_agora"))
        .args(["serve", &shipped_study("people.ron"), "--store", s(&store), "--bind", "127.0.0.1:0"])
        .env("AGORA_ADMIN_TOKEN", "short-token")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("agora serve");
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("AGORA_ADMIN_TOKEN: 11 characters; at least 16"), "{}", text(&o));
    assert!(!store.exists(), "nothing written");
}

/// A roster that names a model no declaration holds fails `check` (and `run`) with exit 2
/// naming the study file and the model; it used to pass `check`.
#[test]
fn an_undeclared_model_fails_check() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = write_study(
        &dir,
        "Study(version: 1, name: \"x\", master_seed: 1, runs: 2, blocks: [Block(name: \"b\", \
         environment: PrisonersDilemma(), rosters: [Roster(name: \"r\", members: [Member(policy: \
         Llm(model: \"no-such-model\"), count: 1), Member(policy: TitForTat, count: 1)])])])",
    );
    for cmd in ["check", "run"] {
        let never = dir.path().join("never.sqlite");
        let o = if cmd == "run" { agora(&[cmd, &path, "--store", s(&never)]) } else { agora(&[cmd, &path]) };
        assert_eq!(o.status.code(), Some(2), "{cmd}: {}", text(&o));
        assert!(text(&o).contains("model `no-such-model` is named by a roster but not declared"), "{}", text(&o));
        assert!(text(&o).contains("bad.ron") && !never.exists(), "{}", text(&o));
    }
}

/// A study edited so that a name already in the store would mean something else (10 → 20 rounds)
/// is refused with the first differing field, and the store keeps only the first configuration;
/// adding runs or a block to the same study is allowed.
#[test]
fn an_edited_configuration_is_never_pooled_under_one_name() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = dir.path().join("s.sqlite");
    let body = |rounds: u32, runs: u32, extra: &str| {
        format!(
            "Study(version: 1, name: \"edited\", master_seed: 3, runs: {runs}, blocks: [Block(name: \"pd\", \
             environment: PrisonersDilemma(rounds: {rounds}), rosters: [Roster(name: \"tft\", members: \
             [Member(policy: TitForTat, count: 2)])]){extra}])"
        )
    };
    let run = |text: String| {
        let path = write_study(&dir, &text);
        agora(&["run", &path, "--store", s(&store)])
    };
    let o = run(body(10, 2, ""));
    assert!(o.status.success(), "{}", text(&o));
    let o = run(body(20, 2, ""));
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("block `pd`") && text(&o).contains("environment") && text(&o).contains("rounds"),
        "{}",
        text(&o)
    );
    let runs = |sql: &str| -> i64 {
        rusqlite::Connection::open(&store).expect("open").query_row(sql, [], |r| r.get(0)).expect("count")
    };
    assert_eq!(runs("SELECT COUNT(*) FROM runs"), 2, "nothing of the edited study was stored");
    // Adding runs and a block is allowed.
    let more = ", Block(name: \"pd-ac\", environment: PrisonersDilemma(rounds: 10), rosters: [Roster(name: \"ac\", \
                members: [Member(policy: AlwaysCooperate, count: 2)])])";
    let o = run(body(10, 3, more));
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(runs("SELECT COUNT(*) FROM runs"), 6);
}

/// A network too large for the machine is refused before anything is allocated, with its
/// memory estimate in the message (10⁹ agents used to abort on allocation); a small one runs.
#[test]
fn a_network_too_large_is_refused_with_its_memory_estimate() {
    let o = agora(&["network", "--agents", "1000000000", "--topology", "small-world"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("needs about 66.1 GiB, above the 16 GiB"), "{}", text(&o));
    let o = agora(&["network", "--agents", "100000000000"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let o = agora(&["network", "--agents", "1000", "--max-interactions", "10000"]);
    assert!(o.status.success(), "{}", text(&o));
}

/// A population beyond the recorded-run bound is refused by `check` before anything is
/// allocated (10⁸ used to take the machine's memory).
#[test]
fn a_population_beyond_the_bound_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = write_study(
        &dir,
        "Study(version: 1, name: \"x\", master_seed: 1, runs: 1, blocks: [Block(name: \"b\", \
         environment: NamingGame(population: 100000000), rosters: [Roster(name: \"r\", members: \
         [Member(policy: MinimalNaming)])])])",
    );
    let o = agora(&["check", &path]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("population") && text(&o).contains("100000000 seats"), "{}", text(&o));
}
