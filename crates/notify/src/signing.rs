//! Standard Webhooks signatures: `webhook-signature` is `v1,` and the
//! base64 HMAC-SHA256, keyed with the endpoint's secret, of
//! `{webhook-id}.{webhook-timestamp}.{body}`. A secret is written
//! `whsec_` and the base64 of its bytes.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use hmac::{Hmac, KeyInit, Mac};
use rand::Rng as _;
use sha2::Sha256;

const PREFIX: &str = "whsec_";
/// Random bytes in a new secret (the standard asks for 24 to 64).
const SECRET_BYTES: usize = 32;

/// An endpoint's signing secret.
#[derive(Clone, PartialEq, Eq)]
pub struct SigningSecret(Vec<u8>);

impl std::fmt::Debug for SigningSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SigningSecret(..)")
    }
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("a webhook signing secret is `whsec_` and base64 of 24 to 64 bytes")]
pub struct MalformedSecret;

impl SigningSecret {
    pub fn generate() -> Self {
        let mut bytes = vec![0u8; SECRET_BYTES];
        rand::rng().fill_bytes(&mut bytes);
        SigningSecret(bytes)
    }

    pub fn parse(text: &str) -> Result<Self, MalformedSecret> {
        let bytes = text
            .strip_prefix(PREFIX)
            .and_then(|b64| STANDARD.decode(b64).ok())
            .filter(|bytes| (24..=64).contains(&bytes.len()))
            .ok_or(MalformedSecret)?;
        Ok(SigningSecret(bytes))
    }

    /// `whsec_…`: how the owner is shown it (once) and how it is sealed.
    pub fn to_text(&self) -> String {
        format!("{PREFIX}{}", STANDARD.encode(&self.0))
    }

    /// `v1,<base64 signature>` of one message.
    pub fn sign(&self, message_id: &str, timestamp: i64, body: &[u8]) -> String {
        let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(&self.0) else {
            unreachable!("HMAC takes keys of any length")
        };
        mac.update(message_id.as_bytes());
        mac.update(b".");
        mac.update(timestamp.to_string().as_bytes());
        mac.update(b".");
        mac.update(body);
        format!("v1,{}", STANDARD.encode(mac.finalize().into_bytes()))
    }
}

/// The `webhook-signature` header: one signature per secret (the current
/// one, and the previous one while a rotation overlaps), space-separated.
pub fn signature_header(
    secrets: &[&SigningSecret],
    message_id: &str,
    timestamp: i64,
    body: &[u8],
) -> String {
    secrets
        .iter()
        .map(|secret| secret.sign(message_id, timestamp, body))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signs_as_the_standards_example_does() {
        // The example of the Standard Webhooks specification.
        let secret = SigningSecret::parse("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").unwrap();
        let body = br#"{"test": 2432232314}"#;
        assert_eq!(
            secret.sign("msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, body),
            "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
        );
    }

    #[test]
    fn secrets_read_back_and_refuse_what_is_not_one() {
        let secret = SigningSecret::generate();
        assert_eq!(SigningSecret::parse(&secret.to_text()).unwrap(), secret);
        for bad in [
            "",
            "whsec_",
            "whsec_!!!",
            "sk_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
            "whsec_AAAA",
        ] {
            assert_eq!(SigningSecret::parse(bad), Err(MalformedSecret), "{bad}");
        }
        let other = SigningSecret::generate();
        let both = signature_header(&[&secret, &other], "msg_1", 1, b"{}");
        assert_eq!(both.split(' ').count(), 2);
        assert!(both.starts_with(&secret.sign("msg_1", 1, b"{}")));
    }
}
