//! The OpenAI-compatible chat client: several endpoints, a concurrency limit per endpoint,
//! timeouts, and retries with backoff on 429, 5xx, malformed bodies and connection errors.

/// Raises the soft limit on open files to the hard limit: thousands of requests in flight
/// need as many sockets (on the client and on a local server alike), and many systems start
/// processes at 1,024. Best effort: a failure leaves the limit as it was.
#[expect(unsafe_code, reason = "getrlimit/setrlimit have no safe wrapper in libc")]
pub fn raise_open_file_limit() {
    // SAFETY: getrlimit/setrlimit read and write only the struct passed.
    unsafe {
        let mut r: libc::rlimit = std::mem::zeroed();
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) == 0 && r.rlim_cur < r.rlim_max {
            r.rlim_cur = r.rlim_max;
            libc::setrlimit(libc::RLIMIT_NOFILE, &r);
        }
    }
}

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use tokio::sync::Semaphore;

use super::cache::CachedReply;
use super::model::{ModelSpec, StructuredMode};

/// One chat message.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Message {
    /// Who speaks, as the chat API names it: `system` or `user`.
    pub role: String,
    /// The text of the message.
    pub content: String,
}

/// One request: the messages and the sampling parameters.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ChatRequest {
    /// The conversation, system message first.
    pub messages: Vec<Message>,
    /// Sampling temperature.
    pub temperature: f64,
    /// Most tokens the reply may have.
    pub max_tokens: u32,
    /// Sampling seed, sent where the model declares `send_seed`.
    pub seed: Option<u64>,
    /// JSON schema of the answer, sent as `response_format` where the model asks for it.
    pub schema: Option<serde_json::Value>,
    /// Keyword arguments for the server's chat template, sent as `chat_template_kwargs` where
    /// the model declares any ([`ModelSpec::template_kwargs`]); left out of the serialisation
    /// (and so of the cache key) when there are none, so other models' keys are unchanged.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chat_template_kwargs: Option<serde_json::Value>,
}

impl ChatRequest {
    /// About how many bytes the request takes in JSON: its messages' text with a margin for
    /// escapes, and room for the schema and the other fields (a buffer sized by it is grown
    /// once at most).
    pub fn size_hint(&self) -> usize {
        let text: usize = self.messages.iter().map(|m| m.content.len() + m.role.len() + 32).sum();
        text + text / 16 + 1024
    }
}

/// Why a call failed for good.
#[derive(Debug, thiserror::Error, Clone, PartialEq)]
#[non_exhaustive]
pub enum CallError {
    /// Every retry failed; the last failure is given.
    #[error("model `{model}`: gave up after {attempts} tries; last: {last}")]
    Exhausted {
        /// The model's name in the study.
        model: String,
        /// Tries made, the first included.
        attempts: u32,
        /// The last failure, with the endpoint it came from.
        last: String,
    },
    /// The server refused the request in a way retrying cannot fix.
    #[error("model `{model}` at {endpoint}: HTTP {status}: {body}")]
    Rejected {
        /// The model's name in the study.
        model: String,
        /// Base URL of the server that refused.
        endpoint: String,
        /// The HTTP status code.
        status: u16,
        /// The start of the response body.
        body: String,
    },
    /// The server answered 200 without message content (what a reasoning parser returns for
    /// a reply cut off inside its thinking): the same request gets the same, so it is not
    /// retried here; the caller counts it as a failed attempt at its slot.
    #[error("model `{model}` at {endpoint}: reply without message content (finish_reason {finish_reason})")]
    Empty {
        /// The model's name in the study.
        model: String,
        /// Base URL of the server that answered.
        endpoint: String,
        /// The reply's `finish_reason`, or `none`.
        finish_reason: String,
    },
    /// No endpoint answered at start.
    #[error("model `{model}`: no endpoint reachable ({details})")]
    Unreachable {
        /// The model's name in the study.
        model: String,
        /// Each endpoint's failure, `;`-separated.
        details: String,
    },
}

impl CallError {
    /// Whether the failure belongs to this one request, so that another request (another
    /// attempt at the slot, with its own seed and budget) may succeed: a reply without content,
    /// or a refusal of the request itself (HTTP 400, 413, 422 and other 4xx). Refusals that say
    /// the model or the key is wrong (401, 403, 404, 405, 407) fail every request alike, and
    /// transport failures say nothing about the request: neither is per request.
    pub fn per_request(&self) -> bool {
        match self {
            CallError::Empty { .. } => true,
            CallError::Rejected { status, .. } => {
                (400..500).contains(status) && !matches!(status, 401 | 403 | 404 | 405 | 407)
            }
            CallError::Exhausted { .. } | CallError::Unreachable { .. } => false,
        }
    }
}

struct Endpoint {
    base: String,
    /// `{base}/chat/completions`, parsed once (a string URL is parsed again on every request).
    completions: Option<reqwest::Url>,
    /// The lean HTTP/1.1 client, for a plain-HTTP endpoint without a proxy; reqwest otherwise.
    lean: Option<super::http1::Http1Endpoint>,
    permits: Arc<Semaphore>,
    in_flight: AtomicUsize,
}

/// A client for one model.
pub struct LlmClient {
    spec: ModelSpec,
    http: reqwest::Client,
    endpoints: Vec<Endpoint>,
    api_key: Option<String>,
    /// Cleared when a server rejects `response_format`, after which instructions carry the
    /// format alone.
    structured: AtomicBool,
    /// Requests in flight across endpoints, and the most seen at once.
    in_flight: AtomicUsize,
    peak: AtomicUsize,
}

/// A request body as sent.
#[derive(Serialize)]
struct Body<'a> {
    model: &'a str,
    messages: &'a [Message],
    temperature: f64,
    max_tokens: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    seed: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    chat_template_kwargs: Option<&'a serde_json::Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    continue_final_message: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    add_generation_prompt: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    response_format: Option<ResponseFormat<'a>>,
}

/// `response_format`: a named JSON schema, or a JSON object with its schema.
#[derive(Serialize)]
#[serde(untagged)]
enum ResponseFormat<'a> {
    JsonSchema {
        #[serde(rename = "type")]
        kind: &'static str,
        json_schema: NamedSchema<'a>,
    },
    JsonObject {
        #[serde(rename = "type")]
        kind: &'static str,
        schema: &'a serde_json::Value,
    },
}

#[derive(Serialize)]
struct NamedSchema<'a> {
    name: &'static str,
    schema: &'a serde_json::Value,
    strict: bool,
}

#[derive(Deserialize)]
struct Completion {
    choices: Vec<Choice>,
    #[serde(default)]
    usage: Option<Usage>,
}

#[derive(Deserialize)]
struct Choice {
    message: ReplyMessage,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct ReplyMessage {
    #[serde(default)]
    content: Option<String>,
}

#[derive(Deserialize)]
struct Usage {
    #[serde(default)]
    prompt_tokens: Option<u64>,
    #[serde(default)]
    completion_tokens: Option<u64>,
}

impl LlmClient {
    /// A client for `spec` with its API key read from the environment
    /// ([`ModelSpec::api_key`]; none needed in `replay`).
    pub fn from_environment(spec: &ModelSpec, replay: bool) -> Result<LlmClient, String> {
        LlmClient::new(spec.clone(), spec.api_key(replay)?)
    }

    /// A client for `spec`; the API key, if any, is passed in (read by the caller from the
    /// variable the study names) and is never logged or written anywhere.
    pub fn new(spec: ModelSpec, api_key: Option<String>) -> Result<LlmClient, String> {
        spec.validate()?;
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs_f64(spec.timeout_s))
            .pool_max_idle_per_host(spec.concurrency)
            .build()
            .map_err(|e| format!("model `{}`: cannot build the HTTP client: {e}", spec.name))?;
        let endpoints = spec
            .endpoints
            .iter()
            .map(|b| {
                let completions = reqwest::Url::parse(&format!("{}/chat/completions", b.trim_end_matches('/'))).ok();
                Endpoint {
                    base: b.trim_end_matches('/').to_string(),
                    lean: completions.as_ref().and_then(|u| super::http1::Http1Endpoint::for_url(u, spec.concurrency)),
                    completions,
                    permits: Arc::new(Semaphore::new(spec.concurrency)),
                    in_flight: AtomicUsize::new(0),
                }
            })
            .collect();
        let structured = spec.structured != StructuredMode::Instructions;
        Ok(LlmClient {
            spec,
            http,
            endpoints,
            api_key,
            structured: AtomicBool::new(structured),
            in_flight: AtomicUsize::new(0),
            peak: AtomicUsize::new(0),
        })
    }

    /// The model this client calls.
    pub fn spec(&self) -> &ModelSpec {
        &self.spec
    }

    /// Requests in flight now.
    pub fn in_flight(&self) -> usize {
        self.in_flight.load(Ordering::Relaxed)
    }

    /// Most requests seen in flight at once.
    pub fn peak_in_flight(&self) -> usize {
        self.peak.load(Ordering::Relaxed)
    }

    /// Checks that at least one endpoint answers `GET /models`; the error lists each failure.
    pub async fn check_reachable(&self) -> Result<(), CallError> {
        let mut details = Vec::new();
        for e in &self.endpoints {
            let mut req = self.http.get(format!("{}/models", e.base)).timeout(Duration::from_secs(10));
            if let Some(k) = &self.api_key {
                req = req.bearer_auth(k);
            }
            match req.send().await {
                Ok(r) if r.status().is_success() => return Ok(()),
                Ok(r) => details.push(format!("{}: HTTP {}", e.base, r.status().as_u16())),
                Err(err) => details.push(format!("{}: {}", e.base, describe(&err))),
            }
        }
        Err(CallError::Unreachable { model: self.spec.name.clone(), details: details.join("; ") })
    }

    /// The endpoint with the most free permits (ties to the first), so that a slow endpoint
    /// does not hold back requests that another could serve.
    fn pick(&self) -> &Endpoint {
        self.endpoints
            .iter()
            .max_by_key(|e| (e.permits.available_permits(), std::cmp::Reverse(e.in_flight.load(Ordering::Relaxed))))
            .expect("invariant: a validated model has at least one endpoint")
    }

    /// The request body, serialised once per try straight from the request (no intermediate
    /// JSON value): the same fields, in the same order, as the OpenAI chat API takes them.
    fn body(&self, req: &ChatRequest, structured: bool) -> Result<Vec<u8>, serde_json::Error> {
        let prefill = self.spec.prefill == Some(super::model::Prefill::ContinueFinalMessage)
            && req.messages.last().is_some_and(|m| m.role == "assistant");
        let response_format = match (structured, &req.schema) {
            (true, Some(schema)) => Some(match self.spec.structured {
                StructuredMode::JsonSchema => ResponseFormat::JsonSchema {
                    kind: "json_schema",
                    json_schema: NamedSchema { name: "decision", schema, strict: true },
                },
                _ => ResponseFormat::JsonObject { kind: "json_object", schema },
            }),
            _ => None,
        };
        let mut out = Vec::with_capacity(req.size_hint() + self.spec.served_id.len());
        serde_json::to_writer(
            &mut out,
            &Body {
                model: &self.spec.served_id,
                messages: &req.messages,
                temperature: req.temperature,
                max_tokens: req.max_tokens,
                seed: req.seed,
                chat_template_kwargs: req.chat_template_kwargs.as_ref(),
                continue_final_message: prefill.then_some(true),
                add_generation_prompt: prefill.then_some(false),
                response_format,
            },
        )?;
        Ok(out)
    }

    /// Sends one request, retrying transient failures with exponential backoff.
    pub async fn chat(&self, req: &ChatRequest) -> Result<CachedReply, CallError> {
        let mut last = String::new();
        let tries = self.spec.max_retries + 1;
        for attempt in 0..tries {
            if attempt > 0 {
                let ms = (self.spec.backoff_ms << (attempt - 1).min(6)).min(5_000);
                tokio::time::sleep(Duration::from_millis(ms)).await;
            }
            let endpoint = self.pick();
            let Ok(_permit) = endpoint.permits.clone().acquire_owned().await else {
                return Err(CallError::Exhausted {
                    model: self.spec.name.clone(),
                    attempts: attempt,
                    last: "client closed".into(),
                });
            };
            endpoint.in_flight.fetch_add(1, Ordering::Relaxed);
            let now = self.in_flight.fetch_add(1, Ordering::Relaxed) + 1;
            self.peak.fetch_max(now, Ordering::Relaxed);
            let structured = self.structured.load(Ordering::Relaxed);
            let started = Instant::now();
            let body = self.body(req, structured).map_err(|e| CallError::Exhausted {
                model: self.spec.name.clone(),
                attempts: attempt,
                last: format!("the request does not serialise: {e}"),
            })?;
            let result = match &endpoint.lean {
                Some(lean) => lean
                    .post(&body, self.api_key.as_deref(), Duration::from_secs_f64(self.spec.timeout_s))
                    .await
                    .map(|r| (r.status, r.text))
                    .map_err(|e| e.to_string()),
                None => self.post_reqwest(endpoint, body).await.map_err(|e| describe(&e)),
            };
            endpoint.in_flight.fetch_sub(1, Ordering::Relaxed);
            self.in_flight.fetch_sub(1, Ordering::Relaxed);
            let latency_ms = started.elapsed().as_secs_f64() * 1000.0;
            match result {
                Err(e) => last = format!("{}: {e}", endpoint.base),
                Ok((200, text)) => match serde_json::from_str::<Completion>(&text) {
                    Ok(c) => {
                        let (content, finish_reason) = match c.choices.into_iter().next() {
                            Some(ch) => (ch.message.content, ch.finish_reason),
                            None => (None, None),
                        };
                        match content {
                            Some(content) => {
                                return Ok(CachedReply {
                                    content,
                                    prompt_tokens: c.usage.as_ref().and_then(|u| u.prompt_tokens),
                                    completion_tokens: c.usage.as_ref().and_then(|u| u.completion_tokens),
                                    endpoint: endpoint.base.clone(),
                                    latency_ms,
                                    finish_reason,
                                })
                            }
                            None => {
                                return Err(CallError::Empty {
                                    model: self.spec.name.clone(),
                                    endpoint: endpoint.base.clone(),
                                    finish_reason: finish_reason.unwrap_or_else(|| "none".into()),
                                })
                            }
                        }
                    }
                    Err(e) => last = format!("{}: malformed body ({e})", endpoint.base),
                },
                Ok((status, text)) if status == 429 || status >= 500 => {
                    last = format!("{}: HTTP {status}", endpoint.base);
                    let _ = text;
                }
                Ok((400, text))
                    if structured && req.schema.is_some() && text.to_lowercase().contains("response_format") =>
                {
                    // The server does not take this response_format: carry on with instructions.
                    self.structured.store(false, Ordering::Relaxed);
                    last = format!("{}: response_format rejected; continuing without it", endpoint.base);
                }
                Ok((status, text)) => {
                    return Err(CallError::Rejected {
                        model: self.spec.name.clone(),
                        endpoint: endpoint.base.clone(),
                        status,
                        body: text.chars().take(300).collect(),
                    })
                }
            }
        }
        Err(CallError::Exhausted { model: self.spec.name.clone(), attempts: tries, last })
    }
}

impl LlmClient {
    /// One POST through reqwest (an `https://` endpoint, or a proxy configured).
    async fn post_reqwest(&self, endpoint: &Endpoint, body: Vec<u8>) -> Result<(u16, String), reqwest::Error> {
        let post = match &endpoint.completions {
            Some(url) => self.http.post(url.clone()),
            None => self.http.post(format!("{}/chat/completions", endpoint.base)),
        };
        let mut http = post.header(reqwest::header::CONTENT_TYPE, "application/json").body(body);
        if let Some(k) = &self.api_key {
            http = http.bearer_auth(k);
        }
        let resp = http.send().await?;
        let status = resp.status().as_u16();
        Ok((status, resp.text().await?))
    }
}

/// A transport error in words, without the request's headers (which may carry a key).
fn describe(e: &reqwest::Error) -> String {
    if e.is_timeout() {
        "timed out".into()
    } else if e.is_connect() {
        "connection failed".into()
    } else if e.is_body() || e.is_decode() {
        "truncated or unreadable body".into()
    } else {
        e.to_string().chars().take(200).collect()
    }
}
