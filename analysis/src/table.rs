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

/// CSV text of a table (RFC 4180: a cell is quoted where it holds a comma, a quote or a line
/// break, and a quote in it is doubled).
pub fn to_csv(t: &Table) -> String {
    let mut w = csv::WriterBuilder::new().terminator(csv::Terminator::Any(b'\n')).from_writer(Vec::new());
    let written = w.write_record(&t.columns).and_then(|()| t.rows.iter().try_for_each(|r| w.write_record(r)));
    written.expect("invariant: a CSV writer into memory does not fail");
    let bytes = w.into_inner().expect("invariant: a CSV writer into memory flushes");
    String::from_utf8(bytes).expect("invariant: the cells are text")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_are_quoted_where_they_must_be_and_only_there() {
        let t = Table {
            name: "t",
            title: "T",
            columns: vec!["model", "note"],
            rows: vec![
                vec!["plain".into(), "".into()],
                vec!["a, b".into(), "said \"no\"".into()],
                vec!["two\nlines".into(), "cr\rhere".into()],
            ],
        };
        assert_eq!(to_csv(&t), "model,note\nplain,\n\"a, b\",\"said \"\"no\"\"\"\n\"two\nlines\",\"cr\rhere\"\n");
    }
}
