//! Row ids as types of their own, so an account id cannot be passed where a
//! user id is expected (`issue_pair(store, app, user, …)` compiles only with
//! the arguments in their places).
//!
//! Each id is the database's 64-bit row id and serialises as that number, so
//! the wire shape is unchanged. Storage reads them with
//! `#[diesel(deserialize_as = i64)]` (through `From<i64>`) and binds them with
//! [`get`](UserId::get): diesel's column traits cannot be implemented for these
//! types outside this crate (the orphan rule), and this crate stays free of
//! diesel.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::num::ParseIntError;
use std::str::FromStr;

macro_rules! row_id {
    ($($(#[$meta:meta])* $name:ident;)+) => {$(
        $(#[$meta])*
        #[derive(
            Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
        )]
        #[serde(transparent)]
        pub struct $name(i64);

        impl $name {
            pub const fn new(raw: i64) -> Self {
                Self(raw)
            }

            /// The row id, for binding in a query or comparing with one.
            pub const fn get(self) -> i64 {
                self.0
            }
        }

        impl From<i64> for $name {
            fn from(raw: i64) -> Self {
                Self(raw)
            }
        }

        /// For diesel's `#[diesel(serialize_as = i64)]` on insertable rows.
        impl From<$name> for i64 {
            fn from(id: $name) -> i64 {
                id.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Display::fmt(&self.0, f)
            }
        }

        /// Parses a path segment or argument (decimal digits only).
        impl FromStr for $name {
            type Err = ParseIntError;
            fn from_str(text: &str) -> Result<Self, ParseIntError> {
                text.parse().map(Self)
            }
        }
    )+};
}

row_id! {
    /// A person: a Personal user or one of a Platform app's end users.
    UserId;
    /// A Platform integrator's app.
    AppId;
    /// One account at an institution, as reported on the wire.
    AccountId;
    /// A user's link to one institution through one provider.
    ConnectionId;
    InstitutionId;
    /// A stored transaction row (the wire id is the provider's, not this).
    TransactionId;
    SecurityId;
    SyncJobId;
    ApiKeyId;
    /// An app that reads a user's data over SimpleFIN (docs/simplefin.md).
    SimpleFinDestinationId;
    /// A signed-in browser session of the Personal dashboard.
    DashboardSessionId;
    /// A person who owns Platform apps (the developer dashboard).
    DeveloperId;
    /// A signed-in browser session of the developer dashboard.
    DeveloperSessionId;
    /// An OAuth access or refresh token row.
    TokenId;
    /// An OAuth authorization code row.
    AuthCodeId;
    /// A browser-flow session (authorize or portal pages).
    WebSessionId;
    /// A one-use portal link.
    PortalSessionId;
    SignInCodeId;
    CheckoutId;
    /// A URL a user or an app receives webhooks at.
    WebhookEndpointId;
    /// An event in the webhook outbox.
    WebhookEventId;
    /// One event's delivery to one endpoint.
    WebhookDeliveryId;
    /// A notice waiting to be mailed, or mailed.
    MailNoticeId;
    /// A person's enrichment rule.
    RuleId;
    /// A person's consent to an assistant reading some accounts over MCP.
    GrantId;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_is_its_number_on_the_wire_and_in_text() {
        let id = AccountId::new(42);
        assert_eq!(serde_json::to_string(&id).unwrap(), "42");
        assert_eq!(serde_json::from_str::<AccountId>("42").unwrap(), id);
        assert_eq!(id.to_string(), "42");
        assert_eq!("42".parse::<AccountId>().unwrap(), id);
        assert!("4x".parse::<AccountId>().is_err());
    }
}
