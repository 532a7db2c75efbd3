//! `agora audit` over a store ([`command`]: the audit itself and the label workflow), the
//! transcript audit's work that asks models, and the estimators the instrument does not read:
//!
//! - [`requirements`]: requirements as tests on the SUVA audit paper's statistics (Table
//!   240.9, Eq. 240.16), with the power of a next audit.
//! - [`faithfulness`]: the intervention effect τ of inserting a true sentence against deleting
//!   a value's sentences (Eq. 240.14), per state.
//! - [`samples`]: responses per arm for a share requirement (eq. 240.9) and the design effect.
//! - [`dependency`]: the dependency of the action on the stated values (the linear
//!   probability model with prompt fixed effects over replicates).
//! - [`motives`]: the motive regression of the binary-allocation game.
//!
//! - [`llm_coder`]: a model outside the audited set codes each response's reasoning sentences
//!   against the codebook (`agora audit --coder llm:MODEL`).
//! - [`replicates`]: `agora audit replicates` asks sampled decision prompts again, m times
//!   each, for the dependency estimate (the linear probability model with prompt fixed
//!   effects).
//! - [`prefill`]: `agora audit prefill` intervenes on the model's own reasoning, with a value's
//!   true sentence inserted against its sentences deleted, for the intervention effect τ.
//!
//! The audit run itself is [`coding`]: segmentation ([`segment`], [`sentence`]), coding each
//! reasoning sentence once against the [`codebook`] by a [`coder`], the `audit_*` tables
//! ([`tables`]) and the summary ([`report`]). Its codes count only where the coder-validation
//! gate ([`agreement`]) admits them: two or more human labellers who agree with each other, and
//! the coder's κ against their labels ([`labels`]: a seeded sample exported blind for
//! labelling, recorded in the store, and imported back) on the model's own text. The audit
//! writes the gate's decisions into the store (`audit_gate`, [`agreement::record_gates`])
//! whenever the codes or the labels change; the certification ladder reads them from there and
//! never imports this crate. [`statements`] renders a value's true sentence for the prefill.
//!
//! The docs chapter "The transcript audit" describes each. The commands print nothing: each
//! returns its outcome, or an [`Error`]; bad input ([`Error::is_bad_input`]) exits with status 2
//! and writes nothing.

pub mod agreement;
pub mod codebook;
pub mod coder;
pub mod coding;
pub mod command;
mod csv;
pub mod dependency;
pub mod error;
pub mod faithfulness;
pub mod labels;
pub mod llm_coder;
pub mod motives;
pub mod prefill;
pub mod replicates;
pub mod report;
pub mod requirements;
pub mod response;
pub mod samples;
pub mod segment;
pub mod sentence;
pub mod statements;
mod table;
pub mod tables;

/// Lower-case hex SHA-256 of a codebook's, requirements file's or label file's text, so that an
/// audit record names the exact input it was read from (the store's one digest helper).
pub use agora_records::seed::hex_digest;
pub use agreement::{Agreement, AgreementRow, GateOptions, Status, Validation, DEFAULT_MIN_KAPPA};
pub use codebook::{Codebook, CodebookError, LoadedCodebook};
pub use coder::{validate_output, Coded, Coder, CoderError, LexiconCoder};
pub use coding::*;
pub use error::Error;
pub use labels::{ExportOptions, Format, Imported, LabelsError};

pub(crate) use agora_engine::files::write_named;
