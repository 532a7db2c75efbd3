//! `agora audit`: the transcript audit of a store (the work is in `agora_analysis::audit`).
//!
//! Reads the store's terminal decision transcripts, splits each reply into pre-action
//! reasoning, action and post-hoc rationale, codes the reasoning's sentences with the lexicon
//! coder against a codebook, writes the `audit_*` tables into the store and `audit.md`,
//! `audit.json` and the CSV tables into the output directory. A codebook that does not parse or
//! validate, an unknown study or a store that is not an Agora store is bad input (exit 2), and
//! nothing is written.

use std::path::PathBuf;

use agora_analysis::audit::{self, AuditError, LexiconCoder, LoadedCodebook};
use agora_engine::Store;
use anyhow::Context as _;

use crate::BadInput;

/// Arguments of `agora audit`.
#[derive(clap::Args, Debug)]
pub struct AuditArgs {
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
}

/// Runs the audit.
pub fn main(args: AuditArgs) -> anyhow::Result<()> {
    let codebook = match &args.codebook {
        Some(path) => LoadedCodebook::read(path).map_err(|e| BadInput(e.to_string()))?,
        None => LoadedCodebook::default_codebook(),
    };
    if !args.store.exists() {
        return Err(BadInput(format!("store {} does not exist", args.store.display())).into());
    }
    // Refuses a file that is not an intact Agora store (exit 2), and upgrades an old layout.
    drop(Store::open(&args.store)?);
    let coder = LexiconCoder::new(&codebook.codebook);
    let started = std::time::Instant::now();
    let result = audit::audit(&args.store, &codebook, &coder, args.study.as_deref()).map_err(|e: AuditError| {
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
        std::fs::write(args.out.join(format!("{}.csv", t.name)), agora_analysis::tables::to_csv(&t))?;
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
    println!(
        "tables audit_responses, audit_sentences, audit_segments in {}; report in {}",
        args.store.display(),
        args.out.display()
    );
    Ok(())
}
