//! The lean HTTP/1.1 client against a scripted server: each way a reply's body may be framed,
//! replies split over many writes, kept-alive connections reused, an idle connection the server
//! closed, and the failures (timeout, refused connection, a reply cut short, not HTTP).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agora_agents::llm::http1::{Http1Endpoint, Http1Error};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// What the server does with one request on a connection.
#[derive(Clone)]
enum Step {
    /// Writes these bytes, in pieces of at most `chunk` bytes with a pause between them.
    Write { bytes: Vec<u8>, chunk: usize },
    /// Writes these bytes and closes the connection.
    WriteClose(Vec<u8>),
    /// Closes the connection without a word.
    Close,
    /// Never answers.
    Hang,
}

/// A server that answers the n-th request on each connection with `script[conn][n]` (the last
/// script repeats for later connections) and records each request it read.
struct Scripted {
    url: reqwest::Url,
    connections: Arc<AtomicUsize>,
    requests: Arc<Mutex<Vec<Vec<u8>>>>,
}

/// Reads one request (head and Content-Length body) from `s`; `None` at the end of the stream.
async fn read_request(s: &mut TcpStream) -> Option<Vec<u8>> {
    let mut buf = Vec::new();
    let mut tmp = [0u8; 4096];
    loop {
        if let Some(h) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..h]).to_ascii_lowercase();
            let len: usize = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .map_or(0, |v| v.trim().parse().expect("a length"));
            if buf.len() >= h + 4 + len {
                return Some(buf);
            }
        }
        let n = s.read(&mut tmp).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&tmp[..n]);
    }
}

async fn scripted(scripts: Vec<Vec<Step>>) -> Scripted {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    let connections = Arc::new(AtomicUsize::new(0));
    let requests = Arc::new(Mutex::new(Vec::new()));
    let (c, r) = (connections.clone(), requests.clone());
    tokio::spawn(async move {
        loop {
            let Ok((mut s, _)) = listener.accept().await else { return };
            let n = c.fetch_add(1, Ordering::SeqCst);
            let script = scripts[n.min(scripts.len() - 1)].clone();
            let r = r.clone();
            tokio::spawn(async move {
                for step in script {
                    let Some(req) = read_request(&mut s).await else { return };
                    r.lock().expect("lock").push(req);
                    match step {
                        Step::Write { bytes, chunk } => {
                            for piece in bytes.chunks(chunk) {
                                s.write_all(piece).await.expect("write");
                                s.flush().await.expect("flush");
                                tokio::time::sleep(Duration::from_millis(1)).await;
                            }
                        }
                        Step::WriteClose(bytes) => {
                            s.write_all(&bytes).await.expect("write");
                            return;
                        }
                        Step::Close => return,
                        Step::Hang => {
                            tokio::time::sleep(Duration::from_secs(3600)).await;
                        }
                    }
                }
            });
        }
    });
    let url = reqwest::Url::parse(&format!("http://{addr}/v1/chat/completions")).expect("url");
    Scripted { url, connections, requests }
}

fn ok(body: &str) -> Vec<u8> {
    format!("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}", body.len())
        .into_bytes()
}

fn whole(bytes: Vec<u8>) -> Step {
    Step::Write { bytes, chunk: usize::MAX }
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime")
}

/// The timeout of an exchange that is answered: a hang guard, long enough that a reply slowed
/// by a loaded machine is never taken for a timeout.
const T: Duration = Duration::from_secs(60);

#[test]
fn each_framing_of_a_reply_body_reads_the_same_text() {
    let body = r#"{"choices":[{"message":{"content":"{\"action\": \"A\"}"}}]}"#;
    let chunked = {
        let (a, b) = body.split_at(17);
        format!(
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n{:x}\r\n{a}\r\n{:X};ext=1\r\n{b}\r\n0\r\nX-Trailer: 1\r\n\r\n",
            a.len(),
            b.len()
        )
        .into_bytes()
    };
    let until_close = format!("HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n\r\n{body}").into_bytes();
    let rt = rt();
    rt.block_on(async {
        for (name, step, reused) in [
            ("content-length", whole(ok(body)), true),
            ("content-length, a byte per write", Step::Write { bytes: ok(body), chunk: 1 }, true),
            ("chunked with an extension and a trailer", whole(chunked.clone()), true),
            ("chunked, 3 bytes per write", Step::Write { bytes: chunked.clone(), chunk: 3 }, true),
            ("until close (HTTP/1.0)", Step::WriteClose(until_close.clone()), false),
        ] {
            let server = scripted(vec![vec![step.clone(), step]]).await;
            let ep = Http1Endpoint::for_url(&server.url, 8).expect("a plain-HTTP URL");
            let reply = ep.post(b"{\"x\":1}", None, T).await.unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!((reply.status, reply.text.as_str()), (200, body), "{name}");
            assert_eq!(ep.idle_connections(), usize::from(reused), "{name}: kept for reuse");
            let again = ep.post(b"{\"x\":2}", None, T).await.unwrap_or_else(|e| panic!("{name}, again: {e}"));
            assert_eq!(again.text, body, "{name}, again");
            let conns = server.connections.load(Ordering::SeqCst);
            assert_eq!(conns, if reused { 1 } else { 2 }, "{name}: connections opened");
        }
    });
}

#[test]
fn the_request_carries_path_host_type_length_and_key() {
    let rt = rt();
    rt.block_on(async {
        let server = scripted(vec![vec![whole(ok("{}"))]]).await;
        let url = reqwest::Url::parse(&format!("{}?api-version=2", server.url)).expect("url");
        let ep = Http1Endpoint::for_url(&url, 8).expect("plain HTTP");
        let body = br#"{"messages":[{"role":"user","content":"hi"}]}"#;
        ep.post(body, Some("sk-test"), T).await.expect("reply");
        let req = server.requests.lock().expect("lock")[0].clone();
        let text = String::from_utf8(req).expect("utf-8");
        let (head, sent) = text.split_once("\r\n\r\n").expect("a head");
        assert!(head.starts_with("POST /v1/chat/completions?api-version=2 HTTP/1.1\r\n"), "{head}");
        let port = server.url.port().expect("port");
        let lines: Vec<String> = head.lines().map(str::to_ascii_lowercase).collect();
        for want in [
            format!("host: 127.0.0.1:{port}"),
            "content-type: application/json".into(),
            format!("content-length: {}", body.len()),
            "authorization: bearer sk-test".into(),
        ] {
            assert!(lines.contains(&want), "{want} in {head}");
        }
        assert_eq!(sent.as_bytes(), body);
    });
}

#[test]
fn an_idle_connection_the_server_closed_is_replaced_without_a_failure() {
    let rt = rt();
    rt.block_on(async {
        // The first connection answers once and then closes after the next request arrives
        // unanswered; the second answers everything.
        let server = scripted(vec![vec![whole(ok("\"one\"")), Step::Close], vec![whole(ok("\"two\""))]]).await;
        let ep = Http1Endpoint::for_url(&server.url, 8).expect("plain HTTP");
        assert_eq!(ep.post(b"{}", None, T).await.expect("first").text, "\"one\"");
        assert_eq!(ep.post(b"{}", None, T).await.expect("second, on a fresh connection").text, "\"two\"");
        assert_eq!(server.connections.load(Ordering::SeqCst), 2);
        assert_eq!(server.requests.lock().expect("lock").len(), 3, "the request was sent once more");
    });
}

#[test]
fn connection_close_and_bytes_after_the_reply_stop_reuse() {
    let rt = rt();
    rt.block_on(async {
        let closing = b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\n{}".to_vec();
        let extra = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}HTTP/1.1 200".to_vec();
        for bytes in [closing, extra] {
            let server = scripted(vec![vec![whole(bytes.clone()), whole(bytes)]]).await;
            let ep = Http1Endpoint::for_url(&server.url, 8).expect("plain HTTP");
            assert_eq!(ep.post(b"{}", None, T).await.expect("reply").text, "{}");
            assert_eq!(ep.idle_connections(), 0);
        }
    });
}

#[test]
fn statuses_other_than_200_are_returned_with_their_body() {
    let rt = rt();
    rt.block_on(async {
        let bytes = b"HTTP/1.1 429 Too Many Requests\r\nContent-Length: 9\r\n\r\nslow down".to_vec();
        let server = scripted(vec![vec![whole(bytes)]]).await;
        let ep = Http1Endpoint::for_url(&server.url, 8).expect("plain HTTP");
        let reply = ep.post(b"{}", None, T).await.expect("reply");
        assert_eq!((reply.status, reply.text.as_str()), (429, "slow down"));
    });
}

#[test]
fn failures_are_named() {
    let rt = rt();
    rt.block_on(async {
        let cases: Vec<(&str, Step, Http1Error)> = vec![
            ("no reply", Step::Close, Http1Error::Body),
            (
                "a body cut short",
                Step::WriteClose(b"HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\n{\"a\":".to_vec()),
                Http1Error::Body,
            ),
            ("not HTTP", Step::WriteClose(b"SSH-2.0-OpenSSH\r\n\r\n".to_vec()), Http1Error::Body),
            (
                "a broken chunk",
                Step::WriteClose(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n".to_vec()),
                Http1Error::Body,
            ),
            ("no answer in time", Step::Hang, Http1Error::Timeout),
        ];
        for (name, step, want) in cases {
            // A short timeout only where the server never answers (it then ends the exchange
            // however fast the machine); elsewhere a slow close must not be taken for one.
            let timeout = if matches!(step, Step::Hang) { Duration::from_millis(300) } else { T };
            let server = scripted(vec![vec![step]]).await;
            let ep = Http1Endpoint::for_url(&server.url, 8).expect("plain HTTP");
            let got = ep.post(b"{}", None, timeout).await;
            assert_eq!(got.map(|r| r.status), Err(want), "{name}");
        }
        // Nothing listens on the port any more.
        let free = TcpListener::bind("127.0.0.1:0").await.expect("bind").local_addr().expect("addr");
        let url = reqwest::Url::parse(&format!("http://{free}/v1/chat/completions")).expect("url");
        let ep = Http1Endpoint::for_url(&url, 8).expect("plain HTTP");
        assert_eq!(ep.post(b"{}", None, T).await.map(|r| r.status), Err(Http1Error::Connect));
    });
}

#[test]
fn tls_and_credentials_in_the_url_stay_with_reqwest() {
    for url in ["https://api.example.com/v1/chat/completions", "http://user:pw@127.0.0.1:8000/v1/chat/completions"] {
        assert!(Http1Endpoint::for_url(&reqwest::Url::parse(url).expect("url"), 8).is_none(), "{url}");
    }
    let v6 = Http1Endpoint::for_url(&reqwest::Url::parse("http://[::1]:8000/v1/chat/completions").expect("url"), 8);
    assert!(v6.is_some());
}
