//! General sweeps at scale: a block whose `Grid` has 10,000 and then 40,000 points, one tiny
//! run a point, through `agora run` (plan, play, store and the closing summary, which lists
//! every point) and `agora analyze`. Four times the points should take about four times as
//! long: the summary and the analysis are linear in the points.

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use super::{agora_exe, row, tempfile_dir, thousands, Row};

/// A prisoner's-dilemma study whose one block sweeps rounds (1 and 2) against memory
/// (`points / 2` values): `points` conditions of one run each.
fn study(path: &Path, points: usize) -> anyhow::Result<()> {
    let text = format!(
        r#"Study(version: 1, name: "sweep-{points}", master_seed: 5, runs: 1,
    blocks: [Block(name: "pd", environment: PrisonersDilemma(rounds: 1, memory: 1),
        rosters: [Roster(name: "tft", members: [Member(policy: TitForTat)])],
        sweep: Grid([Param(path: "rounds", values: [1, 2]),
                     Param(path: "memory", range: Range(from: 1, to: {}, step: 1))]))])"#,
        points / 2
    );
    std::fs::write(path, text)?;
    Ok(())
}

/// Wall seconds of one `agora` command, which must succeed; returns its standard output too.
fn timed(args: &[&str]) -> anyhow::Result<(f64, String)> {
    let start = Instant::now();
    let out = Command::new(agora_exe()?).args(args).output()?;
    let secs = start.elapsed().as_secs_f64();
    anyhow::ensure!(out.status.success(), "agora {args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
    Ok((secs, String::from_utf8_lossy(&out.stdout).into_owned()))
}

pub(super) fn sweeps(quick: bool, rows: &mut Vec<Row>) -> anyhow::Result<()> {
    let sizes: [usize; 2] = if quick { [500, 2_000] } else { [10_000, 40_000] };
    let dir = tempfile_dir("sweeps")?;
    let mut first: Option<(usize, f64)> = None;
    for points in sizes {
        let file = dir.join(format!("sweep-{points}.ron"));
        study(&file, points)?;
        let store = dir.join(format!("sweep-{points}.sqlite"));
        let (f, s) = (file.to_string_lossy(), store.to_string_lossy());
        let (run, printed) = timed(&["run", &f, "--store", &s])?;
        let listed = printed.lines().filter(|l| l.contains(" rounds=")).count();
        anyhow::ensure!(listed == points, "the summary lists {listed} of {points} points");
        let out = dir.join(format!("analysis-{points}"));
        let (analyze, _) = timed(&["analyze", "--store", &s, "--out", &out.to_string_lossy()])?;
        let ratio = match first {
            Some((n, secs)) => {
                format!("; {:.1}× the points of the row above in {:.2}× its time", points as f64 / n as f64, run / secs)
            }
            None => String::new(),
        };
        // The table says "release build unless noted": a debug build's figures say so.
        let build = if cfg!(debug_assertions) { ", debug build" } else { "" };
        rows.push(row(
            &format!("sweep: {} points", thousands(points as f64)),
            format!(
                "`agora run` of one block's Grid (prisoner's dilemma, rounds 1–2 × memory 1–{}, tit for tat, 1 run a \
                 point{build})",
                thousands(points as f64 / 2.0)
            ),
            format!("{run:.2} s"),
            format!(
                "whole command: plan, play, store and the summary of every point ({listed} rows); `agora analyze` on \
                 its store {analyze:.2} s{ratio}"
            ),
        ));
        first.get_or_insert((points, run));
        let _ = std::fs::remove_file(&store);
        let _ = std::fs::remove_dir_all(&out);
    }
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}
