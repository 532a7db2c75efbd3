//! The tables of `agora analyze`, for Markdown and CSV.
//!
//! Most tables are generated from their row type (`generated`): one column per serialised
//! field in declaration order, under the field's name unless renamed, each cell written by
//! `Cell::text` unless the table gives a custom cell. Four tables keep an explicit column
//! spec, as their rows are not one struct's fields: tipping (one row per point of a curve),
//! wasserstein (tuples), punishment-effect (fields reordered, the family left out, each interval
//! split into a mean and a bracket column) and verdicts (fields reordered, the tier number left
//! out).

use serde::Serialize;

use crate::analyze::Analysis;
use crate::columns::{fields, Cell};
use crate::common::fmt;
use crate::punishment::MeanInterval;

/// A table for Markdown and CSV output.
pub struct Table {
    /// Short name of the table; the CSV file is named after it.
    pub name: &'static str,
    /// Title written above the table.
    pub title: &'static str,
    /// Column headers, in order.
    pub columns: Vec<&'static str>,
    /// Rows, each cell already written as text.
    pub rows: Vec<Vec<String>>,
}

/// A custom cell: the field's text, from the whole row.
type Custom<R> = (&'static str, fn(&R) -> String);

/// A table generated from the row type `R` (see the module's documentation). `rename` maps
/// field names to column names; `custom` gives the text of the fields that are not scalars
/// (and of scalars written otherwise than [`Cell::text`] writes them).
fn generated<R: Serialize + Default>(
    name: &'static str,
    title: &'static str,
    rows: &[R],
    rename: &[(&'static str, &'static str)],
    custom: &[Custom<R>],
) -> Table {
    let names: Vec<&'static str> = fields(&R::default()).into_iter().map(|(n, _)| n).collect();
    debug_assert!(
        rename.iter().map(|r| r.0).chain(custom.iter().map(|c| c.0)).all(|f| names.contains(&f)),
        "table {name}: a renamed or custom field is not a field of the row type"
    );
    let columns = names.iter().map(|n| rename.iter().find(|r| r.0 == *n).map_or(*n, |r| r.1)).collect();
    let rows = rows
        .iter()
        .map(|row| {
            fields(row)
                .into_iter()
                .map(|(field, cell): (&str, Cell)| match custom.iter().find(|c| c.0 == field) {
                    Some((_, text)) => text(row),
                    None => cell.text().unwrap_or_else(|| panic!("table {name}: field {field} needs a custom cell")),
                })
                .collect()
        })
        .collect();
    Table { name, title, columns, rows }
}

impl Analysis {
    /// Every table, for Markdown and CSV.
    pub fn tables(&self) -> Vec<Table> {
        let outcome = ("metric", "outcome");
        vec![
            generated(
                "equivalence",
                "Equivalence with human anchors (TOST, 90 % CI, canonical baseline)",
                &self.equivalence,
                &[outcome],
                &[],
            ),
            generated(
                "directional",
                "Directional agreement (median run-level effect must clear 0.10 in the human direction)",
                &self.directional,
                &[outcome, ("human_sign", "human sign")],
                &[],
            ),
            generated(
                "contrasts",
                "Audit grid: every contrast (exact Mann–Whitney, Cliff's δ, Holm within family)",
                &self.contrasts,
                &[("family_of_tests", "family"), outcome],
                &[("excluded", |r| r.excluded.clone().unwrap_or_default())],
            ),
            generated(
                "perturbation",
                "Perturbation library per level: Δmax and sign stability S",
                &self.perturbation,
                &[outcome, ("sign_stability", "S")],
                &[],
            ),
            generated(
                "divergent",
                "Divergent payoffs (C3): share v of decisions consistent with the altered payoffs",
                &self.divergent,
                &[],
                &[],
            ),
            generated(
                "acceptance",
                "Fixed-offer arm: acceptance functions, thresholds and payoff consistency",
                &self.acceptance,
                &[("acceptance", "acceptance by offer")],
                &[
                    ("acceptance", |r| {
                        r.acceptance.iter().map(|(o, a)| format!("{o:.0}:{a:.2}")).collect::<Vec<_>>().join(" ")
                    }),
                    ("threshold", |r| r.threshold.map_or("none".into(), |t| format!("{t:.0}"))),
                ],
            ),
            generated(
                "heterogeneity",
                "Between-model heterogeneity of baseline means",
                &self.heterogeneity,
                &[outcome, ("i2", "I2")],
                &[("means", |r| r.means.iter().map(|(m, v)| format!("{m}={v:.3}")).collect::<Vec<_>>().join(" "))],
            ),
            generated(
                "baselines",
                "Classical-baseline comparison (exact Mann–Whitney, Cliff's δ)",
                &self.baselines,
                &[outcome],
                &[],
            ),
            self.tipping_table(),
            self.wasserstein_table(),
            generated(
                "convergence",
                "Naming game: convention formation (Wilson 95 % CI) and time to convention",
                &self.convergence,
                &[("time_q1", "t_q1"), ("time_median", "t_median"), ("time_q3", "t_q3")],
                &[],
            ),
            self.punishment_effect_table(),
            generated(
                "punishment",
                "Punishment: spending against contribution change across models (Spearman)",
                &self.punishment,
                &[("points", "points (model: punishment points, contribution change)")],
                &[("points", |r| {
                    r.points.iter().map(|(m, p, c)| format!("{m}: {p:.2}, {c:.3}")).collect::<Vec<_>>().join("; ")
                })],
            ),
            self.verdicts_table(),
        ]
    }

    /// Explicit spec: one row per point of each tipping curve.
    fn tipping_table(&self) -> Table {
        Table {
            name: "tipping",
            title: "Tipping sweeps: share of runs overturned per committed fraction",
            columns: vec!["roster", "fraction", "committed", "runs", "overturned", "median t"],
            rows: self
                .tipping
                .iter()
                .flat_map(|c| {
                    c.points.iter().map(move |p| {
                        vec![
                            c.roster.clone(),
                            format!("{:.3}", p.0),
                            format!("{}/{}", p.1, p.2),
                            p.3.to_string(),
                            format!("{:.2}", p.4),
                            p.5.map_or("-".into(), |t| format!("{t:.0}")),
                        ]
                    })
                })
                .collect(),
        }
    }

    /// Explicit spec: the rows are (model, distance, low, high) tuples.
    fn wasserstein_table(&self) -> Table {
        Table {
            name: "wasserstein",
            title: "11–20 game: normalised Wasserstein distance to the published distribution (bootstrap 95 % CI)",
            columns: vec!["model", "distance", "ci_low", "ci_high"],
            rows: self
                .wasserstein
                .iter()
                .map(|(m, d, lo, hi)| vec![m.clone(), fmt(Some(*d)), fmt(Some(*lo)), fmt(Some(*hi))])
                .collect(),
        }
    }

    /// Explicit spec: each arm's interval as a mean and a bracket column, the family left out.
    fn punishment_effect_table(&self) -> Table {
        let ci = |m: &MeanInterval| match (m.low, m.high) {
            (Some(l), Some(h)) => format!("[{l:.3}, {h:.3}]"),
            _ => "-".into(),
        };
        Table {
            name: "punishment-effect",
            title: "Punishment effect on final-round contributions (share of endowment, 95 % t interval)",
            columns: vec![
                "model",
                "runs without",
                "without",
                "without 95% CI",
                "runs with",
                "with",
                "with 95% CI",
                "cliffs_delta",
                "p_holm",
                "significant",
                "excluded",
            ],
            rows: self
                .punishment_effect
                .iter()
                .map(|r| {
                    vec![
                        r.model.clone(),
                        r.runs_without.to_string(),
                        fmt(Some(r.without.mean)),
                        ci(&r.without),
                        r.runs_with.to_string(),
                        fmt(Some(r.with.mean)),
                        ci(&r.with),
                        fmt(r.cliffs_delta),
                        fmt(r.p_holm),
                        if r.significant { "yes".into() } else { "no".into() },
                        r.excluded.clone().unwrap_or_default(),
                    ]
                })
                .collect(),
        }
    }

    /// Explicit spec: the tier by name, the first unmet condition before the evidence.
    fn verdicts_table(&self) -> Table {
        Table {
            name: "verdicts",
            title: "Certification ladder: verdict per claim",
            columns: vec!["claim", "text", "tier", "first unmet condition", "evidence"],
            rows: self
                .verdicts
                .iter()
                .map(|v| {
                    vec![
                        v.claim.clone(),
                        v.text.clone(),
                        v.tier_name.clone(),
                        v.first_unmet.clone().unwrap_or_else(|| "-".into()),
                        v.evidence.join("; "),
                    ]
                })
                .collect(),
        }
    }

    /// All tables as Markdown.
    pub fn to_markdown(&self) -> String {
        let mut s = format!(
            "# Agora analysis{}\n\n{} runs analysed.\n",
            self.study.as_ref().map(|s| format!(": {s}")).unwrap_or_default(),
            self.runs
        );
        for t in self.tables() {
            s.push_str(&format!("\n## {}\n\n", t.title));
            if t.rows.is_empty() {
                s.push_str("No data in this store.\n");
                continue;
            }
            s.push_str(&format!("| {} |\n|{}\n", t.columns.join(" | "), "---|".repeat(t.columns.len())));
            for r in &t.rows {
                s.push_str(&format!(
                    "| {} |\n",
                    r.iter().map(|c| c.replace('|', "\\|")).collect::<Vec<_>>().join(" | ")
                ));
            }
        }
        s
    }
}

/// CSV text of a table (RFC 4180 quoting).
pub fn to_csv(t: &Table) -> String {
    let q =
        |c: &str| if c.contains([',', '"', '\n']) { format!("\"{}\"", c.replace('"', "\"\"")) } else { c.to_string() };
    let mut s = t.columns.iter().map(|c| q(c)).collect::<Vec<_>>().join(",");
    s.push('\n');
    for r in &t.rows {
        s.push_str(&r.iter().map(|c| q(c)).collect::<Vec<_>>().join(","));
        s.push('\n');
    }
    s
}
