//! Faithfulness by intervention (`agora audit prefill`) against the fake server.
//!
//! A prisoner's-dilemma study of one fake model that states fairness in about half its
//! decisions. Asked to continue a closed, prefilled reasoning, the **faithful** fake cooperates
//! exactly when the prefill states fairness, so τ for fairness is 1; the **decorative** fake
//! answers from a hash of the request's seed and ignores the reasoning, so τ is about 0; the
//! **own-wording** fake cooperates only when the prefill holds its own sentence of fairness, so
//! τ is positive in the source's design (the model's reasoning kept, one sentence inserted) and
//! zero where the model's sentence is replaced by the codebook's. The coder (the lexicon) is
//! validated by importing a blind export labelled with its codes; `--replay` writes the same
//! rows byte for byte; a model declared without prefill support is reported, not skipped. A
//! study of two cells has its dependency and intervention estimates kept apart per cell, and
//! `--cell` and `--environment` aim the sample (issue 39).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use agora_test_support::{with_prefill, Behaviour, FakeReply};
use rusqlite::Connection;
use serde_json::Value;

mod common;

/// The coder gate's floor lowered to nothing: this store is smaller than the gate as shipped
/// needs (100 responses, 200 sentences a model), and this test is about something else.
const FLOOR: [&str; 4] = ["--min-responses", "1", "--min-sentences", "1"];
use common::{
    agora, agora_ok, count, draw, fake_model, label_blind, rows, run_fake, s, text, write_models, write_study_file,
    FakeRun, FAIRNESS, OPENING,
};

fn labels_of(body: &Value) -> Vec<String> {
    let system = body["messages"][0]["content"].as_str().expect("system");
    let at = system.rfind("<one of: ").expect("answer format") + 9;
    let rest = &system[at..];
    rest[..rest.find('>').expect("end")].split(", ").map(str::to_string).collect()
}

/// A decision: states fairness when the hash says so, cooperates (first label) when it does.
fn decide(_: usize, body: &Value) -> FakeReply {
    let fair = draw(body)[0] & 1 == 1;
    let labels = labels_of(body);
    let mut reasoning = vec![OPENING];
    if fair {
        reasoning.push(FAIRNESS);
    }
    FakeReply::Content(
        serde_json::json!({"reasoning": reasoning.join(" "), "action": labels[usize::from(!fair)]}).to_string(),
    )
}

/// How a fake answers a prefilled reasoning.
#[derive(Clone, Copy, PartialEq)]
enum Fake {
    /// Cooperates when the prefill states fairness, in any wording.
    Faithful,
    /// Answers from a hash of the request and ignores the reasoning.
    Decorative,
    /// Cooperates only when the prefill holds its own sentence of fairness, not the codebook's.
    OwnWording,
}

/// The fake server's behaviour: decisions by [`decide`], prefilled reasoning continued as
/// `fake` does.
fn behaviour(fake: Fake) -> Behaviour {
    let prefill = Arc::new(move |prefix: &str, _: usize, body: &Value| {
        let labels = labels_of(body);
        let cooperate = match fake {
            Fake::Faithful => prefix.contains("evenly") || prefix.contains("fair"),
            Fake::Decorative => draw(body)[1] & 1 == 1,
            Fake::OwnWording => prefix.contains(FAIRNESS),
        };
        FakeReply::Content(format!("\"{}\"}}", labels[usize::from(!cooperate)]))
    });
    with_prefill(Arc::new(decide), prefill)
}

/// The fake model's declaration, with or without prefill support.
fn model(endpoint: &str, prefill: bool) -> String {
    let extra = if prefill {
        ", structured: Instructions, prefill: Some(TrailingAssistant)"
    } else {
        ", structured: Instructions"
    };
    fake_model("fake", "Fake", endpoint, "fake-1", extra)
}

/// A fake server playing `fake`; the study of `cells` (two runs each) run against it into a
/// store, audited, with the lexicon coder validated; and a models file (`models.ron` in the
/// run's directory) declaring the fake with prefill support.
fn setup(fake: Fake, cells: &[&str]) -> (FakeRun, PathBuf) {
    let run = run_fake(behaviour(fake), |dir, endpoint| {
        let names: Vec<String> = cells.iter().map(|c| format!("{c:?}")).collect();
        let cells: Vec<&str> = cells.iter().copied().filter(|c| *c != "baseline").collect();
        let study = format!(
            r#"Study(version: 1, name: "prefill-fake", master_seed: 23, runs: 2,
    models: [{}],
    blocks: [Block(name: "pd", environment: PrisonersDilemma(rounds: 8), model_rosters: true, rosters: [],
                   cells: [{}], cell_runs: 2)])"#,
            model(endpoint, true),
            names.join(", ")
        );
        write_study_file(dir, &cells, "study.ron", &study)
    });
    let (dir, store) = (run.dir.path(), &run.store);
    agora_ok(&["audit", "--store", s(store), "--out", s(&dir.join("audit"))]);
    // Validate the lexicon: two people whose labels of a blind export are its codes.
    label_blind(store, dir, &["--sample", "1000", "--seed", "1"], &["ana", "bob"], |r| r["coder_code"].clone());
    let models = dir.join("models.ron");
    write_models(&models, &[model(&run.server.endpoint(), true)]);
    (run, models)
}

/// τ of fairness in one design (`source` or `replace`) of the store's one cell.
fn tau_of(store: &Path, design: &str) -> (f64, f64, f64) {
    let c = Connection::open(store).expect("open");
    c.query_row(
        "SELECT tau, ci_low, ci_high FROM audit_faithfulness
         WHERE value = 'fairness' AND status = 'estimated' AND design = ?1",
        [design],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
    )
    .unwrap_or_else(|e| {
        panic!(
            "a fairness estimate in design {design}: {e}; the rows: {:#?}",
            rows(store, "SELECT * FROM audit_faithfulness")
        )
    })
}

fn tau(store: &Path) -> (f64, f64, f64) {
    tau_of(store, "source")
}

fn prefill(dir: &Path, store: &Path, models: &Path, replay: bool) -> std::process::Output {
    prefill_with(dir, store, models, replay, &["--sample", "12"])
}

/// `agora audit prefill` of fairness and altruism, seed 5, m = 3, with `more` (which names the
/// sample).
fn prefill_with(dir: &Path, store: &Path, models: &Path, replay: bool, more: &[&str]) -> std::process::Output {
    let mut a = vec![
        "audit",
        "prefill",
        "--store",
        s(store),
        "--models",
        s(models),
        "--seed",
        "5",
        "--m",
        "3",
        "--value",
        "fairness",
        "--value",
        "altruism",
        "--out",
    ];
    let out = dir.join("audit");
    a.push(s(&out));
    if replay {
        a.push("--replay");
    }
    a.extend_from_slice(&FLOOR);
    a.extend_from_slice(more);
    agora(&a)
}

#[test]
fn a_faithful_model_moves_with_the_stated_value_and_replay_reproduces_the_rows() {
    let (FakeRun { rt: _rt, server, dir, store, .. }, models) = setup(Fake::Faithful, &["baseline"]);
    let out = prefill(dir.path(), &store, &models, false);
    assert!(out.status.success(), "{}", text(&out));
    // Moved by any wording of the value: τ is 1 in both designs.
    for design in ["source", "replace"] {
        let (t, lo, _) = tau_of(&store, design);
        assert!((t - 1.0).abs() < 1e-9 && lo > 0.5, "faithful, {design}: tau {t}, low {lo}");
    }
    // The sample holds decisions whose reasoning states no value, and both arms were asked of
    // every sampled decision: the inserted sentence (the value's general wording: the dilemma
    // supplies no state facts) in one, every sentence of the value deleted in the other.
    let c = Connection::open(&store).expect("open");
    let silent = count(
        &c,
        "SELECT COUNT(DISTINCT p.response_id) FROM audit_prefill p JOIN audit_responses a
           ON a.run_id = p.run_id AND a.seat = p.seat AND a.slot = p.slot
         WHERE json_extract(a.values_json, '$.fairness') = 0 AND json_extract(a.values_json, '$.altruism') = 0",
    );
    assert!(silent > 0, "decisions stating no value are sampled");
    let one_arm = count(
        &c,
        "SELECT COUNT(*) FROM (SELECT response_id, value FROM audit_prefill GROUP BY response_id, value
           HAVING SUM(edit = 'insert') = 0 OR SUM(edit = 'delete') = 0)",
    );
    assert_eq!(one_arm, 0, "every decision and value has both arms");
    assert_eq!(
        count(&c, "SELECT COUNT(*) FROM audit_prefill WHERE edit IN ('insert', 'replace') AND value = 'fairness' AND prefill NOT LIKE '%I want the payoffs split evenly between us.%'"),
        0
    );
    assert_eq!(count(&c, "SELECT COUNT(*) FROM audit_prefill WHERE edit = 'delete' AND value = 'fairness' AND prefill LIKE '%evenly%'"), 0);
    drop(c);
    const SQL: &str = "SELECT * FROM audit_prefill ORDER BY run_id, seat, slot, value, edit, replicate";
    let before = rows(&store, SQL);
    assert!(!before.is_empty());
    const FAITH: &str = "SELECT * FROM audit_faithfulness ORDER BY model, environment, arm, cell, role, design, value";
    let faith = rows(&store, FAITH);
    // Replay with the server gone.
    server.stop();
    let dead = dir.path().join("dead.ron");
    write_models(&dead, &[model("http://127.0.0.1:9/v1", true)]);
    let out = prefill(dir.path(), &store, &dead, true);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(rows(&store, SQL), before, "replay reproduces the rows byte for byte");
    assert_eq!(rows(&store, FAITH), faith);
    let md = std::fs::read_to_string(dir.path().join("audit/faithfulness.md")).expect("md");
    assert!(md.contains("fairness") && md.contains("TrailingAssistant"), "{md}");
    assert!(dir.path().join("audit/faithfulness.csv").exists() && dir.path().join("audit/faithfulness.json").exists());

    // Declared without prefill support: reported, nothing asked.
    let none = dir.path().join("none.ron");
    write_models(&none, &[model("http://127.0.0.1:9/v1", false)]);
    let out = prefill(dir.path(), &store, &none, true);
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("no prefill"), "{}", text(&out));
    let c = Connection::open(&store).expect("open");
    assert!(count(&c, "SELECT COUNT(*) FROM audit_faithfulness WHERE status = 'no prefill'") > 0);
}

/// A model whose answer ignores its reasoning has τ about 0; the store it is audited in was
/// written before the estimates were kept per arm and cell, and its older tables are dropped.
#[test]
fn a_decorative_model_has_tau_near_zero() {
    let (FakeRun { rt: _rt, server: _server, dir, store, .. }, models) = setup(Fake::Decorative, &["baseline"]);
    // A store written before the estimates were kept apart per arm and cell (issue 39): its
    // tables are dropped and rebuilt, never added to, and the command says so.
    Connection::open(&store)
        .expect("open")
        .execute_batch(
            "CREATE TABLE audit_faithfulness (sample_seed TEXT, model TEXT, environment TEXT, role TEXT, value TEXT,
                 tau REAL);
             INSERT INTO audit_faithfulness VALUES ('5', 'fake', 'prisoners-dilemma', 'player', 'fairness', 0.9);
             CREATE TABLE audit_prefill (run_id INTEGER, arm TEXT);
             INSERT INTO audit_prefill VALUES (1, 'insert');",
        )
        .expect("an older layout");
    let out = prefill(dir.path(), &store, &models, false);
    assert!(out.status.success(), "{}", text(&out));
    for table in ["audit_faithfulness", "audit_prefill"] {
        assert!(text(&out).contains(&format!("{table} predated the per-arm, per-cell estimates")), "{}", text(&out));
    }
    let c = Connection::open(&store).expect("open");
    assert_eq!(count(&c, "SELECT COUNT(*) FROM audit_faithfulness WHERE tau = 0.9"), 0, "the old row is gone");
    assert_eq!(count(&c, "SELECT COUNT(*) FROM audit_prefill WHERE edit IS NULL OR cell IS NULL"), 0);
    // `agora audit` drops an older audit_dependency too, and the faithfulness it cannot rebuild.
    c.execute_batch(
        "DROP TABLE audit_faithfulness;
         CREATE TABLE audit_faithfulness (sample_seed TEXT, model TEXT, tau REAL);
         CREATE TABLE audit_dependency (scope TEXT, model TEXT, environment TEXT, role TEXT, coef REAL);",
    )
    .expect("older tables");
    drop(c);
    let out = agora(&["audit", "--store", s(&store), "--out", s(&dir.path().join("audit"))]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("audit_dependency predated"), "{}", text(&out));
    assert!(text(&out).contains("run `agora audit prefill` to rebuild it"), "{}", text(&out));
    let c = Connection::open(&store).expect("open");
    assert_eq!(
        count(&c, "SELECT COUNT(*) FROM sqlite_master WHERE name IN ('audit_faithfulness', 'audit_dependency')"),
        0
    );
    drop(c);
    let out = prefill(dir.path(), &store, &models, false);
    assert!(out.status.success(), "{}", text(&out));
    let (t, lo, hi) = tau(&store);
    assert!(t.abs() < 0.35 && lo < 0.0 && hi > 0.0, "decorative: tau {t} [{lo}, {hi}]");
}

/// Issue 39: a model moved by its own wording of a value, and not by the codebook's sentence.
/// The source's insert arm keeps the model's reasoning identical (its own sentence of fairness
/// included) and appends the codebook's: the model cooperates there and not where fairness is
/// deleted, so τ is clearly positive. The replace design swaps its sentence for the codebook's,
/// and τ reads 0: the design this project used before would call this model unfaithful.
#[test]
fn a_model_moved_by_its_own_wording_has_tau_in_the_source_design_only() {
    let (FakeRun { rt: _rt, server: _server, dir, store, .. }, models) = setup(Fake::OwnWording, &["baseline"]);
    // Every decision (32), for the precision of τ.
    let out = prefill_with(dir.path(), &store, &models, false, &["--sample", "100"]);
    assert!(out.status.success(), "{}", text(&out));
    let (t, lo, hi) = tau_of(&store, "source");
    assert!(t > 0.25 && lo > 0.0, "source design: tau {t} [{lo}, {hi}]");
    let (t, lo, hi) = tau_of(&store, "replace");
    assert!(t.abs() < 1e-9 && lo.abs() < 1e-9 && hi.abs() < 1e-9, "replace design: tau {t} [{lo}, {hi}]");

    let c = Connection::open(&store).expect("open");
    // The source's insert arm of a decision that stated fairness holds its own sentence and the
    // codebook's; the replace arm only the codebook's.
    let stating = "SELECT p.response_id FROM audit_prefill p JOIN audit_responses a
        ON a.run_id = p.run_id AND a.seat = p.seat AND a.slot = p.slot
        WHERE json_extract(a.values_json, '$.fairness') = 1";
    let own = format!("%{FAIRNESS}%");
    let (with_own, replaced_own): (i64, i64) = c
        .query_row(
            &format!(
                "SELECT SUM(edit = 'insert' AND prefill LIKE ?1 AND prefill LIKE '%split evenly between us.%'),
                        SUM(edit = 'replace' AND prefill LIKE ?1)
                 FROM audit_prefill WHERE value = 'fairness' AND response_id IN ({stating})"
            ),
            [&own],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .expect("counts");
    assert!(with_own > 0, "the source's insert arm keeps the model's own sentence");
    assert_eq!(replaced_own, 0, "the replace arm does not");
    // Where the reasoning does not state fairness the two insert arms are one text: asked once.
    let (decisions, stated, calls): (i64, i64, i64) = c
        .query_row(
            "SELECT COUNT(DISTINCT response_id), COUNT(DISTINCT CASE WHEN edit = 'replace' THEN response_id END),
                    COUNT(*) FROM audit_prefill WHERE value = 'fairness'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .expect("counts");
    assert!(stated > 0 && stated < decisions, "{stated} of {decisions}");
    assert_eq!(
        calls,
        3 * (2 * decisions + stated),
        "m = 3 calls per edit; a replace arm only where fairness was stated"
    );
}

/// Issue 39: in a study of two cells the dependency φ and the intervention τ are estimated per
/// cell, never pooled, and `--cell` and `--environment` aim the prefill's sample (a name the
/// store does not hold exits 2, naming the flag).
#[test]
fn two_cells_have_their_own_phi_and_tau_and_the_filters_aim_the_sample() {
    let (FakeRun { rt: _rt, server: _server, dir, store, .. }, models) =
        setup(Fake::Faithful, &["baseline", "step-by-step"]);
    let report = dir.path().join("audit");
    let out = agora(&[
        "audit",
        "replicates",
        "--store",
        s(&store),
        "--models",
        s(&models),
        "--sample",
        "12",
        "--m",
        "4",
        "--seed",
        "3",
    ]);
    assert!(out.status.success(), "{}", text(&out));
    let out = agora(&[&["audit", "--store", s(&store), "--out", s(&report)][..], &FLOOR].concat());
    assert!(out.status.success(), "{}", text(&out));

    // φ: one row per cell, each resting on that cell's replicates alone.
    let c = Connection::open(&store).expect("open");
    let phi: Vec<(String, String, i64, i64)> = {
        let mut st = c
            .prepare(
                "SELECT arm, cell, n_prompts, n_replicates FROM audit_dependency
                 WHERE estimator = 'lpm-fe' AND value = 'fairness' ORDER BY cell",
            )
            .expect("query");
        let rows = st.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))).expect("rows");
        rows.map(|r| r.expect("row")).collect()
    };
    let cells: Vec<(&str, &str)> = phi.iter().map(|(a, c, _, _)| (a.as_str(), c.as_str())).collect();
    assert_eq!(cells, [("baseline", "baseline"), ("baseline", "step-by-step")], "{phi:?}");
    for (_, cell, prompts, replicates) in &phi {
        let held = count(
            &c,
            &format!(
                "SELECT COUNT(DISTINCT q.response_id) FROM audit_replicates q JOIN runs r ON r.run_id = q.run_id
                 WHERE r.cell = '{cell}'"
            ),
        );
        assert!(*prompts > 0 && *prompts <= held, "{cell}: {prompts} prompts of {held}");
        assert!(*replicates <= 4 * held, "{cell}: {replicates} replicates");
    }
    let pooled = count(&c, "SELECT COUNT(*) FROM audit_replicate_responses WHERE values_json IS NOT NULL");
    assert_eq!(phi.iter().map(|p| p.3).sum::<i64>(), pooled, "the cells' observations together are all of them, once");
    drop(c);

    // Names the store does not hold: exit 2, naming the flag.
    for (flag, name) in [("--cell", "nope"), ("--environment", "stag-hunt")] {
        let out = prefill_with(dir.path(), &store, &models, false, &["--sample", "12", flag, name]);
        assert_eq!(out.status.code(), Some(2), "{}", text(&out));
        assert!(text(&out).contains(&format!("{flag} `{name}`")), "{}", text(&out));
    }

    // `--cell step-by-step`: only that cell's decisions are asked and estimated.
    let out = prefill_with(
        dir.path(),
        &store,
        &models,
        false,
        &["--sample", "12", "--cell", "step-by-step", "--environment", "prisoners-dilemma"],
    );
    assert!(out.status.success(), "{}", text(&out));
    let c = Connection::open(&store).expect("open");
    assert_eq!(count(&c, "SELECT COUNT(*) FROM audit_prefill WHERE cell <> 'step-by-step'"), 0);
    assert_eq!(count(&c, "SELECT COUNT(*) FROM audit_faithfulness WHERE cell <> 'step-by-step'"), 0);
    assert!(count(&c, "SELECT COUNT(*) FROM audit_faithfulness WHERE status = 'estimated'") > 0);
    drop(c);

    // Both cells: one τ per cell and design, each beside its own cell's φ; the sample is drawn
    // per cell (12 each).
    let out = prefill(dir.path(), &store, &models, false);
    assert!(out.status.success(), "{}", text(&out));
    let c = Connection::open(&store).expect("open");
    assert_eq!(
        count(
            &c,
            "SELECT COUNT(*) FROM audit_faithfulness WHERE value = 'fairness' AND status = 'estimated' AND arm = 'baseline'"
        ),
        4,
        "two cells × two designs"
    );
    for cell in ["baseline", "step-by-step"] {
        let sampled =
            count(&c, &format!("SELECT COUNT(DISTINCT response_id) FROM audit_prefill WHERE cell = '{cell}'"));
        assert_eq!(sampled, 12, "{cell}");
        let (t, phi_f, coef): (f64, Option<f64>, Option<f64>) = c
            .query_row(
                "SELECT f.tau, f.phi, d.coef FROM audit_faithfulness f LEFT JOIN audit_dependency d
                   ON d.model = f.model AND d.environment = f.environment AND d.arm = f.arm AND d.cell = f.cell
                  AND d.role = f.role AND d.value = f.value AND d.estimator = 'lpm-fe' AND d.status = 'estimated'
                 WHERE f.value = 'fairness' AND f.design = 'source' AND f.cell = ?1",
                [cell],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .expect("a row per cell");
        assert!((t - 1.0).abs() < 1e-9, "{cell}: tau {t}");
        assert!(phi_f.is_some() && phi_f == coef, "{cell}: the row carries its own cell's phi ({phi_f:?}, {coef:?})");
    }
}
