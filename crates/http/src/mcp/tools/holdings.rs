//! `get_holdings`: positions of brokerage accounts, as `GET
//! /accounts/{id}/holdings` answers them.

use super::shared::{
    Answer, Asker, Failure, Spec, account_argument, exact, listed, output_schema, schema,
};
use crate::data::{holdings_of, total_value};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tributary_storage::read;

pub(super) const NAME: &str = "get_holdings";

/// The most positions an answer lists for one account (the biggest by
/// value; the total counts them all).
const MAX_POSITIONS: usize = 200;

pub(super) const SPEC: Spec = Spec {
    name: NAME,
    title: "Get holdings",
    description: "Investment positions: security (name, ticker, ISIN), quantity, price, value, cost basis and currency, with each account's total value in the account's currency. With `account_id`, that account (an error when its provider reports no holdings); without, every account this connection may read whose provider reports holdings. Exact decimal strings.",
    input: schema::<HoldingsQuery>,
    output: output_schema::<HoldingsAnswer>,
};

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct HoldingsQuery {
    /// One account (an id from list_accounts); every brokerage account when left out.
    account_id: Option<i64>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub(super) struct HoldingsAnswer {
    accounts: Vec<AccountHoldings>,
    /// Set when positions were left out.
    note: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
struct AccountHoldings {
    account_id: i64,
    /// ISO 4217: the currency of `total_value`.
    currency: String,
    /// What the positions are worth in the account's currency (exact decimal).
    total_value: String,
    holdings: Vec<HoldingAnswer>,
}

#[derive(Debug, Serialize, JsonSchema)]
struct HoldingAnswer {
    name: String,
    ticker: Option<String>,
    isin: Option<String>,
    quantity: String,
    price: String,
    value: String,
    cost_basis: Option<String>,
    /// ISO 4217: the currency of price, value and cost basis.
    currency: String,
    /// When the provider reported it (RFC 3339, UTC).
    as_of: String,
}

pub(super) async fn run(asker: &Asker, query: HoldingsQuery) -> Result<Answer, Failure> {
    let only = account_argument(query.account_id)?;
    let (accounts, cut) = asker
        .read(move |conn, viewer| {
            let mut cut = false;
            let ids = match only {
                Some(id) => vec![id],
                None => read::list_accounts(conn, viewer)?
                    .into_iter()
                    .filter(|a| tributary_providers::catalog::reports_holdings(a.provider))
                    .map(|a| a.id)
                    .collect(),
            };
            let mut answers = Vec::new();
            for id in ids {
                let (account, holdings) = holdings_of(conn, viewer, id)?;
                if only.is_none() && holdings.is_empty() {
                    // A provider that reports holdings reports none for
                    // its checking accounts: not worth a line.
                    continue;
                }
                let total = exact(&total_value(&account, &holdings));
                let mut holdings = holdings;
                if holdings.len() > MAX_POSITIONS {
                    holdings.sort_by_key(|h| std::cmp::Reverse(h.value.abs()));
                    holdings.truncate(MAX_POSITIONS);
                    cut = true;
                }
                answers.push(AccountHoldings {
                    account_id: account.id.get(),
                    total_value: total,
                    currency: account.currency,
                    holdings: holdings
                        .into_iter()
                        .map(|h| HoldingAnswer {
                            name: h.security.name,
                            ticker: h.security.ticker,
                            isin: h.security.isin,
                            quantity: exact(&h.quantity),
                            price: exact(&h.price),
                            value: exact(&h.value),
                            cost_basis: h.cost_basis.as_ref().map(exact),
                            currency: h.currency,
                            as_of: crate::webhooks::time(h.as_of),
                        })
                        .collect(),
                });
            }
            Ok((answers, cut))
        })
        .await?;
    let text = if accounts.is_empty() {
        "No account this connection reads reports holdings.".to_owned()
    } else {
        accounts
            .iter()
            .map(|a| {
                format!(
                    "Account {}: {} {} in {} position(s)\n{}",
                    a.account_id,
                    a.total_value,
                    a.currency,
                    a.holdings.len(),
                    listed(
                        a.holdings.iter().map(|h| format!(
                            "- {} {}: {} × {} = {} {}",
                            h.ticker.as_deref().unwrap_or("-"),
                            h.name,
                            h.quantity,
                            h.price,
                            h.value,
                            h.currency
                        )),
                        25
                    )
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    let note = cut.then(|| {
        format!("An account holds more than {MAX_POSITIONS} positions; the {MAX_POSITIONS} worth the most are listed (total_value counts them all).")
    });
    let text = match &note {
        Some(note) => format!("{text}\n{note}"),
        None => text,
    };
    Ok(Answer::new(&HoldingsAnswer { accounts, note }, text))
}
