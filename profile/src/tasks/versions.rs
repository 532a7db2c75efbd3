//! Question versions: the original question (Q00) and ten eligible versions (Q01–Q10) per
//! task, as data files `assets/profile/versions/<task>.ron` (the questionnaire measures E1–E9
//! share `questionnaire.ron`: §E0's eleven instructions around the same items), each version with its eligibility
//! record (the profile methods §M02–§M03): every neutrality principle and default rule, its verdict and
//! the reason. A file is frozen by its content hash in `assets/profile/versions.lock` before a
//! study runs; a changed file is refused until it is frozen again (`agora profile --freeze`).
//!
//! # Checks at load
//! - the file names its task, holds exactly Q00–Q10 in order, every version has all thirteen
//!   rules exactly once, and every verdict is `Eligible` (an excluded version is no version);
//! - every placeholder of every version fills for every input of the task, every option has a
//!   label, and versions whose schedule relabels (action labels, reversible labels) give
//!   alternative labels that differ from the reference ones;
//! - a version that claims a rule while its complete rendered input carries text that breaks
//!   it (a persona sentence, a payoff or behavioural goal, a request for reasons, a special use
//!   of the money, a background story, a directional label, a proxy decision) is refused with
//!   the text found. The judgment recorded is the author's, on the complete input (§M03: "not
//!   keyword matching"); the detectors are a floor under it, not a substitute.

use std::collections::BTreeMap;
use std::path::Path;

use super::catalogue::{b4_input, b4_round, inputs, Answer};
use super::render::{render, Presentation};
use super::{Level, ProfileInputError, Task, VERSION_IDS};

pub use super::version::{AnswerWording, Judgement, Stated, TaskVersions, Verdict, Version, FORMAT, RULES};

/// A task's loaded and checked versions, with the file's content hash.
#[derive(Clone, Debug, PartialEq)]
pub struct Loaded {
    /// The task.
    pub task: Task,
    /// The versions, Q00 first.
    pub versions: Vec<Version>,
    /// SHA-256 of the file's bytes, lowercase hex.
    pub sha256: String,
}

/// SHA-256 of `bytes`, lowercase hex (the store's one digest helper).
pub use agora_records::seed::hex_digest as sha256_hex;

/// Text that breaks a rule wherever it appears in an input, by rule (lowercase).
const DETECTORS: [(&str, &[&str]); 8] = [
    ("no-persona", &["you are a ", "you are an ", "helpful assistant", "as an ai", "imagine you are"]),
    (
        "neutral-orientation",
        &["be fair", "be generous", "be selfish", "be cooperative", "nash equilibrium", "punish defectors"],
    ),
    (
        "no-goal",
        &[
            "maximi",
            "as many points",
            "as many credits as",
            "as much as you can",
            "your goal",
            "earn as much",
            "try to earn",
        ],
    ),
    ("no-reasons", &["explain", "reason", "why ", "step by step", "justify", "think about"]),
    ("no-special-use", &["charity", "donat", "real money", "real payment", "paid out in cash", "emergency"]),
    ("no-background", &["earned", "deserv", "needs the money", "worked hard", "you promised"]),
    ("no-prefill", &["recommended", "the best choice", "the safe choice", "the right choice", "the winning"]),
    ("no-proxy", &["on behalf of", "advise", "predict", "what would another"]),
];

fn err(file: &Path, field: impl Into<String>, reason: impl Into<String>) -> ProfileInputError {
    ProfileInputError::new(file.display().to_string(), field, reason)
}

/// Every input text of `task` under `version`'s reference presentation (and, for B4, a few
/// live rounds), for the eligibility detectors and the placeholder check.
fn reference_texts(task: Task, version: &Version, file: &Path, field: &str) -> Result<Vec<String>, ProfileInputError> {
    let mut all = if task == Task::B4 {
        let mut out = Vec::new();
        for level in Level::ALL {
            let history = vec![b4_round(level, 1, "l", "r")];
            out.push(b4_input(level, 1, &[]));
            out.push(b4_input(level, 2, &history));
        }
        out
    } else if task.questionnaire() {
        // The instructions are shared by every questionnaire measure: all shipped items.
        Task::SHIPPED_QUESTIONNAIRE.iter().flat_map(|t| inputs(*t)).collect()
    } else {
        inputs(task)
    };
    let mut texts = Vec::new();
    let mut presentations = vec![Presentation::reference()];
    let relabel = task.schedule().operations().iter().any(|o| o.relabels());
    if relabel {
        presentations.push(Presentation { alt_labels: true, ..Presentation::reference() });
    }
    for input in all.drain(..) {
        for p in &presentations {
            let r = render(&input, version, p).map_err(|e| err(file, field, e))?;
            texts.push(r.text);
        }
    }
    Ok(texts)
}

fn check_version(task: Task, i: usize, v: &Version, file: &Path) -> Result<(), ProfileInputError> {
    let field = format!("versions[{i}]");
    if v.id != VERSION_IDS[i] {
        return Err(err(
            file,
            format!("{field}.id"),
            format!("is `{}`, expected `{}` (Q00–Q10 in order)", v.id, VERSION_IDS[i]),
        ));
    }
    // The eligibility record: each rule once, every verdict Eligible.
    let mut seen = BTreeMap::new();
    for (j, judgement) in v.eligibility.iter().enumerate() {
        let at = format!("{field}.eligibility[{j}]");
        if !RULES.contains(&judgement.rule.as_str()) {
            return Err(err(
                file,
                format!("{at}.rule"),
                format!("`{}` is not a rule; the rules are {}", judgement.rule, RULES.join(", ")),
            ));
        }
        if seen.insert(judgement.rule.clone(), j).is_some() {
            return Err(err(file, format!("{at}.rule"), format!("`{}` is judged twice", judgement.rule)));
        }
        if judgement.reason.trim().is_empty() {
            return Err(err(file, format!("{at}.reason"), "is empty: each verdict records its reason"));
        }
        if judgement.verdict == Verdict::Excluded {
            return Err(err(
                file,
                format!("{at}.verdict"),
                format!("the version is excluded under `{}`; an excluded version cannot enter a study", judgement.rule),
            ));
        }
    }
    if let Some(missing) = RULES.iter().find(|r| !seen.contains_key(**r)) {
        return Err(err(file, format!("{field}.eligibility"), format!("has no verdict for `{missing}`")));
    }
    // Answers: amounts for amount tasks, choices for option tasks.
    let sample = if task == Task::B4 { b4_input(Level::Low, 1, &[]) } else { inputs(task).remove(0) };
    match (&sample.answer, &v.answer) {
        (Answer::Amount { .. }, AnswerWording::Amount { .. }) | (Answer::Options(_), AnswerWording::Choice { .. }) => {}
        (Answer::Amount { .. }, _) => {
            return Err(err(file, format!("{field}.answer"), "this task asks for an amount: use Amount(...)"))
        }
        (Answer::Options(_), _) => {
            return Err(err(file, format!("{field}.answer"), "this task asks for a choice: use Choice(...)"))
        }
    }
    if v.answer.field().trim().is_empty() || v.answer.field().contains('"') {
        return Err(err(file, format!("{field}.answer.field"), "must be a plain, non-empty name"));
    }
    if let Answer::Options(keys) = &sample.answer {
        for key in keys.iter().chain(all_option_keys(task).iter()) {
            if !v.labels.contains_key(*key) {
                return Err(err(file, format!("{field}.labels"), format!("has no label for option `{key}`")));
            }
        }
        let relabel = task.schedule().operations().iter().any(|o| o.relabels());
        if relabel {
            for (key, label) in &v.labels {
                match v.alt_labels.get(key) {
                    Some(alt) if alt == label => {
                        return Err(err(
                            file,
                            format!("{field}.alt_labels.{key}"),
                            "equals the reference label: the check would change nothing",
                        ))
                    }
                    Some(_) => {}
                    None if all_option_keys(task).contains(&key.as_str()) || keys.contains(&key.as_str()) => {
                        return Err(err(
                            file,
                            format!("{field}.alt_labels"),
                            format!("has no alternative label for `{key}`"),
                        ))
                    }
                    None => {}
                }
            }
        }
    }
    // Every placeholder fills for every input; then the detectors run on the complete inputs.
    let texts = reference_texts(task, v, file, &field)?;
    for (rule, needles) in DETECTORS {
        for text in &texts {
            let lower = text.to_lowercase();
            if let Some(needle) = needles.iter().find(|n| lower.contains(**n)) {
                let at = lower.find(needle).unwrap_or(0);
                let start = lower[..at].char_indices().rev().nth(30).map_or(0, |(k, _)| k);
                let excerpt: String = text[start..].chars().take(80).collect();
                return Err(err(
                    file,
                    format!("{field}.eligibility.{rule}"),
                    format!("the version claims `{rule}` but its input contains \"{needle}\": …{excerpt}…"),
                ));
            }
        }
    }
    if task.category() == 'B' && !v.templates.contains_key("round") {
        return Err(err(file, format!("{field}.templates"), "has no `round` template for the history"));
    }
    if task.category() == 'B' && v.table.len() != 5 {
        return Err(err(
            file,
            format!("{field}.table"),
            "needs five column headers: round, own action, other's action, own payoff, other's payoff",
        ));
    }
    Ok(())
}

/// Every option key a task's inputs use (D's menus use more than any one input).
fn all_option_keys(task: Task) -> Vec<&'static str> {
    let mut keys: Vec<&'static str> = Vec::new();
    let sample: Vec<_> = if task == Task::B4 { vec![b4_input(Level::Low, 1, &[])] } else { inputs(task) };
    for i in sample {
        if let Answer::Options(k) = i.answer {
            for key in k {
                if !keys.contains(&key) {
                    keys.push(key);
                }
            }
        }
    }
    keys
}

/// Parses and checks a version file's text (`file` names it in errors).
pub fn parse(task: Task, file: &Path, bytes: &[u8]) -> Result<Loaded, ProfileInputError> {
    let text = std::str::from_utf8(bytes).map_err(|e| err(file, "", format!("is not UTF-8: {e}")))?;
    let parsed: TaskVersions = ron::Options::default()
        .from_str(text)
        .map_err(|e| err(file, format!("line {}", e.span.start.line), e.code.to_string()))?;
    if parsed.version != FORMAT {
        return Err(err(file, "version", format!("is {}, this build reads {FORMAT}", parsed.version)));
    }
    if parsed.task != task.versions_file() {
        return Err(err(file, "task", format!("is `{}`, the file is for `{}`", parsed.task, task.versions_file())));
    }
    // The questionnaire's instructions are checked on the shipped items (a lab's pairs fill
    // the same placeholders: the item and its five positions).
    let checked = if task.questionnaire() { Task::E1 } else { task };
    if parsed.versions.len() != VERSION_IDS.len() {
        return Err(err(
            file,
            "versions",
            format!("has {} versions; a task has the original and ten versions (Q00–Q10)", parsed.versions.len()),
        ));
    }
    for (i, v) in parsed.versions.iter().enumerate() {
        check_version(checked, i, v, file)?;
    }
    Ok(Loaded { task, versions: parsed.versions, sha256: sha256_hex(bytes) })
}

/// The lock file's content: task name → SHA-256 of its version file.
pub type Lock = BTreeMap<String, String>;

/// Loads `dir/<task>.ron` for each task, checks it and compares its hash with `dir/../versions.lock`
/// (`lock`): a task whose file changed after freezing is refused.
pub fn load(dir: &Path, lock_path: &Path, tasks: &[Task]) -> Result<Vec<Loaded>, ProfileInputError> {
    let lock = read_lock(lock_path)?;
    let mut out = Vec::new();
    for &task in tasks {
        let file = dir.join(format!("{}.ron", task.versions_file()));
        let bytes = std::fs::read(&file).map_err(|e| err(&file, "", format!("cannot be read: {e}")))?;
        let loaded = parse(task, &file, &bytes)?;
        match lock.get(task.versions_file()) {
            Some(frozen) if *frozen == loaded.sha256 => {}
            Some(frozen) => {
                return Err(err(
                    &file,
                    "sha256",
                    format!(
                        "is {} but {} froze {frozen}: the versions changed after freezing; review them and run `agora profile --freeze`",
                        loaded.sha256,
                        lock_path.display()
                    ),
                ))
            }
            None => {
                return Err(err(
                    lock_path,
                    task.versions_file(),
                    "is not frozen: run `agora profile --freeze` after reviewing the versions",
                ))
            }
        }
        out.push(loaded);
    }
    Ok(out)
}

/// Reads the lock file (an absent file is an empty lock).
pub fn read_lock(path: &Path) -> Result<Lock, ProfileInputError> {
    match std::fs::read_to_string(path) {
        Ok(text) => {
            ron::from_str(&text).map_err(|e| err(path, format!("line {}", e.span.start.line), e.code.to_string()))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Lock::new()),
        Err(e) => Err(err(path, "", format!("cannot be read: {e}"))),
    }
}

/// Checks every task's file in `dir` and writes their hashes to `lock_path`.
pub fn freeze(dir: &Path, lock_path: &Path) -> Result<Lock, ProfileInputError> {
    let mut lock = Lock::new();
    for task in Task::ALL {
        if lock.contains_key(task.versions_file()) {
            continue;
        }
        let file = dir.join(format!("{}.ron", task.versions_file()));
        let bytes = std::fs::read(&file).map_err(|e| err(&file, "", format!("cannot be read: {e}")))?;
        let loaded = parse(task, &file, &bytes)?;
        lock.insert(task.versions_file().to_string(), loaded.sha256);
    }
    let text = ron::ser::to_string_pretty(&lock, ron::ser::PrettyConfig::default())
        .map_err(|e| err(lock_path, "", e.to_string()))?;
    std::fs::write(lock_path, text + "\n").map_err(|e| err(lock_path, "", format!("cannot be written: {e}")))?;
    Ok(lock)
}
