//! How often each code is stated: the share of responses whose reasoning states it at least
//! once, with Wilson intervals.
//!
//! # Formula
//! A response's value vector W_i records which codes appear at least once among its sentence
//! codes; the occurrence of code c is Ê(W_ic) = (1/n) Σ_i W_ic (the SUVA audit paper, §240.7.1), with the
//! Wilson score interval of that binomial share ([`super::wilson`]). The interval treats
//! responses as independent; replicates of one prompt are not, so read it as a lower bound on
//! the uncertainty when prompts repeat.
//!
//! # References
//! Leng & Yuan (2024) "Do LLM agents exhibit social behavior?" (occurrence of stated values);
//! Wilson (1927) JASA 22:209–212. statsmodels: `proportion_confint(count, n, method='wilson')`.

use std::fmt::Debug;

use serde::Serialize;

use super::ols_cr1::check_alpha;
use super::proportion::wilson;
use super::StatsError;

/// Occurrence shares; the vectors align with `codes`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Occurrence<L> {
    /// Number of responses.
    pub n: usize,
    /// The codes, as given or sorted.
    pub codes: Vec<L>,
    /// Responses stating each code at least once.
    pub count: Vec<u64>,
    /// count / n.
    pub share: Vec<f64>,
    /// Lower ends of the 100(1−α) % Wilson intervals.
    pub low: Vec<f64>,
    /// Upper ends of the 100(1−α) % Wilson intervals.
    pub high: Vec<f64>,
    /// α of the intervals.
    pub alpha: f64,
}

/// Occurrence of each code over `responses` (each the codes of one response's sentences,
/// repeats allowed); over `codes` when given (every stated code must be among them), else over
/// the sorted codes stated.
pub fn occurrence<L: Ord + Clone + Debug>(
    responses: &[Vec<L>],
    codes: Option<&[L]>,
    alpha: f64,
) -> Result<Occurrence<L>, StatsError> {
    if responses.is_empty() {
        return Err(StatsError::TooFew("responses", 1));
    }
    check_alpha(alpha)?;
    let codes: Vec<L> = match codes {
        Some(c) => {
            let mut seen: Vec<&L> = c.iter().collect();
            seen.sort();
            if let Some(w) = seen.windows(2).find(|w| w[0] == w[1]) {
                return Err(StatsError::OutOfRange("codes", format!("{:?} appears more than once", w[0])));
            }
            if c.is_empty() {
                return Err(StatsError::TooFew("codes", 1));
            }
            c.to_vec()
        }
        None => {
            let mut all: Vec<L> = responses.iter().flatten().cloned().collect();
            all.sort();
            all.dedup();
            all
        }
    };
    let mut count = vec![0u64; codes.len()];
    for (i, r) in responses.iter().enumerate() {
        if let Some(v) = r.iter().find(|v| !codes.contains(v)) {
            return Err(StatsError::OutOfRange("responses", format!("response {i} states {v:?}, not among `codes`")));
        }
        for (c, k) in codes.iter().zip(count.iter_mut()) {
            if r.contains(c) {
                *k += 1;
            }
        }
    }
    let n = responses.len();
    let mut low = Vec::with_capacity(codes.len());
    let mut high = Vec::with_capacity(codes.len());
    for k in &count {
        let (lo, hi) = wilson(*k, n as u64, alpha)?;
        low.push(lo);
        high.push(hi);
    }
    Ok(Occurrence { n, share: count.iter().map(|k| *k as f64 / n as f64).collect(), codes, count, low, high, alpha })
}
