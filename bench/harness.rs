//! `agora-bench`: the benchmark harness. It measures, in one run on this machine:
//!
//! - classical throughput: the canonical 24-agent minimal naming game, the prisoner's dilemma
//!   and public goods through the engine, beside a plain loop over arrays playing the same
//!   naming rules (the ECS's cost) and the Python reference in `bench/reference/` (the ratio);
//! - large populations: the naming game and the memory-5 coordination game on networks of
//!   10^4 to 10^6 agents (interactions per second, heap per agent, time to consensus);
//! - LLM dispatch: `agora run` against a local fake OpenAI-compatible server with a set
//!   latency (engine CPU per decision, requests in flight against the limit, decisions per
//!   second, a fast model beside a slow one);
//! - analysis: exact Mann–Whitney at 30 vs 30 and 100 vs 100, and `agora analyze` on a store
//!   the size of the full instrument;
//! - peers: the same rules on the libraries users would otherwise reach for (`bench/peers/`:
//!   Mesa models of the naming game and of public goods, Axelrod matches of Roth–Erev
//!   learners), in a virtual environment under the target directory, with their outcome
//!   statistics beside the engine's and the throughput ratios.
//!
//! The results are printed and written as a Markdown table with the machine and the date.

use std::alloc::{GlobalAlloc, Layout, System};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use agora_engine::{RunWorld, Store};
use agora_environments::naming::network::{simulate, NetGame, NetRun, Network, StopRule, Topology};
use agora_scenarios::{Plan, RunSpec};
use agora_test_support::{FakeReply, FakeServer};
use anyhow::Context as _;

/// The global allocator, counting the bytes in use and their peak, so that the network
/// benchmark measures memory per agent instead of estimating it.
pub struct CountingAlloc;

static IN_USE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grew(bytes: usize) {
    let now = IN_USE.fetch_add(bytes, Ordering::Relaxed) + bytes;
    PEAK.fetch_max(now, Ordering::Relaxed);
}

#[expect(unsafe_code, reason = "a global allocator is an unsafe trait; this one forwards to the system allocator")]
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded unchanged to the system allocator.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.dealloc(ptr, layout) };
        IN_USE.fetch_sub(layout.size(), Ordering::Relaxed);
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded unchanged to the system allocator.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: forwarded unchanged to the system allocator.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            if new_size >= layout.size() {
                grew(new_size - layout.size());
            } else {
                IN_USE.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
            }
        }
        p
    }
}

/// Starts a peak measurement; returns the bytes in use now.
fn reset_peak() -> usize {
    let now = IN_USE.load(Ordering::Relaxed);
    PEAK.store(now, Ordering::Relaxed);
    now
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Section {
    Classical,
    Networks,
    Llm,
    Analysis,
    /// Mesa and Axelrod on the same rules, beside the engine.
    Peers,
}

pub struct Options {
    /// Small sizes everywhere (a smoke test of the harness, not figures to quote).
    pub quick: bool,
    pub sections: Vec<Section>,
    pub out: PathBuf,
}

/// The `agora` binary beside this one (both are built into the same directory).
fn agora_exe() -> anyhow::Result<PathBuf> {
    let me = std::env::current_exe()?;
    let exe = me.with_file_name(format!("agora{}", std::env::consts::EXE_SUFFIX));
    anyhow::ensure!(exe.exists(), "{} not found: build the agora binary too (cargo build --release)", exe.display());
    Ok(exe)
}

/// One line of the results table.
struct Row {
    bench: String,
    setting: String,
    result: String,
    notes: String,
}

fn row(bench: &str, setting: impl Into<String>, result: impl Into<String>, notes: impl Into<String>) -> Row {
    let r = Row { bench: bench.into(), setting: setting.into(), result: result.into(), notes: notes.into() };
    println!("{:<22} {:<44} {:<34} {}", r.bench, r.setting, r.result, r.notes);
    r
}

/// 1234567.8 → "1,234,568".
fn thousands(x: f64) -> String {
    let s = format!("{:.0}", x.max(0.0));
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

pub fn run(opts: &Options) -> anyhow::Result<()> {
    let sections = if opts.sections.is_empty() {
        vec![Section::Classical, Section::Networks, Section::Llm, Section::Analysis, Section::Peers]
    } else {
        opts.sections.clone()
    };
    let machine = machine();
    let date = today();
    println!("agora-bench on {machine}, {date}{}", if opts.quick { " (quick sizes)" } else { "" });
    let mut rows = Vec::new();
    for s in sections {
        match s {
            Section::Classical => classical(opts.quick, &mut rows)?,
            Section::Networks => networks(opts.quick, &mut rows)?,
            Section::Llm => llm(opts.quick, &mut rows)?,
            Section::Analysis => analysis(opts.quick, &mut rows)?,
            Section::Peers => peers(opts.quick, &mut rows)?,
        }
    }
    let mut md = format!(
        "Measured by `agora-bench{}` on {machine}, {date} (release build unless noted).\n\n\
         | benchmark | setting | result | notes |\n| --- | --- | --- | --- |\n",
        if opts.quick { " --quick" } else { "" }
    );
    for r in &rows {
        md.push_str(&format!("| {} | {} | {} | {} |\n", r.bench, r.setting, r.result, r.notes));
    }
    if let Some(dir) = opts.out.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    std::fs::write(&opts.out, md).with_context(|| format!("writing {}", opts.out.display()))?;
    println!("results written to {}", opts.out.display());
    Ok(())
}

fn machine() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    let mem = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|s| s.lines().next().and_then(|l| l.split_whitespace().nth(1)).and_then(|k| k.parse::<f64>().ok()))
        .map(|kb| format!(", {:.0} GiB", kb / 1024.0 / 1024.0))
        .unwrap_or_default();
    format!("{cpu}, {cores} cores{mem}")
}

/// Today's UTC date from the system clock (civil-from-days, proleptic Gregorian).
fn today() -> String {
    let secs = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    let z = (secs / 86_400) as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

fn repo_file(rel: &str) -> anyhow::Result<PathBuf> {
    let p = PathBuf::from(rel);
    anyhow::ensure!(p.exists(), "{rel} not found: run `agora-bench` from the repository root");
    Ok(p)
}

/// Runs the Python reference; returns (work units, seconds).
fn python(game: &str, runs: usize) -> anyhow::Result<(f64, f64)> {
    let script = repo_file("bench/reference/reference.py")?;
    let out = Command::new("python3")
        .arg(&script)
        .args([game, &runs.to_string(), "1"])
        .output()
        .context("running python3 (the reference implementation needs it)")?;
    anyhow::ensure!(out.status.success(), "reference.py failed: {}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout)?;
    let work = v.get("interactions").or_else(|| v.get("decisions")).and_then(|x| x.as_f64()).unwrap_or(0.0);
    Ok((work, v["seconds"].as_f64().unwrap_or(f64::NAN)))
}

/// Plays `count` runs drawn in turn from `specs` through the engine on this thread, each with a
/// seed of its own (derived from its specification's seed and its index), so that no run is a
/// repeat of another; returns (interactions, decisions, seconds).
fn engine_runs(specs: &[RunSpec], count: usize) -> anyhow::Result<(u64, u64, f64)> {
    let runs: Vec<RunSpec> = (0..count).map(|i| distinct(&specs[i % specs.len()], i)).collect();
    let start = Instant::now();
    let (mut interactions, mut decisions) = (0u64, 0u64);
    for spec in &runs {
        let rec = RunWorld::new(spec)?.run_to_end()?;
        interactions += rec.interactions.len() as u64;
        decisions += rec.decisions.len() as u64;
    }
    Ok((interactions, decisions, start.elapsed().as_secs_f64()))
}

/// The `i`-th benchmark run of `spec`: a seed of its own.
fn distinct(spec: &RunSpec, i: usize) -> RunSpec {
    let mut run = spec.clone();
    run.seed = agora_engine::seed::derive(spec.seed, &["bench", &i.to_string()]);
    run.run_index = i as u32;
    run
}

fn classical(quick: bool, rows: &mut Vec<Row>) -> anyhow::Result<()> {
    let plan = Plan::load(&repo_file("scenarios/studies/classical.ron")?, None)?;
    let pick = |block: &str, roster: &str| -> Vec<RunSpec> {
        plan.runs
            .iter()
            .filter(|r| {
                r.block == block
                    && r.roster == roster
                    && r.cell == "baseline"
                    && r.variant == agora_environments::Variant::C0
            })
            .cloned()
            .collect()
    };
    let naming = pick("naming-mng", "minimal-naming");
    let pd = pick("pd", "roth-erev");
    let pgg = pick("pgg", "conditional-cooperator");
    anyhow::ensure!(!naming.is_empty() && !pd.is_empty() && !pgg.is_empty(), "classical.ron lacks a benchmark block");
    let scale = if quick { 10 } else { 1 };

    // The 24-agent naming game: engine, plain loop, Python.
    let n_runs = 300 / scale;
    let (ei, _, es) = engine_runs(&naming, n_runs)?;
    let net = Network::build(Topology::Complete, 24, 0)?;
    let start = Instant::now();
    let mut pi = 0u64;
    for seed in 0..n_runs as u64 {
        let o = simulate(
            &net,
            &NetRun {
                stop: StopRule::Window { window: 50, threshold: 0.95 },
                ..NetRun::fresh(NetGame::SimultaneousNaming, 20_000, seed)
            },
        )?;
        pi += o.interactions;
    }
    let ps = start.elapsed().as_secs_f64();
    let (yi, ys) = python("naming", n_runs)?;
    let (e_rate, p_rate, y_rate) = (ei as f64 / es, pi as f64 / ps, yi / ys);
    rows.push(row(
        "naming game, 24 agents",
        format!("engine (bevy_ecs world per run), {n_runs} runs, 1 thread"),
        format!("{} interactions/s; {:.0} runs/s", thousands(e_rate), n_runs as f64 / es),
        format!("{:.0} interactions per run", ei as f64 / n_runs as f64),
    ));
    rows.push(row(
        "naming game, 24 agents",
        "plain loop over arrays, same rules",
        format!("{} interactions/s", thousands(p_rate)),
        format!(
            "{:.0} interactions per run; ECS cost: {:.1}× the plain loop per interaction",
            pi as f64 / n_runs as f64,
            p_rate / e_rate
        ),
    ));
    rows.push(row(
        "naming game, 24 agents",
        "Python reference (bench/reference), same rules",
        format!("{} interactions/s", thousands(y_rate)),
        format!("{:.0} interactions per run; engine = {:.1}× Python", yi / n_runs as f64, e_rate / y_rate),
    ));
    // With the store: the 120 distinct naming runs (C0–C3) committed to SQLite, one thread.
    let all_naming: Vec<RunSpec> = plan
        .runs
        .iter()
        .filter(|r| r.block == "naming-mng" && r.cell == "baseline")
        .take(if quick { 12 } else { usize::MAX })
        .cloned()
        .collect();
    let dir = tempfile_dir("store")?;
    let mut store = Store::open(&dir.join("bench.sqlite"))?;
    let start = Instant::now();
    let opts = agora_engine::RunnerOptions { threads: 1, ..Default::default() };
    let rep = agora_engine::execute(&all_naming, &mut store, &opts, &mut |_| {})?;
    let ss = start.elapsed().as_secs_f64();
    drop(store);
    let _ = std::fs::remove_dir_all(&dir);
    rows.push(row(
        "naming game, 24 agents",
        format!("engine + SQLite store, {} runs, 1 thread", rep.executed),
        format!("{:.0} runs/s", rep.executed as f64 / ss),
        "every decision and interaction recorded",
    ));

    for (name, specs, game) in [("prisoner's dilemma", &pd, "pd"), ("public goods", &pgg, "pgg")] {
        let count = 20_000 / scale;
        let (_, ed, es) = engine_runs(specs, count)?;
        let (yd, ys) = python(game, count)?;
        let roster = if game == "pd" { "2 Roth–Erev, 10 rounds" } else { "4 conditional cooperators, 10 rounds" };
        rows.push(row(
            name,
            format!("engine, {roster}, {count} runs, 1 thread"),
            format!("{} runs/s", thousands(count as f64 / es)),
            format!("{} decisions/s", thousands(ed as f64 / es)),
        ));
        rows.push(row(
            name,
            "Python reference, same rules",
            format!("{} runs/s", thousands(count as f64 / ys)),
            format!(
                "{} decisions/s; engine = {:.1}× Python",
                thousands(yd / ys),
                (count as f64 / es) / (count as f64 / ys)
            ),
        ));
    }
    Ok(())
}

fn tempfile_dir(tag: &str) -> anyhow::Result<PathBuf> {
    let dir = std::env::temp_dir().join(format!("agora-bench-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}

fn networks(quick: bool, rows: &mut Vec<Row>) -> anyhow::Result<()> {
    let sizes: &[usize] = if quick { &[1_000, 5_000] } else { &[10_000, 100_000, 1_000_000] };
    let topologies = [
        Topology::Complete,
        Topology::Ring { k: 4 },
        Topology::RandomRegular { d: 4 },
        Topology::SmallWorld { k: 4, p: 0.1 },
        Topology::ScaleFree { m: 3 },
    ];
    for &n in sizes {
        for topology in topologies {
            let base = reset_peak();
            let start = Instant::now();
            let net = Network::build(topology, n, 7)?;
            let build = start.elapsed().as_secs_f64();
            let build_peak = PEAK.load(Ordering::Relaxed) - base;
            for game in [NetGame::MinimalNaming, NetGame::MemoryCoordination { memory: 5 }] {
                let max = (if quick { 20 } else { 100 } * n as u64).min(20_000_000);
                let run = NetRun::fresh(game, max, 11);
                let base_run = reset_peak();
                let start = Instant::now();
                let o = simulate(&net, &run)?;
                let secs = start.elapsed().as_secs_f64();
                let run_peak = PEAK.load(Ordering::Relaxed) - base_run;
                let consensus = match o.converged_at {
                    Some(t) => format!(
                        "consensus at {} interactions ({:.1} per agent)",
                        thousands(t as f64),
                        t as f64 / n as f64
                    ),
                    None => format!("no consensus within {} interactions", thousands(o.interactions as f64)),
                };
                rows.push(row(
                    "network",
                    format!("{} · {} · {} agents", game.label(), topology.label(), thousands(n as f64)),
                    format!("{} interactions/s", thousands(o.interactions as f64 / secs)),
                    format!(
                        "{consensus}; heap {:.1} B/agent (network {:.1}, state {:.1}; peak while building {:.1}); built in {:.2} s",
                        (net.heap_bytes() + run_peak) as f64 / n as f64,
                        net.heap_bytes() as f64 / n as f64,
                        run_peak as f64 / n as f64,
                        build_peak as f64 / n as f64,
                        build
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// CPU seconds (user + system) of this process's waited-for children so far.
#[expect(unsafe_code, reason = "getrusage has no safe wrapper in libc")]
fn children_cpu() -> f64 {
    // SAFETY: getrusage writes into the struct we pass and reads nothing else.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: as above; RUSAGE_CHILDREN is a valid selector.
    if unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut u) } != 0 {
        return f64::NAN;
    }
    let t = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 / 1e6;
    t(u.ru_utime) + t(u.ru_stime)
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
    let exe = agora_exe()?;
    let cpu0 = children_cpu();
    let start = Instant::now();
    let out = Command::new(exe)
        .args(["run", &study.to_string_lossy(), "--store", &store.to_string_lossy(), "--live", &live.to_string()])
        .output()?;
    let wall = start.elapsed().as_secs_f64();
    anyhow::ensure!(out.status.success(), "agora run failed: {}", String::from_utf8_lossy(&out.stderr));
    Ok((wall, children_cpu() - cpu0))
}

fn llm(quick: bool, rows: &mut Vec<Row>) -> anyhow::Result<()> {
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

fn analysis(quick: bool, rows: &mut Vec<Row>) -> anyhow::Result<()> {
    use agora_analysis::stats::mann_whitney;
    for n in [30usize, 100] {
        // Tied integer-valued samples, as run-level outcomes often are.
        let x: Vec<f64> = (0..n).map(|i| ((i * 7919) % 23) as f64).collect();
        let y: Vec<f64> = (0..n).map(|i| ((i * 104_729) % 29) as f64).collect();
        let start = Instant::now();
        let r = mann_whitney(&x, &y)?;
        let secs = start.elapsed().as_secs_f64();
        rows.push(row(
            "analysis",
            format!("exact Mann–Whitney (permutation, with ties), {n} vs {n}"),
            format!("{:.1} ms", secs * 1000.0),
            format!("p = {:.4}", r.p_two_sided),
        ));
    }
    let study = repo_file("bench/studies/instrument-size.ron")?;
    let dir = tempfile_dir("analysis")?;
    let store = dir.join("instrument-size.sqlite");
    let exe = agora_exe()?;
    let mut args = vec!["run".to_string(), study.to_string_lossy().into(), "--cells".into(), "scenarios/cells".into()];
    args.extend(["--store".into(), store.to_string_lossy().into()]);
    if quick {
        args.extend(["--runs".into(), "2".into()]);
    }
    let start = Instant::now();
    let out = Command::new(&exe).args(&args).output()?;
    anyhow::ensure!(out.status.success(), "agora run failed: {}", String::from_utf8_lossy(&out.stderr));
    let run_secs = start.elapsed().as_secs_f64();
    let runs: i64 = rusqlite::Connection::open(&store)?.query_row("SELECT COUNT(*) FROM runs", [], |r| r.get(0))?;
    let size = std::fs::metadata(&store).map(|m| m.len()).unwrap_or(0) as f64 / 1e6;
    let start = Instant::now();
    let out = Command::new(&exe)
        .args(["analyze", "--store", &store.to_string_lossy(), "--out", &dir.join("analysis").to_string_lossy()])
        .output()?;
    anyhow::ensure!(out.status.success(), "agora analyze failed: {}", String::from_utf8_lossy(&out.stderr));
    let secs = start.elapsed().as_secs_f64();
    rows.push(row(
        "analysis",
        format!("`agora analyze` on a store of {} runs ({size:.0} MB)", thousands(runs as f64)),
        format!("{secs:.1} s"),
        format!("the store took {run_secs:.0} s to fill (bench/studies/instrument-size.ron, all cores)"),
    ));
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}

/// Mean, standard deviation and count of a sample.
#[derive(Clone, Copy, Debug)]
struct Summary {
    mean: f64,
    sd: f64,
    n: f64,
}

impl Summary {
    fn of(xs: &[f64]) -> Summary {
        let n = xs.len() as f64;
        let mean = xs.iter().sum::<f64>() / n.max(1.0);
        let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0).max(1.0);
        Summary { mean, sd: var.sqrt(), n }
    }

    fn from_json(v: &serde_json::Value) -> Summary {
        let f = |k: &str| v.get(k).and_then(serde_json::Value::as_f64).unwrap_or(f64::NAN);
        Summary { mean: f("mean"), sd: f("sd"), n: f("n") }
    }

    /// Standard error of the mean.
    fn se(&self) -> f64 {
        self.sd / self.n.max(1.0).sqrt()
    }
}

/// The stated tolerance for peers' statistics: two means agree when they differ by at most
/// this many combined standard errors (or by at most 1e-9 where both are exact).
const PEER_TOLERANCE_SE: f64 = 3.0;

/// How far apart two means are, in combined standard errors (0 when equal, infinite when
/// they differ and neither varies).
fn z_apart(a: Summary, b: Summary) -> f64 {
    let diff = (a.mean - b.mean).abs();
    if diff <= 1e-9 {
        return 0.0;
    }
    let se = (a.se().powi(2) + b.se().powi(2)).sqrt();
    if se > 0.0 {
        diff / se
    } else {
        f64::INFINITY
    }
}

fn agreement(z: f64) -> String {
    if z <= PEER_TOLERANCE_SE {
        format!("agree (|z| = {z:.1} ≤ {PEER_TOLERANCE_SE})")
    } else {
        format!("MISMATCH (|z| = {z:.1} > {PEER_TOLERANCE_SE})")
    }
}

/// The Python of the peers' virtual environment under the target directory, created and
/// filled from PyPI when missing; `Err` carries why it is unavailable.
fn peers_python(quick: bool) -> Result<PathBuf, String> {
    let me = std::env::current_exe().map_err(|e| e.to_string())?;
    // target/<profile>/agora-bench → target/peers-venv
    let target = me.parent().and_then(Path::parent).ok_or("no target directory above the executable")?;
    let venv = target.join("peers-venv");
    let python = venv.join("bin").join("python");
    let ready = || {
        Command::new(&python).args(["-c", "import mesa, axelrod"]).output().map(|o| o.status.success()).unwrap_or(false)
    };
    if ready() {
        return Ok(python);
    }
    if quick {
        return Err(format!("--quick does not install them; a full run creates {}", venv.display()));
    }
    println!(
        "peers: creating {} with mesa 3 and axelrod from PyPI (once; several GB: axelrod pulls in torch)",
        venv.display()
    );
    let made = Command::new("python3")
        .args(["-m", "venv"])
        .arg(&venv)
        .output()
        .map_err(|e| format!("python3 -m venv: {e}"))?;
    if !made.status.success() {
        return Err(format!("python3 -m venv failed: {}", last_line(&made.stderr)));
    }
    let pip = Command::new(venv.join("bin").join("pip"))
        .args(["install", "--quiet", "mesa==3.*", "axelrod"])
        .output()
        .map_err(|e| format!("pip: {e}"))?;
    if !pip.status.success() {
        return Err(format!("pip install mesa==3.* axelrod failed (PyPI unreachable?): {}", last_line(&pip.stderr)));
    }
    if ready() {
        Ok(python)
    } else {
        Err("mesa or axelrod does not import after pip install".into())
    }
}

fn last_line(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("").trim().to_string()
}

/// Runs `bench/peers/peers.py GAME RUNS SEED [AGENTS]`; returns its JSON.
fn peer(python: &Path, game: &str, runs: usize, agents: Option<usize>) -> anyhow::Result<serde_json::Value> {
    let script = repo_file("bench/peers/peers.py")?;
    let mut cmd = Command::new(python);
    cmd.arg(&script).args([game, &runs.to_string(), "1"]);
    if let Some(n) = agents {
        cmd.arg(n.to_string());
    }
    let out = cmd.output().context("running peers.py")?;
    anyhow::ensure!(out.status.success(), "peers.py {game} failed: {}", String::from_utf8_lossy(&out.stderr));
    Ok(serde_json::from_slice(&out.stdout)?)
}

/// Work units per second of a peer's JSON (interactions or decisions).
fn peer_rate(v: &serde_json::Value) -> f64 {
    let work = v.get("interactions").or_else(|| v.get("decisions")).and_then(serde_json::Value::as_f64).unwrap_or(0.0);
    work / v["seconds"].as_f64().unwrap_or(f64::NAN)
}

/// Plays the same distinct runs as [`engine_runs`] again, untimed, and hands each run's
/// records to `see` (the statistics are taken outside the timed loop).
fn engine_records(
    specs: &[RunSpec],
    count: usize,
    see: &mut dyn FnMut(&agora_engine::RunRecords),
) -> anyhow::Result<()> {
    for i in 0..count {
        let rec = RunWorld::new(&distinct(&specs[i % specs.len()], i))?.run_to_end()?;
        see(&rec);
    }
    Ok(())
}

fn peers(quick: bool, rows: &mut Vec<Row>) -> anyhow::Result<()> {
    let python = match peers_python(quick) {
        Ok(p) => p,
        Err(why) => {
            rows.push(row("peers", "Mesa and Axelrod (bench/peers)", "skipped", why));
            return Ok(());
        }
    };
    let plan = Plan::load(&repo_file("scenarios/studies/classical.ron")?, None)?;
    let pick = |block: &str, roster: &str| -> Vec<RunSpec> {
        plan.runs
            .iter()
            .filter(|r| {
                r.block == block
                    && r.roster == roster
                    && r.cell == "baseline"
                    && r.variant == agora_environments::Variant::C0
            })
            .cloned()
            .collect()
    };
    let naming = pick("naming-mng", "minimal-naming");
    let pd = pick("pd", "roth-erev");
    let pgg = pick("pgg", "conditional-cooperator");
    anyhow::ensure!(!naming.is_empty() && !pd.is_empty() && !pgg.is_empty(), "classical.ron lacks a benchmark block");
    let scale = if quick { 10 } else { 1 };

    // The 24-agent naming game: Mesa beside the engine.
    let n_runs = 300 / scale;
    let (ei, _, es) = engine_runs(&naming, n_runs)?;
    let mut per_run = Vec::with_capacity(n_runs);
    engine_records(&naming, n_runs, &mut |r| per_run.push(r.interactions.len() as f64))?;
    let e = Summary::of(&per_run);
    let m = peer(&python, "naming", n_runs, None)?;
    let ms = Summary::from_json(&m["stats"]["interactions_per_run"]);
    let (e_rate, m_rate) = (ei as f64 / es, peer_rate(&m));
    let mesa_v = m["mesa"].as_str().unwrap_or("?").to_string();
    let axl_v = m["axelrod"].as_str().unwrap_or("?").to_string();
    rows.push(row(
        "peers: naming game, 24 agents",
        format!("Mesa {mesa_v} model, minimal naming (simultaneous), {n_runs} runs, distinct seeds, 1 thread"),
        format!("{} interactions/s; engine = {:.1}× Mesa", thousands(m_rate), e_rate / m_rate),
        format!(
            "engine {} interactions/s; interactions to convention: engine {:.0} ± {:.0}, Mesa {:.0} ± {:.0} (mean ± SE): {}",
            thousands(e_rate),
            e.mean,
            e.se(),
            ms.mean,
            ms.se(),
            agreement(z_apart(e, ms))
        ),
    ));

    // Public goods, four conditional cooperators: Mesa beside the engine.
    let count = 20_000 / scale;
    let (_, ed, es) = engine_runs(&pgg, count)?;
    let rounds = 10usize;
    let mut by_round: Vec<Vec<f64>> = (0..rounds).map(|_| Vec::with_capacity(count)).collect();
    engine_records(&pgg, count, &mut |r| {
        let mut sum = vec![0.0; rounds];
        let mut seats = vec![0.0; rounds];
        for d in r.decisions.iter().filter(|d| d.role == "contributor") {
            if let Some(k) = (d.round as usize).checked_sub(1).filter(|k| *k < rounds) {
                sum[k] += d.value;
                seats[k] += 1.0;
            }
        }
        for k in 0..rounds {
            by_round[k].push(sum[k] / f64::max(seats[k], 1.0));
        }
    })?;
    let m = peer(&python, "pgg", count, None)?;
    let stats = &m["stats"]["contribution_by_round"];
    let mut worst = 0.0f64;
    let mut side = Vec::new();
    for (k, engine_round) in by_round.iter().enumerate() {
        let e = Summary::of(engine_round);
        let p = Summary {
            mean: stats["mean"][k].as_f64().unwrap_or(f64::NAN),
            sd: stats["sd"][k].as_f64().unwrap_or(f64::NAN),
            n: stats["n"].as_f64().unwrap_or(f64::NAN),
        };
        worst = worst.max(z_apart(e, p));
        if k < 5 {
            side.push(format!("{:.2}/{:.2}", e.mean, p.mean));
        }
    }
    let (e_rate, m_rate) = (ed as f64 / es, peer_rate(&m));
    rows.push(row(
        "peers: public goods",
        format!("Mesa {mesa_v} model, 4 conditional cooperators, 10 rounds, {count} runs, 1 thread"),
        format!("{} decisions/s; engine = {:.1}× Mesa", thousands(m_rate), e_rate / m_rate),
        format!(
            "engine {} decisions/s; mean contribution rounds 1–5, engine/Mesa: {} (rounds 6–10 both 0): {} (worst round)",
            thousands(e_rate),
            side.join(", "),
            agreement(worst)
        ),
    ));

    // The prisoner's dilemma between Roth–Erev learners: Axelrod beside the engine.
    let (_, ed, es) = engine_runs(&pd, count)?;
    let mut rates = Vec::with_capacity(count);
    engine_records(&pd, count, &mut |r| {
        let n = r.decisions.len() as f64;
        let c = r.decisions.iter().filter(|d| d.value == 0.0).count() as f64;
        rates.push(c / n.max(1.0));
    })?;
    let e = Summary::of(&rates);
    let a = peer(&python, "pd", count, None)?;
    let asum = Summary::from_json(&a["stats"]["cooperation_per_run"]);
    let floor = peer(&python, "pd-floor", count, None)?;
    let (e_rate, a_rate, f_rate) = (ed as f64 / es, peer_rate(&a), peer_rate(&floor));
    rows.push(row(
        "peers: prisoner's dilemma",
        format!("Axelrod {axl_v} matches, 2 Roth–Erev (an axelrod.Player), 10 turns, {count} runs, 1 thread"),
        format!("{} decisions/s; engine = {:.1}× Axelrod", thousands(a_rate), e_rate / a_rate),
        format!(
            "engine {} decisions/s; cooperation rate: engine {:.3} ± {:.3}, Axelrod {:.3} ± {:.3} (mean ± SE): {}",
            thousands(e_rate),
            e.mean,
            e.se(),
            asum.mean,
            asum.se(),
            agreement(z_apart(e, asum))
        ),
    ));
    rows.push(row(
        "peers: prisoner's dilemma",
        format!("Axelrod {axl_v} floor: TitForTat vs Defector (built in), 10 turns, {count} runs"),
        format!("{} decisions/s; engine's Roth–Erev = {:.1}× this floor", thousands(f_rate), e_rate / f_rate),
        format!(
            "the cheapest Axelrod match, no learning; cooperation rate {:.3} (TitForTat opens with C)",
            floor["stats"]["cooperation_rate"].as_f64().unwrap_or(f64::NAN)
        ),
    ));

    // Large populations: Mesa's naming model beside the network kernel (`agora network`).
    let sizes: &[usize] = if quick { &[1_000] } else { &[10_000, 100_000] };
    for &n in sizes {
        let max = 20 * n as u64;
        let net = Network::build(Topology::Complete, n, 7)?;
        let run = NetRun {
            stop: StopRule::Window { window: 50, threshold: 0.95 },
            ..NetRun::fresh(NetGame::SimultaneousNaming, max, 11)
        };
        let base = reset_peak();
        let start = Instant::now();
        let o = simulate(&net, &run)?;
        let secs = start.elapsed().as_secs_f64();
        let heap = (net.heap_bytes() + PEAK.load(Ordering::Relaxed) - base) as f64 / n as f64;
        let a_rate = o.interactions as f64 / secs;
        let m = peer(&python, "naming-large", 1, Some(n))?;
        let m_rate = peer_rate(&m);
        rows.push(row(
            "peers: naming game, large",
            format!("Mesa {mesa_v} model, complete mixing, {} agents, ≤ 20 interactions/agent", thousands(n as f64)),
            format!("{} interactions/s; `agora network` = {:.0}× Mesa", thousands(m_rate), a_rate / m_rate),
            format!(
                "`agora network` kernel {} interactions/s, heap {heap:.1} B/agent; Mesa model {:.0} B/agent once built (tracemalloc)",
                thousands(a_rate),
                m["bytes_per_agent_built"].as_f64().unwrap_or(f64::NAN)
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_benchmark_run_has_a_seed_of_its_own() {
        let plan = Plan::load(&repo_file("scenarios/studies/classical.ron").expect("repo"), None).expect("plan");
        let naming: Vec<RunSpec> = plan.runs.iter().filter(|r| r.block == "naming-mng").take(10).cloned().collect();
        let runs: Vec<RunSpec> = (0..300).map(|i| distinct(&naming[i % naming.len()], i)).collect();
        let seeds: std::collections::BTreeSet<u64> = runs.iter().map(|r| r.seed).collect();
        assert_eq!(seeds.len(), 300, "300 runs, 300 seeds (the 10 specifications were repeated before)");
        let keys: std::collections::BTreeSet<String> = runs.iter().map(RunSpec::key).collect();
        assert_eq!(keys.len(), 300);
        assert_eq!(distinct(&naming[0], 7), distinct(&naming[0], 7), "deterministic");
    }
}
