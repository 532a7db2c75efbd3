//! Committed human labels (issue 12, "real parts"): a small deterministic store — one fake
//! model playing a two-round prisoner's dilemma with step-by-step reasoning against the fake
//! server, sixteen fixed reasoning sentences in all — audited with the default codebook and
//! exported blind with a fixed seed; the labels two human coders gave that export, committed in
//! `tests/fixtures/audit/` in the import formats (`labels-ana.jsonl`: the exported JSONL records
//! with a `label` field, as Argilla gives them back; `labels-ben.csv`: `export_id`,
//! `response_id`, `sentence_index`, `text`, `label`, as Label Studio's CSV export), imported
//! (the export id is a hash of the export's parameters and sentences, so the same export drawn
//! again in a fresh store has the committed id, and is recorded there); and the κ values
//! `agora audit agreement` computes checked against κ computed by hand from the fixture, with
//! the gate's verdict. A bad committed fixture (`labels-bad.jsonl`, an unknown code) is refused
//! naming the file, line and field, and writes nothing.
//!
//! The response ids in the fixture are `{run_key}:{seat}:{slot}`, and a run key is the SHA-256
//! of the run's canonical specification (study, model, cell, seed…, not the fake server's
//! address), so they are the same on every machine; the test checks that the export still
//! matches the fixture's records sentence for sentence, so a change to the run keys, the
//! sentence splitter or the lexicon shows here as a failed comparison, not as wrong κ.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use agora_test_support::FakeReply;
use rusqlite::Connection;
use serde_json::Value;

mod common;
use common::{agora, count, first_label_reply, run_fake, s, study_text, text, write_study_file, FakeRun};

/// The reasoning of response i = (round - 1) * 2 + seat after its opening sentence, which
/// restates the task ("This is round 1 of two and I am participant A."): four sentences a
/// response. The codes the human coders gave them, and the lexicon's, are in the test.
const REASONING: [[&str; 3]; 4] = [
    [
        "Cooperating gives me the most points.",
        "Splitting the points evenly seems right.",
        "A good total for the two of us would also keep things even.",
    ],
    [
        "Option J gives the largest total for the two of us.",
        "It matters to me that my partner does well.",
        "I prefer to stay ahead of the other participant.",
    ],
    [
        "The other participant cooperated last round, so I should return the favor.",
        "To be fair, cooperating again gives me the most points.",
        "The other participant would be better off if we both cooperate.",
    ],
    [
        "They defected last round, so they do not deserve my help.",
        "We share a hometown, so helping a fellow member makes sense.",
        "Whatever I choose, the game ends after this round.",
    ],
];

/// The reply to one request: the reasoning depends on the round and the seat.
fn reply(body: &Value) -> FakeReply {
    first_label_reply(body, |seat, round| {
        let opening = format!("This is round {round} of two and I am participant {}.", ["A", "B"][seat]);
        let mut sentences = vec![opening];
        sentences.extend(REASONING[(round - 1) * 2 + seat].iter().map(|s| s.to_string()));
        sentences
    })
}

fn write_study(dir: &Path, endpoint: &str) -> PathBuf {
    let model = format!(
        r#"Model(name: "plain", family: "Fake", endpoints: ["{endpoint}"], served_id: "plain-1",
                   concurrency: 2, timeout_s: 5.0, max_attempts: 2, max_retries: 2, backoff_ms: 5)"#
    );
    let block = r#"Block(name: "pd", environment: PrisonersDilemma(rounds: 2), model_rosters: true, rosters: [],
              cells: ["step-by-step"], cell_runs: 1)"#;
    let study = study_text("labels-fixture", 12, 1, &[model], &[block]);
    write_study_file(dir, &["step-by-step"], "fixture.ron", &study)
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/audit").join(name)
}

/// Cohen's κ from the (reference, coder) pairs, computed independently of the crate.
fn kappa(pairs: &[(&str, &str)]) -> f64 {
    let n = pairs.len() as f64;
    let p_o = pairs.iter().filter(|(a, b)| a == b).count() as f64 / n;
    let mut codes: Vec<&str> = pairs.iter().flat_map(|(a, b)| [*a, *b]).collect();
    codes.sort_unstable();
    codes.dedup();
    let p_e: f64 = codes
        .iter()
        .map(|c| {
            let rows = pairs.iter().filter(|(a, _)| a == c).count() as f64;
            let cols = pairs.iter().filter(|(_, b)| b == c).count() as f64;
            rows / n * cols / n
        })
        .sum();
    (p_o - p_e) / (1.0 - p_e)
}

/// The (response id, sentence index, text, label) of each record of a committed fixture.
fn jsonl_labels(path: &Path) -> Vec<(String, i64, String, String)> {
    std::fs::read_to_string(path)
        .expect("fixture")
        .lines()
        .map(|l| {
            let r: Value = serde_json::from_str(l).expect("one JSON object per line");
            (
                r["response_id"].as_str().expect("id").to_string(),
                r["sentence_index"].as_i64().expect("index"),
                r["text"].as_str().expect("text").to_string(),
                r["label"].as_str().expect("label").to_string(),
            )
        })
        .collect()
}

/// The same from the CSV fixture (no field of it holds a quote or a line break; a field with a
/// comma is quoted).
fn csv_labels(path: &Path) -> Vec<(String, i64, String, String)> {
    let body = std::fs::read_to_string(path).expect("fixture");
    let mut lines = body.lines();
    assert_eq!(lines.next(), Some("export_id,response_id,sentence_index,text,label"));
    lines
        .map(|l| {
            let (_, rest) = l.split_once(',').expect("export id");
            let (id, rest) = rest.split_once(',').expect("id");
            let (i, rest) = rest.split_once(',').expect("index");
            let (text, label) = rest.rsplit_once(',').expect("label");
            let text = text.strip_prefix('"').and_then(|t| t.strip_suffix('"')).unwrap_or(text);
            assert!(!text.contains('"'), "{l}");
            (id.to_string(), i.parse().expect("index"), text.to_string(), label.to_string())
        })
        .collect()
}

#[test]
fn committed_human_labels_agreement_and_the_gate() {
    let FakeRun { rt: _rt, server: _server, dir, store, .. } = run_fake(Arc::new(|_, body| reply(body)), write_study);
    let c = Connection::open(&store).expect("open");
    let q = |sql: &str| count(&c, sql);
    assert_eq!(q("SELECT COUNT(*) FROM runs"), 1, "one model, one step-by-step run");
    let report = dir.path().join("audit");
    let out = agora(&["audit", "--store", s(&store), "--out", s(&report)]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("gate on lexicon/1 for model plain: refused: no human labels"), "{}", text(&out));
    assert_eq!(q("SELECT COUNT(*) FROM audit_responses WHERE reasoning_present = 1"), 4);

    // The export the fixture was labelled from: the same records, byte for byte, on every run
    // (the response ids derive from run keys, which do not depend on the server's address), and
    // blind. Drawing it records it in this store, so the fixture's labels import here.
    let sample = dir.path().join("sample.jsonl");
    let export = [
        "audit",
        "export",
        "--store",
        s(&store),
        "--sample",
        "10",
        "--seed",
        "12",
        "--format",
        "jsonl",
        "--out",
        s(&sample),
    ];
    let out = agora(&export);
    assert!(out.status.success(), "{}", text(&out));
    let exported = std::fs::read_to_string(&sample).expect("sample");
    let ana_path = fixture("labels-ana.jsonl");
    let ana_text = std::fs::read_to_string(&ana_path).expect("ana");
    assert_eq!(exported.lines().count(), 16, "four responses of four sentences");
    assert_eq!(ana_text.lines().count(), 16);
    for (e, a) in exported.lines().zip(ana_text.lines()) {
        let mut a: Value = serde_json::from_str(a).expect("fixture line");
        a.as_object_mut().expect("object").remove("label").expect("ana labelled every sentence");
        let e: Value = serde_json::from_str(e).expect("export line");
        assert_eq!(
            e, a,
            "the fixture was labelled from this export; if run keys or sentences changed, re-export and relabel"
        );
    }
    let again = dir.path().join("again.jsonl");
    let mut export_again = export;
    export_again[export_again.len() - 1] = s(&again);
    assert!(agora(&export_again).status.success());
    assert_eq!(std::fs::read_to_string(&again).expect("again"), exported);
    assert_eq!(q("SELECT COUNT(*) FROM audit_exports WHERE export_id = 'dee261302a921a2c' AND blind = 1"), 1);
    // The lexicon's codes, from the same sample with the codes shown (for checking the coder).
    let shown = dir.path().join("shown.jsonl");
    let mut export_shown = export.to_vec();
    export_shown.push("--show-codes");
    let last = export_shown.len() - 2;
    export_shown[last] = s(&shown);
    assert!(agora(&export_shown).status.success());
    let shown = std::fs::read_to_string(&shown).expect("shown");

    // The bad fixture: ana's file with line 5's label `understanding` replaced by `greed`.
    let labels_table = "SELECT COUNT(*) FROM sqlite_master WHERE name = 'audit_labels'";
    let bad = fixture("labels-bad.jsonl");
    let out = agora(&["audit", "import", "--store", s(&store), "--labels", s(&bad), "--coder-name", "ana"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let needle = format!("labels {}:5: field `label`: `greed` is not a code of codebook default v1", bad.display());
    assert!(text(&out).contains(&needle), "{needle}\n{}", text(&out));
    assert_eq!(q(labels_table), 0, "nothing written");

    // The two committed coders.
    for (file, name) in [("labels-ana.jsonl", "ana"), ("labels-ben.csv", "ben")] {
        let path = fixture(file);
        let out = agora(&["audit", "import", "--store", s(&store), "--labels", s(&path), "--coder-name", name]);
        assert!(out.status.success(), "{}", text(&out));
        assert!(text(&out).contains(&format!("16 labels by {name} imported")), "{}", text(&out));
        assert_eq!(q(&format!("SELECT COUNT(*) FROM audit_labels WHERE coder = '{name}' AND source = '{file}'")), 16);
    }
    // The bad file after valid imports leaves them as they were.
    let out = agora(&["audit", "import", "--store", s(&store), "--labels", s(&bad), "--coder-name", "ana"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert_eq!(q("SELECT COUNT(*) FROM audit_labels"), 32);
    assert_eq!(q("SELECT COUNT(*) FROM audit_labels WHERE code = 'greed'"), 0);
    assert_eq!(q("SELECT COUNT(*) FROM audit_labels WHERE coder = 'ana' AND code = 'understanding'"), 5);

    // The fixture as committed: ana and ben agree on 14 of 16 sentences. ben reads "A good
    // total for the two of us would also keep things even." as fairness (ana: social_welfare)
    // and "The other participant would be better off if we both cooperate." as social_welfare
    // (ana: altruism).
    //
    // ana × ben, n = 16 (rows ana, columns ben; every other cell 0):
    //   understanding 5/5, self_interest 2/2, fairness 1/1, social_welfare 1/1 + 1 → fairness,
    //   altruism 1/1 + 1 → social_welfare, competition 1/1, positive_reciprocity 1/1,
    //   negative_reciprocity 1/1, ingroup_cooperation 1/1.
    //   margins ana: U 5, SI 2, F 1, SW 2, ALT 2, COMP 1, PR 1, NR 1, IG 1;
    //           ben: U 5, SI 2, F 2, SW 2, ALT 1, COMP 1, PR 1, NR 1, IG 1.
    //   p_o = 14/16; p_e = (25 + 4 + 2 + 4 + 2 + 1 + 1 + 1 + 1)/256 = 41/256;
    //   κ = (224 - 41)/(256 - 41) = 183/215 = 0.851163.
    //
    // lexicon/1 against the human reference (the code both gave; the two sentences they
    // disagree on are left out), n = 14 (rows reference, columns lexicon):
    //   understanding 5/5, self_interest 1/1 + 1 → fairness ("To be fair, cooperating again
    //   gives me the most points.": the fairness rule comes first), fairness 1/1,
    //   social_welfare 1/1, altruism 1 → understanding ("It matters to me that my partner
    //   does well.": no rule matches), competition, positive_reciprocity,
    //   negative_reciprocity, ingroup_cooperation 1/1 each.
    //   margins reference: U 5, SI 2, F 1, SW 1, ALT 1, COMP 1, PR 1, NR 1, IG 1;
    //           lexicon:   U 6, SI 1, F 2, SW 1, ALT 0, COMP 1, PR 1, NR 1, IG 1.
    //   p_o = 12/14; p_e = (30 + 2 + 2 + 1 + 0 + 1 + 1 + 1 + 1)/196 = 39/196;
    //   κ = (168 - 39)/(196 - 39) = 129/157 = 0.821656 ≥ 0.8: validated.
    let humans = 183.0 / 215.0;
    let machine = 129.0 / 157.0;
    // The same κ from the committed files (the CSV read by the test's own reader).
    let ana = jsonl_labels(&ana_path);
    let ben = csv_labels(&fixture("labels-ben.csv"));
    assert_eq!(
        ana.iter().map(|r| (&r.0, r.1, &r.2)).collect::<Vec<_>>(),
        ben.iter().map(|r| (&r.0, r.1, &r.2)).collect::<Vec<_>>()
    );
    let pairs: Vec<(&str, &str)> = ana.iter().zip(&ben).map(|(a, b)| (a.3.as_str(), b.3.as_str())).collect();
    assert!((kappa(&pairs) - humans).abs() < 1e-12, "{}", kappa(&pairs));
    let lexicon: Vec<String> = shown
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).expect("line")["coder_code"].as_str().expect("code").to_string())
        .collect();
    let pairs: Vec<(&str, &str)> = ana
        .iter()
        .zip(&ben)
        .zip(&lexicon)
        .filter(|((a, b), _)| a.3 == b.3)
        .map(|((a, _), l)| (a.3.as_str(), l.as_str()))
        .collect();
    assert_eq!(pairs.len(), 14);
    assert!((kappa(&pairs) - machine).abs() < 1e-12, "{}", kappa(&pairs));

    let out = agora(&["audit", "agreement", "--store", s(&store), "--out", s(&report)]);
    assert!(out.status.success(), "{}", text(&out));
    let agreement: Value =
        serde_json::from_str(&std::fs::read_to_string(report.join("agreement.json")).expect("json")).expect("parse");
    let rows = agreement["rows"].as_array().expect("rows");
    // One model: the human pair's row is plain's (there is no separate all-models row).
    let h: Vec<&Value> = rows.iter().filter(|r| r["kind"] == "humans").collect();
    assert_eq!(h.len(), 1, "{agreement}");
    let r = h[0];
    assert_eq!(
        (r["model"].as_str(), r["reference"].as_str(), r["coder"].as_str()),
        (Some("plain"), Some("ana"), Some("ben"))
    );
    assert_eq!(r["n"].as_u64(), Some(16), "{r}");
    assert!((r["p_o"].as_f64().expect("p_o") - 14.0 / 16.0).abs() < 1e-12, "{r}");
    assert!((r["p_e"].as_f64().expect("p_e") - 41.0 / 256.0).abs() < 1e-12, "{r}");
    assert!((r["kappa"].as_f64().expect("kappa") - humans).abs() < 1e-12, "{r}");
    let cell = |r: &Value, a: &str, b: &str| {
        let labels: Vec<&str> =
            r["labels"].as_array().expect("labels").iter().map(|x| x.as_str().expect("code")).collect();
        let (i, j) = (
            labels.iter().position(|l| *l == a).expect("row code"),
            labels.iter().position(|l| *l == b).expect("column code"),
        );
        r["confusion"][i][j].as_u64().expect("count")
    };
    assert_eq!(
        [
            cell(r, "understanding", "understanding"),
            cell(r, "social_welfare", "fairness"),
            cell(r, "altruism", "social_welfare")
        ],
        [5, 1, 1],
        "{r}"
    );
    let r = rows
        .iter()
        .find(|r| r["model"] == "plain" && r["kind"] == "coder" && r["coder"] == "lexicon/1")
        .unwrap_or_else(|| panic!("no lexicon row: {agreement}"));
    assert_eq!(r["reference"], "human reference");
    assert_eq!((r["n"].as_u64(), r["excluded_disagreements"].as_u64()), (Some(14), Some(2)), "{r}");
    assert!((r["p_o"].as_f64().expect("p_o") - 12.0 / 14.0).abs() < 1e-12, "{r}");
    assert!((r["p_e"].as_f64().expect("p_e") - 39.0 / 196.0).abs() < 1e-12, "{r}");
    assert!((r["kappa"].as_f64().expect("kappa") - machine).abs() < 1e-12, "{r}");
    // κ 0.822 clears 0.8, but on 14 sentences of 4 responses: below the gate's floor.
    assert_eq!(r["verdict"], "refused", "{r}");
    assert_eq!(
        [
            cell(r, "understanding", "understanding"),
            cell(r, "self_interest", "fairness"),
            cell(r, "altruism", "understanding")
        ],
        [5, 1, 1],
        "{r}"
    );
    let stored = common::stored_lexicon_kappa(&c, "plain");
    assert!((stored - machine).abs() < 1e-12);

    // The gate as shipped refuses the fixture: 14 sentences of 4 responses cannot validate a
    // coder, whatever their κ (its 95 % interval runs from about 0.60 to 1.05).
    let out = agora(&["audit", "--store", s(&store), "--out", s(&report)]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains(
            "gate on lexicon/1 for model plain: refused: 14 sentences of 4 responses with a human reference (the gate needs 100 responses and 200 sentences; κ = 0.822 there)"
        ),
        "{}",
        text(&out)
    );
    // With the floor lowered explicitly, the threshold decides: passes at 0.8, refused at 0.85.
    let floor = ["--min-responses", "1", "--min-sentences", "1"];
    let out = agora(&[&["audit", "--store", s(&store), "--out", s(&report)][..], &floor].concat());
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        text(&out)
            .contains("gate on lexicon/1 for model plain: validated: κ = 0.822 ≥ 0.8 (14 sentences, 4 responses)"),
        "{}",
        text(&out)
    );
    let out =
        agora(&[&["audit", "--store", s(&store), "--out", s(&report), "--min-kappa", "0.85"][..], &floor].concat());
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains("gate on lexicon/1 for model plain: refused: κ = 0.822 < 0.85 (14 sentences, 4 responses)"),
        "{}",
        text(&out)
    );
}
