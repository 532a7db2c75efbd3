//! `agora run` and `agora check`: a plan printed, and a plan run into a store (placed under its
//! name's version, its deposit and provenance recorded, the LLM seats' session prepared,
//! progress shown, the summary printed).

use std::path::Path;

use agora_engine::{execute, RunnerOptions, Store};
use agora_scenarios::Plan;
use anyhow::Context as _;

use crate::{llm, prereg, progress, summary, BadInput};

pub(crate) fn print_plan(plan: &Plan) {
    println!("study {}  master seed {}  plan {}", plan.study, plan.master_seed, &plan.hash()[..16]);
    println!(
        "{:<16} {:<18} {:<22} {:<4} {:<14} {:<14} {:<22} {:>5} {:>6} {:>12}",
        "block", "environment", "arm", "var", "cell", "level", "roster", "cond", "runs", "decisions"
    );
    let (mut runs, mut decisions, mut upper) = (0usize, 0u64, false);
    for l in plan.lines() {
        println!(
            "{:<16} {:<18} {:<22} {:<4} {:<14} {:<14} {:<22} {:>5} {:>6} {:>12}",
            l.block,
            l.environment.as_str(),
            l.arm,
            l.variant.as_str(),
            l.cell,
            l.level.as_str(),
            l.roster,
            l.conditions,
            l.runs,
            format!("{}{}", if l.decisions_upper_bound { "<=" } else { "" }, l.decisions)
        );
        runs += l.runs;
        decisions += l.decisions;
        upper |= l.decisions_upper_bound;
    }
    println!("total: {runs} runs, {}{decisions} decisions", if upper { "<=" } else { "" });
    print_reference(plan);
    llm::print_call_estimate(plan);
}

/// Model runs per model, and the published count the study reproduces beside them.
pub(crate) fn print_reference(plan: &Plan) {
    let mut per_model: std::collections::BTreeMap<&str, usize> = std::collections::BTreeMap::new();
    let mut probes: std::collections::BTreeMap<&str, usize> = std::collections::BTreeMap::new();
    let mut classical = 0usize;
    for r in &plan.runs {
        // A probe session plays no game: it is not a model run (the paper spends none on it).
        match (r.seats.iter().find_map(|s| s.model()), r.is_probe()) {
            (Some(m), true) => *probes.entry(m).or_default() += 1,
            (Some(m), false) => *per_model.entry(m).or_default() += 1,
            (None, _) => classical += 1,
        }
    }
    for (model, n) in &per_model {
        let p = probes.get(model).copied().unwrap_or(0);
        println!(
            "model runs for {model}: {n}{}",
            if p > 0 { format!(" (and {p} recognition-probe sessions)") } else { String::new() }
        );
    }
    let Some(reference) = &plan.reference else { return };
    let per: std::collections::BTreeSet<usize> = per_model.values().copied().collect();
    let per = match per.iter().collect::<Vec<_>>().as_slice() {
        [n] => format!("{n} per model"),
        [] => "no model runs".to_string(),
        _ => "per model as listed".to_string(),
    };
    println!(
        "model runs: {} for {} model(s) ({per}); {} model runs for {} models at this count; the paper: {} model runs for {} models ({:.1} per model){}; source: {}",
        per_model.values().sum::<usize>(),
        per_model.len(),
        per_model.values().max().copied().unwrap_or(0) as u64 * u64::from(reference.models),
        reference.models,
        reference.model_runs,
        reference.models,
        reference.model_runs as f64 / f64::from(reference.models),
        reference.classical_runs.map(|c| format!(" and {c} classical runs (this plan: {classical})")).unwrap_or_default(),
        reference.source
    );
}

/// Refuses a plan that gives a name already in the store another meaning, or (with
/// `--new-version`) moves it to the study's first version that has no other configuration.
pub(crate) fn place_plan(
    plan: &Plan,
    study: &Path,
    store: &Store,
    store_path: &Path,
    new_version: bool,
) -> anyhow::Result<Plan> {
    use agora_scenarios::versions::{place, Placement};
    match place(plan, study, store, store_path, new_version, "--new-version")? {
        Placement::Own(p) => Ok(p),
        Placement::NewVersion(p, line) => {
            println!("{line}");
            Ok(p)
        }
        Placement::Refused(message) => Err(BadInput(message).into()),
    }
}

/// How `agora run` runs a plan (its flags).
#[derive(Default)]
pub(crate) struct RunFlags<'a> {
    /// Worker threads for classical rosters.
    pub(crate) threads: Option<usize>,
    /// Runs kept live at once when agents wait on a model server.
    pub(crate) live: Option<usize>,
    /// Answer every LLM decision from the reply cache.
    pub(crate) replay: bool,
    /// The store whose reply cache to use.
    pub(crate) cache: Option<&'a Path>,
    /// Store an edited configuration as the study's next version instead of refusing it.
    pub(crate) new_version: bool,
    /// The deposit the plan was checked against (`--prereg`).
    pub(crate) prereg: Option<&'a prereg::PreregRun>,
}

pub(crate) fn run_plan(plan: &Plan, study: &Path, store_path: &Path, flags: &RunFlags<'_>) -> anyhow::Result<()> {
    let RunFlags { threads, live, replay, cache, new_version, prereg } = *flags;
    let started_at = prereg::now_utc();
    let mut store = Store::open(store_path)?;
    // One writing command at a time: a second `agora run` on this store is refused (exit 2).
    let claim = store.claim("agora run")?;
    // Before any server is asked: a name of the store never takes another meaning. A plan that
    // deviates from its deposit is a version of its own (`NAME@2` on), never pooled with the
    // deposited plan's runs.
    let plan = &match prereg {
        Some(p) if p.deviation.is_some() => {
            let (placed, _) = agora_scenarios::versions::free_version_from(plan, &store, 2)?;
            println!("{}: stored as version `{}`, apart from the deposited plan", study.display(), placed.study);
            placed
        }
        _ => place_plan(plan, study, &store, store_path, new_version)?,
    };
    if let Some(p) = prereg {
        store.record_deposit(&agora_engine::store::deposit::DepositRow {
            hash: p.hash.clone(),
            study: p.deposit.study().unwrap_or_else(|| plan.study.clone()),
            created: p.created.clone(),
            doi: p.doi.clone(),
            files: p.deposit.to_json(),
        })?;
    }
    let before = store.completed_keys()?;
    let cache_path = match cache {
        Some(c) => {
            if !c.exists() {
                return Err(BadInput(format!("cache store {} does not exist", c.display())).into());
            }
            Store::open(c)?;
            c
        }
        None => store_path,
    };
    let llm = agora_engine::llm_seats::prepare(&plan.runs, &plan.models, cache_path, replay).map_err(|e| match e {
        agora_engine::llm_seats::PrepareError::Declaration(m) => anyhow::Error::from(BadInput(m)),
        other => other.into(),
    })?;
    let source = std::fs::read_to_string(study).with_context(|| format!("reading {}", study.display()))?;
    store.record_study(&plan.study_record(), &source)?;
    let mut opts = RunnerOptions::default();
    if let Some(t) = threads {
        opts.threads = t.max(1);
    }
    if let Some(l) = live {
        opts.max_live = l.max(1);
    }
    if let Some(l) = &llm {
        opts.policy_factory = Some(l.factory());
        // Runs whose server gave no reply are played again after a wait that starts at eight
        // transport backoffs of the slowest-backing-off model.
        let backoff = plan.models.iter().map(|m| m.backoff_ms).max().unwrap_or(100);
        opts.retry_backoff = std::time::Duration::from_millis(backoff.saturating_mul(8).max(1));
    }
    let started = std::time::Instant::now();
    progress::on_interrupt(format!(
        "interrupted: the runs completed so far are kept in {}; run the same command again to resume: {}",
        store_path.display(),
        std::env::args().collect::<Vec<_>>().join(" ")
    ));
    let bar = match &llm {
        // An LLM study counts model calls (a run takes many, and minutes each): answered so far
        // out of those its runs not yet stored will make at the first attempt.
        Some(l) => {
            let done = store.completed_keys()?;
            let todo: Vec<_> = plan.runs.iter().filter(|r| !done.contains(&r.key())).cloned().collect();
            let estimates = agora_engine::llm_seats::call_estimates(&todo, &plan.models);
            let calls: u64 = estimates.iter().map(|e| e.calls).sum();
            // Games that may end early (a convention formed) make fewer calls than the bound.
            let unit = if estimates.iter().any(|e| e.upper) {
                "model calls (the total an upper bound)"
            } else {
                "model calls"
            };
            let bar = progress::Progress::start(&format!("run {}", plan.study), Some(calls), unit);
            let (session, runs) = (l.session().clone(), todo.len());
            let stored = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
            let seen = stored.clone();
            bar.poll(Box::new(move || {
                let (cached, sent) = session.calls();
                let in_flight: usize = session.clients().values().map(|c| c.in_flight()).sum();
                let hits = if cached + sent > 0 { 100.0 * cached as f64 / (cached + sent) as f64 } else { 0.0 };
                let done = seen.load(std::sync::atomic::Ordering::Relaxed);
                (
                    (cached + sent) as u64,
                    format!("runs {done}/{runs}, {in_flight} in flight, {hits:.0} % from the reply cache"),
                )
            }));
            (bar, Some(stored))
        }
        None => (progress::Progress::start(&format!("run {}", plan.study), Some(plan.runs.len() as u64), "runs"), None),
    };
    let report = execute(&plan.runs, &mut store, &opts, &mut |p| match &bar.1 {
        Some(stored) => stored.store(p.done, std::sync::atomic::Ordering::Relaxed),
        None => bar.0.set((p.done + p.skipped) as u64),
    })?;
    bar.0.finish();
    // Each run made now, with when this command began and the deposit it was made under.
    let now = store.completed_keys()?;
    let made: Vec<String> =
        plan.runs.iter().map(agora_engine::RunSpec::key).filter(|k| now.contains(k) && !before.contains(k)).collect();
    store.record_provenance(
        &made,
        &agora_engine::store::deposit::Provenance {
            started: started_at,
            deposit: prereg.map(|p| p.hash.clone()),
            deviation: prereg.and_then(|p| p.deviation.clone()),
        },
    )?;
    if let Some(p) = prereg {
        println!("{}: {} runs recorded under the deposit {}", plan.study, made.len(), p.hash);
    }
    println!(
        "{}: {} runs executed, {} already in {} ({} decisions, {:.1} s)",
        plan.study,
        report.executed,
        report.skipped,
        store_path.display(),
        report.decisions,
        started.elapsed().as_secs_f64()
    );
    drop(store);
    drop(claim);
    if llm.is_some() {
        llm::print_transcript_summary(store_path, &plan.study)?;
    }
    if let Some(missing) = report.missing_summary(&plan.study, plan.runs.len(), "command") {
        anyhow::bail!(missing);
    }
    summary::print(store_path, Some(&plan.study))
}
