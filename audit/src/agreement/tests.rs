use super::*;
use agora_records::families::audit::CoderKeyRef;
use rusqlite::params;

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

/// The gate at threshold `min_kappa` without the floors, for the threshold's own logic.
fn threshold(min_kappa: f64, allow_unvalidated: bool) -> GateOptions {
    GateOptions { min_kappa, min_responses: 0, min_sentences: 0, allow_unvalidated, ..GateOptions::default() }
}

/// Each label given again, the same, by a second human (`ben`): two labellers who agree.
fn twice(labels: Vec<HumanLabel>) -> Vec<HumanLabel> {
    let mut out = Vec::new();
    for l in labels {
        out.push(HumanLabel { coder: "ben".into(), ..l.clone() });
        out.push(l);
    }
    out
}

/// The gate's decision for the coder on model `m` from labels and codes.
fn decide_on(
    codes: &[String],
    labels: &[HumanLabel],
    machine: &[MachineCode],
    m: &str,
    gate: &GateOptions,
) -> (Validation, Option<ConsensusRow>) {
    let (consensus, rows) = compute(codes, labels, machine);
    let r = rows.iter().find(|r| r.kind == "coder" && r.model == m);
    let h = consensus.iter().find(|c| c.model == m);
    (validate(r, h, !labels.is_empty(), m, "lexicon/1", gate, (0, 100)), h.cloned())
}

/// A panel on `n` sentences, three a response, of ten codes used equally: `ana` labels
/// sentence i with code i mod 10, `ben` with the same code except where `differs(i)` (then the
/// next code), and the coder gives ana's code everywhere: it agrees with one of them.
fn panel(n: i64, differs: impl Fn(i64) -> bool) -> (Vec<String>, Vec<HumanLabel>, Vec<MachineCode>) {
    let codes: Vec<String> = (0..10).map(|c| format!("c{c}")).collect();
    let (mut labels, mut machine) = (Vec::new(), Vec::new());
    for i in 0..n {
        let key = (1, 0, i / 3, i);
        let truth = &codes[(i % 10) as usize];
        let other = if differs(i) { &codes[((i + 1) % 10) as usize] } else { truth };
        for (coder, code) in [("ana", truth), ("ben", other)] {
            labels.push(HumanLabel {
                key,
                model: "m".into(),
                coder: coder.into(),
                code: code.clone(),
                text: format!("s{i}"),
            });
        }
        machine.push(MachineCode {
            key,
            model: "m".into(),
            coder: "lexicon/1".into(),
            codebook_sha256: "abc".into(),
            code: truth.clone(),
            text: format!("s{i}"),
        });
    }
    (codes, labels, machine)
}

#[test]
fn issue_39_one_labeller_is_refused_however_well_the_coder_agrees() {
    // Regression (issue 39, item 3): one person's labels sufficed, and a coder copying them
    // was validated at κ 1.
    let (codes, labels, machine) = panel(600, |_| false);
    let ana: Vec<HumanLabel> = labels.iter().filter(|l| l.coder == "ana").cloned().collect();
    let (v, h) = decide_on(&codes, &ana, &machine, "m", &GateOptions::default());
    assert_eq!(h.map(|h| (h.labellers, h.multiply_labelled, h.with_reference)), Some((1, 0, 0)));
    assert_eq!(v.status, Status::Refused);
    assert_eq!(
        v.label(),
        "refused: 1 human labeller on this model's text (the gate needs 2, labelling the same sentences, who agree \
         with each other at κ ≥ 0.7 before the coder is compared with them)"
    );
    assert_eq!(v.n, 0, "one human's labels are no reference");
    // The case that comes out the other way: the same labels given by a second human.
    let (v, h) = decide_on(&codes, &labels, &machine, "m", &GateOptions::default());
    assert_eq!(v.status, Status::Validated, "{}", v.label());
    assert_eq!(h.map(|h| (h.labellers, h.human_kappa)), Some((2, Some(1.0))));
    assert_eq!(
        v.label(),
        "validated: κ = 1.000 ≥ 0.8 (600 sentences, 200 responses); 2 human labellers, κ = 1.000 with each \
         other (Cohen's κ), 0 of 600 sentences (0.0 %) without a majority"
    );
    // Nor can a gate be asked for fewer than two.
    assert!(GateOptions { min_labellers: 1, ..GateOptions::default() }.check().is_err());
}

#[test]
fn issue_39_labellers_who_disagree_with_each_other_are_refused_though_the_coder_agrees_with_one() {
    // Regression (issue 39, item 3): two labellers at κ 0.49 with each other left the coder
    // validated against the sentences they happened to agree on. ben differs from ana on 46 of
    // every 100 sentences; the coder copies ana.
    let (codes, labels, machine) = panel(600, |i| i % 100 < 46);
    let (v, h) = decide_on(&codes, &labels, &machine, "m", &GateOptions::default());
    let h = h.expect("humans");
    let k = h.human_kappa.expect("κ between ana and ben");
    // p_o = 0.54, p_e = 10 × 0.1 × 0.1 = 0.1: κ = (0.54 − 0.1) / 0.9 = 0.489.
    assert!((k - 0.44 / 0.9).abs() < 1e-12, "{k}");
    assert_eq!(v.status, Status::Refused);
    assert_eq!(
        v.label(),
        "refused: the 2 human labellers agree with each other at κ = 0.489 < 0.7 (Cohen's κ, 600 sentences \
         labelled by two or more): their labels are no reference for the coder"
    );
    // Without the humans' rule the coder would pass, κ 1 on the 324 sentences they agree on:
    // the refusal is the humans', not the coder's.
    let lax = GateOptions { min_human_kappa: -0.99, max_human_disagreement: 1.0, ..GateOptions::default() };
    let (v, _) = decide_on(&codes, &labels, &machine, "m", &lax);
    assert_eq!((v.status, v.kappa, v.n), (Status::Validated, Some(1.0), 324));
    // The case that comes out the other way: ben differs on 5 of every 100.
    let (codes, labels, machine) = panel(600, |i| i % 100 < 5);
    let (v, h) = decide_on(&codes, &labels, &machine, "m", &GateOptions::default());
    assert_eq!(v.status, Status::Validated, "{}", v.label());
    assert!(h.and_then(|h| h.human_kappa).is_some_and(|k| k > 0.9));
}

#[test]
fn issue_39_too_many_sentences_without_a_majority_are_refused() {
    // ben differs on 25 of every 100 sentences: κ 0.722 with ana clears 0.7, but a quarter of
    // the sentences, the ones they read differently, would be left out of the coder's κ.
    let (codes, labels, machine) = panel(600, |i| i % 100 < 25);
    let (v, h) = decide_on(&codes, &labels, &machine, "m", &GateOptions::default());
    let h = h.expect("humans");
    assert!(h.human_kappa.is_some_and(|k| (k - 0.65 / 0.9).abs() < 1e-12), "{h:?}");
    assert_eq!((h.disagreements, h.multiply_labelled), (150, 600));
    assert_eq!(
        v.label(),
        "refused: the human labellers disagree on 150 of the 600 sentences two or more labelled (25.0 % > 20 %): \
         the coder would be judged on the sentences they read alike only"
    );
    // The case that comes out the other way: 15 of every 100 (κ 0.833, 15 % left out).
    let (codes, labels, machine) = panel(600, |i| i % 100 < 15);
    let (v, h) = decide_on(&codes, &labels, &machine, "m", &GateOptions::default());
    assert_eq!(v.status, Status::Validated, "{}", v.label());
    assert_eq!(h.map(|h| h.disagreements), Some(90));
    assert!(v.reason.ends_with("90 of 600 sentences (15.0 %) without a majority"), "{}", v.reason);
}

#[test]
fn more_than_two_labellers_are_judged_by_their_mean_pairwise_kappa() {
    // ana and ben differ on 30 of every 100 sentences (κ 0.667); cy labels only sentences they
    // agree on, with their code (κ 1 with each). Light's κ: (0.667 + 1 + 1) / 3 = 0.889. The
    // disagreements, where cy did not label, are 30 % of the sentences: refused by the cap.
    let (codes, mut labels, machine) = panel(600, |i| i % 100 < 30);
    let agreed: Vec<HumanLabel> = labels
        .chunks(2)
        .filter(|p| p[0].code == p[1].code)
        .map(|p| HumanLabel { coder: "cy".into(), ..p[0].clone() })
        .collect();
    labels.extend(agreed);
    let (v, h) = decide_on(&codes, &labels, &machine, "m", &GateOptions::default());
    let h = h.expect("humans");
    assert_eq!((h.labellers, h.human_pairs), (3, 3));
    let ana_ben = 0.6 / 0.9;
    assert!(h.human_kappa.is_some_and(|k| (k - (ana_ben + 2.0) / 3.0).abs() < 1e-12), "{h:?}");
    assert_eq!(h.human_kappa_kind(), "the mean of 3 pairwise Cohen's κ");
    assert_eq!(v.status, Status::Refused);
    assert!(v.reason.starts_with("the human labellers disagree on 180 of the 600 sentences"), "{}", v.reason);
}

#[test]
fn a_sentence_the_coder_could_not_code_is_a_disagreement_not_left_out() {
    // Regression (review): sentences of responses whose coder output failed validation had
    // no code and dropped out of κ, so a coder failing on hard sentences could pass.
    let labels: Vec<HumanLabel> =
        twice(["a", "b", "c", "a"].iter().enumerate().map(|(i, c)| label(i as i64, "m", "ana", c)).collect());
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
    // Sentence 2: one human's label is no reference.
    assert_eq!(got, [Some("a"), None, None, Some("b")]);
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
    let humans = rows.iter().find(|r| r.kind == "humans").expect("pair");
    // ana: a b c a b; ben: a b c b b. p_o = 4/5; ana margins a .4 b .4 c .2, ben a .2 b .6 c .2.
    let p_e = 0.4 * 0.2 + 0.4 * 0.6 + 0.2 * 0.2;
    assert!((humans.kappa.expect("kappa") - (0.8 - p_e) / (1.0 - p_e)).abs() < 1e-12);
    assert_eq!(
        consensus[0],
        ConsensusRow {
            model: "m".into(),
            labelled: 5,
            multiply_labelled: 5,
            with_reference: 4,
            disagreements: 1,
            labellers: 2,
            human_pairs: 1,
            human_kappa: humans.kappa,
            human_note: None,
        }
    );
    assert_eq!(consensus[0].disagreement_share(), Some(0.2));
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
    let labels = twice(labels);
    let (consensus, rows) = compute(&codes(), &labels, &codes_m);
    let get = |m: &str| rows.iter().find(|r| r.kind == "coder" && r.model == m);
    let humans = |m: &str| consensus.iter().find(|c| c.model == m);
    let agree =
        "2 human labellers, κ = 1.000 with each other (Cohen's κ), 0 of 10 sentences (0.0 %) without a majority";
    let good = validate(get("good"), humans("good"), true, "good", "lexicon/1", &threshold(0.8, false), (0, 10));
    assert_eq!(
        (good.status, good.label()),
        (Status::Validated, format!("validated: κ = 1.000 ≥ 0.8 (10 sentences, 10 responses); {agree}"))
    );
    let poor = validate(get("poor"), humans("poor"), true, "poor", "lexicon/1", &threshold(0.8, false), (0, 10));
    let k = get("poor").and_then(|r| r.kappa).expect("kappa");
    assert!(k < 0.8);
    assert_eq!(poor.label(), format!("refused: κ = {k:.3} < 0.8 (10 sentences, 10 responses); {agree}"));
    assert!(!poor.shown());
    let allowed = validate(get("poor"), humans("poor"), true, "poor", "lexicon/1", &threshold(0.8, true), (0, 10));
    assert_eq!(allowed.status, Status::Unvalidated);
    assert!(allowed.shown());
    let none = validate(
        get("unlabelled"),
        humans("unlabelled"),
        true,
        "unlabelled",
        "lexicon/1",
        &threshold(0.8, false),
        (0, 1),
    );
    assert_eq!(none.label(), "refused: no human labels on this model's text");
    let nothing = validate(None, None, false, "x", "lexicon/1", &threshold(0.8, false), (0, 0));
    assert_eq!(nothing.label(), "refused: no human labels");
    // A threshold just above kappa is not printed as equal to it.
    assert_eq!(kappa_text(0.79996, 0.8), "0.79996");
    assert!(check_min_kappa(0.8).is_ok() && check_min_kappa(1.5).is_err() && check_min_kappa(f64::NAN).is_err());
}

#[test]
fn a_single_shared_code_leaves_kappa_undefined() {
    // The humans agree on two sentences and differ on a third (left out); the reference is all
    // `a`, and so are the coder's codes. The humans' own rule is relaxed to reach the coder's.
    let labels = twice(vec![label(0, "m", "ana", "a"), label(1, "m", "ana", "a")]);
    let labels = [labels, vec![label(2, "m", "ana", "b"), label(2, "m", "ben", "c")]].concat();
    let machine = [machine(0, "m", "a"), machine(1, "m", "a"), machine(2, "m", "a")];
    let (consensus, rows) = compute(&codes(), &labels, &machine);
    let r = rows.iter().find(|r| r.kind == "coder").expect("row");
    assert_eq!((r.kappa, r.p_o, r.n, r.excluded_disagreements), (None, Some(1.0), 2, 1));
    let lax = GateOptions { min_human_kappa: 0.0, max_human_disagreement: 1.0, ..threshold(0.8, false) };
    let v = validate(Some(r), consensus.first(), true, "m", "lexicon/1", &lax, (0, 2));
    assert_eq!(v.label(), "refused: κ undefined, every sentence has the same code (2 sentences)");
    // The humans' κ is undefined where they share one code only: refused, saying so.
    let labels = twice(vec![label(0, "m", "ana", "a"), label(1, "m", "ana", "a")]);
    let (consensus, rows) = compute(&codes(), &labels, &machine);
    let r = rows.iter().find(|r| r.kind == "coder");
    let v = validate(r, consensus.first(), true, "m", "lexicon/1", &threshold(0.8, false), (0, 2));
    assert!(
        v.reason.starts_with(
            "the 2 human labellers' κ with each other cannot be computed (κ between `ana` and `ben` undefined"
        ),
        "{}",
        v.reason
    );
}

/// The seed's own validation example ("Auditing LLM Behavior with SUVA", Table 240.5: the
/// lexicon coder against gold labels on 100 responses of Model F, 301 sentences, κ 0.877),
/// rebuilt sentence by sentence from its confusion matrix: three sentences a response, the
/// last response four; the gold labels given by two humans who agree (`gold`, `gold2`).
fn seed_example() -> (Vec<String>, Vec<HumanLabel>, Vec<MachineCode>) {
    let codes: Vec<String> =
        ["altruism", "competition", "fairness", "self_interest", "social_welfare", "understanding"]
            .map(str::to_string)
            .to_vec();
    // Rows: gold; columns: the coder (Table 240.5).
    let table: [[usize; 6]; 6] = [
        [24, 0, 0, 0, 0, 16],
        [0, 3, 0, 0, 0, 0],
        [0, 0, 31, 0, 0, 0],
        [0, 0, 9, 37, 0, 0],
        [0, 0, 0, 0, 32, 0],
        [0, 0, 0, 0, 0, 149],
    ];
    let (mut labels, mut machine) = (Vec::new(), Vec::new());
    let mut i = 0_i64;
    for (g, row) in table.iter().enumerate() {
        for (c, n) in row.iter().enumerate() {
            for _ in 0..*n {
                let key = (1, 0, (i / 3).min(99), i);
                for coder in ["gold", "gold2"] {
                    labels.push(HumanLabel {
                        key,
                        model: "F".into(),
                        coder: coder.into(),
                        code: codes[g].clone(),
                        text: format!("s{i}"),
                    });
                }
                machine.push(MachineCode {
                    key,
                    model: "F".into(),
                    coder: "lexicon/1".into(),
                    codebook_sha256: "abc".into(),
                    code: codes[c].clone(),
                    text: format!("s{i}"),
                });
                i += 1;
            }
        }
    }
    (codes, labels, machine)
}

#[test]
fn the_seeds_301_sentence_example_passes_the_gate_as_shipped() {
    let (codes, labels, machine) = seed_example();
    let (consensus, rows) = compute(&codes, &labels, &machine);
    let r = rows.iter().find(|r| r.kind == "coder").expect("coder row");
    assert_eq!((r.n, r.responses), (301, 100));
    // "sentences: 301, raw agreement: 0.917, kappa: 0.877"; the issue's interval [0.83, 0.92].
    assert_eq!(format!("{:.3} {:.3}", r.p_o.expect("p_o"), r.kappa.expect("kappa")), "0.917 0.877");
    assert_eq!(format!("[{:.2}, {:.2}]", r.ci_low.expect("low"), r.ci_high.expect("high")), "[0.83, 0.92]");
    let v = validate(Some(r), consensus.first(), true, "F", "lexicon/1", &GateOptions::default(), (0, 100));
    assert_eq!(
        v.label(),
        "validated: κ = 0.877 ≥ 0.8 (301 sentences, 100 responses); 2 human labellers, κ = 1.000 with each other \
         (Cohen's κ), 0 of 301 sentences (0.0 %) without a majority"
    );
    // Per-code recall beside κ: the missed altruism paraphrases show (24 of 40).
    assert_eq!(v.recall_of("altruism"), Some(0.6));
    assert_eq!((v.support("altruism"), v.support("competition")), (40, 3));
    assert!(
        v.recall_text().starts_with("altruism 0.600 (40), competition 1.000 (3), fairness 1.000 (31)"),
        "{}",
        v.recall_text()
    );
}

#[test]
fn a_small_sample_is_refused_whatever_its_kappa() {
    // The first 14 sentences of the seed's example (five responses), every one agreed: κ 1 on
    // too little to mean anything.
    let (codes, labels, machine) = seed_example();
    let keep = |k: &SentenceKey| k.3 >= 301 - 14;
    let labels: Vec<HumanLabel> = labels.into_iter().filter(|l| keep(&l.key)).collect();
    let machine: Vec<MachineCode> = machine.into_iter().filter(|m| keep(&m.key)).collect();
    let (_, rows) = compute(&codes, &labels, &machine);
    let r = rows.iter().find(|r| r.kind == "coder").expect("coder row");
    assert_eq!((r.n, r.responses, r.kappa), (14, 5, None), "one shared code: κ undefined");
    // With two codes among them κ is defined and high, and still refused for the floor.
    let mut labels = labels;
    let mut machine = machine;
    labels[0].code = "altruism".into();
    labels[1].code = "altruism".into();
    machine[0].code = "altruism".into();
    let (consensus, rows) = compute(&codes, &labels, &machine);
    let r = rows.iter().find(|r| r.kind == "coder").expect("coder row");
    let v = validate(Some(r), consensus.first(), true, "F", "lexicon/1", &GateOptions::default(), (0, 5));
    assert_eq!(v.status, Status::Refused);
    assert_eq!(
        v.label(),
        "refused: 14 sentences of 5 responses with a human reference (the gate needs 100 responses and 200 sentences; κ = 1.000 there)"
    );
}

#[test]
fn the_coder_failing_on_more_than_five_percent_of_responses_is_refused() {
    let (codes, labels, machine) = seed_example();
    let (consensus, rows) = compute(&codes, &labels, &machine);
    let r = rows.iter().find(|r| r.kind == "coder");
    let h = consensus.first();
    let gate = GateOptions::default();
    assert_eq!(validate(r, h, true, "F", "lexicon/1", &gate, (5, 100)).status, Status::Validated);
    let v = validate(r, h, true, "F", "lexicon/1", &gate, (6, 100));
    assert_eq!(v.label(), "refused: the coder failed on 6 of 100 responses (6.0 % > 5 %)");
    assert!(GateOptions { max_coder_errors: 1.5, ..gate }.check().is_err());
}

#[test]
fn the_recorded_gate_refuses_a_codebook_the_store_does_not_hold_and_replaces_old_decisions() {
    let mut conn = Connection::open_in_memory().expect("db");
    conn.execute_batch(agora_records::families::audit::TABLES).expect("schema");
    let cb = LoadedCodebook::default_codebook();
    let response = |run: i64, sha: &str, model: &str| {
        format!(
            "INSERT INTO audit_responses (run_id, seat, slot, attempt, coder, codebook, codebook_version,
                 codebook_sha256, model, study, environment, arm, cell, parse_status, action, answer_field,
                 reply_form, reasoning_present, reasoning_sources, post_hoc_present, n_sentences, n_residual,
                 n_post_hoc_sentences, values_json)
             VALUES ({run}, 0, 0, 1, 'lexicon', '{}', {}, '{sha}', '{model}', 's', 'pgg', 'baseline', 'baseline',
                 'parsed', 'c4', 'action', 'json', 1, 'field:reasoning', 0, 1, 0, 0, '{{}}');",
            cb.codebook.name, cb.codebook.version
        )
    };
    conn.execute_batch(&response(1, "elsewhere", "m1")).expect("row");
    conn.execute(
        "INSERT INTO audit_codebooks VALUES (?1, ?2, ?3, ?4)",
        params![cb.codebook.name, cb.codebook.version, cb.sha256, crate::codebook::DEFAULT_CODEBOOK_RON],
    )
    .expect("codebook");
    conn.execute_batch(&response(2, &cb.sha256, "m2")).expect("row");
    assert_eq!(record_gates(&mut conn).expect("gates"), 2);
    let read = |conn: &Connection, sha: &str| {
        agora_analysis::evidence::read_gate(conn, CoderKeyRef { sha256: sha, ..cb.key("lexicon") }).expect("read")
    };
    let unknown = read(&conn, "elsewhere");
    assert_eq!((unknown.len(), unknown[0].model.as_str(), unknown[0].status), (1, "m1", Status::Refused));
    assert_eq!(unknown[0].reason, "the codebook coded with is not in audit_codebooks");
    let held = read(&conn, &cb.sha256);
    assert_eq!((held.len(), held[0].model.as_str(), held[0].status), (1, "m2", Status::Refused));
    assert_eq!(held[0].reason, "no human labels");
    // The decision records the humans it rests on: none here.
    let humans: (i64, Option<f64>, i64, f64) = conn
        .query_row(
            "SELECT labellers, human_kappa, human_sentences, min_human_kappa FROM audit_gate WHERE model = 'm2'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
        .expect("row");
    assert_eq!(humans, (0, None, 0, MIN_HUMAN_KAPPA));
    // The codes of the unknown codebook are gone: so is its decision.
    conn.execute("DELETE FROM audit_responses WHERE codebook_sha256 = 'elsewhere'", []).expect("delete");
    assert_eq!(record_gates(&mut conn).expect("gates"), 1);
    assert!(read(&conn, "elsewhere").is_empty());
}
