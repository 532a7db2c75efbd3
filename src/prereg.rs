//! `agora prereg`: a deposit of a study before its first run (the plan, claims with their
//! margins and tests, anchors with provenance, the codebook and gate where the study is audited,
//! the analysis options and the build), as readable files, a manifest whose SHA-256 names the
//! deposit and one archive to upload to a public registry; and the check `agora run --prereg`
//! makes of a plan against its deposit (the work is in `agora_analysis::deposit`).

use std::path::{Path, PathBuf};

use agora_analysis::deposit::{self, Deposit, ATTESTED, MANIFEST, SELF_ATTESTED};
use agora_scenarios::Plan;
use anyhow::Context as _;
use serde_json::Value;

use crate::BadInput;

/// The Agora version of this build.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
/// The commit this build was made from, where it was built in a git checkout.
pub const COMMIT: &str = match option_env!("AGORA_COMMIT") {
    Some(c) => c,
    None => "unknown",
};

/// Arguments of `agora prereg`.
#[derive(clap::Args, Debug)]
pub struct PreregArgs {
    /// Study file (RON).
    study: PathBuf,
    /// The deposit's directory: created; one holding another deposit is refused (a deposit is
    /// never changed), one holding this deposit is left as it is.
    #[arg(long)]
    out: PathBuf,
    /// Claims file to deposit (default: the shipped assets/claims.ron, the claims `agora
    /// analyze` grades; a deposit of other claims shows each difference as a deviation).
    #[arg(long)]
    claims: Option<PathBuf>,
    /// Anchors file to deposit (default: the shipped assets/anchors.ron).
    #[arg(long)]
    anchors: Option<PathBuf>,
    /// Codebook to deposit (default: the shipped assets/codebooks/default.ron). The codebook and
    /// the gate are deposited where the plan has model seats, or where this is given.
    #[arg(long)]
    codebook: Option<PathBuf>,
    /// The coder-validation gate to deposit.
    #[command(flatten)]
    gate: crate::audit::GateArgs,
    /// The analysis option of that name (`agora analyze --classical-in-cross-model`), deposited.
    #[arg(long)]
    classical_in_cross_model: bool,
    /// Directory of cell files (default: ../cells beside the study's directory).
    #[arg(long)]
    cells: Option<PathBuf>,
    /// A file of model declarations to add to the study's.
    #[arg(long)]
    models: Option<PathBuf>,
    /// The registry's identifier (a DOI) once the archive is uploaded: recorded beside the
    /// hashed content (ATTESTED.json), shown by the report, not checked.
    #[arg(long)]
    doi: Option<String>,
}

pub use agora_records::store::deposit::now_utc;

/// The settings of a model a deposit fixes: what the model is and how it is sampled, not where
/// it is served (endpoints, concurrency, timeouts, retries, the name of a key's variable).
fn model_settings(plan: &Plan) -> Value {
    let models: Vec<Value> = plan
        .models
        .iter()
        .map(|m| {
            let mut v = serde_json::to_value(m).expect("invariant: model declarations serialise");
            if let Some(o) = v.as_object_mut() {
                for k in ["endpoints", "api_key_env", "concurrency", "timeout_s", "max_retries"] {
                    o.remove(k);
                }
            }
            v
        })
        .collect();
    Value::Array(models)
}

fn read_input(flag: &str, path: &Path) -> anyhow::Result<String> {
    std::fs::read_to_string(path).map_err(|e| BadInput(format!("{flag} {}: {e}", path.display())).into())
}

/// `agora prereg`.
pub fn main(args: PreregArgs) -> anyhow::Result<()> {
    let plan = crate::load_plan(&args.study, args.cells.as_deref(), args.models.as_deref())?;
    let study_file = read_input("study", &args.study)?;
    let claims = match &args.claims {
        Some(p) => read_input("--claims", p)?,
        None => agora_analysis::claims::CLAIMS_RON.to_string(),
    };
    let anchors = match &args.anchors {
        Some(p) => read_input("--anchors", p)?,
        None => agora_analysis::anchors::ANCHORS_RON.to_string(),
    };
    let has_models = plan.runs.iter().any(|r| r.seats.iter().any(|s| s.model().is_some()));
    let codebook = match &args.codebook {
        Some(p) => {
            Some(agora_audit::codebook::LoadedCodebook::read(p).map_err(|e| BadInput(format!("--codebook: {e}")))?)
        }
        None if has_models => Some(agora_audit::codebook::LoadedCodebook::default_codebook()),
        None => None,
    };
    let gate = args.gate.options(false)?;
    let audit = codebook.as_ref().map(|c| deposit::Audited {
        codebook: &c.source,
        gate: serde_json::json!({
            "min_kappa": gate.min_kappa, "min_responses": gate.min_responses, "min_sentences": gate.min_sentences,
            "min_code_support": gate.min_code_support, "max_coder_errors": gate.max_coder_errors,
            "min_labellers": gate.min_labellers, "min_human_kappa": gate.min_human_kappa,
            "max_human_disagreement": gate.max_human_disagreement,
        }),
        gate_rule: gate.describe(),
    });
    let contents = deposit::Contents {
        study: &plan.study,
        study_file: &study_file,
        runs: plan.runs.iter().map(|r| (r.key(), run_json(r))).collect(),
        models: model_settings(&plan),
        claims: &claims,
        anchors: &anchors,
        audit,
        options: agora_analysis::Options { classical_in_cross_model: args.classical_in_cross_model },
        version: VERSION,
        commit: COMMIT,
    };
    let d = Deposit::build(&contents).map_err(|e| {
        let flag = match e.file.as_str() {
            "claims" => args.claims.as_ref().map_or("shipped claims".into(), |p| format!("--claims {}", p.display())),
            "anchors" => {
                args.anchors.as_ref().map_or("shipped anchors".into(), |p| format!("--anchors {}", p.display()))
            }
            other => other.to_string(),
        };
        BadInput(format!("{flag}: {}", e.message))
    })?;
    let hash = d.hash();
    let out = &args.out;
    crate::check_out_dir(out)?;
    // A deposit is never changed: a directory holding another one is refused; one holding this
    // one keeps its time (a registry identifier may be added).
    let mut created = now_utc();
    if out.join(MANIFEST).exists() {
        let old = Deposit::read_dir(out).map_err(|e| BadInput(format!("--out {}: {e}", out.display())))?;
        if old.hash() != hash {
            return Err(BadInput(format!(
                "--out {}: holds the deposit {}, not this one ({hash}); a deposit is never changed — write this one \
                 to another directory",
                out.display(),
                old.hash()
            ))
            .into());
        }
        if let Some(a) = read_attested(out)? {
            created = a.0;
        }
    } else if out.is_dir() && std::fs::read_dir(out).map(|mut e| e.next().is_some()).unwrap_or(false) {
        return Err(
            BadInput(format!("--out {}: not empty and not a deposit; name a new directory", out.display())).into()
        );
    }
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    for (path, text) in &d.files {
        write_atomic(&out.join(path), text.as_bytes())?;
    }
    write_atomic(&out.join(MANIFEST), d.manifest().as_bytes())?;
    write_atomic(&out.join(d.archive_name()), &d.archive())?;
    let attested = deposit::stable_json(&serde_json::json!({
        "deposit": hash, "created": created, "created_is": SELF_ATTESTED, "doi": args.doi,
    }));
    write_atomic(&out.join(ATTESTED), attested.as_bytes())?;
    println!("deposit {hash}");
    println!(
        "  study {} ({} runs), {} files, written to {}",
        plan.study,
        plan.runs.len(),
        d.files.len(),
        out.display()
    );
    println!("  archive to upload: {}", out.join(d.archive_name()).display());
    println!("  created {created} (self-attested, beside the hashed content in {ATTESTED})");
    let (fixes, open) = d.scope();
    println!("  fixes:");
    for f in fixes {
        println!("    - {f}");
    }
    println!("  leaves open:");
    for o in open {
        println!("    - {o}");
    }
    Ok(())
}

/// A run's specification as the deposit keeps it (its canonical JSON, parsed).
fn run_json(r: &agora_engine::RunSpec) -> Value {
    serde_json::from_str(&r.canonical_json()).expect("invariant: canonical JSON parses")
}

/// Writes a file under a temporary name and renames it, so that no half file is left.
fn write_atomic(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = PathBuf::from(tmp);
    crate::write_named(&tmp, bytes)?;
    std::fs::rename(&tmp, path).with_context(|| format!("renaming {} to {}", tmp.display(), path.display()))
}

/// The time and registry identifier beside a deposit, if written.
fn read_attested(dir: &Path) -> anyhow::Result<Option<(String, Option<String>)>> {
    let p = dir.join(ATTESTED);
    let Ok(text) = std::fs::read_to_string(&p) else { return Ok(None) };
    let v: Value = serde_json::from_str(&text).map_err(|e| BadInput(format!("{}: {e}", p.display())))?;
    let created = v["created"].as_str().ok_or_else(|| BadInput(format!("{}: field `created` missing", p.display())))?;
    Ok(Some((created.to_string(), v["doi"].as_str().map(str::to_string))))
}

/// A plan checked against its deposit, for `agora run --prereg`.
pub struct PreregRun {
    /// The deposit, as checked against its manifest.
    pub deposit: Deposit,
    /// Its hash.
    pub hash: String,
    /// Its self-attested time of creation.
    pub created: String,
    /// The registry's identifier, where recorded.
    pub doi: Option<String>,
    /// The first difference of the plan from the deposit, with the reason given for it.
    pub deviation: Option<String>,
}

/// The identity of a run within its plan: block, roster, variant, cell, sweep point and index.
fn identity(spec: &Value) -> String {
    ["block", "roster", "variant", "cell", "sweep", "run_index"]
        .iter()
        .map(|k| spec[*k].to_string())
        .collect::<Vec<_>>()
        .join("/")
}

/// The first difference of `plan` from the deposited plan (a plan that is part of it, cut by
/// `--runs` or `--shard`, is none): the field, the deposited value and the plan's.
fn first_deviation(d: &Deposit, plan: &Plan) -> Option<(String, String, String)> {
    let deposited = d.runs();
    let keys: std::collections::HashSet<&str> = deposited.iter().map(|(k, _)| k.as_str()).collect();
    let by_identity: std::collections::HashMap<String, &Value> =
        deposited.iter().map(|(_, s)| (identity(s), s)).collect();
    if let Some(study) = d.study().filter(|s| *s != plan.study) {
        return Some(("study".into(), format!("\"{study}\""), format!("\"{}\"", plan.study)));
    }
    for r in &plan.runs {
        if keys.contains(r.key().as_str()) {
            continue;
        }
        let now = run_json(r);
        return Some(match by_identity.get(&identity(&now)) {
            Some(was) => deposit::first_difference(was, &now, "")
                .unwrap_or_else(|| ("run".into(), "its deposited key".into(), r.key())),
            None => (
                "runs".into(),
                "no such run".into(),
                format!("block `{}`, roster `{}`, cell `{}`, run {}", r.block, r.roster, r.cell, r.run_index),
            ),
        });
    }
    let models = d.json("models.json").unwrap_or(Value::Null);
    deposit::first_difference(&models, &model_settings(plan), "models")
}

/// Reads the deposit in `dir`, checks every file against its manifest and the plan against the
/// deposit: a plan that differs is refused, naming the first differing field, unless `deviate`
/// gives the reason, which is then recorded with its runs.
pub fn check_run(dir: &Path, plan: &Plan, deviate: Option<&str>) -> anyhow::Result<PreregRun> {
    let deposit = Deposit::read_dir(dir).map_err(|e| BadInput(format!("--prereg {}: {e}", dir.display())))?;
    let hash = deposit.hash();
    let (created, doi) = read_attested(dir)?
        .ok_or_else(|| BadInput(format!("--prereg {}: {} missing", dir.display(), dir.join(ATTESTED).display())))?;
    if let Some(reason) = deviate {
        if reason.trim().is_empty() {
            return Err(BadInput("--deviate: give the reason for deviating from the deposit".into()).into());
        }
    }
    let deviation = match (first_deviation(&deposit, plan), deviate) {
        (None, None) => None,
        (None, Some(_)) => {
            println!("{}: the plan is the deposit's; --deviate has nothing to record", plan.study);
            None
        }
        (Some((field, was, now)), Some(reason)) => {
            println!(
                "{}: deviates from the deposit {}: `{field}` was {was}, now {now}; reason recorded: {reason}",
                plan.study,
                &hash[..12]
            );
            Some(format!("`{field}` was {was}, now {now}: {reason}"))
        }
        (Some((field, was, now)), None) => {
            return Err(BadInput(format!(
                "{}: the plan differs from the deposit {} in {}: `{field}` was {was}, now {now}; run the deposited \
                 plan, or pass --deviate \"REASON\" to run this one as a new version of the study with the reason \
                 recorded",
                plan.study,
                &hash[..12],
                dir.display()
            ))
            .into())
        }
    };
    Ok(PreregRun { deposit, hash, created, doi, deviation })
}
