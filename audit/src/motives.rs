//! The motive regression of the binary-allocation game (the SUVA audit paper §240.4–240.5; Leng & Yuan
//! 2024): which classical motives person B's choices between B1 and B2 follow, with the
//! group-identity and reciprocity extensions, CR1 standard errors clustered by payoff
//! configuration.
//!
//! # Formulas
//! Each state `(a1, b1, a2, b2)` has four motive signs, each +1 where the motive favours B1, −1
//! where it favours B2 and 0 where it is indifferent ([`motive_signs`]):
//! si = sgn(b1 − b2), comp = sgn((b1 − a1) − (b2 − a2)), da = sgn(|b2 − a2| − |b1 − a1|),
//! sw = sgn((a1 + b1) − (a2 + b2)). The coded action is a = +1 (B1), −1 (B2), 0 (no choice).
//! - [`motive_regression`], Eq. 240.5: a = β0 + βI·si + βC·comp + βD·da + βW·sw + ε; βk is the
//!   change in the probability of choosing the option motive k favours (a purely selfish
//!   chooser has βI = 1 and the others 0).
//! - [`group_regression`], Eq. 240.7: the same with γk·(ingroup × xk) added (no ingroup main
//!   effect, as the seed writes it): 9 coefficients.
//! - [`reciprocity`], Eq. 240.8: the prosocial indicator (B chose the option better for A) on
//!   an intercept and a "helped" dummy; the slope is R, the prosocial rate after A helped minus
//!   after A harmed. Decisions without a choice are left out of R.
//!
//! Every fit is [`stats::ols_cr1`](fn@agora_analysis::stats::ols_cr1) (Eq. 240.6) clustered by payoff
//! configuration: the replicates of a state, and the cue or history versions of one
//! configuration, share its payoffs.
//!
//! # The state enumeration
//! The game records each decision's state as an id in the decision's `context`:
//! `10_000 · treatment code + index`. This crate reads only the store's tables, never the game
//! crate, so the enumeration that maps an id to its configuration, cue and history is
//! reproduced here ([`state`]): it is part of the store's format, like the meaning of any
//! other column. `tests/binary_allocation.rs` at the workspace root, which sees both crates,
//! checks that the two enumerations agree on every id. The motive signs depend on payoff
//! differences only, and every variant's levels are equally spaced, so they are computed from
//! the level indices and hold in every variant.
//!
//! # References
//! Leng & Yuan (2024) "Do LLM agents exhibit social behavior?", Eq. (3); the SUVA audit paper §240.3–240.5;
//! Cameron & Miller (2015) J. Hum. Resour. 50:317–372 (CR1).

use std::collections::BTreeMap;

use rusqlite::Connection;
use serde::Serialize;

use agora_analysis::stats::{ols_cr1, ClusterFit, StatsError};

/// The environment's name in the store.
pub const ENVIRONMENT: &str = "binary-allocation";
/// The motives of Eq. 240.5, in regressor order.
pub const MOTIVES: [&str; 4] = ["self_interest", "competition", "difference_aversion", "social_welfare"];

/// The game's states as the game enumerates them (the audit reads a decision's state id back
/// through the game's own decoding).
pub use agora_environments::games::binary_allocation::{
    payoff_grid, reciprocity_grid, state, History, State as AllocationState, Treatment, ID_STRIDE, LEVELS,
};

/// What the motive regressions read of a state.
pub trait MotiveState {
    /// The four motive signs [si, comp, da, sw] of the state's configuration.
    fn signs(&self) -> [f64; 4];
    /// The option better for A (0 = B1, 1 = B2), where the options differ for A.
    fn prosocial_option(&self) -> Option<u32>;
    /// Reciprocity states: whether A helped (`true`) or harmed (`false`).
    fn helped(&self) -> Option<bool>;
}

impl MotiveState for AllocationState {
    fn signs(&self) -> [f64; 4] {
        let [a1, b1, a2, b2] = self.levels.map(f64::from);
        motive_signs(a1, b1, a2, b2)
    }

    fn prosocial_option(&self) -> Option<u32> {
        self.better_for_a()
    }

    fn helped(&self) -> Option<bool> {
        self.history.map(|h| h == History::Helped)
    }
}

/// Whether the treatment is one of the two reciprocity experiments.
fn is_reciprocity(t: Treatment) -> bool {
    matches!(t, Treatment::DirectReciprocity | Treatment::IndirectReciprocity)
}

/// The motive signs [si, comp, da, sw] of `(a1, b1, a2, b2)` (the SUVA audit paper §240.4.1).
pub fn motive_signs(a1: f64, b1: f64, a2: f64, b2: f64) -> [f64; 4] {
    let sgn = |x: f64| {
        if x > 0.0 {
            1.0
        } else if x < 0.0 {
            -1.0
        } else {
            0.0
        }
    };
    [sgn(b1 - b2), sgn((b1 - a1) - (b2 - a2)), sgn((b2 - a2).abs() - (b1 - a1).abs()), sgn((a1 + b1) - (a2 + b2))]
}

/// One decision as the store holds it: the state id (the decision's `context`) and the choice.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct AllocationDecision {
    /// The state id.
    pub state: u32,
    /// 0 for B1, 1 for B2; `None` for no choice (a model's fallback: no legal answer was
    /// given, coded a = 0 as Leng & Yuan code a missing choice).
    pub choice: Option<u32>,
}

/// Why a motive regression cannot be fitted.
#[derive(Debug, thiserror::Error, Clone, PartialEq)]
#[non_exhaustive]
pub enum MotiveError {
    /// No decisions were given.
    #[error("no decisions of the binary-allocation game")]
    Empty,
    /// A decision's state id is no state of the game.
    #[error("decision {index}: state id {state} is no state of the binary-allocation game")]
    UnknownState {
        /// Position of the decision in the input.
        index: usize,
        /// The id.
        state: u32,
    },
    /// A decision's choice is neither B1 nor B2.
    #[error("decision {index}: choice {choice} is neither B1 (0) nor B2 (1)")]
    BadChoice {
        /// Position of the decision in the input.
        index: usize,
        /// The choice.
        choice: u32,
    },
    /// The decisions come from more than one treatment.
    #[error("the decisions mix the {0} and {1} treatments; fit each treatment on its own")]
    MixedTreatments(&'static str, &'static str),
    /// The regression needs decisions of another treatment.
    #[error("{what} needs decisions of the {needs} treatment, got {got}")]
    WrongTreatment {
        /// The regression.
        what: &'static str,
        /// The treatment(s) it needs.
        needs: &'static str,
        /// The treatment given.
        got: &'static str,
    },
    /// The regression itself cannot be computed (one configuration only, collinear signs, …).
    #[error(transparent)]
    Stats(#[from] StatsError),
}

/// Checks the decisions and returns each one's state, and their common treatment.
fn states(decisions: &[AllocationDecision]) -> Result<(Vec<AllocationState>, Treatment), MotiveError> {
    let mut out = Vec::with_capacity(decisions.len());
    for (index, d) in decisions.iter().enumerate() {
        let s = state(d.state).ok_or(MotiveError::UnknownState { index, state: d.state })?;
        if let Some(choice) = d.choice.filter(|c| *c > 1) {
            return Err(MotiveError::BadChoice { index, choice });
        }
        if let Some(first) = out.first().map(|f: &AllocationState| f.treatment).filter(|t| *t != s.treatment) {
            return Err(MotiveError::MixedTreatments(first.as_str(), s.treatment.as_str()));
        }
        out.push(s);
    }
    let treatment = out.first().ok_or(MotiveError::Empty)?.treatment;
    Ok((out, treatment))
}

/// The coded action: +1 for B1, −1 for B2, 0 for no choice.
fn coded(choice: Option<u32>) -> f64 {
    match choice {
        Some(0) => 1.0,
        Some(_) => -1.0,
        None => 0.0,
    }
}

/// Eq. 240.5: the coded action on the four motive signs with an intercept, CR1 clustered by
/// payoff configuration. The decisions must come from one treatment (any of the four: every
/// state has a configuration); coefficients are named `intercept` and [`MOTIVES`].
pub fn motive_regression(decisions: &[AllocationDecision], alpha: f64) -> Result<ClusterFit, MotiveError> {
    let (states, _) = states(decisions)?;
    let x: Vec<Vec<f64>> = states.iter().map(|s| s.signs().to_vec()).collect();
    let y: Vec<f64> = decisions.iter().map(|d| coded(d.choice)).collect();
    let clusters: Vec<u32> = states.iter().map(|s| s.config).collect();
    let names: Vec<String> = MOTIVES.iter().map(|m| m.to_string()).collect();
    Ok(ols_cr1(&x, &y, &clusters, true, Some(&names), alpha)?)
}

/// Eq. 240.7: the coded action on the motive signs and their interactions with the ingroup
/// indicator (`ingroup:self_interest`, …), with an intercept and no ingroup main effect, CR1
/// clustered by payoff configuration. Group-treatment decisions only.
pub fn group_regression(decisions: &[AllocationDecision], alpha: f64) -> Result<ClusterFit, MotiveError> {
    let (states, treatment) = states(decisions)?;
    if treatment != Treatment::Group {
        return Err(MotiveError::WrongTreatment {
            what: "the group-identity regression (Eq. 240.7)",
            needs: "group",
            got: treatment.as_str(),
        });
    }
    let x: Vec<Vec<f64>> = states
        .iter()
        .map(|s| {
            let signs = s.signs();
            let ingroup = if s.cue.is_some_and(|(_, i)| i) { 1.0 } else { 0.0 };
            signs.iter().copied().chain(signs.iter().map(|v| ingroup * v)).collect()
        })
        .collect();
    let y: Vec<f64> = decisions.iter().map(|d| coded(d.choice)).collect();
    let clusters: Vec<u32> = states.iter().map(|s| s.config).collect();
    let names: Vec<String> =
        MOTIVES.iter().map(|m| m.to_string()).chain(MOTIVES.iter().map(|m| format!("ingroup:{m}"))).collect();
    Ok(ols_cr1(&x, &y, &clusters, true, Some(&names), alpha)?)
}

/// Eq. 240.8: the prosocial indicator (B chose the option better for A) on an intercept and
/// a `helped` dummy, CR1 clustered by payoff configuration; the `helped` coefficient is R.
/// Decisions of one reciprocity treatment (direct or indirect); decisions without a choice are
/// left out.
pub fn reciprocity(decisions: &[AllocationDecision], alpha: f64) -> Result<ClusterFit, MotiveError> {
    let (states, treatment) = states(decisions)?;
    if !is_reciprocity(treatment) {
        return Err(MotiveError::WrongTreatment {
            what: "the reciprocity statistic (Eq. 240.8)",
            needs: "direct-reciprocity or indirect-reciprocity",
            got: treatment.as_str(),
        });
    }
    let (mut x, mut y, mut clusters) = (Vec::new(), Vec::new(), Vec::new());
    for (s, d) in states.iter().zip(decisions) {
        let (Some(choice), Some(pro), Some(helped)) = (d.choice, s.prosocial_option(), s.helped()) else { continue };
        x.push(vec![if helped { 1.0 } else { 0.0 }]);
        y.push(if choice == pro { 1.0 } else { 0.0 });
        clusters.push(s.config);
    }
    Ok(ols_cr1(&x, &y, &clusters, true, Some(&["helped".to_string()]), alpha)?)
}

/// Every regression that applies to one treatment's decisions.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MotiveReport {
    /// The treatment.
    pub treatment: Treatment,
    /// Decisions read.
    pub decisions: usize,
    /// Of which without a choice (coded 0).
    pub no_choice: usize,
    /// Eq. 240.5.
    pub motives: ClusterFit,
    /// Eq. 240.7 (group treatment).
    pub group: Option<ClusterFit>,
    /// Eq. 240.8 (reciprocity treatments): the `helped` coefficient is R.
    pub reciprocity: Option<ClusterFit>,
}

/// Fits Eq. 240.5 and, where the treatment has one, its extension.
pub fn motive_report(decisions: &[AllocationDecision], alpha: f64) -> Result<MotiveReport, MotiveError> {
    let (_, treatment) = states(decisions)?;
    Ok(MotiveReport {
        treatment,
        decisions: decisions.len(),
        no_choice: decisions.iter().filter(|d| d.choice.is_none()).count(),
        motives: motive_regression(decisions, alpha)?,
        group: (treatment == Treatment::Group).then(|| group_regression(decisions, alpha)).transpose()?,
        reciprocity: is_reciprocity(treatment).then(|| reciprocity(decisions, alpha)).transpose()?,
    })
}

/// The binary-allocation decisions of one condition of a store.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AllocationSample {
    /// The roster (model) that decided.
    pub roster: String,
    /// The variant.
    pub variant: String,
    /// The cell.
    pub cell: String,
    /// The runs' arm (the treatment's name).
    pub arm: String,
    /// Every decision, run by run in step order.
    pub decisions: Vec<AllocationDecision>,
}

/// Reads every binary-allocation decision of a store, grouped by roster, variant, cell and
/// arm. A decision whose slot ended in a `fallback` transcript (no legal answer in its
/// attempts; the recorded action is a random draw) is read as no choice. The k-th decision of
/// a seat in a run is its transcript slot k.
pub fn read_store(conn: &Connection) -> rusqlite::Result<Vec<AllocationSample>> {
    let fallbacks = agora_records::families::audit::reads::fallback_slots(conn, ENVIRONMENT)?;
    let rows = agora_records::families::audit::reads::dictator_decisions(conn, ENVIRONMENT)?;
    let mut groups: BTreeMap<(String, String, String, String), Vec<AllocationDecision>> = BTreeMap::new();
    let mut slot: BTreeMap<(i64, i64), i64> = BTreeMap::new();
    for row in rows {
        let (run, roster, variant, cell, arm, seat, value, context) = row;
        let k = slot.entry((run, seat)).or_insert(0);
        let fallback = fallbacks.contains(&(run, seat, *k));
        *k += 1;
        // An id that is no state (absent, negative or fractional) is kept as u32::MAX, which
        // every fit refuses, naming the decision.
        let state = context
            .filter(|c| c.fract() == 0.0 && *c >= 0.0 && *c < f64::from(u32::MAX))
            .map_or(u32::MAX, |c| c as u32);
        let choice = (!fallback).then_some(value as u32);
        groups.entry((roster, variant, cell, arm)).or_default().push(AllocationDecision { state, choice });
    }
    Ok(groups
        .into_iter()
        .map(|((roster, variant, cell, arm), decisions)| AllocationSample { roster, variant, cell, arm, decisions })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    fn ids(t: Treatment) -> impl Iterator<Item = u32> {
        (0..t.states()).map(move |i| ID_STRIDE * t as u32 + i)
    }

    /// Decisions for every state of `t`, `reps` times, choosing by `rule(state, replicate)`.
    fn play(t: Treatment, reps: u32, rule: impl Fn(&AllocationState, u32) -> Option<u32>) -> Vec<AllocationDecision> {
        ids(t)
            .flat_map(|id| (0..reps).map(move |r| (id, r)))
            .map(|(id, r)| AllocationDecision { state: id, choice: rule(&state(id).expect("state"), r) })
            .collect()
    }

    /// The option paying B more; on a tie, B1 in even replicates and B2 in odd ones.
    fn selfish(s: &AllocationState, r: u32) -> Option<u32> {
        let [_, b1, _, b2] = s.levels;
        Some(if b1 > b2 {
            0
        } else if b2 > b1 {
            1
        } else {
            r % 2
        })
    }

    fn close(got: &[f64], want: &[f64]) {
        assert_eq!(got.len(), want.len());
        for (g, w) in got.iter().zip(want) {
            assert!((g - w).abs() < 1e-10, "got {got:?}, want {want:?}");
        }
    }

    #[test]
    fn seed_003_fixtures_grid_sizes_and_motive_signs() {
        // The SUVA audit paper §240.14: grid sizes 240 and 120; motive_features(200, 400, 600, 200) = (1, 1, 1, −1).
        assert_eq!((payoff_grid().len(), reciprocity_grid().len()), (240, 120));
        assert_eq!(motive_signs(200.0, 400.0, 600.0, 200.0), [1.0, 1.0, 1.0, -1.0]);
        let counts: Vec<u32> = Treatment::ALL.iter().map(|t| t.states()).collect();
        assert_eq!(counts, [240, 1920, 240, 240]);
        // Signs from level indices equal signs from any equally spaced levels.
        for c in payoff_grid() {
            let [a1, b1, a2, b2] = c.map(|l| 100.0 + 200.0 * f64::from(l));
            let s = state(payoff_grid().iter().position(|x| x == c).expect("in grid") as u32).expect("state");
            assert_eq!(s.signs(), motive_signs(a1, b1, a2, b2), "{c:?}");
        }
    }

    #[test]
    fn ids_round_trip_and_cover_each_treatment_once() {
        for t in Treatment::ALL {
            let mut seen = BTreeSet::new();
            for id in ids(t) {
                let s = state(id).expect("state");
                assert_eq!((s.treatment, ID_STRIDE * t as u32 + s.index), (t, id));
                assert!(seen.insert((s.levels, s.cue, s.helped())));
            }
            assert!(state(ID_STRIDE * t as u32 + t.states()).is_none());
        }
    }

    #[test]
    fn a_purely_selfish_chooser_has_beta_i_one_and_the_rest_zero() {
        // The SUVA audit paper §240.4.1: "A purely self-interested chooser has βI = 1 and the rest zero".
        // Indifferent between equal own payoffs, it abstains (a = 0) or splits its replicates.
        let abstains = play(Treatment::Distributional, 1, |s, r| {
            let [_, b1, _, b2] = s.levels;
            (b1 != b2).then(|| selfish(s, r).expect("choice"))
        });
        let splits = play(Treatment::Distributional, 2, selfish);
        for decisions in [abstains, splits] {
            let fit = motive_regression(&decisions, 0.05).expect("fits");
            assert_eq!(
                fit.names,
                ["intercept", "self_interest", "competition", "difference_aversion", "social_welfare"]
            );
            close(&fit.coef, &[0.0, 1.0, 0.0, 0.0, 0.0]);
            assert_eq!(fit.clusters, 240, "clustered by payoff configuration");
        }
        // In every treatment: the group treatment's 1,920 states cluster into 240 configurations.
        let fit = motive_regression(&play(Treatment::Group, 2, selfish), 0.05).expect("fits");
        close(&fit.coef, &[0.0, 1.0, 0.0, 0.0, 0.0]);
        assert_eq!((fit.n, fit.clusters), (3840, 240));
    }

    #[test]
    fn cr1_standard_errors_are_eq_240_6_clustered_by_configuration() {
        // A chooser whose B1 rate depends on the state and the replicate, so that residuals vary
        // within and between configurations; the CR1 sandwich computed here by hand.
        let decisions = play(Treatment::Group, 2, |s, r| {
            let h = (u32::from(s.levels[0]) * 7 + u32::from(s.levels[3]) * 3 + s.index * 5 + r * 11) % 13;
            (h != 12).then_some(u32::from(h < 6 + u32::from(s.levels[1])))
        });
        let fit = motive_regression(&decisions, 0.05).expect("fits");
        let x: Vec<Vec<f64>> = decisions
            .iter()
            .map(|d| std::iter::once(1.0).chain(state(d.state).expect("state").signs()).collect())
            .collect();
        let y: Vec<f64> = decisions.iter().map(|d| coded(d.choice)).collect();
        let k = 5;
        let mut xtx = vec![vec![0.0; k]; k];
        let mut xty = vec![0.0; k];
        for (row, yi) in x.iter().zip(&y) {
            for i in 0..k {
                xty[i] += row[i] * yi;
                for j in 0..k {
                    xtx[i][j] += row[i] * row[j];
                }
            }
        }
        let inv = invert(xtx);
        let beta: Vec<f64> = (0..k).map(|i| (0..k).map(|j| inv[i][j] * xty[j]).sum()).collect();
        close(&fit.coef, &beta);
        let mut scores: BTreeMap<u32, Vec<f64>> = BTreeMap::new();
        for (d, (row, yi)) in decisions.iter().zip(x.iter().zip(&y)) {
            let u = yi - (0..k).map(|j| row[j] * beta[j]).sum::<f64>();
            let g = scores.entry(state(d.state).expect("state").config).or_insert(vec![0.0; k]);
            for j in 0..k {
                g[j] += row[j] * u;
            }
        }
        let (n, g) = (y.len() as f64, scores.len() as f64);
        let c = g / (g - 1.0) * (n - 1.0) / (n - k as f64);
        let mut meat = vec![vec![0.0; k]; k];
        for s in scores.values() {
            for i in 0..k {
                for j in 0..k {
                    meat[i][j] += s[i] * s[j];
                }
            }
        }
        let se: Vec<f64> = (0..k)
            .map(|i| {
                let v: f64 = (0..k)
                    .flat_map(|a| (0..k).map(move |b| (a, b)))
                    .map(|(a, b)| inv[i][a] * meat[a][b] * inv[b][i])
                    .sum();
                (c * v).sqrt()
            })
            .collect();
        close(&fit.se, &se);
        assert_eq!(g, 240.0);
    }

    /// Gauss–Jordan inverse of a small positive definite matrix (test only).
    fn invert(mut a: Vec<Vec<f64>>) -> Vec<Vec<f64>> {
        let k = a.len();
        let mut inv: Vec<Vec<f64>> = (0..k).map(|i| (0..k).map(|j| f64::from(u8::from(i == j))).collect()).collect();
        for col in 0..k {
            let p = (col..k).max_by(|x, y| a[*x][col].abs().total_cmp(&a[*y][col].abs())).expect("rows");
            a.swap(col, p);
            inv.swap(col, p);
            let d = a[col][col];
            for j in 0..k {
                a[col][j] /= d;
                inv[col][j] /= d;
            }
            for row in 0..k {
                if row != col {
                    let f = a[row][col];
                    for j in 0..k {
                        a[row][j] -= f * a[col][j];
                        inv[row][j] -= f * inv[col][j];
                    }
                }
            }
        }
        inv
    }

    #[test]
    fn ingroup_favouritism_shows_as_gamma_w_positive_and_gamma_i_negative() {
        // Selfish towards the outgroup, welfare-maximising towards the ingroup (abstaining
        // where the motive is indifferent): a = si + ingroup·(sw − si) exactly.
        let decisions = play(Treatment::Group, 1, |s, _| {
            let [si, _, _, sw] = s.signs();
            let m = if s.cue.is_some_and(|(_, i)| i) { sw } else { si };
            (m != 0.0).then_some(u32::from(m < 0.0))
        });
        let fit = group_regression(&decisions, 0.05).expect("fits");
        assert_eq!(fit.names[5], "ingroup:self_interest");
        close(&fit.coef, &[0.0, 1.0, 0.0, 0.0, 0.0, -1.0, 0.0, 0.0, 1.0]);
        let report = motive_report(&decisions, 0.05).expect("report");
        assert!(report.group.is_some() && report.reciprocity.is_none());
    }

    #[test]
    fn reciprocity_is_the_helped_minus_harmed_prosocial_rate() {
        // After help: prosocial in 3 of 4 replicates; after harm: in 1 of 4. R = 0.5.
        for t in [Treatment::DirectReciprocity, Treatment::IndirectReciprocity] {
            let decisions = play(t, 4, |s, r| {
                let pro = s.prosocial_option().expect("differs for A");
                let kind = if s.helped() == Some(true) { r < 3 } else { r < 1 };
                Some(if kind { pro } else { 1 - pro })
            });
            let fit = reciprocity(&decisions, 0.05).expect("fits");
            assert_eq!(fit.names, ["intercept", "helped"]);
            close(&fit.coef, &[0.25, 0.5]);
            assert_eq!(fit.clusters, 120);
            let report = motive_report(&decisions, 0.05).expect("report");
            assert_eq!(report.reciprocity.expect("R").coef[1], fit.coef[1]);
        }
    }

    #[test]
    fn bad_input_is_refused_with_the_reason() {
        let d = |state, choice| AllocationDecision { state, choice };
        assert_eq!(motive_regression(&[], 0.05), Err(MotiveError::Empty));
        assert_eq!(
            motive_regression(&[d(240, Some(0))], 0.05),
            Err(MotiveError::UnknownState { index: 0, state: 240 })
        );
        assert_eq!(motive_regression(&[d(0, Some(2))], 0.05), Err(MotiveError::BadChoice { index: 0, choice: 2 }));
        assert_eq!(
            motive_regression(&[d(0, Some(0)), d(ID_STRIDE, Some(0))], 0.05),
            Err(MotiveError::MixedTreatments("distributional", "group"))
        );
        let e = group_regression(&[d(0, Some(0))], 0.05).expect_err("not a group state").to_string();
        assert!(e.contains("Eq. 240.7") && e.contains("distributional"), "{e}");
        assert!(reciprocity(&[d(ID_STRIDE, Some(0))], 0.05).is_err());
        // One configuration is one cluster: CR1 needs two.
        let e = motive_regression(&[d(0, Some(0)), d(0, Some(1)), d(0, None)], 0.05).expect_err("one cluster");
        assert!(matches!(e, MotiveError::Stats(_)), "{e:?}");
    }
}
