use super::*;
use crate::game::{RecordedDecision, RecordedInteraction};
use crate::EnvSpec;
use rand::SeedableRng;

#[test]
fn all_matching_play_records_a_convention_at_interaction_50() {
    let mut env = EnvSpec::NamingGame(NgParams::default()).build(Variant::C0).expect("builds");
    let mut rng = rand::rngs::StdRng::seed_from_u64(5);
    let mut last = None;
    while !env.is_done() {
        let req = env.pending(&mut rng);
        let acts: Vec<(usize, Action)> = req.iter().map(|r| (r.agent, Action::Choice(4))).collect();
        let s = env.resolve(&acts, &mut rng).expect("legal");
        assert!(s.interaction.as_ref().expect("recorded").matched);
        last = Some(s.round);
    }
    assert_eq!(last, Some(50));
}

#[test]
fn never_matching_play_runs_to_the_cap() {
    let p = NgParams { cap: 300, ..NgParams::default() };
    let mut env = EnvSpec::NamingGame(p).build(Variant::C0).expect("builds");
    let mut rng = rand::rngs::StdRng::seed_from_u64(5);
    let mut steps = 0;
    while !env.is_done() {
        let req = env.pending(&mut rng);
        assert_ne!(req[0].agent, req[1].agent);
        let acts = vec![(req[0].agent, Action::Choice(0)), (req[1].agent, Action::Choice(1))];
        env.resolve(&acts, &mut rng).expect("legal");
        steps += 1;
    }
    assert_eq!(steps, 300);
}

#[test]
fn c3_rewards_mismatching() {
    let mut env = EnvSpec::NamingGame(NgParams::default()).build(Variant::C3).expect("builds");
    let mut rng = rand::rngs::StdRng::seed_from_u64(5);
    let req = env.pending(&mut rng);
    let s =
        env.resolve(&[(req[0].agent, Action::Choice(0)), (req[1].agent, Action::Choice(1))], &mut rng).expect("legal");
    assert_eq!(s.payoffs[0].1, 100.0);
}

#[test]
fn tipping_arm_seats_and_prehistory() {
    let p = NgParams { tipping: Some(Tipping { fraction: 0.25, ..Tipping::default() }), ..NgParams::default() };
    assert_eq!(p.committed_count(), 6);
    assert_eq!(p.committed_seats()[5], (5, 1));
    let env = EnvSpec::NamingGame(p.clone()).build(Variant::C0).expect("builds");
    assert!(env.prehistory(0).is_empty(), "committed agents need no memory");
    let h = env.prehistory(10);
    assert_eq!(h.len(), 5);
    assert!(h.iter().all(|f| f.others == vec![Action::Choice(0)]));
    let bad = NgParams { tipping: Some(Tipping { fraction: 1.5, ..Tipping::default() }), ..NgParams::default() };
    assert!(matches!(bad.validate(), Err(EnvError::InvalidParameter { field: "tipping.fraction", .. })));
}

#[test]
fn tipping_ends_only_on_the_alternative() {
    let p = NgParams { tipping: Some(Tipping::default()), cap: 200, ..NgParams::default() };
    let mut env = EnvSpec::NamingGame(p).build(Variant::C0).expect("builds");
    let mut rng = rand::rngs::StdRng::seed_from_u64(5);
    // Everyone keeps the established name: a convention on it is no tipping, so the run
    // goes on to its cap without the end condition being met.
    let mut steps = 0;
    while !env.is_done() {
        let req = env.pending(&mut rng);
        let acts: Vec<(usize, Action)> = req.iter().map(|r| (r.agent, Action::Choice(0))).collect();
        env.resolve(&acts, &mut rng).expect("legal");
        steps += 1;
    }
    assert_eq!(steps, 200);
}

#[test]
fn shuffled_pool_gives_each_agent_its_own_order() {
    let p = NgParams { shuffled_pool: true, ..NgParams::default() };
    let mut env = EnvSpec::NamingGame(p).build(Variant::C0).expect("builds");
    let mut rng = rand::rngs::StdRng::seed_from_u64(5);
    let mut orders = std::collections::BTreeSet::new();
    for _ in 0..40 {
        let req = env.pending(&mut rng);
        for r in &req {
            let Context::Names { order } = &r.observation.context else { panic!("names context") };
            let mut sorted = order.clone();
            sorted.sort();
            assert_eq!(sorted, (0..10).collect::<Vec<u32>>());
            orders.insert(order.clone());
        }
        let acts: Vec<(usize, Action)> = req.iter().map(|r| (r.agent, Action::Choice(0))).collect();
        env.resolve(&acts, &mut rng).expect("legal");
    }
    assert!(orders.len() > 5, "orders differ between agents");
}

#[test]
fn pool_smaller_than_two_is_rejected() {
    let p = NgParams { pool: 1, ..NgParams::default() };
    assert!(matches!(p.validate(), Err(EnvError::InvalidParameter { field: "pool", .. })));
}

#[test]
fn shipped_variants_pool_and_rewards() {
    assert_eq!(variants().get(Variant::C0).names.len(), 10);
    assert!(variants().get(Variant::C0).match_payoff > variants().get(Variant::C0).mismatch_payoff);
    assert!(variants().get(Variant::C3).match_payoff < variants().get(Variant::C3).mismatch_payoff);
}

#[test]
fn the_fallback_follows_the_arm_and_leaves_run_keys_alone() {
    assert_eq!(NgParams::default().fallback(), Fallback::FirstListed);
    assert_eq!(NgParams { shuffled_pool: true, ..NgParams::default() }.fallback(), Fallback::Random);
    let set = NgParams { fallback: Some(Fallback::Random), ..NgParams::default() };
    assert_eq!(set.fallback(), Fallback::Random);
    // Unset, the field is not serialised: the run keys of existing studies are unchanged.
    let json = serde_json::to_string(&NgParams::default()).expect("serialises");
    assert!(!json.contains("fallback"), "{json}");
}

#[test]
fn outcomes_record_the_name_a_convention_formed_on() {
    use crate::game::RecordedInteraction;
    let interactions: Vec<RecordedInteraction> =
        (1..=60).map(|t| RecordedInteraction { t, matched: Some(if t % 7 == 0 { 2 } else { 4 }) }).collect();
    let out = NgParams::default().outcomes(&RunView::c0(&[], &interactions));
    let get = |n: &str| crate::game::outcome_named(&out, n);
    assert_eq!(get("convention"), Some(1.0));
    assert_eq!(get("convention_time"), Some(50.0));
    assert_eq!(get("convention_name"), Some(4.0), "the name most matched on in the window");
    let tipping = NgParams { tipping: Some(Tipping::default()), ..NgParams::default() };
    let out = tipping.outcomes(&RunView::c0(&[], &interactions));
    assert!(out.iter().all(|(k, _)| k != "convention_name"), "the tipping arm's name is its alternative");
}

/// Plays a run to its end with every asked agent choosing `choose(t, seat)`; returns each
/// step's (asked seats, chosen names).
fn play(p: NgParams, mut choose: impl FnMut(u32, usize) -> u32) -> (Box<dyn Environment>, Vec<(Vec<usize>, Vec<u32>)>) {
    let mut env = EnvSpec::NamingGame(p).build(Variant::C0).expect("builds");
    let mut rng = rand::rngs::StdRng::seed_from_u64(9);
    let mut steps = Vec::new();
    let mut t = 0;
    while !env.is_done() {
        t += 1;
        let req = env.pending(&mut rng);
        let acts: Vec<(usize, Action)> = req.iter().map(|r| (r.agent, Action::Choice(choose(t, r.agent)))).collect();
        let step = env.resolve(&acts, &mut rng).expect("legal");
        let names = step.decisions.iter().map(|d| choice_index(&d.action)).collect();
        steps.push((req.iter().map(|r| r.agent).collect(), names));
    }
    (env, steps)
}

fn formed(fraction: f64) -> NgParams {
    NgParams {
        tipping: Some(Tipping { fraction, onset: Onset::Formed, ..Tipping::default() }),
        cap: 400,
        ..NgParams::default()
    }
}

#[test]
fn a_formed_first_tipping_run_forms_its_convention_before_any_agent_is_committed() {
    let p = formed(0.25);
    assert!(p.committed_seats().is_empty(), "every seat plays its own policy until the onset");
    assert_eq!(p.committed_later(), (0..6).collect::<Vec<usize>>(), "recorded as committed agents");
    let env = EnvSpec::NamingGame(p.clone()).build(Variant::C0).expect("builds");
    assert!(env.prehistory(10).is_empty(), "no fabricated history");
    // Everyone proposes name 3 (never the alternative 1): the convention forms on 3 at
    // interaction 50; from then on seats 0..6 are the environment's and propose 1.
    let (_, steps) = play(p.clone(), |_, _| 3);
    for (t, (asked, names)) in steps.iter().enumerate() {
        let t = t as u32 + 1;
        if t <= 50 {
            assert_eq!(asked.len(), 2, "interaction {t}: both asked before the onset");
            assert!(names.iter().all(|n| *n == 3));
        } else {
            assert!(asked.iter().all(|s| *s >= 6), "interaction {t}: committed seats are not asked");
            assert_eq!(names.len(), 2);
        }
    }
    assert!(steps.iter().skip(50).any(|(_, n)| n.contains(&1)), "the committed minority proposes the alternative");
    // The uncommitted never switch: the contest runs to its own cap of 400 interactions.
    assert_eq!(steps.len(), 450);
}

#[test]
fn a_run_without_a_convention_has_none_to_overturn() {
    let p = formed(0.25);
    // Alternating names never match: no convention within the cap, and the run ends there.
    let (_, steps) = play(p.clone(), |_, seat| (seat % 2) as u32);
    assert_eq!(steps.len(), 400);
    let interactions: Vec<RecordedInteraction> = steps
        .iter()
        .enumerate()
        .map(|(i, (_, n))| RecordedInteraction { t: i as u32 + 1, matched: (n[0] == n[1]).then_some(n[0]) })
        .collect();
    let out = p.outcomes(&RunView::c0(&[], &interactions));
    let get = |n: &str| crate::game::outcome_named(&out, n);
    assert_eq!(get("convention"), Some(0.0));
    assert_eq!(get("overturned"), None, "nothing to overturn is not a failure to overturn");
    assert_eq!(get("committed_share"), Some(0.25));
}

#[test]
fn the_contest_reads_from_the_onset_and_reports_the_realised_fraction() {
    // Formed on 0 at 50, then everyone matches on the alternative 1 from interaction 51.
    let interactions: Vec<RecordedInteraction> =
        (1..=120).map(|t| RecordedInteraction { t, matched: Some(if t <= 50 { 0 } else { 1 }) }).collect();
    let p = formed(0.10);
    let out = p.outcomes(&RunView::c0(&[], &interactions));
    let get = |n: &str| crate::game::outcome_named(&out, n);
    assert_eq!(get("convention"), Some(1.0));
    assert_eq!(get("convention_time"), Some(50.0));
    assert_eq!(get("overturned"), Some(1.0));
    assert_eq!(get("overturn_time"), Some(50.0), "50 interactions after the onset");
    assert_eq!(get("committed_share"), Some(2.0 / 24.0), "round(0.10 x 24) = 2 agents: 8.3 %, not 10 %");
    // A convention formed on the alternative is contested with the established index.
    assert_eq!(Tipping { onset: Onset::Formed, ..Tipping::default() }.contesting(1), 0);
    // The onset is left out of the run specification by default (run keys unchanged).
    let json = serde_json::to_string(&Tipping::default()).expect("serialises");
    assert!(!json.contains("onset"), "{json}");
}

#[test]
fn the_shuffled_arm_records_where_each_agent_saw_the_convention() {
    let p = NgParams { shuffled_pool: true, cap: 200, ..NgParams::default() };
    let mut env = EnvSpec::NamingGame(p.clone()).build(Variant::C0).expect("builds");
    let mut rng = rand::rngs::StdRng::seed_from_u64(3);
    let mut decisions = Vec::new();
    let mut interactions = Vec::new();
    let mut first_position = std::collections::BTreeMap::new();
    while !env.is_done() {
        let req = env.pending(&mut rng);
        for r in &req {
            let Context::Names { order } = &r.observation.context else { panic!("names context") };
            let pos = order.iter().position(|n| *n == 7).expect("in the pool") as f64 + 1.0;
            first_position.insert(r.agent as u32, pos);
        }
        let acts: Vec<(usize, Action)> = req.iter().map(|r| (r.agent, Action::Choice(7))).collect();
        let step = env.resolve(&acts, &mut rng).expect("legal");
        for d in &step.decisions {
            assert_eq!(d.context, first_position.get(&(d.agent as u32)).copied(), "position in the agent's list");
            decisions.push((step.round, d.agent as u32, d.value, d.context));
        }
        interactions.push(RecordedInteraction { t: step.round, matched: Some(7) });
    }
    let recorded: Vec<RecordedDecision> = decisions
        .iter()
        .map(|(round, seat, value, context)| RecordedDecision {
            round: *round,
            seat: *seat,
            role: "namer",
            value: *value,
            scale: 1.0,
            context: *context,
        })
        .collect();
    let out = p.outcomes(&RunView::c0(&recorded, &interactions));
    let get = |n: &str| crate::game::outcome_named(&out, n);
    let expected = first_position.values().sum::<f64>() / first_position.len() as f64;
    assert_eq!(get("convention_name"), Some(7.0));
    assert!((get("convention_position").expect("recorded") - expected).abs() < 1e-12);
    // In the fixed order every agent sees name 7 eighth.
    let fixed = NgParams::default().outcomes(&RunView::c0(&recorded, &interactions));
    assert!(fixed.contains(&("convention_position".to_string(), 8.0)));
    assert!(fixed.contains(&("convention_first_listed".to_string(), 0.0)));
    // The action-order cell lists the pool backwards: name 7 of 10 is shown third.
    let reversed =
        NgParams::default().outcomes(&RunView { reversed_labels: true, ..RunView::c0(&recorded, &interactions) });
    assert!(reversed.contains(&("convention_position".to_string(), 3.0)), "{reversed:?}");
}

/// The in-place calls give what the allocating calls give, stage after stage, in every arm: a
/// request or a step left from the last stage (another pair, another list of names, the
/// committed seats' automatic choices after a formed convention's onset) never shows through.
#[test]
fn requests_and_steps_written_in_place_equal_fresh_ones() {
    let arms = [
        NgParams { cap: 400, stop_at_convention: false, ..NgParams::default() },
        NgParams { cap: 400, stop_at_convention: false, shuffled_pool: true, ..NgParams::default() },
        NgParams { cap: 400, stop_at_convention: false, tipping: Some(Tipping::default()), ..NgParams::default() },
        NgParams {
            cap: 400,
            stop_at_convention: false,
            tipping: Some(Tipping { fraction: 0.3, onset: Onset::Formed, ..Tipping::default() }),
            shuffled_pool: true,
            ..NgParams::default()
        },
    ];
    for (k, p) in arms.into_iter().enumerate() {
        let spec = EnvSpec::NamingGame(p);
        let (mut fresh, mut reused) =
            (spec.build(Variant::C0).expect("builds"), spec.build(Variant::C0).expect("builds"));
        let (mut r1, mut r2) = (rand::rngs::StdRng::seed_from_u64(9), rand::rngs::StdRng::seed_from_u64(9));
        let mut choose = rand::rngs::StdRng::seed_from_u64(k as u64);
        let (mut requests, mut step) = (Vec::new(), Step::default());
        let mut stages = 0;
        let mut asked = std::collections::BTreeSet::new();
        while !fresh.is_done() {
            let req = fresh.pending(&mut r1);
            reused.pending_into(&mut r2, &mut requests);
            assert_eq!(req, requests, "arm {k}, stage {stages}");
            asked.insert(req.len());
            // Mostly the same name, so that conventions form and the formed arm reaches its onset.
            let acts: Vec<(usize, Action)> = req
                .iter()
                .map(|r| (r.agent, Action::Choice(if rand::Rng::random_bool(&mut choose, 0.998) { 2 } else { 5 })))
                .collect();
            let s = fresh.resolve(&acts, &mut r1).expect("legal");
            reused.resolve_into(&acts, &mut r2, &mut step).expect("legal");
            assert_eq!(s, step, "arm {k}, stage {stages}");
            stages += 1;
        }
        assert!(reused.is_done(), "arm {k}");
        assert!(stages > 50, "arm {k}: {stages} stages");
        if k == 3 {
            assert!(asked.len() > 1, "the formed arm reached its onset: some stages asked fewer than two seats");
        }
    }
}

#[test]
fn the_fixed_pools_convention_position_is_what_each_seats_last_position_gives() {
    // With one order for every seat, the position outcomes are read without going through
    // each seat's decisions: the same figures as the per-seat computation, bit for bit, with
    // labels in order and reversed, for every name a meeting matched on (a convention's name
    // always is one), and none for a name no meeting matched on.
    let p = NgParams::default();
    assert!(!p.shuffled_pool && !p.outcomes_read_decisions());
    let mut rng = <rand::rngs::StdRng as rand::SeedableRng>::seed_from_u64(0x9e37_79b9_7f4a_7c15u64);
    let mut draw = |n: u64| rand::Rng::random_range(&mut rng, 0..n);
    let mut checked = 0;
    for trial in 0..200 {
        let meetings = draw(30) as u32;
        let mut decisions = Vec::new();
        let mut interactions = Vec::new();
        for t in 1..=meetings {
            let (a, b) = (draw(24) as u32, draw(24) as u32);
            let (na, nb) = (draw(4) as u32, draw(4) as u32);
            for (seat, name) in [(a, na), (b, nb)] {
                decisions.push(RecordedDecision {
                    round: t,
                    seat,
                    role: "namer",
                    value: f64::from(name),
                    scale: 1.0,
                    context: None,
                });
            }
            interactions.push(RecordedInteraction { t, matched: (na == nb).then_some(na) });
        }
        for reversed_labels in [false, true] {
            let run = RunView { reversed_labels, ..RunView::c0(&decisions, &interactions) };
            for name in 0..p.pool as u32 {
                let quick = p.convention_position(&run, name);
                if !interactions.iter().any(|i| i.matched == Some(name)) {
                    assert!(quick.is_empty());
                    continue;
                }
                let fixed = if reversed_labels { p.pool as f64 - f64::from(name) } else { f64::from(name) + 1.0 };
                let general = p.positions_by_seat(&run, name, fixed);
                let bits = |v: &[(String, f64)]| v.iter().map(|(k, x)| (k.clone(), x.to_bits())).collect::<Vec<_>>();
                assert_eq!(bits(&quick), bits(&general), "trial {trial}, name {name}, reversed {reversed_labels}");
                checked += 1;
            }
        }
    }
    assert!(checked > 100, "{checked} cases compared");
}
