//! The ladder on hand-built outcomes: every tier transition, and each reason for stopping.

use super::*;
use crate::claims::ClaimTable;
use crate::outcomes::RunOutcome;
use crate::test_support::{run, runs, Place};

fn claim(id: &str) -> Claim {
    ClaimTable::shipped().claims.iter().find(|c| c.id == id).expect("a shipped claim").clone()
}

/// Grades the claim on the outcomes as `analyze` does, with this audit evidence.
fn grade_with(claim: &Claim, outcomes: &[RunOutcome], audit: Option<&AuditEvidence>) -> Verdict {
    grade_against(claim, outcomes, audit, None)
}

/// As [`grade_with`], against the lab's own human anchors where given.
fn grade_against(
    claim: &Claim,
    outcomes: &[RunOutcome],
    audit: Option<&AuditEvidence>,
    human: Option<&crate::human_anchors::HumanAnchors>,
) -> Verdict {
    let idx = Index::new(outcomes, crate::declared::tests::shipped());
    let models = idx.models();
    let contrasts = crate::contrasts::contrasts(&idx, &models);
    let curves = crate::tipping::tipping(outcomes);
    let cm = crate::tipping::critical_mass(outcomes, &curves, AnchorTable::shipped(), "naming-critical-mass");
    let inputs = Inputs {
        idx: &idx,
        models: &models,
        contrasts: &contrasts,
        critical_mass: &cm,
        anchors: AnchorTable::shipped(),
        audit,
        human,
    };
    ladder(claim, &inputs)
}

fn grade(claim: &Claim, outcomes: &[RunOutcome]) -> Verdict {
    grade_with(claim, outcomes, None)
}

fn unmet(v: &Verdict) -> &str {
    v.first_unmet.as_deref().expect("a verdict below Tier 3 names its first unmet condition")
}

const MODELS: [(&str, &str); 3] = [("m1", "fam-a"), ("m2", "fam-b"), ("m3", "fam-c")];

/// `pgg-decline` for a model: declining at baseline (and under C3 as given), and in each
/// (cell, level) with the given run-level changes.
fn decline(out: &mut Vec<RunOutcome>, model: &str, family: &str, cells: &[(&str, &str, &[f64])], c3: &[f64]) {
    let pgg = |cell, level, variant| Place::new(model, family, "public-goods", "baseline", cell, level, variant);
    runs(out, pgg("baseline", "baseline", "C0"), "contribution_change", &[-0.30, -0.25, -0.20]);
    runs(out, pgg("baseline", "baseline", "C3"), "contribution_change", c3);
    for (cell, level, changes) in cells {
        runs(out, pgg(cell, level, "C0"), "contribution_change", changes);
    }
}

/// Cells where the decline keeps its sign at both levels (three runs each: a cell enters S with
/// three runs or more).
const STABLE_CELLS: [(&str, &str, &[f64]); 3] = [
    ("rep-1", "representation", &[-0.2, -0.1, -0.15]),
    ("rep-2", "representation", &[-0.1, -0.05, -0.1]),
    ("des-1", "design", &[-0.15, -0.1, -0.1]),
];
const C3_KEPT: [f64; 3] = [-0.1, -0.2, -0.15];

// ---- Tier 0 and its reasons ----

#[test]
fn tier_0_without_runs_names_the_missing_arm() {
    let v = grade(&claim("pgg-decline"), &[]);
    assert_eq!((v.tier, v.tier_name.as_str()), (0, "not exploratory"));
    assert_eq!(unmet(&v), "no model runs of public-goods / baseline in the store");
    assert!(v.evidence.is_empty() && v.classical.is_none());
}

#[test]
fn tier_0_when_the_metric_has_no_runs_says_it_is_absent() {
    // Runs of the arm exist, but none records the new metric.
    let mut out = Vec::new();
    runs(&mut out, Place::base("m", "f", "public-goods", "baseline"), "contribution_r1", &[0.5; 3]);
    for id in ["pgg-round10-human", "cc-slope"] {
        let v = grade(&claim(id), &out);
        assert_eq!(v.tier, 0, "{id}");
        let metric = claim(id).metric.clone();
        assert_eq!(unmet(&v), format!("absent: no model run of public-goods / baseline records `{metric}`"));
    }
    let v = grade(&claim("money-request-distance"), &out);
    assert_eq!(unmet(&v), "no model runs of money-request / baseline in the store");
}

#[test]
fn tier_0_when_the_claim_holds_at_baseline_in_no_model() {
    let mut out = Vec::new();
    // Median change -0.05: declining, but not by the margin of 0.10.
    runs(&mut out, Place::base("m", "f", "public-goods", "baseline"), "contribution_change", &[0.0, -0.05, -0.08]);
    let v = grade(&claim("pgg-decline"), &out);
    assert_eq!(v.tier, 0);
    assert_eq!(unmet(&v), "holds at baseline in no model");
    assert_eq!(
        v.evidence,
        ["m: does not hold at baseline (median run-level effect -0.050 against a margin of 0.100, 3 runs)"]
    );
}

#[test]
fn tier_0_when_every_baseline_rests_on_fewer_than_three_runs() {
    let mut out = Vec::new();
    runs(&mut out, Place::base("m", "f", "bargaining", "ultimatum"), "offer", &[0.4, 0.4]);
    let v = grade(&claim("ultimatum-offer"), &out);
    assert_eq!((v.tier, unmet(&v)), (0, "not tested: too few baseline runs"));
    assert_eq!(v.evidence, ["m: absent at baseline (2 runs < 3)"]);
}

#[test]
fn tier_0_of_an_arm_contrast_significant_against_the_human_direction() {
    let mut out = Vec::new();
    let pgg = |arm| Place::base("m", "fam-a", "public-goods", arm);
    runs(&mut out, pgg("baseline"), "contribution_last", &[0.60, 0.62, 0.64, 0.66, 0.68]);
    runs(&mut out, pgg("punishment"), "contribution_last", &[0.30, 0.32, 0.34, 0.36, 0.38]);
    let v = grade(&claim("punishment-raises"), &out);
    assert_eq!(v.tier, 0);
    assert_eq!(unmet(&v), "the contrast is significant in the human direction (after Holm) in no model");
    // Complete separation of 5 against 5: exact p = 2 / C(10, 5) = 0.0079, one test in the family.
    assert_eq!(v.evidence, ["m: Δ = -0.300, Cliff's δ = -1.000, Holm p = 0.008"]);
}

// ---- The critical mass ----

/// Tipping runs of a roster: four per (fraction, how many of the four overturned), the
/// realised fraction recorded as k/24.
fn sweep(out: &mut Vec<RunOutcome>, roster: &str, family: &str, points: &[(i64, usize)]) {
    for (k, overturned) in points {
        for i in 0..4 {
            let at = Place::new(roster, family, "naming-game", "tipping", "baseline", "baseline", "C0");
            let over = if i < *overturned { 1.0 } else { 0.0 };
            let j = run(out, at, &[("convention", 1.0), ("committed_share", *k as f64 / 24.0), ("overturned", over)]);
            out[j].sweep = Some(*k as f64 / 24.0 + 0.01);
            out[j].committed = *k;
            out[j].population = 24;
        }
    }
}

#[test]
fn tier_0_of_a_critical_mass_outside_the_human_bracket() {
    let mut out = Vec::new();
    sweep(&mut out, "never", "fa", &[(3, 0), (7, 1)]);
    sweep(&mut out, "early", "fb", &[(3, 3), (7, 4)]);
    sweep(&mut out, "late", "fc", &[(3, 0), (7, 0), (10, 4)]);
    let v = grade(&claim("critical-mass"), &out);
    assert_eq!(v.tier, 0);
    assert_eq!(unmet(&v), "the critical mass falls inside the human bracket in no model");
    assert_eq!(
        v.evidence,
        [
            "early: overturned already at the smallest fraction tested, 0.125 (human 0.21-0.25)",
            "late: held at 0.292, overturned from 0.417 (human 0.21-0.25)",
            "never: never overturned at any fraction tested",
        ]
    );
}

#[test]
fn a_critical_mass_inside_the_human_bracket_reaches_tier_1_only() {
    let mut out = Vec::new();
    sweep(&mut out, "r", "fa", &[(4, 0), (5, 1), (6, 3), (7, 4)]);
    let v = grade(&claim("critical-mass"), &out);
    assert_eq!(v.tier, 1);
    assert_eq!(v.evidence[0], "r: held at 0.208, overturned from 0.250 (human 0.21-0.25): inside");
    // Tier 2 reads the naming game's canonical effect in its baseline arm, which holds no runs here.
    assert_eq!(
        unmet(&v),
        "sign stability at the representation level: the canonical effect (convention) rests on fewer than 3 baseline runs for r"
    );
}

// ---- 0 -> 1, and Tier 1's reasons for stopping ----

#[test]
fn tier_1_not_2_when_no_cell_of_a_level_was_run() {
    let mut out = Vec::new();
    decline(&mut out, "m", "fam-a", &[], &C3_KEPT);
    let v = grade(&claim("pgg-decline"), &out);
    assert_eq!((v.tier, v.tier_name.as_str()), (1, "Tier 1 exploratory"));
    assert_eq!(unmet(&v), "sign stability at the representation level: no representation-level cell run for m");
    assert_eq!(
        v.evidence[0],
        "m: holds at baseline (median run-level effect -0.250 against a margin of 0.100, 3 runs)"
    );
}

#[test]
fn tier_1_not_2_when_a_levels_cells_hold_fewer_than_three_runs() {
    // "two runs cannot support an inferential test": a two-run cell never enters S.
    let mut out = Vec::new();
    let two_runs: [(&str, &str, &[f64]); 2] =
        [("rep-1", "representation", &[-0.2, -0.2]), ("des-1", "design", &[-0.2, -0.2])];
    decline(&mut out, "m", "fam-a", &two_runs, &C3_KEPT);
    let v = grade(&claim("pgg-decline"), &out);
    assert_eq!(v.tier, 1);
    assert_eq!(unmet(&v), "sign stability at the representation level: no representation-level cell with 3 runs for m");
}

#[test]
fn tier_1_not_2_when_sign_stability_falls_below_four_fifths() {
    let mut out = Vec::new();
    let cells: [(&str, &str, &[f64]); 4] = [
        ("rep-1", "representation", &[-0.2, -0.2, -0.2]),
        ("rep-2", "representation", &[0.1, 0.2, 0.1]),
        ("rep-3", "representation", &[0.1, 0.0, 0.0]),
        ("des-1", "design", &[-0.1, -0.1, -0.1]),
    ];
    decline(&mut out, "m", "fam-a", &cells, &C3_KEPT);
    let v = grade(&claim("pgg-decline"), &out);
    assert_eq!(v.tier, 1);
    // S over the baseline and three cells: the baseline and rep-1 keep the sign.
    assert_eq!(unmet(&v), "sign stability 0.50 < 0.8 at the representation level for m");
    assert_eq!(
        v.evidence,
        [
            "m: holds at baseline (median run-level effect -0.250 against a margin of 0.100, 3 runs)",
            "m: contributions decline between the first and last round keeps its sign in 0.50 of the baseline and 3 representation-level cells",
            "m: contributions decline between the first and last round keeps its sign in 1.00 of the baseline and 1 design-level cells",
        ]
    );
}

#[test]
fn s_counts_the_baseline_so_four_of_five_is_stable() {
    // The baseline and three of four cells keep the sign: 4/5 = 0.8, stable; without the
    // baseline it would be 3/4.
    let mut out = Vec::new();
    let cells: [(&str, &str, &[f64]); 5] = [
        ("rep-1", "representation", &[-0.2, -0.2, -0.2]),
        ("rep-2", "representation", &[-0.2, -0.2, -0.2]),
        ("rep-3", "representation", &[-0.2, -0.2, -0.2]),
        ("rep-4", "representation", &[0.2, 0.2, 0.2]),
        ("des-1", "design", &[-0.1, -0.1, -0.1]),
    ];
    for (m, f) in MODELS {
        decline(&mut out, m, f, &cells, &C3_KEPT);
    }
    let v = grade(&claim("pgg-decline"), &out);
    assert_eq!(v.tier, 2, "{v:?}");
    assert!(
        v.evidence.iter().any(|e| e.starts_with("m1: ")
            && e.ends_with("keeps its sign in 0.80 of the baseline and 4 representation-level cells")),
        "{:?}",
        v.evidence
    );
}

#[test]
fn tier_1_not_2_when_reversed_under_divergent_payoffs() {
    let mut out = Vec::new();
    decline(&mut out, "m", "fam-a", &STABLE_CELLS, &[0.2, 0.3, 0.25]);
    let v = grade(&claim("pgg-decline"), &out);
    assert_eq!(v.tier, 1);
    assert_eq!(unmet(&v), "reversed under C3 for m");
    assert_eq!(
        v.evidence.last().map(String::as_str),
        Some("m: contributions decline between the first and last round reversed under divergent payoffs (C3): 0.250")
    );
}

#[test]
fn tier_1_not_2_when_never_run_under_divergent_payoffs() {
    let mut out = Vec::new();
    decline(&mut out, "m", "fam-a", &STABLE_CELLS, &[]);
    let v = grade(&claim("pgg-decline"), &out);
    assert_eq!((v.tier, unmet(&v)), (1, "not reversed under C3: not tested for m"));
}

#[test]
fn tier_1_not_2_when_robust_in_fewer_than_three_families() {
    let mut out = Vec::new();
    decline(&mut out, "m1", "fam-a", &STABLE_CELLS, &C3_KEPT);
    decline(&mut out, "m2", "fam-a", &STABLE_CELLS, &C3_KEPT);
    let v = grade(&claim("pgg-decline"), &out);
    assert_eq!(v.tier, 1);
    assert_eq!(unmet(&v), "robust in 1 model family (fam-a); three are needed");
    decline(&mut out, "m3", "fam-b", &STABLE_CELLS, &C3_KEPT);
    decline(&mut out, "m4", "fam-c", &[("rep-1", "representation", &[0.2, 0.2, 0.2])], &C3_KEPT);
    let v = grade(&claim("pgg-decline"), &out);
    assert_eq!(v.tier, 1);
    assert_eq!(
        unmet(&v),
        "robust in 2 model families (fam-a, fam-b); three are needed; first gap: sign stability 0.50 < 0.8 at the representation level for m4"
    );
}

#[test]
fn classical_rosters_are_graded_apart_and_never_count_as_a_model_family() {
    let mut out = Vec::new();
    decline(&mut out, "m1", "fam-a", &STABLE_CELLS, &C3_KEPT);
    decline(&mut out, "m2", "fam-b", &STABLE_CELLS, &C3_KEPT);
    decline(&mut out, "cc", "classical", &STABLE_CELLS, &C3_KEPT);
    let v = grade(&claim("pgg-decline"), &out);
    assert_eq!(v.tier, 1);
    assert_eq!(unmet(&v), "robust in 2 model families (fam-a, fam-b); three are needed");
    assert!(v.evidence.iter().all(|e| !e.starts_with("cc:")), "{:?}", v.evidence);
    // Graded in a family of its own, where one family suffices.
    let c = v.classical.expect("the classical grade");
    assert_eq!((c.tier, c.tier_name.as_str()), (2, "Tier 2 robust"));
    assert!(c.evidence[0].starts_with("cc: holds at baseline"));
    // A store of classical rosters alone: the models' grade says there are none.
    let only: Vec<RunOutcome> = out.into_iter().filter(|r| r.family == "classical").collect();
    let v = grade(&claim("pgg-decline"), &only);
    assert_eq!((v.tier, unmet(&v)), (0, "no model runs of public-goods / baseline in the store"));
    assert_eq!(v.classical.map(|c| c.tier), Some(2));
}

#[test]
fn a_significant_arm_contrast_in_the_human_direction_reaches_tier_1_only() {
    let mut out = Vec::new();
    let pgg = |arm| Place::base("m", "fam-a", "public-goods", arm);
    runs(&mut out, pgg("baseline"), "contribution_last", &[0.30, 0.32, 0.34, 0.36, 0.38]);
    runs(&mut out, pgg("punishment"), "contribution_last", &[0.60, 0.62, 0.64, 0.66, 0.68]);
    let v = grade(&claim("punishment-raises"), &out);
    assert_eq!(v.tier, 1);
    assert_eq!(v.evidence[0], "m: Δ = 0.300, Cliff's δ = 1.000, Holm p = 0.008");
    assert_eq!(
        unmet(&v),
        "sign stability at the representation level: the canonical effect (contribution_change) rests on fewer than 3 baseline runs for m"
    );
}

/// Naming-game runs of a model: baseline, one cell per level and C3, three runs each, with
/// these conventions (1 formed, 0 not).
fn naming(out: &mut Vec<RunOutcome>, m: &str, f: &str, base: &[f64], cells: &[f64], c3: &[f64]) {
    let ng = |cell, level, variant| Place::new(m, f, "naming-game", "baseline", cell, level, variant);
    runs(out, ng("baseline", "baseline", "C0"), "convention", base);
    runs(out, ng("rep-1", "representation", "C0"), "convention", cells);
    runs(out, ng("des-1", "design", "C0"), "convention", cells);
    runs(out, ng("baseline", "baseline", "C3"), "convention", c3);
}

#[test]
fn a_majority_claim_is_reversed_under_c3_when_most_runs_fail() {
    let mut out = Vec::new();
    naming(&mut out, "m", "fam-a", &[1.0, 1.0, 0.0], &[1.0, 1.0, 1.0], &[0.0, 1.0, 0.0]);
    let v = grade(&claim("convention-forms"), &out);
    assert_eq!(v.tier, 1);
    assert_eq!(unmet(&v), "reversed under C3 for m");
}

#[test]
fn a_convention_formed_in_every_run_matches_its_anchor_and_stops_at_the_audit() {
    // The paper's one Tier 2 finding: robust in three families, and what it lacks for
    // Tier 3 is the mechanism, not a value.
    let mut out = Vec::new();
    for (m, f) in MODELS {
        naming(&mut out, m, f, &[1.0, 1.0, 1.0], &[1.0, 1.0, 1.0], &[1.0, 1.0, 1.0]);
    }
    let v = grade(&claim("convention-forms"), &out);
    assert_eq!(v.tier, 2);
    assert_eq!(
        unmet(&v),
        "the mechanism's dynamics: not tested: no classical run of naming-game / baseline records `convention_time` \
         in the store to compare the pace with"
    );
    // Formed in most but not all baseline runs: robust, but not the anchor's "always".
    let mut out = Vec::new();
    for (m, f) in MODELS {
        naming(&mut out, m, f, &[1.0, 1.0, 0.0], &[1.0, 1.0, 1.0], &[1.0, 1.0, 1.0]);
    }
    let v = grade(&claim("convention-forms"), &out);
    assert_eq!(v.tier, 2);
    assert!(unmet(&v).starts_with("equivalence with the anchor in a robust model"), "{}", unmet(&v));
    assert!(v.evidence.iter().any(|e| e.contains("in 2 of 3 baseline runs; the anchor: always")), "{:?}", v.evidence);
}

#[test]
fn presentation_and_probe_cells_never_enter_tier_2() {
    // Every representation-level cell keeps the sign; presentation and probe cells that
    // reverse it are not part of the perturbation library.
    let mut out = Vec::new();
    for (m, f) in MODELS {
        decline(&mut out, m, f, &STABLE_CELLS, &C3_KEPT);
        let pgg = |cell, level| Place::new(m, f, "public-goods", "baseline", cell, level, "C0");
        runs(&mut out, pgg("layout-inline", "presentation"), "contribution_change", &[0.3, 0.3, 0.3]);
        runs(&mut out, pgg("recognition-probe", "contamination"), "contribution_change", &[0.3, 0.3, 0.3]);
    }
    let v = grade(&claim("pgg-decline"), &out);
    assert_eq!(v.tier, 2, "{v:?}");
}

// ---- The canonical effect: level claims are graded by their own test, then by the effect ----

/// Public-goods runs of a model: baseline round-1 contributions `r1`, and the run-level
/// change in every baseline, cell and C3 run as given.
fn contributions(out: &mut Vec<RunOutcome>, m: &str, f: &str, r1: &[f64], change: &[f64]) {
    let pgg = |cell, level, variant| Place::new(m, f, "public-goods", "baseline", cell, level, variant);
    for (x, c) in r1.iter().zip(change.iter().cycle()) {
        run(out, pgg("baseline", "baseline", "C0"), &[("contribution_r1", *x), ("contribution_change", *c)]);
    }
    for (cell, level) in [("rep-1", "representation"), ("des-1", "design")] {
        runs(out, pgg(cell, level, "C0"), "contribution_change", &change[..3]);
    }
    runs(out, pgg("baseline", "baseline", "C3"), "contribution_change", &change[..3]);
}

const HALF: [f64; 6] = [0.49, 0.50, 0.51, 0.50, 0.49, 0.51];

#[test]
fn a_level_claim_is_not_graded_above_the_game_theoretic_prediction() {
    // Models that cooperate in every round, or offer a fifth of the pie, are far from the
    // human corridor and the meta-analytic mean: no level claim reaches Tier 1.
    let mut out = Vec::new();
    for (m, f) in MODELS {
        let pd = |cell, level, variant| Place::new(m, f, "prisoners-dilemma", "baseline", cell, level, variant);
        let ug = |cell, level, variant| Place::new(m, f, "bargaining", "ultimatum", cell, level, variant);
        for (cell, level, variant) in [
            ("baseline", "baseline", "C0"),
            ("rep-1", "representation", "C0"),
            ("des-1", "design", "C0"),
            ("baseline", "baseline", "C3"),
        ] {
            runs(&mut out, pd(cell, level, variant), "cooperation", &[1.0; 30]);
            runs(&mut out, ug(cell, level, variant), "offer", &[0.2; 6]);
            runs(&mut out, ug(cell, level, variant), "rejection", &[0.0; 6]);
        }
    }
    let v = grade(&claim("pd-corridor"), &out);
    assert_eq!((v.tier, unmet(&v)), (0, "holds at baseline in no model"));
    assert_eq!(v.evidence[0], "m1: does not hold at baseline (mean 1.000 against the corridor 0.2-0.5, 30 runs)");
    for id in ["ultimatum-offer", "ultimatum-rejection"] {
        let v = grade(&claim(id), &out);
        assert_eq!((v.tier, unmet(&v)), (0, "holds at baseline in no model"), "{id}: {v:?}");
    }
}

#[test]
fn a_level_claim_that_holds_stops_at_tier_1_where_its_environment_does_not_keep_the_decline() {
    // First-round contributions at half the endowment, but contributions rise over the rounds
    // (or stay flat): Tier 1, and the decline's sign stability is what fails.
    let mut out = Vec::new();
    for (m, f) in MODELS {
        contributions(&mut out, m, f, &HALF, &[0.1, 0.2, 0.15]);
    }
    let v = grade(&claim("pgg-round1-human"), &out);
    assert_eq!(v.tier, 1, "{v:?}");
    assert!(v.evidence[0].starts_with("m1: holds at baseline (contribution_r1 equivalent"), "{:?}", v.evidence);
    assert_eq!(unmet(&v), "sign stability 0.00 < 0.8 at the representation level for m1");
    let mut out = Vec::new();
    for (m, f) in MODELS {
        contributions(&mut out, m, f, &HALF, &[0.0, 0.0, 0.0]);
    }
    let v = grade(&claim("pgg-round1-human"), &out);
    assert_eq!(unmet(&v), "sign stability 0.00 < 0.8 at the representation level for m1", "no change keeps no sign");
}

#[test]
fn a_level_claim_reaches_tier_2_where_it_holds_and_the_canonical_effect_is_stable() {
    let mut out = Vec::new();
    for (m, f) in MODELS {
        contributions(&mut out, m, f, &HALF, &[-0.3, -0.2, -0.25]);
    }
    let v = grade(&claim("pgg-round1-human"), &out);
    assert_eq!((v.tier, unmet(&v)), (2, AUDIT_MISSING));
    assert!(v.evidence.iter().any(|e| e.starts_with("m1: matches the anchor: contribution_r1 equivalent")));
    // Not equivalent at baseline: not even Tier 1, however stable the decline.
    let mut out = Vec::new();
    for (m, f) in MODELS {
        contributions(&mut out, m, f, &[0.9; 6], &[-0.3, -0.2, -0.25]);
    }
    assert_eq!(grade(&claim("pgg-round1-human"), &out).tier, 0);
}

/// A one-shot level claim (`ultimatum-offer`, TOST at 0.40 ± 0.05): baseline offers, and
/// two-run cells at both levels and under C3, as the paper's battery holds.
fn offers(out: &mut Vec<RunOutcome>, model: &str, family: &str, base: &[f64], cell: &[f64]) {
    let ug = |cell, level, variant| Place::new(model, family, "bargaining", "ultimatum", cell, level, variant);
    runs(out, ug("baseline", "baseline", "C0"), "offer", base);
    runs(out, ug("baseline", "baseline", "C3"), "offer", &[0.4, 0.4]);
    runs(out, ug("persona-table", "representation", "C0"), "offer", cell);
    runs(out, ug("step-by-step", "design", "C0"), "offer", cell);
}

const NEAR: [f64; 6] = [0.39, 0.40, 0.41, 0.40, 0.39, 0.41];

#[test]
fn the_one_shot_battery_stops_at_tier_1_as_descriptive() {
    let mut out = Vec::new();
    for (m, f) in MODELS {
        offers(&mut out, m, f, &NEAR, &[0.4, 0.4]);
    }
    let v = grade(&claim("ultimatum-offer"), &out);
    assert_eq!((v.tier, unmet(&v)), (1, "two runs per cell: descriptive only"));
    assert!(v.evidence[0].starts_with("m1: holds at baseline (offer equivalent (90 % CI ["), "{:?}", v.evidence);
    // With cells of three runs the battery is still without a canonical effect.
    for (m, f) in MODELS {
        let ug = |cell, level| Place::new(m, f, "bargaining", "ultimatum", cell, level, "C0");
        runs(&mut out, ug("persona-table", "representation"), "offer", &[0.4]);
    }
    let v = grade(&claim("ultimatum-offer"), &out);
    assert_eq!(v.tier, 1);
    assert!(unmet(&v).starts_with("bargaining has no canonical human effect"), "{}", unmet(&v));
}

#[test]
fn tier_2_not_3_for_a_direction_claim() {
    let mut out = Vec::new();
    for (m, f) in MODELS {
        decline(&mut out, m, f, &STABLE_CELLS, &C3_KEPT);
    }
    let v = grade(&claim("pgg-decline"), &out);
    assert_eq!((v.tier, v.tier_name.as_str()), (2, "Tier 2 robust"));
    assert_eq!(
        unmet(&v),
        "equivalence with the anchor: not tested: no human value on record (pgg-decline records a direction only; a \
         lab's own people, `--human-anchors`, or a claim's `equivalent` anchor would give one)"
    );
    assert!(
        v.evidence.iter().any(|e| e.starts_with("m3: ")
            && e.ends_with("keeps its sign in 1.00 of the baseline and 2 representation-level cells")),
        "{:?}",
        v.evidence
    );
}

#[test]
fn tier_0_when_the_anchor_value_is_not_on_record() {
    // Round 10 has no human value on record: its own test cannot be made at baseline.
    let mut out = Vec::new();
    runs(&mut out, Place::base("m", "f", "public-goods", "baseline"), "contribution_r10", &[0.3, 0.3, 0.3]);
    let v = grade(&claim("pgg-round10-human"), &out);
    assert_eq!((v.tier, unmet(&v)), (0, "not tested: the anchor value is not on record (pgg-round10)"));
    assert_eq!(v.evidence, ["m: not tested at baseline (the anchor value is not on record (pgg-round10))"]);
}

#[test]
fn a_distance_claim_holds_by_its_bootstrap_upper_end_and_stops_at_tier_1() {
    let mut out = Vec::new();
    let shares = [0.04, 0.00, 0.03, 0.06, 0.01, 0.06, 0.32, 0.30, 0.12, 0.06];
    let names: Vec<String> = (11..=20).map(|k| format!("choice_{k}")).collect();
    let mut human: Vec<(&str, f64)> = names.iter().map(String::as_str).zip(shares).collect();
    human.push(("request_below_top", 0.94));
    for (m, f) in MODELS {
        let mr = |cell, level, variant| Place::new(m, f, "money-request", "baseline", cell, level, variant);
        for _ in 0..3 {
            run(&mut out, mr("baseline", "baseline", "C0"), &human);
        }
        runs(&mut out, mr("rep-1", "representation", "C0"), "request_below_top", &[0.9, 0.8]);
        runs(&mut out, mr("des-1", "design", "C0"), "request_below_top", &[0.5, 0.6]);
    }
    let v = grade(&claim("money-request-distance"), &out);
    assert_eq!((v.tier, unmet(&v)), (1, "two runs per cell: descriptive only"), "{v:?}");
    assert!(v.evidence.iter().any(|e| e.starts_with("m1: holds at baseline (distance ")), "{:?}", v.evidence);
}

/// 2 → 3, and Tier 3's reasons for stopping.
mod tier3;

// ---- Against the lab's own human runs ----

fn human(claim: &str, metric: &str, margin: f64, values: &[f64]) -> crate::human_anchors::HumanAnchors {
    crate::human_anchors::lab_anchor(claim, ("", ""), metric, margin, values)
}

#[test]
fn human_anchors_from_the_store_replace_the_published_anchor_of_their_claim_only() {
    // Offers of a quarter of the pie: not the meta-analytic mean (0.40 ± 0.05) ...
    let mut out = Vec::new();
    runs(&mut out, Place::base("m", "f", "bargaining", "ultimatum"), "offer", &[0.24, 0.25, 0.26, 0.25]);
    let published = grade(&claim("ultimatum-offer"), &out);
    assert_eq!((published.tier, unmet(&published)), (0, "holds at baseline in no model"));
    // ... but equivalent to this lab's participants, who offered a quarter too.
    let lab = human("ultimatum-offer", "offer", 0.05, &[0.23, 0.27, 0.25, 0.24, 0.26, 0.25]);
    let v = grade_against(&claim("ultimatum-offer"), &out, None, Some(&lab));
    assert_eq!(v.tier, 1, "{v:?}");
    assert!(
        v.evidence
            .iter()
            .any(|e| e.contains("offer equivalent to the lab's human runs") && e.contains("6 human runs of lab")),
        "{:?}",
        v.evidence
    );
    // A lab whose participants offered 0.40 grades the same model not equivalent.
    let fair = human("ultimatum-offer", "offer", 0.05, &[0.38, 0.41, 0.40, 0.42, 0.39]);
    let v = grade_against(&claim("ultimatum-offer"), &out, None, Some(&fair));
    assert_eq!((v.tier, unmet(&v)), (0, "holds at baseline in no model"));
    assert!(v.evidence.iter().any(|e| e.contains("offer not equivalent to the lab's human runs")), "{:?}", v.evidence);
    // Another claim keeps its published anchor.
    runs(&mut out, Place::base("m", "f", "public-goods", "baseline"), "contribution_r1", &[0.5, 0.52, 0.48]);
    let v = grade_against(&claim("pgg-round1-human"), &out, None, Some(&lab));
    assert!(v.evidence.iter().all(|e| !e.contains("lab's human runs")), "{:?}", v.evidence);
}

#[test]
fn a_claim_without_a_published_value_is_tested_against_the_labs_runs() {
    let mut out = Vec::new();
    runs(&mut out, Place::base("m", "f", "public-goods", "baseline"), "contribution_r10", &[0.2, 0.22, 0.18]);
    let v = grade(&claim("pgg-round10-human"), &out);
    assert_eq!(v.tier, 0);
    assert!(v.evidence.iter().any(|e| e.contains("not on record")), "{:?}", v.evidence);
    let lab = human("pgg-round10-human", "contribution_r10", 0.10, &[0.19, 0.21, 0.2, 0.23, 0.17]);
    let v = grade_against(&claim("pgg-round10-human"), &out, None, Some(&lab));
    assert_eq!(v.tier, 1, "{v:?}");
    // Too few human runs: no test, and the verdict says so.
    let thin = human("pgg-round10-human", "contribution_r10", 0.10, &[0.19, 0.21]);
    let v = grade_against(&claim("pgg-round10-human"), &out, None, Some(&thin));
    assert_eq!(v.tier, 0);
    assert!(
        v.evidence.iter().any(|e| e.contains("2 human runs of `contribution_r10` (fewer than 3)")),
        "{:?}",
        v.evidence
    );
}

/// A direction claim climbs to Tier 3's equivalence where a human value is on record: with the
/// lab's own people it is tested by equivalence (and the verdict says that is Tier 1's own
/// test); a named `equivalent` anchor whose value is not on record says "not tested"; a value
/// far from the models' stops it.
#[test]
fn a_direction_claim_climbs_through_equivalence_with_a_human_value_on_record() {
    let mut out = Vec::new();
    for (m, f) in MODELS {
        decline(&mut out, m, f, &STABLE_CELLS, &C3_KEPT);
    }
    let lab = human("pgg-decline", "contribution_change", 0.10, &[-0.28, -0.22, -0.25, -0.26, -0.24]);
    let v = grade_against(&claim("pgg-decline"), &out, None, Some(&lab));
    assert_eq!((v.tier, unmet(&v)), (2, AUDIT_MISSING), "{v:?}");
    assert!(
        v.evidence.iter().any(|e| e.starts_with("m1: matches the anchor:") && e.contains("Tier 1's own test")),
        "{:?}",
        v.evidence
    );
    // The other way: the lab's people declined far more; no model is equivalent.
    let steep = human("pgg-decline", "contribution_change", 0.10, &[-0.71, -0.69, -0.70, -0.72, -0.68]);
    assert_eq!(grade_against(&claim("pgg-decline"), &out, None, Some(&steep)).tier, 0);
    // A named size anchor whose value is not on record is not tested, and says so.
    let with_size = |anchor: &str| {
        let mut c = claim("pgg-decline");
        let ClaimKind::Direction { equivalent, .. } = &mut c.kind else { panic!("direction") };
        *equivalent = Some(anchor.into());
        c
    };
    let v = grade(&with_size("pgg-round10"), &out);
    assert_eq!(
        (v.tier, unmet(&v)),
        (2, "equivalence with the anchor: not tested: no human value on record (pgg-round10)")
    );
    // A named size anchor with a value tests against it (here far from the decline: no match).
    let v = grade(&with_size("pgg-round1"), &out);
    assert_eq!(v.tier, 2);
    assert!(unmet(&v).starts_with("equivalence with the anchor in a robust model: none of"), "{}", unmet(&v));
}

/// Tier 3's equivalence of a critical mass reads the whole interval the sweep pins it to, not the
/// point Tier 1 read.
#[test]
fn a_critical_mass_matches_only_when_its_whole_interval_is_inside_the_bracket() {
    use crate::tipping::CriticalMassRow;
    let row = |f: Option<f64>, c: Option<f64>| CriticalMassRow {
        scope: "model".into(),
        name: "m".into(),
        family: "f".into(),
        block: "b".into(),
        arm: "tipping".into(),
        runs: 30,
        no_convention: 0,
        largest_failure: f,
        critical: c,
        human_low: 0.21,
        human_high: 0.25,
        inside: c.map(|c| (0.21..=0.25).contains(&c)),
        status: "estimated".into(),
    };
    let c = claim("critical-mass");
    assert!(matches!(critical_mass_interval(&c, "m", &[row(Some(0.2083), Some(0.25))]), Match::No(_)));
    assert!(matches!(critical_mass_interval(&c, "m", &[row(Some(0.2125), Some(0.25))]), Match::Yes(_)));
    assert!(matches!(critical_mass_interval(&c, "m", &[row(None, Some(0.25))]), Match::No(_)));
    assert!(matches!(critical_mass_interval(&c, "m", &[]), Match::Absent(_)));
}

/// Convention formation climbs through the mechanism the instrument paper audits: the
/// convention still forms under the shuffled-pool control, and at the pace of the classical
/// dynamics. The paper's own figures — negotiation two to twenty-eight times faster than the
/// classical dynamics — stop it at Tier 2 for the paper's reason.
#[test]
fn convention_formation_climbs_through_its_dynamics_and_the_papers_pace_stops_it() {
    let build = |model_time: f64, shuffled: &[f64], classical: bool| {
        let mut out = Vec::new();
        for (m, f) in MODELS {
            naming(&mut out, m, f, &[1.0, 1.0, 1.0], &[1.0, 1.0, 1.0], &[1.0, 1.0, 1.0]);
            for t in [model_time * 0.9, model_time, model_time * 1.1] {
                run(
                    &mut out,
                    Place::new(m, f, "naming-game", "baseline", "baseline", "baseline", "C0"),
                    &[("convention_time", t)],
                );
            }
            runs(
                &mut out,
                Place::new(m, f, "naming-game", "shuffled-pool", "baseline", "baseline", "C0"),
                "convention",
                shuffled,
            );
        }
        if classical {
            for t in [900.0, 1000.0, 1100.0] {
                run(
                    &mut out,
                    Place::new(
                        "classical-ng",
                        crate::common::CLASSICAL,
                        "naming-game",
                        "baseline",
                        "baseline",
                        "baseline",
                        "C0",
                    ),
                    &[("convention", 1.0), ("convention_time", t)],
                );
            }
        }
        out
    };
    // The paper's pace: ten times faster than the classical dynamics.
    let v = grade(&claim("convention-forms"), &build(100.0, &[1.0, 1.0, 1.0], true));
    assert_eq!(v.tier, 2, "{v:?}");
    assert!(
        unmet(&v).contains("10.00 times faster than the classical dynamics, outside a factor of 2"),
        "{}",
        unmet(&v)
    );
    // The other way: negotiation at the classical pace, and the control forms a convention.
    let v = grade(&claim("convention-forms"), &build(700.0, &[1.0, 1.0, 0.0], true));
    assert_eq!((v.tier, v.first_unmet.as_deref()), (3, None), "{v:?}");
    // The shuffled-pool control fails: the convention rested on the name listed first.
    let v = grade(&claim("convention-forms"), &build(700.0, &[0.0, 1.0, 0.0], true));
    assert_eq!(v.tier, 2);
    assert!(unmet(&v).contains("holds in 1 of 3 runs of the control arm (shuffled-pool)"), "{}", unmet(&v));
    // The classical rosters are the reference, never graded against themselves.
    assert!(v.classical.is_none() || v.classical.as_ref().is_some_and(|c| c.tier < 3));
}
