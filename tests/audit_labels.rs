//! Human labels and the coder-validation gate end to end: a small study of two fake models
//! against the fake server (`clear`, whose reasoning the lexicon codes almost perfectly, and
//! `murky`, whose reasoning is full of paraphrases the lexicon misreads), audited; a seeded
//! sample exported (JSONL, JSON, CSV) and checked against the sampling rule computed here; three
//! human coders' labels written by the test (two that agree on most sentences, one that labels
//! a quarter of them), imported (bad files refused with nothing written); agreement computed and
//! every κ checked against κ computed here from the confusion counts; and the gate checked to
//! refuse the model below 0.8 and pass the one above it. Labels are made on a blind export: a
//! file labelled from an export with the machine's codes shown is refused on import (issue 39),
//! and one labeller alone validates nothing.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::Arc;

use agora_test_support::FakeReply;
use rusqlite::Connection;
use serde_json::Value;
use sha2::{Digest, Sha256};

mod common;

/// The gate's floor lowered to nothing, for checks of its threshold on a small store.
const FLOOR: [&str; 4] = ["--min-responses", "1", "--min-sentences", "1"];
use common::{
    agora, count, fake_model, first_label_reply, run_fake, s, study_text, text, write_study_file, FakeRun, VALUES,
};

/// Sentences the lexicon misreads (the SUVA audit paper's failure modes), with their true code.
const MISREAD: [(&str, &str); 3] = [
    ("I care about how much the other participant ends up with.", "altruism"),
    ("To be fair, cooperating again gives me the most points.", "self_interest"),
    ("It matters to me that my partner does well.", "altruism"),
];

/// The true code of a sentence the fake models write.
fn truth(sentence: &str) -> &'static str {
    if sentence.starts_with("This is round ") {
        return "understanding";
    }
    VALUES.iter().chain(&MISREAD).find(|(s, _)| *s == sentence).map(|(_, c)| *c).unwrap_or_else(|| panic!("{sentence}"))
}

/// The reply to one request: the reasoning depends on the model, the round and the seat.
fn reply(body: &Value) -> FakeReply {
    let clear = body["model"] == "clear-1";
    first_label_reply(body, |seat, round| {
        let i = (round - 1) * 2 + seat;
        let opening = format!("This is round {round} of four and I am participant {}.", ["A", "B"][seat]);
        let sentences = if clear {
            let last = if i % 4 == 3 { MISREAD[1].0 } else { VALUES[(i + 3) % 8].0 };
            [opening.as_str(), VALUES[i % 8].0, last]
        } else {
            [opening.as_str(), MISREAD[i % 3].0, VALUES[i % 8].0]
        };
        sentences.map(str::to_string).to_vec()
    })
}

fn write_study(dir: &Path, endpoint: &str) -> PathBuf {
    let model = |name: &str| fake_model(name, "Fake", endpoint, &format!("{name}-1"), "");
    let block = r#"Block(name: "pd", environment: PrisonersDilemma(rounds: 4), model_rosters: true, rosters: [],
              cells: ["baseline", "step-by-step"], cell_runs: 2)"#;
    let study = study_text("labels-fake", 9, 1, &[model("clear"), model("murky")], &[block]);
    write_study_file(dir, &["step-by-step"], "labels.ron", &study)
}

/// `agora audit export` of `store`, with `args` (the sample, seed, format, output…).
fn export(store: &Path, args: &[&str]) -> Output {
    agora(&[&["audit", "export", "--store", s(store)], args].concat())
}

/// A CSV reader for the test (RFC 4180 quoting), independent of the crate's.
fn read_csv(text: &str) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    let (mut row, mut field, mut quoted) = (Vec::new(), String::new(), false);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                chars.next();
                field.push('"');
            }
            (true, '"') => quoted = false,
            (true, c) => field.push(c),
            (false, '"') => quoted = true,
            (false, ',') => row.push(std::mem::take(&mut field)),
            (false, '\n') => {
                row.push(std::mem::take(&mut field));
                rows.push(std::mem::take(&mut row));
            }
            (false, c) => field.push(c),
        }
    }
    rows
}

fn csv_field(f: &str) -> String {
    if f.contains([',', '"', '\n']) {
        format!("\"{}\"", f.replace('"', "\"\""))
    } else {
        f.to_string()
    }
}

/// Rows of a CSV table the agora wrote, as maps from column to cell.
fn csv_maps(path: &Path) -> Vec<BTreeMap<String, String>> {
    let rows = read_csv(&std::fs::read_to_string(path).expect("csv"));
    let (head, rest) = rows.split_first().expect("header");
    rest.iter().map(|r| head.iter().cloned().zip(r.iter().cloned()).collect()).collect()
}

/// Cohen's κ from the confusion counts of (reference, coder) pairs.
fn kappa(pairs: &[(String, String)]) -> f64 {
    let n = pairs.len() as f64;
    let mut cells: HashMap<(&str, &str), f64> = HashMap::new();
    let (mut rows, mut cols): (HashMap<&str, f64>, HashMap<&str, f64>) = (HashMap::new(), HashMap::new());
    for (a, b) in pairs {
        *cells.entry((a, b)).or_default() += 1.0;
        *rows.entry(a).or_default() += 1.0;
        *cols.entry(b).or_default() += 1.0;
    }
    let p_o = cells.iter().filter(|((a, b), _)| a == b).map(|(_, v)| v).sum::<f64>() / n;
    let p_e = rows.iter().map(|(c, r)| r / n * cols.get(c).copied().unwrap_or(0.0) / n).sum::<f64>();
    (p_o - p_e) / (1.0 - p_e)
}

/// One human coder's labels: (response id, sentence index) → code.
type Labels = BTreeMap<(String, i64), String>;

#[test]
fn labels_agreement_and_the_gate() {
    let FakeRun { rt: _rt, server: _server, dir, store, .. } = run_fake(Arc::new(|_, body| reply(body)), write_study);
    let c = Connection::open(&store).expect("open");
    let q = |sql: &str| count(&c, sql);
    assert_eq!(q("SELECT COUNT(*) FROM runs"), 6, "two models: a baseline run and two step-by-step runs each");

    // Nothing to export before an audit; then the audit, refused without labels.
    let sample = dir.path().join("sample.jsonl");
    let out = export(&store, &["--show-codes", "--sample", "10", "--seed", "7", "--out", s(&sample)]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("run `agora audit` on it first"), "{}", text(&out));
    let report = dir.path().join("audit");
    let out = agora(&["audit", "--store", s(&store), "--out", s(&report)]);
    assert!(out.status.success(), "{}", text(&out));
    for m in ["clear", "murky"] {
        assert!(
            text(&out).contains(&format!("gate on lexicon/1 for model {m}: refused: no human labels")),
            "{}",
            text(&out)
        );
    }
    assert_eq!(q("SELECT COUNT(*) FROM audit_responses WHERE reasoning_present = 1"), 32);
    let out = agora(&["audit", "agreement", "--store", s(&store), "--out", s(&report)]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("no human labels for codebook default v1"), "{}", text(&out));

    // Export: ten responses per model, drawn by the documented rule.
    let out = export(&store, &["--show-codes", "--sample", "10", "--seed", "7", "--out", s(&sample)]);
    assert!(out.status.success(), "{}", text(&out));
    let jsonl = std::fs::read_to_string(&sample).expect("sample");
    let records: Vec<Value> =
        jsonl.lines().map(|l| serde_json::from_str(l).expect("one JSON object per line")).collect();
    let mut st = c
        .prepare(
            "SELECT r.run_key, a.seat, a.slot, a.model FROM audit_responses a JOIN runs r ON r.run_id = a.run_id
             WHERE a.reasoning_present = 1 AND a.coder = 'lexicon/1'",
        )
        .expect("query");
    let population: Vec<(String, String)> = st
        .query_map([], |r| {
            Ok((format!("{}:{}:{}", r.get::<_, String>(0)?, r.get::<_, i64>(1)?, r.get::<_, i64>(2)?), r.get(3)?))
        })
        .expect("rows")
        .map(|r| r.expect("row"))
        .collect();
    let mut expected_ids = Vec::new();
    for m in ["clear", "murky"] {
        let mut ranked: Vec<(String, &str)> = population
            .iter()
            .filter(|(_, model)| model == m)
            .map(|(id, _)| (format!("{:x}", Sha256::digest(format!("7:{id}").as_bytes())), id.as_str()))
            .collect();
        assert_eq!(ranked.len(), 16);
        ranked.sort();
        expected_ids.extend(ranked.iter().take(10).map(|(_, id)| id.to_string()));
    }
    let mut exported_ids: Vec<String> = Vec::new();
    for r in &records {
        let id = r["response_id"].as_str().expect("id").to_string();
        if exported_ids.last() != Some(&id) {
            exported_ids.push(id);
        }
    }
    assert_eq!(exported_ids, expected_ids, "per model, the ten smallest SHA-256 of `seed:response_id`, in rank order");
    assert_eq!(records.len(), 60, "three reasoning sentences per response");
    for r in &records {
        let (id, i) = (r["response_id"].as_str().expect("id"), r["sentence_index"].as_i64().expect("index"));
        assert_eq!(r["sentence_id"], format!("{id}:{i}"));
        let (run_key, rest) = id.split_once(':').expect("id");
        let (seat, slot) = rest.split_once(':').expect("id");
        let (stored_text, code): (String, String) = c
            .query_row(
                "SELECT s.text, s.code FROM audit_sentences s JOIN runs r ON r.run_id = s.run_id
                 WHERE r.run_key = ?1 AND s.seat = ?2 AND s.slot = ?3 AND s.sentence_index = ?4 AND s.coder = 'lexicon/1'",
                rusqlite::params![run_key, seat, slot, i],
                |x| Ok((x.get(0)?, x.get(1)?)),
            )
            .expect("the sentence is stored");
        assert_eq!((r["text"].as_str(), r["coder_code"].as_str()), (Some(stored_text.as_str()), Some(code.as_str())));
        assert_eq!(
            (&r["coder"], &r["codebook"], &r["codebook_version"]),
            (&Value::from("lexicon/1"), &Value::from("default"), &Value::from(1))
        );
        assert!(r["reasoning"].as_str().expect("context").contains(&stored_text));
        assert!(r.get("label").is_none());
        assert_eq!(r["export_id"], records[0]["export_id"], "one export id in every record");
    }
    // The export is recorded in the store, with the codes shown.
    let shown_id = records[0]["export_id"].as_str().expect("export id").to_string();
    assert_eq!(shown_id.len(), 16);
    let recorded: (i64, i64, String, String) = c
        .query_row("SELECT blind, sentences, seed, created FROM audit_exports WHERE export_id = ?1", [&shown_id], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
        })
        .expect("the export is recorded");
    assert_eq!((recorded.0, recorded.1, recorded.2.as_str()), (0, 60, "7"));
    assert!(recorded.3.starts_with("20") && recorded.3.ends_with('Z'), "SQLite's time: {}", recorded.3);
    // Deterministic: the same seed writes the same bytes; another seed another sample.
    let again = dir.path().join("again.jsonl");
    assert!(export(&store, &["--show-codes", "--sample", "10", "--seed", "7", "--out", s(&again)]).status.success());
    assert_eq!(std::fs::read(&again).expect("again"), jsonl.as_bytes());
    let other = dir.path().join("other.jsonl");
    assert!(export(&store, &["--show-codes", "--sample", "10", "--seed", "8", "--out", s(&other)]).status.success());
    assert_ne!(std::fs::read_to_string(&other).expect("other"), jsonl);
    // The JSON task list and the CSV hold the same records; a blind export has no coder fields.
    let json_path = dir.path().join("sample.json");
    assert!(export(
        &store,
        &["--show-codes", "--sample", "10", "--seed", "7", "--format", "json", "--out", s(&json_path)]
    )
    .status
    .success());
    let tasks: Value = serde_json::from_str(&std::fs::read_to_string(&json_path).expect("json")).expect("a JSON array");
    assert_eq!(tasks, Value::Array(records.clone()));
    let csv_path = dir.path().join("sample.csv");
    assert!(export(
        &store,
        &["--show-codes", "--sample", "10", "--seed", "7", "--format", "csv", "--out", s(&csv_path)]
    )
    .status
    .success());
    let rows = read_csv(&std::fs::read_to_string(&csv_path).expect("csv"));
    let header: Vec<&str> = records[0].as_object().expect("object").keys().map(String::as_str).collect();
    assert_eq!(rows[0], header);
    assert_eq!(rows.len(), 61);
    for (row, r) in rows[1..].iter().zip(&records) {
        for (h, cell) in header.iter().zip(row) {
            let v = &r[*h];
            assert_eq!(cell, &v.as_str().map_or_else(|| v.to_string(), str::to_string), "{h}");
        }
    }
    let blind = dir.path().join("blind.jsonl");
    assert!(export(&store, &["--sample", "2", "--seed", "7", "--out", s(&blind), "--model", "murky"]).status.success());
    let blind = std::fs::read_to_string(&blind).expect("blind");
    assert!(!blind.contains("coder") && blind.lines().count() == 6 && !blind.contains("\"clear\""), "{blind}");

    // The sample the humans label: the same ten responses a model, blind.
    let blind_sample = dir.path().join("blind-sample.jsonl");
    let out = export(&store, &["--sample", "10", "--seed", "7", "--out", s(&blind_sample)]);
    assert!(out.status.success(), "{}", text(&out));
    let blind_records: Vec<Value> = std::fs::read_to_string(&blind_sample)
        .expect("blind sample")
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
        .collect();
    let export_id = blind_records[0]["export_id"].as_str().expect("export id").to_string();
    assert_ne!(export_id, shown_id, "a blind export and one with the codes shown are different exports");
    assert!(text(&out).contains(&format!("export {export_id} recorded")), "{}", text(&out));
    assert_eq!(q(&format!("SELECT blind FROM audit_exports WHERE export_id = '{export_id}'")), 1);
    assert_eq!(blind_records.len(), records.len());
    for (b, r) in blind_records.iter().zip(&records) {
        assert_eq!((&b["sentence_id"], &b["text"]), (&r["sentence_id"], &r["text"]));
        assert!(b.get("coder_code").is_none() && b.get("coder").is_none());
    }

    // Human labels, written here: ana labels every sentence with its true code; ben agrees
    // except on every seventh record; cy labels every fourth record, with its true code.
    let mut ana = Labels::new();
    let mut ben = Labels::new();
    let mut cy = Labels::new();
    for (k, r) in records.iter().enumerate() {
        let key = (r["response_id"].as_str().expect("id").to_string(), r["sentence_index"].as_i64().expect("index"));
        let t = truth(r["text"].as_str().expect("text"));
        ana.insert(key.clone(), t.to_string());
        let b = if k % 7 == 3 {
            if t == "understanding" {
                "fairness"
            } else {
                "understanding"
            }
        } else {
            t
        };
        ben.insert(key.clone(), b.to_string());
        if k % 4 == 0 {
            cy.insert(key, t.to_string());
        }
    }
    // ana: the blind export's JSONL records with a `label` field added (as Argilla gives them
    // back).
    let ana_file = dir.path().join("ana.jsonl");
    let ana_text: String = blind_records
        .iter()
        .map(|r| {
            let mut r = r.clone();
            let key = (r["response_id"].as_str().expect("id").to_string(), r["sentence_index"].as_i64().expect("i"));
            r["label"] = Value::from(ana[&key].clone());
            format!("{r}\n")
        })
        .collect();
    std::fs::write(&ana_file, &ana_text).expect("write");
    // ben: CSV with a `label` column (as Label Studio exports it), two unlabelled rows added.
    let ben_file = dir.path().join("ben.csv");
    let mut ben_text = "response_id,sentence_index,text,label,export_id\n".to_string();
    for r in &records {
        let key = (r["response_id"].as_str().expect("id").to_string(), r["sentence_index"].as_i64().expect("i"));
        ben_text.push_str(&format!(
            "{},{},{},{},{export_id}\n",
            key.0,
            key.1,
            csv_field(r["text"].as_str().expect("text")),
            ben[&key]
        ));
    }
    let first = &records[0];
    ben_text.push_str(&format!("{},{},,,\n", first["response_id"].as_str().expect("id"), 99));
    ben_text.push_str(&format!("{},{},,,\n", first["response_id"].as_str().expect("id"), 98));
    std::fs::write(&ben_file, &ben_text).expect("write");
    // cy: a JSON array of flat objects (Label Studio's JSON-MIN shape), the label as a
    // one-element list.
    let cy_file = dir.path().join("cy.json");
    let cy_records: Vec<Value> = cy
        .iter()
        .map(|((id, i), code)| serde_json::json!({"response_id": id, "sentence_index": i, "label": [code], "annotator": "cy@example.org", "export_id": export_id}))
        .collect();
    std::fs::write(&cy_file, serde_json::to_string_pretty(&cy_records).expect("json")).expect("write");

    // Bad label files: exit 2 naming the file, line and field; nothing written.
    let bad = dir.path().join("bad.jsonl");
    let lines: Vec<&str> = ana_text.lines().collect();
    let labels_table = "SELECT COUNT(*) FROM sqlite_master WHERE name = 'audit_labels'";
    let mut unknown = lines.clone();
    let greed = lines[2].replace(r#""label":""#, r#""label":"greed","was":""#);
    unknown[2] = &greed;
    for (content, needle) in [
        (
            unknown.join("\n"),
            format!("labels {}:3: field `label`: `greed` is not a code of codebook default v1", bad.display()),
        ),
        (
            lines
                .iter()
                .enumerate()
                .map(
                    |(i, l)| {
                        if i == 1 {
                            l.replace(r#""sentence_index":"#, r#""sentence_index":9"#)
                        } else {
                            l.to_string()
                        }
                    },
                )
                .collect::<Vec<_>>()
                .join("\n"),
            format!("labels {}:2: field `sentence_index`: response `", bad.display()),
        ),
        (
            format!("{ana_text}{}\n", lines[0]),
            format!("labels {}:61: field `sentence_index`: a second label by this coder for sentence", bad.display()),
        ),
        (
            lines[0].replace(r#""response_id":""#, r#""response_id":"0"#),
            format!("labels {}:1: field `response_id`: the store holds no response", bad.display()),
        ),
        (
            lines[0].replace("This is round", "This was round"),
            format!("labels {}:1: field `text`: differs from the store's sentence", bad.display()),
        ),
        ("{\"response_id\": 1\n".to_string(), format!("labels {}:1: not JSON", bad.display())),
        // Regression (issue 39, item 3): labels made on an export that showed the machine's codes
        // were imported as human labels, and κ measured the coder against itself.
        (
            records
                .iter()
                .map(|r| {
                    let mut r = r.clone();
                    r["label"] = r["coder_code"].clone();
                    format!("{r}\n")
                })
                .collect(),
            format!(
                "labels {}:1: field `coder_code`: the record comes from an export that showed the machine coder's codes",
                bad.display()
            ),
        ),
        // The codes taken out, the export id left in: still that export's.
        (
            records
                .iter()
                .map(|r| {
                    let mut r = r.clone();
                    r["label"] = r.as_object_mut().and_then(|o| o.remove("coder_code")).unwrap_or(Value::Null);
                    format!("{r}\n")
                })
                .collect(),
            format!("labels {}:1: field `export_id`: export `{shown_id}` showed the machine coder's codes", bad.display()),
        ),
        (
            lines.iter().map(|l| format!("{}\n", l.replace(&export_id, ""))).collect(),
            format!("labels {}:1: field `export_id`: missing: labels must come from a blind export", bad.display()),
        ),
        (
            lines.iter().map(|l| format!("{}\n", l.replace(&export_id, "0123456789abcdef"))).collect(),
            format!(
                "labels {}:1: field `export_id`: `0123456789abcdef` is not an export this store recorded",
                bad.display()
            ),
        ),
    ] {
        std::fs::write(&bad, content).expect("write");
        let out = agora(&["audit", "import", "--store", s(&store), "--labels", s(&bad), "--coder-name", "ana"]);
        assert_eq!(out.status.code(), Some(2), "{}", text(&out));
        assert!(text(&out).contains(&needle), "{needle}\n{}", text(&out));
        assert_eq!(q(labels_table), 0, "nothing written");
    }
    let out = agora(&["audit", "import", "--store", s(&store), "--labels", s(&ana_file), "--coder-name", "lexicon/1"]);
    assert_eq!(out.status.code(), Some(2), "a machine coder's name is not a human's: {}", text(&out));
    assert_eq!(q(labels_table), 0);

    // The audit recorded the ladder's gate (the shipped one) with the codes: no labels yet.
    let gate_rows = |c: &rusqlite::Connection| -> Vec<(String, String, String, Option<f64>)> {
        let mut st = c
            .prepare("SELECT model, status, reason, kappa FROM audit_gate WHERE coder = 'lexicon/1' ORDER BY model")
            .expect("audit_gate");
        st.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
            .expect("rows")
            .collect::<Result<_, _>>()
            .expect("rows")
    };
    let before = gate_rows(&c);
    assert_eq!(before.len(), 2, "{before:?}");
    assert!(
        before.iter().all(|(_, st, why, k)| st == "refused" && why == "no human labels" && k.is_none()),
        "{before:?}"
    );
    // One labeller validates nothing (issue 39): ana alone, every label true, leaves the stored
    // gate refused for want of a second human, whatever the coder's agreement with her.
    let out = agora(&["audit", "import", "--store", s(&store), "--labels", s(&ana_file), "--coder-name", "ana"]);
    assert!(out.status.success(), "{}", text(&out));
    let one = gate_rows(&c);
    assert!(
        one.iter().all(|(_, st, why, _)| st == "refused" && why.starts_with("1 human labeller on this model's text")),
        "{one:?}"
    );
    assert_eq!(
        q(&format!("SELECT COUNT(*) FROM audit_labels WHERE export_id = '{export_id}'")),
        60,
        "each label records the export it was made on"
    );
    // Import the three coders; a second import of the same file changes nothing.
    for (file, name, n) in [(&ana_file, "ana", 60), (&ben_file, "ben", 60), (&cy_file, "cy", 15)] {
        let out = agora(&["audit", "import", "--store", s(&store), "--labels", s(file), "--coder-name", name]);
        assert!(out.status.success(), "{}", text(&out));
        assert!(text(&out).contains(&format!("{n} labels by {name} imported")), "{}", text(&out));
    }
    assert!(text(&agora(&["audit", "import", "--store", s(&store), "--labels", s(&ben_file), "--coder-name", "ben"]))
        .contains("0 new, 0 changed, 60 unchanged; 2 records without a label skipped"));
    let out = agora(&["audit", "import", "--store", s(&store), "--labels", s(&ana_file), "--coder-name", "ana"]);
    assert!(text(&out).contains("0 new, 0 changed, 60 unchanged"), "{}", text(&out));
    assert_eq!(q("SELECT COUNT(*) FROM audit_labels"), 135);
    assert_eq!(
        q("SELECT COUNT(*) FROM audit_labels WHERE coder = 'ben' AND source = 'ben.csv' AND codebook = 'default'"),
        60
    );
    // An invalid file after valid imports leaves them as they were.
    std::fs::write(&bad, format!("{}\n{}", lines[0], lines[1].replace(r#""label":""#, r#""label":"nope","x":""#)))
        .expect("write");
    assert_eq!(
        agora(&["audit", "import", "--store", s(&store), "--labels", s(&bad), "--coder-name", "ana"]).status.code(),
        Some(2)
    );
    assert_eq!(q("SELECT COUNT(*) FROM audit_labels"), 135);
    // The import rewrote the stored gate: κ is now measured, and the shipped floor refuses.
    let after_import = gate_rows(&c);
    assert_eq!(after_import.len(), 2, "{after_import:?}");
    for (model, status, why, kappa) in &after_import {
        assert_eq!(status, "refused", "{model}");
        assert!(kappa.is_some() && why.contains("the gate needs 100 responses and 200 sentences"), "{model}: {why}");
    }

    // Agreement, checked against κ computed here from the confusion counts. This test is about
    // the threshold, the tables and the consensus on 16 responses a model: the gate's floor
    // (100 responses, 200 sentences) is lowered explicitly; as shipped it refuses both models
    // (checked at the end).
    let out = agora(&[&["audit", "agreement", "--store", s(&store), "--out", s(&report)][..], &FLOOR].concat());
    assert!(out.status.success(), "{}", text(&out));
    let agreement: Value =
        serde_json::from_str(&std::fs::read_to_string(report.join("agreement.json")).expect("json")).expect("parse");
    let rows = agreement["rows"].as_array().expect("rows");
    let row = |model: &str, kind: &str, reference: &str, coder: &str| {
        rows.iter()
            .find(|r| r["model"] == model && r["kind"] == kind && r["reference"] == reference && r["coder"] == coder)
            .unwrap_or_else(|| panic!("no row {model} {kind} {reference} {coder}"))
    };
    let model_of: HashMap<&str, &str> =
        records.iter().map(|r| (r["response_id"].as_str().expect("id"), r["model"].as_str().expect("model"))).collect();
    let humans: [(&str, &Labels); 3] = [("ana", &ana), ("ben", &ben), ("cy", &cy)];
    let mut lexicon: Labels = Labels::new();
    for r in &records {
        let key = (r["response_id"].as_str().expect("id").to_string(), r["sentence_index"].as_i64().expect("i"));
        lexicon.insert(key, r["coder_code"].as_str().expect("code").to_string());
    }
    let mut gate_kappa = HashMap::new();
    let mut humans_text = HashMap::new();
    for m in ["clear", "murky"] {
        let in_model = |k: &(String, i64)| model_of[k.0.as_str()] == m;
        // Human pairs first, on the sentences both labelled; their mean κ (Light's κ) is the
        // humans' agreement with each other the gate asks for.
        let mut pair_kappas = Vec::new();
        for (i, (a, la)) in humans.iter().enumerate() {
            for (b, lb) in &humans[i + 1..] {
                let pairs: Vec<(String, String)> = la
                    .iter()
                    .filter(|(k, _)| in_model(k))
                    .filter_map(|(k, x)| lb.get(k).map(|y| (x.clone(), y.clone())))
                    .collect();
                let r = row(m, "humans", a, b);
                assert_eq!(r["n"], pairs.len(), "{m} {a} {b}");
                let got = r["kappa"].as_f64().unwrap_or_else(|| panic!("{r}"));
                assert!((got - kappa(&pairs)).abs() < 1e-12, "{m} {a} {b}: {got} vs {}", kappa(&pairs));
                pair_kappas.push(got);
            }
        }
        let light = pair_kappas.iter().sum::<f64>() / pair_kappas.len() as f64;
        let consensus = agreement["consensus"].as_array().expect("consensus").iter().find(|c| c["model"] == m);
        let consensus = consensus.expect("the model's consensus row");
        assert!((consensus["human_kappa"].as_f64().expect("κ") - light).abs() < 1e-12, "{consensus}");
        assert!(light >= 0.7, "{m}: the humans agree with each other ({light})");
        assert_eq!((consensus["labellers"].as_u64(), consensus["human_pairs"].as_u64()), (Some(3), Some(3)));
        // The lexicon against the human reference: a strict majority of those who labelled.
        let mut pairs = Vec::new();
        let mut disagreements = 0;
        for (k, code) in lexicon.iter().filter(|(k, _)| in_model(k)) {
            let given: Vec<&String> = humans.iter().filter_map(|(_, l)| l.get(k)).collect();
            let majority = given.iter().find(|g| given.iter().filter(|x| x == g).count() * 2 > given.len());
            match majority {
                Some(g) => pairs.push(((*g).clone(), code.clone())),
                None => disagreements += 1,
            }
        }
        let r = row(m, "coder", "human reference", "lexicon/1");
        let expected = kappa(&pairs);
        let labelled = lexicon.keys().filter(|k| in_model(k)).count();
        assert_eq!(consensus["disagreements"].as_u64(), Some(disagreements));
        humans_text.insert(
            m,
            format!(
                "3 human labellers, κ = {light:.3} with each other (the mean of 3 pairwise Cohen's κ), {disagreements} \
                 of {labelled} sentences ({:.1} %) without a majority",
                disagreements as f64 / labelled as f64 * 100.0
            ),
        );
        assert_eq!(
            (r["n"].as_u64(), r["excluded_disagreements"].as_u64()),
            (Some(pairs.len() as u64), Some(disagreements))
        );
        assert!(disagreements > 0, "ben disagrees with ana where cy did not label");
        assert!((r["kappa"].as_f64().expect("kappa") - expected).abs() < 1e-12, "{m}");
        let confusion: u64 = r["confusion"]
            .as_array()
            .expect("matrix")
            .iter()
            .flat_map(|x| x.as_array().expect("row"))
            .map(|x| x.as_u64().expect("count"))
            .sum();
        assert_eq!(confusion, pairs.len() as u64);
        let labels: Vec<&str> =
            r["labels"].as_array().expect("labels").iter().map(|x| x.as_str().expect("code")).collect();
        let altruism = labels.iter().position(|l| *l == "altruism").expect("altruism");
        let found = pairs.iter().filter(|(a, b)| a == "altruism" && b == "altruism").count();
        let support = pairs.iter().filter(|(a, _)| a == "altruism").count();
        assert_eq!(
            r["recall"][altruism].as_f64(),
            (support > 0).then(|| found as f64 / support as f64),
            "{m} altruism recall"
        );
        gate_kappa.insert(m, (expected, pairs.len()));
    }
    let (clear, clear_n) = gate_kappa["clear"];
    let (murky, murky_n) = gate_kappa["murky"];
    assert!((0.8..1.0).contains(&clear), "clear: {clear}");
    assert!((0.3..0.8).contains(&murky), "murky: {murky}");
    assert_eq!(row("clear", "coder", "human reference", "lexicon/1")["verdict"], "validated");
    assert_eq!(row("murky", "coder", "human reference", "lexicon/1")["verdict"], "refused");
    assert!(rows.iter().any(|r| r["model"] == "all" && r["kind"] == "humans"), "human pairs over every model too");
    // The same in the store and the CSV and Markdown files.
    let stored = common::stored_lexicon_kappa(&c, "murky");
    assert!((stored - murky).abs() < 1e-12);
    let summary = csv_maps(&report.join("agreement.csv"));
    let murky_row = summary.iter().find(|r| r["model"] == "murky" && r["kind"] == "coder").expect("csv row");
    assert_eq!((murky_row["kappa"].clone(), murky_row["verdict"].as_str()), (format!("{murky:.6}"), "refused"));
    assert!(csv_maps(&report.join("agreement_codes.csv"))
        .iter()
        .any(|r| r["model"] == "clear" && r["code"] == "altruism"));
    assert!(!csv_maps(&report.join("agreement_confusion.csv")).is_empty());
    let md = std::fs::read_to_string(report.join("agreement.md")).expect("md");
    assert!(md.contains("## Model `murky`") && md.contains("### `lexicon/1` against the human reference"), "{md}");
    // Idempotent: computing it again rewrites the same rows.
    assert!(agora(&[&["audit", "agreement", "--store", s(&store), "--out", s(&report)][..], &FLOOR].concat())
        .status
        .success());
    assert_eq!(q("SELECT COUNT(*) FROM audit_agreement"), rows.len() as i64);

    // The gate: murky's codes are refused, clear's pass.
    let out = agora(&[&["audit", "--store", s(&store), "--out", s(&report)][..], &FLOOR].concat());
    assert!(out.status.success(), "{}", text(&out));
    let refused =
        format!("refused: κ = {murky:.3} < 0.8 ({murky_n} sentences, 10 responses); {}", humans_text["murky"]);
    let validated =
        format!("validated: κ = {clear:.3} ≥ 0.8 ({clear_n} sentences, 10 responses); {}", humans_text["clear"]);
    assert!(text(&out).contains(&format!("model murky: {refused}")), "{}", text(&out));
    assert!(text(&out).contains(&format!("model clear: {validated}")), "{}", text(&out));
    let occ = csv_maps(&report.join("audit_occurrence.csv"));
    for r in &occ {
        match r["model"].as_str() {
            "murky" => assert!(r["validation"] == refused && r["share"].is_empty() && r["stating"].is_empty(), "{r:?}"),
            _ => assert!(
                r["validation"] == validated
                    && !r["stating"].is_empty()
                    && r["share"].is_empty() == (r["coded"] == "0"),
                "{r:?}"
            ),
        }
    }
    // clear, model level: 16 responses; ingroup cooperation (value 7) is stated where i = 7
    // (second sentence) or i + 3 = 7 (i = 4, last sentence): twice per run, 4 of 16.
    let clear_ingroup = occ
        .iter()
        .find(|r| r["model"] == "clear" && r["level"] == "model" && r["code"] == "ingroup_cooperation")
        .expect("row");
    assert_eq!((clear_ingroup["coded"].as_str(), clear_ingroup["stating"].as_str()), ("16", "4"));
    let md = std::fs::read_to_string(report.join("audit.md")).expect("md");
    assert!(md.contains(&format!("- `murky`: {refused}")) && md.contains(&format!("- `clear`: {validated}")), "{md}");
    assert!(md.contains("| murky | all | all | 16 | refused |"), "{md}");
    let json: Value =
        serde_json::from_str(&std::fs::read_to_string(report.join("audit.json")).expect("json")).expect("parse");
    let murky_gate =
        json["validation"].as_array().expect("gate").iter().find(|v| v["model"] == "murky").expect("murky");
    assert_eq!((murky_gate["status"].as_str(), murky_gate["n"].as_u64()), (Some("refused"), Some(murky_n as u64)));
    assert!((murky_gate["kappa"].as_f64().expect("kappa") - murky).abs() < 1e-12);

    // --allow-unvalidated shows murky's numbers, labelled; --min-kappa moves the threshold.
    let out =
        agora(&[&["audit", "--store", s(&store), "--out", s(&report), "--allow-unvalidated"][..], &FLOOR].concat());
    assert!(text(&out).contains(&format!("model murky: unvalidated: κ = {murky:.3} < 0.8")), "{}", text(&out));
    let occ = csv_maps(&report.join("audit_occurrence.csv"));
    assert!(occ
        .iter()
        .filter(|r| r["model"] == "murky")
        .all(|r| !r["stating"].is_empty() && r["validation"].starts_with("unvalidated: ")));
    let low = format!("{:.2}", murky - 0.01);
    let out = agora(&[&["audit", "--store", s(&store), "--out", s(&report), "--min-kappa", &low][..], &FLOOR].concat());
    assert!(
        text(&out).contains(&format!("model murky: validated: κ = {murky:.3} ≥ {}", low.parse::<f64>().expect("f64"))),
        "{}",
        text(&out)
    );
    let high = format!("{:.4}", (clear + 1.0) / 2.0);
    let out =
        agora(&[&["audit", "--store", s(&store), "--out", s(&report), "--min-kappa", &high][..], &FLOOR].concat());
    assert!(
        text(&out).contains(&format!("model clear: refused: κ = {clear:.3} < {}", high.parse::<f64>().expect("f64"))),
        "{}",
        text(&out)
    );
    // The stored gate is the ladder's, whatever a command's own gate options: still the import's.
    assert_eq!(gate_rows(&c), after_import);
    for (model, kappa) in [("clear", clear), ("murky", murky)] {
        let stored = after_import.iter().find(|r| r.0 == model).and_then(|r| r.3).expect("κ");
        assert!((stored - kappa).abs() < 1e-12, "{model}: {stored} vs {kappa}");
    }
    // As shipped, the floor refuses both: κ on 10 labelled responses a model validates nothing.
    let out = agora(&["audit", "--store", s(&store), "--out", s(&report)]);
    assert!(
        text(&out).contains(&format!(
            "model clear: refused: {clear_n} sentences of 10 responses with a human reference (the gate needs 100 responses and 200 sentences; κ = {clear:.3} there)"
        )),
        "{}",
        text(&out)
    );
}
