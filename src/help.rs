//! What every command's `--help` ends with: an example to copy and the exit codes. The examples
//! are kept here, one per command path, and attached to the parser's commands in [`command`]; a
//! test checks that every command has one, that each example parses, and that every argument
//! says what it is.

use clap::{Command, CommandFactory};

/// The exit codes every command keeps to.
pub const EXIT_CODES: &str = "Exit codes:
  0  done
  1  a failure outside the input: a model server or the disk failed, a store does not verify,
     or runs or questions are still missing (the message says so; rerun the same command)
  2  bad input: the message names the file, field or flag";

/// One example per command, by its path (`audit export` for a subcommand of `audit`).
const EXAMPLES: &[(&str, &str)] = &[
    ("run", "agora run scenarios/studies/classical.ron --store agora.sqlite"),
    ("check", "agora check scenarios/studies/instrument.ron --models scenarios/models/local-gemma.ron"),
    ("list", "agora list agents"),
    ("summary", "agora summary --store agora.sqlite --study classical"),
    ("analyze", "agora analyze --store agora.sqlite --out out/analysis"),
    ("anchors", "agora anchors --from-store lab.sqlite --out out/human-anchors.ron"),
    ("demo", "agora demo --store agora.sqlite --out out/report"),
    ("serve", "agora serve scenarios/studies/people.ron --store lab.sqlite --bind 127.0.0.1:8080"),
    ("report", "agora report --store agora.sqlite --out out/report"),
    ("merge", "agora merge --into all.sqlite shard1.sqlite shard2.sqlite"),
    ("verify", "agora verify --store agora.sqlite"),
    ("network", "agora network --agents 100000 --topology small-world --committed 0.25"),
    ("replicate", "agora replicate --verdicts"),
    ("calibrate", "agora calibrate scenarios/calibration/ci.ron --out out/calibration"),
    ("audit", "agora audit --store slice.sqlite --out out/audit"),
    ("audit export", "agora audit export --store slice.sqlite --sample 50 --seed 1 --out labels.jsonl"),
    ("audit import", "agora audit import --store slice.sqlite --labels labels-ann.jsonl --coder-name ann"),
    ("audit agreement", "agora audit agreement --store slice.sqlite --out out/audit"),
    (
        "audit replicates",
        "agora audit replicates --store slice.sqlite --models scenarios/models/local-gemma.ron --sample 20 --m 5 --seed 1",
    ),
    (
        "audit prefill",
        "agora audit prefill --store slice.sqlite --models scenarios/models/local-gemma.ron --sample 20 --m 3 --seed 1",
    ),
    ("profile", "agora profile scenarios/profiles/profile-slice.ron --store profile.sqlite --out out/profile"),
    ("stats", "echo '{\"values\": [0.42, 0.47, 0.51], \"theta\": 0.5, \"margin\": 0.1}' | agora stats tost"),
    ("export", "agora export --store agora.sqlite --format parquet --out out/export"),
    ("prereg", "agora prereg scenarios/studies/classical.ron --out deposit"),
    ("reference", "agora reference --out ."),
];

/// The example of the command at `path`.
fn example(path: &str) -> Option<&'static str> {
    EXAMPLES.iter().find(|(p, _)| *p == path).map(|(_, e)| *e)
}

/// The parser's command with every command's example and the exit codes after its help.
pub fn command<C: CommandFactory>() -> Command {
    decorate(C::command(), "").after_help(EXIT_CODES)
}

fn decorate(mut cmd: Command, path: &str) -> Command {
    let names: Vec<String> = cmd.get_subcommands().map(|s| s.get_name().to_string()).collect();
    for name in names {
        let full = if path.is_empty() { name.clone() } else { format!("{path} {name}") };
        cmd = cmd.mut_subcommand(&name, |sub| {
            let sub = decorate(sub, &full);
            match example(&full) {
                Some(e) => sub.after_help(format!("Example:\n  {e}\n\n{EXIT_CODES}")),
                None => sub.after_help(EXIT_CODES),
            }
        });
    }
    cmd
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every command path of the parser, subcommands included.
    fn paths(cmd: &Command, prefix: &str, out: &mut Vec<String>) {
        for sub in cmd.get_subcommands() {
            let full =
                if prefix.is_empty() { sub.get_name().to_string() } else { format!("{prefix} {}", sub.get_name()) };
            out.push(full.clone());
            paths(sub, &full, out);
        }
    }

    fn find<'a>(cmd: &'a Command, path: &str) -> &'a Command {
        path.split(' ').fold(cmd, |c, name| c.find_subcommand(name).expect("a command of the parser"))
    }

    #[test]
    fn every_command_has_an_example_that_parses_and_the_exit_codes() {
        let cmd = command::<crate::Cli>();
        let mut all = Vec::new();
        paths(&cmd, "", &mut all);
        assert!(all.len() >= 20, "{all:?}");
        for path in &all {
            let example = example(path).unwrap_or_else(|| panic!("`agora {path}` has no example in help.rs"));
            let help = find(&cmd, path).get_after_help().map(|h| h.to_string()).unwrap_or_default();
            assert!(help.contains(example) && help.contains("Exit codes:"), "{path}: {help}");
            // The example is a command line the parser takes (a pipe's left side left out).
            let line = example.rsplit("| ").next().expect("a command");
            let words: Vec<&str> = line.split_whitespace().collect();
            assert!(words[0] == "agora" && words[1..].join(" ").starts_with(path.as_str()), "{path}: {line}");
            if let Err(e) = command::<crate::Cli>().try_get_matches_from(&words) {
                panic!("the example of `agora {path}` does not parse: {e}");
            }
        }
        // An example of no command is a stale one.
        for (p, _) in EXAMPLES {
            assert!(all.contains(&p.to_string()), "help.rs has an example of `{p}`, which is no command");
        }
    }

    #[test]
    fn every_argument_says_what_it_is() {
        let cmd = command::<crate::Cli>();
        let mut all = Vec::new();
        paths(&cmd, "", &mut all);
        let mut silent = Vec::new();
        for path in &all {
            for arg in find(&cmd, path).get_arguments() {
                let id = arg.get_id().as_str();
                if id == "help" || id == "version" {
                    continue;
                }
                let said = arg.get_help().or(arg.get_long_help()).is_some_and(|h| !h.to_string().trim().is_empty());
                if !said {
                    silent.push(format!("agora {path} {id}"));
                }
            }
        }
        assert!(silent.is_empty(), "arguments without a description: {silent:#?}");
    }
}
