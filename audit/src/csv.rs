//! A small RFC 4180 CSV reader and writer for the label files: comma-separated, a field that
//! holds a comma, a quote or a line break is quoted with `"` and its quotes doubled, records
//! end with `\n` or `\r\n`. The reader keeps the line each record starts on, so an error can
//! name it; the writer quotes exactly the fields that need it.

/// One record of a CSV text: its fields and the 1-based line it starts on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CsvRecord {
    /// The line the record starts on (1-based).
    pub line: usize,
    /// Its fields, unquoted.
    pub fields: Vec<String>,
}

/// Quotes one field if it holds a comma, a quote, or a line break.
pub fn quote(field: &str) -> String {
    if field.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", field.replace('"', "\"\""))
    } else {
        field.to_string()
    }
}

/// One CSV line (without its line break) of the given fields.
pub fn line<S: AsRef<str>>(fields: &[S]) -> String {
    fields.iter().map(|f| quote(f.as_ref())).collect::<Vec<_>>().join(",")
}

/// Parses CSV text into records; blank lines between records are skipped. An error names the
/// line: a quote inside an unquoted field, text after a closing quote, or a quoted field that
/// never closes.
pub fn parse(text: &str) -> Result<Vec<CsvRecord>, (usize, String)> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut records = Vec::new();
    let mut chars = text.chars().peekable();
    let mut line = 1usize;
    while chars.peek().is_some() {
        // Skip blank lines.
        match chars.peek() {
            Some('\n') => {
                chars.next();
                line += 1;
                continue;
            }
            Some('\r') => {
                chars.next();
                if chars.peek() == Some(&'\n') {
                    chars.next();
                }
                line += 1;
                continue;
            }
            _ => {}
        }
        let start = line;
        let mut fields = Vec::new();
        let mut field = String::new();
        let mut quoted = false;
        let mut after_quote = false;
        loop {
            let Some(c) = chars.next() else {
                if quoted {
                    return Err((start, "a quoted field is never closed".into()));
                }
                fields.push(std::mem::take(&mut field));
                break;
            };
            if quoted {
                match c {
                    '"' if chars.peek() == Some(&'"') => {
                        chars.next();
                        field.push('"');
                    }
                    '"' => {
                        quoted = false;
                        after_quote = true;
                    }
                    '\n' => {
                        line += 1;
                        field.push(c);
                    }
                    _ => field.push(c),
                }
                continue;
            }
            match c {
                ',' => {
                    fields.push(std::mem::take(&mut field));
                    after_quote = false;
                }
                '\n' | '\r' => {
                    if c == '\r' && chars.peek() == Some(&'\n') {
                        chars.next();
                    }
                    line += 1;
                    fields.push(std::mem::take(&mut field));
                    break;
                }
                '"' if field.is_empty() && !after_quote => quoted = true,
                '"' => return Err((line, "a quote inside an unquoted field (quote the whole field)".into())),
                _ if after_quote => return Err((line, "text after a closing quote".into())),
                _ => field.push(c),
            }
        }
        records.push(CsvRecord { line: start, fields });
    }
    Ok(records)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_what_needs_quoting_and_reads_it_back() {
        let fields = ["plain", "a, b", "say \"hi\"", "two\nlines", ""];
        let text = format!("{}\n{}\r\n", line(&["h1", "h2", "h3", "h4", "h5"]), line(&fields));
        assert_eq!(line(&fields), "plain,\"a, b\",\"say \"\"hi\"\"\",\"two\nlines\",");
        let records = parse(&text).expect("parses");
        assert_eq!(records.len(), 2);
        assert_eq!(records[1], CsvRecord { line: 2, fields: fields.map(str::to_string).to_vec() });
    }

    #[test]
    fn records_keep_the_line_they_start_on() {
        let text = "a,b\n\n\"x\ny\",1\nlast,2";
        let records = parse(text).expect("parses");
        let lines: Vec<usize> = records.iter().map(|r| r.line).collect();
        assert_eq!(lines, [1, 3, 5]);
        assert_eq!(records[2].fields, ["last", "2"]);
    }

    #[test]
    fn malformed_quotes_name_the_line() {
        assert_eq!(parse("a,b\nx,y\"z\n").map_err(|e| e.0), Err(2));
        assert_eq!(parse("a,b\n\"x\"y,1\n").map_err(|e| e.0), Err(2));
        assert_eq!(parse("a,b\n\"open,1\n").map_err(|e| e.0), Err(2));
    }
}
