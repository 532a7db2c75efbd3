//! The write-ahead log's checkpoints, on a thread of their own.
//!
//! In WAL mode a commit appends its pages to the log; a checkpoint copies them into the
//! database file and syncs both files (with `synchronous = NORMAL` the only syncs there are).
//! Left to itself, SQLite runs a checkpoint inside whichever commit grows the log past 1000
//! pages, so the thread that writes runs waits for the disk, and on one worker thread the next
//! run is not played meanwhile. Once a store has written a megabyte of runs, its
//! connection stops checkpointing and a thread with a connection of its own does it, woken each
//! time about as much again has been written: the disk's work overlaps the next runs' play.
//!
//! Nothing about durability changes: a commit is atomic whether or not it has been checkpointed
//! yet, a crash of the process loses no committed run (the log is replayed when the store is
//! next opened), and the last connection to close checkpoints what is left, as before. A
//! checkpoint that fails (the file busy past the timeout) leaves its pages in the log for the
//! next one; it loses nothing, so the thread goes on.

use std::path::{Path, PathBuf};
use std::sync::mpsc::{sync_channel, SyncSender, TrySendError};
use std::thread::JoinHandle;

use rusqlite::{Connection, OpenFlags};

/// Bytes of rows written before the thread starts: well short of SQLite's own 1000 pages, so
/// that the writer never runs a checkpoint of its own (and waits for the disk's sync) once a
/// study writes more than a few runs.
const START_AFTER: u64 = 1 << 20;
/// Bytes of rows written between two wakes of the thread (SQLite's own 1000 pages of 4 KiB).
const WAKE_AFTER: u64 = 4 << 20;
/// Pages in the log past which the thread waits for the writer to pause and starts the log
/// over (a log that a busy writer keeps growing is otherwise never reset): 64 MiB of 4 KiB pages,
/// 128 MiB of the 8 KiB pages of stores made since.
const LOG_LIMIT: i64 = 1 << 14;

/// The store's checkpointing thread, started once the store has written [`START_AFTER`] bytes.
pub(super) struct Checkpointer {
    path: PathBuf,
    written: u64,
    /// `None` until started, and for good if it could not start (the store's connection then
    /// keeps checkpointing as SQLite does by default).
    worker: Option<(SyncSender<()>, JoinHandle<()>)>,
    failed: bool,
}

impl Checkpointer {
    pub(super) fn new(path: &Path) -> Self {
        Checkpointer { path: path.to_path_buf(), written: 0, worker: None, failed: false }
    }

    /// Notes `bytes` committed through `conn`: past [`START_AFTER`] bytes the thread starts (and
    /// `conn` stops checkpointing by itself), and every [`WAKE_AFTER`] bytes it is woken.
    pub(super) fn wrote(&mut self, conn: &Connection, bytes: u64) {
        self.written += bytes;
        if self.failed {
            return;
        }
        if self.worker.is_none() {
            if self.written < START_AFTER {
                return;
            }
            match start(&self.path) {
                Some(worker) if conn.pragma_update(None, "wal_autocheckpoint", 0).is_ok() => {
                    self.worker = Some(worker);
                }
                _ => {
                    self.failed = true;
                    return;
                }
            }
        }
        if self.written < WAKE_AFTER {
            return;
        }
        self.written = 0;
        if let Some((wake, _)) = &self.worker {
            // A wake already pending covers this one.
            if let Err(TrySendError::Disconnected(())) = wake.try_send(()) {
                // The thread has gone (its connection failed): checkpoint as SQLite does.
                self.failed = true;
                let _ = conn.pragma_update(None, "wal_autocheckpoint", 1000);
            }
        }
    }
}

impl Drop for Checkpointer {
    fn drop(&mut self) {
        if let Some((wake, thread)) = self.worker.take() {
            drop(wake);
            let _ = thread.join();
        }
    }
}

/// Starts the thread with a connection of its own to the store at `path`.
fn start(path: &Path) -> Option<(SyncSender<()>, JoinHandle<()>)> {
    let conn = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_WRITE).ok()?;
    conn.busy_timeout(std::time::Duration::from_secs(30)).ok()?;
    let (wake, woken) = sync_channel::<()>(1);
    let thread = std::thread::Builder::new()
        .name("agora-checkpoint".into())
        .spawn(move || {
            while woken.recv().is_ok() {
                let log = conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |r| r.get::<_, i64>(1)).unwrap_or(0);
                if log > LOG_LIMIT {
                    let _ = conn.query_row("PRAGMA wal_checkpoint(RESTART)", [], |_| Ok(()));
                }
            }
        })
        .ok()?;
    Some((wake, thread))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wal_store(path: &Path) -> Connection {
        let conn = Connection::open(path).expect("open");
        conn.pragma_update(None, "journal_mode", "WAL").expect("wal");
        conn.pragma_update(None, "synchronous", "NORMAL").expect("sync");
        conn.execute_batch("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)").expect("table");
        conn
    }

    #[test]
    fn the_thread_checkpoints_what_the_writer_commits_and_nothing_is_lost() {
        let dir = tempfile::tempdir().expect("temporary folder");
        let path = dir.path().join("s.sqlite");
        let conn = wal_store(&path);
        let mut checkpoints = Checkpointer::new(&path);
        let value = "x".repeat(64 << 10);
        // 15 commits of 64 KiB: 960 KiB, short of the thread's start; the writer checkpoints
        // itself.
        let commit = |conn: &Connection, checkpoints: &mut Checkpointer, id: i64| {
            conn.execute("INSERT INTO t (id, v) VALUES (?1, ?2)", rusqlite::params![id, value]).expect("insert");
            checkpoints.wrote(conn, value.len() as u64);
        };
        for id in 0..15 {
            commit(&conn, &mut checkpoints, id);
        }
        assert!(checkpoints.worker.is_none());
        let auto: i64 = conn.query_row("PRAGMA wal_autocheckpoint", [], |r| r.get(0)).expect("pragma");
        assert_eq!(auto, 1000);
        // Past 1 MiB the thread starts and the writer's connection stops checkpointing.
        commit(&conn, &mut checkpoints, 15);
        assert!(checkpoints.worker.is_some() && !checkpoints.failed);
        for id in 16..400 {
            commit(&conn, &mut checkpoints, id);
        }
        assert!(checkpoints.worker.is_some() && !checkpoints.failed);
        let auto: i64 = conn.query_row("PRAGMA wal_autocheckpoint", [], |r| r.get(0)).expect("pragma");
        assert_eq!(auto, 0);
        // Stopping the thread waits for its last checkpoint; the writer is still open, so only
        // the thread can have copied the log into the database file: about 25 MiB of it.
        drop(checkpoints);
        let db = std::fs::metadata(&path).expect("db").len();
        assert!(db > 20 << 20, "database file {db} bytes: the thread checkpointed nothing");
        drop(conn);
        let conn = Connection::open(&path).expect("reopen");
        let (n, bytes): (i64, i64) = conn
            .query_row("SELECT COUNT(*), SUM(length(v)) FROM t", [], |r| Ok((r.get(0)?, r.get(1)?)))
            .expect("count");
        assert_eq!((n, bytes), (400, 400 * (64 << 10)));
    }

    #[test]
    fn a_store_the_thread_cannot_open_keeps_checkpointing_itself() {
        let dir = tempfile::tempdir().expect("temporary folder");
        let path = dir.path().join("s.sqlite");
        let conn = wal_store(&path);
        // The thread's connection is refused (the path names no file), so the writer's
        // connection keeps SQLite's automatic checkpoints.
        let mut checkpoints = Checkpointer::new(&dir.path().join("missing").join("s.sqlite"));
        checkpoints.wrote(&conn, START_AFTER);
        assert!(checkpoints.failed && checkpoints.worker.is_none());
        let auto: i64 = conn.query_row("PRAGMA wal_autocheckpoint", [], |r| r.get(0)).expect("pragma");
        assert_eq!(auto, 1000);
    }
}
