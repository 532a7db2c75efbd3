//! The shipped question versions of the behavioural profile (the profile methods §M02–§M03): every task's
//! file `assets/profile/versions/<task>.ron` parses with its eleven versions, every input of the
//! task renders under every version (reference labels, and alternative labels where the task's
//! schedule relabels), the files match their frozen hashes in `assets/profile/versions.lock`, and
//! broken files are refused with an error naming the file and the field.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use agora_profile::tasks::catalogue::{b4_input, b4_round, inputs, Answer, Input};
use agora_profile::tasks::render::{render, Presentation};
use agora_profile::tasks::versions::{self, TaskVersions, Verdict, Version, RULES};
use agora_profile::tasks::{Level, Task, VERSION_IDS};

fn versions_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../assets/profile/versions")
}

fn lock_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../assets/profile/versions.lock")
}

fn file_of(task: Task) -> PathBuf {
    versions_dir().join(format!("{}.ron", task.versions_file()))
}

fn read(task: Task) -> String {
    std::fs::read_to_string(file_of(task)).unwrap_or_else(|e| panic!("{}: {e}", file_of(task).display()))
}

/// Every input a version must render: the catalogue, and for B4 round 1 and a round after a
/// one-round history at each condition.
fn all_inputs(task: Task) -> Vec<Input> {
    if task == Task::B4 {
        Level::ALL
            .into_iter()
            .flat_map(|level| [b4_input(level, 1, &[]), b4_input(level, 2, &[b4_round(level, 1, "l", "r")])])
            .collect()
    } else {
        inputs(task)
    }
}

fn relabels(task: Task) -> bool {
    task.schedule().operations().iter().any(|o| o.relabels())
}

/// The question as the model reads it: placeholders filled from the input's facts, then labels.
fn filled(template: &str, input: &Input, version: &Version, alt: bool) -> String {
    let mut out = template.to_string();
    for (name, value) in &input.facts {
        out = out.replace(&format!("{{{name}}}"), value);
    }
    let labels = if alt { &version.alt_labels } else { &version.labels };
    for (key, label) in labels.iter().chain(version.labels.iter()) {
        out = out.replace(&format!("{{{key}}}"), label);
    }
    out
}

#[test]
fn every_task_has_eleven_versions_that_render_every_input() {
    // E6–E9 share the questionnaire's versions with E1–E5; their items are a lab's own file
    // (`questionnaire_user_items` renders a synthetic one).
    for task in Task::ALL.into_iter().filter(|t| !t.user_items()) {
        let text = read(task);
        let loaded = versions::parse(task, &file_of(task), text.as_bytes()).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(loaded.versions.len(), 11, "{task}");
        let ids: Vec<&str> = loaded.versions.iter().map(|v| v.id.as_str()).collect();
        assert_eq!(ids, VERSION_IDS, "{task}");
        let inputs = all_inputs(task);
        assert!(!inputs.is_empty(), "{task}");
        let mut presentations = vec![Presentation::reference()];
        if relabels(task) {
            presentations.push(Presentation { alt_labels: true, ..Presentation::reference() });
        }
        let mut first_texts = BTreeSet::new();
        for v in &loaded.versions {
            for (k, input) in inputs.iter().enumerate() {
                for p in &presentations {
                    let r = render(input, v, p).unwrap_or_else(|e| panic!("{task} {} {}: {e}", v.id, input.point));
                    let question = filled(&v.question, input, v, p.alt_labels);
                    assert!(!question.contains('{'), "{task} {}: unfilled question {question}", v.id);
                    assert!(
                        r.text.contains(&question),
                        "{task} {}: the text lacks the question {question:?}:\n{}",
                        v.id,
                        r.text
                    );
                    assert!(r.text.contains(&format!("\"{}\"", v.answer.field())), "{task} {}: no answer field", v.id);
                    if let Answer::Options(keys) = &input.answer {
                        // Every option shown once, under a label of its own.
                        assert_eq!(r.shown.len(), keys.len(), "{task} {}", v.id);
                        let distinct: BTreeSet<&str> = r.shown.iter().map(|(l, _)| l.as_str()).collect();
                        assert_eq!(distinct.len(), keys.len(), "{task} {}: labels repeat in {:?}", v.id, r.shown);
                        if p.alt_labels {
                            for (label, key) in &r.shown {
                                assert_ne!(Some(label), v.labels.get(*key), "{task} {}: `{key}` keeps its label", v.id);
                            }
                        }
                    }
                    if k == 0 && !p.alt_labels {
                        first_texts.insert(r.text.clone());
                    }
                }
            }
            // Every verdict is Eligible (parse refuses any other).
            for judgement in &v.eligibility {
                assert_eq!(judgement.verdict, Verdict::Eligible);
            }
        }
        assert_eq!(first_texts.len(), 11, "{task}: two versions render the same text");
        // Each rule's reason is the version's own, not a copy of another version's.
        for rule in RULES {
            let reasons: BTreeSet<&str> = loaded
                .versions
                .iter()
                .map(|v| v.eligibility.iter().find(|j| j.rule == rule).expect("every rule is judged").reason.as_str())
                .collect();
            assert_eq!(reasons.len(), 11, "{task}: versions share the reason for `{rule}`");
        }
    }
}

#[test]
fn the_versions_match_the_lock() {
    let loaded = versions::load(&versions_dir(), &lock_path(), &Task::ALL).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(loaded.len(), Task::ALL.len());
    let lock = versions::read_lock(&lock_path()).unwrap();
    let files: BTreeSet<&str> = Task::ALL.iter().map(|t| t.versions_file()).collect();
    assert_eq!(lock.len(), files.len(), "the lock names every version file and nothing else");
    for l in &loaded {
        assert_eq!(lock.get(l.task.versions_file()), Some(&l.sha256));
    }
}

fn parse_dictator(text: &str) -> Result<versions::Loaded, String> {
    versions::parse(Task::Dictator, &file_of(Task::Dictator), text.as_bytes()).map_err(|e| e.to_string())
}

fn dictator() -> TaskVersions {
    ron::from_str(&read(Task::Dictator)).expect("the shipped file parses")
}

fn serialised(file: &TaskVersions) -> String {
    ron::ser::to_string_pretty(file, ron::ser::PrettyConfig::default()).unwrap()
}

#[test]
fn a_goal_sentence_is_refused_under_no_goal() {
    let text = read(Task::Dictator);
    let q03 = text.find("id: \"Q03\"").expect("Q03");
    let at = q03 + text[q03..].find("text: [").expect("Q03's text") + "text: [".len();
    let broken =
        format!("{}\n                \"Your goal is to earn as many points as you can.\",{}", &text[..at], &text[at..]);
    let e = parse_dictator(&broken).expect_err("a goal sentence breaks no-goal");
    assert!(e.contains("dictator.ron"), "{e}");
    assert!(e.contains("`versions[3].eligibility.no-goal`"), "{e}");
    assert!(e.contains("Your goal is to earn as many points"), "{e}");
    // The unchanged text parses.
    parse_dictator(&text).unwrap();
}

#[test]
fn a_missing_rule_is_refused() {
    let mut file = dictator();
    file.versions[5].eligibility.retain(|j| j.rule != "no-prefill");
    let e = parse_dictator(&serialised(&file)).expect_err("a rule without a verdict");
    assert!(e.contains("dictator.ron"), "{e}");
    assert!(e.contains("`versions[5].eligibility`"), "{e}");
    assert!(e.contains("no-prefill"), "{e}");
}

#[test]
fn an_excluded_version_is_refused() {
    let mut file = dictator();
    file.versions[7].eligibility[2].verdict = Verdict::Excluded;
    let e = parse_dictator(&serialised(&file)).expect_err("an excluded version");
    assert!(e.contains("`versions[7].eligibility[2].verdict`"), "{e}");
    assert!(e.contains("excluded"), "{e}");
}

#[test]
fn a_file_changed_after_freezing_is_refused() {
    let dir = std::env::temp_dir().join(format!("agora-profile-versions-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let tampered = read(Task::Dictator).replace("This is a decision task.", "This is a task with one decision.");
    assert_ne!(tampered, read(Task::Dictator));
    std::fs::write(dir.join("dictator.ron"), &tampered).unwrap();
    let result = versions::load(&dir, &lock_path(), &[Task::Dictator]);
    std::fs::remove_dir_all(&dir).ok();
    let e = result.expect_err("a changed file").to_string();
    assert!(e.contains("dictator.ron"), "{e}");
    assert!(e.contains("`sha256`"), "{e}");
}
