//! Requests kept by their parts: each distinct piece of a request's JSON text is stored once
//! under its content hash (`prompt_parts`), and a transcript row holds only the list of its
//! pieces (`transcript_calls.request`). The static text of a prompt (the system message, the
//! rules, the answer schema) and the lines a seat's history repeats from call to call are then
//! written once per store, not once per call.
//!
//! The split is lossless by construction: a request is the concatenation of its pieces, in
//! order, wherever the cuts fall. Cuts are placed where shared text starts or ends:
//! - after every `\n` escape inside a JSON string (one line of a message per piece);
//! - before every key of the request's top-level object (`,"temperature":…`, `,"seed":…`,
//!   `,"schema":…`), so that the per-call seed does not share a piece with the schema.
//!
//! Pieces shorter than [`INLINE_BELOW`] bytes are kept inline in the list (consecutive inline
//! pieces joined), since a reference would cost about as much as the text.
//!
//! The list is JSON: an integer is a part id, a string is inline text. SQL reads a request
//! back with the `transcripts` view, which joins the pieces in order.

use sha2::{Digest, Sha256};

/// Pieces shorter than this many bytes stay inline in the list.
pub const INLINE_BELOW: usize = 32;

/// One piece of a request: a reference to a stored part, or inline text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Piece<'a> {
    /// Text stored in `prompt_parts`, to be referenced by its hash.
    Part(&'a str),
    /// Text kept in the list itself.
    Inline(String),
}

/// The 16-byte content hash a part is stored under (SHA-256, truncated).
pub fn part_hash(text: &str) -> [u8; 16] {
    let d = Sha256::digest(text.as_bytes());
    let mut h = [0u8; 16];
    h.copy_from_slice(&d[..16]);
    h
}

/// Cuts a request's JSON text into pieces whose concatenation is the text.
pub fn cut(json: &str) -> Vec<&str> {
    let b = json.as_bytes();
    let mut pieces = Vec::new();
    let mut start = 0;
    let mut depth = 0i32;
    let mut in_string = false;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if in_string {
            match c {
                b'\\' => {
                    // An escape: `\n` ends a line (cut after it); any other escape is skipped whole.
                    if b.get(i + 1) == Some(&b'n') && i + 2 < b.len() {
                        pieces.push(&json[start..i + 2]);
                        start = i + 2;
                    }
                    i += 2;
                    continue;
                }
                b'"' => in_string = false,
                _ => {}
            }
        } else {
            match c {
                b'"' => in_string = true,
                b'{' | b'[' => depth += 1,
                b'}' | b']' => depth -= 1,
                b',' if depth == 1 && i > start => {
                    pieces.push(&json[start..i]);
                    start = i;
                }
                _ => {}
            }
        }
        i += 1;
    }
    if start < b.len() {
        pieces.push(&json[start..]);
    }
    pieces
}

/// The pieces of a request: long ones as parts, short ones joined inline.
pub fn pieces(json: &str) -> Vec<Piece<'_>> {
    let mut out: Vec<Piece<'_>> = Vec::new();
    for p in cut(json) {
        if p.len() >= INLINE_BELOW {
            out.push(Piece::Part(p));
        } else if let Some(Piece::Inline(s)) = out.last_mut() {
            s.push_str(p);
        } else {
            out.push(Piece::Inline(p.to_string()));
        }
    }
    out
}

/// The list a transcript row stores: JSON, part ids as integers and inline text as strings.
pub fn encode_list(
    pieces: &[Piece<'_>],
    mut id_of: impl FnMut(&str) -> Result<i64, rusqlite::Error>,
) -> Result<String, rusqlite::Error> {
    let mut items = Vec::with_capacity(pieces.len());
    for p in pieces {
        items.push(match p {
            Piece::Part(text) => serde_json::Value::from(id_of(text)?),
            Piece::Inline(text) => serde_json::Value::from(text.as_str()),
        });
    }
    Ok(serde_json::Value::Array(items).to_string())
}

/// The list of a request's pieces, as [`encode_list`] writes it for [`pieces`], written in
/// one pass without the intermediate pieces and values (the store's path, once per call).
pub fn encode_request(
    json: &str,
    mut id_of: impl FnMut(&str) -> Result<i64, rusqlite::Error>,
) -> Result<String, rusqlite::Error> {
    let mut out: Vec<u8> = Vec::with_capacity(128);
    out.push(b'[');
    // The start of the inline text not yet written (consecutive inline pieces are one string).
    let mut inline: Option<usize> = None;
    let mut end = 0;
    let write_inline = |out: &mut Vec<u8>, from: usize, to: usize| {
        if out.len() > 1 {
            out.push(b',');
        }
        // serde_json writes a string value exactly so: escaped, in quotes.
        serde_json::to_writer(&mut *out, &json[from..to]).expect("invariant: a str serialises");
    };
    for p in cut(json) {
        let at = end;
        end += p.len();
        if p.len() < INLINE_BELOW {
            inline.get_or_insert(at);
            continue;
        }
        if let Some(from) = inline.take() {
            write_inline(&mut out, from, at);
        }
        let id = id_of(p)?;
        if out.len() > 1 {
            out.push(b',');
        }
        crate::digits::Sink::signed(&mut out, id);
    }
    if let Some(from) = inline.take() {
        write_inline(&mut out, from, end);
    }
    out.push(b']');
    Ok(String::from_utf8(out).expect("invariant: ids and JSON strings are UTF-8"))
}

/// A request back from its list, the parts looked up by `text_of`. Errors name what is wrong.
pub fn decode_list(list: &str, mut text_of: impl FnMut(i64) -> Option<String>) -> Result<String, String> {
    let items: Vec<serde_json::Value> =
        serde_json::from_str(list).map_err(|e| format!("a request's list of parts does not read: {e}"))?;
    let mut out = String::new();
    for item in items {
        match item {
            serde_json::Value::Number(n) => {
                let id = n.as_i64().ok_or_else(|| format!("part id {n} is not an integer"))?;
                out.push_str(&text_of(id).ok_or_else(|| format!("part {id} is not in prompt_parts"))?);
            }
            serde_json::Value::String(s) => out.push_str(&s),
            other => return Err(format!("a request's list holds {other}, neither a part id nor text")),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(system: &str, user: &str, seed: u64) -> String {
        serde_json::json!({
            "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
            "temperature": 0.7,
            "max_tokens": 300,
            "seed": seed,
            "schema": {"type": "object", "properties": {"action": {"enum": ["A", "B"]}}, "required": ["action"]},
        })
        .to_string()
    }

    #[test]
    fn the_pieces_join_back_to_the_request_byte_for_byte() {
        let cases = [
            request("You are in a study.\nThe rules are these.\n", "Round 1.\nYou chose \"A\".\\n not a line", 7),
            request("", "", 0),
            "{}".to_string(),
            "[1,2,3]".to_string(),
            "{\"a\":\"ends with a backslash n \\\\n\",\"b\":[1,{\"c\":2}]}".to_string(),
            "{\"a\":\"\\n\"}".to_string(),
            "{\"a\":\"é\\nü\\n\\u00e9\"}".to_string(),
        ];
        for json in cases {
            assert_eq!(cut(&json).concat(), json, "cut of {json}");
            let joined: String = pieces(&json)
                .iter()
                .map(|p| match p {
                    Piece::Part(t) => t.to_string(),
                    Piece::Inline(t) => t.clone(),
                })
                .collect();
            assert_eq!(joined, json, "pieces of {json}");
        }
    }

    #[test]
    fn the_static_lines_and_the_schema_are_pieces_of_their_own_and_the_seed_is_not_shared() {
        let system =
            "You are taking part in a study of decision making.\nEach round you choose A or B, as the others do.\n";
        let a = request(system, "You are agent A.\nRound 3 of 10: what do you choose now?", 11);
        let b = request(system, "You are agent B.\nRound 3 of 10: what do you choose now?", 12);
        let parts = |j: &str| -> Vec<String> {
            pieces(j)
                .into_iter()
                .filter_map(|p| match p {
                    Piece::Part(t) => Some(t.to_string()),
                    Piece::Inline(_) => None,
                })
                .collect()
        };
        let (pa, pb) = (parts(&a), parts(&b));
        let shared: Vec<&String> = pa.iter().filter(|p| pb.contains(p)).collect();
        assert!(shared.iter().any(|p| p.contains("Each round you choose A or B, as the others do.\\n")), "{pa:?}");
        assert!(shared.iter().any(|p| p.starts_with(",\"schema\":")), "the schema is one shared piece: {pa:?}");
        assert!(shared.iter().any(|p| p.starts_with("Round 3 of 10")), "{pa:?}");
        assert!(!pa.iter().any(|p| p.contains("\"seed\"")), "the seed is inline, never inside a part: {pa:?}");
    }

    #[test]
    fn the_one_pass_list_is_the_list_of_the_pieces() {
        let cases = [
            request("You are in a study.\nThe rules are these, at some length.\n", "Round 1.\nYou chose \"A\".", 7),
            request("", "", 0),
            request("short\nlines\nonly\n", "a\nb\nc \u{e9}\t\"q\"\n", 12),
            "{}".to_string(),
            "[1,2,3]".to_string(),
            "{\"a\":\"\\n\"}".to_string(),
        ];
        for json in cases {
            let mut ids: Vec<String> = Vec::new();
            let mut id = |t: &str| -> Result<i64, rusqlite::Error> {
                let i = ids.iter().position(|x| x == t).unwrap_or_else(|| {
                    ids.push(t.to_string());
                    ids.len() - 1
                });
                Ok(i as i64 + 1)
            };
            let two_pass = encode_list(&pieces(&json), &mut id).expect("encode");
            let one_pass = encode_request(&json, &mut id).expect("encode");
            assert_eq!(one_pass, two_pass, "{json}");
        }
    }

    #[test]
    fn a_list_encodes_and_decodes() {
        let json = request("Line one of the rules, long enough.\nLine two of the rules, long enough too.\n", "Hi", 5);
        let ps = pieces(&json);
        let mut table: Vec<String> = Vec::new();
        let list = encode_list(&ps, |t| {
            let id = table.iter().position(|x| x == t).unwrap_or_else(|| {
                table.push(t.to_string());
                table.len() - 1
            });
            Ok(id as i64 + 1)
        })
        .expect("encode");
        let back = decode_list(&list, |id| table.get(id as usize - 1).cloned()).expect("decode");
        assert_eq!(back, json);
        assert!(decode_list(&list, |_| None).unwrap_err().contains("not in prompt_parts"));
        assert!(decode_list("[true]", |_| None).unwrap_err().contains("neither"));
    }
}
