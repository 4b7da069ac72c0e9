//! What a connector returns: the provider's current view of one connection.

use crate::model::{AccountKind, InvestmentKind};
use crate::money::Decimal;
use chrono::{DateTime, NaiveDate, Utc};

#[derive(Debug, Clone, PartialEq)]
pub struct ProviderSnapshot {
    pub institution: SnapshotInstitution,
    pub accounts: Vec<SnapshotAccount>,
    /// Problems the provider reported alongside its data (e.g. one bank of
    /// several needs the user's attention); shown as the connection's reason.
    pub notices: Vec<String>,
    /// For providers that do not link a posted record to the pending one it
    /// replaces: how to recognise the pair. `None`: links only.
    pub pending_match: Option<crate::pending_match::PendingMatchRule>,
    /// True when the snapshot is the provider's whole current view (a sync),
    /// so a stored pending record it no longer lists has vanished. False for
    /// a statement file, which shows only its own period.
    pub complete: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct SnapshotInstitution {
    /// The provider's id for the institution, unique within the provider.
    pub provider_institution_id: String,
    pub name: String,
    pub logo_url: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct SnapshotAccount {
    /// The provider's id for the account, unique within the connection.
    pub provider_account_id: String,
    /// The bank the account is at, where it is not the connection's own (an
    /// aggregator bridging several banks behind one connection); `None`:
    /// the snapshot's institution.
    pub institution: Option<SnapshotInstitution>,
    /// The account's own name, as its bank gives it.
    pub name: String,
    pub kind: AccountKind,
    pub currency: String,
    /// Last digits of the account number, for display only.
    pub mask: Option<String>,
    pub balance: Option<SnapshotBalance>,
    /// Balances the provider states for past days (a day-end balance, a
    /// statement's opening balance), oldest first; each is kept once per
    /// account and moment, so a re-sync adds none. Empty for most.
    pub balance_history: Vec<SnapshotBalance>,
    pub transactions: Vec<SnapshotTransaction>,
    /// `None` when the provider reports no holdings for this account; `Some`
    /// (possibly empty) replaces the stored holdings.
    pub holdings: Option<Vec<SnapshotHolding>>,
    /// Buys, sells, income and fees of an investment account, as such
    /// (their cash effect may also be among `transactions`). Kept once per
    /// provider id: a record seen again replaces what it said, and none is
    /// removed for not being seen (providers and files show a window).
    pub investment_transactions: Vec<SnapshotInvestmentTransaction>,
    /// What a card or loan account owes and when, where the provider says;
    /// `None` keeps what is stored (a provider that says nothing of it this
    /// time has not taken it back).
    pub liability: Option<SnapshotLiability>,
}

/// A card's or loan's terms as its provider states them (docs/api-reference.md,
/// "Liabilities"): each part optional, amounts positive.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SnapshotLiability {
    /// How much a card may owe.
    pub credit_limit: Option<Decimal>,
    /// The least the next payment may be.
    pub minimum_payment: Option<Decimal>,
    /// When the next payment is due.
    pub next_payment_due: Option<NaiveDate>,
    /// What the last statement said was owed.
    pub last_statement_balance: Option<Decimal>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct SnapshotBalance {
    pub current: Decimal,
    pub available: Option<Decimal>,
    pub currency: String,
    pub as_of: DateTime<Utc>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct SnapshotTransaction {
    /// The provider's id; unique within the account. A pending record and the
    /// posted record that replaces it have different ids.
    pub provider_id: String,
    /// On a posted record: the provider id of the pending record it replaces,
    /// where the provider gives that link.
    pub pending_provider_id: Option<String>,
    pub is_pending: bool,
    pub date: NaiveDate,
    pub amount: Decimal,
    pub currency: String,
    pub merchant: Option<String>,
    pub description: Option<String>,
    /// What the provider or the statement says of the transaction's kind
    /// (codes enrichment reads: docs/enrichment.md).
    pub hints: crate::enrich::hints::Hints,
}

#[derive(Debug, Clone, PartialEq)]
pub struct SnapshotHolding {
    pub security: Security,
    pub quantity: Decimal,
    pub price: Decimal,
    /// Value in the holding's `currency`.
    pub value: Decimal,
    /// Value in the account's currency, when the provider converts it.
    pub value_in_account_currency: Option<Decimal>,
    pub cost_basis: Option<Decimal>,
    pub currency: String,
    /// The provider's own record, kept verbatim and served as `raw`.
    pub raw: serde_json::Value,
}

/// One piece of investment activity (docs/api-reference.md, "Investment
/// transactions").
#[derive(Debug, Clone, PartialEq)]
pub struct SnapshotInvestmentTransaction {
    /// The provider's id; unique within the account.
    pub provider_id: String,
    pub date: NaiveDate,
    pub kind: InvestmentKind,
    /// The source's own word for the kind (OFX's `REINVEST`, `CGLONG`).
    pub subtype: Option<String>,
    /// `None` for activity of no one security (margin interest, a fee).
    pub security: Option<Security>,
    /// Units the position gained (positive) or lost (negative); see
    /// [`SnapshotInvestmentTransaction::with_quantity_signed`].
    pub quantity: Option<Decimal>,
    pub price: Option<Decimal>,
    /// The cash effect on the account: negative when cash leaves it.
    pub amount: Decimal,
    /// Commissions, fees and loads, as a positive cost.
    pub fees: Option<Decimal>,
    pub currency: String,
    pub description: Option<String>,
    /// The provider's own record, kept verbatim and served as `raw`.
    pub raw: serde_json::Value,
}

impl SnapshotInvestmentTransaction {
    /// The quantity signed where the source wrote a count without a sign
    /// for a kind that takes units away (some write a sale's units as a
    /// positive count, others negative). A count the source did sign is
    /// kept as it is: a negative buy is a reversal the source meant.
    pub fn with_quantity_signed(mut self) -> Self {
        if let (Some(quantity), Some(false)) = (self.quantity, self.kind.adds_units())
            && quantity.is_sign_positive()
        {
            self.quantity = Some(-quantity);
        }
        self
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Security {
    pub name: String,
    pub currency: String,
    pub ticker: Option<String>,
    pub figi: Option<String>,
    pub cusip: Option<String>,
    pub isin: Option<String>,
}

impl Security {
    /// The identity under which a security is stored once for its owner
    /// and shared by every holding and activity of theirs naming it: the
    /// strongest identifier the provider gave.
    pub fn identity_key(&self) -> String {
        if let Some(isin) = &self.isin {
            format!("isin:{isin}")
        } else if let Some(figi) = &self.figi {
            format!("figi:{figi}")
        } else if let Some(cusip) = &self.cusip {
            format!("cusip:{cusip}")
        } else if let Some(ticker) = &self.ticker {
            format!("ticker:{ticker}:{}", self.currency)
        } else {
            format!("name:{}:{}", self.name, self.currency)
        }
    }
}
