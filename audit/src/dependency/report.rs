//! The dependency estimate's outputs: Markdown, JSON and CSV tables.

use super::*;
use crate::table::{count, num, position_cells, positioned, Positioned};

impl Dependency {
    /// The report as Markdown.
    pub fn to_markdown(&self) -> String {
        let mut s = format!(
            "# Dependency of the action on the stated values{}\n\nStore `{}`; coder `{}`; codebook `{}` v{} (SHA-256 `{}`). The SUVA audit paper Eq. 240.12: a linear probability model of the action indicator on the value vector with a fixed effect per prompt (within-prompt demeaning), CR1 clustered by prompt, t on G − 1 df (`lpm-fe`); for binary indicators also a logit with prompt dummies over the prompts whose action varies, its average marginal effects (average derivatives, smaller than the discrete change of a 0/1 value) with CR1 errors and z inference (`logit-ame`, the robustness check for sign and significance; biased away from zero with few replicates per prompt). Observations are the replicates of `agora audit replicates` with an action and coded reasoning; the prompts' original decisions are not among them. 95 % intervals.\n\n",
            self.study.as_ref().map(|s| format!(": {s}")).unwrap_or_default(),
            self.store,
            self.key.coder,
            self.key.codebook,
            self.key.version,
            self.key.sha256
        );
        s.push_str(&format!(
            "{} replicates: {} with an action, {} of them coded, {} without pre-action reasoning (counted, not coded), {} coder errors.\n\n",
            self.replicates, self.with_action, self.coded, self.without_reasoning, self.coder_errors
        ));
        s.push_str("## Coder validation\n\n");
        if self.validation.is_empty() {
            s.push_str("No model.\n");
        }
        for v in &self.validation {
            s.push_str(&format!("- `{}`: {}\n", v.model, v.label()));
        }
        s.push_str("\n## Action indicators\n\n");
        for i in &self.indicators {
            s.push_str(&format!("- {} / {}: `{}`, {}\n", i.environment, i.role, i.name, i.definition));
        }
        for (e, r, why) in &self.left_out {
            s.push_str(&format!(
                "- {e}{}: left out, {why}\n",
                if r == "*" { String::new() } else { format!(" / {r}") }
            ));
        }
        s.push_str("\n## Groups\n\n| model | environment | arm | cell | role | indicator | replicates | with action | coded | observations | prompts | prompts whose action varies | left out |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
        for g in &self.groups {
            s.push_str(&format!(
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
                position_cells(&g.position),
                g.indicator.as_deref().unwrap_or("-"),
                g.replicates,
                g.with_action,
                g.coded,
                g.observations,
                g.prompts,
                g.prompts_action_varies,
                g.left_out.as_deref().unwrap_or("")
            ));
        }
        s.push_str("\n## Estimates\n\n");
        if self.rows.is_empty() {
            s.push_str("No group with an action indicator.\n");
        } else {
            s.push_str("| model | environment | arm | cell | role | indicator | estimator | value | estimate | se | t or z | p | 95 % interval | prompts | replicates | prompts varying | status |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
            let f = |x: Option<f64>| x.map_or_else(|| "-".to_string(), |v| format!("{v:.3}"));
            for r in &self.rows {
                let status = match r.status.as_str() {
                    "estimated" if r.validation.starts_with("unvalidated") => r.validation.clone(),
                    "estimated" => "estimated".to_string(),
                    _ => format!("{}: {}", r.status, r.reason),
                };
                s.push_str(&format!(
                    "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
                    position_cells(&r.position),
                    r.indicator,
                    r.estimator,
                    r.value,
                    f(r.fit.coef),
                    f(r.fit.se),
                    f(r.fit.stat),
                    r.fit.p.map_or_else(|| "-".to_string(), |p| format!("{p:.4}")),
                    match (r.fit.ci_low, r.fit.ci_high) {
                        (Some(l), Some(h)) => format!("[{l:.3}, {h:.3}]"),
                        _ => "-".into(),
                    },
                    r.n_prompts,
                    r.n_replicates,
                    r.prompts_varying.map_or_else(|| "-".to_string(), |n| n.to_string()),
                    status
                ));
            }
        }
        s
    }

    /// The estimates as a table (`dependency.csv`).
    pub fn table(&self) -> agora_analysis::table::Table {
        crate::table::of_rows(
            "dependency",
            "Dependency of the action on the stated values",
            &self.rows,
            &positioned::<DependencyRow>(&[
                ("indicator", |r| r.indicator.clone()),
                ("estimator", |r| r.estimator.clone()),
                ("value", |r| r.value.clone()),
                ("status", |r| r.status.clone()),
                ("reason", |r| r.reason.clone()),
                ("coef", |r| num(r.fit.coef)),
                ("se", |r| num(r.fit.se)),
                ("stat", |r| num(r.fit.stat)),
                ("p", |r| num(r.fit.p)),
                ("ci_low", |r| num(r.fit.ci_low)),
                ("ci_high", |r| num(r.fit.ci_high)),
                ("n_prompts", |r| r.n_prompts.to_string()),
                ("n_replicates", |r| r.n_replicates.to_string()),
                ("prompts_varying", |r| count(r.prompts_varying)),
                ("validation", |r| r.validation.clone()),
            ]),
        )
    }
}

impl Positioned for DependencyRow {
    fn position(&self) -> &Position {
        &self.position
    }
}
