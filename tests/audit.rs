//! `agora audit` end to end: a small LLM study against the fake server, whose replies carry
//! known reasoning (a `reasoning` field written first in the step-by-step cell, a think block
//! with the answer field renamed to `selection`, none at baseline) and a post-hoc `reason` that
//! states values the coder must never see; then the audit, its stored rows and its occurrence
//! shares checked against values computed by hand.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use agora_test_support::{Asked, FakeReply};
use rusqlite::Connection;
use serde_json::Value;

mod common;
use common::{agora, count, fake_model, run_fake, s, study_text, text, write_study_file, FakeRun};

/// First round, step-by-step: understanding, social welfare, and an altruistic paraphrase the
/// lexicon has no pattern for (understanding; the SUVA audit paper's first failure mode).
const R1: &str = "This is the first round of two. Option J gives the largest total for the two of us. I also care about how much the other participant ends up with.";
/// Second round, step-by-step: positive reciprocity, and a self-interested sentence that says
/// "fair" (fairness; the SUVA audit paper's second failure mode).
const R2: &str =
    "The other participant cooperated last round, so I should return the favor. To be fair, cooperating again gives me the most points.";
/// The think block of the renamed-answer cell: self-interest.
const THINK: &str = "Option F gives me the most points.";
/// The post-hoc reason of every reply: competition and self-interest, if it were ever coded.
const POST_HOC: &str = "I want to stay ahead of the other participant and keep my own points high.";

/// The reply to one request, from what it asks: the answer field and whether reasoning is
/// required (the request's schema), the round (the user message).
fn reply(body: &Value) -> FakeReply {
    let asked = Asked::of(body);
    let field = asked.field();
    let label = asked.label(0);
    let user = body["messages"][1]["content"].as_str().expect("user message");
    let first = user.contains("nothing has happened yet");
    if asked.reasoning() {
        let reasoning = if first { R1 } else { R2 };
        let reply = serde_json::json!({"reasoning": reasoning, field: label, "reason": POST_HOC});
        return FakeReply::Content(reply.to_string());
    }
    if field == "selection" {
        let reply = serde_json::json!({field: label, "reason": POST_HOC});
        return FakeReply::Content(format!("<think>{THINK}</think>\n{reply}"));
    }
    if !first && user.starts_with("You are participant B") {
        // Baseline, second round, seat B: never readable, so the slot ends in a fallback.
        return FakeReply::Content("I would rather not say {".into());
    }
    FakeReply::Content(serde_json::json!({field: label, "reason": POST_HOC}).to_string())
}

fn write_study(dir: &Path, endpoint: &str) -> PathBuf {
    let block = r#"Block(name: "pd", environment: PrisonersDilemma(rounds: 2), model_rosters: true, rosters: [],
              cells: ["baseline", "step-by-step", "answer-field"], cell_runs: 1)"#;
    let study = study_text("audit-fake", 5, 1, &[fake_model("fake", "Fake", endpoint, "fake-1", "")], &[block]);
    write_study_file(dir, &["step-by-step", "answer-field"], "audit.ron", &study)
}

/// Rows of a CSV file as maps from column to cell (no quoted commas in these tables' cells
/// that the test reads).
fn csv(path: &Path) -> Vec<std::collections::BTreeMap<String, String>> {
    let text = std::fs::read_to_string(path).expect("csv");
    let mut lines = text.lines();
    let header: Vec<String> = lines.next().expect("header").split(',').map(str::to_string).collect();
    lines.map(|l| header.iter().cloned().zip(l.split(',').map(str::to_string)).collect()).collect()
}

fn share(
    rows: &[std::collections::BTreeMap<String, String>],
    level: &str,
    cell: &str,
    code: &str,
) -> (String, String, String) {
    let r = rows
        .iter()
        .find(|r| r["level"] == level && r["cell"] == cell && r["code"] == code)
        .unwrap_or_else(|| panic!("no row {level} {cell} {code}"));
    (r["coded"].clone(), r["stating"].clone(), r["share"].clone())
}

#[test]
fn audit_codes_pre_action_reasoning_only_and_counts_the_rest() {
    let FakeRun { rt: _rt, server: _server, dir, store, .. } = run_fake(Arc::new(|_, body| reply(body)), write_study);
    let c = Connection::open(&store).expect("open");
    assert_eq!(count(&c, "SELECT COUNT(*) FROM runs"), 3, "baseline, step-by-step, answer-field");
    assert_eq!(count(&c, "SELECT COUNT(*) FROM transcripts WHERE parse_status = 'fallback'"), 1);

    let report = dir.path().join("audit");
    let out = agora(&["audit", "--store", s(&store), "--out", s(&report)]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("11 responses audited"), "{}", text(&out));

    // No human labels: by default the validation gate refuses every number computed from the
    // codes (shares with their counts and intervals, sentences per code, residual sentences);
    // counts that do not read the codes stay.
    assert!(text(&out).contains("gate on lexicon/1 for model fake: refused: no human labels"), "{}", text(&out));
    let occ = csv(&report.join("audit_occurrence.csv"));
    assert_eq!(occ.len(), 5 * 8, "model, environment and three cells, eight values each");
    for r in &occ {
        assert_eq!(r["validation"], "refused: no human labels", "{r:?}");
        assert!(
            r["stating"].is_empty() && r["share"].is_empty() && r["low"].is_empty() && r["high"].is_empty(),
            "{r:?}"
        );
    }
    assert!(occ.iter().any(|r| r["level"] == "model" && r["coded"] == "8"));
    let codes = csv(&report.join("audit_sentence_codes.csv"));
    assert!(
        !codes.is_empty()
            && codes.iter().all(|r| r["sentences"].is_empty() && r["validation"] == "refused: no human labels")
    );
    let reasoning = csv(&report.join("audit_reasoning.csv"));
    assert!(reasoning.iter().all(|r| r["residual_sentences"].is_empty() && !r["reasoning_sentences"].is_empty()));
    let md = std::fs::read_to_string(report.join("audit.md")).expect("md");
    assert!(md.contains("## Coder validation") && md.contains("- `fake`: refused: no human labels"), "{md}");
    assert!(md.contains("| fake | all | all | 8 | refused | refused |") && !md.contains("0.250 (2/8)"), "{md}");
    let json: Value =
        serde_json::from_str(&std::fs::read_to_string(report.join("audit.json")).expect("json")).expect("parse");
    assert_eq!(json["validation"][0]["status"], "refused");
    assert_eq!(json["min_kappa"], 0.8);
    assert!(json["occurrence"]
        .as_array()
        .expect("rows")
        .iter()
        .all(|o| o["share"].is_null() && o["stating"].is_null()));

    // --allow-unvalidated shows them, labelled unvalidated; the rest of this test reads them.
    let out = agora(&["audit", "--store", s(&store), "--out", s(&report), "--allow-unvalidated"]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("gate on lexicon/1 for model fake: unvalidated: no human labels"), "{}", text(&out));

    // Stored rows. 12 decisions: one fallback skipped; baseline 3 without reasoning;
    // step-by-step 4 with a reasoning field (2 first-round R1, 2 second-round R2);
    // answer-field 4 with a think block.
    let q = |sql: &str| count(&c, sql);
    assert_eq!(q("SELECT COUNT(*) FROM audit_responses"), 11);
    assert_eq!(q("SELECT COUNT(*) FROM audit_responses WHERE reasoning_present = 1"), 8);
    assert_eq!(q("SELECT COUNT(*) FROM audit_responses WHERE reasoning_present = 0 AND values_json IS NULL AND n_sentences = 0"), 3);
    assert_eq!(q("SELECT COUNT(*) FROM audit_responses WHERE post_hoc_present = 1 AND n_post_hoc_sentences = 1"), 11);
    assert_eq!(q("SELECT COUNT(*) FROM audit_responses WHERE coder = 'lexicon/1' AND codebook = 'default' AND codebook_version = 1 AND length(codebook_sha256) = 64"), 11);
    assert_eq!(q("SELECT COUNT(*) FROM audit_responses WHERE cell = 'answer-field' AND answer_field = 'selection' AND answer_key = 'selection' AND reasoning_sources = 'think'"), 4);
    assert_eq!(q("SELECT COUNT(*) FROM audit_responses WHERE cell = 'step-by-step' AND answer_field = 'action' AND answer_key = 'action' AND reasoning_sources = 'field:reasoning'"), 4);
    // Sentences: 2 x 3 (R1) + 2 x 2 (R2) + 4 x 1 (think) = 14 coded, 4 of them understanding;
    // 11 post-hoc sentences, none coded.
    assert_eq!(q("SELECT SUM(n_sentences) FROM audit_responses"), 14);
    assert_eq!(q("SELECT SUM(n_residual) FROM audit_responses"), 4);
    assert_eq!(q("SELECT COUNT(*) FROM audit_sentences WHERE segment = 'reasoning' AND code IS NOT NULL"), 14);
    assert_eq!(q("SELECT COUNT(*) FROM audit_sentences WHERE segment = 'post_hoc'"), 11);
    assert_eq!(q("SELECT COUNT(*) FROM audit_sentences WHERE segment = 'post_hoc' AND (code IS NOT NULL OR source <> 'field:reason')"), 0);
    assert_eq!(
        q("SELECT COUNT(*) FROM audit_sentences WHERE code = 'competition'"),
        0,
        "the post-hoc reason is never coded"
    );
    let reason_text: String = c
        .query_row("SELECT DISTINCT text FROM audit_sentences WHERE segment = 'post_hoc'", [], |r| r.get(0))
        .expect("post hoc");
    assert_eq!(reason_text, POST_HOC);
    // Each sentence's code, by hand.
    let mut st = c
        .prepare("SELECT text, code FROM audit_sentences WHERE segment = 'reasoning' GROUP BY text, code ORDER BY text")
        .expect("query");
    let codes: Vec<(String, String)> =
        st.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).expect("rows").map(|r| r.expect("row")).collect();
    let expected = [
        ("I also care about how much the other participant ends up with.", "understanding"),
        ("Option F gives me the most points.", "self_interest"),
        ("Option J gives the largest total for the two of us.", "social_welfare"),
        ("The other participant cooperated last round, so I should return the favor.", "positive_reciprocity"),
        ("This is the first round of two.", "understanding"),
        ("To be fair, cooperating again gives me the most points.", "fairness"),
    ];
    assert_eq!(codes, expected.map(|(a, b)| (a.to_string(), b.to_string())));
    // The value vector of a second-round step-by-step response.
    let values: String = c
        .query_row(
            "SELECT values_json FROM audit_responses a JOIN audit_sentences s USING (run_id, seat, slot)
             WHERE s.code = 'positive_reciprocity' LIMIT 1",
            [],
            |r| r.get(0),
        )
        .expect("values");
    assert_eq!(
        values,
        r#"{"positive_reciprocity":1,"negative_reciprocity":0,"ingroup_cooperation":0,"fairness":1,"social_welfare":0,"competition":0,"self_interest":0,"altruism":0}"#
    );
    // Segments: every audited reply has its action segment; the think block is reasoning.
    assert_eq!(q("SELECT COUNT(*) FROM audit_segments WHERE kind = 'action'"), 11);
    assert_eq!(q("SELECT COUNT(*) FROM audit_segments WHERE kind = 'reasoning' AND source = 'think' AND text = 'Option F gives me the most points.'"), 4);

    // Occurrence shares by hand: model level over 8 coded responses; per cell over 4.
    let occ = csv(&report.join("audit_occurrence.csv"));
    for (code, stating, share_) in [
        ("positive_reciprocity", "2", "0.2500"),
        ("fairness", "2", "0.2500"),
        ("social_welfare", "2", "0.2500"),
        ("self_interest", "4", "0.5000"),
        ("competition", "0", "0.0000"),
        ("altruism", "0", "0.0000"),
        ("negative_reciprocity", "0", "0.0000"),
    ] {
        assert_eq!(share(&occ, "model", "all", code), ("8".into(), stating.into(), share_.into()), "{code}");
    }
    assert_eq!(share(&occ, "cell", "step-by-step", "social_welfare"), ("4".into(), "2".into(), "0.5000".into()));
    assert_eq!(share(&occ, "cell", "step-by-step", "self_interest"), ("4".into(), "0".into(), "0.0000".into()));
    assert_eq!(share(&occ, "cell", "answer-field", "self_interest"), ("4".into(), "4".into(), "1.0000".into()));
    assert_eq!(
        share(&occ, "cell", "baseline", "self_interest"),
        ("0".into(), "0".into(), String::new()),
        "counted, not coded"
    );
    // Wilson 95 % for 2 of 8 (statsmodels proportion_confint(2, 8, method="wilson")).
    let row = occ.iter().find(|r| r["level"] == "model" && r["code"] == "fairness").expect("row");
    assert_eq!((row["low"].as_str(), row["high"].as_str()), ("0.0715", "0.5907"));
    let reasoning = csv(&report.join("audit_reasoning.csv"));
    let base = reasoning.iter().find(|r| r["level"] == "cell" && r["cell"] == "baseline").expect("baseline row");
    assert_eq!(
        (
            &base["responses"][..],
            &base["fallbacks_skipped"][..],
            &base["with_reasoning"][..],
            &base["without_reasoning"][..],
            &base["post_hoc_only"][..]
        ),
        ("3", "1", "0", "3", "3")
    );
    let all = reasoning.iter().find(|r| r["level"] == "all").expect("total row");
    assert_eq!(
        (
            &all["responses"][..],
            &all["with_reasoning"][..],
            &all["coded"][..],
            &all["with_post_hoc"][..],
            &all["post_hoc_sentences"][..]
        ),
        ("11", "8", "8", "11", "11")
    );
    let json: Value =
        serde_json::from_str(&std::fs::read_to_string(report.join("audit.json")).expect("json")).expect("parse");
    assert_eq!(json["total"]["without_reasoning"], 3);
    assert_eq!(json["codebook"]["values"].as_array().map(Vec::len), Some(8));
    let md = std::fs::read_to_string(report.join("audit.md")).expect("md");
    assert!(md.contains("0.250 (2/8)") && md.contains("- `fake`: unvalidated: no human labels"), "{md}");
    assert!(occ.iter().all(|r| r["validation"] == "unvalidated: no human labels"));
    assert!(report.join("audit_sentence_codes.csv").exists());

    // Idempotent: a second audit replaces its rows, and writes the same summary.
    let first = std::fs::read_to_string(report.join("audit.json")).expect("json");
    let out =
        agora(&["audit", "--store", s(&store), "--out", s(&report), "--study", "audit-fake", "--allow-unvalidated"]);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(q("SELECT COUNT(*) FROM audit_responses"), 11);
    assert_eq!(q("SELECT COUNT(*) FROM audit_sentences"), 25);
    let second: Value =
        serde_json::from_str(&std::fs::read_to_string(report.join("audit.json")).expect("json")).expect("parse");
    let mut first: Value = serde_json::from_str(&first).expect("parse");
    first["study"] = Value::String("audit-fake".into());
    assert_eq!(first, second);

    // Another codebook's rows sit beside the default's: a copy under another name.
    let custom = dir.path().join("custom.ron");
    let default = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/codebooks/default.ron"))
        .expect("read");
    std::fs::write(&custom, default.replace("name: \"default\"", "name: \"custom\"")).expect("write");
    let out = agora(&["audit", "--store", s(&store), "--out", s(&dir.path().join("custom")), "--codebook", s(&custom)]);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(q("SELECT COUNT(*) FROM audit_responses"), 22);
    assert_eq!(q("SELECT COUNT(DISTINCT codebook) FROM audit_sentences"), 2);
    assert_eq!(q("SELECT COUNT(*) FROM audit_codebooks"), 2);
}

#[test]
fn bad_input_is_refused_with_exit_2_and_nothing_written() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out_dir = dir.path().join("out");
    // A codebook with an unknown field: the file, line and field are named.
    let bad = dir.path().join("bad.ron");
    let default = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/codebooks/default.ron"))
        .expect("read");
    std::fs::write(&bad, default.replace("    version: 1,\n", "    version: 1,\n    colour: \"red\",\n"))
        .expect("write");
    let line = default.lines().position(|l| l == "    version: 1,").expect("version line") + 2;
    let out = agora(&["audit", "--store", "nowhere.sqlite", "--codebook", s(&bad), "--out", s(&out_dir)]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains(&format!("codebook {}:{line}:", bad.display())) && text(&out).contains("colour"),
        "{}",
        text(&out)
    );
    // A rule naming an unknown code: the field is named.
    std::fs::write(&bad, default.replace("Rule(code: \"altruism\"", "Rule(code: \"altruismus\"")).expect("write");
    let out = agora(&["audit", "--codebook", s(&bad), "--out", s(&out_dir)]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("field `lexicon[7].code`: `altruismus` is not one of the codes"), "{}", text(&out));
    // A missing store, and a store without the study asked for.
    let out = agora(&["audit", "--store", s(&dir.path().join("none.sqlite")), "--out", s(&out_dir)]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let store = dir.path().join("empty.sqlite");
    drop(agora_engine::Store::open(&store).expect("an empty store"));
    let out = agora(&["audit", "--store", s(&store), "--out", s(&out_dir), "--study", "nope"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("no study `nope`"), "{}", text(&out));
    assert!(!out_dir.exists(), "nothing written");
    // A file that is not an Agora store.
    let junk = dir.path().join("junk.sqlite");
    std::fs::write(&junk, "not a database at all").expect("write");
    let out = agora(&["audit", "--store", s(&junk), "--out", s(&out_dir)]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(!out_dir.exists(), "nothing written");
    // A threshold outside (-1, 1].
    let out = agora(&["audit", "--store", s(&store), "--out", s(&out_dir), "--min-kappa", "1.5"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("--min-kappa 1.5"), "{}", text(&out));
    assert!(!out_dir.exists(), "nothing written");
    // An `--out` under a file: refused before the store is written (review: it exited 1 with
    // the audit tables already committed).
    let file = dir.path().join("a-file");
    std::fs::write(&file, "x").expect("write");
    let out = agora(&["audit", "--store", s(&store), "--out", s(&file.join("out"))]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let c = rusqlite::Connection::open(&store).expect("open");
    let tables: i64 = c
        .query_row("SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name LIKE 'audit_%'", [], |r| r.get(0))
        .expect("count");
    assert_eq!(tables, 0, "the store is as it was");
    drop(c);
    // An empty store audits to empty tables.
    let out = agora(&["audit", "--store", s(&store), "--out", s(&out_dir)]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("0 responses audited"), "{}", text(&out));
}
