//! One writing command at a time: a command that writes runs (`agora run`, `agora serve`,
//! `agora merge`, `agora replicate`) claims the store first, and a second one is refused with
//! the first one's name, process and machine, instead of playing the same runs beside it.
//!
//! The claim is a lock the operating system lets go of when the process ends, however it ends
//! (a kill, a crash, a lost node): an exclusive transaction, opened and never committed, on a
//! small SQLite database beside the store (`STORE-claim`, never the store itself, so no
//! connection to the store is touched). A command that finds it taken is refused; one that
//! takes it is the only writer. Who holds it is written in the store's `store_claim` table for
//! the message (and for anyone who looks), and deleted when the claim is released; a row left
//! by a killed command is overwritten by the next one that takes the lock. Within one process a
//! store can be claimed again (an in-process server started twice); the lock is let go of with
//! the last claim.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use rusqlite::{params, Connection, ErrorCode, OpenFlags, OptionalExtension};

use super::Store;
use crate::error::StoreError;

const CLAIM_SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS store_claim (
    only INTEGER PRIMARY KEY CHECK (only = 1),
    command TEXT NOT NULL,
    pid INTEGER NOT NULL,
    host TEXT NOT NULL,
    token TEXT NOT NULL,
    since INTEGER NOT NULL
);";

/// The claim a writing command holds on a store; dropping it releases the store.
#[derive(Debug)]
#[must_use = "the store is released when the claim is dropped"]
pub struct Claim {
    path: PathBuf,
    /// The lock file, as this process's claims know it.
    lock: PathBuf,
    /// This claim's mark in its row.
    token: String,
    /// The connection that writes and deletes the claim's row.
    conn: Mutex<Connection>,
}

/// A lock this process holds, with the number of its claims that hold it.
struct Held {
    lock: PathBuf,
    conn: Connection,
    claims: usize,
}

/// The locks this process holds.
static HELD: Mutex<Vec<Held>> = Mutex::new(Vec::new());

fn held() -> std::sync::MutexGuard<'static, Vec<Held>> {
    HELD.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The file whose lock is the claim of the store at `path`.
fn lock_file(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push("-claim");
    PathBuf::from(name)
}

impl Store {
    /// Claims the store for `command` (e.g. `agora run`) until the returned [`Claim`] is
    /// dropped. Refused with [`StoreError::Claimed`] while another process holds it; the
    /// claim of a process that has ended is free again.
    pub fn claim(&self, command: &str) -> Result<Claim, StoreError> {
        let path = &self.path;
        let sql = |source| StoreError::Sqlite { path: path.clone(), source };
        let claimed = |holder: String| StoreError::Claimed { path: path.clone(), holder };
        let lock = lock_file(&std::fs::canonicalize(path).unwrap_or_else(|_| path.clone()));
        let conn = self.connect()?;
        let token = next_token();
        {
            let mut held = held();
            match held.iter_mut().find(|h| h.lock == lock) {
                Some(h) => h.claims += 1,
                None => {
                    let lock_conn = Connection::open_with_flags(
                        &lock,
                        OpenFlags::SQLITE_OPEN_READ_WRITE
                            | OpenFlags::SQLITE_OPEN_CREATE
                            | OpenFlags::SQLITE_OPEN_NO_MUTEX,
                    )
                    .map_err(sql)?;
                    // No waiting: a lock that is taken is another command at work.
                    lock_conn.busy_timeout(std::time::Duration::ZERO).map_err(sql)?;
                    match lock_conn.execute_batch("BEGIN EXCLUSIVE") {
                        Ok(()) => held.push(Held { lock: lock.clone(), conn: lock_conn, claims: 1 }),
                        Err(e) if e.sqlite_error_code() == Some(ErrorCode::DatabaseBusy) => {
                            return Err(claimed(holder(&conn).unwrap_or_else(|| "another command".into())));
                        }
                        Err(e) => return Err(sql(e)),
                    }
                }
            }
        }
        let claim = Claim { path: path.clone(), lock, token, conn: Mutex::new(conn) };
        claim.write_row(command).map_err(sql)?;
        Ok(claim)
    }
}

/// Who the store's claim row names, for the message of a refusal.
fn holder(conn: &Connection) -> Option<String> {
    let row: Option<(String, u32, String, i64)> = conn
        .query_row("SELECT command, pid, host, since FROM store_claim WHERE only = 1", [], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
        })
        .optional()
        .ok()
        .flatten();
    row.map(|(command, pid, host, since)| {
        format!("`{command}` (pid {pid} on {host}, started {} s ago)", unix_now().saturating_sub(since))
    })
}

impl Claim {
    /// The store claimed.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn conn(&self) -> std::sync::MutexGuard<'_, Connection> {
        self.conn.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Writes who holds the store into its `store_claim` table.
    fn write_row(&self, command: &str) -> Result<(), rusqlite::Error> {
        let conn = self.conn();
        conn.execute_batch(CLAIM_SCHEMA)?;
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
            .map(|h| h.trim().to_string())
            .ok()
            .filter(|h| !h.is_empty())
            .unwrap_or_else(|| "this machine".into());
        conn.execute(
            "INSERT OR REPLACE INTO store_claim (only, command, pid, host, token, since) VALUES (1, ?1, ?2, ?3, ?4, ?5)",
            params![command, std::process::id(), host, self.token, unix_now()],
        )?;
        Ok(())
    }
}

impl Drop for Claim {
    fn drop(&mut self) {
        let mut held = held();
        let Some(i) = held.iter().position(|h| h.lock == self.lock) else { return };
        held[i].claims -= 1;
        if held[i].claims == 0 {
            // The row first, then the lock: a command that takes the lock finds no stale row.
            // A row that cannot be deleted is overwritten by the next command.
            let _ = self.conn().execute("DELETE FROM store_claim", []);
            let released = held.swap_remove(i);
            let _ = released.conn.execute_batch("ROLLBACK");
        }
    }
}

fn next_token() -> String {
    static COUNT: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    format!("{}-{nanos}-{}", std::process::id(), COUNT.fetch_add(1, Ordering::Relaxed))
}

fn unix_now() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs() as i64)
}
