//! `agora-bench`: the benchmark harness, a binary of its own so that the counting allocator
//! and the fake model server never ship in `agora` itself. Run it from the repository root
//! with a release build: `cargo run --release --bin agora-bench [-- --quick] [--only ...]`.

mod harness;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;

/// Measure throughput, scale and dispatch: classical games against the Python reference,
/// networks of up to 10^6 agents, LLM dispatch against a fake server, analysis on an
/// instrument-size store.
#[derive(Parser, Debug)]
#[command(name = "agora-bench", version)]
struct Cli {
    /// Small sizes (checks the harness; not figures to quote).
    #[arg(long)]
    quick: bool,
    /// Only these sections (default: all).
    #[arg(long, value_enum, value_delimiter = ',')]
    only: Vec<harness::Section>,
    /// Where to write the results table (Markdown).
    #[arg(long, default_value = "bench/results.md")]
    out: PathBuf,
    /// An `agora` binary of an earlier build (`bench/baseline.sh` builds the one the speed
    /// targets were set against): the recorded naming study is run through it and through
    /// this build's `agora` in turn, in this run.
    #[arg(long)]
    baseline: Option<PathBuf>,
}

// Counts heap bytes so that the network benchmark can report memory per agent.
#[global_allocator]
static ALLOC: harness::CountingAlloc = harness::CountingAlloc;

fn main() -> ExitCode {
    let cli = Cli::parse();
    match harness::run(&harness::Options { quick: cli.quick, sections: cli.only, out: cli.out, baseline: cli.baseline })
    {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
