//! The Python package's install command: README gives one `pip install` command, `.ci/run` runs
//! exactly that command (read from README), the book gives the same, and it points at the
//! package's directory in this checkout.

use std::path::Path;

fn read(path: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(path)).expect("the file is in the checkout")
}

/// The README's `pip install` lines.
fn pip_lines(text: &str) -> Vec<&str> {
    text.lines().filter(|l| l.starts_with("pip install ")).collect()
}

#[test]
fn readme_gives_one_pip_command_and_ci_runs_it() {
    let readme = read("README.md");
    let lines = pip_lines(&readme);
    assert_eq!(lines, ["pip install ./python"], "README should give exactly one `pip install` command");
    let ci = read(".ci/run");
    assert!(ci.contains("grep -m1 '^pip install ' README.md"), ".ci/run should read the pip command from README");
    assert!(ci.contains(&format!("\"{}\") ;;", lines[0])), ".ci/run should accept exactly README's pip command");
    let book = read("docs/src/python.md");
    assert!(book.contains(lines[0]), "the book's From Python chapter should give README's pip command");
    let target = lines[0].trim_start_matches("pip install ");
    assert!(Path::new(env!("CARGO_MANIFEST_DIR")).join(target).join("pyproject.toml").exists());
    let pyproject = read("python/pyproject.toml");
    assert!(pyproject.contains("build-backend = \"maturin\"") && pyproject.contains("module-name = \"agora._agora\""));
    assert!(read("python/Cargo.toml").contains("abi3-py39"), "one wheel for every CPython from 3.9 on");
}
