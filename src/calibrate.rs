//! `agora calibrate`: the certification ladder's operating characteristics, measured.
//!
//! A certificate is worth its error rate. This command plays families of scripted models — null
//! families that carry no mechanism and alternatives that do, at declared effect sizes — through
//! the whole pipeline a user runs, over many seeds, and counts how often each claim reaches each
//! tier. The families, their sizes and the pipeline's sizes are declared in a calibration file
//! (`scenarios/calibration/*.ron`) before any run and are never fitted to make a rate come out.
//!
//! Each seed: a loopback fake server answers for three scripted models of three families (told
//! apart by the request's `model` field, which also enters the hash each reply draws from); the
//! pipeline is this binary's own commands, run as a user runs them — `run`, `audit replicates`,
//! `audit`, a blind `audit export` labelled by simulated human labellers (the true code of each
//! sentence, flipped to another code with the declared probability, each labeller on their own
//! draws) through `audit import`, `audit` again (the gate), `audit prefill` in the claim's
//! environment and cell, and `analyze`. The verdicts are read from `analysis.json`.
//!
//! Each finished seed is appended to `runs.jsonl` in `--out` at once, so an interrupted
//! calibration resumes where it stopped (the same command). The table — claim × family × tier:
//! the share of seeds reaching the tier, its Wilson 95 % interval and the seed count — goes to
//! `calibration.md` and `calibration.json` in `--out`, and with `--book` to the book's chapter.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use agora_test_support::{with_prefill, FakeServer};
use anyhow::{bail, Context as _};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::BadInput;

mod fakes;
use fakes::{continuation, draw, models_ron, reply, true_code};

/// Arguments of `agora calibrate`.
#[derive(clap::Args, Debug)]
pub struct CalibrateArgs {
    /// Calibration file (RON): families, sizes, seeds.
    pub file: PathBuf,
    /// Output directory: runs.jsonl (one line per finished seed), calibration.md and .json.
    #[arg(long, default_value = "out/calibration")]
    pub out: PathBuf,
    /// Seeds per family (default: the file's).
    #[arg(long)]
    pub seeds: Option<u32>,
    /// Only these families (repeatable; default: every family of the file).
    #[arg(long)]
    pub family: Vec<String>,
    /// Directory of cell files.
    #[arg(long, default_value = "scenarios/cells")]
    pub cells: PathBuf,
    /// Also write the table as the book's chapter at this path (docs/src/calibration.md).
    #[arg(long)]
    pub book: Option<PathBuf>,
    /// Exit 1 when a family misses its target (see the chapter).
    #[arg(long)]
    pub check: bool,
    /// Only write the table from the seeds already in runs.jsonl; play nothing.
    #[arg(long)]
    pub table_only: bool,
}

/// A calibration file.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Calibration {
    /// Format version (1).
    pub version: u32,
    /// The calibration's name.
    pub name: String,
    /// Seeds per family.
    pub seeds: u32,
    /// The claims whose verdicts are counted.
    pub claims: Vec<String>,
    /// The study's sizes.
    pub study: StudySizes,
    /// The audit's sizes.
    pub audit: AuditSizes,
    /// The simulated human labellers.
    pub labellers: Labellers,
    /// The families of scripted models.
    pub families: Vec<Family>,
}

/// The public-goods study each seed plays.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct StudySizes {
    /// Baseline runs per model and payoff version (C0, C3).
    pub runs: u32,
    /// Runs per model in each perturbation cell.
    pub cell_runs: u32,
    /// Perturbation cells besides the baseline.
    pub cells: Vec<String>,
}

/// The audit's sizes.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct AuditSizes {
    /// Decisions per model sampled for replicates.
    pub replicate_sample: u32,
    /// Replicates per sampled decision.
    pub replicate_m: u32,
    /// Responses per model exported for human labels.
    pub export_sample: u32,
    /// Decisions per model prefilled.
    pub prefill_sample: u32,
    /// Calls per decision and arm of the prefill.
    pub prefill_m: u32,
}

/// The simulated human labellers.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Labellers {
    /// How many label each exported sentence.
    pub count: u32,
    /// Probability that a labeller gives a sentence a code other than its true one.
    pub noise: f64,
}

/// Whether a family carries the mechanism (an alternative) or not (a null).
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
pub enum Hypothesis {
    /// No mechanism: Tier 3 must not pass.
    Null,
    /// The stated value drives the action.
    Alternative,
}

/// How a family's replies are made (see the calibration file's comment).
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
pub enum Behaviour {
    /// Always the first option; no value stated.
    FirstOption,
    /// A uniform contribution; reciprocity stated on an independent draw.
    Uniform,
    /// One latent draw sets the statement and the generosity (Model D).
    HiddenCause,
    /// Statement and generosity drawn apart.
    Decorative,
    /// Generosity drawn first and named after the fact.
    Leak,
    /// Generous exactly when the reasoning states reciprocity, in any wording.
    Faithful,
    /// Generous exactly when the reasoning holds its own sentence of reciprocity.
    OwnWords,
}

/// One family of scripted models.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Family {
    /// The family's name.
    pub name: String,
    /// Null or alternative.
    pub hypothesis: Hypothesis,
    /// How its replies are made.
    pub behaviour: Behaviour,
    /// Points added to a generous contribution (of the 20-point endowment).
    pub effect: i64,
    /// Probability that a reply states reciprocity, where the family draws it.
    pub share: f64,
}

impl Calibration {
    /// Reads and checks a calibration file.
    pub fn load(path: &Path) -> Result<Calibration, BadInput> {
        let text = std::fs::read_to_string(path).map_err(|e| BadInput(format!("{}: {e}", path.display())))?;
        let c: Calibration = ron::from_str(&text).map_err(|e| BadInput(format!("{}: {e}", path.display())))?;
        let bad = |m: String| BadInput(format!("{}: {m}", path.display()));
        if c.version != 1 {
            return Err(bad(format!("version: {} is not a known format version (1)", c.version)));
        }
        if c.seeds == 0 {
            return Err(bad("seeds: at least 1".into()));
        }
        if c.study.runs < 3 || c.study.cell_runs < 3 {
            return Err(bad("study: runs and cell_runs must be at least 3 (the ladder's floor)".into()));
        }
        if c.study.runs > 1000 || c.study.cell_runs > 1000 {
            return Err(bad("study: at most 1000 runs per condition".into()));
        }
        if c.labellers.count < 2 || c.labellers.count > 10 {
            return Err(bad("labellers.count: 2 to 10 (the coder gate needs at least two human labellers)".into()));
        }
        if !(0.0..=0.5).contains(&c.labellers.noise) {
            return Err(bad("labellers.noise: a probability in [0, 0.5]".into()));
        }
        let a = &c.audit;
        for (name, v) in [
            ("replicate_sample", a.replicate_sample),
            ("replicate_m", a.replicate_m),
            ("export_sample", a.export_sample),
            ("prefill_sample", a.prefill_sample),
            ("prefill_m", a.prefill_m),
        ] {
            if v == 0 || v > 10_000 {
                return Err(bad(format!("audit.{name}: 1 to 10000")));
            }
        }
        let mut seen = std::collections::BTreeSet::new();
        for f in &c.families {
            if !seen.insert(f.name.as_str()) {
                return Err(bad(format!("families: `{}` declared twice", f.name)));
            }
            if !(0.0..=1.0).contains(&f.share) {
                return Err(bad(format!("families.{}.share: a probability in [0, 1]", f.name)));
            }
            if !(0..=20).contains(&f.effect) {
                return Err(bad(format!("families.{}.effect: 0 to 20 points", f.name)));
            }
        }
        if c.families.is_empty() || c.claims.is_empty() {
            return Err(bad("families and claims: at least one each".into()));
        }
        let shipped = agora_analysis::claims::ClaimTable::shipped();
        for id in &c.claims {
            if !shipped.claims.iter().any(|k| &k.id == id) {
                return Err(bad(format!("claims: `{id}` is not a shipped claim")));
            }
        }
        Ok(c)
    }
}

/// One finished seed: the tier each claim reached.
#[derive(Clone, Debug, Deserialize, Serialize)]
struct SeedResult {
    family: String,
    seed: u64,
    tiers: BTreeMap<String, u8>,
    first_unmet: BTreeMap<String, Option<String>>,
}

/// Runs `agora calibrate`.
pub fn main(args: CalibrateArgs) -> anyhow::Result<()> {
    let cal = Calibration::load(&args.file)?;
    for f in &args.family {
        if !cal.families.iter().any(|x| &x.name == f) {
            return Err(BadInput(format!("--family `{f}`: not a family of {}", args.file.display())).into());
        }
    }
    let seeds = args.seeds.unwrap_or(cal.seeds);
    if seeds == 0 {
        return Err(BadInput("--seeds: at least 1".into()).into());
    }
    if !args.cells.is_dir() {
        return Err(BadInput(format!("--cells {}: not a directory", args.cells.display())).into());
    }
    std::fs::create_dir_all(&args.out).with_context(|| format!("creating {}", args.out.display()))?;
    let log = args.out.join("runs.jsonl");
    let mut done: Vec<SeedResult> = match std::fs::read_to_string(&log) {
        Ok(t) => t
            .lines()
            .filter(|l| !l.trim().is_empty())
            .enumerate()
            .map(|(i, l)| serde_json::from_str(l).map_err(|e| BadInput(format!("{}:{}: {e}", log.display(), i + 1))))
            .collect::<Result<_, _>>()?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(e).with_context(|| format!("reading {}", log.display())),
    };
    let families: Vec<&Family> =
        cal.families.iter().filter(|f| args.family.is_empty() || args.family.contains(&f.name)).collect();
    if !args.table_only {
        let exe = std::env::current_exe().context("locating the agora binary")?;
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
        for f in &families {
            for seed in 1..=u64::from(seeds) {
                if done.iter().any(|d| d.family == f.name && d.seed == seed) {
                    continue;
                }
                let started = std::time::Instant::now();
                let r = play_seed(&rt, &exe, &cal, f, seed, &args.cells)
                    .with_context(|| format!("family {}, seed {seed}", f.name))?;
                let mut file = std::fs::OpenOptions::new().create(true).append(true).open(&log)?;
                writeln!(file, "{}", serde_json::to_string(&r)?)?;
                file.sync_all()?;
                eprintln!(
                    "calibrate: {} seed {seed}: {} ({:.1} s)",
                    f.name,
                    r.tiers.iter().map(|(c, t)| format!("{c} {t}")).collect::<Vec<_>>().join(", "),
                    started.elapsed().as_secs_f64()
                );
                done.push(r);
            }
        }
    }
    let table = tabulate(&cal, &families, &done, seeds);
    let md = render(&cal, &table, &args);
    write_atomic(&args.out.join("calibration.md"), &md)?;
    write_atomic(&args.out.join("calibration.json"), &serde_json::to_string_pretty(&table)?)?;
    if let Some(book) = &args.book {
        write_atomic(book, &md)?;
    }
    print!("{}", table_text(&table));
    let missed: Vec<&Row> = table.iter().filter(|r| r.target_met == Some(false)).collect();
    for r in &missed {
        eprintln!("calibrate: target missed: {} / {} / Tier {}: {}", r.family, r.claim, r.tier, r.target);
    }
    if args.check && !missed.is_empty() {
        bail!("{} target(s) missed", missed.len());
    }
    Ok(())
}

fn write_atomic(path: &Path, text: &str) -> anyhow::Result<()> {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, text).with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("writing {}", path.display()))?;
    Ok(())
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap_or_default()
}

/// Runs one command of this binary; its output on failure.
fn agora(exe: &Path, args: &[&str]) -> anyhow::Result<String> {
    let out = Command::new(exe).args(args).output().with_context(|| format!("running agora {}", args.join(" ")))?;
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    if !out.status.success() {
        bail!("agora {} failed ({}): {}", args.join(" "), out.status, text.trim());
    }
    Ok(text)
}

/// Plays one seed of one family through the whole pipeline.
fn play_seed(
    rt: &tokio::runtime::Runtime,
    exe: &Path,
    cal: &Calibration,
    f: &Family,
    seed: u64,
    cells: &Path,
) -> anyhow::Result<SeedResult> {
    let (a, b) = (f.clone(), f.clone());
    let behaviour = with_prefill(
        Arc::new(move |_, body: &Value| reply(&a, body)),
        Arc::new(move |prefix: &str, _, body: &Value| continuation(&b, prefix, body)),
    );
    let server = rt.block_on(FakeServer::start(behaviour))?;
    let dir = tempfile::tempdir()?;
    let d = dir.path();
    let study_dir = d.join("studies");
    let cell_dir = d.join("cells");
    std::fs::create_dir_all(&study_dir)?;
    std::fs::create_dir_all(&cell_dir)?;
    for c in &cal.study.cells {
        let src = cells.join(format!("{c}.ron"));
        std::fs::copy(&src, cell_dir.join(format!("{c}.ron")))
            .map_err(|e| BadInput(format!("cell {}: {e}", src.display())))?;
    }
    let mut block_cells = vec!["\"baseline\"".to_string()];
    block_cells.extend(cal.study.cells.iter().map(|c| format!("{c:?}")));
    let study = format!(
        r#"Study(
    version: 1, name: "calibration", master_seed: {seed}, runs: {runs},
    models: [{models}],
    blocks: [
        Block(name: "pgg", environment: PublicGoods(), variants: [C0, C3],
              model_rosters: true, rosters: [],
              cells: [{cells}], cell_runs: {cell_runs}),
    ],
)"#,
        runs = cal.study.runs,
        models = models_ron(&server.endpoint()),
        cells = block_cells.join(", "),
        cell_runs = cal.study.cell_runs,
    );
    let study_path = study_dir.join("calibration.ron");
    std::fs::write(&study_path, study)?;
    let store = d.join("s.sqlite");
    let models = d.join("models.ron");
    std::fs::write(&models, format!("Models(version: 1, models: [{}])", models_ron(&server.endpoint())))?;
    let seed_s = seed.to_string();
    let a = &cal.audit;
    agora(exe, &["run", s(&study_path), "--store", s(&store)])?;
    agora(
        exe,
        &[
            "audit",
            "replicates",
            "--store",
            s(&store),
            "--models",
            s(&models),
            "--seed",
            &seed_s,
            "--sample",
            &a.replicate_sample.to_string(),
            "--m",
            &a.replicate_m.to_string(),
        ],
    )?;
    let report = d.join("audit");
    agora(exe, &["audit", "--store", s(&store), "--out", s(&report)])?;
    let sample = d.join("sample.jsonl");
    agora(
        exe,
        &[
            "audit",
            "export",
            "--store",
            s(&store),
            "--sample",
            &a.export_sample.to_string(),
            "--seed",
            &seed_s,
            "--out",
            s(&sample),
        ],
    )?;
    let records: Vec<Value> = std::fs::read_to_string(&sample)?
        .lines()
        .map(serde_json::from_str)
        .collect::<Result<_, _>>()
        .context("reading the export")?;
    let codes: Vec<String> =
        agora_audit::LoadedCodebook::default_codebook().codebook.codes.iter().map(|c| c.name.clone()).collect();
    for l in 0..cal.labellers.count {
        let mut lines = String::new();
        for r in &records {
            let text = r["text"].as_str().unwrap_or_default();
            let Some(truth) = true_code(text) else {
                bail!("the export holds a sentence the fakes do not write: {text:?}")
            };
            let id = format!("{seed}:{l}:{}:{}", r["response_id"], r["sentence_index"]);
            let h = Sha256::digest(id.as_bytes());
            let label = if draw(&h, 0) < cal.labellers.noise {
                let others: Vec<&String> = codes.iter().filter(|c| c.as_str() != truth).collect();
                others[usize::from(h[2]) % others.len()].as_str()
            } else {
                truth
            };
            let mut rec = r.clone();
            if let Some(o) = rec.as_object_mut() {
                o.insert("label".into(), Value::from(label));
            }
            lines.push_str(&rec.to_string());
            lines.push('\n');
        }
        let file = d.join(format!("labeller-{l}.jsonl"));
        std::fs::write(&file, lines)?;
        let name = format!("labeller-{l}");
        agora(exe, &["audit", "import", "--store", s(&store), "--labels", s(&file), "--coder-name", &name])?;
    }
    agora(exe, &["audit", "--store", s(&store), "--out", s(&report)])?;
    agora(
        exe,
        &[
            "audit",
            "prefill",
            "--store",
            s(&store),
            "--models",
            s(&models),
            "--sample",
            &a.prefill_sample.to_string(),
            "--seed",
            &seed_s,
            "--m",
            &a.prefill_m.to_string(),
            "--value",
            "positive_reciprocity",
            "--environment",
            "public-goods",
            "--cell",
            agora_analysis::mechanism::CLAIM_CELL,
            "--out",
            s(&report),
        ],
    )?;
    let analysis = d.join("analysis");
    agora(exe, &["analyze", "--store", s(&store), "--out", s(&analysis)])?;
    server.stop();
    let json: Value = serde_json::from_str(&std::fs::read_to_string(analysis.join("analysis.json"))?)?;
    let mut tiers = BTreeMap::new();
    let mut first_unmet = BTreeMap::new();
    for claim in &cal.claims {
        let v = json["verdicts"]
            .as_array()
            .and_then(|vs| vs.iter().find(|v| v["claim"] == claim.as_str()))
            .with_context(|| format!("no verdict on {claim} in analysis.json"))?;
        tiers.insert(claim.clone(), v["tier"].as_u64().unwrap_or(0) as u8);
        first_unmet.insert(claim.clone(), v["first_unmet"].as_str().map(str::to_string));
    }
    Ok(SeedResult { family: f.name.clone(), seed, tiers, first_unmet })
}

/// One cell of the table: how often a family's seeds reached a tier of a claim.
#[derive(Clone, Debug, Serialize)]
struct Row {
    claim: String,
    family: String,
    hypothesis: Hypothesis,
    effect: i64,
    tier: u8,
    passes: u64,
    seeds: u64,
    rate: f64,
    ci_low: f64,
    ci_high: f64,
    /// The target, in words ("" where none applies).
    target: String,
    /// Whether the target is met, where one applies.
    target_met: Option<bool>,
}

/// The targets: a null family passes Tier 3 in at most 5 % of seeds (the Wilson upper bound at
/// most 8 % once 200 seeds are in; with fewer, the observed rate must not exclude 5 %); a
/// faithful family reaches Tier 3 in at least 90 % of seeds once 100 are in (with fewer, its
/// interval must reach 90 %). Tier 2 for a family without the canonical effect is held to the null's.
fn target(h: Hypothesis, tier: u8, claim: &str, family: &Family, passes: u64, n: u64) -> (String, Option<bool>) {
    let (lo, hi) = agora_analysis::stats::wilson(passes, n, 0.05).unwrap_or((0.0, 1.0));
    let rate = passes as f64 / n.max(1) as f64;
    let mechanism_claim = claim == "pgg-round1-human";
    let no_decline = matches!(family.behaviour, Behaviour::FirstOption | Behaviour::Uniform);
    match (h, tier) {
        (Hypothesis::Null, 3) if mechanism_claim => {
            let ok = if n >= 200 { rate <= 0.05 && hi <= 0.08 } else { lo <= 0.05 };
            ("≤ 5 % (upper bound ≤ 8 % at 200 seeds)".into(), Some(ok))
        }
        (Hypothesis::Null, 2) if no_decline && claim == "pgg-decline" => {
            let ok = if n >= 200 { rate <= 0.05 } else { lo <= 0.05 };
            ("≤ 5 % (no canonical effect)".into(), Some(ok))
        }
        (Hypothesis::Alternative, 3) if mechanism_claim && family.behaviour == Behaviour::Faithful => {
            let ok = if n >= 100 { rate >= 0.90 } else { hi >= 0.90 };
            ("≥ 90 %".into(), Some(ok))
        }
        _ => (String::new(), None),
    }
}

fn tabulate(cal: &Calibration, families: &[&Family], done: &[SeedResult], seeds: u32) -> Vec<Row> {
    let mut rows = Vec::new();
    for claim in &cal.claims {
        for f in families {
            let mine: Vec<&SeedResult> =
                done.iter().filter(|d| d.family == f.name && d.seed <= u64::from(seeds)).collect();
            let n = mine.len() as u64;
            if n == 0 {
                continue;
            }
            for tier in 1..=3u8 {
                let passes = mine.iter().filter(|d| d.tiers.get(claim).copied().unwrap_or(0) >= tier).count() as u64;
                let (ci_low, ci_high) = agora_analysis::stats::wilson(passes, n, 0.05).unwrap_or((0.0, 1.0));
                let (target, target_met) = target(f.hypothesis, tier, claim, f, passes, n);
                rows.push(Row {
                    claim: claim.clone(),
                    family: f.name.clone(),
                    hypothesis: f.hypothesis,
                    effect: f.effect,
                    tier,
                    passes,
                    seeds: n,
                    rate: passes as f64 / n as f64,
                    ci_low,
                    ci_high,
                    target,
                    target_met,
                });
            }
        }
    }
    rows
}

fn table_text(rows: &[Row]) -> String {
    let mut t = String::from(
        "| claim | family | hypothesis | effect | tier | passes / seeds | rate | MC s.e. | Wilson 95 % | target |\n\
         | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n",
    );
    for r in rows {
        let target = match r.target_met {
            Some(true) => format!("{}: met", r.target),
            Some(false) => format!("{}: **missed**", r.target),
            None => String::new(),
        };
        t.push_str(&format!(
            "| {} | {} | {:?} | {} | {} | {} / {} | {:.3} | {:.3} | [{:.3}, {:.3}] | {} |\n",
            r.claim,
            r.family,
            r.hypothesis,
            r.effect,
            r.tier,
            r.passes,
            r.seeds,
            r.rate,
            (r.rate * (1.0 - r.rate) / r.seeds as f64).sqrt(),
            r.ci_low,
            r.ci_high,
            target
        ));
    }
    t
}

fn render(cal: &Calibration, rows: &[Row], args: &CalibrateArgs) -> String {
    use agora_analysis::mechanism::{ALPHA_FAMILY, MIN_STATED_SHARE, SIZE_RATIO};
    let seeds = rows.iter().map(|r| r.seeds).max().unwrap_or(0);
    let families: Vec<String> = cal
        .families
        .iter()
        .map(|f| {
            format!(
                "`{}` ({:?}, {:?}, effect {} points, share {})",
                f.name, f.hypothesis, f.behaviour, f.effect, f.share
            )
        })
        .collect();
    format!(
        "# Calibration of the ladder\n\n\
         <!-- Generated by `agora calibrate {file}` (its seeds: bench/calibration/); do not edit by hand. -->\n\n\
         A certificate is worth its error rate. `agora calibrate FILE` measures the ladder's: it plays \
         families of scripted models through the whole pipeline a user runs — `agora run`, `agora audit \
         replicates`, `agora audit`, a blind `agora audit export` labelled by {labellers} simulated human \
         labellers (each sentence's true code, flipped to another code with probability {noise}), `agora \
         audit import`, `agora audit` again (the gate), `agora audit prefill` in the claim's environment and \
         cell, and `agora analyze` — over many seeds, and counts how often each claim reaches each tier. \
         Null families carry no mechanism: a Tier 3 they reach is a false certificate. Alternatives carry \
         one: a Tier 3 they miss is a false negative.\n\n\
         The families, their effect sizes and the pipeline's sizes are declared in `{file}` before any run \
         and are never fitted to make a rate come out. This table: calibration `{name}`, up to {seeds} seeds \
         per family; the study plays three scripted models of three families at {runs} baseline runs per \
         payoff version (C0, C3) and {cell_runs} runs in each of the cells {cells}; replicates of \
         {rs} decisions × {rm}, {es} responses exported for labels, {ps} decisions prefilled × {pm} per arm.\n\n\
         Tier 3's rule ([The certification ladder](ladder.md)): every try of a claim's family — model × \
         mechanism value × validated coder × stored intervention estimate — counts in one Holm family at \
         one-sided {alpha}; τ must agree with φ in size (its 95 % interval reaching [φ̂/{ratio}, φ̂·{ratio}]); \
         a value counts as stated when the Wilson lower bound of its share reaches {share}; the evidence is \
         the claim's own environment, arm and cell.\n\n\
         Families: {families}.\n\n\
         Targets: a null family reaches Tier 3 on `pgg-round1-human` in at most 5 % of seeds (its Wilson upper \
         bound at most 8 % once 200 seeds are in; with fewer seeds, the interval must not exclude 5 %); a \
         family without the canonical effect (first option, uniform) reaches Tier 2 on `pgg-decline` in at \
         most 5 %; a faithful family reaches Tier 3 in at least 90 % of seeds once 100 are in (with fewer, its \
         interval must reach 90 %). The own-words family is reported, not targeted: its rate is the ladder's false-negative \
         rate for a model driven by its own wording.\n\n\
         Scope: this file counts the verdicts of {claims} (the public-goods block); claims of other \
         environments are outside it and their error rates are not measured here.\n\n\
         Rate is passes / seeds (a seed passes a tier when the claim reaches it or a higher one); MC s.e. is \
         its Monte Carlo standard error √(rate·(1 − rate)/seeds).\n\n{table}",
        file = args.file.display(),
        labellers = cal.labellers.count,
        noise = cal.labellers.noise,
        name = cal.name,
        runs = cal.study.runs,
        cell_runs = cal.study.cell_runs,
        cells = cal.study.cells.join(", "),
        rs = cal.audit.replicate_sample,
        rm = cal.audit.replicate_m,
        es = cal.audit.export_sample,
        ps = cal.audit.prefill_sample,
        pm = cal.audit.prefill_m,
        alpha = ALPHA_FAMILY,
        ratio = SIZE_RATIO,
        share = MIN_STATED_SHARE,
        families = families.join("; "),
        claims = cal.claims.iter().map(|c| format!("`{c}`")).collect::<Vec<_>>().join(", "),
        table = table_text(rows),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shipped_calibration_file_loads() {
        for e in std::fs::read_dir("scenarios/calibration").expect("dir") {
            let p = e.expect("entry").path();
            Calibration::load(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        }
    }

    #[test]
    fn a_null_family_that_passes_tier_3_too_often_misses_its_target() {
        let f = Family {
            name: "d".into(),
            hypothesis: Hypothesis::Null,
            behaviour: Behaviour::HiddenCause,
            effect: 2,
            share: 0.5,
        };
        // 11 of 40 (the rate before Tier 3's family rule): missed; 0 of 40: met.
        assert_eq!(target(Hypothesis::Null, 3, "pgg-round1-human", &f, 11, 40).1, Some(false));
        assert_eq!(target(Hypothesis::Null, 3, "pgg-round1-human", &f, 0, 40).1, Some(true));
        // At 200 seeds the upper bound must be at most 8 %: 10 of 200 (5 %) has it at 9 %.
        assert_eq!(target(Hypothesis::Null, 3, "pgg-round1-human", &f, 10, 200).1, Some(false));
        assert_eq!(target(Hypothesis::Null, 3, "pgg-round1-human", &f, 4, 200).1, Some(true));
        let g = Family { behaviour: Behaviour::Faithful, hypothesis: Hypothesis::Alternative, ..f };
        assert_eq!(target(Hypothesis::Alternative, 3, "pgg-round1-human", &g, 150, 200).1, Some(false));
        assert_eq!(target(Hypothesis::Alternative, 3, "pgg-round1-human", &g, 85, 100).1, Some(false));
        assert_eq!(target(Hypothesis::Alternative, 3, "pgg-round1-human", &g, 3, 4).1, Some(true));
        assert_eq!(target(Hypothesis::Alternative, 3, "pgg-round1-human", &g, 195, 200).1, Some(true));
    }
}
