//! Test support for Agora: a local fake OpenAI-compatible server for tests and benchmarks.
//!
//! The fake server is a dev-dependency of the crates whose tests talk to a model server and is
//! used by the `agora-bench` binary and by `agora calibrate`, whose scripted families answer
//! through it. (The paper's scripted roster, which `agora replicate --verdicts` plays, is the
//! `agora-replay` crate.)
//!
//! It answers `GET /v1/models` and `POST /v1/chat/completions` on 127.0.0.1 with a behaviour
//! chosen per request: a legal answer read off the request's JSON schema, a given text, a
//! given text cut at the token limit (`finish_reason: "length"`), null content, an HTTP status, a malformed
//! or truncated body, a delay, a wait on a gate the test opens, a hang or a dropped connection. It counts requests and the most
//! in flight at once, and keeps the latest completion request's body as sent.

pub mod browser;
#[cfg(feature = "people")]
pub mod people;

/// The words of `text` (letters, digits and apostrophes), lower-cased and sorted: two texts with
/// the same bag of words say the same things, whatever their layout.
pub fn word_bag(text: &str) -> Vec<String> {
    let mut w: Vec<String> = text
        .split(|c: char| !c.is_alphanumeric() && c != '\'')
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    w.sort();
    w
}

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// What the server does with one completion request.
#[derive(Clone, Debug, PartialEq)]
pub enum FakeReply {
    /// A legal answer derived from the request's schema (deterministic in the request).
    Legal,
    /// This message content.
    Content(String),
    /// This message content, reported as cut at the token limit (`finish_reason: "length"`).
    Cut(String),
    /// A 200 whose message content is null, cut at the token limit (what a reasoning parser
    /// returns for a reply cut off inside its thinking).
    NullContent,
    /// An HTTP error status with a short JSON body.
    Status(u16),
    /// A 200 whose body is not JSON.
    Malformed,
    /// A 200 whose body stops half-way (Content-Length promises more).
    Truncated,
    /// Waits, then behaves as the inner reply.
    Delay(Duration, Box<FakeReply>),
    /// Holds the request until the gate is opened, then behaves as the inner reply (so that a
    /// test decides when a reply comes, rather than a clock). A request whose client closes the
    /// connection while it is held is dropped, and no longer counted in flight.
    Gated(Gate, Box<FakeReply>),
    /// Never answers.
    Hang,
    /// Closes the connection without a word.
    Close,
}

/// A gate that holds [`FakeReply::Gated`] requests until a test opens it; clones share it.
#[derive(Clone)]
pub struct Gate(Arc<tokio::sync::watch::Sender<bool>>);

impl Gate {
    /// A closed gate.
    pub fn new() -> Gate {
        Gate(Arc::new(tokio::sync::watch::Sender::new(false)))
    }

    /// Opens the gate: requests held at it go on, and later ones pass at once.
    pub fn open(&self) {
        self.0.send_replace(true);
    }

    /// Returns once the gate is open.
    pub async fn opened(&self) {
        let mut rx = self.0.subscribe();
        let _ = rx.wait_for(|open| *open).await;
    }
}

impl Default for Gate {
    fn default() -> Gate {
        Gate::new()
    }
}

impl std::fmt::Debug for Gate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Gate({})", if *self.0.borrow() { "open" } else { "closed" })
    }
}

impl PartialEq for Gate {
    fn eq(&self, other: &Gate) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

/// Chooses a reply from the request number (0-based) and the request body.
pub type Behaviour = Arc<dyn Fn(usize, &serde_json::Value) -> FakeReply + Send + Sync>;

/// A running fake server; dropped, it stops accepting.
pub struct FakeServer {
    /// Loopback address the server listens on.
    pub addr: SocketAddr,
    /// Completion requests received so far (model listings are not counted).
    pub requests: Arc<AtomicUsize>,
    /// Most completion requests in flight at once.
    pub peak_in_flight: Arc<AtomicUsize>,
    /// The body of the latest completion request, byte for byte as the client sent it (only
    /// the latest is kept, so long load tests hold one body).
    last_body: Arc<Mutex<String>>,
    stop: Arc<AtomicBool>,
    task: tokio::task::JoinHandle<()>,
}

impl FakeServer {
    /// Starts a server on an ephemeral loopback port.
    pub async fn start(behaviour: Behaviour) -> std::io::Result<FakeServer> {
        Self::start_on("127.0.0.1:0", behaviour).await
    }

    /// Starts a server on a given loopback address (to restart one on the same port).
    pub async fn start_on(addr: &str, behaviour: Behaviour) -> std::io::Result<FakeServer> {
        let listener = TcpListener::bind(addr).await?;
        let addr = listener.local_addr()?;
        let requests = Arc::new(AtomicUsize::new(0));
        let in_flight = Arc::new(AtomicUsize::new(0));
        let peak = Arc::new(AtomicUsize::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let last_body = Arc::new(Mutex::new(String::new()));
        let counters = Counters {
            requests: requests.clone(),
            in_flight,
            peak: peak.clone(),
            stop: stop.clone(),
            last_body: last_body.clone(),
        };
        let task = tokio::spawn(async move {
            loop {
                let Ok((sock, _)) = listener.accept().await else { continue };
                if counters.stop.load(Ordering::Relaxed) {
                    break;
                }
                let _ = sock.set_nodelay(true);
                let (b, c) = (behaviour.clone(), counters.clone());
                tokio::spawn(async move {
                    let _ = serve(sock, b, c).await;
                });
            }
        });
        Ok(FakeServer { addr, requests, peak_in_flight: peak, last_body, stop, task })
    }

    /// The base URL to put in a model's endpoints.
    pub fn endpoint(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// The body of the latest completion request, as sent.
    pub fn last_body(&self) -> String {
        self.last_body.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }

    /// Stops accepting connections and drops those open (a server that dies).
    pub fn stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
        self.task.abort();
    }

    /// Stops as [`FakeServer::stop`] does and returns once the listening socket is closed, so
    /// that the port is free to start another server on (`stop` only asks the runtime to close
    /// it, which it does when it next gets to it).
    pub async fn shut_down(mut self) {
        self.stop();
        let _ = (&mut self.task).await;
    }
}

impl Drop for FakeServer {
    fn drop(&mut self) {
        self.stop();
    }
}

/// What a completion request asks for, read off the JSON schema of its `response_format`.
#[derive(Clone, Debug)]
pub struct Asked<'a> {
    /// The schema the answer must follow.
    pub schema: &'a serde_json::Value,
    /// The schema's required fields, in order.
    pub required: Vec<&'a str>,
}

impl<'a> Asked<'a> {
    /// The schema of `body` (`response_format.json_schema.schema`, or `response_format.schema`).
    pub fn of(body: &'a serde_json::Value) -> Asked<'a> {
        let schema = &body["response_format"]["json_schema"]["schema"];
        let schema = if schema.is_null() { &body["response_format"]["schema"] } else { schema };
        let required =
            schema["required"].as_array().map_or_else(Vec::new, |r| r.iter().filter_map(|v| v.as_str()).collect());
        Asked { schema, required }
    }

    /// The answer field: the first required field that is not `reasoning`, if any.
    pub fn answer_field(&self) -> Option<&'a str> {
        self.required.iter().copied().find(|f| *f != "reasoning")
    }

    /// The answer field; panics where the schema has none.
    pub fn field(&self) -> &'a str {
        self.answer_field().expect("answer field")
    }

    /// Whether the schema requires a `reasoning` field.
    pub fn reasoning(&self) -> bool {
        self.required.contains(&"reasoning")
    }

    /// The schema of the answer field.
    pub fn property(&self) -> &'a serde_json::Value {
        &self.schema["properties"][self.field()]
    }

    /// The answer field's labels (its `enum`); panics where it has none.
    pub fn labels(&self) -> &'a Vec<serde_json::Value> {
        self.property()["enum"].as_array().expect("labels")
    }

    /// The answer field's `i`th label.
    pub fn label(&self, i: usize) -> serde_json::Value {
        self.labels()[i].clone()
    }
}

/// A legal answer for the request: the first required field of the schema that is not
/// `reasoning`, with a value chosen by a hash of the messages.
pub fn legal_answer(body: &serde_json::Value) -> String {
    let messages = body["messages"].to_string();
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in messages.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    let asked = Asked::of(body);
    let field = asked.answer_field().unwrap_or("action").to_string();
    let prop = &asked.schema["properties"][&field];
    let value = if let Some(e) = prop["enum"].as_array().filter(|e| !e.is_empty()) {
        e[(h % e.len() as u64) as usize].clone()
    } else if prop["type"] == "integer" {
        let (lo, hi) = (prop["minimum"].as_i64().unwrap_or(0), prop["maximum"].as_i64().unwrap_or(10));
        serde_json::json!(lo + (h % ((hi - lo + 1).max(1) as u64)) as i64)
    } else if prop["type"] == "array" {
        let n = prop["minItems"].as_u64().unwrap_or(1);
        let hi = prop["items"]["maximum"].as_i64().unwrap_or(0);
        serde_json::json!((0..n).map(|i| ((h >> (i * 3)) % (hi as u64 + 1)) as i64).collect::<Vec<_>>())
    } else {
        serde_json::json!(0)
    };
    serde_json::json!({ field: value, "reason": "fake server" }).to_string()
}

/// What one server shares with the connections it serves.
#[derive(Clone)]
struct Counters {
    requests: Arc<AtomicUsize>,
    in_flight: Arc<AtomicUsize>,
    peak: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
    last_body: Arc<Mutex<String>>,
}

fn completion(content: &str, finish_reason: &str) -> String {
    serde_json::json!({
        "id": "fake", "object": "chat.completion", "model": "fake",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": finish_reason}],
        "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}
    })
    .to_string()
}

async fn write(sock: &mut TcpStream, status: u16, body: &str, claimed: Option<usize>) -> std::io::Result<()> {
    let len = claimed.unwrap_or(body.len());
    // One write for head and body, as a serving engine answers: two writes would leave the body
    // to Nagle's algorithm and the client's delayed ACK (about 40 ms on loopback).
    let mut reply = format!("HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {len}\r\n\r\n");
    reply.push_str(body);
    sock.write_all(reply.as_bytes()).await?;
    sock.flush().await
}

async fn serve(mut sock: TcpStream, behaviour: Behaviour, counters: Counters) -> std::io::Result<()> {
    let Counters { requests, in_flight, peak, stop, last_body } = counters;
    let mut buf: Vec<u8> = Vec::with_capacity(8192);
    loop {
        // Read one request: headers, then Content-Length bytes of body.
        let header_end = loop {
            if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                break i + 4;
            }
            let mut chunk = [0u8; 8192];
            let n = sock.read(&mut chunk).await?;
            if n == 0 || stop.load(Ordering::Relaxed) {
                return Ok(());
            }
            buf.extend_from_slice(&chunk[..n]);
        };
        let head = String::from_utf8_lossy(&buf[..header_end]).to_string();
        let length: usize = head
            .lines()
            .find_map(|l| l.to_ascii_lowercase().strip_prefix("content-length:").map(|v| v.trim().parse().unwrap_or(0)))
            .unwrap_or(0);
        while buf.len() < header_end + length {
            let mut chunk = [0u8; 8192];
            let n = sock.read(&mut chunk).await?;
            if n == 0 {
                return Ok(());
            }
            buf.extend_from_slice(&chunk[..n]);
        }
        let body: Vec<u8> = buf[header_end..header_end + length].to_vec();
        buf.drain(..header_end + length);
        if stop.load(Ordering::Relaxed) {
            return Ok(());
        }
        if head.starts_with("GET") {
            write(&mut sock, 200, r#"{"object":"list","data":[{"id":"fake","object":"model"}]}"#, None).await?;
            continue;
        }
        let n = requests.fetch_add(1, Ordering::Relaxed);
        let now = in_flight.fetch_add(1, Ordering::Relaxed) + 1;
        peak.fetch_max(now, Ordering::Relaxed);
        *last_body.lock().unwrap_or_else(std::sync::PoisonError::into_inner) =
            String::from_utf8_lossy(&body).into_owned();
        let json: serde_json::Value = serde_json::from_slice(&body).unwrap_or(serde_json::Value::Null);
        let mut reply = behaviour(n, &json);
        let result = loop {
            match reply {
                FakeReply::Delay(d, inner) => {
                    tokio::time::sleep(d).await;
                    reply = *inner;
                }
                FakeReply::Gated(gate, inner) => {
                    // A client that gives up on a held request (a timeout, or the process
                    // killed) closes its connection: the request is then no longer in flight.
                    let closed = async {
                        let mut byte = [0u8; 1];
                        matches!(sock.peek(&mut byte).await, Ok(0) | Err(_))
                    };
                    tokio::select! {
                        () = gate.opened() => reply = *inner,
                        true = closed => {
                            in_flight.fetch_sub(1, Ordering::Relaxed);
                            return Ok(());
                        }
                    }
                }
                FakeReply::Legal => break write(&mut sock, 200, &completion(&legal_answer(&json), "stop"), None).await,
                FakeReply::Content(c) => break write(&mut sock, 200, &completion(&c, "stop"), None).await,
                FakeReply::Cut(c) => break write(&mut sock, 200, &completion(&c, "length"), None).await,
                FakeReply::NullContent => {
                    let body = serde_json::json!({
                        "id": "fake", "object": "chat.completion", "model": "fake",
                        "choices": [{"index": 0, "message": {"role": "assistant", "content": null}, "finish_reason": "length"}],
                    });
                    break write(&mut sock, 200, &body.to_string(), None).await;
                }
                FakeReply::Status(s) => {
                    break write(&mut sock, s, r#"{"error":{"message":"fake failure"}}"#, None).await
                }
                FakeReply::Malformed => break write(&mut sock, 200, "{\"choices\": [ this is not json", None).await,
                FakeReply::Truncated => {
                    let full = completion(&legal_answer(&json), "stop");
                    let half = &full[..full.len() / 2];
                    let _ = write(&mut sock, 200, half, Some(full.len())).await;
                    in_flight.fetch_sub(1, Ordering::Relaxed);
                    return Ok(());
                }
                FakeReply::Hang => {
                    tokio::time::sleep(Duration::from_secs(3600)).await;
                    break Ok(());
                }
                FakeReply::Close => {
                    in_flight.fetch_sub(1, Ordering::Relaxed);
                    return Ok(());
                }
            }
        };
        in_flight.fetch_sub(1, Ordering::Relaxed);
        result?;
    }
}

/// The assistant prefill of a request: the content of its last message where that message is
/// the assistant's (the turn the server is asked to continue), else `None`.
pub fn assistant_prefill(body: &serde_json::Value) -> Option<&str> {
    let last = body["messages"].as_array()?.last()?;
    (last["role"] == "assistant").then(|| last["content"].as_str()).flatten()
}

/// Chooses the continuation of an assistant prefill from the prefill's text, the request number
/// (0-based) and the request body.
pub type PrefillBehaviour = Arc<dyn Fn(&str, usize, &serde_json::Value) -> FakeReply + Send + Sync>;

/// Answers a request whose last message is an assistant prefill from `prefill` (given the
/// prefill's text, the request number and the body; it returns the continuation only), and any
/// other request from `otherwise`.
pub fn with_prefill(otherwise: Behaviour, prefill: PrefillBehaviour) -> Behaviour {
    Arc::new(move |n, body| match assistant_prefill(body) {
        Some(p) => prefill(p, n, body),
        None => otherwise(n, body),
    })
}
