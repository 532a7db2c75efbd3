use super::*;
use crate::game::RecordedDecision;
use crate::EnvSpec;
use rand::SeedableRng;

fn binomial2(l: u32) -> u32 {
    l * (l - 1) / 2
}

#[test]
fn the_grids_hold_seed_003s_counts() {
    let l = LEVELS as u32;
    assert_eq!(payoff_grid().len() as u32, l.pow(4) - l.pow(2));
    assert_eq!(payoff_grid().len(), 240);
    assert_eq!(reciprocity_grid().len() as u32, 2 * binomial2(l) * (l + binomial2(l)));
    assert_eq!(reciprocity_grid().len(), 120);
    assert!(payoff_grid().iter().all(|[a1, b1, a2, b2]| (a1, b1) != (a2, b2)), "no identical options");
    let mut sorted = payoff_grid().to_vec();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted.len(), 240, "distinct configurations");
    let counts: Vec<u32> = Treatment::ALL.iter().map(|t| t.states()).collect();
    assert_eq!(counts, vec![240, 1920, 240, 240], "the SUVA audit paper's four experiments");
}

#[test]
fn every_state_round_trips_through_its_id() {
    for t in Treatment::ALL {
        let mut seen = std::collections::BTreeSet::new();
        for i in 0..t.states() {
            let id = ID_STRIDE * t.code() + i;
            let s = state(id).expect("a state");
            assert_eq!((s.id(), s.treatment, s.index), (id, t, i));
            assert_eq!(payoff_grid()[s.config as usize], s.levels);
            assert_eq!(s.cue.is_some(), t == Treatment::Group);
            assert_eq!(s.history.is_some(), matches!(t, Treatment::DirectReciprocity | Treatment::IndirectReciprocity));
            if s.history.is_some() {
                assert!(is_reciprocity_config(s.levels), "{s:?}");
            }
            assert!(seen.insert((s.levels, s.cue, s.history)), "{t:?}: state {i} repeats");
        }
        assert!(state(ID_STRIDE * t.code() + t.states()).is_none());
    }
    assert!(state(4 * ID_STRIDE).is_none());
    // Group states cross every configuration with every cue and both groups.
    let s = state(ID_STRIDE + 8 * 7 + 2 * 2 + 1).expect("group state");
    assert_eq!((s.config, s.cue), (7, Some((Cue::Hometown, false))));
    let s = state(2 * ID_STRIDE + 2 * 5).expect("direct state");
    assert_eq!((s.config, s.history), (reciprocity_grid()[5], Some(History::Helped)));
}

#[test]
fn the_reciprocity_grid_is_one_option_better_for_a_only() {
    // Level indices (a1, b1, a2, b2); 1 = 200, 2 = 400, 3 = 600 in C0.
    assert!(is_reciprocity_config([1, 2, 3, 1]), "B2 better for A, worse for B");
    assert!(is_reciprocity_config([3, 0, 0, 3]), "B1 better for A, worse for B");
    assert!(is_reciprocity_config([3, 2, 1, 2]), "B1 better for A, the same for B");
    assert!(!is_reciprocity_config([3, 3, 0, 0]), "B1 better for both");
    assert!(!is_reciprocity_config([0, 0, 0, 2]), "the same for A");
    // Each reciprocity configuration has exactly one option better for A, and that option is
    // never better for B; its prosocial option is that one.
    for i in reciprocity_grid() {
        let s = state(*i).expect("distributional state");
        let pro = s.better_for_a().expect("the options differ for A") as usize;
        let b = [s.levels[1], s.levels[3]];
        assert!(b[pro] <= b[1 - pro], "{:?}", s.levels);
    }
}

#[test]
fn payoffs_follow_the_choice_and_the_variants_levels() {
    let params = BaParams { replicates: 1, ..BaParams::default() };
    for (variant, levels) in [(Variant::C0, [0, 200, 400, 600]), (Variant::C2, [100, 300, 500, 700])] {
        assert_eq!(variants().get(variant).levels, levels.to_vec());
        for choice in [0, 1] {
            let mut env = EnvSpec::BinaryAllocation(params.clone()).build(variant).expect("builds");
            let mut rng = rand::rngs::StdRng::seed_from_u64(3);
            let req = env.pending(&mut rng);
            assert_eq!(req.len(), 1);
            assert_eq!(req[0].agent, CHOOSER);
            let s = observed_state(&req[0].observation).expect("state");
            let [a1, b1, a2, b2] = s.payoffs(&levels);
            let step = env.resolve(&[(CHOOSER, Action::Choice(choice))], &mut rng).expect("legal");
            let (a, b) = if choice == 0 { (a1, b1) } else { (a2, b2) };
            assert_eq!(step.payoffs, vec![(PASSIVE, a as f64), (CHOOSER, b as f64)]);
            assert_eq!(step.decisions[0].context, Some(f64::from(s.id())));
            assert_eq!(step.decisions[0].value, f64::from(choice));
            assert_eq!(step.feedback.len(), 1, "person A learns nothing and is never asked");
        }
    }
}

#[test]
fn replicates_must_be_between_one_and_the_cap() {
    for (replicates, ok) in [(0, false), (1, true), (MAX_REPLICATES, true), (MAX_REPLICATES + 1, false)] {
        let r = EnvSpec::BinaryAllocation(BaParams { replicates, ..BaParams::default() }).validate();
        assert_eq!(r.is_ok(), ok, "{replicates}: {r:?}");
        if let Err(e) = r {
            assert!(e.to_string().contains("replicates"), "{e}");
        }
    }
}

#[test]
fn only_b1_or_b2_by_person_b_is_legal() {
    let mut env = EnvSpec::BinaryAllocation(BaParams::default()).build(Variant::C0).expect("builds");
    let mut rng = rand::rngs::StdRng::seed_from_u64(1);
    let req = env.pending(&mut rng);
    let ActionSpace::Choice { labels } = &req[0].observation.space else { panic!("a choice") };
    assert_eq!(labels.as_ref(), ["B1".to_string(), "B2".to_string()]);
    assert!(env.resolve(&[(CHOOSER, Action::Choice(2))], &mut rng).is_err());
    assert!(env.resolve(&[(CHOOSER, Action::Amount(0))], &mut rng).is_err());
    assert!(env.resolve(&[(PASSIVE, Action::Choice(0))], &mut rng).is_err(), "person A makes no choice");
    assert!(env.resolve(&[(CHOOSER, Action::Choice(1))], &mut rng).is_ok());
}

#[test]
fn a_run_plays_every_state_replicates_times_in_a_seeded_order() {
    let order = |treatment, seed| {
        let p = BaParams { treatment, replicates: 2 };
        let mut env = EnvSpec::BinaryAllocation(p.clone()).build(Variant::C0).expect("builds");
        let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
        let mut ids = Vec::new();
        while !env.is_done() {
            let r = env.pending(&mut rng);
            ids.push(observed_state(&r[0].observation).expect("state").id());
            env.resolve(&[(CHOOSER, Action::Choice(0))], &mut rng).expect("legal");
        }
        assert_eq!(ids.len() as u64, p.expected_decisions().0);
        ids
    };
    for t in Treatment::ALL {
        let ids = order(t, 5);
        let mut sorted = ids.clone();
        sorted.sort();
        let want: Vec<u32> = (0..t.states()).flat_map(|i| [ID_STRIDE * t.code() + i; 2]).collect();
        assert_eq!(sorted, want, "{t:?}: every state twice");
        assert_ne!(ids, want, "{t:?}: shuffled");
    }
    assert_eq!(order(Treatment::Distributional, 5), order(Treatment::Distributional, 5), "same seed, same order");
    assert_ne!(order(Treatment::Distributional, 5), order(Treatment::Distributional, 6));
}

#[test]
fn the_question_states_the_cue_or_history_and_both_options() {
    let p = BaParams::default();
    let obs = |id: u32, variant| Observation {
        env: EnvKind::BinaryAllocation,
        variant,
        role: Role::Dictator,
        round: 1,
        rounds: Some(10),
        space: ActionSpace::Choice { labels: variants().get(variant).labels.clone() },
        context: Context::State { id },
        payoffs: PayoffBounds { min: 0.0, mean_abs: 300.0 },
        memory: 0,
    };
    // (200, 400, 600, 200): level indices (1, 2, 3, 1), the seed's example prompt.
    let config = payoff_grid().iter().position(|c| *c == [1, 2, 3, 1]).expect("in the grid") as u32;
    let hometown = ID_STRIDE + config * 8 + 2 * 2;
    assert_eq!(
        p.question(&obs(hometown, Variant::C0)),
        "You and person A grew up in the same town. Under B1, person A receives 200 points and you receive 400 \
         points. Under B2, person A receives 600 points and you receive 200 points. Which option do you choose?"
    );
    let plain = p.question(&obs(config, Variant::C0));
    assert!(plain.starts_with("Under B1, person A receives 200 points"), "{plain}");
    let r = reciprocity_grid()[0];
    let [a1, b1, a2, b2] = payoff_grid()[r as usize].map(|l| [0, 200, 400, 600][l as usize]);
    let harmed = p.question(&obs(3 * ID_STRIDE + 1, Variant::C0));
    assert!(harmed.contains("gave another person fewer points and person A more"), "{harmed}");
    assert!(harmed.contains(&format!("Under B1, person A receives {a1} points and you receive {b1} points")));
    assert!(harmed.contains(&format!("Under B2, person A receives {a2} points and you receive {b2} points")));
    let helped = p.question(&obs(2 * ID_STRIDE, Variant::C0));
    assert!(helped.contains("gave you more points and person A fewer"), "{helped}");
    let c2 = p.question(&obs(config, Variant::C2));
    assert!(c2.contains("receives 300 coins and you receive 500 coins"), "{c2}");
    for cue in Cue::ALL {
        assert_ne!(cue.sentence(true), cue.sentence(false));
    }
}

#[test]
fn c3_is_c0_and_marked_so_and_every_variant_keeps_the_motive_signs() {
    let (c0, c3) = (variants().get(Variant::C0), variants().get(Variant::C3));
    assert_eq!(
        (&c0.cover_story, &c0.labels, &c0.unit, &c0.levels),
        (&c3.cover_story, &c3.labels, &c3.unit, &c3.levels)
    );
    assert!(c3.same_as_c0);
    for v in [Variant::C0, Variant::C1, Variant::C2] {
        assert!(!variants().get(v).same_as_c0, "{v:?}");
    }
    // Equally spaced levels: every payoff difference is a positive multiple of C0's.
    for v in Variant::ALL {
        let l = &variants().get(v).levels;
        let k = (l[1] - l[0]) as f64 / 200.0;
        for (i, x) in l.iter().enumerate() {
            assert_eq!(*x as f64, l[0] as f64 + k * 200.0 * i as f64, "{v:?}");
        }
    }
}

#[test]
fn outcomes_read_the_state_from_the_context() {
    // Distributional: (a1 > a2) config and (a1 == a2) config.
    let grid = payoff_grid();
    let a_better_b1 = grid.iter().position(|[a1, _, a2, _]| a1 > a2).expect("one") as u32;
    let a_tied = grid.iter().position(|[a1, _, a2, _]| a1 == a2).expect("one") as u32;
    let d = |ctx: u32, value: f64| RecordedDecision {
        round: 1,
        seat: CHOOSER as u32,
        role: "dictator",
        value,
        scale: 1.0,
        context: Some(f64::from(ctx)),
    };
    let view = |ds: &[RecordedDecision<'static>]| BaParams::default().outcomes(&RunView::c0(ds, &[]));
    let out = view(&[d(a_better_b1, 0.0), d(a_better_b1, 1.0), d(a_tied, 0.0), d(a_tied, 0.0)]);
    assert_eq!(out, vec![("prosocial".into(), 0.5), ("b1_share".into(), 0.75)]);
    // Reciprocity: helped states choose the prosocial option, harmed states the other.
    let mut ds = Vec::new();
    for i in 0..N_RECIPROCITY * 2 {
        let s = state(2 * ID_STRIDE + i).expect("state");
        let pro = s.better_for_a().expect("differs for A");
        let c = if s.history == Some(History::Helped) { pro } else { 1 - pro };
        ds.push(d(s.id(), f64::from(c)));
    }
    let out = view(&ds);
    assert_eq!(out.iter().find(|(n, _)| n == "reciprocity").map(|x| x.1), Some(1.0));
    assert_eq!(out.iter().find(|(n, _)| n == "prosocial").map(|x| x.1), Some(0.5));
}
