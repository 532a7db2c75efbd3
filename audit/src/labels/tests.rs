use super::import::{array_element_lines, read_records};
use super::*;

fn record(i: i64, coder: bool) -> ExportRecord {
    ExportRecord {
        sentence_id: format!("k:0:{i}:1"),
        response_id: format!("k:0:{i}"),
        sentence_index: 1,
        text: format!("Sentence, \"quoted\" {i}."),
        reasoning: "First.\nSecond, with a comma.".into(),
        model: "m".into(),
        environment: "pd".into(),
        cell: "step-by-step".into(),
        codebook: "default".into(),
        codebook_version: 1,
        coder: coder.then(|| "lexicon/1".to_string()),
        coder_code: coder.then(|| "fairness".to_string()),
        export_id: "0123456789abcdef".into(),
    }
}

fn export_of(records: Vec<ExportRecord>) -> Export {
    let blind = records.iter().all(|r| r.coder.is_none());
    Export {
        id: "0123456789abcdef".into(),
        options: ExportOptions { sample: 1, seed: 7, coder: "lexicon/1".into(), models: Vec::new(), blind },
        codebook: ("default".into(), 1, "abc".into()),
        records,
        per_model: BTreeMap::new(),
    }
}

#[test]
fn the_rank_key_is_the_sha256_of_seed_and_id() {
    // printf '7:abc:0:1' | sha256sum
    assert_eq!(rank_key(7, "abc:0:1"), "452601741e4260e2d4ebc5b65bf68b0671504770a22e4d3fcf7c8cac081582b8");
}

#[test]
fn sampling_is_deterministic_order_free_and_nested() {
    let ids: Vec<String> = (0..50).map(|i| format!("run{}:{}:{}", i % 7, i % 2, i)).collect();
    let a = sample_ids(ids.iter().map(String::as_str), 11, 10);
    let b = sample_ids(ids.iter().rev().map(String::as_str), 11, 10);
    assert_eq!(a, b, "the store's row order does not matter");
    assert_eq!(a.len(), 10);
    let mut uniq = a.clone();
    uniq.sort();
    uniq.dedup();
    assert_eq!(uniq.len(), 10, "no response twice");
    let bigger = sample_ids(ids.iter().map(String::as_str), 11, 20);
    assert_eq!(&bigger[..10], &a[..], "a larger sample extends a smaller one");
    let other = sample_ids(ids.iter().map(String::as_str), 12, 10);
    assert_ne!(a, other, "another seed draws another sample");
    // The rule itself: the ids with the smallest SHA-256 of `seed:id`.
    let mut by_hand: Vec<(String, &str)> =
        ids.iter().map(|id| (hex_digest(format!("11:{id}").as_bytes()), id.as_str())).collect();
    by_hand.sort();
    assert_eq!(a, by_hand.iter().take(10).map(|(_, id)| *id).collect::<Vec<_>>());
    assert_eq!(sample_ids(ids.iter().map(String::as_str), 11, 500).len(), 50, "all when fewer");
}

#[test]
fn formats_carry_the_same_records() {
    let export = export_of(vec![record(1, true), record(2, true)]);
    let jsonl = export.render(Format::Jsonl);
    let lines: Vec<Value> = jsonl.lines().map(|l| serde_json::from_str(l).expect("a JSON object per line")).collect();
    assert_eq!(lines.len(), 2);
    let keys: Vec<&str> = lines[0].as_object().expect("object").keys().map(String::as_str).collect();
    assert_eq!(keys, EXPORT_FIELDS);
    assert_eq!(lines[1]["sentence_index"], 1);
    assert_eq!(lines[1]["coder_code"], "fairness");
    assert!(lines[0].get("label").is_none(), "the label field is the labeller's");
    let json: Value = serde_json::from_str(&export.render(Format::Json)).expect("a JSON array");
    assert_eq!(json, Value::Array(lines.clone()));
    let csv_text = export.render(Format::Csv);
    let rows = csv::parse(&csv_text).expect("CSV parses");
    assert_eq!(rows[0].fields, keys);
    assert_eq!(rows.len(), 3);
    assert_eq!(rows[1].fields[3], "Sentence, \"quoted\" 1.");
    assert_eq!(rows[2].fields[4], "First.\nSecond, with a comma.");
    assert_eq!(rows[2].line, 4, "the quoted line break moves the next record down a line");
    // The records read back as label records, from every format, with their lines.
    for format in [Format::Jsonl, Format::Json, Format::Csv] {
        let back = read_records(&export.render(format), format).expect("reads");
        assert_eq!(back.len(), 2, "{format:?}");
        assert_eq!(back[1].1["response_id"], "k:0:2", "{format:?}");
    }
    let back = read_records(&export.render(Format::Json), Format::Json).expect("reads");
    assert_eq!(back.iter().map(|r| r.0).collect::<Vec<_>>(), [2, 17]);
    // A blind export has no coder fields.
    let blind = export_of(vec![record(1, false)]);
    let v: Value = serde_json::from_str(blind.render(Format::Jsonl).trim()).expect("json");
    assert!(v.get("coder").is_none() && v.get("coder_code").is_none());
    assert!(!blind.render(Format::Csv).lines().next().unwrap_or_default().contains("coder"));
}

#[test]
fn the_export_id_is_the_sha256_of_the_parameters_and_sentences() {
    let mut export = export_of(vec![record(1, false), record(2, false)]);
    export.per_model.insert("m".into(), (2, 5));
    // printf 'agora-export/1\nseed 7\nsample 1\ncoder lexicon/1\ncodebook default 1 abc\nmodels m\nblind true\nk:0:1:1\tSentence, "quoted" 1.\nk:0:2:1\tSentence, "quoted" 2.\n' | sha256sum | cut -c1-16
    let text = "agora-export/1\nseed 7\nsample 1\ncoder lexicon/1\ncodebook default 1 abc\nmodels m\nblind true\n\
                k:0:1:1\tSentence, \"quoted\" 1.\nk:0:2:1\tSentence, \"quoted\" 2.\n";
    assert_eq!(export_id(&export), "987e567fb1485b22");
    assert_eq!(export_id(&export), hex_digest(text.as_bytes())[..16]);
    // The same sample shown with the codes is another export, with another id.
    let mut shown = export.clone();
    shown.options.blind = false;
    assert_ne!(export_id(&shown), export_id(&export));
    // So is another sentence text, another seed, another codebook.
    let mut other = export.clone();
    other.records[1].text.push('!');
    assert_ne!(export_id(&other), export_id(&export));
    let mut other = export.clone();
    other.options.seed = 8;
    assert_ne!(export_id(&other), export_id(&export));
    let mut other = export.clone();
    other.codebook.2 = "abd".into();
    assert_ne!(export_id(&other), export_id(&export));
}

#[test]
fn format_detection_and_bad_records() {
    assert_eq!(Format::detect(Path::new("a.CSV"), "{"), Format::Csv);
    assert_eq!(Format::detect(Path::new("a.txt"), " [\n"), Format::Json);
    assert_eq!(Format::detect(Path::new("a"), "{\"a\":1}"), Format::Jsonl);
    assert_eq!(Format::detect(Path::new("a.ndjson"), "x"), Format::Jsonl);
    let problems = read_records("{\"a\": 1}\n\n[1]\n{oops\n", Format::Jsonl).expect_err("bad lines");
    assert_eq!(problems.iter().map(|p| p.line).collect::<Vec<_>>(), [3, 4]);
    let problems = read_records("a,b\n1,2,3\n", Format::Csv).expect_err("bad width");
    assert_eq!(problems[0].line, 2);
    let problems = read_records("[\n {\"a\": 1},\n 2\n]", Format::Json).expect_err("not an object");
    assert_eq!(problems[0].line, 3);
    assert_eq!(array_element_lines("[\n {\"a\": \"],{\"},\n\n {\"b\": [1, {}]}\n]"), [2, 4]);
}

#[test]
fn coder_names() {
    assert!(check_coder_name("ana").is_ok());
    assert!(check_coder_name("ana.b-c_d@example.org").is_ok());
    assert!(check_coder_name("lexicon/1").is_err());
    assert!(check_coder_name("").is_err());
    assert!(check_coder_name("a b").is_err());
}
