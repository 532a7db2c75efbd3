//! D1's compatibility score and D3's regularity score: the two nonlinear Category D measures,
//! whose checks replace choice distributions and recompute the whole score (the profile methods §D0
//! line 834: "For each check, replace the measured anchor distributions and recalculate the
//! entire score and aggregation. This preserves the nonlinear scoring of D1 and D3").
//!
//! # Formula
//! D1 (§D1 lines 859–871): at one option set and stake, with p_XY the fraction choosing X from
//! X/Y, p_YZ choosing Y from Y/Z and p_XZ choosing X from X/Z,
//! s = p_XY + p_YZ + 1 − p_XZ and v = 100 − 100·max(0, s − 2, 1 − s); a version's result is the
//! mean of the six v (two sets P1, P2 × three stakes). A check retests the three P1 pairs at one
//! stake: their fractions are replaced, that v recomputed and the six-score mean rebuilt
//! (line 873).
//!
//! D3 (§D3 lines 926–932): comparing the two-option menu X/Y with a three-option extension
//! (X/Y/DX or X/Y/DY), v = 100·[max(0, p_X^three − p_X^two) + max(0, p_Y^three − p_Y^two)],
//! every fraction over all fifteen answers to its menu (including the added option's); a
//! version's result is the mean of the twelve v (two extensions × two sets × three stakes). A
//! check retests the three P1 menus at one stake: their distributions are replaced, both
//! extension scores recomputed and the twelve-score mean rebuilt (line 934).
//!
//! Points are in the order P1 low, P1 middle, P1 high, P2 low, P2 middle, P2 high; a check at
//! condition c replaces point c (P1 at that stake).

use serde::Deserialize;

use super::{within, Condition, ProfileError};

/// Set-and-stake combinations per version: two option sets × three stakes (§D1 line 869).
pub const SET_STAKES: usize = 6;

/// Tolerance on the two-option menu's shares summing to one (fractions given rounded).
pub const SHARE_TOLERANCE: f64 = 1e-6;

fn fraction(field: &str, p: f64) -> Result<(), ProfileError> {
    within(field, p, 0.0, 1.0)
}

/// D1's compatibility score v from the fractions [p_XY, p_YZ, p_XZ] (§D1 lines 859 and 863).
pub fn compatibility(p: [f64; 3]) -> Result<f64, ProfileError> {
    for (i, x) in p.iter().enumerate() {
        fraction(&format!("p[{i}]"), *x)?;
    }
    let s = p[0] + p[1] + 1.0 - p[2];
    Ok(100.0 - 100.0 * 0.0_f64.max(s - 2.0).max(1.0 - s))
}

fn d1_scores(points: &[[f64; 3]]) -> Result<Vec<f64>, ProfileError> {
    if points.len() != SET_STAKES {
        return Err(ProfileError::new(
            "points",
            format!(
                "D1 has {SET_STAKES} set-and-stake triples per version (P1 ×3 stakes, P2 ×3), got {}",
                points.len()
            ),
        ));
    }
    points
        .iter()
        .enumerate()
        .map(|(h, t)| {
            compatibility(*t)
                .map_err(|e| ProfileError::new(format!("points[{h}]{}", e.field.trim_start_matches('p')), e.reason))
        })
        .collect()
}

/// u = (1/6)·Σ_h v_h: a D1 version's result from its six triples [p_XY, p_YZ, p_XZ].
pub fn d1_result(points: &[[f64; 3]]) -> Result<f64, ProfileError> {
    Ok(d1_scores(points)?.iter().sum::<f64>() / SET_STAKES as f64)
}

/// z: the D1 version's result with P1's triple at `condition` replaced by the check's `p`.
pub fn d1_replace(points: &[[f64; 3]], condition: Condition, p: [f64; 3]) -> Result<f64, ProfileError> {
    d1_scores(points)?;
    compatibility(p)?;
    let mut replaced = points.to_vec();
    replaced[condition.index()] = p;
    d1_result(&replaced)
}

/// The three menus of one D3 set and stake, each as [p_X, p_Y]: fractions of all fifteen
/// answers to that menu.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Menus {
    /// X/Y: the two-option menu (p_X + p_Y = 1).
    pub two: [f64; 2],
    /// X/Y/DX: with the option that X dominates added (p_X + p_Y ≤ 1).
    pub dx: [f64; 2],
    /// X/Y/DY: with the option that Y dominates added (p_X + p_Y ≤ 1).
    pub dy: [f64; 2],
}

impl Menus {
    fn check(&self) -> Result<(), ProfileError> {
        for (name, m) in [("two", self.two), ("dx", self.dx), ("dy", self.dy)] {
            for (i, p) in m.iter().enumerate() {
                fraction(&format!("{name}[{i}]"), *p)?;
            }
            let sum = m[0] + m[1];
            if name == "two" && (sum - 1.0).abs() > SHARE_TOLERANCE {
                return Err(ProfileError::new(
                    name,
                    format!("X and Y are the only options: shares sum to {sum}, not 1"),
                ));
            }
            if sum > 1.0 + SHARE_TOLERANCE {
                return Err(ProfileError::new(name, format!("shares sum to {sum}, more than 1")));
            }
        }
        Ok(())
    }

    /// The two comparisons' scores: (X/Y → X/Y/DX, X/Y → X/Y/DY).
    pub fn scores(&self) -> Result<(f64, f64), ProfileError> {
        self.check()?;
        Ok((regularity(self.two, self.dx)?, regularity(self.two, self.dy)?))
    }
}

/// D3's regularity score v for one comparison: 100 × the sum of X's and Y's share increases
/// from the two-option menu `two` to the three-option menu `three` (§D3 line 926).
pub fn regularity(two: [f64; 2], three: [f64; 2]) -> Result<f64, ProfileError> {
    for (name, m) in [("two", two), ("three", three)] {
        for (i, p) in m.iter().enumerate() {
            fraction(&format!("{name}[{i}]"), *p)?;
        }
    }
    Ok(100.0 * (0.0_f64.max(three[0] - two[0]) + 0.0_f64.max(three[1] - two[1])))
}

fn d3_sum(points: &[Menus]) -> Result<f64, ProfileError> {
    if points.len() != SET_STAKES {
        return Err(ProfileError::new(
            "points",
            format!(
                "D3 has {SET_STAKES} set-and-stake menu triples per version (P1 ×3 stakes, P2 ×3), got {}",
                points.len()
            ),
        ));
    }
    let mut sum = 0.0;
    for (h, m) in points.iter().enumerate() {
        let (a, b) = m.scores().map_err(|e| ProfileError::new(format!("points[{h}].{}", e.field), e.reason))?;
        sum += a + b;
    }
    Ok(sum)
}

/// u = (1/12)·Σ_h v_h: a D3 version's result from its six set-and-stake menus.
pub fn d3_result(points: &[Menus]) -> Result<f64, ProfileError> {
    Ok(d3_sum(points)? / (2 * SET_STAKES) as f64)
}

/// z: the D3 version's result with P1's menus at `condition` replaced by the check's `menus`.
pub fn d3_replace(points: &[Menus], condition: Condition, menus: Menus) -> Result<f64, ProfileError> {
    d3_sum(points)?;
    menus.check()?;
    let mut replaced = points.to_vec();
    replaced[condition.index()] = menus;
    d3_result(&replaced)
}

#[cfg(test)]
mod tests {
    use super::super::testing::close;
    use super::*;

    fn f(counts: [u32; 3]) -> [f64; 3] {
        counts.map(|n| f64::from(n) / 15.0)
    }

    #[test]
    fn d1_example() {
        // The profile methods §D1 line 875: "chooses X over Y twelve times, Y over Z twelve times, and X over
        // Z three times … s=0.8+0.8+1−0.2=2.4, so v=100−100×0.4=60. If the other five
        // combinations score 100, u=(60+5×100)/6≈93.33. A check of this P1 set giving nine, nine
        // and three choices instead produces s=0.6+0.6+1−0.2=2, so its new v is 100 and the full
        // checked result is 100." The other five use the check's triple, which scores 100.
        close(compatibility(f([12, 12, 3])).expect("v"), 60.0, 1e-9, "v");
        close(compatibility(f([9, 9, 3])).expect("v"), 100.0, 1e-9, "checked v");
        let mut points = [f([9, 9, 3]); SET_STAKES];
        points[Condition::Low.index()] = f([12, 12, 3]);
        let u = d1_result(&points).expect("u");
        close(u, 93.33, 0.005, "u");
        close(u, 560.0 / 6.0, 1e-9, "u");
        close(d1_replace(&points, Condition::Low, f([9, 9, 3])).expect("z"), 100.0, 1e-9, "z");
    }

    #[test]
    fn d1_scores_the_fractions_before_averaging() {
        // §D1 line 875: "The fractions must be put through the compatibility formula before they
        // are combined." Line 867: "Both a fixed ranking and 50/50 choices can satisfy it."
        close(compatibility([0.5, 0.5, 0.5]).expect("v"), 100.0, 1e-12, "50/50");
        close(compatibility([1.0, 1.0, 1.0]).expect("v"), 100.0, 1e-12, "X > Y > Z");
        // The cycle X > Y, Y > Z, Z > X sums to 3: v = 0.
        close(compatibility([1.0, 1.0, 0.0]).expect("v"), 0.0, 1e-12, "cycle");
    }

    #[test]
    fn d3_example() {
        // §D3 line 936: "the original menu's fifteen answers choose X six times and Y nine times.
        // With DX added, they choose X nine times, Y five times and DX once. X's share increases
        // by 9/15−6/15=0.2; Y's decreases and contributes zero. Thus v=100(0.2+0)=20 percentage
        // points. If the other eleven comparisons score zero, u=20/12≈1.67". The other eleven
        // repeat the original menu's 6 and 9 in every menu, which scores zero.
        let two = [6.0 / 15.0, 9.0 / 15.0];
        close(regularity(two, [9.0 / 15.0, 5.0 / 15.0]).expect("v"), 20.0, 1e-9, "v");
        let flat = Menus { two, dx: two, dy: two };
        let mut points = [flat; SET_STAKES];
        points[3] = Menus { two, dx: [9.0 / 15.0, 5.0 / 15.0], dy: two }; // P2, lowest stake
        let u = d3_result(&points).expect("u");
        close(u, 1.67, 0.005, "u");
        // A check moving P1's lowest stake to the same menus adds another 20/12 (derived).
        let z = d3_replace(&points, Condition::Low, points[3]).expect("z");
        close(z, 40.0 / 12.0, 1e-9, "z");
    }

    #[test]
    fn refuses_bad_input_naming_the_field() {
        assert_eq!(compatibility([0.5, 1.5, 0.5]).unwrap_err().field, "p[1]");
        assert_eq!(d1_result(&[[0.5; 3]; 5]).unwrap_err().field, "points");
        assert_eq!(d1_result(&[[0.5, 0.5, f64::NAN]; 6]).unwrap_err().field, "points[0][2]");
        let two = [0.4, 0.6];
        let bad = Menus { two: [0.4, 0.5], dx: two, dy: two };
        assert_eq!(d3_result(&[bad; 6]).unwrap_err().field, "points[0].two");
        let bad = Menus { two, dx: [0.6, 0.6], dy: two };
        assert_eq!(d3_result(&[bad; 6]).unwrap_err().field, "points[0].dx");
        let bad = Menus { two, dx: two, dy: [-0.1, 0.6] };
        assert_eq!(d3_result(&[bad; 6]).unwrap_err().field, "points[0].dy[0]");
    }
}
