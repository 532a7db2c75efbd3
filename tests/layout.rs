//! The store has doors: no SQL is written anywhere but in the records crate (tests aside), so
//! every table's layout, version, reads and writes are in one place.

use std::path::{Path, PathBuf};

/// What marks a line as SQL: a statement in a string literal, or a call that runs one.
const SQL: [&str; 12] = [
    "\"SELECT ",
    "\"INSERT ",
    "\"UPDATE ",
    "\"DELETE ",
    "\"CREATE ",
    "\"DROP ",
    "\"ALTER ",
    "\"PRAGMA ",
    ".execute_batch(",
    ".query_row(",
    ".prepare_cached(",
    ".pragma_update(",
];

/// The lines of `text` for which `hit` holds, as (line number, line), leaving out comments and
/// everything from a `#[cfg(test)]` on (the crates keep their unit tests at the end of a file).
fn lines_where(text: &str, hit: impl Fn(&str) -> bool) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let code = line.trim_start();
        if code.starts_with("#[cfg(test)]") {
            break;
        }
        if !code.starts_with("//") && hit(code) {
            out.push((i + 1, line.to_string()));
        }
    }
    out
}

/// The lines of `text` that hold SQL.
fn sql_lines(text: &str) -> Vec<(usize, String)> {
    lines_where(text, |code| SQL.iter().any(|s| code.contains(s)) || starts_sql(code))
}

/// A statement continued on its own line of a multi-line string (`"\n    SELECT …`).
fn starts_sql(code: &str) -> bool {
    ["SELECT ", "INSERT INTO ", "UPDATE ", "DELETE FROM ", "CREATE TABLE ", "CREATE VIEW "]
        .iter()
        .any(|k| code.starts_with(k) || code.starts_with(&format!("\"{k}")))
}

/// The Rust files of the workspace that are not tests: not under a `tests/` directory, not a
/// `tests.rs`, not in target/ or the records crate.
fn product_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("a directory of the workspace") {
        let path = entry.expect("an entry").path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_string();
        if path.is_dir() {
            if ["target", "tests", "records", ".git", "node_modules"].contains(&name.as_str()) || name.starts_with('.')
            {
                continue;
            }
            product_files(&path, out);
        } else if name.ends_with(".rs") && name != "tests.rs" {
            out.push(path);
        }
    }
}

#[test]
fn no_sql_outside_the_records_crate() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    product_files(root, &mut files);
    assert!(files.len() > 100, "the walk found the workspace's files ({})", files.len());
    let mut found = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).expect("a source file");
        for (line, code) in sql_lines(&text) {
            found.push(format!("{}:{line}: {}", f.strip_prefix(root).unwrap_or(f).display(), code.trim()));
        }
    }
    assert!(found.is_empty(), "SQL outside the records crate:\n{}", found.join("\n"));
}

#[test]
fn the_check_finds_sql_where_it_is_and_not_in_tests_or_comments() {
    let product =
        "fn f(c: &Connection) {\n    let n = c.query_row(\"SELECT COUNT(*) FROM runs\", [], |r| r.get(0));\n}\n";
    assert_eq!(sql_lines(product).len(), 1);
    let multi = "const S: &str = \"\nCREATE TABLE IF NOT EXISTS t (k TEXT);\n\";\n";
    assert_eq!(sql_lines(multi).len(), 1, "a statement on a line of its own");
    let batch = "fn g(c: &Connection) { c.execute_batch(SCHEMA).unwrap(); }\n";
    assert_eq!(sql_lines(batch).len(), 1);
    let commented = "// SELECT is read by the ladder\n/// `INSERT OR IGNORE` keeps the first\n";
    assert!(sql_lines(commented).is_empty());
    let tested = "fn h() {}\n#[cfg(test)]\nmod tests {\n    const T: &str = \"SELECT 1\";\n}\n";
    assert!(sql_lines(tested).is_empty(), "unit tests may hold SQL");
}

/// What writes to the terminal: a print macro or a handle on standard output or error.
const PRINTS: [&str; 7] = ["print!(", "println!(", "eprint!(", "eprintln!(", "dbg!(", "io::stdout()", "io::stderr()"];

/// The lines of `text` that print (unit tests and comments aside).
fn print_lines(text: &str) -> Vec<(usize, String)> {
    lines_where(text, |code| PRINTS.iter().any(|p| code.contains(p)))
}

/// The audit and the profile are libraries: they return their outcomes and typed errors, and
/// the binary prints and chooses the exit code. Neither writes to the terminal nor returns an
/// `anyhow` error.
#[test]
fn the_audit_and_profile_crates_print_nothing_and_return_typed_errors() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut found = Vec::new();
    for krate in ["audit", "profile"] {
        let mut files = Vec::new();
        product_files(&root.join(krate).join("src"), &mut files);
        assert!(files.len() > 10, "the walk found {krate}'s files ({})", files.len());
        for f in &files {
            let text = std::fs::read_to_string(f).expect("a source file");
            for (line, code) in print_lines(&text) {
                found.push(format!("{}:{line}: {}", f.strip_prefix(root).unwrap_or(f).display(), code.trim()));
            }
            if text.contains("anyhow") {
                found.push(format!("{}: uses anyhow", f.strip_prefix(root).unwrap_or(f).display()));
            }
        }
        let manifest = std::fs::read_to_string(root.join(krate).join("Cargo.toml")).expect("a manifest");
        if manifest.lines().any(|l| l.trim_start().starts_with("anyhow")) {
            found.push(format!("{krate}/Cargo.toml: depends on anyhow"));
        }
    }
    assert!(found.is_empty(), "printing or untyped errors in the audit or profile crates:\n{}", found.join("\n"));
}

#[test]
fn the_print_check_finds_prints_and_passes_comments_and_tests() {
    assert_eq!(print_lines("fn f() {\n    println!(\"{} runs\", n);\n}\n").len(), 1);
    assert_eq!(print_lines("fn g() { eprintln!(\"note: {e}\"); }\n").len(), 1);
    assert_eq!(print_lines("fn h() { let _ = writeln!(std::io::stderr(), \"x\"); }\n").len(), 1);
    assert!(print_lines("/// The binary prints it (`println!`).\nfn k() {}\n").is_empty());
    assert!(print_lines("fn k() {}\n#[cfg(test)]\nmod tests {\n    fn t() { println!(\"debug\"); }\n}\n").is_empty());
}
