//! The label files' CSV, read and written by the `csv` crate (RFC 4180: comma-separated, a
//! field holding a comma, a quote or a line break quoted with `"` and its quotes doubled,
//! records ending with `\n` or `\r\n`). The reader keeps the line each record starts on, so an
//! error can name it; blank lines are skipped and records may differ in length (the import
//! names each record whose fields do not match the header).

/// One record of a CSV text: its fields and the 1-based line it starts on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CsvRecord {
    /// The line the record starts on (1-based).
    pub line: usize,
    /// Its fields, unquoted.
    pub fields: Vec<String>,
}

/// CSV text of `records`, one line each (ending with `\n`), every field quoted where it needs it.
pub fn text<S: AsRef<str>>(records: &[Vec<S>]) -> String {
    let mut w = ::csv::WriterBuilder::new().terminator(::csv::Terminator::Any(b'\n')).from_writer(Vec::new());
    for r in records {
        w.write_record(r.iter().map(|f| f.as_ref())).expect("invariant: a CSV writer into memory does not fail");
    }
    String::from_utf8(w.into_inner().expect("invariant: a CSV writer into memory flushes"))
        .expect("invariant: the fields are text")
}

/// Parses CSV text into records (a leading byte-order mark is dropped). A record the reader
/// cannot read is an error naming its line.
pub fn parse(text: &str) -> Result<Vec<CsvRecord>, (usize, String)> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut reader = ::csv::ReaderBuilder::new().has_headers(false).flexible(true).from_reader(text.as_bytes());
    let mut records = Vec::new();
    for record in reader.records() {
        let record = record.map_err(|e| {
            let line = e.position().map_or(0, |p| p.line() as usize);
            (line, e.to_string())
        })?;
        let line = record.position().map_or(0, |p| start_line(text, p.byte() as usize));
        records.push(CsvRecord { line, fields: record.iter().map(str::to_string).collect() });
    }
    Ok(records)
}

/// The 1-based line of the first character at or after byte `at` that is not a line break: the
/// reader places a record after blank lines at the first of them.
fn start_line(text: &str, at: usize) -> usize {
    let start = text[at.min(text.len())..].find(|c| c != '\n' && c != '\r').map_or(text.len(), |i| at + i);
    1 + text.as_bytes()[..start].iter().filter(|b| **b == b'\n').count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_what_needs_quoting_and_reads_it_back() {
        let fields = ["plain", "a, b", "say \"hi\"", "two\nlines", ""];
        let written = text(&[vec!["h1", "h2", "h3", "h4", "h5"], fields.to_vec()]);
        assert_eq!(written, "h1,h2,h3,h4,h5\nplain,\"a, b\",\"say \"\"hi\"\"\",\"two\nlines\",\n");
        // A reader takes either line ending.
        let text = written.replacen('\n', "\r\n", 1);
        let records = parse(&text).expect("parses");
        assert_eq!(records.len(), 2);
        assert_eq!(records[1], CsvRecord { line: 2, fields: fields.map(str::to_string).to_vec() });
    }

    #[test]
    fn records_keep_the_line_they_start_on() {
        let text = "\u{feff}a,b\n\n\"x\ny\",1\nlast,2";
        let records = parse(text).expect("parses");
        let lines: Vec<usize> = records.iter().map(|r| r.line).collect();
        assert_eq!(lines, [1, 3, 5]);
        assert_eq!(records[0].fields, ["a", "b"], "the byte-order mark is not part of the first field");
        assert_eq!(records[2].fields, ["last", "2"]);
    }

    #[test]
    fn a_quoted_field_that_never_closes_leaves_a_short_record_on_its_line() {
        // The import refuses a record whose fields do not match the header, naming this line.
        let records = parse("a,b\n\"open,1\n").expect("read");
        assert_eq!(records[1].line, 2);
        assert_eq!(records[1].fields.len(), 1);
    }
}
