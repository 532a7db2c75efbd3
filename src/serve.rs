//! `agora serve`: the command line of the `agora-serve` crate.

use std::net::SocketAddr;
use std::path::PathBuf;

use agora_serve::{prepare, serve, ServeOptions};

/// `agora serve STUDY`.
#[derive(clap::Args, Debug)]
pub struct ServeArgs {
    /// Study file (RON) with `Human` seats and its `participants` pages.
    pub study: PathBuf,
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub bind: SocketAddr,
    /// Store file the runs and the session's records go to.
    #[arg(long, default_value = crate::DEFAULT_STORE)]
    pub store: PathBuf,
    /// Cells directory (default: the one beside the study's directory).
    #[arg(long)]
    pub cells: Option<PathBuf>,
    /// Models file in place of the study's.
    #[arg(long)]
    pub models: Option<PathBuf>,
    /// Header a trusted reverse proxy writes the client's address into (such as
    /// X-Forwarded-For; its last entry is read). Set it only when every connection comes
    /// through that proxy: without it, `/join` is rate-limited by the connection's address.
    #[arg(long, value_name = "HEADER")]
    pub proxy_header: Option<String>,
}

/// Runs the session until the process is stopped. The admin token is `AGORA_ADMIN_TOKEN` (at
/// least 16 characters; a shorter one is refused, exit 2), or a fresh one printed once; pool ids are hashed with the key in `AGORA_POOL_KEY`.
pub fn main(args: ServeArgs) -> anyhow::Result<()> {
    // A token that is set but too short is refused, never silently replaced by another: the
    // operator would otherwise log in with a token the server does not take.
    let admin_token = match std::env::var("AGORA_ADMIN_TOKEN") {
        Ok(t) if t.is_empty() => None,
        Ok(t) if t.chars().count() < 16 => {
            return Err(crate::BadInput(format!(
                "AGORA_ADMIN_TOKEN: {} characters; at least 16 are needed (unset it to have one made)",
                t.chars().count()
            ))
            .into())
        }
        Ok(t) => Some(t),
        Err(_) => None,
    };
    let opts = ServeOptions {
        study: args.study,
        store: args.store,
        cells: args.cells,
        models: args.models,
        admin_token,
        pool_key: std::env::var("AGORA_POOL_KEY").ok().filter(|k| !k.is_empty()).map(String::into_bytes),
        proxy_header: args.proxy_header,
    };
    let app = prepare(&opts)?;
    let rt = agora_agents::llm::session::runtime()?;
    rt.block_on(async move {
        let (addr, task) = serve(app.clone(), args.bind).await?;
        println!("agora serve: study {} on http://{addr}", app.study);
        println!("admin page: http://{addr}/admin?token={}", app.admin_token);
        println!(
            "create session links: POST http://{addr}/admin/api/sessions {{\"count\": N}} with the token as a bearer"
        );
        task.await.map_err(|e| anyhow::anyhow!("server stopped: {e}"))
    })
}
