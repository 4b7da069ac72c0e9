//! What the overview says beyond balances: what was spent last month and
//! on what, spending per category over the last twelve months, and the
//! bills and pay expected in the coming weeks. The rules are the API's
//! own (`GET /spending`, `GET /recurring`; docs/enrichment.md): refunds
//! netted, income and transfers between one's own accounts left out,
//! streams found in the last 25 months of posted transactions.

use super::bars::{COLOURED, MonthBar, StackedBars};
use crate::web::money::{MoneyFormat, Shown};
use chrono::{Datelike, Days, Months, NaiveDate};
use std::collections::{BTreeMap, HashMap};
use tributary_domain::enrich::recurring::{self, Status};
use tributary_domain::enrich::spending::{GroupBy, Totals};
use tributary_domain::ids::AccountId;
use tributary_domain::money::Decimal;
use tributary_domain::taxonomy::Category;
use tributary_storage::StorageResult;
use tributary_storage::db::AnyConnection;

/// How far ahead "coming" bills and pay reach.
const COMING_DAYS: u64 = 31;
/// How many categories last month's summary names (the rest are summed).
const TOP_CATEGORIES: usize = 5;
/// Months of spending the chart shows: the last complete twelve.
const CHART_MONTHS: u32 = 12;
const OTHER: &str = "Everything else";

/// Last month's spending in one currency.
pub(super) struct MonthSpending {
    pub currency: String,
    /// `October 2026`.
    pub month: String,
    pub total: Shown,
    pub categories: Vec<CategoryShare>,
}

pub(super) struct CategoryShare {
    pub name: String,
    pub amount: Shown,
    /// Of the month's total, in whole percent (for the meter).
    pub percent: i64,
}

/// A bill or a payment expected soon.
pub(super) struct Expected {
    /// `3 Dec 2026`.
    pub date: String,
    pub merchant: String,
    pub amount: Shown,
    pub account: String,
    /// The day has passed without it: "late".
    pub late: bool,
}

pub(super) struct Insights {
    pub last_month: Vec<MonthSpending>,
    /// Per currency: the stacked bars' markup.
    pub spending_charts: Vec<(String, String)>,
    pub bills: Vec<Expected>,
    pub pay: Vec<Expected>,
}

/// The insights of `accounts` (id and name) as of `today`.
pub(super) fn gather(
    conn: &mut AnyConnection,
    accounts: &HashMap<AccountId, String>,
    today: NaiveDate,
    money: &MoneyFormat,
) -> StorageResult<Insights> {
    let this_month = today.with_day(1).unwrap_or(today);
    let last_month = this_month
        .checked_sub_months(Months::new(1))
        .unwrap_or(this_month);
    let chart_from = this_month
        .checked_sub_months(Months::new(CHART_MONTHS))
        .unwrap_or(this_month);
    let since = today.checked_sub_months(Months::new(crate::recurring::HISTORY_MONTHS));
    let ids: Vec<AccountId> = accounts.keys().copied().collect();
    let mut history = Vec::new();
    let mut by_month: BTreeMap<NaiveDate, Totals> = BTreeMap::new();
    tributary_storage::posted::each_posted(conn, &ids, (since, Some(today)), |row| {
        if row.date >= chart_from && row.date < this_month {
            let month = row.date.with_day(1).unwrap_or(row.date);
            by_month
                .entry(month)
                .or_insert_with(|| Totals::new(GroupBy::Category))
                .add(&row);
        }
        history.push(row);
    })?;

    // Per currency, per month, per category.
    let mut spent: BTreeMap<String, BTreeMap<NaiveDate, Vec<(String, Decimal)>>> = BTreeMap::new();
    for (month, totals) in by_month {
        for total in totals.groups() {
            spent
                .entry(total.currency)
                .or_default()
                .entry(month)
                .or_default()
                .push((
                    total.key.unwrap_or_else(|| "Uncategorised".to_owned()),
                    total.spent,
                ));
        }
    }

    let mut last_month_spending = Vec::new();
    let mut spending_charts = Vec::new();
    for (currency, months) in &spent {
        if let Some(groups) = months.get(&last_month) {
            last_month_spending.push(month_summary(currency, last_month, groups, money));
        }
        if let Some(chart) = spending_chart(currency, chart_from, months, money) {
            spending_charts.push((currency.clone(), chart));
        }
    }

    let horizon = today
        .checked_add_days(Days::new(COMING_DAYS))
        .unwrap_or(today);
    let (mut bills, mut pay) = (Vec::new(), Vec::new());
    let transfer = Category::Transfer.name();
    for stream in recurring::detect(&history, today) {
        // Money moved between one's own accounts (to savings, to the
        // card) is neither a bill nor pay: the card's own charges are.
        if stream.status == Status::Ended
            || stream.next_date > horizon
            || stream.category == Some(transfer)
        {
            continue;
        }
        let expected = Expected {
            date: super::chart::day_text(stream.next_date),
            merchant: stream.merchant,
            amount: money.amount(stream.last_amount.abs(), &stream.currency),
            account: accounts
                .get(&AccountId::new(stream.account_id))
                .cloned()
                .unwrap_or_default(),
            late: stream.status == Status::Late || stream.next_date < today,
        };
        let entry = (stream.next_date, expected);
        if stream.inflow {
            pay.push(entry);
        } else {
            bills.push(entry);
        }
    }
    bills.sort_by_key(|(date, _)| *date);
    pay.sort_by_key(|(date, _)| *date);
    Ok(Insights {
        last_month: last_month_spending,
        spending_charts,
        bills: bills.into_iter().map(|(_, e)| e).collect(),
        pay: pay.into_iter().map(|(_, e)| e).collect(),
    })
}

/// One month's total and its biggest categories (the groups come most
/// spent first).
fn month_summary(
    currency: &str,
    month: NaiveDate,
    groups: &[(String, Decimal)],
    money: &MoneyFormat,
) -> MonthSpending {
    let total: Decimal = groups.iter().map(|(_, spent)| *spent).sum();
    let percent = |amount: Decimal| {
        if total <= Decimal::ZERO {
            0
        } else {
            (amount * Decimal::ONE_HUNDRED / total)
                .round()
                .try_into()
                .unwrap_or(0)
        }
    };
    let mut categories: Vec<CategoryShare> = groups
        .iter()
        .take(TOP_CATEGORIES)
        .map(|(name, amount)| CategoryShare {
            name: name.clone(),
            amount: money.amount(*amount, currency),
            percent: percent(*amount),
        })
        .collect();
    let rest: Decimal = groups.iter().skip(TOP_CATEGORIES).map(|(_, s)| *s).sum();
    if groups.len() > TOP_CATEGORIES {
        categories.push(CategoryShare {
            name: OTHER.to_owned(),
            amount: money.amount(rest, currency),
            percent: percent(rest),
        });
    }
    MonthSpending {
        currency: currency.to_owned(),
        month: month.format("%B %Y").to_string(),
        total: money.amount(total, currency),
        categories,
    }
}

/// The stacked bars of the months from `from` on: the categories most
/// spent on over the whole span get a colour each, the rest are summed.
fn spending_chart(
    currency: &str,
    from: NaiveDate,
    months: &BTreeMap<NaiveDate, Vec<(String, Decimal)>>,
    money: &MoneyFormat,
) -> Option<String> {
    let mut overall: BTreeMap<&str, Decimal> = BTreeMap::new();
    for groups in months.values() {
        for (name, spent) in groups {
            *overall.entry(name).or_default() += *spent;
        }
    }
    let mut ranked: Vec<(&str, Decimal)> = overall.into_iter().collect();
    ranked.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(b.0)));
    let mut legend: Vec<String> = ranked
        .iter()
        .take(COLOURED)
        .map(|(name, _)| (*name).to_owned())
        .collect();
    let others = ranked.len() > COLOURED;
    if others {
        legend.push(OTHER.to_owned());
    }
    let bars: Vec<MonthBar> = (0..CHART_MONTHS)
        .filter_map(|i| from.checked_add_months(Months::new(i)))
        .map(|month| {
            let mut amounts = vec![Decimal::ZERO; legend.len()];
            for (name, spent) in months.get(&month).into_iter().flatten() {
                let slot = legend[..legend.len() - usize::from(others)]
                    .iter()
                    .position(|n| n == name)
                    .unwrap_or(legend.len() - 1);
                // Refunds larger than a month's spending in a category
                // draw nothing rather than a bar below the axis.
                amounts[slot] += (*spent).max(Decimal::ZERO);
            }
            MonthBar { month, amounts }
        })
        .collect();
    StackedBars {
        id: &format!("spending-{currency}"),
        title: &format!("Spending per month by category, {currency}"),
        currency,
        legend: &legend,
        months: &bars,
        money,
    }
    .render()
}
