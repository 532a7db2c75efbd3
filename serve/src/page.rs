//! One decision as a participant sees it: the rendered prompt an LLM seat would be sent, split
//! into the rules (the system message) and the situation (the user message: the history table,
//! the round, the question), with a form in place of the answer format. The only words of the
//! prompt a person is not shown are the ones that ask a model for a JSON object; the form asks
//! for the same answer.

use agora_agents::llm::prompt::Rendered;
use agora_environments::{Action, ActionSpace, Context, Observation};
use serde::Serialize;
use sha2::{Digest, Sha256};

/// The version of the page layout; part of every page's recorded version.
pub const LAYOUT_VERSION: u32 = 1;

/// What the form asks for.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Form {
    /// One button per option, in the order this participant sees them: (index in the
    /// decision's action space, label).
    Choice {
        /// The options.
        options: Vec<(u32, String)>,
    },
    /// A whole number in `min..=max`.
    Amount {
        /// The smallest.
        min: i64,
        /// The largest.
        max: i64,
    },
    /// A whole number in `0..=max_each` for each of the other members, in seat order.
    Allocation {
        /// Targets.
        targets: usize,
        /// The most per target.
        max_each: i64,
    },
}

/// One decision page.
#[derive(Clone, Debug, Serialize)]
pub struct Page {
    /// The rules: the system message without its answer-format sentence.
    pub rules: String,
    /// The situation: the user message.
    pub situation: String,
    /// The answer form.
    pub form: Form,
    /// The decision's legal actions, as the engine checks them.
    #[serde(skip)]
    pub space: ActionSpace,
    /// SHA-256 (first 16 hex digits) of the layout version and everything above: which page
    /// the participant was shown, recorded with their answer.
    pub version: String,
}

/// The sentence of the system message that asks a model for its answer format.
const ANSWER_FORMAT: &str = "Answer with a JSON object only";

impl Page {
    /// The page of a decision from the prompt rendered for it.
    pub fn from_rendered(r: &Rendered, obs: &Observation) -> Page {
        let text =
            |role: &str| r.messages.iter().filter(|m| m.role == role).map(|m| m.content.as_str()).collect::<Vec<_>>();
        let system = text("system").join("\n\n");
        let rules = match system.find(ANSWER_FORMAT) {
            Some(i) => system[..i].trim_end().to_string(),
            None => system.trim_end().to_string(),
        };
        // Where the answer format comes before the question, the user message may repeat it.
        let situation = text("user").join("\n\n");
        let situation = match situation.find(ANSWER_FORMAT) {
            Some(i) => situation[..i].trim_end().to_string(),
            None => situation.trim_end().to_string(),
        };
        let form = match &r.space {
            ActionSpace::Choice { labels } => {
                let order: Vec<u32> = match &obs.context {
                    Context::Names { order } => order.clone(),
                    _ => (0..labels.len() as u32).collect(),
                };
                Form::Choice { options: order.into_iter().map(|i| (i, labels[i as usize].clone())).collect() }
            }
            ActionSpace::Amount { min, max } => Form::Amount { min: *min, max: *max },
            ActionSpace::Allocation { targets, max_each } => {
                Form::Allocation { targets: *targets, max_each: *max_each }
            }
        };
        let mut h = Sha256::new();
        h.update(LAYOUT_VERSION.to_le_bytes());
        for part in [&rules, &situation, &serde_json::to_string(&form).unwrap_or_default()] {
            h.update((part.len() as u64).to_le_bytes());
            h.update(part.as_bytes());
        }
        let version = format!("{:x}", h.finalize())[..16].to_string();
        Page { rules, situation, form, space: obs.space.clone(), version }
    }

    /// What the record keeps of the page (the transcript's request).
    pub fn record_json(&self) -> String {
        serde_json::json!({
            "page_version": self.version,
            "layout_version": LAYOUT_VERSION,
            "rules": self.rules,
            "situation": self.situation,
            "form": self.form,
        })
        .to_string()
    }

    /// The action a submitted form names, checked against the decision's action space; the
    /// error says what is wrong in the participant's words.
    pub fn read(&self, fields: &[(String, String)]) -> Result<Action, String> {
        let field = |name: &str| fields.iter().find(|(k, _)| k == name).map(|(_, v)| v.trim());
        let number = |name: &str| -> Result<i64, String> {
            field(name)
                .ok_or_else(|| "please give an answer".to_string())?
                .parse::<i64>()
                .map_err(|_| "please enter a whole number".to_string())
        };
        let action = match &self.form {
            Form::Choice { .. } => Action::Choice(
                field("choice")
                    .ok_or_else(|| "please pick one of the options".to_string())?
                    .parse::<u32>()
                    .map_err(|_| "that is not one of the options".to_string())?,
            ),
            Form::Amount { .. } => Action::Amount(number("amount")?),
            Form::Allocation { targets, .. } => {
                Action::Allocation((0..*targets).map(|t| number(&format!("t{t}"))).collect::<Result<_, _>>()?)
            }
        };
        if !self.space.contains(&action) {
            return Err(match &self.form {
                Form::Choice { .. } => "that is not one of the options".to_string(),
                Form::Amount { min, max } => format!("please enter a whole number from {min} to {max}"),
                Form::Allocation { max_each, .. } => {
                    format!("please enter a whole number from 0 to {max_each} for each")
                }
            });
        }
        Ok(action)
    }
}

/// A message's text as HTML blocks: paragraphs, and Markdown tables (the history) as tables.
/// Every piece of text is escaped.
pub fn blocks(text: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut para: Vec<&str> = Vec::new();
    let mut table: Vec<Vec<String>> = Vec::new();
    let flush_para = |para: &mut Vec<&str>, out: &mut Vec<Block>| {
        if !para.is_empty() {
            out.push(Block::Paragraph { text: para.join("\n") });
            para.clear();
        }
    };
    let flush_table = |table: &mut Vec<Vec<String>>, out: &mut Vec<Block>| {
        if !table.is_empty() {
            let head = table.remove(0);
            out.push(Block::Table { head, rows: std::mem::take(table) });
        }
    };
    for line in text.lines() {
        let t = line.trim();
        if t.starts_with('|') && t.ends_with('|') && t.len() > 1 {
            flush_para(&mut para, &mut out);
            let cells: Vec<String> = t[1..t.len() - 1].split('|').map(|c| c.trim().to_string()).collect();
            if cells.iter().all(|c| !c.is_empty() && c.chars().all(|ch| ch == '-' || ch == ':')) {
                continue;
            }
            table.push(cells);
        } else {
            flush_table(&mut table, &mut out);
            if t.is_empty() {
                flush_para(&mut para, &mut out);
            } else {
                para.push(line);
            }
        }
    }
    flush_para(&mut para, &mut out);
    flush_table(&mut table, &mut out);
    out
}

/// A block of a page's text.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Block {
    /// Lines of prose.
    Paragraph {
        /// The text.
        text: String,
    },
    /// A table with its header row.
    Table {
        /// The header.
        head: Vec<String>,
        /// The rows.
        rows: Vec<Vec<String>>,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_history_table_becomes_a_table_and_prose_paragraphs() {
        let b = blocks("You are participant A.\nYour last 2 rounds:\n| round | you | other | your points |\n|---|---|---|---|\n| 1 | C | D | 0 |\n| 2 | D | D | 1 |\nRound 3 of 10. Choose.");
        assert_eq!(b.len(), 3, "{b:?}");
        assert_eq!(b[0], Block::Paragraph { text: "You are participant A.\nYour last 2 rounds:".into() });
        let Block::Table { head, rows } = &b[1] else { panic!("{b:?}") };
        assert_eq!(head, &["round", "you", "other", "your points"]);
        assert_eq!(rows, &[vec!["1", "C", "D", "0"], vec!["2", "D", "D", "1"]]);
        assert_eq!(b[2], Block::Paragraph { text: "Round 3 of 10. Choose.".into() });
    }
}
