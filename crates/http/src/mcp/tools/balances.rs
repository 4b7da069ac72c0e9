//! `get_balance_history`: an account's balance over time, or the net worth
//! of every account the credential sees, one series per currency, daily or
//! monthly. A period's value is the newest balance reported on or before
//! its last day (carried over days without a report), so a sum over
//! accounts never mixes one account's today with another's last year
//! silently: an account counts from its first report on.

use super::shared::{
    Answer, Asker, Failure, Spec, account_argument, date_range, exact, listed, output_schema,
    schema,
};
use crate::data::visible_account;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use tributary_domain::ids::AccountId;
use tributary_domain::model::AccountKind;
use tributary_domain::net_worth::{self, Reports};
use tributary_storage::read;

pub(super) const NAME: &str = "get_balance_history";

/// The most points a series holds (the newest are kept).
const MAX_POINTS: usize = 400;

pub(super) const SPEC: Spec = Spec {
    name: NAME,
    title: "Get balance history",
    description: "Balances over time. With `account_id`: that account's balance, one point per day or month (`interval`, default monthly). Without: net worth, every account this connection may read summed, one series per currency (amounts in different currencies are never added together); a credit card's or loan's balance counts as debt, whichever sign its provider writes it with. A point is the newest balance reported on or before the period's last day. One account's series is as its provider reports it. Exact decimal strings; at most 400 points a series (the newest).",
    input: schema::<HistoryQuery>,
    output: output_schema::<HistoryAnswer>,
};

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
enum Interval {
    Daily,
    Monthly,
}

impl From<Interval> for net_worth::Interval {
    fn from(interval: Interval) -> Self {
        match interval {
            Interval::Daily => net_worth::Interval::Daily,
            Interval::Monthly => net_worth::Interval::Monthly,
        }
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct HistoryQuery {
    /// One account (an id from list_accounts); net worth by currency when left out.
    account_id: Option<i64>,
    /// `daily` or `monthly` (default).
    interval: Option<Interval>,
    /// From this date (YYYY-MM-DD).
    from: Option<String>,
    /// Up to this date (YYYY-MM-DD).
    to: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub(super) struct HistoryAnswer {
    /// `daily` or `monthly`.
    interval: String,
    series: Vec<Series>,
    /// Set when a series was cut to its newest points.
    note: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
struct Series {
    /// The account; null for net worth.
    account_id: Option<i64>,
    /// ISO 4217.
    currency: String,
    points: Vec<Point>,
}

#[derive(Debug, Serialize, JsonSchema)]
struct Point {
    /// The period's last day (YYYY-MM-DD) or the last report's day, whichever is earlier.
    date: String,
    /// Exact decimal.
    balance: String,
}

pub(super) async fn run(asker: &Asker, query: HistoryQuery) -> Result<Answer, Failure> {
    let account = account_argument(query.account_id)?;
    let interval = query.interval.unwrap_or(Interval::Monthly);
    let (from, to) = date_range(query.from, query.to)?;
    let groups = asker
        .read(move |conn, viewer| {
            // Per series: the accounts it sums, each with its reports.
            let mut groups: BTreeMap<(Option<i64>, String), Vec<Reports>> = BTreeMap::new();
            // One account's series is as its provider reports it; net
            // worth counts each balance by its account's kind.
            let accounts: Vec<(AccountId, Option<AccountKind>)> = match account {
                Some(id) => vec![(visible_account(conn, viewer, id)?.id, None)],
                None => read::list_accounts(conn, viewer)?
                    .into_iter()
                    .map(|a| (a.id, Some(a.kind)))
                    .collect(),
            };
            for (id, kind) in accounts {
                let mut by_currency: BTreeMap<String, Reports> = BTreeMap::new();
                for report in read::balance_history(conn, id)? {
                    let day = report.as_of.date();
                    if to.is_some_and(|to| day > to) {
                        continue;
                    }
                    let amount = match kind {
                        Some(kind) => net_worth::counted(kind, report.amount),
                        None => report.amount,
                    };
                    by_currency
                        .entry(report.currency)
                        .or_default()
                        .push((day, amount));
                }
                for (currency, reports) in by_currency {
                    let key = (account.map(|a| a.get()), currency);
                    groups.entry(key).or_default().push(reports);
                }
            }
            Ok(groups)
        })
        .await?;
    let mut cut = false;
    let series: Vec<Series> = groups
        .into_iter()
        .map(|((account_id, currency), accounts)| {
            let mut points = net_worth::summed(&accounts, interval.into(), from);
            if points.len() > MAX_POINTS {
                points.drain(..points.len() - MAX_POINTS);
                cut = true;
            }
            Series {
                account_id,
                currency,
                points: points
                    .into_iter()
                    .map(|(date, balance)| Point {
                        date: date.to_string(),
                        balance: exact(&balance),
                    })
                    .collect(),
            }
        })
        .collect();
    let note = cut.then(|| {
        format!("A series had more than {MAX_POINTS} points; the newest {MAX_POINTS} are kept: narrow `from` for older ones.")
    });
    let mut text = if series.is_empty() {
        "No balances have been reported for these accounts.".to_owned()
    } else {
        listed(
            series.iter().map(|s| {
                let who = s
                    .account_id
                    .map_or_else(|| "Net worth".to_owned(), |id| format!("Account {id}"));
                match (s.points.first(), s.points.last()) {
                    (Some(first), Some(last)) => format!(
                        "{who} in {}: {} on {} … {} on {} ({} points)",
                        s.currency,
                        first.balance,
                        first.date,
                        last.balance,
                        last.date,
                        s.points.len()
                    ),
                    _ => format!("{who} in {}: no points in this range", s.currency),
                }
            }),
            20,
        )
    };
    if let Some(note) = &note {
        text.push('\n');
        text.push_str(note);
    }
    Ok(Answer::new(
        &HistoryAnswer {
            interval: match interval {
                Interval::Daily => "daily",
                Interval::Monthly => "monthly",
            }
            .to_owned(),
            series,
            note,
        },
        text,
    ))
}
