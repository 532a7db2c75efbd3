//! The sentence the prefill intervention inserts for a value: true in the state it is put into.
//!
//! "Auditing LLM Behavior with SUVA: From Stated Values to Actions" (§240.7.5, §240.10.3)
//! estimates the effect of a stated value by building, for each state, the reasoning with one
//! sentence of the value inserted and with every sentence of it deleted. An inserted sentence
//! that is false in its state (an example naming option B2 where B1 is the one better for A, or
//! an option label the game does not have) measures the effect of a false cue, not of the value.
//!
//! The codebook supplies the value's wording ([`Statement`]); the game supplies the state's
//! facts ([`Facts`]: the options' labels and payoffs to the decider and the other, the unit, and
//! the situation — a shared group, or what the other did before). A statement names an option
//! only where the facts say that option is the one the value favours there ([`Favours`]: the
//! option with strictly more for the other, the larger total, the smaller gap, …) and the
//! situation its wording claims holds ([`When`]); everywhere else — a state where the options
//! tie on the value's criterion, another situation, or a game that supplies no facts — the
//! value's general wording is used, which states the value and claims no fact about the state.

use serde::{Deserialize, Serialize};

/// What a value favours, read from the two options' payoffs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub enum Favours {
    /// The option that gives the other more.
    MoreForOther,
    /// The option that gives the other less.
    LessForOther,
    /// The option that gives the decider more.
    MoreForSelf,
    /// The option with the larger total of the two payoffs.
    LargerTotal,
    /// The option with the smaller gap between the two payoffs.
    SmallerGap,
    /// The option that puts the decider further ahead of the other (own minus other).
    LargerLead,
}

/// The situation a naming wording claims.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub enum When {
    /// Any state with facts.
    Always,
    /// The decider and the other share a group.
    SharedGroup,
    /// The other gave the decider more before (and took less for itself).
    HelpedMe,
    /// The other gave a third person more before.
    HelpedAnother,
    /// The other gave the decider less before (and took more for itself).
    HarmedMe,
    /// The other gave a third person less before.
    HarmedAnother,
}

/// A wording that names the option the value favours.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Naming {
    /// The situation it claims.
    pub when: When,
    /// What the value favours.
    pub favours: Favours,
    /// The sentence: `{option}` (the favoured option's label), `{other}` / `{Other}` (the other,
    /// lower-case or capitalised), `{unit}`.
    pub text: String,
}

/// How a value is stated when the prefill inserts it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Statement {
    /// The value stated without a fact about the state (`{other}` / `{Other}` allowed).
    pub general: String,
    /// Wordings that name an option, the first that applies used.
    #[serde(default)]
    pub naming: Vec<Naming>,
}

const PLACEHOLDERS: [&str; 4] = ["{option}", "{other}", "{Other}", "{unit}"];

fn check_placeholders(text: &str, allowed: &[&str]) -> Result<(), String> {
    let mut rest = text;
    while let Some(at) = rest.find('{') {
        let end = rest[at..].find('}').ok_or_else(|| format!("unclosed `{{` in {text:?}"))?;
        let p = &rest[at..at + end + 1];
        if !allowed.contains(&p) {
            return Err(format!("{p} is not a placeholder here (allowed: {})", allowed.join(", ")));
        }
        rest = &rest[at + end + 1..];
    }
    Ok(())
}

impl Statement {
    /// Checks the wordings; the error is (field, message).
    pub fn validate(&self) -> Result<(), (String, String)> {
        if self.general.trim().is_empty() {
            return Err(("general".into(), "must not be empty".into()));
        }
        check_placeholders(&self.general, &["{other}", "{Other}"]).map_err(|m| ("general".into(), m))?;
        for (i, n) in self.naming.iter().enumerate() {
            if !n.text.contains("{option}") {
                return Err((format!("naming[{i}].text"), "must name the option: `{option}`".into()));
            }
            check_placeholders(&n.text, &PLACEHOLDERS).map_err(|m| (format!("naming[{i}].text"), m))?;
        }
        Ok(())
    }
}

/// The situation of a state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Situation {
    /// Nothing said about the other beyond the payoffs.
    Plain,
    /// An identity cue: whether the decider and the other share it.
    Group {
        /// They share it.
        shared: bool,
    },
    /// What the other did before.
    Before {
        /// To the decider (`true`) or to a third person.
        direct: bool,
        /// Gave more (`true`) or less.
        helped: bool,
    },
}

/// The facts of one state, as the game supplies them.
#[derive(Clone, Debug, PartialEq)]
pub struct Facts {
    /// The options' labels as shown, in semantic order.
    pub labels: Vec<String>,
    /// Each option's payoff to the decider.
    pub own: Vec<f64>,
    /// Each option's payoff to the other.
    pub other: Vec<f64>,
    /// What the payoffs are counted in.
    pub unit: String,
    /// How the decider's text names the other (`person A`).
    pub other_name: String,
    /// The situation.
    pub situation: Situation,
}

impl Facts {
    /// The option the criterion favours: the one scoring strictly highest on it; none where the
    /// best options tie.
    pub fn favoured(&self, favours: Favours) -> Option<usize> {
        let score = |i: usize| -> f64 {
            let (o, x) = (self.own[i], self.other[i]);
            match favours {
                Favours::MoreForOther => x,
                Favours::LessForOther => -x,
                Favours::MoreForSelf => o,
                Favours::LargerTotal => o + x,
                Favours::SmallerGap => -(o - x).abs(),
                Favours::LargerLead => o - x,
            }
        };
        let n = self.labels.len().min(self.own.len()).min(self.other.len());
        let best = (0..n).map(score).fold(f64::NEG_INFINITY, f64::max);
        let top: Vec<usize> = (0..n).filter(|i| score(*i) == best).collect();
        (top.len() == 1).then(|| top[0])
    }

    fn holds(&self, when: When) -> bool {
        match (when, self.situation) {
            (When::Always, _) => true,
            (When::SharedGroup, Situation::Group { shared }) => shared,
            (When::HelpedMe, Situation::Before { direct: true, helped: true }) => true,
            (When::HelpedAnother, Situation::Before { direct: false, helped: true }) => true,
            (When::HarmedMe, Situation::Before { direct: true, helped: false }) => true,
            (When::HarmedAnother, Situation::Before { direct: false, helped: false }) => true,
            _ => false,
        }
    }
}

/// The other's name when the game supplies no facts.
pub const OTHER_IN_GENERAL: &str = "the other player";

fn fill(text: &str, option: Option<&str>, other: &str, unit: &str) -> String {
    let mut cap = other.to_string();
    if let Some(first) = cap.get(0..1) {
        cap = first.to_uppercase() + &cap[1..];
    }
    let mut out = text.replace("{other}", other).replace("{Other}", &cap).replace("{unit}", unit);
    if let Some(o) = option {
        out = out.replace("{option}", o);
    }
    // A sentence starts with a capital letter, whatever the label it starts with.
    if let Some(first) = out.get(0..1) {
        out = first.to_uppercase() + &out[1..];
    }
    out
}

/// The sentence stating the value in a state: the first naming wording whose situation holds
/// and whose criterion favours one option, with that option; else the general wording.
/// Returns the sentence and the option it names, if any.
pub fn render(statement: &Statement, facts: Option<&Facts>) -> (String, Option<usize>) {
    if let Some(f) = facts {
        for n in &statement.naming {
            if !f.holds(n.when) {
                continue;
            }
            if let Some(i) = f.favoured(n.favours) {
                return (fill(&n.text, Some(&f.labels[i]), &f.other_name, &f.unit), Some(i));
            }
        }
        return (fill(&statement.general, None, &f.other_name, &f.unit), None);
    }
    (fill(&statement.general, None, OTHER_IN_GENERAL, ""), None)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(own: [f64; 2], other: [f64; 2], situation: Situation) -> Facts {
        Facts {
            labels: vec!["B1".into(), "B2".into()],
            own: own.to_vec(),
            other: other.to_vec(),
            unit: "points".into(),
            other_name: "person A".into(),
            situation,
        }
    }

    #[test]
    fn a_statement_names_the_option_its_value_favours_and_only_that() {
        let st = Statement {
            general: "I want {other} to be better off.".into(),
            naming: vec![Naming {
                when: When::Always,
                favours: Favours::MoreForOther,
                text: "{Other} would be better off with {option}.".into(),
            }],
        };
        // B1 gives A 600, B2 gives A 0: the sentence names B1, not the codebook example's B2.
        let f = facts([0.0, 400.0], [600.0, 0.0], Situation::Plain);
        assert_eq!(render(&st, Some(&f)), ("Person A would be better off with B1.".into(), Some(0)));
        // A tie on the criterion: the general wording, which names no option.
        let tie = facts([0.0, 400.0], [200.0, 200.0], Situation::Plain);
        assert_eq!(render(&st, Some(&tie)), ("I want person A to be better off.".into(), None));
        // No facts (a game that supplies none): the general wording, the other named generally.
        assert_eq!(render(&st, None), ("I want the other player to be better off.".into(), None));
    }

    #[test]
    fn a_situational_wording_is_used_only_where_its_situation_holds() {
        let st = Statement {
            general: "I want to return the favor when someone treats me well.".into(),
            naming: vec![Naming {
                when: When::HelpedMe,
                favours: Favours::MoreForOther,
                text: "{Other} gave me more {unit} earlier, so I want to return the favor with {option}.".into(),
            }],
        };
        let helped = facts([0.0, 0.0], [0.0, 600.0], Situation::Before { direct: true, helped: true });
        assert_eq!(render(&st, Some(&helped)).1, Some(1));
        for s in [
            Situation::Plain,
            Situation::Before { direct: false, helped: true },
            Situation::Before { direct: true, helped: false },
        ] {
            assert_eq!(render(&st, Some(&facts([0.0, 0.0], [0.0, 600.0], s))).1, None, "{s:?}");
        }
    }

    #[test]
    fn criteria_read_the_payoffs() {
        let f = facts([600.0, 200.0], [0.0, 400.0], Situation::Plain);
        assert_eq!(f.favoured(Favours::MoreForSelf), Some(0));
        assert_eq!(f.favoured(Favours::MoreForOther), Some(1));
        assert_eq!(f.favoured(Favours::LessForOther), Some(0));
        assert_eq!(f.favoured(Favours::LargerTotal), None, "600 + 0 = 200 + 400");
        assert_eq!(f.favoured(Favours::SmallerGap), Some(1));
        assert_eq!(f.favoured(Favours::LargerLead), Some(0));
    }

    #[test]
    fn wordings_are_checked() {
        let bad = Statement { general: "{option} is best.".into(), naming: vec![] };
        assert_eq!(bad.validate().unwrap_err().0, "general");
        let bad = Statement {
            general: "ok".into(),
            naming: vec![Naming { when: When::Always, favours: Favours::MoreForSelf, text: "I get more.".into() }],
        };
        assert_eq!(bad.validate().unwrap_err().0, "naming[0].text");
    }
}
