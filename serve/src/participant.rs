//! A participant and the stage they are at: rows of the session's tables, kept by
//! `agora_records::families::serve`.

pub use agora_records::families::serve::{Participant, Stage};
