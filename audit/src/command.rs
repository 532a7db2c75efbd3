//! `agora audit` over a store: the audit itself ([`run`]) and the label workflow the gate
//! needs ([`export`], [`import`], [`agreement`]). The command line hands each its options;
//! bad input is [`BadInput`] (exit 2, nothing written).

use std::path::{Path, PathBuf};

use crate::requirements::LoadedRequirements;
use crate::AuditError;
use crate::{labels, Coder, GateOptions, LabelsError, LexiconCoder, LoadedCodebook};
use agora_engine::Store;
use anyhow::Context as _;

use crate::llm_coder::{self as audit_llm, CoderChoice, LlmCoderOptions};
use crate::BadInput;

/// What `agora audit` (no subcommand) is asked to do.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// Store file (read, and given the audit's tables).
    pub store: PathBuf,
    /// Codebook file (default: the shipped one).
    pub codebook: Option<PathBuf>,
    /// Output directory for audit.md, audit.json and the CSV tables.
    pub out: PathBuf,
    /// Only this study's runs.
    pub study: Option<String>,
    /// The validation gate, checked.
    pub gate: GateOptions,
    /// The coder.
    pub coder: CoderChoice,
    /// Models file declaring the LLM coder.
    pub models: Option<PathBuf>,
    /// LLM coder: sampling temperature (default 0).
    pub coder_temperature: Option<f64>,
    /// LLM coder: most tokens a reply may have.
    pub coder_max_tokens: Option<u32>,
    /// LLM coder: the seed its requests' sampling seeds are derived from (default 0).
    pub coder_seed: Option<u64>,
    /// LLM coder: answer from the store's reply cache only.
    pub replay: bool,
    /// Requirements file (default: the shipped one).
    pub requirements: Option<PathBuf>,
}

/// What `agora audit export` is asked to do.
#[derive(Clone, Debug)]
pub struct ExportOptions {
    /// Store file (audited).
    pub store: PathBuf,
    /// Responses per audited model.
    pub sample: usize,
    /// Sampling seed.
    pub seed: u64,
    /// File format.
    pub format: labels::Format,
    /// Output file.
    pub out: PathBuf,
    /// The machine coder whose coded responses are sampled.
    pub coder: String,
    /// Codebook the responses were coded with (default: the shipped one).
    pub codebook: Option<PathBuf>,
    /// Only these models (all when empty).
    pub model: Vec<String>,
    /// Put the machine coder and its codes in the records (blind otherwise).
    pub show_codes: bool,
}

/// What `agora audit import` is asked to do.
#[derive(Clone, Debug)]
pub struct ImportOptions {
    /// Store file (audited).
    pub store: PathBuf,
    /// Label file.
    pub labels: PathBuf,
    /// The human coder whose labels the file holds.
    pub coder_name: String,
    /// Codebook the labels are checked against (default: the shipped one).
    pub codebook: Option<PathBuf>,
    /// The field holding the code.
    pub label_field: String,
}

/// What `agora audit agreement` is asked to do.
#[derive(Clone, Debug)]
pub struct AgreementOptions {
    /// Store file (audited, with human labels imported).
    pub store: PathBuf,
    /// Codebook whose labels and codes are compared (default: the shipped one).
    pub codebook: Option<PathBuf>,
    /// Output directory for agreement.md, agreement.json and the CSV tables.
    pub out: PathBuf,
    /// The validation gate, checked, for the verdicts.
    pub gate: GateOptions,
}

fn load_codebook(path: Option<&Path>) -> anyhow::Result<LoadedCodebook> {
    Ok(match path {
        Some(p) => LoadedCodebook::read(p).map_err(|e| BadInput(e.to_string()))?,
        None => LoadedCodebook::default_codebook(),
    })
}

/// Refuses a missing store, or a file that is not an intact Agora store (exit 2).
fn check_store(store: &Path) -> anyhow::Result<()> {
    if !store.exists() {
        return Err(BadInput(format!("store {} does not exist", store.display())).into());
    }
    drop(Store::open(store)?);
    Ok(())
}

fn labels_error(e: LabelsError) -> anyhow::Error {
    if e.is_bad_input() {
        BadInput(e.to_string()).into()
    } else {
        anyhow::Error::new(e)
    }
}

/// Audits the store: codes the reasoning, writes the audit's tables and outputs.
pub fn run(args: RunOptions) -> anyhow::Result<()> {
    let codebook = load_codebook(args.codebook.as_deref())?;
    // A user's requirements must name the codebook's values; the shipped ones, written for the
    // default codebook, read `not estimable` under another.
    let requirements = match &args.requirements {
        Some(p) => {
            let r = LoadedRequirements::read(p).map_err(|e| BadInput(e.to_string()))?;
            r.check_codebook(&codebook.codebook).map_err(|e| BadInput(e.to_string()))?;
            r
        }
        None => LoadedRequirements::default_requirements(),
    };
    // The claims' mechanisms name value codes of the default codebook; under another codebook
    // a claim whose values it lacks cannot find them stated in these codes: said, not refused.
    if let Err(e) = crate::codebook::check_claims(agora_analysis::claims::ClaimTable::shipped(), &codebook.codebook) {
        eprintln!("note: {e}; Tier 3 cannot find that value in this coder's codes");
    }
    let gate = args.gate;
    check_store(&args.store)?;
    // A user's requirement naming a model, environment, cell or statistic the store does not
    // hold could never be estimated: refused before anything is written.
    if let Some(p) = &args.requirements {
        let conn = rusqlite::Connection::open_with_flags(&args.store, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .with_context(|| format!("opening {}", args.store.display()))?;
        crate::requirements::check_store(&requirements.requirements, &conn)
            .map_err(|e| BadInput(format!("requirements {} on store {}: {e}", p.display(), args.store.display())))?;
    }
    // An `--out` that cannot become a directory is refused before anything is written to the
    // store, so that it leaves the store as it was.
    if let Some(blocker) = args.out.ancestors().find(|a| a.exists() && !a.is_dir()) {
        return Err(BadInput(format!(
            "--out {}: cannot be a directory ({} is a file)",
            args.out.display(),
            blocker.display()
        ))
        .into());
    }
    let llm = match &args.coder {
        CoderChoice::Lexicon => {
            let llm_only = [
                ("--models", args.models.is_some()),
                ("--coder-temperature", args.coder_temperature.is_some()),
                ("--coder-max-tokens", args.coder_max_tokens.is_some()),
                ("--coder-seed", args.coder_seed.is_some()),
                ("--replay", args.replay),
            ];
            let given: Vec<&str> = llm_only.iter().filter(|(_, given)| *given).map(|(flag, _)| *flag).collect();
            if !given.is_empty() {
                return Err(BadInput(format!(
                    "{} appl{} to an LLM coder only (--coder llm:MODEL)",
                    given.join(", "),
                    if given.len() == 1 { "ies" } else { "y" }
                ))
                .into());
            }
            None
        }
        CoderChoice::Llm(name) => {
            let options = LlmCoderOptions {
                temperature: args.coder_temperature.unwrap_or(0.0),
                max_tokens: args.coder_max_tokens,
                seed: args.coder_seed.unwrap_or(0),
                replay: args.replay,
            };
            let models = args.models.as_deref();
            Some(audit_llm::build(&args.store, args.study.as_deref(), models, name, &codebook.codebook, &options)?)
        }
    };
    let lexicon = LexiconCoder::new(&codebook.codebook);
    let coder: &dyn Coder = match &llm {
        Some(c) => c,
        None => &lexicon,
    };
    let started = std::time::Instant::now();
    let result =
        crate::audit(&args.store, &codebook, coder, args.study.as_deref(), gate).map_err(|e: AuditError| {
            if e.is_bad_input() {
                BadInput(e.to_string()).into()
            } else {
                anyhow::Error::new(e)
            }
        })?;
    std::fs::create_dir_all(&args.out).with_context(|| format!("creating {}", args.out.display()))?;
    crate::write_named(args.out.join("audit.md"), result.to_markdown())?;
    crate::write_named(args.out.join("audit.json"), serde_json::to_string_pretty(&result)?)?;
    for t in result.tables() {
        crate::write_named(args.out.join(format!("{}.csv", t.name)), agora_analysis::table::to_csv(&t))?;
    }
    let t = &result.total;
    println!(
        "{} responses audited in {:.2} s with {} and codebook {} v{}: {} with pre-action reasoning (coded), {} without (counted), {} with a post-hoc rationale (never coded), {} fallbacks skipped",
        t.responses,
        started.elapsed().as_secs_f64(),
        result.coder,
        result.codebook.name,
        result.codebook.version,
        t.with_reasoning,
        t.without_reasoning,
        t.with_post_hoc,
        t.fallbacks_skipped
    );
    if t.responses > 0 && t.with_reasoning == 0 {
        // Every table below would be empty: say why, plainly, instead.
        println!(
            "no codeable reasoning in this store: none of its {} responses wrote reasoning before its answer, so \
             no value can be coded and the occurrence, dependency and requirement tables are empty. Run a study \
             whose decisions ask for pre-action reasoning (the step-by-step cell, or a game that asks for it, as \
             the binary-allocation game does).",
            t.responses
        );
    }
    if let Some(llm) = &llm {
        let (cached, sent) = llm.calls();
        println!(
            "coder {}: {} replies from the reply cache, {} requests sent; identity {}; serving {}",
            coder.id(),
            cached,
            sent,
            coder.identity(),
            coder.serving()
        );
    }
    for v in &result.validation {
        println!("gate on {} for model {}: {}", v.coder, v.model, v.label());
    }
    drop_stale_estimates(&args.store)?;
    dependency(&args.store, &codebook, coder, args.study.as_deref(), gate, &args.out)?;
    write_requirements(&args.store, &requirements, &result, &args.out)?;
    write_motives(&args.store, &args.out)?;
    println!(
        "tables audit_responses, audit_sentences, audit_segments, audit_coders in {}; report in {}",
        args.store.display(),
        args.out.display()
    );
    Ok(())
}

/// The motive regression of the SUVA audit paper (Eq. 240.5, with the group and reciprocity extensions;
/// CR1 clustered by payoff configuration) for every binary-allocation condition of the store,
/// into motives.json and motives.md; nothing is written when the store has none.
fn write_motives(store: &std::path::Path, out: &std::path::Path) -> anyhow::Result<()> {
    let conn = rusqlite::Connection::open_with_flags(store, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)?;
    let samples = crate::motives::read_store(&conn)?;
    if samples.is_empty() {
        return Ok(());
    }
    let mut json = Vec::new();
    let mut md = String::from(
        "# Motive regressions (binary allocation, the SUVA audit paper Eq. 240.5, CR1 by payoff configuration)\n\n",
    );
    for s in &samples {
        let fit = crate::motives::motive_report(&s.decisions, 0.05);
        md.push_str(&format!("## {} · {} · {} · {}\n\n", s.roster, s.arm, s.variant, s.cell));
        match &fit {
            Ok(r) => {
                md.push_str(&format!("{} decisions ({} without a choice)\n\n| term | coefficient | CR1 SE | 95 % CI |\n|---|---|---|---|\n", r.decisions, r.no_choice));
                for (i, name) in r.motives.names.iter().enumerate() {
                    md.push_str(&format!(
                        "| {name} | {:.4} | {:.4} | [{:.4}, {:.4}] |\n",
                        r.motives.coef[i], r.motives.se[i], r.motives.ci_low[i], r.motives.ci_high[i]
                    ));
                }
                md.push('\n');
            }
            Err(e) => md.push_str(&format!("not estimated: {e}\n\n")),
        }
        json.push(serde_json::json!({
            "roster": s.roster, "arm": s.arm, "variant": s.variant, "cell": s.cell,
            "report": fit.as_ref().ok(), "error": fit.as_ref().err().map(ToString::to_string),
        }));
    }
    crate::write_named(out.join("motives.json"), serde_json::to_string_pretty(&json)?)?;
    crate::write_named(out.join("motives.md"), md)?;
    println!("motive regressions: {} binary-allocation condition(s); motives.md/json", samples.len());
    Ok(())
}

/// Tests the requirements on the audit and the store's dependency estimates, into
/// `audit_requirements` and requirements.md/json/csv.
fn write_requirements(
    store: &Path,
    requirements: &LoadedRequirements,
    result: &crate::Audit,
    out: &Path,
) -> anyhow::Result<()> {
    let report = crate::requirements::run(store, requirements, result)?;
    crate::write_named(out.join("requirements.md"), report.to_markdown())?;
    crate::write_named(out.join("requirements.json"), serde_json::to_string_pretty(&report)?)?;
    crate::write_named(out.join("requirements.csv"), agora_analysis::table::to_csv(&report.table()))?;
    let count = |v: &str| report.verdicts.iter().filter(|x| x.verdict == v).count();
    println!(
        "requirements {} ({}): {} pass, {} fail, {} not estimable, {} refused by the gate; table audit_requirements; requirements.md/json/csv",
        report.name,
        report.path,
        count("pass"),
        count("fail"),
        count("not estimable"),
        count("refused")
    );
    Ok(())
}

/// Writes a seeded sample of coded responses for human labelling.
pub fn export(args: ExportOptions) -> anyhow::Result<()> {
    let codebook = load_codebook(args.codebook.as_deref())?;
    check_store(&args.store)?;
    let options = labels::ExportOptions {
        sample: args.sample,
        seed: args.seed,
        coder: args.coder.clone(),
        models: args.model.clone(),
        blind: !args.show_codes,
    };
    let export = labels::export(&args.store, &codebook, &options).map_err(labels_error)?;
    let text = export.render(args.format);
    if let Some(dir) = args.out.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    // The file goes to a temporary name, the export is recorded in the store, then the file is
    // renamed: a file with an export id the store does not hold is never left behind.
    let mut partial = args.out.clone().into_os_string();
    partial.push(".partial");
    let partial = PathBuf::from(partial);
    crate::write_named(&partial, text)?;
    let created = match labels::record_export(&args.store, &export) {
        Ok(created) => created,
        Err(e) => {
            let _ = std::fs::remove_file(&partial);
            return Err(labels_error(e));
        }
    };
    std::fs::rename(&partial, &args.out).with_context(|| format!("writing {}", args.out.display()))?;
    let per_model: Vec<String> =
        export.per_model.iter().map(|(m, (n, of))| format!("{m}: {n} of {of} responses")).collect();
    println!(
        "{} sentences of {} sampled responses (seed {}; {}) written to {} as {}{}; export {} recorded in {} ({created})",
        export.records.len(),
        export.per_model.values().map(|(n, _)| n).sum::<usize>(),
        args.seed,
        per_model.join(", "),
        args.out.display(),
        args.format.as_str(),
        if args.show_codes {
            ", with the machine's codes (not for labelling: its labels are refused on import)"
        } else {
            ", blind"
        },
        export.id,
        args.store.display()
    );
    Ok(())
}

/// Reads one human coder's labels into the store.
pub fn import(args: ImportOptions) -> anyhow::Result<()> {
    let codebook = load_codebook(args.codebook.as_deref())?;
    labels::check_coder_name(&args.coder_name).map_err(BadInput)?;
    check_store(&args.store)?;
    let done = labels::import(&args.store, &codebook, &args.labels, &args.coder_name, &args.label_field, None)
        .map_err(labels_error)?;
    println!(
        "{} labels by {} imported from {} ({}): {} new, {} changed, {} unchanged; {} records without a label skipped; {} labels by {} with codebook {} v{} in {}",
        done.labels,
        done.coder,
        args.labels.display(),
        done.format.as_str(),
        done.labels - done.changed - done.unchanged,
        done.changed,
        done.unchanged,
        done.unlabelled,
        done.total,
        done.coder,
        codebook.codebook.name,
        codebook.codebook.version,
        args.store.display()
    );
    Ok(())
}

/// Computes the agreement between coders and the gate's verdicts.
pub fn agreement(args: AgreementOptions) -> anyhow::Result<()> {
    let codebook = load_codebook(args.codebook.as_deref())?;
    // The claims' mechanisms name value codes of the default codebook; under another codebook
    // a claim whose values it lacks cannot find them stated in these codes: said, not refused.
    if let Err(e) = crate::codebook::check_claims(agora_analysis::claims::ClaimTable::shipped(), &codebook.codebook) {
        eprintln!("note: {e}; Tier 3 cannot find that value in this coder's codes");
    }
    let gate = args.gate;
    check_store(&args.store)?;
    let result = crate::agreement::agreement(&args.store, &codebook, &gate).map_err(labels_error)?;
    std::fs::create_dir_all(&args.out).with_context(|| format!("creating {}", args.out.display()))?;
    crate::write_named(args.out.join("agreement.md"), result.to_markdown())?;
    crate::write_named(args.out.join("agreement.json"), serde_json::to_string_pretty(&result)?)?;
    for t in result.tables() {
        crate::write_named(args.out.join(format!("{}.csv", t.name)), agora_analysis::table::to_csv(&t))?;
    }
    for r in &result.rows {
        println!(
            "{} {} vs {} on {}: n = {}, kappa = {}{}",
            r.kind,
            r.coder,
            r.reference,
            r.model,
            r.n,
            r.kappa.map_or_else(|| "-".to_string(), |k| format!("{k:.3}")),
            r.verdict.as_ref().map(|v| format!(" ({v})")).unwrap_or_default()
        );
    }
    println!("table audit_agreement in {}; report in {}", args.store.display(), args.out.display());
    Ok(())
}

/// Drops the estimate tables of an older layout, whose rows pool the cells and arms of a game
/// (issue 39): `audit_dependency` (rebuilt at once by the dependency step, from the coded
/// replicates) and `audit_faithfulness` with `audit_prefill` (rebuilt by `agora audit
/// prefill`), so that the ladder never reads an estimate pooled over conditions. Says what it
/// dropped.
fn drop_stale_estimates(store: &Path) -> anyhow::Result<()> {
    let conn = rusqlite::Connection::open_with_flags(store, rusqlite::OpenFlags::SQLITE_OPEN_READ_WRITE)
        .with_context(|| format!("opening {}", store.display()))?;
    conn.busy_timeout(std::time::Duration::from_secs(60))?;
    let tx = conn.unchecked_transaction()?;
    let dependency = crate::dependency::drop_stale(&tx)?;
    let faithfulness = crate::faithfulness::drop_stale(&tx)?;
    tx.commit()?;
    if dependency {
        eprintln!(
            "note: store {}: audit_dependency predated the per-arm, per-cell estimates (no arm or cell column): \
             dropped; rebuilt below from the coded replicates (other coders and studies: run `agora audit` for them)",
            store.display()
        );
    }
    for table in faithfulness {
        eprintln!(
            "note: store {}: {table} predated the per-arm, per-cell estimates (no arm, cell or design column): \
             dropped; run `agora audit prefill` to rebuild it",
            store.display()
        );
    }
    Ok(())
}

/// The dependency step of `agora audit`: codes the store's replicates with the audit's coder,
/// estimates the dependency of the action on the stated values and writes `dependency.md`,
/// `.json` and `.csv` into `out` ([`crate::dependency`]); says so and does
/// nothing where the store holds no replicates.
pub fn dependency(
    store: &Path,
    codebook: &crate::LoadedCodebook,
    coder: &dyn crate::Coder,
    study: Option<&str>,
    gate: crate::GateOptions,
    out: &Path,
) -> anyhow::Result<()> {
    let report = crate::dependency::dependency(store, codebook, coder, study, gate).map_err(|e| {
        if e.is_bad_input() {
            BadInput(e.to_string()).into()
        } else {
            anyhow::Error::new(e)
        }
    })?;
    let Some(d) = report else {
        println!("dependency: no replicates in the store (`agora audit replicates` asks them)");
        return Ok(());
    };
    crate::write_named(out.join("dependency.md"), d.to_markdown())?;
    crate::write_named(out.join("dependency.json"), serde_json::to_string_pretty(&d)?)?;
    crate::write_named(out.join("dependency.csv"), agora_analysis::table::to_csv(&d.table()))?;
    let estimated = d.rows.iter().filter(|r| r.status == "estimated").count();
    let refused = d.rows.iter().filter(|r| r.status == "refused").count();
    println!(
        "dependency: {} replicates, {} coded; {} estimates, {} not identified or not estimated, {} refused by the gate; tables audit_replicate_responses, audit_dependency; dependency.md/json/csv",
        d.replicates,
        d.coded,
        estimated,
        d.rows.len() - estimated - refused,
        refused
    );
    Ok(())
}
