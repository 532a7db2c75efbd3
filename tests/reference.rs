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
        if let Some(f) = committed.difference(&generated).next() {
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

/// The lines of `agora list WHAT --params`: the name, then the form a study file takes.
fn forms(what: &str) -> Vec<(String, String)> {
    let o = agora(&["list", what, "--params"]);
    assert!(o.status.success(), "agora list {what} --params: {}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout)
        .expect("utf-8")
        .lines()
        .map(|l| {
            let (name, form) = l.split_once(' ').expect("a name, then the form");
            (name.to_string(), form.trim().to_string())
        })
        .collect()
}

/// `agora check` on a one-block study of `environment` played by `policy`.
fn check(environment: &str, policy: &str) -> Result<(), String> {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("params.ron");
    let study = format!(
        "Study(version: 1, name: \"params\", master_seed: 1, runs: 1, blocks: [Block(name: \"b\", \
         environment: {environment}, rosters: [Roster(name: \"r\", members: [Member(policy: {policy})])])])"
    );
    std::fs::write(&path, &study).expect("write the study");
    let cells = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/cells");
    let o = agora(&["check", path.to_str().expect("utf-8"), "--cells", cells.to_str().expect("utf-8")]);
    if o.status.success() {
        Ok(())
    } else {
        Err(format!("{study}\n{}", String::from_utf8_lossy(&o.stderr)))
    }
}

/// Every game and every policy `list --params` prints is taken by a study file as printed, and
/// shows every parameter its schema has.
#[test]
fn every_printed_game_and_policy_passes_check_in_a_study() {
    let environments = forms("environments");
    let agents = forms("agents");
    assert_eq!(environments.len(), agora_environments::EnvKind::ALL.len());
    assert_eq!(agents.len(), agora_agents::PolicySpec::registry().len());
    let env_form = |name: &str| environments.iter().find(|(n, _)| n == name).map(|(_, f)| f.clone());
    let agent_form = |name: &str| agents.iter().find(|(n, _)| n == name).map(|(_, f)| f.clone());
    assert!(env_form("prisoners-dilemma").is_some_and(|f| f == "PrisonersDilemma(rounds: 10, memory: 5)"));
    assert!(env_form("naming-game").is_some_and(|f| f.contains("fallback: None")), "skipped fields are shown");
    for (name, form) in &environments {
        let policy = agora_agents::PolicySpec::registry()
            .into_iter()
            .find(|p| p.meta().environments.iter().any(|e| e.as_str() == name))
            .unwrap_or_else(|| panic!("no registered policy plays {name}"));
        let policy = agent_form(policy.meta().name).expect("every registered policy is listed");
        check(form, &policy).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
    for p in agora_agents::PolicySpec::registry() {
        let form = agent_form(p.meta().name).expect("listed");
        let env = p.meta().environments.first().expect("a policy plays some game").as_str();
        check(&env_form(env).expect("listed"), &form).unwrap_or_else(|e| panic!("{}: {e}", p.meta().name));
    }
}
