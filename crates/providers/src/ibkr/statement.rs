//! An Interactive Brokers Flex statement (`FlexQueryResponse`) as the
//! accounts it describes (docs/providers.md, "Interactive Brokers"): one
//! brokerage account per `FlexStatement`, its open positions as holdings,
//! its trades and cash transactions as investment activity and as the cash
//! they moved, its net asset value and cash as the balance.
//!
//! A Flex query is the person's own: which sections it has, and the level
//! of detail of each, are theirs to choose. A section the query leaves out
//! is simply absent; rows that repeat others at another level of detail
//! (a trade's order and symbol summaries, a position's lots) are left out
//! so that nothing counts twice. Dates must be written `yyyyMMdd` or
//! `yyyy-MM-dd`: in the other formats the query offers, `03/04/2026` is
//! March or April, and a date is not guessed.

use crate::connector::ConnectorError;
use crate::import::xml::Element;
use chrono::{DateTime, NaiveDate, Utc};
use serde_json::{Map, Value};
use tributary_domain::model::{AccountKind, InvestmentKind};
use tributary_domain::money::{Decimal, parse_decimal};
use tributary_domain::snapshot::*;

/// The accounts of a Flex statement (`response`, the document's root), as
/// of `now`.
pub(crate) fn accounts(
    response: &Element,
    now: DateTime<Utc>,
) -> Result<Vec<SnapshotAccount>, ConnectorError> {
    if response.name != "FlexQueryResponse" {
        return Err(unreadable(format!(
            "the answer is not a Flex statement (<{}>, not <FlexQueryResponse>)",
            response.name
        )));
    }
    let statements = response
        .child("FlexStatements")
        .ok_or_else(|| unreadable("the Flex statement has no FlexStatements"))?;
    statements
        .children("FlexStatement")
        .map(|statement| account(statement, now))
        .collect()
}

fn unreadable(what: impl std::fmt::Display) -> ConnectorError {
    ConnectorError::Protocol(format!("Interactive Brokers: {what}"))
}

/// One record of a section, named in every error about it.
struct Record<'a> {
    element: &'a Element,
    /// `Trade 3 of account U1234567`.
    place: String,
}

impl<'a> Record<'a> {
    fn new(element: &'a Element, index: usize, account: &str) -> Self {
        Record {
            element,
            place: format!("{} {} of account {account}", element.name, index + 1),
        }
    }

    /// An attribute's text; `None` when absent or empty.
    fn text(&self, name: &str) -> Option<&'a str> {
        self.element
            .attribute(name)
            .map(str::trim)
            .filter(|t| !t.is_empty())
    }

    fn required(&self, name: &str) -> Result<&'a str, ConnectorError> {
        self.text(name)
            .ok_or_else(|| unreadable(format!("{} has no {name}", self.place)))
    }

    fn decimal(&self, name: &str) -> Result<Option<Decimal>, ConnectorError> {
        self.text(name)
            .map(|text| {
                parse_decimal(text).map_err(|_| {
                    unreadable(format!(
                        "{}: {name} `{text}` is not an amount",
                        self.place
                    ))
                })
            })
            .transpose()
    }

    fn required_decimal(&self, name: &str) -> Result<Decimal, ConnectorError> {
        self.decimal(name)?
            .ok_or_else(|| unreadable(format!("{} has no {name}", self.place)))
    }

    /// The date an attribute starts with (a `dateTime` carries its time
    /// after `;`, `,`, a space or `T`).
    fn date(&self, name: &str) -> Result<Option<NaiveDate>, ConnectorError> {
        let Some(text) = self.text(name) else {
            return Ok(None);
        };
        let day = text
            .split([';', ',', ' ', 'T'])
            .next()
            .unwrap_or_default();
        ["%Y%m%d", "%Y-%m-%d"]
            .iter()
            .find_map(|format| NaiveDate::parse_from_str(day, format).ok())
            .map(Some)
            .ok_or_else(|| {
                unreadable(format!(
                    "{}: {name} `{text}` is not a date Tributary reads (yyyyMMdd or yyyy-MM-dd: set the Flex query's date format to one of them)",
                    self.place
                ))
            })
    }

    /// The first of `names` that holds a date.
    fn first_date(&self, names: &[&str]) -> Result<NaiveDate, ConnectorError> {
        for name in names {
            if let Some(date) = self.date(name)? {
                return Ok(date);
            }
        }
        Err(unreadable(format!(
            "{} has no date ({})",
            self.place,
            names.join(", ")
        )))
    }

    /// Every attribute, as the record's `raw`.
    fn raw(&self) -> Value {
        Value::Object(
            self.element
                .attributes
                .iter()
                .map(|(k, v)| (k.clone(), Value::String(v.clone())))
                .collect::<Map<_, _>>(),
        )
    }

    /// Whether the record is at the level of detail that counts each thing
    /// once: a section without levels, or `wanted`.
    fn at_level(&self, wanted: &str) -> bool {
        self.text("levelOfDetail")
            .is_none_or(|level| level.eq_ignore_ascii_case(wanted))
    }

    /// The security the record is about; `None` for one about none (a
    /// fee, broker interest).
    fn security(&self) -> Option<Security> {
        let symbol = self.text("symbol");
        let description = self.text("description");
        let isin = self.text("isin").or_else(|| self.identified_as("ISIN"));
        let cusip = self.text("cusip").or_else(|| self.identified_as("CUSIP"));
        let figi = self.text("figi").or_else(|| self.identified_as("FIGI"));
        if symbol.is_none() && isin.is_none() && cusip.is_none() && figi.is_none() {
            return None;
        }
        Some(Security {
            name: description.or(symbol).unwrap_or("Unnamed security").to_owned(),
            currency: self.text("currency").unwrap_or_default().to_owned(),
            ticker: symbol.map(str::to_owned),
            figi: figi.map(str::to_owned),
            cusip: cusip.map(str::to_owned),
            isin: isin.map(str::to_owned),
        })
    }

    /// `securityID` when `securityIDType` is `kind`.
    fn identified_as(&self, kind: &str) -> Option<&'a str> {
        (self.text("securityIDType")? == kind)
            .then(|| self.text("securityID"))
            .flatten()
    }
}

/// The records of a section (`OpenPositions`/`OpenPosition`).
fn records<'a>(
    statement: &'a Element,
    (section, row): (&'a str, &'a str),
    account: &'a str,
) -> impl Iterator<Item = Record<'a>> + 'a {
    statement
        .children(section)
        .flat_map(move |s| s.children(row))
        .enumerate()
        .map(move |(index, element)| Record::new(element, index, account))
}

fn account(statement: &Element, now: DateTime<Utc>) -> Result<SnapshotAccount, ConnectorError> {
    let id = statement
        .attribute("accountId")
        .map(str::trim)
        .filter(|id| !id.is_empty())
        .ok_or_else(|| unreadable("a FlexStatement has no accountId"))?;
    let information = statement.child("AccountInformation").ok_or_else(|| {
        unreadable(format!(
            "the statement of account {id} has no Account Information (add that section to the Flex query: it gives the account's base currency)"
        ))
    })?;
    let information = Record::new(information, 0, id);
    let currency = information.required("currency")?.to_owned();

    let mut holdings = Vec::new();
    for position in records(statement, ("OpenPositions", "OpenPosition"), id) {
        if position.at_level("SUMMARY") {
            holdings.push(holding(&position, &currency)?);
        }
    }
    let mut transactions = Vec::new();
    let mut activity = Vec::new();
    for trade in records(statement, ("Trades", "Trade"), id) {
        if trade.at_level("EXECUTION") {
            let (cash, traded) = self::trade(&trade)?;
            transactions.push(cash);
            activity.push(traded);
        }
    }
    for entry in records(statement, ("CashTransactions", "CashTransaction"), id) {
        if entry.at_level("DETAIL") {
            let (cash, income) = cash_transaction(&entry)?;
            transactions.push(cash);
            activity.extend(income);
        }
    }
    Ok(SnapshotAccount {
        provider_account_id: id.to_owned(),
        institution: None,
        name: information
            .text("acctAlias")
            .map_or_else(|| format!("Interactive Brokers {id}"), str::to_owned),
        kind: AccountKind::Brokerage,
        mask: Some(id.chars().rev().take(4).collect::<Vec<_>>().into_iter().rev().collect()),
        balance: balance(statement, id, &currency, now)?,
        currency,
        balance_history: Vec::new(),
        transactions,
        holdings: Some(holdings),
        investment_transactions: activity,
        liability: None,
    })
}

/// The net asset value on the statement's last day (`EquitySummaryInBase`'s
/// `total`) as current, its cash in the base currency (`CashReport`'s
/// `BASE_SUMMARY` `endingCash`) as available; no balance when the query
/// has no Net Asset Value section.
fn balance(
    statement: &Element,
    id: &str,
    currency: &str,
    now: DateTime<Utc>,
) -> Result<Option<SnapshotBalance>, ConnectorError> {
    let mut newest: Option<(NaiveDate, Decimal)> = None;
    for summary in records(
        statement,
        ("EquitySummaryInBase", "EquitySummaryByReportDateInBase"),
        id,
    ) {
        let day = summary.first_date(&["reportDate"])?;
        let total = summary.required_decimal("total")?;
        if newest.is_none_or(|(seen, _)| day >= seen) {
            newest = Some((day, total));
        }
    }
    let Some((_, current)) = newest else {
        return Ok(None);
    };
    let mut available = None;
    for cash in records(statement, ("CashReport", "CashReportCurrency"), id) {
        if cash.text("currency") == Some("BASE_SUMMARY") {
            available = cash.decimal("endingCash")?;
        }
    }
    Ok(Some(SnapshotBalance {
        current,
        available,
        currency: currency.to_owned(),
        as_of: now,
    }))
}

fn holding(position: &Record<'_>, base: &str) -> Result<SnapshotHolding, ConnectorError> {
    let security = position.security().ok_or_else(|| {
        unreadable(format!("{} names no security", position.place))
    })?;
    let currency = position.required("currency")?.to_owned();
    let value = position.required_decimal("positionValue")?;
    let in_base = match position.decimal("fxRateToBase")? {
        Some(_) if currency == base => None,
        Some(rate) => Some((value * rate).round_dp(2)),
        None => None,
    };
    Ok(SnapshotHolding {
        security,
        quantity: position.required_decimal("position")?,
        price: position.required_decimal("markPrice")?,
        value,
        value_in_account_currency: in_base,
        cost_basis: position.decimal("costBasisMoney")?,
        currency,
        raw: position.raw(),
    })
}

/// A trade's id, unique within the account: IBKR's transaction id (else its
/// trade id), marked as a trade's so that no cash record's id meets it.
fn trade_id(trade: &Record<'_>) -> Result<String, ConnectorError> {
    let id = trade
        .text("transactionID")
        .or_else(|| trade.text("tradeID"))
        .ok_or_else(|| unreadable(format!("{} has no transactionID or tradeID", trade.place)))?;
    Ok(format!("trade:{id}"))
}

/// A trade as the cash it moved and as investment activity.
fn trade(
    trade: &Record<'_>,
) -> Result<(SnapshotTransaction, SnapshotInvestmentTransaction), ConnectorError> {
    let provider_id = trade_id(trade)?;
    let date = trade.first_date(&["tradeDate", "dateTime"])?;
    let currency = trade.required("currency")?.to_owned();
    let side = trade.text("buySell").unwrap_or_default();
    let commission = trade.decimal("ibCommission")?;
    // What the trade did to cash: net of commission and taxes.
    let amount = match trade.decimal("netCash")? {
        Some(net) => net,
        None => trade.required_decimal("proceeds")? + commission.unwrap_or_default(),
    };
    let kind = match (trade.text("assetCategory"), side) {
        // A currency conversion moves cash, not a holding.
        (Some("CASH"), _) => InvestmentKind::Other,
        (_, "BUY") => InvestmentKind::Buy,
        (_, "SELL") => InvestmentKind::Sell,
        // A cancelled execution (`BUY (Ca.)`) and anything else: as written.
        _ => InvestmentKind::Other,
    };
    let description = trade.text("description").map(str::to_owned);
    let investment = SnapshotInvestmentTransaction {
        provider_id: provider_id.clone(),
        date,
        kind,
        subtype: Some(side).filter(|s| !s.is_empty()).map(str::to_owned),
        security: trade.security(),
        // Signed by IBKR: negative for a sale.
        quantity: trade.decimal("quantity")?,
        price: trade.decimal("tradePrice")?,
        amount,
        // IBKR writes commission as a (negative) cash effect; a fee is a
        // positive cost.
        fees: commission.filter(|c| !c.is_zero()).map(|c| -c),
        currency: currency.clone(),
        description: description.clone(),
        raw: trade.raw(),
    };
    let cash = SnapshotTransaction {
        provider_id,
        pending_provider_id: None,
        is_pending: false,
        date,
        amount,
        currency,
        merchant: trade.text("symbol").map(str::to_owned),
        description: Some(
            [Some(side), description.as_deref()]
                .into_iter()
                .flatten()
                .filter(|t| !t.is_empty())
                .collect::<Vec<_>>()
                .join(": "),
        )
        .filter(|t| !t.is_empty()),
        hints: Default::default(),
    };
    Ok((cash, investment))
}

/// The investment kind of a cash transaction's `type`; `None` for deposits
/// and withdrawals, which are cash only.
fn cash_kind(kind: &str) -> Option<InvestmentKind> {
    use InvestmentKind::*;
    let kind = kind.to_ascii_lowercase();
    Some(match kind.as_str() {
        "deposits/withdrawals" | "deposits & withdrawals" | "deposits" | "withdrawals" => {
            return None;
        }
        "dividends" | "payment in lieu of dividends" => Dividend,
        "withholding tax" | "871(m) withholding" => Tax,
        k if k.contains("interest") => Interest,
        "other fees" | "commission adjustments" | "advisor fees" | "broker fees" => Fee,
        _ => Other,
    })
}

/// A cash transaction as the cash it moved and, unless it is a deposit or
/// withdrawal, as investment activity.
fn cash_transaction(
    entry: &Record<'_>,
) -> Result<(SnapshotTransaction, Option<SnapshotInvestmentTransaction>), ConnectorError> {
    let id = entry
        .required("transactionID")
        .map(|id| format!("cash:{id}"))?;
    let kind = entry.required("type")?;
    let date = entry.first_date(&["dateTime", "settleDate", "reportDate"])?;
    // Signed by IBKR: a dividend positive, a tax or fee negative.
    let amount = entry.required_decimal("amount")?;
    let currency = entry.required("currency")?.to_owned();
    let description = entry.text("description").map(str::to_owned);
    let investment = cash_kind(kind).map(|investment_kind| SnapshotInvestmentTransaction {
        provider_id: id.clone(),
        date,
        kind: investment_kind,
        subtype: Some(kind.to_owned()),
        security: entry.security(),
        quantity: None,
        price: None,
        amount,
        fees: None,
        currency: currency.clone(),
        description: description.clone(),
        raw: entry.raw(),
    });
    let cash = SnapshotTransaction {
        provider_id: id,
        pending_provider_id: None,
        is_pending: false,
        date,
        amount,
        currency,
        merchant: entry.text("symbol").map(str::to_owned),
        description: Some(description.map_or_else(|| kind.to_owned(), |d| format!("{kind}: {d}"))),
        hints: Default::default(),
    };
    Ok((cash, investment))
}
