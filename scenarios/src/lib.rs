//! Study files, cell overlays and plan resolution.
//!
//! A study (`scenarios/studies/*.ron`) names a master seed, run counts and blocks; each block
//! pairs an environment with variants, rosters and cells. A cell (`scenarios/cells/*.ron`) is
//! an overlay that changes exactly one factor of the canonical baseline. Resolution expands a
//! study into a [`Plan`] of fully specified, seeded [`RunSpec`]s, each hashing to a run key.

pub mod cell;
pub mod error;
pub mod limits;
pub mod plan;
pub mod roster;
pub mod study;
pub mod sweep;
pub mod tournament;
pub mod versions;

pub use agora_engine::seed;
pub use cell::{Cell, Factor, Level};
pub use error::ScenarioError;
pub use plan::{Plan, RunSpec, Shard};
pub use study::{Block, Member, ModelsFile, Param, Range, Roster, Study, Sweep, SweepValue};
pub use tournament::Tournament;

/// RON options for every file this crate reads: newtypes may be written without their
/// wrapping parentheses and `Some` may be left implicit.
pub(crate) fn ron_options() -> ron::Options {
    ron::Options::default().with_default_extension(
        ron::extensions::Extensions::UNWRAP_NEWTYPES
            | ron::extensions::Extensions::UNWRAP_VARIANT_NEWTYPES
            | ron::extensions::Extensions::IMPLICIT_SOME,
    )
}

/// Current version of the study and cell file formats.
pub const FORMAT_VERSION: u32 = 1;
