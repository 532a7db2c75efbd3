//! Claims as data (`assets/claims.ron`).

use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

/// The shipped claim table's text.
pub const CLAIMS_RON: &str = include_str!("../../assets/claims.ron");

/// How a claim holds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum ClaimKind {
    /// TOST equivalence with a point anchor at its margin.
    Equivalence {
        /// Id of the point anchor, which gives the margin.
        anchor: String,
    },
    /// The median run-level effect times `sign` clears `margin`.
    Direction {
        /// Direction of the human effect: +1 for a rise, −1 for a decline.
        sign: f64,
        /// Amount the median effect times `sign` must reach.
        margin: f64,
        /// Id of the direction anchor.
        anchor: String,
    },
    /// The mean lies in the anchor's range.
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
    /// The tipping sweep's bracket for the critical mass overlaps the anchor's range.
    CriticalMass {
        /// Id of the range anchor for the critical mass.
        anchor: String,
    },
}

impl ClaimKind {
    /// Id of the anchor the claim is tested against.
    pub fn anchor(&self) -> &str {
        match self {
            ClaimKind::Equivalence { anchor }
            | ClaimKind::Direction { anchor, .. }
            | ClaimKind::Range { anchor }
            | ClaimKind::Majority { anchor }
            | ClaimKind::ArmContrast { anchor, .. }
            | ClaimKind::CriticalMass { anchor } => anchor,
        }
    }
}

/// One claim the ladder grades, as data.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
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
    /// How the claim holds.
    pub kind: ClaimKind,
}

/// The claim table: a format version and the claims.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClaimTable {
    /// Format version of the table.
    pub version: u32,
    /// The claims, in the order they are graded.
    pub claims: Vec<Claim>,
}

impl ClaimTable {
    /// Parses a table; every claim must name an anchor of the shipped anchor table.
    pub fn parse(text: &str) -> Result<ClaimTable, String> {
        let t: ClaimTable = ron::from_str(text).map_err(|e| e.to_string())?;
        let anchors = crate::anchors::AnchorTable::shipped();
        for c in &t.claims {
            if anchors.get(c.kind.anchor()).is_none() {
                return Err(format!("claim {}: unknown anchor {}", c.id, c.kind.anchor()));
            }
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
    #[test]
    fn shipped_claims_parse_and_name_known_anchors() {
        let t = super::ClaimTable::parse(super::CLAIMS_RON).expect("parses");
        assert!(t.claims.len() >= 10);
    }
}
