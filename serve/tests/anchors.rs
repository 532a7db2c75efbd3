//! Human anchors from the store: people play four dilemmas through `agora serve` (a fourth,
//! with a stand-in in an empty seat, is left out); the cooperation of each human run is the
//! anchor's sample; classical rosters in the same store are graded against it: the roster that
//! cooperates as these people did matches them, and neither matches the published corridor.

mod common;

use agora_analysis::human_anchors::{from_store, HumanAnchors};
use agora_analysis::{analyze::analyze_against, Options};
use agora_engine::{execute, RunnerOptions, Store};
use agora_scenarios::Plan;
use common::*;

#[test]
fn human_anchors_computed_from_the_store_grade_a_claim() {
    // The waiting room closes 15 s after its first person is seated: long beside the time
    // the second takes to enter (a pair that did not meet would play with the stand-in), and
    // waited out once, by the last participant, who is meant to be alone. Decisions are
    // answered as they come; 120 s is a hang guard.
    let (dir, s) = serve_study("lab", "", &people_dilemma_runs(4, 5), 15, 120, None);
    let store = s.store.clone();
    let base = s.base.clone();
    s.rt.block_on(async {
        let codes = codes(&base, 9).await;
        for (k, defects) in [2u64, 2, 1, 3].into_iter().enumerate() {
            let (a, b) = (&codes[2 * k], &codes[2 * k + 1]);
            enter(&base, a).await;
            enter(&base, b).await;
            // The first cooperates throughout; the second defects in the last `defects` rounds.
            let (x, y) = tokio::join!(
                play(&base, a, |_, _| vec![("choice".into(), "0".into())]),
                play(&base, b, move |_, slot| vec![(
                    "choice".into(),
                    if slot >= 4 - defects { "1" } else { "0" }.into()
                )])
            );
            assert_eq!((x.len(), y.len()), (4, 4));
        }
        // One more participant alone: the empty seat's stand-in makes it no human run.
        enter(&base, &codes[8]).await;
        play(&base, &codes[8], |_, _| vec![("choice".into(), "0".into())]).await;
    });
    let anchors = from_store(&store, Some("lab")).expect("anchors");
    let corridor: Vec<_> = anchors.of("pd-corridor");
    assert_eq!(corridor.len(), 1, "{anchors:?}");
    let a = corridor[0];
    assert_eq!((a.n, a.excluded, a.metric.as_str()), (4, 1, "cooperation"));
    // The sample is each human run's share of cooperative decisions, counted here from the
    // decisions themselves.
    let c = rusqlite::Connection::open(&store).expect("store");
    let mut shares: Vec<f64> = c
        .prepare(
            "SELECT AVG(d.action = 'c0') FROM decisions d GROUP BY d.run_id
             HAVING d.run_id NOT IN (SELECT run_id FROM transcripts WHERE model LIKE 'stand-in:%')",
        )
        .expect("q")
        .query_map([], |r| r.get(0))
        .expect("rows")
        .collect::<Result<_, _>>()
        .expect("shares");
    shares.sort_by(f64::total_cmp);
    let mut got = a.values.clone();
    got.sort_by(f64::total_cmp);
    assert_eq!(got, shares);
    assert_eq!(shares, [0.625, 0.75, 0.75, 0.875]);
    assert!((a.mean - 0.75).abs() < 1e-12 && a.ci_low < 0.75 && a.ci_high > 0.75);
    assert_eq!(a.margin, 0.15, "the corridor's half-width");
    let hash: String =
        c.query_row("SELECT plan_hash FROM studies WHERE study = 'lab'", [], |r| r.get(0)).expect("hash");
    assert_eq!((a.study.as_str(), a.study_hash.as_str()), ("lab", hash.as_str()));
    // The file round-trips.
    assert_eq!(HumanAnchors::parse(&anchors.to_ron()).expect("parses"), anchors);

    // Classical rosters in the same store: one cooperates in three rounds of four (0.75), one
    // always (1.0). Their own study, run by the engine.
    let models = dir.path().join("models.ron");
    std::fs::write(
        &models,
        r#"Study(version: 1, name: "models", master_seed: 5, runs: 3, blocks: [Block(name: "pd",
            environment: PrisonersDilemma(rounds: 4), rosters: [
                Roster(name: "three-of-four", members: [Member(policy: Sequence([0, 0, 0, 1]))]),
                Roster(name: "always", members: [Member(policy: AlwaysCooperate)]),
            ])])"#,
    )
    .expect("study");
    let plan = Plan::load(&models, None).expect("plan");
    let mut st = Store::open(&store).expect("store");
    st.record_study(&plan.study_record(), "models").expect("study");
    execute(&plan.runs, &mut st, &RunnerOptions::default(), &mut |_| {}).expect("runs");
    drop(st);
    let verdict = |human: Option<&HumanAnchors>| {
        let analysis = analyze_against(&store, None, &Options::default(), human).expect("analysis");
        analysis.verdicts.into_iter().find(|v| v.claim == "pd-corridor").expect("verdict")
    };
    let published = verdict(None);
    assert_eq!(published.tier, 0, "neither lies in the published corridor 0.2-0.5: {published:?}");
    let lab = verdict(Some(&anchors));
    assert_eq!(lab.tier, 1, "{lab:?}");
    let text = lab.evidence.join("\n");
    let line = |roster: &str| lab.evidence.iter().find(|e| e.starts_with(roster)).cloned().unwrap_or_default();
    assert!(line("three-of-four").contains("cooperation equivalent to the lab's human runs"), "{text}");
    assert!(line("always").contains("cooperation not equivalent to the lab's human runs"), "{text}");
    // The report shows the people beside the models.
    let report = agora_report::write(&store, &dir.path().join("report")).expect("report");
    let html = std::fs::read_to_string(report).expect("html");
    let at = html.find("Your participants beside the models").expect("the section");
    let section = &html[at..at + html[at..].find("</table>").expect("its table")];
    let row = section.split("<tr>").find(|r| r.contains("pd-corridor")).expect("the corridor's row");
    assert!(
        row.contains("<td>4</td>")
            && row.contains("0.750")
            && row.contains("three-of-four: 0.750 (3)")
            && row.contains("always: 1.000 (3)"),
        "{row}"
    );
    // People's form submissions are not shown as model replies.
    assert!(!html.contains("&quot;choice&quot;") && !html.contains("\"choice\""), "a person's form among the excerpts");
    // The people themselves are the sample, not a graded roster.
    assert!(!text.contains("people"), "{text}");
}
