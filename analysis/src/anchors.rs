//! Human anchors, shipped as data with provenance (`assets/anchors.ron`).

use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

/// The shipped anchor table's text.
pub const ANCHORS_RON: &str = include_str!("../../assets/anchors.ron");

/// Environment an anchor belongs to (names as in study files).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub enum AnchorEnvironment {
    /// The repeated prisoner's dilemma.
    PrisonersDilemma,
    /// The public-goods game.
    PublicGoods,
    /// The bargaining games: ultimatum, dictator and trust.
    Bargaining,
    /// The 11–20 money request game.
    MoneyRequest,
    /// The naming game (convention formation and tipping).
    NamingGame,
}

/// Expected direction of a dynamic.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub enum Direction {
    /// The quantity falls over rounds.
    Decline,
    /// The quantity rises over rounds.
    Rise,
    /// A convention forms.
    Forms,
}

/// The anchor's value.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub enum AnchorValue {
    /// A single human value; tested by TOST where the anchor gives a margin.
    Point(f64),
    /// An interval of human values.
    Range {
        /// Lower end of the interval.
        low: f64,
        /// Upper end of the interval.
        high: f64,
    },
    /// Shares of subjects or choices over named categories.
    Distribution {
        /// Names of the categories.
        labels: Vec<String>,
        /// Share of each category, in the order of `labels`.
        shares: Vec<f64>,
    },
    /// An expected direction of a dynamic rather than a number.
    Direction(Direction),
    /// A quantity whose human value is not on record: the anchor names what would be
    /// compared (and the margin fixed in advance, if any), but no number exists to compare
    /// with, so an equivalence test against it says that the value is not on record.
    Unrecorded,
}

impl AnchorValue {
    /// The value in words, as listings write it.
    pub fn describe(&self) -> String {
        match self {
            AnchorValue::Point(x) => format!("{x}"),
            AnchorValue::Range { low, high } => format!("{low}-{high}"),
            AnchorValue::Distribution { labels, shares } => {
                labels.iter().zip(shares).map(|(l, s)| format!("{l}: {s}")).collect::<Vec<_>>().join(", ")
            }
            AnchorValue::Direction(d) => format!("{d:?}").to_lowercase(),
            AnchorValue::Unrecorded => "not on record".into(),
        }
    }
}

/// Evidence tier: meta-analysis or single experiment.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub enum Tier {
    /// Meta-analysis, or a survey of many experiments.
    MA,
    /// Single experiment.
    SE,
}

/// Verification status: V verified, S one careful secondary source, U unverified.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub enum Status {
    /// Verified: two or more independent sources agree, or the primary data were read.
    V,
    /// Taken from one careful secondary source.
    S,
    /// Not verified.
    U,
}

/// One anchor.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Anchor {
    /// Identifier by which claims refer to the anchor.
    pub id: String,
    /// Environment the anchor belongs to.
    pub environment: AnchorEnvironment,
    /// The human quantity anchored, in words (e.g. `cooperation rate`).
    pub quantity: String,
    /// The human value of the quantity.
    pub value: AnchorValue,
    /// Unit of the value, in words (e.g. `share of endowment`).
    pub unit: String,
    /// Publication the value is taken from.
    pub source: String,
    /// The evidence behind the value, in words (studies or subjects).
    pub evidence: String,
    /// Evidence tier of the source.
    pub tier: Tier,
    /// How far the value has been verified.
    pub status: Status,
    /// Equivalence margin fixed in advance, where the anchor is tested by TOST.
    #[serde(default)]
    pub margin: Option<f64>,
    /// Caveats on the value or its source; empty when there are none.
    pub notes: String,
}

/// The table.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AnchorTable {
    /// Format version of the table.
    pub version: u32,
    /// The anchors, each with its provenance.
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
        assert_eq!(t.anchors.len(), 16);
        assert!(t.anchors.iter().all(|a| !a.source.is_empty() && !a.evidence.is_empty()));
        let mr = t.anchors.iter().find(|a| a.id == "money-request-distribution").expect("11-20 anchor");
        let AnchorValue::Distribution { shares, .. } = &mr.value else { panic!("distribution") };
        // The published cells 15 and 16 (guarding against the known mis-transcription).
        assert_eq!((shares[4], shares[5]), (0.01, 0.06));
        assert_eq!(shares.iter().cloned().fold(0.0, f64::max), 0.32);
    }

    #[test]
    fn the_round_10_anchor_is_explicitly_not_on_record() {
        // ANCHORS.md gives no number for round 10: the anchor says so rather than inventing one.
        let t = AnchorTable::parse(ANCHORS_RON).expect("parses");
        let a = t.get("pgg-round10").expect("round-10 anchor");
        assert_eq!(a.value, AnchorValue::Unrecorded);
        assert_eq!(a.value.describe(), "not on record");
        assert_eq!(a.margin, Some(0.10), "the public-goods margin fixed in advance");
    }
}
