//! The session's state: participants (by the hash of their session code), the societies (the
//! study's runs with human seats) and who sits where, and the decisions waiting for an answer.
//! Everything a restart needs is written to the store as it happens ([`crate::records`]),
//! through the desk's own connection: the participants' stages and seats, the societies that
//! have started, every answer and every decision that timed out, each written before anything
//! else happens to the decision, so that a restarted server replays each unfinished society to
//! exactly where it was and its participants go on from there.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use tokio::sync::oneshot;

pub use crate::answer::{Outcome, Submitted, TimedOut};
use crate::page::Page;
pub use crate::participant::{Participant, Stage};
use crate::records::{self, DecisionKey, PostedDecision};

/// A posted decision's handle: its nonce and the channel the answer comes on.
pub type Posted = (String, oneshot::Receiver<Submitted>);

/// A decision waiting for its participant.
pub struct Pending {
    /// The page.
    pub page: Page,
    /// The seat's n-th decision.
    pub slot: u64,
    /// The participant's opaque id.
    pub participant: String,
    /// When it was posted.
    pub shown: Instant,
    /// Where the answer goes.
    pub tx: oneshot::Sender<Submitted>,
}

/// Where a society is.
#[derive(Clone, Debug, PartialEq)]
pub enum SocietyState {
    /// No one seated yet.
    Open,
    /// Seats filling since the first participant sat down.
    Filling(Instant),
    /// The run plays.
    Playing,
    /// The run is in the store.
    Done,
    /// The run failed (the error).
    Failed(String),
}

/// One of the study's runs with human seats.
#[derive(Clone, Debug)]
pub struct Society {
    /// The run key.
    pub key: String,
    /// The block.
    pub block: String,
    /// Its human seats.
    pub human: Vec<usize>,
    /// Seat → participant id.
    pub seated: BTreeMap<usize, String>,
    /// Where it is.
    pub state: SocietyState,
}

impl Society {
    /// Whether every human seat is taken.
    pub fn full(&self) -> bool {
        self.seated.len() == self.human.len()
    }
}

/// The shared state.
pub struct Desk {
    inner: Mutex<Inner>,
    /// The store the records go to.
    pub store: PathBuf,
    /// The session's writes (always locked after `inner`, never before).
    db: Mutex<rusqlite::Connection>,
    /// What became of the decisions posted before a restart.
    outcomes: Mutex<HashMap<DecisionKey, Outcome>>,
}

/// What the lock guards.
pub struct Inner {
    /// Participants by code hash.
    pub participants: HashMap<String, Participant>,
    /// The societies, in plan order.
    pub societies: Vec<Society>,
    /// Decisions waiting: (society, seat) → (nonce, pending).
    pub pending: HashMap<(usize, usize), (String, Pending)>,
    /// Nonces already answered.
    pub answered: HashSet<String>,
    /// No new society starts and no one new is seated while paused.
    pub paused: bool,
}

impl Inner {
    /// Whether a seat can still be taken: an open society has a seat nobody sits in.
    pub fn seat_free(&self) -> bool {
        self.societies.iter().any(|s| matches!(s.state, SocietyState::Open | SocietyState::Filling(_)) && !s.full())
    }
}

impl Desk {
    /// A desk over `societies` writing through `db`, with the participants and the decisions'
    /// outcomes the store already holds.
    pub fn new(
        store: PathBuf,
        db: rusqlite::Connection,
        societies: Vec<Society>,
        participants: Vec<Participant>,
        outcomes: HashMap<DecisionKey, Outcome>,
    ) -> Desk {
        Desk {
            inner: Mutex::new(Inner {
                participants: participants.into_iter().map(|p| (p.code_hash.clone(), p)).collect(),
                societies,
                pending: HashMap::new(),
                answered: HashSet::new(),
                paused: false,
            }),
            store,
            db: Mutex::new(db),
            outcomes: Mutex::new(outcomes),
        }
    }

    /// The session's writes, locked (after the state's lock when both are held, never before).
    pub fn db(&self) -> std::sync::MutexGuard<'_, rusqlite::Connection> {
        self.db.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The state, locked.
    pub fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// What became of `slot` of `seat` before a restart (answered or timed out), if anything.
    pub fn stored(&self, run_key: &str, seat: usize, slot: u64) -> Option<Outcome> {
        self.outcomes
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(&(run_key.to_string(), seat, slot))
            .cloned()
    }

    /// Posts a decision for the seat's participant; the nonce names it in the form.
    pub fn post(&self, society: usize, seat: usize, slot: u64, page: Page, participant: &str) -> Posted {
        let nonce = crate::secret::token();
        let (tx, rx) = oneshot::channel();
        let pending = Pending { page, slot, participant: participant.to_string(), shown: Instant::now(), tx };
        self.lock().pending.insert((society, seat), (nonce.clone(), pending));
        (nonce, rx)
    }

    /// Takes a decision back after its time ran out, and stores it as played by the stand-in
    /// with `action` before anything else can happen to it (a kill after this replays the
    /// stand-in's play, never asks the decision again); what was stored, or `None` when an
    /// answer took the decision first.
    /// Under the state's lock, so that exactly one of an answer and a timeout is stored. A
    /// decision that cannot be stored is taken back all the same, and the error returned.
    pub fn time_out(
        &self,
        society: usize,
        seat: usize,
        nonce: &str,
        action: &agora_environments::Action,
    ) -> rusqlite::Result<Option<TimedOut>> {
        let mut inner = self.lock();
        let open = matches!(inner.pending.get(&(society, seat)), Some((n, _)) if n == nonce);
        if !open {
            return Ok(None);
        }
        let (_, pending) = inner.pending.remove(&(society, seat)).expect("invariant: checked open above");
        let t = TimedOut {
            action: action.clone(),
            latency_ms: pending.shown.elapsed().as_secs_f64() * 1000.0,
            page_version: pending.page.version.clone(),
        };
        let key = &inner.societies[society].key;
        let posted = PostedDecision { run_key: key, seat, slot: pending.slot, participant: &pending.participant };
        records::timeout(&self.db(), posted, &t)?;
        Ok(Some(t))
    }

    /// Seats a participant who passed the questions in the first open society, in plan order,
    /// with a free seat; returns the society when it is now full (to be started).
    pub fn seat(inner: &mut Inner, code_hash: &str) -> Option<usize> {
        if inner.paused {
            return None;
        }
        let id = inner.participants.get(code_hash)?.id.clone();
        let Some((s, society)) = inner
            .societies
            .iter_mut()
            .enumerate()
            .find(|(_, s)| matches!(s.state, SocietyState::Open | SocietyState::Filling(_)) && !s.full())
        else {
            // Every group has been formed: thanked and released with a code of their own.
            let p = inner.participants.get_mut(code_hash)?;
            p.stage = Stage::Released("Every group of this session is full; thank you for your time.".into());
            p.completion.get_or_insert_with(crate::secret::completion_code);
            return None;
        };
        let seat = *society.human.iter().find(|h| !society.seated.contains_key(h))?;
        society.seated.insert(seat, id);
        if society.state == SocietyState::Open {
            society.state = SocietyState::Filling(Instant::now());
        }
        let full = society.full();
        let p = inner.participants.get_mut(code_hash)?;
        p.seat = Some((s, seat));
        p.stage = Stage::Playing;
        full.then_some(s)
    }

    /// The societies whose waiting room has been open `wait` or longer: they start with the
    /// seats still empty played by their stand-ins.
    pub fn overdue(inner: &Inner, wait: Duration) -> Vec<usize> {
        if inner.paused {
            return Vec::new();
        }
        inner
            .societies
            .iter()
            .enumerate()
            .filter(|(_, s)| matches!(s.state, SocietyState::Filling(since) if since.elapsed() >= wait))
            .map(|(i, _)| i)
            .collect()
    }
}
