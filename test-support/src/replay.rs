//! The paper's own results, replayed: a scripted roster of the paper's twelve models
//! (`test-support/replay/paper-roster.ron`) expanded into run outcomes at the paper's run counts, and
//! graded by the same analysis `agora analyze` runs on a store.
//!
//! The roster file states each model's run-level means as the paper ("Benchmarking large
//! language model agent societies against human behavioural distributions") prints them, fills
//! what it does not print by rules declared in the file, and cites each entry. The expansion
//! here is mechanical (rule 3 of the file): a run's value is the entry's mean plus a fixed
//! spread, and a 0/1 outcome holds in the first round(rate × runs) runs. The runs are outcomes,
//! not played games: the replay tests the step from numbers to verdicts, which is where the
//! paper's conclusions are drawn.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde::Deserialize;

use agora_analysis::outcomes::RunOutcome;

/// The shipped roster file's text.
pub const PAPER_ROSTER_RON: &str = include_str!("../replay/paper-roster.ron");

/// Runs per cell.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Runs {
    /// Baseline runs of a repeated game or the naming game.
    pub repeated: usize,
    /// Runs of each perturbation cell, re-skin and C3 there.
    pub repeated_cell: usize,
    /// Baseline runs of a one-shot game.
    pub one_shot: usize,
    /// Runs of each cell of a one-shot game.
    pub one_shot_cell: usize,
}

/// A model's partial battery.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Partial {
    /// Baseline runs of a repeated game.
    pub repeated: usize,
    /// Baseline runs of a one-shot game.
    pub one_shot: usize,
    /// Runs of each cell.
    pub cell: usize,
}

/// A change the paper names in one cell.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Effect {
    /// `environment/arm/metric`.
    pub at: String,
    /// The cell.
    pub cell: String,
    /// The run-level mean in that cell.
    pub value: f64,
    /// The sentence it comes from.
    pub source: String,
}

/// How a model's convention meets a committed minority.
#[derive(Clone, Debug, Deserialize)]
pub enum Tipping {
    /// Overturned in every run from this committed fraction on, held below it.
    Critical(f64, String),
    /// Held at every fraction tested.
    NeverOverturned(String),
    /// No convention forms to overturn.
    NoConvention(String),
    /// No sweep run.
    NotSwept(String),
}

/// One model of the roster.
#[derive(Clone, Debug, Deserialize)]
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
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PaperRoster {
    /// Format version.
    pub version: u32,
    /// Spread d of a run's value around its mean.
    pub spread: f64,
    /// Runs per cell.
    pub runs: Runs,
    /// `environment/arm` → (representation-level cells, design-level cells).
    pub cells: BTreeMap<String, (Vec<String>, Vec<String>)>,
    /// Committed fractions of the tipping sweep.
    pub tipping_fractions: Vec<f64>,
    /// The twelve models.
    pub models: Vec<Model>,
}

/// Environments whose games are one-shot (two runs per cell in the paper).
const ONE_SHOT: [&str; 2] = ["bargaining", "money-request"];
/// Run-level outcomes that are 0/1.
const BINARY: [&str; 2] = ["convention", "overturned"];
/// Population of the naming game.
const NAMING_POPULATION: i64 = 24;

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
                let known = r.cells.get(arm).is_some_and(|(rep, des)| rep.contains(&e.cell) || des.contains(&e.cell));
                if !known {
                    return Err(format!("{}: effect at {}: {} is not a cell of {arm}", m.name, e.at, e.cell));
                }
            }
        }
        Ok(r)
    }

    /// The shipped roster.
    pub fn shipped() -> &'static PaperRoster {
        static R: OnceLock<PaperRoster> = OnceLock::new();
        R.get_or_init(|| PaperRoster::parse(PAPER_ROSTER_RON).expect("invariant: the shipped roster parses (tested)"))
    }

    /// Every run of the roster, in a fixed order.
    pub fn outcomes(&self) -> Vec<RunOutcome> {
        let mut out = Vec::new();
        for m in &self.models {
            self.model_outcomes(m, &mut out);
        }
        out
    }

    fn model_outcomes(&self, m: &Model, out: &mut Vec<RunOutcome>) {
        // The environment arms the model has entries for.
        let mut arms: BTreeMap<&str, Vec<(&str, f64)>> = BTreeMap::new();
        for (key, (value, _)) in &m.baseline {
            let Some((arm, metric)) = key.rsplit_once('/') else { continue };
            arms.entry(arm).or_default().push((metric, *value));
        }
        for (arm_key, metrics) in arms {
            let Some((env, arm)) = arm_key.split_once('/') else { continue };
            if env == "public-goods" && m.partial.is_some() {
                continue;
            }
            let one_shot = ONE_SHOT.contains(&env);
            let (base_runs, cell_runs) = match (&m.partial, one_shot) {
                (Some(p), true) => (p.one_shot, p.cell),
                (Some(p), false) => (p.repeated, p.cell),
                (None, true) => (self.runs.one_shot, self.runs.one_shot_cell),
                (None, false) => (self.runs.repeated, self.runs.repeated_cell),
            };
            let mut places = vec![("baseline", "baseline", "C0", base_runs)];
            if let Some((rep, des)) = self.cells.get(arm_key) {
                places.extend(rep.iter().map(|c| (c.as_str(), "representation", "C0", cell_runs)));
                places.extend(des.iter().map(|c| (c.as_str(), "design", "C0", cell_runs)));
            }
            places.extend(["C1", "C2", "C3"].map(|v| ("baseline", "baseline", v, cell_runs)));
            for (cell, level, variant, n) in places {
                let means: Vec<(&str, f64)> = metrics
                    .iter()
                    .map(|(metric, base)| {
                        let at = format!("{arm_key}/{metric}");
                        let named = m.effects.iter().find(|e| e.at == at && e.cell == cell && variant == "C0");
                        (*metric, named.map_or(*base, |e| e.value))
                    })
                    .collect();
                for i in 0..n {
                    let mut values: BTreeMap<String, f64> = means
                        .iter()
                        .map(|(metric, mean)| (metric.to_string(), self.value(metric, *mean, i, n)))
                        .collect();
                    if env == "public-goods" {
                        if let (Some(r1), Some(r10)) = (values.get("contribution_r1"), values.get("contribution_r10")) {
                            let (r1, r10) = (*r1, *r10);
                            values.insert("contribution_change".into(), r10 - r1);
                            values.insert("contribution_last".into(), r10);
                        }
                    }
                    let population = if env == "naming-game" { NAMING_POPULATION } else { 2 };
                    push(out, m, (env, arm, cell, level, variant), values, None, 0, population);
                }
            }
        }
        self.tipping(m, out);
    }

    /// The run-level value of run `i` of `n` around `mean` (rule 3 of the roster file).
    fn value(&self, metric: &str, mean: f64, i: usize, n: usize) -> f64 {
        if BINARY.contains(&metric) {
            let held = (mean * n as f64).round() as usize;
            return if i < held { 1.0 } else { 0.0 };
        }
        let offset = [-1.0, -0.5, 0.0, 0.5, 1.0][i % 5] * self.spread;
        let v = mean + offset;
        let is_change = metric.ends_with("_change");
        if is_change {
            v
        } else {
            v.clamp(0.0, 1.0)
        }
    }

    /// The committed-minority sweep: at each fraction, `repeated_cell` runs that formed a
    /// convention, overturned from the critical fraction on.
    fn tipping(&self, m: &Model, out: &mut Vec<RunOutcome>) {
        let (formed, critical) = match &m.tipping {
            Tipping::NotSwept(_) => return,
            Tipping::NoConvention(_) => (0.0, None),
            Tipping::NeverOverturned(_) => (1.0, None),
            Tipping::Critical(c, _) => (1.0, Some(*c)),
        };
        for f in &self.tipping_fractions {
            let k = (f * NAMING_POPULATION as f64).round() as i64;
            let over = match critical {
                Some(c) if *f >= c - 1e-9 && formed > 0.0 => 1.0,
                _ => 0.0,
            };
            for _ in 0..self.runs.repeated_cell {
                let values = BTreeMap::from([
                    ("convention".to_string(), formed),
                    ("committed_share".to_string(), k as f64 / NAMING_POPULATION as f64),
                    ("overturned".to_string(), over),
                ]);
                let place = ("naming-game", "tipping", "baseline", "baseline", "C0");
                push(out, m, place, values, Some(*f), k, NAMING_POPULATION);
            }
        }
    }
}

fn push(
    out: &mut Vec<RunOutcome>,
    m: &Model,
    (environment, arm, cell, level, variant): (&str, &str, &str, &str, &str),
    metrics: BTreeMap<String, f64>,
    sweep: Option<f64>,
    committed: i64,
    population: i64,
) {
    out.push(RunOutcome {
        run_id: out.len() as i64 + 1,
        run_key: format!("paper-{:06}", out.len() + 1),
        study: "paper-replay".into(),
        block: format!("{environment}/{arm}"),
        environment: environment.into(),
        arm: arm.into(),
        variant: variant.into(),
        cell: cell.into(),
        level: level.into(),
        roster: m.name.clone(),
        family: m.family.clone(),
        sweep,
        committed,
        population,
        metrics,
    });
}

/// What the paper concludes of each claim it grades, in its words, for the verdict table beside
/// the replay's; claims the paper does not grade say so.
pub const PAPER_SAYS: [(&str, &str); 16] = [
    ("pgg-round1-human", "Tier 1: “fall inside the margin fixed in advance for eight of the eleven models”; not robust (“No other finding satisfies more than one condition”)"),
    ("pgg-round10-human", "“by the final round, none does” (no round-10 anchor value on record here)"),
    ("pgg-decline", "“reproduced by one model of twelve”"),
    ("cc-slope", "not graded"),
    ("pd-decline", "“the decline of cooperation in the repeated dilemma by three” (tier not printed)"),
    ("pd-endgame", "not graded"),
    ("pd-corridor", "not Tier 1: “no model’s cooperation rate falls inside the corridor”"),
    ("convention-forms", "Tier 2: “Convention formation is the only finding that reaches Tier 2”"),
    ("punishment-raises", "not Tier 1: contributions “fall in four of the nine models” (not scripted)"),
    ("critical-mass", "not Tier 1: “none of the seven falls inside the human bracket”"),
    ("ultimatum-offer", "Tier 1: “match the meta-analytic mean of 0.40 … for one model of twelve”; one-shot cells descriptive"),
    ("ultimatum-rejection", "not graded (not scripted)"),
    ("dictator-giving", "not Tier 1: “Dictator giving matches for none”"),
    ("trust-sent", "not graded (not scripted)"),
    ("trust-returned", "not graded (not scripted)"),
    ("money-request-distance", "distances 0.637 to 0.062 in the Qwen3 family, no threshold printed (not scripted)"),
];

/// Tests in `model`'s perturbation family for `environment` (the contrasts Holm-adjusted
/// together).
pub fn perturbation_family_size(a: &agora_analysis::analyze::Analysis, model: &str, environment: &str) -> usize {
    a.contrasts
        .iter()
        .filter(|c| c.model == model && c.environment == environment && c.family_of_tests == "perturbation")
        .filter(|c| c.p_holm.is_some())
        .count()
}

/// Models whose baseline agrees with the directional rule of `claim`.
pub fn agreeing(a: &agora_analysis::analyze::Analysis, claim: &str) -> usize {
    a.directional.iter().filter(|r| r.claim == claim && r.agrees == Some(true)).count()
}

/// The verdict table of a replay: each claim's tier and first unmet condition beside what the
/// paper concludes, then the directional counts and the family sizes, as Markdown.
pub fn verdict_table(a: &agora_analysis::analyze::Analysis) -> String {
    let mut s =
        String::from("| claim | replay: tier | replay: first unmet condition | the paper |\n|---|---|---|---|\n");
    for v in &a.verdicts {
        let paper = PAPER_SAYS.iter().find(|(id, _)| *id == v.claim).map_or("-", |(_, t)| t);
        let unmet = v.first_unmet.as_deref().unwrap_or("-").replace('|', "/");
        s.push_str(&format!("| {} | {} | {} | {} |\n", v.claim, v.tier_name, unmet, paper));
    }
    let agree = |claim: &str| agreeing(a, claim);
    let models = a.directional.iter().filter(|r| r.claim == "convention-forms").count();
    s.push_str(&format!(
        "\nDirectional agreement (replay / the paper): public-goods decline {} / 1, dilemma decline {} / 3, \
         convention formation {} / 10, of {models} models.\n",
        agree("pgg-decline"),
        agree("pd-decline"),
        agree("convention-forms")
    ));
    let family = |model: &str, env: &str| perturbation_family_size(a, model, env);
    s.push_str(&format!(
        "Holm families (tests; replay / the paper): Llama-3.1 naming game {} / 1, Qwen3-14B prisoner's dilemma \
         {} / 12, Phi-3 naming game {} / 7 (the last two rest on unprinted cells: rule 1 of the roster).\n",
        family("Llama-3.1", "naming-game"),
        family("Qwen3-14B", "prisoners-dilemma"),
        family("Phi-3", "naming-game")
    ));
    for c in &a.contrast_counts {
        s.push_str(&format!(
            "Perturbation family, {} ({}): {} of {} significant.\n",
            c.what, c.rosters, c.significant, c.of
        ));
    }
    s
}
