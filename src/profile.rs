//! `agora profile`: the command line of the behavioural profile (the `agora-profile` crate).

use std::path::PathBuf;

use agora_profile::runner::{ProfileOptions, ProfileOutcome};

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

/// The most responses per input a profile study may ask for (Agora's bound): the profile
/// methods ask for 15; the full profile asks [`CALLS_PER_RESPONSE`] calls per response and model.
const MAX_RESPONSES: u64 = 1_000;

/// The most responses per General Robustness condition (the methods ask for 30).
const MAX_GR_RESPONSES: u64 = 10_000;

/// Calls the full profile (every task a study runs by default, categories A–E) asks of one
/// model per response per input: 64,260 calls at 15 responses, General Robustness aside
/// (`agora profile scenarios/profiles/profile.ron --dry-run`).
const CALLS_PER_RESPONSE: u64 = 4_284;

/// Calls per General Robustness response and model: 690 at 30.
const CALLS_PER_GR_RESPONSE: u64 = 23;

/// Memory a planned call takes: 276 bytes measured (the peak resident size of a dry run at
/// 15,000 responses above one at 15, per call).
const BYTES_PER_CALL: u64 = 276;

/// Refuses a profile study whose response counts exceed their declared bounds, with the calls
/// and the memory the plan would take, before anything is read or planned. Only the two counts
/// are read here; every other field is the profile runner's to check.
fn check_sizes(study: &std::path::Path) -> anyhow::Result<()> {
    #[derive(serde::Deserialize)]
    #[serde(rename = "ProfileStudy")]
    struct Sizes {
        #[serde(default)]
        responses: u64,
        #[serde(default)]
        gr_responses: u64,
    }
    let Ok(text) = std::fs::read_to_string(study) else { return Ok(()) };
    // A file that does not parse is the runner's to report, with its line.
    let Ok(sizes) = ron::from_str::<Sizes>(&text) else { return Ok(()) };
    for (field, value, max, per) in [
        ("responses", sizes.responses, MAX_RESPONSES, CALLS_PER_RESPONSE),
        ("gr_responses", sizes.gr_responses, MAX_GR_RESPONSES, CALLS_PER_GR_RESPONSE),
    ] {
        let n = value;
        if n <= max {
            continue;
        }
        let calls = n.saturating_mul(per);
        return Err(crate::BadInput(format!(
            "{}: field `{field}`: {n} would plan up to {calls} calls per model, about {} of memory before \
             any is asked ({BYTES_PER_CALL} bytes each); a profile asks for at most {max} (the profile methods: {})",
            study.display(),
            agora_environments::games::human_bytes(calls.saturating_mul(BYTES_PER_CALL)),
            if field == "responses" { 15 } else { 30 }
        ))
        .into());
    }
    Ok(())
}

/// Runs `agora profile`.
pub fn main(a: ProfileArgs) -> anyhow::Result<()> {
    if let Some(study) = &a.study {
        check_sizes(study)?;
    }
    // A profile asks thousands of questions: a line every few seconds in a log says it is
    // working and for how long (each model's counts are printed when it is done).
    let progress = (!a.dry_run && !a.freeze).then(|| {
        let p = crate::progress::Progress::start("profile", None, "");
        p.detail("asking the models");
        p
    });
    let result = agora_profile::runner::main(ProfileOptions {
        study: a.study,
        store: a.store,
        models: a.models,
        dry_run: a.dry_run,
        replay: a.replay,
        out: a.out,
        assets: a.assets,
        freeze: a.freeze,
        retry_missing: a.retry_missing,
    });
    if let (Some(p), true) = (progress, result.is_ok()) {
        p.finish();
    }
    match result? {
        ProfileOutcome::Frozen { versions, lock, inputs, inputs_lock } => {
            for (task, sha) in &versions {
                println!("{task}: {sha}");
            }
            println!("froze {} version files into {}", versions.len(), lock.display());
            for (name, sha) in &inputs {
                println!("{name}: {sha}");
            }
            println!(
                "froze {} inputs (schedules, GR wording, item file, cells) into {}",
                inputs.len(),
                inputs_lock.display()
            );
        }
        ProfileOutcome::DryRun(plan) => print!("{plan}"),
        ProfileOutcome::Written { profiles, calls, out } => {
            for (model, sent, cached) in &calls {
                eprintln!("{model}: {sent} requests sent, {cached} replies from the cache");
            }
            for m in &profiles {
                println!("{}", m.markdown());
            }
            println!("profile written to {}", out.display());
        }
    }
    Ok(())
}
