//! A table of text cells, as the analyses and the audit write it: Markdown on screen and in the
//! report, CSV on disk. It depends on nothing else in the crate.

/// A table for Markdown and CSV output.
pub struct Table {
    /// Short name of the table; the CSV file is named after it.
    pub name: &'static str,
    /// Title written above the table.
    pub title: &'static str,
    /// Column headers, in order.
    pub columns: Vec<&'static str>,
    /// Rows, each cell already written as text.
    pub rows: Vec<Vec<String>>,
}

/// CSV text of a table (RFC 4180 quoting).
pub fn to_csv(t: &Table) -> String {
    let q =
        |c: &str| if c.contains([',', '"', '\n']) { format!("\"{}\"", c.replace('"', "\"\"")) } else { c.to_string() };
    let mut s = t.columns.iter().map(|c| q(c)).collect::<Vec<_>>().join(",");
    s.push('\n');
    for r in &t.rows {
        s.push_str(&r.iter().map(|c| q(c)).collect::<Vec<_>>().join(","));
        s.push('\n');
    }
    s
}
