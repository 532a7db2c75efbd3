//! Per-environment summaries printed after a run.

use std::path::Path;

use agora_analysis::{summarize, GroupSummary};

/// How a column aggregates runs.
#[derive(Clone, Copy)]
enum Agg {
    Mean,
    Median,
}

/// The columns a game chose for an arm's table (`Game::summary`): (metric, header, aggregate).
fn columns(env: &str, arm: &str) -> Vec<(&'static str, &'static str, Agg)> {
    let Some(kind) = agora_environments::EnvKind::ALL.iter().find(|k| k.as_str() == env) else {
        return Vec::new();
    };
    agora_environments::EnvSpec::canonical(*kind)
        .game()
        .summary(arm)
        .iter()
        .map(|c| (c.metric, c.header, if c.median { Agg::Median } else { Agg::Mean }))
        .collect()
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

/// Orders labels as a reader expects, numbers by value: `rounds=5` before `rounds=10`, and
/// `0.25` before `0.5`.
fn natural_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    /// The label in pieces: runs of a number (digits, with one decimal point) and of the rest.
    fn pieces(s: &str) -> Vec<(Option<f64>, &str)> {
        let mut out = Vec::new();
        let mut start = 0;
        let bytes = s.as_bytes();
        while start < bytes.len() {
            let digit = |b: u8| b.is_ascii_digit() || b == b'.';
            let numeric = bytes[start].is_ascii_digit();
            let mut end = start + 1;
            while end < bytes.len() && (if numeric { digit(bytes[end]) } else { !bytes[end].is_ascii_digit() }) {
                end += 1;
            }
            let piece = &s[start..end];
            out.push((if numeric { piece.parse().ok() } else { None }, piece));
            start = end;
        }
        out
    }
    let (x, y) = (pieces(a), pieces(b));
    for (p, q) in x.iter().zip(&y) {
        let o = match (p.0, q.0) {
            (Some(u), Some(v)) => u.total_cmp(&v).then_with(|| p.1.cmp(q.1)),
            _ => p.1.cmp(q.1),
        };
        if o.is_ne() {
            return o;
        }
    }
    x.len().cmp(&y.len())
}

/// The summary tables: one per block (one game and arm), in study order, its rows sorted by
/// roster, variant and cell (the baseline first) and sweep point, sized to fit a 100-column
/// terminal. Linear in the conditions (up to the sort): a sweep of 10,000 points prints 10,000
/// rows in one pass.
pub fn render(groups: &[GroupSummary], order: &[String]) -> String {
    use std::fmt::Write as _;
    let rank: std::collections::HashMap<&str, usize> =
        order.iter().enumerate().rev().map(|(i, b)| (b.as_str(), i)).collect();
    let rank = |block: &str| rank.get(block).copied().unwrap_or(usize::MAX);
    let mut tables: std::collections::BTreeMap<(usize, &str, &str, &str), Vec<&GroupSummary>> =
        std::collections::BTreeMap::new();
    for g in groups.iter().filter(|g| g.condition.sweep().is_none()) {
        let c = &g.condition;
        let key = (rank(&c.block), c.block.as_str(), c.environment.as_str(), c.arm.as_str());
        tables.entry(key).or_default().push(g);
    }
    let mut out = String::new();
    for ((_, block, env, arm), mut rows) in tables {
        rows.sort_by(|a, b| {
            let (x, y) = (&a.condition, &b.condition);
            (&x.roster, &x.variant, x.cell != "baseline", &x.cell)
                .cmp(&(&y.roster, &y.variant, y.cell != "baseline", &y.cell))
                .then_with(|| match (&x.point, &y.point) {
                    (Some(p), Some(q)) => natural_cmp(p, q),
                    (p, q) => p.is_some().cmp(&q.is_some()),
                })
        });
        let mut cols: Vec<(String, String, Agg)> =
            columns(env, arm).into_iter().map(|(m, h, a)| (m.to_string(), h.to_string(), a)).collect();
        if cols.is_empty() {
            // A game without a chosen set of columns shows every metric it reports: a game
            // added to the registry prints its outcomes without an edit here.
            let mut names: Vec<String> = rows.iter().flat_map(|g| g.metrics.keys().cloned()).collect();
            names.sort();
            names.dedup();
            cols = names.into_iter().map(|m| (m.clone(), m, Agg::Mean)).collect();
        }
        let roster_w = rows.iter().map(|g| g.condition.roster.len()).max().unwrap_or(6).clamp(6, 28);
        let cell_w = rows.iter().map(|g| g.condition.cell.len()).max().unwrap_or(4).clamp(4, 24);
        // A sweep's points get a column of their own, in tables that have any.
        let point_w = rows.iter().filter_map(|g| g.condition.point.as_ref().map(String::len)).max().map(|w| w.max(5));
        let col_w: Vec<usize> = cols.iter().map(|(_, h, _)| h.len().max(7)).collect();
        let _ = writeln!(out, "\n== {env} / {arm} ({block}) ==");
        let _ = write!(out, "{:<roster_w$} {:<3} {:<cell_w$}", "roster", "var", "cell");
        if let Some(w) = point_w {
            let _ = write!(out, " {:<w$}", "point");
        }
        let _ = write!(out, " {:>5}", "runs");
        for ((_, h, _), w) in cols.iter().zip(&col_w) {
            let _ = write!(out, " {h:>w$}");
        }
        out.push('\n');
        for g in rows {
            let c = &g.condition;
            let roster: String = c.roster.chars().take(roster_w).collect();
            let _ = write!(out, "{roster:<roster_w$} {:<3} {:<cell_w$}", c.variant, c.cell);
            if let Some(w) = point_w {
                let _ = write!(out, " {:<w$}", c.point.as_deref().unwrap_or("-"));
            }
            let _ = write!(out, " {:>5}", g.runs);
            for ((m, _, agg), w) in cols.iter().zip(&col_w) {
                let _ = write!(out, " {:>w$}", fmt_stat(g, m, *agg));
            }
            out.push('\n');
        }
    }
    out
}

/// Refuses a `--study` that names no study of the store (a typo would otherwise print nothing,
/// or grade an empty table), listing the studies it holds.
pub fn check_study(store: &Path, study: Option<&str>) -> anyhow::Result<()> {
    let Some(name) = study else { return Ok(()) };
    let conn = rusqlite::Connection::open_with_flags(store, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)?;
    let studies: Vec<String> = agora_records::reads::runs::study_names(&conn)?;
    if studies.iter().any(|s| s == name) {
        return Ok(());
    }
    Err(crate::BadInput(format!(
        "--study `{name}`: store {} holds no such study (its studies: {})",
        store.display(),
        if studies.is_empty() { "none".to_string() } else { studies.join(", ") }
    ))
    .into())
}

/// The studies whose runs a store holds, in the order their first run was stored.
fn stored_studies(store: &Path) -> anyhow::Result<Vec<String>> {
    let conn = rusqlite::Connection::open_with_flags(store, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)?;
    Ok(agora_records::reads::runs::studies_in_run_order(&conn)?)
}

/// Refuses to pool the versions of one study (`NAME`, `NAME@2`, made under different
/// configurations by `agora run --new-version`) in one analysis: without `--study`, a store
/// holding several versions of a study is refused, naming them.
pub fn check_versions(store: &Path, study: Option<&str>) -> anyhow::Result<()> {
    if study.is_some() {
        return Ok(());
    }
    let mut by_name: std::collections::BTreeMap<String, Vec<String>> = std::collections::BTreeMap::new();
    for s in stored_studies(store)? {
        let base = s.split_once('@').map_or(s.as_str(), |(b, _)| b).to_string();
        by_name.entry(base).or_default().push(s);
    }
    match by_name.values().find(|v| v.len() > 1) {
        None => Ok(()),
        Some(versions) => Err(crate::BadInput(format!(
            "store {} holds versions {} of one study, made under different configurations; their runs are never \
             pooled: analyse one at a time with --study NAME",
            store.display(),
            versions.iter().map(|v| format!("`{v}`")).collect::<Vec<_>>().join(", ")
        ))
        .into()),
    }
}

/// Prints the summaries of one study, or of every study in the store, each under its name
/// when there are several: two studies (or two versions of one) never share a table.
pub fn print(store: &Path, study: Option<&str>) -> anyhow::Result<()> {
    check_study(store, study)?;
    if study.is_none() {
        let studies = stored_studies(store)?;
        if studies.len() > 1 {
            for s in &studies {
                println!("\n# study {s}");
                print_study(store, Some(s))?;
            }
            return Ok(());
        }
    }
    print_study(store, study)
}

/// Prints the summaries of one study (or of the whole store).
fn print_study(store: &Path, study: Option<&str>) -> anyhow::Result<()> {
    let (groups, curves) = summarize(store, study)?;
    let order: Vec<String> = agora_analysis::summary::block_order(store)?
        .into_iter()
        .filter(|(s, _)| study.is_none_or(|x| x == s))
        .map(|(_, b)| b)
        .collect();
    print!("{}", render(&groups, &order));
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
    for t in agora_analysis::tournament::tables(store, study)? {
        print!("\n{}", agora_analysis::tournament::render(&t));
    }
    Ok(())
}
