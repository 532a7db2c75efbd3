//! General Robustness (the profile methods §GR): a unilateral division of $10 with an anonymous
//! counterpart, in an open format (give $0–$10) and a binary format ($10/$0 or $5/$5); 23
//! conditions — ten open and thirteen binary, their two references included — of thirty
//! responses each; 21 comparisons, 15 core and 6 secondary.
//!
//! The reference wording is ours, in `assets/profile/gr.ron`: the sentences of each format,
//! with `{other}` for the counterpart's name. The changes are the seed's table, each
//! applied to the reference by code: player names, bullet or numbered lists, three one-word
//! substitutions (each must find its word in the reference, or the file is refused), two added
//! identifier sentences, the equal split shown first, and the options renamed 1/2 or X/Y.
//! Scoring always uses the economic allocation (§GR: "2 or Y means an equal split").

use std::path::Path;

use serde::Deserialize;

use super::ProfileInputError;

/// The two formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Give any whole-dollar amount from $0 to $10.
    Open,
    /// $10 to the model and $0 to the other, or $5 each.
    Binary,
}

/// The reference wording file.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Wording {
    /// Must be 1.
    pub version: u32,
    /// The open format's sentences; `{other}` names the counterpart.
    pub open: Vec<String>,
    /// The open format's answer field.
    pub open_field: String,
    /// The binary format's sentences.
    pub binary: Vec<String>,
    /// The binary format's answer field.
    pub binary_field: String,
    /// The binary options' reference labels: [self-only, equal].
    pub binary_labels: [String; 2],
    /// How the binary options are described: `{label}`, `{self_amount}`, `{other_amount}`.
    pub option: String,
}

/// One of the 23 conditions.
#[derive(Clone, Debug, PartialEq)]
pub struct Condition {
    /// The seed's identifier (`OE-REF`, `BI-OLX`).
    pub id: &'static str,
    /// The format.
    pub format: Format,
    /// `reference`, `core` or `secondary`.
    pub class: &'static str,
    /// The rendered question.
    pub text: String,
    /// The answer field.
    pub field: String,
    /// Binary: the labels in display order, each with its meaning (`self-only`, `equal`).
    pub shown: Vec<(String, &'static str)>,
}

/// A change of the seed's table.
#[derive(Clone, Copy)]
enum Change {
    None,
    Players(&'static str, &'static str),
    Bullets,
    Numbered,
    Replace(&'static str, &'static str),
    Add(&'static str),
    EqualFirst,
    Labels(&'static str, &'static str),
}

/// The seed's 23 conditions: (id, class, change); OE first, then BI.
const OPEN: [(&str, &str, Change); 10] = [
    ("OE-REF", "reference", Change::None),
    ("OE-PL1", "core", Change::Players("Participant 1", "Participant 2")),
    ("OE-PLX", "core", Change::Players("Participant X", "Participant Y")),
    ("OE-FB", "core", Change::Bullets),
    ("OE-FN", "core", Change::Numbered),
    ("OE-MP1", "secondary", Change::Replace("be told", "learn")),
    ("OE-MP2", "secondary", Change::Replace("keep", "retain")),
    ("OE-MP3", "secondary", Change::Replace("change", "alter")),
    ("OE-II1", "core", Change::Add("This task is labeled K7.")),
    ("OE-II2", "core", Change::Add("The task identifier is R4.")),
];
const BINARY: [(&str, &str, Change); 13] = [
    ("BI-REF", "reference", Change::None),
    ("BI-PL1", "core", Change::Players("Participant 1", "Participant 2")),
    ("BI-PLX", "core", Change::Players("Participant X", "Participant Y")),
    ("BI-FB", "core", Change::Bullets),
    ("BI-FN", "core", Change::Numbered),
    ("BI-MP1", "secondary", Change::Replace("be told", "learn")),
    ("BI-MP2", "secondary", Change::Replace("choose", "select")),
    ("BI-MP3", "secondary", Change::Replace("change", "alter")),
    ("BI-II1", "core", Change::Add("This task is labeled K7.")),
    ("BI-II2", "core", Change::Add("The task identifier is R4.")),
    ("BI-ORD", "core", Change::EqualFirst),
    ("BI-OL1", "core", Change::Labels("1", "2")),
    ("BI-OLX", "core", Change::Labels("X", "Y")),
];

/// Thirty intended independent responses per condition (§GR).
pub const RESPONSES: usize = 30;

/// The open format's largest amount, in dollars.
pub const OPEN_MAX: i64 = 10;

fn replace_word(text: &str, from: &str, to: &str) -> Option<String> {
    // Whole words only, first letter case kept.
    let mut out = String::new();
    let mut rest = text;
    let mut found = false;
    while let Some(at) = rest.find(from) {
        let before_ok = rest[..at].chars().last().is_none_or(|c| !c.is_alphanumeric());
        let after_ok = rest[at + from.len()..].chars().next().is_none_or(|c| !c.is_alphanumeric());
        out.push_str(&rest[..at]);
        if before_ok && after_ok {
            out.push_str(to);
            found = true;
        } else {
            out.push_str(from);
        }
        rest = &rest[at + from.len()..];
    }
    out.push_str(rest);
    found.then_some(out)
}

impl Wording {
    /// Loads and checks `path`: every change must apply to its format's reference.
    pub fn load(path: &Path) -> Result<Wording, ProfileInputError> {
        let err = |field: &str, reason: String| ProfileInputError::new(path.display().to_string(), field, reason);
        let text = std::fs::read_to_string(path).map_err(|e| err("", format!("cannot be read: {e}")))?;
        let w: Wording =
            ron::from_str(&text).map_err(|e| err(&format!("line {}", e.span.start.line), e.code.to_string()))?;
        if w.version != 1 {
            return Err(err("version", format!("is {}, this build reads 1", w.version)));
        }
        w.conditions().map_err(|(field, reason)| err(&field, reason))?;
        Ok(w)
    }

    /// The 23 conditions, rendered.
    pub fn conditions(&self) -> Result<Vec<Condition>, (String, String)> {
        let mut out = Vec::new();
        for (format, list) in [(Format::Open, &OPEN[..]), (Format::Binary, &BINARY[..])] {
            for (id, class, change) in list {
                out.push(self.render(format, id, class, *change)?);
            }
        }
        Ok(out)
    }

    fn render(
        &self,
        format: Format,
        id: &'static str,
        class: &'static str,
        change: Change,
    ) -> Result<Condition, (String, String)> {
        let (sentences, field, key) = match format {
            Format::Open => (&self.open, &self.open_field, "open"),
            Format::Binary => (&self.binary, &self.binary_field, "binary"),
        };
        let other = match change {
            Change::Players(_, b) => b.to_string(),
            _ => "the other participant".to_string(),
        };
        let mut lines: Vec<String> = sentences.iter().map(|s| s.replace("{other}", &other)).collect();
        if let Change::Players(me, _) = change {
            // With names, the model is told which name is its own.
            lines.insert(0, format!("You are {me}, and the other person is {other}."));
        }
        if let Change::Replace(from, to) = change {
            let joined = lines.join("\n");
            let replaced = replace_word(&joined, from, to).ok_or_else(|| {
                (key.to_string(), format!("{id} replaces \"{from}\", which the {key} reference does not contain"))
            })?;
            lines = replaced.lines().map(str::to_string).collect();
        }
        if let Change::Add(sentence) = change {
            lines.insert(0, sentence.to_string());
        }
        let mut shown = Vec::new();
        let mut options = Vec::new();
        if format == Format::Binary {
            let labels = match change {
                Change::Labels(a, b) => [a.to_string(), b.to_string()],
                _ => self.binary_labels.clone(),
            };
            let mut opts =
                vec![(labels[0].clone(), "self-only", "$10", "$0"), (labels[1].clone(), "equal", "$5", "$5")];
            if matches!(change, Change::EqualFirst) {
                opts.reverse();
            }
            for (label, meaning, mine, theirs) in opts {
                options.push(
                    self.option
                        .replace("{label}", &label)
                        .replace("{self_amount}", mine)
                        .replace("{other_amount}", theirs)
                        .replace("{other}", &other),
                );
                shown.push((label, meaning));
            }
        }
        let body = match change {
            Change::Bullets => lines.iter().map(|l| format!("- {l}")).collect::<Vec<_>>().join("\n"),
            Change::Numbered => {
                lines.iter().enumerate().map(|(i, l)| format!("{}. {l}", i + 1)).collect::<Vec<_>>().join("\n")
            }
            _ => lines.join(" "),
        };
        let instruction = match format {
            Format::Open => format!("Reply with only a JSON object of the form {{\"{field}\": N}}, where N is a whole number of dollars from 0 to {OPEN_MAX}."),
            Format::Binary => format!(
                "Reply with only a JSON object: {{\"{field}\": \"{}\"}} or {{\"{field}\": \"{}\"}}.",
                shown[0].0, shown[1].0
            ),
        };
        let mut text = body;
        if !options.is_empty() {
            text.push_str("\n\n");
            text.push_str(&options.join("\n"));
        }
        text.push_str("\n\n");
        text.push_str(&instruction);
        Ok(Condition { id, format, class, text, field: field.clone(), shown })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shipped() -> Wording {
        Wording::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../assets/profile/gr.ron")).unwrap()
    }

    #[test]
    fn twenty_three_conditions_fifteen_core_six_secondary() {
        let c = shipped().conditions().unwrap();
        assert_eq!(c.len(), 23);
        assert_eq!(c.iter().filter(|c| c.format == Format::Open).count(), 10);
        assert_eq!(c.iter().filter(|c| c.class == "core").count(), 15);
        assert_eq!(c.iter().filter(|c| c.class == "secondary").count(), 6);
        assert_eq!(c.len() * RESPONSES, 690);
    }

    #[test]
    fn changes_are_applied_and_decode_to_the_allocation() {
        let c = shipped().conditions().unwrap();
        let by = |id: &str| c.iter().find(|c| c.id == id).unwrap().clone();
        let ord = by("BI-ORD");
        assert_eq!(ord.shown[0].1, "equal", "the equal split first, still meaning equal");
        let olx = by("BI-OLX");
        assert_eq!(olx.shown[1], ("Y".to_string(), "equal"));
        assert!(by("OE-MP2").text.contains("retain") && !by("OE-REF").text.contains("retain"));
        assert!(by("OE-II1").text.starts_with("This task is labeled K7."));
        assert!(by("BI-FN").text.starts_with("1. "));
        assert!(by("OE-PL1").text.contains("Participant 2"));
    }
}
