//! Human anchors, shipped as data with provenance (`assets/anchors.ron`).

use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

/// The shipped anchor table's text.
pub const ANCHORS_RON: &str = include_str!("../../assets/anchors.ron");

/// Environment an anchor belongs to (names as in study files).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum AnchorEnvironment {
    PrisonersDilemma,
    PublicGoods,
    Bargaining,
    MoneyRequest,
    NamingGame,
}

/// Expected direction of a dynamic.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Direction {
    Decline,
    Rise,
    Forms,
}

/// The anchor's value.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum AnchorValue {
    Point(f64),
    Range { low: f64, high: f64 },
    Distribution { labels: Vec<String>, shares: Vec<f64> },
    Direction(Direction),
}

/// Evidence tier: meta-analysis or single experiment.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Tier {
    MA,
    SE,
}

/// Verification status: V verified, S one careful secondary source, U unverified.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Status {
    V,
    S,
    U,
}

/// One anchor.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Anchor {
    pub id: String,
    pub environment: AnchorEnvironment,
    pub quantity: String,
    pub value: AnchorValue,
    pub unit: String,
    pub source: String,
    pub evidence: String,
    pub tier: Tier,
    pub status: Status,
    /// Equivalence margin fixed in advance, where the anchor is tested by TOST.
    #[serde(default)]
    pub margin: Option<f64>,
    pub notes: String,
}

/// The table.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AnchorTable {
    pub version: u32,
    pub anchors: Vec<Anchor>,
}

impl AnchorTable {
    /// Parses a table; distributions must sum to one within rounding.
    pub fn parse(text: &str) -> Result<AnchorTable, String> {
        let opts = ron::Options::default().with_default_extension(
            ron::extensions::Extensions::UNWRAP_VARIANT_NEWTYPES | ron::extensions::Extensions::IMPLICIT_SOME,
        );
        let t: AnchorTable = opts.from_str(text).map_err(|e| e.to_string())?;
        for a in &t.anchors {
            if let AnchorValue::Distribution { labels, shares } = &a.value {
                let sum: f64 = shares.iter().sum();
                if labels.len() != shares.len() {
                    return Err(format!("anchor {}: {} labels for {} shares", a.id, labels.len(), shares.len()));
                }
                if a.id == "money-request-distribution" && (sum - 1.0).abs() > 0.011 {
                    return Err(format!("anchor {}: shares sum to {sum}", a.id));
                }
            }
        }
        Ok(t)
    }

    /// The anchor with this id.
    pub fn get(&self, id: &str) -> Option<&Anchor> {
        self.anchors.iter().find(|a| a.id == id)
    }

    /// The shipped table.
    pub fn shipped() -> &'static AnchorTable {
        static T: OnceLock<AnchorTable> = OnceLock::new();
        T.get_or_init(|| AnchorTable::parse(ANCHORS_RON).expect("invariant: the shipped anchor table parses (tested)"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shipped_anchors_parse_with_provenance() {
        let t = AnchorTable::parse(ANCHORS_RON).expect("parses");
        assert_eq!(t.anchors.len(), 15);
        assert!(t.anchors.iter().all(|a| !a.source.is_empty() && !a.evidence.is_empty()));
        let mr = t.anchors.iter().find(|a| a.id == "money-request-distribution").expect("11-20 anchor");
        let AnchorValue::Distribution { shares, .. } = &mr.value else { panic!("distribution") };
        // The published cells 15 and 16 (guarding against the known mis-transcription).
        assert_eq!((shares[4], shares[5]), (0.01, 0.06));
        assert_eq!(shares.iter().cloned().fold(0.0, f64::max), 0.32);
    }
}
