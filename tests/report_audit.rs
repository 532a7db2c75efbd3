//! `agora report` on an audited store: the stated values, the dependency, the coder
//! validation, the requirement verdicts and the reasoning tree, each checked against the
//! store's audit tables; refused numbers shown as refused; a store without audit tables
//! still renders and says so.
//!
//! The store: a small prisoner's-dilemma study of one fake model (as in `audit_replicates.rs`)
//! whose reasoning states fairness and competition at random and whose action follows
//! fairness, with replicates of a sample of its prompts. Its reasoning carries markup, which
//! must reach the page escaped.

use std::path::Path;
use std::sync::Arc;

use agora_test_support::FakeReply;
use rusqlite::Connection;
use serde_json::Value;

mod common;
use common::{
    agora, assert_figure_file, count, draw_fairness, fake_model, label_blind, reasoned_reply, replicates, run_fake, s,
    study_text, text, write_models, write_study_file, FakeRun,
};

const MARKUP: &str = "<script>document.title='pwned'</script><img src=x onerror=\"alert(1)\">";

/// The reply of `audit_replicates.rs`'s fake model, with markup added to a quarter of them.
fn reply(body: &Value) -> FakeReply {
    let mut d = draw_fairness(body, 0.2, 0.6);
    if d.hash[6] & 3 == 0 {
        d.reasoning.push(MARKUP);
    }
    reasoned_reply(body, &d.reasoning, usize::from(!d.cooperate))
}

fn model(endpoint: &str) -> String {
    fake_model("fake", "Fake", endpoint, "fake-1", "")
}

fn report(store: &Path, out: &Path) -> String {
    let o = agora(&["report", "--store", s(store), "--out", s(out)]);
    assert!(o.status.success(), "{}", text(&o));
    std::fs::read_to_string(out.join("report.html")).expect("report")
}

/// The reasoning tree's PNG decodes, has the size of a readable figure and is drawn on.
fn assert_tree_png(dir: &Path) {
    let png = std::fs::read_dir(dir)
        .expect("figures")
        .map(|e| e.expect("entry").path())
        .find(|p| p.to_str().is_some_and(|n| n.ends_with("-reasoning-tree.png")))
        .expect("the reasoning tree's PNG");
    assert_figure_file(&png);
}

#[test]
fn the_report_shows_the_audit_of_a_store_and_says_when_there_is_none() {
    let FakeRun { rt: _rt, server, dir, store, .. } = run_fake(Arc::new(|_, body| reply(body)), |dir, endpoint| {
        let block = r#"Block(name: "pd", environment: PrisonersDilemma(rounds: 6), model_rosters: true, rosters: [])"#;
        let study = study_text("report-audit", 23, 10, &[model(endpoint)], &[block]);
        write_study_file(dir, &[], "study.ron", &study)
    });

    // Not audited: the page renders and says so.
    let html = report(&store, &dir.path().join("plain"));
    assert!(html.contains("id=\"audit-none\""), "the page says the store was not audited");
    assert!(!html.contains("id=\"audit-occurrence\"") && !html.contains("Reasoning tree of"));

    // Replicates, then the audit without human labels: every number refused.
    let models = dir.path().join("models.ron");
    write_models(&models, &[model(&server.endpoint())]);
    let o = replicates(&store, &models, &["--seed", "3", "--sample", "10", "--m", "8"]);
    assert!(o.status.success(), "{}", text(&o));
    let o = agora(&["audit", "--store", s(&store), "--out", s(&dir.path().join("audit"))]);
    assert!(o.status.success(), "{}", text(&o));
    // `agora audit` tests the shipped requirements; a store without verdicts says so.
    let c = Connection::open(&store).expect("open");
    assert!(count(&c, "SELECT COUNT(*) FROM audit_requirements") > 0, "the audit wrote verdicts");
    c.execute_batch("DROP TABLE audit_requirements").expect("drop");
    drop(c);
    let html = report(&store, &dir.path().join("refused"));
    assert!(!html.contains("id=\"audit-none\""));
    assert!(html.contains("id=\"audit-occurrence\""));
    assert!(
        html.contains("<td>fake</td><td>fairness</td><td>120</td><td>refused</td><td>refused</td><td>refused</td><td>refused: no human labels</td>"),
        "a refused share reads refused, with the gate's reason"
    );
    assert!(html.contains("id=\"audit-dependency\""));
    // Each estimate names the arm and cell it rests on (per-cell rows are not duplicates).
    assert!(html.contains("<th>environment</th><th>arm</th><th>cell</th>"), "the dependency table names arm and cell");
    assert!(html.contains("<td>refused</td><td>refused: no human labels</td></tr>"), "refused dependency rows");
    assert!(html.contains("id=\"audit-agreement-none\""), "no coder validation yet");
    assert!(html.contains("id=\"audit-requirements-none\"") && html.contains("No requirements were evaluated"));
    assert!(html.contains("id=\"audit-tree\""), "the tree is drawn from the replicates");

    // Human labels agreeing with the coder, the agreement, and the audit again: validated.
    label_blind(&store, dir.path(), &["--sample", "120", "--seed", "1"], &["ana", "ben"], |r| r["coder_code"].clone());
    let o = agora(&["audit", "agreement", "--store", s(&store), "--out", s(&dir.path().join("agreement"))]);
    assert!(o.status.success(), "{}", text(&o));
    let o = agora(&["audit", "--store", s(&store), "--out", s(&dir.path().join("audit"))]);
    assert!(o.status.success(), "{}", text(&o));

    // One more requirement verdict, its reason carrying markup.
    {
        let c = Connection::open(&store).expect("open");
        c.execute(
            "INSERT INTO audit_requirements VALUES ('fairness-moves-action', 'fake', 'at_least', 0.51, 0.3, 0.72, 0.25,
                'pass', ?1, 80, 64)",
            [MARKUP],
        )
        .expect("row");
    }

    let out = dir.path().join("validated");
    let html = report(&store, &out);
    assert!(!html.contains("<script") && !html.contains("<img"), "no markup from the store survives");
    assert!(html.contains("&lt;script&gt;document.title="), "the transcript text is shown, escaped");
    let c = Connection::open(&store).expect("open");

    // Occurrence: the share of coded responses stating each value, as the store holds them.
    let coded = count(&c, "SELECT COUNT(*) FROM audit_responses WHERE values_json IS NOT NULL");
    assert_eq!(coded, 120, "ten runs of six rounds, two seats");
    for value in ["fairness", "competition", "altruism"] {
        let k = count(
            &c,
            &format!("SELECT COUNT(*) FROM audit_responses WHERE json_extract(values_json, '$.{value}') = 1"),
        );
        let share = k as f64 / coded as f64;
        let row = format!("<td>fake</td><td>{value}</td><td>{coded}</td><td>{k}</td><td>{share:.3}</td><td>[");
        assert!(html.contains(&row), "{row}");
    }
    assert!(html.contains("<td>validated: κ = 1.000 ≥ 0.8"), "the gate's decision");

    // Dependency: every estimate of the store, with its interval.
    let mut st = c
        .prepare("SELECT estimator, value, coef, ci_low, ci_high FROM audit_dependency WHERE coef IS NOT NULL")
        .expect("query");
    let estimates: Vec<(String, String, f64, f64, f64)> = st
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)))
        .expect("rows")
        .map(|r| r.expect("row"))
        .collect();
    assert!(estimates.iter().any(|e| e.0 == "lpm-fe" && e.1 == "fairness"), "fairness is estimated");
    for (estimator, value, coef, low, high) in &estimates {
        let row = format!("<td>{estimator}</td><td>{value}</td><td>{coef:.3}</td><td>[{low:.3}, {high:.3}]</td>");
        assert!(html.contains(&row), "{row}");
    }
    let not_identified = count(&c, "SELECT COUNT(*) FROM audit_dependency WHERE status = 'not identified'");
    assert!(not_identified > 0);
    assert!(html.contains("<td>not identified: "), "unidentified values say why");

    // Coder validation: κ, per-code recall and the confusion matrix.
    let (kappa, n, confusion): (f64, i64, String) = c
        .query_row(
            "SELECT kappa, n, confusion_json FROM audit_agreement WHERE kind = 'coder' AND model = 'fake'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .expect("agreement row");
    assert!(html.contains("id=\"audit-agreement\""));
    assert!(html.contains(&format!("<td>lexicon/1</td><td>{n}</td><td>{kappa:.3}</td>")), "κ with its sentences");
    assert!(html.contains("<table class=\"recall\">") && html.contains("<td>fairness</td>"));
    let confusion: Vec<Vec<u64>> = serde_json::from_str(&confusion).expect("confusion");
    let diagonal: u64 = (0..confusion.len()).map(|i| confusion[i][i]).sum();
    assert_eq!(diagonal, n as u64, "the labels agree with the coder");
    assert!(html.contains("<table class=\"confusion-matrix\">"));

    // Requirement verdicts: every verdict of the store, and the one added.
    let mut st = c.prepare("SELECT requirement, model, kind, verdict FROM audit_requirements").expect("query");
    let verdicts: Vec<(String, String, String, String)> = st
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .expect("rows")
        .map(|r| r.expect("row"))
        .collect();
    assert!(verdicts.len() > 1);
    let section =
        html.split("id=\"audit-requirements\"").nth(1).expect("requirements").split("</table>").next().expect("");
    assert_eq!(section.matches("<tr><td>").count(), verdicts.len(), "one row per verdict");
    for (requirement, model, kind, verdict) in &verdicts {
        let row = format!("<tr><td>{requirement}</td><td>{model}</td><td>{kind}</td>");
        let row_at = section.find(&row).unwrap_or_else(|| panic!("{row}"));
        let rest = &section[row_at..];
        let end = rest.find("</tr>").expect("row end");
        assert!(rest[..end].contains(&format!("<td>{verdict}</td>")), "{row} {verdict}");
    }
    assert!(html.contains(
        "<td>fairness-moves-action</td><td>fake</td><td>at_least</td><td>0.510</td><td>[0.300, 0.720]</td><td>0.250</td><td>pass</td><td>&lt;script&gt;"
    ));
    assert!(!html.contains("No requirements were evaluated"));

    // The reasoning tree: the prompt with most replicates (all have 8: the first), its 8 paths.
    let (run, seat, slot): (i64, i64, i64) = c
        .query_row(
            "SELECT run_id, seat, slot FROM audit_replicate_responses ORDER BY run_id, seat, slot LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .expect("a replicate");
    assert!(html.contains(&format!("prompt {run}:{seat}:{slot} (run:seat:slot; model fake")), "the chosen prompt");
    assert!(html.contains("Reasoning tree of 8 responses (replicates of one prompt)"));
    let table = html.split("id=\"audit-tree-paths\"").nth(1).expect("path table").split("</table>").next().expect("");
    let counts: i64 = table
        .split("<tr><td>")
        .skip(1)
        .map(|r| r.split("</td><td>").nth(2).expect("count").parse::<i64>().expect("a count"))
        .sum();
    assert_eq!(counts, 8, "every replicate ends one path");
    assert!(table.contains("understanding"), "paths start from the opening sentence's code");
    assert!(!table.contains("understanding → understanding"), "repeated codes collapse");
    assert_tree_png(&out.join("figures"));
}
