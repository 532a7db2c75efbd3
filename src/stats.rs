//! `agora stats TEST`: JSON on stdin, JSON on stdout, for ad-hoc use by researchers.

use std::io::Read;

use agora_analysis::anchors::{AnchorTable, AnchorValue};
use agora_analysis::stats;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::BadInput;

/// The tests `agora stats` knows.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum Test {
    Tost,
    MannWhitney,
    Holm,
    #[value(name = "wasserstein-1120")]
    Wasserstein1120,
    Newcombe,
    Wilson,
    Spearman,
    I2,
    Kappa,
    #[value(name = "ols-cr1")]
    OlsCr1,
    #[value(name = "fe-cr1")]
    FeCr1,
    #[value(name = "logit-ame")]
    LogitAme,
    Occurrence,
    ProfileRange,
    ProfileMeasure,
    ProfileCombine,
    GrOpen,
    GrBinary,
    SamplesPerArm,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TostIn {
    values: Vec<f64>,
    theta: f64,
    margin: f64,
    #[serde(default = "alpha05")]
    alpha: f64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TwoSamples {
    x: Vec<f64>,
    y: Vec<f64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct HolmIn {
    p: Vec<f64>,
    /// The family's size, where only its smallest p values are given (a paper prints the one
    /// it names): the tests left out are taken to have p values no smaller than those given,
    /// which is all Holm's step-down needs to adjust the given ones exactly. Default: `p`'s
    /// length.
    #[serde(default)]
    family_size: Option<usize>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WassIn {
    /// Choice counts per run on 11..20 (ten numbers each).
    runs: Vec<Vec<f64>>,
    /// Reference shares; default: the published distribution (Arad & Rubinstein 2012).
    #[serde(default)]
    reference: Option<Vec<f64>>,
    #[serde(default = "resamples")]
    resamples: usize,
    #[serde(default = "level95")]
    level: f64,
    #[serde(default)]
    seed: u64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NewcombeIn {
    k1: u64,
    n1: u64,
    k2: u64,
    n2: u64,
    #[serde(default = "alpha05")]
    alpha: f64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WilsonIn {
    k: u64,
    n: u64,
    #[serde(default = "alpha05")]
    alpha: f64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct I2In {
    means: Vec<f64>,
    variances: Vec<f64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct KappaIn {
    y1: Vec<Value>,
    y2: Vec<Value>,
    #[serde(default)]
    labels: Option<Vec<Value>>,
    #[serde(default = "alpha05")]
    alpha: f64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct OlsIn {
    x: Vec<Vec<f64>>,
    y: Vec<f64>,
    clusters: Vec<Value>,
    #[serde(default = "yes")]
    intercept: bool,
    #[serde(default)]
    names: Option<Vec<String>>,
    #[serde(default = "alpha05")]
    alpha: f64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FeIn {
    x: Vec<Vec<f64>>,
    y: Vec<f64>,
    groups: Vec<Value>,
    #[serde(default)]
    clusters: Option<Vec<Value>>,
    #[serde(default = "fe_auto")]
    df: stats::FeDf,
    #[serde(default)]
    names: Option<Vec<String>>,
    #[serde(default = "alpha05")]
    alpha: f64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LogitIn {
    x: Vec<Vec<f64>>,
    y: Vec<f64>,
    #[serde(default)]
    clusters: Option<Vec<Value>>,
    #[serde(default = "yes")]
    intercept: bool,
    #[serde(default)]
    names: Option<Vec<String>>,
    #[serde(default = "alpha05")]
    alpha: f64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct OccurrenceIn {
    responses: Vec<Vec<Value>>,
    #[serde(default)]
    codes: Option<Vec<Value>>,
    #[serde(default = "alpha05")]
    alpha: f64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ProfileRangeIn {
    reference: Vec<f64>,
    checked: Vec<f64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ProfileMeasureIn {
    measure: agora_profile::score::measure::Measure,
    versions: Vec<Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ProfileCombineIn {
    #[serde(default)]
    measure: Option<agora_profile::score::combine::AMeasure>,
    #[serde(default)]
    weights: Option<Vec<f64>>,
    tasks: Vec<agora_profile::score::combine::TaskRanges>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct GrOpenIn {
    reference: Vec<u32>,
    check: Vec<u32>,
    #[serde(default = "gr_resamples")]
    resamples: usize,
    #[serde(default = "level95")]
    level: f64,
    #[serde(default)]
    seed: Option<u64>,
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    condition: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct GrBinaryIn {
    reference: agora_profile::score::gr_binary::BinaryCounts,
    check: agora_profile::score::gr_binary::BinaryCounts,
    #[serde(default = "alpha05")]
    alpha: f64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SamplesPerArmIn {
    p1: f64,
    p0: f64,
    #[serde(default = "alpha05")]
    alpha: f64,
    #[serde(default = "power80")]
    power: f64,
    #[serde(default)]
    deff: Option<f64>,
    #[serde(default)]
    replicates: Option<f64>,
    #[serde(default)]
    icc: Option<f64>,
    #[serde(default)]
    arms: Option<Vec<Vec<Vec<f64>>>>,
}

fn gr_resamples() -> usize {
    agora_profile::score::gr_open::RESAMPLES
}
fn power80() -> f64 {
    0.8
}

fn profile_bad(e: impl std::fmt::Display) -> BadInput {
    BadInput(format!("stdin: {e}"))
}

/// `profile-combine`: the seed's weights for `measure`, or `weights` given.
fn profile_combine(i: ProfileCombineIn) -> Result<Value, BadInput> {
    use agora_profile::score::combine::combine_tasks;
    let (weights, tasks) = match (i.measure, i.weights) {
        (Some(_), Some(_)) => {
            return Err(BadInput(
                "stdin: `weights`: give `measure` (the seed's fixed weights) or `weights`, not both".into(),
            ))
        }
        (None, None) => {
            return Err(BadInput("stdin: `measure`: give `measure` (a1 … a5) or `weights`".into()));
        }
        (Some(m), None) => {
            if i.tasks.len() != m.weights().len() {
                return Err(BadInput(format!(
                    "stdin: `tasks`: {m:?} combines {} task(s) ({}), got {}",
                    m.weights().len(),
                    m.tasks().join(", "),
                    i.tasks.len()
                )));
            }
            (m.weights(), json!(m.tasks()))
        }
        (None, Some(w)) => (w, Value::Null),
    };
    let (c, outer) = combine_tasks(&weights, &i.tasks).map_err(profile_bad)?;
    let unavailable: Vec<usize> =
        i.tasks.iter().enumerate().filter(|(_, t)| t.outer.is_none()).map(|(k, _)| k).collect();
    Ok(json!({ "measure": i.measure, "tasks": tasks, "weights": weights,
               "centre": c.centre, "inner": c.inner, "outer": outer.then_some(c.outer),
               "outer_unavailable_in": unavailable }))
}

/// `gr-open`: the seed given, or derived from the master seed, `model` and `condition`.
fn gr_open(i: GrOpenIn) -> Result<Value, BadInput> {
    use agora_profile::score::gr_open::{derive_seed, open_comparison};
    check_resamples(i.resamples)?;
    let seed = match (i.seed, &i.model, &i.condition) {
        (Some(s), None, None) => s,
        (None, Some(m), Some(c)) => derive_seed(m, c),
        (Some(_), _, _) => {
            return Err(BadInput("stdin: `seed`: give `seed`, or `model` and `condition`, not both".into()));
        }
        (None, None, _) => {
            return Err(BadInput(
                "stdin: `model`: give `model` and `condition` (the seed is derived from the master seed \
                 20260826, the model configuration and the condition) or `seed`"
                    .into(),
            ));
        }
        (None, Some(_), None) => return Err(BadInput("stdin: `condition`: needed with `model`".into())),
    };
    let c = open_comparison(&i.reference, &i.check, i.resamples, i.level, seed).map_err(profile_bad)?;
    let mut answer = json!(c);
    answer["model"] = json!(i.model);
    answer["condition"] = json!(i.condition);
    Ok(answer)
}

/// `samples-per-arm`: the design effect given, from `replicates` and `icc`, estimated from
/// `arms`, or 1.
fn samples_per_arm(i: SamplesPerArmIn) -> Result<Value, BadInput> {
    use agora_audit::samples::{design_effect, icc_by_arm, samples_per_arm};
    let mut extra = json!({ "replicates": null, "icc": null, "icc_by_arm": null });
    let deff = match (i.deff, i.replicates, i.icc, i.arms) {
        (None, None, None, None) => 1.0,
        (Some(d), None, None, None) => d,
        (None, Some(m), Some(rho), None) => {
            extra["replicates"] = json!(m);
            extra["icc"] = json!(rho);
            design_effect(m, rho).map_err(profile_bad)?
        }
        (None, None, None, Some(arms)) => {
            let (per_arm, m, rho) = icc_by_arm(&arms).map_err(profile_bad)?;
            extra = json!({ "replicates": m, "icc": rho, "icc_by_arm": per_arm });
            design_effect(m, rho).map_err(profile_bad)?
        }
        (None, Some(_), None, None) => return Err(BadInput("stdin: `icc`: needed with `replicates`".into())),
        (None, None, Some(_), None) => return Err(BadInput("stdin: `replicates`: needed with `icc`".into())),
        _ => {
            return Err(BadInput(
                "stdin: `deff`: give one of `deff`, `replicates` with `icc`, or `arms`, not several".into(),
            ))
        }
    };
    let mut answer = json!(samples_per_arm(i.p1, i.p0, i.alpha, i.power, deff).map_err(profile_bad)?);
    for (k, v) in extra.as_object().into_iter().flatten() {
        answer[k] = v.clone();
    }
    Ok(answer)
}

/// A code, cluster or group label: a JSON string or integer (integers sort before strings).
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(untagged)]
enum Label {
    Int(i64),
    Text(String),
}

impl std::fmt::Debug for Label {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Label::Int(i) => write!(f, "{i}"),
            Label::Text(s) => write!(f, "{s:?}"),
        }
    }
}

/// Reads the labels of `field`, refusing anything but strings and integers.
fn labels(field: &str, values: Vec<Value>) -> Result<Vec<Label>, BadInput> {
    values
        .into_iter()
        .enumerate()
        .map(|(i, v)| match v {
            Value::String(s) => Ok(Label::Text(s)),
            Value::Number(n) if n.is_i64() || n.is_u64() => {
                n.as_i64().map(Label::Int).ok_or_else(|| BadInput(format!("stdin: `{field}`[{i}]: {n} is too large")))
            }
            other => Err(BadInput(format!("stdin: `{field}`[{i}]: a label is a string or an integer, got {other}"))),
        })
        .collect()
}

fn yes() -> bool {
    true
}
fn fe_auto() -> stats::FeDf {
    stats::FeDf::Auto
}
fn alpha05() -> f64 {
    0.05
}
fn level95() -> f64 {
    0.95
}
/// The most bootstrap resamples a test takes (Agora's bound): each keeps one value, so a
/// million is 8 MB; more is refused with the figure before anything is allocated.
const MAX_RESAMPLES: usize = 1_000_000;

fn check_resamples(n: usize) -> Result<(), BadInput> {
    if n == 0 || n > MAX_RESAMPLES {
        return Err(BadInput(format!(
            "stdin: `resamples`: {n}; 1 to {MAX_RESAMPLES} (each resample keeps a value: {n} would need about {:.1} GB)",
            n as f64 * 8.0 / 1e9
        )));
    }
    Ok(())
}

fn resamples() -> usize {
    2000
}

fn parse<T: for<'de> Deserialize<'de>>(input: &str) -> Result<T, BadInput> {
    serde_json::from_str(input).map_err(|e| {
        let message = e.to_string();
        // serde names a missing, unknown or duplicate field itself; for the rest (a number out
        // of range, a wrong type, an unknown variant) name the top-level field it sits in.
        match field_at(input, e.line(), e.column()) {
            Some(field) if !message.contains("field `") => BadInput(format!("stdin: `{field}`: {message}")),
            _ => BadInput(format!("stdin: {message}")),
        }
    })
}

/// The top-level key whose value holds the position (`line` from 1, `column` in bytes) of a
/// JSON error, if any.
fn field_at(input: &str, line: usize, column: usize) -> Option<String> {
    let start: usize = input.split_inclusive('\n').take(line.saturating_sub(1)).map(str::len).sum();
    let end = (start + column).min(input.len());
    let bytes = input.as_bytes();
    let (mut depth, mut key, mut last) = (0usize, None, None);
    let mut i = 0;
    while i < end {
        match bytes[i] {
            b'"' => {
                let from = i + 1;
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                if depth == 1 {
                    last = input.get(from..i.min(input.len())).map(str::to_string);
                }
            }
            b':' if depth == 1 => key = last.take(),
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    key = None;
                }
            }
            _ => {}
        }
        i += 1;
    }
    key
}

fn bad(e: stats::StatsError) -> BadInput {
    BadInput(format!("stdin: {e}"))
}

/// Runs one test on `input` and returns its JSON answer.
pub fn run(test: Test, input: &str) -> Result<Value, BadInput> {
    Ok(match test {
        Test::Tost => {
            let i: TostIn = parse(input)?;
            json!(stats::tost(&i.values, i.theta, i.margin, i.alpha).map_err(bad)?)
        }
        Test::MannWhitney => {
            let i: TwoSamples = parse(input)?;
            let mut answer = json!(stats::mann_whitney(&i.x, &i.y).map_err(bad)?);
            // Constant pooled values carry no information: p = 1 would read as "no
            // difference found" when no test was possible. Say so, as the analysis does.
            let first = i.x.first().copied();
            let constant = i.x.iter().chain(&i.y).all(|v| Some(*v) == first);
            answer["excluded"] =
                if constant { json!("pooled values are constant: no test is possible") } else { Value::Null };
            if constant {
                // No p value: a number here would be read as a test's result.
                for field in ["p_less", "p_greater", "p_two_sided", "p_abs"] {
                    answer[field] = Value::Null;
                }
            }
            answer
        }
        Test::Holm => {
            let i: HolmIn = parse(input)?;
            let m = i.family_size.unwrap_or(i.p.len());
            if m < i.p.len() {
                return Err(BadInput(format!("family_size: {m} is smaller than the {} p values given", i.p.len())));
            }
            if let (Some(_), Some(largest)) = (i.family_size, i.p.iter().copied().reduce(f64::max)) {
                // The tests not given are at least as large as the largest given: p = 1 stands
                // for them without changing a given test's adjusted value.
                let mut family = i.p.clone();
                family.resize(m, largest.max(1.0));
                let adjusted = stats::holm(&family).map_err(bad)?;
                json!({ "adjusted": adjusted[..i.p.len()].to_vec(), "family_size": m })
            } else {
                json!({ "adjusted": stats::holm(&i.p).map_err(bad)? })
            }
        }
        Test::Wasserstein1120 => {
            let i: WassIn = parse(input)?;
            check_resamples(i.resamples)?;
            let reference = match i.reference {
                Some(r) => r,
                None => AnchorTable::shipped()
                    .anchors
                    .iter()
                    .find_map(|a| match (&a.value, a.id.as_str()) {
                        (AnchorValue::Distribution { shares, .. }, "money-request-distribution") => {
                            Some(shares.clone())
                        }
                        _ => None,
                    })
                    .ok_or_else(|| BadInput("the shipped 11-20 anchor is missing".into()))?,
            };
            let (d, lo, hi) =
                stats::wasserstein_bootstrap(&i.runs, &reference, i.resamples, i.level, i.seed).map_err(bad)?;
            json!({ "distance": d, "ci_low": lo, "ci_high": hi, "level": i.level, "resamples": i.resamples, "seed": i.seed })
        }
        Test::Newcombe => {
            let i: NewcombeIn = parse(input)?;
            let (d, lo, hi) = stats::newcombe(i.k1, i.n1, i.k2, i.n2, i.alpha).map_err(bad)?;
            json!({ "difference": d, "low": lo, "high": hi, "alpha": i.alpha })
        }
        Test::Wilson => {
            let i: WilsonIn = parse(input)?;
            let (lo, hi) = stats::wilson(i.k, i.n, i.alpha).map_err(bad)?;
            json!({ "estimate": i.k as f64 / i.n as f64, "low": lo, "high": hi, "alpha": i.alpha })
        }
        Test::Spearman => {
            let i: TwoSamples = parse(input)?;
            json!(stats::spearman(&i.x, &i.y).map_err(bad)?)
        }
        Test::I2 => {
            let i: I2In = parse(input)?;
            json!(stats::i_squared(&i.means, &i.variances).map_err(bad)?)
        }
        Test::Kappa => {
            let i: KappaIn = parse(input)?;
            let known = i.labels.map(|l| labels("labels", l)).transpose()?;
            let (y1, y2) = (labels("y1", i.y1)?, labels("y2", i.y2)?);
            json!(stats::cohen_kappa(&y1, &y2, known.as_deref(), i.alpha).map_err(bad)?)
        }
        Test::OlsCr1 => {
            let i: OlsIn = parse(input)?;
            let clusters = labels("clusters", i.clusters)?;
            json!(stats::ols_cr1(&i.x, &i.y, &clusters, i.intercept, i.names.as_deref(), i.alpha).map_err(bad)?)
        }
        Test::FeCr1 => {
            let i: FeIn = parse(input)?;
            let groups = labels("groups", i.groups)?;
            let clusters = i.clusters.map(|c| labels("clusters", c)).transpose()?;
            json!(stats::fe_cr1(&i.x, &i.y, &groups, clusters.as_deref(), i.df, i.names.as_deref(), i.alpha)
                .map_err(bad)?)
        }
        Test::LogitAme => {
            let i: LogitIn = parse(input)?;
            let clusters = i.clusters.map(|c| labels("clusters", c)).transpose()?;
            json!(stats::logit_ame(&i.x, &i.y, clusters.as_deref(), i.intercept, i.names.as_deref(), i.alpha)
                .map_err(bad)?)
        }
        Test::Occurrence => {
            let i: OccurrenceIn = parse(input)?;
            let codes = i.codes.map(|c| labels("codes", c)).transpose()?;
            let responses = i
                .responses
                .into_iter()
                .enumerate()
                .map(|(k, r)| labels(&format!("responses[{k}]"), r))
                .collect::<Result<Vec<_>, _>>()?;
            json!(stats::occurrence(&responses, codes.as_deref(), i.alpha).map_err(bad)?)
        }
        Test::ProfileRange => {
            let i: ProfileRangeIn = parse(input)?;
            json!(agora_profile::score::range::measure_range(&i.reference, &i.checked).map_err(profile_bad)?)
        }
        Test::ProfileMeasure => {
            let i: ProfileMeasureIn = parse(input)?;
            let versions =
                agora_profile::score::measure::Versions::from_json(i.measure, i.versions).map_err(profile_bad)?;
            let mut answer = json!(agora_profile::score::measure::profile_measure(&versions).map_err(profile_bad)?);
            answer["measure"] = json!(i.measure);
            answer
        }
        Test::ProfileCombine => profile_combine(parse(input)?)?,
        Test::GrOpen => gr_open(parse(input)?)?,
        Test::GrBinary => {
            let i: GrBinaryIn = parse(input)?;
            json!(agora_profile::score::gr_binary::binary_comparison(i.reference, i.check, i.alpha)
                .map_err(profile_bad)?)
        }
        Test::SamplesPerArm => samples_per_arm(parse(input)?)?,
    })
}

/// Reads stdin and prints the answer.
pub fn main(test: Test) -> anyhow::Result<()> {
    let mut input = String::new();
    std::io::stdin().read_to_string(&mut input).map_err(|e| BadInput(format!("stdin: {e}")))?;
    let out = run(test, &input)?;
    println!("{}", serde_json::to_string_pretty(&out)?);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The raw two-sided exact p of `x` against `y`, through `agora stats mann-whitney`.
    fn raw_p(x: &[f64], y: &[f64]) -> f64 {
        let out = run(Test::MannWhitney, &json!({ "x": x, "y": y }).to_string()).expect("mann-whitney");
        out["p_two_sided"].as_f64().expect("p")
    }

    /// Holm's adjusted value of `p` in a family of `m`, through `agora stats holm`.
    fn holm_in(p: f64, m: usize) -> f64 {
        let out = run(Test::Holm, &json!({ "p": [p], "family_size": m }).to_string()).expect("holm");
        out["adjusted"][0].as_f64().expect("adjusted")
    }

    #[test]
    fn holm_reproduces_the_papers_three_printed_adjusted_values() {
        // Llama-3.1, naming game, self-interested persona: never forming a convention (30
        // baseline runs) to always forming one (10 runs), a family of one: p_H = 2.4e-9.
        let llama = raw_p(&[1.0; 10], &[0.0; 30]);
        assert_eq!(format!("{:.1e}", holm_in(llama, 1)), "2.4e-9");
        // Qwen3-14B, repeated dilemma, swapped action order: δ = -1.00 (every cell run below
        // every baseline run), the smallest of twelve perturbation tests: p_H = 2.8e-8.
        let base: Vec<f64> = (0..30).map(|i| 0.55 + 0.01 * f64::from(i % 10)).collect();
        let qwen = raw_p(&[0.0; 10], &base);
        assert!((qwen - 2.36e-9).abs() < 0.01e-9, "{qwen}");
        assert_eq!(format!("{:.1e}", holm_in(qwen, 12)), "2.8e-8");
        // Phi-3, naming game, persona as a table: conventions in 27 of 30 baseline runs (0.90) and
        // in none of 10 (0.00), the smallest of seven tests: p_H = 4.7e-6.
        let mut formed = vec![1.0; 27];
        formed.extend([0.0; 3]);
        let phi = raw_p(&[0.0; 10], &formed);
        assert!((phi - 6.75e-7).abs() < 0.01e-7, "{phi}");
        assert_eq!(format!("{:.1e}", holm_in(phi, 7)), "4.7e-6");
        // Without a family size the family is the p values given.
        let out = run(Test::Holm, r#"{"p": [0.01, 0.04]}"#).expect("holm");
        assert_eq!(out["adjusted"], json!([0.02, 0.04]));
        let e = run(Test::Holm, r#"{"p": [0.01, 0.04], "family_size": 1}"#).expect_err("too small");
        assert!(e.0.contains("family_size: 1 is smaller than the 2 p values given"), "{}", e.0);
    }
}
