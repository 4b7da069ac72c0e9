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

/// The data provider behind a connection: a connector's id (named in the
/// connector's own module, docs/architecture.md "Adding a provider") or a
/// statement format (the constants here). The id is what the `provider`
/// field of an account carries and what the database stores.
///
/// An open set, so that a provider is added in its own module: any id of
/// 1 to [`Provider::MAX_LEN`] lowercase ASCII letters and digits reads back;
/// whether a connector serves it is the registry's answer.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Provider {
    id: [u8; Provider::MAX_LEN],
    len: u8,
}

impl Provider {
    /// The longest id.
    pub const MAX_LEN: usize = 24;

    /// Statement files of a format not told apart (the generic upload).
    pub const FILE: Provider = Provider::new("file");
    pub const OFX: Provider = Provider::new("ofx");
    pub const CAMT: Provider = Provider::new("camt");
    pub const MT940: Provider = Provider::new("mt940");
    pub const CSV: Provider = Provider::new("csv");

    /// The statement formats: connections of these are imported, not synced.
    pub const STATEMENT_FORMATS: [Provider; 5] = [
        Provider::FILE,
        Provider::OFX,
        Provider::CAMT,
        Provider::MT940,
        Provider::CSV,
    ];

    /// A provider id known when the code is written. Panics (at compile
    /// time, in a `const`) when `id` is not 1 to 24 lowercase ASCII letters
    /// and digits.
    pub const fn new(id: &'static str) -> Provider {
        match Provider::checked(id.as_bytes()) {
            Some(provider) => provider,
            None => panic!("a provider id is 1 to 24 lowercase ASCII letters and digits"),
        }
    }

    const fn checked(bytes: &[u8]) -> Option<Provider> {
        if bytes.is_empty() || bytes.len() > Provider::MAX_LEN {
            return None;
        }
        let mut id = [0u8; Provider::MAX_LEN];
        let mut i = 0;
        while i < bytes.len() {
            if !(bytes[i].is_ascii_lowercase() || bytes[i].is_ascii_digit()) {
                return None;
            }
            id[i] = bytes[i];
            i += 1;
        }
        #[allow(clippy::cast_possible_truncation)] // at most MAX_LEN (24)
        let len = bytes.len() as u8;
        Some(Provider { id, len })
    }

    pub fn as_str(&self) -> &str {
        // Only ASCII is ever stored (checked by `checked`).
        std::str::from_utf8(&self.id[..usize::from(self.len)]).unwrap_or_default()
    }

    /// Whether connections of this provider are synced (statement imports
    /// are not: new data arrives as new files).
    pub fn is_synced(self) -> bool {
        !Provider::STATEMENT_FORMATS.contains(&self)
    }

    /// For a statement format, whether its files may carry investment
    /// positions (OFX investment statements, also through the generic
    /// upload); `None` for a connector's id, whose description says.
    pub fn statement_holdings(self) -> Option<bool> {
        Provider::STATEMENT_FORMATS
            .contains(&self)
            .then_some(self == Provider::OFX || self == Provider::FILE)
    }
}

impl fmt::Debug for Provider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Provider({})", self.as_str())
    }
}

impl fmt::Display for Provider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // `pad` honours width and alignment, so tables line up.
        f.pad(self.as_str())
    }
}

impl FromStr for Provider {
    type Err = UnknownValue;
    fn from_str(text: &str) -> Result<Self, UnknownValue> {
        Provider::checked(text.as_bytes()).ok_or_else(|| UnknownValue {
            kind: "Provider",
            value: text.to_owned(),
        })
    }
}

/// Stored text read back (storage records read the column with
/// `#[diesel(deserialize_as = String)]`; a malformed id is an error).
impl TryFrom<String> for Provider {
    type Error = UnknownValue;
    fn try_from(text: String) -> Result<Self, UnknownValue> {
        text.parse()
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
    /// What one piece of investment activity is (docs/api-reference.md,
    /// "Investment transactions"); the source's own word for it is kept
    /// beside it as the subtype.
    InvestmentKind {
        Buy => "BUY",
        Sell => "SELL",
        Dividend => "DIVIDEND",
        Interest => "INTEREST",
        Fee => "FEE",
        Tax => "TAX",
        TransferIn => "TRANSFER_IN",
        TransferOut => "TRANSFER_OUT",
        Split => "SPLIT",
        Other => "OTHER",
    }
}

impl InvestmentKind {
    /// The direction a kind moves units in: `Some(true)` adds units to the
    /// position (a buy, units transferred in), `Some(false)` takes them
    /// away; `None` where the kind says nothing of it (a split, income).
    pub fn adds_units(self) -> Option<bool> {
        match self {
            InvestmentKind::Buy | InvestmentKind::TransferIn => Some(true),
            InvestmentKind::Sell | InvestmentKind::TransferOut => Some(false),
            _ => None,
        }
    }
}

impl AccountKind {
    /// An account whose balance is money owed (a card, a loan), whatever
    /// sign its provider writes it with: net worth subtracts it.
    pub fn is_liability(self) -> bool {
        matches!(self, AccountKind::CreditCard | AccountKind::Loan)
    }
}

wire_enum! {
    /// What an OAuth client is: a Platform integrator's app, or an
    /// assistant that registered itself to read a person's data over MCP.
    /// Each kind's tokens work only where it belongs.
    AppKind {
        Platform => "platform",
        Mcp => "mcp",
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
        for p in Provider::STATEMENT_FORMATS {
            assert_eq!(p.as_str().parse::<Provider>().unwrap(), p);
        }
        assert_eq!(
            "examplebank2".parse::<Provider>().unwrap(),
            Provider::new("examplebank2")
        );
        assert_eq!(Provider::new("mt940").to_string(), "mt940");
        for s in ConnectionStatus::ALL {
            assert_eq!(s.to_string().parse::<ConnectionStatus>().unwrap(), *s);
        }
        for malformed in ["Sandbox", "", "with space", "a-b", "x".repeat(25).as_str()] {
            assert!(malformed.parse::<Provider>().is_err(), "{malformed:?}");
        }
    }
}

wire_enum! {
    /// What a webhook tells (docs/changes.md#events).
    WebhookEventType {
        TransactionsUpdated => "transactions.updated",
        InvestmentTransactionsUpdated => "investment_transactions.updated",
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
