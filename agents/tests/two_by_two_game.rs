//! A symmetric 2×2 game is its variants file and its rules template (and one registry line):
//! a game written here only as those two texts — chicken — validates, plays with its payoffs,
//! reports the metrics it declares, and renders the rules a participant reads.

use agora_environments::game::{RecordedDecision, RunView};
use agora_environments::two_by_two::{Plays, TwoByTwoDef};
use agora_environments::{Action, EnvKind, Variant};
use rand::SeedableRng;

/// Chicken: both drive straight and both crash; whoever swerves alone loses face.
const CHICKEN: &str = r#"
TwoByTwo(
    version: 1,
    game: (
        description: "chicken: 2 agents, 6 rounds, swerve or go straight",
        paradigm: "game of chicken",
        keywords: ["chicken", "hawk-dove", "hawk dove"],
        rounds: 6,
        memory: 3,
        metrics: [
            (name: "straight", unit: "share of decisions going straight", measure: ShareB, primary: Some(Lower)),
            (name: "straight_r1", unit: "share of decisions going straight", measure: ShareBFirst),
            (name: "same_choice", unit: "share of rounds with equal choices", measure: Matched),
        ],
        headline: "straight",
        indicator: Some((name: "swerve", choice: 0, definition: "1 when the driver swerves")),
    ),
    variants: {
        C0: (cover_story: "Two drivers race toward each other.", labels: ["swerve", "straight"], aa: 3.0, ab: 1.0, ba: 4.0, bb: 0.0),
        C1: (cover_story: "Two cyclists meet on a bridge.", labels: ["yield", "ride on"], aa: 3.0, ab: 1.0, ba: 4.0, bb: 0.0),
        C2: (cover_story: "Two ships meet in a strait.", labels: ["give way", "hold course"], aa: 6.0, ab: 4.0, ba: 7.0, bb: 3.0),
        C3: (cover_story: "Two drivers race toward each other.", labels: ["swerve", "straight"], aa: 3.0, ab: 4.0, ba: 1.0, bb: 0.0),
    },
)
"#;

/// Its rules template, with the values every 2×2 game's rules are rendered with.
const CHICKEN_J2: &str = "{{ cover_story }} You will play {{ rounds }} rounds with the same other participant.
Each round both of you choose, at the same time: {{ labels | join(\" or \") }}.
- If both choose {{ a }}: each gets {{ aa }} points.
- If you choose {{ a }} and the other {{ b }}: you get {{ ab }}, the other {{ ba }}.
- If both choose {{ b }}: each gets {{ bb }} points.
";

fn chicken() -> TwoByTwoDef {
    // It plays under an existing registry entry's name here; registered, it has its own.
    TwoByTwoDef::parse(EnvKind::StagHunt, "chicken.ron", CHICKEN, "chicken.j2").expect("the file reads")
}

#[test]
fn a_two_by_two_game_written_as_a_file_plays_with_its_payoffs_and_metrics() {
    let def = chicken();
    let plays = Plays { rounds: def.spec.rounds, memory: def.spec.memory, g: None };
    def.validate(&plays).expect("valid");
    // No `g` is declared, so a study may not set one.
    let e = def.validate(&Plays { g: Some(2.0), ..plays }).expect_err("refused");
    assert!(e.to_string().contains("g"), "{e}");

    let mut env = def.build_env(&plays, Variant::C0);
    let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(1);
    let script = [(1, 1), (0, 1), (1, 0), (0, 0), (1, 0), (0, 1)];
    let mut decisions = Vec::new();
    for (round, (a, b)) in script.iter().enumerate() {
        let requests = env.pending(&mut rng);
        assert_eq!(requests.len(), 2);
        let step = env.resolve(&[(0, Action::Choice(*a)), (1, Action::Choice(*b))], &mut rng).expect("legal");
        let m = def.matrix(Variant::C0, None);
        assert_eq!(step.payoffs, vec![(0, m[*a as usize][*b as usize]), (1, m[*b as usize][*a as usize])]);
        for (seat, c) in [(0u32, a), (1, b)] {
            decisions.push(RecordedDecision {
                round: round as u32 + 1,
                seat,
                role: "player",
                value: f64::from(*c),
                scale: 1.0,
                context: None,
            });
        }
    }
    assert!(env.is_done(), "six rounds, as declared");
    let out = def.outcomes(&RunView {
        variant: Variant::C0,
        decisions: &decisions,
        interactions: &[],
        reversed_labels: false,
    });
    // Straight in 6 of 12 decisions, both in round 1; equal choices in rounds 1 and 4.
    assert_eq!(out, vec![("straight".into(), 0.5), ("straight_r1".into(), 1.0), ("same_choice".into(), 2.0 / 6.0)]);
}

#[test]
fn its_rules_render_from_its_template_with_the_variants_payoffs() {
    let def = chicken();
    let plays = Plays { rounds: 6, memory: 3, g: None };
    let mut env = def.build_env(&plays, Variant::C2);
    let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(1);
    let obs = env.pending(&mut rng).remove(0).observation;
    let rules = def.rules(&plays, &obs, false);
    assert_eq!(rules.template, "chicken.j2");
    let mut j = minijinja::Environment::new();
    j.set_trim_blocks(true);
    j.add_template("chicken.j2", CHICKEN_J2).expect("template");
    let text = j.get_template("chicken.j2").and_then(|t| t.render(&rules.values)).expect("renders");
    assert!(text.starts_with("Two ships meet in a strait. You will play 6 rounds"), "{text}");
    assert!(text.contains("give way or hold course"), "{text}");
    assert!(text.contains("If you choose give way and the other hold course: you get 4, the other 7."), "{text}");
    let wording = def.wording(Variant::C2);
    assert_eq!(
        (wording.paradigm, &wording.labels[..]),
        ("game of chicken", &["give way".to_string(), "hold course".to_string()][..])
    );
}

#[test]
fn a_file_that_declares_too_little_is_refused_naming_it() {
    let broken = CHICKEN.replace("headline: \"straight\"", "headline: \"speed\"");
    let e = TwoByTwoDef::parse(EnvKind::StagHunt, "chicken.ron", &broken, "chicken.j2").expect_err("refused");
    assert!(e.to_string().contains("chicken.ron") && e.to_string().contains("speed"), "{e}");
    let one_label = CHICKEN.replace("labels: [\"yield\", \"ride on\"]", "labels: [\"yield\"]");
    let e = TwoByTwoDef::parse(EnvKind::StagHunt, "chicken.ron", &one_label, "chicken.j2").expect_err("refused");
    assert!(e.to_string().contains("C1"), "{e}");
}
