//! An investment statement's activity (`INVTRANLIST`) as investment
//! transactions: every aggregate of OFX 2.1.1 chapter 13.9.2.4 but
//! `INVBANKTRAN`, which is a cash movement of the account and stays a cash
//! transaction only (docs/imports.md, "Investment activity").
//!
//! Each aggregate's kind comes from its name (and, for income, its
//! `INCOMETYPE`); the name itself is kept as the subtype and the whole
//! aggregate as `raw`, so nothing the file says is lost by the mapping.

use super::{amount, date, security_of};
use crate::import::error::{Place, ReadError, Reason};
use crate::import::xml::Element;
use std::collections::HashMap;
use tributary_domain::model::InvestmentKind;
use tributary_domain::money::Decimal;
use tributary_domain::snapshot::{Security, SnapshotInvestmentTransaction};

/// The kind of the activity aggregate `name`, `None` for what is not
/// investment activity (cash, the list's dates, an unknown extension).
fn kind_of(aggregate: &Element) -> Option<InvestmentKind> {
    use InvestmentKind::*;
    Some(match aggregate.name.as_str() {
        "BUYDEBT" | "BUYMF" | "BUYOPT" | "BUYOTHER" | "BUYSTOCK" => Buy,
        "SELLDEBT" | "SELLMF" | "SELLOPT" | "SELLOTHER" | "SELLSTOCK" => Sell,
        // Income bought units with at once: a buy, paid for by the income.
        "REINVEST" => Buy,
        "INCOME" => match aggregate.text_at("INCOMETYPE") {
            Some("DIV") => Dividend,
            Some("INTEREST") => Interest,
            // Capital gains distributions (CGLONG, CGSHORT) and MISC are
            // neither; the subtype and `raw` say which.
            _ => Other,
        },
        "INVEXPENSE" => Fee,
        // Interest the account paid on a margin loan.
        "MARGININTEREST" => Interest,
        "TRANSFER" => match aggregate.text_at("TFERACTION") {
            Some("IN") => TransferIn,
            Some("OUT") => TransferOut,
            _ => Other,
        },
        "SPLIT" => Split,
        "CLOSUREOPT" | "JRNLFUND" | "JRNLSEC" | "RETOFCAP" => Other,
        _ => return None,
    })
}

/// The investment transaction `aggregate` states, with an empty provider
/// id (the caller gives it the id of the trade's cash record); `None` for
/// what is not investment activity. `currency` is the statement's.
pub(super) fn read(
    aggregate: &Element,
    at: &Place,
    securities: &HashMap<String, Security>,
    currency: &str,
) -> Result<Option<SnapshotInvestmentTransaction>, ReadError> {
    let Some(kind) = kind_of(aggregate) else {
        return Ok(None);
    };
    // Buys and sells hold their common fields in INVBUY / INVSELL; the
    // rest hold them directly.
    let body = aggregate
        .child("INVBUY")
        .or_else(|| aggregate.child("INVSELL"))
        .unwrap_or(aggregate);
    let invtran = body
        .child("INVTRAN")
        .ok_or_else(|| at.at(Reason::Missing("INVTRAN")))?;
    let day = date(
        invtran
            .text_at("DTTRADE")
            .ok_or_else(|| at.at(Reason::Missing("DTTRADE")))?,
        at,
    )?;
    let number = |element: &Element, name: &str| -> Result<Option<Decimal>, ReadError> {
        element
            .text_at(name)
            .map(|text| amount(text, &at.then(name)))
            .transpose()
    };
    let quantity = match kind {
        InvestmentKind::Split => match (number(body, "OLDUNITS")?, number(body, "NEWUNITS")?) {
            (Some(old), Some(new)) => Some(new - old),
            _ => None,
        },
        _ => number(body, "UNITS")?,
    };
    let cash = if kind == InvestmentKind::Split {
        number(body, "FRACCASH")?
    } else {
        number(body, "TOTAL")?
    };
    let mut fees = None;
    for part in ["COMMISSION", "FEES", "LOAD"] {
        if let Some(fee) = number(body, part)? {
            fees = Some(fees.unwrap_or(Decimal::ZERO) + fee);
        }
    }
    // With CURRENCY the aggregate's amounts are in that currency; with
    // ORIGCURRENCY they were converted to the statement's, which CURSYM
    // only names the origin of (OFX 2.1.1 §5.2): `raw` keeps it.
    let currency = body
        .text_at("CURRENCY/CURSYM")
        .unwrap_or(currency)
        .to_owned();
    Ok(Some(
        SnapshotInvestmentTransaction {
            provider_id: String::new(),
            date: day,
            kind,
            subtype: Some(aggregate.name.clone()),
            security: body
                .child("SECID")
                .filter(|secid| secid.text_at("UNIQUEID").is_some())
                .map(|secid| {
                    let mut security = security_of(secid, securities, &currency);
                    if security.currency.is_empty() {
                        security.currency.clone_from(&currency);
                    }
                    security
                }),
            quantity,
            price: number(body, "UNITPRICE")?,
            // No TOTAL: no cash moved (a transfer of units, a split
            // without cash for fractions).
            amount: cash.unwrap_or(Decimal::ZERO),
            fees,
            currency,
            description: invtran.text_at("MEMO").map(str::to_owned),
            raw: json(aggregate),
        }
        .with_quantity_signed(),
    ))
}

/// An element as JSON: a leaf's text, or an object of its children (a name
/// that repeats becomes an array).
fn json(element: &Element) -> serde_json::Value {
    use serde_json::{Map, Value};
    if element.children.is_empty() {
        return Value::from(element.text.trim());
    }
    let mut object = Map::new();
    for child in &element.children {
        let value = json(child);
        match object.get_mut(&child.name) {
            Some(Value::Array(values)) if element.children(&child.name).count() > 1 => {
                values.push(value)
            }
            _ if element.children(&child.name).count() > 1 => {
                object.insert(child.name.clone(), Value::Array(vec![value]));
            }
            _ => {
                object.insert(child.name.clone(), value);
            }
        }
    }
    Value::Object(object)
}
