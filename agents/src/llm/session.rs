//! One model session: how every command that asks models asks them.
//!
//! Society runs, the behavioural profile, the audit's LLM coder, its prefill interventions and
//! its replicates all ask a model the same way, through a [`Session`]: the clients of the
//! declared models (API keys from the environment only, [`ModelSpec::api_key`]; each client
//! holds its model's concurrency limit), the reachability check before anything is asked, the
//! reply cache and the one identity a call is cached under ([`Session::key`]: the model's name
//! and served id, the request as sent, the slot), replay (answers from the cache only, a miss
//! an error and never a call), the runtime the calls run on ([`runtime`]) and the fan-out of
//! many calls with the first failure stopping the rest ([`fan_out`]). A server failure is an
//! error, never a reply: nothing is put into the cache but what a server answered.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use super::cache::{cache_key, CachedReply, ReplyCache};
use super::client::{CallError, ChatRequest, LlmClient};
use super::model::ModelSpec;

/// Why a call of a session gave no reply.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// No model of that name is declared in the session.
    #[error("no model named `{0}` is declared")]
    UnknownModel(String),
    /// Replay, and the reply is not in the cache (the caller says which call it was).
    #[error("replay: no cached reply; run without --replay to call the server")]
    NotCached,
    /// The server failed.
    #[error(transparent)]
    Call(#[from] CallError),
}

/// A reply of a session's call.
#[derive(Clone, Debug)]
pub struct Reply {
    /// What came back.
    pub reply: CachedReply,
    /// The cache key it is kept under.
    pub key: String,
    /// Whether it was read from the cache (no server was asked).
    pub cached: bool,
}

/// The models a command asks, their clients and the reply cache (see the module
/// documentation).
pub struct Session {
    clients: BTreeMap<String, Arc<LlmClient>>,
    cache: Arc<dyn ReplyCache>,
    replay: bool,
    from_cache: AtomicUsize,
    sent: AtomicUsize,
}

impl Session {
    /// A session asking `models` through `cache`; in `replay`, answers come from the cache only
    /// and no key is needed. Errors name the model whose declaration cannot be used.
    pub fn new<'a>(
        models: impl IntoIterator<Item = &'a ModelSpec>,
        cache: Arc<dyn ReplyCache>,
        replay: bool,
    ) -> Result<Session, String> {
        let clients = models
            .into_iter()
            .map(|m| Ok((m.name.clone(), Arc::new(LlmClient::from_environment(m, replay)?))))
            .collect::<Result<_, String>>()?;
        Ok(Session { clients, cache, replay, from_cache: AtomicUsize::new(0), sent: AtomicUsize::new(0) })
    }

    /// Replies read from the cache and requests answered by a server so far.
    pub fn calls(&self) -> (usize, usize) {
        (self.from_cache.load(Ordering::Relaxed), self.sent.load(Ordering::Relaxed))
    }

    /// Whether the session answers from the cache only.
    pub fn replay(&self) -> bool {
        self.replay
    }

    /// The client of `model`.
    pub fn client(&self, model: &str) -> Result<&Arc<LlmClient>, SessionError> {
        self.clients.get(model).ok_or_else(|| SessionError::UnknownModel(model.to_string()))
    }

    /// The declaration of `model`.
    pub fn spec(&self, model: &str) -> Result<&ModelSpec, SessionError> {
        Ok(self.client(model)?.spec())
    }

    /// The clients, by model name.
    pub fn clients(&self) -> &BTreeMap<String, Arc<LlmClient>> {
        &self.clients
    }

    /// The reply cache.
    pub fn cache(&self) -> &Arc<dyn ReplyCache> {
        &self.cache
    }

    /// Checks that every model's servers answer (nothing is asked in replay): a server that
    /// cannot be reached stops a command before it asks anything.
    pub async fn check_reachable(&self) -> Result<(), CallError> {
        if self.replay {
            return Ok(());
        }
        for c in self.clients.values() {
            c.check_reachable().await?;
        }
        Ok(())
    }

    /// The identity of a call in the reply cache: the model (its name and the id the server is
    /// asked for), the request as sent, in JSON, and the caller's slot (which decision, which
    /// attempt), so that the same call is answered alike wherever it is asked from.
    pub fn key(spec: &ModelSpec, request_json: &str, slot: &str) -> String {
        Session::key_of(&spec.name, &spec.served_id, request_json, slot)
    }

    /// [`Session::key`] of a call recorded in a store, by the model's name and served id as
    /// recorded.
    pub fn key_of(model: &str, served_id: &str, request_json: &str, slot: &str) -> String {
        cache_key(&format!("{model}|{served_id}"), request_json, slot)
    }

    /// Asks `model` for `request` (sent as `request_json`) at `slot`: the cached reply when
    /// there is one; otherwise the server's, kept in the cache; in replay a miss is
    /// [`SessionError::NotCached`].
    pub async fn call(
        &self,
        model: &str,
        request: &ChatRequest,
        request_json: &str,
        slot: &str,
    ) -> Result<Reply, SessionError> {
        let client = self.client(model)?;
        let spec = client.spec();
        let key = Session::key(spec, request_json, slot);
        if let Some(reply) = self.cache.get(&key) {
            self.from_cache.fetch_add(1, Ordering::Relaxed);
            return Ok(Reply { reply, key, cached: true });
        }
        if self.replay {
            return Err(SessionError::NotCached);
        }
        let reply = client.chat(request).await?;
        self.cache.put(&key, &spec.name, &reply);
        self.sent.fetch_add(1, Ordering::Relaxed);
        Ok(Reply { reply, key, cached: false })
    }
}

/// The runtime a command's calls run on: multi-threaded, two workers (the calls wait on
/// servers; the clients' limits bound how many are in flight).
pub fn runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()
}

/// Runs `jobs` concurrently and returns their results in the jobs' order; the first error
/// stops the others and is returned.
pub async fn fan_out<T, E, F>(jobs: impl IntoIterator<Item = F>) -> Result<Vec<T>, E>
where
    T: Send + 'static,
    E: Send + 'static,
    F: Future<Output = Result<T, E>> + Send + 'static,
{
    let mut set = tokio::task::JoinSet::new();
    let mut n = 0;
    for (i, job) in jobs.into_iter().enumerate() {
        set.spawn(async move { (i, job.await) });
        n += 1;
    }
    let mut out: Vec<Option<T>> = (0..n).map(|_| None).collect();
    while let Some(done) = set.join_next().await {
        match done {
            Ok((i, Ok(t))) => out[i] = Some(t),
            Ok((_, Err(e))) => {
                set.abort_all();
                return Err(e);
            }
            // A job that panicked: its panic goes on.
            Err(e) => std::panic::resume_unwind(e.into_panic()),
        }
    }
    Ok(out.into_iter().map(|t| t.expect("every job answered")).collect())
}
