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
    /// once (`wanted`); `None` when the query leaves the level out (the
    /// caller then makes sure nothing repeats).
    fn at_level(&self, wanted: &str) -> Option<bool> {
        self.text("levelOfDetail")
            .map(|level| level.eq_ignore_ascii_case(wanted))
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

    // No Open Positions section: the query says nothing of positions, and
    // what is stored stays. A section, even empty, is the whole of them.
    let holdings = match statement.child("OpenPositions") {
        None => None,
        Some(_) => {
            let mut holdings = Vec::new();
            let mut unleveled = std::collections::HashSet::new();
            for position in records(statement, ("OpenPositions", "OpenPosition"), id) {
                let counted = match position.at_level("SUMMARY") {
                    Some(summary) => summary,
                    // Without levels a position's lots would repeat it.
                    None => {
                        let key = position.text("conid").or(position.text("symbol"));
                        if !unleveled.insert(key) {
                            return Err(unreadable(format!(
                                "{} repeats a position and the query has no Level of Detail to tell its lots: add that field to the query's Open Positions, or untick its lots",
                                position.place
                            )));
                        }
                        true
                    }
                };
                if counted {
                    holdings.push(holding(&position, &currency)?);
                }
            }
            Some(holdings)
        }
    };
    // Trades and cash transactions without a level are kept by their ids:
    // a repeat (or a summary without one) fails, naming the record.
    let mut transactions = Vec::new();
    let mut activity = Vec::new();
    for trade in records(statement, ("Trades", "Trade"), id) {
        if trade.at_level("EXECUTION").unwrap_or(true) {
            let (cash, traded) = self::trade(&trade)?;
            transactions.extend(cash);
            activity.push(traded);
        }
    }
    for entry in records(statement, ("CashTransactions", "CashTransaction"), id) {
        if entry.at_level("DETAIL").unwrap_or(true) {
            let (cash, income) = cash_transaction(&entry)?;
            transactions.push(cash);
            activity.extend(income);
        }
    }
    let mut ids = std::collections::HashSet::new();
    if let Some(repeated) = transactions
        .iter()
        .find(|t| !ids.insert(t.provider_id.as_str()))
    {
        return Err(unreadable(format!(
            "account {id} lists {} twice: add Level of Detail to the query's Trades and Cash Transactions",
            repeated.provider_id
        )));
    }
    Ok(SnapshotAccount {
        provider_account_id: id.to_owned(),
        institution: None,
        name: information
            .text("acctAlias")
            .map_or_else(|| format!("Interactive Brokers {id}"), str::to_owned),
        kind: AccountKind::Brokerage,
        mask: Some(crate::mask::last_four(id)),
        balance: balance(statement, id, &currency, now)?,
        currency,
        balance_history: Vec::new(),
        transactions,
        holdings,
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
        .ok_or_else(|| {
            unreadable(format!(
                "{} has no transactionID or tradeID (a summary row? add Level of Detail to the query's Trades)",
                trade.place
            ))
        })?;
    Ok(format!("trade:{id}"))
}

/// The second leg of a currency conversion (`EUR.USD`: euros bought or
/// sold, signed by `quantity`, against the dollars in `netCash`), as the
/// cash it moved in the pair's first currency.
fn conversion_leg(
    trade: &Record<'_>,
    (provider_id, date, currency): (&str, NaiveDate, &str),
) -> Result<SnapshotTransaction, ConnectorError> {
    let symbol = trade.required("symbol")?;
    let other = match symbol.split_once('.') {
        Some((first, second)) if second == currency && first.len() == 3 => first,
        _ => {
            return Err(unreadable(format!(
                "{}: the currency conversion `{symbol}` is not <currency>.{currency}",
                trade.place
            )));
        }
    };
    Ok(SnapshotTransaction {
        provider_id: format!("{provider_id}:{other}"),
        pending_provider_id: None,
        is_pending: false,
        date,
        amount: trade.required_decimal("quantity")?,
        currency: other.to_owned(),
        merchant: Some(symbol.to_owned()),
        description: Some(format!("{symbol} conversion")),
        hints: Default::default(),
    })
}

/// A trade as the cash it moved (two legs for a currency conversion) and
/// as investment activity.
fn trade(
    trade: &Record<'_>,
) -> Result<(Vec<SnapshotTransaction>, SnapshotInvestmentTransaction), ConnectorError> {
    let provider_id = trade_id(trade)?;
    let date = trade.first_date(&["tradeDate", "dateTime"])?;
    let currency = trade.required("currency")?.to_owned();
    let side = trade.text("buySell").unwrap_or_default();
    // Commission in the trade's currency (IBKR may charge it in another,
    // the base currency, which is not this trade's cash).
    let commission = match trade.text("ibCommissionCurrency") {
        Some(charged) if charged != currency => None,
        _ => trade.decimal("ibCommission")?,
    };
    // What the trade did to cash: net of commission and taxes.
    let amount = match trade.decimal("netCash")? {
        Some(net) => net,
        None => {
            trade.required_decimal("proceeds")?
                + commission.unwrap_or_default()
                + trade.decimal("taxes")?.unwrap_or_default()
        }
    };
    let is_conversion = trade.text("assetCategory") == Some("CASH");
    let kind = match side {
        // A currency conversion moves cash, not a holding.
        _ if is_conversion => InvestmentKind::Other,
        "BUY" => InvestmentKind::Buy,
        "SELL" => InvestmentKind::Sell,
        // A cancelled execution (`BUY (Ca.)`) and anything else: as written.
        _ => InvestmentKind::Other,
    };
    let description = trade.text("description").map(str::to_owned);
    let investment = SnapshotInvestmentTransaction {
        provider_id: provider_id.clone(),
        date,
        kind,
        subtype: Some(side).filter(|s| !s.is_empty()).map(str::to_owned),
        // A currency pair is no security.
        security: if is_conversion { None } else { trade.security() },
        // Signed by IBKR: negative for a sale.
        quantity: trade.decimal("quantity")?,
        price: trade.decimal("tradePrice")?,
        amount,
        // IBKR writes commission as a (negative) cash effect; a fee is a
        // positive cost (a rebate is no fee).
        fees: commission.filter(|c| c.is_sign_negative() && !c.is_zero()).map(|c| -c),
        currency: currency.clone(),
        description: description.clone(),
        raw: trade.raw(),
    };
    let mut cash = Vec::new();
    if is_conversion {
        cash.push(conversion_leg(trade, (&provider_id, date, &currency))?);
    }
    cash.push(SnapshotTransaction {
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
    });
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

#[cfg(test)]
mod tests {
    use super::*;

    fn read(sections: &str) -> Result<Vec<SnapshotAccount>, ConnectorError> {
        let document = format!(
            r#"<FlexQueryResponse queryName="q" type="AF"><FlexStatements count="1">
<FlexStatement accountId="U1" fromDate="20260101" toDate="20261127">
<AccountInformation accountId="U1" currency="USD" />{sections}</FlexStatement>
</FlexStatements></FlexQueryResponse>"#
        );
        accounts(&crate::import::xml::parse(&document).unwrap(), Utc::now())
    }

    const POSITION: &str = r#"<OpenPosition currency="USD" symbol="AAPL" conid="265598" position="8" markPrice="190.5" positionValue="1524" />"#;

    #[test]
    fn a_query_without_open_positions_keeps_what_is_stored() {
        let accounts = read("").unwrap();
        assert_eq!(accounts[0].holdings, None);
        let accounts = read("<OpenPositions />").unwrap();
        assert_eq!(accounts[0].holdings, Some(Vec::new()), "a section is the whole");
    }

    #[test]
    fn a_position_repeated_without_levels_is_refused_not_counted_twice() {
        let once = read(&format!("<OpenPositions>{POSITION}</OpenPositions>")).unwrap();
        assert_eq!(once[0].holdings.as_ref().unwrap().len(), 1);
        let Err(ConnectorError::Protocol(why)) =
            read(&format!("<OpenPositions>{POSITION}{POSITION}</OpenPositions>"))
        else {
            panic!("a lot without a level would count twice")
        };
        assert!(why.contains("Level of Detail"), "{why}");
    }

    #[test]
    fn a_cash_transaction_repeated_without_levels_is_refused() {
        let row = r#"<CashTransaction currency="USD" dateTime="20261104" amount="1.45" type="Broker Interest Received" transactionID="31" />"#;
        assert_eq!(
            read(&format!("<CashTransactions>{row}</CashTransactions>")).unwrap()[0]
                .transactions
                .len(),
            1
        );
        let Err(ConnectorError::Protocol(why)) =
            read(&format!("<CashTransactions>{row}{row}</CashTransactions>"))
        else {
            panic!("a repeat is refused")
        };
        assert!(why.contains("cash:31 twice"), "{why}");
    }
}
