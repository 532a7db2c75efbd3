//! The action indicator of each game and role that the dependency estimate regresses.

use super::*;

/// The action indicator of one environment and role.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Indicator {
    /// The environment's name in the store.
    pub environment: &'static str,
    /// The role's name in the store.
    pub role: &'static str,
    /// The indicator's name.
    pub name: &'static str,
    /// What it is, in words.
    pub definition: &'static str,
    /// Whether it is 0 or 1 (then the logit robustness check runs too).
    pub binary: bool,
    /// How it is read from the action.
    #[serde(skip)]
    pub(super) rule: Rule,
}

/// How an indicator is read from an encoded action.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Rule {
    /// 1 when the choice has this index, else 0.
    Choice(u32),
    /// (amount − min) / (max − min) of the decision's action space.
    Share,
    /// 1 when the choice is the option better for A (binary-allocation states).
    BetterForA,
}

/// The action indicators, per environment and role (see the [module documentation](super)).
pub const INDICATORS: [Indicator; 9] = [
    Indicator {
        environment: "prisoners-dilemma",
        role: "player",
        name: "cooperate",
        definition: "1 when the player cooperates (choice 0), 0 when it defects",
        binary: true,
        rule: Rule::Choice(0),
    },
    Indicator {
        environment: "stag-hunt",
        role: "player",
        name: "stag",
        definition: "1 when the player chooses B, the stag (choice 1), 0 for A, the safe action",
        binary: true,
        rule: Rule::Choice(1),
    },
    Indicator {
        environment: "bargaining",
        role: "responder",
        name: "accept",
        definition: "1 when the ultimatum responder accepts (choice 0), 0 when it rejects",
        binary: true,
        rule: Rule::Choice(0),
    },
    Indicator {
        environment: "bargaining",
        role: "proposer",
        name: "offer_share",
        definition: "the ultimatum offer as a share of the pie (amount / maximum)",
        binary: false,
        rule: Rule::Share,
    },
    Indicator {
        environment: "bargaining",
        role: "dictator",
        name: "give_share",
        definition: "the dictator's gift as a share of the pie (amount / maximum)",
        binary: false,
        rule: Rule::Share,
    },
    Indicator {
        environment: "bargaining",
        role: "investor",
        name: "send_share",
        definition: "the amount the investor sends as a share of the endowment (amount / maximum)",
        binary: false,
        rule: Rule::Share,
    },
    Indicator {
        environment: "bargaining",
        role: "trustee",
        name: "return_share",
        definition: "the amount the trustee returns as a share of what it holds (amount / maximum); a trustee who holds nothing is left out",
        binary: false,
        rule: Rule::Share,
    },
    Indicator {
        environment: "public-goods",
        role: "contributor",
        name: "contribution_share",
        definition: "the contribution as a share of the endowment (amount / maximum)",
        binary: false,
        rule: Rule::Share,
    },
    Indicator {
        environment: "binary-allocation",
        role: "dictator",
        name: "prosocial",
        definition: "1 when person B chooses the option better for A (the SUVA audit paper's prosocial option, Eq. 240.8), 0 for the other; states in which both options give A the same are left out",
        binary: true,
        rule: Rule::BetterForA,
    },
];

/// Environments and roles without an indicator, and why (`*`: every role).
pub const LEFT_OUT: [(&str, &str, &str); 4] = [
    ("naming-game", "*", "symmetric names: no option is the prosocial one"),
    ("coordination", "*", "symmetric options: no option is the prosocial one"),
    ("money-request", "*", "the 11-20 request has no prosocial direction"),
    ("public-goods", "punisher", "punishment is an allocation over several targets, not one indicator"),
];

/// The indicator of an environment and role, if it has one.
pub fn indicator_for(environment: &str, role: &str) -> Option<&'static Indicator> {
    INDICATORS.iter().find(|i| i.environment == environment && i.role == role)
}

/// Why an environment and role have no indicator.
pub fn left_out_reason(environment: &str, role: &str) -> String {
    LEFT_OUT
        .iter()
        .find(|(e, r, _)| *e == environment && (*r == "*" || *r == role))
        .map_or_else(|| "no action indicator is defined for it".to_string(), |(_, _, why)| (*why).to_string())
}

impl Indicator {
    /// The indicator of an encoded action (`c1`, `a17`) of a decision whose action space is
    /// `space_json` (as `agora audit replicates` stores it: `{"Amount": {"min": 0, "max": 20}}`),
    /// with `better_for_a` the option better for A where the game has one; `None` where it is
    /// undefined (an amount space without room, a state without a prosocial option, an action of
    /// the wrong kind).
    pub fn value(&self, action: &str, space_json: &str, better_for_a: Option<u32>) -> Option<f64> {
        let choice = || action.strip_prefix('c').and_then(|c| c.parse::<u32>().ok());
        match self.rule {
            Rule::Choice(i) => choice().map(|c| f64::from(u8::from(c == i))),
            Rule::BetterForA => {
                let (c, pro) = (choice()?, better_for_a?);
                Some(f64::from(u8::from(c == pro)))
            }
            Rule::Share => {
                let a: f64 = action.strip_prefix('a')?.parse::<i64>().ok()? as f64;
                let space: serde_json::Value = serde_json::from_str(space_json).ok()?;
                let amount = &space["Amount"];
                let (min, max) = (amount["min"].as_i64()? as f64, amount["max"].as_i64()? as f64);
                (max > min).then(|| (a - min) / (max - min))
            }
        }
    }
}
