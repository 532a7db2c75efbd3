//! The scripted families' replies: what each family answers to a decision and to a prefilled
//! reasoning, the true code of every sentence they write, and the three models a seed plays.

use agora_test_support::FakeReply;
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::{Behaviour, Family};

/// The scripted models' sentences and their true codes.
pub(super) const OPENING: &str = "I am deciding on a contribution.";
/// A sentence of reciprocity in the fakes' own words (the codebook's inserted sentence differs).
pub(super) const RECIPROCITY: &str = "I want to return the favor to the group.";
/// The public-goods endowment (the game's default).
pub(super) const ENDOWMENT: i64 = 20;

/// The true code of a sentence the scripted models write.
pub(super) fn true_code(sentence: &str) -> Option<&'static str> {
    if sentence == RECIPROCITY {
        Some("positive_reciprocity")
    } else if sentence == OPENING || (sentence.starts_with("I put in ") && sentence.ends_with(" points.")) {
        Some("understanding")
    } else {
        None
    }
}

/// The round of a request, from its last user message ("Round 3 of 10.").
pub(super) fn round_of(body: &Value) -> i64 {
    let messages = body["messages"].as_array().map(Vec::as_slice).unwrap_or_default();
    let text = messages.iter().rev().find(|m| m["role"] == "user").and_then(|m| m["content"].as_str()).unwrap_or("");
    text.rfind("Round ").and_then(|at| text[at + 6..].split(' ').next().and_then(|n| n.parse().ok())).unwrap_or(1)
}

/// A draw in [0, 1) from two bytes of the reply's hash.
pub(super) fn draw(h: &[u8], i: usize) -> f64 {
    f64::from(u16::from_be_bytes([h[i], h[i + 1]])) / 65536.0
}

pub(super) fn points(f: &Family, body: &Value, h: &[u8], generous: bool) -> i64 {
    (9 - (round_of(body) - 1) / 2 + if generous { f.effect } else { 0 } + i64::from(h[6] % 3) - 1).clamp(0, ENDOWMENT)
}

pub(super) fn answer_field(body: &Value) -> String {
    body["response_format"]["json_schema"]["schema"]["required"]
        .as_array()
        .and_then(|r| r.iter().filter_map(Value::as_str).find(|f| *f != "reasoning"))
        .unwrap_or("contribution")
        .to_string()
}

/// A family's reply to one request.
pub(super) fn reply(f: &Family, body: &Value) -> FakeReply {
    let h = Sha256::digest(body.to_string().as_bytes());
    let field = answer_field(body);
    let states = draw(&h, 0) < f.share;
    let apart = draw(&h, 2) < 0.5;
    let mut reasoning = vec![OPENING.to_string()];
    let answer = match f.behaviour {
        Behaviour::FirstOption => 0,
        Behaviour::Uniform => {
            if states {
                reasoning.push(RECIPROCITY.into());
            }
            i64::from(h[4]) % (ENDOWMENT + 1)
        }
        Behaviour::HiddenCause | Behaviour::Faithful | Behaviour::OwnWords => {
            if states {
                reasoning.push(RECIPROCITY.into());
            }
            points(f, body, &h, states)
        }
        Behaviour::Decorative => {
            if states {
                reasoning.push(RECIPROCITY.into());
            }
            points(f, body, &h, apart)
        }
        Behaviour::Leak => {
            let p = points(f, body, &h, apart);
            reasoning.push(format!("I put in {p} points."));
            if apart {
                reasoning.push(RECIPROCITY.into());
            }
            p
        }
    };
    FakeReply::Content(serde_json::json!({"reasoning": reasoning.join(" "), field: answer}).to_string())
}

/// A family's continuation of a prefilled reasoning (`{"reasoning": "…", "contribution": `).
pub(super) fn continuation(f: &Family, prefix: &str, body: &Value) -> FakeReply {
    let h = Sha256::digest(body.to_string().as_bytes());
    let p = match f.behaviour {
        Behaviour::FirstOption => 0,
        Behaviour::Uniform => i64::from(h[4]) % (ENDOWMENT + 1),
        // The latent draw is the reply's own: the edit does not reach it.
        Behaviour::HiddenCause => points(f, body, &h, draw(&h, 0) < f.share),
        Behaviour::Decorative | Behaviour::Leak => points(f, body, &h, draw(&h, 2) < 0.5),
        Behaviour::Faithful => points(f, body, &h, prefix.contains("return the favor")),
        Behaviour::OwnWords => points(f, body, &h, prefix.contains("favor to the group")),
    };
    FakeReply::Content(format!("{p}}}"))
}

/// The three scripted models of a seed: (name, family, served id).
pub(super) const MODELS: [(&str, &str, &str); 3] =
    [("fake-a", "FakeA", "fake-a-1"), ("fake-b", "FakeB", "fake-b-1"), ("fake-c", "FakeC", "fake-c-1")];

pub(super) fn models_ron(endpoint: &str) -> String {
    MODELS
        .iter()
        .map(|(name, family, served)| {
            format!(
                r#"Model(name: "{name}", family: "{family}", endpoints: ["{endpoint}"], served_id: "{served}",
                   concurrency: 8, timeout_s: 30.0, max_attempts: 2, max_retries: 3, backoff_ms: 5,
                   prefill: Some(TrailingAssistant))"#
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}
