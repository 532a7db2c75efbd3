//! The tables of `agora analyze`, for Markdown and CSV.
//!
//! Most tables are generated from their row type (`generated`): one column per serialised
//! field in declaration order, under the field's name unless renamed, each cell written by
//! `Cell::text` unless the table gives a custom cell. Three tables keep an explicit column
//! spec, as their rows are not one struct's fields: tipping (one row per fraction of a curve),
//! punishment-effect (fields reordered, the family left out, each interval split into a mean
//! and a bracket column) and verdicts (fields reordered, the tier number left out, the
//! classical grade in a column of its own).

use std::collections::BTreeSet;

use serde::Serialize;

use crate::analyze::Analysis;
use crate::columns::{fields, Cell};
use crate::common::fmt;
use crate::punishment::MeanInterval;
use crate::table::Table;

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
                &[("anchor", |r| if r.anchor.is_nan() { "not on record".into() } else { fmt(Some(r.anchor)) })],
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
                "Audit grid: every contrast (exact Mann–Whitney, Cliff's δ, Holm within each family of one model × one environment)",
                &self.contrasts,
                &[("family_of_tests", "family"), outcome],
                &[("excluded", |r| r.excluded.clone().unwrap_or_default())],
            ),
            generated(
                "contrast_counts",
                "Perturbation family: blocks (model × environment) with a significant perturbation, and significant computable contrasts per level",
                &self.contrast_counts,
                &[],
                &[],
            ),
            generated(
                "presentation",
                "Presentation checks (the behavioural profile's methods; opt-in, own Holm family, never in S, Δmax or Tier 2)",
                &self.presentation,
                &[("family_of_tests", "family"), outcome],
                &[("excluded", |r| r.excluded.clone().unwrap_or_default())],
            ),
            generated(
                "perturbation",
                "Perturbation library per canonical effect and level: Δmax and sign stability S over the baseline and the level's cells of three runs or more",
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
                    ("threshold", |r| match r.threshold {
                        Some(t) => format!("{t:.0}"),
                        None if r.runs < crate::common::MIN_RUNS => "-".into(),
                        None => "none".into(),
                    }),
                ],
            ),
            generated(
                "heterogeneity",
                "Between-model heterogeneity of baseline means (I² beside the between-model SD)",
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
            generated(
                "critical-mass",
                "Critical mass of a committed minority per model and per family, against the human bracket",
                &self.critical_mass,
                &[],
                &[],
            ),
            generated(
                "wasserstein",
                "11–20 game: normalised Wasserstein distance to the published distribution (bootstrap 95 % CI)",
                &self.wasserstein,
                &[],
                &[],
            ),
            generated(
                "convergence",
                "Naming game: convention formation (Wilson 95 % CI) and time to convention",
                &self.convergence,
                &[("time_q1", "t_q1"), ("time_median", "t_median"), ("time_q3", "t_q3")],
                &[],
            ),
            generated(
                "label-prior",
                "Naming game: the label prior, baseline against shuffled pool (modal name as pool index)",
                &self.label_prior,
                &[],
                &[],
            ),
            generated(
                "recognition",
                "Recognition probe beside behaviour (probe runs are not behavioural runs)",
                &self.recognition,
                &[("points", "points (model: recognised, baseline mean)")],
                &[("points", |r| {
                    r.points.iter().map(|(m, x, y)| format!("{m}: {x:.3}, {y:.3}")).collect::<Vec<_>>().join("; ")
                })],
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

    /// Explicit spec: one row per fraction of each tipping curve, the runs with no convention
    /// to overturn counted beside those with one.
    fn tipping_table(&self) -> Table {
        let mut rows = Vec::new();
        for c in &self.tipping {
            let none_at = |asked: f64| c.no_convention.iter().find(|n| n.0 == asked).map_or(0, |n| n.2);
            let head = |asked: f64, x: f64| {
                vec![
                    c.block.clone(),
                    c.roster.clone(),
                    c.family.clone(),
                    c.arm.clone(),
                    format!("{asked:.3}"),
                    format!("{x:.3}"),
                ]
            };
            for (p, asked) in c.points.iter().zip(&c.asked) {
                let mut row = head(*asked, p.0);
                row.extend([
                    format!("{}/{}", p.1, p.2),
                    p.3.to_string(),
                    none_at(*asked).to_string(),
                    format!("{:.2}", p.4),
                    p.5.map_or("-".into(), |t| format!("{t:.0}")),
                    c.status.clone(),
                ]);
                rows.push(row);
            }
            for (asked, x, n) in c.no_convention.iter().filter(|n| !c.asked.contains(&n.0)) {
                let mut row = head(*asked, *x);
                row.extend(["-".into(), "0".into(), n.to_string(), "-".into(), "-".into(), c.status.clone()]);
                rows.push(row);
            }
        }
        Table {
            name: "tipping",
            title: "Tipping sweeps: share of runs overturned per realised committed fraction (runs without a convention left out)",
            columns: vec![
                "block",
                "roster",
                "family",
                "arm",
                "asked",
                "fraction",
                "committed",
                "runs",
                "no convention",
                "overturned",
                "median t",
                "status",
            ],
            rows,
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
        let mut t = self.ladder_table();
        // Where the store holds a deposit, each verdict says which deviations from it it rests on.
        if !self.deposit.deposits.is_empty() {
            t.columns.push("deviations from the deposit");
            for (row, v) in t.rows.iter_mut().zip(&self.verdicts) {
                let kinds: BTreeSet<&str> =
                    self.deposit.deviations_of(&v.claim).iter().map(|d| d.kind.as_str()).collect();
                row.push(if kinds.is_empty() { "-".into() } else { kinds.into_iter().collect::<Vec<_>>().join(", ") });
            }
        }
        t
    }

    /// The verdicts alone.
    fn ladder_table(&self) -> Table {
        Table {
            name: "verdicts",
            title: "Certification ladder: verdict per claim",
            columns: vec!["claim", "text", "tier", "first unmet condition", "evidence", "classical (graded apart)"],
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
                        v.classical.as_ref().map_or("-".into(), |c| match &c.first_unmet {
                            Some(u) => format!("{}: {u}", c.tier_name),
                            None => c.tier_name.clone(),
                        }),
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
            } else {
                s.push_str(&format!("| {} |\n|{}\n", t.columns.join(" | "), "---|".repeat(t.columns.len())));
            }
            for r in &t.rows {
                s.push_str(&format!(
                    "| {} |\n",
                    r.iter().map(|c| c.replace('|', "\\|")).collect::<Vec<_>>().join(" | ")
                ));
            }
            // The deposit first under the verdicts.
            if t.name == "verdicts" {
                s.push_str(&self.deposit.to_markdown());
            }
        }
        s
    }
}
