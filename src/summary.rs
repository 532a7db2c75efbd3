//! Per-environment summaries printed after a run.

use std::path::Path;

use agora_analysis::{summarize, GroupSummary};

/// How a column aggregates runs.
#[derive(Clone, Copy)]
enum Agg {
    Mean,
    Median,
}

/// Columns shown for an environment arm: (metric, header, aggregate).
fn columns(env: &str, arm: &str) -> Vec<(&'static str, &'static str, Agg)> {
    use Agg::*;
    match (env, arm) {
        ("prisoners-dilemma", _) => vec![
            ("cooperation", "cooperation", Mean),
            ("cooperation_r1", "round 1", Mean),
            ("cooperation_last", "last round", Mean),
            ("cooperation_change", "median change", Median),
        ],
        ("public-goods", "punishment") => vec![
            ("contribution_r1", "contrib r1", Mean),
            ("contribution_last", "contrib r10", Mean),
            ("contribution_change", "median change", Median),
            ("punishment_points", "punish pts", Mean),
        ],
        ("public-goods", _) => vec![
            ("contribution_r1", "contrib r1", Mean),
            ("contribution_last", "contrib r10", Mean),
            ("contribution_change", "median change", Median),
        ],
        ("bargaining", "ultimatum") => vec![("offer", "offer/pie", Mean), ("rejection", "rejection", Mean)],
        ("bargaining", "dictator") => vec![("giving", "giving", Mean)],
        ("bargaining", "trust") => vec![("sent", "sent", Mean), ("returned", "returned", Mean)],
        ("bargaining", "ultimatum-fixed-offer") => vec![
            ("accept_10", "acc 10", Mean),
            ("accept_20", "acc 20", Mean),
            ("accept_30", "acc 30", Mean),
            ("accept_37", "acc 37", Mean),
            ("accept_40", "acc 40", Mean),
            ("accept_50", "acc 50", Mean),
        ],
        ("money-request", _) => {
            vec![("mode_share", "at mode 17", Mean), ("choice_20", "at 20", Mean), ("choice_19", "at 19", Mean)]
        }
        ("naming-game", a) if a.starts_with("tipping") => {
            vec![("overturned", "overturned", Mean), ("overturn_time", "median t", Median)]
        }
        ("naming-game", _) => vec![
            ("convention", "convention", Mean),
            ("convention_time", "median t", Median),
            ("match_share", "matches", Mean),
        ],
        _ => Vec::new(),
    }
}

fn fmt_stat(g: &GroupSummary, metric: &str, agg: Agg) -> String {
    match g.metrics.get(metric) {
        Some(s) => {
            let v = match agg {
                Agg::Mean => s.mean,
                Agg::Median => s.median,
            };
            if v.abs() >= 100.0 {
                format!("{v:.0}")
            } else {
                format!("{v:.3}")
            }
        }
        None => "-".into(),
    }
}

/// Prints the summaries of one study (or of every study in the store).
pub fn print(store: &Path, study: Option<&str>) -> anyhow::Result<()> {
    let (groups, curves) = summarize(store, study)?;
    let mut current = String::new();
    for g in groups.iter().filter(|g| g.condition.sweep().is_none()) {
        let c = &g.condition;
        let mut cols: Vec<(String, String, Agg)> =
            columns(&c.environment, &c.arm).into_iter().map(|(m, h, a)| (m.to_string(), h.to_string(), a)).collect();
        if cols.is_empty() {
            // A game without a chosen set of columns shows every metric it reports: a game
            // added to the registry prints its outcomes without an edit here.
            cols = g.metrics.keys().map(|m| (m.clone(), m.clone(), Agg::Mean)).collect();
        }
        let heading = format!("{} / {} ({})", c.environment, c.arm, c.block);
        if heading != current {
            println!("\n== {heading} ==");
            print!("{:<24} {:<4} {:<14} {:>5}", "roster", "var", "cell", "runs");
            for (_, h, _) in &cols {
                print!(" {h:>13}");
            }
            println!();
            current = heading;
        }
        print!("{:<24} {:<4} {:<14} {:>5}", c.roster, c.variant, c.cell, g.runs);
        for (m, _, agg) in &cols {
            print!(" {:>13}", fmt_stat(g, m, *agg));
        }
        println!();
    }
    for curve in &curves {
        println!("\n== tipping: {} ({}) ==", curve.roster, curve.block);
        println!("{:>9} {:>10} {:>5} {:>11} {:>9}", "fraction", "committed", "runs", "overturned", "median t");
        for (f, k, n, runs, share, t) in &curve.points {
            println!(
                "{:>9.3} {:>10} {:>5} {:>11.2} {:>9}",
                f,
                format!("{k}/{n}"),
                runs,
                share,
                t.map_or("-".to_string(), |t| format!("{t:.0}"))
            );
        }
        match (curve.critical, curve.largest_failure) {
            (Some(c), Some(l)) => println!(
                "critical mass: the convention held (majority of runs) at {l:.3} and was overturned from {c:.3}{}",
                if curve.monotone { "" } else { " (not monotone in the fraction)" }
            ),
            (Some(c), None) => {
                println!("critical mass: at or below {c:.3}, the smallest fraction tested, which already overturned it")
            }
            (None, _) => println!("critical mass: not reached; the convention held at every fraction tested"),
        }
    }
    Ok(())
}
