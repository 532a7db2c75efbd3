//! The session's own tables in the store, beside the runs: participants (opaque id, the code's
//! hash, the pool id's keyed hash, consent, stage, seat, payoff, completion code), every answer
//! as it is given, every decision that timed out with the stand-in's play, and the societies
//! that have started. A restart reads them back to replay each unfinished society exactly as
//! its participants saw it. No name, address or pool id is ever stored; deleting a
//! participant's rows is described in the docs chapter "Sessions with people". Their layout,
//! version and every read and write are `agora_records::families::serve`'s.

use rusqlite::Connection;

pub use agora_records::families::serve::{
    answer, consent, decode, exported, insert, load_outcomes, load_participants, load_started, now, payoffs,
    set_code_hash, started, timeout, update, DecisionKey, Exported, PostedDecision, Restored,
};

/// A connection for the session's writes, made with the tables, from the store opened (and
/// checked) by [`agora_engine::Store::open`]: the store file is opened through SQLite alone.
pub fn open(store: &agora_engine::Store) -> Result<Connection, crate::ServeError> {
    let conn = store.connect()?;
    agora_records::families::ensure(&conn, &agora_records::families::SERVE)?;
    Ok(conn)
}
