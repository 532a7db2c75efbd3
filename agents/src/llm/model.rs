//! A model as declared in a study.

use serde::{Deserialize, Serialize};

/// How a server is asked for structured output.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
pub enum StructuredMode {
    /// OpenAI `response_format: {type: "json_schema", json_schema: {...}}` (vLLM, OpenAI).
    #[default]
    JsonSchema,
    /// `response_format: {type: "json_object", schema: {...}}` (llama.cpp's Python server).
    JsonObject,
    /// No `response_format`: the prompt's instructions and robust parsing only.
    Instructions,
}

fn default_concurrency() -> usize {
    8
}
fn default_timeout() -> f64 {
    120.0
}
fn default_attempts() -> u32 {
    3
}
fn default_retries() -> u32 {
    6
}
fn default_temperature() -> f64 {
    0.7
}
fn default_max_tokens() -> u32 {
    256
}
fn default_backoff() -> u64 {
    100
}
fn yes() -> bool {
    true
}

/// A model: name, family, endpoints and the serving facts kept for the record. An API key is
/// never written in a study: `api_key_env` names the environment variable that holds it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[serde(rename = "Model")]
pub struct ModelSpec {
    /// Name used in rosters.
    pub name: String,
    /// Family, e.g. `Qwen3`, `Gemma-2`.
    pub family: String,
    /// Base URLs of OpenAI-compatible servers, e.g. `http://127.0.0.1:8000/v1`.
    pub endpoints: Vec<String>,
    /// The model id the servers expect in requests.
    pub served_id: String,
    /// Name of the environment variable holding the API key; `None` sends no key.
    #[serde(default)]
    pub api_key_env: Option<String>,
    /// Quantisation of the served weights, kept for the record.
    #[serde(default)]
    pub quantisation: String,
    /// Free-text notes on the serving setup, kept for the record.
    #[serde(default)]
    pub notes: String,
    /// Requests in flight per endpoint.
    #[serde(default = "default_concurrency")]
    pub concurrency: usize,
    /// How the servers are asked for structured output.
    #[serde(default)]
    pub structured: StructuredMode,
    /// Seconds before a request is abandoned and retried.
    #[serde(default = "default_timeout")]
    pub timeout_s: f64,
    /// Attempts per decision slot when replies are unparsable or illegal.
    #[serde(default = "default_attempts")]
    pub max_attempts: u32,
    /// Transport retries per attempt (429, 5xx, connection errors, timeouts).
    #[serde(default = "default_retries")]
    pub max_retries: u32,
    /// Sampling temperature, unless a cell sets its own.
    #[serde(default = "default_temperature")]
    pub temperature: f64,
    /// Most tokens a reply may have.
    #[serde(default = "default_max_tokens")]
    pub max_tokens: u32,
    /// First backoff between transport retries, in milliseconds; it doubles up to 5 s.
    #[serde(default = "default_backoff")]
    pub backoff_ms: u64,
    /// Pass the derived seed as `seed` (servers that support it sample reproducibly).
    #[serde(default = "yes")]
    pub send_seed: bool,
}

impl ModelSpec {
    /// Checks the declaration; the message names the field.
    pub fn validate(&self) -> Result<(), String> {
        if self.name.trim().is_empty() {
            return Err("name: must not be empty".into());
        }
        if self.endpoints.is_empty() {
            return Err(format!("model `{}`: endpoints: name at least one server", self.name));
        }
        for e in &self.endpoints {
            if !(e.starts_with("http://") || e.starts_with("https://")) {
                return Err(format!("model `{}`: endpoints: `{e}` is not an http(s) URL", self.name));
            }
        }
        if self.served_id.trim().is_empty() {
            return Err(format!("model `{}`: served_id: must not be empty", self.name));
        }
        if self.concurrency == 0 {
            return Err(format!("model `{}`: concurrency: must be at least 1", self.name));
        }
        if !(self.timeout_s > 0.0) {
            return Err(format!("model `{}`: timeout_s: must be positive", self.name));
        }
        if self.max_attempts == 0 {
            return Err(format!("model `{}`: max_attempts: must be at least 1", self.name));
        }
        if !(0.0..=2.0).contains(&self.temperature) {
            return Err(format!("model `{}`: temperature: must lie in [0, 2]", self.name));
        }
        Ok(())
    }
}
