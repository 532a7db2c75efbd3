//! Noise ([`crate::Factor::Noise`]): each action of a two-action game is played as the other one
//! with a given probability, after the agent chose it, as in Axelrod's noisy tournaments. The
//! draws come from a stream of the seat's own, derived from the run seed, so the agent's stream
//! and every other draw of the run are those of the run without noise; the agents see the
//! action played (their feedback is the game's), and the records hold it.

use agora_agents::{Decision, Policy, PolicyMeta};
use agora_environments::{Action, ActionSpace, Feedback, Observation};
use rand::{Rng, RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// A seat's policy with noise on its actions.
pub struct Noisy {
    inner: Box<dyn Policy>,
    noise: f64,
    stream: Xoshiro256PlusPlus,
}

impl Noisy {
    /// `inner` with each action flipped with probability `noise`, drawn from a stream derived
    /// from the run seed and the seat.
    pub fn new(inner: Box<dyn Policy>, noise: f64, run_seed: u64, seat: usize) -> Noisy {
        let stream = Xoshiro256PlusPlus::seed_from_u64(crate::seed::derive(run_seed, &["noise", &seat.to_string()]));
        Noisy { inner, noise, stream }
    }
}

/// The other action of a two-action choice; any other action as it is.
fn flipped(action: Action, space: &ActionSpace) -> Action {
    match (action, space) {
        (Action::Choice(i), ActionSpace::Choice { labels }) if labels.len() == 2 && i < 2 => Action::Choice(1 - i),
        (a, _) => a,
    }
}

impl Policy for Noisy {
    fn meta(&self) -> &'static PolicyMeta {
        self.inner.meta()
    }

    fn decide(&mut self, obs: &Observation, rng: &mut dyn RngCore) -> Decision {
        // One draw a decision, made before the answer is known, so that a deferred answer is
        // flipped by the same draw as a ready one.
        let flip = self.stream.random::<f64>() < self.noise;
        match self.inner.decide(obs, rng) {
            Decision::Ready(a) if flip => Decision::Ready(flipped(a, &obs.space)),
            Decision::Deferred(future) if flip => {
                let space = obs.space.clone();
                Decision::Deferred(Box::pin(async move { future.await.map(|a| flipped(a, &space)) }))
            }
            d => d,
        }
    }

    fn update(&mut self, feedback: &Feedback) {
        self.inner.update(feedback);
    }

    fn reset(&mut self) {
        self.inner.reset();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_two_action_choice_is_flipped_and_nothing_else() {
        let two = ActionSpace::Choice { labels: vec!["C".to_string(), "D".to_string()].into() };
        let three = ActionSpace::Choice { labels: vec!["a".to_string(), "b".to_string(), "c".to_string()].into() };
        assert_eq!(flipped(Action::Choice(0), &two), Action::Choice(1));
        assert_eq!(flipped(Action::Choice(1), &two), Action::Choice(0));
        assert_eq!(flipped(Action::Choice(0), &three), Action::Choice(0));
        assert_eq!(flipped(Action::Amount(3), &ActionSpace::Amount { min: 0, max: 10 }), Action::Amount(3));
    }
}
