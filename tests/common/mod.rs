//! Helpers shared by the LLM end-to-end tests.
#![allow(dead_code, unused_imports)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use agora_test_support::{Asked, Behaviour, FakeReply, FakeServer};
use rusqlite::Connection;
use serde_json::Value;
use sha2::{Digest, Sha256};

/// Value sentences the default lexicon codes as their true code, one for each of eight values,
/// with that code (the reasoning the fake models of the audit tests write).
pub const VALUES: [(&str, &str); 8] = [
    ("Cooperating gives me the most points.", "self_interest"),
    ("Option J gives the largest total for the two of us.", "social_welfare"),
    ("The other participant cooperated last round, so I should return the favor.", "positive_reciprocity"),
    ("I prefer to stay ahead of the other participant.", "competition"),
    ("Splitting the points evenly seems right.", "fairness"),
    ("The other participant would be better off if we both cooperate.", "altruism"),
    ("They defected last round, so they do not deserve my help.", "negative_reciprocity"),
    ("We share a hometown, so helping a fellow member makes sense.", "ingroup_cooperation"),
];

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

/// Runs `agora stats TEST` with `input` on its standard input.
pub fn agora_stats(test: &str, input: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_agora"))
        .args(["stats", test])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawns");
    child.stdin.take().expect("stdin").write_all(input.as_bytes()).expect("writes");
    child.wait_with_output().expect("finishes")
}

/// Runs `agora stats TEST` on `input` and returns its JSON answer, asserting success.
pub fn answer(test: &str, input: &Value) -> Value {
    let o = agora_stats(test, &input.to_string());
    assert!(o.status.success(), "{test}: {}", text(&o));
    serde_json::from_slice(&o.stdout).expect("json answer")
}

/// `agora stats TEST` refuses `input` with exit code 2 and a message holding every one of
/// `needles` (the field named, the reason).
pub fn assert_stats_refused(test: &str, input: &str, needles: &[&str]) {
    let o = agora_stats(test, input);
    assert_eq!(o.status.code(), Some(2), "{test} {input}: {}", text(&o));
    for needle in needles {
        assert!(text(&o).contains(needle), "{test} {input}: expected `{needle}` in {}", text(&o));
    }
}

/// Runs the `agora` binary, asserts that it succeeded (showing what it printed if not) and
/// returns everything it printed.
pub fn agora_ok(args: &[&str]) -> String {
    let out = agora(args);
    assert!(out.status.success(), "agora {}: {}", args.join(" "), text(&out));
    text(&out)
}

/// A path as a command-line argument.
pub fn s(p: &Path) -> &str {
    p.to_str().expect("utf8")
}

/// A runtime of two worker threads, for a fake server beside the processes a test runs.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime")
}

/// A fake model server answering with `behaviour`, and the runtime it runs on (keep both alive
/// for as long as the server is used).
pub fn fake_server(behaviour: Behaviour) -> (tokio::runtime::Runtime, FakeServer) {
    let rt = runtime();
    let server = rt.block_on(FakeServer::start(behaviour)).expect("server");
    (rt, server)
}

/// The SHA-256 of a request body as sent (its sampling seed included, so that a replicate
/// draws afresh): the bytes a fake model draws its reply from.
pub fn draw(body: &Value) -> [u8; 32] {
    Sha256::digest(body.to_string().as_bytes()).into()
}

/// The opening sentence of the dependency tests' fake model (coded `understanding`).
pub const OPENING: &str = "This is round one of a game with two options.";
/// A sentence the default lexicon codes `fairness`.
pub const FAIRNESS: &str = "Splitting the points evenly seems right.";
/// A sentence the default lexicon codes `competition`.
pub const COMPETITION: &str = "I prefer to stay ahead of the other participant.";

/// A reply to `body` whose `reasoning` field is `sentences` joined, written before the answer
/// field, which holds the field's `label`th label.
pub fn reasoned_reply(body: &Value, sentences: &[&str], label: usize) -> FakeReply {
    let asked = Asked::of(body);
    let reply = serde_json::json!({"reasoning": sentences.join(" "), asked.field(): asked.label(label)});
    FakeReply::Content(reply.to_string())
}

/// The reply of a fake prisoner's-dilemma player that always takes the first label: the answer
/// alone where no reasoning is asked for, else the sentences `reasoning(seat, round)` writes
/// (seat 0 for participant A), joined, before it.
pub fn first_label_reply(body: &Value, reasoning: impl FnOnce(usize, usize) -> Vec<String>) -> FakeReply {
    let asked = Asked::of(body);
    if !asked.reasoning() {
        return FakeReply::Content(serde_json::json!({ asked.field(): asked.label(0) }).to_string());
    }
    let (seat, round) = seat_and_round(body);
    let sentences = reasoning(seat, round);
    reasoned_reply(body, &sentences.iter().map(String::as_str).collect::<Vec<_>>(), 0)
}

/// What the fake model of the dependency tests drew for one request, from the request's
/// SHA-256 ([`draw`]): it states fairness with probability ½ and competition with probability
/// ½ independently, and cooperates with probability `base`, or `base + lift` when it stated
/// fairness.
pub struct FairnessDraw {
    /// The request's SHA-256.
    pub hash: [u8; 32],
    /// The reasoning's sentences: the opening, then fairness and competition where drawn.
    pub reasoning: Vec<&'static str>,
    /// Whether it cooperates (answers with the first label).
    pub cooperate: bool,
}

/// The draw of the dependency tests' fake model for `body` (see [`FairnessDraw`]).
pub fn draw_fairness(body: &Value, base: f64, lift: f64) -> FairnessDraw {
    let h = draw(body);
    let (fair, comp) = (h[0] & 1 == 1, h[1] & 1 == 1);
    let u = f64::from(u32::from_le_bytes([h[2], h[3], h[4], h[5]])) / 4_294_967_296.0;
    let cooperate = u < base + if fair { lift } else { 0.0 };
    let mut reasoning = vec![OPENING];
    if fair {
        reasoning.push(FAIRNESS);
    }
    if comp {
        reasoning.push(COMPETITION);
    }
    FairnessDraw { hash: h, reasoning, cooperate }
}

/// The seat (0 for participant A, 1 for B) and the round of a prisoner's-dilemma request, read
/// off its user message ("You are participant A…", "Round 2 …").
pub fn seat_and_round(body: &Value) -> (usize, usize) {
    let user = body["messages"][1]["content"].as_str().expect("user message");
    let seat = usize::from(!user.starts_with("You are participant A"));
    let at = user.rfind("Round ").expect("round line") + "Round ".len();
    let round: usize = user[at..].split(' ').next().and_then(|r| r.parse().ok()).expect("round number");
    (seat, round)
}

/// The declaration of a fake model `name` of `family`, served as `served` at `endpoint`: four
/// requests at a time, a 120 s timeout, two attempts and two retries 5 ms apart; `extra` is
/// added to its fields (empty, or `, field: value…`).
pub fn fake_model(name: &str, family: &str, endpoint: &str, served: &str, extra: &str) -> String {
    format!(
        r#"Model(name: "{name}", family: "{family}", endpoints: ["{endpoint}"], served_id: "{served}",
                   concurrency: 4, timeout_s: 120.0, max_attempts: 2, max_retries: 2, backoff_ms: 5{extra})"#
    )
}

/// Writes `dir/models.ron` declaring one fake model `fake` (served as `fake-1` at `endpoint`,
/// eight requests at a time, JSON-schema answers, two attempts, one retry) that is sent a
/// sampling seed, so that an answer can depend on the attempt it was given at; `extra` is added
/// to its fields (empty, or `, field: value…`).
pub fn write_seeded_models(dir: &Path, endpoint: &str, extra: &str) {
    std::fs::write(
        dir.join("models.ron"),
        format!(
            r#"Models(version: 1, models: [Model(name: "fake", family: "Fake", endpoints: ["{endpoint}"], served_id: "fake-1",
                concurrency: 8, structured: JsonSchema, max_attempts: 2, max_retries: 1, backoff_ms: 1, send_seed: true{extra})])"#
        ),
    )
    .expect("models");
}

/// The path of the shipped study `name` (a file of `scenarios/studies/`).
pub fn shipped_study(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/studies").join(name).display().to_string()
}

/// The plan of the shipped study `name` with its runs limited to `runs`.
pub fn shipped_plan(name: &str, runs: u32) -> agora_scenarios::Plan {
    agora_scenarios::Plan::load(Path::new(&shipped_study(name)), None).expect("shipped study resolves").limit_runs(runs)
}

/// Runs `plan` in this process into the store `dir/name` with `opts`; returns the store.
pub fn run_plan_into(
    dir: &Path,
    name: &str,
    plan: &agora_scenarios::Plan,
    opts: &agora_engine::RunnerOptions,
) -> agora_engine::Store {
    let mut store = agora_engine::Store::open(&dir.join(name)).expect("store opens");
    agora_engine::execute(&plan.runs, &mut store, opts, &mut |_| {}).expect("plan runs");
    store
}

/// The text of a study file `name` (master seed `seed`, `runs` runs per condition) declaring
/// `models` and holding `blocks` (each a `Block(…)`).
pub fn study_text(name: &str, seed: u64, runs: u64, models: &[String], blocks: &[&str]) -> String {
    format!(
        "Study(\n    version: 1, name: \"{name}\", master_seed: {seed}, runs: {runs},\n    models: [{}],\n    blocks: [\n        {},\n    ],\n)",
        models.join(", "),
        blocks.join(",\n        ")
    )
}

/// Writes the study `text` to `dir/studies/{file}`, with the shipped cells it names in `cells`
/// copied from `scenarios/cells/` into `dir/cells/`; returns the study's path.
pub fn write_study_file(dir: &Path, cells: &[&str], file: &str, text: &str) -> PathBuf {
    if !cells.is_empty() {
        std::fs::create_dir_all(dir.join("cells")).expect("mkdir");
    }
    for c in cells {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/cells").join(format!("{c}.ron"));
        std::fs::copy(src, dir.join("cells").join(format!("{c}.ron"))).expect("copy cell");
    }
    let studies = dir.join("studies");
    std::fs::create_dir_all(&studies).expect("mkdir");
    let path = studies.join(file);
    std::fs::write(&path, text).expect("write study");
    path
}

/// Writes a models file (`agora audit replicates --models`, `--coder llm:…`) declaring `models`.
pub fn write_models(path: &Path, models: &[String]) {
    std::fs::write(path, format!("Models(version: 1, models: [{}])", models.join(",\n"))).expect("write models");
}

/// `agora audit replicates` of `store` with the models of `models`, and `args` (seed, sample…).
pub fn replicates(store: &Path, models: &Path, args: &[&str]) -> Output {
    agora(&[&["audit", "replicates", "--store", s(store), "--models", s(models)], args].concat())
}

/// Runs `study` into `store` with `agora run`, asserting success; returns what it printed.
pub fn run_study(study: &Path, store: &Path) -> String {
    agora_ok(&["run", s(study), "--store", s(store)])
}

/// A study run against a fake model server.
pub struct FakeRun {
    /// The runtime the server runs on.
    pub rt: tokio::runtime::Runtime,
    /// The fake server, still serving.
    pub server: FakeServer,
    /// A temporary directory holding the study and its store.
    pub dir: tempfile::TempDir,
    /// The study's file.
    pub study: PathBuf,
    /// The store it was run into (`s.sqlite` in `dir`).
    pub store: PathBuf,
}

/// Starts a fake server answering with `behaviour`, writes a study with `write_study` (given the
/// directory and the server's endpoint) and runs it into a store, asserting success.
pub fn run_fake(behaviour: Behaviour, write_study: impl FnOnce(&Path, &str) -> PathBuf) -> FakeRun {
    let (rt, server) = fake_server(behaviour);
    let dir = tempfile::tempdir().expect("tempdir");
    let study = write_study(dir.path(), &server.endpoint());
    let store = dir.path().join("s.sqlite");
    run_study(&study, &store);
    FakeRun { rt, server, dir, study, store }
}

/// Every row `sql` selects from `store`, each as the text of its values (joined by U+001F).
pub fn rows(store: &Path, sql: &str) -> Vec<String> {
    let c = Connection::open(store).expect("open");
    let mut st = c.prepare(sql).expect("query");
    let n = st.column_count();
    st.query_map([], |r| {
        (0..n).map(|i| r.get::<_, rusqlite::types::Value>(i).map(|v| format!("{v:?}"))).collect::<Result<Vec<_>, _>>()
    })
    .expect("rows")
    .map(|r| r.expect("row").join("\u{1f}"))
    .collect()
}

/// A JSON file, parsed.
pub fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("json")).expect("parse")
}

/// The line of `measure` of the first model in the `profile.json` that `agora profile` wrote
/// into `out`, if there is one.
pub fn profile_measure(out: &Path, measure: &str) -> Option<Value> {
    let json = read_json(&out.join("profile.json"));
    json["models"][0]["measures"].as_array().expect("measures").iter().find(|l| l["measure"] == measure).cloned()
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

pub use agora_test_support::browser::chromium;

/// Runs headless Chromium with its own profile directory `profile` and `args` (e.g.
/// `--dump-dom URL`), nothing fetched from the network.
pub fn headless(chromium: &str, profile: &Path, args: &[&str]) -> Output {
    Command::new(chromium)
        .args(agora_test_support::browser::HEADLESS)
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .output()
        .expect("chromium runs")
}

/// The DOM of the page `page` once headless `chromium` (its profile in `profile`) has run its
/// scripts.
pub fn page_dom(chromium: &str, profile: &Path, page: &Path) -> String {
    let url = format!("file://{}", page.display());
    String::from_utf8_lossy(&headless(chromium, profile, &["--dump-dom", &url]).stdout).into_owned()
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

/// Starts `agora serve` on a free loopback port; returns the process and its base URL.
pub fn serve(study: &Path, store: &Path, token: &str) -> (std::process::Child, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_agora"))
        .args(["serve", s(study), "--bind", "127.0.0.1:0", "--store", s(store)])
        .env("AGORA_ADMIN_TOKEN", token)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("agora serve starts");
    let mut out = std::io::BufReader::new(child.stdout.take().expect("stdout"));
    let mut line = String::new();
    let base = loop {
        line.clear();
        if std::io::BufRead::read_line(&mut out, &mut line).unwrap_or(0) == 0 {
            break None;
        }
        if let Some(at) = line.find("on http://") {
            break Some(line[at + 3..].trim().to_string());
        }
    };
    let Some(base) = base else {
        let _ = child.kill();
        panic!("agora serve ended before listening: {:?}", child.wait());
    };
    std::thread::spawn(move || for _ in std::io::BufRead::lines(out) {});
    (child, base)
}

/// The lexicon coder's κ against the human reference on `model`'s text, as `audit_agreement`
/// stores it.
pub fn stored_lexicon_kappa(c: &Connection, model: &str) -> f64 {
    c.query_row(
        "SELECT kappa FROM audit_agreement WHERE model = ?1 AND kind = 'coder' AND coder = 'lexicon/1'",
        [model],
        |r| r.get(0),
    )
    .expect("stored")
}
