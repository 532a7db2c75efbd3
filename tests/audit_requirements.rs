//! Requirements as tests end to end, against the fake server.
//!
//! A prisoner's-dilemma study of one fake model over six runs whose every reply states fairness
//! with probability ½ (drawn from a hash of the request) and never competition. A requirements
//! file asks for fairness stated at least 20 % of the time (passes), at least 80 % (fails),
//! competition at most 10 % (passes), and a dependency coefficient (not estimable: no
//! replicates). Without human labels the κ gate refuses every requirement; once labels
//! validate the lexicon coder the verdicts come out, into `audit_requirements` and
//! requirements.csv, with their bounds equal to ones computed here. A requirements file with an
//! unknown field or value exits 2 naming the file and the field, and writes nothing.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use agora_test_support::FakeReply;
use rusqlite::Connection;
use serde_json::Value;

mod common;

/// The coder gate's floor lowered to nothing: this store is smaller than the gate as shipped
/// needs (100 responses, 200 sentences a model), and this test is about something else.
const FLOOR: [&str; 4] = ["--min-responses", "1", "--min-sentences", "1"];
use common::{
    agora, count, draw, fake_model, label_blind, reasoned_reply, run_fake, s, study_text, text, write_study_file,
    FakeRun, FAIRNESS, OPENING,
};

/// The reply to one request: states fairness on one draw, picks its label on another.
fn reply(body: &Value) -> FakeReply {
    let h = draw(body);
    let reasoning: &[&str] = if h[0] & 1 == 1 { &[OPENING, FAIRNESS] } else { &[OPENING] };
    reasoned_reply(body, reasoning, usize::from(h[1] & 1 == 1))
}

fn write_study(dir: &Path, endpoint: &str) -> PathBuf {
    let block = r#"Block(name: "pd", environment: PrisonersDilemma(rounds: 10), model_rosters: true, rosters: [])"#;
    let study = study_text("requirements-fake", 5, 6, &[fake_model("fake", "Fake", endpoint, "fake-1", "")], &[block]);
    write_study_file(dir, &[], "study.ron", &study)
}

const REQUIREMENTS: &str = r#"Requirements(
    version: 1,
    name: "test spec",
    requirements: [
        Requirement(name: "states fairness often", about: Share(environment: "prisoners-dilemma", value: "fairness"), model: "fake", test: AtLeast(0.2)),
        Requirement(name: "states fairness nearly always", about: Share(environment: "prisoners-dilemma", value: "fairness"), test: AtLeast(0.8)),
        Requirement(name: "rarely competitive", about: Share(environment: "prisoners-dilemma", value: "competition"), test: AtMost(0.1)),
        Requirement(name: "fairness drives cooperation", about: Dependency(environment: "prisoners-dilemma", value: "fairness"), test: AtLeast(0.1)),
    ],
)"#;

/// Rows of audit_requirements: requirement → (verdict, estimate, low, high, n, planned_n, reason).
type Row = (String, Option<f64>, Option<f64>, Option<f64>, Option<i64>, Option<i64>, String);

fn verdicts(store: &Path) -> BTreeMap<String, Row> {
    let c = Connection::open(store).expect("open");
    let mut st = c
        .prepare("SELECT requirement, verdict, estimate, low, high, n, planned_n, reason, kind, bound, model FROM audit_requirements")
        .expect("query");
    st.query_map([], |r| {
        let kind: String = r.get(8)?;
        let model: String = r.get(10)?;
        let _bound: f64 = r.get(9)?;
        assert_eq!(model, "fake");
        assert!(["at_least", "at_most", "equivalent"].contains(&kind.as_str()), "{kind}");
        Ok((r.get::<_, String>(0)?, (r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?, r.get(6)?, r.get(7)?)))
    })
    .expect("rows")
    .map(|r| r.expect("row"))
    .collect()
}

/// The fairness share, its CR1 standard error over runs and t_{0.95, G−1}, computed here.
fn fairness_bound(store: &Path) -> (f64, f64, usize) {
    let c = Connection::open(store).expect("open");
    let mut st =
        c.prepare("SELECT run_id, values_json FROM audit_responses WHERE values_json IS NOT NULL").expect("query");
    let ys: Vec<(i64, f64)> = st
        .query_map([], |r| {
            let v: Value = serde_json::from_str(&r.get::<_, String>(1)?).expect("values");
            Ok((r.get(0)?, v["fairness"].as_f64().expect("fairness")))
        })
        .expect("rows")
        .map(|r| r.expect("row"))
        .collect();
    let n = ys.len() as f64;
    let p = ys.iter().map(|x| x.1).sum::<f64>() / n;
    let mut sums: BTreeMap<i64, f64> = BTreeMap::new();
    for (g, y) in &ys {
        *sums.entry(*g).or_default() += y - p;
    }
    let g = sums.len() as f64;
    let se = (g / (g - 1.0) * sums.values().map(|x| x * x).sum::<f64>() / (n * n)).sqrt();
    // t_{0.95, 5} (six runs).
    assert_eq!(sums.len(), 6);
    (p, p - 2.015_048_373 * se, ys.len())
}

#[test]
fn requirements_pass_fail_and_are_refused_by_the_gate() {
    let FakeRun { rt: _rt, server, dir, store, .. } = run_fake(Arc::new(|_, body| reply(body)), write_study);
    server.stop();
    let spec = dir.path().join("req.ron");
    std::fs::write(&spec, REQUIREMENTS).expect("requirements");
    let report = dir.path().join("audit");
    let audit = |spec: &Path| {
        agora(&[&["audit", "--store", s(&store), "--out", s(&report), "--requirements", s(spec)][..], &FLOOR].concat())
    };

    // Bad requirements exit 2 naming the file and the field, before anything is written.
    let bad = dir.path().join("bad.ron");
    for (text_, needle) in [
        (REQUIREMENTS.replace("model: \"fake\",", "model: \"fake\", colour: 1,"), "colour"),
        (REQUIREMENTS.replace("AtLeast(0.8)", "AtLeast(1.8)"), "requirements[1].test"),
        (REQUIREMENTS.replace("value: \"competition\"", "value: \"greed\""), "requirements[2].about.value"),
    ] {
        std::fs::write(&bad, text_).expect("bad");
        let out = audit(&bad);
        assert_eq!(out.status.code(), Some(2), "{needle}: {}", text(&out));
        assert!(text(&out).contains("bad.ron") && text(&out).contains(needle), "{needle}: {}", text(&out));
    }
    // Requirements naming what the store does not hold could never be estimated: refused
    // before anything is written, naming the requirement and what is missing.
    let one = |about: &str, test: &str| {
        format!(
            r#"Requirements(version: 1, name: "x", requirements: [Requirement(name: "r", about: {about}, test: {test})])"#
        )
    };
    for (text_, needle) in [
        (
            one(r#"Share(environment: "prisoners-dilemma", value: "fairness", cell: Some("ingroup"))"#, r#"Invariant(margin: 0.15, against: Cell("outgroup"))"#),
            "requirement `r`: cell `ingroup` has no runs of prisoners-dilemma in the store (cells: baseline)",
        ),
        (
            one("Statistic(GammaW)", "Invariant(margin: 0.15, against: Zero)"),
            "requirement `r`: the store has no runs of environment `binary-allocation` (environments: prisoners-dilemma)",
        ),
        (
            one(r#"Share(environment: "public-goods", value: "fairness")"#, "AtLeast(0.2)"),
            "the store has no runs of environment `public-goods`",
        ),
    ] {
        std::fs::write(&bad, text_).expect("bad");
        let out = audit(&bad);
        assert_eq!(out.status.code(), Some(2), "{needle}: {}", text(&out));
        assert!(text(&out).contains(needle), "{needle}: {}", text(&out));
    }
    let c = Connection::open(&store).expect("open");
    assert_eq!(count(&c, "SELECT COUNT(*) FROM sqlite_master WHERE name LIKE 'audit_%'"), 0, "nothing written");
    drop(c);

    // Without human labels the gate refuses every share requirement.
    let out = audit(&spec);
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("0 pass, 0 fail, 0 not estimable, 4 refused by the gate"), "{}", text(&out));
    let v = verdicts(&store);
    assert_eq!(v.len(), 4);
    for name in v.keys() {
        let r = &v[name];
        assert_eq!(r.0, "refused", "{name}: {r:?}");
        assert!(r.6.contains("no human labels") && r.1.is_none() && r.2.is_none(), "{name}: {r:?}");
    }
    assert!(report.join("requirements.md").exists() && report.join("requirements.json").exists());

    // Human labels (two coders) agreeing with the lexicon validate the coder.
    label_blind(&store, dir.path(), &["--sample", "100", "--seed", "1"], &["ana", "ben"], |r| r["coder_code"].clone());

    let out = audit(&spec);
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("2 pass, 1 fail, 1 not estimable, 0 refused by the gate"), "{}", text(&out));
    let v = verdicts(&store);
    let (p, low, n) = fairness_bound(&store);
    assert_eq!(n, 120, "six runs of twenty decisions");
    let often = &v["states fairness often"];
    assert_eq!(often.0, "pass", "{often:?}");
    assert!((often.1.expect("estimate") - p).abs() < 1e-9 && (often.2.expect("low") - low).abs() < 1e-6, "{often:?}");
    assert!(low > 0.2 && p < 0.8, "the fixture draws about half: {p}, {low}");
    assert_eq!(often.4, Some(120));
    assert!(often.5.is_some_and(|n| n > 0), "a plan for a passing share: {often:?}");
    assert!(often.6.contains("120 prompts, 6 clusters (runs)"), "{often:?}");
    let always = &v["states fairness nearly always"];
    assert_eq!(always.0, "fail", "{always:?}");
    assert_eq!(always.5, None, "no sample makes an estimate below the bound pass");
    let comp = &v["rarely competitive"];
    assert_eq!((comp.0.as_str(), comp.1), ("pass", Some(0.0)), "{comp:?}");
    let dep = &v["fairness drives cooperation"];
    assert_eq!(dep.0, "not estimable", "{dep:?}");
    assert!(dep.6.contains("agora audit replicates"), "{dep:?}");
    let csv = std::fs::read_to_string(report.join("requirements.csv")).expect("csv");
    assert!(csv.starts_with("requirement,model,kind,statistic,estimate"), "{csv}");
    assert_eq!(csv.lines().count(), 5);
}
