//! `agora profile`: the command line of the behavioural profile (the `agora-profile` crate).

use std::path::PathBuf;

use agora_profile::runner::ProfileOptions;

/// Arguments of `agora profile`.
#[derive(clap::Args, Debug)]
pub struct ProfileArgs {
    /// The profile study file (`ProfileStudy(...)`).
    study: Option<PathBuf>,
    /// Store file.
    #[arg(long, default_value = crate::DEFAULT_STORE)]
    store: PathBuf,
    /// Models file (`Models(version: 1, models: [...])`); default: the study's include_models.
    #[arg(long)]
    models: Option<PathBuf>,
    /// Print the calls per model and category, and the store size to expect, without asking.
    #[arg(long)]
    dry_run: bool,
    /// Answer from the store's reply cache only; a missing reply is an error.
    #[arg(long)]
    replay: bool,
    /// Output directory for profile.json, profile.md and profile.csv.
    #[arg(long, default_value = "out/profile")]
    out: PathBuf,
    /// Directory holding versions/, versions.lock, schedules.ron and gr.ron (default: the
    /// checkout's assets/profile).
    #[arg(long)]
    assets: Option<PathBuf>,
    /// Check every version file and write its hash to versions.lock (review the versions
    /// first: a frozen file is what a study runs).
    #[arg(long)]
    freeze: bool,
    /// A recovery pass: ask the slots left `missing` (unusable answers after the attempt limit)
    /// again at the same slots, continuing their attempt numbers, with the model file's attempt
    /// limit and token limit (which may be raised for it); the pass and any changed setting are
    /// recorded in `profile_passes`.
    #[arg(long)]
    retry_missing: bool,
}

/// Runs `agora profile`.
pub fn main(a: ProfileArgs) -> anyhow::Result<()> {
    agora_profile::runner::main(ProfileOptions {
        study: a.study,
        store: a.store,
        models: a.models,
        dry_run: a.dry_run,
        replay: a.replay,
        out: a.out,
        assets: a.assets,
        freeze: a.freeze,
        retry_missing: a.retry_missing,
    })
}
