//! `agora audit` over a store: the audit itself ([`run`]) and the label workflow the gate
//! needs ([`export`], [`import`], [`agreement`]). The command line hands each its options and
//! prints what it returns (each outcome's `Display` is the command's summary; its notes go to
//! standard error); bad input is [`Error::BadInput`] (exit 2, nothing written).

use std::path::{Path, PathBuf};

use std::fmt;

use crate::error::{Error, Result};
use crate::llm_coder::{self as audit_llm, CoderChoice, LlmCoderOptions};
use crate::requirements::LoadedRequirements;
use crate::{labels, Coder, GateOptions, LexiconCoder, LoadedCodebook};
use agora_engine::Store;

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

fn load_codebook(path: Option<&Path>) -> Result<LoadedCodebook> {
    Ok(match path {
        Some(p) => LoadedCodebook::read(p).map_err(|e| Error::BadInput(e.to_string()))?,
        None => LoadedCodebook::default_codebook(),
    })
}

/// Refuses a missing store, or a file that is not an intact Agora store (exit 2); the store,
/// opened and checked, gives the later steps their connections.
fn check_store(store: &Path) -> Result<Store> {
    if !store.exists() {
        return Err(Error::BadInput(format!("store {} does not exist", store.display())));
    }
    Ok(Store::open(store)?)
}

/// The note said where a codebook lacks values the claims' mechanisms name: under another
/// codebook a claim whose values it lacks cannot find them stated in these codes (said, not
/// refused).
fn claims_note(codebook: &LoadedCodebook) -> Option<String> {
    crate::codebook::check_claims(agora_analysis::claims::ClaimTable::shipped(), &codebook.codebook)
        .err()
        .map(|e| format!("{e}; Tier 3 cannot find that value in this coder's codes"))
}

/// Creates `dir` and writes each `(name, text)` into it.
fn write_files(dir: &Path, files: impl IntoIterator<Item = (String, String)>) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(Error::write(dir))?;
    for (name, text) in files {
        let path = dir.join(name);
        crate::write_named(&path, text).map_err(Error::write(&path))?;
    }
    Ok(())
}

/// A report's markdown, JSON and CSV tables under `stem`.
fn report_files<T: serde::Serialize>(
    stem: &str,
    markdown: String,
    report: &T,
    tables: Vec<agora_analysis::table::Table>,
) -> Result<Vec<(String, String)>> {
    let mut files =
        vec![(format!("{stem}.md"), markdown), (format!("{stem}.json"), serde_json::to_string_pretty(report)?)];
    files.extend(tables.iter().map(|t| (format!("{}.csv", t.name), agora_analysis::table::to_csv(t))));
    Ok(files)
}

/// The LLM coder's calls, for the summary.
#[derive(Clone, Debug)]
pub struct CoderCalls {
    /// The coder's id.
    pub id: String,
    /// Replies read from the reply cache.
    pub cached: usize,
    /// Requests sent to a server.
    pub sent: usize,
    /// The coder's identity (model, settings).
    pub identity: String,
    /// Where it was served.
    pub serving: String,
}

/// What `agora audit` did.
#[derive(Debug)]
pub struct RunOutcome {
    /// Said beside the result (a codebook lacking a claim's values, stale tables dropped).
    pub notes: Vec<String>,
    /// The audit, as written to audit.json.
    pub audit: crate::Audit,
    /// Seconds the coding took.
    pub seconds: f64,
    /// The LLM coder's calls (none for the lexicon coder).
    pub coder_calls: Option<CoderCalls>,
    /// The dependency step.
    pub dependency: DependencyOutcome,
    /// The requirements' verdicts.
    pub requirements: RequirementsOutcome,
    /// Binary-allocation conditions given a motive regression.
    pub motives: usize,
    /// The store.
    pub store: PathBuf,
    /// The output directory.
    pub out: PathBuf,
}

impl fmt::Display for RunOutcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let result = &self.audit;
        let t = &result.total;
        writeln!(
            f,
            "{} responses audited in {:.2} s with {} and codebook {} v{}: {} with pre-action reasoning (coded), {} without (counted), {} with a post-hoc rationale (never coded), {} fallbacks skipped",
            t.responses,
            self.seconds,
            result.coder,
            result.codebook.name,
            result.codebook.version,
            t.with_reasoning,
            t.without_reasoning,
            t.with_post_hoc,
            t.fallbacks_skipped
        )?;
        if t.responses > 0 && t.with_reasoning == 0 {
            // Every table below would be empty: say why, plainly, instead.
            writeln!(
                f,
                "no codeable reasoning in this store: none of its {} responses wrote reasoning before its answer, so \
                 no value can be coded and the occurrence, dependency and requirement tables are empty. Run a study \
                 whose decisions ask for pre-action reasoning (the step-by-step cell, or a game that asks for it, as \
                 the binary-allocation game does).",
                t.responses
            )?;
        }
        if let Some(c) = &self.coder_calls {
            writeln!(
                f,
                "coder {}: {} replies from the reply cache, {} requests sent; identity {}; serving {}",
                c.id, c.cached, c.sent, c.identity, c.serving
            )?;
        }
        for v in &result.validation {
            writeln!(f, "gate on {} for model {}: {}", v.coder, v.model, v.label())?;
        }
        write!(f, "{}", self.dependency)?;
        write!(f, "{}", self.requirements)?;
        if self.motives > 0 {
            writeln!(f, "motive regressions: {} binary-allocation condition(s); motives.md/json", self.motives)?;
        }
        writeln!(
            f,
            "tables audit_responses, audit_sentences, audit_segments, audit_coders in {}; report in {}",
            self.store.display(),
            self.out.display()
        )
    }
}

/// Audits the store: codes the reasoning, writes the audit's tables and outputs.
pub fn run(args: RunOptions) -> Result<RunOutcome> {
    let codebook = load_codebook(args.codebook.as_deref())?;
    // A user's requirements must name the codebook's values; the shipped ones, written for the
    // default codebook, read `not estimable` under another.
    let requirements = match &args.requirements {
        Some(p) => {
            let r = LoadedRequirements::read(p).map_err(|e| Error::BadInput(e.to_string()))?;
            r.check_codebook(&codebook.codebook).map_err(|e| Error::BadInput(e.to_string()))?;
            r
        }
        None => LoadedRequirements::default_requirements(),
    };
    let mut notes: Vec<String> = claims_note(&codebook).into_iter().collect();
    let gate = args.gate;
    let store = check_store(&args.store)?;
    // A user's requirement naming a model, environment, cell or statistic the store does not
    // hold could never be estimated: refused before anything is written.
    if let Some(p) = &args.requirements {
        crate::requirements::check_store(&requirements.requirements, store.connection()).map_err(|e| {
            Error::BadInput(format!("requirements {} on store {}: {e}", p.display(), args.store.display()))
        })?;
    }
    // An `--out` that cannot become a directory is refused before anything is written to the
    // store, so that it leaves the store as it was.
    if let Some(blocker) = args.out.ancestors().find(|a| a.exists() && !a.is_dir()) {
        return Err(Error::BadInput(format!(
            "--out {}: cannot be a directory ({} is a file)",
            args.out.display(),
            blocker.display()
        )));
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
                return Err(Error::BadInput(format!(
                    "{} appl{} to an LLM coder only (--coder llm:MODEL)",
                    given.join(", "),
                    if given.len() == 1 { "ies" } else { "y" }
                )));
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
            Some(audit_llm::build(&store, args.study.as_deref(), models, name, &codebook.codebook, &options)?)
        }
    };
    let lexicon = LexiconCoder::new(&codebook.codebook);
    let coder: &dyn Coder = match &llm {
        Some(c) => c,
        None => &lexicon,
    };
    let started = std::time::Instant::now();
    let result = crate::audit(&args.store, &codebook, coder, args.study.as_deref(), gate)?;
    let seconds = started.elapsed().as_secs_f64();
    write_files(&args.out, report_files("audit", result.to_markdown(), &result, result.tables())?)?;
    let coder_calls = llm.as_ref().map(|llm| {
        let (cached, sent) = llm.calls();
        CoderCalls {
            id: coder.id(),
            cached,
            sent,
            identity: coder.identity().to_string(),
            serving: coder.serving().to_string(),
        }
    });
    notes.extend(drop_stale_estimates(&store)?);
    let dependency = dependency(&args.store, &codebook, coder, args.study.as_deref(), gate, &args.out)?;
    let requirements = write_requirements(&args.store, &requirements, &result, &args.out)?;
    let motives = write_motives(&store, &args.out)?;
    Ok(RunOutcome {
        notes,
        audit: result,
        seconds,
        coder_calls,
        dependency,
        requirements,
        motives,
        store: args.store,
        out: args.out,
    })
}

/// The motive regression of the SUVA audit paper (Eq. 240.5, with the group and reciprocity extensions;
/// CR1 clustered by payoff configuration) for every binary-allocation condition of the store,
/// into motives.json and motives.md; nothing is written when the store has none. Returns how
/// many conditions it estimated.
fn write_motives(store: &Store, out: &Path) -> Result<usize> {
    let samples = crate::motives::read_store(store.connection()).map_err(Error::sql(store.path()))?;
    if samples.is_empty() {
        return Ok(0);
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
    write_files(
        out,
        [("motives.json".to_string(), serde_json::to_string_pretty(&json)?), ("motives.md".to_string(), md)],
    )?;
    Ok(samples.len())
}

/// The requirements' verdicts, for the summary.
#[derive(Clone, Debug)]
pub struct RequirementsOutcome {
    /// The requirements' name.
    pub name: String,
    /// The file they were read from.
    pub path: String,
    /// Requirements that pass.
    pub pass: usize,
    /// Requirements that fail.
    pub fail: usize,
    /// Requirements that cannot be estimated.
    pub not_estimable: usize,
    /// Requirements the gate refuses.
    pub refused: usize,
}

impl fmt::Display for RequirementsOutcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "requirements {} ({}): {} pass, {} fail, {} not estimable, {} refused by the gate; table audit_requirements; requirements.md/json/csv",
            self.name, self.path, self.pass, self.fail, self.not_estimable, self.refused
        )
    }
}

/// Tests the requirements on the audit and the store's dependency estimates, into
/// `audit_requirements` and requirements.md/json/csv.
fn write_requirements(
    store: &Path,
    requirements: &LoadedRequirements,
    result: &crate::Audit,
    out: &Path,
) -> Result<RequirementsOutcome> {
    let report = crate::requirements::run(store, requirements, result)?;
    write_files(
        out,
        [
            ("requirements.md".to_string(), report.to_markdown()),
            ("requirements.json".to_string(), serde_json::to_string_pretty(&report)?),
            ("requirements.csv".to_string(), agora_analysis::table::to_csv(&report.table())),
        ],
    )?;
    let count = |v: &str| report.verdicts.iter().filter(|x| x.verdict == v).count();
    Ok(RequirementsOutcome {
        name: report.name.clone(),
        path: report.path.clone(),
        pass: count("pass"),
        fail: count("fail"),
        not_estimable: count("not estimable"),
        refused: count("refused"),
    })
}

/// What `agora audit export` wrote.
#[derive(Clone, Debug)]
pub struct ExportOutcome {
    /// Sentences written.
    pub sentences: usize,
    /// Responses sampled, per model: (sampled, of how many).
    pub per_model: Vec<(String, usize, usize)>,
    /// The sampling seed.
    pub seed: u64,
    /// The file written.
    pub out: PathBuf,
    /// Its format.
    pub format: labels::Format,
    /// Whether the machine's codes are in it.
    pub show_codes: bool,
    /// The export's id, recorded in the store.
    pub id: String,
    /// The store.
    pub store: PathBuf,
    /// Whether the store's record of the export is new.
    pub created: String,
}

impl fmt::Display for ExportOutcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let per_model: Vec<String> =
            self.per_model.iter().map(|(m, n, of)| format!("{m}: {n} of {of} responses")).collect();
        writeln!(
            f,
            "{} sentences of {} sampled responses (seed {}; {}) written to {} as {}{}; export {} recorded in {} ({})",
            self.sentences,
            self.per_model.iter().map(|(_, n, _)| n).sum::<usize>(),
            self.seed,
            per_model.join(", "),
            self.out.display(),
            self.format.as_str(),
            if self.show_codes {
                ", with the machine's codes (not for labelling: its labels are refused on import)"
            } else {
                ", blind"
            },
            self.id,
            self.store.display(),
            self.created
        )
    }
}

/// Writes a seeded sample of coded responses for human labelling.
pub fn export(args: ExportOptions) -> Result<ExportOutcome> {
    let codebook = load_codebook(args.codebook.as_deref())?;
    check_store(&args.store)?;
    let options = labels::ExportOptions {
        sample: args.sample,
        seed: args.seed,
        coder: args.coder.clone(),
        models: args.model.clone(),
        blind: !args.show_codes,
    };
    let export = labels::export(&args.store, &codebook, &options)?;
    let text = export.render(args.format);
    if let Some(dir) = args.out.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(Error::write(dir))?;
    }
    // The file goes to a temporary name, the export is recorded in the store, then the file is
    // renamed: a file with an export id the store does not hold is never left behind.
    let mut partial = args.out.clone().into_os_string();
    partial.push(".partial");
    let partial = PathBuf::from(partial);
    crate::write_named(&partial, text).map_err(Error::write(&partial))?;
    let created = match labels::record_export(&args.store, &export) {
        Ok(created) => created,
        Err(e) => {
            let _ = std::fs::remove_file(&partial);
            return Err(e.into());
        }
    };
    std::fs::rename(&partial, &args.out).map_err(Error::write(&args.out))?;
    Ok(ExportOutcome {
        sentences: export.records.len(),
        per_model: export.per_model.iter().map(|(m, (n, of))| (m.clone(), *n, *of)).collect(),
        seed: args.seed,
        out: args.out,
        format: args.format,
        show_codes: args.show_codes,
        id: export.id.clone(),
        store: args.store,
        created,
    })
}

/// What `agora audit import` read.
#[derive(Clone, Debug)]
pub struct ImportOutcome {
    /// The import, as counted.
    pub imported: labels::Imported,
    /// The label file.
    pub labels: PathBuf,
    /// The codebook's name and version.
    pub codebook: (String, u32),
    /// The store.
    pub store: PathBuf,
}

impl fmt::Display for ImportOutcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let done = &self.imported;
        writeln!(
            f,
            "{} labels by {} imported from {} ({}): {} new, {} changed, {} unchanged; {} records without a label skipped; {} labels by {} with codebook {} v{} in {}",
            done.labels,
            done.coder,
            self.labels.display(),
            done.format.as_str(),
            done.labels - done.changed - done.unchanged,
            done.changed,
            done.unchanged,
            done.unlabelled,
            done.total,
            done.coder,
            self.codebook.0,
            self.codebook.1,
            self.store.display()
        )
    }
}

/// Reads one human coder's labels into the store.
pub fn import(args: ImportOptions) -> Result<ImportOutcome> {
    let codebook = load_codebook(args.codebook.as_deref())?;
    labels::check_coder_name(&args.coder_name).map_err(Error::BadInput)?;
    check_store(&args.store)?;
    let imported = labels::import(&args.store, &codebook, &args.labels, &args.coder_name, &args.label_field, None)?;
    Ok(ImportOutcome {
        imported,
        labels: args.labels,
        codebook: (codebook.codebook.name.clone(), codebook.codebook.version),
        store: args.store,
    })
}

/// What `agora audit agreement` computed.
#[derive(Debug)]
pub struct AgreementOutcome {
    /// Said beside the result (a codebook lacking a claim's values).
    pub notes: Vec<String>,
    /// The agreement, as written to agreement.json.
    pub agreement: crate::Agreement,
    /// The store.
    pub store: PathBuf,
    /// The output directory.
    pub out: PathBuf,
}

impl fmt::Display for AgreementOutcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for r in &self.agreement.rows {
            writeln!(
                f,
                "{} {} vs {} on {}: n = {}, kappa = {}{}",
                r.kind,
                r.coder,
                r.reference,
                r.model,
                r.n,
                r.kappa.map_or_else(|| "-".to_string(), |k| format!("{k:.3}")),
                r.verdict.as_ref().map(|v| format!(" ({v})")).unwrap_or_default()
            )?;
        }
        writeln!(f, "table audit_agreement in {}; report in {}", self.store.display(), self.out.display())
    }
}

/// Computes the agreement between coders and the gate's verdicts.
pub fn agreement(args: AgreementOptions) -> Result<AgreementOutcome> {
    let codebook = load_codebook(args.codebook.as_deref())?;
    let notes: Vec<String> = claims_note(&codebook).into_iter().collect();
    let gate = args.gate;
    check_store(&args.store)?;
    let result = crate::agreement::agreement(&args.store, &codebook, &gate)?;
    write_files(&args.out, report_files("agreement", result.to_markdown(), &result, result.tables())?)?;
    Ok(AgreementOutcome { notes, agreement: result, store: args.store, out: args.out })
}

/// Drops the estimate tables of an older layout, whose rows pool the cells and arms of a game
/// (issue 39): `audit_dependency` (rebuilt at once by the dependency step, from the coded
/// replicates) and `audit_faithfulness` with `audit_prefill` (rebuilt by `agora audit
/// prefill`), so that the ladder never reads an estimate pooled over conditions. Returns a
/// note for each table it dropped.
fn drop_stale_estimates(store: &Store) -> Result<Vec<String>> {
    let sql = Error::sql(store.path());
    let conn = store.connect()?;
    conn.busy_timeout(std::time::Duration::from_secs(60)).map_err(&sql)?;
    let tx = conn.unchecked_transaction().map_err(&sql)?;
    let dependency = crate::dependency::drop_stale(&tx).map_err(&sql)?;
    let faithfulness = crate::faithfulness::drop_stale(&tx).map_err(&sql)?;
    tx.commit().map_err(&sql)?;
    let mut notes = Vec::new();
    if dependency {
        notes.push(format!(
            "store {}: audit_dependency predated the per-arm, per-cell estimates (no arm or cell column): \
             dropped; rebuilt below from the coded replicates (other coders and studies: run `agora audit` for them)",
            store.path().display()
        ));
    }
    for table in faithfulness {
        notes.push(format!(
            "store {}: {table} predated the per-arm, per-cell estimates (no arm, cell or design column): \
             dropped; run `agora audit prefill` to rebuild it",
            store.path().display()
        ));
    }
    Ok(notes)
}

/// The dependency step, for the summary.
#[derive(Clone, Debug)]
pub enum DependencyOutcome {
    /// The store holds no replicates: nothing was estimated.
    NoReplicates,
    /// The estimates written.
    Estimated {
        /// Replicates in the store.
        replicates: usize,
        /// Of them, coded.
        coded: usize,
        /// Rows estimated.
        estimated: usize,
        /// Rows not identified or not estimated.
        not_estimated: usize,
        /// Rows the gate refuses.
        refused: usize,
    },
}

impl fmt::Display for DependencyOutcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DependencyOutcome::NoReplicates => {
                writeln!(f, "dependency: no replicates in the store (`agora audit replicates` asks them)")
            }
            DependencyOutcome::Estimated { replicates, coded, estimated, not_estimated, refused } => writeln!(
                f,
                "dependency: {replicates} replicates, {coded} coded; {estimated} estimates, {not_estimated} not identified or not estimated, {refused} refused by the gate; tables audit_replicate_responses, audit_dependency; dependency.md/json/csv"
            ),
        }
    }
}

/// The dependency step of `agora audit`: codes the store's replicates with the audit's coder,
/// estimates the dependency of the action on the stated values and writes `dependency.md`,
/// `.json` and `.csv` into `out` ([`crate::dependency`]); does nothing where the store holds no
/// replicates.
pub fn dependency(
    store: &Path,
    codebook: &crate::LoadedCodebook,
    coder: &dyn crate::Coder,
    study: Option<&str>,
    gate: crate::GateOptions,
    out: &Path,
) -> Result<DependencyOutcome> {
    let Some(d) = crate::dependency::dependency(store, codebook, coder, study, gate)? else {
        return Ok(DependencyOutcome::NoReplicates);
    };
    write_files(out, report_files("dependency", d.to_markdown(), &d, vec![d.table()])?)?;
    let estimated = d.rows.iter().filter(|r| r.status == "estimated").count();
    let refused = d.rows.iter().filter(|r| r.status == "refused").count();
    Ok(DependencyOutcome::Estimated {
        replicates: d.replicates,
        coded: d.coded,
        estimated,
        not_estimated: d.rows.len() - estimated - refused,
        refused,
    })
}
