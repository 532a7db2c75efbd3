//! What became of a decision posted to a participant: their answer, or the stand-in's play
//! when the decision time ran out. The desk hands it to the seat, and the store keeps it
//! (`agora_records::families::serve`) so that a restart replays the run exactly as its
//! participants saw it.

pub use agora_records::families::serve::{Outcome, Submitted, TimedOut};
