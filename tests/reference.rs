//! The file reference (`schemas/*.schema.json`, `docs/src/reference/*.md`) is generated from the
//! types that parse the files; these tests hold the committed files to this build's types, and
//! the games and policies `agora list --params` prints to what a study file accepts.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

fn agora(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_agora")).args(args).output().expect("agora runs")
}

/// Every file under `dir`, by its path relative to `dir`.
fn files(dir: &Path) -> BTreeSet<PathBuf> {
    let mut out = BTreeSet::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else { continue };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.insert(p.strip_prefix(dir).expect("under dir").to_path_buf());
            }
        }
    }
    out
}

/// A type that changes without the reference written anew fails here: the schemas and pages are
/// regenerated and compared byte for byte with the committed ones (and none is left over).
#[test]
fn the_committed_reference_is_this_builds() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = tempfile::tempdir().expect("tempdir");
    let o = agora(&["reference", "--out", out.path().to_str().expect("utf-8")]);
    assert!(o.status.success(), "agora reference failed: {}", String::from_utf8_lossy(&o.stderr));
    let fix = "write it anew with `cargo run -- reference` at the repository's root";
    for dir in ["schemas", "docs/src/reference"] {
        let generated = files(&out.path().join(dir));
        let committed = files(&root.join(dir));
        assert!(!generated.is_empty(), "nothing generated under {dir}");
        for f in committed.difference(&generated) {
            panic!("{dir}/{} is no longer generated: delete it, or {fix}", f.display());
        }
        for f in &generated {
            let new = std::fs::read(out.path().join(dir).join(f)).expect("generated");
            let old = std::fs::read(root.join(dir).join(f)).unwrap_or_default();
            assert!(new == old, "{dir}/{} is stale or missing: {fix}", f.display());
        }
    }
}

/// Every page of the reference is in the book's table of contents.
#[test]
fn every_reference_page_is_in_the_book() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let summary = std::fs::read_to_string(root.join("docs/src/SUMMARY.md")).expect("SUMMARY.md");
    for f in files(&root.join("docs/src/reference")) {
        let link = format!("(reference/{})", f.display());
        assert!(summary.contains(&link), "docs/src/SUMMARY.md does not link {link}");
    }
}
