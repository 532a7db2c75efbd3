//! The LLM section: `agora run` (a child process) against the fake OpenAI-compatible server at
//! several latencies, through each HTTP client, the store per call on the instrument's prompts,
//! and a fast model beside a slow one.

use super::*;

/// CPU seconds (user + system) of this process's waited-for children so far.
fn children_cpu() -> f64 {
    cpu_seconds(libc::RUSAGE_CHILDREN)
}

fn write_llm_study(dir: &Path, models: &[(&str, String, usize)], runs: usize) -> anyhow::Result<PathBuf> {
    let decl: Vec<String> = models
        .iter()
        .map(|(name, ep, limit)| {
            format!(
                "Model(name: \"{name}\", family: \"Fake\", endpoints: [\"{ep}\"], served_id: \"{name}\", \
                 concurrency: {limit}, timeout_s: 60.0, max_retries: 4, backoff_ms: 20)"
            )
        })
        .collect();
    let study = format!(
        "Study(version: 1, name: \"dispatch\", master_seed: 3, runs: {runs}, models: [{}],\n\
         blocks: [Block(name: \"pgg\", environment: PublicGoods(rounds: 10), model_rosters: true, rosters: [])])",
        decl.join(", ")
    );
    std::fs::create_dir_all(dir.join("studies"))?;
    std::fs::create_dir_all(dir.join("cells"))?;
    let path = dir.join("studies/dispatch.ron");
    std::fs::write(&path, study)?;
    Ok(path)
}

/// Runs `agora run` on a study; returns (wall seconds, child CPU seconds).
fn agora_run(study: &Path, store: &Path, live: usize) -> anyhow::Result<(f64, f64)> {
    agora_run_with(study, store, live, &[])
}

/// Runs `agora run` on a study with these environment variables set; returns (wall seconds,
/// child CPU seconds).
fn agora_run_with(study: &Path, store: &Path, live: usize, env: &[(&str, &str)]) -> anyhow::Result<(f64, f64)> {
    let exe = agora_exe()?;
    let cpu0 = children_cpu();
    let start = Instant::now();
    let out = Command::new(exe)
        .args(["run", &study.to_string_lossy(), "--store", &store.to_string_lossy(), "--live", &live.to_string()])
        .envs(env.iter().copied())
        .output()?;
    let wall = start.elapsed().as_secs_f64();
    anyhow::ensure!(out.status.success(), "agora run failed: {}", String::from_utf8_lossy(&out.stderr));
    Ok((wall, children_cpu() - cpu0))
}

pub(super) fn llm(quick: bool, rows: &mut Vec<Row>) -> anyhow::Result<()> {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    let (runs, limit, live) = if quick { (16, 32, 64) } else { (256, 512, 256) };
    // Public goods, 4 seats × 10 rounds: one decision per seat per round.
    let decisions = runs * 4 * 10;
    for latency_ms in [0u64, 50, 1000] {
        let reply = if latency_ms == 0 {
            FakeReply::Legal
        } else {
            FakeReply::Delay(Duration::from_millis(latency_ms), Box::new(FakeReply::Legal))
        };
        let server = rt.block_on(FakeServer::start(Arc::new(move |_, _| reply.clone())))?;
        let dir = tempfile_dir("llm")?;
        let study = write_llm_study(&dir, &[("fake", server.endpoint(), limit)], runs)?;
        let (wall, cpu) = agora_run(&study, &dir.join("s.sqlite"), live)?;
        let peak = server.peak_in_flight.load(Ordering::Relaxed);
        let requests = server.requests.load(Ordering::Relaxed);
        // The ideal wall time: stages of a run are sequential, and at most `limit` requests
        // are served at once.
        let ideal = (decisions as f64 / limit as f64).max(10.0) * latency_ms as f64 / 1000.0;
        rows.push(row(
            "LLM dispatch",
            format!("fake server, {latency_ms} ms latency, limit {limit}, {runs} runs live ≤ {live}"),
            format!(
                "{} decisions/s; {:.0} µs engine CPU per decision",
                thousands(decisions as f64 / wall),
                cpu / decisions as f64 * 1e6
            ),
            format!(
                "{requests} requests for {decisions} decisions; peak in flight {peak} of {limit}; wall {wall:.2} s{}",
                if latency_ms > 0 { format!(" vs {ideal:.2} s if latency were all") } else { String::new() }
            ),
        ));
        server.stop();
        let _ = std::fs::remove_dir_all(&dir);
    }
    // The HTTP client: the same study at 50 ms through Agora's HTTP/1.1 client (plain HTTP,
    // the default) and through reqwest (chosen when a proxy variable is set; NO_PROXY keeps the
    // connection direct), each timed twice, the lower CPU kept.
    let server = rt.block_on(FakeServer::start(Arc::new(|_, _| {
        FakeReply::Delay(Duration::from_millis(50), Box::new(FakeReply::Legal))
    })))?;
    let mut per_decision = Vec::new();
    for env in [&[][..], &[("http_proxy", "http://192.0.2.1:9"), ("NO_PROXY", "127.0.0.1,localhost")][..]] {
        let mut best = f64::INFINITY;
        for _ in 0..2 {
            let dir = tempfile_dir("llm-client")?;
            let study = write_llm_study(&dir, &[("fake", server.endpoint(), limit)], runs)?;
            let (_, cpu) = agora_run_with(&study, &dir.join("s.sqlite"), live, env)?;
            best = best.min(cpu / decisions as f64 * 1e6);
            let _ = std::fs::remove_dir_all(&dir);
        }
        per_decision.push(best);
    }
    server.stop();
    rows.push(row(
        "LLM dispatch",
        format!("HTTP client, fake server, 50 ms latency, limit {limit}, {runs} runs"),
        format!("{:.0} µs engine CPU per decision through Agora's HTTP/1.1 client", per_decision[0]),
        format!(
            "{:.0} µs through reqwest (a proxy variable set, NO_PROXY for loopback): {:.0} µs a decision saved; the lower of two runs each",
            per_decision[1],
            per_decision[1] - per_decision[0]
        ),
    ));
    transcript_store(&rt, quick, rows)?;
    // A fast model beside a slow one: does the fast one wait?
    let fast_runs = if quick { 8 } else { 64 };
    let fast_decisions = fast_runs * 40;
    let time_fast = |with_slow: bool| -> anyhow::Result<f64> {
        let fast = rt.block_on(FakeServer::start(Arc::new(|_, _| {
            FakeReply::Delay(Duration::from_millis(10), Box::new(FakeReply::Legal))
        })))?;
        let slow = rt.block_on(FakeServer::start(Arc::new(|_, _| {
            FakeReply::Delay(Duration::from_millis(400), Box::new(FakeReply::Legal))
        })))?;
        let dir = tempfile_dir("hol")?;
        let mut models = vec![("fast", fast.endpoint(), 64)];
        if with_slow {
            models.push(("slow", slow.endpoint(), 64));
        }
        let study = write_llm_study(&dir, &models, fast_runs)?;
        let exe = agora_exe()?;
        let start = Instant::now();
        let mut child = Command::new(exe)
            .args(["run", &study.to_string_lossy(), "--store", &dir.join("s.sqlite").to_string_lossy()])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()?;
        let mut fast_done = None;
        loop {
            if fast_done.is_none() && fast.requests.load(Ordering::Relaxed) >= fast_decisions {
                fast_done = Some(start.elapsed().as_secs_f64());
            }
            if let Some(status) = child.try_wait()? {
                anyhow::ensure!(status.success(), "agora run failed");
                break;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        let _ = std::fs::remove_dir_all(&dir);
        fast_done.context("the fast model did not answer every decision")
    };
    let alone = time_fast(false)?;
    let beside = time_fast(true)?;
    rows.push(row(
        "LLM dispatch",
        format!("fast model (10 ms) beside a slow one (400 ms), {fast_runs} runs each"),
        format!("fast model done in {beside:.2} s beside, {alone:.2} s alone"),
        format!("ratio {:.2}: no head-of-line blocking when close to 1", beside / alone),
    ));
    Ok(())
}

/// The store a study writes per model call, on the instrument's own prompts: the shipped
/// instrument study, one seeded run per condition (its naming games capped at 150
/// interactions, as scripts/guard.py does), two models on the fake server. Sizes are pages
/// as SQLite's dbstat counts them, so they include each table's b-tree and index overhead.
fn transcript_store(rt: &tokio::runtime::Runtime, quick: bool, rows: &mut Vec<Row>) -> anyhow::Result<()> {
    let server = rt.block_on(FakeServer::start(Arc::new(|_, _| FakeReply::Legal)))?;
    let dir = tempfile_dir("store")?;
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let models = dir.join("models.ron");
    let decl: Vec<String> = ["fake-a", "fake-b"]
        .iter()
        .map(|name| {
            format!(
                "Model(name: \"{name}\", family: \"{name}\", endpoints: [\"{}\"], served_id: \"{name}\", \
                 concurrency: 64, structured: JsonSchema, timeout_s: 60.0)",
                server.endpoint()
            )
        })
        .collect();
    std::fs::write(&models, format!("Models(version: 1, models: [{}])", decl.join(", ")))?;
    let mut study = std::fs::read_to_string(root.join("scenarios/studies/instrument.ron"))?;
    study = study
        .replace("include_models: Some(\"../models/example.ron\")", &format!("include_models: Some({:?})", models))
        .replace("NamingGame()", "NamingGame(cap: 150)")
        .replace("NamingGame(shuffled_pool: true)", "NamingGame(shuffled_pool: true, cap: 150)");
    let study_path = dir.join("instrument.ron");
    std::fs::write(&study_path, study)?;
    let store = dir.join("s.sqlite");
    let mut args: Vec<String> = vec![
        "run".into(),
        study_path.to_string_lossy().into(),
        "--store".into(),
        store.to_string_lossy().into(),
        "--cells".into(),
        root.join("scenarios/cells").to_string_lossy().into(),
        "--runs".into(),
        "1".into(),
    ];
    if quick {
        // A fortieth of the plan: enough to exercise the harness.
        args.extend(["--shard".into(), "1/40".into()]);
    }
    let out = Command::new(agora_exe()?).args(&args).output()?;
    anyhow::ensure!(out.status.success(), "agora run failed: {}", String::from_utf8_lossy(&out.stderr));
    server.stop();
    let conn = rusqlite::Connection::open(&store)?;
    let sizes = agora_records::reads::bench::call_sizes(&conn)?;
    let (calls, full, transcripts, cache) = (sizes.calls, sizes.requests, sizes.transcripts, sizes.cache);
    let file = std::fs::metadata(&store)?.len() as f64;
    let runs = agora_records::reads::bench::run_count(&conn)?;
    rows.push(row(
        "LLM store",
        format!("instrument prompts, {runs} runs (1 per condition), 2 models, fake server"),
        format!("{:.0} B per call (transcripts {:.0} + reply cache {:.0})", (transcripts + cache) / calls, transcripts / calls, cache / calls),
        format!(
            "{} calls; the requests themselves average {:.0} B (what a row held before schema 4); the whole store {:.0} B per call with decisions, payoffs and runs",
            thousands(calls),
            full / calls,
            file / calls
        ),
    ));
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}
