//! The exact JSON shapes of spec/wire-format.md. Field names here are a
//! contract with existing clients: extend with optional fields, never rename.

use chrono::{Datelike, NaiveDate};
use serde::ser::SerializeStruct;
use serde::{Serialize, Serializer};
use std::fmt;
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

/// One page of a paged listing (`limit` or `cursor` given). The unpaged
/// listing is streamed by `transaction_stream::Listing` in the same shape,
/// without `nextCursor`.
#[derive(Serialize)]
pub struct TransactionPage<'a> {
    #[serde(serialize_with = "transaction_rows")]
    pub transactions: &'a [TransactionRecord],
    pub total: i64,
    #[serde(rename = "nextCursor")]
    pub next_cursor: Option<String>,
}

fn transaction_rows<S: Serializer>(rows: &&[TransactionRecord], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(rows.iter().map(Transaction))
}

/// A stored transaction as the contract's Transaction, written straight
/// from the record: the id and the date through their digits (no string
/// made, no format string parsed per row), a merchant label made only for a
/// record that names none.
pub struct Transaction<'a>(pub &'a TransactionRecord);

impl Serialize for Transaction<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let record = self.0;
        let mut out = s.serialize_struct("Transaction", 8)?;
        out.serialize_field("id", &Digits(record.id.get()))?;
        out.serialize_field("accountId", &record.account_id)?;
        out.serialize_field("amount", &Number(&record.amount))?;
        out.serialize_field("currency", &record.currency)?;
        out.serialize_field("date", &IsoDate(record.date))?;
        match &record.merchant {
            Some(merchant) => out.serialize_field("merchant", merchant)?,
            None => out.serialize_field(
                "merchant",
                &record.description.as_deref().and_then(merchant_label),
            )?,
        }
        out.serialize_field("description", &record.description)?;
        out.serialize_field("isPending", &record.is_pending)?;
        out.end()
    }
}

/// An integer as a JSON string (transaction ids are strings on the wire).
struct Digits(i64);

impl Serialize for Digits {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(&self.0)
    }
}

/// A date as `YYYY-MM-DD`.
struct IsoDate(NaiveDate);

impl fmt::Display for IsoDate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let date = self.0;
        write!(
            f,
            "{:04}-{:02}-{:02}",
            date.year(),
            date.month(),
            date.day()
        )
    }
}

impl Serialize for IsoDate {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// A decimal as a JSON number with its exact digits.
struct Number<'a>(&'a Decimal);

impl Serialize for Number<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        decimal_json::serialize(self.0, s)
    }
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
    use super::*;
    use tributary_domain::ids::TransactionId;
    use tributary_domain::money::parse_decimal;

    #[test]
    fn a_transaction_is_written_in_the_contracts_shape() {
        let record = TransactionRecord {
            id: TransactionId::new(42),
            account_id: AccountId::new(7),
            provider_transaction_id: "t-1".into(),
            pending_provider_id: None,
            is_pending: false,
            date: NaiveDate::from_ymd_opt(2026, 3, 9).unwrap(),
            amount: parse_decimal("-12.50").unwrap(),
            currency: "EUR".into(),
            merchant: None,
            description: Some("Café \"Zur Post\" card payment".into()),
        };
        assert_eq!(
            serde_json::to_string(&Transaction(&record)).unwrap(),
            r#"{"id":"42","accountId":7,"amount":-12.50,"currency":"EUR","date":"2026-03-09","merchant":"Café \"Zur Post\" card payment","description":"Café \"Zur Post\" card payment","isPending":false}"#
        );
        let page = TransactionPage {
            transactions: std::slice::from_ref(&record),
            total: 3,
            next_cursor: None,
        };
        let page: serde_json::Value = serde_json::to_value(&page).unwrap();
        assert_eq!(page["total"], 3);
        assert!(page["nextCursor"].is_null());
        assert_eq!(page["transactions"][0]["date"], "2026-03-09");
    }

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
