//! The variant table: payoffs, labels and cover stories of C0–C3 for every environment.
//!
//! The table is shipped as data in `assets/environments/variants.ron` and compiled into the
//! binary, so a study cannot run against payoffs other than the ones the repository shows.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

use crate::error::EnvError;
use crate::spec::Variant;

/// The shipped table's text.
pub const VARIANTS_RON: &str = include_str!("../../assets/environments/variants.ron");

/// Prisoner's dilemma payoffs `(R, S, T, P)` and labels (index 0 cooperates).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PdVariant {
    pub cover_story: String,
    pub labels: std::sync::Arc<[String]>,
    pub r: f64,
    pub s: f64,
    pub t: f64,
    pub p: f64,
}

/// Public goods numbers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PgVariant {
    pub cover_story: String,
    pub endowment: i64,
    /// Marginal per-capita return of the group account.
    pub mpcr: f64,
    /// Cost to the punisher of one punishment point.
    pub punishment_cost: f64,
    /// Points removed from the target per punishment point.
    pub punishment_impact: f64,
    /// Most points one agent may spend on one target in one round.
    pub punishment_max: i64,
}

/// Bargaining battery numbers (ultimatum, dictator, trust).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BargainVariant {
    pub cover_story: String,
    pub pie: i64,
    /// What the ultimatum responder receives on rejection.
    pub responder_outside: f64,
    /// What the ultimatum proposer receives on rejection.
    pub proposer_outside: f64,
    pub trust_endowment: i64,
    pub trust_multiplier: i64,
    /// Responder labels: index 0 accepts, index 1 rejects.
    pub labels: std::sync::Arc<[String]>,
}

/// When the 11–20 bonus is paid.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum BonusRule {
    /// The request is exactly one below the other's (the canonical game).
    Undercut,
    /// The request is exactly one above the other's (divergent payoffs).
    Exceed,
}

/// 11–20 money request numbers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MrVariant {
    pub cover_story: String,
    pub min: i64,
    pub max: i64,
    pub bonus: i64,
    pub rule: BonusRule,
}

/// Naming game pool and rewards.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NgVariant {
    pub cover_story: String,
    pub names: Vec<String>,
    pub match_payoff: f64,
    pub mismatch_payoff: f64,
}

/// The whole table.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VariantTable {
    pub version: u32,
    pub prisoners_dilemma: BTreeMap<Variant, PdVariant>,
    pub public_goods: BTreeMap<Variant, PgVariant>,
    pub bargaining: BTreeMap<Variant, BargainVariant>,
    pub money_request: BTreeMap<Variant, MrVariant>,
    pub naming_game: BTreeMap<Variant, NgVariant>,
}

impl VariantTable {
    /// Parses a table and checks that every environment defines every variant.
    pub fn parse(text: &str) -> Result<VariantTable, EnvError> {
        let table: VariantTable = ron::from_str(text).map_err(|e| EnvError::VariantTable(e.to_string()))?;
        for v in Variant::ALL {
            let missing = |env: &str| EnvError::VariantTable(format!("{env} lacks variant {v:?}"));
            table.prisoners_dilemma.get(&v).ok_or_else(|| missing("prisoners_dilemma"))?;
            table.public_goods.get(&v).ok_or_else(|| missing("public_goods"))?;
            table.bargaining.get(&v).ok_or_else(|| missing("bargaining"))?;
            table.money_request.get(&v).ok_or_else(|| missing("money_request"))?;
            table.naming_game.get(&v).ok_or_else(|| missing("naming_game"))?;
            let two = |env: &str, n: usize| {
                if n == 2 {
                    Ok(())
                } else {
                    Err(EnvError::VariantTable(format!("{env} {v:?}: labels must name exactly two actions, got {n}")))
                }
            };
            two("prisoners_dilemma", table.prisoners_dilemma[&v].labels.len())?;
            two("bargaining", table.bargaining[&v].labels.len())?;
            if table.naming_game[&v].names.len() < 2 {
                return Err(EnvError::VariantTable(format!("naming_game {v:?}: needs at least two names")));
            }
        }
        Ok(table)
    }

    /// The shipped table.
    pub fn shipped() -> &'static VariantTable {
        static TABLE: OnceLock<VariantTable> = OnceLock::new();
        TABLE.get_or_init(|| {
            VariantTable::parse(VARIANTS_RON)
                .expect("invariant: the shipped variant table parses (tested in variants::tests)")
        })
    }

    pub fn pd(&self, v: Variant) -> &PdVariant {
        &self.prisoners_dilemma[&v]
    }
    pub fn pg(&self, v: Variant) -> &PgVariant {
        &self.public_goods[&v]
    }
    pub fn bargain(&self, v: Variant) -> &BargainVariant {
        &self.bargaining[&v]
    }
    pub fn mr(&self, v: Variant) -> &MrVariant {
        &self.money_request[&v]
    }
    pub fn ng(&self, v: Variant) -> &NgVariant {
        &self.naming_game[&v]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shipped_table_parses_with_every_variant() {
        let t = VariantTable::parse(VARIANTS_RON).expect("table parses");
        assert_eq!(t.version, 1);
        assert_eq!(t.prisoners_dilemma.len(), 4);
    }

    #[test]
    fn pd_c0_c1_c2_are_dilemmas_and_c3_makes_cooperation_dominant() {
        let t = VariantTable::shipped();
        for v in [Variant::C0, Variant::C1, Variant::C2] {
            let p = t.pd(v);
            assert!(p.t > p.r && p.r > p.p && p.p > p.s, "{v:?} is a prisoner's dilemma");
            assert!(2.0 * p.r > p.t + p.s, "{v:?}: mutual cooperation beats alternation");
        }
        let c0 = t.pd(Variant::C0);
        assert_eq!((c0.r, c0.s, c0.t, c0.p), (3.0, 0.0, 5.0, 1.0));
        assert_eq!(t.pd(Variant::C1).r, c0.r, "C1 keeps the payoffs");
        assert_ne!(t.pd(Variant::C1).labels, c0.labels, "C1 changes the labels");
        let c3 = t.pd(Variant::C3);
        assert!(c3.r > c3.t && c3.s > c3.p, "cooperation strictly dominant under C3");
    }

    #[test]
    fn public_goods_variants() {
        let t = VariantTable::shipped();
        let c0 = t.pg(Variant::C0);
        assert_eq!((c0.endowment, c0.mpcr), (20, 0.4));
        assert_eq!((c0.punishment_cost, c0.punishment_impact, c0.punishment_max), (1.0, 3.0, 10));
        for v in [Variant::C0, Variant::C1, Variant::C2] {
            let p = t.pg(v);
            assert!(p.mpcr < 1.0 && 4.0 * p.mpcr > 1.0, "{v:?} is a social dilemma");
        }
        assert!(t.pg(Variant::C3).mpcr > 1.0, "full contribution pays under C3");
    }

    #[test]
    fn bargaining_money_request_and_naming_variants() {
        let t = VariantTable::shipped();
        assert_eq!(t.bargain(Variant::C0).pie, 100);
        assert_eq!(t.bargain(Variant::C0).responder_outside, 0.0);
        assert_eq!(t.bargain(Variant::C3).responder_outside, 40.0);
        let mr = t.mr(Variant::C0);
        assert_eq!((mr.min, mr.max, mr.bonus, mr.rule), (11, 20, 20, BonusRule::Undercut));
        assert_eq!(t.mr(Variant::C3).rule, BonusRule::Exceed);
        assert_eq!(t.ng(Variant::C0).names.len(), 10);
        assert!(t.ng(Variant::C0).match_payoff > t.ng(Variant::C0).mismatch_payoff);
        assert!(t.ng(Variant::C3).match_payoff < t.ng(Variant::C3).mismatch_payoff);
    }
}
