//! General sweeps: the points of a block's `Grid` or `Zip` over its environment's parameters.
//!
//! A point's environment is the block's with each swept field replaced: the environment is
//! serialised to JSON, the value set at the field's dotted path, and the result deserialised
//! and validated as a study's environment is. Every game's parameters deny unknown fields, so
//! a path that names no field is refused by the game's own parameter type, which lists the
//! fields it accepts; no game needs code of its own to be swept.

use agora_environments::EnvSpec;
use serde_json::Value;

use crate::limits::MAX_PLAN_RUNS;
use crate::study::{Param, SweepValue};

/// One point of a sweep: its label (`rounds=5 memory=1`) and its environment.
#[derive(Clone, Debug, PartialEq)]
pub struct Point {
    /// The swept fields and their values, in the sweep's order, as `path=value` joined by
    /// spaces; recorded with every run of the point.
    pub label: String,
    /// The block's environment with the point's values set.
    pub environment: EnvSpec,
}

/// What is wrong with a sweep: the field under the block's `sweep` (`[1].path`, or empty for
/// the sweep as a whole) and the message.
pub type SweepError = (String, String);

/// The points of a `Grid` (every combination, the first parameter slowest) or a `Zip`
/// (position by position) over `params`, applied to `base`.
pub fn points(params: &[Param], zip: bool, base: &EnvSpec) -> Result<Vec<Point>, SweepError> {
    if params.is_empty() {
        return Err((String::new(), "name at least one parameter: `Param(path: \"...\", values: [...])`".into()));
    }
    let base_json = serde_json::to_value(base).map_err(|e| (String::new(), e.to_string()))?;
    let mut lists: Vec<Vec<(Value, String)>> = Vec::with_capacity(params.len());
    for (j, p) in params.iter().enumerate() {
        let at = |f: &str| format!("[{j}].{f}");
        if let Some(i) = params[..j].iter().position(|q| q.path == p.path) {
            return Err((at("path"), format!("`{}` is swept twice (also by parameter {i})", p.path)));
        }
        let values = match (&p.range, p.values.is_empty()) {
            (Some(_), false) => return Err((at("range"), "give `values` or `range`, not both".into())),
            (None, true) => return Err((at("values"), "name at least one value (or give a `range`)".into())),
            (None, false) => p.values.clone(),
            (Some(r), true) => match r.len() {
                None => {
                    return Err((
                        at("range"),
                        format!("needs from <= to and step > 0, got from {}, to {}, step {}", r.from, r.to, r.step),
                    ))
                }
                Some(n) if n > MAX_PLAN_RUNS as f64 => {
                    return Err((
                        at("range"),
                        format!("gives {n:.3e} values, each a condition; a plan holds at most {MAX_PLAN_RUNS} runs"),
                    ))
                }
                Some(_) => r.values(),
            },
        };
        // Each value is tried alone on the block's environment, so that a value the field
        // refuses is reported at its own index.
        let mut list = Vec::with_capacity(values.len());
        for (k, v) in values.iter().enumerate() {
            let json = v.to_json();
            let field = if p.range.is_some() { at("range") } else { at(&format!("values[{k}]")) };
            apply(&base_json, &[(p.path.as_str(), &json)]).map_err(|(unknown, m)| {
                if unknown {
                    (at("path"), m)
                } else {
                    (field, format!("`{}` = {}: {m}", p.path, label_value(v)))
                }
            })?;
            list.push((json, label_value(v)));
        }
        lists.push(list);
    }
    let count = if zip {
        let n = lists[0].len();
        if let Some(j) = lists.iter().position(|l| l.len() != n) {
            return Err((
                format!("[{j}]"),
                format!(
                    "a zip takes its parameters' values together: {} values here, {n} in the first",
                    lists[j].len()
                ),
            ));
        }
        n as f64
    } else {
        lists.iter().map(|l| l.len() as f64).product()
    };
    if count > MAX_PLAN_RUNS as f64 {
        return Err((
            String::new(),
            format!(
                "{count:.3e} points, each a condition of at least one run; a plan holds at most {MAX_PLAN_RUNS} runs"
            ),
        ));
    }
    let combos: Vec<Vec<usize>> = if zip {
        (0..lists[0].len()).map(|k| vec![k; lists.len()]).collect()
    } else {
        let mut all = vec![Vec::new()];
        for l in &lists {
            all = all.into_iter().flat_map(|c| (0..l.len()).map(move |k| [c.clone(), vec![k]].concat())).collect();
        }
        all
    };
    let mut out = Vec::with_capacity(combos.len());
    for combo in combos {
        let set: Vec<(&str, &Value)> =
            params.iter().zip(&combo).zip(&lists).map(|((p, &k), l)| (p.path.as_str(), &l[k].0)).collect();
        let label = params
            .iter()
            .zip(&combo)
            .zip(&lists)
            .map(|((p, &k), l)| format!("{}={}", p.path, l[k].1))
            .collect::<Vec<_>>();
        let label = label.join(" ");
        let environment = apply(&base_json, &set).map_err(|(_, m)| (String::new(), format!("point `{label}`: {m}")))?;
        out.push(Point { label, environment });
    }
    Ok(out)
}

/// A value as a label writes it.
fn label_value(v: &SweepValue) -> String {
    v.to_string()
}

/// The environment with each `(path, value)` set; on error, whether a path named no field,
/// and the message.
fn apply(base: &Value, set: &[(&str, &Value)]) -> Result<EnvSpec, (bool, String)> {
    let mut json = base.clone();
    // An environment serialises as `{"Game": {parameters}}`.
    let Some(params) = json.as_object_mut().and_then(|o| o.values_mut().next()) else {
        return Err((false, "the environment has no parameters to sweep".into()));
    };
    let mut unknown = false;
    for (path, value) in set {
        let mut at = &mut *params;
        let parts: Vec<&str> = path.split('.').collect();
        for (i, part) in parts.iter().enumerate() {
            if part.is_empty() {
                return Err((true, format!("`{path}` is not a field path (names joined by dots)")));
            }
            if at.is_null() {
                // An optional group left out (the naming game's `tipping`): its fields take
                // their defaults.
                *at = Value::Object(serde_json::Map::new());
            }
            let Some(o) = at.as_object_mut() else {
                return Err((true, format!("`{}` is a value, not a group of fields", parts[..i].join("."))));
            };
            if !o.contains_key(*part) {
                unknown = true;
            }
            if i + 1 == parts.len() {
                o.insert((*part).to_string(), (*value).clone());
                break;
            }
            at = o.entry((*part).to_string()).or_insert(Value::Null);
        }
    }
    let env: EnvSpec = serde_json::from_value(json).map_err(|e| {
        let m = e.to_string();
        // A field the parameters left out when serialising (one at its default) is still
        // known to them: only the game's own refusal says a path names nothing.
        (unknown && m.contains("unknown field"), m)
    })?;
    env.validate().map_err(|e| (false, e.to_string()))?;
    Ok(env)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::study::Range;

    fn param(path: &str, values: Vec<SweepValue>) -> Param {
        Param { path: path.into(), values, range: None }
    }

    fn pd() -> EnvSpec {
        serde_json::from_value(serde_json::json!({"PrisonersDilemma": {"rounds": 10, "memory": 5}})).expect("pd")
    }

    #[test]
    fn a_grid_takes_every_combination_and_a_zip_takes_positions() {
        let ps = [
            param("rounds", vec![SweepValue::Integer(5), SweepValue::Integer(10)]),
            param("memory", vec![SweepValue::Integer(1), SweepValue::Integer(3)]),
        ];
        let grid = points(&ps, false, &pd()).expect("grid");
        let labels: Vec<&str> = grid.iter().map(|p| p.label.as_str()).collect();
        assert_eq!(labels, ["rounds=5 memory=1", "rounds=5 memory=3", "rounds=10 memory=1", "rounds=10 memory=3"]);
        let zip = points(&ps, true, &pd()).expect("zip");
        let labels: Vec<&str> = zip.iter().map(|p| p.label.as_str()).collect();
        assert_eq!(labels, ["rounds=5 memory=1", "rounds=10 memory=3"]);
        let want: EnvSpec =
            serde_json::from_value(serde_json::json!({"PrisonersDilemma": {"rounds": 10, "memory": 3}})).expect("pd");
        assert_eq!(zip[1].environment, want);
    }

    #[test]
    fn unknown_paths_and_refused_values_name_their_field() {
        let e = points(&[param("roundz", vec![SweepValue::Integer(5)])], false, &pd()).expect_err("path");
        assert_eq!(e.0, "[0].path");
        assert!(e.1.contains("rounds") && e.1.contains("memory"), "{}", e.1);
        let e = points(&[param("rounds", vec![SweepValue::Integer(5), SweepValue::Integer(0)])], false, &pd())
            .expect_err("zero rounds");
        assert_eq!(e.0, "[0].values[1]", "{}", e.1);
        let e = points(&[param("rounds", vec![SweepValue::Text("many".into())])], false, &pd()).expect_err("text");
        assert_eq!(e.0, "[0].values[0]", "{}", e.1);
        let e = points(&[param("rounds.deep", vec![SweepValue::Integer(1)])], false, &pd()).expect_err("deep");
        assert_eq!(e.0, "[0].path", "{}", e.1);
    }

    #[test]
    fn a_range_gives_whole_numbers_to_integer_fields() {
        let p = Param { path: "rounds".into(), values: vec![], range: Some(Range { from: 1.0, to: 4.0, step: 1.0 }) };
        let pts = points(&[p], false, &pd()).expect("range");
        assert_eq!(pts.len(), 4);
        assert_eq!(pts[3].label, "rounds=4");
    }
}
