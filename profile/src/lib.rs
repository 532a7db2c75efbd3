//! The behavioural profile: each model measured alone, in isolated decisions, as the methods of
//! an AI behavioural profile describe it.
//!
//! - [`tasks`]: the tasks of categories A–E (E1–E5 from the shipped item file, E6–E9 from a
//!   lab's own), their inputs and scoring, the eleven frozen question versions, the
//!   presentation checks and their schedules, the rendering of a question and the decoding of
//!   its answer, and General Robustness's wording and review.
//! - [`runner`]: `agora profile` — asking each model every scheduled slot through its server,
//!   recording attempts, responses and settings in the store, resuming after a failure, the
//!   recovery pass, and the outputs.
//! - [`score`]: the computations — components, replaced results, the centre and the inner and
//!   outer ranges of each measure, Category A's weights, General Robustness's comparisons — each
//!   a pure function beside its formula.
//!
//! The docs chapter "The behavioural profile" describes the protocol and its outputs. The
//! crate prints nothing: `agora profile` prints the [`runner::ProfileOutcome`] it returns, and
//! an [`Error`] that is the user's input ([`Error::is_bad_input`]) exits with status 2.

pub mod error;
pub mod runner;
pub mod score;
pub mod tasks;

pub use error::Error;

pub(crate) use agora_engine::files::write_named;
