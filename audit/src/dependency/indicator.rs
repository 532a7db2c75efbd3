//! The action indicators the dependency estimate regresses: declared by each game beside its
//! metrics, recorded by the engine with the game's runs, and read from the store
//! ([`agora_analysis::declared::Declared::indicator`]).

pub use agora_analysis::declared::{Indicator, IndicatorRule, NoIndicator};
