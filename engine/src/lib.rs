//! The Agora engine: one bevy_ecs [`World`](bevy_ecs::world::World) per run, the round
//! schedule Observe → Decide → Resolve → Record, the concurrent runner and the run store.
//!
//! Decide is split from Resolve so that a run can wait on asynchronous decisions: the
//! [`runner`] steps every live run to its Decide point, gathers the deferred decisions of all
//! of them, awaits them together, and only then resolves each run's stage. Classical policies
//! answer synchronously through the same path.

pub mod components;
pub mod digits;
pub mod error;
pub mod files;
pub mod llm_seats;
pub mod noise;
mod pool;
pub mod probe;
pub mod record_hash;
pub mod records;
pub mod request_parts;
pub mod run;
pub mod run_rows;
pub mod runner;
pub mod seed;
pub mod spec;
pub mod store;
pub mod systems;

pub use error::EngineError;
pub use records::RunRecords;
pub use run::RunWorld;
pub use runner::{execute, Missing, Progress, RunnerOptions, RunnerReport};
pub use spec::{Factor, Level, RunSpec};
pub use store::Store;

/// Convenient imports for users of this crate.
pub mod prelude {
    pub use crate::{
        execute, EngineError, Factor, Level, Progress, RunRecords, RunSpec, RunWorld, RunnerOptions, RunnerReport,
        Store,
    };
}
