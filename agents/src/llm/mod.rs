//! LLM-backed agents over any OpenAI-compatible `/v1/chat/completions` server.
//!
//! An [`LlmPolicy`] is one more [`Policy`](crate::Policy): it renders the observation into
//! messages (static rules first, history and the question last, so that a serving engine's
//! prefix cache is hit across agents and rounds), and answers with a deferred decision that
//! calls the model through an [`LlmClient`], parses the reply against the action space the
//! prompt showed (a framing cell's labels in place of the variant's), retries unparsable or
//! illegal replies, and replies cut at the token limit before their answer was complete, as
//! further attempts of the same decision slot, and falls back to a random legal action after
//! the attempt limit. Every call is kept as a
//! [`Transcript`]; replies are kept in a content-addressed [`ReplyCache`], which lets a study
//! be replayed offline with identical records.

//!
//! Without the `llm` cargo feature only the data survive: model declarations, prompt options,
//! transcripts, the reply cache's interface and the reply parser; the client, the prompt
//! renderer and the policy (tokio, reqwest, minijinja) are left out.

pub mod cache;
#[cfg(feature = "llm")]
pub mod client;
#[cfg(feature = "llm")]
pub mod http1;
pub mod model;
pub mod options;
pub mod parse;
#[cfg(feature = "llm")]
pub mod policy;
#[cfg(feature = "llm")]
pub mod prompt;
#[cfg(feature = "llm")]
pub mod session;
pub mod transcript;

pub use cache::{cache_key, CachedReply, MemoryCache, ReplyCache};
#[cfg(feature = "llm")]
pub use client::{raise_open_file_limit, CallError, ChatRequest, LlmClient, Message};
pub use model::{Deliberation, ModelSpec, Prefill, StructuredMode};
pub use options::{Framing, HistoryFormat, Layout, PersonaContent, PersonaFormat, PromptOptions};
pub use parse::{parse_cut_reply, parse_reply, strip_deliberation, ParseOutcome};
#[cfg(feature = "llm")]
pub use policy::{DeriveSeed, LlmContext, LlmPolicy, LlmSeat};
#[cfg(feature = "llm")]
pub use prompt::PromptRenderer;
#[cfg(feature = "llm")]
pub use session::{fan_out, Reply, Session, SessionError};
pub use transcript::{Transcript, TranscriptSink};

use crate::policy::PolicyMeta;

/// What an LLM seat is, for listings and records.
pub fn llm_meta() -> &'static PolicyMeta {
    &LLM
}

static LLM: PolicyMeta = PolicyMeta {
    name: "llm",
    family: "llm",
    memory_depth: None,
    stochastic: true,
    environments: agora_environments::EnvKind::ALL,
    description: "a language model behind an OpenAI-compatible server, asked for one structured action per decision",
    reference: "OpenAI-compatible /v1/chat/completions (vLLM, llama.cpp, Ollama, hosted APIs)",
};
