//! Provider credentials at rest: AES-256-GCM under a key from configuration.
//!
//! A sealed value is `"TRB1" ‖ key id (4 bytes) ‖ nonce (12) ‖ ciphertext+tag`.
//! The key id (the first 4 bytes of the key's SHA-256) tells which key of the
//! ring opens it, so keys can be rotated: new values are sealed with the
//! current key, older ones still open with a previous key until
//! `tributary secrets rotate` re-seals them. Associated data binds a value to
//! its owner and provider, so a ciphertext moved to another row does not open.

use aes_gcm::aead::{Aead, Payload};
use aes_gcm::{Aes256Gcm, KeyInit};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use rand::Rng as _;
use sha2::{Digest, Sha256};
use std::fmt;
use std::path::Path;

const MAGIC: &[u8; 4] = b"TRB1";
const KEY_ID_LEN: usize = 4;
const NONCE_LEN: usize = 12;
const HEADER_LEN: usize = MAGIC.len() + KEY_ID_LEN + NONCE_LEN;

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum KeyringError {
    #[error(
        "{source_name}: expected the base64 encoding of 32 random bytes (make one with `tributary secrets generate-key`)"
    )]
    BadKey { source_name: String },
    #[error("the sealed value is not one Tributary wrote (bad header)")]
    Malformed,
    #[error(
        "no configured key opens this value (key id {0}); was TRIBUTARY_SECRET_KEY changed without keeping the old key in TRIBUTARY_SECRET_KEY_PREVIOUS?"
    )]
    UnknownKey(String),
    #[error("the sealed value does not open: it was altered or belongs to another record")]
    Tampered,
    #[error("key file {path}: {reason}")]
    KeyFile { path: String, reason: String },
}

struct Key {
    id: [u8; KEY_ID_LEN],
    cipher: Aes256Gcm,
}

impl Key {
    fn parse(encoded: &str, source_name: &str) -> Result<Self, KeyringError> {
        let bad = || KeyringError::BadKey {
            source_name: source_name.to_owned(),
        };
        let bytes = STANDARD.decode(encoded.trim()).map_err(|_| bad())?;
        if bytes.len() != 32 {
            return Err(bad());
        }
        let digest = Sha256::digest(&bytes);
        let mut id = [0u8; KEY_ID_LEN];
        id.copy_from_slice(&digest[..KEY_ID_LEN]);
        let cipher = Aes256Gcm::new_from_slice(&bytes).map_err(|_| bad())?;
        Ok(Key { id, cipher })
    }
}

/// The current key and any previous ones. Never prints key material.
pub struct Keyring {
    current: Key,
    previous: Vec<Key>,
}

impl fmt::Debug for Keyring {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Keyring")
            .field("current", &hex::encode(self.current.id))
            .field(
                "previous",
                &self
                    .previous
                    .iter()
                    .map(|k| hex::encode(k.id))
                    .collect::<Vec<_>>(),
            )
            .finish()
    }
}

/// A new random key, base64-encoded, for `TRIBUTARY_SECRET_KEY`.
pub fn generate_key() -> String {
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    STANDARD.encode(bytes)
}

impl Keyring {
    /// `current` and `previous` are base64 keys; `previous` may be empty.
    pub fn new(current: &str, previous: &[&str]) -> Result<Self, KeyringError> {
        Ok(Keyring {
            current: Key::parse(current, "TRIBUTARY_SECRET_KEY")?,
            previous: previous
                .iter()
                .map(|k| Key::parse(k, "TRIBUTARY_SECRET_KEY_PREVIOUS"))
                .collect::<Result<_, _>>()?,
        })
    }

    /// Reads the key kept in `path`, creating it (mode 0600) when missing.
    /// This is how the embedded SQLite default gets a key with no setup.
    pub fn from_key_file(path: &Path) -> Result<Self, KeyringError> {
        use std::io::Write as _;
        use std::os::unix::fs::{OpenOptionsExt as _, PermissionsExt as _};
        let file_error = |reason: String| KeyringError::KeyFile {
            path: path.display().to_string(),
            reason,
        };
        match std::fs::read_to_string(path) {
            Ok(text) => {
                let mode = std::fs::metadata(path)
                    .map_err(|e| file_error(e.to_string()))?
                    .permissions()
                    .mode();
                if mode & 0o077 != 0 {
                    return Err(file_error(format!(
                        "is readable by other users (mode {:o}); run `chmod 600 {}`",
                        mode & 0o777,
                        path.display()
                    )));
                }
                Keyring::new(&text, &[])
            }
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                let key = generate_key();
                let mut file = std::fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .mode(0o600)
                    .open(path)
                    .map_err(|e| file_error(e.to_string()))?;
                file.write_all(key.as_bytes())
                    .and_then(|()| file.sync_all())
                    .map_err(|e| file_error(e.to_string()))?;
                log::info!(
                    "created the secret key file {} (keep it with the database)",
                    path.display()
                );
                Keyring::new(&key, &[])
            }
            Err(err) => Err(file_error(err.to_string())),
        }
    }

    pub fn seal(&self, plaintext: &[u8], associated: &str) -> Vec<u8> {
        let mut nonce = [0u8; NONCE_LEN];
        rand::rng().fill_bytes(&mut nonce);
        let sealed = self
            .current
            .cipher
            .encrypt(
                &nonce.into(),
                Payload {
                    msg: plaintext,
                    aad: associated.as_bytes(),
                },
            )
            .unwrap_or_else(|_| unreachable!("AES-GCM encrypts any message shorter than 64 GiB"));
        let mut out = Vec::with_capacity(HEADER_LEN + sealed.len());
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&self.current.id);
        out.extend_from_slice(&nonce);
        out.extend_from_slice(&sealed);
        out
    }

    pub fn open(&self, sealed: &[u8], associated: &str) -> Result<Vec<u8>, KeyringError> {
        if sealed.len() < HEADER_LEN || &sealed[..MAGIC.len()] != MAGIC {
            return Err(KeyringError::Malformed);
        }
        let key_id = &sealed[MAGIC.len()..MAGIC.len() + KEY_ID_LEN];
        let key = std::iter::once(&self.current)
            .chain(&self.previous)
            .find(|k| k.id == key_id)
            .ok_or_else(|| KeyringError::UnknownKey(hex::encode(key_id)))?;
        let mut nonce = [0u8; NONCE_LEN];
        nonce.copy_from_slice(&sealed[MAGIC.len() + KEY_ID_LEN..HEADER_LEN]);
        key.cipher
            .decrypt(
                &nonce.into(),
                Payload {
                    msg: &sealed[HEADER_LEN..],
                    aad: associated.as_bytes(),
                },
            )
            .map_err(|_| KeyringError::Tampered)
    }

    /// Whether `sealed` was made with an older key.
    pub fn needs_reseal(&self, sealed: &[u8]) -> bool {
        sealed.get(MAGIC.len()..MAGIC.len() + KEY_ID_LEN) != Some(&self.current.id[..])
    }
}

impl tributary_domain::secrets::Sealer for Keyring {
    fn seal(&self, plaintext: &[u8], context: &str) -> Vec<u8> {
        Keyring::seal(self, plaintext, context)
    }

    fn open(&self, sealed: &[u8], context: &str) -> Result<Vec<u8>, String> {
        Keyring::open(self, sealed, context).map_err(|err| err.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sealed_values_open_only_with_their_context() {
        let ring = Keyring::new(&generate_key(), &[]).unwrap();
        let sealed = ring.seal(b"https://user:pass@bridge/simplefin", "ctx-a");
        assert!(
            !sealed.windows(4).any(|w| w == b"pass"),
            "no plain text inside"
        );
        assert_eq!(
            ring.open(&sealed, "ctx-a").unwrap(),
            b"https://user:pass@bridge/simplefin"
        );
        assert_eq!(ring.open(&sealed, "ctx-b"), Err(KeyringError::Tampered));
        let mut flipped = sealed.clone();
        let last = flipped.len() - 1;
        flipped[last] ^= 1;
        assert_eq!(ring.open(&flipped, "ctx-a"), Err(KeyringError::Tampered));
        assert_eq!(ring.open(b"nope", "ctx-a"), Err(KeyringError::Malformed));
    }

    #[test]
    fn rotation_opens_old_values_and_reseals_with_the_new_key() {
        let old_key = generate_key();
        let old = Keyring::new(&old_key, &[]).unwrap();
        let sealed = old.seal(b"secret", "ctx");
        let new_key = generate_key();
        let rotated = Keyring::new(&new_key, &[&old_key]).unwrap();
        assert!(rotated.needs_reseal(&sealed));
        let resealed = rotated.seal(&rotated.open(&sealed, "ctx").unwrap(), "ctx");
        assert!(!rotated.needs_reseal(&resealed));
        let without_old = Keyring::new(&new_key, &[]).unwrap();
        assert_eq!(without_old.open(&resealed, "ctx").unwrap(), b"secret");
        assert!(matches!(
            without_old.open(&sealed, "ctx"),
            Err(KeyringError::UnknownKey(_))
        ));
    }

    #[test]
    fn bad_keys_say_which_variable_and_why() {
        let err = Keyring::new("short", &[]).unwrap_err().to_string();
        assert!(err.starts_with("TRIBUTARY_SECRET_KEY:"), "{err}");
        let err = Keyring::new(&generate_key(), &["!!"])
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("TRIBUTARY_SECRET_KEY_PREVIOUS:"), "{err}");
        assert!(!format!("{:?}", Keyring::new(&generate_key(), &[]).unwrap()).contains('='));
    }

    #[test]
    fn the_key_file_is_created_private_and_reused() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tributary.db.key");
        let ring = Keyring::from_key_file(&path).unwrap();
        assert_eq!(
            std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o600
        );
        let sealed = ring.seal(b"x", "ctx");
        assert_eq!(
            Keyring::from_key_file(&path)
                .unwrap()
                .open(&sealed, "ctx")
                .unwrap(),
            b"x"
        );
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let err = Keyring::from_key_file(&path).unwrap_err().to_string();
        assert!(err.contains("chmod 600"), "{err}");
    }
}
