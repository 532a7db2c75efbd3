//! `agora audit`: the command line of the transcript audit (the work is in `agora_audit` and
//! `agora_audit`).
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

use std::path::PathBuf;

use agora_audit::{self, labels, GateOptions};

use agora_audit::llm_coder::CoderChoice;
use agora_audit::{command, prefill, replicates};

use crate::BadInput;

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
    #[arg(long, default_value = "out/audit")]
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
    /// human labelling (JSONL for Argilla, a JSON task list for Label Studio, or CSV for both);
    /// the export is recorded in audit_exports and its id written into every record.
    Export(ExportArgs),
    /// Read one human coder's labels (JSONL, JSON or CSV) into the store's audit_labels table;
    /// only labels of a blind export recorded in the store are accepted.
    Import(ImportArgs),
    /// Cohen's kappa between the human coders, then of each machine coder against the human
    /// reference, per audited model; into audit_agreement and agreement.md/json/csv.
    Agreement(AgreementArgs),
    /// Re-ask a seeded sample of stored decision prompts m times each with fresh sampling
    /// seeds, advancing no game, into audit_replicates (the dependency estimate's data).
    Replicates(ReplicatesArgs),
    /// Faithfulness by intervention: prefill sampled decisions' closed reasoning with one stated
    /// value inserted or deleted and measure the change in the action (tau per value), into
    /// audit_prefill, audit_faithfulness and faithfulness.md/json/csv.
    Prefill(PrefillArgs),
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
    /// Put the machine coder and its codes in the records (`coder`, `coder_code`), for checking
    /// a coder. Exports are blind without it: a labeller who sees the machine's code anchors on
    /// it, so `agora audit import` refuses labels of an export made with it.
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
    #[arg(long, default_value = "out/audit")]
    out: PathBuf,
    /// The validation gate, for the verdicts.
    #[command(flatten)]
    gate: GateArgs,
}

/// Arguments of `agora audit prefill`.
#[derive(clap::Args, Debug)]
pub struct PrefillArgs {
    /// Store file (audited with `agora audit`; the prefilled calls and estimates are added).
    #[arg(long, default_value = crate::DEFAULT_STORE)]
    store: PathBuf,
    /// Models file declaring the audited models, with `prefill` where their server accepts an
    /// assistant prefill.
    #[arg(long)]
    models: PathBuf,
    /// Decisions per model, environment, arm and cell (all of a group's when it has fewer):
    /// the estimates are kept apart per arm and cell, and so is the sample.
    #[arg(long)]
    sample: usize,
    /// Seed of the sample and of the calls' sampling seeds.
    #[arg(long)]
    seed: u64,
    /// Calls per decision and edit (insert, replace, delete).
    #[arg(long, default_value_t = 4)]
    m: usize,
    /// Only decisions in this environment (repeatable), e.g. `binary-allocation`.
    #[arg(long)]
    environment: Vec<String>,
    /// Only decisions in this cell (repeatable), e.g. `baseline`, `step-by-step`.
    #[arg(long)]
    cell: Vec<String>,
    /// The coder whose codes choose the edits.
    #[arg(long, default_value = "lexicon/1")]
    coder: String,
    /// Codebook the decisions were coded with (default: the shipped one).
    #[arg(long)]
    codebook: Option<PathBuf>,
    /// Only this value (repeatable; default: every value code of the codebook).
    #[arg(long)]
    value: Vec<String>,
    /// Most tokens the continuation may have.
    #[arg(long, default_value_t = 16)]
    max_tokens: u32,
    /// Output directory for faithfulness.md, .json and .csv.
    #[arg(long, default_value = "out/audit")]
    out: PathBuf,
    /// The validation gate.
    #[command(flatten)]
    gate: GateArgs,
    /// Intervene for models whose coder the gate refuses, labelling the rows unvalidated.
    #[arg(long)]
    allow_unvalidated: bool,
    /// Answer from the store's reply cache only.
    #[arg(long)]
    replay: bool,
}

/// Arguments of `agora audit replicates`.
#[derive(clap::Args, Debug)]
pub struct ReplicatesArgs {
    /// Store file (its decision transcripts are sampled; the replicates are added to it).
    #[arg(long, default_value = crate::DEFAULT_STORE)]
    store: PathBuf,
    /// Models file declaring the audited models (`Models(version: 1, models: [...])`): where
    /// their servers are. Name and served id must match the store's transcripts.
    #[arg(long)]
    models: PathBuf,
    /// Prompts per model (all of a model's when it has fewer).
    #[arg(long)]
    sample: usize,
    /// Replicates per prompt (at least 2).
    #[arg(long)]
    m: usize,
    /// Seed of the sample (decisions ranked by SHA-256 of `{seed}:{response_id}`) and of the
    /// replicates' sampling seeds.
    #[arg(long)]
    seed: u64,
    /// Only this study's runs.
    #[arg(long)]
    study: Option<String>,
    /// Only this model (repeatable; default: every model with decisions in scope).
    #[arg(long)]
    model: Vec<String>,
    /// Only decisions in this environment (repeatable), e.g. `binary-allocation`.
    #[arg(long)]
    environment: Vec<String>,
    /// Only decisions in this cell (repeatable), e.g. `baseline`, `step-by-step`.
    #[arg(long)]
    cell: Vec<String>,
    /// Only decisions under this condition (repeatable): C0, C1, C2 or C3.
    #[arg(long)]
    variant: Vec<String>,
    /// Only decisions of this role (repeatable), e.g. `dictator`.
    #[arg(long)]
    role: Vec<String>,
    /// Only decisions whose original reply has pre-action reasoning to code, as `agora audit`
    /// found (the store must have been audited): a replicate of a decision without reasoning
    /// has nothing for the dependency estimate to code.
    #[arg(long)]
    with_reasoning: bool,
    /// Answer from the store's reply cache only; a replicate not cached stops the command with
    /// nothing written.
    #[arg(long)]
    replay: bool,
}

impl PrefillArgs {
    /// The library's options, the gate checked (a bad value is bad input, naming the option).
    fn options(self) -> Result<prefill::PrefillOptions, BadInput> {
        let gate = self.gate.options(self.allow_unvalidated)?;
        Ok(prefill::PrefillOptions {
            store: self.store,
            models: self.models,
            sample: self.sample,
            seed: self.seed,
            m: self.m,
            environment: self.environment,
            cell: self.cell,
            coder: self.coder,
            codebook: self.codebook,
            value: self.value,
            max_tokens: self.max_tokens,
            out: self.out,
            gate,
            allow_unvalidated: self.allow_unvalidated,
            replay: self.replay,
        })
    }
}

impl From<ReplicatesArgs> for replicates::ReplicatesOptions {
    fn from(a: ReplicatesArgs) -> Self {
        replicates::ReplicatesOptions {
            store: a.store,
            models: a.models,
            sample: a.sample,
            m: a.m,
            seed: a.seed,
            study: a.study,
            model: a.model,
            environment: a.environment,
            cell: a.cell,
            variant: a.variant,
            role: a.role,
            with_reasoning: a.with_reasoning,
            replay: a.replay,
        }
    }
}

/// The coder-validation gate's rule (docs: "The transcript audit", the validation gate).
#[derive(clap::Args, Debug, Clone)]
pub struct GateArgs {
    /// A model's numbers from the codes count only where the coder's Cohen's kappa against
    /// human labels on that model's text is at least this.
    #[arg(long, default_value_t = agora_audit::DEFAULT_MIN_KAPPA)]
    pub min_kappa: f64,
    /// Fewest responses of the model's text with a human reference for the gate to pass.
    #[arg(long, default_value_t = agora_audit::agreement::DEFAULT_MIN_RESPONSES)]
    pub min_responses: usize,
    /// Fewest sentences of the model's text with a human reference for the gate to pass.
    #[arg(long, default_value_t = agora_audit::agreement::DEFAULT_MIN_SENTENCES)]
    pub min_sentences: usize,
    /// Largest share of the model's responses with reasoning the coder may fail on.
    #[arg(long, default_value_t = agora_audit::agreement::DEFAULT_MAX_CODER_ERRORS)]
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
    // The audit's steps report no count of their own: a line every few seconds in a log says
    // which step is working and for how long.
    let (label, work) = match &args.command {
        None => ("audit", "splitting and coding the transcripts"),
        Some(AuditCommand::Export(_)) => ("audit export", "sampling the coded responses"),
        Some(AuditCommand::Import(_)) => ("audit import", "checking the labels"),
        Some(AuditCommand::Agreement(_)) => ("audit agreement", "computing the agreement"),
        Some(AuditCommand::Replicates(_)) => ("audit replicates", "asking the replicates"),
        Some(AuditCommand::Prefill(_)) => ("audit prefill", "asking the prefilled decisions"),
    };
    let progress = crate::progress::Progress::start(label, None, "");
    progress.detail(work);
    // The library prints nothing: its notes go to standard error, its summary to standard
    // output, once the work is done.
    let result: Result<(Vec<String>, String), agora_audit::Error> = match args.command {
        None => command::run(args.run.options()?).map(|o| (o.notes.clone(), o.to_string())),
        Some(AuditCommand::Export(a)) => command::export(a.into()).map(|o| (Vec::new(), o.to_string())),
        Some(AuditCommand::Import(a)) => command::import(a.into()).map(|o| (Vec::new(), o.to_string())),
        Some(AuditCommand::Agreement(a)) => command::agreement(a.options()?).map(|o| (o.notes.clone(), o.to_string())),
        Some(AuditCommand::Replicates(a)) => replicates::main(a.into()).map(|o| (Vec::new(), o.to_string())),
        Some(AuditCommand::Prefill(a)) => prefill::main(a.options()?).map(|o| (o.notes.clone(), o.to_string())),
    };
    let (notes, summary) = result?;
    progress.finish();
    for note in notes {
        eprintln!("note: {note}");
    }
    print!("{summary}");
    Ok(())
}

impl RunArgs {
    fn options(self) -> Result<command::RunOptions, BadInput> {
        Ok(command::RunOptions {
            gate: self.gate.options(self.allow_unvalidated)?,
            store: self.store,
            codebook: self.codebook,
            out: self.out,
            study: self.study,
            coder: self.coder,
            models: self.models,
            coder_temperature: self.coder_temperature,
            coder_max_tokens: self.coder_max_tokens,
            coder_seed: self.coder_seed,
            replay: self.replay,
            requirements: self.requirements,
        })
    }
}

impl From<ExportArgs> for command::ExportOptions {
    fn from(a: ExportArgs) -> Self {
        command::ExportOptions {
            store: a.store,
            sample: a.sample,
            seed: a.seed,
            format: a.format.format(),
            out: a.out,
            coder: a.coder,
            codebook: a.codebook,
            model: a.model,
            show_codes: a.show_codes,
        }
    }
}

impl From<ImportArgs> for command::ImportOptions {
    fn from(a: ImportArgs) -> Self {
        command::ImportOptions {
            store: a.store,
            labels: a.labels,
            coder_name: a.coder_name,
            codebook: a.codebook,
            label_field: a.label_field,
        }
    }
}

impl AgreementArgs {
    fn options(self) -> Result<command::AgreementOptions, BadInput> {
        Ok(command::AgreementOptions {
            gate: self.gate.options(false)?,
            store: self.store,
            codebook: self.codebook,
            out: self.out,
        })
    }
}
