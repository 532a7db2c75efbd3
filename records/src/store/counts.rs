//! Counts read from a store for a command's summary.

use std::collections::BTreeMap;

use rusqlite::Connection;

/// Per model, a study's calls counted by `kind:parse_status` (`decision:ok`,
/// `decision:fallback`, `probe:recognised`…), and `decision:truncated-standing` for cut replies
/// whose action stood.
pub fn transcript_counts(conn: &Connection, study: &str) -> rusqlite::Result<BTreeMap<String, BTreeMap<String, i64>>> {
    let mut st = conn.prepare(
        "SELECT t.model, t.kind, t.parse_status, COUNT(*) FROM transcripts t JOIN runs r USING (run_id)
         WHERE r.study = ?1 GROUP BY 1, 2, 3
         UNION ALL
         SELECT t.model, t.kind, 'truncated-standing', COUNT(*) FROM transcripts t JOIN runs r USING (run_id)
         WHERE r.study = ?1 AND t.parse_status = 'truncated' AND t.action IS NOT NULL GROUP BY 1, 2
         ORDER BY 1, 2, 3",
    )?;
    let rows: Vec<(String, String, String, i64)> =
        st.query_map([study], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?.collect::<Result<_, _>>()?;
    let mut models: BTreeMap<String, BTreeMap<String, i64>> = BTreeMap::new();
    for (model, kind, status, n) in rows {
        *models.entry(model).or_default().entry(format!("{kind}:{status}")).or_default() += n;
    }
    Ok(models)
}
