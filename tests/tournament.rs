//! Round-robin tournaments: every pair of strategies plays, matches are scored exactly as the
//! Axelrod library scores them (reference file written by `bench/peers/axelrod_reference.py`),
//! the score table ranks strategies in the printout, the report and the export, noise is a cell
//! that flips actions, and a bad declaration is refused with its field.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use rusqlite::Connection;

mod common;
use common::{agora, text};

fn s(p: &Path) -> &str {
    p.to_str().expect("utf8")
}

fn write_study(dir: &Path, tournament: &str) -> PathBuf {
    let study = format!(
        r#"Study(version: 1, name: "t", master_seed: 7, runs: 1,
    blocks: [Block(name: "rr", environment: PrisonersDilemma(rounds: 200), rosters: [], tournament: {tournament})])"#
    );
    let path = dir.join("t.ron");
    std::fs::write(&path, study).expect("write");
    path
}

/// Each match's (roster, seat 0's total payoff, seat 1's, seat 0's cooperations, seat 1's).
fn matches(store: &Path, cell: &str) -> BTreeMap<String, (i64, i64, i64, i64)> {
    let c = Connection::open(store).expect("open");
    let mut st = c
        .prepare(
            "SELECT r.roster, p.seat, CAST(SUM(p.payoff) AS INTEGER),
                    (SELECT COUNT(*) FROM decisions d WHERE d.run_id = r.run_id AND d.seat = p.seat AND d.value = 0)
             FROM runs r JOIN payoffs p USING (run_id) WHERE r.cell = ?1 GROUP BY r.run_id, p.seat ORDER BY r.roster, p.seat",
        )
        .expect("query");
    let mut out: BTreeMap<String, (i64, i64, i64, i64)> = BTreeMap::new();
    let rows = st.query_map([cell], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))).expect("rows");
    for row in rows {
        let (roster, seat, payoff, coop): (String, i64, i64, i64) = row.expect("row");
        let e = out.entry(roster).or_default();
        if seat == 0 {
            (e.0, e.2) = (payoff, coop);
        } else {
            (e.1, e.3) = (payoff, coop);
        }
    }
    out
}

#[test]
fn every_match_scores_as_the_axelrod_library_scores_it() {
    let reference: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/axelrod_matches.json"))
            .expect("reference"),
    )
    .expect("json");
    let dir = tempfile::tempdir().expect("tempdir");
    let study = write_study(
        dir.path(),
        "Tournament(strategies: [TitForTat, AlwaysCooperate, AlwaysDefect, GrimTrigger, WinStayLoseShift, TitForTwoTats, SuspiciousTitForTat])",
    );
    let store = dir.path().join("t.sqlite");
    let o = agora(&["run", s(&study), "--store", s(&store)]);
    assert!(o.status.success(), "{}", text(&o));
    let ours = matches(&store, "baseline");
    let theirs = reference["matches"].as_object().expect("matches");
    // 7 strategies: 21 pairs and 7 self-plays.
    assert_eq!(ours.len(), 28);
    assert_eq!(theirs.len(), 28);
    for (pair, m) in theirs {
        let got = ours.get(pair).unwrap_or_else(|| panic!("no match `{pair}` was played"));
        let want = (
            m["payoff"][0].as_i64().expect("int"),
            m["payoff"][1].as_i64().expect("int"),
            m["cooperations"][0].as_i64().expect("int"),
            m["cooperations"][1].as_i64().expect("int"),
        );
        assert_eq!(*got, want, "{pair}: (payoffs, cooperations) of Agora against the Axelrod library");
    }
    // The printout ranks them: tit-for-tat wins no match; always-defect loses none.
    let t = text(&o);
    let table = &t[t.find("== tournament rr / baseline").expect("the score table is printed")..];
    let row =
        |name: &str| table.lines().find(|l| l.split_whitespace().nth(1) == Some(name)).expect("a row").to_string();
    let field = |name: &str, i: usize| row(name).split_whitespace().nth(i).expect("a field").to_string();
    assert_eq!(field("tit-for-tat", 4), "0", "{table}");
    assert_eq!(field("always-defect", 6), "0", "{table}");
    assert_eq!(field("always-cooperate", 7), "1.000", "{table}");
    assert_eq!(field("always-defect", 7), "0.000", "{table}");
    // 6 matches against the others each.
    assert!(["tit-for-tat", "always-defect", "grim-trigger"].iter().all(|n| field(n, 2) == "6"), "{table}");
}

#[test]
fn noise_is_a_cell_that_flips_actions_and_the_table_reaches_the_report_and_export() {
    let dir = tempfile::tempdir().expect("tempdir");
    let study = write_study(
        dir.path(),
        "Tournament(strategies: [AlwaysCooperate, AlwaysDefect], repetitions: 3, noise: [0.25])",
    );
    let store = dir.path().join("t.sqlite");
    let o = agora(&["run", s(&study), "--store", s(&store)]);
    assert!(o.status.success(), "{}", text(&o));
    let t = text(&o);
    assert!(t.contains("== tournament rr / baseline") && t.contains("== tournament rr / noise-0.25"), "{t}");
    let c = Connection::open(&store).expect("open");
    // 3 pairs × 3 repetitions × 2 cells.
    let runs: i64 = c.query_row("SELECT COUNT(*) FROM runs", [], |r| r.get(0)).expect("count");
    assert_eq!(runs, 18);
    let coop = |cell: &str, roster: &str| -> f64 {
        c.query_row(
            "SELECT AVG(CASE WHEN d.value = 0 THEN 1.0 ELSE 0.0 END) FROM decisions d JOIN runs r USING (run_id)
             WHERE r.cell = ?1 AND r.roster = ?2 AND d.seat = 0",
            [cell, roster],
            |r| r.get(0),
        )
        .expect("share")
    };
    // Without noise always-cooperate cooperates every round; with a quarter of actions flipped,
    // about three rounds in four (600 decisions: well inside 0.65–0.85).
    assert_eq!(coop("baseline", "always-cooperate vs always-defect"), 1.0);
    let noisy = coop("noise-0.25", "always-cooperate vs always-defect");
    assert!((0.65..0.85).contains(&noisy), "{noisy}");
    let defect_noisy = coop("noise-0.25", "always-defect vs always-defect");
    assert!((0.15..0.35).contains(&defect_noisy), "{defect_noisy}");
    drop(c);
    // The same study again: the same records (the noise comes from the run seed).
    let again = dir.path().join("again.sqlite");
    assert!(agora(&["run", s(&study), "--store", s(&again)]).status.success());
    assert_eq!(common::record_hashes(&store), common::record_hashes(&again));
    // The report and the export carry the table.
    let report = dir.path().join("report");
    let o = agora(&["report", "--store", s(&store), "--out", s(&report)]);
    assert!(o.status.success(), "{}", text(&o));
    let html = std::fs::read_to_string(report.join("report.html")).expect("report");
    assert!(html.contains("id=\"tournaments\"") && html.contains("id=\"tournament-1\""), "the report has both tables");
    let out = dir.path().join("export");
    let o = agora(&["export", "--store", s(&store), "--format", "csv", "--out", s(&out)]);
    assert!(o.status.success(), "{}", text(&o));
    let csv = std::fs::read_to_string(out.join("tournament_scores.csv")).expect("scores");
    let header = csv.lines().next().expect("header");
    assert_eq!(
        header,
        "study,block,cell,environment,rank,strategy,matches,mean_payoff,wins,draws,losses,cooperation,self_payoff"
    );
    assert_eq!(csv.lines().count(), 1 + 4, "two strategies in two cells");
    assert!(csv.contains("t,rr,baseline,prisoners-dilemma,1,always-defect,3,5.0,3,0,0,0.0,1.0"), "{csv}");
}

#[test]
fn a_bad_tournament_is_refused_with_its_field() {
    let dir = tempfile::tempdir().expect("tempdir");
    for (tournament, field, says) in [
        ("Tournament(strategies: [TitForTat])", "tournament.strategies", "at least two strategies"),
        (
            "Tournament(strategies: [TitForTat, AlwaysDefect], noise: [0.7])",
            "tournament.noise[0]",
            "noise must lie in (0, 0.5]",
        ),
        ("Tournament(strategies: [TitForTat, AlwaysDefect], repetitions: 0)", "tournament.repetitions", "at least 1"),
        ("Tournament(strategies: [TitForTat, ConditionalCooperator()])", "policy", "conditional-cooperator"),
    ] {
        let study = write_study(dir.path(), tournament);
        let o = agora(&["check", s(&study)]);
        assert_eq!(o.status.code(), Some(2), "{tournament}: {}", text(&o));
        assert!(text(&o).contains(field) && text(&o).contains(says), "{tournament}: {}", text(&o));
    }
    // A game of more than two seats has no pairs.
    let path = dir.path().join("pg.ron");
    std::fs::write(
        &path,
        r#"Study(version: 1, name: "t", master_seed: 7, runs: 1,
    blocks: [Block(name: "pg", environment: PublicGoods(), rosters: [], tournament: Tournament(strategies: [ConditionalCooperator(), CooperationTypes()]))])"#,
    )
    .expect("write");
    let o = agora(&["check", s(&path)]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("a tournament plays pairs"), "{}", text(&o));
}

#[test]
fn the_shipped_tournament_prints_the_tables_the_book_shows() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = dir.path().join("t.sqlite");
    let o = agora(&["run", "scenarios/studies/tournament.ron", "--store", s(&store)]);
    assert!(o.status.success(), "{}", text(&o));
    let printed = String::from_utf8_lossy(&o.stdout).into_owned();
    let tables = &printed[printed.find("== tournament ").expect("the score tables are printed")..];
    let block = format!("```text\n{}```\n", tables.trim_start());
    let chapter = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/src/tournaments.md");
    let text = std::fs::read_to_string(&chapter).expect("chapter");
    let (start, end) = (
        "<!-- generated by tests/tournament.rs: agora run scenarios/studies/tournament.ron -->\n",
        "<!-- end of generated block -->",
    );
    let a = text.find(start).expect("the block's start") + start.len();
    let b = text.find(end).expect("the block's end");
    if std::env::var_os("AGORA_BLESS").is_some() {
        std::fs::write(&chapter, format!("{}{block}{}", &text[..a], &text[b..])).expect("write");
        return;
    }
    assert!(
        text[a..b] == block,
        "docs/src/tournaments.md is stale: write it anew with AGORA_BLESS=1 cargo test --test tournament"
    );
}
