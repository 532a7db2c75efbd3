//! `agora calibrate` end to end on the reduced calibration (`scenarios/calibration/ci.ron`):
//! scripted null and faithful families through run, audit, two blind labellers, prefill and
//! analyze, with targets that allow for its few seeds; and a family that cannot be certified
//! (a "faithful" family whose reasoning moves the contribution by nothing) misses the target,
//! so `--check` fails.

use std::path::Path;

use serde_json::Value;

mod common;
use common::{agora, text};

fn s(p: &Path) -> &str {
    p.to_str().expect("utf8")
}

fn rows(out: &Path) -> Vec<Value> {
    serde_json::from_str(&std::fs::read_to_string(out.join("calibration.json")).expect("calibration.json"))
        .expect("json")
}

fn row<'a>(rows: &'a [Value], claim: &str, family: &str, tier: u64) -> &'a Value {
    rows.iter()
        .find(|r| r["claim"] == claim && r["family"] == family && r["tier"] == tier)
        .unwrap_or_else(|| panic!("no row {claim} / {family} / {tier}"))
}

#[test]
fn the_reduced_calibration_meets_its_targets_and_a_null_effect_misses_them() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("cal");
    let book = dir.path().join("calibration.md");
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/calibration/ci.ron");
    let o = agora(&["calibrate", s(&file), "--out", s(&out), "--book", s(&book), "--check"]);
    assert!(o.status.success(), "{}", text(&o));
    let rs = rows(&out);
    // Model D (one hidden cause behind the statement and the action) and uniform play carry no
    // mechanism: no Tier 3. The faithful family reaches it.
    for family in ["model-d", "uniform"] {
        let r = row(&rs, "pgg-round1-human", family, 3);
        assert_eq!((r["passes"].as_u64(), r["seeds"].as_u64()), (Some(0), Some(4)), "{r}");
        assert_eq!(r["target_met"], true, "{r}");
    }
    let r = row(&rs, "pgg-round1-human", "faithful-2", 3);
    assert_eq!(r["passes"].as_u64(), Some(4), "{r}");
    // Model D's society is robust: it stops at Tier 2 for the intervention, not before.
    assert_eq!(row(&rs, "pgg-round1-human", "model-d", 2)["passes"].as_u64(), Some(4));
    let runs = std::fs::read_to_string(out.join("runs.jsonl")).expect("runs.jsonl");
    assert_eq!(runs.lines().count(), 12);
    assert!(runs.contains("does not exclude zero in the mechanism's direction"), "{runs}");
    let md = std::fs::read_to_string(&book).expect("the chapter");
    assert!(md.starts_with("# Calibration of the ladder"), "{md}");
    assert!(md.contains("| pgg-round1-human | model-d | Null | 2 | 3 | 0 / 4 | 0.000 | 0.000 |"), "{md}");

    // Resuming plays nothing new; the table is the same.
    let o = agora(&["calibrate", s(&file), "--out", s(&out), "--check"]);
    assert!(o.status.success() && !text(&o).contains("calibrate: "), "{}", text(&o));

    // The other way: a family declared faithful whose stated value moves nothing (effect 0)
    // cannot be certified; its target is missed and --check exits 1.
    let flat = dir.path().join("flat.ron");
    let ci = std::fs::read_to_string(&file).expect("ci.ron");
    let families_at = ci.find("families: [").expect("families");
    let flat_text = format!(
        "{}families: [\n        Family(name: \"faithful-0\", hypothesis: Alternative, behaviour: Faithful, effect: 0, share: 0.5),\n    ],\n)\n",
        &ci[..families_at]
    )
    .replace("seeds: 4", "seeds: 2");
    std::fs::write(&flat, flat_text).expect("flat.ron");
    let out2 = dir.path().join("flat");
    let o = agora(&["calibrate", s(&flat), "--out", s(&out2), "--check"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("target missed: faithful-0 / pgg-round1-human / Tier 3"), "{}", text(&o));
    assert_eq!(row(&rows(&out2), "pgg-round1-human", "faithful-0", 3)["passes"].as_u64(), Some(0));
}

#[test]
fn a_bad_calibration_file_is_refused_with_exit_2() {
    let dir = tempfile::tempdir().expect("tempdir");
    for (text_, needle) in [
        ("Calibration(version: 1)", "missing field"),
        (
            "Calibration(version: 1, name: \"x\", seeds: 1, claims: [\"pgg-round1-human\"], \
             study: (runs: 3, cell_runs: 3, cells: []), audit: (replicate_sample: 1, replicate_m: 1, \
             export_sample: 1, prefill_sample: 1, prefill_m: 1), labellers: (count: 1, noise: 0.0), \
             families: [Family(name: \"f\", hypothesis: Null, behaviour: Uniform, effect: 0, share: 0.5)])",
            "labellers.count",
        ),
        (
            "Calibration(version: 1, name: \"x\", seeds: 1, claims: [\"no-such-claim\"], \
             study: (runs: 3, cell_runs: 3, cells: []), audit: (replicate_sample: 1, replicate_m: 1, \
             export_sample: 1, prefill_sample: 1, prefill_m: 1), labellers: (count: 2, noise: 0.0), \
             families: [Family(name: \"f\", hypothesis: Null, behaviour: Uniform, effect: 0, share: 0.5)])",
            "no-such-claim",
        ),
    ] {
        let f = dir.path().join("bad.ron");
        std::fs::write(&f, text_).expect("write");
        let o = agora(&["calibrate", s(&f), "--out", s(&dir.path().join("o"))]);
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        assert!(text(&o).contains("bad.ron") && text(&o).contains(needle), "{}", text(&o));
    }
}

/// The book's chapter is the command's own output over the seeds it played (kept in
/// bench/calibration/), never a typed table: rewriting it from those seeds gives it byte for
/// byte.
#[test]
fn the_books_calibration_chapter_is_what_the_command_writes_from_its_seeds() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("cal");
    std::fs::create_dir_all(&out).expect("mkdir");
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    std::fs::copy(root.join("bench/calibration/tier3-runs.jsonl"), out.join("runs.jsonl")).expect("the seeds");
    let o = agora(&["calibrate", "scenarios/calibration/tier3.ron", "--out", s(&out), "--table-only", "--check"]);
    assert!(o.status.success(), "{}", text(&o));
    let written = std::fs::read_to_string(out.join("calibration.md")).expect("written");
    let book = std::fs::read_to_string(root.join("docs/src/calibration.md")).expect("the chapter");
    assert_eq!(written, book, "docs/src/calibration.md is not what `agora calibrate --table-only` writes");
    // Every null family has 200 seeds and no Tier 3 pass rate above 5 %.
    for r in rows(&out).iter().filter(|r| r["hypothesis"] == "Null" && r["tier"] == 3) {
        if r["claim"] == "pgg-round1-human" {
            assert!(r["seeds"].as_u64() >= Some(200), "{r}");
            assert_eq!(r["target_met"], true, "{r}");
        }
    }
}
