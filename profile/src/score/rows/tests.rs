use super::*;

fn row(
    task: &str,
    version: usize,
    presentation: &str,
    level: &str,
    point: &str,
    branch: &str,
    slot: u32,
    score: Option<f64>,
) -> ResponseRow {
    ResponseRow {
        task: task.into(),
        version: format!("Q{version:02}"),
        presentation: presentation.into(),
        level: level.into(),
        point: point.into(),
        branch: branch.into(),
        direction: String::new(),
        round: 0,
        slot,
        scored: true,
        value: score.map(|s| s.to_string()),
        score,
    }
}

/// Dictator rows: version q scores 10·level + q at every slot; Q00 checked at middle with
/// score 40.
fn dictator() -> Vec<ResponseRow> {
    let mut rows = Vec::new();
    for q in 0..11 {
        for (l, level) in LEVELS.iter().enumerate() {
            for slot in 0..2 {
                rows.push(row("dictator", q, REFERENCE, level, "", "", slot, Some(10.0 * l as f64 + q as f64)));
            }
        }
    }
    for slot in 0..2 {
        rows.push(row("dictator", 0, "answer-field", "middle", "", "", slot, Some(40.0)));
    }
    rows
}

#[test]
fn an_a_task_range_from_its_rows() {
    let table = profile_table(&dictator());
    let l = table.iter().find(|l| l.measure == "a:dictator").expect("the dictator line");
    // u_q = (q + 10 + q + 20 + q)/3 = q + 10: M = 15, I = [10, 20]; the check replaces Q00's
    // middle mean 10 by 40: z = 10 + (40 − 10)/3 = 20.
    assert!((l.centre.unwrap() - 15.0).abs() < 1e-12);
    assert_eq!(l.inner, Some([10.0, 20.0]));
    assert_eq!(l.outer, Some([10.0, 20.0]));
    assert_eq!(l.checks, 1);
    assert_eq!(l.coverage, Coverage { reference_valid: 66, reference_slots: 66, check_valid: 2, check_slots: 2 });
    assert!(table.iter().all(|l| l.measure != "a1"), "A1 needs the ultimatum proposal too");
}

#[test]
fn a_missing_slot_makes_the_result_unavailable() {
    let mut rows = dictator();
    let check = rows.iter_mut().rev().find(|r| r.presentation != REFERENCE).unwrap();
    check.score = None;
    check.value = None;
    let l = profile_table(&rows).into_iter().find(|l| l.measure == "a:dictator").unwrap();
    // §M05: "A–D require all scheduled valid observations" — a missing check slot too.
    assert_eq!((l.centre, l.inner, l.outer), (None, None, None));
    assert!(l.status.contains("1 of 2 check slots valid"), "{}", l.status);

    let mut rows = dictator();
    rows[5].score = None;
    rows[5].value = None;
    let l = profile_table(&rows).into_iter().find(|l| l.measure == "a:dictator").unwrap();
    assert_eq!((l.centre, l.inner, l.outer), (None, None, None), "never replaced by a zero");
    assert!(l.status.contains("65 of 66 reference and 2 of 2 check slots valid"), "{}", l.status);
}

#[test]
fn a1_combines_its_two_tasks_with_half_weights() {
    let mut rows = dictator();
    rows.extend(dictator().into_iter().map(|mut r| {
        r.task = "ultimatum-proposer".into();
        r.score = r.score.map(|s| s + 30.0);
        r
    }));
    let table = profile_table(&rows);
    let a1 = table.iter().find(|l| l.measure == "a1").expect("A1");
    // Dictator I = [10, 20], proposal I = [40, 50] → [25, 35]; M = (15 + 45)/2.
    assert_eq!(a1.inner, Some([25.0, 35.0]));
    assert!((a1.centre.unwrap() - 30.0).abs() < 1e-12);
    assert_eq!(table[0].measure, "a1", "combined measures first");
}

#[test]
fn b2_uses_the_difference_between_its_histories() {
    let mut rows = Vec::new();
    for q in 0..11 {
        for level in LEVELS {
            rows.push(row("b2", q, REFERENCE, level, "", "after", 0, Some(100.0)));
            rows.push(row("b2", q, REFERENCE, level, "", "comparison", 0, Some(if q == 0 { 100.0 } else { 0.0 })));
        }
        rows.push(row("b2", q, "history-table", "low", "", "after", 0, Some(0.0)));
        rows.push(row("b2", q, "history-table", "low", "", "comparison", 0, Some(0.0)));
    }
    let l = profile_table(&rows).into_iter().find(|l| l.measure == "b2").unwrap();
    // u_0 = 0, u_q = 100 otherwise; Q00's check: δ_low 0 → 0, z = 0; Q01's: 100 → 0, z = 66.7.
    let [lo, hi] = l.inner.unwrap();
    assert!(lo.abs() < 1e-9 && (hi - 100.0).abs() < 1e-9, "{lo} {hi}");
    assert!((l.centre.unwrap() - 1000.0 / 11.0).abs() < 1e-9);
    assert_eq!(l.checks, 11);
}

/// B4 rows of a player answering `reference` in every round and `check` at the check's side
/// queries (rounds 8 and 12 at the low payoff), with `episodes` episodes per payoff and direction
/// (15 under the full protocol).
fn b4_rows(episodes: u32, reference: &str, check: &str) -> Vec<ResponseRow> {
    let mut rows = Vec::new();
    let mut push = |q: usize, presentation: &str, level: &str, direction: &str, episode: u32, round: u32, v: &str| {
        let opponent = if (direction == "l-to-r") == (round <= 6) { "l" } else { "r" };
        let mut r = row("b4", q, presentation, level, &format!("round-{round}"), "", episode, None);
        r.direction = direction.into();
        r.round = round;
        r.value = Some(v.into());
        r.score = Some(if opponent == v { 100.0 } else { 0.0 });
        rows.push(r);
    };
    for q in 0..11 {
        for direction in ["l-to-r", "r-to-l"] {
            for episode in 0..episodes {
                for level in LEVELS {
                    for round in 1..=12u32 {
                        push(q, REFERENCE, level, direction, episode, round, reference);
                    }
                }
                // One check per version at the low payoff: the side queries at rounds 8 and 12.
                for round in [8u32, 12] {
                    push(q, "history-table", "low", direction, episode, round, check);
                }
            }
        }
    }
    rows
}

#[test]
fn an_always_l_player_scores_50_on_b4() {
    // §B4: the opponent plays L in rounds 1–6 then R, or the reverse; a model that always
    // answers L matches in half of the scored positions (rounds 8–12): 100·225/450 = 50.
    let rows = b4_rows(15, "l", "l");
    let l = profile_table(&rows).into_iter().find(|l| l.measure == "b4").expect("b4");
    assert_eq!(l.status, "available", "{l:?}");
    assert!((l.centre.unwrap() - 50.0).abs() < 1e-12, "{l:?}");
    assert_eq!(l.outer, Some([50.0, 50.0]), "the same choices under the check change nothing");
}

#[test]
fn b4_under_a_reduced_protocol_scores_the_same_answers_as_the_full_one() {
    // One episode per payoff and direction (`reduced_protocol`) scores over the 30 choices it
    // scheduled, not the full protocol's 450: an always-L player scores 50, not 100·15/450 = 3.3,
    // and a check that answers R instead moves z by the same amount under both schedules.
    for (reference, check) in [("l", "l"), ("l", "r")] {
        let full = profile_table(&b4_rows(15, reference, check)).into_iter().find(|l| l.measure == "b4").expect("b4");
        let reduced = profile_table(&b4_rows(1, reference, check)).into_iter().find(|l| l.measure == "b4").expect("b4");
        assert_eq!(reduced.status, "available", "{reduced:?}");
        assert!((reduced.centre.unwrap() - 50.0).abs() < 1e-12, "{reduced:?}");
        for (a, b) in [(full.centre, reduced.centre)]
            .into_iter()
            .chain(full.outer.unwrap().into_iter().zip(reduced.outer.unwrap()).map(|(a, b)| (Some(a), Some(b))))
        {
            assert!((a.unwrap() - b.unwrap()).abs() < 1e-9, "{full:?} vs {reduced:?}");
        }
    }
}

/// E1 rows: ten items × eleven versions × 15 slots; every item mean is 50 except BF01's, which
/// is 40 + q under version q; Q00's answer-field check moves BF01 to 60 and leaves BF06 at 50.
fn questionnaire(check_valid: usize) -> Vec<ResponseRow> {
    let items = ["BF01", "BF06", "BF11", "BF16", "BF21", "BF26", "BF31", "BF36", "BF41", "BF46"];
    let mut rows = Vec::new();
    for q in 0..11 {
        for item in items {
            for slot in 0..15 {
                let score = if item == "BF01" { 40.0 + q as f64 } else { 50.0 };
                rows.push(row("e1", q, REFERENCE, "middle", item, "", slot, Some(score)));
            }
        }
    }
    for (item, score) in [("BF01", 60.0), ("BF06", 50.0)] {
        for slot in 0..15 {
            let valid = (slot as usize) < check_valid;
            rows.push(row("e1", 0, "answer-field", "middle", item, "", slot, valid.then_some(score)));
        }
    }
    rows
}

#[test]
fn a_questionnaire_measure_from_its_item_means() {
    let table = profile_table(&questionnaire(15));
    let l = table.iter().find(|l| l.measure == "e1").expect("the e1 line");
    // u_q = (40 + q + 9 × 50)/10 = 49 + q/10: M = 49.5, I = [49, 50]; the check (§E1's worked
    // example at Q00) gives z = 49 + (60 − 40)/10 = 51, widening O to [49, 51].
    assert!((l.centre.unwrap() - 49.5).abs() < 1e-12, "{l:?}");
    assert_eq!(l.inner, Some([49.0, 50.0]));
    assert_eq!(l.outer, Some([49.0, 51.0]));
    assert_eq!(l.checks, 1);
    assert_eq!(l.status, "available");
}

#[test]
fn a_check_cell_with_too_few_ratings_withholds_only_the_outer_range() {
    // §E0: four of fifteen valid make the check cell unavailable; M and I stay.
    let table = profile_table(&questionnaire(4));
    let l = table.iter().find(|l| l.measure == "e1").expect("the e1 line");
    assert!((l.centre.unwrap() - 49.5).abs() < 1e-12, "{l:?}");
    assert_eq!(l.outer, None);
    assert!(l.status.starts_with("outer unavailable"), "{}", l.status);
    // Five of fifteen suffice.
    let l = profile_table(&questionnaire(5)).into_iter().find(|l| l.measure == "e1").unwrap();
    assert_eq!(l.outer, Some([49.0, 51.0]));
    // A reference item with four valid ratings makes the measure unavailable.
    let mut rows = questionnaire(15);
    for r in rows.iter_mut().filter(|r| r.version == "Q03" && r.point == "BF26" && r.slot >= 4) {
        r.score = None;
    }
    let l = profile_table(&rows).into_iter().find(|l| l.measure == "e1").unwrap();
    assert_eq!(l.centre, None);
    assert!(l.status.contains("Q03/BF26"), "{}", l.status);
}
