//! Random secrets with a readable prefix, stored only as SHA-256 hashes and
//! compared in constant time.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use rand::Rng as _;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// Random bytes in every issued secret: 256 bits.
pub const SECRET_BYTES: usize = 32;

/// Length of the random part once base64url-encoded without padding.
pub const ENCODED_SECRET_LEN: usize = 43;

/// `prefix` followed by 256 random bits, base64url without padding.
pub fn generate(prefix: &str) -> String {
    let mut bytes = [0u8; SECRET_BYTES];
    rand::rng().fill_bytes(&mut bytes);
    format!("{prefix}{}", URL_SAFE_NO_PAD.encode(bytes))
}

/// A random, non-secret identifier: `prefix` and `bytes` random bytes,
/// base64url (client ids, public user ids, token families).
pub fn random_id(prefix: &str, bytes: usize) -> String {
    let mut buffer = vec![0u8; bytes];
    rand::rng().fill_bytes(&mut buffer);
    format!("{prefix}{}", URL_SAFE_NO_PAD.encode(buffer))
}

/// Lower-case hex SHA-256: what is stored in place of the secret.
pub fn hash(secret: &str) -> String {
    hex::encode(Sha256::digest(secret.as_bytes()))
}

/// Whether `presented` hashes to `stored_hash`, in time independent of where
/// the two differ.
pub fn matches_hash(presented: &str, stored_hash: &str) -> bool {
    hash(presented)
        .as_bytes()
        .ct_eq(stored_hash.as_bytes())
        .into()
}

/// Whether `text` has the shape of a secret issued with `prefix`.
pub fn is_well_formed(text: &str, prefix: &str) -> bool {
    text.strip_prefix(prefix).is_some_and(|rest| {
        rest.len() == ENCODED_SECRET_LEN
            && rest
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_carry_256_random_bits_after_the_prefix() {
        let a = generate("trb_");
        let b = generate("trb_");
        assert_ne!(a, b);
        assert!(is_well_formed(&a, "trb_"), "{a}");
        let raw = URL_SAFE_NO_PAD.decode(&a[4..]).unwrap();
        assert_eq!(raw.len() * 8, 256);
    }

    /// FIPS 180-2's known answer for "abc": the stored form is lower-case
    /// hex of plain SHA-256, which other tools can check.
    #[test]
    fn hash_is_sha256_in_lower_case_hex() {
        assert_eq!(
            hash("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn hash_matches_only_its_secret() {
        let secret = generate("trb_");
        let stored = hash(&secret);
        assert_eq!(stored.len(), 64);
        assert!(!stored.contains(&secret[4..]));
        assert!(matches_hash(&secret, &stored));
        assert!(!matches_hash(&generate("trb_"), &stored));
        assert!(!matches_hash(&secret, "short"));
    }

    #[test]
    fn malformed_secrets_are_recognised() {
        assert!(!is_well_formed("trb_", "trb_"));
        assert!(!is_well_formed(
            "xyz_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
            "trb_"
        ));
        assert!(!is_well_formed(
            "trb_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!",
            "trb_"
        ));
        assert!(is_well_formed(
            "trb_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
            "trb_"
        ));
    }
}
