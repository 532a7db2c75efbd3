//! Printing what a plan's LLM seats will ask and what they asked (the work is in
//! `agora_engine::llm_seats`).

use std::path::Path;

use agora_engine::llm_seats::{call_estimates, REPLY_BYTES};
use agora_engine::store::transcript_counts;
use agora_scenarios::Plan;

/// Prints, per model, the calls a plan will make, a rough count of prompt tokens (the first
/// prompt of each condition, at four characters a token, times its calls) and the store those
/// calls are expected to take.
pub fn print_call_estimate(plan: &Plan) {
    if !agora_engine::llm_seats::uses_llm(&plan.runs) {
        println!("LLM calls: none (classical rosters)");
        return;
    }
    println!("{:<24} {:>7} {:>14} {:>18} {:>12}", "model", "runs", "calls", "~prompt tokens", "~store");
    for e in call_estimates(&plan.runs, &plan.models) {
        let bound = if e.upper { "<=" } else { "" };
        println!(
            "{:<24} {:>7} {:>14} {:>18} {:>12}",
            e.model,
            e.runs,
            format!("{bound}{}", e.calls),
            format!("{:.0}", e.prompt_tokens),
            format!("{bound}{}", human_bytes(e.store_bytes))
        );
    }
    println!(
        "(~store: transcripts and reply cache, from each condition's first prompt with a {REPLY_BYTES}-byte reply; \
         the static text of the prompts is stored once and not counted)"
    );
}

/// 1234567 → "1.23 MB" (decimal units, three significant digits).
fn human_bytes(b: f64) -> String {
    let (value, unit) = match b {
        b if b >= 1e9 => (b / 1e9, "GB"),
        b if b >= 1e6 => (b / 1e6, "MB"),
        b if b >= 1e3 => (b / 1e3, "kB"),
        b => (b, "B"),
    };
    let decimals = if value >= 100.0 {
        0
    } else if value >= 10.0 {
        1
    } else {
        2
    };
    format!("{value:.decimals$} {unit}")
}

/// Prints, per model, calls by parse status and the share of decisions that fell back.
pub fn print_transcript_summary(store: &Path, study: &str) -> anyhow::Result<()> {
    let models = transcript_counts(agora_engine::Store::open_read(store)?.connection(), study)?;
    println!("\n== LLM calls ==");
    for (model, counts) in models {
        let get = |k: &str| *counts.get(k).unwrap_or(&0);
        let calls =
            get("decision:ok") + get("decision:unparsable") + get("decision:illegal") + get("decision:truncated");
        let fallback = get("decision:fallback");
        let decisions = get("decision:ok") + get("decision:truncated-standing") + fallback;
        let pct = |n: i64, d: i64| if d == 0 { 0.0 } else { 100.0 * n as f64 / d as f64 };
        println!(
            "{model}: {calls} calls for {decisions} decisions; parsed {:.1} %, unparsable {:.1} %, illegal {:.1} %, cut at the token limit {:.1} % of calls; fallback {:.1} % of decisions{}",
            pct(get("decision:ok"), calls),
            pct(get("decision:unparsable"), calls),
            pct(get("decision:illegal"), calls),
            pct(get("decision:truncated"), calls),
            pct(fallback, decisions),
            if get("probe:recognised") + get("probe:not-recognised") > 0 {
                format!("; recognition probe: {} of {} recognised", get("probe:recognised"), get("probe:recognised") + get("probe:not-recognised"))
            } else {
                String::new()
            }
        );
    }
    Ok(())
}
