//! `agora audit` over a store ([`command`]: the audit itself and the label workflow) and the
//! transcript audit's work that asks models, beside the audit's computations in
//! `agora_analysis::audit` (the codebook, the coders' interface, labels and the gate,
//! segmentation, the dependency estimate, requirements):
//!
//! - [`llm_coder`]: a model outside the audited set codes each response's reasoning sentences
//!   against the codebook (`agora audit --coder llm:MODEL`).
//! - [`replicates`]: `agora audit replicates` asks sampled decision prompts again, m times
//!   each, for the dependency estimate (the linear probability model with prompt fixed
//!   effects).
//! - [`prefill`]: `agora audit prefill` intervenes on the model's own reasoning, with a value's
//!   true sentence inserted against its sentences deleted, for the intervention effect τ.
//!
//! The docs chapter "The transcript audit" describes each. Bad input is [`BadInput`]: the
//! command exits with status 2 and writes nothing.

pub mod command;
pub mod llm_coder;
pub mod prefill;
pub mod replicates;

/// Bad input (a file, a field, an option out of range): the command exits with status 2.
#[derive(Debug)]
pub struct BadInput(pub String);

impl std::fmt::Display for BadInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for BadInput {}
