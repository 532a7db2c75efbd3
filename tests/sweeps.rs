//! General sweeps: a block's `Grid` or `Zip` over its environment's parameters makes each
//! point a condition with run keys, seeds and a stored label of its own, listed by the summary;
//! a path or a value the environment refuses is an input error naming its field; and the
//! shipped studies' plans are what they were before these sweeps existed.

use std::collections::BTreeSet;
use std::path::Path;

use agora_scenarios::Plan;
use rusqlite::Connection;

mod common;
use common::{agora, text};

fn s(p: &Path) -> &str {
    p.to_str().expect("utf8")
}

/// A study of one prisoner's-dilemma block (tit for tat against itself) with this sweep.
fn study(dir: &Path, sweep: &str) -> std::path::PathBuf {
    let path = dir.join("sweep.ron");
    let text = format!(
        r#"Study(version: 1, name: "sweep", master_seed: 11, runs: 2,
    blocks: [Block(name: "pd", environment: PrisonersDilemma(rounds: 10),
        rosters: [Roster(name: "tft", members: [Member(policy: TitForTat)])],
        sweep: {sweep})])"#
    );
    std::fs::write(&path, text).expect("write");
    path
}

const GRID: &str = r#"Grid([Param(path: "rounds", values: [5, 10, 20]), Param(path: "memory", values: [1, 3])])"#;
const ZIP: &str =
    r#"Zip([Param(path: "rounds", range: Range(from: 2, to: 4, step: 1)), Param(path: "memory", values: [1, 2, 3])])"#;

/// (label, run key, seed, rounds) of every planned run.
fn planned(path: &Path) -> Vec<(String, String, u64, u64)> {
    let plan = Plan::load(path, None).expect("plan");
    plan.runs
        .iter()
        .map(|r| {
            let env = serde_json::to_value(&r.environment).expect("json");
            let rounds = env["PrisonersDilemma"]["rounds"].as_u64().expect("rounds");
            (r.point.clone().expect("a point"), r.key(), r.seed, rounds)
        })
        .collect()
}

#[test]
fn a_grid_and_a_zip_give_each_point_its_runs_keys_and_label() {
    let dir = tempfile::tempdir().expect("tempdir");
    let grid = planned(&study(dir.path(), GRID));
    let grid_labels: Vec<&str> = grid.iter().step_by(2).map(|r| r.0.as_str()).collect();
    assert_eq!(
        grid_labels,
        [
            "rounds=5 memory=1",
            "rounds=5 memory=3",
            "rounds=10 memory=1",
            "rounds=10 memory=3",
            "rounds=20 memory=1",
            "rounds=20 memory=3"
        ]
    );
    assert_eq!(grid.len(), 12, "two runs per point");
    assert_eq!(grid.iter().map(|r| &r.1).collect::<BTreeSet<_>>().len(), 12, "distinct run keys");
    assert_eq!(grid.iter().map(|r| r.2).collect::<BTreeSet<_>>().len(), 12, "distinct seeds");
    assert!(grid.iter().all(|r| r.0.starts_with(&format!("rounds={} ", r.3))), "the environment takes the point");
    let zip = planned(&study(dir.path(), ZIP));
    let labels: Vec<&str> = zip.iter().step_by(2).map(|r| r.0.as_str()).collect();
    assert_eq!(labels, ["rounds=2 memory=1", "rounds=3 memory=2", "rounds=4 memory=3"]);

    // Played: every point is stored under its label and listed by the summary, in order.
    let path = study(dir.path(), GRID);
    let store = dir.path().join("s.sqlite");
    let o = agora(&["run", s(&path), "--store", s(&store)]);
    assert!(o.status.success(), "{}", text(&o));
    let out = text(&o);
    let mut at = 0;
    for label in &grid_labels {
        let row = format!("baseline {label:<18} {:>5}", 2);
        let i = out[at..].find(&row).unwrap_or_else(|| panic!("summary row `{row}` in order:\n{out}"));
        at += i + row.len();
    }
    let c = Connection::open(&store).expect("open");
    let mut st = c
        .prepare("SELECT sweep_name, COUNT(*), COUNT(sweep_value) FROM runs GROUP BY sweep_name ORDER BY sweep_name")
        .expect("query");
    let stored: Vec<(String, i64, i64)> =
        st.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?))).expect("rows").map(|r| r.expect("row")).collect();
    assert_eq!(stored.len(), 6, "{stored:?}");
    assert!(stored.iter().all(|(l, n, v)| l.starts_with("rounds=") && *n == 2 && *v == 0), "{stored:?}");

    // The analysis reads the points as conditions of their own, never as the baseline.
    let o = agora(&["analyze", "--store", s(&store), "--out", s(&dir.path().join("analysis"))]);
    assert!(o.status.success(), "{}", text(&o));
}

#[test]
fn a_path_or_value_the_environment_refuses_is_an_input_error_naming_the_field() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cases = [
        (
            r#"Grid([Param(path: "rounds", values: [5]), Param(path: "memroy", values: [1])])"#,
            "blocks[0].sweep[1].path",
            "expected `rounds` or `memory`",
        ),
        (r#"Grid([Param(path: "rounds", values: [5, 0])])"#, "blocks[0].sweep[0].values[1]", "at least 1"),
        (r#"Grid([Param(path: "rounds", values: ["many"])])"#, "blocks[0].sweep[0].values[0]", "expected u32"),
        (r#"Grid([Param(path: "rounds.deep", values: [1])])"#, "blocks[0].sweep[0].path", "not a group of fields"),
        (
            r#"Zip([Param(path: "rounds", values: [5, 6]), Param(path: "memory", values: [1])])"#,
            "blocks[0].sweep[1]",
            "2 in the first",
        ),
        (
            r#"Grid([Param(path: "rounds", values: [5], range: Range(from: 1, to: 2, step: 1))])"#,
            "blocks[0].sweep[0].range",
            "not both",
        ),
        (
            r#"Grid([Param(path: "rounds", range: Range(from: 3, to: 2, step: 1))])"#,
            "blocks[0].sweep[0].range",
            "from <= to",
        ),
        (r#"Grid([])"#, "blocks[0].sweep", "at least one parameter"),
    ];
    for (sweep, field, message) in cases {
        let path = study(dir.path(), sweep);
        let o = agora(&["check", s(&path)]);
        assert_eq!(o.status.code(), Some(2), "{sweep}: {}", text(&o));
        let out = text(&o);
        assert!(out.contains(&format!("`{field}`")) && out.contains(message), "{sweep}: {out}");
    }
    // The same paths with values the fields take are accepted: the refusals are the values'.
    let path =
        study(dir.path(), r#"Grid([Param(path: "rounds", values: [5, 1]), Param(path: "memory", values: [1])])"#);
    let o = agora(&["check", s(&path)]);
    assert!(o.status.success(), "{}", text(&o));
}

/// The shipped committed-fraction sweep plans the runs it planned before general sweeps: the
/// plan hash (of every run key in order) is the one recorded by the guard before the change.
#[test]
fn the_tipping_study_plans_the_same_run_keys() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let plan = Plan::load(&root.join("scenarios/studies/tipping.ron"), None).expect("plan");
    assert_eq!(plan.hash(), "3559d3586801f6b489c53371544409e53b6172749857ae0ac0192f26309447e4");
    assert!(plan.runs.iter().all(|r| r.point.is_none() && !r.canonical_json().contains("\"point\"")));
    let plan = Plan::load(&root.join("scenarios/studies/classical.ron"), None).expect("plan");
    assert_eq!(plan.hash(), "c8c26234beb6a11103d92495c242c4ffcff3680556d7aeb71a326dd3ace5475d");
}
