//! A question version's complete result and its locally replaced (checked) results, for the
//! measures whose result is a fixed weighted sum of their points (all of A–D but D1 and D3,
//! which are in [`super::consistency`]).
//!
//! # Formula
//! With b_j the score of point j (a condition mean, a paired difference or 100 × a choice
//! fraction) and w_j its fixed coefficient, one version's reference result is
//! u = Σ_j w_j b_j, and a check that retests the points J gives
//! z = u + Σ_{j∈J} w_j (b_j^check − b_j^ref): "Each check replaces only its selected
//! observations, retains the other reference observations and original weights" (the profile methods
//! §M04 line 125; §C0 lines 659 and 673, written there on fractions p_j = b_j/100).
//!
//! The measures' points and weights, and the points a check at one condition retests:
//!
//! | measure | points, in this order | w_j | a check at condition c retests | seed |
//! |---|---|---|---|---|
//! | `a` (any A task) | condition means b at low, middle, high | 1/3 | that condition | §A0 lines 159–163, 169 |
//! | `b1`, `b2`, `b3` | condition differences δ at low, middle, high | 1/3 | both histories at c: δ | §B0 lines 485–489 |
//! | `c1` | 27: stake (×1, ×10, ×100), then winning probability 10 %…90 % | 1/27 | the 40, 50, 60 % points at c | §C1 lines 704–708 |
//! | `c2` | 18: prize (100, 1,000, 10,000), then known probability (25, 50, 75 %), then target colour (red, blue) | 1/18 | 50 %, red and blue, at c | §C2 lines 730–734 |
//! | `c3` | 12: gap (7, 30, 90 days), then return grade (30, 100, 300, 600 %) | 1/12 | the 100 % and 300 % grades at c | §C3 lines 767–771 |
//! | `c4` | 12 pair differences δ_j = 100(p_D − p_I), in C3's order | 1/12 | the 100 % and 300 % pairs at c | §C4 lines 799–803 |
//! | `d2` | 9: stake, then pair G1, G2, G3 | 1/9 | G2 at c | §D2 lines 900–904 |
//!
//! C4's coefficients ±1/12 on 24 fractions (§C0 table) are the same sum written on the twelve
//! pair differences with 1/12 each. B4 counts matches instead: u = 100·H/450 and
//! z = u + 100(H^check − H^ref)/450 (§B4 lines 618 and 624), in [`b4_result`] and
//! [`b4_replace`]; 450 is the full protocol's scored choices, and a reduced protocol divides by
//! the choices it scheduled.

use serde::{Deserialize, Serialize};

use super::{finite, finite_items, within, Condition, ProfileError};

/// A measure whose version result is a fixed weighted sum of its points.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Linear {
    /// Any Category A task: three condition means at 1/3 each (§A0).
    A,
    /// B1, conditional cooperation: three condition differences at 1/3 each (§B1).
    B1,
    /// B2, retaliation: three condition differences at 1/3 each (§B2).
    B2,
    /// B3, forgiveness: three condition differences at 1/3 each (§B3).
    B3,
    /// C1, risk taking: 27 points at 1/27 each (§C1).
    C1,
    /// C2, comfort with unknown odds: 18 points at 1/18 each (§C2).
    C2,
    /// C3, willingness to wait: 12 points at 1/12 each (§C3).
    C3,
    /// C4, the pull of now: 12 pair differences at 1/12 each (§C4).
    C4,
    /// D2, choosing the better offer: 9 points at 1/9 each (§D2).
    D2,
}

impl Linear {
    /// N, the number of points of one version.
    pub fn points(self) -> usize {
        match self {
            Linear::A | Linear::B1 | Linear::B2 | Linear::B3 => 3,
            Linear::C1 => 27,
            Linear::C2 => 18,
            Linear::C3 | Linear::C4 => 12,
            Linear::D2 => 9,
        }
    }

    /// w_j, the same for every point of these measures: 1/N.
    pub fn weight(self) -> f64 {
        1.0 / self.points() as f64
    }

    /// The scale of a point: [0, 100] for percentages and condition means, [−100, 100] for the
    /// paired differences of B1–B3 and C4.
    pub fn bounds(self) -> (f64, f64) {
        match self {
            Linear::B1 | Linear::B2 | Linear::B3 | Linear::C4 => (-100.0, 100.0),
            _ => (0.0, 100.0),
        }
    }

    /// The points (indices into a version's points) that a check at `condition` retests, in
    /// the order the check's values are given (see the module table).
    pub fn checked_points(self, condition: Condition) -> Vec<usize> {
        let c = condition.index();
        match self {
            Linear::A | Linear::B1 | Linear::B2 | Linear::B3 => vec![c],
            Linear::C1 => vec![9 * c + 3, 9 * c + 4, 9 * c + 5],
            Linear::C2 => vec![6 * c + 2, 6 * c + 3],
            Linear::C3 | Linear::C4 => vec![4 * c + 1, 4 * c + 2],
            Linear::D2 => vec![3 * c + 1],
        }
    }

    fn check_points(self, points: &[f64]) -> Result<(), ProfileError> {
        finite("points", points)?;
        if points.len() != self.points() {
            return Err(ProfileError::new(
                "points",
                format!("{self:?} has {} points per version, got {}", self.points(), points.len()),
            ));
        }
        let (lo, hi) = self.bounds();
        for (j, b) in points.iter().enumerate() {
            within(&format!("points[{j}]"), *b, lo, hi)?;
        }
        Ok(())
    }

    /// u = Σ_j w_j b_j: one version's complete reference result from its points.
    pub fn version_result(self, points: &[f64]) -> Result<f64, ProfileError> {
        self.check_points(points)?;
        Ok(points.iter().map(|b| self.weight() * b).sum())
    }

    /// z: the version's result after a check at `condition` whose retested points scored
    /// `values` (in [`Linear::checked_points`] order); the other points keep their reference
    /// scores and every point its weight.
    pub fn replace(self, points: &[f64], condition: Condition, values: &[f64]) -> Result<f64, ProfileError> {
        let u = self.version_result(points)?;
        let at = self.checked_points(condition);
        finite("values", values)?;
        if values.len() != at.len() {
            return Err(ProfileError::new(
                "values",
                format!("a {self:?} check at {condition:?} retests {} points, got {} values", at.len(), values.len()),
            ));
        }
        let (lo, hi) = self.bounds();
        for (i, v) in values.iter().enumerate() {
            within(&format!("values[{i}]"), *v, lo, hi)?;
        }
        let reference: Vec<f64> = at.iter().map(|&j| points[j]).collect();
        local_replacement(u, &vec![self.weight(); at.len()], &reference, values)
    }
}

/// z = u + Σ_{j∈J} w_j (b_j^check − b_j^ref) for the retested points J (§C0 line 673; the A and
/// B forms z = u + (b^check − b^ref)/3 are its one-point case).
pub fn local_replacement(u: f64, weights: &[f64], reference: &[f64], check: &[f64]) -> Result<f64, ProfileError> {
    within("u", u, f64::MIN, f64::MAX)?;
    finite("weights", weights)?;
    finite_items("reference", reference)?;
    finite_items("check", check)?;
    if reference.len() != weights.len() {
        return Err(ProfileError::new(
            "reference",
            format!("has {} values for {} weights", reference.len(), weights.len()),
        ));
    }
    if check.len() != weights.len() {
        return Err(ProfileError::new("check", format!("has {} values for {} weights", check.len(), weights.len())));
    }
    Ok(u + weights.iter().zip(reference.iter().zip(check)).map(|(w, (r, c))| w * (c - r)).sum::<f64>())
}

/// 100·count/answers: a binary choice's percentage score (§A0 "Binary-choice percentages",
/// "score = 100 × number of those choices / 15").
pub fn percentage(count: u32, answers: u32) -> Result<f64, ProfileError> {
    if answers == 0 {
        return Err(ProfileError::new("answers", "must be at least 1"));
    }
    if count > answers {
        return Err(ProfileError::new("count", format!("{count} choices out of {answers} answers")));
    }
    Ok(100.0 * f64::from(count) / f64::from(answers))
}

/// The ultimatum responder's condition score: the mean of the four rejection percentages at
/// offers of 10, 20, 30 and 40 % of the total, a quarter each (§A5 line 401).
pub fn responder_condition(rejection_percentages: &[f64]) -> Result<f64, ProfileError> {
    finite("rejection_percentages", rejection_percentages)?;
    if rejection_percentages.len() != 4 {
        return Err(ProfileError::new(
            "rejection_percentages",
            format!("needs the four offers 10, 20, 30 and 40 %, got {}", rejection_percentages.len()),
        ));
    }
    for (i, p) in rejection_percentages.iter().enumerate() {
        within(&format!("rejection_percentages[{i}]"), *p, 0.0, 100.0)?;
    }
    Ok(rejection_percentages.iter().sum::<f64>() / 4.0)
}

/// B4's scored choices per version under the full protocol: 3 payoffs × 2 switch directions ×
/// 15 episodes × rounds 8–12 (§B4 line 614).
pub const B4_SCORED: u32 = 3 * 2 * 15 * 5;

/// B4's scored choices a check retests under the full protocol: rounds 8 and 12, both
/// directions, 15 episodes, at one payoff (§B4 line 622: "2×15×2=60").
pub const B4_CHECKED: u32 = 2 * 15 * 2;

/// u = 100·H/S: B4's reference result from its H matching choices of the S scored choices the
/// schedule holds (§B4 line 618: S = 450 under the full protocol; a reduced protocol with fewer
/// episodes per cell scores over the choices it scheduled, so that the same answers give the
/// same result).
pub fn b4_result(matches: u32, scored: u32) -> Result<f64, ProfileError> {
    if scored == 0 {
        return Err(ProfileError::new("scored", "no scored choice scheduled"));
    }
    if matches > scored {
        return Err(ProfileError::new("matches", format!("{matches} exceeds the {scored} scored choices")));
    }
    Ok(100.0 * f64::from(matches) / f64::from(scored))
}

/// z = u + 100(H^check − H^ref)/S: B4's result after a check whose `checked` retested positions
/// held `reference_matches` matches in the reference history and `check_matches` under the check
/// (§B4 line 624: "The denominator stays 450", the scored choices S of the protocol).
pub fn b4_replace(
    matches: u32,
    scored: u32,
    reference_matches: u32,
    check_matches: u32,
    checked: u32,
) -> Result<f64, ProfileError> {
    let u = b4_result(matches, scored)?;
    if checked == 0 || checked > scored {
        return Err(ProfileError::new("checked", format!("{checked} checked positions of {scored} scored choices")));
    }
    for (field, h) in [("reference_matches", reference_matches), ("check_matches", check_matches)] {
        if h > checked {
            return Err(ProfileError::new(field, format!("{h} exceeds the {checked} checked positions")));
        }
    }
    if reference_matches > matches || matches - reference_matches > scored - checked {
        return Err(ProfileError::new(
            "reference_matches",
            format!(
                "{reference_matches} of the checked positions cannot belong to a total of {matches} \
                 (the other {} positions hold at most that many)",
                scored - checked
            ),
        ));
    }
    local_replacement(u, &[100.0 / f64::from(scored)], &[f64::from(reference_matches)], &[f64::from(check_matches)])
}

#[cfg(test)]
mod tests {
    use super::super::testing::close;
    use super::*;

    fn pct(counts: &[u32]) -> Vec<f64> {
        counts.iter().map(|&n| percentage(n, 15).expect("valid")).collect()
    }

    #[test]
    fn a1_giving_example() {
        // The profile methods §A1 line 232: "giving 20 of 100 credits scores 100×20/100=20 … the
        // fifteen-response means at totals of 100, 1,000 and 10,000 are 20, 40 and 60. Its
        // result is u=(20+40+60)/3=40. A presentation check changes the middle condition from
        // 40 to 70, giving z=(20+70+60)/3=50."
        let b = [20.0, 40.0, 60.0];
        close(Linear::A.version_result(&b).expect("u"), 40.0, 1e-12, "u");
        close(Linear::A.replace(&b, Condition::Middle, &[70.0]).expect("z"), 50.0, 1e-12, "z");
    }

    #[test]
    fn a2_cooperation_example() {
        // §A2 lines 320–333: PD "9, 12 and 15 cooperative choices out of fifteen, giving 60, 80
        // and 100 … u_PD=80"; SH "6, 9 and 12 choices of B … 40, 60 and 80 … u_SH=60"; PGG "Mean
        // contributions of 20, 40 and 60 … u_PGG=40"; "a presentation check of the original
        // public-goods question changes its middle-condition mean from 40 to 70. That task's
        // checked result is z=(20+70+60)/3=50".
        let pd = pct(&[9, 12, 15]);
        assert_eq!(pd, vec![60.0, 80.0, 100.0]);
        close(Linear::A.version_result(&pd).expect("u"), 80.0, 1e-12, "u_PD");
        let sh = pct(&[6, 9, 12]);
        assert_eq!(sh, vec![40.0, 60.0, 80.0]);
        close(Linear::A.version_result(&sh).expect("u"), 60.0, 1e-12, "u_SH");
        let pgg = [20.0, 40.0, 60.0];
        close(Linear::A.version_result(&pgg).expect("u"), 40.0, 1e-12, "u_PGG");
        close(Linear::A.replace(&pgg, Condition::Middle, &[70.0]).expect("z"), 50.0, 1e-12, "z_PGG");
    }

    #[test]
    fn a3_trust_and_a4_reciprocation_examples() {
        // §A3 line 359: "means are 20, 30 and 40 … u=(20+30+40)/3=30. If a presentation check
        // changes the middle mean from 30 to 45, the checked result is z=(20+45+40)/3=35."
        let b = [20.0, 30.0, 40.0];
        close(Linear::A.version_result(&b).expect("u"), 30.0, 1e-12, "A3 u");
        close(Linear::A.replace(&b, Condition::Middle, &[45.0]).expect("z"), 35.0, 1e-12, "A3 z");
        // §A4 line 385: "returns 60. The score is 100×60/150=40 … means are 30, 40 and 50 …
        // u=(30+40+50)/3=40. If a presentation check changes the middle mean from 40 to 46,
        // z=(30+46+50)/3=42."
        close(100.0 * 60.0 / 150.0, 40.0, 1e-12, "A4 y");
        let b = [30.0, 40.0, 50.0];
        close(Linear::A.version_result(&b).expect("u"), 40.0, 1e-12, "A4 u");
        close(Linear::A.replace(&b, Condition::Middle, &[46.0]).expect("z"), 42.0, 1e-12, "A4 z");
    }

    #[test]
    fn a5_fairness_enforcement_example() {
        // §A5 line 429: "rejects them 12, 9, 6 and 3 times out of fifteen each. The rejection
        // percentages are 80, 60, 40 and 20, so this condition scores (80+60+40+20)/4=50. If the
        // two larger totals also score 50, this version's responder result is u=50 … Nine
        // interventions out of fifteen give 100×9/15=60. If the other two costs also score 60,
        // its version result is 60 … A responder check changing only the middle total from 50 to
        // 70 would give that task a checked result of (50+70+50)/3≈56.67".
        let p = pct(&[12, 9, 6, 3]);
        assert_eq!(p, vec![80.0, 60.0, 40.0, 20.0]);
        let b = responder_condition(&p).expect("b");
        close(b, 50.0, 1e-12, "b");
        let responder = [b, 50.0, 50.0];
        close(Linear::A.version_result(&responder).expect("u"), 50.0, 1e-12, "u_reject");
        let tpp = pct(&[9, 9, 9]);
        close(Linear::A.version_result(&tpp).expect("u"), 60.0, 1e-12, "u_intervene");
        let z = Linear::A.replace(&responder, Condition::Middle, &[70.0]).expect("z");
        close(z, 56.67, 0.005, "z (seed's two decimals)");
        close(z, 170.0 / 3.0, 1e-12, "z");
    }

    #[test]
    fn b1_b2_b3_examples() {
        // §B1 line 546: δ = 80 − 60 = 20 at α = 0.5; "the other coefficients give 10 and 30, then
        // u=(10+20+30)/3=20. A check changing the high-history mean to 90 while the low-history
        // mean stays 60 gives a new difference of 30. The full checked result is
        // z=20+(30−20)/3≈23.33".
        let d = [10.0, 80.0 - 60.0, 30.0];
        close(Linear::B1.version_result(&d).expect("u"), 20.0, 1e-12, "B1 u");
        let z = Linear::B1.replace(&d, Condition::Middle, &[90.0 - 60.0]).expect("z");
        close(z, 23.33, 0.005, "B1 z");
        // §B2 line 574: "δ=100(12/15−3/15)=60 … differences at T=35 and 55 are 40 and 20 …
        // u=(40+60+20)/3=40. A check producing twelve versus six … changes its difference to 40
        // … z=(40+40+20)/3≈33.33".
        let mid = percentage(12, 15).expect("p") - percentage(3, 15).expect("p");
        close(mid, 60.0, 1e-12, "B2 δ");
        let d = [40.0, mid, 20.0];
        close(Linear::B2.version_result(&d).expect("u"), 40.0, 1e-12, "B2 u");
        let check = percentage(12, 15).expect("p") - percentage(6, 15).expect("p");
        let z = Linear::B2.replace(&d, Condition::Middle, &[check]).expect("z");
        close(z, 33.33, 0.005, "B2 z");
        // §B3 line 602: "100(9/15−3/15)=40 … other conditions give 20 and 60, u=(20+40+60)/3=40.
        // A check giving twelve versus three … changes its difference to 60, so
        // z=(20+60+60)/3≈46.67".
        let mid = percentage(9, 15).expect("p") - percentage(3, 15).expect("p");
        let d = [20.0, mid, 60.0];
        close(Linear::B3.version_result(&d).expect("u"), 40.0, 1e-12, "B3 u");
        let check = percentage(12, 15).expect("p") - percentage(3, 15).expect("p");
        let z = Linear::B3.replace(&d, Condition::Middle, &[check]).expect("z");
        close(z, 46.67, 0.005, "B3 z");
    }

    #[test]
    fn b4_adaptation_example() {
        // §B4 lines 614–628: "3×2×15×5=450 scored choices"; "suppose 300 of 450 scored choices
        // match. Then u=100×300/450≈66.67%. A check changes matches at its sixty selected
        // positions from 30 to 36. The complete total becomes 306, giving z=100×306/450=68%".
        assert_eq!((B4_SCORED, B4_CHECKED), (450, 60));
        close(b4_result(300, B4_SCORED).expect("u"), 66.67, 0.005, "u");
        close(b4_replace(300, B4_SCORED, 30, 36, B4_CHECKED).expect("z"), 68.0, 1e-12, "z");
        // Line 620: "an always-L or always-R strategy a theoretical reference of 50%": half of
        // the 450 positions match.
        close(b4_result(B4_SCORED / 2, B4_SCORED).expect("u"), 50.0, 1e-12, "always-L");
        // One episode per cell (a reduced protocol): 30 scored choices, 15 matched.
        close(b4_result(15, 30).expect("u"), 50.0, 1e-12, "always-L, reduced");
    }

    #[test]
    fn c1_risk_example() {
        // §C1 line 712: "Six B choices out of fifteen give p_j=0.4 and b_j=40. Across all 27
        // points there are 405 answers. If 162 choose B, u=100×162/405=40% … Suppose only the
        // middle point changes, from six to nine B choices … z=40+20/27≈40.74%". Six B choices
        // at each of the 27 points is 162 of 405.
        let points = pct(&[6; 27]);
        close(Linear::C1.version_result(&points).expect("u"), 100.0 * 162.0 / 405.0, 1e-12, "u");
        let values = pct(&[6, 9, 6]);
        let z = Linear::C1.replace(&points, Condition::Middle, &values).expect("z");
        close(z, 40.0 + 20.0 / 27.0, 1e-12, "z");
        close(z, 40.74, 0.005, "z (seed's two decimals)");
    }

    #[test]
    fn c2_unknown_odds_example() {
        // §C2 line 738: "Six choices of the unknown urn out of fifteen score 100×6/15=40. If it
        // is chosen 108 times among all eighteen points' 270 answers, u=100×108/270=40 … If only
        // the red-target count rises from six to nine … z=40+20/18≈41.11%". Drawing red wins
        // 100 credits: the low prize. Six at each of the 18 points is 108 of 270.
        let points = pct(&[6; 18]);
        close(Linear::C2.version_result(&points).expect("u"), 100.0 * 108.0 / 270.0, 1e-12, "u");
        let z = Linear::C2.replace(&points, Condition::Low, &pct(&[9, 6])).expect("z");
        close(z, 41.11, 0.005, "z");
    }

    #[test]
    fn c3_c4_waiting_examples() {
        // §C3 line 775: "u=100×108/180=60. A check of the thirty-day wait covers the 100% and 300%
        // grades. If the former rises from six to nine later choices while the latter is
        // unchanged, z=60+20/12≈61.67%". The 12 points are not all given, so the replacement is
        // checked on the changed point (the unchanged one adds zero).
        let z = local_replacement(60.0, &[Linear::C3.weight()], &pct(&[6]), &pct(&[9])).expect("z");
        close(z, 61.67, 0.005, "C3 z");
        // §C4 line 807: "later choices are six of fifteen in the first question and twelve of
        // fifteen in the second. The difference is 100(12/15−6/15)=40 … If the other eleven pairs
        // each give 20, then u=(40+11×20)/12≈21.67 … Suppose the two counts above rise from six
        // to nine and from twelve to fifteen, while the 300% pair is unchanged. The first pair
        // still gives 100(15/15−9/15)=40 … the complete checked result—remains unchanged."
        let first = percentage(12, 15).expect("p") - percentage(6, 15).expect("p");
        let mut pairs = vec![20.0; 12];
        let at = Linear::C4.checked_points(Condition::Middle);
        pairs[at[0]] = first;
        let u = Linear::C4.version_result(&pairs).expect("u");
        close(u, 21.67, 0.005, "C4 u");
        let checked_first = percentage(15, 15).expect("p") - percentage(9, 15).expect("p");
        let z = Linear::C4.replace(&pairs, Condition::Middle, &[checked_first, pairs[at[1]]]).expect("z");
        close(z, u, 1e-12, "C4 z unchanged");
    }

    #[test]
    fn d2_dominance_example() {
        // §D2 line 908: "Twelve choices of it out of fifteen score 80. Suppose all fifteen answers
        // at each of the other eight points choose the dominant option. Then
        // u=(80+8×100)/9≈97.78 … If a check of G2 changes its dominant-choice count from fifteen
        // to twelve … z=100×129/135≈95.56". G1 is at the lowest stake; the check's stake is not
        // given and does not matter here (every G2 point scores 100).
        let mut points = vec![100.0; 9];
        points[0] = percentage(12, 15).expect("p");
        close(Linear::D2.version_result(&points).expect("u"), 100.0 * 132.0 / 135.0, 1e-12, "u");
        let z = Linear::D2.replace(&points, Condition::Low, &pct(&[12])).expect("z");
        close(z, 100.0 * 129.0 / 135.0, 1e-12, "z");
        close(z, 95.56, 0.005, "z (seed's two decimals)");
    }

    #[test]
    fn checked_points_follow_the_seed_anchors() {
        // §C0 line 681: "C1's 40%, 50% and 60% winning probabilities; C2's known probability of
        // 50%, for both target colors; and C3/C4's 100% and 300% annual return grades"; §D0: "D2's
        // G2 pair".
        assert_eq!(Linear::C1.checked_points(Condition::High), vec![21, 22, 23]);
        assert_eq!(Linear::C2.checked_points(Condition::Middle), vec![8, 9]);
        assert_eq!(Linear::C3.checked_points(Condition::Low), vec![1, 2]);
        assert_eq!(Linear::D2.checked_points(Condition::High), vec![7]);
        for m in [Linear::A, Linear::B1, Linear::C1, Linear::C2, Linear::C3, Linear::C4, Linear::D2] {
            for c in [Condition::Low, Condition::Middle, Condition::High] {
                assert!(m.checked_points(c).iter().all(|&j| j < m.points()), "{m:?} {c:?}");
            }
        }
    }

    #[test]
    fn refuses_bad_input_naming_the_field() {
        assert_eq!(Linear::A.version_result(&[20.0, 40.0]).unwrap_err().field, "points");
        assert_eq!(Linear::A.version_result(&[]).unwrap_err().field, "points");
        assert_eq!(Linear::A.version_result(&[20.0, 140.0, 60.0]).unwrap_err().field, "points[1]");
        assert_eq!(Linear::A.version_result(&[20.0, f64::NAN, 60.0]).unwrap_err().field, "points[1]");
        assert_eq!(Linear::B1.version_result(&[-100.0, 0.0, 100.0]).map(|u| u == 0.0), Ok(true));
        assert_eq!(Linear::A.replace(&[20.0, 40.0, 60.0], Condition::Low, &[1.0, 2.0]).unwrap_err().field, "values");
        assert_eq!(
            Linear::A.replace(&[20.0, 40.0, 60.0], Condition::Low, &[f64::INFINITY]).unwrap_err().field,
            "values[0]"
        );
        assert_eq!(percentage(16, 15).unwrap_err().field, "count");
        assert_eq!(b4_result(451, B4_SCORED).unwrap_err().field, "matches");
        assert_eq!(b4_result(0, 0).unwrap_err().field, "scored");
        assert_eq!(b4_replace(10, 30, 1, 1, 31).unwrap_err().field, "checked");
        assert_eq!(b4_replace(300, B4_SCORED, 61, 30, B4_CHECKED).unwrap_err().field, "reference_matches");
        assert_eq!(b4_replace(20, B4_SCORED, 30, 30, B4_CHECKED).unwrap_err().field, "reference_matches");
        assert_eq!(b4_replace(300, B4_SCORED, 30, 61, B4_CHECKED).unwrap_err().field, "check_matches");
        assert_eq!(local_replacement(1.0, &[0.5], &[1.0, 2.0], &[1.0]).unwrap_err().field, "reference");
    }
}
