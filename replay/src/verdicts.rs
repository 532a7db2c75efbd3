//! The replay's verdicts beside the paper's: what the paper concludes of each claim, the
//! counts its sentences rest on, and the table `agora replicate --verdicts` prints.

/// What the paper concludes of each claim it grades, in its words, for the verdict table beside
/// the replay's; claims the paper does not grade say so.
pub const PAPER_SAYS: [(&str, &str); 16] = [
    ("pgg-round1-human", "Tier 1: “fall inside the margin fixed in advance for eight of the eleven models”; not robust (“No other finding satisfies more than one condition”)"),
    ("pgg-round10-human", "“by the final round, none does” (no round-10 anchor value on record here)"),
    ("pgg-decline", "“reproduced by one model of twelve”"),
    ("cc-slope", "not graded"),
    ("pd-decline", "“the decline of cooperation in the repeated dilemma by three” (tier not printed)"),
    ("pd-endgame", "not graded"),
    ("pd-corridor", "not Tier 1: “no model’s cooperation rate falls inside the corridor”"),
    ("convention-forms", "Tier 2: “Convention formation is the only finding that reaches Tier 2”"),
    ("punishment-raises", "not Tier 1: contributions “fall in four of the nine models” (not scripted)"),
    ("critical-mass", "not Tier 1: “none of the seven falls inside the human bracket”"),
    ("ultimatum-offer", "Tier 1: “match the meta-analytic mean of 0.40 … for one model of twelve”; one-shot cells descriptive"),
    ("ultimatum-rejection", "not graded (not scripted)"),
    ("dictator-giving", "not Tier 1: “Dictator giving matches for none”"),
    ("trust-sent", "not graded (not scripted)"),
    ("trust-returned", "not graded (not scripted)"),
    ("money-request-distance", "distances 0.637 to 0.062 in the Qwen3 family, no threshold printed (not scripted)"),
];

/// Tests in `model`'s perturbation family for `environment` (the contrasts Holm-adjusted
/// together).
pub fn perturbation_family_size(a: &agora_analysis::analyze::Analysis, model: &str, environment: &str) -> usize {
    a.contrasts
        .iter()
        .filter(|c| c.model == model && c.environment == environment && c.family_of_tests == "perturbation")
        .filter(|c| c.p_holm.is_some())
        .count()
}

/// The models a verdict's evidence shows robust at Tier 2 — the canonical effect keeping its
/// sign in at least 0.8 at both perturbation levels and not reversed or untested under C3 —
/// with their families, as the ladder's evidence lines state them.
pub fn robust_models(a: &agora_analysis::analyze::Analysis, claim: &str) -> Vec<(String, String)> {
    let Some(v) = a.verdicts.iter().find(|v| v.claim == claim) else { return Vec::new() };
    let mut out = Vec::new();
    for (model, family) in a.contrasts.iter().map(|c| (&c.model, &c.model_family)) {
        if out.iter().any(|(m, _): &(String, String)| m == model) {
            continue;
        }
        let lines: Vec<&String> = v.evidence.iter().filter(|e| e.starts_with(&format!("{model}: "))).collect();
        let stable = |level: &str| {
            lines.iter().any(|e| {
                e.ends_with(&format!("{level}-level cells"))
                    && e.split(" keeps its sign in ")
                        .nth(1)
                        .and_then(|r| r.split(' ').next()?.parse::<f64>().ok())
                        .is_some_and(|s| s >= 0.8)
            })
        };
        let c3 = lines.iter().any(|e| e.contains("(C3)"));
        if stable("representation") && stable("design") && !c3 {
            out.push((model.clone(), family.clone()));
        }
    }
    out
}

/// Models whose baseline agrees with the directional rule of `claim`.
pub fn agreeing(a: &agora_analysis::analyze::Analysis, claim: &str) -> usize {
    a.directional.iter().filter(|r| r.claim == claim && r.agrees == Some(true)).count()
}

/// The verdict table of a replay: each claim's tier and first unmet condition beside what the
/// paper concludes, then the directional counts and the family sizes, as Markdown.
pub fn verdict_table(a: &agora_analysis::analyze::Analysis) -> String {
    let mut s =
        String::from("| claim | replay: tier | replay: first unmet condition | the paper |\n|---|---|---|---|\n");
    for v in &a.verdicts {
        let paper = PAPER_SAYS.iter().find(|(id, _)| *id == v.claim).map_or("-", |(_, t)| t);
        let unmet = v.first_unmet.as_deref().unwrap_or("-").replace('|', "/");
        s.push_str(&format!("| {} | {} | {} | {} |\n", v.claim, v.tier_name, unmet, paper));
    }
    let agree = |claim: &str| agreeing(a, claim);
    let models = a.directional.iter().filter(|r| r.claim == "convention-forms").count();
    s.push_str(&format!(
        "\nDirectional agreement (replay / the paper): public-goods decline {} / 1, dilemma decline {} / 3, \
         convention formation {} / 10, of {models} models.\n",
        agree("pgg-decline"),
        agree("pd-decline"),
        agree("convention-forms")
    ));
    s
}

/// What `agora replicate --verdicts` prints: the verdict table, then every printed figure the
/// replay touches with its status ([`crate::paper_figures::status_table`]).
pub fn report(a: &agora_analysis::analyze::Analysis) -> String {
    format!(
        "{}\nEvery figure the paper prints that the replay touches, and how far Agora's agreement is \
         evidence:\n\n{}",
        verdict_table(a),
        crate::paper_figures::status_table(a)
    )
}
