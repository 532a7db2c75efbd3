//! One input under one question version and one presentation → the question the model reads,
//! and the decoding of its answer back to the economic meaning (the profile methods §M05: "They therefore
//! distinguish an option's economic meaning from its label or position on the page").
//!
//! # The reference presentation
//! Blocks separated by a blank line: the opening sentence; the task's sentences as one
//! paragraph; the history (B), one sentence per round; the listed options (C, D), one line
//! each as `label: description`; the question; the answer format. Nothing else: no persona, no
//! goal sentence, no request for reasons (§M03).
//!
//! # The checks
//! Each [`Operation`](super::Operation) changes one thing of that presentation: the answer
//! field's name, the layout (one line, or one sentence per line — the same text function as
//! the society prompts' layout cells), a task identifier first, the opening sentence, the
//! labels (the version's alternative labels), the order of options or permissible responses,
//! the history as a table, the options as a table.

use super::catalogue::{Answer, Decoded, Input, Round};
use super::version::{AnswerWording, Stated, Version};

pub use agora_environments::layout::{apply_layout, TextLayout};

/// What one presentation changes; the default is the reference presentation.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Presentation {
    /// The answer field's name in place of the version's.
    pub answer_field: Option<String>,
    /// The layout.
    pub layout: TextLayout,
    /// A task identifier written first.
    pub task_id: Option<String>,
    /// An opening sentence in place of the version's.
    pub opening: Option<String>,
    /// Options (or permissible amounts) listed in the opposite order.
    pub reversed: bool,
    /// The version's alternative labels in place of its labels.
    pub alt_labels: bool,
    /// The history as a table.
    pub history_table: bool,
    /// The listed options as a table.
    pub table_layout: bool,
}

impl Presentation {
    /// The reference presentation.
    pub fn reference() -> Presentation {
        Presentation::default()
    }
}

/// A rendered question and what its answer can be.
#[derive(Clone, Debug, PartialEq)]
pub struct Rendered {
    /// The text of the one user message.
    pub text: String,
    /// The answer field asked for.
    pub field: String,
    /// The options as displayed, in display order: (label, economic key). Empty for amounts.
    pub shown: Vec<(String, &'static str)>,
    /// For amounts: the largest legal answer.
    pub max: Option<i64>,
    /// For amounts: whether the answer states the complement (what is kept).
    pub kept: bool,
}

impl Rendered {
    /// The answer read back to its economic meaning: a displayed label to its option, a kept
    /// amount to the amount given. `None` for an answer that is not legal.
    pub fn decode_choice(&self, label_index: usize) -> Option<Decoded> {
        self.shown.get(label_index).map(|(_, key)| Decoded::Option(key))
    }

    /// An amount answer read back to the measured quantity.
    pub fn decode_amount(&self, stated: i64) -> Option<Decoded> {
        let max = self.max?;
        if !(0..=max).contains(&stated) {
            return None;
        }
        Some(Decoded::Amount(if self.kept { max - stated } else { stated }))
    }
}

fn label<'a>(version: &'a Version, key: &str, alt: bool) -> Option<&'a str> {
    if alt {
        if let Some(l) = version.alt_labels.get(key) {
            return Some(l);
        }
    }
    version.labels.get(key).map(String::as_str)
}

/// Replaces every `{name}` in `template` with a fact or a label; an unknown name is an error.
fn fill(template: &str, facts: &[(String, String)], version: &Version, alt: bool) -> Result<String, String> {
    let mut out = String::with_capacity(template.len() + 16);
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let Some(close) = rest[open..].find('}') else {
            return Err(format!("unclosed `{{` in \"{template}\""));
        };
        let name = &rest[open + 1..open + close];
        let value = facts
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
            .or_else(|| label(version, name, alt))
            .ok_or_else(|| format!("`{{{name}}}` in \"{template}\" is neither a fact of this task nor a label"))?;
        out.push_str(value);
        rest = &rest[open + close + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// The facts of a history round: actions shown by their labels where they are options.
fn round_facts(round: &Round, version: &Version, alt: bool) -> Vec<(String, String)> {
    let shown = |action: &str| label(version, action, alt).map_or_else(|| action.to_string(), str::to_string);
    vec![
        ("round".into(), round.round.to_string()),
        ("own".into(), shown(&round.own)),
        ("other".into(), shown(&round.other)),
        ("own_payoff".into(), round.own_payoff.clone()),
        ("other_payoff".into(), round.other_payoff.clone()),
    ]
}

fn table(headers: &[String], rows: &[Vec<String>]) -> String {
    let mut out = format!("| {} |\n|{}\n", headers.join(" | "), "---|".repeat(headers.len()));
    for row in rows {
        out.push_str(&format!("| {} |\n", row.join(" | ")));
    }
    out.trim_end().to_string()
}

/// Renders `input` under `version` and `presentation`.
pub fn render(input: &Input, version: &Version, p: &Presentation) -> Result<Rendered, String> {
    let alt = p.alt_labels;
    let mut blocks: Vec<String> = Vec::new();
    if let Some(id) = &p.task_id {
        blocks.push(format!("Task ID: {id}"));
    }
    blocks.push(p.opening.clone().unwrap_or_else(|| version.opening.clone()));
    let sentences = version.text.iter().map(|s| fill(s, &input.facts, version, alt)).collect::<Result<Vec<_>, _>>()?;
    blocks.push(sentences.join(" "));
    if !input.history.is_empty() {
        let template = version.templates.get("round").ok_or("the version has no `round` template")?;
        if p.history_table {
            let rows: Vec<Vec<String>> = input
                .history
                .iter()
                .map(|r| round_facts(r, version, alt).into_iter().map(|(_, v)| v).collect())
                .collect();
            blocks.push(table(&version.table, &rows));
        } else {
            let lines = input
                .history
                .iter()
                .map(|r| fill(template, &round_facts(r, version, alt), version, alt))
                .collect::<Result<Vec<_>, _>>()?;
            blocks.push(lines.join(" "));
        }
    }
    let mut listed = input.listed.clone();
    if p.reversed {
        listed.reverse();
    }
    if !listed.is_empty() {
        let mut rows = Vec::new();
        for o in &listed {
            let template = version
                .templates
                .get(o.template)
                .ok_or_else(|| format!("the version has no `{}` template", o.template))?;
            let name =
                label(version, o.key, alt).ok_or_else(|| format!("the version has no label for option `{}`", o.key))?;
            rows.push(vec![name.to_string(), fill(template, &o.facts, version, alt)?]);
        }
        if p.table_layout {
            let headers = vec!["Option".to_string(), "Description".to_string()];
            blocks.push(table(&headers, &rows));
        } else {
            blocks.push(rows.iter().map(|r| format!("{}: {}", r[0], r[1])).collect::<Vec<_>>().join("\n"));
        }
    }
    blocks.push(fill(&version.question, &input.facts, version, alt)?);
    let field = p.answer_field.clone().unwrap_or_else(|| version.answer.field().to_string());
    let (shown, max, kept, instruction) = match (&input.answer, &version.answer) {
        (Answer::Amount { max }, AnswerWording::Amount { states, .. }) => {
            let range = if p.reversed { format!("from {max} down to 0") } else { format!("from 0 to {max}") };
            let text = format!(
                "Reply with only a JSON object of the form {{\"{field}\": N}}, where N is a whole number {range}."
            );
            (Vec::new(), Some(*max), *states == Stated::Kept, text)
        }
        (Answer::Options(keys), AnswerWording::Choice { .. }) => {
            let mut order: Vec<&'static str> = keys.clone();
            if p.reversed {
                order.reverse();
            }
            let shown: Vec<(String, &'static str)> = order
                .iter()
                .map(|k| {
                    label(version, k, alt)
                        .map(|l| (l.to_string(), *k))
                        .ok_or_else(|| format!("the version has no label for option `{k}`"))
                })
                .collect::<Result<_, _>>()?;
            let forms: Vec<String> = shown.iter().map(|(l, _)| format!("{{\"{field}\": \"{l}\"}}")).collect();
            let text = match forms.len() {
                2 => format!("Reply with only a JSON object: {} or {}.", forms[0], forms[1]),
                _ => {
                    let (last, rest) = forms.split_last().expect("options are not empty");
                    format!("Reply with only a JSON object: {}, or {}.", rest.join(", "), last)
                }
            };
            (shown, None, false, text)
        }
        _ => return Err("the version's answer format does not fit the task".into()),
    };
    blocks.push(instruction);
    let text = apply_layout(&blocks.join("\n\n"), p.layout);
    Ok(Rendered { text, field, shown, max, kept })
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::tasks::catalogue::inputs_at;
    use crate::tasks::version::{Judgement, Verdict, RULES};
    use crate::tasks::{Level, Task};

    fn version(answer: AnswerWording) -> Version {
        Version {
            id: "Q00".into(),
            opening: "This is a decision task.".into(),
            text: vec!["You have {total} credits.".into(), "Options are {cooperate} and {defect}.".into()],
            question: "What do you choose?".into(),
            answer,
            labels: BTreeMap::from([("cooperate".into(), "A".into()), ("defect".into(), "B".into())]),
            alt_labels: BTreeMap::from([("cooperate".into(), "J".into()), ("defect".into(), "K".into())]),
            templates: BTreeMap::new(),
            table: Vec::new(),
            eligibility: RULES
                .iter()
                .map(|r| Judgement { rule: r.to_string(), verdict: Verdict::Eligible, reason: "x".into() })
                .collect(),
        }
    }

    #[test]
    fn a_kept_amount_decodes_to_the_amount_given() {
        let input = &inputs_at(Task::Dictator, Level::Low)[0];
        let v = version(AnswerWording::Amount { field: "keep".into(), states: Stated::Kept });
        let r = render(input, &v, &Presentation::reference()).unwrap();
        assert!(r.text.contains("You have 100 credits."), "{}", r.text);
        assert!(r.text.ends_with("{\"keep\": N}, where N is a whole number from 0 to 100."), "{}", r.text);
        assert_eq!(r.decode_amount(70), Some(Decoded::Amount(30)));
        assert_eq!(r.decode_amount(101), None);
        let reversed = render(input, &v, &Presentation { reversed: true, ..Presentation::reference() }).unwrap();
        assert!(reversed.text.contains("from 100 down to 0"));
    }

    #[test]
    fn relabelled_and_reordered_choices_decode_to_the_same_action() {
        let input = &inputs_at(Task::PrisonersDilemma, Level::Middle)[0];
        let mut v = version(AnswerWording::Choice { field: "choice".into() });
        v.text = vec!["Temptation is {t}; options {cooperate} and {defect}.".into()];
        let p = Presentation {
            alt_labels: true,
            reversed: true,
            answer_field: Some("selection".into()),
            ..Presentation::reference()
        };
        let r = render(input, &v, &p).unwrap();
        assert!(r.text.contains("options J and K"), "{}", r.text);
        assert!(r.text.contains("{\"selection\": \"K\"} or {\"selection\": \"J\"}"), "{}", r.text);
        assert_eq!(r.decode_choice(0), Some(Decoded::Option("defect")));
        let inline =
            render(input, &v, &Presentation { layout: TextLayout::Inline, ..Presentation::reference() }).unwrap();
        assert!(!inline.text.contains('\n'));
    }

    #[test]
    fn an_unknown_placeholder_is_an_error_naming_it() {
        let input = &inputs_at(Task::Dictator, Level::Low)[0];
        let mut v = version(AnswerWording::Amount { field: "give".into(), states: Stated::Given });
        v.text.push("You owe {debt}.".into());
        let e = render(input, &v, &Presentation::reference()).unwrap_err();
        assert!(e.contains("{debt}"), "{e}");
    }
}
