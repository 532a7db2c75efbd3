//! Session codes, tokens and the hashes the store keeps instead of them.

use hmac::{Hmac, Mac};
use sha2::Sha256;

/// 128 random bits from the operating system, as 32 hex digits: session codes, decision
/// nonces and the admin token when none is given.
pub fn token() -> String {
    let mut b = [0u8; 16];
    getrandom::fill(&mut b).expect("invariant: the operating system's random source answers");
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// A completion code for a participant pool: eight characters, no look-alikes.
pub fn completion_code() -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHJKLMNPQRSTUVWXYZ23456789";
    let mut b = [0u8; 8];
    getrandom::fill(&mut b).expect("invariant: the operating system's random source answers");
    b.iter().map(|x| ALPHABET[(*x as usize) % ALPHABET.len()] as char).collect()
}

/// SHA-256 of a session code: what the store keeps of it.
pub fn code_hash(code: &str) -> String {
    agora_records::seed::hex_digest(code.as_bytes())
}

/// HMAC-SHA256 of a participant pool's id under the server's key: the store never holds the id
/// itself, and without the key the hash does not give it back.
pub fn pool_hash(key: &[u8], pool_id: &str) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(key).expect("invariant: HMAC takes a key of any length");
    mac.update(pool_id.as_bytes());
    format!("{:x}", mac.finalize().into_bytes())
}

/// Whether two secrets are equal, in time that does not depend on where they differ.
pub fn same(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Whether a string looks like a session code (32 lower-case hex digits).
pub fn is_code(s: &str) -> bool {
    s.len() == 32 && s.bytes().all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(&c))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_differ_and_hashes_are_stable() {
        let (a, b) = (token(), token());
        assert!(is_code(&a) && is_code(&b) && a != b);
        assert_eq!(code_hash("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
        // RFC 4231, test case 2.
        assert_eq!(
            pool_hash(b"Jefe", "what do ya want for nothing?"),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
        assert!(same("abc", "abc") && !same("abc", "abd") && !same("abc", "ab"));
        assert_eq!(completion_code().len(), 8);
    }
}
