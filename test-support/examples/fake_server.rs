//! A fake OpenAI-compatible server on a fixed port, answering every decision legally after a
//! set delay: `cargo run --release -p agora-test-support --example fake_server -- PORT [DELAY_MS]`.
use std::sync::Arc;
use std::time::Duration;

use agora_test_support::{FakeReply, FakeServer};

fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let port = args.get(1).map_or("8099", String::as_str).to_string();
    let delay: u64 = args.get(2).and_then(|d| d.parse().ok()).unwrap_or(0);
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build()?;
    rt.block_on(async move {
        let reply = if delay == 0 {
            FakeReply::Legal
        } else {
            FakeReply::Delay(Duration::from_millis(delay), Box::new(FakeReply::Legal))
        };
        let server = FakeServer::start_on(&format!("127.0.0.1:{port}"), Arc::new(move |_, _| reply.clone())).await?;
        println!("{}", server.endpoint());
        std::future::pending::<()>().await;
        Ok(())
    })
}
