//! Recurring streams (docs/enrichment.md, "Recurring"): money that comes
//! in or goes out on a schedule, found in a person's history. A stream is
//! the transactions of one account, one currency, one direction and one
//! merchant whose dates keep one of the [`Frequency`] schedules: each gap
//! is a whole number of periods, give or take a few days (weekends, bank
//! holidays, months of different lengths), with at most one period in six
//! missed; amounts may drift (a utility bill), but not beyond a factor of
//! [`MAX_AMOUNT_RATIO`].

use super::Posted;
use chrono::{Datelike, Duration, NaiveDate};
use rust_decimal::Decimal;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// How far apart the smallest and largest amounts of a stream may be.
pub const MAX_AMOUNT_RATIO: i64 = 5;

/// How often a stream recurs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Frequency {
    Weekly,
    Biweekly,
    SemiMonthly,
    Monthly,
    Quarterly,
    Annually,
}

impl Frequency {
    /// Its name on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Frequency::Weekly => "WEEKLY",
            Frequency::Biweekly => "BIWEEKLY",
            Frequency::SemiMonthly => "SEMI_MONTHLY",
            Frequency::Monthly => "MONTHLY",
            Frequency::Quarterly => "QUARTERLY",
            Frequency::Annually => "ANNUALLY",
        }
    }

    /// The period and its tolerance either way, in hundredths of a day
    /// (a month is 30.44 days), and the fewest occurrences that make a
    /// stream of it.
    fn schedule(self) -> (i64, i64, usize) {
        match self {
            Frequency::Weekly => (700, 100, 4),
            Frequency::Biweekly => (1400, 200, 4),
            Frequency::SemiMonthly => (1522, 450, 5),
            Frequency::Monthly => (3044, 400, 3),
            Frequency::Quarterly => (9131, 700, 3),
            Frequency::Annually => (36525, 1000, 2),
        }
    }

    const ALL: [Frequency; 6] = [
        Frequency::Weekly,
        Frequency::Biweekly,
        Frequency::SemiMonthly,
        Frequency::Monthly,
        Frequency::Quarterly,
        Frequency::Annually,
    ];

    /// The date one period after `date`.
    fn after(self, date: NaiveDate) -> NaiveDate {
        match self {
            Frequency::Weekly => date + Duration::days(7),
            Frequency::Biweekly => date + Duration::days(14),
            Frequency::SemiMonthly => date + Duration::days(15),
            Frequency::Monthly => date
                .checked_add_months(chrono::Months::new(1))
                .unwrap_or(date),
            Frequency::Quarterly => date
                .checked_add_months(chrono::Months::new(3))
                .unwrap_or(date),
            Frequency::Annually => date
                .checked_add_months(chrono::Months::new(12))
                .unwrap_or(date),
        }
    }
}

/// Whether a stream is still going.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// The next occurrence is not overdue.
    Active,
    /// The next occurrence is overdue, but by less than a period.
    Late,
    /// Overdue by more than a period.
    Ended,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Active => "ACTIVE",
            Status::Late => "LATE",
            Status::Ended => "ENDED",
        }
    }
}

/// A recurring stream.
#[derive(Debug, Clone, PartialEq)]
pub struct Stream {
    /// Stable for the same account, direction, currency and merchant.
    pub id: String,
    pub account_id: i64,
    pub merchant: String,
    pub category: Option<&'static str>,
    pub currency: String,
    pub frequency: Frequency,
    /// Money in (a salary) or out (rent).
    pub inflow: bool,
    pub average_amount: Decimal,
    pub last_amount: Decimal,
    pub first_date: NaiveDate,
    pub last_date: NaiveDate,
    pub next_date: NaiveDate,
    pub status: Status,
    /// Oldest first.
    pub transaction_ids: Vec<i64>,
}

/// The streams in `history`, as of `today`: inflows and outflows, each
/// ordered by merchant.
pub fn detect(history: &[Posted], today: NaiveDate) -> Vec<Stream> {
    let mut groups: BTreeMap<(i64, bool, &str, String), Vec<&Posted>> = BTreeMap::new();
    for o in history.iter().filter(|o| !o.amount.is_zero()) {
        let Some(merchant) = o.merchant.as_deref() else {
            continue;
        };
        let key = (
            o.account_id,
            o.amount.is_sign_positive(),
            o.currency.as_str(),
            merchant.to_lowercase(),
        );
        groups.entry(key).or_default().push(o);
    }
    let mut streams = Vec::new();
    for ((account_id, inflow, currency, _), mut members) in groups {
        members.sort_by_key(|o| (o.date, o.id));
        // One a day: a second charge the same day is not a second period.
        members.dedup_by_key(|o| o.date);
        let Some(frequency) = Frequency::ALL
            .into_iter()
            .find(|f| keeps_schedule(*f, &members))
        else {
            continue;
        };
        if !amounts_agree(&members) {
            continue;
        }
        streams.push(stream(
            account_id, inflow, currency, frequency, &members, today,
        ));
    }
    streams
}

/// Whether the members' dates keep `frequency`'s schedule.
fn keeps_schedule(frequency: Frequency, members: &[&Posted]) -> bool {
    let (period, tolerance, fewest) = frequency.schedule();
    if members.len() < fewest {
        return false;
    }
    let mut periods = 0i64;
    for pair in members.windows(2) {
        let gap = (pair[1].date - pair[0].date).num_days() * 100;
        // Whole periods, rounded; a gap of several may be off by more
        // (the tolerance grows with the square root of their number).
        let whole = (gap + period / 2) / period;
        let off = gap - whole * period;
        if whole < 1 || off * off > tolerance * tolerance * whole {
            return false;
        }
        periods += whole;
    }
    let missed = periods - (members.len() as i64 - 1);
    if missed * 6 > periods {
        return false;
    }
    match frequency {
        // Twice a month on two days of the month, where a fortnightly
        // schedule drifts through it.
        Frequency::SemiMonthly => on_two_days_of_the_month(members),
        Frequency::Biweekly => !on_two_days_of_the_month(members),
        _ => true,
    }
}

/// Whether every date falls within a few days of one of two days of the
/// month (the 15th and the last, say).
fn on_two_days_of_the_month(members: &[&Posted]) -> bool {
    // Days of the month, the last days read as 30.
    let day = |d: NaiveDate| d.day().min(30) as i32;
    let mut days: Vec<i32> = members.iter().map(|o| day(o.date)).collect();
    // The month wraps: a month-end payment moved past a weekend lands on
    // the 1st or 2nd, near the 30th.
    if days.iter().any(|d| *d >= 26) {
        for d in days.iter_mut().filter(|d| **d <= 4) {
            *d += 30;
        }
    }
    days.sort_unstable();
    days.dedup();
    // Two clusters, each no wider than 4 days.
    let split = days.windows(2).position(|w| w[1] - w[0] > 4);
    match split {
        None => false,
        Some(at) => {
            let (first, second) = days.split_at(at + 1);
            let width = |c: &[i32]| c.last().unwrap_or(&0) - c.first().unwrap_or(&0);
            width(first) <= 4 && width(second) <= 4 && second.windows(2).all(|w| w[1] - w[0] <= 4)
        }
    }
}

/// Whether the amounts stay within [`MAX_AMOUNT_RATIO`] of each other.
fn amounts_agree(members: &[&Posted]) -> bool {
    let magnitudes = members.iter().map(|o| o.amount.abs());
    let (low, high) = magnitudes.fold((Decimal::MAX, Decimal::ZERO), |(lo, hi), a| {
        (lo.min(a), hi.max(a))
    });
    high <= low * Decimal::from(MAX_AMOUNT_RATIO)
}

fn stream(
    account_id: i64,
    inflow: bool,
    currency: &str,
    frequency: Frequency,
    members: &[&Posted],
    today: NaiveDate,
) -> Stream {
    let (first, last) = (members[0], members[members.len() - 1]);
    let total: Decimal = members.iter().map(|o| o.amount).sum();
    let average = (total / Decimal::from(members.len() as i64)).round_dp(2);
    let next_date = frequency.after(last.date);
    let (period, tolerance, _) = frequency.schedule();
    let overdue = (today - next_date).num_days() * 100;
    let status = if overdue <= tolerance {
        Status::Active
    } else if overdue <= period + tolerance {
        Status::Late
    } else {
        Status::Ended
    };
    let merchant = last.merchant.clone().unwrap_or_default();
    let mut id = String::from("rs_");
    let digest = Sha256::digest(
        format!(
            "{account_id}|{inflow}|{currency}|{}",
            merchant.to_lowercase()
        )
        .as_bytes(),
    );
    for byte in &digest[..8] {
        let _ = write!(id, "{byte:02x}");
    }
    // The category most of its transactions show.
    let mut counts: BTreeMap<&'static str, usize> = BTreeMap::new();
    for category in members
        .iter()
        .filter_map(|o| o.subcategory.map(|s| s.category.name()))
    {
        *counts.entry(category).or_default() += 1;
    }
    let category = counts.into_iter().max_by_key(|(_, n)| *n).map(|(c, _)| c);
    Stream {
        id,
        account_id,
        merchant,
        category,
        currency: currency.to_owned(),
        frequency,
        inflow,
        average_amount: average.normalize(),
        last_amount: last.amount.normalize(),
        first_date: first.date,
        last_date: last.date,
        next_date,
        status,
        transaction_ids: members.iter().map(|o| o.id).collect(),
    }
}

#[cfg(test)]
mod tests;
