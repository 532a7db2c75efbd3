//! The reply cache kept in the store file.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use rusqlite::{params, Connection, OpenFlags};

use crate::error::StoreError;

/// The reply cache kept in the store file, on its own connection so that calls in flight can
/// read and write it while the runner commits runs.
///
/// Replies are written in batches: a reply put is held in memory (and served to `get` from
/// there) until [`FLUSH_AT`] replies are waiting or the oldest has waited [`FLUSH_AFTER`], and
/// then they are written in one transaction; the rest are written when the cache is dropped or
/// [`SqliteCache::flush`]ed. A process killed outright loses at most those waiting replies,
/// which a resumed study asks again. One transaction per reply cost more than everything else
/// the engine does for a decision (a WAL frame per page touched, per reply).
pub struct SqliteCache {
    conn: std::sync::Mutex<Connection>,
    pending: std::sync::Mutex<Pending>,
    /// The first 64 bits of every key in the table, so that a miss (every call of a fresh
    /// study) is answered without a query; `None` where a key is not the usual hex digest.
    known: std::sync::Mutex<Option<HashSet<u64>>>,
}

/// The first 64 bits of a hex cache key.
fn key_prefix(key: &str) -> Option<u64> {
    key.get(..16).and_then(|h| u64::from_str_radix(h, 16).ok())
}

/// Replies put but not yet written.
#[derive(Default)]
struct Pending {
    replies: HashMap<String, (String, String)>,
    order: Vec<String>,
    since: Option<std::time::Instant>,
}

/// Waiting replies that start a write. The cache's keys are hashes, so every reply lands on a
/// random page of the key index, and a write costs about one page per reply it holds until
/// the batch is large beside the index: batches of 256 wrote several kilobytes of log a reply.
pub const FLUSH_AT: usize = 2048;
/// The longest a reply waits before it is written (checked when the next one is put).
pub const FLUSH_AFTER: std::time::Duration = std::time::Duration::from_millis(1000);

impl SqliteCache {
    /// Opens the cache of an existing store (open the [`Store`] first: it checks the file).
    pub fn open(path: &Path) -> Result<SqliteCache, StoreError> {
        let sql = |source| StoreError::Sqlite { path: path.to_path_buf(), source };
        let conn = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_WRITE).map_err(sql)?;
        conn.busy_timeout(std::time::Duration::from_secs(60)).map_err(sql)?;
        // As the store's own connection: in WAL mode a commit appends to the log without an
        // fsync (the log is synced at checkpoints), so a batch written costs no disk flush.
        conn.pragma_update(None, "synchronous", "NORMAL").map_err(sql)?;
        let known = {
            let mut st = conn.prepare("SELECT key FROM llm_cache").map_err(sql)?;
            let keys = st.query_map([], |r| r.get::<_, String>(0)).map_err(sql)?;
            let mut known = Some(HashSet::new());
            for key in keys {
                match (key_prefix(&key.map_err(sql)?), known.as_mut()) {
                    (Some(k), Some(set)) => {
                        set.insert(k);
                    }
                    _ => known = None,
                }
            }
            known
        };
        Ok(SqliteCache {
            conn: std::sync::Mutex::new(conn),
            pending: std::sync::Mutex::default(),
            known: std::sync::Mutex::new(known),
        })
    }

    /// Number of cached replies (those waiting to be written included).
    pub fn len(&self) -> u64 {
        self.flush();
        let conn = self.conn.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        conn.query_row("SELECT COUNT(*) FROM llm_cache", [], |r| r.get::<_, i64>(0)).map(|n| n as u64).unwrap_or(0)
    }

    /// Whether no reply is cached.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Writes every waiting reply, in the order they were put, in one transaction. A failed
    /// write only costs repeated calls later; the runs themselves are unaffected.
    pub fn flush(&self) {
        // The waiting replies stay visible to `get` until they are committed.
        let mut pending = self.pending.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if pending.order.is_empty() {
            return;
        }
        // In key order: the key index is then written page after page, not at random places
        // (keys are hashes). The replies' arrival order carries no meaning: concurrent calls
        // answer in any order.
        pending.order.sort_unstable();
        let mut conn = self.conn.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Ok(tx) = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate) {
            if let Ok(mut st) =
                tx.prepare_cached("INSERT OR IGNORE INTO llm_cache (key, model, reply_json) VALUES (?1, ?2, ?3)")
            {
                for key in &pending.order {
                    if let Some((model, json)) = pending.replies.get(key) {
                        let _ = st.execute(params![key, model, json]);
                    }
                }
            }
            let _ = tx.commit();
        }
        let mut known = self.known.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        for key in &pending.order {
            match (key_prefix(key), known.as_mut()) {
                (Some(k), Some(set)) => {
                    set.insert(k);
                }
                _ => *known = None,
            }
        }
        // Cleared, not replaced: the next batch reuses the map's and the list's memory.
        pending.replies.clear();
        pending.order.clear();
        pending.since = None;
    }
}

impl Drop for SqliteCache {
    fn drop(&mut self) {
        self.flush();
    }
}

impl agora_agents::llm::ReplyCache for SqliteCache {
    fn get(&self, key: &str) -> Option<agora_agents::llm::CachedReply> {
        let waiting = {
            let pending = self.pending.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            pending.replies.get(key).map(|(_, json)| json.clone())
        };
        let absent = || {
            let known = self.known.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            matches!((known.as_ref(), key_prefix(key)), (Some(set), Some(k)) if !set.contains(&k))
        };
        let json = waiting.or_else(|| {
            if absent() {
                return None;
            }
            let conn = self.conn.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            conn.prepare_cached("SELECT reply_json FROM llm_cache WHERE key = ?1")
                .and_then(|mut st| st.query_row([key], |r| r.get::<_, String>(0)))
                .ok()
        });
        json.and_then(|j| serde_json::from_str(&j).ok())
    }

    fn put(&self, key: &str, model: &str, reply: &agora_agents::llm::CachedReply) {
        let Ok(json) = serde_json::to_string(reply) else { return };
        let due = {
            let mut pending = self.pending.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            // The first reply kept under a key stands, as in the table (INSERT OR IGNORE).
            if !pending.replies.contains_key(key) {
                pending.replies.insert(key.to_string(), (model.to_string(), json));
                pending.order.push(key.to_string());
            }
            let since = *pending.since.get_or_insert_with(std::time::Instant::now);
            pending.order.len() >= FLUSH_AT || since.elapsed() >= FLUSH_AFTER
        };
        if due {
            self.flush();
        }
    }
}
