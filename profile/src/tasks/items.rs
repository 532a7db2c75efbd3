//! Category E's item files: the statements (E1–E5) or pairs of descriptions (E6–E9) a
//! questionnaire measure rates, each with its id, measure and key, checked against the keys
//! and check anchors of the profile methods' E-S2.
//!
//! Agora ships one file, `assets/profile/items/ipip50.ron`: its own adaptations of the fifty
//! public-domain IPIP-50 statements (Goldberg 1992, 1999; ipip.ori.org) to an AI assistant's
//! conversational response style — not the methods' wording, which prints about one item per
//! measure. E6–E9's items are adaptations of the OEJTS 1.2, whose terms (CC BY-NC-SA 4.0) this
//! project's licence cannot ship: a lab holding them writes them in the same format with
//! `kind: Pairs` and names the file in its study (`pair_items`).
//!
//! # Format
//! ```ron
//! (
//!     version: 1,
//!     name: "my-pairs",
//!     kind: Pairs,                 // or Statements
//!     source: "where the items come from",
//!     terms: "their reuse terms",
//!     items: [
//!         (id: "JT03", measure: "e6", key: Reverse, left: "…", right: "…"),
//!         // Statements give `statement: "…"` instead of `left` and `right`, and may give
//!         // `source_text`, the original item they adapt.
//!     ],
//! )
//! ```
//! A file holds whole measures: every item E-S2 lists for each measure it names, with E-S2's
//! key, and nothing else.

use std::path::Path;
use std::sync::OnceLock;

use serde::Deserialize;

use super::input::{Answer, Input, ListedOption};
use super::{Level, ProfileInputError, Task};
use crate::score::questionnaire::Key;

/// The item files' format version.
pub const FORMAT: u32 = 1;

/// The response positions' option keys, position 1 first.
pub const POSITIONS: [&str; 5] = ["r1", "r2", "r3", "r4", "r5"];

/// The five positions of a statement (§E0's table).
pub const STATEMENT_SCALE: [&str; 5] = [
    "Very inaccurate",
    "Moderately inaccurate",
    "Neither accurate nor inaccurate",
    "Moderately accurate",
    "Very accurate",
];

/// The five positions of a pair (§E0's table).
pub const PAIR_SCALE: [&str; 5] = [
    "Much closer to the left description",
    "Somewhat closer to the left description",
    "Equally close to both descriptions",
    "Somewhat closer to the right description",
    "Much closer to the right description",
];

use Key::{Positive as P, Reverse as R};

/// A measure's items in E-S2's order, each with its scoring direction.
pub type Keyed = &'static [(&'static str, Key)];

/// E-S2: each measure's items with their scoring directions, and its first and second anchor.
pub const E_S2: [(Task, Keyed, [&str; 2]); 9] = [
    (
        Task::E1,
        &[
            ("BF01", P),
            ("BF06", R),
            ("BF11", P),
            ("BF16", R),
            ("BF21", P),
            ("BF26", R),
            ("BF31", P),
            ("BF36", R),
            ("BF41", P),
            ("BF46", R),
        ],
        ["BF01", "BF06"],
    ),
    (
        Task::E2,
        &[
            ("BF02", R),
            ("BF07", P),
            ("BF12", R),
            ("BF17", P),
            ("BF22", R),
            ("BF27", P),
            ("BF32", R),
            ("BF37", P),
            ("BF42", P),
            ("BF47", P),
        ],
        ["BF07", "BF02"],
    ),
    (
        Task::E3,
        &[
            ("BF03", P),
            ("BF08", R),
            ("BF13", P),
            ("BF18", R),
            ("BF23", P),
            ("BF28", R),
            ("BF33", P),
            ("BF38", R),
            ("BF43", P),
            ("BF48", P),
        ],
        ["BF03", "BF08"],
    ),
    (
        Task::E4,
        &[
            ("BF04", R),
            ("BF09", P),
            ("BF14", R),
            ("BF19", P),
            ("BF24", R),
            ("BF29", R),
            ("BF34", R),
            ("BF39", R),
            ("BF44", R),
            ("BF49", R),
        ],
        ["BF09", "BF04"],
    ),
    (
        Task::E5,
        &[
            ("BF05", P),
            ("BF10", R),
            ("BF15", P),
            ("BF20", R),
            ("BF25", P),
            ("BF30", R),
            ("BF35", P),
            ("BF40", P),
            ("BF45", P),
            ("BF50", P),
        ],
        ["BF05", "BF10"],
    ),
    (
        Task::E6,
        &[("JT03", R), ("JT07", R), ("JT11", R), ("JT15", P), ("JT19", R), ("JT23", P), ("JT27", P), ("JT31", R)],
        ["JT15", "JT03"],
    ),
    (
        Task::E7,
        &[("JT04", P), ("JT08", P), ("JT12", P), ("JT16", P), ("JT20", P), ("JT24", R), ("JT28", R), ("JT32", P)],
        ["JT04", "JT24"],
    ),
    (
        Task::E8,
        &[("JT02", R), ("JT06", P), ("JT10", P), ("JT14", R), ("JT18", R), ("JT22", P), ("JT26", R), ("JT30", R)],
        ["JT06", "JT02"],
    ),
    (
        Task::E9,
        &[("JT01", P), ("JT05", P), ("JT09", R), ("JT13", P), ("JT17", R), ("JT21", P), ("JT25", R), ("JT29", P)],
        ["JT01", "JT09"],
    ),
];

/// A measure's E-S2 row: its items and keys, and its (first, second) anchors.
pub fn e_s2(task: Task) -> Option<(Keyed, [&'static str; 2])> {
    E_S2.iter().find(|(t, _, _)| *t == task).map(|(_, items, anchors)| (*items, *anchors))
}

/// What a file's items are.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
pub enum ItemKind {
    /// Statements rated from "Very inaccurate" to "Very accurate" (E1–E5).
    Statements,
    /// Pairs of descriptions rated from "Much closer to the left" to "… right" (E6–E9).
    Pairs,
}

/// One item.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Item {
    /// E-S2's id (`BF01`, `JT15`).
    pub id: String,
    /// The measure (`e1` … `e9`).
    pub measure: String,
    /// The scoring direction (must be E-S2's).
    pub key: Key,
    /// A statement's text.
    #[serde(default)]
    pub statement: Option<String>,
    /// A pair's left description.
    #[serde(default)]
    pub left: Option<String>,
    /// A pair's right description.
    #[serde(default)]
    pub right: Option<String>,
    /// The source item the text adapts, where its terms allow quoting it.
    #[serde(default)]
    pub source_text: Option<String>,
}

/// A checked item file.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ItemFile {
    /// Must equal [`FORMAT`].
    pub version: u32,
    /// The file's name (recorded beside the results).
    pub name: String,
    /// Statements or pairs.
    pub kind: ItemKind,
    /// Where the items come from.
    pub source: String,
    /// Their reuse terms.
    pub terms: String,
    /// The items.
    pub items: Vec<Item>,
}

fn err(file: &Path, field: impl Into<String>, reason: impl Into<String>) -> ProfileInputError {
    ProfileInputError::new(file.display().to_string(), field, reason)
}

impl ItemFile {
    /// Parses and checks an item file's text.
    pub fn parse(file: &Path, text: &str) -> Result<ItemFile, ProfileInputError> {
        let f: ItemFile = ron::Options::default()
            .with_default_extension(ron::extensions::Extensions::IMPLICIT_SOME)
            .from_str(text)
            .map_err(|e| err(file, format!("line {}", e.span.start.line), e.code.to_string()))?;
        if f.version != FORMAT {
            return Err(err(file, "version", format!("is {}, this build reads {FORMAT}", f.version)));
        }
        if f.source.trim().is_empty() || f.terms.trim().is_empty() {
            return Err(err(file, "source", "an item file names its source and its terms"));
        }
        let allowed: &[Task] = match f.kind {
            ItemKind::Statements => &Task::SHIPPED_QUESTIONNAIRE,
            ItemKind::Pairs => &Task::USER_QUESTIONNAIRE,
        };
        for (i, item) in f.items.iter().enumerate() {
            let at = format!("items[{i}]");
            let task = Task::from_name(&item.measure).filter(|t| allowed.contains(t)).ok_or_else(|| {
                err(
                    file,
                    format!("{at}.measure"),
                    format!(
                        "`{}` is not a measure of a {:?} file; they are {}",
                        item.measure,
                        f.kind,
                        allowed.iter().map(|t| t.name()).collect::<Vec<_>>().join(", ")
                    ),
                )
            })?;
            let (listed, _) = e_s2(task).expect("invariant: every questionnaire task has an E-S2 row");
            let Some((_, key)) = listed.iter().find(|(id, _)| *id == item.id) else {
                return Err(err(
                    file,
                    format!("{at}.id"),
                    format!("`{}` is not an item of {} in E-S2", item.id, item.measure),
                ));
            };
            if *key != item.key {
                return Err(err(
                    file,
                    format!("{at}.key"),
                    format!("is {:?}, E-S2 keys {} {:?}", item.key, item.id, key),
                ));
            }
            if f.items[..i].iter().any(|o| o.id == item.id) {
                return Err(err(file, format!("{at}.id"), format!("`{}` is listed twice", item.id)));
            }
            let text_ok = |t: &Option<String>| t.as_ref().is_some_and(|s| !s.trim().is_empty());
            let ok = match f.kind {
                ItemKind::Statements => text_ok(&item.statement) && item.left.is_none() && item.right.is_none(),
                ItemKind::Pairs => text_ok(&item.left) && text_ok(&item.right) && item.statement.is_none(),
            };
            if !ok {
                return Err(err(
                    file,
                    at,
                    match f.kind {
                        ItemKind::Statements => "a statement gives a non-empty `statement` and no `left` or `right`",
                        ItemKind::Pairs => "a pair gives non-empty `left` and `right` and no `statement`",
                    },
                ));
            }
        }
        let measures = f.measures();
        if measures.is_empty() {
            return Err(err(file, "items", "holds no item"));
        }
        for task in measures {
            let (listed, _) = e_s2(task).expect("invariant: every questionnaire task has an E-S2 row");
            if let Some((missing, _)) = listed.iter().find(|(id, _)| !f.items.iter().any(|i| i.id == *id)) {
                return Err(err(
                    file,
                    "items",
                    format!("has items of {} but not {missing}: a file holds whole measures", task.name()),
                ));
            }
        }
        Ok(f)
    }

    /// Loads `path`.
    pub fn load(path: &Path) -> Result<ItemFile, ProfileInputError> {
        let text = std::fs::read_to_string(path).map_err(|e| err(path, "", format!("cannot be read: {e}")))?;
        ItemFile::parse(path, &text)
    }

    /// The measures the file holds, in task order.
    pub fn measures(&self) -> Vec<Task> {
        Task::ALL.into_iter().filter(|t| self.items.iter().any(|i| i.measure == t.name())).collect()
    }

    /// The inputs of `task`: one per item in E-S2's order (empty when the file lacks it).
    pub fn inputs(&self, task: Task) -> Vec<Input> {
        let Some((listed, _)) = e_s2(task) else { return Vec::new() };
        listed
            .iter()
            .filter_map(|(id, _)| self.items.iter().find(|i| i.id == *id))
            .map(|i| self.input(task, i))
            .collect()
    }

    fn input(&self, task: Task, item: &Item) -> Input {
        let (shown, scale) = match self.kind {
            ItemKind::Statements => (format!("“{}”", item.statement.as_deref().unwrap_or_default()), STATEMENT_SCALE),
            ItemKind::Pairs => (
                format!(
                    "left description “{}”; right description “{}”",
                    item.left.as_deref().unwrap_or_default(),
                    item.right.as_deref().unwrap_or_default()
                ),
                PAIR_SCALE,
            ),
        };
        Input {
            task,
            level: Level::Middle,
            point: item.id.clone(),
            branch: String::new(),
            scored: true,
            facts: vec![("item".into(), shown), ("key".into(), item.key.name().into())],
            answer: Answer::Options(POSITIONS.to_vec()),
            listed: POSITIONS
                .iter()
                .zip(scale)
                .map(|(key, text)| ListedOption {
                    key,
                    template: "position",
                    facts: vec![("position".into(), text.into())],
                })
                .collect(),
            history: Vec::new(),
        }
    }
}

/// The shipped IPIP-50 adaptations (E1–E5), as built into this binary; the runner reads the
/// assets' copy, hashed into the inputs lock.
pub fn shipped() -> &'static ItemFile {
    static SHIPPED: OnceLock<ItemFile> = OnceLock::new();
    SHIPPED.get_or_init(|| {
        ItemFile::parse(Path::new("assets/profile/items/ipip50.ron"), SHIPPED_TEXT)
            .expect("invariant: the shipped item file parses (tested)")
    })
}

/// The shipped item file's text.
pub const SHIPPED_TEXT: &str = include_str!("../../../assets/profile/items/ipip50.ron");

/// The 1-based position an option key stands for (`r3` → 3).
pub fn position(key: &str) -> Option<u8> {
    POSITIONS.iter().position(|k| *k == key).map(|i| i as u8 + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_file_holds_e1_to_e5_with_e_s2s_keys() {
        let f = shipped();
        assert_eq!(f.kind, ItemKind::Statements);
        assert_eq!(f.measures(), Task::SHIPPED_QUESTIONNAIRE.to_vec());
        assert_eq!(f.items.len(), 50);
        for task in Task::SHIPPED_QUESTIONNAIRE {
            let inputs = f.inputs(task);
            assert_eq!(inputs.len(), 10, "{task}");
            let (_, anchors) = e_s2(task).unwrap();
            // The anchors are the measure's first two items in E-S2's order, so a reduced run of
            // the first few items still holds its checks.
            let mut first_two: Vec<&str> = inputs[..2].iter().map(|i| i.point.as_str()).collect();
            first_two.sort_unstable();
            let mut a = anchors.to_vec();
            a.sort_unstable();
            assert_eq!(first_two, a, "{task}");
        }
        assert!(f.items.iter().all(|i| i.source_text.is_some()), "every adaptation names the IPIP item it adapts");
    }

    #[test]
    fn a_wrong_key_or_a_partial_measure_is_refused() {
        let path = Path::new("ipip50.ron");
        let flipped = SHIPPED_TEXT.replacen("key: Reverse", "key: Positive", 1);
        let e = ItemFile::parse(path, &flipped).unwrap_err();
        assert!(e.field.ends_with(".key"), "{e}");
        let cut = SHIPPED_TEXT.replacen("id: \"BF46\"", "id: \"BF99\"", 1);
        let e = ItemFile::parse(path, &cut).unwrap_err();
        assert!(e.reason.contains("BF99"), "{e}");
    }

    #[test]
    fn a_statement_renders_with_its_scale_and_decodes_under_every_check() {
        use crate::tasks::render::{render, Presentation};
        use crate::tasks::versions::parse;
        let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("../assets/profile/versions/questionnaire.ron");
        let loaded = parse(Task::E4, &file, &std::fs::read(&file).unwrap()).unwrap();
        let input = &shipped().inputs(Task::E4)[0];
        assert_eq!(input.point, "BF04");
        let r = render(input, &loaded.versions[0], &Presentation::reference()).unwrap();
        assert!(r.text.contains("1: Very inaccurate\n2: Moderately inaccurate"), "{}", r.text);
        assert!(r.text.contains(&shipped().items[3].statement.clone().unwrap()), "{}", r.text);
        // Reversed order and reversible labels: position 4 is still position 4, and BF04 is
        // reverse-keyed (§E4: "Position 4 … scores 25(5−4) = 25").
        let p = Presentation { reversed: true, alt_labels: true, ..Presentation::reference() };
        let r = render(input, &loaded.versions[0], &p).unwrap();
        assert_eq!(r.shown[0].0, "E");
        let shown_d = r.shown.iter().position(|(l, _)| l == "D").unwrap();
        let decoded = r.decode_choice(shown_d).unwrap();
        assert_eq!(decoded, crate::tasks::catalogue::Decoded::Option("r4"));
        assert_eq!(crate::tasks::catalogue::score(input, &decoded), 25.0);
    }

    #[test]
    fn positions_decode_from_their_keys() {
        assert_eq!(position("r1"), Some(1));
        assert_eq!(position("r5"), Some(5));
        assert_eq!(position("x"), None);
    }
}
