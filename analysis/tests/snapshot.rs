//! Snapshot of everything `agora analyze` writes (analysis.md, analysis.json and one CSV per
//! table) for synthetic run outcomes built here, compared byte for byte with the fixtures in
//! `tests/fixtures/`.
//!
//! The outcomes come from a seeded generator, chosen so that every analysis has rows (with
//! absent values, NaN, constant samples and too-small arms among them) and the ladder grades
//! claims at several tiers. Runs of what the instrument added later (presentation checks, the
//! recognition probe, the re-skins, the shuffled pool, the LLM tipping arm) come after every
//! earlier run, and metrics added later derive from earlier draws, so that the earlier runs
//! keep their values. To regenerate the fixtures (only when a change of output is intended),
//! run `AGORA_WRITE_SNAPSHOT=1 cargo test -p agora-analysis --test snapshot`.

use std::collections::BTreeMap;
use std::path::Path;

use agora_analysis::analyze::{analyze_outcomes, to_csv};
use agora_analysis::RunOutcome;
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// A roster and how it behaves: `human` near 1 is human-like, `flip` reverses dynamics in some
/// cells, `constant` makes every run identical, `runs` is the runs per condition, `c3_follows`
/// how far behaviour follows the divergent payoffs.
#[derive(Clone, Copy)]
struct Profile {
    roster: &'static str,
    family: &'static str,
    human: f64,
    noise: f64,
    flip: bool,
    constant: bool,
    runs: usize,
    c3_follows: f64,
}

const fn profile(roster: &'static str, family: &'static str, human: f64, noise: f64, runs: usize, c3: f64) -> Profile {
    Profile { roster, family, human, noise, flip: false, constant: false, runs, c3_follows: c3 }
}

const PROFILES: [Profile; 7] = [
    profile("alpha", "fam-a", 1.0, 0.05, 5, 0.9),
    profile("beta", "fam-b", 0.9, 0.08, 5, 0.5),
    profile("gamma", "fam-c", 0.95, 0.06, 4, 0.1),
    Profile { flip: true, ..profile("delta", "fam-d", 0.3, 0.1, 5, 0.6) },
    profile("sparse", "fam-e", 0.8, 0.1, 2, 0.8),
    profile("tft", "classical", 0.6, 0.15, 4, 0.0),
    Profile { constant: true, ..profile("grim", "classical", 0.0, 0.0, 3, 0.0) },
];

const CELLS: [(&str, &str); 6] = [
    ("baseline", "baseline"),
    ("rep-1", "representation"),
    ("rep-2", "representation"),
    ("des-1", "design"),
    ("priming", "priming"),
    ("contam-1", "contamination"),
];

/// Where a run sits.
#[derive(Clone, Copy)]
struct Place<'a> {
    block: &'a str,
    environment: &'a str,
    arm: &'a str,
    variant: &'a str,
    cell: &'a str,
    level: &'a str,
}

/// The declarations of this build's games, as the engine records them in a store (the fixture
/// the workspace's `declarations_fixture` test holds to the games).
fn declared() -> agora_analysis::Declared {
    let values: Vec<serde_json::Value> =
        serde_json::from_str(include_str!("fixtures/declarations.json")).expect("the declarations fixture");
    agora_analysis::Declared::from_values(&values).expect("declarations read")
}

fn place<'a>(environment: &'a str, arm: &'a str, variant: &'a str, cell: &'a str, level: &'a str) -> Place<'a> {
    Place { block: "main", environment, arm, variant, cell, level }
}

struct Gen {
    rng: Xoshiro256PlusPlus,
    out: Vec<RunOutcome>,
}

impl Gen {
    fn run(&mut self, p: &Profile, at: Place, metrics: Vec<(String, f64)>) -> &mut RunOutcome {
        let id = self.out.len() as i64 + 1;
        self.out.push(RunOutcome {
            run_id: id,
            run_key: format!("k{id}"),
            study: "snap".into(),
            block: at.block.into(),
            environment: at.environment.into(),
            arm: at.arm.into(),
            variant: at.variant.into(),
            cell: at.cell.into(),
            level: at.level.into(),
            roster: p.roster.into(),
            family: p.family.into(),
            sweep: None,
            point: None,
            committed: 0,
            population: 4,
            metrics: metrics.into_iter().collect::<BTreeMap<_, _>>(),
        });
        self.out.last_mut().expect("just pushed")
    }

    fn uniform(&mut self) -> f64 {
        self.rng.random::<f64>()
    }

    /// A share near `centre`, clamped to [0, 1]; exactly `centre` for a constant roster.
    fn share(&mut self, p: &Profile, centre: f64) -> f64 {
        if p.constant {
            return centre.clamp(0.0, 1.0);
        }
        (centre + p.noise * (self.uniform() * 2.0 - 1.0)).clamp(0.0, 1.0)
    }

    /// 1 with probability `prob` (a constant roster rounds it).
    fn bernoulli(&mut self, p: &Profile, prob: f64) -> f64 {
        if p.constant {
            return if prob >= 0.5 { 1.0 } else { 0.0 };
        }
        if self.uniform() < prob.clamp(0.0, 1.0) {
            1.0
        } else {
            0.0
        }
    }
}

fn m(name: &str, v: f64) -> (String, f64) {
    (name.to_string(), v)
}

/// The cell's shift of the behaviour, and whether the cell reverses the dynamics.
fn cell_shift(p: &Profile, cell: &str) -> (f64, bool) {
    match cell {
        "rep-1" => (0.03, false),
        "rep-2" => (-0.04, p.flip),
        "des-1" => (0.08, p.flip),
        "priming" => (0.15, false),
        "contam-1" => (-0.12, false),
        _ => (0.0, false),
    }
}

/// One run of every environment arm of the main block, in one condition.
fn condition_runs(g: &mut Gen, p: &Profile, variant: &str, cell: &str, level: &str) {
    let (human, c3) = (p.human, variant == "C3");
    let (shift, flip) = cell_shift(p, cell);
    // Prisoner's dilemma: cooperation declines over the rounds.
    let start = g.share(p, 0.3 + 0.4 * human + shift);
    let slope = if flip { 0.3 } else { -0.35 * human };
    let coop = if c3 { g.share(p, p.c3_follows) } else { g.share(p, start + slope / 2.0) };
    let change = if p.constant { slope } else { slope + p.noise * (g.uniform() - 0.5) };
    let mut pd = vec![m("cooperation", coop), m("cooperation_r1", start), m("cooperation_change", change)];
    // Metrics added later derive from the draws above, so that the draws, and the values of
    // every earlier metric, stay as they were.
    pd.push(m("defection_endgame_rise", -0.6 * change));
    g.run(p, place("prisoners-dilemma", "baseline", variant, cell, level), pd);
    // Public goods: round-1 contribution near one half, declining.
    let r1 = g.share(p, 0.5 * human + 0.6 * (1.0 - human) + shift);
    let decline = if c3 {
        0.3 * p.c3_follows
    } else if flip {
        0.15
    } else {
        -0.36 * human
    };
    let last = (r1 + decline).clamp(0.0, 1.0);
    let full = if c3 { g.share(p, p.c3_follows) } else { g.share(p, 0.1) };
    let mut pgg = vec![m("contribution_r1", r1), m("contribution_last", last), m("contribution_change", last - r1)];
    pgg.push(m("full_contribution", full));
    pgg.push(m("contribution_r10", last));
    pgg.push(m("cc_slope", 0.43 * human + 0.2 * (r1 - 0.5)));
    pgg.push(m("cc_conditional_share", ((0.5 * human + shift) * 4.0).round().clamp(0.0, 4.0) / 4.0));
    pgg.push(m("cc_free_rider_share", ((0.3 * human) * 4.0).round() / 4.0));
    // One baseline run in three of the flipping roster has an undefined round-1 contribution.
    let position = g.out.len() % 3;
    if p.flip && cell == "baseline" && !c3 && position == 0 {
        pgg[0].1 = f64::NAN;
    }
    g.run(p, place("public-goods", "baseline", variant, cell, level), pgg);
    // Bargaining: ultimatum, dictator, trust.
    let offer = g.share(p, 0.40 * human + 0.5 * (1.0 - human) + shift);
    let consistent = if c3 { g.share(p, p.c3_follows) } else { g.share(p, 0.85) };
    g.run(
        p,
        place("bargaining", "ultimatum", variant, cell, level),
        vec![m("offer", offer), m("payoff_consistency", consistent), m("rejection", 0.3 * (1.0 - consistent))],
    );
    if !c3 {
        let giving = g.share(p, 0.2835 * human + 0.05 + shift);
        g.run(p, place("bargaining", "dictator", variant, cell, level), vec![m("giving", giving)]);
        let sent = g.share(p, 0.5 * human + 0.2 + shift);
        let returned = g.share(p, 0.37 + shift);
        g.run(p, place("bargaining", "trust", variant, cell, level), vec![m("sent", sent), m("returned", returned)]);
    }
    // 11–20 money request: two choices around the human mode (the seventh value, 17).
    let mut counts = [0.0; 10];
    for _ in 0..2 {
        let idx = if (c3 && g.uniform() < p.c3_follows) || p.constant {
            9
        } else {
            let x = 6.0 * human + 8.0 * (1.0 - human) + 3.0 * (g.uniform() - 0.5);
            x.round().clamp(0.0, 9.0) as usize
        };
        counts[idx] += 0.5;
    }
    let mut mr: Vec<(String, f64)> = counts
        .iter()
        .enumerate()
        .filter(|(_, c)| **c > 0.0)
        .map(|(i, c)| m(&format!("choice_{}", i + 11), *c))
        .collect();
    mr.push(m("mode_share", counts[6]));
    mr.push(m("request_below_top", 1.0 - counts[9]));
    g.run(p, place("money-request", "baseline", variant, cell, level), mr);
    // Naming game: a convention forms, after a roster-dependent time.
    let formed = if c3 { g.bernoulli(p, 1.0 - p.c3_follows) } else { g.bernoulli(p, 0.5 + 0.5 * human) };
    let matched = if c3 { g.share(p, 1.0 - p.c3_follows) } else { g.share(p, 0.5 + 0.4 * human) };
    let mut ng = vec![m("convention", formed), m("match_share", matched)];
    if formed > 0.5 {
        ng.push(m("convention_time", (20.0 + 30.0 * (1.0 - human) + 10.0 * g.uniform()).round()));
        ng.push(m("convention_name", 4.0));
        ng.push(m("convention_position", 1.0));
    }
    g.run(p, place("naming-game", "baseline", variant, cell, level), ng);
}

/// The punishment and fixed-offer arms of a roster.
fn arm_runs(g: &mut Gen, p: &Profile) {
    let human = p.human;
    for _ in 0..p.runs {
        let r1 = g.share(p, 0.5 * human + 0.6 * (1.0 - human));
        let last = g.share(p, r1 + 0.3 * human);
        let points = if p.constant { 1.0 } else { (3.0 * human * g.uniform() * 10.0).round() / 10.0 };
        g.run(
            p,
            place("public-goods", "punishment", "C0", "baseline", "baseline"),
            vec![
                m("contribution_r1", r1),
                m("contribution_last", last),
                m("contribution_change", last - r1),
                m("punishment_points", points),
            ],
        );
    }
    for variant in ["C0", "C1", "C2", "C3"] {
        for _ in 0..p.runs {
            let cut = if variant == "C3" { 40.0 } else { 15.0 + 20.0 * (1.0 - human) };
            let mut fixed = Vec::new();
            for offer in [10.0, 20.0, 30.0, 40.0, 50.0, 60.0] {
                let accept = (g.bernoulli(p, if offer < cut { 0.15 } else { 0.9 })
                    + g.bernoulli(p, if offer < cut { 0.15 } else { 0.9 }))
                    / 2.0;
                fixed.push(m(&format!("accept_{offer:02.0}"), accept));
            }
            fixed.push(m("payoff_consistency", g.share(p, 0.8)));
            g.run(p, place("bargaining", "ultimatum-fixed-offer", variant, "baseline", "baseline"), fixed);
        }
    }
}

/// Runs outside the profiles' conditions: a roster with empty runs, and tipping sweeps.
fn extra_runs(g: &mut Gen) {
    // A roster whose fixed-offer runs hold no outcomes: an empty acceptance function, no
    // threshold and an undefined (NaN) payoff consistency.
    let mute = Profile { roster: "mute", family: "fam-f", runs: 2, ..PROFILES[0] };
    for _ in 0..mute.runs {
        g.run(&mute, place("bargaining", "ultimatum-fixed-offer", "C0", "baseline", "baseline"), Vec::new());
    }
    // Tipping sweeps for three rosters: overturned when the committed fraction clears a cut.
    for (p, cut) in [(PROFILES[0], 0.22), (PROFILES[5], 0.12), (PROFILES[6], 0.9)] {
        for fraction in [0.10_f64, 0.15, 0.20, 0.25, 0.30] {
            for _ in 0..3 {
                let tips = fraction >= cut || (fraction + 0.05 >= cut && g.uniform() < 0.4);
                let mut metrics = vec![m("overturned", if tips { 1.0 } else { 0.0 })];
                if tips {
                    metrics.push(m("overturn_time", 15.0 + (100.0 * (0.3 - fraction)).round() + 10.0));
                }
                let at = Place { block: "tipping", ..place("naming-game", "tipping", "C0", "baseline", "baseline") };
                let r = g.run(&p, at, metrics);
                r.sweep = Some(fraction);
                r.population = 40;
                r.committed = (fraction * 40.0).round() as i64;
            }
        }
    }
}

/// Runs of what the instrument added later, after every earlier run so that those keep their
/// draws: the profile methods' presentation checks, the recognition probe, the re-skins C1 and C2, the
/// shuffled-pool arm, and the LLM tipping arm whose convention forms first.
fn later_runs(g: &mut Gen) {
    for p in [PROFILES[0], PROFILES[1], PROFILES[3]] {
        for _ in 0..p.runs {
            let coop = g.share(&p, 0.2);
            g.run(
                &p,
                place("prisoners-dilemma", "baseline", "C0", "layout-inline", "presentation"),
                vec![m("cooperation", coop)],
            );
        }
        // The probe asks outside the behavioural session: its runs hold no behaviour, only
        // whether the paradigm was recognised (a behavioural value here must stay unread).
        for _ in 0..3 {
            let recognised = g.share(&p, 0.3 + 0.5 * p.human);
            g.run(
                &p,
                place("prisoners-dilemma", "baseline", "C0", "recognition-probe", "contamination"),
                vec![m("recognised", recognised), m("cooperation", 0.0)],
            );
        }
        for variant in ["C1", "C2"] {
            for _ in 0..p.runs {
                let coop = g.share(&p, 0.3 + 0.2 * p.human + if variant == "C1" { 0.2 } else { 0.0 });
                g.run(
                    &p,
                    place("prisoners-dilemma", "baseline", variant, "baseline", "baseline"),
                    vec![m("cooperation", coop)],
                );
            }
        }
    }
    // The shuffled pool: alpha keeps the baseline's name, beta moves, sparse is too thin.
    for (p, names) in [(PROFILES[0], [4.0, 4.0, 7.0]), (PROFILES[1], [2.0, 2.0, 2.0]), (PROFILES[4], [4.0, 4.0, 4.0])] {
        for name in names.iter().take(p.runs.min(3)) {
            let position = (1.0 + 9.0 * g.uniform()).round();
            g.run(
                &p,
                place("naming-game", "shuffled-pool", "C0", "baseline", "baseline"),
                vec![m("convention", 1.0), m("convention_name", *name), m("convention_position", position)],
            );
        }
    }
    // The LLM tipping arm on 24 agents: alpha forms a convention in most runs and tips at 6/24;
    // beta never forms one, so it has no convention to overturn.
    for (p, formation) in [(PROFILES[0], 0.8), (PROFILES[1], 0.0)] {
        for (fraction, k) in [(0.20_f64, 5_i64), (0.225, 5), (0.25, 6), (0.30, 7)] {
            for _ in 0..4 {
                let formed = g.uniform() < formation;
                let mut metrics =
                    vec![m("convention", if formed { 1.0 } else { 0.0 }), m("committed_share", k as f64 / 24.0)];
                if formed {
                    let tips = k >= 6 || g.uniform() < 0.2;
                    metrics.push(m("overturned", if tips { 1.0 } else { 0.0 }));
                    if tips {
                        metrics.push(m("overturn_time", (100.0 + 200.0 * g.uniform()).round()));
                    }
                }
                let at =
                    Place { block: "tipping-llm", ..place("naming-game", "tipping", "C0", "baseline", "baseline") };
                let r = g.run(&p, at, metrics);
                r.sweep = Some(fraction);
                r.population = 24;
                r.committed = k;
            }
        }
    }
}

fn outcomes() -> Vec<RunOutcome> {
    let mut g = Gen { rng: Xoshiro256PlusPlus::seed_from_u64(20260815), out: Vec::new() };
    for p in &PROFILES {
        for (cell, level) in CELLS {
            let variants: &[&str] = if cell == "baseline" { &["C0", "C3"] } else { &["C0"] };
            for &variant in variants {
                for _ in 0..p.runs {
                    condition_runs(&mut g, p, variant, cell, level);
                }
            }
        }
        arm_runs(&mut g, p);
    }
    extra_runs(&mut g);
    later_runs(&mut g);
    g.out
}

/// Everything `agora analyze` writes, as `agora analyze` writes it, one file after another.
fn snapshot_text(outcomes: &[RunOutcome], study: Option<&str>) -> String {
    let analysis = analyze_outcomes(outcomes, &declared(), study);
    let mut s = String::new();
    s.push_str("===== analysis.md =====\n");
    s.push_str(&analysis.to_markdown());
    s.push_str("===== analysis.json =====\n");
    s.push_str(&serde_json::to_string_pretty(&analysis).expect("serialises"));
    s.push('\n');
    for t in analysis.tables() {
        s.push_str(&format!("===== {}.csv =====\n", t.name));
        s.push_str(&to_csv(&t));
    }
    s
}

fn compare(got: String, name: &str) {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name);
    if std::env::var_os("AGORA_WRITE_SNAPSHOT").is_some() {
        std::fs::create_dir_all(fixture.parent().expect("parent")).expect("fixture dir");
        std::fs::write(&fixture, &got).expect("writes the fixture");
        return;
    }
    let want = std::fs::read_to_string(&fixture).expect("the fixture exists");
    if got != want {
        let line = got.lines().zip(want.lines()).position(|(a, b)| a != b);
        let at = line.unwrap_or(got.lines().count().min(want.lines().count()));
        panic!(
            "{name}: output differs from the snapshot at line {}:\n  got:  {:?}\n  want: {:?}",
            at + 1,
            got.lines().nth(at),
            want.lines().nth(at)
        );
    }
}

#[test]
fn analysis_output_is_byte_identical_to_the_snapshot() {
    compare(snapshot_text(&outcomes(), None), "analysis_snapshot.txt");
}

/// Every table empty: the headers alone, and "No data in this store." in Markdown.
#[test]
fn empty_output_is_byte_identical_to_the_snapshot() {
    compare(snapshot_text(&[], Some("empty")), "analysis_snapshot_empty.txt");
}
