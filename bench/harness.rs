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

use std::alloc::{GlobalAlloc, Layout};
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
/// benchmark measures memory per agent instead of estimating it. It forwards to mimalloc, the
/// `agora` binary's allocator, so that the engine benchmarked in this process allocates as it
/// does in `agora`.
pub struct CountingAlloc;

static BASE: mimalloc::MiMalloc = mimalloc::MiMalloc;

static IN_USE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);
/// Counting is on only while a memory figure is being taken ([`reset_peak`] turns it on,
/// [`stop_counting`] off): two atomic updates per allocation would otherwise slow every engine
/// benchmark of this process, which `agora` itself never pays.
static COUNTING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

fn grew(bytes: usize) {
    if COUNTING.load(Ordering::Relaxed) {
        let now = IN_USE.fetch_add(bytes, Ordering::Relaxed).wrapping_add(bytes);
        PEAK.fetch_max(now, Ordering::Relaxed);
    }
}

fn shrank(bytes: usize) {
    if COUNTING.load(Ordering::Relaxed) {
        IN_USE.fetch_sub(bytes, Ordering::Relaxed);
    }
}

/// Ends a memory measurement.
fn stop_counting() {
    COUNTING.store(false, Ordering::Relaxed);
}

#[expect(unsafe_code, reason = "a global allocator is an unsafe trait; this one forwards to mimalloc")]
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded unchanged to mimalloc.
        let p = unsafe { BASE.alloc(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded unchanged to mimalloc.
        unsafe { BASE.dealloc(ptr, layout) };
        shrank(layout.size());
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded unchanged to mimalloc.
        let p = unsafe { BASE.alloc_zeroed(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: forwarded unchanged to mimalloc.
        let p = unsafe { BASE.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            if new_size >= layout.size() {
                grew(new_size - layout.size());
            } else {
                shrank(layout.size() - new_size);
            }
        }
        p
    }
}

/// Starts a peak measurement (and counting); returns the count now. Counts are relative: the
/// bytes allocated since, less those freed since (frees of older blocks included, so a figure
/// never overstates what a measured step holds).
fn reset_peak() -> usize {
    let now = IN_USE.load(Ordering::Relaxed);
    PEAK.store(now, Ordering::Relaxed);
    COUNTING.store(true, Ordering::Relaxed);
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
            Section::Peers => peers::peers(opts.quick, &mut rows)?,
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
    // Untimed warm-up runs with seeds of their own (count.., never timed), so that the first
    // timed runs do not pay for the process's first touch of its memory.
    for i in count..count + WARM_UP.min(count) {
        RunWorld::new(&distinct(&specs[i % specs.len()], i))?.run_to_end()?;
    }
    let (mut interactions, mut decisions) = (0u64, 0u64);
    let seconds = median_of(REPEATS, || {
        let start = Instant::now();
        let (mut i, mut d) = (0u64, 0u64);
        for spec in &runs {
            let rec = RunWorld::new(spec)?.run_to_end()?;
            i += rec.interactions.len() as u64;
            d += rec.decisions.len() as u64;
        }
        (interactions, decisions) = (i, d);
        Ok(start.elapsed().as_secs_f64())
    })?;
    Ok((interactions, decisions, seconds))
}

/// Warm-up runs before a timed loop of the engine or the plain loop.
const WARM_UP: usize = 30;
/// Timed repetitions of a loop; the median is reported.
const REPEATS: usize = 3;

/// The median of `n` timings (each the same work, so the median drops a repetition that a
/// busy machine slowed).
fn median_of(n: usize, mut time: impl FnMut() -> anyhow::Result<f64>) -> anyhow::Result<f64> {
    let mut t = (0..n).map(|_| time()).collect::<anyhow::Result<Vec<f64>>>()?;
    t.sort_by(f64::total_cmp);
    Ok(t[t.len() / 2])
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
    let plain = |seeds: std::ops::Range<u64>| -> anyhow::Result<u64> {
        let mut interactions = 0u64;
        for seed in seeds {
            let o = simulate(
                &net,
                &NetRun {
                    stop: StopRule::Window { window: 50, threshold: 0.95 },
                    ..NetRun::fresh(NetGame::SimultaneousNaming, 20_000, seed)
                },
            )?;
            interactions += o.interactions;
        }
        Ok(interactions)
    };
    // Warmed up and repeated as the engine's loop is.
    plain(n_runs as u64..(n_runs + WARM_UP.min(n_runs)) as u64)?;
    let mut pi = 0u64;
    let ps = median_of(REPEATS, || {
        let start = Instant::now();
        pi = plain(0..n_runs as u64)?;
        Ok(start.elapsed().as_secs_f64())
    })?;
    let (yi, ys) = python("naming", n_runs)?;
    let (e_rate, p_rate, y_rate) = (ei as f64 / es, pi as f64 / ps, yi / ys);
    rows.push(row(
        "naming game, 24 agents",
        format!("engine (bevy_ecs world per run, its ready stages in one system pass), {n_runs} runs, 1 thread"),
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
    // The same runs without a store, then with it: what the store adds per run.
    let start = Instant::now();
    for spec in &all_naming {
        RunWorld::new(spec)?.run_to_end()?;
    }
    let bare = start.elapsed().as_secs_f64();
    let dir = tempfile_dir("store")?;
    let mut store = Store::open(&dir.join("bench.sqlite"))?;
    let start = Instant::now();
    let opts = agora_engine::RunnerOptions { threads: 1, ..Default::default() };
    let rep = agora_engine::execute(&all_naming, &mut store, &opts, &mut |_| {})?;
    let ss = start.elapsed().as_secs_f64();
    let records: i64 = store.connection().query_row(
        "SELECT SUM(json_array_length(decisions) + json_array_length(payoffs) + json_array_length(interactions))
         FROM run_rows",
        [],
        |r| r.get(0),
    )?;
    drop(store);
    let bytes = std::fs::metadata(dir.join("bench.sqlite"))?.len()
        + std::fs::metadata(dir.join("bench.sqlite-wal")).map_or(0, |m| m.len());
    // All cores: worker threads play the runs, the calling thread commits them.
    let dir2 = tempfile_dir("store-threads")?;
    let mut store = Store::open(&dir2.join("bench.sqlite"))?;
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let start = Instant::now();
    let opts = agora_engine::RunnerOptions { threads, ..Default::default() };
    let rep_t = agora_engine::execute(&all_naming, &mut store, &opts, &mut |_| {})?;
    let st = start.elapsed().as_secs_f64();
    drop(store);
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&dir2);
    let n = rep.executed as f64;
    rows.push(row(
        "naming game, 24 agents",
        format!("engine + SQLite store, {} runs, 1 thread", rep.executed),
        format!("{:.0} runs/s; {} records/s", n / ss, thousands(records as f64 / ss)),
        format!(
            "every decision, payoff and interaction recorded ({:.0} records and {:.0} kB of store a run); the same runs unrecorded: {:.0} runs/s, so the store adds {:.2} ms a run ({:.0} % of the time)",
            records as f64 / n,
            bytes as f64 / n / 1e3,
            n / bare,
            (ss - bare) / n * 1e3,
            (ss - bare) / ss * 100.0
        ),
    ));
    rows.push(row(
        "naming game, 24 agents",
        format!("engine + SQLite store, {} runs, {threads} threads", rep_t.executed),
        format!("{:.0} runs/s", rep_t.executed as f64 / st),
        "worker threads play, hash and encode the runs; the calling thread writes each in its own transaction",
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
    stop_counting();
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
    conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE)")?;
    let bytes = |names: &[&str]| -> anyhow::Result<f64> {
        let list = names.iter().map(|n| format!("'{n}'")).collect::<Vec<_>>().join(", ");
        Ok(conn.query_row(&format!("SELECT COALESCE(SUM(pgsize), 0) FROM dbstat WHERE name IN ({list})"), [], |r| {
            r.get::<_, i64>(0)
        })? as f64)
    };
    let calls = conn.query_row("SELECT COUNT(*) FROM transcript_calls", [], |r| r.get::<_, i64>(0))? as f64;
    let full = conn.query_row("SELECT SUM(length(messages_json)) FROM transcripts", [], |r| r.get::<_, i64>(0))? as f64;
    let transcripts = bytes(&["transcript_calls", "prompt_parts", "sqlite_autoindex_prompt_parts_1"])?;
    let cache = bytes(&["llm_cache", "sqlite_autoindex_llm_cache_1"])?;
    let file = std::fs::metadata(&store)?.len() as f64;
    let runs = conn.query_row("SELECT COUNT(*) FROM runs", [], |r| r.get::<_, i64>(0))?;
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

mod peers;

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
