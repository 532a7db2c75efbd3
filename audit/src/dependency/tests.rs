use super::*;
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

fn names() -> Vec<String> {
    ["fairness", "competition", "altruism", "fairness_again"].iter().map(|s| s.to_string()).collect()
}

/// Prompts with a base rate each; fairness (stated half the time) raises P(y) by 0.5,
/// competition (independent) does nothing, altruism is never stated, and `fairness_again`
/// duplicates fairness.
fn data(prompts: usize, reps: usize, seed: u64) -> Vec<Observation> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut out = Vec::new();
    for p in 0..prompts {
        let base = 0.1 + 0.3 * (p % 3) as f64 / 2.0;
        for _ in 0..reps {
            let fair = rng.random_bool(0.5);
            let comp = rng.random_bool(0.5);
            let y = rng.random_bool(base + if fair { 0.5 } else { 0.0 });
            out.push(Observation {
                prompt: format!("p{p}"),
                y: f64::from(u8::from(y)),
                w: vec![fair, comp, false, fair],
            });
        }
    }
    out
}

#[test]
fn the_lpm_recovers_the_dependency_and_reports_what_is_not_identified() {
    let obs = data(60, 10, 7);
    let est = lpm(&obs, &names());
    assert_eq!(est[0].status, "estimated");
    assert!((est[0].fit.coef.unwrap() - 0.5).abs() < 0.12, "{:?}", est[0]);
    assert!(est[0].fit.ci_low.unwrap() > 0.0);
    assert_eq!(est[1].status, "estimated");
    assert!(est[1].fit.coef.unwrap().abs() < 0.12, "{:?}", est[1]);
    assert_eq!((est[2].status, est[2].prompts_varying), ("not identified", 0));
    assert!(est[2].reason.contains("does not vary within any prompt"));
    assert_eq!(est[3].status, "not identified");
    assert!(est[3].reason.contains("linear combination"), "{:?}", est[3]);
    assert_eq!((est[0].n_prompts, est[0].n_replicates), (60, 600));
}

#[test]
fn the_lpm_equals_the_within_fit_of_the_identified_values() {
    let obs = data(20, 5, 3);
    let est = lpm(&obs, &names());
    let x: Vec<Vec<f64>> = obs.iter().map(|o| vec![f64::from(u8::from(o.w[0])), f64::from(u8::from(o.w[1]))]).collect();
    let y: Vec<f64> = obs.iter().map(|o| o.y).collect();
    let g: Vec<&str> = obs.iter().map(|o| o.prompt.as_str()).collect();
    let f = fe_cr1::<&str, &str>(&x, &y, &g, None, FeDf::Within, None, ALPHA).expect("fit").fit;
    assert_eq!(est[0].fit.coef, Some(f.coef[0]));
    assert_eq!(est[1].fit.se, Some(f.se[1]));
    assert_eq!(est[1].fit.p, Some(f.p[1]));
}

#[test]
fn the_logit_uses_the_prompts_whose_action_varies() {
    let obs = data(60, 10, 11);
    let est = logit(&obs, &names());
    assert_eq!(est[0].status, "estimated");
    assert!(est[0].fit.coef.unwrap() > 0.2, "{:?}", est[0]);
    assert!(est[0].n_prompts <= 60 && est[0].n_prompts > 30);
    assert_eq!(est[2].status, "not identified");
    let constant: Vec<Observation> = obs.iter().map(|o| Observation { y: 1.0, ..o.clone() }).collect();
    assert!(logit(&constant, &names()).iter().all(|e| e.status == "not estimated"));
}

#[test]
fn indicators_read_actions() {
    let d = agora_analysis::Declared::from_values(&agora_environments::declarations()).expect("declarations");
    let indicator_for = |e: &str, r: &str| d.indicator(e, r);
    let left_out_reason = |e: &str, r: &str| d.left_out_reason(e, r);
    let pd = indicator_for("prisoners-dilemma", "player").expect("pd");
    assert_eq!(pd.value("c0", "", None), Some(1.0));
    assert_eq!(pd.value("c1", "", None), Some(0.0));
    let pg = indicator_for("public-goods", "contributor").expect("pg");
    assert_eq!(pg.value("a5", r#"{"Amount":{"min":0,"max":20}}"#, None), Some(0.25));
    let tr = indicator_for("bargaining", "trustee").expect("trustee");
    assert_eq!(tr.value("a0", r#"{"Amount":{"min":0,"max":0}}"#, None), None);
    let ba = indicator_for("binary-allocation", "dictator").expect("ba");
    assert_eq!(ba.value("c1", "", Some(1)), Some(1.0));
    assert_eq!(ba.value("c1", "", None), None);
    assert!(indicator_for("naming-game", "namer").is_none());
    assert!(left_out_reason("naming-game", "namer").contains("symmetric"));
}

/// A group of the tests, in cell `step-by-step`.
fn group() -> GroupRow {
    GroupRow {
        position: crate::table::at("step-by-step"),
        indicator: Some("cooperate".into()),
        replicates: 10,
        with_action: 9,
        coded: 8,
        observations: 7,
        prompts: 3,
        prompts_action_varies: 2,
        left_out: None,
    }
}

#[test]
fn a_group_serialises_its_position_first_among_its_columns() {
    assert_eq!(
        serde_json::to_string(&group()).expect("json"),
        "{\"model\":\"m\",\"environment\":\"prisoners-dilemma\",\"arm\":\"baseline\",\"cell\":\"step-by-step\",\"role\":\"player\",\
         \"indicator\":\"cooperate\",\"replicates\":10,\"with_action\":9,\"coded\":8,\"observations\":7,\"prompts\":3,\
         \"prompts_action_varies\":2,\"left_out\":null}"
    );
}

/// A report of the tests: one group and its estimate.
fn report() -> Dependency {
    let row = DependencyRow {
        position: crate::table::at("step-by-step"),
        indicator: "cooperate".into(),
        estimator: "lpm-fe".into(),
        value: "fairness".into(),
        status: "estimated".into(),
        reason: String::new(),
        fit: Coefficient { coef: Some(0.25), se: Some(0.1), ..Coefficient::default() },
        n_prompts: 3,
        n_replicates: 7,
        prompts_varying: Some(2),
        validation: "validated".into(),
    };
    Dependency {
        store: "s.db".into(),
        study: None,
        key: CoderKey { coder: "lexicon/1".into(), codebook: "default".into(), version: 1, sha256: "abc".into() },
        alpha: ALPHA,
        replicates: 10,
        with_action: 9,
        coded: 8,
        without_reasoning: 1,
        coder_errors: 0,
        indicators: Vec::new(),
        left_out: Vec::new(),
        groups: vec![group()],
        rows: vec![row],
        validation: Vec::new(),
    }
}

#[test]
fn the_markdown_and_the_table_write_a_groups_and_an_estimates_position_as_their_first_cells() {
    let d = report();
    let md = d.to_markdown();
    assert!(
        md.contains(
            "\n| m | prisoners-dilemma | baseline | step-by-step | player | cooperate | 10 | 9 | 8 | 7 | 3 | 2 |  |\n"
        ),
        "{md}"
    );
    assert!(
        md.contains(
            "\n| m | prisoners-dilemma | baseline | step-by-step | player | cooperate | lpm-fe | fairness | 0.250 | 0.100 | - | - | - | 3 | 7 | 2 | estimated |\n"
        ),
        "{md}"
    );
    let t = d.table();
    assert_eq!(t.columns[..6], ["model", "environment", "arm", "cell", "role", "indicator"]);
    assert_eq!(t.rows[0][..6], ["m", "prisoners-dilemma", "baseline", "step-by-step", "player", "cooperate"]);
}

#[test]
fn the_report_serialises_its_coder_and_codebook_after_its_store_and_study() {
    let json = serde_json::to_string(&report()).expect("json");
    assert!(
        json.starts_with(
            "{\"store\":\"s.db\",\"study\":null,\"coder\":\"lexicon/1\",\"codebook\":\"default\",\"codebook_version\":1,\
             \"codebook_sha256\":\"abc\",\"alpha\":0.05,\"replicates\":10,\"with_action\":9,\"coded\":8,\"without_reasoning\":1,\
             \"coder_errors\":0,\"indicators\":[],\"left_out\":[],\"groups\":[{\"model\":\"m\","
        ),
        "{json}"
    );
}
