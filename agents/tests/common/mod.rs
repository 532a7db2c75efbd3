//! Setup the LLM tests share: a runtime, a model context and a stand-in seed derivation.

#![allow(dead_code)]

use std::sync::Arc;

use agora_agents::llm::{
    LlmContext, LlmSeat, MemoryCache, ModelSpec, PromptOptions, PromptRenderer, Session, TranscriptSink,
};
use agora_environments::EnvSpec;

/// A runtime of two worker threads, for the policy's deferred decisions and the fake server.
pub fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime")
}

/// A stand-in for the engine's seed derivation (the agents crate sits below the engine).
pub fn test_derive(seed: u64, parts: &[&str]) -> u64 {
    parts.iter().fold(seed, |h, p| {
        p.bytes().fold(h.rotate_left(5) ^ 0xff, |h, b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3))
    })
}

/// Seat 0 of the run `run` of `environment`, seeded `run_seed`, prompted under `options`; its
/// transcripts go to `transcripts`.
pub fn seat_zero(environment: EnvSpec, run_seed: u64, options: PromptOptions, transcripts: &TranscriptSink) -> LlmSeat {
    LlmSeat {
        run_key: "run".into(),
        run_seed,
        seat: 0,
        environment,
        options,
        transcripts: transcripts.clone(),
        derive: test_derive,
    }
}

/// The context of a study of the one model `spec`, its replies kept in `cache` (only read
/// back, never asked for, with `replay`).
pub fn context(spec: &ModelSpec, cache: Arc<MemoryCache>, replay: bool) -> LlmContext {
    LlmContext {
        session: Arc::new(Session::new([spec], cache, replay).expect("session")),
        renderer: Arc::new(PromptRenderer::new()),
    }
}
