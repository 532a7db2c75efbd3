//! Claims as data (`assets/claims.ron`).

use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

pub const CLAIMS_RON: &str = include_str!("../../assets/claims.ron");

/// How a claim holds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum ClaimKind {
    /// TOST equivalence with a point anchor at its margin.
    Equivalence { anchor: String },
    /// The median run-level effect times `sign` clears `margin`.
    Direction { sign: f64, margin: f64, anchor: String },
    /// The mean lies in the anchor's range.
    Range { anchor: String },
    /// The outcome (0/1 per run) holds in the majority of runs.
    Majority { anchor: String },
    /// The arm's mean differs from `versus` in the direction `sign`, significantly after Holm.
    ArmContrast { versus: String, sign: f64, anchor: String },
    /// The tipping sweep's bracket for the critical mass overlaps the anchor's range.
    CriticalMass { anchor: String },
}

impl ClaimKind {
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

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Claim {
    pub id: String,
    pub text: String,
    pub environment: String,
    pub arm: String,
    pub metric: String,
    pub kind: ClaimKind,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClaimTable {
    pub version: u32,
    pub claims: Vec<Claim>,
}

impl ClaimTable {
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
