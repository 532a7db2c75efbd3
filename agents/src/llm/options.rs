//! What a cell can change about a prompt, as data: the presentation choices and the prompt
//! options of one run. Plain data, available without the `llm` feature, so that run
//! specifications and cells can name them.

use serde::{Deserialize, Serialize};

/// Declares a presentation choice: a unit enum written in study and cell files, and in run
/// specifications, as its kebab-case name (`PersonaFormat("bullets")`).
macro_rules! presentation_enum {
    ($(#[doc = $doc:literal])* $name:ident { $($(#[$vmeta:meta])* $variant:ident = $text:literal),+ $(,)? }) => {
        $(#[doc = $doc])*
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
        pub enum $name {
            $($(#[$vmeta])* $variant,)+
        }

        impl $name {
            /// Every value, the baseline first.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The name written in files.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text,)+
                }
            }
        }

        impl std::str::FromStr for $name {
            type Err = String;
            fn from_str(s: &str) -> Result<Self, String> {
                $name::ALL.iter().copied().find(|v| v.as_str() == s).ok_or_else(|| {
                    let names: Vec<&str> = $name::ALL.iter().map(|v| v.as_str()).collect();
                    format!("`{s}`: expected one of {}", names.join(", "))
                })
            }
        }

        impl Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        /// A string, one of the names written in files (what the hand-written `Deserialize`
        /// accepts).
        impl schemars::JsonSchema for $name {
            fn schema_name() -> std::borrow::Cow<'static, str> {
                stringify!($name).into()
            }

            fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
                let doc: &[&str] = &[$($doc),*];
                let names: Vec<&str> = $name::ALL.iter().map(|v| v.as_str()).collect();
                schemars::json_schema!({
                    "description": doc.iter().map(|l| l.trim()).collect::<Vec<_>>().join(" "),
                    "type": "string",
                    "enum": names,
                    "default": $name::default().as_str(),
                })
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let text = String::deserialize(d)?;
                text.parse().map_err(serde::de::Error::custom)
            }
        }
    };
}

presentation_enum! {
    /// Persona layout (representation level).
    PersonaFormat {
        /// One sentence (the baseline).
        #[default]
        Sentence = "sentence",
        /// A bulleted list.
        Bullets = "bullets",
        /// A two-column table.
        Table = "table",
    }
}

presentation_enum! {
    /// Persona content (design level).
    PersonaContent {
        /// An adult taking part in a study (the baseline).
        #[default]
        Plain = "plain",
        /// Cares only about its own earnings.
        SelfInterested = "self-interested",
        /// Cares about the others' earnings as much as its own.
        Prosocial = "prosocial",
    }
}

presentation_enum! {
    /// History layout (representation level).
    HistoryFormat {
        /// A table without summary statistics (the baseline).
        #[default]
        Table = "table",
        /// Narrative prose.
        Narrative = "narrative",
        /// The table plus summary statistics the history already contains.
        Summary = "summary",
    }
}

presentation_enum! {
    /// Text layout (presentation check).
    Layout {
        /// As the templates write it (the baseline).
        #[default]
        Default = "default",
        /// Everything on one line.
        Inline = "inline",
        /// One sentence per line.
        SentencePerLine = "sentence-per-line",
    }
}

presentation_enum! {
    /// Evaluative framing of the two actions (design level).
    Framing {
        /// No framing (the baseline).
        #[default]
        Neutral = "neutral",
        /// The actions in moral terms.
        Moral = "moral",
        /// The actions in terms of risk.
        Risk = "risk",
    }
}

/// Everything a cell can change about a prompt. The default is the canonical baseline: plain
/// persona as a sentence, neutral content and framing, history as a table without summary
/// statistics, default action order, letter agent names.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PromptOptions {
    /// How the persona is laid out.
    pub persona_format: PersonaFormat,
    /// What the persona says the agent cares about.
    pub persona_content: PersonaContent,
    /// How the history of past rounds is laid out.
    pub history_format: HistoryFormat,
    /// Whether the action labels are listed in reverse order.
    pub reversed_actions: bool,
    /// Whether agents are called by first names instead of letters.
    pub named_agents: bool,
    /// The JSON field the model is asked to put its answer in.
    pub answer_field: String,
    /// How the text of both messages is broken into lines.
    pub layout: Layout,
    /// A task identifier written at the top of the system message, if any.
    pub task_id: Option<String>,
    /// The opening sentence of the system message; `None` uses the default opening.
    pub opening: Option<String>,
    /// The evaluative framing of the actions.
    pub framing: Framing,
    /// Whether the model is asked to write its reasoning before the answer.
    pub step_by_step: bool,
    /// Sampling temperature; `None` uses the model's declared temperature.
    pub temperature: Option<f64>,
    /// Whether the system message names the paradigm (the priming cell).
    pub priming: bool,
    /// Whether the seat is asked once, outside the behavioural session, which experiment the
    /// rules describe: the probe cell's run is a probe session that plays no game, and the seat
    /// makes no behavioural call in it.
    pub recognition_probe: bool,
}

impl Default for PromptOptions {
    fn default() -> Self {
        PromptOptions {
            persona_format: PersonaFormat::Sentence,
            persona_content: PersonaContent::Plain,
            history_format: HistoryFormat::Table,
            reversed_actions: false,
            named_agents: false,
            answer_field: "action".into(),
            layout: Layout::Default,
            task_id: None,
            opening: None,
            framing: Framing::Neutral,
            step_by_step: false,
            temperature: None,
            priming: false,
            recognition_probe: false,
        }
    }
}
