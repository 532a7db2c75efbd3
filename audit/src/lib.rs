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
//! The audit run itself is [`coding`] (segmentation, sentences, coding, the `audit_*` tables and
//! the summary). The codebook, the coders' interface, labels and the coder gate are still in
//! `agora_analysis::audit`: the ladder computes the gate from the stored labels. The docs chapter "The transcript audit" describes each. Bad input is [`BadInput`]: the
//! command exits with status 2 and writes nothing.

pub mod coding;
pub mod command;
pub mod dependency;
pub mod faithfulness;
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
pub mod tables;

pub use coding::*;

/// Bad input (a file, a field, an option out of range): the command exits with status 2.
#[derive(Debug)]
pub struct BadInput(pub String);

impl std::fmt::Display for BadInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for BadInput {}
