//! The deposits a store holds and what of the audit a deposit is checked against.

use rusqlite::Connection;

/// One stored deposit: its hash, study, creation time, DOI and files (JSON).
pub type DepositRow = (String, String, String, Option<String>, String);

/// The stored deposits, by study, creation time and hash; none where the store has no
/// `deposits` table.
pub fn deposits(conn: &Connection) -> rusqlite::Result<Option<Vec<DepositRow>>> {
    if !super::has_table(conn, "deposits")? {
        return Ok(None);
    }
    conn.prepare("SELECT hash, study, created, doi, files FROM deposits ORDER BY study, created, hash")?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)))?
        .collect::<Result<_, _>>()
        .map(Some)
}

/// The codebooks the audit coded with (name, version, SHA-256), in order; none where the store
/// has no `audit_codebooks`.
pub fn codebooks_used(conn: &Connection) -> rusqlite::Result<Option<Vec<(String, i64, String)>>> {
    if !super::has_table(conn, "audit_codebooks")? {
        return Ok(None);
    }
    conn.prepare("SELECT name, version, sha256 FROM audit_codebooks ORDER BY name, version, sha256")?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
        .collect::<Result<_, _>>()
        .map(Some)
}

/// The distinct κ thresholds the coder-validation gate ran at, in order; none where the store
/// has no `audit_agreement`.
pub fn gate_min_kappas(conn: &Connection) -> rusqlite::Result<Option<Vec<f64>>> {
    if !super::has_table(conn, "audit_agreement")? {
        return Ok(None);
    }
    super::first_column(
        conn,
        "SELECT DISTINCT min_kappa FROM audit_agreement WHERE min_kappa IS NOT NULL ORDER BY min_kappa",
    )
    .map(Some)
}
