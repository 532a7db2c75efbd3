//! Importing a label file: reading JSONL, a JSON array or CSV, checking every record against
//! the store and the codebook (each problem named by its line), and writing the labels.

use super::*;

/// What an import did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Imported {
    /// The human coder.
    pub coder: String,
    /// Labels read from the file and written.
    pub labels: usize,
    /// Records without a label (skipped).
    pub unlabelled: usize,
    /// Of the labels, those that replaced a different earlier label of the same coder.
    pub changed: usize,
    /// Of the labels, those already stored with the same code.
    pub unchanged: usize,
    /// Labels of this coder and codebook now in the store.
    pub total: usize,
    /// The format the file was read as.
    pub format: Format,
}

/// Checks a human coder's name: letters, digits and `.`, `_`, `-`, `@`, `+` (an e-mail address
/// is a name); no `/`, which machine coder identities (`lexicon/1`) carry.
pub fn check_coder_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("--coder-name must not be empty".into());
    }
    if let Some(c) = name.chars().find(|c| !(c.is_alphanumeric() || ".-_@+".contains(*c))) {
        return Err(format!(
            "--coder-name `{name}`: `{c}` is not allowed (letters, digits and . _ - @ +; a `/` marks a machine coder)"
        ));
    }
    Ok(())
}

/// Records of a label file: each a JSON object with the line it starts on.
type Records = Vec<(usize, Map<String, Value>)>;

/// The records of a label file as JSON objects, each with the line it starts on.
pub(super) fn read_records(text: &str, format: Format) -> Result<Records, Vec<Problem>> {
    let problem = |line: usize, message: String| Problem { line, field: None, message };
    let object = |line: usize, v: Value| match v {
        Value::Object(m) => Ok((line, m)),
        other => Err(problem(line, format!("a record must be a JSON object, not {}", json_kind(&other)))),
    };
    match format {
        Format::Jsonl => {
            let mut out = Vec::new();
            let mut problems = Vec::new();
            for (i, l) in text.lines().enumerate() {
                let l = if i == 0 { l.trim_start_matches('\u{feff}') } else { l };
                if l.trim().is_empty() {
                    continue;
                }
                match serde_json::from_str::<Value>(l) {
                    Ok(v) => match object(i + 1, v) {
                        Ok(r) => out.push(r),
                        Err(p) => problems.push(p),
                    },
                    Err(e) => problems.push(problem(i + 1, format!("not JSON: {e}"))),
                }
            }
            if problems.is_empty() {
                Ok(out)
            } else {
                Err(problems)
            }
        }
        Format::Json => {
            let text = text.trim_start_matches('\u{feff}');
            let v: Value = serde_json::from_str(text).map_err(|e| vec![problem(e.line(), format!("not JSON: {e}"))])?;
            let Value::Array(items) = v else {
                return Err(vec![problem(1, format!("expected a JSON array of records, found {}", json_kind(&v)))]);
            };
            let lines = array_element_lines(text);
            let mut out = Vec::new();
            let mut problems = Vec::new();
            for (i, item) in items.into_iter().enumerate() {
                match object(lines.get(i).copied().unwrap_or(1), item) {
                    Ok(r) => out.push(r),
                    Err(p) => problems.push(p),
                }
            }
            if problems.is_empty() {
                Ok(out)
            } else {
                Err(problems)
            }
        }
        Format::Csv => {
            let records = csv::parse(text).map_err(|(line, m)| vec![problem(line, m)])?;
            let Some((head, rows)) = records.split_first() else { return Ok(Vec::new()) };
            let header: Vec<String> = head.fields.iter().map(|h| h.trim().to_string()).collect();
            let mut seen = BTreeSet::new();
            if let Some(d) = header.iter().find(|h| !seen.insert(h.as_str())) {
                return Err(vec![Problem {
                    line: head.line,
                    field: Some(d.clone()),
                    message: "the header names this column twice".into(),
                }]);
            }
            let mut out = Vec::new();
            let mut problems = Vec::new();
            for r in rows {
                if r.fields.len() != header.len() {
                    problems.push(problem(
                        r.line,
                        format!("{} fields where the header has {}", r.fields.len(), header.len()),
                    ));
                    continue;
                }
                let m = header.iter().cloned().zip(r.fields.iter().cloned().map(Value::String)).collect();
                out.push((r.line, m));
            }
            if problems.is_empty() {
                Ok(out)
            } else {
                Err(problems)
            }
        }
    }
}

fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The 1-based line on which each element of a (valid) top-level JSON array begins.
pub(super) fn array_element_lines(text: &str) -> Vec<usize> {
    let mut lines = Vec::new();
    let mut line = 1usize;
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    let mut expecting = false;
    for c in text.chars() {
        if c == '\n' {
            line += 1;
        }
        if in_string {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
            continue;
        }
        if depth == 1 && expecting && !c.is_whitespace() && c != ']' {
            lines.push(line);
            expecting = false;
        }
        match c {
            '"' => in_string = true,
            '[' | '{' => {
                depth += 1;
                if depth == 1 {
                    expecting = true;
                }
            }
            ']' | '}' => depth = depth.saturating_sub(1),
            ',' if depth == 1 => expecting = true,
            _ => {}
        }
    }
    lines
}

use agora_records::families::audit::labels::{recorded_exports, LabelRecord as Checked, StoredSentence as Stored};

/// Imports one human coder's labels from `file` into the store at `path` (see the [module
/// documentation](self)). `label_field` names the field holding the code; `format` is
/// detected when not given.
pub fn import(
    path: &Path,
    codebook: &LoadedCodebook,
    file: &Path,
    coder: &str,
    label_field: &str,
    format: Option<Format>,
) -> Result<Imported, LabelsError> {
    check_coder_name(coder).map_err(LabelsError::Option)?;
    let text = std::fs::read_to_string(file)
        .map_err(|e| LabelsError::Read { path: file.to_path_buf(), message: e.to_string() })?;
    let format = format.unwrap_or_else(|| Format::detect(file, &text));
    let invalid = |problems: Vec<Problem>| LabelsError::Invalid { path: file.to_path_buf(), problems };
    let records = read_records(&text, format).map_err(invalid)?;
    if records.is_empty() {
        return Err(invalid(vec![Problem { line: 1, field: None, message: "the file holds no records".into() }]));
    }
    if !records.iter().any(|(_, m)| m.contains_key(label_field)) {
        return Err(invalid(vec![Problem {
            line: records[0].0,
            field: Some(label_field.into()),
            message: format!("no record has a `{label_field}` field (name the label field with --label-field)"),
        }]));
    }
    let mut conn = open(path, true)?;
    let sql = |source| LabelsError::Store { path: path.to_path_buf(), source };
    let cb = &codebook.codebook;
    for t in ["runs", "audit_sentences"] {
        if !has_table(&conn, t).map_err(sql)? {
            return Err(LabelsError::NotAudited {
                path: path.to_path_buf(),
                message: format!("no `{t}` table: run `agora audit` on it first"),
            });
        }
    }
    let stored: HashMap<(String, i64, i64, i64), Stored> =
        store::audited_sentences(&conn, &cb.name, cb.version).map_err(sql)?.into_iter().collect();
    let responses: BTreeSet<(String, i64, i64)> = stored.keys().map(|k| (k.0.clone(), k.1, k.2)).collect();
    let exports = recorded_exports(&conn).map_err(sql)?;
    let mut problems = Vec::new();
    let mut checked: Vec<Checked> = Vec::new();
    let mut first_line: HashMap<(i64, i64, i64, i64), usize> = HashMap::new();
    let mut unlabelled = 0usize;
    for (line, m) in &records {
        let line = *line;
        let mut bad = |field: &str, message: String| {
            problems.push(Problem { line, field: Some(field.to_string()), message });
        };
        if m.contains_key("coder_code") {
            bad(
                "coder_code",
                "the record comes from an export that showed the machine coder's codes (`--show-codes`): labels made \
                 beside them are not blind; label a blind export (`agora audit export` without `--show-codes`)"
                    .into(),
            );
            continue;
        }
        let label = match m.get(label_field) {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) if s.trim().is_empty() => None,
            Some(Value::String(s)) => Some(s.trim().to_string()),
            Some(Value::Array(a)) if a.is_empty() => None,
            Some(Value::Array(a)) => match a.as_slice() {
                [Value::String(s)] => Some(s.trim().to_string()),
                _ => {
                    bad(label_field, "expected one code, found a list of several values".into());
                    continue;
                }
            },
            Some(other) => {
                bad(label_field, format!("expected a code (a string), found {}", json_kind(other)));
                continue;
            }
        };
        let Some(label) = label else {
            unlabelled += 1;
            continue;
        };
        if cb.code(&label).is_none() {
            let codes: Vec<&str> = cb.codes.iter().map(|c| c.name.as_str()).collect();
            bad(
                label_field,
                format!("`{label}` is not a code of codebook {} v{} ({})", cb.name, cb.version, codes.join(", ")),
            );
            continue;
        }
        let export_id = match m.get("export_id") {
            Some(Value::String(s)) if !s.trim().is_empty() => s.trim().to_string(),
            None | Some(Value::Null) | Some(Value::String(_)) => {
                bad(
                    "export_id",
                    "missing: labels must come from a blind export of this store (`agora audit export`), whose \
                     records carry its id; a file made by hand must carry the id of the export it was read from"
                        .into(),
                );
                continue;
            }
            Some(other) => {
                bad("export_id", format!("expected an export id (a string), found {}", json_kind(other)));
                continue;
            }
        };
        match exports.get(&export_id) {
            None => {
                bad(
                    "export_id",
                    format!(
                        "`{export_id}` is not an export this store recorded: label a blind export drawn from this \
                         store with `agora audit export` (drawing the same export again records it)"
                    ),
                );
                continue;
            }
            Some(e) if !e.blind => {
                bad(
                    "export_id",
                    format!(
                        "export `{export_id}` showed the machine coder's codes (`--show-codes`): labels made beside \
                         them are not blind; label a blind export (`agora audit export` without `--show-codes`)"
                    ),
                );
                continue;
            }
            Some(e) if e.codebook != cb.name || e.version != cb.version => {
                bad(
                    "export_id",
                    format!(
                        "export `{export_id}` was drawn with codebook {} v{}, not {} v{}",
                        e.codebook, e.version, cb.name, cb.version
                    ),
                );
                continue;
            }
            Some(_) => {}
        }
        if let Some(v) = m.get("codebook").filter(|v| !is_blank(v)) {
            if v.as_str() != Some(cb.name.as_str()) {
                bad("codebook", format!("{v} is not the codebook labels are checked against (`{}`)", cb.name));
                continue;
            }
        }
        if let Some(v) = m.get("codebook_version").filter(|v| !is_blank(v)) {
            if integer(v) != Some(i64::from(cb.version)) {
                bad("codebook_version", format!("{v} is not the version of codebook `{}` ({})", cb.name, cb.version));
                continue;
            }
        }
        let rid = match m.get("response_id") {
            Some(Value::String(s)) if !s.trim().is_empty() => s.trim().to_string(),
            Some(other) => {
                bad("response_id", format!("expected a response id `run_key:seat:slot`, found {other}"));
                continue;
            }
            None => {
                bad("response_id", "missing".into());
                continue;
            }
        };
        let Some(index) = m.get("sentence_index").and_then(integer) else {
            bad(
                "sentence_index",
                match m.get("sentence_index") {
                    None => "missing".into(),
                    Some(v) => format!("expected a non-negative integer, found {v}"),
                },
            );
            continue;
        };
        let parts: Vec<&str> = rid.rsplitn(3, ':').collect();
        let key = match parts.as_slice() {
            [slot, seat, run_key] => match (seat.parse::<i64>(), slot.parse::<i64>()) {
                (Ok(seat), Ok(slot)) => Some((run_key.to_string(), seat, slot)),
                _ => None,
            },
            _ => None,
        };
        let Some((run_key, seat, slot)) = key else {
            bad("response_id", format!("`{rid}` is not a response id `run_key:seat:slot`"));
            continue;
        };
        if !responses.contains(&(run_key.clone(), seat, slot)) {
            bad(
                "response_id",
                format!("the store holds no response `{rid}` audited with codebook {} v{}", cb.name, cb.version),
            );
            continue;
        }
        let Some(s) = stored.get(&(run_key, seat, slot, index)) else {
            bad("sentence_index", format!("response `{rid}` has no sentence {index}"));
            continue;
        };
        if s.segment != "reasoning" {
            bad(
                "sentence_index",
                format!(
                    "sentence {index} of response `{rid}` is {}, not pre-action reasoning: it is never coded",
                    s.segment
                ),
            );
            continue;
        }
        if let Some(t) = m.get("text").filter(|v| !is_blank(v)) {
            if t.as_str().map(str::trim) != Some(s.text.trim()) {
                bad("text", format!("differs from the store's sentence {index} of response `{rid}`: {:?}", s.text));
                continue;
            }
        }
        let k = (s.run_id, seat, slot, index);
        if let Some(first) = first_line.get(&k) {
            bad(
                "sentence_index",
                format!("a second label by this coder for sentence {index} of response `{rid}` (the first is on line {first})"),
            );
            continue;
        }
        first_line.insert(k, line);
        checked.push(Checked {
            run_id: s.run_id,
            seat,
            slot,
            sentence_index: index,
            code: label,
            text: s.text.clone(),
            line,
            export_id,
        });
    }
    if !problems.is_empty() {
        problems.truncate(20);
        return Err(invalid(problems));
    }
    if checked.is_empty() {
        return Err(invalid(vec![Problem {
            line: records[0].0,
            field: Some(label_field.into()),
            message: format!("no record carries a label ({unlabelled} unlabelled records)"),
        }]));
    }
    let source = file.file_name().map_or_else(|| file.display().to_string(), |n| n.to_string_lossy().into_owned());
    // Labels imported before Agora recorded exports lack `export_id`: the family's upgrade adds
    // it, NULL for them, and such labels do not count for the gate (see `agreement::load_labels`).
    // The gate's decisions change with the labels: written with them.
    let store::Written { changed, unchanged, total } =
        store::write_labels(&mut conn, coder, &cb.name, cb.version, &source, &checked, crate::agreement::write_gates)
            .map_err(sql)?;
    Ok(Imported {
        coder: coder.to_string(),
        labels: checked.len(),
        unlabelled,
        changed,
        unchanged,
        total: usize::try_from(total).unwrap_or(0),
        format,
    })
}

fn is_blank(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::String(s) => s.trim().is_empty(),
        _ => false,
    }
}

/// A non-negative integer from a JSON number or a string of digits.
fn integer(v: &Value) -> Option<i64> {
    match v {
        Value::Number(n) => n.as_i64().filter(|i| *i >= 0),
        Value::String(s) => {
            let s = s.trim();
            (!s.is_empty() && s.chars().all(|c| c.is_ascii_digit())).then(|| s.parse().ok()).flatten()
        }
        _ => None,
    }
}
