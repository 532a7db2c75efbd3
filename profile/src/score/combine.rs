//! Category A: combining a measure's constituent tasks with fixed task weights, applied
//! separately to the averages, the lower endpoints and the upper endpoints.
//!
//! # Formula (the profile methods §M04 line 133, §A0 line 169)
//! With task weights w_t (Σ w_t = 1) and each task's centre M_t, inner [I_t,low, I_t,high] and
//! outer [O_t,low, O_t,high] from [`super::range`]:
//! M = Σ w_t M_t, I = [Σ w_t I_t,low, Σ w_t I_t,high], O = [Σ w_t O_t,low, Σ w_t O_t,high].
//! "The combined range is a weighted envelope of the component task ranges: each task
//! contributes its own lower and upper endpoint" (line 135). The weights (line 169): A1, two
//! tasks at one-half each (dictator giving, ultimatum proposal); A2, three at one-third each
//! (prisoner's dilemma, stag hunt, public goods); A3 and A4, one task each (trust investor,
//! trustee); A5, two at one-half each (ultimatum responder, third-party intervention).

use serde::{Deserialize, Serialize};

use super::{finite_items, ProfileError};

/// Tolerance on the task weights summing to one.
pub const WEIGHT_TOLERANCE: f64 = 1e-9;

/// A Category A measure.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AMeasure {
    /// A1, generosity: dictator giving and ultimatum proposal.
    A1,
    /// A2, cooperation: prisoner's dilemma, stag hunt, public goods.
    A2,
    /// A3, trust: the trust game's investor.
    A3,
    /// A4, reciprocation: the trust game's trustee.
    A4,
    /// A5, fairness enforcement: ultimatum responder and third-party intervention.
    A5,
}

impl AMeasure {
    /// The seed's fixed task weights (§A0 line 169), in the order of [`AMeasure::tasks`].
    pub fn weights(self) -> Vec<f64> {
        match self {
            AMeasure::A1 | AMeasure::A5 => vec![0.5, 0.5],
            AMeasure::A2 => vec![1.0 / 3.0; 3],
            AMeasure::A3 | AMeasure::A4 => vec![1.0],
        }
    }

    /// The constituent tasks, in weight order.
    pub fn tasks(self) -> &'static [&'static str] {
        match self {
            AMeasure::A1 => &["dictator giving", "ultimatum proposal"],
            AMeasure::A2 => &["prisoner's dilemma", "stag hunt", "public goods"],
            AMeasure::A3 => &["trust, investor"],
            AMeasure::A4 => &["trust, returning player"],
            AMeasure::A5 => &["ultimatum responder", "third-party intervention"],
        }
    }
}

/// A task's (or a combined measure's) centre and ranges.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Ranges {
    /// M, the centre.
    pub centre: f64,
    /// I = [low, high].
    pub inner: [f64; 2],
    /// O = [low, high].
    pub outer: [f64; 2],
}

impl Ranges {
    /// Refuses ranges that [`super::range::measure_range`] cannot produce: non-finite numbers,
    /// low above high, a centre outside the inner range, an inner range outside the outer.
    pub fn check(&self) -> Result<(), ProfileError> {
        finite_items("centre", &[self.centre])
            .and_then(|()| finite_items("inner", &self.inner))
            .and_then(|()| finite_items("outer", &self.outer))
            .map_err(|e| ProfileError::new(e.field.replace("centre[0]", "centre"), e.reason))?;
        for (name, r) in [("inner", self.inner), ("outer", self.outer)] {
            if r[0] > r[1] {
                return Err(ProfileError::new(name, format!("low {} is above high {}", r[0], r[1])));
            }
        }
        if self.centre < self.inner[0] || self.centre > self.inner[1] {
            return Err(ProfileError::new(
                "centre",
                format!("{} lies outside the inner range [{}, {}]", self.centre, self.inner[0], self.inner[1]),
            ));
        }
        if self.outer[0] > self.inner[0] || self.outer[1] < self.inner[1] {
            return Err(ProfileError::new("outer", "must contain the inner range (§M04: O ⊇ I)"));
        }
        Ok(())
    }
}

/// Refuses weights that are not positive, finite and summing to one.
pub fn check_weights(weights: &[f64]) -> Result<(), ProfileError> {
    if weights.is_empty() {
        return Err(ProfileError::new("weights", "is empty"));
    }
    for (i, w) in weights.iter().enumerate() {
        if !(w.is_finite() && *w > 0.0) {
            return Err(ProfileError::new(format!("weights[{i}]"), format!("{w} is not a positive number")));
        }
    }
    let sum: f64 = weights.iter().sum();
    if (sum - 1.0).abs() > WEIGHT_TOLERANCE {
        return Err(ProfileError::new("weights", format!("sum to {sum}, not 1 (§A0: fixed task weights)")));
    }
    Ok(())
}

/// The combined centre and ranges of tasks `tasks` with weights `weights` (same order).
pub fn combine(weights: &[f64], tasks: &[Ranges]) -> Result<Ranges, ProfileError> {
    check_weights(weights)?;
    if tasks.is_empty() {
        return Err(ProfileError::new("tasks", "is empty"));
    }
    if tasks.len() != weights.len() {
        return Err(ProfileError::new("tasks", format!("has {} tasks for {} weights", tasks.len(), weights.len())));
    }
    for (t, r) in tasks.iter().enumerate() {
        r.check().map_err(|e| ProfileError::new(format!("tasks[{t}].{}", e.field), e.reason))?;
    }
    let sum = |f: &dyn Fn(&Ranges) -> f64| weights.iter().zip(tasks).map(|(w, r)| w * f(r)).sum::<f64>();
    Ok(Ranges {
        centre: sum(&|r| r.centre),
        inner: [sum(&|r| r.inner[0]), sum(&|r| r.inner[1])],
        outer: [sum(&|r| r.outer[0]), sum(&|r| r.outer[1])],
    })
}

/// A task's centre and inner range, and its outer range where its checks make one available.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaskRanges {
    /// M, the centre.
    pub centre: f64,
    /// I = [low, high].
    pub inner: [f64; 2],
    /// O = [low, high]; none where a check the task needs is unavailable.
    pub outer: Option<[f64; 2]>,
}

/// [`combine`] where a task's outer range may be unavailable: the centre and inner range
/// combine as always, and the combined outer range is available only where every task's is —
/// the profile methods' rule for categories E and F ("If only a required check cell is
/// unavailable, the average and inner range remain available but the outer range is marked
/// unavailable"), carried to the combination of tasks.
pub fn combine_tasks(weights: &[f64], tasks: &[TaskRanges]) -> Result<(Ranges, bool), ProfileError> {
    let filled: Vec<Ranges> =
        tasks.iter().map(|t| Ranges { centre: t.centre, inner: t.inner, outer: t.outer.unwrap_or(t.inner) }).collect();
    let r = combine(weights, &filled)?;
    Ok((r, tasks.iter().all(|t| t.outer.is_some())))
}

#[cfg(test)]
mod tests {
    use super::super::testing::close;
    use super::*;

    #[test]
    fn seed_m04_two_equal_tasks() {
        // The profile methods §M04 line 133: "For two equally weighted tasks with averages 40 and 60, the
        // combined average is 50. Inner ranges [30, 50] and [55, 65] give [(30+55)/2, (50+65)/2]
        // = [42.5, 57.5]. Outer ranges [25, 55] and [50, 70] give [37.5, 62.5]."
        let tasks = [
            Ranges { centre: 40.0, inner: [30.0, 50.0], outer: [25.0, 55.0] },
            Ranges { centre: 60.0, inner: [55.0, 65.0], outer: [50.0, 70.0] },
        ];
        let c = combine(&AMeasure::A1.weights(), &tasks).expect("combined");
        assert_eq!(c, Ranges { centre: 50.0, inner: [42.5, 57.5], outer: [37.5, 62.5] });
    }

    #[test]
    fn seed_a1_a2_a5_centres() {
        // §A1 line 232: "suppose the two task centers are 40 and 60. The A1 center is then
        // (40+60)/2=50." §A2 line 333: "The A2 center is therefore (60+40+20)/3=40." §A5 line
        // 429: "task centers of 50 and 60. The A5 center is (50+60)/2=55." Each task's ranges
        // here are its centre alone.
        let at = |m: f64| Ranges { centre: m, inner: [m, m], outer: [m, m] };
        let a1 = combine(&AMeasure::A1.weights(), &[at(40.0), at(60.0)]).expect("A1");
        close(a1.centre, 50.0, 1e-12, "A1");
        let a2 = combine(&AMeasure::A2.weights(), &[at(60.0), at(40.0), at(20.0)]).expect("A2");
        close(a2.centre, 40.0, 1e-12, "A2");
        let a5 = combine(&AMeasure::A5.weights(), &[at(50.0), at(60.0)]).expect("A5");
        close(a5.centre, 55.0, 1e-12, "A5");
    }

    #[test]
    fn seed_weights() {
        // §A0 line 169: "A1, two tasks at one-half each; A2, three at one-third each; A3 and A4,
        // one task each; A5, two at one-half each."
        assert_eq!(AMeasure::A1.weights(), vec![0.5, 0.5]);
        assert_eq!(AMeasure::A2.weights(), vec![1.0 / 3.0; 3]);
        assert_eq!(AMeasure::A3.weights(), vec![1.0]);
        assert_eq!(AMeasure::A4.weights(), vec![1.0]);
        assert_eq!(AMeasure::A5.weights(), vec![0.5, 0.5]);
        for m in [AMeasure::A1, AMeasure::A2, AMeasure::A3, AMeasure::A4, AMeasure::A5] {
            check_weights(&m.weights()).expect("sums to one");
            assert_eq!(m.weights().len(), m.tasks().len());
        }
        // §M04 line 133: "A3 and A4 each use one task and require no further combination."
        let t = Ranges { centre: 30.0, inner: [20.0, 40.0], outer: [20.0, 45.0] };
        assert_eq!(combine(&AMeasure::A3.weights(), &[t]).expect("A3"), t);
    }

    #[test]
    fn refuses_bad_input_naming_the_field() {
        let t = Ranges { centre: 40.0, inner: [30.0, 50.0], outer: [25.0, 55.0] };
        assert_eq!(combine(&[0.5, 0.4], &[t, t]).unwrap_err().field, "weights");
        assert_eq!(combine(&[], &[]).unwrap_err().field, "weights");
        assert_eq!(combine(&[1.5, -0.5], &[t, t]).unwrap_err().field, "weights[1]");
        assert_eq!(combine(&[0.5, 0.5], &[t]).unwrap_err().field, "tasks");
        let bad = Ranges { centre: 60.0, ..t };
        assert_eq!(combine(&[0.5, 0.5], &[t, bad]).unwrap_err().field, "tasks[1].centre");
        let bad = Ranges { outer: [35.0, 55.0], ..t };
        assert_eq!(combine(&[0.5, 0.5], &[bad, t]).unwrap_err().field, "tasks[0].outer");
        let bad = Ranges { inner: [50.0, 30.0], ..t };
        assert_eq!(combine(&[0.5, 0.5], &[bad, t]).unwrap_err().field, "tasks[0].inner");
        let bad = Ranges { centre: f64::NAN, ..t };
        assert_eq!(combine(&[0.5, 0.5], &[bad, t]).unwrap_err().field, "tasks[0].centre");
    }

    #[test]
    fn an_unavailable_outer_range_leaves_the_combined_outer_unavailable() {
        let tasks = [
            TaskRanges { centre: 40.0, inner: [30.0, 50.0], outer: Some([25.0, 55.0]) },
            TaskRanges { centre: 60.0, inner: [55.0, 65.0], outer: None },
        ];
        let (r, outer) = combine_tasks(&AMeasure::A1.weights(), &tasks).expect("combined");
        assert_eq!((r.centre, r.inner, outer), (50.0, [42.5, 57.5], false));
        let tasks = [tasks[0], TaskRanges { outer: Some([50.0, 70.0]), ..tasks[1] }];
        let (r, outer) = combine_tasks(&AMeasure::A1.weights(), &tasks).expect("combined");
        assert_eq!((r.outer, outer), ([37.5, 62.5], true));
    }
}
