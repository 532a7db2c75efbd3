//! Randomised robustness tests (a seeded fuzzer without extra dependencies): the reply parser
//! and the study-file parser never panic on arbitrary or mutated input, and every rejection of
//! a study is an error that names the file.

use std::path::Path;

use agora_agents::llm::parse_reply;
use agora_environments::ActionSpace;
use agora_scenarios::{Plan, Study};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

const ALPHABET: &[u8] = b"{}[]():,\"'\\ \n\tabcdefghijklmnopqrstuvwxyzAJF0123456789-.<>/_";

fn random_text(rng: &mut Xoshiro256PlusPlus, max: usize) -> String {
    let n = rng.random_range(0..max);
    (0..n)
        .map(|_| {
            if rng.random_bool(0.05) {
                char::from_u32(rng.random_range(0x80..0x3000)).unwrap_or('?')
            } else {
                ALPHABET[rng.random_range(0..ALPHABET.len())] as char
            }
        })
        .collect()
}

/// Deletes, duplicates or replaces a few characters of `s`.
fn mutate(rng: &mut Xoshiro256PlusPlus, s: &str) -> String {
    let mut chars: Vec<char> = s.chars().collect();
    for _ in 0..rng.random_range(1..6) {
        if chars.is_empty() {
            break;
        }
        let i = rng.random_range(0..chars.len());
        match rng.random_range(0..3) {
            0 => {
                chars.remove(i);
            }
            1 => {
                let c = chars[i];
                chars.insert(i, c);
            }
            _ => chars[i] = ALPHABET[rng.random_range(0..ALPHABET.len())] as char,
        }
    }
    chars.into_iter().collect()
}

#[test]
fn reply_parser_never_panics_and_only_accepts_legal_actions() {
    let spaces = [
        ActionSpace::Choice { labels: vec!["Option J".to_string(), "Option F".to_string()].into() },
        ActionSpace::Amount { min: 11, max: 20 },
        ActionSpace::Allocation { targets: 3, max_each: 10 },
    ];
    let seeds = [
        r#"{"action": "Option J", "reason": "x"}"#,
        r#"<think>hmm</think>{"action": 17}"#,
        r#"{"action": [1, 2, 3]}"#,
        "```json\n{\"choice\": \"Option F\"}\n```",
    ];
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(2026);
    for i in 0..20_000 {
        let text = if i % 2 == 0 { random_text(&mut rng, 120) } else { mutate(&mut rng, seeds[i % seeds.len()]) };
        for space in &spaces {
            if let agora_agents::llm::ParseOutcome::Parsed { action, .. } = parse_reply(&text, space, "action") {
                assert!(space.contains(&action), "accepted an illegal {action:?} from {text:?}");
            }
        }
    }
}

#[test]
fn study_parser_never_panics_and_names_the_file() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let shipped = std::fs::read_to_string(root.join("scenarios/studies/classical.ron")).expect("shipped study");
    let dir = tempfile::tempdir().expect("tempdir");
    let studies = dir.path().join("studies");
    std::fs::create_dir_all(&studies).expect("mkdir");
    std::fs::create_dir_all(dir.path().join("cells")).expect("mkdir");
    let path = studies.join("fuzzed.ron");
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
    let mut rejected = 0;
    for i in 0..400 {
        let text = if i % 4 == 0 { random_text(&mut rng, 300) } else { mutate(&mut rng, &shipped) };
        // Parsing alone, then full resolution from a file.
        let _ = Study::parse(&path, &text);
        std::fs::write(&path, &text).expect("write");
        match Plan::load(&path, None) {
            Ok(plan) => assert!(plan.runs.iter().all(|r| !r.seats.is_empty())),
            Err(e) => {
                rejected += 1;
                assert!(e.to_string().contains("fuzzed.ron") || e.to_string().contains("cells"), "{e}");
            }
        }
    }
    assert!(rejected > 100, "most mutations are rejected ({rejected})");
}
