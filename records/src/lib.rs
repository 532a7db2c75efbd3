//! What a run records and the store that keeps it.
//!
//! This crate sits below every crate that reads or writes a store, the engine included: a run's
//! specification and key ([`spec`], [`seed`]), its records ([`run_records`]), their encoding
//! ([`run_rows`], [`digits`], [`request_parts`]) and record hash ([`record_hash`]), and the
//! store itself ([`store`]): the one way a store file is opened (through SQLite only), its
//! tables' schemas and versions, its upgrades, checks, claim, merge and reply cache.

pub mod digits;
pub mod error;
pub mod families;
pub mod pool;
pub mod reads;
pub mod record_hash;
pub mod request_parts;
pub mod rows;
pub mod run_records;
pub mod run_rows;
pub mod seed;
pub mod spec;
pub mod store;

pub use error::StoreError;
pub use run_records::RunRecords;
pub use spec::{Factor, Level, RunSpec};
pub use store::Store;
