//! The range computation per measure, end to end: each of the eleven question versions'
//! components (condition means, point scores, match counts or choice distributions) and its
//! checks → the version's reference result u_q and its checked results z → centre, inner and
//! outer range.
//!
//! # Formula (the profile methods §M04 steps 1–3, lines 113–127)
//! Step 1 computes u_q with the measure's fixed weights ([`super::replace`], or D1/D3's
//! nonlinear scores in [`super::consistency`]); step 3 recomputes each check's z by local
//! replacement at the version's scheduled condition; [`super::range::measure_range`] then gives
//! M = mean u_q, I = [min u_q, max u_q], O = [min(I_low, z…), max(I_high, z…)]. In Category A
//! this runs per task (measure `a`); [`super::combine`] weights the tasks.
//!
//! The versions are BASE first, then C01–C10. Which operations and conditions are scheduled
//! (A-S1, A-S2, B-S1, C-S1, D-S1) is not checked here: each check names its condition.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::consistency::{d1_replace, d1_result, d3_replace, d3_result, Menus};
use super::range::{measure_range, MeasureRange};
use super::replace::{b4_replace, b4_result, Linear};
use super::{Condition, ProfileError, VERSIONS};

/// The measures whose ranges this module computes (Category A per task).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Measure {
    /// One Category A task (three condition means).
    A,
    /// B1, conditional cooperation.
    B1,
    /// B2, retaliation.
    B2,
    /// B3, forgiveness.
    B3,
    /// B4, adaptation (match counts).
    B4,
    /// C1, risk taking.
    C1,
    /// C2, comfort with unknown odds.
    C2,
    /// C3, willingness to wait.
    C3,
    /// C4, the pull of now.
    C4,
    /// D1, how preferences fit together (nonlinear).
    D1,
    /// D2, choosing the better offer.
    D2,
    /// D3, the effect of an extra option (nonlinear).
    D3,
}

/// A version of a measure in [`Linear`]: its points and its checks.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinearVersion {
    /// The version's point scores, in the measure's order (see [`super::replace`]).
    pub points: Vec<f64>,
    /// Its checks (none for a version without one).
    #[serde(default)]
    pub checks: Vec<LinearCheck>,
}

/// One check of a [`LinearVersion`].
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinearCheck {
    /// Where the check was made.
    pub condition: Condition,
    /// The retested points' checked scores, in [`Linear::checked_points`] order.
    pub values: Vec<f64>,
}

/// A B4 version: its matches H of its S scored choices and its checks.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct B4Version {
    /// H: scored choices (rounds 8–12) that match the opponent.
    pub matches: u32,
    /// S: the scored choices the schedule holds (450 under the full protocol, the default).
    #[serde(default = "b4_scored")]
    pub scored: u32,
    /// Its checks.
    #[serde(default)]
    pub checks: Vec<B4Check>,
}

/// One B4 check: rounds 8 and 12 at one payoff, both directions, fifteen episodes (60
/// positions).
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct B4Check {
    /// The payoff condition checked.
    pub condition: Condition,
    /// H^ref: reference matches at the 60 positions.
    pub reference_matches: u32,
    /// H^check: matches under the check at the same positions.
    pub check_matches: u32,
    /// The positions retested (60 under the full protocol, the default).
    #[serde(default = "b4_checked")]
    pub checked: u32,
}

fn b4_scored() -> u32 {
    super::replace::B4_SCORED
}

fn b4_checked() -> u32 {
    super::replace::B4_CHECKED
}

/// A D1 version: six triples [p_XY, p_YZ, p_XZ] (P1 low, middle, high; P2 low, middle, high).
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct D1Version {
    /// The six triples of choice fractions.
    pub points: Vec<[f64; 3]>,
    /// Its checks.
    #[serde(default)]
    pub checks: Vec<D1Check>,
}

/// One D1 check: P1's three pairs retested at one stake.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct D1Check {
    /// The stake checked.
    pub condition: Condition,
    /// The checked [p_XY, p_YZ, p_XZ].
    pub values: [f64; 3],
}

/// A D3 version: six set-and-stake menus (P1 low, middle, high; P2 low, middle, high).
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct D3Version {
    /// The six menus' choice fractions.
    pub points: Vec<Menus>,
    /// Its checks.
    #[serde(default)]
    pub checks: Vec<D3Check>,
}

/// One D3 check: P1's three menus retested at one stake.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct D3Check {
    /// The stake checked.
    pub condition: Condition,
    /// The checked X/Y menu, [p_X, p_Y].
    pub two: [f64; 2],
    /// The checked X/Y/DX menu, [p_X, p_Y].
    pub dx: [f64; 2],
    /// The checked X/Y/DY menu, [p_X, p_Y].
    pub dy: [f64; 2],
}

/// The eleven versions of one measure, typed by its kind.
#[derive(Clone, Debug, PartialEq)]
pub enum Versions {
    /// A weighted-sum measure.
    Linear(Linear, Vec<LinearVersion>),
    /// B4.
    B4(Vec<B4Version>),
    /// D1.
    D1(Vec<D1Version>),
    /// D3.
    D3(Vec<D3Version>),
}

fn parse_all<T: for<'de> Deserialize<'de>>(versions: Vec<Value>) -> Result<Vec<T>, ProfileError> {
    versions
        .into_iter()
        .enumerate()
        .map(|(q, v)| serde_json::from_value(v).map_err(|e| ProfileError::new(format!("versions[{q}]"), e.to_string())))
        .collect()
}

impl Versions {
    /// Reads `versions` (JSON objects) as versions of `measure`, naming the version that does
    /// not parse.
    pub fn from_json(measure: Measure, versions: Vec<Value>) -> Result<Versions, ProfileError> {
        Ok(match measure {
            Measure::B4 => Versions::B4(parse_all(versions)?),
            Measure::D1 => Versions::D1(parse_all(versions)?),
            Measure::D3 => Versions::D3(parse_all(versions)?),
            Measure::A => Versions::Linear(Linear::A, parse_all(versions)?),
            Measure::B1 => Versions::Linear(Linear::B1, parse_all(versions)?),
            Measure::B2 => Versions::Linear(Linear::B2, parse_all(versions)?),
            Measure::B3 => Versions::Linear(Linear::B3, parse_all(versions)?),
            Measure::C1 => Versions::Linear(Linear::C1, parse_all(versions)?),
            Measure::C2 => Versions::Linear(Linear::C2, parse_all(versions)?),
            Measure::C3 => Versions::Linear(Linear::C3, parse_all(versions)?),
            Measure::C4 => Versions::Linear(Linear::C4, parse_all(versions)?),
            Measure::D2 => Versions::Linear(Linear::D2, parse_all(versions)?),
        })
    }

    fn len(&self) -> usize {
        match self {
            Versions::Linear(_, v) => v.len(),
            Versions::B4(v) => v.len(),
            Versions::D1(v) => v.len(),
            Versions::D3(v) => v.len(),
        }
    }
}

/// A measure's reference and checked results per version, and its centre and ranges.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MeasureProfile {
    /// u_q for q = BASE, C01, …, C10.
    pub reference: Vec<f64>,
    /// Per version, its checks' results z, in the order given.
    pub checked: Vec<Vec<f64>>,
    /// M, I, O and the counts.
    #[serde(flatten)]
    pub range: MeasureRange,
}

/// Prefixes an error's field with the place it came from.
fn at(prefix: String) -> impl Fn(ProfileError) -> ProfileError {
    move |e| ProfileError::new(format!("{prefix}.{}", e.field), e.reason)
}

/// Reference results, checked results and ranges of one measure from its eleven versions.
pub fn profile_measure(versions: &Versions) -> Result<MeasureProfile, ProfileError> {
    if versions.len() != VERSIONS {
        return Err(ProfileError::new(
            "versions",
            format!("needs the eleven question versions (BASE, C01–C10), got {}", versions.len()),
        ));
    }
    let mut reference = Vec::with_capacity(VERSIONS);
    let mut checked = Vec::with_capacity(VERSIONS);
    match versions {
        Versions::Linear(m, vs) => {
            for (q, v) in vs.iter().enumerate() {
                reference.push(m.version_result(&v.points).map_err(at(format!("versions[{q}]")))?);
                let z = v.checks.iter().enumerate().map(|(k, c)| {
                    m.replace(&v.points, c.condition, &c.values).map_err(at(format!("versions[{q}].checks[{k}]")))
                });
                checked.push(z.collect::<Result<Vec<_>, _>>()?);
            }
        }
        Versions::B4(vs) => {
            for (q, v) in vs.iter().enumerate() {
                reference.push(b4_result(v.matches, v.scored).map_err(at(format!("versions[{q}]")))?);
                let z = v.checks.iter().enumerate().map(|(k, c)| {
                    b4_replace(v.matches, v.scored, c.reference_matches, c.check_matches, c.checked)
                        .map_err(at(format!("versions[{q}].checks[{k}]")))
                });
                checked.push(z.collect::<Result<Vec<_>, _>>()?);
            }
        }
        Versions::D1(vs) => {
            for (q, v) in vs.iter().enumerate() {
                reference.push(d1_result(&v.points).map_err(at(format!("versions[{q}]")))?);
                let z = v.checks.iter().enumerate().map(|(k, c)| {
                    d1_replace(&v.points, c.condition, c.values).map_err(|e| {
                        // The check's own triple is reported as `values[i]`.
                        let field = match e.field.strip_prefix('p') {
                            Some(index) => format!("values{index}"),
                            None => e.field,
                        };
                        ProfileError::new(format!("versions[{q}].checks[{k}].{field}"), e.reason)
                    })
                });
                checked.push(z.collect::<Result<Vec<_>, _>>()?);
            }
        }
        Versions::D3(vs) => {
            for (q, v) in vs.iter().enumerate() {
                reference.push(d3_result(&v.points).map_err(at(format!("versions[{q}]")))?);
                let z = v.checks.iter().enumerate().map(|(k, c)| {
                    let menus = Menus { two: c.two, dx: c.dx, dy: c.dy };
                    d3_replace(&v.points, c.condition, menus).map_err(at(format!("versions[{q}].checks[{k}]")))
                });
                checked.push(z.collect::<Result<Vec<_>, _>>()?);
            }
        }
    }
    let all: Vec<f64> = checked.iter().flatten().copied().collect();
    if all.is_empty() {
        return Err(ProfileError::new(
            "versions[].checks",
            "no version has a check: the outer range needs the scheduled checks (§M04 step 3)",
        ));
    }
    let range = measure_range(&reference, &all)?;
    Ok(MeasureProfile { reference, checked, range })
}

#[cfg(test)]
mod tests {
    use super::super::testing::close;
    use super::*;
    use serde_json::json;

    fn linear(points: &[f64], checks: &[(Condition, &[f64])]) -> LinearVersion {
        LinearVersion {
            points: points.to_vec(),
            checks: checks.iter().map(|(c, v)| LinearCheck { condition: *c, values: v.to_vec() }).collect(),
        }
    }

    #[test]
    fn a2_public_goods_task_over_eleven_versions() {
        // The profile methods §A2 lines 320–333: BASE's public-goods means 20, 40 and 60 give u=40; "the other
        // ten question versions have task results averaging … 18"; "M_PGG=(40+10×18)/11=20";
        // "a presentation check of the original public-goods question changes its
        // middle-condition mean from 40 to 70 … z=(20+70+60)/3=50 … the A2 center remains 40
        // because centers use the reference results." Each of the ten other versions here has
        // condition means 18, 18, 18 (result 18).
        let mut vs = vec![linear(&[20.0, 40.0, 60.0], &[(Condition::Middle, &[70.0])])];
        vs.extend((0..10).map(|_| linear(&[18.0, 18.0, 18.0], &[])));
        let p = profile_measure(&Versions::Linear(Linear::A, vs)).expect("profile");
        close(p.reference[0], 40.0, 1e-12, "u_0");
        close(p.range.centre, 20.0, 1e-12, "M_PGG");
        close(p.checked[0][0], 50.0, 1e-12, "z");
        assert_eq!(p.range.inner, [18.0, 40.0]);
        assert_eq!(p.range.outer, [18.0, 50.0]);
        assert_eq!(p.range.checks, 1);
    }

    #[test]
    fn b4_and_d1_from_json() {
        // §B4 line 628 (300 of 450; a check from 30 to 36 → 68) and §D1 line 875 (12, 12, 3 of
        // 15 → v = 60, u ≈ 93.33; check 9, 9, 3 → 100), every version alike.
        let b4 =
            json!({"matches": 300, "checks": [{"condition": "middle", "reference_matches": 30, "check_matches": 36}]});
        let v = Versions::from_json(Measure::B4, vec![b4; 11]).expect("parses");
        let p = profile_measure(&v).expect("profile");
        close(p.range.centre, 100.0 * 300.0 / 450.0, 1e-9, "B4 M");
        assert_eq!(p.range.checks, 11);
        close(p.range.outer[1], 68.0, 1e-9, "B4 O high");

        let (a, b) = ([0.8, 0.8, 0.2], [0.6, 0.6, 0.2]);
        let d1 = json!({"points": [a, b, b, b, b, b], "checks": [{"condition": "low", "values": b}]});
        let v = Versions::from_json(Measure::D1, vec![d1; 11]).expect("parses");
        let p = profile_measure(&v).expect("profile");
        close(p.range.centre, 93.33, 0.005, "D1 M");
        close(p.range.outer[1], 100.0, 1e-9, "D1 O high");
    }

    #[test]
    fn refuses_bad_input_naming_the_field() {
        let ok = json!({"points": [20, 40, 60], "checks": [{"condition": "middle", "values": [70]}]});
        let v = Versions::from_json(Measure::A, vec![ok.clone(); 10]).expect("parses");
        assert_eq!(profile_measure(&v).unwrap_err().field, "versions");
        let mut all = vec![ok.clone(); 11];
        all[4] = json!({"points": [20, 40, 60], "checks": [{"condition": "middle", "values": [70, 1]}]});
        let v = Versions::from_json(Measure::A, all).expect("parses");
        assert_eq!(profile_measure(&v).unwrap_err().field, "versions[4].checks[0].values");
        let mut all = vec![ok.clone(); 11];
        all[2] = json!({"points": [20, 40]});
        let v = Versions::from_json(Measure::A, all).expect("parses");
        assert_eq!(profile_measure(&v).unwrap_err().field, "versions[2].points");
        let mut all = vec![ok.clone(); 11];
        all[7] = json!({"points": [20, 40, 60], "checks": [{"condition": "centre", "values": [70]}]});
        assert_eq!(Versions::from_json(Measure::A, all).unwrap_err().field, "versions[7]");
        let none = json!({"points": [20, 40, 60]});
        let v = Versions::from_json(Measure::A, vec![none; 11]).expect("parses");
        assert_eq!(profile_measure(&v).unwrap_err().field, "versions[].checks");
        let half = [0.5, 0.5, 0.5];
        let d1 = json!({"points": [half, half, half, half, half, half], "checks": [{"condition": "low", "values": [0.5, 2, 0.5]}]});
        let v = Versions::from_json(Measure::D1, vec![d1; 11]).expect("parses");
        assert_eq!(profile_measure(&v).unwrap_err().field, "versions[0].checks[0].values[1]");
    }
}
