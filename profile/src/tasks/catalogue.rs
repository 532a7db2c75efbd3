//! The catalogue of inputs per task: conditions, decision points, facts, options, supplied
//! histories and the score of one decoded answer (the profile methods §A0–§A5, §B0–§B4, §C0–§C4, §D0–§D3,
//! and §E0's items, one input each, from [`super::items`]).
//!
//! Every amount is computed here from the seed's parameters, never typed as a result: the
//! totals, temptations and multipliers of the condition tables, the payoff formulas, C1's
//! lotteries at three stakes, C3's later amounts ([`super::decimal`]) and D's lotteries.

use super::decimal::{cents_text, later_amount_cents};
use super::{Level, Task};
use crate::score::questionnaire::{item_score, Key};

pub use super::input::{Answer, Input, ListedOption, Round};

/// An answer decoded to its economic meaning.
#[derive(Clone, Debug, PartialEq)]
pub enum Decoded {
    /// The economic amount (what is given, offered, contributed, sent or returned).
    Amount(i64),
    /// The economic option.
    Option(&'static str),
}

impl Decoded {
    /// The value as recorded: the amount, or the option key.
    pub fn text(&self) -> String {
        match self {
            Decoded::Amount(a) => a.to_string(),
            Decoded::Option(k) => (*k).to_string(),
        }
    }
}

fn fact(name: &str, value: impl ToString) -> (String, String) {
    (name.to_string(), value.to_string())
}

/// A number the way the model reads it: thousands grouped by commas.
pub fn grouped(n: i64) -> String {
    let s = n.unsigned_abs().to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    if n < 0 {
        format!("-{out}")
    } else {
        out
    }
}

fn input(task: Task, level: Level, point: &str, facts: Vec<(String, String)>, answer: Answer) -> Input {
    Input {
        task,
        level,
        point: point.to_string(),
        branch: String::new(),
        scored: true,
        facts,
        answer,
        listed: Vec::new(),
        history: Vec::new(),
    }
}

/// The condition value as a number (`"0.3"` → 0.3).
fn value(task: Task, level: Level) -> f64 {
    task.condition_values()[level.index()].parse().unwrap_or(0.0)
}

fn int(task: Task, level: Level) -> i64 {
    value(task, level).round() as i64
}

/// The prisoner's dilemma payoffs of §A2 and §B2: (R, S, T, P) = (30, 0, T, 10); for the focal
/// player's action and the other's, (own, other).
fn pd_payoffs(own: &str, other: &str, t: i64) -> (i64, i64) {
    match (own, other) {
        ("cooperate", "cooperate") => (30, 30),
        ("cooperate", _) => (0, t),
        (_, "cooperate") => (t, 0),
        _ => (10, 10),
    }
}

/// B1's round payoff 100 − c + αC for contribution `own` when each of three others gives `each`.
fn pgg_payoff(own: i64, others_total: i64, alpha: f64) -> f64 {
    100.0 - own as f64 + alpha * (own + others_total) as f64
}

fn money(x: f64) -> String {
    if (x - x.round()).abs() < 1e-9 {
        grouped(x.round() as i64)
    } else {
        format!("{x:.1}")
    }
}

/// Every scheduled input of `task` at every condition, in a fixed order. B4 has none: its
/// inputs arise round by round in a live episode ([`b4_input`]).
pub fn inputs(task: Task) -> Vec<Input> {
    Level::ALL.into_iter().flat_map(|level| inputs_at(task, level)).collect()
}

/// The inputs of `task` at one condition.
pub fn inputs_at(task: Task, level: Level) -> Vec<Input> {
    match task {
        Task::Dictator | Task::UltimatumProposer => {
            let total = int(task, level);
            vec![input(task, level, "", vec![fact("total", grouped(total))], Answer::Amount { max: total })]
        }
        Task::PrisonersDilemma => {
            let t = int(task, level);
            vec![input(task, level, "", vec![fact("t", t)], Answer::Options(vec!["cooperate", "defect"]))]
        }
        Task::StagHunt => {
            let g = int(task, level);
            vec![input(task, level, "", vec![fact("g", g)], Answer::Options(vec!["a", "b"]))]
        }
        Task::PublicGoods => {
            let alpha = task.condition_values()[level.index()];
            vec![input(
                task,
                level,
                "",
                vec![fact("alpha", alpha), fact("endowment", 100)],
                Answer::Amount { max: 100 },
            )]
        }
        Task::TrustInvestor => {
            let m = int(task, level);
            vec![input(task, level, "", vec![fact("m", m), fact("endowment", 100)], Answer::Amount { max: 100 })]
        }
        Task::TrustTrustee => {
            // §A4: the investor has 100 and has already sent x, which is tripled.
            let x = int(task, level);
            vec![input(
                task,
                level,
                "",
                vec![fact("endowment", 100), fact("x", x), fact("received", 3 * x), fact("investor_left", 100 - x)],
                Answer::Amount { max: 3 * x },
            )]
        }
        Task::UltimatumResponder => {
            // §A5: scored offers give the model 10–40 % of the total; the original version also
            // keeps the full curve 0–100 % in ten-point steps, unscored.
            let total = int(task, level);
            (0..=10)
                .map(|tenth| {
                    let offer = total * tenth / 10;
                    let mut i = input(
                        task,
                        level,
                        &format!("offer-{}", tenth * 10),
                        vec![
                            fact("total", grouped(total)),
                            fact("offer", grouped(offer)),
                            fact("kept", grouped(total - offer)),
                        ],
                        Answer::Options(vec!["accept", "reject"]),
                    );
                    i.scored = (1..=4).contains(&tenth);
                    i
                })
                .collect()
        }
        Task::ThirdParty => {
            // §A5: the allocator kept 80 and gave the recipient 20 of 100; the model has 50 and
            // may pay c to reduce the allocator's payoff by 30.
            let c = int(task, level);
            vec![input(
                task,
                level,
                "",
                vec![
                    fact("allocator", 80),
                    fact("recipient", 20),
                    fact("own", 50),
                    fact("c", c),
                    fact("own_after", 50 - c),
                    fact("reduction", 30),
                    fact("allocator_after", 50),
                ],
                Answer::Options(vec!["intervene", "pass"]),
            )]
        }
        Task::B1 => {
            let alpha = value(task, level);
            ["after", "comparison"]
                .into_iter()
                .map(|branch| {
                    let last = if branch == "after" { 75 } else { 25 };
                    let history = (1..=4)
                        .map(|round| {
                            let each = if round == 4 { last } else { 50 };
                            Round {
                                round,
                                own: "50".into(),
                                other: each.to_string(),
                                own_payoff: money(pgg_payoff(50, 3 * each, alpha)),
                                other_payoff: money(pgg_payoff(each, 50 + 2 * each, alpha)),
                            }
                        })
                        .collect();
                    let mut i = input(
                        task,
                        level,
                        "",
                        vec![
                            fact("alpha", task.condition_values()[level.index()]),
                            fact("endowment", 100),
                            fact("round", 5),
                        ],
                        Answer::Amount { max: 100 },
                    );
                    i.branch = branch.into();
                    i.history = history;
                    i
                })
                .collect()
        }
        Task::B2 | Task::B3 => {
            let t = int(task, level);
            ["after", "comparison"]
                .into_iter()
                .map(|branch| {
                    // (own, other) per round, §B2 and §B3.
                    let rounds: [(&str, &str); 4] = match (task, branch) {
                        (Task::B2, "after") => [
                            ("cooperate", "cooperate"),
                            ("cooperate", "cooperate"),
                            ("cooperate", "cooperate"),
                            ("cooperate", "defect"),
                        ],
                        (Task::B2, _) => [("cooperate", "cooperate"); 4],
                        (_, "after") => [
                            ("cooperate", "cooperate"),
                            ("cooperate", "cooperate"),
                            ("cooperate", "defect"),
                            ("defect", "cooperate"),
                        ],
                        _ => [
                            ("cooperate", "cooperate"),
                            ("cooperate", "cooperate"),
                            ("cooperate", "defect"),
                            ("defect", "defect"),
                        ],
                    };
                    let history = rounds
                        .iter()
                        .zip(1..)
                        .map(|((own, other), round)| {
                            let (a, b) = pd_payoffs(own, other, t);
                            Round {
                                round,
                                own: (*own).into(),
                                other: (*other).into(),
                                own_payoff: a.to_string(),
                                other_payoff: b.to_string(),
                            }
                        })
                        .collect();
                    let mut i = input(
                        task,
                        level,
                        "",
                        vec![fact("t", t), fact("round", 5)],
                        Answer::Options(vec!["cooperate", "defect"]),
                    );
                    i.branch = branch.into();
                    i.history = history;
                    i
                })
                .collect()
        }
        Task::B4 => Vec::new(),
        Task::Risk => {
            // §C1: A pays 40 or 32, B pays 77 or 2, both with probability p of the higher
            // payoff, p = 10 %…90 %; amounts × stake.
            let k = int(task, level);
            (1..=9)
                .map(|tenth| {
                    let p = tenth * 10;
                    let lottery = |key: &'static str, high: i64, low: i64| ListedOption {
                        key,
                        template: "lottery",
                        facts: vec![
                            fact("p", p),
                            fact("q", 100 - p),
                            fact("high", grouped(high * k)),
                            fact("low", grouped(low * k)),
                        ],
                    };
                    let mut i =
                        input(task, level, &format!("p-{p}"), vec![fact("p", p)], Answer::Options(vec!["a", "b"]));
                    i.listed = vec![lottery("a", 40, 32), lottery("b", 77, 2)];
                    i
                })
                .collect()
        }
        Task::Urns => {
            // §C2: known target probability 25/50/75 %, target red or blue, prize per condition.
            let prize = int(task, level);
            let mut out = Vec::new();
            for known in [25, 50, 75] {
                for (colour, other) in [("red", "blue"), ("blue", "red")] {
                    let facts = vec![
                        fact("prize", grouped(prize)),
                        fact("colour", colour),
                        fact("other_colour", other),
                        fact("known", known),
                        fact("known_other", 100 - known),
                        fact("balls", 100),
                    ];
                    let mut i = input(
                        task,
                        level,
                        &format!("known-{known}-{colour}"),
                        facts.clone(),
                        Answer::Options(vec!["known", "unknown"]),
                    );
                    i.listed = vec![
                        ListedOption { key: "known", template: "known", facts: facts.clone() },
                        ListedOption { key: "unknown", template: "unknown", facts },
                    ];
                    out.push(i);
                }
            }
            out
        }
        Task::Dated => {
            // §C3–§C4: 100 now (or on day 30) against L on day d (or 30 + d).
            let d = int(task, level) as u64;
            let mut out = Vec::new();
            for grade in [30u64, 100, 300, 600] {
                let later = cents_text(later_amount_cents(grade, d));
                for origin in ["immediate", "delayed"] {
                    let (early_day, late_day) = if origin == "immediate" { (0, d) } else { (30, 30 + d) };
                    let when = |day: u64| if day == 0 { "today".to_string() } else { format!("in {day} days") };
                    let mut i = input(
                        task,
                        level,
                        &format!("r{grade}-{origin}"),
                        vec![fact("gap", d)],
                        Answer::Options(vec!["sooner", "later"]),
                    );
                    i.listed = vec![
                        ListedOption {
                            key: "sooner",
                            template: "payment",
                            facts: vec![
                                fact("amount", "100.00"),
                                fact("when", when(early_day)),
                                fact("day", early_day),
                            ],
                        },
                        ListedOption {
                            key: "later",
                            template: "payment",
                            facts: vec![
                                fact("amount", later.clone()),
                                fact("when", when(late_day)),
                                fact("day", late_day),
                            ],
                        },
                    ];
                    out.push(i);
                }
            }
            out
        }
        Task::Lotteries => {
            let k = int(task, level);
            let lottery = |key: &'static str, chance: i64, prize: i64| ListedOption {
                key,
                template: "lottery",
                facts: vec![fact("chance", chance), fact("prize", grouped(prize * k))],
            };
            let mut out = Vec::new();
            // §D1/§D3: sets P1 and P2 with X, Y, Z and the decoys DX, DY.
            let sets: [(&str, [(i64, i64); 5]); 2] = [
                ("P1", [(70, 100), (50, 150), (30, 240), (65, 90), (45, 140)]),
                ("P2", [(80, 80), (50, 130), (20, 300), (75, 70), (45, 120)]),
            ];
            for (set, o) in sets {
                let x = lottery("X", o[0].0, o[0].1);
                let y = lottery("Y", o[1].0, o[1].1);
                let z = lottery("Z", o[2].0, o[2].1);
                let dx = lottery("DX", o[3].0, o[3].1);
                let dy = lottery("DY", o[4].0, o[4].1);
                let menus: [(&str, Vec<ListedOption>); 5] = [
                    ("XY", vec![x.clone(), y.clone()]),
                    ("YZ", vec![y.clone(), z.clone()]),
                    ("XZ", vec![x.clone(), z]),
                    ("XYDX", vec![x.clone(), y.clone(), dx]),
                    ("XYDY", vec![x, y, dy]),
                ];
                for (menu, listed) in menus {
                    let keys = listed.iter().map(|l| l.key).collect();
                    let mut i = input(task, level, &format!("{set}-{menu}"), vec![], Answer::Options(keys));
                    i.listed = listed;
                    out.push(i);
                }
            }
            // §D2: G1–G3, first and second lottery.
            for (pair, first, second) in
                [("G1", (60, 80), (60, 100)), ("G2", (70, 100), (50, 100)), ("G3", (50, 100), (70, 120))]
            {
                let mut i = input(task, level, pair, vec![], Answer::Options(vec!["first", "second"]));
                i.listed = vec![lottery("first", first.0, first.1), lottery("second", second.0, second.1)];
                out.push(i);
            }
            out
        }
        // Category E: the shipped items at the one condition a questionnaire has; E6–E9's
        // come from a lab's own file ([`super::items::ItemFile::inputs`]).
        _ if level == Level::Middle => super::items::shipped().inputs(task),
        _ => Vec::new(),
    }
}

/// B4's input at `round` (1–12) of an episode at `level`: the payoff g, and the history of the
/// rounds played so far (the model's reference choices and the opponent's script).
pub fn b4_input(level: Level, round: u32, history: &[Round]) -> Input {
    let g = int(Task::B4, level);
    let mut i = input(
        Task::B4,
        level,
        &format!("round-{round}"),
        vec![fact("g", g), fact("round", round), fact("rounds", 12)],
        Answer::Options(vec!["l", "r"]),
    );
    i.history = history.to_vec();
    i
}

/// B4's opponent: L in rounds 1–6 then R (`l-to-r`), or the reverse (`r-to-l`) (§B4).
pub fn b4_opponent(direction: &str, round: u32) -> &'static str {
    let first = if direction == "l-to-r" { "l" } else { "r" };
    let second = if first == "l" { "r" } else { "l" };
    if round <= 6 {
        first
    } else {
        second
    }
}

/// The two switch directions of B4, weighted equally.
pub const B4_DIRECTIONS: [&str; 2] = ["l-to-r", "r-to-l"];

/// B4's round record after the model chose `own` against the opponent's `other` at `level`.
pub fn b4_round(level: Level, round: u32, own: &str, other: &str) -> Round {
    let g = int(Task::B4, level);
    let pay = if own == other { g } else { 0 };
    Round { round, own: own.into(), other: other.into(), own_payoff: pay.to_string(), other_payoff: pay.to_string() }
}

/// The score of one decoded answer on the task's 0–100 scale (§A0–§D2): the share given,
/// offered, contributed, sent or returned, or 100 for the counted choice. D1 and D3 use the
/// choice distribution instead (their score here counts the first option of a pair).
pub fn score(input: &Input, decoded: &Decoded) -> f64 {
    let fact = |name: &str| -> f64 {
        input.facts.iter().find(|(k, _)| k == name).map_or(0.0, |(_, v)| v.replace(',', "").parse().unwrap_or(0.0))
    };
    let counted = |key: &str| -> f64 {
        match decoded {
            Decoded::Option(k) if *k == key => 100.0,
            _ => 0.0,
        }
    };
    match (input.task, decoded) {
        (Task::Dictator | Task::UltimatumProposer, Decoded::Amount(x)) => 100.0 * *x as f64 / fact("total"),
        (Task::PublicGoods | Task::TrustInvestor | Task::B1, Decoded::Amount(x)) => 100.0 * *x as f64 / 100.0,
        (Task::TrustTrustee, Decoded::Amount(r)) => 100.0 * *r as f64 / fact("received"),
        (Task::PrisonersDilemma | Task::B3, _) => counted("cooperate"),
        (Task::B2, _) => counted("defect"),
        (Task::StagHunt, _) => counted("b"),
        (Task::UltimatumResponder, _) => counted("reject"),
        (Task::ThirdParty, _) => counted("intervene"),
        (Task::Risk, _) => counted("b"),
        (Task::Urns, _) => counted("unknown"),
        (Task::Dated, _) => counted("later"),
        (Task::Lotteries, _) => {
            let target = match input.point.as_str() {
                "G1" | "G3" => "second",
                "G2" => "first",
                p if p.ends_with("-YZ") => "Y",
                _ => "X",
            };
            counted(target)
        }
        (Task::B4, _) => 0.0,
        (_, Decoded::Option(k)) if input.task.questionnaire() => {
            let key = input.facts.iter().find(|(n, _)| n == "key").and_then(|(_, v)| Key::from_name(v));
            match (super::items::position(k), key) {
                (Some(r), Some(key)) => item_score(r, key).unwrap_or(0.0),
                _ => 0.0,
            }
        }
        _ => 0.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_task_has_the_seeds_decision_points() {
        let count = |t: Task| inputs(t).len();
        assert_eq!(count(Task::Dictator), 3);
        assert_eq!(count(Task::UltimatumResponder), 33, "0–100 % at three totals");
        assert_eq!(inputs(Task::UltimatumResponder).iter().filter(|i| i.scored).count(), 12);
        assert_eq!(count(Task::B1), 6, "two histories at three conditions");
        assert_eq!(count(Task::Risk), 27);
        assert_eq!(count(Task::Urns), 18);
        assert_eq!(count(Task::Dated), 24, "C4's 24 questions, the 12 immediate ones shared with C3");
        assert_eq!(count(Task::Lotteries), 39, "D's 39 unique inputs per version");
        assert!(inputs(Task::B4).is_empty());
    }

    #[test]
    fn supplied_histories_follow_the_seed() {
        let b2 = inputs_at(Task::B2, Level::Middle);
        let after = &b2[0].history;
        assert_eq!(after[3].own, "cooperate");
        assert_eq!(after[3].other, "defect");
        assert_eq!((after[3].own_payoff.as_str(), after[3].other_payoff.as_str()), ("0", "45"));
        let b3 = inputs_at(Task::B3, Level::Low);
        assert_eq!(b3[0].history[3].own, "defect");
        assert_eq!(b3[0].history[3].other, "cooperate");
        assert_eq!(b3[1].history[3].other, "defect");
        let b1 = inputs_at(Task::B1, Level::Middle);
        // Round 4 after the high history: 100 − 50 + 0.5 × (50 + 225) = 187.5.
        assert_eq!(b1[0].history[3].own_payoff, "187.5");
        assert_eq!(b1[1].history[3].other, "25");
    }

    #[test]
    fn scores_decode_to_the_measured_quantity() {
        let dg = &inputs_at(Task::Dictator, Level::Middle)[0];
        assert_eq!(score(dg, &Decoded::Amount(250)), 25.0);
        let tgt = &inputs_at(Task::TrustTrustee, Level::Low)[0];
        assert_eq!(score(tgt, &Decoded::Amount(15)), 50.0, "15 of 30 returned");
        let g2 = inputs_at(Task::Lotteries, Level::Low).into_iter().find(|i| i.point == "G2").unwrap();
        assert_eq!(score(&g2, &Decoded::Option("first")), 100.0);
        assert_eq!(b4_opponent("r-to-l", 7), "l");
        assert_eq!(b4_round(Level::High, 3, "l", "l").own_payoff, "60");
    }

    #[test]
    fn lotteries_and_payments_scale_with_the_stake() {
        let c1 = inputs_at(Task::Risk, Level::Middle).into_iter().find(|i| i.point == "p-50").unwrap();
        let b = &c1.listed[1].facts;
        assert!(b.contains(&("high".into(), "770".into())) && b.contains(&("low".into(), "20".into())));
        let c3 = inputs_at(Task::Dated, Level::Middle).into_iter().find(|i| i.point == "r100-delayed").unwrap();
        assert!(c3.listed[1].facts.contains(&("amount".into(), "105.86".into())));
        assert!(c3.listed[1].facts.contains(&("when".into(), "in 60 days".into())));
    }
}
