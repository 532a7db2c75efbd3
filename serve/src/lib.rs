//! `agora serve`: a study's human seats played by people in a browser, beside LLM and classical
//! seats, into the same store as every other run.
//!
//! - [`prepare`] reads the study, records it in the store, prepares the model session of its
//!   LLM seats and restores a session the store already holds (after a restart).
//! - [`desk`]: participants, the societies (the study's runs with `Human` seats) and the
//!   decisions waiting for an answer.
//! - [`human`]: a human seat as the engine sees it, one more policy whose decisions are deferred
//!   (no second game loop: the engine's runner plays the run).
//! - [`page`]: a decision as a participant sees it, made from the prompt an LLM seat is sent.
//! - [`routes`]: the pages (consent, instructions and comprehension, waiting room, play, end
//!   with the completion code) and the admin page and API behind a token.
//! - [`records`]: the session's own tables (participants, consent, answers), no personal data.
//! - [`secret`]: codes, tokens and the keyed hash of a pool's participant id.
//!
//! The docs chapter "Sessions with people" describes running a session.

pub mod answer;
pub mod desk;
pub mod human;
pub mod page;
pub mod participant;
pub mod records;
pub mod routes;
pub mod secret;
mod templates;

use std::collections::{BTreeMap, HashMap};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agora_agents::llm::{PromptRenderer, TranscriptSink};
use agora_agents::Policy;
use agora_engine::llm_seats::LlmSeats;
use agora_engine::runner::{execute, PolicyFactory, RunnerOptions};
use agora_engine::{EngineError, RunSpec, Store};
use agora_scenarios::study::{Participants, Study};
use agora_scenarios::Plan;

use crate::desk::{Desk, Participant, Society, SocietyState, Stage};
use crate::human::{HumanPolicy, HumanSeat};

/// Why a session cannot be served.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// Bad input: a study without human seats or participant pages, a bad option.
    #[error("{0}")]
    BadInput(String),
    /// The study file.
    #[error(transparent)]
    Study(#[from] agora_scenarios::ScenarioError),
    /// The engine.
    #[error(transparent)]
    Engine(#[from] agora_engine::EngineError),
    /// The store.
    #[error(transparent)]
    Store(#[from] agora_engine::store::StoreError),
    /// The session's tables.
    #[error("store: {0}")]
    Sql(#[from] rusqlite::Error),
    /// The session's tables are of a version this build cannot use.
    #[error("store: {0}")]
    Family(#[from] agora_records::families::FamilyError),
    /// The models' servers.
    #[error(transparent)]
    Models(#[from] agora_engine::llm_seats::PrepareError),
    /// The listening socket.
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// What `agora serve` is asked to do.
#[derive(Clone, Debug)]
pub struct ServeOptions {
    /// The study file.
    pub study: PathBuf,
    /// The store the runs and the session's tables go to.
    pub store: PathBuf,
    /// The cells directory (default: the study's own).
    pub cells: Option<PathBuf>,
    /// A models file in place of the study's.
    pub models: Option<PathBuf>,
    /// The admin token; a fresh one is made (and printed) when none is given.
    pub admin_token: Option<String>,
    /// The key of the participant pool ids' keyed hash; links carrying a pool id are refused
    /// without one.
    pub pool_key: Option<Vec<u8>>,
    /// The request header a trusted reverse proxy writes the client's address into (such as
    /// `X-Forwarded-For`; its last entry is taken, the one the proxy itself added). Only for a
    /// server every connection reaches through that proxy. Without it, `/join` is rate-limited
    /// by the connection's peer address, and no header a client sets is read.
    pub proxy_header: Option<String>,
}

/// A prepared session.
pub struct App {
    /// The study's name.
    pub study: String,
    /// The participant pages.
    pub participants: Participants,
    /// SHA-256 of the consent text, recorded with each consent.
    pub consent_sha256: String,
    /// The societies' runs, by society index.
    pub specs: Vec<RunSpec>,
    /// The shared state.
    pub desk: Arc<Desk>,
    /// The admin token.
    pub admin_token: String,
    /// The pool-id key.
    pub pool_key: Option<Vec<u8>>,
    /// The header a trusted proxy writes the client's address into, where one is configured.
    pub proxy_header: Option<axum::http::HeaderName>,
    /// The LLM seats' session, where the study has LLM seats.
    pub llm: Option<LlmSeats>,
    /// The prompt templates.
    pub renderer: Arc<PromptRenderer>,
    /// Requests per key in the current window (rate limit).
    pub limiter: Mutex<HashMap<String, (std::time::Instant, u32)>>,
    /// The page templates.
    pub(crate) pages: templates::Pages,
    /// The store's claim, held while the session lasts.
    _claim: agora_engine::store::Claim,
}

/// Reads the study, records it in the store and restores what the store holds of an earlier
/// session of it.
pub fn prepare(opts: &ServeOptions) -> Result<Arc<App>, ServeError> {
    let study = Study::load(&opts.study)?;
    let plan = Plan::load_with_models(&opts.study, opts.cells.as_deref(), opts.models.as_deref())?;
    let participants = study.participants.clone().ok_or_else(|| {
        ServeError::BadInput(format!(
            "{}: no `participants`: the study has no human seats to serve",
            opts.study.display()
        ))
    })?;
    let proxy_header = match &opts.proxy_header {
        None => None,
        Some(name) => Some(axum::http::HeaderName::from_bytes(name.trim().as_bytes()).map_err(|_| {
            ServeError::BadInput(format!("proxy header `{name}`: not an HTTP header name (such as X-Forwarded-For)"))
        })?),
    };
    let runs: Vec<RunSpec> =
        plan.runs.iter().filter(|r| r.seats.iter().any(|s| s.stand_in().is_some())).cloned().collect();
    if runs.is_empty() {
        return Err(ServeError::BadInput(format!("{}: no roster has a `Human` seat", opts.study.display())));
    }
    let mut store = Store::open(&opts.store)?;
    // One writing command at a time on a store: a second `agora serve` or an `agora run` on it
    // is refused while this session holds it.
    let claim = store.claim("agora serve")?;
    let source = std::fs::read_to_string(&opts.study)
        .map_err(|e| ServeError::BadInput(format!("{}: {e}", opts.study.display())))?;
    store.record_study(&plan.study_record(), &source)?;
    let done = store.completed_keys()?;
    // The session's own connection, from the store opened above: every connection of this
    // process to the store is SQLite's, so none drops another's locks (issue 40).
    let db = records::open(&store)?;
    drop(store);
    let llm = agora_engine::llm_seats::prepare(&runs, &plan.models, &opts.store, false)?;
    let mut societies: Vec<Society> = runs
        .iter()
        .map(|r| Society {
            key: r.key(),
            block: r.block.clone(),
            human: r.seats.iter().enumerate().filter(|(_, s)| s.stand_in().is_some()).map(|(i, _)| i).collect(),
            seated: BTreeMap::new(),
            state: SocietyState::Open,
        })
        .collect();
    let mut restored = Vec::new();
    for (mut p, given) in records::load_participants(&db, &plan.study)? {
        if let Some((key, seat)) = given {
            if let Some(i) = societies.iter().position(|s| s.key == key) {
                societies[i].seated.insert(seat, p.id.clone());
                p.seat = Some((i, seat));
            }
        }
        restored.push(p);
    }
    let started = records::load_started(&db)?;
    for s in &mut societies {
        if done.contains(&s.key) {
            s.state = SocietyState::Done;
        } else if s.full() || started.contains(&s.key) {
            // A society that started plays on with the seats it started with: a seat its
            // stand-in took when the waiting room closed stays the stand-in's.
            s.state = SocietyState::Playing;
        } else if !s.seated.is_empty() {
            // Its waiting room opens again; the run (never stored) starts when it fills or the
            // wait ends, replaying the answers already given.
            s.state = SocietyState::Filling(std::time::Instant::now());
        }
    }
    let outcomes = records::load_outcomes(&db)?;
    // A kill between a run being stored and its participants being told leaves them playing
    // a society that is done: they are finished below, with their points and codes.
    let unfinished: Vec<usize> = societies
        .iter()
        .enumerate()
        .filter(|(_, s)| s.state == SocietyState::Done)
        .filter(|(_, s)| restored.iter().any(|p| s.seated.values().any(|id| *id == p.id) && p.stage != Stage::Done))
        .map(|(i, _)| i)
        .collect();
    let app = Arc::new(App {
        study: plan.study.clone(),
        consent_sha256: agora_records::seed::hex_digest(participants.consent.as_bytes()),
        participants,
        specs: runs,
        desk: Arc::new(Desk::new(opts.store.clone(), db, societies, restored, outcomes)),
        admin_token: opts.admin_token.clone().unwrap_or_else(secret::token),
        pool_key: opts.pool_key.clone(),
        proxy_header,
        llm,
        renderer: Arc::new(PromptRenderer::new()),
        limiter: Mutex::new(HashMap::new()),
        pages: templates::Pages::new(),
        _claim: claim,
    });
    for i in unfinished {
        app.finish(i, Ok(()));
    }
    Ok(app)
}

impl App {
    /// The session's writes, locked (always after the desk's lock, never before).
    pub fn db(&self) -> std::sync::MutexGuard<'_, rusqlite::Connection> {
        self.desk.db()
    }

    /// Starts the societies a restart left unfinished: their runs replay from the start with
    /// the answers already given, and their participants go on from the next decision.
    pub fn resume(self: &Arc<Self>) {
        let unfinished: Vec<usize> = self
            .desk
            .lock()
            .societies
            .iter()
            .enumerate()
            .filter(|(_, s)| s.state == SocietyState::Playing)
            .map(|(i, _)| i)
            .collect();
        for i in unfinished {
            self.start(i, true);
        }
    }

    /// Plays society `idx` on a thread of its own through the engine's runner: human seats
    /// through the desk, LLM seats through the model session, classical seats as built.
    pub fn start(self: &Arc<Self>, idx: usize, resuming: bool) {
        let seated = {
            let mut inner = self.desk.lock();
            let s = &mut inner.societies[idx];
            if !resuming && !matches!(s.state, SocietyState::Open | SocietyState::Filling(_)) {
                return;
            }
            // Stored before the run can post a page, under the desk's lock (nobody is seated in
            // between): a restart plays the society on with these seats.
            if let Err(e) = records::started(&self.db(), &s.key) {
                eprintln!("agora serve: society {idx} ({}) cannot start: {e}", s.key);
                return;
            }
            s.state = SocietyState::Playing;
            s.seated.clone()
        };
        let app = self.clone();
        std::thread::spawn(move || {
            let spec = app.specs[idx].clone();
            let factory = app.factory(idx, seated);
            let opts = RunnerOptions {
                max_live: 1,
                threads: 1,
                stop_after: None,
                policy_factory: Some(factory),
                async_workers: Some(1),
                // People are waiting: a society is not played again behind their backs.
                retry_passes: 0,
                retry_backoff: std::time::Duration::ZERO,
                cancel: None,
            };
            let result = Store::open(&app.desk.store)
                .map_err(EngineError::from)
                .and_then(|mut store| execute(&[spec], &mut store, &opts, &mut |_| {}));
            let result = result.map_err(|e| e.to_string()).and_then(|r| match r.missing.first() {
                Some(m) => Err(format!("run {}: {}", m.run_key, m.reason)),
                None => Ok(()),
            });
            app.finish(idx, result);
        });
    }

    fn factory(self: &Arc<Self>, idx: usize, seated: BTreeMap<usize, String>) -> PolicyFactory {
        let app = self.clone();
        let llm = self.llm.as_ref().map(LlmSeats::factory);
        Arc::new(move |spec: &RunSpec, sink: &TranscriptSink| {
            let mut policies: Vec<Box<dyn Policy>> = match &llm {
                Some(f) => f(spec, sink)?,
                None => spec.seats.iter().map(|p| p.build()).collect(),
            };
            for (seat, p) in spec.seats.iter().enumerate() {
                if let Some(stand_in) = p.stand_in() {
                    let human = HumanSeat {
                        desk: app.desk.clone(),
                        society: idx,
                        run_key: spec.key(),
                        seat,
                        participant: seated.get(&seat).cloned(),
                        environment: spec.environment.clone(),
                        options: spec.prompt_options(),
                        renderer: app.renderer.clone(),
                        transcripts: sink.clone(),
                        decision_time: Duration::from_secs(app.participants.decision_seconds),
                    };
                    policies[seat] = Box::new(HumanPolicy::new(human, stand_in.build()));
                }
            }
            Ok(policies)
        })
    }

    /// Records the end of society `idx`: its participants' points and completion codes.
    fn finish(&self, idx: usize, result: Result<(), String>) {
        let key = self.desk.lock().societies[idx].key.clone();
        let payoffs = records::payoffs(&self.db(), &key).ok();
        let mut inner = self.desk.lock();
        inner.societies[idx].state = match &result {
            Ok(()) => SocietyState::Done,
            Err(e) => {
                eprintln!("agora serve: society {idx} ({key}) failed: {e}");
                SocietyState::Failed(e.clone())
            }
        };
        let seated: Vec<(usize, String)> = inner.societies[idx].seated.clone().into_iter().collect();
        let db = self.db();
        for (seat, id) in seated {
            if let Some(p) = inner.participants.values_mut().find(|p| p.id == id) {
                p.stage = Stage::Done;
                p.payoff = payoffs.as_ref().and_then(|m| m.get(&seat).copied());
                p.completion.get_or_insert_with(secret::completion_code);
                if let Err(e) = records::update(&db, p, Some(&key)) {
                    eprintln!("agora serve: recording participant {}: {e}", p.id);
                }
            }
        }
    }

    /// Creates `count` session codes; returns them (the codes themselves exist only here).
    pub fn create_codes(&self, count: usize, pool_hash: Option<String>) -> Result<Vec<String>, rusqlite::Error> {
        let mut codes = Vec::with_capacity(count);
        let mut inner = self.desk.lock();
        let db = self.db();
        for _ in 0..count {
            let code = secret::token();
            let p = Participant {
                id: format!("p-{}", &secret::token()[..16]),
                code_hash: secret::code_hash(&code),
                pool_hash: pool_hash.clone(),
                expires: records::now() + self.participants.code_hours * 3600,
                stage: Stage::Consent,
                tries: 0,
                seat: None,
                payoff: None,
                completion: None,
            };
            records::insert(&db, &self.study, &p)?;
            inner.participants.insert(p.code_hash.clone(), p);
            codes.push(code);
        }
        Ok(codes)
    }
}

/// Serves `app` on `bind` until the process ends; returns the address bound (port 0 picks one)
/// and the server's task. Societies a restart left unfinished are resumed first.
pub async fn serve(app: Arc<App>, bind: SocketAddr) -> Result<(SocketAddr, tokio::task::JoinHandle<()>), ServeError> {
    app.resume();
    let listener = tokio::net::TcpListener::bind(bind).await?;
    let addr = listener.local_addr()?;
    let ticker = app.clone();
    tokio::spawn(async move {
        let wait = Duration::from_secs(ticker.participants.wait_seconds);
        loop {
            tokio::time::sleep(Duration::from_millis(200)).await;
            let overdue = desk::Desk::overdue(&ticker.desk.lock(), wait);
            for i in overdue {
                ticker.start(i, false);
            }
        }
    });
    let router = routes::router(app);
    let task = tokio::spawn(async move {
        // The peer's address reaches the handlers: `/join` is rate-limited by it.
        if let Err(e) = axum::serve(listener, router.into_make_service_with_connect_info::<SocketAddr>()).await {
            eprintln!("agora serve: {e}");
        }
    });
    Ok((addr, task))
}

/// The path of a participant's page.
pub fn link(code: &str) -> String {
    format!("/p/{code}")
}
