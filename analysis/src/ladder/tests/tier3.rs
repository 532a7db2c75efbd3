//! Grading from Tier 2 to Tier 3 with the audit's evidence, and Tier 3's reasons for stopping.

use super::*;
use crate::evidence::{Status, Validation};
use crate::mechanism::{AuditEvidence, CodedResponse, CoderKey, DependencyEstimate, InterventionEstimate};

fn key() -> CoderKey {
    CoderKey { coder: "lexicon".into(), codebook: "default".into(), version: 1, sha256: "abc".into() }
}

/// First-round public-goods contributions carried by m1, m2, m3 (equivalent at baseline, and
/// the decline stable across the cells and under C3).
fn carried() -> Vec<RunOutcome> {
    let mut out = Vec::new();
    for (m, f) in MODELS {
        contributions(&mut out, m, f, &HALF, &[-0.3, -0.2, -0.25]);
    }
    out
}

/// Audit evidence for every model of [`MODELS`]: `of` coded contributor responses in public
/// goods, `stating` of them stating positive reciprocity; the coder's κ on each model's text;
/// the dependency of `contribution_share` on it (coef, low, high), or none.
fn audit(stating: usize, of: usize, kappa: f64, dep: Option<(f64, f64, f64)>) -> AuditEvidence {
    let mut ev = AuditEvidence::default();
    let mut gate = Vec::new();
    for (m, _) in MODELS {
        for i in 0..of {
            ev.responses.push(CodedResponse {
                model: m.into(),
                environment: "public-goods".into(),
                arm: "baseline".into(),
                cell: "baseline".into(),
                role: Some("contributor".into()),
                key: key(),
                stated: if i < stating { vec!["positive_reciprocity".into()] } else { vec!["self_interest".into()] },
            });
        }
        let ok = kappa >= 0.8;
        gate.push(Validation {
            model: m.into(),
            coder: "lexicon".into(),
            status: if ok { Status::Validated } else { Status::Refused },
            kappa: Some(kappa),
            n: 240,
            responses: 100,
            min_kappa: 0.8,
            recall: vec![
                ("positive_reciprocity".into(), 60, Some(0.9)),
                ("altruism".into(), 30, Some(0.9)),
                ("understanding".into(), 150, Some(1.0)),
            ],
            coder_errors: (0, 100),
            reason: format!("κ = {kappa:.3} {} 0.8 (240 sentences, 100 responses)", if ok { "≥" } else { "<" }),
        });
        if let Some((coef, lo, hi)) = dep {
            ev.dependency.push(DependencyEstimate {
                key: key(),
                model: m.into(),
                environment: "public-goods".into(),
                arm: Some("baseline".into()),
                cell: Some("baseline".into()),
                role: "contributor".into(),
                indicator: "contribution_share".into(),
                value: "positive_reciprocity".into(),
                status: "estimated".into(),
                reason: String::new(),
                coef: Some(coef),
                ci_low: Some(lo),
                ci_high: Some(hi),
                p: Some(0.001),
                n_prompts: 12,
            });
            // A faithful model: the intervention moves the indicator as the dependency says.
            ev.intervention.push(intervention(m, coef, lo, hi));
        }
    }
    ev.gates.insert(key(), gate);
    ev
}

/// An `audit_faithfulness` estimate of positive reciprocity on the contribution share.
/// Its standard error is the interval's half-width over 2.09 (t at 97.5 % on 19 df: 20 states).
fn intervention(model: &str, tau: f64, lo: f64, hi: f64) -> InterventionEstimate {
    InterventionEstimate {
        sample_seed: "5".into(),
        key: key(),
        model: model.into(),
        environment: "public-goods".into(),
        arm: Some("baseline".into()),
        cell: Some("baseline".into()),
        design: Some("source".into()),
        role: "contributor".into(),
        indicator: "contribution_share".into(),
        value: "positive_reciprocity".into(),
        status: "estimated".into(),
        tau: Some(tau),
        se: Some((hi - lo) / 2.0 / 2.093),
        ci_low: Some(lo),
        ci_high: Some(hi),
        n_states: 20,
    }
}

const HEAD: &str = "transcript audit consistent with the human mechanism";

#[test]
fn tier_3_when_a_validated_coder_finds_the_value_stated_and_the_action_depends_on_it() {
    let ev = audit(10, 20, 0.9, Some((0.3, 0.1, 0.5)));
    let v = grade_with(&claim("pgg-round1-human"), &carried(), Some(&ev));
    assert_eq!((v.tier, v.tier_name.as_str(), v.first_unmet.as_deref()), (3, "Tier 3 transferable", None));
    assert_eq!(
        v.evidence.iter().find(|e| e.starts_with("m1: mechanism shown")).map(String::as_str),
        Some(
            "m1: mechanism shown: lexicon (validated: κ = 0.900 ≥ 0.8 (240 sentences, 100 responses)) finds positive_reciprocity in 10 of 20 \
             coded responses in the baseline cell (Wilson 95 % [0.299, 0.701]); altruism in 0 of 20 coded \
             responses in the baseline cell (Wilson 95 % [0.000, 0.161]); dependency of contribution_share on positive_reciprocity 0.300 (95 % CI \
             [0.100, 0.500], CR1 by prompt, 12 prompts); intervention effect τ of positive_reciprocity on \
             contribution_share 0.300 (95 % CI [0.100, 0.500], seed 5, 20 states), agreeing with φ in size; Holm-adjusted p 0.016 ≤ 0.025 \
             over 6 tries in the claim's family"
        )
    );
}

#[test]
fn tier_2_not_3_when_the_coders_recall_of_the_value_rests_on_too_few_sentences() {
    // The gate's per-code floor: a value the mechanism relies on needs 30 human-referenced
    // sentences of the model's text, so that the recall reported beside the effect is measured.
    let mut ev = audit(10, 20, 0.9, Some((0.3, 0.1, 0.5)));
    for gate in ev.gates.values_mut() {
        for v in gate.iter_mut() {
            v.recall[0].1 = 12;
        }
    }
    let v = grade_with(&claim("pgg-round1-human"), &carried(), Some(&ev));
    assert_eq!(v.tier, 2);
    let unmet = v.first_unmet.as_deref().unwrap_or_default();
    assert!(
        unmet.contains(
            "lexicon's recall of the mechanism's values on m1's text is not measured: human-referenced sentences: positive_reciprocity has 12 (fewer than 30)"
        ),
        "{unmet}"
    );
}

#[test]
fn tier_2_not_3_when_one_hidden_cause_sets_both_the_statement_and_the_action() {
    // Model D of the SUVA audit: the dependency is there, but inserting or deleting the value
    // in the model's own reasoning does not move the action.
    let mut ev = audit(10, 20, 0.9, Some((0.3, 0.1, 0.5)));
    for t in &mut ev.intervention {
        (t.tau, t.ci_low, t.ci_high) = (Some(0.014), Some(-0.109), Some(0.137));
    }
    let v = grade_with(&claim("pgg-round1-human"), &carried(), Some(&ev));
    assert_eq!(v.tier, 2, "{v:?}");
    assert!(
        unmet(&v).contains(
            "intervention effect τ of positive_reciprocity on contribution_share 0.014 (95 % CI [-0.109, 0.137], \
             seed 5, 20 states) does not exclude zero in the mechanism's direction (above zero)"
        ),
        "{}",
        unmet(&v)
    );
    // Without an intervention in the store the dependency is not enough either.
    ev.intervention.clear();
    let v = grade_with(&claim("pgg-round1-human"), &carried(), Some(&ev));
    assert_eq!(v.tier, 2);
    assert!(
        unmet(&v).contains(
            "no intervention on positive_reciprocity in public-goods / baseline / baseline in the store (run `agora \
             audit prefill --environment public-goods --cell baseline`)"
        ),
        "{}",
        unmet(&v)
    );
    // An intervention against the mechanism's direction fails too.
    ev.intervention = MODELS.iter().map(|(m, _)| intervention(m, -0.3, -0.5, -0.1)).collect();
    assert_eq!(grade_with(&claim("pgg-round1-human"), &carried(), Some(&ev)).tier, 2);
}

#[test]
fn tier_2_not_3_without_an_audit_in_the_store() {
    let v = grade_with(&claim("pgg-round1-human"), &carried(), None);
    assert_eq!((v.tier, unmet(&v)), (2, AUDIT_MISSING));
}

#[test]
fn tier_2_not_3_when_the_audit_holds_none_of_the_models_text() {
    let mut ev = audit(10, 20, 0.9, Some((0.3, 0.1, 0.5)));
    ev.responses.iter_mut().for_each(|r| r.arm = "punishment".into());
    let v = grade_with(&claim("pgg-round1-human"), &carried(), Some(&ev));
    assert_eq!(v.tier, 2);
    assert_eq!(unmet(&v), format!("{HEAD}: no audit in the store of m1's contributor text in public-goods / baseline"));
}

#[test]
fn tier_2_not_3_when_the_coder_is_not_validated_on_the_models_text() {
    let ev = audit(10, 20, 0.65, Some((0.3, 0.1, 0.5)));
    let v = grade_with(&claim("pgg-round1-human"), &carried(), Some(&ev));
    assert_eq!(v.tier, 2);
    assert_eq!(
        unmet(&v),
        format!(
            "{HEAD}: coder not validated for m1 (lexicon: refused: κ = 0.650 < 0.8 (240 sentences, 100 responses))"
        )
    );
    assert!(v.evidence.iter().any(|e| e.starts_with("m3: mechanism not shown: coder not validated")));
}

#[test]
fn tier_2_not_3_when_the_value_is_not_stated() {
    let ev = audit(0, 20, 0.9, None);
    let v = grade_with(&claim("pgg-round1-human"), &carried(), Some(&ev));
    assert_eq!(v.tier, 2);
    assert_eq!(
        unmet(&v),
        format!(
            "{HEAD}: m1, coder lexicon, positive_reciprocity: value not stated in a share of at least 0.05 of m1's \
             reasoning (positive_reciprocity in 0 of 20 coded responses in the baseline cell (Wilson 95 % [0.000, 0.161]); \
             altruism in 0 of 20 coded responses in the baseline cell (Wilson 95 % [0.000, 0.161]))"
        )
    );
}

#[test]
fn tier_2_not_3_when_the_dependency_is_not_estimated() {
    let ev = audit(10, 20, 0.9, None);
    let v = grade_with(&claim("pgg-round1-human"), &carried(), Some(&ev));
    assert_eq!(v.tier, 2);
    assert_eq!(
        unmet(&v),
        format!(
            "{HEAD}: m1, coder lexicon, positive_reciprocity: dependency not estimated for positive_reciprocity (no \
             contribution_share row of public-goods / baseline / baseline in audit_dependency)"
        )
    );
    let mut ev = audit(10, 20, 0.9, Some((0.3, 0.1, 0.5)));
    for d in &mut ev.dependency {
        (d.status, d.reason, d.coef, d.ci_low, d.ci_high) =
            ("not identified".into(), "does not vary within any prompt".into(), None, None, None);
    }
    let v = grade_with(&claim("pgg-round1-human"), &carried(), Some(&ev));
    assert_eq!(
        unmet(&v),
        format!(
            "{HEAD}: m1, coder lexicon, positive_reciprocity: dependency not estimated for positive_reciprocity (not \
             identified: does not vary within any prompt)"
        )
    );
}

#[test]
fn tier_2_not_3_when_the_dependency_is_not_positive_or_its_lower_bound_is_not_above_zero() {
    let ev = audit(10, 20, 0.9, Some((-0.1, -0.3, 0.1)));
    let v = grade_with(&claim("pgg-round1-human"), &carried(), Some(&ev));
    assert_eq!(v.tier, 2);
    assert_eq!(
        unmet(&v),
        format!(
            "{HEAD}: m1, coder lexicon, positive_reciprocity: dependency of contribution_share on positive_reciprocity -0.100 (95 % CI [-0.300, 0.100], \
             CR1 by prompt, 12 prompts) not positive"
        )
    );
    let ev = audit(10, 20, 0.9, Some((0.02, -0.05, 0.09)));
    let v = grade_with(&claim("pgg-round1-human"), &carried(), Some(&ev));
    assert_eq!(v.tier, 2);
    assert_eq!(
        unmet(&v),
        format!(
            "{HEAD}: m1, coder lexicon, positive_reciprocity: dependency of contribution_share on positive_reciprocity 0.020 (95 % CI [-0.050, 0.090], \
             CR1 by prompt, 12 prompts): its lower bound ≤ 0"
        )
    );
}

#[test]
fn one_carrying_model_showing_the_mechanism_suffices_and_the_closest_gap_is_named() {
    let mut ev = audit(10, 20, 0.9, Some((0.3, 0.1, 0.5)));
    // Only m3's dependency is positive; m1 and m2's are flat.
    for d in ev.dependency.iter_mut().filter(|d| d.model != "m3") {
        (d.coef, d.ci_low, d.ci_high) = (Some(0.0), Some(-0.1), Some(0.1));
    }
    let v = grade_with(&claim("pgg-round1-human"), &carried(), Some(&ev));
    assert_eq!(v.tier, 3, "{v:?}");
    assert!(v
        .evidence
        .iter()
        .any(|e| e.starts_with("m1: mechanism not shown: m1, coder lexicon, positive_reciprocity: dependency")));
    // m1 is not validated, m2 states nothing: the verdict names m2's gap, the closer one.
    let mut ev = audit(10, 20, 0.9, None);
    ev.gates.get_mut(&key()).expect("gate")[0].status = Status::Refused;
    ev.responses.iter_mut().filter(|r| r.model != "m1").for_each(|r| r.stated.clear());
    let v = grade_with(&claim("pgg-round1-human"), &carried(), Some(&ev));
    assert!(
        unmet(&v).starts_with(&format!("{HEAD}: m2, coder lexicon, positive_reciprocity: value not stated")),
        "{}",
        unmet(&v)
    );
}

#[test]
fn a_mechanism_of_negative_sign_needs_the_dependency_below_zero() {
    // A claim whose stated value lowers the indicator (as a rejection lowers `accept`): the same
    // first-round claim with the mechanism's sign turned, so that it can reach Tier 3.
    let mut c = claim("pgg-round1-human");
    let Some(crate::claims::Mechanism::Values { sign, .. }) = &mut c.mechanism else { panic!("values") };
    *sign = -1.0;
    let ev = audit(10, 20, 0.9, Some((-0.3, -0.5, -0.1)));
    let v = grade_with(&c, &carried(), Some(&ev));
    assert_eq!(v.tier, 3, "{v:?}");
    let ev = audit(10, 20, 0.9, Some((0.4, 0.2, 0.6)));
    let v = grade_with(&c, &carried(), Some(&ev));
    assert_eq!(v.tier, 2);
    assert!(unmet(&v).ends_with("not negative"), "{}", unmet(&v));
}

#[test]
fn a_claim_without_a_mechanism_names_that_as_its_tier_3_condition() {
    let mut out = Vec::new();
    for (m, f) in MODELS {
        naming(&mut out, m, f, &[1.0, 1.0, 1.0], &[1.0, 1.0, 1.0], &[1.0, 1.0, 1.0]);
    }
    let ev = audit(10, 20, 0.9, Some((0.3, 0.1, 0.5)));
    let mut unnamed = claim("convention-forms");
    unnamed.mechanism = Some(crate::claims::Mechanism::Unnamed { why: "conventions form by coordination".into() });
    for audit in [None, Some(&ev)] {
        let v = grade_with(&unnamed, &out, audit);
        assert_eq!(v.tier, 2);
        assert!(
            unmet(&v).starts_with(&format!("{HEAD}: the claim names no mechanism (conventions form")),
            "{}",
            unmet(&v)
        );
    }
}

/// Tier 3's familywise rule: each carrier's τ clears zero on its own (one-sided p ≈ 0.011 on 19
/// df), but not once the six tries of the claim's family (three models × two values) are
/// counted; the same τ with a tighter interval passes.
#[test]
fn tier_3_counts_every_try_of_the_family_holm() {
    let mut ev = audit(10, 20, 0.9, Some((0.3, 0.1, 0.5)));
    for t in &mut ev.intervention {
        (t.tau, t.ci_low, t.ci_high, t.se) = (Some(0.2), Some(0.01), Some(0.39), Some(0.2 / 2.5));
    }
    let v = grade_with(&claim("pgg-round1-human"), &carried(), Some(&ev));
    assert_eq!(v.tier, 2, "{v:?}");
    let u = unmet(&v);
    assert!(u.contains("not significant once every try is counted: Holm-adjusted p"), "{u}");
    assert!(u.contains("over 6 tries in the claim's family"), "{u}");
    // A value declared in advance narrows the family to it: three tries, still too few to pass
    // at p ≈ 0.011 each (3 × 0.011 > 0.025) — the models stay in the family.
    let mut c = claim("pgg-round1-human");
    let Some(crate::claims::Mechanism::Values { primary, .. }) = &mut c.mechanism else { panic!("values") };
    *primary = Some("positive_reciprocity".into());
    let v = grade_with(&c, &carried(), Some(&ev));
    assert_eq!(v.tier, 2, "{v:?}");
    assert!(unmet(&v).contains("over 3 tries in the claim's family"), "{}", unmet(&v));
    // The other way: a τ clear of zero at t = 5 passes whatever the family.
    for t in &mut ev.intervention {
        t.se = Some(0.04);
    }
    assert_eq!(grade_with(&claim("pgg-round1-human"), &carried(), Some(&ev)).tier, 3);
}

/// τ must agree with φ in sign and roughly in size: a τ clear of zero but far below φ (a model
/// in which the stated value moves the action a little while a hidden cause moves it a lot)
/// stops at Tier 2.
#[test]
fn tier_3_needs_tau_to_agree_with_phi_in_size() {
    let mut ev = audit(10, 20, 0.9, Some((0.3, 0.2, 0.4)));
    for t in &mut ev.intervention {
        (t.tau, t.ci_low, t.ci_high, t.se) = (Some(0.05), Some(0.03), Some(0.07), Some(0.01));
    }
    let v = grade_with(&claim("pgg-round1-human"), &carried(), Some(&ev));
    assert_eq!(v.tier, 2, "{v:?}");
    assert!(
        unmet(&v)
            .contains("τ does not agree with φ in size (its interval misses [0.150, 0.600], φ̂ within a factor of 2)"),
        "{}",
        unmet(&v)
    );
    // Twice φ's size misses too; within the band passes.
    for t in &mut ev.intervention {
        (t.tau, t.ci_low, t.ci_high) = (Some(0.9), Some(0.8), Some(1.0));
    }
    assert_eq!(grade_with(&claim("pgg-round1-human"), &carried(), Some(&ev)).tier, 2);
    for t in &mut ev.intervention {
        (t.tau, t.ci_low, t.ci_high) = (Some(0.2), Some(0.12), Some(0.28));
    }
    assert_eq!(grade_with(&claim("pgg-round1-human"), &carried(), Some(&ev)).tier, 3);
}

/// The evidence is the claim's own: reasoning, φ and τ of another cell (step-by-step, the cell
/// that asks for reasoning) or another arm do not certify a baseline claim.
#[test]
fn tier_3_reads_only_the_claims_own_cell_and_arm() {
    let base = audit(10, 20, 0.9, Some((0.3, 0.1, 0.5)));
    assert_eq!(grade_with(&claim("pgg-round1-human"), &carried(), Some(&base)).tier, 3);
    let mut ev = base.clone();
    ev.responses.iter_mut().for_each(|r| r.cell = "step-by-step".into());
    let v = grade_with(&claim("pgg-round1-human"), &carried(), Some(&ev));
    assert_eq!(v.tier, 2);
    assert_eq!(
        unmet(&v),
        format!(
            "{HEAD}: no reasoning elicited in the claim's cell (baseline) for m1 in public-goods / baseline: its coded \
             reasoning is from step-by-step only, another condition"
        )
    );
    let mut ev = base.clone();
    ev.dependency.iter_mut().for_each(|d| d.cell = Some("step-by-step".into()));
    let v = grade_with(&claim("pgg-round1-human"), &carried(), Some(&ev));
    assert_eq!(v.tier, 2);
    assert!(unmet(&v).contains("no contribution_share row of public-goods / baseline / baseline"), "{}", unmet(&v));
    let mut ev = base.clone();
    ev.intervention.iter_mut().for_each(|t| t.arm = Some("punishment".into()));
    let v = grade_with(&claim("pgg-round1-human"), &carried(), Some(&ev));
    assert_eq!(v.tier, 2);
    assert!(unmet(&v).contains("no intervention on positive_reciprocity in public-goods / baseline / baseline"));
    // The project's own insert design (`replace`) is not the one the ladder reads.
    let mut ev = base.clone();
    ev.intervention.iter_mut().for_each(|t| t.design = Some("replace".into()));
    assert_eq!(grade_with(&claim("pgg-round1-human"), &carried(), Some(&ev)).tier, 2);
    // Rows written before they carried a cell are not read as the claim's.
    let mut ev = base;
    ev.dependency.iter_mut().for_each(|d| (d.arm, d.cell) = (None, None));
    let v = grade_with(&claim("pgg-round1-human"), &carried(), Some(&ev));
    assert_eq!(v.tier, 2);
    assert!(unmet(&v).contains("carries no cell or arm (written before they were recorded): rerun `agora audit`"));
}

/// Every stored intervention estimate is read, whatever its seed: a second seed whose τ is flat
/// is one more try, and the first seed by name does not stand for the rest.
#[test]
fn tier_3_reads_every_stored_intervention_estimate() {
    let mut ev = audit(10, 20, 0.9, Some((0.3, 0.1, 0.5)));
    let flat: Vec<InterventionEstimate> = ev
        .intervention
        .iter()
        .map(|t| InterventionEstimate {
            sample_seed: "0".into(),
            tau: Some(0.0),
            ci_low: Some(-0.1),
            ci_high: Some(0.1),
            ..t.clone()
        })
        .collect();
    ev.intervention.extend(flat);
    let v = grade_with(&claim("pgg-round1-human"), &carried(), Some(&ev));
    assert_eq!(v.tier, 3, "{v:?}");
    let ev_text = v.evidence.join("\n");
    assert!(ev_text.contains("seed 0, 20 states) does not exclude zero"), "{ev_text}");
    assert!(ev_text.contains("over 9 tries in the claim's family"), "{ev_text}");
}

/// "Stated" is a share, not one mention: one response in forty stating the value is not enough.
#[test]
fn tier_3_needs_the_value_stated_in_a_declared_share() {
    let ev = audit(1, 40, 0.9, Some((0.3, 0.1, 0.5)));
    let v = grade_with(&claim("pgg-round1-human"), &carried(), Some(&ev));
    assert_eq!(v.tier, 2, "{v:?}");
    assert!(unmet(&v).contains("value not stated in a share of at least 0.05"), "{}", unmet(&v));
    let ev = audit(8, 40, 0.9, Some((0.3, 0.1, 0.5)));
    assert_eq!(grade_with(&claim("pgg-round1-human"), &carried(), Some(&ev)).tier, 3);
}
