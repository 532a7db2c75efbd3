//! The report page: one self-contained HTML string, rendered with minijinja from the templates
//! in `report/templates/` (built into the binary). Rust computes every section's rows; the
//! templates hold the markup and format the numbers with the filters below (`fixed`,
//! `interval`, `shortest`), which write what the page always wrote. Model replies are untrusted text: every
//! value a template prints is HTML-escaped on its way out (the templates are `.html`, so
//! minijinja auto-escapes them); the only markup passed through unescaped is the figures' SVG,
//! which the report's own drawing code writes (plotters escapes the text it draws).

use std::fmt;

use agora_analysis::analyze::{Analysis, ContrastRow};
use agora_profile::score::rows::{Coverage, ProfileLine};
use minijinja::{AutoEscape, Environment, Error, Output, State, Value};
use serde::Serialize;

use super::audit::AuditTables;
use super::figures::tree::Node;
use super::figures::Figure;
use super::profile::{measure_name, signed, Joined, StoredProfile};
use super::queries::{Excerpt, Model, NamingRun, Probes, Study};

mod audit;
mod models;
mod sections;
#[cfg(test)]
mod tests;

use audit::*;
use models::*;
use sections::*;

/// The templates, by name: the page's frame, the page, its sections and their shared macros.
const TEMPLATES: [(&str, &str); 17] = [
    ("base.html", include_str!("../../templates/base.html")),
    ("macros.html", include_str!("../../templates/macros.html")),
    ("report.html", include_str!("../../templates/report.html")),
    ("verdicts.html", include_str!("../../templates/verdicts.html")),
    ("deposit.html", include_str!("../../templates/deposit.html")),
    ("humans.html", include_str!("../../templates/humans.html")),
    ("figures.html", include_str!("../../templates/figures.html")),
    ("tables.html", include_str!("../../templates/tables.html")),
    ("tournaments.html", include_str!("../../templates/tournaments.html")),
    ("models.html", include_str!("../../templates/models.html")),
    ("profile.html", include_str!("../../templates/profile.html")),
    ("self_description.html", include_str!("../../templates/self_description.html")),
    ("contamination.html", include_str!("../../templates/contamination.html")),
    ("audit.html", include_str!("../../templates/audit.html")),
    ("naming_runs.html", include_str!("../../templates/naming_runs.html")),
    ("excerpts.html", include_str!("../../templates/excerpts.html")),
    ("studies.html", include_str!("../../templates/studies.html")),
];

/// Text escaped for HTML element content and attribute values: `&`, `<`, `>`, `"` and `'`, as
/// the page has always written them (minijinja's own escaping also rewrites `/`, which would
/// change the text of codebooks and paths without need).
struct Escaped<'a>(&'a str);

impl fmt::Display for Escaped<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut rest = self.0;
        while let Some(i) = rest.find(['&', '<', '>', '"', '\'']) {
            f.write_str(&rest[..i])?;
            f.write_str(match rest.as_bytes()[i] {
                b'&' => "&amp;",
                b'<' => "&lt;",
                b'>' => "&gt;",
                b'"' => "&quot;",
                _ => "&#39;",
            })?;
            rest = &rest[i + 1..];
        }
        f.write_str(rest)
    }
}

/// How a template prints a value: text HTML-escaped where the template auto-escapes (every
/// `.html` template), values marked safe (the figures' SVG, macros' output) as they are, and
/// everything else as minijinja prints it.
fn formatter(out: &mut Output, state: &State, value: &Value) -> Result<(), Error> {
    match value.as_str() {
        Some(s) if state.auto_escape() == AutoEscape::Html && !value.is_safe() => {
            write!(out, "{}", Escaped(s)).map_err(Error::from)
        }
        _ => minijinja::escape_formatter(out, state, value),
    }
}

/// A number a filter formats: none for an absent statistic; an undefined value (a misspelt
/// field) is an error, as it is where a template prints it.
fn number(value: Value) -> Result<Option<f64>, Error> {
    if value.is_undefined() {
        return Err(Error::new(minijinja::ErrorKind::UndefinedError, "a number filter was given an undefined value"));
    }
    if value.is_none() {
        return Ok(None);
    }
    f64::try_from(value).map(Some)
}

/// A template filter: the number with `digits` decimals, or `missing` (`-` unless given) where
/// the value is none (an absent statistic).
fn fixed(value: Value, digits: usize, missing: Option<String>) -> Result<String, Error> {
    Ok(match number(value)? {
        Some(x) => format!("{x:.digits$}"),
        None => missing.unwrap_or_else(|| "-".into()),
    })
}

/// A template filter: the interval from this low end to `high`, both with three decimals, or
/// `-` where either end is none.
fn interval_filter(low: Value, high: Value) -> Result<String, Error> {
    Ok(interval(number(low)?, number(high)?))
}

/// A template filter: the number as Rust writes it, the shortest decimal that reads back as the
/// same number (`0.7`, `1`), where minijinja would write `1.0`.
fn shortest(value: Value) -> Result<String, Error> {
    Ok(f64::try_from(value)?.to_string())
}

/// The report's templates, ready to render.
fn environment() -> Result<Environment<'static>, Error> {
    let mut env = Environment::new();
    // Block tags take their own line in the templates; the line is not part of the page.
    env.set_trim_blocks(true);
    env.set_lstrip_blocks(true);
    // A misspelt field is an error, not an empty cell.
    env.set_undefined_behavior(minijinja::UndefinedBehavior::SemiStrict);
    env.set_formatter(formatter);
    env.add_filter("fixed", fixed);
    env.add_filter("shortest", shortest);
    env.add_filter("interval", interval_filter);
    for (name, text) in TEMPLATES {
        env.add_template(name, text)?;
    }
    Ok(env)
}

/// The file stem of the `i`-th figure (from 0) in `figures/`: its number and its caption in
/// lower-case words joined by hyphens.
pub fn figure_stem(i: usize, caption: &str) -> String {
    let slug: String = caption
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '-' })
        .collect::<String>()
        .split('-')
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join("-");
    format!("{:02}-{slug}", i + 1)
}

/// Everything on the page besides the analysis.
pub struct Page<'a> {
    pub studies: &'a [Study],
    pub figures: &'a [(&'a str, Figure)],
    pub models: &'a [Model],
    pub probes: &'a [Probes],
    pub naming_runs: &'a [NamingRun],
    pub excerpts: &'a [Excerpt],
    /// The audit's tables, each absent where the store lacks it.
    pub audit: &'a AuditTables,
    /// The reasoning tree drawn, if any.
    pub tree: Option<&'a Node>,
    /// The behavioural profiles in the store, one per model.
    pub profiles: &'a [StoredProfile],
    /// The profiled models joined to their society decisions.
    pub joined: &'a [Joined<'a>],
    /// Each claim's outcome in the store's human runs (`agora serve`), if any.
    pub humans: &'a [agora_analysis::human_anchors::HumanAnchor],
    /// The score tables of the store's round-robin tournaments, if any.
    pub tournaments: &'a [agora_analysis::tournament::Table],
}

/// The whole report page.
pub fn page(analysis: &Analysis, p: &Page) -> anyhow::Result<String> {
    let tables = analysis.tables();
    let report = Report {
        verdicts: verdicts(analysis),
        deposit: deposit(&analysis.deposit),
        humans: humans(analysis, p.humans),
        runs: analysis.runs,
        figures: figures(p.figures),
        tables: tables
            .iter()
            .filter(|t| t.name != "verdicts")
            .map(|t| AnalysisTable { title: t.title, id: t.name, columns: &t.columns, rows: &t.rows })
            .collect(),
        tournaments: p.tournaments,
        models: p.models,
        profile: behavioural_profile(p),
        contamination: contamination(&analysis.contrasts, p.probes),
        audit: audit(p),
        naming_runs: p.naming_runs,
        excerpts: p.excerpts,
        studies: p.studies,
    };
    render(&report)
}

/// Renders the page from its sections.
fn render(report: &Report) -> anyhow::Result<String> {
    let env = environment()?;
    let html = env.get_template("report.html")?.render(report)?;
    Ok(html)
}

/// The page's data, one field per section (`report.html` lays them out).
#[derive(Serialize)]
struct Report<'a> {
    verdicts: Vec<VerdictRow<'a>>,
    deposit: DepositView<'a>,
    humans: Vec<HumanRow<'a>>,
    runs: usize,
    figures: Vec<FigureView<'a>>,
    tables: Vec<AnalysisTable<'a>>,
    tournaments: &'a [agora_analysis::tournament::Table],
    models: &'a [Model],
    /// None where the store holds no behavioural profile.
    profile: Option<ProfileView<'a>>,
    contamination: ContaminationView<'a>,
    /// None where the store holds no audit table.
    audit: Option<AuditView<'a>>,
    naming_runs: &'a [NamingRun],
    excerpts: &'a [Excerpt],
    studies: &'a [Study],
}

/// One claim's verdict: the tier the models reach and the tier the classical rosters reach
fn num(x: Option<f64>) -> String {
    x.map_or_else(|| "-".into(), |v| format!("{v:.3}"))
}

fn interval(low: Option<f64>, high: Option<f64>) -> String {
    match (low, high) {
        (Some(l), Some(h)) => format!("[{l:.3}, {h:.3}]"),
        _ => "-".into(),
    }
}
