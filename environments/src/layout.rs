//! How text is broken into lines: the society prompts' layout cells and the behavioural
//! profile's layout checks share this one function.

/// How text is broken into lines: the society prompts' layout cells and the profile's layout
/// checks share this one function.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum TextLayout {
    /// As written.
    #[default]
    AsWritten,
    /// Everything on one line.
    Inline,
    /// One sentence per line.
    SentencePerLine,
}

/// Applies a layout to rendered text.
pub fn apply_layout(text: &str, layout: TextLayout) -> String {
    match layout {
        TextLayout::AsWritten => text.trim_end().to_string(),
        TextLayout::Inline => text.split_whitespace().collect::<Vec<_>>().join(" "),
        TextLayout::SentencePerLine => {
            let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
            flat.replace(". ", ".\n").replace("? ", "?\n").replace(": |", ":\n|")
        }
    }
}
