//! Helpers shared by the LLM end-to-end tests.
#![allow(dead_code)]

use std::path::Path;
use std::process::{Command, Output};

use rusqlite::Connection;

pub fn count(conn: &Connection, sql: &str) -> i64 {
    conn.query_row(sql, [], |r| r.get(0)).expect(sql)
}

/// Every decision of an LLM seat has exactly one terminal transcript (parsed or fallback) for
/// its slot, and no slot is recorded twice.
pub fn assert_every_slot_accounted(store: &Path) {
    let c = Connection::open(store).expect("open");
    let llm_decisions = count(
        &c,
        "SELECT COUNT(*) FROM decisions d JOIN agents a ON a.run_id = d.run_id AND a.seat = d.seat WHERE a.policy = 'llm'",
    );
    let terminal =
        count(&c, "SELECT COUNT(*) FROM transcripts WHERE kind = 'decision' AND (parse_status IN ('ok', 'fallback') OR (parse_status = 'truncated' AND action IS NOT NULL))");
    assert!(llm_decisions > 0);
    assert_eq!(llm_decisions, terminal, "one terminal transcript per LLM decision");
    let dup = count(
        &c,
        "SELECT COUNT(*) FROM (SELECT run_id, seat, slot FROM transcripts WHERE kind = 'decision' AND (parse_status IN ('ok','fallback') OR (parse_status = 'truncated' AND action IS NOT NULL))
         GROUP BY 1, 2, 3 HAVING COUNT(*) > 1)",
    );
    assert_eq!(dup, 0, "no slot decided twice");
    let per_seat_mismatch = count(
        &c,
        "SELECT COUNT(*) FROM (
            SELECT d.run_id, d.seat, COUNT(*) AS n FROM decisions d JOIN agents a ON a.run_id = d.run_id AND a.seat = d.seat
            WHERE a.policy = 'llm' GROUP BY 1, 2) x
         LEFT JOIN (SELECT run_id, seat, COUNT(DISTINCT slot) AS m FROM transcripts WHERE kind = 'decision' GROUP BY 1, 2) y
         ON x.run_id = y.run_id AND x.seat = y.seat WHERE y.m IS NULL OR y.m <> x.n",
    );
    assert_eq!(per_seat_mismatch, 0, "every seat's decisions match its slots");
}

/// Runs the `agora` binary in the repository root.
pub fn agora(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_agora"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("agora runs")
}

/// Everything a command printed.
pub fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

/// Every stored run's (run key, record hash), in key order.
pub fn record_hashes(store: &Path) -> Vec<(String, String)> {
    let c = Connection::open(store).expect("open");
    let mut st = c.prepare("SELECT run_key, record_hash FROM runs ORDER BY run_key").expect("query");
    st.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).expect("rows").map(|r| r.expect("row")).collect()
}

/// Every figure is written as SVG and as a PNG that decodes, has the size of a readable
/// figure and is drawn on (not blank: coloured marks and dark text).
pub fn assert_figure_files(dir: &Path, figures: usize) {
    let mut pngs: Vec<_> = std::fs::read_dir(dir)
        .expect("figures directory")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "png"))
        .collect();
    pngs.sort();
    assert_eq!(pngs.len(), figures, "one PNG per figure");
    for p in &pngs {
        assert_figure_file(p);
    }
}

/// One figure's PNG (with its SVG beside it): it decodes, has the size of a readable figure
/// and is drawn on (not blank: coloured marks and dark text).
pub fn assert_figure_file(p: &Path) {
    assert!(p.with_extension("svg").exists(), "{} has its SVG", p.display());
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(p).expect("open")));
    let mut reader = decoder.read_info().expect("a PNG");
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).expect("decodes");
    assert!(info.width >= 700 && info.height >= 200, "{} is {}×{}", p.display(), info.width, info.height);
    let px = &buf[..info.buffer_size()];
    let pixels = px.len() / 3;
    let dark = px.chunks(3).filter(|c| c.iter().all(|v| *v < 80)).count();
    let coloured = px.chunks(3).filter(|c| c.iter().max().unwrap_or(&0) - c.iter().min().unwrap_or(&0) > 60).count();
    assert!(dark * 200 > pixels, "{}: text and axes are drawn ({dark} dark pixels)", p.display());
    assert!(coloured * 200 > pixels, "{}: data are drawn in colour ({coloured} pixels)", p.display());
}

/// The installed Chromium, if any. Where none is installed the browser checks are skipped with
/// a message — except under AGORA_REQUIRE_BROWSER (set by CI, which installs Chromium).
pub fn chromium() -> Option<&'static str> {
    let found = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].into_iter().find(|p| Path::new(p).exists());
    if found.is_none() {
        assert!(std::env::var_os("AGORA_REQUIRE_BROWSER").is_none(), "AGORA_REQUIRE_BROWSER is set but no chromium");
        eprintln!("browser check not run: no chromium installed");
    }
    found
}

/// Runs headless Chromium with its own profile directory `profile` and `args` (e.g.
/// `--dump-dom URL`), nothing fetched from the network.
pub fn headless(chromium: &str, profile: &Path, args: &[&str]) -> Output {
    Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .output()
        .expect("chromium runs")
}

/// Human labels made the only way `agora audit import` takes them, on a blind export: the
/// machine coder's codes are read from an export that shows them (`--show-codes`, for checking
/// a coder), `label` gives each record's label from that record, and the label is written into
/// the same record of a blind export of the same sample, carrying its export id. The file is
/// imported once per name in `coders` (the gate needs two labellers or more, who here agree).
/// `export` are the export's arguments after the store (`--sample`, `--seed`, `--coder`…).
/// Returns the records with the codes shown.
pub fn label_blind(
    store: &Path,
    dir: &Path,
    export: &[&str],
    coders: &[&str],
    label: impl Fn(&serde_json::Value) -> serde_json::Value,
) -> Vec<serde_json::Value> {
    let store = store.to_str().expect("a UTF-8 path");
    let read = |name: &str, show: &[&str]| -> Vec<serde_json::Value> {
        let path = dir.join(name);
        let out = agora(
            &[&["audit", "export", "--store", store], export, show, &["--out", path.to_str().expect("path")]].concat(),
        );
        assert!(out.status.success(), "{}", text(&out));
        std::fs::read_to_string(&path)
            .expect("export")
            .lines()
            .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
            .collect()
    };
    let shown = read("shown.jsonl", &["--show-codes"]);
    let blind = read("blind.jsonl", &[]);
    assert_eq!(shown.len(), blind.len(), "the same sample, shown and blind");
    let labelled: String = blind
        .iter()
        .zip(&shown)
        .map(|(b, s)| {
            assert_eq!(b["sentence_id"], s["sentence_id"]);
            let mut b = b.clone();
            b["label"] = label(s);
            format!("{b}\n")
        })
        .collect();
    for coder in coders {
        let file = dir.join(format!("{coder}.jsonl"));
        std::fs::write(&file, &labelled).expect("labels");
        let out = agora(&[
            "audit",
            "import",
            "--store",
            store,
            "--labels",
            file.to_str().expect("path"),
            "--coder-name",
            coder,
        ]);
        assert!(out.status.success(), "{}", text(&out));
    }
    shown
}
