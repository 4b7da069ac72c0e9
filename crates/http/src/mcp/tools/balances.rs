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
use chrono::{Datelike, NaiveDate};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use tributary_domain::ids::AccountId;
use tributary_domain::money::Decimal;
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

/// One account's reports, oldest first: (day, balance).
type Reports = Vec<(NaiveDate, Decimal)>;

pub(super) async fn run(asker: &Asker, query: HistoryQuery) -> Result<Answer, Failure> {
    let account = account_argument(query.account_id)?;
    let interval = query.interval.unwrap_or(Interval::Monthly);
    let (from, to) = date_range(query.from, query.to)?;
    let groups = asker
        .read(move |conn, viewer| {
            // Per series: the accounts it sums, each with its reports.
            let mut groups: BTreeMap<(Option<i64>, String), Vec<Reports>> = BTreeMap::new();
            let accounts: Vec<(AccountId, bool)> = match account {
                Some(id) => vec![(visible_account(conn, viewer, id)?.id, false)],
                None => read::list_accounts(conn, viewer)?
                    .into_iter()
                    .map(|a| (a.id, a.kind.is_liability()))
                    .collect(),
            };
            for (id, owed) in accounts {
                let mut by_currency: BTreeMap<String, Reports> = BTreeMap::new();
                for report in read::balance_history(conn, id)? {
                    let day = report.as_of.date();
                    if to.is_some_and(|to| day > to) {
                        continue;
                    }
                    // Net worth subtracts what a card or loan is owed,
                    // whichever sign its provider gives the balance.
                    let amount = if owed {
                        -report.amount.abs()
                    } else {
                        report.amount
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
            let mut points = summed(&accounts, interval, from);
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

/// The last day of the period `day` falls in.
fn period_end(day: NaiveDate, interval: Interval) -> NaiveDate {
    match interval {
        Interval::Daily => day,
        Interval::Monthly => {
            let first_of_next = if day.month() == 12 {
                NaiveDate::from_ymd_opt(day.year() + 1, 1, 1)
            } else {
                NaiveDate::from_ymd_opt(day.year(), day.month() + 1, 1)
            };
            first_of_next.and_then(|d| d.pred_opt()).unwrap_or(day)
        }
    }
}

/// The sum of `accounts`' balances at the end of each period from the
/// first report (or `from`) to the last report, each account counted from
/// its first report on; the last point is dated by the last report.
fn summed(
    accounts: &[Reports],
    interval: Interval,
    from: Option<NaiveDate>,
) -> Vec<(NaiveDate, Decimal)> {
    let Some(first) = accounts.iter().filter_map(|r| r.first()).map(|r| r.0).min() else {
        return Vec::new();
    };
    let Some(last) = accounts.iter().filter_map(|r| r.last()).map(|r| r.0).max() else {
        return Vec::new();
    };
    let start = from.map_or(first, |from| from.max(first));
    let mut next_report = vec![0usize; accounts.len()];
    let mut current: Vec<Option<Decimal>> = vec![None; accounts.len()];
    let mut points = Vec::new();
    let mut end = period_end(start, interval);
    loop {
        let day = end.min(last);
        for (i, reports) in accounts.iter().enumerate() {
            while let Some((when, amount)) = reports.get(next_report[i])
                && *when <= day
            {
                current[i] = Some(*amount);
                next_report[i] += 1;
            }
        }
        let known: Vec<Decimal> = current.iter().flatten().copied().collect();
        if !known.is_empty() {
            points.push((day, known.into_iter().sum()));
        }
        if end >= last {
            break;
        }
        let Some(next) = end.succ_opt() else { break };
        end = period_end(next, interval);
    }
    points
}

#[cfg(test)]
mod tests {
    use super::*;

    fn day(text: &str) -> NaiveDate {
        text.parse().unwrap()
    }

    fn dec(text: &str) -> Decimal {
        text.parse().unwrap()
    }

    #[test]
    fn net_worth_carries_each_account_forward_from_its_first_report() {
        let checking = vec![
            (day("2026-01-10"), dec("100.00")),
            (day("2026-03-05"), dec("150.50")),
        ];
        let savings = vec![(day("2026-02-20"), dec("1000"))];
        let points = summed(&[checking, savings], Interval::Monthly, None);
        assert_eq!(
            points,
            vec![
                (day("2026-01-31"), dec("100.00")),
                (day("2026-02-28"), dec("1100.00")),
                (day("2026-03-05"), dec("1150.50")),
            ]
        );
        let daily = summed(
            &[vec![
                (day("2026-01-10"), dec("1")),
                (day("2026-01-12"), dec("2")),
            ]],
            Interval::Daily,
            Some(day("2026-01-11")),
        );
        assert_eq!(
            daily,
            vec![(day("2026-01-11"), dec("1")), (day("2026-01-12"), dec("2"))]
        );
    }
}
