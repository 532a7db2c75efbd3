//! The content-addressed reply cache.

use std::collections::HashMap;
use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// A reply as received, with the facts of the original call, so that a replay writes the same
/// transcript as the live run did.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CachedReply {
    /// The message content the model sent back.
    pub content: String,
    /// Tokens in the prompt, as the server reported them.
    pub prompt_tokens: Option<u64>,
    /// Tokens in the reply, as the server reported them.
    pub completion_tokens: Option<u64>,
    /// Base URL of the server that answered.
    pub endpoint: String,
    /// Milliseconds from sending the request to reading the reply.
    pub latency_ms: f64,
    /// Why the server stopped generating, as it said (`stop`, `length` where the reply was cut
    /// at the token limit); `None` where it did not say, and in replies cached before the field
    /// existed (left out of the stored JSON when `None`, so older caches read and replay as before).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finish_reason: Option<String>,
}

impl CachedReply {
    /// Whether the server cut the reply at the token limit (`finish_reason: "length"`).
    pub fn truncated(&self) -> bool {
        self.finish_reason.as_deref() == Some("length")
    }
}

/// Where replies are kept. Implemented by the engine's store; agents know nothing of storage.
pub trait ReplyCache: Send + Sync {
    /// The reply stored under `key` (see [`cache_key`]), if any.
    fn get(&self, key: &str) -> Option<CachedReply>;
    /// Stores `reply` under `key`; `model` names the model that gave it, for the store's records.
    fn put(&self, key: &str, model: &str, reply: &CachedReply);
}

/// An in-memory cache, for tests and one-off use.
#[derive(Default)]
pub struct MemoryCache(Mutex<HashMap<String, CachedReply>>);

impl MemoryCache {
    /// Number of replies stored.
    pub fn len(&self) -> usize {
        self.0.lock().map(|m| m.len()).unwrap_or(0)
    }
    /// Whether no reply is stored.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl ReplyCache for MemoryCache {
    fn get(&self, key: &str) -> Option<CachedReply> {
        self.0.lock().ok().and_then(|m| m.get(key).cloned())
    }
    fn put(&self, key: &str, _model: &str, reply: &CachedReply) {
        if let Ok(mut m) = self.0.lock() {
            m.insert(key.to_string(), reply.clone());
        }
    }
}

/// The cache key: SHA-256 over the model, the full messages, the sampling parameters, the seed
/// and the decision slot (run, seat, decision, attempt).
pub fn cache_key(model: &str, request_json: &str, slot: &str) -> String {
    let mut h = Sha256::new();
    for part in [model, request_json, slot] {
        h.update((part.len() as u64).to_le_bytes());
        h.update(part.as_bytes());
    }
    format!("{:x}", h.finalize())
}
