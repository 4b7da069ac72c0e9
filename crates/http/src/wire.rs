//! The exact JSON shapes of the Personal API, as its OpenAPI document
//! describes them (docs/api-reference.md). Field names here are a contract
//! with existing clients of the hosted service this API is compatible with:
//! extend with optional fields, never rename or reshape.

use chrono::{Datelike, NaiveDate};
use serde::ser::SerializeStruct;
use serde::{Serialize, Serializer};
use std::fmt;
use tributary_domain::enrich::merchant;
use tributary_domain::ids::AccountId;
use tributary_domain::model::InvestmentKind;
use tributary_domain::money::{Decimal, json as decimal_json};
use tributary_storage::investments::InvestmentTransactionView;
use tributary_storage::read::{AccountView, BalanceRecord, HoldingView, TransactionRecord};
use utoipa::ToSchema;
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{ObjectBuilder, Schema, Type};

/// [`decimal_schema`] or null.
pub fn nullable_decimal_schema() -> RefOr<Schema> {
    ObjectBuilder::new()
        .schema_type(utoipa::openapi::schema::SchemaType::from_iter([
            Type::Number,
            Type::Null,
        ]))
        .description(Some(
            "An exact decimal, written as a JSON number with the stored digits, or null.",
        ))
        .into()
}

/// An amount's schema: a JSON number written with exactly the stored
/// digits (`-12.50` stays `-12.50`), never rounded through a float.
pub fn decimal_schema() -> RefOr<Schema> {
    ObjectBuilder::new()
        .schema_type(Type::Number)
        .description(Some(
            "An exact decimal, written as a JSON number with the stored digits (`-12.50`).",
        ))
        .examples([serde_json::json!(-12.5)])
        .into()
}

/// Every account the credentials can see.
#[derive(Serialize, ToSchema)]
pub struct AccountList {
    pub accounts: Vec<Account>,
    pub total: usize,
}

/// An account at a bank or broker.
#[derive(Serialize, ToSchema)]
pub struct Account {
    #[schema(value_type = i64, minimum = 1, examples(7))]
    pub id: AccountId,
    #[schema(examples("Everyday Checking"))]
    pub name: String,
    #[schema(examples("Tributary Sandbox Bank"))]
    pub institution_name: String,
    /// A URL of the bank's logo, when the provider gives one.
    pub institution_logo: Option<String>,
    /// Where the data comes from: sandbox, simplefin, gocardless, import.
    #[schema(value_type = String, examples("sandbox"))]
    pub provider: String,
    /// ISO 4217.
    #[schema(examples("USD"))]
    pub currency: String,
    /// The connection's state: ACTIVE, REAUTH_REQUIRED, ERROR, DISCONNECTED.
    #[schema(value_type = String, examples("ACTIVE"))]
    pub status: &'static str,
    /// Extension: checking, savings, credit_card, brokerage, loan, other.
    #[serde(rename = "type")]
    #[schema(value_type = String, examples("checking"))]
    pub kind: &'static str,
    /// Extension: last digits of the account number.
    #[schema(examples("8103"))]
    pub mask: Option<String>,
    /// Extension: a card's or loan's terms, where its provider states
    /// them; absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub liability: Option<Liability>,
}

/// A card's or loan's terms as its provider states them: each part null
/// where it says nothing of it; amounts positive.
#[derive(Serialize, ToSchema)]
pub struct Liability {
    /// How much a card may owe.
    #[serde(
        rename = "creditLimit",
        serialize_with = "decimal_json::serialize_option"
    )]
    #[schema(rename = "creditLimit", schema_with = nullable_decimal_schema, required = true)]
    pub credit_limit: Option<Decimal>,
    /// The least the next payment may be.
    #[serde(
        rename = "minimumPayment",
        serialize_with = "decimal_json::serialize_option"
    )]
    #[schema(rename = "minimumPayment", schema_with = nullable_decimal_schema, required = true)]
    pub minimum_payment: Option<Decimal>,
    /// When the next payment is due, `YYYY-MM-DD`.
    #[serde(rename = "nextPaymentDueDate")]
    #[schema(rename = "nextPaymentDueDate", value_type = Option<String>, format = Date, required = true)]
    pub next_payment_due: Option<NaiveDate>,
    /// What the last statement said was owed.
    #[serde(
        rename = "lastStatementBalance",
        serialize_with = "decimal_json::serialize_option"
    )]
    #[schema(rename = "lastStatementBalance", schema_with = nullable_decimal_schema, required = true)]
    pub last_statement_balance: Option<Decimal>,
}

impl From<AccountView> for Account {
    fn from(view: AccountView) -> Self {
        Account {
            id: view.id,
            name: view.name,
            institution_name: view.institution_name,
            institution_logo: view.institution_logo,
            provider: view.provider.to_string(),
            currency: view.currency,
            status: view.status.as_str(),
            kind: view.kind.as_str(),
            mask: view.mask,
            liability: view.liability.is_stated().then_some(Liability {
                credit_limit: view.liability.credit_limit,
                minimum_payment: view.liability.minimum_payment,
                next_payment_due: view.liability.next_payment_due,
                last_statement_balance: view.liability.last_statement_balance,
            }),
        }
    }
}

/// One page of a paged listing (`limit` or `cursor` given). The unpaged
/// listing is streamed by `transaction_stream::Listing` in the same shape,
/// without `nextCursor`.
#[derive(Serialize, ToSchema)]
pub struct TransactionPage<'a> {
    #[serde(serialize_with = "transaction_rows")]
    #[schema(value_type = Vec<TransactionSchema>)]
    pub transactions: &'a [TransactionRecord],
    pub total: i64,
    #[serde(rename = "nextCursor")]
    pub next_cursor: Option<String>,
}

/// A page of the change feed (`GET /transactions/sync`).
#[derive(Serialize, ToSchema, Default)]
pub struct TransactionChanges {
    /// Transactions new to the reader, as they are now.
    #[serde(serialize_with = "owned_transaction_rows")]
    #[schema(value_type = Vec<TransactionSchema>)]
    pub added: Vec<TransactionRecord>,
    /// Transactions the reader has, as they are now (a pending one that
    /// posted keeps its id).
    #[serde(serialize_with = "owned_transaction_rows")]
    #[schema(value_type = Vec<TransactionSchema>)]
    pub modified: Vec<TransactionRecord>,
    /// Transactions gone since the reader's cursor.
    pub removed: Vec<RemovedTransaction>,
    /// Where this page ends: send it back as `cursor`.
    pub next_cursor: String,
    /// More changes follow now: ask again with `next_cursor` at once.
    pub has_more: bool,
}

/// A page of investment activity's change feed
/// (`GET /investment_transactions/sync`).
#[derive(Serialize, ToSchema, Default)]
pub struct InvestmentTransactionChanges {
    /// Records new to the reader, as they are now.
    pub added: Vec<InvestmentTransaction>,
    /// Records the reader has, as they are now.
    pub modified: Vec<InvestmentTransaction>,
    /// Records gone since the reader's cursor (their connection removed,
    /// or their account no longer shared).
    pub removed: Vec<RemovedTransaction>,
    /// Where this page ends: send it back as `cursor`.
    pub next_cursor: String,
    /// More changes follow now: ask again with `next_cursor` at once.
    pub has_more: bool,
}

/// A removed row of a change feed (a transaction, or a record of
/// investment activity in theirs).
#[derive(Serialize, ToSchema)]
pub struct RemovedTransaction {
    /// The id it had, a string of digits.
    #[schema(examples("42"))]
    pub id: String,
    #[serde(rename = "accountId")]
    #[schema(rename = "accountId", minimum = 1, examples(7))]
    pub account_id: i64,
}

fn owned_transaction_rows<S: Serializer>(
    rows: &[TransactionRecord],
    s: S,
) -> Result<S::Ok, S::Error> {
    s.collect_seq(rows.iter().map(Transaction))
}

fn transaction_rows<S: Serializer>(rows: &&[TransactionRecord], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(rows.iter().map(Transaction))
}

/// A stored transaction as the contract's Transaction, written straight
/// from the record: the id and the date through their digits (no string
/// made, no format string parsed per row), a merchant label made only for a
/// record that names none.
pub struct Transaction<'a>(pub &'a TransactionRecord);

/// What [`Transaction`] writes, for the OpenAPI document (its serializer is
/// written by hand; `a_transaction_is_written_as_its_schema_says` keeps
/// the two together).
#[derive(ToSchema)]
#[schema(as = Transaction)]
#[allow(dead_code)] // read only by the schema derive
pub struct TransactionSchema {
    /// The transaction's id, a string of digits; stable across syncs.
    #[schema(examples("42"))]
    id: String,
    #[serde(rename = "accountId")]
    #[schema(rename = "accountId", minimum = 1, examples(7))]
    account_id: i64,
    /// Negative for money out.
    #[schema(schema_with = decimal_schema)]
    amount: Decimal,
    /// ISO 4217.
    #[schema(examples("USD"))]
    currency: String,
    /// Booking date (the transaction date for a pending one), `YYYY-MM-DD`.
    #[schema(format = Date, examples("2026-03-09"))]
    date: String,
    /// Who was paid or who paid, as people write it (docs/enrichment.md):
    /// the provider's counterparty or the name in the bank's text, without
    /// card-processor wrappers, numbers and references; the raw text stays
    /// in `description`. Null only when the record has no text at all.
    #[schema(required = true)]
    merchant: Option<String>,
    #[schema(required = true)]
    description: Option<String>,
    #[schema(rename = "isPending")]
    is_pending: bool,
    /// Extension: the top-level category (docs/enrichment.md), one of
    /// the 22 names of the taxonomy; null on a transaction not yet
    /// enriched.
    #[schema(required = true, examples("Groceries"))]
    category: Option<String>,
    /// Extension: the second-level category, a stable id
    /// `<category>.<name>` (docs/enrichment.md); null where `category` is.
    #[schema(required = true, examples("groceries.supermarkets"))]
    subcategory: Option<String>,
    /// Extension: where this is one side of a transfer between the
    /// person's own accounts (opposite amounts a few days apart), the
    /// account of the other side; spending totals leave both out.
    #[serde(rename = "transferAccountId")]
    #[schema(
        rename = "transferAccountId",
        required = true,
        minimum = 1,
        examples(8)
    )]
    transfer_account_id: Option<i64>,
}

impl Serialize for Transaction<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let record = self.0;
        let mut out = s.serialize_struct("Transaction", 11)?;
        out.serialize_field("id", &Digits(record.id.get()))?;
        out.serialize_field("accountId", &record.account_id)?;
        out.serialize_field("amount", &Number(&record.amount))?;
        out.serialize_field("currency", &record.currency)?;
        out.serialize_field("date", &IsoDate(record.date))?;
        out.serialize_field("merchant", &shown_merchant(record))?;
        out.serialize_field("description", &record.description)?;
        out.serialize_field("isPending", &record.is_pending)?;
        let subcategory = record.shown_subcategory();
        out.serialize_field("category", &subcategory.map(|s| s.category.name()))?;
        out.serialize_field("subcategory", &subcategory.map(|s| s.id))?;
        out.serialize_field("transferAccountId", &record.transfer_account_id)?;
        out.end()
    }
}

/// The merchant a transaction shows: enrichment's clean name, else the
/// provider's, else (a row stored before enrichment that names no
/// counterparty) a label made from its description.
pub(crate) fn shown_merchant(record: &TransactionRecord) -> Option<std::borrow::Cow<'_, str>> {
    match record.clean_merchant.as_ref().or(record.merchant.as_ref()) {
        Some(merchant) => Some(merchant.into()),
        None => record
            .description
            .as_deref()
            .and_then(merchant::label)
            .map(Into::into),
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

#[derive(Serialize, ToSchema)]
pub struct BalanceResponse {
    pub balance: Balance,
}

#[derive(Serialize, ToSchema)]
pub struct Balance {
    #[serde(serialize_with = "decimal_json::serialize")]
    #[schema(schema_with = decimal_schema)]
    pub amount: Decimal,
    pub currency: String,
    /// Extension: the available balance, when the provider reports one.
    #[serde(
        serialize_with = "decimal_json::serialize_option",
        skip_serializing_if = "Option::is_none"
    )]
    #[schema(schema_with = decimal_schema)]
    pub available: Option<Decimal>,
    /// Extension: when the provider reported this balance (RFC 3339, UTC).
    #[serde(rename = "asOf")]
    #[schema(format = DateTime, examples("2026-03-09T08:00:00Z"))]
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

#[derive(Serialize, ToSchema)]
pub struct HoldingsResponse {
    pub holdings: Vec<Holding>,
    #[serde(rename = "totalValue", serialize_with = "decimal_json::serialize")]
    #[schema(schema_with = decimal_schema)]
    pub total_value: Decimal,
    pub currency: String,
}

#[derive(Serialize, ToSchema)]
pub struct Holding {
    pub security: Security,
    #[serde(serialize_with = "decimal_json::serialize")]
    #[schema(schema_with = decimal_schema)]
    pub quantity: Decimal,
    #[serde(serialize_with = "decimal_json::serialize")]
    #[schema(schema_with = decimal_schema)]
    pub price: Decimal,
    #[serde(serialize_with = "decimal_json::serialize")]
    #[schema(schema_with = decimal_schema)]
    pub value: Decimal,
    /// Null when the provider does not know it.
    #[serde(
        rename = "costBasis",
        serialize_with = "decimal_json::serialize_option"
    )]
    #[schema(schema_with = nullable_decimal_schema, required = true)]
    pub cost_basis: Option<Decimal>,
    pub currency: String,
    /// The provider's own record of the holding, as it sent it.
    #[schema(value_type = Object)]
    pub raw: serde_json::Value,
}

#[derive(Serialize, ToSchema)]
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

/// `GET /accounts/{id}/investment_transactions`.
#[derive(Serialize, ToSchema)]
pub struct InvestmentTransactionsResponse {
    /// Newest first.
    #[serde(rename = "investmentTransactions")]
    #[schema(rename = "investmentTransactions")]
    pub investment_transactions: Vec<InvestmentTransaction>,
    pub total: usize,
}

/// One buy, sell, dividend, interest payment, fee, tax, transfer of units
/// or split of an investment account (docs/api-reference.md, "Investment
/// transactions").
#[derive(Serialize, ToSchema)]
pub struct InvestmentTransaction {
    /// Its id, a string of digits; stable across syncs.
    #[schema(examples("42"))]
    pub id: String,
    #[serde(rename = "accountId")]
    #[schema(rename = "accountId", value_type = i64, minimum = 1, examples(7))]
    pub account_id: AccountId,
    /// Trade date, `YYYY-MM-DD`.
    #[schema(value_type = String, format = Date, examples("2026-03-09"))]
    pub date: NaiveDate,
    #[serde(rename = "type", serialize_with = "investment_kind")]
    #[schema(rename = "type", schema_with = investment_type_schema)]
    pub kind: InvestmentKind,
    /// Extension: the source's own word for it (OFX `REINVEST`, `CGLONG`;
    /// a provider's activity type), where it has one.
    #[schema(required = true, examples("BUYSTOCK"))]
    pub subtype: Option<String>,
    /// Null for activity of no one security (margin interest, an account fee).
    #[schema(required = true)]
    pub security: Option<Security>,
    /// Units the position gained (positive) or lost (negative); null
    /// where the source gives none.
    #[serde(serialize_with = "decimal_json::serialize_option")]
    #[schema(schema_with = nullable_decimal_schema, required = true)]
    pub quantity: Option<Decimal>,
    #[serde(serialize_with = "decimal_json::serialize_option")]
    #[schema(schema_with = nullable_decimal_schema, required = true)]
    pub price: Option<Decimal>,
    /// The cash effect on the account: negative when cash leaves it (a
    /// buy, a fee), positive when it comes in (a sale, a dividend).
    #[serde(serialize_with = "decimal_json::serialize")]
    #[schema(schema_with = decimal_schema)]
    pub amount: Decimal,
    /// Commissions, fees and loads, as a positive cost; null where the
    /// source states none.
    #[serde(serialize_with = "decimal_json::serialize_option")]
    #[schema(schema_with = nullable_decimal_schema, required = true)]
    pub fees: Option<Decimal>,
    /// ISO 4217.
    #[schema(examples("USD"))]
    pub currency: String,
    #[schema(required = true)]
    pub description: Option<String>,
    /// The provider's own record, as it sent it.
    #[schema(value_type = Object)]
    pub raw: serde_json::Value,
}

fn investment_kind<S: Serializer>(kind: &InvestmentKind, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(kind.as_str())
}

fn investment_type_schema() -> RefOr<Schema> {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .enum_values(Some(InvestmentKind::ALL.iter().map(|k| k.as_str())))
        .examples([serde_json::json!("BUY")])
        .into()
}

impl From<InvestmentTransactionView> for InvestmentTransaction {
    fn from(view: InvestmentTransactionView) -> Self {
        InvestmentTransaction {
            id: view.id.to_string(),
            account_id: view.account_id,
            date: view.date,
            kind: view.kind,
            subtype: view.subtype,
            security: view.security.map(Security::from),
            quantity: view.quantity,
            price: view.price,
            amount: view.amount,
            fees: view.fees,
            currency: view.currency,
            description: view.description,
            raw: view.raw,
        }
    }
}

impl From<tributary_domain::snapshot::Security> for Security {
    fn from(security: tributary_domain::snapshot::Security) -> Self {
        Security {
            name: security.name,
            currency: security.currency,
            ticker_symbol: security.ticker,
            figi: security.figi,
            cusp: security.cusip,
            isin: security.isin,
        }
    }
}

impl From<HoldingView> for Holding {
    fn from(view: HoldingView) -> Self {
        Holding {
            security: view.security.into(),
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
            clean_merchant: None,
            subcategory: None,
            category_source: None,
            transfer_account_id: None,
            transfer_subcategory: None,
        };
        assert_eq!(
            serde_json::to_string(&Transaction(&record)).unwrap(),
            r#"{"id":"42","accountId":7,"amount":-12.50,"currency":"EUR","date":"2026-03-09","merchant":"Café \"Zur Post\" card payment","description":"Café \"Zur Post\" card payment","isPending":false,"category":null,"subcategory":null,"transferAccountId":null}"#
        );
        // Enriched: the clean merchant, and the category of the stored
        // subcategory.
        let enriched = TransactionRecord {
            merchant: Some("ALBERT HEIJN 1234".into()),
            clean_merchant: Some("Albert Heijn".into()),
            subcategory: Some("groceries.supermarkets".into()),
            ..record.clone()
        };
        let written = serde_json::to_value(Transaction(&enriched)).unwrap();
        assert_eq!(written["merchant"], "Albert Heijn");
        assert_eq!(written["category"], "Groceries");
        assert_eq!(written["subcategory"], "groceries.supermarkets");
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
    fn a_transaction_is_written_as_its_schema_says() {
        use utoipa::PartialSchema as _;
        let record = TransactionRecord {
            id: TransactionId::new(1),
            account_id: AccountId::new(2),
            provider_transaction_id: "t".into(),
            pending_provider_id: None,
            is_pending: true,
            date: NaiveDate::from_ymd_opt(2026, 1, 2).unwrap(),
            amount: parse_decimal("1.00").unwrap(),
            currency: "USD".into(),
            merchant: None,
            description: None,
            clean_merchant: None,
            subcategory: Some("other.uncategorized".into()),
            category_source: Some("none".into()),
            transfer_account_id: Some(3),
            transfer_subcategory: Some("transfer.own_accounts".into()),
        };
        let written = serde_json::to_value(Transaction(&record)).unwrap();
        let schema = serde_json::to_value(TransactionSchema::schema()).unwrap();
        let keys = |object: &serde_json::Value| {
            let mut keys: Vec<String> = object.as_object().unwrap().keys().cloned().collect();
            keys.sort();
            keys
        };
        assert_eq!(keys(&written), keys(&schema["properties"]));
        let mut required: Vec<String> = serde_json::from_value(schema["required"].clone()).unwrap();
        required.sort();
        assert_eq!(required, keys(&written), "every field is always written");
        for (field, value) in written.as_object().unwrap() {
            let kind = &schema["properties"][field]["type"];
            let accepts = |name: &str| {
                kind == name || kind.as_array().is_some_and(|k| k.iter().any(|t| t == name))
            };
            let name = match value {
                serde_json::Value::Null => "null",
                serde_json::Value::Bool(_) => "boolean",
                serde_json::Value::Number(_) => {
                    if field == "accountId" || field == "transferAccountId" {
                        "integer"
                    } else {
                        "number"
                    }
                }
                serde_json::Value::String(_) => "string",
                _ => "object",
            };
            assert!(accepts(name), "{field}: {value} is not a {kind}");
        }
    }
}
