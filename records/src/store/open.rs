//! The one way a store file is opened: through SQLite, and only through SQLite.
//!
//! Closing any descriptor of a file drops every POSIX lock the process holds on it (SQLite's
//! "How To Corrupt An SQLite Database File", section 2.2). The store used to read its first
//! bytes with `std::fs::File` before connecting; `agora serve` does that for every society it
//! starts while its own connection holds the store, so its locks went, and the next process that
//! opened and closed the store (a `sqlite3` shell, `agora report`) took the server's write-ahead
//! log with it: the answers given after that were lost (issue 40). Every check is therefore made
//! by SQLite on the connection that is kept: "not a database" is SQLite's own error, an empty
//! file is one with no page (`PRAGMA page_count`) or no table, then `application_id`,
//! `user_version` and `quick_check`. Nothing here opens the database file any other way; only
//! its metadata is read (`stat`, which opens no descriptor).

use std::path::{Path, PathBuf};

use rusqlite::{Connection, ErrorCode, OpenFlags};

use super::upgrade::{upgrade_declarations, upgrade_metrics, upgrade_rows, upgrade_transcripts, Upgrade};
use super::{verify, APPLICATION_ID, PAGE_SIZE, SCHEMA, SCHEMA_VERSION};
use crate::error::StoreError;

/// How long a connection waits for another's lock before it gives up.
pub(super) const BUSY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// A connection whose store has passed every check.
pub(super) struct Checked {
    pub(super) conn: Connection,
    /// What another SQLite reader of the store opens: the path, or, where the store could only
    /// be opened immutable, the `file:` URI that does so.
    pub(super) name: PathBuf,
}

/// What an existing file holds, as SQLite reads it.
enum Found {
    /// No page, or pages but no table and no application id: nothing has been stored.
    Empty,
    /// An Agora store of this schema version.
    Store(i32),
}

fn corrupt(path: &Path, message: impl Into<String>) -> StoreError {
    StoreError::Corrupt { path: path.to_path_buf(), message: message.into() }
}

fn sql(path: &Path) -> impl Fn(rusqlite::Error) -> StoreError + '_ {
    move |source| StoreError::Sqlite { path: path.to_path_buf(), source }
}

/// Whether `path` names a file, from its metadata alone (no descriptor is opened).
fn exists(path: &Path) -> Result<bool, StoreError> {
    match std::fs::metadata(path) {
        Ok(m) if m.is_dir() => Err(corrupt(path, "a directory, not a store")),
        Ok(_) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(corrupt(path, format!("cannot be read: {e}"))),
    }
}

/// Opens a store to write, creating the file (and its directory) if it is missing and making an
/// empty file a store; an existing store is checked and, if an earlier build wrote it, upgraded.
pub(super) fn open_write(path: &Path) -> Result<Checked, StoreError> {
    if !exists(path)? {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)
                .map_err(|e| corrupt(path, format!("cannot create directory {}: {e}", dir.display())))?;
        }
    }
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(sql(path))?;
    conn.busy_timeout(BUSY_TIMEOUT).map_err(sql(path))?;
    match inspect(&conn, path)? {
        Found::Empty => initialise(&conn, path)?,
        Found::Store(version) => {
            quick_check(&conn, path)?;
            if version < SCHEMA_VERSION {
                upgrade(&conn, path, version)?;
            }
        }
    }
    conn.pragma_update(None, "journal_mode", "WAL").map_err(sql(path))?;
    conn.pragma_update(None, "synchronous", "NORMAL").map_err(sql(path))?;
    conn.pragma_update(None, "foreign_keys", "ON").map_err(sql(path))?;
    Ok(Checked { conn, name: path.to_path_buf() })
}

/// Opens an existing store to read, with a connection that cannot write: a missing file, an
/// empty one and anything but an intact Agora store are refused, and nothing is written to the
/// file. A store in a directory this process cannot write (where SQLite cannot make the log's
/// index beside it) is opened immutable when it has no log to read. The one exception to "no
/// write": a store an earlier build wrote is upgraded to this schema first, as a writing command
/// would (once; a store that cannot be written is then refused with its version).
pub(super) fn open_read(path: &Path) -> Result<Checked, StoreError> {
    let checked = open_read_once(path)?;
    match checked {
        (checked, None) => Ok(checked),
        (checked, Some(version)) => {
            drop(checked);
            open_write(path).map_err(|e| {
                corrupt(
                    path,
                    format!("schema version {version} needs upgrading to {SCHEMA_VERSION}, which failed: {e}"),
                )
            })?;
            match open_read_once(path)? {
                (checked, None) => Ok(checked),
                (_, Some(version)) => Err(corrupt(path, format!("schema version {version} after upgrading"))),
            }
        }
    }
}

/// A checked read connection, and the store's version if it is older than this build's.
fn open_read_once(path: &Path) -> Result<(Checked, Option<i32>), StoreError> {
    if !exists(path)? {
        return Err(StoreError::Missing { path: path.to_path_buf() });
    }
    let read_only = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(path, read_only).map_err(sql(path))?;
    conn.busy_timeout(BUSY_TIMEOUT).map_err(sql(path))?;
    let (conn, name, found) = match inspect(&conn, path) {
        Err(StoreError::Sqlite { source, .. }) if cannot_make_log(&source) && !holds_changes(&log_of(path)) => {
            // SQLite reads a write-ahead-log store through the log's index, made beside the
            // store on first use; in a directory this process cannot write it cannot be made.
            // With no log (or an empty one) there is nothing to read but the file, and no writer
            // can be at work (it would need the index), so the file is read as it stands.
            drop(conn);
            let name = PathBuf::from(immutable_uri(path)?);
            let conn = Connection::open_with_flags(&name, read_only | OpenFlags::SQLITE_OPEN_URI).map_err(sql(path))?;
            let found = inspect(&conn, path)?;
            (conn, name, found)
        }
        Err(StoreError::Sqlite { source, .. }) if cannot_make_log(&source) => {
            return Err(corrupt(
                path,
                format!(
                    "cannot be read: its write-ahead log {} holds changes and SQLite cannot open the log's \
                     index beside it (is the directory read-only?): {source}",
                    log_of(path).display()
                ),
            ))
        }
        Err(e) => return Err(e),
        Ok(found) => (conn, path.to_path_buf(), found),
    };
    let version = match found {
        Found::Empty => return Err(StoreError::Empty { path: path.to_path_buf() }),
        Found::Store(version) => version,
    };
    quick_check(&conn, path)?;
    let older = (version < SCHEMA_VERSION).then_some(version);
    Ok((Checked { conn, name }, older))
}

/// SQLite's answer when a read-only connection cannot open or make the log and its index.
fn cannot_make_log(e: &rusqlite::Error) -> bool {
    matches!(e.sqlite_error_code(), Some(ErrorCode::CannotOpen | ErrorCode::ReadOnly))
}

/// Whether the log at `log` holds anything (its size, from its metadata).
fn holds_changes(log: &Path) -> bool {
    std::fs::metadata(log).is_ok_and(|m| m.len() > 0)
}

/// The store's write-ahead log, beside it.
fn log_of(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push("-wal");
    PathBuf::from(name)
}

/// A `file:` URI that opens `path` read-only and immutable (no lock, no log), its bytes
/// percent-encoded where a URI would read them otherwise.
fn immutable_uri(path: &Path) -> Result<String, StoreError> {
    let absolute = std::path::absolute(path).map_err(|e| corrupt(path, format!("cannot be read: {e}")))?;
    #[cfg(unix)]
    let bytes = std::os::unix::ffi::OsStrExt::as_bytes(absolute.as_os_str()).to_vec();
    #[cfg(not(unix))]
    let bytes = absolute.to_string_lossy().replace('\\', "/").into_bytes();
    let mut uri = String::from("file:");
    for &b in &bytes {
        if b.is_ascii_alphanumeric() || b"/-._~".contains(&b) {
            uri.push(char::from(b));
        } else {
            uri.push_str(&format!("%{b:02X}"));
        }
    }
    uri.push_str("?mode=ro&immutable=1");
    Ok(uri)
}

/// What the file holds, from SQLite's reading of it; a file SQLite does not take for a
/// database, and a database that is not an Agora store, are refused.
fn inspect(conn: &Connection, path: &Path) -> Result<Found, StoreError> {
    let not_a_database = |e: rusqlite::Error| match e.sqlite_error_code() {
        Some(ErrorCode::NotADatabase) => corrupt(path, "not a SQLite database (a truncated or foreign file)"),
        Some(ErrorCode::DatabaseCorrupt) => corrupt(path, format!("integrity check failed: {e}")),
        _ => StoreError::Sqlite { path: path.to_path_buf(), source: e },
    };
    let pages: i64 = conn.query_row("PRAGMA page_count", [], |r| r.get(0)).map_err(not_a_database)?;
    if pages == 0 {
        return Ok(Found::Empty);
    }
    let app: i32 = conn.query_row("PRAGMA application_id", [], |r| r.get(0)).map_err(not_a_database)?;
    if app == 0 {
        let objects: i64 =
            conn.query_row("SELECT COUNT(*) FROM sqlite_schema", [], |r| r.get(0)).map_err(not_a_database)?;
        if objects == 0 {
            return Ok(Found::Empty);
        }
    }
    if app != APPLICATION_ID {
        return Err(corrupt(path, "not an Agora store (wrong application id)"));
    }
    let version: i32 = conn.query_row("PRAGMA user_version", [], |r| r.get(0)).map_err(not_a_database)?;
    if !(1..=SCHEMA_VERSION).contains(&version) {
        return Err(corrupt(path, format!("schema version {version}, this build reads {SCHEMA_VERSION}")));
    }
    Ok(Found::Store(version))
}

/// SQLite's quick integrity check.
fn quick_check(conn: &Connection, path: &Path) -> Result<(), StoreError> {
    let check: String = conn
        .query_row("PRAGMA quick_check", [], |r| r.get(0))
        .map_err(|e| corrupt(path, format!("integrity check failed: {e}")))?;
    if check != "ok" {
        return Err(corrupt(path, format!("integrity check failed: {check}")));
    }
    Ok(())
}

/// Makes an empty database a store: its page size and log first (neither can change inside a
/// transaction), then the tables, the application id and the version in one transaction, so a
/// reader sees an empty file or a whole store, never a store without its id.
fn initialise(conn: &Connection, path: &Path) -> Result<(), StoreError> {
    // 8 KiB pages (SQLite's default is 4): a run's rows are a few hundred kilobytes, and half as
    // many pages is half the log frames, checksums and page-cache work per run; the recorded
    // naming study runs 6-10 % faster, and an LLM call's rows still take about as much of the
    // store (836 B a call against 823 B). A database that has pages keeps its own.
    conn.pragma_update(None, "page_size", PAGE_SIZE).map_err(sql(path))?;
    conn.pragma_update(None, "journal_mode", "WAL").map_err(sql(path))?;
    conn.execute_batch("BEGIN IMMEDIATE").map_err(sql(path))?;
    let result = (|| {
        // Another process may have made the store between the look and the lock.
        let app: i32 = conn.query_row("PRAGMA application_id", [], |r| r.get(0))?;
        if app != APPLICATION_ID {
            conn.execute_batch(SCHEMA)?;
            conn.pragma_update(None, "application_id", APPLICATION_ID)?;
            conn.pragma_update(None, "user_version", SCHEMA_VERSION)?;
        }
        conn.execute_batch("COMMIT")
    })();
    if result.is_err() {
        let _ = conn.execute_batch("ROLLBACK");
    }
    result.map_err(sql(path))?;
    // A store that another process made between the look and the lock is checked as any other.
    match inspect(conn, path)? {
        Found::Store(SCHEMA_VERSION) => Ok(()),
        Found::Store(version) => upgrade(conn, path, version),
        Found::Empty => Err(corrupt(path, "still empty after it was made a store")),
    }
}

/// Brings a store of an earlier schema to this one, step by step.
fn upgrade(conn: &Connection, path: &Path, version: i32) -> Result<(), StoreError> {
    let sql = sql(path);
    let from_upgrade = |message: &'static str| {
        move |e| match e {
            Upgrade::Sql(source) => StoreError::Sqlite { path: path.to_path_buf(), source },
            Upgrade::Spec(run, m) => corrupt(path, format!("run {run}: {message}{m}")),
        }
    };
    // Version 2 added the models table; version 3 the metrics table, filled here from each
    // stored run's records by its game, with the record hashes chained; version 4 keeps each
    // request by its parts (the rows move, byte for byte); version 5 keeps a run's decisions,
    // payoffs and interactions as one value each.
    upgrade_transcripts(conn).map_err(&sql)?;
    upgrade_rows(conn).map_err(from_upgrade(""))?;
    conn.execute_batch(SCHEMA).map_err(&sql)?;
    // Version 6 records each environment's declaration: filled here from the environments of
    // the stored runs.
    upgrade_declarations(conn).map_err(&sql)?;
    if version <= 2 {
        upgrade_metrics(conn).map_err(from_upgrade("cannot read its specification: "))?;
    }
    // Version 9 adds the deposits and the runs' provenance (store/deposit.rs), made empty by
    // the schema above: a run stored before it has no recorded time and no deposit.
    // Version 7 hashes each run's stored values, byte for byte (crate::record_hash); version 8
    // leaves each model call's latency and endpoint out of that hash (issue 40). A schema-7
    // run is rehashed only where it still hashes to its stored hash under schema 7's
    // definition: one altered before the upgrade keeps its stale hash and fails to verify. The
    // same transaction sets the version.
    let kept = verify::upgrade_hashes(conn, version, SCHEMA_VERSION).map_err(&sql)?;
    if kept.kept > 0 {
        // The stale hashes stay in the store, where `agora verify` names each run and
        // `agora merge` refuses the store; this says so once, when the upgrade finds them.
        let more = kept.kept - kept.first.len() as u64;
        let more = if more > 0 { format!(" and {more} more") } else { String::new() };
        eprintln!(
            "warning: store {}: upgraded from schema {version} to {SCHEMA_VERSION}; {} of {} runs kept a \
             record hash that does not verify under schema {version}, the hash they were stored with (their \
             values or hashes were changed after they were written): {}{more}. They fail `agora verify` and \
             `agora merge` refuses the store.",
            path.display(),
            kept.kept,
            kept.runs,
            kept.first.join(", "),
        );
    }
    Ok(())
}

/// Another connection to a store already opened and checked, with the same access: for a
/// writer that keeps tables of its own beside the runs (the reply cache, a session's records).
pub(super) fn reconnect(name: &Path, path: &Path, write: bool) -> Result<Connection, StoreError> {
    let mut flags = OpenFlags::SQLITE_OPEN_NO_MUTEX
        | if write { OpenFlags::SQLITE_OPEN_READ_WRITE } else { OpenFlags::SQLITE_OPEN_READ_ONLY };
    if name != path {
        flags |= OpenFlags::SQLITE_OPEN_URI;
    }
    let conn = Connection::open_with_flags(name, flags).map_err(sql(path))?;
    conn.busy_timeout(BUSY_TIMEOUT).map_err(sql(path))?;
    Ok(conn)
}
