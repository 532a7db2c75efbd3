//! LLM-backed agents over any OpenAI-compatible `/v1/chat/completions` server.
//!
//! An [`LlmPolicy`] is one more [`Policy`](crate::Policy): it renders the observation into
//! messages (static rules first, history and the question last, so that a serving engine's
//! prefix cache is hit across agents and rounds), and answers with a deferred decision that
//! calls the model through an [`LlmClient`], parses the reply against the environment's action
//! space, retries unparsable or illegal replies as further attempts of the same decision slot,
//! and falls back to a random legal action after the attempt limit. Every call is kept as a
//! [`Transcript`]; replies are kept in a content-addressed [`ReplyCache`], which lets a study
//! be replayed offline with identical records.

pub mod cache;
pub mod client;
pub mod fake;
pub mod model;
pub mod parse;
pub mod policy;
pub mod prompt;

pub use cache::{cache_key, CachedReply, MemoryCache, ReplyCache};
pub use client::{raise_open_file_limit, CallError, ChatRequest, LlmClient, Message};
pub use model::{ModelSpec, StructuredMode};
pub use parse::{parse_reply, strip_deliberation, ParseOutcome};
pub use policy::{LlmContext, LlmPolicy, LlmSeat, Transcript};
pub use prompt::{Framing, HistoryFormat, Layout, PersonaContent, PersonaFormat, PromptOptions, PromptRenderer};
