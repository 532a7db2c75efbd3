//! The Agora engine: one bevy_ecs [`World`](bevy_ecs::world::World) per run, the round
//! schedule Observe → Decide → Resolve → Record, the concurrent runner and the run store.
//!
//! Decide is split from Resolve so that a run can wait on asynchronous decisions: the
//! [`runner`] steps every live run to its Decide point, gathers the deferred decisions of all
//! of them, awaits them together, and only then resolves each run's stage. Classical policies
//! answer synchronously through the same path.

pub mod command_error;
pub mod components;
pub mod error;
pub mod files;
pub mod llm_seats;
pub mod noise;
pub mod probe;
pub mod run;
pub mod runner;
pub mod systems;

// What a run records and the store that keeps it live in `agora-records`, below the engine;
// they are named here too, where every product has always found them.
pub use agora_records::run_records as records;
pub use agora_records::{digits, pool, record_hash, request_parts, run_rows, seed, spec, store};

pub use agora_records::StoreError;
pub use command_error::CommandError;
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
