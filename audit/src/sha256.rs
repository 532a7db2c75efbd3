//! SHA-256 (FIPS 180-4) of a codebook's, requirements file's or label file's text, so that an
//! audit record names the exact input it was read from: the `sha2` crate, in lower-case hex.

use sha2::{Digest, Sha256};

/// Lower-case hex SHA-256 digest of `data`.
pub fn hex_digest(data: &[u8]) -> String {
    format!("{:x}", Sha256::digest(data))
}

#[cfg(test)]
mod tests {
    use super::hex_digest;

    #[test]
    fn matches_the_fips_180_4_test_vectors() {
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
}
