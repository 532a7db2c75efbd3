//! Round-robin tournaments: a block that names strategies instead of rosters plays every pair of
//! them (each strategy against a copy of itself too, as Axelrod's tournaments do), each pair a
//! two-seat roster `A vs B` with its own run keys and seeds, `repetitions` matches each, at the
//! baseline and under each declared level of noise (a cell `noise-P` of its own, whose factor
//! flips each action with probability P after the strategy chose it).

use agora_agents::PolicySpec;
use serde::{Deserialize, Serialize};

use crate::cell::{Cell, Factor, Level};
use crate::roster::{Member, Roster};
use crate::FORMAT_VERSION;

/// A round-robin tournament of strategies.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Tournament {
    /// The strategies, each written as a roster member's policy (`TitForTat`, `Llm(model: "m")`).
    #[schemars(length(min = 2))]
    pub strategies: Vec<PolicySpec>,
    /// Matches per pair of strategies (Axelrod's `repetitions`); default 1.
    #[serde(default = "one")]
    #[schemars(range(min = 1))]
    pub repetitions: u32,
    /// Whether each strategy also meets a copy of itself (Axelrod's tournaments do); default
    /// true.
    #[serde(default = "yes")]
    pub self_play: bool,
    /// Noise levels, each played as a cell `noise-P` beside the baseline: every action flipped
    /// with probability P, in (0, 0.5]; default none.
    #[serde(default)]
    pub noise: Vec<f64>,
}

fn one() -> u32 {
    1
}

fn yes() -> bool {
    true
}

/// The separator of a pair's roster name, `A vs B`.
pub const VS: &str = " vs ";

impl Tournament {
    /// Each strategy's label: its policy's name, with `#2`, `#3` … for a second and third
    /// strategy of the same policy (other parameters).
    pub fn labels(&self) -> Vec<String> {
        let mut seen: std::collections::BTreeMap<&str, usize> = std::collections::BTreeMap::new();
        self.strategies
            .iter()
            .map(|s| {
                let name = s.meta().name;
                let n = seen.entry(name).or_insert(0);
                *n += 1;
                if *n == 1 {
                    name.to_string()
                } else {
                    format!("{name}#{n}")
                }
            })
            .collect()
    }

    /// One two-seat roster per pair of strategies (i ≤ j, or i < j without self-play), the
    /// first strategy in seat 0.
    pub fn rosters(&self) -> Vec<Roster> {
        let labels = self.labels();
        let mut out = Vec::new();
        for i in 0..self.strategies.len() {
            for j in i..self.strategies.len() {
                if i == j && !self.self_play {
                    continue;
                }
                out.push(Roster {
                    name: format!("{}{VS}{}", labels[i], labels[j]),
                    family: None,
                    members: vec![
                        Member { policy: self.strategies[i].clone(), count: Some(1) },
                        Member { policy: self.strategies[j].clone(), count: Some(1) },
                    ],
                });
            }
        }
        out
    }

    /// The cells of the noise levels (`noise-0.05` …).
    pub fn noise_cells(&self) -> Vec<Cell> {
        self.noise
            .iter()
            .map(|p| Cell {
                version: FORMAT_VERSION,
                name: format!("noise-{p}"),
                level: Level::Design,
                description: format!("each action flipped with probability {p} after it is chosen"),
                environments: None,
                factors: vec![Factor::Noise(*p)],
                compound: false,
            })
            .collect()
    }

    /// What is wrong with the declaration, with the field: fewer than two strategies, no
    /// repetition, a noise level outside (0, 0.5] or twice.
    pub fn check(&self) -> Result<(), (String, String)> {
        if self.strategies.len() < 2 {
            return Err(("strategies".into(), "a tournament needs at least two strategies".into()));
        }
        if self.repetitions == 0 {
            return Err(("repetitions".into(), "must be at least 1".into()));
        }
        for (i, p) in self.noise.iter().enumerate() {
            Factor::Noise(*p).check().map_err(|m| (format!("noise[{i}]"), m))?;
            if self.noise[..i].contains(p) {
                return Err((format!("noise[{i}]"), format!("{p} is listed twice")));
            }
        }
        Ok(())
    }
}
