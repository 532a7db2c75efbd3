//! The behavioural profile in `agora report`: a reduced profile of the Category A tasks and a
//! small society study of the same fake model in one store; the report draws the profile
//! figure, lists each model's profile table, joins the model's profile to its own society
//! decisions (and says so where a profiled model has none), and renders in headless Chromium
//! when it is installed.

use std::sync::Arc;

use agora_test_support::{legal_answer, FakeReply, FakeServer};

mod common;
use common::{agora, assert_figure_file, chromium, count, page_dom, text};

const CAPTION: &str = "Behavioural profile: centre (dot), inner range (thick bar), outer range (thin bar)";

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime")
}

fn model(name: &str, served: &str, endpoint: &str) -> String {
    format!(
        r#"Model(name: "{name}", family: "Fake", endpoints: ["{endpoint}"], served_id: "{served}",
                 concurrency: 8, structured: JsonSchema, max_attempts: 2, backoff_ms: 1)"#
    )
}

/// The cells of the table row whose first cell is `first`, in the table starting at `id`.
fn row_cells(html: &str, id: &str, first: &str) -> Vec<String> {
    let table = &html[html.find(&format!("id=\"{id}\"")).unwrap_or_else(|| panic!("table {id}"))..];
    let table = &table[..table.find("</table>").expect("table end")];
    let at = table.find(&format!("<tr><td>{first}</td>")).unwrap_or_else(|| panic!("row {first} in {id}: {table}"));
    let row = &table[at..];
    let row = &row[..row.find("</tr>").expect("row end")];
    row.split("<td")
        .skip(1)
        .map(|c| {
            let c = &c[c.find('>').expect("cell") + 1..];
            c[..c.find("</td>").expect("cell end")].to_string()
        })
        .collect()
}

fn number(cell: &str) -> f64 {
    cell.parse().unwrap_or_else(|_| panic!("`{cell}` is not a number"))
}

#[test]
fn the_report_shows_the_profile_and_joins_it_to_the_society_runs() {
    let dir = tempfile::tempdir().expect("tempdir");
    let rt = runtime();
    let server = rt
        .block_on(FakeServer::start(Arc::new(|_, body: &serde_json::Value| FakeReply::Content(legal_answer(body)))))
        .expect("server");
    let endpoint = format!("http://{}/v1", server.addr);

    // The society plays `fake`; the profile asks `fake` and `solo`, which has no society run.
    std::fs::write(
        dir.path().join("models.ron"),
        format!("Models(version: 1, models: [{}])", model("fake", "fake-1", &endpoint)),
    )
    .expect("models");
    std::fs::write(
        dir.path().join("profile-models.ron"),
        format!(
            "Models(version: 1, models: [{}, {}])",
            model("fake", "fake-1", &endpoint),
            model("solo", "solo-1", &endpoint)
        ),
    )
    .expect("models");
    let profile_study = dir.path().join("profile.ron");
    std::fs::write(
        &profile_study,
        r#"ProfileStudy(version: 1, name: "report-profile", master_seed: 7, include_models: Some("profile-models.ron"),
            responses: 1, reduced_protocol: true, general_robustness: false,
            tasks: ["dictator", "ultimatum-proposer", "prisoners-dilemma", "stag-hunt", "public-goods"])"#,
    )
    .expect("profile study");
    let society_study = dir.path().join("society.ron");
    std::fs::write(
        &society_study,
        r#"Study(version: 1, name: "society", master_seed: 11, runs: 2, include_models: Some("models.ron"),
            blocks: [
                Block(name: "pd", environment: PrisonersDilemma(rounds: 3), model_rosters: true, rosters: [], runs: 2),
                Block(name: "pgg", environment: PublicGoods(rounds: 2), model_rosters: true, rosters: [], runs: 1),
                Block(name: "dictator", environment: Bargaining(game: Dictator, games: 2), model_rosters: true, rosters: [], runs: 1),
            ])"#,
    )
    .expect("society study");

    let store = dir.path().join("s.sqlite");
    let s = store.to_str().expect("utf8");
    let o = agora(&[
        "profile",
        profile_study.to_str().expect("utf8"),
        "--store",
        s,
        "--out",
        dir.path().join("profile").to_str().expect("utf8"),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let o = agora(&["run", society_study.to_str().expect("utf8"), "--store", s]);
    assert!(o.status.success(), "{}", text(&o));
    drop(server);
    {
        let c = rusqlite::Connection::open(&store).expect("open");
        assert!(count(&c, "SELECT COUNT(*) FROM profile_responses WHERE model = 'fake'") > 0);
        assert!(count(&c, "SELECT COUNT(*) FROM transcripts WHERE model = 'fake' AND kind = 'decision'") > 0);
    }

    let out = dir.path().join("report");
    let o = agora(&["report", "--store", s, "--out", out.to_str().expect("utf8")]);
    assert!(o.status.success(), "{}", text(&o));
    let html = std::fs::read_to_string(out.join("report.html")).expect("report");

    // The figure, and its files beside the page, passing the same checks as every figure of
    // the full report (the store's other figures, drawn from a handful of runs, are not sized
    // for it: one PNG and one SVG each is all that is asked of them here).
    let figures = html.matches("class=\"figure\"").count();
    assert!(html.contains(&format!("<figcaption>{CAPTION} ")), "the profile figure is on the page");
    let files: Vec<_> =
        std::fs::read_dir(out.join("figures")).expect("figures").map(|e| e.expect("entry").path()).collect();
    let pngs: Vec<_> = files.iter().filter(|p| p.extension().is_some_and(|e| e == "png")).collect();
    assert_eq!(pngs.len(), figures, "one PNG per figure");
    assert!(pngs.iter().all(|p| p.with_extension("svg").exists()), "and one SVG");
    let stem = pngs
        .iter()
        .find(|p| {
            p.file_name().is_some_and(|n| n.to_string_lossy().contains("-behavioural-profile-centre-dot-inner-range"))
        })
        .expect("the profile figure's PNG");
    assert_figure_file(stem);
    let svg = std::fs::read_to_string(stem.with_extension("svg")).expect("svg");
    assert!(svg.contains("fake (fake-1)") && svg.contains("solo (solo-1)"), "the legend names both models");
    assert!(svg.contains("a1 generosity") && svg.contains("a2 cooperation"), "one row per combined measure");

    // One profile table per model, a1 and a2 with numbers.
    assert!(html.contains("id=\"profile\""));
    for table in ["profile-0", "profile-1"] {
        for m in ["a1", "a2"] {
            let cells = row_cells(&html, table, m);
            let centre = number(&cells[3]);
            assert!((0.0..=100.0).contains(&centre), "{table} {m}: {cells:?}");
            assert!(cells[4].starts_with('[') && cells[5].starts_with('['), "{table} {m}: {cells:?}");
            assert!(cells[7].ends_with("checks") && cells[8] == "available", "{table} {m}: {cells:?}");
        }
        row_cells(&html, table, "a:prisoners-dilemma");
    }

    // The join: `fake` beside its society decisions, `solo` said to have none.
    let join = &html[html.find("id=\"profile-society\"").expect("join table")..];
    let join = &join[..join.find("</table>").expect("end")];
    let pd = join
        .split("<tr>")
        .find(|r| r.starts_with("<td>fake</td>") && r.contains("prisoner&#39;s dilemma: % of decisions cooperating"))
        .unwrap_or_else(|| panic!("fake's dilemma row: {join}"));
    let cells: Vec<&str> = pd.split("<td>").skip(1).map(|c| &c[..c.find("</td>").expect("cell")]).collect();
    let society = number(cells[3]);
    assert!((0.0..=100.0).contains(&society), "{cells:?}");
    assert!(number(cells[4]) > 0.0 && cells[7] == "a:prisoners-dilemma" && cells[9] == "a2", "{cells:?}");
    assert!(number(cells[8].split(' ').next().expect("centre")) >= 0.0, "{cells:?}");
    assert!(join.contains("public goods: contribution") && join.contains("dictator: giving"), "{join}");
    assert!(
        join.contains(
            "<tr class=\"no-society\"><td>solo</td><td>solo-1</td><td colspan=\"9\">no society runs of this model"
        ),
        "{join}"
    );

    let Some(chromium) = chromium() else { return };
    let dom = page_dom(chromium, &dir.path().join("browser-profile"), &out.join("report.html"));
    assert!(dom.contains("<title>Agora report</title>"), "the page loaded");
    assert_eq!(dom.matches("<svg").count(), figures, "every figure rendered as SVG in the browser");
    let figure = &dom[dom.find(CAPTION).expect("the profile figure in the DOM")..];
    assert!(figure.contains("<svg") && figure[figure.find("<svg").unwrap()..].contains("a2 cooperation"), "its SVG");
    assert!(dom.contains("id=\"profile-0\"") && dom.contains("id=\"profile-society\""), "the tables are present");
}

#[test]
fn the_self_description_view_of_five_scripted_models() {
    let dir = tempfile::tempdir().expect("tempdir");
    let rt = runtime();
    // Each model answers its own way: the fake's legal answer drawn from the request with the
    // served model's name mixed in, so the five profiles differ and repeat exactly.
    let server = rt
        .block_on(FakeServer::start(Arc::new(|_, body: &serde_json::Value| {
            let mut b = body.clone();
            let m = body["model"].as_str().unwrap_or("").to_string();
            if let Some(t) = b["messages"][0]["content"].as_str() {
                b["messages"][0]["content"] = serde_json::Value::from(format!("{m}: {t}"));
            }
            FakeReply::Content(legal_answer(&b))
        })))
        .expect("server");
    let endpoint = format!("http://{}/v1", server.addr);
    let models: Vec<String> = (1..=5).map(|k| model(&format!("m{k}"), &format!("m{k}-1"), &endpoint)).collect();
    std::fs::write(dir.path().join("models.ron"), format!("Models(version: 1, models: [{}])", models.join(", ")))
        .expect("models");
    let study = dir.path().join("self.ron");
    std::fs::write(
        &study,
        r#"ProfileStudy(version: 1, name: "self-description", master_seed: 7, include_models: Some("models.ron"),
            responses: 1, reduced_protocol: true, general_robustness: false, questionnaire_items: Some(2),
            tasks: ["dictator", "ultimatum-proposer", "e1", "e2", "e3", "e4", "e5"])"#,
    )
    .expect("study");
    let store = dir.path().join("s.sqlite");
    let s = store.to_str().expect("utf8");
    let o = agora(&[
        "profile",
        study.to_str().expect("utf8"),
        "--store",
        s,
        "--out",
        dir.path().join("p").to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let out = dir.path().join("report");
    let o = agora(&["report", "--store", s, "--out", out.to_str().expect("utf8")]);
    assert!(o.status.success(), "{}", text(&o));
    let html = std::fs::read_to_string(out.join("report.html")).expect("report");
    assert!(html.contains("Self-description beside behaviour"), "the view is there");
    assert!(html.contains("not the profile methods' items"), "the items are Agora's adaptations");

    // One row per model; E2 and A1 as the profile tables give them, recomputed from the store.
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("p/profile.json")).expect("json"))
            .expect("parse");
    let mut pairs = Vec::new();
    for k in 1..=5 {
        let name = format!("m{k}");
        let cells = row_cells(&html, "self-description", &name);
        assert_eq!(cells.len(), 2 + 5 + 16, "{cells:?}");
        let measures = json["models"].as_array().unwrap().iter().find(|m| m["model"] == name.as_str()).unwrap();
        let centre = |m: &str| {
            measures["measures"].as_array().unwrap().iter().find(|l| l["measure"] == m).unwrap()["centre"].as_f64()
        };
        let (e2, a1) = (centre("e2").expect("e2"), centre("a1").expect("a1"));
        assert!(cells[3].starts_with(&format!("{e2:.1} [")), "E2 of {name}: {}", cells[3]);
        assert!(cells[7].starts_with(&format!("{a1:.1} [")), "A1 of {name}: {}", cells[7]);
        assert!(cells[8].contains("not in this profile"), "A2 was not asked: {}", cells[8]);
        pairs.push((e2, a1));
    }
    // The declared pairing's ρ and interval, as the report computes them from the five.
    let r = agora_report::pairing_rho(&pairs);
    let said = &html[html.find("id=\"self-description-pairing\"").expect("pairing")..];
    let said = &said[..said.find("</p>").unwrap()];
    match (r.rho, r.interval) {
        (Some(rho), Some([lo, hi])) => {
            assert!(said.contains(&format!("ρ = {rho:.2} over 5 models")), "{said}");
            assert!(said.contains(&format!("[{lo:.2}, {hi:.2}]")), "{said}");
        }
        _ => assert!(said.contains("no rank correlation"), "{said}"),
    }
}
