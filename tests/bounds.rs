//! Every size of a study or a profile study is checked against a declared bound, with the
//! memory it would take in the message, before anything is allocated: exit 2, never an abort.

use std::path::Path;

mod common;
use common::{agora, text, write_study_file};

/// Writes a one-block study of `environment` played by `policy` with `runs` runs (and `extra`
/// after the block's rosters).
fn study(dir: &Path, runs: u64, environment: &str, policy: &str, extra: &str) -> String {
    let text = format!(
        "Study(version: 1, name: \"big\", master_seed: 1, runs: {runs}, blocks: [Block(name: \"b\", \
         environment: {environment}, rosters: [Roster(name: \"r\", members: [Member(policy: {policy})])]{extra})])"
    );
    write_study_file(dir, &[], "big.ron", &text).display().to_string()
}

/// `check` and `run` both refuse it with exit 2, the message holding each of `needles`, and no
/// store is written.
fn refused(path: &str, needles: &[&str]) {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = dir.path().join("s.sqlite");
    for args in [vec!["check", path], vec!["run", path, "--store", store.to_str().expect("utf8")]] {
        let o = agora(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
        for n in needles {
            assert!(text(&o).contains(n), "{args:?}: `{n}` missing from {}", text(&o));
        }
    }
    assert!(!store.exists(), "nothing written");
}

#[test]
fn a_run_longer_than_the_bound_is_refused_with_its_memory_figure() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    // 10⁹ rounds: 2 × 10⁹ decisions, about 745 GiB at 400 bytes each.
    refused(
        &study(d, 1, "PrisonersDilemma(rounds: 1000000000)", "TitForTat", ""),
        &["`rounds`", "2000000000 decisions", "745.1 GiB", "at most 1000000"],
    );
    refused(&study(d, 1, "PublicGoods(rounds: 1000000000)", "AlwaysCooperate", ""), &["`rounds`", "TiB"]);
    refused(&study(d, 1, "StagHunt(rounds: 1000000000)", "AlwaysCooperate", ""), &["`rounds`", "745.1 GiB"]);
    refused(&study(d, 1, "Bargaining(games: 1000000000)", "AlwaysCooperate", ""), &["`games`", "745.1 GiB"]);
    refused(&study(d, 1, "MoneyRequest(games: 1000000000)", "AlwaysCooperate", ""), &["`games`", "745.1 GiB"]);
    refused(&study(d, 1, "NamingGame(cap: 1000000000)", "MinimalNaming", ""), &["`cap`", "2000000000 decisions"]);
    refused(&study(d, 1, "NamingGame(window: 4000000000)", "MinimalNaming", ""), &["`window`", "4000000000"]);
    // At the bound a run is allowed: 500,000 rounds are 1,000,000 decisions.
    let o = agora(&["check", &study(d, 1, "PrisonersDilemma(rounds: 500000)", "TitForTat", "")]);
    assert!(o.status.success(), "{}", text(&o));
    refused(&study(d, 1, "PrisonersDilemma(rounds: 500001)", "TitForTat", ""), &["1000002 decisions"]);
}

#[test]
fn a_plan_larger_than_the_bound_is_refused_before_its_runs_are_built() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    // 10⁹ runs used to take the machine's memory in `check` (608 bytes a planned run).
    refused(
        &study(d, 1_000_000_000, "PrisonersDilemma(rounds: 10)", "TitForTat", ""),
        &["`runs`", "1000000000 runs", "566.2 GiB", "at most 1000000 runs"],
    );
    refused(
        &study(d, 1, "PrisonersDilemma(rounds: 10)", "TitForTat", ", runs: 2000000"),
        &["`blocks[0].runs`", "2000000 runs"],
    );
    refused(
        &study(
            d,
            1,
            "NamingGame(tipping: Tipping(established: 0, alternative: 1))",
            "MinimalNaming",
            ", sweep: CommittedFraction(from: 0.0, to: 0.4, step: 1e-300)",
        ),
        &["`blocks[0].sweep`", "step 1e-300", "4.000e299 values", "at most 1000000 runs"],
    );
}

/// A profile study writing `responses` and `gr_responses`.
fn profile_study(dir: &Path, responses: u64, gr_responses: u64) -> String {
    let p = dir.join(format!("profile-{responses}-{gr_responses}.ron"));
    std::fs::write(
        &p,
        format!(
            "ProfileStudy(version: 1, name: \"big\", master_seed: 1, include_models: \
             Some(\"{}\"), models: [], tasks: [\"dictator\"], responses: {responses}, reduced_protocol: true, \
             general_robustness: true, gr_responses: {gr_responses})",
            Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/models/local-gemma.ron").display()
        ),
    )
    .expect("write");
    p.display().to_string()
}

#[test]
fn a_profile_beyond_its_response_bounds_is_refused_with_its_memory_figure() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = dir.path().join("p.sqlite");
    let store = store.to_str().expect("utf8");
    for (study, needles) in [
        (profile_study(dir.path(), 1_000_000_000, 30), ["`responses`", "1075.4 TiB", "at most 1000"]),
        (profile_study(dir.path(), 15, 1_000_000_000), ["`gr_responses`", "5.8 TiB", "at most 10000"]),
    ] {
        for args in [vec!["profile", &study, "--dry-run"], vec!["profile", &study, "--store", store]] {
            let o = agora(&args);
            assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
            for n in needles {
                assert!(text(&o).contains(n), "{args:?}: `{n}` missing from {}", text(&o));
            }
        }
    }
    assert!(!Path::new(store).exists(), "nothing written");
    // Within the bounds the dry run plans.
    let o = agora(&["profile", &profile_study(dir.path(), 2, 3), "--dry-run"]);
    assert!(o.status.success(), "{}", text(&o));
}
