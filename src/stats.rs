//! `agora stats TEST`: JSON on stdin, JSON on stdout, for ad-hoc use by researchers.

use std::io::Read;

use agora_analysis::anchors::{AnchorTable, AnchorValue};
use agora_analysis::stats;
use serde::Deserialize;
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

fn alpha05() -> f64 {
    0.05
}
fn level95() -> f64 {
    0.95
}
fn resamples() -> usize {
    2000
}

fn parse<T: for<'de> Deserialize<'de>>(input: &str) -> Result<T, BadInput> {
    serde_json::from_str(input).map_err(|e| BadInput(format!("stdin: {e}")))
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
            answer
        }
        Test::Holm => {
            let i: HolmIn = parse(input)?;
            json!({ "adjusted": stats::holm(&i.p).map_err(bad)? })
        }
        Test::Wasserstein1120 => {
            let i: WassIn = parse(input)?;
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
