use super::*;

fn label(i: i64, model: &str, coder: &str, code: &str) -> HumanLabel {
    HumanLabel { key: (1, 0, i, 0), model: model.into(), coder: coder.into(), code: code.into(), text: format!("s{i}") }
}

fn machine(i: i64, model: &str, code: &str) -> MachineCode {
    MachineCode {
        key: (1, 0, i, 0),
        model: model.into(),
        coder: "lexicon/1".into(),
        codebook_sha256: "abc".into(),
        code: code.into(),
        text: format!("s{i}"),
    }
}

fn codes() -> Vec<String> {
    ["a", "b", "c"].map(str::to_string).to_vec()
}

#[test]
fn a_sentence_the_coder_could_not_code_is_a_disagreement_not_left_out() {
    // Regression (review): sentences of responses whose coder output failed validation had
    // no code and dropped out of κ, so a coder failing on hard sentences could pass.
    let labels: Vec<HumanLabel> =
        ["a", "b", "c", "a"].iter().enumerate().map(|(i, c)| label(i as i64, "m", "ana", c)).collect();
    let machine: Vec<MachineCode> =
        ["a", "b", CODER_ERROR, CODER_ERROR].iter().enumerate().map(|(i, c)| machine(i as i64, "m", c)).collect();
    let (_, rows) = compute(&codes(), &labels, &machine);
    let coder = rows.iter().find(|r| r.kind == "coder").expect("coder row");
    assert_eq!(coder.n, 4, "every labelled sentence counts");
    // p_o = 2/4; reference a .5 b .25 c .25; coder a .25 b .25 error .5.
    let p_e = 0.5 * 0.25 + 0.25 * 0.25;
    assert!((coder.kappa.expect("kappa") - (0.5 - p_e) / (1.0 - p_e)).abs() < 1e-12);
}

#[test]
fn the_reference_is_a_strict_majority() {
    let labels = [
        label(0, "m", "ana", "a"),
        label(0, "m", "ben", "a"),
        label(1, "m", "ana", "a"),
        label(1, "m", "ben", "b"),
        label(2, "m", "ana", "c"),
        label(3, "m", "ana", "a"),
        label(3, "m", "ben", "b"),
        label(3, "m", "cy", "b"),
    ];
    let r = consensus(&labels);
    let got: Vec<Option<&str>> = r.values().map(|x| x.code.as_deref()).collect();
    assert_eq!(got, [Some("a"), None, Some("c"), Some("b")]);
}

#[test]
fn kappa_rows_match_a_hand_computation() {
    // Humans: ana and ben agree on 0, 1, 2, 4 and disagree on 3.
    let mut labels = Vec::new();
    for (i, (a, b)) in [("a", "a"), ("b", "b"), ("c", "c"), ("a", "b"), ("b", "b")].iter().enumerate() {
        labels.push(label(i as i64, "m", "ana", a));
        labels.push(label(i as i64, "m", "ben", b));
    }
    let machine: Vec<MachineCode> =
        [("a"), ("b"), ("a"), ("c"), ("b"), ("c")].iter().enumerate().map(|(i, c)| machine(i as i64, "m", c)).collect();
    let (consensus, rows) = compute(&codes(), &labels, &machine);
    assert_eq!(
        consensus[0],
        ConsensusRow { model: "m".into(), labelled: 5, multiply_labelled: 5, with_reference: 4, disagreements: 1 }
    );
    let humans = rows.iter().find(|r| r.kind == "humans").expect("pair");
    // ana: a b c a b; ben: a b c b b. p_o = 4/5; ana margins a .4 b .4 c .2, ben a .2 b .6 c .2.
    let p_e = 0.4 * 0.2 + 0.4 * 0.6 + 0.2 * 0.2;
    assert!((humans.kappa.expect("kappa") - (0.8 - p_e) / (1.0 - p_e)).abs() < 1e-12);
    let coder = rows.iter().find(|r| r.kind == "coder").expect("coder row");
    // Reference on 0, 1, 2, 4: a b c b; coder a b a b. Sentence 3 left out (humans disagree),
    // sentence 5 unlabelled.
    assert_eq!((coder.n, coder.excluded_disagreements), (4, 1));
    let p_e = 0.25 * 0.5 + 0.5 * 0.5 + 0.25 * 0.0;
    assert!((coder.kappa.expect("kappa") - (0.75 - p_e) / (1.0 - p_e)).abs() < 1e-12);
    assert_eq!(coder.confusion, [[1, 0, 0], [0, 2, 0], [1, 0, 0]]);
    assert_eq!(coder.recall, [Some(1.0), Some(1.0), Some(0.0)]);
}

#[test]
fn the_gate_refuses_below_the_threshold_and_says_why() {
    let mut labels = Vec::new();
    let mut codes_m = Vec::new();
    for i in 0..10 {
        let truth = ["a", "b", "c"][i % 3];
        labels.push(label(i as i64, "good", "ana", truth));
        codes_m.push(machine(i as i64, "good", truth));
        labels.push(label(100 + i as i64, "poor", "ana", truth));
        codes_m.push(machine(100 + i as i64, "poor", if i < 5 { truth } else { "a" }));
    }
    codes_m.push(machine(1000, "unlabelled", "a"));
    let (_, rows) = compute(&codes(), &labels, &codes_m);
    let get = |m: &str| rows.iter().find(|r| r.kind == "coder" && r.model == m);
    let good = validate(get("good"), true, "good", "lexicon/1", 0.8, false);
    assert_eq!((good.status, good.label()), (Status::Validated, "validated: κ = 1.000 ≥ 0.8 (10 sentences)".into()));
    let poor = validate(get("poor"), true, "poor", "lexicon/1", 0.8, false);
    let k = get("poor").and_then(|r| r.kappa).expect("kappa");
    assert!(k < 0.8);
    assert_eq!(poor.label(), format!("refused: κ = {k:.3} < 0.8 (10 sentences)"));
    assert!(!poor.shown());
    let allowed = validate(get("poor"), true, "poor", "lexicon/1", 0.8, true);
    assert_eq!(allowed.status, Status::Unvalidated);
    assert!(allowed.shown());
    let none = validate(get("unlabelled"), true, "unlabelled", "lexicon/1", 0.8, false);
    assert_eq!(none.label(), "refused: no human labels on this model's text");
    let nothing = validate(None, false, "x", "lexicon/1", 0.8, false);
    assert_eq!(nothing.label(), "refused: no human labels");
    // A threshold just above kappa is not printed as equal to it.
    assert_eq!(kappa_text(0.79996, 0.8), "0.79996");
    assert!(check_min_kappa(0.8).is_ok() && check_min_kappa(1.5).is_err() && check_min_kappa(f64::NAN).is_err());
}

#[test]
fn a_single_shared_code_leaves_kappa_undefined() {
    let labels = [label(0, "m", "ana", "a"), label(1, "m", "ana", "a")];
    let machine = [machine(0, "m", "a"), machine(1, "m", "a")];
    let (_, rows) = compute(&codes(), &labels, &machine);
    let r = rows.iter().find(|r| r.kind == "coder").expect("row");
    assert_eq!((r.kappa, r.p_o, r.n), (None, Some(1.0), 2));
    let v = validate(Some(r), true, "m", "lexicon/1", 0.8, false);
    assert_eq!(v.label(), "refused: κ undefined, every sentence has the same code (2 sentences)");
}
