//! Every shipped study and cell file parses and resolves; bad input is rejected with the file,
//! field, line and column.

use std::path::{Path, PathBuf};

use agora_scenarios::{cell, Plan, ScenarioError};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let studies = dir.join("studies");
    std::fs::create_dir_all(&studies).expect("mkdir");
    std::fs::create_dir_all(dir.join("cells")).expect("mkdir");
    let p = studies.join(name);
    std::fs::write(&p, text).expect("write");
    p
}

/// A folder removed when the test ends.
fn tmp() -> tempfile::TempDir {
    tempfile::tempdir().expect("temporary folder")
}

#[test]
fn every_shipped_cell_parses() {
    let cells = cell::load_dir(&root().join("cells")).expect("cells parse");
    assert!(cells.len() >= 3);
}

#[test]
fn every_shipped_study_resolves() {
    for entry in std::fs::read_dir(root().join("studies")).expect("studies dir") {
        let path = entry.expect("entry").path();
        let plan = Plan::load(&path, None).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert!(!plan.runs.is_empty(), "{}", path.display());
        let keys: std::collections::BTreeSet<String> = plan.runs.iter().map(|r| r.key()).collect();
        assert_eq!(keys.len(), plan.runs.len(), "{}: run keys are unique", path.display());
    }
}

#[test]
fn classical_study_has_thirty_runs_per_baseline_cell() {
    let plan = Plan::load(&root().join("studies/classical.ron"), None).expect("resolves");
    let pd: Vec<_> =
        plan.runs.iter().filter(|r| r.block == "pd" && r.variant == agora_environments::Variant::C0).collect();
    assert_eq!(pd.len(), 30);
    let seeds: std::collections::BTreeSet<u64> = plan.runs.iter().map(|r| r.seed).collect();
    assert_eq!(seeds.len(), plan.runs.len(), "every run has its own seed");
}

#[test]
fn tipping_study_sweeps_thirteen_fractions() {
    let plan = Plan::load(&root().join("studies/tipping.ron"), None).expect("resolves");
    let fractions: std::collections::BTreeSet<String> =
        plan.runs.iter().map(|r| format!("{:.3}", r.sweep.as_ref().expect("swept").1)).collect();
    assert_eq!(fractions.len(), 13);
    assert!(fractions.contains("0.100") && fractions.contains("0.400") && fractions.contains("0.175"));
    let r = plan.runs.iter().find(|r| r.sweep.as_ref().is_some_and(|s| (s.1 - 0.25).abs() < 1e-9)).expect("0.25");
    assert_eq!(r.committed, (0..6).collect::<Vec<_>>());
}

#[test]
fn resolution_is_deterministic() {
    let a = Plan::load(&root().join("studies/classical.ron"), None).expect("resolves");
    let b = Plan::load(&root().join("studies/classical.ron"), None).expect("resolves");
    assert_eq!(a.hash(), b.hash());
}

#[test]
fn shards_partition_the_plan() {
    let plan = Plan::load(&root().join("studies/tipping.ron"), None).expect("resolves");
    let mut all: Vec<String> = Vec::new();
    for i in 1..=3 {
        all.extend(plan.shard(format!("{i}/3").parse().expect("shard")).runs.iter().map(|r| r.key()));
    }
    all.sort();
    let mut expected: Vec<String> = plan.runs.iter().map(|r| r.key()).collect();
    expected.sort();
    assert_eq!(all, expected);
    assert!("0/3".parse::<agora_scenarios::Shard>().is_err());
    assert!("4/3".parse::<agora_scenarios::Shard>().is_err());
}

const MINIMAL: &str = r#"Study(version: 1, name: "t", master_seed: 1, runs: 2, blocks: [
  Block(name: "b", environment: ENV, rosters: [Roster(name: "r", members: [Member(policy: POLICY)])]),
])"#;

fn study(env: &str, policy: &str) -> String {
    MINIMAL.replace("ENV", env).replace("POLICY", policy)
}

fn resolve(text: &str) -> Result<Plan, ScenarioError> {
    let d = tmp();
    let p = write(d.path(), "s.ron", text);
    Plan::load(&p, None)
}

#[test]
fn unknown_field_names_file_line_and_column() {
    let text = "Study(\n  version: 1,\n  name: \"t\",\n  master_seed: 1,\n  runs: 2,\n  colour: 3,\n  blocks: [],\n)";
    match resolve(text) {
        Err(ScenarioError::Parse { path, line, column, message }) => {
            assert!(path.ends_with("s.ron"));
            assert_eq!(line, 6);
            assert!(column > 0);
            assert!(message.contains("colour"), "{message}");
        }
        other => panic!("expected a parse error, got {other:?}"),
    }
}

#[test]
fn unknown_environment_and_agent_are_parse_errors() {
    let e = resolve(&study("Chess()", "RothErev()")).expect_err("rejected").to_string();
    assert!(e.contains("Chess"), "{e}");
    let e = resolve(&study("PrisonersDilemma()", "DeepBlue")).expect_err("rejected").to_string();
    assert!(e.contains("DeepBlue"), "{e}");
}

#[test]
fn impossible_parameters_name_the_field() {
    let cases = [
        ("PublicGoods(group_size: 1)", "RothErev()", "group_size"),
        ("NamingGame(memory: 0)", "MinimalNaming", "memory"),
        ("NamingGame(pool: 1)", "MinimalNaming", "pool"),
        ("NamingGame(tipping: Tipping(fraction: 1.5))", "MinimalNaming", "tipping.fraction"),
        ("PrisonersDilemma()", "ConditionalCooperator()", "public-goods"),
        ("PrisonersDilemma()", "RothErev(phi: -1.0)", "phi"),
    ];
    for (env, policy, needle) in cases {
        let e = resolve(&study(env, policy)).expect_err("rejected");
        let msg = e.to_string();
        assert!(matches!(e, ScenarioError::Invalid { .. }), "{msg}");
        assert!(msg.contains("s.ron") && msg.contains(needle), "{needle}: {msg}");
    }
}

#[test]
fn negative_endowment_cannot_be_written() {
    // Endowments live in the variant table; a study cannot set one, let alone a negative one.
    let e = resolve(&study("PublicGoods(endowment: -5)", "RothErev()")).expect_err("rejected").to_string();
    assert!(e.contains("endowment"), "{e}");
}

#[test]
fn roster_that_does_not_fill_the_seats_is_rejected() {
    let e = resolve(&study("PublicGoods()", "RothErev(), count: 3")).expect_err("rejected").to_string();
    assert!(e.contains("3 seats") && e.contains("4"), "{e}");
}

#[test]
fn unknown_cell_is_named() {
    let text = MINIMAL.replace("ENV", "PrisonersDilemma(), cells: [\"no-such-cell\"]").replace("POLICY", "RothErev()");
    let e = resolve(&text).expect_err("rejected").to_string();
    assert!(e.contains("no-such-cell"), "{e}");
}

#[test]
fn cells_default_to_every_game_with_their_factor() {
    use agora_environments::EnvKind;
    let cells = cell::load_dir(&root().join("cells")).expect("cells parse");
    let games = |name: &str| cells.iter().find(|(_, c)| c.name == name).expect("shipped cell").1.games();
    // Every game has a prompt; a new game is in these without an edit.
    assert_eq!(games("persona-bullets"), EnvKind::ALL.to_vec());
    // One-shot games show no earlier game: no history to render and no memory window to vary.
    for history_cell in ["memory-3", "history-narrative", "history-summary"] {
        let g = games(history_cell);
        assert!(!g.contains(&EnvKind::Bargaining) && !g.contains(&EnvKind::MoneyRequest), "{history_cell}: {g:?}");
        assert!(g.contains(&EnvKind::PrisonersDilemma) && g.contains(&EnvKind::NamingGame), "{history_cell}: {g:?}");
    }
    // Only games that frame their actions get the framing cells.
    assert_eq!(games("framing-moral"), vec![EnvKind::PrisonersDilemma]);
    assert_eq!(games("framing-risk"), games("framing-moral"), "both framings relabel the same actions");
    // Action order needs labelled choices: not the amount-only games.
    let reversed = games("reversed-actions");
    assert!(!reversed.contains(&EnvKind::PublicGoods) && !reversed.contains(&EnvKind::MoneyRequest));
    assert!(reversed.contains(&EnvKind::StagHunt) && reversed.contains(&EnvKind::Coordination));
    // A cell may still name its games.
    assert_eq!(games("group-size-8"), vec![EnvKind::PublicGoods]);
}

#[test]
fn cell_factors_are_typed_and_a_baseline_value_is_no_change() {
    let dir = tmp();
    let parse = |text: &str| agora_scenarios::Cell::parse(&dir.path().join("c.ron"), text);
    let ok = parse(r#"Cell(version: 1, name: "p", level: Representation, factors: [PersonaFormat("table")])"#);
    assert!(ok.is_ok(), "{ok:?}");
    let unknown = parse(r#"Cell(version: 1, name: "p", level: Representation, factors: [PersonaFormat("blue")])"#)
        .expect_err("an unknown value is refused")
        .to_string();
    assert!(unknown.contains("bullets") && unknown.contains("c.ron"), "{unknown}");
    let baseline = parse(r#"Cell(version: 1, name: "p", level: Representation, factors: [PersonaFormat("sentence")])"#)
        .expect_err("the baseline value changes nothing")
        .to_string();
    assert!(baseline.contains("baseline"), "{baseline}");
    let nowhere =
        parse(r#"Cell(version: 1, name: "p", level: Design, environments: [MoneyRequest], factors: [GroupSize(8)])"#)
            .expect_err("money request has no group")
            .to_string();
    assert!(nowhere.contains("money-request has no group size"), "{nowhere}");
}

#[test]
fn the_instrument_runs_the_papers_counts_in_the_fixed_offer_and_shuffled_pool_arms() {
    // The paper: 540 fixed-offer games per payoff regime (3 runs of 9 offers x 20 games) and
    // three seeds of the shuffled-pool arm; the study had 6 and 30.
    let plan = Plan::load(&root().join("studies/instrument.ron"), None).expect("the instrument resolves");
    let model = &plan.models[0].name;
    let runs = |block: &str, variant: agora_environments::Variant| {
        plan.runs.iter().filter(|r| r.block == block && r.roster == *model && r.variant == variant).count()
    };
    for regime in [agora_environments::Variant::C0, agora_environments::Variant::C3] {
        assert_eq!(runs("fixed-offer", regime), 3);
        let games: u64 = plan
            .runs
            .iter()
            .filter(|r| r.block == "fixed-offer" && r.roster == *model && r.variant == regime)
            .map(|r| r.expected_decisions().0)
            .sum();
        assert_eq!(games, 540, "one responder decision per game");
    }
    assert_eq!(runs("naming-shuffled", agora_environments::Variant::C0), 3);
}

/// The perturbation library of the paper's Table 1 (the instrument paper): six representation-level cells,
/// the design-level cells (group size once per game that has one) and the two contamination
/// probes.
const TABLE_1: [&str; 17] = [
    "persona-bullets",
    "persona-table",
    "history-narrative",
    "history-summary",
    "reversed-actions",
    "named-agents",
    "persona-self-interested",
    "persona-prosocial",
    "framing-moral",
    "framing-risk",
    "step-by-step",
    "temperature-low",
    "memory-3",
    "group-size-8",
    "population-48",
    "priming",
    "recognition-probe",
];

#[test]
fn the_instrument_runs_table_1_in_every_game_where_a_cell_exists_and_nothing_else() {
    let plan = Plan::load(&root().join("studies/instrument.ron"), None).expect("the instrument resolves");
    let cells = cell::load_dir(&root().join("cells")).expect("cells parse");
    let model = plan.models[0].name.clone();
    let blocks: std::collections::BTreeSet<&str> = plan
        .runs
        .iter()
        .filter(|r| r.environment.arm() != "baseline" || r.cell != "baseline")
        .map(|r| r.block.as_str())
        .collect();
    assert!(blocks.contains("pd") && blocks.contains("ultimatum") && blocks.contains("naming"));
    for block in ["pd", "pgg", "ultimatum", "dictator", "trust", "money-request", "naming"] {
        let env = &plan.runs.iter().find(|r| r.block == block).expect("block runs").environment;
        let run: std::collections::BTreeSet<&str> = plan
            .runs
            .iter()
            .filter(|r| r.block == block && r.roster == model && r.cell != "baseline")
            .map(|r| r.cell.as_str())
            .collect();
        let expected: std::collections::BTreeSet<&str> = TABLE_1
            .iter()
            .copied()
            .filter(|name| cells.iter().find(|(_, c)| c.name == *name).expect("shipped").1.runs_in(env))
            .collect();
        assert_eq!(run, expected, "{block}");
        for r in plan.runs.iter().filter(|r| r.block == block && r.roster == model) {
            assert!(r.level != agora_scenarios::Level::Presentation, "{block}: {} is a presentation check", r.cell);
        }
    }
    // The presentation checks are an opt-in study of their own, with no baseline of its own.
    let checks = Plan::load(&root().join("studies/presentation-checks.ron"), None).expect("resolves");
    assert!(checks.runs.iter().all(|r| r.level == agora_scenarios::Level::Presentation));
    assert_eq!(checks.runs.iter().map(|r| r.cell.as_str()).collect::<std::collections::BTreeSet<_>>().len(), 5);
}

#[test]
fn the_instrument_has_an_llm_tipping_arm_from_a_formed_convention_and_probes_outside_the_session() {
    use agora_environments::EnvSpec;
    let plan = Plan::load(&root().join("studies/instrument.ron"), None).expect("the instrument resolves");
    let model = plan.models[0].name.clone();
    let tipping: Vec<_> = plan.runs.iter().filter(|r| r.block == "tipping" && r.roster == model).collect();
    let fractions: std::collections::BTreeSet<String> =
        tipping.iter().map(|r| format!("{:.2}", r.sweep.as_ref().expect("swept").1)).collect();
    assert_eq!(fractions.len(), 7, "10 % to 40 % in steps of 5: {fractions:?}");
    assert_eq!(tipping.len(), 21);
    for r in &tipping {
        let EnvSpec::NamingGame(p) = &r.environment else { panic!("naming game") };
        assert_eq!(p.tipping.as_ref().expect("tipping").onset, agora_environments::games::naming::Onset::Formed);
        // The first k seats are recorded as committed agents, but every seat is the model's:
        // the same agents form the convention, and k of them are committed only after it.
        assert_eq!(r.committed, (0..p.committed_count()).collect::<Vec<usize>>());
        assert!(r.seats.iter().all(|s| s.model() == Some(model.as_str())), "the same agents form and contest it");
    }
    // One probe session per model, game and variant; no game is played in it.
    let probes: Vec<_> = plan.runs.iter().filter(|r| r.cell == "recognition-probe" && r.roster == model).collect();
    assert_eq!(probes.len(), 7, "one per behavioural block with the probe");
    assert!(probes.iter().all(|r| r.expected_decisions() == (0, false) && r.is_probe()));
}

#[test]
fn a_published_run_count_without_models_is_refused() {
    let text = MINIMAL.replace("ENV", "PrisonersDilemma()").replace("POLICY", "RothErev()").replacen(
        "blocks:",
        "reference: RunCountReference(model_runs: 10, models: 0, source: \"x\"),\n    blocks:",
        1,
    );
    let e = resolve(&text).expect_err("refused").to_string();
    assert!(e.contains("reference"), "{e}");
}
