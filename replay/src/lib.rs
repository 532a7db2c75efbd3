//! The paper's own results, replayed: a scripted roster of the paper's twelve models
//! (`replay/paper-roster.ron`) played through the engine at the paper's run counts,
//! into a store, and graded by the same analysis `agora analyze` runs on it.
//!
//! The roster file states each model's run-level means as the paper ("Benchmarking large
//! language model agent societies against human behavioural distributions") prints them, fills
//! what it does not print by rules declared in the file, and cites each entry. Here each entry
//! becomes a seat's way of playing (rule 3 of the file): [`PaperRoster::plan`] takes the shipped
//! instrument study's blocks for the arms the roster scripts, [`PaperRoster::factory`] gives
//! every model seat a [`ScriptedSeat`] that answers each decision the game asks, and
//! [`PaperRoster::play`] runs them and analyses the store. The games, their metrics, the
//! records and the analysis are the ones a study of real models goes through; only the answers
//! are scripted.

pub mod paper_figures;
mod player;
mod verdicts;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use serde::{Deserialize, Serialize};

use agora_agents::llm::ModelSpec;
use agora_agents::{Policy, PolicySpec};
use agora_engine::runner::PolicyFactory;
use agora_engine::{execute, RunSpec, RunnerOptions, Store};
use agora_environments::{EnvKind, Variant};
use agora_scenarios::plan::default_cells_dir;
use agora_scenarios::{Plan, Study};

pub use player::{Naming, Play, ScriptedSeat};
pub use verdicts::{agreeing, perturbation_family_size, report, robust_models, verdict_table, PAPER_SAYS};

/// The shipped roster file's text.
pub const PAPER_ROSTER_RON: &str = include_str!("../paper-roster.ron");

/// The name of the study the replay records.
pub const REPLAY_STUDY: &str = "paper-replay";

/// What precedes the roster's hash in the description of the study a replay records.
pub const ROSTER_HASH_LABEL: &str = "roster sha256 ";

/// Runs per cell.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Runs {
    /// Baseline runs of a repeated game or the naming game.
    pub repeated: u32,
    /// Runs of each perturbation cell, re-skin and C3 there.
    pub repeated_cell: u32,
    /// Baseline runs of a one-shot game.
    pub one_shot: u32,
    /// Runs of each cell of a one-shot game.
    pub one_shot_cell: u32,
}

/// A model's partial battery.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Partial {
    /// Baseline runs of a repeated game.
    pub repeated: u32,
    /// Baseline runs of a one-shot game.
    pub one_shot: u32,
    /// Runs of each cell.
    pub cell: u32,
}

/// A change the paper names in one cell.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Effect {
    /// `environment/arm/metric`.
    pub at: String,
    /// The cell, or a variant (`C1`, `C2`, `C3`: that variant's baseline cell).
    pub cell: String,
    /// The run-level mean in that cell.
    pub value: f64,
    /// The sentence it comes from.
    pub source: String,
}

/// How a model's convention meets a committed minority.
#[derive(Clone, Debug, Deserialize, Serialize)]
pub enum Tipping {
    /// Overturned from this committed fraction on, held below it.
    Critical(f64, String),
    /// Held at every fraction tested.
    NeverOverturned(String),
    /// No convention forms to overturn.
    NoConvention(String),
    /// No sweep run.
    NotSwept(String),
}

/// One model of the roster.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Model {
    /// Name as the paper gives it.
    pub name: String,
    /// Model family.
    pub family: String,
    /// A partial battery, where the model ran one.
    #[serde(default)]
    pub partial: Option<Partial>,
    /// `environment/arm/metric` → (baseline mean, source).
    pub baseline: BTreeMap<String, (f64, String)>,
    /// Changes the paper names in a cell.
    pub effects: Vec<Effect>,
    /// The tipping sweep.
    pub tipping: Tipping,
}

/// The scripted roster.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PaperRoster {
    /// Format version.
    pub version: u32,
    /// The declared rules that fill what the paper does not print, by number.
    pub rules: BTreeMap<u32, String>,
    /// Runs per cell.
    pub runs: Runs,
    /// `environment/arm` → (representation-level cells, design-level cells) the replay runs.
    pub cells: BTreeMap<String, (Vec<String>, Vec<String>)>,
    /// The twelve models.
    pub models: Vec<Model>,
}

/// The variants an effect may name in place of a cell: the re-skins and the divergent payoffs.
const DIVERGENT: [&str; 3] = ["C1", "C2", "C3"];

/// Whether an effect named for `cell` applies to run `r`: a cell of the canonical variant, or
/// a variant's baseline cell.
fn applies(cell: &str, r: &RunSpec) -> bool {
    if DIVERGENT.contains(&cell) {
        r.cell == "baseline" && r.variant.as_str() == cell
    } else {
        r.cell == cell && r.variant == Variant::C0
    }
}

/// Environments whose games are one-shot (two runs per cell in the paper).
const ONE_SHOT: [EnvKind; 2] = [EnvKind::Bargaining, EnvKind::MoneyRequest];

impl PaperRoster {
    /// Parses a roster file; every effect must name a metric of the model's baseline and a
    /// cell of its environment arm.
    pub fn parse(text: &str) -> Result<PaperRoster, String> {
        let r: PaperRoster = ron::from_str(text).map_err(|e| e.to_string())?;
        for m in &r.models {
            for e in &m.effects {
                if !m.baseline.contains_key(&e.at) {
                    return Err(format!("{}: effect at {}: no baseline entry there", m.name, e.at));
                }
                let arm = e.at.rsplit_once('/').map_or("", |(a, _)| a);
                let known = DIVERGENT.contains(&e.cell.as_str())
                    || r.cells.get(arm).is_some_and(|(rep, des)| rep.contains(&e.cell) || des.contains(&e.cell));
                if !known {
                    return Err(format!("{}: effect at {}: {} is not a cell of {arm}", m.name, e.at, e.cell));
                }
            }
        }
        Ok(r)
    }

    /// Every entry whose citation does not hold, in words: a printed entry's value must appear
    /// in the quotation it carries ([`printed_in`]) and the quotation must name the model; any
    /// other entry must start "not printed: rule N" with N a declared rule. Empty for the
    /// shipped roster (tested).
    pub fn citation_problems(&self) -> Vec<String> {
        let mut problems = Vec::new();
        for m in &self.models {
            let mut check = |what: String, value: f64, baseline: Option<f64>, source: &str| {
                if let Some(rest) = source.strip_prefix("not printed: rule ") {
                    let n: String = rest.chars().take_while(char::is_ascii_digit).collect();
                    if !n.parse::<u32>().is_ok_and(|n| self.rules.contains_key(&n)) {
                        problems.push(format!("{what}: \"{source}\" names no declared rule"));
                    }
                    return;
                }
                let quotes = quotations(source);
                if quotes.is_empty() {
                    problems.push(format!("{what}: neither a quotation nor \"not printed: rule N\""));
                    return;
                }
                // A model of a family the sentence is about is named by its size ("at 4B and 8B").
                let size = m.name.rsplit_once('-').map(|(_, s)| s).filter(|s| s.ends_with('B'));
                let names = |q: &str| q.contains(&m.name) || size.is_some_and(|s| q.contains(&format!(" {s}")));
                if !quotes.iter().any(|q| names(q) && printed_in(value, baseline, q)) {
                    problems.push(format!("{what}: {value} is not printed for {} in {source}", m.name));
                }
            };
            for (at, (v, source)) in &m.baseline {
                check(format!("{} {at}", m.name), *v, None, source);
            }
            for e in &m.effects {
                let base = m.baseline.get(&e.at).map(|(v, _)| *v);
                check(format!("{} {} in {}", m.name, e.at, e.cell), e.value, base, &e.source);
            }
        }
        problems
    }

    /// The shipped roster.
    pub fn shipped() -> &'static PaperRoster {
        static R: OnceLock<PaperRoster> = OnceLock::new();
        R.get_or_init(|| PaperRoster::parse(PAPER_ROSTER_RON).expect("invariant: the shipped roster parses (tested)"))
    }

    /// SHA-256 of the roster as parsed (its canonical RON, comments and layout left out): the
    /// played study carries it, so that a store is never graded as the replay of a roster it was
    /// not played from.
    pub fn hash(&self) -> String {
        let canonical = ron::ser::to_string(self).expect("invariant: a parsed roster serialises");
        agora_engine::seed::hex_digest(canonical.as_bytes())
    }

    /// A smaller roster: the named models only, each with its entries for the named
    /// environment arms (`environment/arm`, the tipping sweep as `naming-game/tipping`) only.
    /// For variants played by tests and the sensitivity analysis, where the whole replay is
    /// not needed.
    pub fn only(&self, models: &[&str], arms: &[&str]) -> PaperRoster {
        let kept = |at: &str| arms.iter().any(|a| at.starts_with(&format!("{a}/")));
        let mut r = self.clone();
        r.models.retain(|m| models.contains(&m.name.as_str()));
        for m in &mut r.models {
            m.baseline.retain(|at, _| kept(at));
            m.effects.retain(|e| kept(&e.at));
            if !arms.contains(&"naming-game/tipping") {
                m.tipping = Tipping::NotSwept("left out of this variant".into());
            }
        }
        r
    }

    /// The declared alternatives to the roster's free choices in the dilemma, each as a
    /// variant of the dilemma arm alone: rule 4's file order (which three models decline: the
    /// first three allowed, or the last three), rule 9's size of a decline (0.15, 0.20, 0.30)
    /// and rule 8's unprinted level (0.90, 0.95). The shipped roster is the variant
    /// "first three, 0.20, 0.95".
    pub fn dilemma_alternatives(&self) -> Vec<(String, PaperRoster)> {
        const COOP: &str = "prisoners-dilemma/baseline/cooperation";
        const CHANGE: &str = "prisoners-dilemma/baseline/cooperation_change";
        let names: Vec<&str> = self.models.iter().map(|m| m.name.as_str()).collect();
        let base = self.only(&names, &["prisoners-dilemma/baseline"]);
        // The models rule 8 sets to its level, and those whose level leaves room for a decline.
        let at_level = |m: &Model| {
            m.baseline.get(COOP).is_some_and(|(v, s)| s.starts_with("not printed: rule 8") && *v > 0.0 && *v < 1.0)
        };
        let mut out = Vec::new();
        for order in ["first three", "last three"] {
            for size in [0.15, 0.20, 0.30] {
                for level in [0.90, 0.95] {
                    let mut r = base.clone();
                    let mut eligible: Vec<String> = Vec::new();
                    for m in &mut r.models {
                        if at_level(m) {
                            if let Some(e) = m.baseline.get_mut(COOP) {
                                e.0 = level;
                            }
                            eligible.push(m.name.clone());
                        }
                        if let Some(e) = m.baseline.get_mut(CHANGE) {
                            e.0 = 0.0;
                        }
                    }
                    if order == "last three" {
                        eligible.reverse();
                    }
                    for name in eligible.iter().take(3) {
                        if let Some(e) = r.model_mut(name).and_then(|m| m.baseline.get_mut(CHANGE)) {
                            e.0 = -size;
                        }
                    }
                    out.push((format!("{order}, {size:.2}, {level:.2}"), r));
                }
            }
        }
        out
    }

    /// The model named `name`, to edit a variant.
    pub fn model_mut(&mut self, name: &str) -> Option<&mut Model> {
        self.models.iter_mut().find(|m| m.name == name)
    }

    fn model(&self, name: &str) -> Option<&Model> {
        self.models.iter().find(|m| m.name == name)
    }

    /// The study the roster plays: the instrument's blocks for the environment arms the roster
    /// has entries for (and its tipping arm), each with the cells the roster lists for it, the
    /// roster's run counts and the roster's twelve models in place of the instrument's.
    pub fn study(&self, instrument: &Study) -> Result<Study, String> {
        let mut study = instrument.clone();
        study.name = REPLAY_STUDY.into();
        study.description = format!(
            "The instrument paper's twelve models, scripted from its printed figures ({ROSTER_HASH_LABEL}{})",
            self.hash()
        );
        study.reference = None;
        study.include_models = None;
        study.models = self.models.iter().map(scripted_model).collect::<Result<_, _>>()?;
        let arms: std::collections::BTreeSet<&str> = self
            .models
            .iter()
            .flat_map(|m| m.baseline.keys())
            .filter_map(|k| k.rsplit_once('/').map(|(arm, _)| arm))
            .collect();
        let mut blocks = Vec::new();
        for b in &instrument.blocks {
            let key = format!("{}/{}", b.environment.kind().as_str(), b.environment.arm());
            let tipping = b.environment.arm() == "tipping";
            if !tipping && !arms.contains(key.as_str()) {
                continue;
            }
            let mut b = b.clone();
            let one_shot = ONE_SHOT.contains(&b.environment.kind());
            // The tipping sweep runs as the instrument runs it: the paper gives no count for it.
            if !tipping {
                let (rep, des) = self
                    .cells
                    .get(&key)
                    .ok_or_else(|| format!("cells: no entry for {key}, an arm the roster plays"))?;
                let mut cells = vec!["baseline".to_string()];
                for c in rep.iter().chain(des) {
                    if !b.cells.contains(c) {
                        return Err(format!("cells: {c} is not a cell of the instrument's block `{}`", b.name));
                    }
                    cells.push(c.clone());
                }
                b.cells = cells;
                let (base, cell) = if one_shot {
                    (self.runs.one_shot, self.runs.one_shot_cell)
                } else {
                    (self.runs.repeated, self.runs.repeated_cell)
                };
                b.runs = Some(base);
                b.cell_runs = Some(cell);
            }
            blocks.push(b);
        }
        study.blocks = blocks;
        Ok(study)
    }

    /// The runs of the replay: the plan of [`PaperRoster::study`], less what a model did not
    /// run (an arm it has no entries for, a tipping sweep it did not run, the runs beyond a
    /// partial battery).
    pub fn plan(&self, instrument_path: &Path) -> Result<Plan, String> {
        Ok(self.study_and_plan(instrument_path)?.1)
    }

    /// The study the roster plays and its runs ([`PaperRoster::plan`]).
    fn study_and_plan(&self, instrument_path: &Path) -> Result<(Study, Plan), String> {
        let instrument = Study::load(instrument_path).map_err(|e| e.to_string())?;
        let study = self.study(&instrument)?;
        let mut plan =
            Plan::resolve(&study, instrument_path, &default_cells_dir(instrument_path)).map_err(|e| e.to_string())?;
        plan.runs.retain(|r| self.model(&r.roster).is_some_and(|m| ran(m, r)));
        Ok((study, plan))
    }

    /// Builds the seats of a replay run: each model seat a [`ScriptedSeat`] playing its
    /// model's entries for the run's arm, cell and variant; committed and classical seats
    /// from their specifications.
    pub fn factory(&self, plan: &Plan) -> PolicyFactory {
        let mut counts: BTreeMap<String, u32> = BTreeMap::new();
        for r in &plan.runs {
            *counts.entry(condition(r)).or_default() += 1;
        }
        let roster = self.clone();
        Arc::new(move |spec: &RunSpec, _| {
            let n = counts.get(&condition(spec)).copied().unwrap_or(1);
            spec.seats
                .iter()
                .map(|p| match p {
                    PolicySpec::Llm { model } => {
                        let m = roster.model(model).ok_or_else(|| format!("{model} is not in the roster"))?;
                        let play = Play::of(m, spec, n)?;
                        Ok(Box::new(ScriptedSeat::new(play)) as Box<dyn Policy>)
                    }
                    other => Ok(other.build()),
                })
                .collect()
        })
    }

    /// Plays the replay into the store at `store` (runs already there are kept) and analyses
    /// it as `agora analyze --study paper-replay` does. A store holding a replay played from
    /// another roster (another hash in its recorded study) is refused: its runs would be kept and
    /// graded as if they were this roster's.
    pub fn play(&self, instrument_path: &Path, store: &Path) -> Result<agora_analysis::analyze::Analysis, String> {
        let (study, plan) = self.study_and_plan(instrument_path)?;
        let mut s = Store::open(store).map_err(|e| e.to_string())?;
        // The store keeps the study as played for its source, the roster's hash in it.
        let source =
            ron::ser::to_string_pretty(&study, ron::ser::PrettyConfig::default()).map_err(|e| e.to_string())?;
        if let Some(recorded) = s.study_source(REPLAY_STUDY).map_err(|e| e.to_string())? {
            let theirs = roster_hash_in(&recorded);
            if theirs != Some(self.hash().as_str()) {
                return Err(format!(
                    "{} holds a replay played from another roster (roster sha256 {}, this one {}): its runs \
                     would be graded as this roster's; name a fresh store with --store, or delete that one",
                    store.display(),
                    theirs.unwrap_or("not recorded"),
                    self.hash()
                ));
            }
        }
        s.record_study(&plan.study_record(), &source).map_err(|e| e.to_string())?;
        let opts = RunnerOptions { policy_factory: Some(self.factory(&plan)), ..RunnerOptions::default() };
        let report = execute(&plan.runs, &mut s, &opts, &mut |_| {}).map_err(|e| e.to_string())?;
        // Runs this call did not play are graded only when they are what was recorded: a store
        // altered by hand since is refused, not graded.
        if report.skipped > 0 {
            let v = s.verify().map_err(|e| e.to_string())?;
            if let Some(first) = v.mismatches.first() {
                return Err(format!(
                    "{}: {} of {} runs no longer hash to their record hash (the first: {}): the store was \
                     altered after it was played; name a fresh store with --store",
                    store.display(),
                    v.mismatches.len(),
                    v.runs,
                    first.run_key
                ));
            }
        }
        drop(s);
        agora_analysis::analyze::analyze(store, Some(REPLAY_STUDY)).map_err(|e| e.to_string())
    }
}

/// The quoted passages of a source: the text between each “ and its ”.
fn quotations(source: &str) -> Vec<&str> {
    source.split('“').skip(1).filter_map(|q| q.split_once('”').map(|(q, _)| q)).collect()
}

/// Whether `value` is printed in the quotation `q`: as a number with two decimals ("0.07"), as
/// a change of "N points" from the model's `baseline` entry (for a cell's effect), or, for 0
/// and 1, as the words the paper uses for them ("never", "entirely"; "always", "the full
/// endowment").
pub fn printed_in(value: f64, baseline: Option<f64>, q: &str) -> bool {
    if q.contains(&format!("{value:.2}")) {
        return true;
    }
    if let Some(b) = baseline {
        let points = ((value - b).abs() * 100.0).round();
        if q.contains(&format!(" {points} points")) {
            return true;
        }
    }
    let words: &[&str] = if value == 0.0 {
        &["never", "entirely"]
    } else if value == 1.0 {
        &["always", "the full endowment"]
    } else {
        &[]
    };
    words.iter().any(|w| q.contains(w))
}

/// The roster hash a recorded replay study carries in its description, if any.
pub fn roster_hash_in(source: &str) -> Option<&str> {
    let (_, rest) = source.split_once(ROSTER_HASH_LABEL)?;
    let hash = &rest[..rest.find(|c: char| !c.is_ascii_hexdigit()).unwrap_or(rest.len())];
    (hash.len() == 64).then_some(hash)
}

/// The shipped instrument study, found from the working directory or from this crate's
/// place in the repository.
pub fn instrument_path() -> PathBuf {
    let rel = Path::new("scenarios/studies/instrument.ron");
    if rel.exists() {
        rel.to_path_buf()
    } else {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(rel)
    }
}

/// A roster model as a study's model: its name and family, and an address in the reserved
/// `.invalid` domain, since a scripted seat never calls a server.
fn scripted_model(m: &Model) -> Result<ModelSpec, String> {
    let text = format!(
        "Model(name: {:?}, family: {:?}, endpoints: [\"http://scripted.invalid/v1\"], served_id: {:?}, \
         notes: \"scripted from the paper's printed figures; no server is called\")",
        m.name, m.family, m.name
    );
    ron::from_str(&text).map_err(|e| format!("{}: {e}", m.name))
}

/// Whether the roster model `m` ran `r` (rule 2 of the roster file).
fn ran(m: &Model, r: &RunSpec) -> bool {
    let arm = r.arm();
    if arm == "tipping" {
        return !matches!(m.tipping, Tipping::NotSwept(_));
    }
    let key = format!("{}/{arm}/", r.environment.kind().as_str());
    if !m.baseline.keys().any(|k| k.starts_with(&key)) {
        return false;
    }
    let Some(p) = &m.partial else { return true };
    let baseline = r.cell == "baseline" && r.variant == Variant::C0;
    let limit = match (baseline, ONE_SHOT.contains(&r.environment.kind())) {
        (true, true) => p.one_shot,
        (true, false) => p.repeated,
        (false, _) => p.cell,
    };
    r.run_index < limit
}

/// The runs that share a run's condition: roster, block, cell, variant and swept value.
fn condition(r: &RunSpec) -> String {
    format!(
        "{}|{}|{}|{}|{:?}",
        r.roster,
        r.block,
        r.cell,
        r.variant.as_str(),
        r.sweep.as_ref().map(|(_, v)| v.to_bits())
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use agora_agents::Decision;
    use agora_environments::{Action, ActionSpace, Context, Feedback, Observation, PayoffBounds, Role};
    use rand::SeedableRng;

    fn obs(round: u32, rounds: u32, space: ActionSpace) -> Observation {
        Observation {
            env: EnvKind::PrisonersDilemma,
            variant: Variant::C0,
            role: Role::Player,
            round,
            rounds: Some(rounds),
            space,
            context: Context::None,
            payoffs: PayoffBounds { min: 0.0, mean_abs: 1.0 },
            memory: 5,
        }
    }

    fn choice(n: usize) -> ActionSpace {
        ActionSpace::Choice { labels: (0..n).map(|i| format!("n{i}")).collect::<Vec<_>>().into() }
    }

    fn ready(d: Decision) -> Action {
        match d {
            Decision::Ready(a) => a,
            Decision::Deferred(_) => panic!("a scripted seat answers at once"),
        }
    }

    #[test]
    fn systematic_sampling_plays_the_expected_count_in_every_run() {
        // Mean 0.3 and change -0.2 over ten rounds: probabilities 0.4 down to 0.2, summing to 3.
        for seed in 0..50 {
            let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(seed);
            let mut seat = ScriptedSeat::new(Play::Dilemma { mean: 0.3, change: -0.2 });
            let cooperated =
                (1..=10).filter(|r| ready(seat.decide(&obs(*r, 10, choice(2)), &mut rng)) == Action::Choice(0)).count();
            assert_eq!(cooperated, 3, "seed {seed}");
        }
    }

    #[test]
    fn an_amount_is_exact_in_expectation() {
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(7);
        let mut seat = ScriptedSeat::new(Play::Share(0.23));
        let n = 20_000;
        let total: i64 = (0..n)
            .map(|_| match ready(seat.decide(&obs(1, 1, ActionSpace::Amount { min: 0, max: 100 }), &mut rng)) {
                Action::Amount(a) => a,
                other => panic!("{other:?}"),
            })
            .sum();
        assert!((total as f64 / n as f64 - 23.0).abs() < 0.1, "{}", total as f64 / n as f64);
        // As a responder it accepts.
        assert_eq!(ready(seat.decide(&obs(1, 1, choice(2)), &mut rng)), Action::Choice(0));
    }

    #[test]
    fn a_follower_takes_the_first_other_name_it_meets_and_keeps_it() {
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(1);
        let mut seat = ScriptedSeat::new(Play::Naming(Naming::Follow));
        let fb = |n: u32| Feedback {
            round: 1,
            own: Vec::new(),
            others: vec![Action::Choice(n)],
            partner: None,
            payoff: 0.0,
        };
        assert_eq!(ready(seat.decide(&obs(1, 1, choice(10)), &mut rng)), Action::Choice(0));
        seat.update(&fb(0));
        assert_eq!(ready(seat.decide(&obs(2, 1, choice(10)), &mut rng)), Action::Choice(0));
        seat.update(&fb(1));
        seat.update(&fb(0));
        assert_eq!(ready(seat.decide(&obs(3, 1, choice(10)), &mut rng)), Action::Choice(1));
        // A holder never moves.
        let mut holder = ScriptedSeat::new(Play::Naming(Naming::FirstListed));
        holder.update(&fb(1));
        assert_eq!(ready(holder.decide(&obs(4, 1, choice(10)), &mut rng)), Action::Choice(0));
    }

    #[test]
    fn an_arm_the_roster_does_not_script_is_refused_by_name() {
        let roster = PaperRoster::shipped();
        let plan = roster.plan(&instrument_path()).expect("plan");
        let mut run = plan.runs.iter().find(|r| r.roster == "Qwen3-8B" && r.block == "pd").expect("a run").clone();
        run.environment = ron::from_str("Bargaining((game: Trust))").expect("a trust game");
        run.seats = vec![run.seats[0].clone(); 2];
        let err = roster.factory(&plan)(&run, &Default::default()).err().expect("refused");
        assert_eq!(err, "Qwen3-8B: the roster does not script bargaining/trust");
    }
}
