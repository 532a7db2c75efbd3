//! Bad input answered with exit code 2 and a message naming the right file and field: a
//! models file's entries, a participants' time limit, bad stores given to `anchors` and
//! `serve`, a `--tree-prompt` naming no run, an `--out` that cannot be written into.

use std::path::{Path, PathBuf};

mod common;
use common::{agora, text, write_study_file};

/// A store holding one small classical study.
fn small_store(dir: &Path) -> PathBuf {
    let study = write_study_file(
        dir,
        &[],
        "small.ron",
        "Study(version: 1, name: \"small\", master_seed: 1, runs: 2, blocks: [Block(name: \"pd\", \
         environment: PrisonersDilemma(rounds: 3), rosters: [Roster(name: \"tft\", members: \
         [Member(policy: TitForTat, count: 2)])])])",
    );
    let store = dir.join("s.sqlite");
    let o = agora(&["run", study.to_str().expect("utf8"), "--store", store.to_str().expect("utf8")]);
    assert!(o.status.success(), "{}", text(&o));
    store
}

fn s(p: &Path) -> &str {
    p.to_str().expect("utf8")
}

#[test]
fn an_error_in_a_models_file_names_the_models_file_and_its_field() {
    let dir = tempfile::tempdir().expect("tempdir");
    let study = dir.path().join("llm.ron");
    std::fs::write(
        &study,
        "Study(version: 1, name: \"llm\", master_seed: 1, runs: 1, blocks: [Block(name: \"pd\", \
         environment: PrisonersDilemma(rounds: 2), rosters: [Roster(name: \"m\", members: \
         [Member(policy: Llm(model: \"m\"), count: 2)])])])",
    )
    .expect("write");
    let models = dir.path().join("models.ron");
    for (entries, field) in [
        ("Model(name: \"m\", family: \"f\", served_id: \"x\", endpoints: [])", "`models[0]`"),
        (
            "Model(name: \"m\", family: \"f\", served_id: \"x\", endpoints: [\"http://127.0.0.1:9/v1\"]), \
             Model(name: \"m\", family: \"f\", served_id: \"x\", endpoints: [\"http://127.0.0.1:9/v1\"])",
            "`models[1].name`",
        ),
    ] {
        std::fs::write(&models, format!("Models(version: 1, models: [{entries}])")).expect("write");
        let store = dir.path().join("x.sqlite");
        for cmd in ["check", "run"] {
            let mut args = vec![cmd, s(&study), "--models", s(&models)];
            if cmd == "run" {
                args.extend(["--store", s(&store)]);
            }
            let o = agora(&args);
            assert_eq!(o.status.code(), Some(2), "{cmd}: {}", text(&o));
            let m = text(&o);
            assert!(m.contains(&format!("{}: {field}", models.display())), "{cmd}: {m}");
            assert!(!m.contains(&format!("{}:", study.display())), "{cmd}: the study file is not blamed: {m}");
        }
    }
}

#[test]
fn anchors_from_a_bad_store_exits_2_naming_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let empty = d.join("empty.sqlite");
    std::fs::write(&empty, "").expect("write");
    let foreign = d.join("foreign.sqlite");
    std::fs::write(&foreign, "not a database, just text\n").expect("write");
    let directory = d.join("adir");
    std::fs::create_dir(&directory).expect("mkdir");
    let missing = d.join("missing.sqlite");
    let out = d.join("anchors.ron");
    for store in [&empty, &foreign, &directory, &missing] {
        let o = agora(&["anchors", "--from-store", s(store), "--out", s(&out)]);
        assert_eq!(o.status.code(), Some(2), "{}: {}", store.display(), text(&o));
        assert!(text(&o).contains(s(store)), "{}", text(&o));
        assert!(!out.exists(), "nothing written");
    }
    assert_eq!(std::fs::metadata(&empty).expect("empty").len(), 0, "the empty file stays empty");
}

#[test]
fn serve_on_a_bad_store_exits_2_naming_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let foreign = dir.path().join("foreign.sqlite");
    std::fs::write(&foreign, "not a database, just text\n").expect("write");
    let directory = dir.path().join("adir");
    std::fs::create_dir(&directory).expect("mkdir");
    let people = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/studies/people.ron");
    for store in [&foreign, &directory] {
        let o = agora(&["serve", s(&people), "--store", s(store)]);
        assert_eq!(o.status.code(), Some(2), "{}: {}", store.display(), text(&o));
        assert!(text(&o).contains(s(store)), "{}", text(&o));
    }
}

#[test]
fn a_tree_prompt_naming_no_run_exits_2() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = small_store(dir.path());
    let out = dir.path().join("report");
    let o = agora(&["report", "--store", s(&store), "--out", s(&out), "--tree-prompt", "999999:0:0"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("holds no run 999999"), "{}", text(&o));
    // A stored run whose prompt has no audited replicates: bad input too, not a failure.
    let run: i64 = rusqlite::Connection::open(&store)
        .expect("open")
        .query_row("SELECT MIN(run_id) FROM runs", [], |r| r.get(0))
        .expect("a run");
    let prompt = format!("{run}:0:1");
    let o = agora(&["report", "--store", s(&store), "--out", s(&out), "--tree-prompt", &prompt]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("the store holds no audited replicates"), "{}", text(&o));
}

#[test]
fn an_out_that_cannot_be_written_into_exits_2_naming_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = small_store(dir.path());
    let file = dir.path().join("a-file");
    std::fs::write(&file, "x").expect("write");
    for out in [file.clone(), file.join("below")] {
        for cmd in [vec!["analyze"], vec!["export"], vec!["report"]] {
            let mut args = cmd.clone();
            args.extend(["--store", s(&store), "--out", s(&out)]);
            let o = agora(&args);
            assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
            assert!(text(&o).contains(&format!("{} exists and is not a directory", file.display())), "{}", text(&o));
        }
    }
    assert_eq!(std::fs::read_to_string(&file).expect("read"), "x", "the file is left as it was");
    // `anchors --out` names a file: a directory there is refused.
    let o = agora(&["anchors", "--from-store", s(&store), "--out", s(dir.path())]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("a directory; name the anchors file"), "{}", text(&o));
}

#[test]
fn a_store_whose_product_tables_are_newer_than_this_build_is_refused_with_both_versions() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = small_store(dir.path());
    let out = dir.path().join("out");
    // The report reads a store whose profile tables are of this build's version, or of none.
    let o = agora(&["report", "--store", s(&store), "--out", s(&out)]);
    assert!(o.status.success(), "{}", text(&o));
    let conn = rusqlite::Connection::open(&store).expect("open");
    agora_records::families::ensure(&conn, &agora_records::families::PROFILE).expect("profile tables");
    let o = agora(&["report", "--store", s(&store), "--out", s(&out)]);
    assert!(o.status.success(), "this build's own version reads: {}", text(&o));
    // A newer build wrote them: refused, naming the family and both versions, exit 2.
    let supported = agora_records::families::PROFILE.version;
    conn.execute("UPDATE table_families SET version = ?1 WHERE family = 'profile'", [supported + 1]).expect("newer");
    drop(conn);
    let o = agora(&["report", "--store", s(&store), "--out", s(&out)]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(2), "{t}");
    assert!(
        t.contains(&format!("profile tables are of version {}, newer than this build's {supported}", supported + 1)),
        "{t}"
    );
}
