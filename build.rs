//! Records the commit the `agora` binary is built from (`AGORA_COMMIT`), for the deposits it
//! makes; a build outside a git checkout (a source tarball) records none, and the binary says
//! `unknown`.

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().to_string()).filter(|s| !s.is_empty())
}

/// Asks Cargo to build again when `path` changes; a path that does not exist is not named (Cargo
/// would then run this script on every build).
fn watch(path: &str) {
    if std::path::Path::new(path).exists() {
        println!("cargo:rerun-if-changed={path}");
    }
}

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let Some(commit) = git(&["rev-parse", "HEAD"]) else { return };
    println!("cargo:rustc-env=AGORA_COMMIT={commit}");
    // Built again when the checkout moves to another commit: HEAD, the branch it names, and the
    // packed refs (a worktree's HEAD is in its own git directory, its branches in the common one).
    if let Some(dir) = git(&["rev-parse", "--git-dir"]) {
        watch(&format!("{dir}/HEAD"));
    }
    if let Some(common) = git(&["rev-parse", "--git-common-dir"]) {
        watch(&format!("{common}/packed-refs"));
        if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
            watch(&format!("{common}/{branch}"));
        }
    }
}
