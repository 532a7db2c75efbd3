//! `agora audit`: the transcript audit of a store (the work is in `agora_analysis::audit`).
//!
//! Without a subcommand it reads the store's terminal decision transcripts, splits each reply
//! into pre-action reasoning, action and post-hoc rationale, codes the reasoning's sentences
//! against a codebook with the lexicon coder or (`--coder llm:MODEL --models FILE`) an LLM
//! coder outside the audited set ([`audit_llm`]), writes the `audit_*`
//! tables into the store and `audit.md`, `audit.json` and the CSV tables into the output
//! directory. Every number computed from the codes passes the coder-validation gate: a model's
//! numbers are refused unless the coder's Cohen's κ against human labels on that model's text
//! is at least `--min-kappa` (0.8), or `--allow-unvalidated` shows them labelled unvalidated.
//!
//! The subcommands collect the human labels the gate needs: `export` writes a seeded sample of
//! coded sentences for labelling (JSONL, a JSON task list, or CSV), `import` reads one human
//! coder's labels back into `audit_labels`, and `agreement` computes κ between the human coders
//! and of each machine coder against them, into `audit_agreement` and `agreement.md`, `.json`
//! and `.csv`.
//!
//! Bad input (a codebook that does not parse or validate, an unknown study, a store that is
//! not an Agora store or holds no audit, a malformed label file, an option out of range) exits
//! with 2 and writes nothing.

use std::path::{Path, PathBuf};

use agora_analysis::audit::requirements::LoadedRequirements;
use agora_analysis::audit::{self, labels, AuditError, Coder, GateOptions, LabelsError, LexiconCoder, LoadedCodebook};
use agora_engine::Store;
use anyhow::Context as _;

use crate::audit_llm::{self, CoderChoice, LlmCoderOptions};
use crate::BadInput;

#[path = "audit_replicates.rs"]
mod replicates;

#[path = "audit_prefill.rs"]
mod prefill;

/// Arguments of `agora audit`.
#[derive(clap::Args, Debug)]
#[command(args_conflicts_with_subcommands = true)]
pub struct AuditArgs {
    #[command(subcommand)]
    command: Option<AuditCommand>,
    #[command(flatten)]
    run: RunArgs,
}

/// The audit itself (no subcommand).
#[derive(clap::Args, Debug)]
struct RunArgs {
    /// Store file (read, and given the audit's tables).
    #[arg(long, default_value = crate::DEFAULT_STORE)]
    store: PathBuf,
    /// Codebook file (RON; default: the shipped assets/codebooks/default.ron).
    #[arg(long)]
    codebook: Option<PathBuf>,
    /// Output directory for audit.md, audit.json and the CSV tables.
    #[arg(long, default_value = "audit")]
    out: PathBuf,
    /// Only this study's runs.
    #[arg(long)]
    study: Option<String>,
    /// The validation gate.
    #[command(flatten)]
    gate: GateArgs,
    /// Show numbers the gate refuses, labelled unvalidated, instead of refusing them.
    #[arg(long)]
    allow_unvalidated: bool,
    /// The coder: `lexicon` (the codebook's lexicon rules) or `llm:MODEL`, a model declared in
    /// the --models file; an LLM coder must not be an audited model (by name or served id).
    #[arg(long, default_value = "lexicon")]
    coder: CoderChoice,
    /// Models file declaring the LLM coder (`Models(version: 1, models: [...])`, as
    /// `agora run --models` takes).
    #[arg(long)]
    models: Option<PathBuf>,
    /// LLM coder: sampling temperature (default 0).
    #[arg(long)]
    coder_temperature: Option<f64>,
    /// LLM coder: most tokens a reply may have (default: the declaration's max_tokens).
    #[arg(long)]
    coder_max_tokens: Option<u32>,
    /// LLM coder: the seed its requests' sampling seeds are derived from (default 0).
    #[arg(long)]
    coder_seed: Option<u64>,
    /// LLM coder: answer from the store's reply cache only; a request not cached stops the
    /// audit with nothing written.
    #[arg(long)]
    replay: bool,
    /// Requirements file (RON; default: the shipped assets/requirements.ron): each requirement
    /// is tested on the audit's statistics, into audit_requirements and requirements.md/json/csv.
    #[arg(long)]
    requirements: Option<PathBuf>,
}

#[derive(clap::Subcommand, Debug)]
enum AuditCommand {
    /// Write a seeded random sample of coded responses, one record per reasoning sentence, for
    /// human labelling (JSONL for Argilla, a JSON task list for Label Studio, or CSV for both).
    Export(ExportArgs),
    /// Read one human coder's labels (JSONL, JSON or CSV) into the store's audit_labels table.
    Import(ImportArgs),
    /// Cohen's kappa between the human coders, then of each machine coder against the human
    /// reference, per audited model; into audit_agreement and agreement.md/json/csv.
    Agreement(AgreementArgs),
    /// Re-ask a seeded sample of stored decision prompts m times each with fresh sampling
    /// seeds, advancing no game, into audit_replicates (the dependency estimate's data).
    Replicates(replicates::ReplicatesArgs),
    /// Faithfulness by intervention: prefill sampled decisions' closed reasoning with one stated
    /// value inserted or deleted and measure the change in the action (tau per value), into
    /// audit_prefill, audit_faithfulness and faithfulness.md/json/csv.
    Prefill(prefill::PrefillArgs),
}

/// Export formats.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
enum FormatArg {
    /// One JSON object per line (Argilla records).
    Jsonl,
    /// One JSON array of flat objects (Label Studio's task list).
    Json,
    /// CSV with a header row (Label Studio and Argilla).
    Csv,
}

impl FormatArg {
    fn format(self) -> labels::Format {
        match self {
            FormatArg::Jsonl => labels::Format::Jsonl,
            FormatArg::Json => labels::Format::Json,
            FormatArg::Csv => labels::Format::Csv,
        }
    }
}

#[derive(clap::Args, Debug)]
struct ExportArgs {
    /// Store file (audited with `agora audit`).
    #[arg(long, default_value = crate::DEFAULT_STORE)]
    store: PathBuf,
    /// Responses per audited model (all of a model's when it has fewer).
    #[arg(long)]
    sample: usize,
    /// Sampling seed: responses are ranked by SHA-256 of `{seed}:{response_id}`.
    #[arg(long)]
    seed: u64,
    /// File format.
    #[arg(long, value_enum, default_value_t = FormatArg::Jsonl)]
    format: FormatArg,
    /// Output file.
    #[arg(long)]
    out: PathBuf,
    /// The machine coder whose coded responses are sampled (its codes go in `coder_code`).
    #[arg(long, default_value = "lexicon/1")]
    coder: String,
    /// Codebook the responses were coded with (default: the shipped one).
    #[arg(long)]
    codebook: Option<PathBuf>,
    /// Only this model (repeatable).
    #[arg(long)]
    model: Vec<String>,
    /// Put the machine coder and its codes in the records (`coder`, `coder_code`). Exports are
    /// blind without it: a labeller who sees the machine's code anchors on it.
    #[arg(long)]
    show_codes: bool,
    /// Blind export (the default; kept so older scripts run).
    #[arg(long, hide = true, conflicts_with = "show_codes")]
    blind: bool,
}

#[derive(clap::Args, Debug)]
struct ImportArgs {
    /// Store file (audited with `agora audit`).
    #[arg(long, default_value = crate::DEFAULT_STORE)]
    store: PathBuf,
    /// Label file: JSONL, a JSON array of objects, or CSV with a header (by extension, else
    /// by content).
    #[arg(long)]
    labels: PathBuf,
    /// The human coder whose labels the file holds (letters, digits and . _ - @ +).
    #[arg(long)]
    coder_name: String,
    /// Codebook the labels are checked against (default: the shipped one).
    #[arg(long)]
    codebook: Option<PathBuf>,
    /// The field holding the code.
    #[arg(long, default_value = "label")]
    label_field: String,
}

#[derive(clap::Args, Debug)]
struct AgreementArgs {
    /// Store file (audited, with human labels imported).
    #[arg(long, default_value = crate::DEFAULT_STORE)]
    store: PathBuf,
    /// Codebook whose labels and codes are compared (default: the shipped one).
    #[arg(long)]
    codebook: Option<PathBuf>,
    /// Output directory for agreement.md, agreement.json and the CSV tables.
    #[arg(long, default_value = "audit")]
    out: PathBuf,
    /// The validation gate, for the verdicts.
    #[command(flatten)]
    gate: GateArgs,
}

/// The coder-validation gate's rule (docs: "The transcript audit", the validation gate).
#[derive(clap::Args, Debug, Clone)]
pub struct GateArgs {
    /// A model's numbers from the codes count only where the coder's Cohen's kappa against
    /// human labels on that model's text is at least this.
    #[arg(long, default_value_t = audit::DEFAULT_MIN_KAPPA)]
    pub min_kappa: f64,
    /// Fewest responses of the model's text with a human reference for the gate to pass.
    #[arg(long, default_value_t = audit::agreement::DEFAULT_MIN_RESPONSES)]
    pub min_responses: usize,
    /// Fewest sentences of the model's text with a human reference for the gate to pass.
    #[arg(long, default_value_t = audit::agreement::DEFAULT_MIN_SENTENCES)]
    pub min_sentences: usize,
    /// Largest share of the model's responses with reasoning the coder may fail on.
    #[arg(long, default_value_t = audit::agreement::DEFAULT_MAX_CODER_ERRORS)]
    pub max_coder_errors: f64,
}

impl GateArgs {
    /// The gate's options, checked (a bad value is bad input, naming the option).
    pub fn options(&self, allow_unvalidated: bool) -> Result<GateOptions, BadInput> {
        let g = GateOptions {
            min_kappa: self.min_kappa,
            min_responses: self.min_responses,
            min_sentences: self.min_sentences,
            max_coder_errors: self.max_coder_errors,
            allow_unvalidated,
            ..GateOptions::default()
        };
        g.check().map_err(BadInput)?;
        Ok(g)
    }
}

/// Runs `agora audit` or one of its subcommands.
pub fn main(args: AuditArgs) -> anyhow::Result<()> {
    match args.command {
        None => run(args.run),
        Some(AuditCommand::Export(a)) => export(a),
        Some(AuditCommand::Import(a)) => import(a),
        Some(AuditCommand::Agreement(a)) => agreement(a),
        Some(AuditCommand::Replicates(a)) => replicates::main(a),
        Some(AuditCommand::Prefill(a)) => prefill::main(a),
    }
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

fn run(args: RunArgs) -> anyhow::Result<()> {
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
    let gate = args.gate.options(args.allow_unvalidated)?;
    check_store(&args.store)?;
    // A user's requirement naming a model, environment, cell or statistic the store does not
    // hold could never be estimated: refused before anything is written.
    if let Some(p) = &args.requirements {
        let conn = rusqlite::Connection::open_with_flags(&args.store, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .with_context(|| format!("opening {}", args.store.display()))?;
        audit::requirements::check_store(&requirements.requirements, &conn)
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
        audit::audit(&args.store, &codebook, coder, args.study.as_deref(), gate).map_err(|e: AuditError| {
            if e.is_bad_input() {
                BadInput(e.to_string()).into()
            } else {
                anyhow::Error::new(e)
            }
        })?;
    std::fs::create_dir_all(&args.out).with_context(|| format!("creating {}", args.out.display()))?;
    std::fs::write(args.out.join("audit.md"), result.to_markdown())?;
    std::fs::write(args.out.join("audit.json"), serde_json::to_string_pretty(&result)?)?;
    for t in result.tables() {
        std::fs::write(args.out.join(format!("{}.csv", t.name)), agora_analysis::table::to_csv(&t))?;
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
    replicates::dependency(&args.store, &codebook, coder, args.study.as_deref(), gate, &args.out)?;
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
    let samples = agora_analysis::motives::read_store(&conn)?;
    if samples.is_empty() {
        return Ok(());
    }
    let mut json = Vec::new();
    let mut md = String::from(
        "# Motive regressions (binary allocation, the SUVA audit paper Eq. 240.5, CR1 by payoff configuration)\n\n",
    );
    for s in &samples {
        let fit = agora_analysis::motives::motive_report(&s.decisions, 0.05);
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
    std::fs::write(out.join("motives.json"), serde_json::to_string_pretty(&json)?)?;
    std::fs::write(out.join("motives.md"), md)?;
    println!("motive regressions: {} binary-allocation condition(s); motives.md/json", samples.len());
    Ok(())
}

/// Tests the requirements on the audit and the store's dependency estimates, into
/// `audit_requirements` and requirements.md/json/csv.
fn write_requirements(
    store: &Path,
    requirements: &LoadedRequirements,
    result: &audit::Audit,
    out: &Path,
) -> anyhow::Result<()> {
    let report = audit::requirements::run(store, requirements, result)?;
    std::fs::write(out.join("requirements.md"), report.to_markdown())?;
    std::fs::write(out.join("requirements.json"), serde_json::to_string_pretty(&report)?)?;
    std::fs::write(out.join("requirements.csv"), agora_analysis::table::to_csv(&report.table()))?;
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

fn export(args: ExportArgs) -> anyhow::Result<()> {
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
    let text = export.render(args.format.format());
    if let Some(dir) = args.out.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    std::fs::write(&args.out, text).with_context(|| format!("writing {}", args.out.display()))?;
    let per_model: Vec<String> =
        export.per_model.iter().map(|(m, (n, of))| format!("{m}: {n} of {of} responses")).collect();
    println!(
        "{} sentences of {} sampled responses (seed {}; {}) written to {} as {}{}",
        export.records.len(),
        export.per_model.values().map(|(n, _)| n).sum::<usize>(),
        args.seed,
        per_model.join(", "),
        args.out.display(),
        args.format.format().as_str(),
        if args.show_codes { ", with the machine's codes" } else { ", blind" }
    );
    Ok(())
}

fn import(args: ImportArgs) -> anyhow::Result<()> {
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

fn agreement(args: AgreementArgs) -> anyhow::Result<()> {
    let codebook = load_codebook(args.codebook.as_deref())?;
    let gate = args.gate.options(false)?;
    check_store(&args.store)?;
    let result = audit::agreement::agreement(&args.store, &codebook, &gate).map_err(labels_error)?;
    std::fs::create_dir_all(&args.out).with_context(|| format!("creating {}", args.out.display()))?;
    std::fs::write(args.out.join("agreement.md"), result.to_markdown())?;
    std::fs::write(args.out.join("agreement.json"), serde_json::to_string_pretty(&result)?)?;
    for t in result.tables() {
        std::fs::write(args.out.join(format!("{}.csv", t.name)), agora_analysis::table::to_csv(&t))?;
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
