//! The recorded naming study through an earlier build's `agora` and this build's (`--baseline`,
//! part of the classical section): the speed-up of the recorded path as a user of each build
//! sees it, measured in one run.

use super::*;

/// The recorded naming study as a user runs it: the 24-agent minimal naming game, C0–C3,
/// 30 seeded runs each (120 runs, 3 each with `--quick`), run to consensus and written to the
/// store.
fn recorded_study(runs: usize) -> String {
    format!(
        r#"Study(
    version: 1,
    name: "recorded-naming",
    description: "The 24-agent minimal naming game, C0-C3, written to the store",
    master_seed: 20260815,
    runs: {runs},
    blocks: [
        Block(
            name: "naming-mng",
            environment: NamingGame(cap: 20000),
            variants: [C0, C1, C2, C3],
            rosters: [Roster(name: "minimal-naming", members: [Member(policy: MinimalNaming)])],
        ),
    ],
)
"#
    )
}

/// Times each build takes in turn to repeat [`CLI_REPEATS`] times: the two builds alternate,
/// so that a slower spell of the machine falls on both alike.
const CLI_REPEATS: usize = 7;

/// Wall seconds of `bin run STUDY --threads N` into a fresh store, checked to have stored
/// `runs` runs: the whole command, its start, plan and closing summary included.
fn cli_recorded(bin: &Path, study: &Path, threads: usize, runs: usize, store: &Path) -> anyhow::Result<f64> {
    // What earlier commands (and sections) left for the disk to write is written first, so
    // that a command is timed with its own writes only (its closing sync included).
    let _ = Command::new("sync").status();
    let start = Instant::now();
    let out = Command::new(bin)
        .arg("run")
        .arg(study)
        .arg("--store")
        .arg(store)
        .args(["--threads", &threads.to_string()])
        .output()
        .with_context(|| format!("running {}", bin.display()))?;
    let seconds = start.elapsed().as_secs_f64();
    anyhow::ensure!(out.status.success(), "{} run failed: {}", bin.display(), String::from_utf8_lossy(&out.stderr));
    let stored = agora_records::reads::bench::run_count(&rusqlite::Connection::open(store)?)?;
    anyhow::ensure!(stored as usize == runs, "{} stored {stored} runs of {runs}", bin.display());
    Ok(seconds)
}

/// The recorded naming study through an earlier build's `agora` and through this build's, in
/// turn, on one thread and on all cores: the speed-up of the recorded path as a user sees it,
/// measured in one run.
pub(super) fn against_build(baseline: &Path, quick: bool, rows: &mut Vec<Row>) -> anyhow::Result<()> {
    let per_variant = if quick { 3 } else { 30 };
    let dir = tempfile_dir("against-build")?;
    // The stores kept for the timings (about 1.4 GB at full size) go whether or not a
    // command fails.
    let result = time_both(baseline, &dir, per_variant, rows);
    let _ = std::fs::remove_dir_all(&dir);
    result
}

/// The timings of [`against_build`], each command's store in `dir`.
fn time_both(baseline: &Path, dir: &Path, per_variant: usize, rows: &mut Vec<Row>) -> anyhow::Result<()> {
    let runs = 4 * per_variant;
    let study = dir.join("recorded-naming.ron");
    std::fs::write(&study, recorded_study(per_variant))?;
    let ours = agora_exe()?;
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut thread_counts = vec![1, threads];
    thread_counts.dedup();
    for t in thread_counts {
        let (mut before, mut now) = (Vec::new(), Vec::new());
        // Each command's store is kept until every command has been timed: deleting a store
        // of 50 MB while the next command runs makes the disk discard its blocks meanwhile
        // (this machine's file system discards on delete), which slowed either build by up
        // to half at random.
        for i in 0..CLI_REPEATS {
            before.push(cli_recorded(baseline, &study, t, runs, &dir.join(format!("before-{t}-{i}.sqlite")))?);
            now.push(cli_recorded(&ours, &study, t, runs, &dir.join(format!("now-{t}-{i}.sqlite")))?);
        }
        let (before, now) = (median(before), median(now));
        rows.push(row(
            "naming game, 24 agents",
            format!(
                "recorded study through `agora run` ({runs} runs, C0–C3, --threads {t}): {} vs this build",
                baseline.display()
            ),
            format!("{:.0} vs {:.0} runs/s: {:.1}×", runs as f64 / before, runs as f64 / now, before / now),
            format!(
                "wall time of the whole command (start, plan, store, closing summary), median of {CLI_REPEATS} fresh stores each, the two builds taking turns: {before:.3} s vs {now:.3} s"
            ),
        ));
    }
    Ok(())
}
