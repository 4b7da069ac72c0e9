//! The exact JSON shapes of spec/wire-format.md. Field names here are a
//! contract with existing clients: extend with optional fields, never rename.

use serde::Serialize;
use tributary_domain::ids::AccountId;
use tributary_domain::money::{Decimal, json as decimal_json};
use tributary_storage::read::{AccountView, BalanceRecord, HoldingView, TransactionRecord};

#[derive(Serialize)]
pub struct AccountList {
    pub accounts: Vec<Account>,
    pub total: usize,
}

#[derive(Serialize)]
pub struct Account {
    pub id: AccountId,
    pub name: String,
    pub institution_name: String,
    pub institution_logo: Option<String>,
    pub provider: &'static str,
    pub currency: String,
    pub status: &'static str,
    /// Extension: checking, savings, credit_card, brokerage, loan, other.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// Extension: last digits of the account number.
    pub mask: Option<String>,
}

impl From<AccountView> for Account {
    fn from(view: AccountView) -> Self {
        Account {
            id: view.id,
            name: view.name,
            institution_name: view.institution_name,
            institution_logo: view.institution_logo,
            provider: view.provider.as_str(),
            currency: view.currency,
            status: view.status.as_str(),
            kind: view.kind.as_str(),
            mask: view.mask,
        }
    }
}

#[derive(Serialize)]
pub struct TransactionList {
    pub transactions: Vec<Transaction>,
    pub total: i64,
    /// Present only when the request paged (`limit` or `cursor`).
    #[serde(rename = "nextCursor", skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<Option<String>>,
}

#[derive(Serialize)]
pub struct Transaction {
    pub id: String,
    #[serde(rename = "accountId")]
    pub account_id: AccountId,
    #[serde(serialize_with = "decimal_json::serialize")]
    pub amount: Decimal,
    pub currency: String,
    pub date: String,
    pub merchant: Option<String>,
    pub description: Option<String>,
    #[serde(rename = "isPending")]
    pub is_pending: bool,
}

/// The longest merchant label made from a description, in characters.
const MERCHANT_LABEL_CHARS: usize = 40;

/// A short label from a description, for a record that names no
/// counterparty: `merchant` is null only when a record has no text at all,
/// because existing clients read it as the payee and fail on null. Whole
/// words up to [`MERCHANT_LABEL_CHARS`] (a first word that is longer is
/// cut).
pub fn merchant_label(description: &str) -> Option<String> {
    let mut label = String::new();
    for word in description.split_whitespace() {
        let separator = usize::from(!label.is_empty());
        if label.chars().count() + separator + word.chars().count() > MERCHANT_LABEL_CHARS {
            if label.is_empty() {
                label = word.chars().take(MERCHANT_LABEL_CHARS).collect();
            }
            break;
        }
        if separator == 1 {
            label.push(' ');
        }
        label.push_str(word);
    }
    (!label.is_empty()).then_some(label)
}

impl From<TransactionRecord> for Transaction {
    fn from(record: TransactionRecord) -> Self {
        Transaction {
            id: record.id.to_string(),
            account_id: record.account_id,
            amount: record.amount,
            currency: record.currency,
            date: record.date.format("%Y-%m-%d").to_string(),
            merchant: record
                .merchant
                .or_else(|| record.description.as_deref().and_then(merchant_label)),
            description: record.description,
            is_pending: record.is_pending,
        }
    }
}

#[derive(Serialize)]
pub struct BalanceResponse {
    pub balance: Balance,
}

#[derive(Serialize)]
pub struct Balance {
    #[serde(serialize_with = "decimal_json::serialize")]
    pub amount: Decimal,
    pub currency: String,
    /// Extension: the available balance, when the provider reports one.
    #[serde(
        serialize_with = "decimal_json::serialize_option",
        skip_serializing_if = "Option::is_none"
    )]
    pub available: Option<Decimal>,
    /// Extension: when the provider reported this balance (RFC 3339, UTC).
    #[serde(rename = "asOf")]
    pub as_of: String,
}

impl From<BalanceRecord> for Balance {
    fn from(record: BalanceRecord) -> Self {
        Balance {
            amount: record.amount,
            currency: record.currency,
            available: record.available,
            as_of: record
                .as_of
                .and_utc()
                .to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        }
    }
}

#[derive(Serialize)]
pub struct HoldingsResponse {
    pub holdings: Vec<Holding>,
    #[serde(rename = "totalValue", serialize_with = "decimal_json::serialize")]
    pub total_value: Decimal,
    pub currency: String,
}

#[derive(Serialize)]
pub struct Holding {
    pub security: Security,
    #[serde(serialize_with = "decimal_json::serialize")]
    pub quantity: Decimal,
    #[serde(serialize_with = "decimal_json::serialize")]
    pub price: Decimal,
    #[serde(serialize_with = "decimal_json::serialize")]
    pub value: Decimal,
    #[serde(
        rename = "costBasis",
        serialize_with = "decimal_json::serialize_option"
    )]
    pub cost_basis: Option<Decimal>,
    pub currency: String,
    pub raw: serde_json::Value,
}

#[derive(Serialize)]
pub struct Security {
    pub name: String,
    pub currency: String,
    #[serde(rename = "tickerSymbol")]
    pub ticker_symbol: Option<String>,
    pub figi: Option<String>,
    /// Spelled `cusp` by the contract (sic).
    pub cusp: Option<String>,
    pub isin: Option<String>,
}

impl From<HoldingView> for Holding {
    fn from(view: HoldingView) -> Self {
        Holding {
            security: Security {
                name: view.security.name,
                currency: view.security.currency,
                ticker_symbol: view.security.ticker,
                figi: view.security.figi,
                cusp: view.security.cusip,
                isin: view.security.isin,
            },
            quantity: view.quantity,
            price: view.price,
            value: view.value,
            cost_basis: view.cost_basis,
            currency: view.currency,
            raw: view.raw,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::merchant_label;

    #[test]
    fn merchant_labels_are_whole_words_from_the_description() {
        assert_eq!(
            merchant_label("  Transfer to   Holiday Fund ").as_deref(),
            Some("Transfer to Holiday Fund")
        );
        assert_eq!(
            merchant_label("SEPA Überweisung an Stadtwerke München GmbH Abschlag November")
                .as_deref(),
            Some("SEPA Überweisung an Stadtwerke München")
        );
        assert_eq!(merchant_label(&"x".repeat(60)).map(|l| l.len()), Some(40));
        assert_eq!(merchant_label(" \n "), None);
    }
}
