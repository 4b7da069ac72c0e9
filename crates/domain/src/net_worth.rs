//! Net worth: what a person owns less what they owe, per currency, now and
//! over time. The MCP tool `get_balance_history` and the dashboard's
//! overview both read it from here, so they never disagree.
//!
//! A period's value is the newest balance reported on or before its last
//! day (carried over days without a report), so a sum over accounts never
//! mixes one account's today with another's last year silently: an account
//! counts from its first report on.

use crate::model::AccountKind;
use crate::money::Decimal;
use chrono::{Datelike, NaiveDate};

/// How a balance counts towards net worth: a card's or loan's balance is
/// owed, whichever sign its provider writes it with (Plaid: positive;
/// SimpleFIN and most banks: negative), so it is subtracted.
pub fn counted(kind: AccountKind, balance: Decimal) -> Decimal {
    if kind.is_liability() {
        -balance.abs()
    } else {
        balance
    }
}

/// The length of a period of a series.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Interval {
    Daily,
    Monthly,
}

/// The last day of the period `day` falls in.
pub fn period_end(day: NaiveDate, interval: Interval) -> NaiveDate {
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

/// One account's reports, oldest first: (day, amount as it counts).
pub type Reports = Vec<(NaiveDate, Decimal)>;

/// The sum of `accounts`' balances at the end of each period from the
/// first report (or `from`) to the last report, each account counted from
/// its first report on; the last point is dated by the last report.
pub fn summed(
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

    #[test]
    fn what_is_owed_counts_against_whatever_its_sign() {
        let owed = dec("782.07");
        assert_eq!(counted(AccountKind::CreditCard, owed), -owed);
        assert_eq!(counted(AccountKind::Loan, -owed), -owed);
        assert_eq!(counted(AccountKind::Checking, -owed), -owed);
        assert_eq!(counted(AccountKind::Savings, owed), owed);
    }
}
