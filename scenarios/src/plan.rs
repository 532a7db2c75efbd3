//! Plan resolution: a study expanded into seeded run specifications.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use agora_agents::llm::ModelSpec;
use agora_agents::PolicySpec;
use agora_environments::{EnvKind, EnvSpec, Variant};

use crate::cell::{Cell, Factor, Level};
use crate::error::ScenarioError;
use crate::study::{Study, Sweep};
use agora_engine::seed::{derive, hex_digest};
pub use agora_engine::RunSpec;

/// A contiguous part of a plan for one machine: runs whose plan position is `i − 1` mod `N`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    /// This shard's number `i`, 1-based.
    pub index: usize,
    /// Number of shards `N`.
    pub count: usize,
}

impl std::str::FromStr for Shard {
    type Err = ScenarioError;
    fn from_str(s: &str) -> Result<Shard, ScenarioError> {
        let bad = || ScenarioError::Shard(s.to_string());
        let (i, n) = s.split_once('/').ok_or_else(bad)?;
        let index: usize = i.trim().parse().map_err(|_| bad())?;
        let count: usize = n.trim().parse().map_err(|_| bad())?;
        if count == 0 || index == 0 || index > count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

pub use crate::limits::MAX_PLAN_RUNS;

/// Memory one planned run takes: 608 bytes measured for a two-seat dilemma (the peak resident
/// size of `agora check` on a plan of 10⁶ runs), and one policy per further seat.
fn bytes_per_planned_run(seats: usize) -> u64 {
    608 + seats.saturating_sub(2) as u64 * std::mem::size_of::<PolicySpec>() as u64
}

/// A resolved study.
#[derive(Clone, Debug)]
pub struct Plan {
    /// Name of the study.
    pub study: String,
    /// The study's master seed, from which every run's seed is derived.
    pub master_seed: u64,
    /// Every run, in plan order.
    pub runs: Vec<RunSpec>,
    /// The language models the plan's rosters use.
    pub models: Vec<ModelSpec>,
    /// The published run count the study reproduces, if it names one.
    pub reference: Option<crate::study::RunCountReference>,
}

/// Summary line of a plan: one per (block, cell, variant, roster, arm).
#[derive(Clone, Debug, PartialEq)]
pub struct PlanLine {
    /// Name of the block.
    pub block: String,
    /// The block's game.
    pub environment: EnvKind,
    /// The supplementary arm (`baseline` when none).
    pub arm: String,
    /// The version of the game.
    pub variant: Variant,
    /// Name of the cell.
    pub cell: String,
    /// The cell's level.
    pub level: Level,
    /// Name of the roster.
    pub roster: String,
    /// Distinct conditions (sweep values) on the line.
    pub conditions: usize,
    /// Runs on the line.
    pub runs: usize,
    /// Decisions the line's runs will ask for.
    pub decisions: u64,
    /// Whether `decisions` is an upper bound (some runs may stop early).
    pub decisions_upper_bound: bool,
}

impl Plan {
    /// What the store keeps of this plan's study.
    pub fn study_record(&self) -> agora_engine::store::StudyRecord<'_> {
        agora_engine::store::StudyRecord {
            study: &self.study,
            plan_hash: self.hash(),
            master_seed: self.master_seed,
            runs: self.runs.len(),
            models: &self.models,
        }
    }

    /// Hash of the plan: of every run key in order.
    pub fn hash(&self) -> String {
        let keys: Vec<String> = self.runs.iter().map(RunSpec::key).collect();
        hex_digest(keys.join("\n").as_bytes())
    }

    /// The runs of one shard.
    pub fn shard(&self, shard: Shard) -> Plan {
        let runs = self
            .runs
            .iter()
            .enumerate()
            .filter(|(i, _)| i % shard.count == shard.index - 1)
            .map(|(_, r)| r.clone())
            .collect();
        self.with_runs(runs)
    }

    /// Keeps at most `n` runs per condition (for quick looks and tests); seeds are unchanged.
    pub fn limit_runs(&self, n: u32) -> Plan {
        self.with_runs(self.runs.iter().filter(|r| r.run_index < n).cloned().collect())
    }

    /// The same study (name, seed, models, reference) with `runs`, a part of its runs.
    fn with_runs(&self, runs: Vec<RunSpec>) -> Plan {
        Plan {
            study: self.study.clone(),
            master_seed: self.master_seed,
            runs,
            models: self.models.clone(),
            reference: self.reference.clone(),
        }
    }

    /// Aggregated lines for `agora check` and `--dry-run`.
    pub fn lines(&self) -> Vec<PlanLine> {
        let mut map: BTreeMap<(String, String, Variant, String, String), PlanLine> = BTreeMap::new();
        let mut conditions: BTreeMap<(String, String, Variant, String, String), std::collections::BTreeSet<String>> =
            BTreeMap::new();
        for r in &self.runs {
            let k = (r.block.clone(), r.cell.clone(), r.variant, r.roster.clone(), r.arm());
            let (d, upper) = r.expected_decisions();
            let line = map.entry(k.clone()).or_insert_with(|| PlanLine {
                block: r.block.clone(),
                environment: r.environment.kind(),
                arm: r.arm(),
                variant: r.variant,
                cell: r.cell.clone(),
                level: r.level,
                roster: r.roster.clone(),
                conditions: 0,
                runs: 0,
                decisions: 0,
                decisions_upper_bound: false,
            });
            line.runs += 1;
            line.decisions += d;
            line.decisions_upper_bound |= upper;
            conditions.entry(k).or_default().insert(format!("{:?} {:?}", r.sweep, r.point));
        }
        let mut lines: Vec<PlanLine> = map
            .into_iter()
            .map(|(k, mut l)| {
                l.conditions = conditions[&k].len();
                l
            })
            .collect();
        // Keep the study's block order (a map, so that a plan of many blocks sorts in linear time).
        let mut order: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
        for r in &self.runs {
            let n = order.len();
            order.entry(r.block.as_str()).or_insert(n);
        }
        lines.sort_by_key(|l| order.get(l.block.as_str()).copied());
        lines
    }

    /// Loads a study file and its cells (from `cells_dir`, by default `../cells` beside the
    /// study's directory) and resolves it.
    pub fn load(path: &Path, cells_dir: Option<&Path>) -> Result<Plan, ScenarioError> {
        Plan::load_with_models(path, cells_dir, None)
    }

    /// Loads a study, adding the models of a models file (names must not repeat).
    pub fn load_with_models(
        path: &Path,
        cells_dir: Option<&Path>,
        models: Option<&Path>,
    ) -> Result<Plan, ScenarioError> {
        let mut study = Study::load(path)?;
        let included = study.include_models.as_ref().map(|f| path.parent().unwrap_or(Path::new(".")).join(f));
        if let Some(m) = models.map(Path::to_path_buf).or(included) {
            let m = m.as_path();
            let file = crate::study::ModelsFile::load(m)?;
            // The models file's entries are checked here, so that what is wrong with one is
            // reported in the models file, at its own index, never as the study's.
            let mut names = std::collections::BTreeSet::new();
            for (i, model) in file.models.into_iter().enumerate() {
                model.validate().map_err(|e| ScenarioError::invalid(m, format!("models[{i}]"), e))?;
                if !names.insert(model.name.clone()) {
                    return Err(ScenarioError::invalid(
                        m,
                        format!("models[{i}].name"),
                        format!("duplicate model `{}`", model.name),
                    ));
                }
                if study.models.iter().any(|x| x.name == model.name) {
                    return Err(ScenarioError::invalid(
                        m,
                        format!("models[{i}].name"),
                        format!("model `{}` is already declared in the study {}", model.name, path.display()),
                    ));
                }
                study.models.push(model);
            }
        }
        let dir = match cells_dir {
            Some(d) => d.to_path_buf(),
            None => default_cells_dir(path),
        };
        Plan::resolve(&study, path, &dir)
    }

    /// Validates a study and expands it into runs.
    pub fn resolve(study: &Study, path: &Path, cells_dir: &Path) -> Result<Plan, ScenarioError> {
        let err = |field: String, msg: String| ScenarioError::invalid(path, field, msg);
        if study.name.trim().is_empty() {
            return Err(err("name".into(), "must not be empty".into()));
        }
        if study.name.contains('@') {
            // `NAME@2` is the store's name for a study's second configuration (`run --new-version`).
            return Err(err("name".into(), format!("`{}`: `@` is kept for a study's versions", study.name)));
        }
        if study.runs == 0 {
            return Err(err("runs".into(), "must be at least 1".into()));
        }
        if study.blocks.is_empty() {
            return Err(err("blocks".into(), "a study needs at least one block".into()));
        }
        let mut model_names = std::collections::BTreeSet::new();
        for (i, m) in study.models.iter().enumerate() {
            m.validate().map_err(|e| err(format!("models[{i}]"), e))?;
            if !model_names.insert(m.name.clone()) {
                return Err(err(format!("models[{i}].name"), format!("duplicate model `{}`", m.name)));
            }
        }
        let mut names = std::collections::BTreeSet::new();
        let mut runs = Vec::new();
        for (bi, block) in study.blocks.iter().enumerate() {
            let at = |f: &str| format!("blocks[{bi}].{f}");
            if !names.insert(block.name.clone()) {
                return Err(err(at("name"), format!("duplicate block name `{}`", block.name)));
            }
            block.environment.validate().map_err(|e| err(at("environment"), e.to_string()))?;
            if block.variants.is_empty() {
                return Err(err(at("variants"), "name at least one variant".into()));
            }
            for (n, v) in [("runs", block.runs), ("cell_runs", block.cell_runs)] {
                if v == Some(0) {
                    return Err(err(at(n), "must be at least 1".into()));
                }
            }
            let kind = block.environment.kind();
            let sweep_values = sweep_values(block.sweep.as_ref(), &block.environment)
                .map_err(|(f, m)| err(format!("{}{f}", at("sweep")), m))?;
            let mut cells = Vec::with_capacity(block.cells.len());
            for (ci, cell_name) in block.cells.iter().enumerate() {
                cells.push((ci, load_cell(path, cells_dir, cell_name, || at(&format!("cells[{ci}]")))?));
            }
            if let Some(t) = &block.tournament {
                t.check().map_err(|(f, m)| err(at(&format!("tournament.{f}")), m))?;
                if !block.rosters.is_empty() || block.model_rosters {
                    return Err(err(
                        at("tournament"),
                        "a tournament's pairs are its rosters: leave `rosters` empty and `model_rosters` off".into(),
                    ));
                }
                if block.environment.population() != 2 {
                    return Err(err(
                        at("tournament"),
                        format!(
                            "a tournament plays pairs: {} has {} seats",
                            kind.as_str(),
                            block.environment.population()
                        ),
                    ));
                }
                let noise = Factor::Noise(t.noise.first().copied().unwrap_or(0.5));
                if !t.noise.is_empty() && !noise.applies_to(&block.environment) {
                    return Err(err(
                        at("tournament.noise"),
                        format!("{} has no two-action choice to flip", kind.as_str()),
                    ));
                }
                cells.extend(t.noise_cells().into_iter().map(|c| (block.cells.len(), c)));
            }
            for (ci, cell) in cells {
                if !cell.runs_in(&block.environment) {
                    return Err(err(
                        at(&format!("cells[{ci}]")),
                        format!("cell `{}` does not run in {}", cell.name, kind.as_str()),
                    ));
                }
                // The count and the field that set it (named when the plan grows too large).
                let (count, count_field) = if let Some(t) = &block.tournament {
                    (t.repetitions, at("tournament.repetitions"))
                } else if cell.level == Level::Baseline {
                    match block.runs {
                        Some(n) => (n, at("runs")),
                        None => (study.runs, "runs".to_string()),
                    }
                } else if cell.factors.contains(&Factor::RecognitionProbe) {
                    // The probe is asked outside the behavioural session: one session per
                    // model, environment and variant, in which every seat is asked once.
                    (1, at(&format!("cells[{ci}]")))
                } else {
                    match (block.cell_runs, block.runs) {
                        (Some(n), _) => (n, at("cell_runs")),
                        (None, Some(n)) => (n, at("runs")),
                        (None, None) => (study.runs, "runs".to_string()),
                    }
                };
                for sweep in &sweep_values {
                    let mut env = match sweep {
                        Some(SweepPoint::Params(point)) => point.environment.clone(),
                        _ => block.environment.clone(),
                    };
                    if let (Some(SweepPoint::Fraction(x)), EnvSpec::NamingGame(p)) = (sweep, &mut env) {
                        let mut t = p.tipping.clone().unwrap_or_default();
                        t.fraction = *x;
                        p.tipping = Some(t);
                    }
                    for f in &cell.factors {
                        match f {
                            Factor::Memory(m) => env.set_memory(*m),
                            Factor::GroupSize(n) => {
                                if !env.set_group_size(*n) {
                                    return Err(err(
                                        at(&format!("cells[{ci}]")),
                                        format!("{} has no group size", kind.as_str()),
                                    ));
                                }
                            }
                            _ => {}
                        }
                    }
                    env.validate()
                        .map_err(|e| err(at(&format!("cells[{ci}]")), format!("cell `{}`: {e}", cell.name)))?;
                    let population = env.population();
                    let committed = env.committed_seats();
                    let rosters = block_rosters(study, block).map_err(|(f, m)| err(at(f), m))?;
                    for (ri, roster) in rosters.iter().enumerate() {
                        let rat = |f: &str| at(&format!("rosters[{ri}].{f}"));
                        let seats = expand_roster(roster, population, &committed)
                            .map_err(|m| err(rat("members"), format!("roster `{}`: {m}", roster.name)))?;
                        for (mi, m) in roster.members.iter().enumerate() {
                            m.policy
                                .validate_for(kind)
                                .map_err(|e| err(rat(&format!("members[{mi}].policy")), e.to_string()))?;
                        }
                        // A roster with a person in it is the lab's human sample, never a model.
                        let human = roster.members.iter().any(|m| m.policy.stand_in().is_some());
                        let family = if human { Some(agora_agents::HUMAN.family.to_string()) } else { None };
                        let family = family.or_else(|| roster.family.clone()).unwrap_or_else(|| {
                            roster.members.first().map_or("classical", |m| m.policy.meta().family).to_string()
                        });
                        // A cell changes one factor and holds everything else at the canonical
                        // baseline, so perturbation cells run in C0 (or the block's first variant);
                        // the variants C1–C3 run at baseline.
                        let variants: Vec<Variant> = if cell.level == Level::Baseline {
                            block.variants.clone()
                        } else if block.variants.contains(&Variant::C0) {
                            vec![Variant::C0]
                        } else {
                            block.variants[..1].to_vec()
                        };
                        // Refused before the runs are expanded: a plan is held in memory whole.
                        let planned = runs.len() as u64 + variants.len() as u64 * u64::from(count);
                        if planned > MAX_PLAN_RUNS {
                            let bytes = planned.saturating_mul(bytes_per_planned_run(seats.len()));
                            return Err(err(
                                count_field,
                                format!(
                                    "the plan would hold at least {planned} runs, about {} of memory \
                                     before any runs; a plan holds at most {MAX_PLAN_RUNS} runs",
                                    agora_environments::games::human_bytes(bytes)
                                ),
                            ));
                        }
                        for variant in &variants {
                            for run_index in 0..count {
                                let sweep_label = match sweep {
                                    Some(SweepPoint::Fraction(x)) => format!("{x}"),
                                    Some(SweepPoint::Params(p)) => p.label.clone(),
                                    None => String::new(),
                                };
                                let seed = derive(
                                    study.master_seed,
                                    &[
                                        &study.name,
                                        &block.name,
                                        variant.as_str(),
                                        &cell.name,
                                        &sweep_label,
                                        &roster.name,
                                        &run_index.to_string(),
                                    ],
                                );
                                runs.push(RunSpec {
                                    study: study.name.clone(),
                                    block: block.name.clone(),
                                    environment: env.clone(),
                                    variant: *variant,
                                    cell: cell.name.clone(),
                                    level: cell.level,
                                    factors: cell.factors.clone(),
                                    roster: roster.name.clone(),
                                    family: family.clone(),
                                    seats: seats.clone(),
                                    committed: committed
                                        .iter()
                                        .map(|(s, _)| *s)
                                        .chain(env.game().committed_later())
                                        .collect(),
                                    sweep: match sweep {
                                        Some(SweepPoint::Fraction(x)) => {
                                            Some((block.sweep.as_ref().map_or("", Sweep::name).to_string(), *x))
                                        }
                                        _ => None,
                                    },
                                    point: match sweep {
                                        Some(SweepPoint::Params(p)) => Some(p.label.clone()),
                                        _ => None,
                                    },
                                    run_index,
                                    seed,
                                });
                            }
                        }
                    }
                }
            }
        }
        Ok(Plan {
            study: study.name.clone(),
            master_seed: study.master_seed,
            runs,
            models: study.models.clone(),
            reference: study.reference.clone(),
        })
    }
}

/// A point of a block's sweep: a committed fraction, or a `Grid`'s or `Zip`'s parameters.
enum SweepPoint {
    Fraction(f64),
    Params(crate::sweep::Point),
}

/// The points a block's sweep takes (one `None` without a sweep); the error names the field
/// under `sweep` (empty for the sweep itself) and says what is wrong.
fn sweep_values(sweep: Option<&Sweep>, env: &EnvSpec) -> Result<Vec<Option<SweepPoint>>, (String, String)> {
    let whole = |m: String| (String::new(), m);
    match sweep {
        None => Ok(vec![None]),
        Some(s @ Sweep::CommittedFraction { from, to, step }) => {
            if env.kind() != EnvKind::NamingGame {
                return Err(whole("a committed-fraction sweep needs the naming game".into()));
            }
            if !(*step > 0.0) || from > to || *from < 0.0 || *to > 1.0 {
                return Err(whole(format!(
                    "needs 0 <= from <= to <= 1 and step > 0, got from {from}, to {to}, step {step}"
                )));
            }
            // Each value is a condition with at least one run: counted before they are listed.
            let values = ((to - from) / step).floor() + 1.0;
            if values > MAX_PLAN_RUNS as f64 {
                return Err(whole(format!(
                    "step {step:e} from {from} to {to} gives {values:.3e} values, each a condition of at least one run; a \
                     plan holds at most {MAX_PLAN_RUNS} runs"
                )));
            }
            Ok(s.values().into_iter().map(|x| Some(SweepPoint::Fraction(x))).collect())
        }
        Some(Sweep::Grid(params)) => {
            Ok(crate::sweep::points(params, false, env)?.into_iter().map(|p| Some(SweepPoint::Params(p))).collect())
        }
        Some(Sweep::Zip(params)) => {
            Ok(crate::sweep::points(params, true, env)?.into_iter().map(|p| Some(SweepPoint::Params(p))).collect())
        }
    }
}

/// The cell a block names: the implicit baseline, or the file `<cells_dir>/<name>.ron`.
fn load_cell(path: &Path, cells_dir: &Path, name: &str, field: impl Fn() -> String) -> Result<Cell, ScenarioError> {
    if name == "baseline" {
        return Ok(Cell::baseline());
    }
    let file = cells_dir.join(format!("{name}.ron"));
    if !file.exists() {
        return Err(ScenarioError::UnknownCell {
            path: path.to_path_buf(),
            field: field(),
            name: name.to_string(),
            looked: file,
        });
    }
    Cell::load(&file)
}

/// A block's rosters, with one roster per declared model where the block asks for them; the
/// error names the block field at fault.
fn block_rosters(
    study: &Study,
    block: &crate::study::Block,
) -> Result<Vec<crate::study::Roster>, (&'static str, String)> {
    let mut rosters = block.rosters.clone();
    if let Some(t) = &block.tournament {
        rosters.extend(t.rosters());
    }
    if block.model_rosters {
        if study.models.is_empty() {
            return Err(("model_rosters", "the study declares no models (add `models` or pass --models FILE)".into()));
        }
        for m in &study.models {
            rosters.push(crate::study::Roster {
                name: m.name.clone(),
                family: Some(m.family.clone()),
                members: vec![crate::study::Member { policy: PolicySpec::Llm { model: m.name.clone() }, count: None }],
            });
        }
    }
    if rosters.is_empty() {
        return Err(("rosters", "name at least one roster (or set model_rosters, or declare a tournament)".into()));
    }
    Ok(rosters)
}

/// The default cells directory for a study file: `<study dir>/../cells`.
pub fn default_cells_dir(study_path: &Path) -> PathBuf {
    let parent = study_path.parent().unwrap_or(Path::new("."));
    parent.join("..").join("cells")
}

/// One policy per seat: committed seats first hold their committed agent, members with a
/// count take that many of the remaining seats, and one member without a count fills the rest.
fn expand_roster(
    roster: &crate::study::Roster,
    population: usize,
    committed: &[(usize, u32)],
) -> Result<Vec<PolicySpec>, String> {
    if roster.members.is_empty() {
        return Err("needs at least one member".into());
    }
    let free = population - committed.len();
    let fixed: usize = roster.members.iter().filter_map(|m| m.count).sum();
    let fillers = roster.members.iter().filter(|m| m.count.is_none()).count();
    if fillers > 1 {
        return Err("at most one member may omit `count` (it fills the remaining seats)".into());
    }
    if fixed > free || (fillers == 0 && fixed != free) {
        return Err(format!(
            "members take {fixed} seats but the environment has {free} seats for them ({population} in all, {} committed)",
            committed.len()
        ));
    }
    if roster.members.iter().any(|m| m.count == Some(0)) {
        return Err("a member's count must be at least 1".into());
    }
    let mut seats: Vec<PolicySpec> = Vec::with_capacity(population);
    let mut members = Vec::new();
    for m in &roster.members {
        let n = m.count.unwrap_or(free - fixed);
        members.extend(std::iter::repeat_n(m.policy.clone(), n));
    }
    let mut rest = members.into_iter();
    for seat in 0..population {
        match committed.iter().find(|(s, _)| *s == seat) {
            Some((_, name)) => seats.push(PolicySpec::Committed(*name)),
            None => seats.push(rest.next().expect("invariant: seat counts were checked")),
        }
    }
    Ok(seats)
}
