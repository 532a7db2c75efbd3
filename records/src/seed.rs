//! Seed derivation and run keys.

use sha2::{Digest, Sha256};

/// Derives a 64-bit seed from a master seed and labelled parts.
///
/// The parts are joined with a separator that cannot occur in them unescaped (their lengths are
/// hashed too), so ("ab", "c") and ("a", "bc") give different seeds.
pub fn derive(master: u64, parts: &[&str]) -> u64 {
    let mut h = Sha256::new();
    h.update(b"agora-seed-v1");
    h.update(master.to_le_bytes());
    for p in parts {
        h.update((p.len() as u64).to_le_bytes());
        h.update(p.as_bytes());
    }
    let d = h.finalize();
    u64::from_le_bytes(d[..8].try_into().expect("invariant: sha256 has 32 bytes"))
}

/// Hex SHA-256 of some bytes (FIPS 180-4, lower-case): the one digest helper every crate that
/// names an input by its hash uses (a codebook, a version file, a deposit, a session code).
pub fn hex_digest(bytes: &[u8]) -> String {
    format!("{:x}", Sha256::digest(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_digest_matches_the_fips_180_4_test_vectors() {
        assert_eq!(hex_digest(b""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
        assert_eq!(hex_digest(b"abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
        assert_eq!(
            hex_digest(b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
        );
        // Two blocks of padding (55 and 56 bytes straddle the length field).
        assert_eq!(hex_digest(&[b'a'; 56]).len(), 64);
        assert_eq!(
            hex_digest(&vec![b'a'; 1_000_000]),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"
        );
    }

    #[test]
    fn derivation_is_stable_and_separates_parts() {
        assert_eq!(derive(1, &["a", "b"]), derive(1, &["a", "b"]));
        assert_ne!(derive(1, &["ab", "c"]), derive(1, &["a", "bc"]));
        assert_ne!(derive(1, &["a"]), derive(2, &["a"]));
    }
}
