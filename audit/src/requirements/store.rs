//! Requirements and the store: checking that a file names what the store holds, reading the
//! dependency estimates, writing and tabulating the verdicts.

use super::*;
use crate::table::{count, num};
use agora_records::families::audit::CoderKeyRef;

/// Checks that every requirement of `spec` names what the store holds: its model (unless
/// `*`), its environment, its cells (a share's and an invariance's other cell), and for a
/// statistic of the SUVA audit paper, binary-allocation runs of its treatment at C0, cell
/// `baseline`. The error names the requirement and what is missing, with what the store holds.
pub fn check_store(spec: &Requirements, conn: &Connection) -> Result<(), String> {
    let runs = agora_records::families::audit::reads::run_conditions(conn).map_err(|e| e.to_string())?;
    let list = |xs: BTreeSet<&str>| {
        if xs.is_empty() {
            "none".to_string()
        } else {
            xs.into_iter().collect::<Vec<_>>().join(", ")
        }
    };
    let environments: BTreeSet<&str> = runs.iter().map(|r| r.0.as_str()).collect();
    let models: BTreeSet<&str> = runs.iter().map(|r| r.4.as_str()).collect();
    for req in &spec.requirements {
        let name = &req.name;
        if req.model != "*" && !models.contains(req.model.as_str()) {
            return Err(format!(
                "requirement `{name}`: model `{}` has no runs in the store (models: {})",
                req.model,
                list(models)
            ));
        }
        if let Test::Invariant { against: Against::Model(m), .. } = &req.test {
            if !models.contains(m.as_str()) {
                return Err(format!(
                    "requirement `{name}`: model `{m}` has no runs in the store (models: {})",
                    list(models)
                ));
            }
        }
        let environment = match &req.about {
            About::Share { environment, .. } | About::Dependency { environment, .. } => environment.as_str(),
            About::Statistic(_) => "binary-allocation",
        };
        if !environments.contains(environment) {
            return Err(format!(
                "requirement `{name}`: the store has no runs of environment `{environment}` (environments: {})",
                list(environments)
            ));
        }
        let cells: BTreeSet<&str> = runs.iter().filter(|r| r.0 == environment).map(|r| r.1.as_str()).collect();
        let mut named: Vec<&str> = Vec::new();
        if let About::Share { cell: Some(c), .. } | About::Dependency { cell: Some(c), .. } = &req.about {
            named.push(c);
        }
        if let Test::Invariant { against: Against::Cell(c), .. } = &req.test {
            named.push(c);
        }
        if let Some(c) = named.into_iter().find(|c| !cells.contains(c)) {
            return Err(format!(
                "requirement `{name}`: cell `{c}` has no runs of {environment} in the store (cells: {})",
                list(cells)
            ));
        }
        if let About::Dependency { arm: Some(a), .. } = &req.about {
            let arms: BTreeSet<&str> = runs.iter().filter(|r| r.0 == environment).map(|r| r.2.as_str()).collect();
            if !arms.contains(a.as_str()) {
                return Err(format!(
                    "requirement `{name}`: arm `{a}` has no runs of {environment} in the store (arms: {})",
                    list(arms)
                ));
            }
        }
        if let About::Statistic(stat) = &req.about {
            let held =
                runs.iter().any(|r| r.0 == environment && r.2 == stat.treatment() && r.3 == "C0" && r.1 == "baseline");
            if !held {
                let arms: BTreeSet<&str> = runs.iter().filter(|r| r.0 == environment).map(|r| r.2.as_str()).collect();
                return Err(format!(
                    "requirement `{name}`: {} needs binary-allocation runs of the {} treatment at C0, cell baseline; the store has none (treatments: {})",
                    stat.name(),
                    stat.treatment(),
                    list(arms)
                ));
            }
        }
    }
    Ok(())
}

/// Reads the dependency estimates of the audit's coder and codebook (and study scope) from
/// `audit_dependency`; none where the table does not exist.
pub fn read_dependency(conn: &Connection, audit: &Audit) -> rusqlite::Result<Vec<DependencyRow>> {
    let scope = audit.study.clone().unwrap_or_default();
    let (coder, cb) = (&audit.coder, &audit.codebook);
    let key = CoderKeyRef { coder, codebook: &cb.name, version: cb.version, sha256: &cb.sha256 };
    agora_records::families::audit::dependency::read_estimates(conn, &scope, key)
}

/// Writes the verdicts into `audit_requirements`, replacing its rows, in one transaction.
pub use agora_records::families::audit::requirements::write;

/// Evaluates `spec` on `audit` and the store's dependency estimates, and writes the verdicts
/// into the store at `path` ([`write`](fn@write)).
pub fn run(path: &Path, spec: &LoadedRequirements, audit: &Audit) -> Result<RequirementsReport, crate::AuditError> {
    let sql = |source| crate::AuditError::Store { path: path.to_path_buf(), source };
    let mut conn = Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_WRITE).map_err(sql)?;
    conn.busy_timeout(std::time::Duration::from_secs(30)).map_err(sql)?;
    let dependency = read_dependency(&conn, audit).map_err(sql)?;
    let allocation = crate::motives::read_store(&conn).map_err(sql)?;
    let r = &spec.requirements;
    let verdicts = evaluate(r, audit, &dependency, &allocation);
    write(&mut conn, &verdicts).map_err(sql)?;
    Ok(RequirementsReport {
        name: r.name.clone(),
        path: spec.path.display().to_string(),
        sha256: spec.sha256.clone(),
        alpha: r.alpha,
        power: r.power,
        assumed_icc: r.assumed_icc,
        verdicts,
    })
}

impl RequirementsReport {
    /// The verdicts as a table (`requirements.csv`).
    pub fn table(&self) -> agora_analysis::table::Table {
        crate::table::of_rows(
            "requirements",
            "Requirements as tests",
            &self.verdicts,
            &[
                ("requirement", |v| v.requirement.clone()),
                ("model", |v| v.model.clone()),
                ("kind", |v| v.kind.clone()),
                ("statistic", |v| v.statistic.clone()),
                ("estimate", |v| num(v.estimate)),
                ("se", |v| num(v.se)),
                ("low", |v| num(v.low)),
                ("high", |v| num(v.high)),
                ("bound", |v| num(Some(v.bound))),
                ("p_tost", |v| num(v.p_tost)),
                ("verdict", |v| v.verdict.clone()),
                ("reason", |v| v.reason.clone()),
                ("n", |v| count(v.n)),
                ("prompts", |v| count(v.prompts)),
                ("clusters", |v| count(v.clusters)),
                ("planned_n", |v| count(v.planned_n)),
                ("planning", |v| v.planning.clone()),
            ],
        )
    }

    /// `requirements.md`.
    pub fn to_markdown(&self) -> String {
        let mut s = format!(
            "# Requirements: {}\n\nFrom {} (SHA-256 {}). Directional requirements pass when the one-sided {:.0} % bound clears the bound; invariance requirements pass when the {:.0} % interval of the difference lies inside (−Δ, Δ) (two one-sided tests at α = {}). Planned n: responses per arm for power {} with the design effect 1 + (m − 1)ρ (ρ assumed {} where the data give none).\n\n",
            self.name,
            self.path,
            self.sha256,
            100.0 * (1.0 - self.alpha),
            100.0 * (1.0 - 2.0 * self.alpha),
            self.alpha,
            self.power,
            self.assumed_icc
        );
        s.push_str(
            "| requirement | model | kind | estimate | low | high | bound | verdict | n | planned n | reason |\n",
        );
        s.push_str("|---|---|---|---|---|---|---|---|---|---|---|\n");
        let f = |x: Option<f64>| x.map_or_else(|| "–".to_string(), |v| format!("{v:.3}"));
        for v in &self.verdicts {
            s.push_str(&format!(
                "| {} | {} | {} | {} | {} | {} | {} | **{}** | {} | {} | {} |\n",
                v.requirement,
                v.model,
                v.kind,
                f(v.estimate),
                f(v.low),
                f(v.high),
                v.bound,
                v.verdict,
                v.n.map_or_else(|| "–".to_string(), |n| n.to_string()),
                v.planned_n.map_or_else(|| "–".to_string(), |n| n.to_string()),
                v.reason.replace('|', "/")
            ));
        }
        s
    }
}
