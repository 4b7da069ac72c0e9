//! An item's investments (`GET /investments?itemId=`, page by page) and
//! each one's activity (`GET /investments/{id}/transactions`), as Pluggy's
//! OpenAPI document describes them (docs/providers.md, "Pluggy").
//!
//! Pluggy lists investments one by one, each with its own number, balance
//! and history (a CDB, a fund's quotas, a stock): each is an account of
//! its own, of kind brokerage, holding that one position. Its balance is
//! Pluggy's `balance`, "the current net balance" (after taxes and fees,
//! what the person would get); `amountWithdrawal`, what may be withdrawn,
//! is its available amount.
//!
//! Activity amounts are written without a sign; `movementType` says which
//! way money went: `CREDIT` into the position, `DEBIT` out of it, each
//! kind's documented default where it is absent (a buy in, the rest out).
//! The amount is stored as a brokerage account's cash would see it, as
//! every source's investment activity is (negative when cash pays for
//! something): a buy negative, a sale, interest or principal paid back
//! positive, a tax negative (refunded, positive), a transfer of quotas 0
//! (no cash moves; its value stays in `raw`). A buy or sale whose
//! movement contradicts its type is not taken for one: OTHER, signed by
//! its movement. Net of expenses (`netAmount`) where Pluggy gives it,
//! else its gross `amount`. Every activity is read each sync: Pluggy's
//! listing has no date filter.

use super::{PluggyConnector, day};
use crate::connector::ConnectorError;
use chrono::DateTime;
use serde::Deserialize;
use serde_json::Value;
use tributary_domain::model::{AccountKind, InvestmentKind};
use tributary_domain::money::Decimal;
use tributary_domain::snapshot::*;

#[derive(Debug, Deserialize)]
struct Investment {
    id: String,
    name: String,
    #[serde(default)]
    code: Option<String>,
    #[serde(default)]
    isin: Option<String>,
    #[serde(default)]
    number: Option<String>,
    #[serde(rename = "currencyCode")]
    currency_code: String,
    #[serde(rename = "type")]
    kind: String,
    /// Quotas held; Pluggy leaves it out where a position has none (a CDB).
    #[serde(default)]
    quantity: Option<Decimal>,
    /// A quota's value at `date`.
    #[serde(default)]
    value: Option<Decimal>,
    /// The net balance: what the position is worth to the person.
    balance: Decimal,
    #[serde(rename = "amountWithdrawal", default)]
    amount_withdrawal: Option<Decimal>,
    #[serde(rename = "amountOriginal", default)]
    amount_original: Option<Decimal>,
    /// `ACTIVE`, `PENDING`, or `TOTAL_WITHDRAWAL` (redeemed: nothing held).
    #[serde(default)]
    status: Option<String>,
}

#[derive(Debug, Deserialize)]
struct Activity {
    id: String,
    #[serde(rename = "type")]
    kind: String,
    #[serde(rename = "movementType", default)]
    movement: Option<String>,
    #[serde(default)]
    quantity: Option<Decimal>,
    /// A quota's value on the day.
    #[serde(default)]
    value: Option<Decimal>,
    /// The gross amount; absent only for a transfer.
    #[serde(default)]
    amount: Option<Decimal>,
    /// The amount with the expenses counted in.
    #[serde(rename = "netAmount", default)]
    net_amount: Option<Decimal>,
    date: String,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    expenses: Option<Value>,
}

/// Which way an activity moved money, as Pluggy's `movementType` says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Movement {
    /// `CREDIT`: into the position.
    IntoPosition,
    /// `DEBIT`: out of it.
    OutOfPosition,
}

impl Movement {
    /// `movementType`, or the default Pluggy documents for the kind (a buy
    /// into the position, everything else out of it).
    fn of(activity: &Activity) -> Result<Movement, ConnectorError> {
        match activity.movement.as_deref() {
            Some("CREDIT") => Ok(Movement::IntoPosition),
            Some("DEBIT") => Ok(Movement::OutOfPosition),
            None if activity.kind == "BUY" => Ok(Movement::IntoPosition),
            None => Ok(Movement::OutOfPosition),
            Some(other) => Err(ConnectorError::Protocol(format!(
                "Pluggy sent investment transaction {} with movementType `{other}` (CREDIT or DEBIT expected): its direction is unknown",
                activity.id
            ))),
        }
    }
}

/// How a cash amount counts: money out of the brokerage cash, or into it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cash {
    /// Paid: negative.
    Out,
    /// Received: positive.
    In,
    /// None moves: zero.
    Unmoved,
}

/// The kind of a Pluggy activity `type` moving money `movement`, and how
/// its amount counts (module docs). An amortization (principal paid back
/// before maturity) has no kind of its own: OTHER, with Pluggy's word kept
/// as the subtype.
fn classify(kind: &str, movement: Movement) -> (InvestmentKind, Cash) {
    use InvestmentKind::*;
    use Movement::*;
    // Money into the position came out of the person's cash; money out of
    // it went to them.
    let by_movement = match movement {
        IntoPosition => Cash::Out,
        OutOfPosition => Cash::In,
    };
    match (kind, movement) {
        ("BUY", IntoPosition) => (Buy, Cash::Out),
        ("SELL", OutOfPosition) => (Sell, Cash::In),
        // Credited into the position or paid out: income either way.
        ("INTEREST", _) => (Interest, Cash::In),
        ("TAX", OutOfPosition) => (Tax, Cash::Out),
        ("TAX", IntoPosition) => (Tax, Cash::In),
        ("TRANSFER", IntoPosition) => (TransferIn, Cash::Unmoved),
        ("TRANSFER", OutOfPosition) => (TransferOut, Cash::Unmoved),
        _ => (Other, by_movement),
    }
}

/// `amount` counted as `cash` says (0 is never -0).
fn counted(cash: Cash, amount: Decimal) -> Decimal {
    match cash {
        Cash::Out if !amount.is_zero() => -amount.abs(),
        Cash::Out | Cash::In => amount.abs(),
        Cash::Unmoved => Decimal::ZERO,
    }
}

/// The fees among an activity's `expenses` (brokerage, custody, exchange
/// and the like), as one positive cost; the taxes there (`incomeTax`,
/// `iof`, `iofProvision`, `serviceTax`) are not fees.
fn fees(expenses: Option<&Value>) -> Result<Option<Decimal>, ConnectorError> {
    const TAXES: [&str; 4] = ["incomeTax", "iof", "iofProvision", "serviceTax"];
    let Some(Value::Object(expenses)) = expenses else {
        return Ok(None);
    };
    let mut total = Decimal::ZERO;
    for (name, value) in expenses {
        if TAXES.contains(&name.as_str()) || value.is_null() {
            continue;
        }
        let fee: Decimal = serde_json::from_value(value.clone()).map_err(|_| {
            ConnectorError::Protocol(format!(
                "Pluggy sent {value} as the expense `{name}` (a number expected)"
            ))
        })?;
        total += fee.abs();
    }
    Ok(Some(total).filter(|total| !total.is_zero()))
}

/// The security an investment is in. Its `code` is a ticker for stocks and
/// ETFs only (a fund's is its CNPJ).
fn security(investment: &Investment) -> Security {
    let ticker = matches!(investment.kind.as_str(), "EQUITY" | "ETF")
        .then(|| investment.code.clone())
        .flatten()
        .filter(|code| !code.trim().is_empty());
    Security {
        name: investment.name.clone(),
        currency: investment.currency_code.clone(),
        ticker,
        figi: None,
        cusip: None,
        isin: investment.isin.clone().filter(|isin| !isin.trim().is_empty()),
    }
}

/// The position an investment holds; none once redeemed in full. Without
/// quotas it is one unit at its net balance, as Pluggy itself writes such
/// positions where it fills them in.
fn holding(investment: &Investment, raw: &Value) -> Option<SnapshotHolding> {
    if investment.status.as_deref() == Some("TOTAL_WITHDRAWAL") {
        return None;
    }
    let (quantity, price) = match investment.quantity.filter(|q| !q.is_zero()) {
        Some(quantity) => (
            quantity,
            investment
                .value
                .or_else(|| investment.balance.checked_div(quantity))
                .unwrap_or(investment.balance),
        ),
        None => (Decimal::ONE, investment.balance),
    };
    Some(SnapshotHolding {
        security: security(investment),
        quantity,
        price,
        value: investment.balance,
        value_in_account_currency: None,
        cost_basis: investment.amount_original,
        currency: investment.currency_code.clone(),
        raw: raw.clone(),
    })
}

/// One activity of `investment` as stored.
fn activity(
    investment: &Investment,
    raw: &Value,
) -> Result<SnapshotInvestmentTransaction, ConnectorError> {
    let a: Activity = serde_json::from_value(raw.clone()).map_err(|err| {
        ConnectorError::Protocol(format!(
            "Pluggy sent a transaction of investment {} that does not read: {err}",
            investment.id
        ))
    })?;
    let (kind, cash) = classify(&a.kind, Movement::of(&a)?);
    // Net where given, else gross; a transfer moves no cash.
    let amount = match (a.net_amount.or(a.amount), a.quantity.zip(a.value)) {
        _ if cash == Cash::Unmoved => Decimal::ZERO,
        (Some(amount), _) => amount,
        (None, Some((quantity, value))) => quantity.checked_mul(value).ok_or_else(|| {
            ConnectorError::Protocol(format!(
                "Pluggy sent investment transaction {} with a quantity and value too large to multiply",
                a.id
            ))
        })?,
        (None, None) => {
            return Err(ConnectorError::Protocol(format!(
                "Pluggy sent investment transaction {} ({}) without an amount",
                a.id, a.kind
            )));
        }
    };
    Ok(SnapshotInvestmentTransaction {
        provider_id: a.id,
        date: day(&a.date)?,
        kind,
        subtype: Some(a.kind.clone()),
        security: Some(security(investment)),
        quantity: a.quantity.filter(|q| !q.is_zero()),
        price: a.value,
        amount: counted(cash, amount),
        fees: fees(a.expenses.as_ref())?,
        currency: investment.currency_code.clone(),
        description: a.description.filter(|d| !d.trim().is_empty()),
        raw: raw.clone(),
    }
    .with_quantity_signed())
}

impl PluggyConnector {
    /// The item's investments, each an account holding it, with its
    /// activity.
    pub(super) fn investment_accounts(
        &self,
        key: &str,
        item_id: &str,
        now: DateTime<chrono::Utc>,
    ) -> Result<Vec<SnapshotAccount>, ConnectorError> {
        let listed: Vec<Value> = self.every_page(
            key,
            "investments",
            &[("itemId", item_id.to_owned())],
            "the investments",
        )?;
        let mut accounts = Vec::with_capacity(listed.len());
        for raw in listed {
            let investment: Investment = serde_json::from_value(raw.clone()).map_err(|err| {
                ConnectorError::Protocol(format!(
                    "Pluggy sent an investment that does not read: {err}"
                ))
            })?;
            let id = super::path_segment(&investment.id)?;
            let activity = self
                .every_page::<Value>(
                    key,
                    &format!("investments/{id}/transactions"),
                    &[],
                    "an investment's transactions",
                )?
                .iter()
                .map(|raw| activity(&investment, raw))
                .collect::<Result<Vec<_>, _>>()?;
            accounts.push(SnapshotAccount {
                provider_account_id: investment.id.clone(),
                institution: None,
                name: investment.name.clone(),
                kind: AccountKind::Brokerage,
                currency: investment.currency_code.clone(),
                mask: investment.number.as_deref().map(crate::mask::last_four),
                balance: Some(SnapshotBalance {
                    current: investment.balance,
                    available: investment.amount_withdrawal,
                    currency: investment.currency_code.clone(),
                    as_of: now,
                }),
                balance_history: Vec::new(),
                transactions: Vec::new(),
                investment_transactions: activity,
                liability: None,
                holdings: Some(holding(&investment, &raw).into_iter().collect()),
            });
        }
        Ok(accounts)
    }
}

#[cfg(test)]
mod tests {
    // Test code: a failed unwrap is a failed test, with its message.
    #![allow(clippy::unwrap_used)]

    use super::*;
    use serde_json::json;

    fn fund() -> Investment {
        serde_json::from_value(json!({"id": "inv-1", "name": "Fundo XP", "code": "12.345.678/0001-90",
            "currencyCode": "BRL", "type": "MUTUAL_FUND", "balance": 1000})).unwrap()
    }

    fn signed(text: Value) -> (InvestmentKind, String) {
        let t = activity(&fund(), &text).unwrap();
        (t.kind, t.amount.to_string())
    }

    #[test]
    fn a_buy_pays_a_sale_interest_and_principal_are_received_a_tax_a_cost() {
        let at = |kind: &str, movement: Value| {
            signed(json!({"id": "t", "type": kind, "movementType": movement, "amount": 100.5,
                          "date": "2026-03-10T00:00:00.000Z"}))
        };
        use InvestmentKind::*;
        assert_eq!(at("BUY", Value::Null), (Buy, "-100.5".into()));
        assert_eq!(at("SELL", Value::Null), (Sell, "100.5".into()));
        assert_eq!(at("INTEREST", Value::Null), (Interest, "100.5".into()));
        assert_eq!(at("INTEREST", json!("CREDIT")), (Interest, "100.5".into()), "credited into the position: income still");
        assert_eq!(at("AMORTIZATION", json!("DEBIT")), (Other, "100.5".into()));
        assert_eq!(at("TAX", Value::Null), (Tax, "-100.5".into()));
        assert_eq!(at("TAX", json!("CREDIT")), (Tax, "100.5".into()), "refunded");
        assert_eq!(at("TRANSFER", json!("CREDIT")), (TransferIn, "0".into()), "quotas move, no cash");
        assert_eq!(at("TRANSFER", json!("DEBIT")), (TransferOut, "0".into()));
        // A buy Pluggy says took money out of the position is not taken
        // for a buy.
        assert_eq!(at("BUY", json!("DEBIT")), (Other, "100.5".into()));
        assert_eq!(at("SELL", json!("CREDIT")), (Other, "-100.5".into()));
        assert!(
            activity(&fund(), &json!({"id": "t", "type": "BUY", "movementType": "SIDEWAYS",
                "amount": 1, "date": "2026-03-10T00:00:00.000Z"}))
            .is_err(),
            "a direction that does not read is not guessed"
        );
    }

    #[test]
    fn the_net_amount_is_the_cash_where_pluggy_gives_it() {
        // Parsed from text: Pluggy's numbers keep their digits.
        let raw: Value = serde_json::from_str(r#"{"id": "t", "type": "BUY", "amount": 3600, "netAmount": 3604.90,
            "expenses": {"brokerageFee": 4.90}, "date": "2026-03-10T00:00:00.000Z"}"#).unwrap();
        let buy = activity(&fund(), &raw).unwrap();
        assert_eq!(buy.amount.to_string(), "-3604.90");
        assert_eq!(buy.fees.map(|f| f.to_string()), Some("4.90".into()));
    }

    #[test]
    fn a_transfer_moves_quotas_and_no_cash_but_a_sale_has_an_amount() {
        let transfer = activity(&fund(), &json!({"id": "t", "type": "TRANSFER", "movementType": "DEBIT",
            "quantity": 10, "amount": 250, "date": "2026-03-10T00:00:00.000Z"})).unwrap();
        assert_eq!((transfer.amount.to_string(), transfer.quantity.map(|q| q.to_string())), ("0".into(), Some("-10".into())));
        let sale = activity(&fund(), &json!({"id": "t", "type": "SELL", "quantity": 10, "value": 2.5,
            "date": "2026-03-10T00:00:00.000Z"})).unwrap();
        assert_eq!((sale.amount.to_string(), sale.quantity.map(|q| q.to_string())), ("25.0".into(), Some("-10".into())));
        assert!(activity(&fund(), &json!({"id": "t", "type": "BUY", "date": "2026-03-10T00:00:00.000Z"})).is_err());
    }

    #[test]
    fn fees_leave_the_taxes_out() {
        let fees = fees(Some(&json!({"brokerageFee": 4.9, "custodyFee": 0.1, "incomeTax": 15,
            "iof": 2, "other": null}))).unwrap();
        assert_eq!(fees.map(|f| f.to_string()), Some("5.0".into()));
        assert_eq!(super::fees(Some(&json!({}))).unwrap(), None);
    }

    #[test]
    fn a_fund_has_no_ticker_and_a_redeemed_position_holds_nothing() {
        let raw = json!({});
        let held = holding(&fund(), &raw).unwrap();
        assert_eq!(held.security.ticker, None, "a fund's code is its CNPJ");
        assert_eq!((held.quantity, held.price, held.value), (Decimal::ONE, Decimal::from(1000), Decimal::from(1000)));
        // A quota's value without quotas says nothing of the position.
        let mut valued = fund();
        valued.value = Some(Decimal::from(3));
        let held = holding(&valued, &raw).unwrap();
        assert_eq!((held.quantity, held.price), (Decimal::ONE, Decimal::from(1000)));
        let mut stock = fund();
        stock.kind = "EQUITY".into();
        stock.code = Some("PETR4".into());
        assert_eq!(security(&stock).ticker.as_deref(), Some("PETR4"));
        stock.status = Some("TOTAL_WITHDRAWAL".into());
        assert!(holding(&stock, &raw).is_none());
    }
}
