//! `agora list`: the environments, agents, cells and anchors, or (with `--params`) the
//! environments' and agents' study-file forms with every parameter at its default.

use std::path::Path;

use agora_agents::PolicySpec;
use agora_environments::EnvKind;
use agora_scenarios::cell;
use clap::ValueEnum;

use crate::{reference, BadInput};

/// What `agora list` lists.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub(crate) enum ListWhat {
    Environments,
    Agents,
    Cells,
    Anchors,
}

/// The RON options of a study file (its loader's extensions), to write a policy as a study's
/// `Member(policy: …)` takes it.
fn study_ron() -> ron::Options {
    ron::Options::default().with_default_extension(
        ron::extensions::Extensions::UNWRAP_NEWTYPES
            | ron::extensions::Extensions::UNWRAP_VARIANT_NEWTYPES
            | ron::extensions::Extensions::IMPLICIT_SOME,
    )
}

/// `agora list environments|agents --params`: the name, then the study file's form with every
/// parameter at its default (from the same schemas as the book's file reference).
pub(crate) fn list_params(what: ListWhat, _cells_dir: &Path) -> anyhow::Result<()> {
    let study_ron = study_ron();
    match what {
        ListWhat::Environments => {
            let forms = reference::default_forms::<agora_environments::EnvSpec>();
            for e in EnvKind::ALL {
                let variant = ron::to_string(e)?;
                let form = forms.iter().find(|(v, _)| *v == variant).map_or(format!("{variant}()"), |(_, f)| f.clone());
                println!("{:<18} {form}", e.as_str());
            }
        }
        ListWhat::Agents => {
            let forms = reference::default_forms::<PolicySpec>();
            for p in PolicySpec::registry() {
                // A policy with parameters shows them all; one without (or with a value such as
                // `Committed(1)`) as the registry writes it.
                let written = study_ron.to_string(&p)?;
                let variant = written.split('(').next().unwrap_or_default();
                let form = forms.iter().find(|(v, _)| v == variant).map_or(written.clone(), |(_, f)| f.clone());
                println!("{:<24} {form}", p.meta().name);
            }
        }
        ListWhat::Cells | ListWhat::Anchors => {
            return Err(BadInput("--params lists `environments` and `agents`".into()).into());
        }
    }
    Ok(())
}

pub(crate) fn list(what: ListWhat, cells_dir: &Path) -> anyhow::Result<()> {
    match what {
        ListWhat::Environments => {
            // The name a study file takes (`environment: PublicGoods()`) beside the name the
            // store and the analysis use.
            println!("{:<18} {:<20} description", "environment", "in a study file");
            for e in EnvKind::ALL {
                println!(
                    "{:<18} {:<20} {}",
                    e.as_str(),
                    format!("{}()", ron::to_string(e).unwrap_or_default()),
                    agora_environments::games::description(*e)
                );
            }
        }
        ListWhat::Agents => {
            println!(
                "{:<24} {:<9} {:<7} {:<10} {:<60} environments",
                "agent", "family", "memory", "stochastic", "description"
            );
            // The policy as a study's `Member(policy: …)` takes it, with its default parameters.
            let study_ron = study_ron();
            for p in PolicySpec::registry() {
                let m = p.meta();
                let envs: Vec<&str> = m.environments.iter().map(|e| e.as_str()).collect();
                println!(
                    "{:<24} {:<9} {:<7} {:<10} {:<60} {}",
                    m.name,
                    m.family,
                    m.memory_depth.map_or("all".to_string(), |d| d.to_string()),
                    m.stochastic,
                    m.description,
                    envs.join(", ")
                );
                println!("{:<24} source: {}", "", m.reference);
                println!("{:<24} in a study file: {}", "", study_ron.to_string(&p).unwrap_or_default());
            }
        }
        ListWhat::Cells => {
            let mut cells = cell::load_dir(cells_dir)?;
            cells.sort_by(|a, b| (a.1.level, &a.1.name).cmp(&(b.1.level, &b.1.name)));
            println!("{:<26} {:<15} {:<72} environments", "cell", "level", "description");
            for (_, c) in cells {
                let envs: Vec<&str> = c.games().iter().map(|e| e.as_str()).collect();
                println!("{:<26} {:<15} {:<72} {}", c.name, c.level.as_str(), c.description, envs.join(", "));
            }
        }
        ListWhat::Anchors => {
            use agora_analysis::anchors::{AnchorTable, AnchorValue};
            for a in &AnchorTable::shipped().anchors {
                let value = match &a.value {
                    AnchorValue::Point(x) => format!("{x}"),
                    AnchorValue::Range { low, high } => format!("{low}-{high}"),
                    AnchorValue::Distribution { shares, .. } => {
                        shares.iter().map(|s| format!("{:.0}", s * 100.0)).collect::<Vec<_>>().join(",") + " %"
                    }
                    AnchorValue::Direction(d) => format!("{d:?}").to_lowercase(),
                    AnchorValue::Unrecorded => "not on record".to_string(),
                };
                println!(
                    "{:<28} {:<40} {:<24} {:?}/{:?}  {}  [{}]",
                    a.id, a.quantity, value, a.tier, a.status, a.source, a.evidence
                );
            }
        }
    }
    Ok(())
}
