//! The recognition probe's session: asked outside the behavioural session, so a probe run
//! plays no game. Each seat is shown the game's first observation once — the probe asks which
//! experiment the rules describe — and nothing is decided, paid or recorded as behaviour.

use agora_environments::{Action, EnvError, EnvKind, Environment, Request, Step};
use rand::RngCore;

/// Wraps a game so that a run asks each seat once and then ends, with no decisions recorded.
pub struct ProbeSession {
    inner: Box<dyn Environment>,
    asked: bool,
    answered: bool,
}

impl ProbeSession {
    /// The probe session of `inner` (a freshly built game).
    pub fn new(inner: Box<dyn Environment>) -> ProbeSession {
        ProbeSession { inner, asked: false, answered: false }
    }
}

impl Environment for ProbeSession {
    fn kind(&self) -> EnvKind {
        self.inner.kind()
    }

    fn population(&self) -> usize {
        self.inner.population()
    }

    /// Every seat once, with the observation the game opens with (the rules are the same for
    /// every seat; a seat's own list order, where the game has one, is kept for its own seat
    /// where the game asks it first).
    fn next_stage(&mut self, rng: &mut dyn RngCore) -> Vec<Request> {
        if self.asked {
            return Vec::new();
        }
        self.asked = true;
        let first = self.inner.pending(rng);
        let Some(template) = first.first().map(|r| r.observation.clone()) else { return Vec::new() };
        (0..self.inner.population())
            .map(|agent| {
                let observation =
                    first.iter().find(|r| r.agent == agent).map_or_else(|| template.clone(), |r| r.observation.clone());
                Request { agent, observation }
            })
            .collect()
    }

    /// Nothing is decided: the answers are the probe's, recorded as its transcripts.
    fn resolve(&mut self, _actions: &[(usize, Action)], _rng: &mut dyn RngCore) -> Result<Step, EnvError> {
        self.answered = true;
        Ok(Step::default())
    }

    fn is_done(&self) -> bool {
        self.answered
    }
}
