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
                role: "contributor".into(),
                indicator: "contribution_share".into(),
                value: "positive_reciprocity".into(),
                status: "estimated".into(),
                reason: String::new(),
                coef: Some(coef),
                ci_low: Some(lo),
                ci_high: Some(hi),
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
fn intervention(model: &str, tau: f64, lo: f64, hi: f64) -> InterventionEstimate {
    InterventionEstimate {
        key: key(),
        model: model.into(),
        environment: "public-goods".into(),
        role: "contributor".into(),
        indicator: "contribution_share".into(),
        value: "positive_reciprocity".into(),
        status: "estimated".into(),
        tau: Some(tau),
        ci_low: Some(lo),
        ci_high: Some(hi),
    }
}

const HEAD: &str = "transcript audit consistent with the human mechanism";

#[test]
fn tier_3_when_a_validated_coder_finds_the_value_stated_and_the_action_depends_on_it() {
    let ev = audit(10, 20, 0.9, Some((0.3, 0.1, 0.5)));
    let v = grade_with(&claim("pgg-round1-human"), &carried(), Some(&ev));
    assert_eq!((v.tier, v.tier_name.as_str(), v.first_unmet.as_deref()), (3, "Tier 3 transferable", None));
    assert_eq!(
        v.evidence.last().map(String::as_str),
        Some(
            "m1: mechanism shown: lexicon (validated: κ = 0.900 ≥ 0.8 (240 sentences, 100 responses)) finds positive_reciprocity in 10 of 20 \
             coded responses (Wilson 95 % [0.299, 0.701]); altruism in 0 of 20 coded \
             responses (Wilson 95 % [0.000, 0.161]); dependency of contribution_share on positive_reciprocity 0.300 (95 % CI \
             [0.100, 0.500], CR1 by prompt, 12 prompts); intervention effect τ of positive_reciprocity on \
             contribution_share 0.300 (95 % CI [0.100, 0.500])"
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
            "intervention effect τ of positive_reciprocity on contribution_share 0.014 (95 % CI [-0.109, 0.137]) \
             does not exclude zero in the mechanism's direction (above zero)"
        ),
        "{}",
        unmet(&v)
    );
    // Without an intervention in the store the dependency is not enough either.
    ev.intervention.clear();
    let v = grade_with(&claim("pgg-round1-human"), &carried(), Some(&ev));
    assert_eq!(v.tier, 2);
    assert!(
        unmet(&v).contains("no intervention on positive_reciprocity in the store (run `agora audit prefill`)"),
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
            "{HEAD}: value not stated in m1's reasoning by lexicon (positive_reciprocity in 0 of 20 coded responses \
             (Wilson 95 % [0.000, 0.161]); altruism in 0 of 20 coded responses (Wilson 95 % [0.000, 0.161]))"
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
            "{HEAD}: m1, coder lexicon: dependency not estimated for positive_reciprocity (no contribution_share row in audit_dependency)"
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
            "{HEAD}: m1, coder lexicon: dependency not estimated for positive_reciprocity (not identified: does not vary \
             within any prompt)"
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
            "{HEAD}: m1, coder lexicon: dependency of contribution_share on positive_reciprocity -0.100 (95 % CI [-0.300, 0.100], \
             CR1 by prompt, 12 prompts) not positive"
        )
    );
    let ev = audit(10, 20, 0.9, Some((0.02, -0.05, 0.09)));
    let v = grade_with(&claim("pgg-round1-human"), &carried(), Some(&ev));
    assert_eq!(v.tier, 2);
    assert_eq!(
        unmet(&v),
        format!(
            "{HEAD}: m1, coder lexicon: dependency of contribution_share on positive_reciprocity 0.020 (95 % CI [-0.050, 0.090], \
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
    assert!(v.evidence.iter().any(|e| e.starts_with("m1: mechanism not shown: m1, coder lexicon: dependency")));
    // m1 is not validated, m2 states nothing: the verdict names m2's gap, the closer one.
    let mut ev = audit(10, 20, 0.9, None);
    ev.gates.get_mut(&key()).expect("gate")[0].status = Status::Refused;
    ev.responses.iter_mut().filter(|r| r.model != "m1").for_each(|r| r.stated.clear());
    let v = grade_with(&claim("pgg-round1-human"), &carried(), Some(&ev));
    assert!(unmet(&v).starts_with(&format!("{HEAD}: value not stated in m2's reasoning")), "{}", unmet(&v));
}

#[test]
fn a_mechanism_of_negative_sign_needs_the_dependency_below_zero() {
    // A claim whose stated value lowers the indicator (as a rejection lowers `accept`): the same
    // first-round claim with the mechanism's sign turned, so that it can reach Tier 3.
    let mut c = claim("pgg-round1-human");
    let Some(crate::claims::Mechanism::Values { sign, .. }) = &mut c.mechanism else { panic!("values") };
    *sign = -1.0;
    let ev = audit(10, 20, 0.9, Some((-0.4, -0.6, -0.2)));
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
    for audit in [None, Some(&ev)] {
        let v = grade_with(&claim("convention-forms"), &out, audit);
        assert_eq!(v.tier, 2);
        assert!(
            unmet(&v).starts_with(&format!("{HEAD}: the claim names no mechanism (conventions form")),
            "{}",
            unmet(&v)
        );
    }
}
