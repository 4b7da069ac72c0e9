//! Webhooks providers send this server (Teller's `enrollment.disconnected`):
//! the provider's connector checks the signature and says what happened
//! ([`crate::Connector::webhook`]); the sync engine applies it to the
//! connections concerned ([`crate::sync::SyncEngine::receive_webhook`]).
//! Served at `POST /providers/{provider}/webhook` on both servers
//! (docs/providers.md, "Webhooks from providers").

use chrono::{DateTime, Utc};

/// One webhook as it arrived.
pub struct InboundWebhook<'a> {
    /// A request header's value by its name (any case).
    pub header: &'a dyn Fn(&str) -> Option<String>,
    /// The body, exactly as sent (signatures cover its bytes).
    pub body: &'a [u8],
    pub now: DateTime<Utc>,
}

impl std::fmt::Debug for InboundWebhook<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InboundWebhook")
            .field("body_bytes", &self.body.len())
            .field("now", &self.now)
            .finish()
    }
}

/// What a verified webhook says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProviderEvent {
    /// The connections whose setting `setting` is `value` need the person
    /// (the bank disconnected them): `reason` in plain words.
    NeedsPerson {
        setting: &'static str,
        value: String,
        reason: String,
    },
    /// Understood; nothing to do (a test event, an event not used).
    Nothing,
}

/// Why a webhook is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WebhookRefusal {
    /// The provider sends none here, or the operator did not set it up.
    #[error("this server takes no webhooks from this provider")]
    NotTaken,
    /// The signature is missing, stale or wrong.
    #[error("the webhook's signature does not verify: {0}")]
    Unsigned(String),
    /// Signed, but the body does not read.
    #[error("the webhook does not read: {0}")]
    Malformed(String),
}
