//! The instrument paper's figures for its classical baselines beside Agora's
//! (`agora replicate`): each figure computed from the run-level outcomes of the replication
//! study's runs, with a percentile bootstrap interval over runs.
//!
//! The paper's figures are the reference column, constants below, each with the sentence of
//! the paper it comes from. The 95 % intervals are percentile bootstrap intervals over runs:
//! the runs of a condition are resampled with replacement [`RESAMPLES`] times (xoshiro256++,
//! seeded, so the table is reproducible) and the statistic recomputed on each resample.

use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::outcomes::RunOutcome;
use crate::stats::percentile_type7;

/// Bootstrap resamples per interval.
pub const RESAMPLES: usize = 10_000;
/// Seed of the bootstrap (the row's position is added to it).
const SEED: u64 = 20_260_815;

/// How a figure is computed from a condition's runs.
#[derive(Clone, Copy, Debug)]
enum Statistic {
    /// Mean over runs of a run-level metric.
    Mean(&'static str),
    /// Median over runs of a run-level metric.
    Median(&'static str),
    /// Median of `convention_time` over the runs whose `convention` is 1.
    MedianConverged,
}

/// One row of the table.
struct Figure {
    /// What is measured.
    quantity: &'static str,
    /// Block of the replication study.
    block: &'static str,
    /// Roster of the block.
    roster: &'static str,
    /// How the runs are summarised, in words.
    statistic: &'static str,
    /// How the runs are summarised.
    how: Statistic,
    /// The paper's figure, as the paper prints it; `None` where it reports none.
    paper: Option<&'static str>,
    /// Decimals shown.
    decimals: usize,
}

/// The paper's figures for its classical baselines, with the sentences they come from
/// ("Benchmarking large language model agent societies against human behavioural distributions").
const FIGURES: &[Figure] = &[
    // "A conditional-cooperator model (Fischbacher et al., 2001) run in the same environment
    // declines from 0.48 to 0.07 of endowment"
    Figure {
        quantity: "public goods: contribution in round 1 (share of endowment)",
        block: "pgg",
        roster: "cooperation-types",
        statistic: "mean over runs",
        how: Statistic::Mean("contribution_r1"),
        paper: Some("0.48"),
        decimals: 3,
    },
    Figure {
        quantity: "public goods: contribution in round 10 (share of endowment)",
        block: "pgg",
        roster: "cooperation-types",
        statistic: "mean over runs",
        how: Statistic::Mean("contribution_last"),
        paper: Some("0.07"),
        decimals: 3,
    },
    Figure {
        quantity: "public goods: contribution in round 1 (share of endowment)",
        block: "pgg",
        roster: "conditional-cooperator",
        statistic: "mean over runs",
        how: Statistic::Mean("contribution_r1"),
        paper: Some("0.48"),
        decimals: 3,
    },
    Figure {
        quantity: "public goods: contribution in round 10 (share of endowment)",
        block: "pgg",
        roster: "conditional-cooperator",
        statistic: "mean over runs",
        how: Statistic::Mean("contribution_last"),
        paper: Some("0.07"),
        decimals: 3,
    },
    // "a Roth–Erev learner (Roth and Erev, 1995) declines by only 0.03 and does not clear the
    // margin" (the margin is the directional rule's: the median run-level change)
    Figure {
        quantity: "public goods: change in contribution, round 1 to 10",
        block: "pgg",
        roster: "roth-erev",
        statistic: "median of run-level changes",
        how: Statistic::Median("contribution_change"),
        paper: Some("-0.03"),
        decimals: 3,
    },
    // "in the repeated dilemma that same learner cooperates in 0.42 of rounds"
    Figure {
        quantity: "prisoner's dilemma: cooperation (share of rounds)",
        block: "pd",
        roster: "roth-erev",
        statistic: "mean over runs",
        how: Statistic::Mean("cooperation"),
        paper: Some("0.42"),
        decimals: 3,
    },
    // The paper states no share of converging runs for the classical naming game; its anchor
    // is that a convention always forms.
    Figure {
        quantity: "naming game, cap 3,000: runs forming a convention",
        block: "naming",
        roster: "minimal-naming",
        statistic: "share of runs",
        how: Statistic::Mean("convention"),
        paper: None,
        decimals: 3,
    },
    // "the classical minimal naming game (Baronchelli et al., 2006), which reaches consensus in
    // a median of 2,076 interactions"
    Figure {
        quantity: "naming game, cap 3,000: interactions to a convention",
        block: "naming",
        roster: "minimal-naming",
        statistic: "median over the runs that form one",
        how: Statistic::MedianConverged,
        paper: Some("2,076"),
        decimals: 0,
    },
    Figure {
        quantity: "naming game, cap 20,000 (context): runs forming a convention",
        block: "naming-uncapped",
        roster: "minimal-naming",
        statistic: "share of runs",
        how: Statistic::Mean("convention"),
        paper: None,
        decimals: 3,
    },
    Figure {
        quantity: "naming game, cap 20,000 (context): interactions to a convention",
        block: "naming-uncapped",
        roster: "minimal-naming",
        statistic: "median over the runs that form one",
        how: Statistic::MedianConverged,
        paper: None,
        decimals: 0,
    },
];

/// "The complete matrix comprises 9,115 model runs and 150 runs of the classical baselines"
const PAPER_CLASSICAL_RUNS: &str = "150";

/// One computed row.
#[derive(Debug)]
struct Row {
    value: Option<f64>,
    interval: Option<(f64, f64)>,
    used: usize,
    runs: usize,
}

/// The figure's per-run values: the metric of each run (NaN where a run has none).
fn values(runs: &[&RunOutcome], how: Statistic) -> Vec<f64> {
    let get = |o: &RunOutcome, m: &str| o.metrics.get(m).copied().unwrap_or(f64::NAN);
    match how {
        Statistic::Mean(m) | Statistic::Median(m) => runs.iter().map(|o| get(o, m)).collect(),
        Statistic::MedianConverged => runs
            .iter()
            .map(|o| if get(o, "convention") == 1.0 { get(o, "convention_time") } else { f64::NAN })
            .collect(),
    }
}

/// The statistic over per-run values (NaN values left out); `None` when none is finite.
fn statistic(values: &[f64], how: Statistic) -> Option<f64> {
    let v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    match how {
        Statistic::Mean(_) => Some(v.iter().sum::<f64>() / v.len() as f64),
        Statistic::Median(_) | Statistic::MedianConverged => crate::summary::Stat::median_of(&v),
    }
}

/// Percentile bootstrap 95 % interval of the statistic, resampling runs.
fn bootstrap(values: &[f64], how: Statistic, seed: u64) -> Option<(f64, f64)> {
    if values.is_empty() {
        return None;
    }
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let n = values.len();
    let mut resample = vec![0.0; n];
    let mut stats = Vec::with_capacity(RESAMPLES);
    for _ in 0..RESAMPLES {
        for x in resample.iter_mut() {
            *x = values[rng.random_range(0..n)];
        }
        if let Some(s) = statistic(&resample, how) {
            stats.push(s);
        }
    }
    let lo = percentile_type7(&stats, 2.5).ok()?;
    let hi = percentile_type7(&stats, 97.5).ok()?;
    Some((lo, hi))
}

fn compute(outcomes: &[RunOutcome], f: &Figure, seed: u64) -> Result<Row, String> {
    let runs: Vec<&RunOutcome> = outcomes.iter().filter(|o| o.block == f.block && o.roster == f.roster).collect();
    if runs.is_empty() {
        return Err(format!("the replication study has no runs of block `{}`, roster `{}`", f.block, f.roster));
    }
    let v = values(&runs, f.how);
    Ok(Row {
        value: statistic(&v, f.how),
        interval: bootstrap(&v, f.how, seed),
        used: v.iter().filter(|x| x.is_finite()).count(),
        runs: runs.len(),
    })
}

fn fmt(x: Option<f64>, decimals: usize) -> String {
    match x {
        // "-0.000" would read as a decline.
        Some(v) if (v * 10f64.powi(decimals as i32)).round() == 0.0 => format!("{:.*}", decimals, 0.0),
        // A median of an even count of whole interactions may end in .5: shown, not rounded.
        Some(v) if decimals == 0 && ((v * 10.0).round() / 10.0).fract() != 0.0 => format!("{v:.1}"),
        Some(v) => format!("{v:.decimals$}"),
        None => "—".into(),
    }
}

/// The Markdown table (and the lines under it) for the runs of the replication plan: its run
/// outcomes, the runs per condition, the plan's run count and the `--runs` given, if any.
pub fn table(
    outcomes: &[RunOutcome],
    per_condition: u32,
    total: usize,
    runs_arg: Option<u32>,
) -> Result<String, String> {
    let mut out = String::new();
    out.push_str("| figure | agents | statistic | paper | Agora | 95 % CI | runs |\n");
    out.push_str("|---|---|---|---|---|---|---|\n");
    for (i, f) in FIGURES.iter().enumerate() {
        let row = compute(outcomes, f, SEED + i as u64)?;
        let ci = match row.interval {
            Some((lo, hi)) => format!("[{}, {}]", fmt(Some(lo), f.decimals), fmt(Some(hi), f.decimals)),
            None => "—".into(),
        };
        let runs = if row.used == row.runs { row.runs.to_string() } else { format!("{} of {}", row.used, row.runs) };
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} |\n",
            f.quantity,
            f.roster,
            f.statistic,
            f.paper.unwrap_or("—"),
            fmt(row.value, f.decimals),
            ci,
            runs
        ));
    }
    out.push_str(&format!(
        "| classical-baseline runs in all | all | count | {PAPER_CLASSICAL_RUNS} | {total} | — | {total} |\n"
    ));
    out.push_str(&format!(
        "\n{per_condition} seeded runs per condition (study `replication`, scenarios/studies/replication.ron); \
         95 % CI: percentile bootstrap over runs, {RESAMPLES} resamples, seeded.\n"
    ));
    out.push_str(&format!(
        "Command: `agora replicate{}`\n",
        runs_arg.map_or(String::new(), |n| format!(" --runs {n}"))
    ));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statistics_and_a_degenerate_bootstrap() {
        let v = [1.0, f64::NAN, 3.0, 2.0];
        assert_eq!(statistic(&v, Statistic::Mean("x")), Some(2.0));
        assert_eq!(statistic(&v, Statistic::MedianConverged), Some(2.0));
        assert_eq!(statistic(&[f64::NAN], Statistic::Median("x")), None);
        assert_eq!(bootstrap(&[0.5; 7], Statistic::Mean("x"), 1), Some((0.5, 0.5)));
        let (lo, hi) =
            bootstrap(&[0.0, 1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 0.0], Statistic::Mean("x"), 1).expect("an interval");
        assert!(lo < 0.5 && 0.5 < hi, "[{lo}, {hi}]");
        assert_eq!(fmt(Some(-0.0001), 3), "0.000");
        assert_eq!(fmt(Some(2121.5), 0), "2121.5");
        assert_eq!(fmt(Some(2076.0), 0), "2076");
        assert_eq!(fmt(Some(1840.000_000_1), 0), "1840");
    }
}
