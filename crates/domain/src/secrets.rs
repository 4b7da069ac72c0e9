//! Sealing provider credentials at rest, as a trait: the sync engine needs
//! to open credentials and `tributary-auth` owns the cipher, and neither crate
//! depends on the other.

use crate::ids::UserId;

/// Authenticated encryption bound to a context string.
pub trait Sealer: Send + Sync + std::fmt::Debug {
    fn seal(&self, plaintext: &[u8], context: &str) -> Vec<u8>;
    /// The plaintext, or a message saying why it does not open.
    fn open(&self, sealed: &[u8], context: &str) -> Result<Vec<u8>, String>;
}

/// The context a connection's credentials are sealed under: its owner and
/// provider, so a ciphertext copied to another row does not open.
pub fn credentials_context(user_id: UserId, provider: &str) -> String {
    format!("tributary/credentials/user/{user_id}/provider/{provider}")
}
