//! `--shard auto` under a scheduler's variables: a study run as a Slurm job array and as a
//! Kubernetes Indexed Job — through the shipped deploy files' own commands — merges to exactly
//! the records of a single run; missing or inconsistent variables are refused with exit code 2
//! and a message naming the variable; and the deploy files agree with each other.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use rusqlite::Connection;

mod common;
use common::{count, record_hashes, text};

/// Every variable `--shard auto` or the deploy files read, removed from each command's
/// environment so that a test run inside a real scheduler is not steered by it.
const SCHEDULER_VARS: [&str; 11] = [
    "SLURM_ARRAY_TASK_ID",
    "SLURM_ARRAY_TASK_COUNT",
    "SLURM_ARRAY_TASK_MIN",
    "SLURM_ARRAY_TASK_MAX",
    "SLURM_ARRAY_TASK_STEP",
    "SLURM_CPUS_PER_TASK",
    "JOB_COMPLETION_INDEX",
    "AGORA_SHARD_COUNT",
    "AGORA_STORE_DIR",
    "AGORA_RUN_OPTIONS",
    "STUDY",
];

/// Runs per condition in these tests (the study has 62 conditions).
const RUNS: &str = "2";

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn study() -> String {
    root().join("scenarios/studies/classical.ron").display().to_string()
}

fn read(path: &str) -> String {
    std::fs::read_to_string(root().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// A temporary directory with `bin/agora` (this build's binary) to put on PATH, as the deploy
/// files expect.
struct Sandbox {
    dir: tempfile::TempDir,
}

impl Sandbox {
    fn new() -> Sandbox {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir(dir.path().join("bin")).expect("bin");
        std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_agora"), dir.path().join("bin/agora")).expect("symlink");
        Sandbox { dir }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn p(&self, name: &str) -> String {
        self.path(name).to_str().expect("utf8").to_string()
    }

    /// Runs `program` in the repository root with `bin/` first on PATH, no scheduler variables
    /// but `vars`.
    fn run(&self, program: &str, args: &[&str], vars: &[(&str, &str)]) -> Output {
        let mut c = Command::new(program);
        c.args(args).current_dir(root());
        for v in SCHEDULER_VARS {
            c.env_remove(v);
        }
        let path = std::env::var_os("PATH").unwrap_or_default();
        let mut dirs = vec![self.path("bin")];
        dirs.extend(std::env::split_paths(&path));
        c.env("PATH", std::env::join_paths(dirs).expect("PATH"));
        c.envs(vars.iter().copied());
        c.output().unwrap_or_else(|e| panic!("{program}: {e}"))
    }

    fn agora(&self, args: &[&str], vars: &[(&str, &str)]) -> Output {
        self.run(env!("CARGO_BIN_EXE_agora"), args, vars)
    }

    /// The reference: the whole study in one unsharded run.
    fn single_run(&self) -> PathBuf {
        let o = self.agora(&["run", &study(), "--runs", RUNS, "--store", &self.p("single.sqlite")], &[]);
        assert!(o.status.success(), "{}", text(&o));
        self.path("single.sqlite")
    }
}

fn runs_in(store: &Path) -> i64 {
    count(&Connection::open(store).expect("open"), "SELECT COUNT(*) FROM runs")
}

/// Each shard store holds some runs, no run is in two of them, together they hold every run of
/// the single store, and `merged` has exactly the single store's records.
fn assert_shards_merge_to(shards: &[PathBuf], merged: &Path, single: &Path) {
    let want = record_hashes(single);
    let mut keys: Vec<(String, String)> = Vec::new();
    for s in shards {
        let n = runs_in(s);
        assert!(n > 0, "{} is empty", s.display());
        keys.extend(record_hashes(s));
    }
    keys.sort();
    assert_eq!(keys.len(), want.len(), "the shards hold every run once");
    assert_eq!(keys, want, "the shards together are the single run");
    assert_eq!(record_hashes(merged), want, "the merged store is the single run's");
}

#[test]
fn a_slurm_job_array_through_the_sbatch_scripts_merges_to_the_single_run() {
    let sb = Sandbox::new();
    let single = sb.single_run();
    let dir = sb.p("shards");
    // `--array=0-2`, as Slurm sets the variables; the script itself, run by bash as sbatch would.
    for id in ["0", "1", "2"] {
        let o = sb.run(
            "bash",
            &["deploy/slurm/agora-array.sbatch", &study(), "--runs", RUNS],
            &[
                ("SLURM_ARRAY_TASK_ID", id),
                ("SLURM_ARRAY_TASK_COUNT", "3"),
                ("SLURM_ARRAY_TASK_MIN", "0"),
                ("SLURM_ARRAY_TASK_MAX", "2"),
                ("SLURM_ARRAY_TASK_STEP", "1"),
                ("SLURM_CPUS_PER_TASK", "2"),
                ("AGORA_STORE_DIR", &dir),
            ],
        );
        assert!(o.status.success(), "task {id}: {}", text(&o));
        let want = format!("--shard auto: shard {}/3 (Slurm job array)", id.parse::<usize>().expect("id") + 1);
        assert!(text(&o).contains(&want), "task {id}: {}", text(&o));
    }
    // The merge job refuses a wrong shard count, then merges.
    let merged = sb.p("merged.sqlite");
    let wrong = sb.run("bash", &["deploy/slurm/agora-merge.sbatch", "4", &merged], &[("AGORA_STORE_DIR", &dir)]);
    assert_eq!(wrong.status.code(), Some(2), "{}", text(&wrong));
    assert!(text(&wrong).contains("expected 4 shard stores"), "{}", text(&wrong));
    let m = sb.run("bash", &["deploy/slurm/agora-merge.sbatch", "3", &merged], &[("AGORA_STORE_DIR", &dir)]);
    assert!(m.status.success(), "{}", text(&m));
    let shards: Vec<PathBuf> = (0..3).map(|i| sb.path(&format!("shards/shard-{i}.sqlite"))).collect();
    assert_shards_merge_to(&shards, Path::new(&merged), &single);
}

#[test]
fn a_slurm_array_from_one_with_only_min_and_max_merges_to_the_single_run() {
    // `--array=1-3` where the count variable is absent: task ID − MIN + 1 of MAX − MIN + 1.
    let sb = Sandbox::new();
    let single = sb.single_run();
    let mut shards = Vec::new();
    for id in ["1", "2", "3"] {
        let store = sb.path(&format!("task{id}.sqlite"));
        let o = sb.agora(
            &["run", &study(), "--runs", RUNS, "--shard", "auto", "--store", store.to_str().expect("utf8")],
            &[("SLURM_ARRAY_TASK_ID", id), ("SLURM_ARRAY_TASK_MIN", "1"), ("SLURM_ARRAY_TASK_MAX", "3")],
        );
        assert!(o.status.success(), "task {id}: {}", text(&o));
        assert!(text(&o).contains(&format!("shard {id}/3")), "task {id}: {}", text(&o));
        shards.push(store);
    }
    // Task 2 is exactly `--shard 2/3`.
    let explicit = sb.p("explicit.sqlite");
    let o = sb.agora(&["run", &study(), "--runs", RUNS, "--shard", "2/3", "--store", &explicit], &[]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(record_hashes(&shards[1]), record_hashes(Path::new(&explicit)));
    let merged = sb.p("merged.sqlite");
    let mut args = vec!["merge", "--into", &merged];
    let names: Vec<&str> = shards.iter().map(|s| s.to_str().expect("utf8")).collect();
    args.extend(names);
    let m = sb.agora(&args, &[]);
    assert!(m.status.success(), "{}", text(&m));
    assert_shards_merge_to(&shards, Path::new(&merged), &single);
}

/// The literal block (`- |`) under `args:` of the `n`th Job of the manifest, dedented.
fn job_script(yaml: &str, job: &str) -> String {
    let doc = job_doc(yaml, job);
    let lines: Vec<&str> = doc.lines().collect();
    let args = lines.iter().position(|l| l.trim() == "args:").unwrap_or_else(|| panic!("{job}: args"));
    let dash = lines[args + 1];
    assert_eq!(dash.trim(), "- |", "{job}: args is one literal block");
    let dash_indent = dash.len() - dash.trim_start().len();
    let block: Vec<&str> = lines[args + 2..]
        .iter()
        .take_while(|l| l.trim().is_empty() || l.len() - l.trim_start().len() > dash_indent)
        .copied()
        .collect();
    let indent = block.iter().find(|l| !l.trim().is_empty()).map(|l| l.len() - l.trim_start().len()).expect("script");
    block.iter().map(|l| l.get(indent..).unwrap_or("")).collect::<Vec<_>>().join("\n")
}

/// The manifest's document whose metadata names `name`.
fn job_doc<'a>(yaml: &'a str, name: &str) -> &'a str {
    yaml.split("\n---\n")
        .find(|d| d.lines().any(|l| l.trim() == format!("name: {name}")) && d.contains("kind: Job"))
        .unwrap_or_else(|| panic!("no Job named {name}"))
}

/// The value of `key: value` in a document (first occurrence), unquoted.
fn field<'a>(doc: &'a str, key: &str) -> &'a str {
    doc.lines()
        .find_map(|l| l.trim().strip_prefix(&format!("{key}:")))
        .map(|v| v.trim().trim_matches('"'))
        .unwrap_or_else(|| panic!("no `{key}`"))
}

/// The value of the container environment variable `name` in a document.
fn env_value<'a>(doc: &'a str, name: &str) -> &'a str {
    let lines: Vec<&str> = doc.lines().collect();
    let at = lines.iter().position(|l| l.trim() == format!("- name: {name}")).unwrap_or_else(|| panic!("env {name}"));
    let v = lines[at + 1].trim().strip_prefix("value:").unwrap_or_else(|| panic!("env {name}: value"));
    v.trim().trim_matches('"')
}

#[test]
fn a_kubernetes_indexed_job_through_the_manifests_commands_merges_to_the_single_run() {
    let yaml = read("deploy/kubernetes/agora-indexed-job.yaml");
    let shards_doc = job_doc(&yaml, "agora-shards");
    let completions: usize = field(shards_doc, "completions").parse().expect("completions");
    let count = env_value(shards_doc, "AGORA_SHARD_COUNT");
    let sb = Sandbox::new();
    let single = sb.single_run();
    let dir = sb.p("store");
    std::fs::create_dir(&dir).expect("store dir");
    let options = format!("--runs {RUNS}");
    // Every pod of the Job, running the manifest's own script with its variables; Kubernetes
    // sets JOB_COMPLETION_INDEX.
    let pod = job_script(&yaml, "agora-shards");
    let study = study();
    for i in 0..completions {
        let index = i.to_string();
        let o = sb.run(
            "sh",
            &["-c", &pod],
            &[
                ("JOB_COMPLETION_INDEX", &index),
                ("AGORA_SHARD_COUNT", count),
                ("STUDY", &study),
                ("AGORA_RUN_OPTIONS", &options),
                ("AGORA_STORE_DIR", &dir),
            ],
        );
        assert!(o.status.success(), "pod {i}: {}", text(&o));
        let want = format!("--shard auto: shard {}/{completions} (Kubernetes Indexed Job)", i + 1);
        assert!(text(&o).contains(&want), "pod {i}: {}", text(&o));
        assert!(sb.path(&format!("store/shard-{i}.done")).exists(), "pod {i} leaves its marker");
    }
    let merge_doc = job_doc(&yaml, "agora-merge");
    let merge = job_script(&yaml, "agora-merge");
    let m = sb.run(
        "sh",
        &["-c", &merge],
        &[("AGORA_SHARD_COUNT", env_value(merge_doc, "AGORA_SHARD_COUNT")), ("AGORA_STORE_DIR", &dir)],
    );
    assert!(m.status.success(), "{}", text(&m));
    let shards: Vec<PathBuf> = (0..completions).map(|i| sb.path(&format!("store/shard-{i}.sqlite"))).collect();
    assert_shards_merge_to(&shards, &sb.path("store/merged.sqlite"), &single);
}

#[test]
fn missing_or_inconsistent_scheduler_variables_exit_2_naming_the_variable() {
    let sb = Sandbox::new();
    let study = study();
    let dry = ["run", study.as_str(), "--shard", "auto", "--dry-run"];
    for (vars, needle) in [
        (&[][..], "no scheduler variables"),
        (&[][..], "SLURM_ARRAY_TASK_ID"),
        (&[("JOB_COMPLETION_INDEX", "0")][..], "AGORA_SHARD_COUNT"),
        (&[("JOB_COMPLETION_INDEX", "3"), ("AGORA_SHARD_COUNT", "3")][..], "JOB_COMPLETION_INDEX=3"),
        (&[("JOB_COMPLETION_INDEX", "0"), ("AGORA_SHARD_COUNT", "three")][..], "AGORA_SHARD_COUNT"),
        (&[("SLURM_ARRAY_TASK_ID", "0")][..], "SLURM_ARRAY_TASK_COUNT"),
        (
            &[("SLURM_ARRAY_TASK_ID", "0"), ("SLURM_ARRAY_TASK_COUNT", "3"), ("SLURM_ARRAY_TASK_STEP", "2")][..],
            "SLURM_ARRAY_TASK_STEP",
        ),
        (
            // --array=1,3,5
            &[
                ("SLURM_ARRAY_TASK_ID", "3"),
                ("SLURM_ARRAY_TASK_COUNT", "3"),
                ("SLURM_ARRAY_TASK_MIN", "1"),
                ("SLURM_ARRAY_TASK_MAX", "5"),
            ][..],
            "not a contiguous range",
        ),
        (&[("SLURM_ARRAY_TASK_ID", "7"), ("SLURM_ARRAY_TASK_COUNT", "3")][..], "SLURM_ARRAY_TASK_ID=7"),
        (&[("SLURM_ARRAY_TASK_ID", "x"), ("SLURM_ARRAY_TASK_COUNT", "3")][..], "SLURM_ARRAY_TASK_ID"),
    ] {
        let o = sb.agora(&dry, vars);
        assert_eq!(o.status.code(), Some(2), "{vars:?}: {}", text(&o));
        assert!(text(&o).contains(needle), "{vars:?}: expected `{needle}` in {}", text(&o));
        assert!(!text(&o).contains("panicked"), "{}", text(&o));
    }
    // A dry run under a valid array prints that task's part of the plan.
    let whole = sb.agora(&["run", &study, "--dry-run"], &[]);
    let part = sb.agora(&dry, &[("JOB_COMPLETION_INDEX", "1"), ("AGORA_SHARD_COUNT", "4")]);
    assert!(part.status.success(), "{}", text(&part));
    let total = |o: &Output| -> usize {
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .find_map(|l| l.strip_prefix("total: ").and_then(|r| r.split(' ').next()).and_then(|n| n.parse().ok()))
            .expect("total line")
    };
    // Shard 2 of 4 keeps the plan positions 1, 5, 9, …
    assert_eq!(total(&part), (total(&whole) + 2) / 4, "{}", text(&part));
    // The sbatch script outside a job array says why.
    let o = sb.run("bash", &["deploy/slurm/agora-array.sbatch", &study], &[]);
    assert!(!o.status.success());
    assert!(text(&o).contains("SLURM_ARRAY_TASK_ID"), "{}", text(&o));
}

#[test]
fn the_deploy_files_agree_with_each_other_and_with_shard_auto() {
    // Kubernetes: an Indexed Job whose AGORA_SHARD_COUNT is its completions, in both Jobs, on
    // the manifest's claim, each pod writing the store its index names.
    let yaml = read("deploy/kubernetes/agora-indexed-job.yaml");
    let shards = job_doc(&yaml, "agora-shards");
    assert_eq!(field(shards, "completionMode"), "Indexed");
    let completions = field(shards, "completions");
    let parallelism: usize = field(shards, "parallelism").parse().expect("parallelism");
    assert!(parallelism >= 1 && parallelism <= completions.parse().expect("completions"));
    assert_eq!(field(shards, "restartPolicy"), "Never", "backoffLimitPerIndex needs restartPolicy Never");
    let merge = job_doc(&yaml, "agora-merge");
    for doc in [shards, merge] {
        assert_eq!(env_value(doc, "AGORA_SHARD_COUNT"), completions, "AGORA_SHARD_COUNT must equal completions");
        assert_eq!(field(doc, "claimName"), "agora-store");
        assert_eq!(field(doc, "mountPath"), env_value(doc, "AGORA_STORE_DIR"));
        assert_eq!(field(doc, "image"), field(shards, "image"));
    }
    assert!(yaml.contains("kind: PersistentVolumeClaim\nmetadata:\n  name: agora-store\n"), "the claim");
    let pod = job_script(&yaml, "agora-shards");
    assert!(pod.contains("--shard auto"), "{pod}");
    assert!(pod.contains("shard-$JOB_COMPLETION_INDEX.sqlite"), "{pod}");
    let merge_script = job_script(&yaml, "agora-merge");
    assert!(merge_script.contains("agora merge --into"), "{merge_script}");
    assert!(merge_script.contains("shard-$i.sqlite") && merge_script.contains("shard-*.done"), "{merge_script}");

    // Slurm: directives before the first command (sbatch reads no further), a contiguous array
    // from 0, each task writing the store its index names, and a merge after the array.
    for name in ["deploy/slurm/agora-array.sbatch", "deploy/slurm/agora-merge.sbatch"] {
        let s = read(name);
        assert!(s.starts_with("#!/usr/bin/env bash\n"), "{name}");
        let first_command = s.lines().position(|l| !l.trim().is_empty() && !l.starts_with('#')).expect("commands");
        let last_directive =
            s.lines().collect::<Vec<_>>().iter().rposition(|l| l.starts_with("#SBATCH")).expect("directives");
        assert!(last_directive < first_command, "{name}: an #SBATCH line after the first command is ignored");
    }
    let array = read("deploy/slurm/agora-array.sbatch");
    let range = array.lines().find_map(|l| l.strip_prefix("#SBATCH --array=")).expect("--array");
    let (lo, hi) = range.split_once('-').expect("a range");
    assert_eq!(lo, "0");
    assert!(hi.parse::<usize>().is_ok(), "a plain range, no step or list: {range}");
    assert!(array.contains("--shard auto"));
    assert!(array.contains("task=${SLURM_ARRAY_TASK_ID:?") && array.contains("\"$dir/shard-$task.sqlite\""));
    let merge = read("deploy/slurm/agora-merge.sbatch");
    assert!(merge.contains("\"$dir\"/shard-*.sqlite") && merge.contains("agora merge --into"));
    let submit = read("deploy/slurm/submit.sh");
    assert!(submit.contains("--array=\"0-$((shards - 1))\" \"$here/agora-array.sbatch\""), "{submit}");
    assert!(submit.contains("--dependency=\"afterok:$jid\" \"$here/agora-merge.sbatch\" \"$shards\""), "{submit}");
    for name in ["deploy/slurm/agora-array.sbatch", "deploy/slurm/agora-merge.sbatch", "deploy/slurm/submit.sh"] {
        let o = Command::new("bash").args(["-n", name]).current_dir(root()).output().expect("bash");
        assert!(o.status.success(), "{name}: {}", text(&o));
    }

    // Documented: every deploy file, the variables, and the model endpoints.
    let readme = read("deploy/README.md");
    for needle in [
        "agora-array.sbatch",
        "agora-merge.sbatch",
        "submit.sh",
        "agora-indexed-job.yaml",
        "SLURM_ARRAY_TASK_ID",
        "JOB_COMPLETION_INDEX",
        "AGORA_SHARD_COUNT",
        "endpoints",
        "concurrency",
    ] {
        assert!(readme.contains(needle), "deploy/README.md should mention {needle}");
    }
}
