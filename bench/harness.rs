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
//! - sweeps: a block's Grid of 10,000 and 40,000 points through `agora run` (plan, play, store,
//!   summary) and `agora analyze`, the second's time beside the first's;
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
    /// A block's Grid sweep of 10,000 and 40,000 points through `agora run` and `agora analyze`.
    Sweeps,
}

pub struct Options {
    /// Small sizes everywhere (a smoke test of the harness, not figures to quote).
    pub quick: bool,
    pub sections: Vec<Section>,
    pub out: PathBuf,
    /// An earlier build's `agora`, timed beside this one on the recorded naming study.
    pub baseline: Option<PathBuf>,
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
        vec![Section::Classical, Section::Networks, Section::Llm, Section::Analysis, Section::Sweeps, Section::Peers]
    } else {
        opts.sections.clone()
    };
    if let Some(baseline) = &opts.baseline {
        // Checked before anything is timed; the comparison belongs to the classical section.
        anyhow::ensure!(
            baseline.is_file(),
            "--baseline {}: no such file (bench/baseline.sh builds it)",
            baseline.display()
        );
        anyhow::ensure!(
            sections.contains(&Section::Classical),
            "--baseline times the recorded naming study of the classical section: add classical to --only"
        );
    }
    let machine = machine();
    let date = today();
    println!("agora-bench on {machine}, {date}{}", if opts.quick { " (quick sizes)" } else { "" });
    let mut rows = Vec::new();
    for s in sections {
        match s {
            Section::Classical => {
                classical(opts.quick, &mut rows)?;
                if let Some(baseline) = &opts.baseline {
                    baseline::against_build(baseline, opts.quick, &mut rows)?;
                }
            }
            Section::Networks => networks(opts.quick, &mut rows)?,
            Section::Llm => llm::llm(opts.quick, &mut rows)?,
            Section::Analysis => analysis(opts.quick, &mut rows)?,
            Section::Sweeps => sweeps::sweeps(opts.quick, &mut rows)?,
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

/// Today's UTC date from the system clock.
fn today() -> String {
    agora_records::store::deposit::now_utc()[..10].to_string()
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
/// Plays `runs` and writes each as the store wrote runs before schema 5 (the layout the
/// recorded-path target was set against): a row per decision, payoff and interaction in
/// schema 4's tables, through prepared statements, one transaction a run, in a fresh file with
/// the store's settings (write-ahead log, synchronous NORMAL, SQLite's default pages). The
/// record hash is computed as the store computes it now (it was slower then). Seconds taken.
fn row_per_record(runs: &[RunSpec], path: &Path) -> anyhow::Result<f64> {
    let mut conn = rusqlite::Connection::open(path)?;
    agora_records::reads::bench::row_per_record_layout(&conn)?;
    let start = Instant::now();
    for spec in runs {
        let rec = RunWorld::new(spec)?.run_to_end()?;
        let hash = agora_engine::record_hash::of_run(&rec).map_err(anyhow::Error::msg)?;
        agora_records::reads::bench::write_row_per_record(&mut conn, &rec, &hash)?;
    }
    // Closed within the timing, as the store is.
    drop(conn);
    Ok(start.elapsed().as_secs_f64())
}

/// CPU seconds (user + system) used so far by `who`: `libc::RUSAGE_SELF` (this process, all
/// its threads) or `libc::RUSAGE_CHILDREN` (its waited-for children).
#[expect(unsafe_code, reason = "getrusage has no safe wrapper in libc")]
fn cpu_seconds(who: libc::c_int) -> f64 {
    // SAFETY: getrusage writes into the struct we pass and reads nothing else.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: as above; the callers pass RUSAGE_SELF or RUSAGE_CHILDREN, valid selectors.
    if unsafe { libc::getrusage(who, &mut u) } != 0 {
        return f64::NAN;
    }
    let t = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 / 1e6;
    t(u.ru_utime) + t(u.ru_stime)
}

/// CPU seconds this process has used so far, all its threads together.
fn own_cpu() -> f64 {
    cpu_seconds(libc::RUSAGE_SELF)
}

/// The median of `v` (the upper one of an even count), NaN-safe order.
fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Passes of the engine and the plain loop, timed in turn, behind the ECS cost ratio.
const PAIRED: usize = 7;

/// Timed repetitions of a loop; the median is reported.
const REPEATS: usize = 3;

/// The median of `n` timings (each the same work, so the median drops a repetition that a
/// busy machine slowed).
fn median_of(n: usize, mut time: impl FnMut() -> anyhow::Result<f64>) -> anyhow::Result<f64> {
    Ok(median((0..n).map(|_| time()).collect::<anyhow::Result<Vec<f64>>>()?))
}

/// The `i`-th benchmark run of `spec`: a seed of its own.
fn distinct(spec: &RunSpec, i: usize) -> RunSpec {
    let mut run = spec.clone();
    run.seed = agora_engine::seed::derive(spec.seed, &["bench", &i.to_string()]);
    run.run_index = i as u32;
    run
}

/// The shipped classical study and its three benchmark blocks' baseline C0 runs: the 24-agent
/// minimal naming game, Roth–Erev in the prisoner's dilemma and conditional cooperators in
/// public goods (what the classical section and the peers time).
pub(crate) struct Blocks {
    pub(crate) plan: Plan,
    pub(crate) naming: Vec<RunSpec>,
    pub(crate) pd: Vec<RunSpec>,
    pub(crate) pgg: Vec<RunSpec>,
}

pub(crate) fn blocks() -> anyhow::Result<Blocks> {
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
    let (naming, pd, pgg) =
        (pick("naming-mng", "minimal-naming"), pick("pd", "roth-erev"), pick("pgg", "conditional-cooperator"));
    anyhow::ensure!(!naming.is_empty() && !pd.is_empty() && !pgg.is_empty(), "classical.ron lacks a benchmark block");
    Ok(Blocks { plan, naming, pd, pgg })
}

fn classical(quick: bool, rows: &mut Vec<Row>) -> anyhow::Result<()> {
    let Blocks { plan, naming, pd, pgg } = blocks()?;
    let scale = if quick { 10 } else { 1 };

    // The 24-agent naming game: engine, plain loop, Python.
    let n_runs = 300 / scale;
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
    // The engine and the plain loop timed in turn, pass after pass, so that both see the
    // machine in the same state (on a shared virtual machine their speeds drift together by
    // several per cent from one second to the next); each figure is the median of its passes,
    // and the cost ratio the median of the passes' own ratios. Seeds distinct, warmed up.
    let naming_runs: Vec<RunSpec> = (0..n_runs).map(|i| distinct(&naming[i % naming.len()], i)).collect();
    for i in n_runs..n_runs + WARM_UP.min(n_runs) {
        RunWorld::new(&distinct(&naming[i % naming.len()], i))?.run_to_end()?;
    }
    plain(n_runs as u64..(n_runs + WARM_UP.min(n_runs)) as u64)?;
    let (mut ei, mut pi) = (0u64, 0u64);
    let mut passes: Vec<(f64, f64)> = Vec::new();
    for _ in 0..PAIRED {
        let start = Instant::now();
        let mut i = 0u64;
        for spec in &naming_runs {
            i += RunWorld::new(spec)?.run_to_end()?.interactions.len() as u64;
        }
        let engine_s = start.elapsed().as_secs_f64();
        let start = Instant::now();
        pi = plain(0..n_runs as u64)?;
        passes.push((engine_s, start.elapsed().as_secs_f64()));
        ei = i;
    }
    let es = median(passes.iter().map(|p| p.0).collect());
    let ps = median(passes.iter().map(|p| p.1).collect());
    let cost = median(passes.iter().map(|(e, p)| (pi as f64 / p) / (ei as f64 / e)).collect());
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
            "{:.0} interactions per run; ECS cost: {:.2}× the plain loop per interaction (the median of {PAIRED} passes' ratios, engine and plain loop timed in turn)",
            pi as f64 / n_runs as f64,
            cost
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
    // The same runs without a store, then with it: what the store adds per run. Each timing
    // is the median of three, the stores fresh files each time.
    let bare = median_of(REPEATS, || {
        let start = Instant::now();
        for spec in &all_naming {
            RunWorld::new(spec)?.run_to_end()?;
        }
        Ok(start.elapsed().as_secs_f64())
    })?;
    let mut records = 0i64;
    let mut bytes = 0u64;
    let mut rep = agora_engine::RunnerReport::default();
    let mut busy1 = Vec::new();
    let ss = median_of(REPEATS, || {
        let dir = tempfile_dir("store")?;
        let mut store = Store::open(&dir.join("bench.sqlite"))?;
        let (start, cpu) = (Instant::now(), own_cpu());
        let opts = agora_engine::RunnerOptions { threads: 1, ..Default::default() };
        rep = agora_engine::execute(&all_naming, &mut store, &opts, &mut |_| {})?;
        // Closed within the timing: the last checkpoint writes the log into the file.
        drop(store);
        let seconds = start.elapsed().as_secs_f64();
        busy1.push((own_cpu() - cpu) / seconds);
        let store = Store::open(&dir.join("bench.sqlite"))?;
        records = agora_records::reads::bench::records_stored(store.connection())?;
        drop(store);
        bytes = std::fs::metadata(dir.join("bench.sqlite"))?.len()
            + std::fs::metadata(dir.join("bench.sqlite-wal")).map_or(0, |m| m.len());
        let _ = std::fs::remove_dir_all(&dir);
        Ok(seconds)
    })?;
    // All cores: worker threads play the runs, the calling thread commits them.
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut rep_t = agora_engine::RunnerReport::default();
    // The cores kept busy: CPU seconds of every thread (workers, writer, checkpointer) over
    // the wall time, of each repetition.
    let mut busy = Vec::new();
    let st = median_of(REPEATS, || {
        let dir = tempfile_dir("store-threads")?;
        let mut store = Store::open(&dir.join("bench.sqlite"))?;
        let (start, cpu) = (Instant::now(), own_cpu());
        let opts = agora_engine::RunnerOptions { threads, ..Default::default() };
        rep_t = agora_engine::execute(&all_naming, &mut store, &opts, &mut |_| {})?;
        drop(store);
        let seconds = start.elapsed().as_secs_f64();
        busy.push((own_cpu() - cpu) / seconds);
        let _ = std::fs::remove_dir_all(&dir);
        Ok(seconds)
    })?;
    // The layout the target was set against, in the same run: a row per record.
    let dir3 = tempfile_dir("store-rows")?;
    let rows_s = row_per_record(&all_naming, &dir3.join("rows.sqlite"))?;
    let _ = std::fs::remove_dir_all(&dir3);
    let n = rep.executed as f64;
    rows.push(row(
        "naming game, 24 agents",
        format!("engine + SQLite store, {} runs, 1 worker thread", rep.executed),
        format!("{:.0} runs/s; {} records/s", n / ss, thousands(records as f64 / ss)),
        format!(
            "every decision, payoff and interaction recorded ({:.0} records and {:.0} kB of store a run, medians of 3 fresh stores, each closed within its timing so that its last checkpoint counts); the same runs unrecorded: {:.0} runs/s, so the store adds {:.2} ms a run ({:.0} % of the time); one worker thread plays and encodes each run while the calling thread hashes and writes the one before, and a thread of the store checkpoints its log: {:.2} cores busy",
            records as f64 / n,
            bytes as f64 / n / 1e3,
            n / bare,
            (ss - bare) / n * 1e3,
            (ss - bare) / ss * 100.0,
            median(busy1)
        ),
    ));
    rows.push(row(
        "naming game, 24 agents",
        format!("engine + SQLite store, {} runs, {threads} threads", rep_t.executed),
        format!("{:.0} runs/s", rep_t.executed as f64 / st),
        format!(
            "worker threads play, hash and encode the runs; the calling thread writes each in its own transaction; a thread of the store checkpoints its log; {:.2} of {threads} cores busy (median)",
            median(busy)
        ),
    ));
    rows.push(row(
        "naming game, 24 agents",
        format!("the same {} runs written a row per record (schema 4's tables, re-created here), 1 thread", all_naming.len()),
        format!("{:.0} runs/s; {} records/s", all_naming.len() as f64 / rows_s, thousands(records as f64 / rows_s)),
        format!(
            "the layout before schema 5 (one SQLite row per decision, payoff and interaction, prepared statements, a transaction a run; the record hash as now; one thread plays, hashes and writes): the store as it is = {:.1}× this with 1 worker thread, {:.1}× with {threads}",
            n / ss * rows_s / all_naming.len() as f64,
            rep_t.executed as f64 / st * rows_s / all_naming.len() as f64
        ),
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
    let runs = agora_records::reads::bench::run_count(&rusqlite::Connection::open(&store)?)?;
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

mod baseline;
mod llm;
mod peers;
mod sweeps;

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
