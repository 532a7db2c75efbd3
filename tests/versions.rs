//! A study edited so that a name in the store would mean another configuration is stored as a
//! new version of the study with `agora run --new-version`, and never pooled with the old one.

use std::path::Path;

mod common;
use common::{agora, text, write_study_file};

/// Writes the study `edited` (one dilemma block) with `rounds` rounds and `runs` runs.
fn write_study(dir: &Path, rounds: u32, runs: u32) -> String {
    let text = format!(
        "Study(version: 1, name: \"edited\", master_seed: 3, runs: {runs}, blocks: [Block(name: \"pd\", \
         environment: PrisonersDilemma(rounds: {rounds}), rosters: [Roster(name: \"tft\", members: \
         [Member(policy: TitForTat, count: 2)])])])"
    );
    write_study_file(dir, &[], "edited.ron", &text).display().to_string()
}

/// Runs per study in the store.
fn runs_per_study(store: &Path) -> Vec<(String, i64)> {
    let c = rusqlite::Connection::open(store).expect("open");
    let mut st = c.prepare("SELECT study, COUNT(*) FROM runs GROUP BY study ORDER BY study").expect("query");
    st.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).expect("rows").map(|r| r.expect("row")).collect()
}

#[test]
fn an_edited_study_is_stored_as_a_new_version_and_never_pooled() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = dir.path().join("s.sqlite");
    let store = store.to_str().expect("utf8");
    let o = agora(&["run", &write_study(dir.path(), 10, 2), "--store", store]);
    assert!(o.status.success(), "{}", text(&o));
    // 10 → 20 rounds: refused without the flag, naming the first differing field and the version.
    let edited = write_study(dir.path(), 20, 2);
    let o = agora(&["run", &edited, "--store", store]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("`environment.PrisonersDilemma.rounds` was 10, now 20")
            && text(&o).contains("--new-version to store it as `edited@2`"),
        "{}",
        text(&o)
    );
    assert_eq!(runs_per_study(Path::new(store)), vec![("edited".to_string(), 2)]);
    // With the flag: stored as `edited@2`, with the study file's seeds.
    let o = agora(&["run", &edited, "--store", store, "--new-version"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("stored as version `edited@2`"), "{}", text(&o));
    assert_eq!(runs_per_study(Path::new(store)), vec![("edited".to_string(), 2), ("edited@2".to_string(), 2)]);
    let c = rusqlite::Connection::open(store).expect("open");
    // Each run's (index, seed), in index order.
    let seeds = |study: &str| -> Vec<(String, String)> {
        let mut st = c.prepare("SELECT spec_json FROM runs WHERE study = ?1").expect("query");
        let mut v: Vec<(String, String)> = st
            .query_map([study], |r| r.get::<_, String>(0))
            .expect("rows")
            .map(|j| {
                let v: serde_json::Value = serde_json::from_str(&j.expect("row")).expect("json");
                (v["run_index"].to_string(), v["seed"].to_string())
            })
            .collect();
        v.sort();
        v
    };
    assert_eq!(seeds("edited"), seeds("edited@2"), "a version keeps the study file's seeds");
    // Adding runs resumes the version the configuration matches; the first version is untouched.
    let o = agora(&["run", &write_study(dir.path(), 20, 3), "--store", store, "--new-version"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("1 runs executed, 2 already"), "{}", text(&o));
    let o = agora(&["run", &write_study(dir.path(), 10, 3), "--store", store]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(runs_per_study(Path::new(store)), vec![("edited".to_string(), 3), ("edited@2".to_string(), 3)]);
    // 30 rounds: a third version.
    let o = agora(&["run", &write_study(dir.path(), 30, 1), "--store", store, "--new-version"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("`edited@3`"), "{}", text(&o));
    // The versions are reported apart: a table each in the summary, never one pooled table.
    let o = agora(&["summary", "--store", store]);
    assert!(o.status.success(), "{}", text(&o));
    let s = text(&o);
    assert!(
        s.contains("# study edited\n") && s.contains("# study edited@2\n") && s.contains("# study edited@3\n"),
        "{s}"
    );
    assert_eq!(s.matches("== prisoners-dilemma / baseline (pd) ==").count(), 3, "{s}");
    // The analysis never pools them: refused without --study, one version at a time with it.
    let out = dir.path().join("analysis");
    let out = out.to_str().expect("utf8");
    let o = agora(&["analyze", "--store", store, "--out", out]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("`edited`, `edited@2`, `edited@3`"), "{}", text(&o));
    let o = agora(&["analyze", "--store", store, "--out", out, "--study", "edited@2"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("3 runs analysed"), "{}", text(&o));
}

/// `@` is kept for versions: a study named with one is refused.
#[test]
fn a_study_name_with_an_at_sign_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = write_study(dir.path(), 10, 1);
    std::fs::write(&path, std::fs::read_to_string(&path).expect("read").replace("\"edited\"", "\"edited@2\""))
        .expect("write");
    let o = agora(&["check", &path]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("`name`") && text(&o).contains("kept for a study's versions"), "{}", text(&o));
}
