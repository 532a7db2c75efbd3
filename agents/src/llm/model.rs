//! A model as declared in a study.

use serde::{Deserialize, Serialize};

/// How a server is asked for structured output.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema)]
pub enum StructuredMode {
    /// OpenAI `response_format: {type: "json_schema", json_schema: {...}}` (vLLM, OpenAI).
    #[default]
    JsonSchema,
    /// `response_format: {type: "json_object", schema: {...}}` (llama.cpp's Python server).
    JsonObject,
    /// No `response_format`: the prompt's instructions and robust parsing only.
    Instructions,
}

/// A server's deliberation ("thinking") mode, for chat templates that have one (Qwen3's
/// `enable_thinking`). The paper disabled it throughout, so that the reasoning axis is carried
/// by a reasoning-trained model rather than by a decoding switch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema)]
pub enum Deliberation {
    /// Nothing is sent: the server's chat template decides (the default).
    #[default]
    Server,
    /// Sent as `chat_template_kwargs: {"enable_thinking": false}` (vLLM, llama.cpp's server).
    Off,
    /// Sent as `chat_template_kwargs: {"enable_thinking": true}`.
    On,
}

impl Deliberation {
    fn is_server(&self) -> bool {
        *self == Deliberation::Server
    }
}

/// How a server continues an assistant turn the request has begun (an assistant prefill), for
/// `agora audit prefill` (the SUVA audit paper §240.7.5, §240.10.3). Undeclared (`None`), a model is
/// reported as not accepting a prefill.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub enum Prefill {
    /// The server continues a trailing assistant message by itself: llama.cpp's `llama-server`
    /// does by default since ggml-org/llama.cpp#13174 (disabled by its `--no-prefill-assistant`
    /// flag, #13608; refused there together with `enable_thinking`).
    TrailingAssistant,
    /// vLLM: the request carries `continue_final_message: true` and
    /// `add_generation_prompt: false` (the two cannot both be true), so the chat template leaves
    /// the final assistant message open and the model continues it.
    ContinueFinalMessage,
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
fn default_reasoning_max_tokens() -> u32 {
    1024
}
fn is_default_reasoning_max_tokens(n: &u32) -> bool {
    *n == default_reasoning_max_tokens()
}
fn default_backoff() -> u64 {
    100
}
fn yes() -> bool {
    true
}

/// A model: name, family, endpoints and the serving facts kept for the record. An API key is
/// never written in a study: `api_key_env` names the environment variable that holds it.
///
/// Fields added after the first release (`reasoning_max_tokens`, `deliberation`,
/// `chat_template_kwargs`) are left out of the serialisation at their defaults, so a
/// declaration that does not set them reads and writes as before; a model that sets
/// `deliberation` or `chat_template_kwargs` sends them in every request (and so in every cache
/// key), a model that does not sends requests byte for byte as before.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[serde(rename = "Model")]
pub struct ModelSpec {
    /// Name used in rosters.
    pub name: String,
    /// Family, e.g. `Qwen3`, `Gemma-2`.
    pub family: String,
    /// Base URLs of OpenAI-compatible servers, e.g. `http://127.0.0.1:8000/v1`.
    #[schemars(length(min = 1))]
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
    #[schemars(range(min = 1))]
    pub concurrency: usize,
    /// How the servers are asked for structured output.
    #[serde(default)]
    pub structured: StructuredMode,
    /// Seconds before a request is abandoned and retried.
    #[serde(default = "default_timeout")]
    #[schemars(extend("exclusiveMinimum" = 0.0))]
    pub timeout_s: f64,
    /// Attempts per decision slot when replies are unparsable or illegal.
    #[serde(default = "default_attempts")]
    #[schemars(range(min = 1))]
    pub max_attempts: u32,
    /// Transport retries per attempt (429, 5xx, connection errors, timeouts).
    #[serde(default = "default_retries")]
    pub max_retries: u32,
    /// Sampling temperature, unless a cell sets its own.
    #[serde(default = "default_temperature")]
    #[schemars(range(min = 0.0, max = 2.0))]
    pub temperature: f64,
    /// Most tokens a reply may have. A reply cut at this limit is recorded as `truncated`: its
    /// decision stands where the answer was complete before the cut, and is asked again where not.
    #[serde(default = "default_max_tokens")]
    #[schemars(range(min = 1))]
    pub max_tokens: u32,
    /// Most tokens a reply may have when the step-by-step cell asks for reasoning before the
    /// answer (the larger of this and `max_tokens` is used there), so that the reasoning does
    /// not use up the budget before the answer is written. Default 1024.
    #[serde(default = "default_reasoning_max_tokens", skip_serializing_if = "is_default_reasoning_max_tokens")]
    #[schemars(extend("default" = default_reasoning_max_tokens()))]
    #[schemars(range(min = 1))]
    pub reasoning_max_tokens: u32,
    /// The server's deliberation mode: `Off` (as the paper served Qwen3) or `On` is sent as
    /// `chat_template_kwargs: {"enable_thinking": …}`; `Server`, the default, sends nothing.
    /// Deliberation markers (`<think>…</think>`) are stripped before parsing either way.
    #[serde(default, skip_serializing_if = "Deliberation::is_server")]
    #[schemars(extend("default" = "Server"))]
    pub deliberation: Deliberation,
    /// Further keyword arguments for the server's chat template, sent as
    /// `chat_template_kwargs` (vLLM and llama.cpp's server accept it), e.g.
    /// `Some({"enable_thinking": false})`; merged with `deliberation`, which must agree with any
    /// `enable_thinking` given here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = null))]
    pub chat_template_kwargs: Option<serde_json::Map<String, serde_json::Value>>,
    /// First backoff between transport retries, in milliseconds; it doubles up to 5 s.
    #[serde(default = "default_backoff")]
    pub backoff_ms: u64,
    /// Pass the derived seed as `seed` (servers that support it sample reproducibly).
    #[serde(default = "yes")]
    pub send_seed: bool,
    /// Whether and how the server accepts an assistant prefill ([`Prefill`]); `None`, the
    /// default, is left out of the serialisation so other declarations are unchanged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = null))]
    pub prefill: Option<Prefill>,
}

impl ModelSpec {
    /// The API key, read from the environment variable the declaration names (keys come from
    /// the environment only, never from a file). `None` when the model names no variable, or
    /// when answering from the reply cache (`replay`) and the variable is unset; otherwise an
    /// unset or empty variable is refused with a message naming the model and the variable.
    pub fn api_key(&self, replay: bool) -> Result<Option<String>, String> {
        match &self.api_key_env {
            Some(var) => match std::env::var(var) {
                Ok(k) if !k.is_empty() => Ok(Some(k)),
                _ if replay => Ok(None),
                _ => Err(format!("model `{}`: environment variable {var} (its API key) is not set", self.name)),
            },
            None => Ok(None),
        }
    }

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
        if self.timeout_s.is_nan() || self.timeout_s <= 0.0 {
            return Err(format!("model `{}`: timeout_s: must be positive", self.name));
        }
        if self.max_attempts == 0 {
            return Err(format!("model `{}`: max_attempts: must be at least 1", self.name));
        }
        if !(0.0..=2.0).contains(&self.temperature) {
            return Err(format!("model `{}`: temperature: must lie in [0, 2]", self.name));
        }
        if self.max_tokens == 0 || self.reasoning_max_tokens == 0 {
            return Err(format!("model `{}`: max_tokens and reasoning_max_tokens: must be at least 1", self.name));
        }
        let wanted = match self.deliberation {
            Deliberation::Server => None,
            Deliberation::Off => Some(false),
            Deliberation::On => Some(true),
        };
        let given = self.chat_template_kwargs.as_ref().and_then(|k| k.get("enable_thinking"));
        if let (Some(w), Some(g)) = (wanted, given) {
            if g.as_bool() != Some(w) {
                return Err(format!(
                    "model `{}`: chat_template_kwargs: enable_thinking {g} contradicts deliberation {:?}",
                    self.name, self.deliberation
                ));
            }
        }
        Ok(())
    }

    /// The `chat_template_kwargs` every request of this model carries: the declared ones, with
    /// `enable_thinking` set by `deliberation`; `None` (nothing sent) where there are none.
    pub fn template_kwargs(&self) -> Option<serde_json::Value> {
        let mut kwargs = self.chat_template_kwargs.clone().unwrap_or_default();
        match self.deliberation {
            Deliberation::Server => {}
            Deliberation::Off => {
                kwargs.insert("enable_thinking".into(), serde_json::Value::Bool(false));
            }
            Deliberation::On => {
                kwargs.insert("enable_thinking".into(), serde_json::Value::Bool(true));
            }
        }
        (!kwargs.is_empty() || self.chat_template_kwargs.is_some()).then_some(serde_json::Value::Object(kwargs))
    }

    /// Most tokens a reply may have: `reasoning_max_tokens` (or `max_tokens` if larger) where
    /// the model is asked to reason step by step before answering, `max_tokens` otherwise.
    pub fn reply_budget(&self, step_by_step: bool) -> u32 {
        if step_by_step {
            self.reasoning_max_tokens.max(self.max_tokens)
        } else {
            self.max_tokens
        }
    }
}
