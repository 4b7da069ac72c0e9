//! Enumerations shared by every layer, with their stable wire spellings.

use std::fmt;
use std::str::FromStr;

/// Declares a string-backed enum with one canonical spelling per variant, used
/// in the database and on the wire alike.
macro_rules! wire_enum {
    ($(#[$meta:meta])* $name:ident { $($variant:ident => $text:literal),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name { $($variant),+ }

        impl $name {
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $text),+ }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                // `pad` honours width and alignment, so tables line up.
                f.pad(self.as_str())
            }
        }

        impl FromStr for $name {
            type Err = UnknownValue;
            fn from_str(text: &str) -> Result<Self, UnknownValue> {
                match text {
                    $($text => Ok($name::$variant),)+
                    _ => Err(UnknownValue { kind: stringify!($name), value: text.to_owned() }),
                }
            }
        }

        /// Stored text read back (storage records read these columns with
        /// `#[diesel(deserialize_as = String)]`; an unknown value is an error).
        impl TryFrom<String> for $name {
            type Error = UnknownValue;
            fn try_from(text: String) -> Result<Self, UnknownValue> {
                text.parse()
            }
        }
    };
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown {kind} `{value}`")]
pub struct UnknownValue {
    pub kind: &'static str,
    pub value: String,
}

wire_enum! {
    /// The data provider behind a connection; the lowercase id is what the
    /// `provider` field of an account carries.
    Provider {
        Sandbox => "sandbox",
        SimpleFin => "simplefin",
        GoCardless => "gocardless",
        EnableBanking => "enablebanking",
        Plaid => "plaid",
        SnapTrade => "snaptrade",
        Akahu => "akahu",
        Ofx => "ofx",
        Camt => "camt",
        Mt940 => "mt940",
        Csv => "csv",
        File => "file",
    }
}

impl Provider {
    /// Whether connections of this provider are synced (statement imports
    /// are not: new data arrives as new files).
    pub fn is_synced(self) -> bool {
        !matches!(
            self,
            Provider::File | Provider::Ofx | Provider::Camt | Provider::Mt940 | Provider::Csv
        )
    }

    /// Whether the provider reports investment holdings at all. Holdings on an
    /// account of any other provider answer `HOLDINGS_NOT_SUPPORTED`.
    pub fn supports_holdings(self) -> bool {
        // `file`: OFX investment statements carry positions.
        matches!(
            self,
            Provider::Sandbox
                | Provider::SimpleFin
                | Provider::Plaid
                | Provider::SnapTrade
                | Provider::Ofx
                | Provider::File
        )
    }
}

wire_enum! {
    /// Status of a connection, reported as the status of each of its accounts.
    ConnectionStatus {
        Active => "ACTIVE",
        Error => "ERROR",
        ReauthRequired => "REAUTH_REQUIRED",
        Disconnected => "DISCONNECTED",
    }
}

wire_enum! {
    AccountKind {
        Checking => "checking",
        Savings => "savings",
        CreditCard => "credit_card",
        Brokerage => "brokerage",
        Loan => "loan",
        Other => "other",
    }
}

wire_enum! {
    /// Who pays for a Platform app's end users' connections.
    BillingModel {
        Integrator => "integrator",
        User => "user",
    }
}

wire_enum! {
    /// Where a checkout stands as the payment processor last said.
    CheckoutStatus {
        Open => "open",
        Paid => "paid",
        Declined => "declined",
    }
}

wire_enum! {
    /// Which payment processor a checkout or subscription went through.
    PaymentProcessorKind {
        Test => "test",
        Stripe => "stripe",
    }
}

wire_enum! {
    /// What a browser-flow session is for: an authorization request, or a
    /// portal link a user opened.
    WebSessionPurpose {
        Authorize => "authorize",
        Portal => "portal",
    }
}

wire_enum! {
    /// A PKCE code challenge method (RFC 7636). Only S256: `plain` would let
    /// whoever saw the authorization request redeem its code.
    PkceMethod {
        S256 => "S256",
    }
}

wire_enum! {
    /// An OAuth token's kind.
    TokenKind {
        Access => "access",
        Refresh => "refresh",
    }
}

wire_enum! {
    SyncJobStatus {
        Queued => "queued",
        Running => "running",
        Succeeded => "succeeded",
        Failed => "failed",
        Deferred => "deferred",
    }
}

wire_enum! {
    SyncJobKind {
        Scheduled => "scheduled",
        OnDemand => "on_demand",
        Initial => "initial",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_spelling_round_trips() {
        for p in Provider::ALL {
            assert_eq!(p.as_str().parse::<Provider>().unwrap(), *p);
        }
        for s in ConnectionStatus::ALL {
            assert_eq!(s.to_string().parse::<ConnectionStatus>().unwrap(), *s);
        }
        assert!("Sandbox".parse::<Provider>().is_err());
    }
}

wire_enum! {
    /// What a webhook tells (docs/changes.md#events).
    WebhookEventType {
        TransactionsUpdated => "transactions.updated",
        ConnectionStatusChanged => "connection.status_changed",
        ConnectionConsentExpiring => "connection.consent_expiring",
        SyncFailed => "sync.failed",
    }
}

wire_enum! {
    /// Where one event's delivery to one endpoint stands: pending, delivered,
    /// failed (every scheduled attempt failed) or cancelled (the endpoint
    /// was disabled before it was delivered).
    DeliveryStatus {
        Pending => "pending",
        Delivered => "delivered",
        Failed => "failed",
        Cancelled => "cancelled",
    }
}
