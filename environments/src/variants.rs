//! A game's variants file: payoffs, labels and cover stories of C0–C3 as data.
//!
//! Each game ships `assets/environments/<game>.ron`, compiled into the binary, so a study
//! cannot run against payoffs other than the ones the repository shows:
//!
//! ```ron
//! Variants(version: 1, variants: { C0: (...), C1: (...), C2: (...), C3: (...) })
//! ```

use std::collections::BTreeMap;

use serde::de::DeserializeOwned;
use serde::Deserialize;

use crate::error::EnvError;
use crate::kind::Variant;

/// Current version of the variants file format.
pub const VARIANTS_VERSION: u32 = 1;

/// The four variants of one game.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Variants<T> {
    /// File format version.
    pub version: u32,
    /// One entry per variant.
    pub variants: BTreeMap<Variant, T>,
}

impl<T: DeserializeOwned> Variants<T> {
    /// Parses one game's file and checks that it defines every variant; `check` validates one
    /// entry (its error says what is wrong, and is reported with the file and variant).
    pub fn parse(file: &str, text: &str, check: impl Fn(&T) -> Result<(), String>) -> Result<Variants<T>, EnvError> {
        let bad = |message: String| EnvError::VariantTable { file: file.to_string(), message };
        let table: Variants<T> = ron::from_str(text).map_err(|e| bad(e.to_string()))?;
        if table.version != VARIANTS_VERSION {
            return Err(bad(format!("version: expected {VARIANTS_VERSION}, got {}", table.version)));
        }
        for v in Variant::ALL {
            let entry = table.variants.get(&v).ok_or_else(|| bad(format!("lacks variant {}", v.as_str())))?;
            check(entry).map_err(|m| bad(format!("{}: {m}", v.as_str())))?;
        }
        Ok(table)
    }

    /// The entry of one variant (every variant is present once parsed).
    pub fn get(&self, v: Variant) -> &T {
        &self.variants[&v]
    }
}

/// Declares a game's shipped variants: a function returning the parsed file, parsed once.
///
/// `shipped_variants!(pd_variants, PdVariant, "prisoners-dilemma.ron", check)` defines
/// `pub fn pd_variants() -> &'static Variants<PdVariant>`.
#[macro_export]
#[doc(hidden)]
macro_rules! shipped_variants {
    ($fn:ident, $ty:ty, $file:literal, $check:expr) => {
        /// The game's shipped variants (`assets/environments/` file, compiled in).
        pub fn $fn() -> &'static $crate::variants::Variants<$ty> {
            static TABLE: std::sync::OnceLock<$crate::variants::Variants<$ty>> = std::sync::OnceLock::new();
            TABLE.get_or_init(|| {
                $crate::variants::Variants::parse(
                    $file,
                    include_str!(concat!("../../../assets/environments/", $file)),
                    $check,
                )
                .expect("invariant: the shipped variants file parses (tested by the registry tests)")
            })
        }
    };
}

/// Checks that a two-action game's labels name exactly two actions.
pub fn two_labels(labels: &[String]) -> Result<(), String> {
    if labels.len() == 2 {
        Ok(())
    } else {
        Err(format!("labels must name exactly two actions, got {}", labels.len()))
    }
}
