//! Every sentence `agora audit prefill` can insert is true in the state it is put into.
//!
//! "Auditing LLM Behavior with SUVA: From Stated Values to Actions" estimates a stated value's
//! effect on the action by inserting a sentence of the value into a model's reasoning. The
//! codebook's examples name option B2 ("Person A would be better off with B2.") whatever the
//! state: false in about half the binary-allocation states, and meaningless in games without a
//! B2. This test renders the default codebook's statement of every value over every state of
//! the binary-allocation game (its 240 distributional, 1,920 group and 2 × 240 reciprocity
//! states) in every variant, and checks each sentence against the state's payoffs, computed here
//! from the game's levels independently of the renderer: a sentence names an option only where
//! that option is strictly the one the value favours there, claims a situation (a shared group,
//! what person A did before) only where the state sets it, names only the variant's own labels
//! and unit, and is coded with its own value by the lexicon coder.

use agora_audit::coder::LexiconCoder;
use agora_audit::statements::{render, Facts, Situation};
use agora_audit::LoadedCodebook;
use agora_environments::games::binary_allocation::{state, Treatment};
use agora_environments::Variant;

/// The option (0 or 1) the value favours in a state, from person B's payoffs `own` and person
/// A's `other`, and whether the value's situation holds; none where the options tie on it.
fn favoured(value: &str, own: [i64; 2], other: [i64; 2], situation: Situation) -> Option<usize> {
    let pick = |score: [i64; 2]| match score[0].cmp(&score[1]) {
        std::cmp::Ordering::Greater => Some(0),
        std::cmp::Ordering::Less => Some(1),
        std::cmp::Ordering::Equal => None,
    };
    let more_for_a = pick(other);
    match value {
        "altruism" => more_for_a,
        "self_interest" => pick(own),
        "social_welfare" => pick([own[0] + other[0], own[1] + other[1]]),
        "fairness" => pick([-(own[0] - other[0]).abs(), -(own[1] - other[1]).abs()]),
        "competition" => pick([own[0] - other[0], own[1] - other[1]]),
        "positive_reciprocity" => match situation {
            Situation::Before { helped: true, .. } => more_for_a,
            _ => None,
        },
        "negative_reciprocity" => match situation {
            Situation::Before { helped: false, .. } => pick([-other[0], -other[1]]),
            _ => None,
        },
        "ingroup_cooperation" => match situation {
            Situation::Group { shared: true } => more_for_a,
            _ => None,
        },
        other => panic!("a value this test does not know: {other}"),
    }
}

#[test]
fn every_inserted_sentence_is_true_in_every_binary_allocation_state() {
    let cb = LoadedCodebook::default_codebook().codebook;
    let lexicon = LexiconCoder::new(&cb);
    let values: Vec<_> = cb.values().collect();
    assert_eq!(values.len(), 8);
    let (mut rendered, mut naming) = (0, 0);
    for treatment in Treatment::ALL {
        for index in 0..treatment.states() {
            let s = state(treatment.code() * 10_000 + index).expect("a state");
            for variant in [Variant::C0, Variant::C1, Variant::C2, Variant::C3] {
                let f = s.facts(variant);
                let situation = match (f.shared_group, f.before) {
                    (Some(shared), _) => Situation::Group { shared },
                    (_, Some((direct, helped))) => Situation::Before { direct, helped },
                    _ => Situation::Plain,
                };
                let facts = Facts {
                    labels: f.labels.to_vec(),
                    own: f.own.iter().map(|x| *x as f64).collect(),
                    other: f.other.iter().map(|x| *x as f64).collect(),
                    unit: f.unit.clone(),
                    other_name: "person A".into(),
                    situation,
                };
                for code in &values {
                    let st = code.statement.as_ref().unwrap_or_else(|| panic!("{} has a statement", code.name));
                    let (sentence, names) = render(st, Some(&facts));
                    rendered += 1;
                    let at =
                        format!("{} in state {} ({treatment:?}) under {variant:?}: {sentence:?}", code.name, s.id());
                    assert_eq!(names, favoured(&code.name, f.own, f.other, situation), "{at}");
                    let lower = sentence.to_lowercase();
                    let has = |label: &str| lower.contains(&label.to_lowercase());
                    match names {
                        Some(i) => {
                            naming += 1;
                            assert!(has(&f.labels[i]) && !has(&f.labels[1 - i]), "names its option only: {at}");
                        }
                        None => assert!(!has(&f.labels[0]) && !has(&f.labels[1]), "names no option: {at}"),
                    }
                    // A unit is the variant's own.
                    for unit in ["points", "tokens", "coins"] {
                        assert!(!lower.contains(unit) || unit == f.unit, "{at}");
                    }
                    // A situation is claimed only where the state sets it.
                    for (claim, holds) in [
                        ("gave me more", Situation::Before { direct: true, helped: true }),
                        ("gave another person more", Situation::Before { direct: false, helped: true }),
                        ("gave me fewer", Situation::Before { direct: true, helped: false }),
                        ("was unkind to another person", Situation::Before { direct: false, helped: false }),
                    ] {
                        if lower.contains(claim) {
                            assert_eq!(situation, holds, "{at}");
                        }
                    }
                    if lower.contains("is in my group") {
                        assert_eq!(situation, Situation::Group { shared: true }, "{at}");
                    }
                    // The lexicon codes the sentence with its own value.
                    assert_eq!(lexicon.code_sentence(&sentence).code, code.name, "{at}");
                }
            }
        }
    }
    // 240 + 1,920 + 240 + 240 states × 4 variants × 8 values.
    assert_eq!(rendered, 2640 * 4 * 8);
    assert!(naming > rendered / 3, "most sentences name the option the value favours: {naming} of {rendered}");
}

#[test]
fn the_codebook_example_naming_b2_is_false_where_b1_is_better_for_a_and_the_statement_is_not() {
    // State (a1, b1, a2, b2) = (600, 600, 0, 400) in C0: B1 is better for person A.
    let id = (0..240).find(|i| {
        let f = state(*i).expect("state").facts(Variant::C0);
        f.other == [600, 0] && f.own == [600, 400]
    });
    let f = state(id.expect("the state is in the grid")).expect("state").facts(Variant::C0);
    let cb = LoadedCodebook::default_codebook().codebook;
    let altruism = cb.code("altruism").expect("altruism");
    assert_eq!(altruism.example, "Person A would be better off with B2.", "the codebook's example, naming B2");
    let facts = Facts {
        labels: f.labels.to_vec(),
        own: f.own.iter().map(|x| *x as f64).collect(),
        other: f.other.iter().map(|x| *x as f64).collect(),
        unit: f.unit,
        other_name: "person A".into(),
        situation: Situation::Plain,
    };
    let (sentence, names) = render(altruism.statement.as_ref().expect("statement"), Some(&facts));
    assert_eq!((sentence.as_str(), names), ("Person A would be better off with B1.", Some(0)));
    // In a game that supplies no facts the sentence names no option at all.
    let (general, names) = render(altruism.statement.as_ref().expect("statement"), None);
    assert_eq!((general.as_str(), names), ("I want the other player to be better off.", None));
}
