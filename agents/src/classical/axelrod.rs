//! Strategies of Axelrod's tournaments for the repeated prisoner's dilemma (choice 0 cooperates,
//! choice 1 defects), beside always-cooperate, always-defect and tit-for-tat: each decides from
//! the partner's previous moves (and, for win-stay lose-shift, its own payoff) as the literature
//! defines it; the stochastic ones draw from the seat's stream only.

use agora_environments::{Action, EnvKind, Feedback, Observation};
use rand::{Rng, RngCore};
use serde::{Deserialize, Serialize};

use crate::classical::check_share;
use crate::error::AgentError;
use crate::policy::{Decision, Policy, PolicyMeta};

const PD: &[EnvKind] = &[EnvKind::PrisonersDilemma];
const C: Action = Action::Choice(0);
const D: Action = Action::Choice(1);

fn defected(a: Option<&Action>) -> bool {
    a == Some(&D)
}

/// Cooperates until the partner defects once, then defects for good.
#[derive(Clone, Debug, Default)]
pub struct GrimTrigger {
    triggered: bool,
}

pub(crate) static GRIM_TRIGGER: PolicyMeta = PolicyMeta {
    name: "grim-trigger",
    family: "scripted",
    memory_depth: None,
    stochastic: false,
    environments: PD,
    description: "cooperates until the partner's first defection, then always defects",
    reference: "Friedman (1971), Rev. Econ. Stud. 38:1-12; Axelrod (1980), J. Conflict Resolution 24:3-25",
};

impl Policy for GrimTrigger {
    fn meta(&self) -> &'static PolicyMeta {
        &GRIM_TRIGGER
    }
    fn decide(&mut self, _obs: &Observation, _rng: &mut dyn RngCore) -> Decision {
        Decision::Ready(if self.triggered { D } else { C })
    }
    fn update(&mut self, feedback: &Feedback) {
        self.triggered |= defected(feedback.others.first());
    }
    fn reset(&mut self) {
        self.triggered = false;
    }
}

/// Win-stay, lose-shift (Pavlov): repeats its move after the reward or the temptation, changes
/// it after the punishment or the sucker's payoff — cooperates exactly when both players made
/// the same move last round.
#[derive(Clone, Debug, Default)]
pub struct WinStayLoseShift {
    last: Option<(Action, Action)>,
}

pub(crate) static WIN_STAY_LOSE_SHIFT: PolicyMeta = PolicyMeta {
    name: "win-stay-lose-shift",
    family: "scripted",
    memory_depth: Some(1),
    stochastic: false,
    environments: PD,
    description: "cooperates first, then cooperates exactly when both moved alike last round (Pavlov)",
    reference: "Nowak & Sigmund (1993), Nature 364:56-58",
};

impl Policy for WinStayLoseShift {
    fn meta(&self) -> &'static PolicyMeta {
        &WIN_STAY_LOSE_SHIFT
    }
    fn decide(&mut self, _obs: &Observation, _rng: &mut dyn RngCore) -> Decision {
        Decision::Ready(match &self.last {
            None => C,
            Some((own, other)) if own == other => C,
            Some(_) => D,
        })
    }
    fn update(&mut self, feedback: &Feedback) {
        if let (Some((_, own)), Some(other)) = (feedback.own.last(), feedback.others.first()) {
            self.last = Some((own.clone(), other.clone()));
        }
    }
    fn reset(&mut self) {
        self.last = None;
    }
}

/// Defects only after two defections of the partner in a row.
#[derive(Clone, Debug, Default)]
pub struct TitForTwoTats {
    last_two: [bool; 2],
}

pub(crate) static TIT_FOR_TWO_TATS: PolicyMeta = PolicyMeta {
    name: "tit-for-two-tats",
    family: "scripted",
    memory_depth: Some(2),
    stochastic: false,
    environments: PD,
    description: "cooperates unless the partner defected in each of the last two rounds",
    reference: "Axelrod (1984), The Evolution of Cooperation",
};

impl Policy for TitForTwoTats {
    fn meta(&self) -> &'static PolicyMeta {
        &TIT_FOR_TWO_TATS
    }
    fn decide(&mut self, _obs: &Observation, _rng: &mut dyn RngCore) -> Decision {
        Decision::Ready(if self.last_two == [true, true] { D } else { C })
    }
    fn update(&mut self, feedback: &Feedback) {
        self.last_two = [self.last_two[1], defected(feedback.others.first())];
    }
    fn reset(&mut self) {
        self.last_two = [false, false];
    }
}

/// Tit-for-tat that defects first.
#[derive(Clone, Debug, Default)]
pub struct SuspiciousTitForTat {
    last_partner: Option<Action>,
}

pub(crate) static SUSPICIOUS_TIT_FOR_TAT: PolicyMeta = PolicyMeta {
    name: "suspicious-tit-for-tat",
    family: "scripted",
    memory_depth: Some(1),
    stochastic: false,
    environments: PD,
    description: "defects first, then repeats the partner's previous move",
    reference: "Beaufils, Delahaye & Mathieu (1996), Artificial Life V",
};

impl Policy for SuspiciousTitForTat {
    fn meta(&self) -> &'static PolicyMeta {
        &SUSPICIOUS_TIT_FOR_TAT
    }
    fn decide(&mut self, _obs: &Observation, _rng: &mut dyn RngCore) -> Decision {
        Decision::Ready(self.last_partner.clone().unwrap_or(D))
    }
    fn update(&mut self, feedback: &Feedback) {
        self.last_partner = feedback.others.first().cloned();
    }
    fn reset(&mut self) {
        self.last_partner = None;
    }
}

/// Parameters of [`GenerousTitForTat`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct GenerousParams {
    /// Probability of cooperating after a defection of the partner; default 1/3 (Nowak &
    /// Sigmund's generosity for the payoffs 3, 0, 5, 1).
    #[schemars(range(min = 0.0, max = 1.0))]
    pub generosity: f64,
}

impl Default for GenerousParams {
    fn default() -> Self {
        GenerousParams { generosity: 1.0 / 3.0 }
    }
}

impl GenerousParams {
    pub(crate) fn validate(&self) -> Result<(), AgentError> {
        check_share("generous-tit-for-tat", "generosity", self.generosity)
    }
}

/// Tit-for-tat that forgives a defection with a given probability.
#[derive(Clone, Debug)]
pub struct GenerousTitForTat {
    params: GenerousParams,
    partner_defected: bool,
}

impl GenerousTitForTat {
    /// A generous tit-for-tat with these parameters.
    pub fn new(params: GenerousParams) -> Self {
        GenerousTitForTat { params, partner_defected: false }
    }
}

pub(crate) static GENEROUS_TIT_FOR_TAT: PolicyMeta = PolicyMeta {
    name: "generous-tit-for-tat",
    family: "scripted",
    memory_depth: Some(1),
    stochastic: true,
    environments: PD,
    description: "tit-for-tat that cooperates after a defection with probability `generosity`",
    reference: "Nowak & Sigmund (1992), Nature 355:250-253",
};

impl Policy for GenerousTitForTat {
    fn meta(&self) -> &'static PolicyMeta {
        &GENEROUS_TIT_FOR_TAT
    }
    fn decide(&mut self, _obs: &Observation, rng: &mut dyn RngCore) -> Decision {
        // One draw a decision, so that a run's stream does not depend on the partner's play.
        let forgive = rng.random::<f64>() < self.params.generosity;
        Decision::Ready(if self.partner_defected && !forgive { D } else { C })
    }
    fn update(&mut self, feedback: &Feedback) {
        self.partner_defected = defected(feedback.others.first());
    }
    fn reset(&mut self) {
        self.partner_defected = false;
    }
}

/// Parameters of [`RandomPlay`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct RandomParams {
    /// Probability of cooperating in each round; default 0.5.
    #[schemars(range(min = 0.0, max = 1.0))]
    pub cooperate: f64,
}

impl Default for RandomParams {
    fn default() -> Self {
        RandomParams { cooperate: 0.5 }
    }
}

impl RandomParams {
    pub(crate) fn validate(&self) -> Result<(), AgentError> {
        check_share("random", "cooperate", self.cooperate)
    }
}

/// Cooperates with a fixed probability each round, whatever happened.
#[derive(Clone, Debug)]
pub struct RandomPlay {
    params: RandomParams,
}

impl RandomPlay {
    /// A random player with these parameters.
    pub fn new(params: RandomParams) -> Self {
        RandomPlay { params }
    }
}

pub(crate) static RANDOM: PolicyMeta = PolicyMeta {
    name: "random",
    family: "scripted",
    memory_depth: Some(0),
    stochastic: true,
    environments: PD,
    description: "cooperates with probability `cooperate` each round",
    reference: "Axelrod (1980), J. Conflict Resolution 24:3-25 (the RANDOM entry)",
};

impl Policy for RandomPlay {
    fn meta(&self) -> &'static PolicyMeta {
        &RANDOM
    }
    fn decide(&mut self, _obs: &Observation, rng: &mut dyn RngCore) -> Decision {
        Decision::Ready(if rng.random::<f64>() < self.params.cooperate { C } else { D })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agora_environments::Role;

    fn fb(own: Action, other: Action) -> Feedback {
        Feedback { round: 1, own: vec![(Role::Player, own)], others: vec![other], partner: Some(1), payoff: 0.0 }
    }

    fn pd_observation() -> Observation {
        use rand::SeedableRng;
        let spec = agora_environments::EnvSpec::canonical(EnvKind::PrisonersDilemma);
        let mut env = spec.build(agora_environments::Variant::C0).expect("builds");
        env.pending(&mut rand::rngs::StdRng::seed_from_u64(1)).remove(0).observation
    }

    fn play(p: &mut dyn Policy, obs: &Observation) -> Action {
        use rand::SeedableRng;
        let mut rng = rand::rngs::StdRng::seed_from_u64(2);
        match p.decide(obs, &mut rng) {
            Decision::Ready(a) => a,
            Decision::Deferred(_) => panic!("deferred"),
        }
    }

    #[test]
    fn each_strategy_answers_the_partners_moves_as_defined() {
        let obs = pd_observation();
        let mut g = GrimTrigger::default();
        assert_eq!(play(&mut g, &obs), C);
        g.update(&fb(C, D));
        g.update(&fb(D, C));
        assert_eq!(play(&mut g, &obs), D, "grim trigger never forgives");
        let mut w = WinStayLoseShift::default();
        assert_eq!(play(&mut w, &obs), C);
        w.update(&fb(C, D));
        assert_eq!(play(&mut w, &obs), D, "sucker's payoff: shift");
        w.update(&fb(D, D));
        assert_eq!(play(&mut w, &obs), C, "punishment: shift back");
        w.update(&fb(D, C));
        assert_eq!(play(&mut w, &obs), D, "temptation: stay");
        let mut t2 = TitForTwoTats::default();
        t2.update(&fb(C, D));
        assert_eq!(play(&mut t2, &obs), C, "one defection is forgiven");
        t2.update(&fb(C, D));
        assert_eq!(play(&mut t2, &obs), D, "two in a row are not");
        let mut s = SuspiciousTitForTat::default();
        assert_eq!(play(&mut s, &obs), D);
        s.update(&fb(D, C));
        assert_eq!(play(&mut s, &obs), C);
    }
}
