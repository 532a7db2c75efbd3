//! A participant and the stage they are at.

/// Where a participant is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Stage {
    /// Shown the consent page.
    Consent,
    /// Agreed; shown the instructions and the comprehension questions.
    Instructions,
    /// Passed; waiting for a society to fill.
    Waiting,
    /// Seated in a society that plays.
    Playing,
    /// The society's run is stored.
    Done,
    /// Left without playing (declined consent, or failed the questions); the reason.
    Released(String),
}

impl Stage {
    /// The stage's name in the store.
    pub fn as_str(&self) -> &str {
        match self {
            Stage::Consent => "consent",
            Stage::Instructions => "instructions",
            Stage::Waiting => "waiting",
            Stage::Playing => "playing",
            Stage::Done => "done",
            Stage::Released(_) => "released",
        }
    }
}

/// One participant.
#[derive(Clone, Debug)]
pub struct Participant {
    /// Opaque id: the only name the records use.
    pub id: String,
    /// SHA-256 of the session code (the code itself is never stored).
    pub code_hash: String,
    /// Keyed hash (HMAC-SHA256) of a participant pool's id, where the link carried one.
    pub pool_hash: Option<String>,
    /// Unix seconds after which the code no longer works.
    pub expires: u64,
    /// The stage.
    pub stage: Stage,
    /// Wrong comprehension answers so far.
    pub tries: u32,
    /// (society, seat) once seated.
    pub seat: Option<(usize, usize)>,
    /// Points earned in the run.
    pub payoff: Option<f64>,
    /// The completion code shown at the end.
    pub completion: Option<String>,
}
