//! `get_investment_transactions`: buys, sells, income, fees, transfers and
//! splits of investment accounts, as `GET
//! /accounts/{id}/investment_transactions` answers them.

use super::shared::{
    Answer, Asker, Failure, Spec, account_argument, date_range, exact, listed, output_schema,
    schema,
};
use crate::data::investment_transactions_of;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tributary_storage::read;

pub(super) const NAME: &str = "get_investment_transactions";

/// The most records an answer lists in all (the newest; `total` counts
/// them all).
const MAX_RECORDS: usize = 200;

pub(super) const SPEC: Spec = Spec {
    name: NAME,
    title: "Get investment transactions",
    description: "Investment activity, newest first: buys, sells, dividends, interest, fees, taxes, transfers of units and splits, each with its type, security (name, ticker, ISIN), quantity (negative when units leave), price, cash amount (negative when cash leaves the account), fees and currency. With `account_id`, that account (an error when its source reports no investment activity); without, every account this connection may read whose source reports it. `from`/`to` narrow by date (inclusive, YYYY-MM-DD). At most 200 records (the newest). Exact decimal strings.",
    input: schema::<InvestmentsQuery>,
    output: output_schema::<InvestmentsAnswer>,
};

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct InvestmentsQuery {
    /// One account (an id from list_accounts); every investment account when left out.
    account_id: Option<i64>,
    /// Only on or after this date (YYYY-MM-DD).
    from: Option<String>,
    /// Only on or before this date (YYYY-MM-DD).
    to: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub(super) struct InvestmentsAnswer {
    investment_transactions: Vec<InvestmentAnswer>,
    /// How many records match, listed or not.
    total: usize,
    /// Set when records were left out.
    note: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
struct InvestmentAnswer {
    account_id: i64,
    /// YYYY-MM-DD.
    date: String,
    /// BUY, SELL, DIVIDEND, INTEREST, FEE, TAX, TRANSFER_IN, TRANSFER_OUT, SPLIT or OTHER.
    r#type: String,
    /// The source's own word for it.
    subtype: Option<String>,
    security: Option<String>,
    ticker: Option<String>,
    isin: Option<String>,
    quantity: Option<String>,
    price: Option<String>,
    /// The cash effect: negative when cash leaves the account.
    amount: String,
    fees: Option<String>,
    /// ISO 4217.
    currency: String,
    description: Option<String>,
}

pub(super) async fn run(asker: &Asker, query: InvestmentsQuery) -> Result<Answer, Failure> {
    let only = account_argument(query.account_id)?;
    let dates = date_range(query.from, query.to)?;
    let records = asker
        .read(move |conn, viewer| {
            let ids = match only {
                Some(id) => vec![id],
                None => read::list_accounts(conn, viewer)?
                    .into_iter()
                    .filter(|a| {
                        tributary_providers::catalog::reports_investment_activity(a.provider)
                    })
                    .map(|a| a.id)
                    .collect(),
            };
            // The newest MAX_RECORDS of each account are all the newest
            // MAX_RECORDS of them all can be; the rest is only counted.
            let mut records = Vec::new();
            let mut total = 0;
            for id in ids {
                records.extend(investment_transactions_of(
                    conn,
                    viewer,
                    id,
                    dates,
                    Some(MAX_RECORDS as i64),
                )?);
                total += tributary_storage::investments::count(conn, id, dates)? as usize;
            }
            Ok((records, total))
        })
        .await?;
    let (mut records, total) = records;
    records.sort_by_key(|r| std::cmp::Reverse((r.date, r.id)));
    records.truncate(MAX_RECORDS);
    let answers: Vec<InvestmentAnswer> = records
        .into_iter()
        .map(|r| InvestmentAnswer {
            account_id: r.account_id.get(),
            date: r.date.to_string(),
            r#type: r.kind.as_str().to_owned(),
            subtype: r.subtype,
            ticker: r.security.as_ref().and_then(|s| s.ticker.clone()),
            isin: r.security.as_ref().and_then(|s| s.isin.clone()),
            security: r.security.map(|s| s.name),
            quantity: r.quantity.as_ref().map(exact),
            price: r.price.as_ref().map(exact),
            amount: exact(&r.amount),
            fees: r.fees.as_ref().map(exact),
            currency: r.currency,
            description: r.description,
        })
        .collect();
    let text = if answers.is_empty() {
        "No investment activity in what this connection reads.".to_owned()
    } else {
        format!(
            "{total} investment transaction(s), newest first\n{}",
            listed(
                answers.iter().map(|a| format!(
                    "- {} account {} {} {}{}: {} {}",
                    a.date,
                    a.account_id,
                    a.r#type,
                    a.ticker.as_deref().or(a.security.as_deref()).unwrap_or("-"),
                    a.quantity
                        .as_ref()
                        .map(|q| format!(" × {q}"))
                        .unwrap_or_default(),
                    a.amount,
                    a.currency
                )),
                25
            )
        )
    };
    let note = (total > MAX_RECORDS).then(|| {
        format!("{total} records match; the newest {MAX_RECORDS} are listed. Narrow with `from`/`to` or `account_id` for the rest.")
    });
    let text = match &note {
        Some(note) => format!("{text}\n{note}"),
        None => text,
    };
    Ok(Answer::new(
        &InvestmentsAnswer {
            investment_transactions: answers,
            total,
            note,
        },
        text,
    ))
}
