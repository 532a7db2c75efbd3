//! The fits of the dependency estimate: the linear probability model with prompt fixed effects
//! and the logit with average marginal effects, per stated value.

use super::*;

/// Number of prompts within which `f` takes more than one value.
pub(super) fn varying_prompts(obs: &[Observation], f: impl Fn(&Observation) -> f64) -> usize {
    let mut seen: BTreeMap<&str, (f64, bool)> = BTreeMap::new();
    for o in obs {
        let v = f(o);
        let e = seen.entry(o.prompt.as_str()).or_insert((v, false));
        e.1 |= e.0 != v;
    }
    seen.values().filter(|(_, varies)| *varies).count()
}

/// One value's estimate by one estimator, before the group's labels are attached.
#[derive(Clone, Debug, PartialEq)]
pub struct Estimate {
    /// The value code.
    pub value: String,
    /// `estimated`, `not identified` or `not estimated`.
    pub status: &'static str,
    /// Why there is no estimate (empty for an estimate).
    pub reason: String,
    /// φ̂, or the average marginal effect, with its inference.
    pub fit: Coefficient,
    /// Prompts in the fit.
    pub n_prompts: usize,
    /// Observations in the fit.
    pub n_replicates: usize,
    /// Prompts (of the fit's observations) within which the value varies.
    pub prompts_varying: usize,
}

impl Estimate {
    fn without(value: &str, status: &'static str, reason: String, n: (usize, usize), varying: usize) -> Estimate {
        Estimate {
            value: value.to_string(),
            status,
            reason,
            fit: Coefficient::default(),
            n_prompts: n.0,
            n_replicates: n.1,
            prompts_varying: varying,
        }
    }
}

/// The column named in a collinearity refusal, if the error is one.
pub(super) fn collinear_column<'a>(e: &StatsError, names: &'a [String]) -> Option<&'a String> {
    match e {
        StatsError::OutOfRange("x", m) if m.contains("collinear") => {
            names.iter().find(|n| m.contains(&format!("column `{n}`")))
        }
        _ => None,
    }
}

/// The values that vary within some prompt of `obs`, and each value's count of such prompts.
pub(super) fn identified(obs: &[Observation], values: &[String]) -> Vec<usize> {
    (0..values.len()).map(|k| varying_prompts(obs, |o| f64::from(u8::from(o.w[k])))).collect()
}

/// A fit's estimates, standard errors, t or z, p and interval ends, aligned with its values.
type Fit = (Vec<f64>, Vec<f64>, Vec<f64>, Vec<f64>, Vec<f64>, Vec<f64>);

/// Fits `fit_with` over the identified values, dropping (and reporting) a value the fit names as
/// collinear with the values before it, until a fit succeeds or fails for another reason.
pub(super) fn fit_values(
    obs: &[Observation],
    values: &[String],
    not_identified_reason: &str,
    fit_with: impl Fn(&[usize]) -> Result<Fit, StatsError>,
) -> Vec<Estimate> {
    let n = (obs.iter().map(|o| o.prompt.as_str()).collect::<BTreeSet<_>>().len(), obs.len());
    let varying = identified(obs, values);
    let mut status: Vec<Option<(&'static str, String)>> =
        varying.iter().map(|v| (*v == 0).then(|| ("not identified", not_identified_reason.to_string()))).collect();
    let fit = loop {
        let used: Vec<usize> = (0..values.len()).filter(|k| status[*k].is_none()).collect();
        if used.is_empty() {
            break None;
        }
        match fit_with(&used) {
            Ok(f) => break Some((used, f)),
            Err(e) => {
                let names: Vec<String> = used.iter().map(|k| values[*k].clone()).collect();
                match collinear_column(&e, &names).and_then(|c| values.iter().position(|v| v == c)) {
                    Some(k) => {
                        status[k] = Some((
                            "not identified",
                            "its variation within prompts is a linear combination of the values before it".into(),
                        ));
                    }
                    None => {
                        for k in used {
                            status[k] = Some(("not estimated", e.to_string()));
                        }
                        break None;
                    }
                }
            }
        }
    };
    let mut out: Vec<Estimate> = values
        .iter()
        .enumerate()
        .map(|(k, v)| {
            let (s, why) = status[k].clone().unwrap_or(("estimated", String::new()));
            Estimate::without(v, s, why, n, varying[k])
        })
        .collect();
    if let Some((used, (coef, se, stat, p, lo, hi))) = fit {
        for (j, k) in used.into_iter().enumerate() {
            out[k].fit = Coefficient {
                coef: Some(coef[j]),
                se: Some(se[j]),
                stat: Some(stat[j]),
                p: Some(p[j]),
                ci_low: Some(lo[j]),
                ci_high: Some(hi[j]),
            };
        }
    }
    out
}

/// The linear probability model with prompt fixed effects (within-prompt demeaning), CR1
/// clustered by prompt: one estimate per value (see the [module documentation](super)).
pub fn lpm(obs: &[Observation], values: &[String]) -> Vec<Estimate> {
    let y: Vec<f64> = obs.iter().map(|o| o.y).collect();
    let groups: Vec<&str> = obs.iter().map(|o| o.prompt.as_str()).collect();
    fit_values(obs, values, "it does not vary within any prompt: the prompt fixed effects absorb it", |used| {
        let x: Vec<Vec<f64>> =
            obs.iter().map(|o| used.iter().map(|k| f64::from(u8::from(o.w[*k]))).collect()).collect();
        let names: Vec<String> = used.iter().map(|k| values[*k].clone()).collect();
        let f = fe_cr1::<&str, &str>(&x, &y, &groups, None, FeDf::Auto, Some(&names), ALPHA)?.fit;
        Ok((f.coef, f.se, f.t, f.p, f.ci_low, f.ci_high))
    })
}

/// The logit robustness check: y on the values and a dummy per prompt whose action varies, CR1
/// clustered by prompt, the values' average marginal effects (see the [module
/// documentation](super)). Prompts whose action does not vary are left out of it.
pub fn logit(obs: &[Observation], values: &[String]) -> Vec<Estimate> {
    let mut by_prompt: BTreeMap<&str, BTreeSet<u64>> = BTreeMap::new();
    for o in obs {
        by_prompt.entry(o.prompt.as_str()).or_default().insert(o.y.to_bits());
    }
    let kept: Vec<Observation> = obs.iter().filter(|o| by_prompt[o.prompt.as_str()].len() > 1).cloned().collect();
    let prompts: Vec<&str> = kept.iter().map(|o| o.prompt.as_str()).collect::<BTreeSet<_>>().into_iter().collect();
    let y: Vec<f64> = kept.iter().map(|o| o.y).collect();
    let clusters: Vec<&str> = kept.iter().map(|o| o.prompt.as_str()).collect();
    let reason = "it does not vary within any prompt whose action varies: the prompt dummies absorb it";
    if kept.is_empty() {
        let n = (0, 0);
        return values
            .iter()
            .map(|v| Estimate::without(v, "not estimated", "the action does not vary within any prompt".into(), n, 0))
            .collect();
    }
    fit_values(&kept, values, reason, |used| {
        // The dummies first: they are independent, so a collinearity refusal names a value.
        let x: Vec<Vec<f64>> = kept
            .iter()
            .map(|o| {
                prompts
                    .iter()
                    .map(|p| f64::from(u8::from(*p == o.prompt.as_str())))
                    .chain(used.iter().map(|k| f64::from(u8::from(o.w[*k]))))
                    .collect()
            })
            .collect();
        let names: Vec<String> = prompts
            .iter()
            .enumerate()
            .map(|(i, _)| format!("prompt {i}"))
            .chain(used.iter().map(|k| values[*k].clone()))
            .collect();
        let f = logit_ame(&x, &y, Some(&clusters), false, Some(&names), ALPHA)?;
        let pick = |v: &[f64]| -> Vec<f64> { v[prompts.len()..].to_vec() };
        Ok((pick(&f.ame), pick(&f.ame_se), pick(&f.ame_z), pick(&f.ame_p), pick(&f.ame_ci_low), pick(&f.ame_ci_high)))
    })
}
