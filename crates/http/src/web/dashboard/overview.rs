//! The overview at `/`, written to answer three questions at a glance:
//! what am I worth (net worth per currency, assets less debts, its change
//! since last month and its chart over thirteen months), what did I spend
//! last month and on what (the total, the biggest categories, and twelve
//! months of spending by category), and which bills are coming (with the
//! pay expected). Below: every account grouped by connection with its
//! balance, its trend over 30 days and its chart, and each connection's
//! health in plain words. Signed out, it is the sign-in page.

use super::chart::{DayBalance, LineChart, Points, daily, day_text};
use super::insights::{self, Insights};
use super::{session, sign_in};
use crate::state::AppState;
use crate::web::banks::{
    can_choose_accounts, can_disconnect, kind_in_words, needs_reauth, plain_words, status_words,
};
use crate::web::money::{MoneyFormat, NumberStyle, Shown};
use crate::web::page::{PageError, render, when};
use crate::web::session::with_conn;
use actix_web::{HttpRequest, HttpResponse, web};
use askama::Template;
use chrono::{Datelike, Days, Months, NaiveDate};
use std::collections::{BTreeMap, HashMap};
use tributary_domain::access::Viewer;
use tributary_domain::ids::{AccountId, ConnectionId, UserId};
use tributary_domain::money::Decimal;
use tributary_domain::net_worth::{self, Interval, Reports};
use tributary_storage::connections;
use tributary_storage::read;

/// How far back an account's trend looks.
const TREND_DAYS: u64 = 30;
/// How far back the net worth chart reaches.
const NET_WORTH_MONTHS: u32 = 13;

/// A change over a period, and which way it went.
pub(super) struct Trend {
    pub change: Shown,
    /// Good news (worth grew, or a debt shrank): green, else red.
    pub good: bool,
    /// Which way the figure went: ▲ or ▼.
    pub rising: bool,
    /// `in 30 days`, `since 31 Oct 2026`.
    pub over: String,
}

pub(super) struct AccountRow {
    pub id: AccountId,
    pub name: String,
    pub kind: &'static str,
    pub mask: Option<String>,
    /// A card or loan: its balance is owed.
    pub owed: bool,
    /// `None` before the first balance is reported.
    pub balance: Option<Shown>,
    pub as_of: String,
    pub trend: Option<Trend>,
    /// SVG markup, built here from stored numbers only.
    pub chart: Option<String>,
}

pub(super) struct ConnectionGroup {
    pub id: ConnectionId,
    pub institution: String,
    /// The status as a short phrase, and its CSS modifier.
    pub status_words: &'static str,
    pub status_class: &'static str,
    pub last_synced: String,
    /// `None` when no sync is coming (the bank waits for the person, or
    /// the connection holds statement files).
    pub next_sync: Option<String>,
    pub problem: Option<String>,
    /// Synced from a provider and working: "Sync now" applies.
    pub can_sync: bool,
    pub needs_reauth: bool,
    pub can_disconnect: bool,
    pub can_choose_accounts: bool,
    pub from_files: bool,
    pub accounts: Vec<AccountRow>,
}

/// Net worth in one currency.
pub(super) struct NetWorth {
    pub currency: String,
    pub net: Shown,
    pub assets: Shown,
    /// What is owed (cards and loans), written as the positive amount a
    /// person reads after "owe".
    pub owed: Shown,
    pub trend: Option<Trend>,
    pub chart: Option<String>,
}

#[derive(Template)]
#[template(path = "dashboard_overview.html")]
struct OverviewPage<'a> {
    title: &'a str,
    email: &'a str,
    csrf: &'a str,
    net_worth: Vec<NetWorth>,
    insights: Insights,
    groups: Vec<ConnectionGroup>,
}

/// Everything the overview shows, read in one snapshot.
struct Overview {
    net_worth: Vec<NetWorth>,
    insights: Insights,
    groups: Vec<ConnectionGroup>,
}

/// Per currency: what is owned, what is owed, and each account's reports
/// as they count towards net worth.
#[derive(Default)]
struct CurrencySums {
    assets: Decimal,
    debts: Decimal,
    reports: Vec<Reports>,
}

fn gather(
    conn: &mut tributary_storage::AnyConnection,
    signed_in_user: UserId,
    today: NaiveDate,
    style: NumberStyle,
) -> Result<Overview, PageError> {
    let viewer = Viewer::whole_user(signed_in_user);
    conn.read_snapshot(|conn| {
        let accounts = read::list_accounts(conn, &viewer)?;
        let connections = connections::list_connections(conn, Some(signed_in_user))?;
        let money = MoneyFormat::new(style, accounts.iter().map(|a| a.currency.as_str()));
        let mut histories: HashMap<AccountId, Vec<read::BalanceRecord>> = HashMap::new();
        for (account, balance) in read::balance_histories(conn, signed_in_user)? {
            histories.entry(account).or_default().push(balance);
        }
        let names: HashMap<AccountId, String> =
            accounts.iter().map(|a| (a.id, a.name.clone())).collect();
        let mut sums: BTreeMap<String, CurrencySums> = BTreeMap::new();
        let mut rows: BTreeMap<ConnectionId, Vec<AccountRow>> = BTreeMap::new();
        for account in accounts {
            let history = histories.remove(&account.id).unwrap_or_default();
            let days = daily(
                history
                    .iter()
                    .filter(|b| b.currency == account.currency)
                    .map(|b| (b.as_of, b.amount)),
            );
            let latest = history.last().cloned();
            if let Some(latest) = &latest {
                let sum = sums.entry(latest.currency.clone()).or_default();
                let counted = net_worth::counted(account.kind, latest.amount);
                if account.kind.is_liability() {
                    sum.debts += counted;
                } else {
                    sum.assets += counted;
                }
                let mut by_currency: BTreeMap<&str, Reports> = BTreeMap::new();
                for report in &history {
                    by_currency.entry(&report.currency).or_default().push((
                        report.as_of.date(),
                        net_worth::counted(account.kind, report.amount),
                    ));
                }
                for (currency, reports) in by_currency {
                    sums.entry(currency.to_owned())
                        .or_default()
                        .reports
                        .push(reports);
                }
            }
            let chart = LineChart {
                id: &format!("chart-account-{}", account.id),
                title: &format!("Balance of {} over time", account.name),
                currency: &account.currency,
                points: &days,
                kind: Points::Days,
                money: &money,
            }
            .render();
            rows.entry(account.connection_id)
                .or_default()
                .push(AccountRow {
                    id: account.id,
                    name: account.name,
                    kind: kind_in_words(account.kind),
                    mask: account.mask,
                    owed: account.kind.is_liability(),
                    balance: latest.as_ref().map(|b| money.amount(b.amount, &b.currency)),
                    as_of: when(latest.map(|b| b.as_of), "never"),
                    trend: account_trend(
                        &days,
                        account.kind.is_liability(),
                        &account.currency,
                        &money,
                    ),
                    chart,
                });
        }
        let net_worth = sums
            .into_iter()
            .map(|(currency, sum)| net_worth_of(&currency, sum, today, &money))
            .collect();
        let insights = insights::gather(conn, &names, today, &money)?;
        let groups = connections
            .into_iter()
            .map(|c| {
                let waits_for_person = needs_reauth(&c);
                let synced = c.provider.is_synced();
                ConnectionGroup {
                    id: c.id,
                    institution: c.institution_name.clone(),
                    status_words: status_words(c.status),
                    status_class: c.status.as_str(),
                    last_synced: when(c.last_synced_at, "never"),
                    next_sync: (synced && !waits_for_person)
                        .then(|| when(c.next_sync_at, "not scheduled")),
                    problem: plain_words(&c),
                    can_sync: synced && !waits_for_person,
                    needs_reauth: waits_for_person,
                    can_disconnect: can_disconnect(&c),
                    can_choose_accounts: can_choose_accounts(&c),
                    from_files: !synced,
                    accounts: rows.remove(&c.id).unwrap_or_default(),
                }
            })
            .collect();
        Ok(Overview {
            net_worth,
            insights,
            groups,
        })
    })
}

/// An account's change over the last `TREND_DAYS`: from its last balance
/// on or before that day to its latest. For a card or loan, the change in
/// what is owed (`owed`), which is good when it falls.
fn account_trend(
    days: &[DayBalance],
    owed: bool,
    currency: &str,
    money: &MoneyFormat,
) -> Option<Trend> {
    let latest = days.last()?;
    let since = latest.day.checked_sub_days(Days::new(TREND_DAYS))?;
    let then = days.iter().rev().find(|d| d.day <= since)?;
    if owed {
        let change = latest.value.abs() - then.value.abs();
        return Some(Trend {
            change: money.change(change, currency),
            good: change <= Decimal::ZERO,
            rising: change > Decimal::ZERO,
            over: format!("owed, in {TREND_DAYS} days"),
        });
    }
    let change = latest.value - then.value;
    Some(Trend {
        change: money.change(change, currency),
        good: change >= Decimal::ZERO,
        rising: change >= Decimal::ZERO,
        over: format!("in {TREND_DAYS} days"),
    })
}

fn net_worth_of(
    currency: &str,
    sum: CurrencySums,
    today: NaiveDate,
    money: &MoneyFormat,
) -> NetWorth {
    let from = today.checked_sub_months(Months::new(NET_WORTH_MONTHS));
    let points: Vec<DayBalance> = net_worth::summed(&sum.reports, Interval::Monthly, from)
        .into_iter()
        .map(|(day, value)| DayBalance { day, value })
        .collect();
    let net = sum.assets + sum.debts;
    // The change since the end of last month, when the series reaches it.
    let last_month_end = today.with_day(1).and_then(|d| d.pred_opt());
    let trend = last_month_end.and_then(|end| {
        let then = points.iter().rev().find(|p| p.day <= end)?;
        let change = net - then.value;
        Some(Trend {
            change: money.change(change, currency),
            good: change >= Decimal::ZERO,
            rising: change >= Decimal::ZERO,
            over: format!("since {}", day_text(then.day)),
        })
    });
    NetWorth {
        currency: currency.to_owned(),
        net: money.amount(net, currency),
        assets: money.amount(sum.assets, currency),
        owed: money.amount(-sum.debts, currency),
        chart: LineChart {
            id: &format!("chart-net-worth-{currency}"),
            title: &format!("Net worth in {currency}, month by month"),
            currency,
            points: &points,
            kind: Points::MonthEnds,
            money,
        }
        .render(),
        trend,
    }
}

pub(super) async fn page(
    req: HttpRequest,
    state: web::Data<AppState>,
) -> Result<HttpResponse, PageError> {
    let Some(signed_in) = session::current(&req, &state).await? else {
        return crate::web::code_sign_in::page::<sign_in::PersonalSignIn>(&req, &state).await;
    };
    let user_id = signed_in.user.id;
    let today = state.clock.now().date_naive();
    let style = NumberStyle::of_request(&req);
    let overview = with_conn(&state, move |conn| gather(conn, user_id, today, style)).await?;
    render(&OverviewPage {
        title: "Your money",
        email: &signed_in.user.email,
        csrf: &signed_in.csrf(),
        net_worth: overview.net_worth,
        insights: overview.insights,
        groups: overview.groups,
    })
}
