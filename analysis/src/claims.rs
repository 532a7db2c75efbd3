//! Claims as data (`assets/claims.ron`), and the canonical human effect of each environment.
//!
//! The paper ("Benchmarking large language model agent societies against human behavioural
//! distributions") grades a claim on a ladder whose first rung is the claim's own test at
//! baseline (a corridor, an equivalence margin, the directional margin, majority formation)
//! and whose second rung reads one effect per environment, not per claim:
//!
//! > "Δmax is the range of cell means over the baseline and the cells of one level, and S is
//! > the share of those cells in which the canonical human effect keeps its sign."
//!
//! > "the effect is the change in contributions between the first and last round, the modelled
//! > change in cooperation across the ten rounds, or, for a rate outcome, formation of a
//! > convention in the majority of runs."
//!
//! Those three — public goods, the repeated dilemma, the naming game — are the table's
//! [`CanonicalEffect`]s. The bargaining battery and the 11–20 game have none: the paper names
//! none for them, and their perturbation cells hold two runs ("results from the latter are
//! reported as descriptive throughout, because two runs cannot support an inferential test"),
//! so their claims stop at Tier 1.

use std::collections::BTreeSet;
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

use crate::anchors::{AnchorTable, AnchorValue};

/// The shipped claim table's text.
pub const CLAIMS_RON: &str = include_str!("../../assets/claims.ron");

pub use crate::declared::{CanonicalEffect, EffectRule};

/// One category of a type-share claim: the anchor's label and the run-level metric holding
/// the share of agents of that type.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TypeShare {
    /// The anchor distribution's label of the type.
    pub label: String,
    /// Run-level metric holding the share of agents of the type.
    pub metric: String,
}

/// How a claim is tested against its anchor: at baseline for Tier 1 (the claim's own test) and,
/// for Tier 3, as equivalence with the anchor.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub enum ClaimKind {
    /// TOST equivalence with a point anchor at its margin.
    Equivalence {
        /// Id of the point anchor (or of an anchor whose value is not on record).
        anchor: String,
        /// The margin, where the paper deposited none for this anchor: Agora's choice, allowed
        /// only when the anchor has no margin of its own.
        #[serde(default)]
        margin: Option<f64>,
    },
    /// The median run-level effect times `sign` clears `margin` (the directional rule).
    Direction {
        /// Direction of the human effect: +1 for a rise, −1 for a decline.
        sign: f64,
        /// Amount the median effect times `sign` must reach.
        margin: f64,
        /// Id of the direction anchor.
        anchor: String,
        /// Id of a point anchor holding the human size of the effect, where one is on record:
        /// Tier 3's equivalence tests the metric against it (TOST at its margin). Without one
        /// (and without the lab's own human anchors), Tier 3 says no human value is on record.
        #[serde(default)]
        equivalent: Option<String>,
    },
    /// The mean lies in the anchor's range (equivalence with a range: the 90 % interval of
    /// the mean lies inside it).
    Range {
        /// Id of the range anchor.
        anchor: String,
    },
    /// The outcome (0/1 per run) holds in the majority of runs.
    Majority {
        /// Id of the anchor.
        anchor: String,
    },
    /// The arm's mean differs from `versus` in the direction `sign`, significantly after Holm.
    ArmContrast {
        /// Arm the claim's arm is contrasted with.
        versus: String,
        /// Expected sign of the claim's arm's mean minus that of `versus`.
        sign: f64,
        /// Id of the anchor.
        anchor: String,
    },
    /// The critical mass of the tipping sweep falls inside the anchor's range.
    CriticalMass {
        /// Id of the range anchor for the critical mass.
        anchor: String,
    },
    /// The normalised Wasserstein distance between the pooled choice histogram and the
    /// anchor's distribution: matches when the upper end of its bootstrap interval over runs
    /// lies below `max_distance`.
    Distance {
        /// Id of the distribution anchor.
        anchor: String,
        /// Prefix of the run-level metrics holding each run's share of choices per label
        /// (`choice_` for `choice_11` … `choice_20`).
        histogram: String,
        /// Largest distance that matches; the paper states none, so this is Agora's choice.
        max_distance: f64,
    },
    /// Shares of agent types against the anchor's distribution: matches when every listed
    /// type's share is TOST-equivalent to the anchor's at `margin`.
    TypeShares {
        /// Id of the distribution anchor.
        anchor: String,
        /// The types compared (labels of the anchor not listed are left out).
        shares: Vec<TypeShare>,
        /// Equivalence margin of each share; the paper deposited none, so this is Agora's choice.
        margin: f64,
    },
}

impl ClaimKind {
    /// Id of the anchor the claim is tested against.
    pub fn anchor(&self) -> &str {
        match self {
            ClaimKind::Equivalence { anchor, .. }
            | ClaimKind::Direction { anchor, .. }
            | ClaimKind::Range { anchor }
            | ClaimKind::Majority { anchor }
            | ClaimKind::ArmContrast { anchor, .. }
            | ClaimKind::CriticalMass { anchor }
            | ClaimKind::Distance { anchor, .. }
            | ClaimKind::TypeShares { anchor, .. } => anchor,
        }
    }
}

/// The human mechanism of a claim, as the stated values the human experiment records behind
/// the behaviour (Tier 3 looks for them in the transcripts).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub enum Mechanism {
    /// The mechanism named as value codes of the default codebook.
    Values {
        /// Role whose action indicator the dependency is read from (an indicator the claim's
        /// game declares; see [`crate::declared::Declared::indicator`]).
        role: String,
        /// Value codes of the default codebook (`assets/codebooks/default.ron`), any one of
        /// which carries the mechanism.
        values: Vec<String>,
        /// Expected sign of the dependency of the indicator on the values: +1 where stating
        /// the value raises the indicator, −1 where it lowers it (a rejection, with `accept`
        /// as the indicator).
        sign: f64,
        /// Why these values, with the literature.
        why: String,
        /// One of `values` declared in advance as the value Tier 3 tests: it narrows the family
        /// of tries to that value (the models and coders stay in it). Without it, every value
        /// listed is tried, and every try counts in the Holm family.
        #[serde(default)]
        primary: Option<String>,
    },
    /// The mechanism named as dynamics the runs themselves show (the naming game's negotiation,
    /// after the instrument paper's own account): the outcome still forms in a control arm that
    /// removes the shortcut (the shuffled-pool arm: no name is first on every list), and it forms
    /// at the pace of the classical dynamics of the same game, within a declared factor.
    Dynamics {
        /// The control arm in which the claim's outcome must still hold in the majority of runs.
        control_arm: String,
        /// The run-level metric of the time the outcome took (runs where it formed).
        time_metric: String,
        /// Largest ratio, either way, between the model's median time and the classical
        /// rosters' median time in the claim's arm (strictly below it matches).
        max_speed_ratio: f64,
        /// Why these dynamics, with the literature.
        why: String,
    },
    /// No mechanism to name as stated values, and why; Tier 3 names it as its unmet condition.
    Unnamed {
        /// Why no stated value names the mechanism.
        why: String,
    },
}

/// One claim the ladder grades, as data.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Claim {
    /// Identifier the verdicts name the claim by.
    pub id: String,
    /// The claim in words.
    pub text: String,
    /// Environment whose runs the claim is read from (as in study files, e.g. `public-goods`).
    pub environment: String,
    /// Arm of the environment the claim is read from.
    pub arm: String,
    /// Run-level metric the claim is read from.
    pub metric: String,
    /// How the claim matches its anchor.
    pub kind: ClaimKind,
    /// The human mechanism as stated values (Tier 3's transcript audit); a claim without one
    /// cannot reach Tier 3.
    #[serde(default)]
    pub mechanism: Option<Mechanism>,
}

impl Claim {
    /// The equivalence margin: the claim's own (Agora's choice) or the anchor's (fixed in
    /// advance).
    pub fn margin(&self, anchors: &AnchorTable) -> Option<f64> {
        match &self.kind {
            ClaimKind::Equivalence { margin: Some(m), .. } | ClaimKind::TypeShares { margin: m, .. } => Some(*m),
            _ => anchors.get(self.kind.anchor()).and_then(|a| a.margin),
        }
    }
}

/// The claim table: a format version, the canonical effect of each environment that has one,
/// and the claims.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClaimTable {
    /// Format version of the table.
    pub version: u32,
    /// The claims, in the order they are graded.
    pub claims: Vec<Claim>,
}

/// Why a claim's mechanism is ill-formed (its value codes are checked against the default codebook
/// by the audit, `agora_audit::codebook::check_claims`, which owns the codebook).
fn check_mechanism(c: &Claim) -> Result<(), String> {
    match &c.mechanism {
        None => Ok(()),
        Some(Mechanism::Unnamed { why }) if why.trim().is_empty() => Err("mechanism: Unnamed needs a `why`".into()),
        Some(Mechanism::Unnamed { .. }) => Ok(()),
        Some(Mechanism::Dynamics { control_arm, time_metric, max_speed_ratio, why }) => {
            if control_arm.trim().is_empty() || control_arm == &c.arm {
                return Err("mechanism.control_arm: an arm other than the claim's".into());
            }
            if time_metric.trim().is_empty() {
                return Err("mechanism.time_metric: empty".into());
            }
            if !(max_speed_ratio.is_finite() && *max_speed_ratio > 1.0) {
                return Err(format!("mechanism.max_speed_ratio must be above 1, got {max_speed_ratio}"));
            }
            if why.trim().is_empty() {
                return Err("mechanism.why: empty".into());
            }
            Ok(())
        }
        Some(Mechanism::Values { role, values, sign, why, primary }) => {
            if let Some(p) = primary {
                if !values.contains(p) {
                    return Err(format!("mechanism.primary: `{p}` is not one of the listed values"));
                }
            }
            if role.trim().is_empty() {
                return Err("mechanism.role: empty".into());
            }
            if values.is_empty() {
                return Err("mechanism.values: no value listed".into());
            }
            let mut seen = BTreeSet::new();
            for v in values {
                if v.trim().is_empty() {
                    return Err("mechanism.values: an empty value code".into());
                }
                if !seen.insert(v.as_str()) {
                    return Err(format!("mechanism.values: `{v}` listed twice"));
                }
            }
            if *sign != 1.0 && *sign != -1.0 {
                return Err(format!("mechanism.sign must be +1 or -1, got {sign}"));
            }
            if why.trim().is_empty() {
                return Err("mechanism.why: empty".into());
            }
            Ok(())
        }
    }
}

/// Why a claim does not fit the shipped anchors.
fn check(c: &Claim, anchors: &AnchorTable) -> Result<(), String> {
    let anchor = anchors.get(c.kind.anchor()).ok_or_else(|| format!("unknown anchor {}", c.kind.anchor()))?;
    match &c.kind {
        ClaimKind::Equivalence { margin, .. } => {
            if !matches!(anchor.value, AnchorValue::Point(_) | AnchorValue::Unrecorded) {
                return Err(format!("equivalence needs a point anchor, {} is not one", anchor.id));
            }
            match (margin, anchor.margin) {
                (Some(_), Some(_)) => {
                    return Err(format!(
                        "anchor {} has a margin fixed in advance; the claim may not set one",
                        anchor.id
                    ))
                }
                (None, None) => return Err(format!("anchor {} has no margin: the claim must give one", anchor.id)),
                (Some(m), None) if !(*m > 0.0 && m.is_finite()) => return Err(format!("margin {m} must be positive")),
                _ => {}
            }
        }
        ClaimKind::Direction { sign, .. } | ClaimKind::ArmContrast { sign, .. } => {
            if *sign != 1.0 && *sign != -1.0 {
                return Err(format!("sign must be +1 or -1, got {sign}"));
            }
        }
        ClaimKind::Range { .. } | ClaimKind::CriticalMass { .. } => {
            if !matches!(anchor.value, AnchorValue::Range { .. }) {
                return Err(format!("anchor {} is not a range", anchor.id));
            }
        }
        ClaimKind::Majority { .. } => {}
        ClaimKind::Distance { max_distance, .. } => {
            if !matches!(anchor.value, AnchorValue::Distribution { .. }) {
                return Err(format!("anchor {} is not a distribution", anchor.id));
            }
            if !(*max_distance > 0.0 && *max_distance <= 1.0) {
                return Err(format!("max_distance {max_distance} must lie in (0, 1]"));
            }
        }
        ClaimKind::TypeShares { shares, margin, .. } => {
            let AnchorValue::Distribution { labels, .. } = &anchor.value else {
                return Err(format!("anchor {} is not a distribution", anchor.id));
            };
            if shares.is_empty() {
                return Err("no type shares listed".into());
            }
            if let Some(s) = shares.iter().find(|s| !labels.contains(&s.label)) {
                return Err(format!("anchor {} has no type `{}`", anchor.id, s.label));
            }
            if !(*margin > 0.0 && margin.is_finite()) {
                return Err(format!("margin {margin} must be positive"));
            }
        }
    }
    Ok(())
}

impl ClaimTable {
    /// Parses a table; every claim must name an anchor of the shipped anchor table that fits
    /// its kind, have a unique id, and name its mechanism's values once each (that they are value
    /// codes of the default codebook is the audit's check, `agora_audit::codebook::check_claims`;
    /// the role's action indicator is the game's declaration, read with the runs).
    pub fn parse(text: &str) -> Result<ClaimTable, String> {
        let opts = ron::Options::default().with_default_extension(ron::extensions::Extensions::IMPLICIT_SOME);
        let t: ClaimTable = opts.from_str(text).map_err(|e| e.to_string())?;
        let anchors = AnchorTable::shipped();
        let mut ids = BTreeSet::new();
        for c in &t.claims {
            if !ids.insert(c.id.as_str()) {
                return Err(format!("claim {}: duplicate id", c.id));
            }
            check(c, anchors).and_then(|()| check_mechanism(c)).map_err(|e| format!("claim {}: {e}", c.id))?;
        }
        Ok(t)
    }

    /// The shipped table.
    pub fn shipped() -> &'static ClaimTable {
        static T: OnceLock<ClaimTable> = OnceLock::new();
        T.get_or_init(|| ClaimTable::parse(CLAIMS_RON).expect("invariant: the shipped claims parse (tested)"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shipped(id: &str) -> Claim {
        ClaimTable::parse(CLAIMS_RON).expect("parses").claims.into_iter().find(|c| c.id == id).expect(id)
    }

    #[test]
    fn shipped_claims_parse_and_name_known_anchors() {
        let t = ClaimTable::parse(CLAIMS_RON).expect("parses");
        assert!(t.claims.len() >= 16);
    }

    #[test]
    fn every_shipped_mechanism_names_a_role_its_game_declares_an_indicator_for() {
        let declared = crate::declared::tests::shipped();
        for c in &ClaimTable::shipped().claims {
            if let Some(Mechanism::Values { role, .. }) = &c.mechanism {
                assert!(declared.indicator(&c.environment, role).is_some(), "{}: {} / {role}", c.id, c.environment);
            }
        }
    }

    #[test]
    fn the_new_claims_have_their_kinds_and_agoras_margins() {
        let a = AnchorTable::shipped();
        let c = shipped("pgg-round10-human");
        assert_eq!((c.metric.as_str(), c.kind.anchor(), c.margin(a)), ("contribution_r10", "pgg-round10", Some(0.10)));
        let c = shipped("pd-endgame");
        assert_eq!(
            c.kind,
            ClaimKind::Direction { sign: 1.0, margin: 0.10, anchor: "pd-decline".into(), equivalent: None }
        );
        assert_eq!(c.metric, "defection_endgame_rise");
        let c = shipped("cc-slope");
        assert_eq!((c.metric.as_str(), c.margin(a)), ("cc_slope", Some(0.10)));
        let c = shipped("ultimatum-rejection");
        assert_eq!((c.metric.as_str(), c.margin(a)), ("rejection", Some(0.05)));
        let c = shipped("money-request-distance");
        assert!(matches!(c.kind, ClaimKind::Distance { max_distance, .. } if max_distance == 0.10));
        // The strategy-method type shares are not measured by play: no shipped claim reads them.
        assert!(ClaimTable::parse(CLAIMS_RON).expect("parses").claims.iter().all(|c| c.id != "cc-types"));
    }

    /// A claim table of one claim `x` on the ultimatum game's offers, with `rest` (its kind, and
    /// any other field) written after the metric.
    fn ultimatum_offer_claim(rest: &str) -> String {
        format!(
            "ClaimTable(version: 4, claims: [Claim(id: \"x\", text: \"t\", environment: \"bargaining\", \
             arm: \"ultimatum\", metric: \"offer\", {rest})])"
        )
    }

    #[test]
    fn a_claim_may_not_override_a_margin_fixed_in_advance_nor_omit_a_missing_one() {
        let base = |kind: &str| ultimatum_offer_claim(&format!("kind: {kind}"));
        let e =
            ClaimTable::parse(&base("Equivalence(anchor: \"ultimatum-offer\", margin: 0.2)")).expect_err("override");
        assert!(e.contains("fixed in advance"), "{e}");
        let e = ClaimTable::parse(&base("Equivalence(anchor: \"ultimatum-rejection\")")).expect_err("no margin");
        assert!(e.contains("must give one"), "{e}");
        assert!(ClaimTable::parse(&base("Equivalence(anchor: \"ultimatum-rejection\", margin: 0.05)")).is_ok());
        let e = ClaimTable::parse(&base("Distance(anchor: \"ultimatum-offer\", histogram: \"c_\", max_distance: 0.1)"))
            .expect_err("not a distribution");
        assert!(e.contains("not a distribution"), "{e}");
    }

    #[test]
    fn every_shipped_claim_decides_its_mechanism() {
        let t = ClaimTable::parse(CLAIMS_RON).expect("parses");
        for c in &t.claims {
            assert!(c.mechanism.is_some(), "{}: names a mechanism or says why it has none", c.id);
        }
        let values = |id: &str| match shipped(id).mechanism {
            Some(Mechanism::Values { role, values, sign, .. }) => (role, values, sign),
            other => panic!("{id}: {other:?}"),
        };
        assert_eq!(values("ultimatum-offer"), ("proposer".into(), vec!["fairness".to_string()], 1.0));
        assert_eq!(values("ultimatum-rejection").2, -1.0);
        assert_eq!(values("dictator-giving").1, ["altruism", "fairness"]);
        assert_eq!(values("cc-slope").1, ["positive_reciprocity", "fairness"]);
        assert!(matches!(
            shipped("convention-forms").mechanism,
            Some(Mechanism::Dynamics { ref control_arm, max_speed_ratio, .. }) if control_arm == "shuffled-pool" && max_speed_ratio == 2.0
        ));
        for id in ["critical-mass", "money-request-distance", "pd-endgame", "punishment-raises"] {
            assert!(matches!(shipped(id).mechanism, Some(Mechanism::Unnamed { .. })), "{id}");
        }
    }

    #[test]
    fn a_mechanism_must_be_well_formed() {
        let base = |mechanism: &str| {
            ultimatum_offer_claim(&format!("kind: Equivalence(anchor: \"ultimatum-offer\"), mechanism: {mechanism}"))
        };
        let ok = "Values(role: \"proposer\", values: [\"fairness\"], sign: 1.0, why: \"w\")";
        assert!(ClaimTable::parse(&base(ok)).is_ok());
        let e =
            ClaimTable::parse(&base(&ok.replace("[\"fairness\"]", "[\"fairness\", \"fairness\"]"))).expect_err("twice");
        assert!(e.contains("claim x: mechanism.values: `fairness` listed twice"), "{e}");
        let e = ClaimTable::parse(&base(&ok.replace("1.0, why", "0.5, why"))).expect_err("sign");
        assert!(e.contains("mechanism.sign"), "{e}");
        let e = ClaimTable::parse(&base("Unnamed(why: \"\")")).expect_err("no reason");
        assert!(e.contains("Unnamed needs a `why`"), "{e}");
        let e =
            ClaimTable::parse(&base("Values(role: \"proposer\", values: [\"fairness\"], sign: 1.0, why: \"w\", x: 1)"))
                .expect_err("unknown field");
        assert!(e.contains('x'), "{e}");
    }
}
