//! `agora report`: a self-contained HTML file with every figure and the verdict table; model
//! replies are escaped; opened in headless Chromium when it is installed.

use std::path::Path;

mod common;
use common::{agora, assert_figure_files, chromium, headless, text};

#[test]
fn report_is_self_contained_escapes_replies_and_renders_in_a_browser() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = dir.path().join("s.sqlite");
    let s = store.to_str().expect("utf8");
    for study in ["classical.ron", "tipping.ron"] {
        let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/studies").join(study);
        let o = agora(&["run", p.to_str().expect("utf8"), "--runs", "3", "--store", s]);
        assert!(o.status.success(), "{}", text(&o));
    }
    // A model reply that tries to inject markup and a script.
    let evil = "<script>document.title='pwned'</script><img src=x onerror=\"alert(1)\">";
    {
        let c = rusqlite::Connection::open(&store).expect("open");
        c.execute(
            "INSERT INTO transcript_calls VALUES ((SELECT MIN(run_id) FROM runs), 0, 0, 1, 'decision', 1, 'player', 'm', 'm', 'http://x',
             '[]', ?1, NULL, NULL, 'unparsable', '', 1.0, NULL, NULL)",
            [evil],
        )
        .expect("insert");
    }
    let out = dir.path().join("report");
    let o = agora(&["report", "--store", s, "--out", out.to_str().expect("utf8")]);
    assert!(o.status.success(), "{}", text(&o));
    let html = std::fs::read_to_string(out.join("report.html")).expect("report");
    assert!(!html.contains("<script"), "no script survives");
    assert!(!html.contains("<img"), "no markup from a reply survives");
    assert!(html.contains("&lt;script&gt;document.title="), "the reply is shown, escaped");
    assert!(!html.contains("http://") || !html.contains("src=\"http"), "nothing is loaded from the network");
    let figures = html.matches("class=\"figure\"").count();
    assert!(figures >= 11, "{figures} figures");
    assert!(html.contains("Punishment effect on final-round contributions"), "the punishment effect has its figure");
    assert!(html.contains("human, with punishment: 0.50–0.95"), "against the human range with punishment");
    assert!(html.contains("Time to convention"), "time-to-convention distributions");
    assert!(html.contains("thick tick: threshold"), "acceptance thresholds marked");
    assert!(html.contains("id=\"verdicts\""));
    assert!(html.find("<table").is_some_and(|i| html[i..].starts_with("<table id=\"verdicts\">")), "verdicts first");
    assert!(html.contains("interaction network over time"), "the tipping run drawn as a network");
    assert!(html.contains("human critical mass 0.21–0.25"), "tipping curves carry the human bracket");
    assert_figure_files(&out.join("figures"), figures);

    let Some(chromium) = chromium() else { return };
    let profile = dir.path().join("profile");
    let url = format!("file://{}", out.join("report.html").display());
    let dom = headless(chromium, &profile, &["--dump-dom", &url]);
    let dom = String::from_utf8_lossy(&dom.stdout);
    assert!(dom.contains("<title>Agora report</title>"), "the script did not run: the title is intact");
    assert_eq!(dom.matches("<svg").count(), figures, "every figure rendered as SVG in the browser");
    assert!(dom.contains("id=\"verdicts\""), "the verdict table is present");
    let first_table = dom.find("<table").expect("a table");
    assert!(
        dom[first_table..].starts_with("<table id=\"verdicts\"><thead><tr><th>claim</th>"),
        "the verdict table comes first"
    );
    let provenance = dom.find("id=\"provenance\"").expect("a provenance section");
    assert!(dom.find("id=\"studies\"").is_some_and(|i| i > provenance), "plan hashes and seeds come last");
    let shot = dir.path().join("shot.png");
    let o =
        headless(chromium, &profile, &["--window-size=1200,1600", &format!("--screenshot={}", shot.display()), &url]);
    let png = std::fs::read(&shot).unwrap_or_else(|_| panic!("screenshot: {}", text(&o)));
    assert!(png.starts_with(b"\x89PNG") && png.len() > 20_000, "a non-trivial screenshot");
}

#[test]
fn demo_runs_both_studies_analyses_them_and_writes_the_report() {
    let dir = tempfile::tempdir().expect("tempdir");
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_agora"))
        .arg("demo")
        .current_dir(dir.path())
        .output()
        .expect("runs");
    assert!(o.status.success(), "{}", text(&o));
    let t = text(&o);
    assert!(t.contains("classical: 1740 runs executed") && t.contains("tipping: 520 runs executed"), "{t}");
    assert!(t.contains("report written to"), "{t}");
    // One table per game and arm, in study order, each fitting a 100-column terminal.
    let headings: Vec<&str> = t.lines().filter(|l| l.starts_with("== ")).collect();
    let mut unique = headings.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(unique.len(), headings.len(), "a heading printed twice: {headings:?}");
    assert_eq!(headings.first().copied(), Some("== prisoners-dilemma / baseline (pd) =="), "{headings:?}");
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.lines().all(|l| l.chars().count() <= 100), "a line over 100 columns:\n{stdout}");
    assert!(dir.path().join("agora.sqlite").exists());
    assert!(dir.path().join("out/report/analysis/verdicts.csv").exists());
    let html = std::fs::read_to_string(dir.path().join("out/report/report.html")).expect("report");
    assert!(html.matches("class=\"figure\"").count() >= 11);
    let effect = std::fs::read_to_string(dir.path().join("out/report/analysis/punishment-effect.csv")).expect("table");
    assert!(effect.lines().count() >= 3, "one row per classical model that plays public goods:\n{effect}");
}
