//! The session's state: participants (by the hash of their session code), the societies (the
//! study's runs with human seats) and who sits where, and the decisions waiting for an answer.
//! Everything a restart needs is written to the store as it happens ([`crate::records`]): the
//! participants' stages and seats, and every answer, so that a restarted server replays each
//! unfinished society to where it was and its participants go on from there.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use tokio::sync::oneshot;

pub use crate::answer::Submitted;
use crate::page::Page;
pub use crate::participant::{Participant, Stage};

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
    /// Answers given before a restart: (run key, seat, slot).
    answers: Mutex<HashMap<(String, usize, u64), Submitted>>,
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

impl Desk {
    /// A desk over `societies`, with the participants and answers the store already holds.
    pub fn new(
        store: PathBuf,
        societies: Vec<Society>,
        participants: Vec<Participant>,
        answers: HashMap<(String, usize, u64), Submitted>,
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
            answers: Mutex::new(answers),
        }
    }

    /// The state, locked.
    pub fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The answer given to `slot` of `seat` before a restart, if any.
    pub fn stored_answer(&self, run_key: &str, seat: usize, slot: u64) -> Option<Submitted> {
        self.answers
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

    /// Takes a decision back after its time ran out; false when an answer took it first.
    pub fn withdraw(&self, society: usize, seat: usize, nonce: &str) -> bool {
        let mut inner = self.lock();
        match inner.pending.get(&(society, seat)) {
            Some((n, _)) if n == nonce => {
                inner.pending.remove(&(society, seat));
                true
            }
            _ => false,
        }
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
