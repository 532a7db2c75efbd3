//! Table families: the tables one product keeps in a store beside the runs, each family with a
//! version of its own, upgraded in place and refused when newer than this build.
//!
//! The runs' own tables (the run store: studies, runs, agents, run rows, metrics, transcripts,
//! reply cache, deposits) are versioned by the store's `user_version` ([`crate::store`], schema
//! [`crate::store::SCHEMA_VERSION`]); every other family is listed here, with its schema, its
//! version and the steps that bring a store written by an earlier build to it. A family's
//! version is kept in the store's table `table_families`, one row per family, written when the
//! family's tables are made or upgraded.
//!
//! A store made before families were versioned holds a family's tables and no row for it: its
//! tables are read as version 1 (the layout the first versioned build called 1, documented per
//! family) and upgraded from there. A family whose row is newer than this build's is refused
//! with both versions, never read or written: an older build cannot know what the newer columns
//! mean.

use rusqlite::{params, Connection, OptionalExtension};

pub mod audit;
pub mod profile;
pub mod serve;

pub use audit::AUDIT;
pub use profile::PROFILE;
pub use serve::SERVE;

/// Every family a store may hold beside the runs, for listing and checking.
pub const ALL: [&Family; 3] = [&AUDIT, &PROFILE, &SERVE];

/// The table that holds each family's version.
const REGISTER: &str =
    "CREATE TABLE IF NOT EXISTS table_families (family TEXT PRIMARY KEY, version INTEGER NOT NULL) WITHOUT ROWID;";

/// One step of a family's history: what brings a store of version `to - 1` to `to`.
pub struct Step {
    /// The version the step brings the family to.
    pub to: i64,
    /// What changed, as the docs say it.
    pub what: &'static str,
    /// The change. It runs before the family's schema (`CREATE … IF NOT EXISTS`), inside the
    /// upgrade's transaction; a table the step needs may be absent (a store that never made it).
    pub apply: fn(&Connection) -> rusqlite::Result<()>,
}

/// A product's tables, their schema and version.
pub struct Family {
    /// The family's name (`profile`, `serve`, `audit`).
    pub name: &'static str,
    /// The version this build writes.
    pub version: i64,
    /// Its tables: a store holding any of them and no version row is of version 1.
    pub tables: &'static [&'static str],
    /// The current layout, as `CREATE TABLE IF NOT EXISTS` statements.
    pub schema: &'static str,
    /// The steps from version 1 to [`Family::version`], in order.
    pub steps: &'static [Step],
}

/// Why a family's tables cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum FamilyError {
    /// The store was written by a newer build.
    #[error(
        "the store's {family} tables are of version {found}, newer than this build's {supported}; \
         use a build of Agora that knows version {found}"
    )]
    Newer {
        /// The family.
        family: &'static str,
        /// The version the store holds.
        found: i64,
        /// The version this build writes.
        supported: i64,
    },
    /// SQLite refused.
    #[error(transparent)]
    Sql(#[from] rusqlite::Error),
}

impl FamilyError {
    /// Whether a family's tables were refused as too new for this build (bad input, exit 2)
    /// rather than SQLite failing.
    pub fn is_refusal(&self) -> bool {
        matches!(self, FamilyError::Newer { .. })
    }
}

/// The version of `family` the store holds: its row, or 1 for tables made before families were
/// versioned, or `None` where the store has none of its tables.
pub fn stored_version(conn: &Connection, family: &Family) -> rusqlite::Result<Option<i64>> {
    if has_table(conn, "table_families")? {
        let row: Option<i64> = conn
            .query_row("SELECT version FROM table_families WHERE family = ?1", [family.name], |r| r.get(0))
            .optional()?;
        if row.is_some() {
            return Ok(row);
        }
    }
    for table in family.tables {
        if has_table(conn, table)? {
            return Ok(Some(1));
        }
    }
    Ok(None)
}

/// For a reader: refuses a family newer than this build (an absent or older one reads as it is;
/// a reader never upgrades).
pub fn check(conn: &Connection, family: &Family) -> Result<(), FamilyError> {
    match stored_version(conn, family)? {
        Some(found) if found > family.version => {
            Err(FamilyError::Newer { family: family.name, found, supported: family.version })
        }
        _ => Ok(()),
    }
}

/// For a writer: makes the family's tables, or upgrades them in place, step by step, in one
/// transaction, and records the version; refuses a newer family. Returns the version the store
/// held before (`None` where it had none of the family's tables).
///
/// Inside a transaction the caller holds, the work joins it; otherwise it takes the write lock
/// first (`BEGIN IMMEDIATE`), so that two processes making the same family do it one after the
/// other.
pub fn ensure(conn: &Connection, family: &Family) -> Result<Option<i64>, FamilyError> {
    debug_assert_eq!(family.steps.len() as i64, family.version - 1, "{}: one step per version", family.name);
    let own = conn.is_autocommit();
    if own {
        conn.execute_batch("BEGIN IMMEDIATE")?;
    }
    let result = ensure_in(conn, family);
    if own {
        match &result {
            Ok(_) => conn.execute_batch("COMMIT")?,
            Err(_) => {
                let _ = conn.execute_batch("ROLLBACK");
            }
        }
    }
    result
}

fn ensure_in(conn: &Connection, family: &Family) -> Result<Option<i64>, FamilyError> {
    let found = stored_version(conn, family)?;
    if let Some(found) = found {
        if found > family.version {
            return Err(FamilyError::Newer { family: family.name, found, supported: family.version });
        }
        if found == family.version {
            conn.execute_batch(family.schema)?;
            return Ok(Some(found));
        }
        for step in family.steps.iter().filter(|s| s.to > found) {
            (step.apply)(conn)?;
        }
    }
    conn.execute_batch(family.schema)?;
    conn.execute_batch(REGISTER)?;
    conn.execute(
        "INSERT INTO table_families (family, version) VALUES (?1, ?2)
         ON CONFLICT (family) DO UPDATE SET version = excluded.version",
        params![family.name, family.version],
    )?;
    Ok(found)
}

/// Whether the store holds `table` (a table, not a view).
pub fn has_table(conn: &Connection, table: &str) -> rusqlite::Result<bool> {
    conn.query_row("SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = ?1", [table], |r| {
        r.get::<_, i64>(0)
    })
    .map(|n| n > 0)
}

/// Whether `table` has `column` (false where the table is absent).
pub fn has_column(conn: &Connection, table: &str, column: &str) -> rusqlite::Result<bool> {
    conn.query_row("SELECT COUNT(*) FROM pragma_table_info(?1) WHERE name = ?2", params![table, column], |r| {
        r.get::<_, i64>(0)
    })
    .map(|n| n > 0)
}

/// Adds `column` (with its type and constraints, `TEXT`) to `table` where the table exists and
/// lacks it: the usual step of a family's history.
pub fn add_column(conn: &Connection, table: &str, column: &str, kind: &str) -> rusqlite::Result<()> {
    if has_table(conn, table)? && !has_column(conn, table, column)? {
        conn.execute_batch(&format!("ALTER TABLE {table} ADD COLUMN {column} {kind};"))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const V1: &str = "CREATE TABLE IF NOT EXISTS fam_a (k TEXT PRIMARY KEY);";
    const V2: &str = "CREATE TABLE IF NOT EXISTS fam_a (k TEXT PRIMARY KEY, note TEXT);
                      CREATE TABLE IF NOT EXISTS fam_b (k TEXT PRIMARY KEY);";

    fn to_2(conn: &Connection) -> rusqlite::Result<()> {
        add_column(conn, "fam_a", "note", "TEXT")
    }

    const FAM: Family = Family {
        name: "fam",
        version: 2,
        tables: &["fam_a", "fam_b"],
        schema: V2,
        steps: &[Step { to: 2, what: "fam_a gains note", apply: to_2 }],
    };

    #[test]
    fn a_new_store_gets_the_current_version_and_an_old_one_is_upgraded_in_place() {
        let fresh = Connection::open_in_memory().expect("db");
        assert_eq!(ensure(&fresh, &FAM).expect("made"), None);
        assert_eq!(stored_version(&fresh, &FAM).expect("read"), Some(2));
        assert!(has_column(&fresh, "fam_a", "note").expect("info"));

        let old = Connection::open_in_memory().expect("db");
        old.execute_batch(V1).expect("v1");
        old.execute("INSERT INTO fam_a (k) VALUES ('kept')", []).expect("row");
        assert_eq!(stored_version(&old, &FAM).expect("read"), Some(1), "tables without a row are version 1");
        assert_eq!(ensure(&old, &FAM).expect("upgraded"), Some(1));
        assert_eq!(stored_version(&old, &FAM).expect("read"), Some(2));
        assert!(has_column(&old, "fam_a", "note").expect("info"));
        let kept: String = old.query_row("SELECT k FROM fam_a", [], |r| r.get(0)).expect("row kept");
        assert_eq!(kept, "kept");
        // Again: nothing to do.
        assert_eq!(ensure(&old, &FAM).expect("current"), Some(2));
    }

    #[test]
    fn a_newer_family_is_refused_by_readers_and_writers_and_left_as_it_is() {
        let conn = Connection::open_in_memory().expect("db");
        ensure(&conn, &FAM).expect("made");
        conn.execute("UPDATE table_families SET version = 3 WHERE family = 'fam'", []).expect("newer");
        let e = ensure(&conn, &FAM).expect_err("refused");
        assert!(matches!(e, FamilyError::Newer { found: 3, supported: 2, .. }), "{e}");
        assert!(e.to_string().contains("fam tables are of version 3, newer than this build's 2"), "{e}");
        assert!(check(&conn, &FAM).is_err());
        assert_eq!(stored_version(&conn, &FAM).expect("read"), Some(3), "left as it was");
        // An older or absent family reads as it is.
        let other = Connection::open_in_memory().expect("db");
        check(&other, &FAM).expect("absent reads");
        other.execute_batch(V1).expect("v1");
        check(&other, &FAM).expect("older reads");
    }

    #[test]
    fn a_failed_step_leaves_the_store_as_it_was() {
        fn fails(_: &Connection) -> rusqlite::Result<()> {
            Err(rusqlite::Error::InvalidQuery)
        }
        const BAD: Family = Family {
            name: "fam",
            version: 2,
            tables: &["fam_a"],
            schema: V2,
            steps: &[Step { to: 2, what: "", apply: fails }],
        };
        let conn = Connection::open_in_memory().expect("db");
        conn.execute_batch(V1).expect("v1");
        assert!(ensure(&conn, &BAD).is_err());
        assert_eq!(stored_version(&conn, &BAD).expect("read"), Some(1));
        assert!(!has_column(&conn, "fam_a", "note").expect("info"));
        assert!(conn.is_autocommit(), "no transaction left open");
    }
}
