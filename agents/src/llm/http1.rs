//! A lean HTTP/1.1 client for plain-HTTP model servers (a local vLLM, llama.cpp or Ollama).
//!
//! A decision is one small POST and one small JSON reply. Through reqwest each such exchange
//! passes between two tasks (the caller's and the connection's) and through a connection pool
//! built for general use; measured here at 512 requests in flight, that cost about 78 µs of
//! CPU a request against 30 µs for the exchange written directly on the socket (README,
//! "Benchmarks"). This client writes the request and reads the reply on the caller's task, over
//! kept-alive connections of its own.
//!
//! What it covers is what a chat-completions call needs: a POST with a JSON body; a reply with
//! `Content-Length`, `Transfer-Encoding: chunked`, or a body that ends when the server closes the
//! connection; keep-alive per HTTP/1.1 (and HTTP/1.0's `Connection: keep-alive`). Responses are
//! parsed with `httparse` (hyper's parser). An idle connection that the server has closed in the
//! meantime is detected when the exchange fails before any byte of a reply arrives; the request
//! is then sent once more on a fresh connection, as hyper does.
//!
//! TLS endpoints (`https://`) and runs with a proxy configured in the environment keep using
//! reqwest ([`Http1Endpoint::for_url`] returns `None` for them).

use std::sync::Mutex;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The most bytes a reply may have (head and body): a chat reply is a few kilobytes.
const MAX_REPLY: usize = 64 << 20;

/// The environment variables through which reqwest would send a plain-HTTP request via a proxy.
const PROXY_VARS: [&str; 4] = ["http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"];

/// Why an exchange failed, in the words the client reports.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Http1Error {
    /// The whole exchange took longer than the timeout.
    #[error("timed out")]
    Timeout,
    /// No connection could be opened.
    #[error("connection failed")]
    Connect,
    /// The connection broke, or the reply ended early or does not read as HTTP.
    #[error("truncated or unreadable body")]
    Body,
}

/// One plain-HTTP endpoint's POST target and its idle connections.
#[derive(Debug)]
pub struct Http1Endpoint {
    /// `host:port`, to connect to and for the `Host` header.
    authority: String,
    /// The request head up to the body's length: request line, host, accept, content type.
    head: String,
    idle: Mutex<Vec<TcpStream>>,
    max_idle: usize,
}

/// A reply: status and body.
#[derive(Debug)]
pub struct Reply {
    /// HTTP status code.
    pub status: u16,
    /// The body, as text (invalid UTF-8 replaced, as reqwest's `text()` does).
    pub text: String,
}

/// How a reply's body is delimited.
enum Framing {
    Length(usize),
    Chunked,
    UntilClose,
}

/// A parsed reply head.
struct Head {
    status: u16,
    len: usize,
    framing: Framing,
    keep_alive: bool,
}

impl Http1Endpoint {
    /// The lean client for `url`, where it applies: an `http://` URL, and no proxy variable set
    /// (reqwest would route the request through the proxy). `max_idle` bounds the connections
    /// kept open between requests.
    pub fn for_url(url: &reqwest::Url, max_idle: usize) -> Option<Http1Endpoint> {
        if url.scheme() != "http" || PROXY_VARS.iter().any(|v| std::env::var_os(v).is_some_and(|x| !x.is_empty())) {
            return None;
        }
        if !url.username().is_empty() || url.password().is_some() {
            return None;
        }
        let host = url.host_str()?;
        let port = url.port_or_known_default()?;
        let authority = if host.contains(':') && !host.starts_with('[') {
            format!("[{host}]:{port}")
        } else {
            format!("{host}:{port}")
        };
        let mut target = url.path().to_string();
        if let Some(q) = url.query() {
            target.push('?');
            target.push_str(q);
        }
        let head =
            format!("POST {target} HTTP/1.1\r\nhost: {authority}\r\naccept: */*\r\ncontent-type: application/json\r\n");
        Some(Http1Endpoint { authority, head, idle: Mutex::new(Vec::new()), max_idle })
    }

    /// Connections open and idle now.
    pub fn idle_connections(&self) -> usize {
        self.idle.lock().map(|v| v.len()).unwrap_or(0)
    }

    /// POSTs `body` (JSON), with a bearer token if given; the whole exchange, connecting
    /// included, must end within `timeout`.
    pub async fn post(&self, body: &[u8], bearer: Option<&str>, timeout: Duration) -> Result<Reply, Http1Error> {
        let mut request = Vec::with_capacity(self.head.len() + body.len() + 64);
        request.extend_from_slice(self.head.as_bytes());
        request.extend_from_slice(b"content-length: ");
        request.extend_from_slice(body.len().to_string().as_bytes());
        request.extend_from_slice(b"\r\n");
        if let Some(token) = bearer {
            request.extend_from_slice(b"authorization: Bearer ");
            request.extend_from_slice(token.as_bytes());
            request.extend_from_slice(b"\r\n");
        }
        request.extend_from_slice(b"\r\n");
        request.extend_from_slice(body);
        tokio::time::timeout(timeout, self.send(&request)).await.unwrap_or(Err(Http1Error::Timeout))
    }

    async fn send(&self, request: &[u8]) -> Result<Reply, Http1Error> {
        let reused = self.idle.lock().ok().and_then(|mut v| v.pop());
        if let Some(mut stream) = reused {
            match exchange(&mut stream, request).await {
                Ok((reply, keep)) => {
                    self.put_back(stream, keep);
                    return Ok(reply);
                }
                // The server closed the idle connection before this request reached it: once
                // more on a fresh connection.
                Err(Failure::BeforeReply) => {}
                Err(Failure::After) => return Err(Http1Error::Body),
            }
        }
        let mut stream = TcpStream::connect(&self.authority).await.map_err(|_| Http1Error::Connect)?;
        let _ = stream.set_nodelay(true);
        match exchange(&mut stream, request).await {
            Ok((reply, keep)) => {
                self.put_back(stream, keep);
                Ok(reply)
            }
            Err(_) => Err(Http1Error::Body),
        }
    }

    fn put_back(&self, stream: TcpStream, keep: bool) {
        if keep {
            if let Ok(mut idle) = self.idle.lock() {
                if idle.len() < self.max_idle {
                    idle.push(stream);
                }
            }
        }
    }
}

/// Where an exchange failed: before any byte of a reply (the request can be sent again on
/// another connection), or after.
enum Failure {
    BeforeReply,
    After,
}

/// Writes the request and reads one reply; returns it and whether the connection can be used
/// again.
async fn exchange(stream: &mut TcpStream, request: &[u8]) -> Result<(Reply, bool), Failure> {
    stream.write_all(request).await.map_err(|_| Failure::BeforeReply)?;
    let mut buf: Vec<u8> = Vec::with_capacity(4096);
    let head = loop {
        if read_more(stream, &mut buf).await? == 0 {
            return Err(if buf.is_empty() { Failure::BeforeReply } else { Failure::After });
        }
        match parse_head(&buf)? {
            Some(h) if (100..200).contains(&h.status) => {
                // An interim reply (100 Continue): the real one follows.
                buf.drain(..h.len);
                if let Some(h) = parse_head(&buf)?.filter(|h| !(100..200).contains(&h.status)) {
                    break h;
                }
            }
            Some(h) => break h,
            None => {}
        }
    };
    let mut keep = head.keep_alive;
    let body = match head.framing {
        Framing::Length(n) => {
            while buf.len() < head.len + n {
                if read_more(stream, &mut buf).await? == 0 {
                    return Err(Failure::After);
                }
            }
            // Bytes after the reply: nothing else was asked, so the connection is not reused.
            keep &= buf.len() == head.len + n;
            buf[head.len..head.len + n].to_vec()
        }
        Framing::Chunked => {
            let (body, rest) = read_chunked(stream, &mut buf, head.len).await?;
            keep &= rest == 0;
            body
        }
        Framing::UntilClose => {
            while read_more(stream, &mut buf).await? > 0 {}
            keep = false;
            buf[head.len..].to_vec()
        }
    };
    let text = String::from_utf8(body).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
    Ok((Reply { status: head.status, text }, keep))
}

/// Reads what the socket has into the end of `buf`; 0 at the end of the stream.
async fn read_more(stream: &mut TcpStream, buf: &mut Vec<u8>) -> Result<usize, Failure> {
    if buf.len() >= MAX_REPLY {
        return Err(Failure::After);
    }
    if buf.capacity() - buf.len() < 1024 {
        buf.reserve(buf.capacity().max(4096));
    }
    let fail = if buf.is_empty() { Failure::BeforeReply } else { Failure::After };
    stream.read_buf(buf).await.map_err(|_| fail)
}

/// Parses a reply head from the start of `buf`: `None` while it is incomplete.
fn parse_head(buf: &[u8]) -> Result<Option<Head>, Failure> {
    let mut headers = [httparse::EMPTY_HEADER; 64];
    let mut resp = httparse::Response::new(&mut headers);
    let len = match resp.parse(buf) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(_) => return Err(Failure::After),
    };
    let status = resp.code.ok_or(Failure::After)?;
    let http11 = resp.version == Some(1);
    let (mut length, mut chunked, mut other_coding, mut close, mut keep_alive) = (None, false, false, false, false);
    for h in resp.headers.iter() {
        let value = std::str::from_utf8(h.value).map_err(|_| Failure::After)?.trim();
        if h.name.eq_ignore_ascii_case("content-length") {
            let n: usize = value.parse().map_err(|_| Failure::After)?;
            if length.is_some_and(|m| m != n) {
                return Err(Failure::After);
            }
            length = Some(n);
        } else if h.name.eq_ignore_ascii_case("transfer-encoding") {
            // Chunked is the last coding, or the body ends when the connection does.
            chunked = value.rsplit(',').next().is_some_and(|t| t.trim().eq_ignore_ascii_case("chunked"));
            other_coding = !chunked;
        } else if h.name.eq_ignore_ascii_case("connection") {
            for token in value.split(',') {
                close |= token.trim().eq_ignore_ascii_case("close");
                keep_alive |= token.trim().eq_ignore_ascii_case("keep-alive");
            }
        }
    }
    let framing = if status == 204 || status == 304 || (100..200).contains(&status) {
        Framing::Length(0)
    } else if chunked {
        Framing::Chunked
    } else if other_coding {
        Framing::UntilClose
    } else {
        length.map_or(Framing::UntilClose, Framing::Length)
    };
    Ok(Some(Head { status, len, framing, keep_alive: !close && (http11 || keep_alive) }))
}

/// Reads a chunked body that starts at `start` of `buf`; returns the body and how many bytes
/// followed it.
async fn read_chunked(stream: &mut TcpStream, buf: &mut Vec<u8>, start: usize) -> Result<(Vec<u8>, usize), Failure> {
    let mut body = Vec::new();
    let mut pos = start;
    loop {
        let (consumed, size) = loop {
            match httparse::parse_chunk_size(&buf[pos..]) {
                Ok(httparse::Status::Complete(x)) => break x,
                Ok(httparse::Status::Partial) => {
                    if read_more(stream, buf).await? == 0 {
                        return Err(Failure::After);
                    }
                }
                Err(_) => return Err(Failure::After),
            }
        };
        pos += consumed;
        let size = usize::try_from(size).map_err(|_| Failure::After)?;
        if size == 0 {
            // Trailers, if any, then the empty line.
            loop {
                if let Some(end) = trailer_end(&buf[pos..]) {
                    return Ok((body, buf.len() - pos - end));
                }
                if read_more(stream, buf).await? == 0 {
                    return Err(Failure::After);
                }
            }
        }
        if size > MAX_REPLY {
            return Err(Failure::After);
        }
        while buf.len() < pos + size + 2 {
            if read_more(stream, buf).await? == 0 {
                return Err(Failure::After);
            }
        }
        if &buf[pos + size..pos + size + 2] != b"\r\n" {
            return Err(Failure::After);
        }
        body.extend_from_slice(&buf[pos..pos + size]);
        pos += size + 2;
    }
}

/// The length of the trailer section at the start of `b` (ending with an empty line), once
/// complete.
fn trailer_end(b: &[u8]) -> Option<usize> {
    if b.starts_with(b"\r\n") {
        return Some(2);
    }
    b.windows(4).position(|w| w == b"\r\n\r\n").map(|i| i + 4)
}
