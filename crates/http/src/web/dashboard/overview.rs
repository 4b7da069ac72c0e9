//! The overview at `/`: every account grouped by connection with its
//! balance and a balance chart, totals per currency with theirs, and each
//! connection's health in plain words. Signed out, it is the sign-in page.

use super::chart::{self, DayBalance};
use super::{session, sign_in};
use crate::state::AppState;
use crate::web::banks::{can_disconnect, kind_in_words, needs_reauth, plain_words};
use crate::web::page::{PageError, render, when};
use crate::web::session::with_conn;
use actix_web::{HttpRequest, HttpResponse, web};
use askama::Template;
use std::collections::{BTreeMap, HashMap};
use tributary_domain::access::Viewer;
use tributary_domain::ids::{AccountId, ConnectionId};
use tributary_domain::money::Decimal;
use tributary_storage::connections;
use tributary_storage::read;

pub(super) struct AccountRow {
    pub id: AccountId,
    pub name: String,
    pub kind: &'static str,
    pub mask: Option<String>,
    pub currency: String,
    /// Exact digits, or `None` before the first sync.
    pub balance: Option<String>,
    pub as_of: String,
    /// SVG markup, built here from stored numbers only.
    pub chart: Option<String>,
}

pub(super) struct ConnectionGroup {
    pub id: ConnectionId,
    pub institution: String,
    pub status: &'static str,
    pub last_synced: String,
    pub next_sync: String,
    pub problem: Option<String>,
    /// Synced from a provider (not statement files): "Sync now" applies.
    pub synced: bool,
    pub needs_reauth: bool,
    pub can_disconnect: bool,
    pub accounts: Vec<AccountRow>,
}

pub(super) struct CurrencyTotal {
    pub currency: String,
    pub total: String,
    pub chart: Option<String>,
}

#[derive(Template)]
#[template(path = "dashboard_overview.html")]
struct OverviewPage<'a> {
    title: &'a str,
    email: &'a str,
    csrf: &'a str,
    groups: Vec<ConnectionGroup>,
    totals: Vec<CurrencyTotal>,
}

/// Everything the overview shows, read in one snapshot.
struct Overview {
    groups: Vec<ConnectionGroup>,
    totals: Vec<CurrencyTotal>,
}

fn gather(
    conn: &mut tributary_storage::AnyConnection,
    signed_in_user: tributary_domain::ids::UserId,
) -> Result<Overview, PageError> {
    let viewer = Viewer::whole_user(signed_in_user);
    conn.read_snapshot(|conn| {
        let accounts = read::list_accounts(conn, &viewer)?;
        let connections = connections::list_connections(conn, Some(signed_in_user))?;
        let mut histories: HashMap<AccountId, Vec<read::BalanceRecord>> = HashMap::new();
        for (account, balance) in read::balance_histories(conn, signed_in_user)? {
            histories.entry(account).or_default().push(balance);
        }
        let mut by_currency: BTreeMap<String, (Decimal, Vec<Vec<DayBalance>>)> = BTreeMap::new();
        let mut rows: BTreeMap<ConnectionId, Vec<AccountRow>> = BTreeMap::new();
        for account in accounts {
            let history = histories.remove(&account.id).unwrap_or_default();
            let latest = history.last().cloned();
            let days = chart::daily(history.iter().map(|b| (b.as_of, b.amount)));
            let entry = by_currency
                .entry(account.currency.clone())
                .or_insert_with(|| (Decimal::ZERO, Vec::new()));
            if let Some(latest) = &latest {
                entry.0 += latest.amount;
            }
            let chart = chart::render(
                &format!("chart-account-{}", account.id),
                &format!("Balance of {}", account.name),
                &account.currency,
                &days,
            );
            entry.1.push(days);
            rows.entry(account.connection_id)
                .or_default()
                .push(AccountRow {
                    id: account.id,
                    name: account.name,
                    kind: kind_in_words(account.kind),
                    mask: account.mask,
                    currency: account.currency,
                    balance: latest.as_ref().map(|b| b.amount.to_string()),
                    as_of: when(latest.map(|b| b.as_of), "not read yet"),
                    chart,
                });
        }
        let groups = connections
            .into_iter()
            .map(|c| ConnectionGroup {
                id: c.id,
                institution: c.institution_name.clone(),
                status: c.status.as_str(),
                last_synced: when(c.last_synced_at, "never"),
                next_sync: if c.provider.is_synced() {
                    when(c.next_sync_at, "not scheduled")
                } else {
                    "when you upload a statement".to_owned()
                },
                problem: plain_words(&c),
                synced: c.provider.is_synced(),
                needs_reauth: needs_reauth(&c),
                can_disconnect: can_disconnect(&c),
                accounts: rows.remove(&c.id).unwrap_or_default(),
            })
            .collect();
        let totals = by_currency
            .into_iter()
            .map(|(currency, (total, series))| CurrencyTotal {
                chart: chart::render(
                    &format!("chart-total-{currency}"),
                    &format!("Total in {currency}"),
                    &currency,
                    &chart::total(&series),
                ),
                total: total.to_string(),
                currency,
            })
            .collect();
        Ok(Overview { groups, totals })
    })
}

pub(super) async fn page(
    req: HttpRequest,
    state: web::Data<AppState>,
) -> Result<HttpResponse, PageError> {
    let Some(signed_in) = session::current(&req, &state).await? else {
        return crate::web::code_sign_in::page::<sign_in::PersonalSignIn>(&req, &state).await;
    };
    let user_id = signed_in.user.id;
    let overview = with_conn(&state, move |conn| gather(conn, user_id)).await?;
    render(&OverviewPage {
        title: "Your accounts",
        email: &signed_in.user.email,
        csrf: &signed_in.csrf(),
        groups: overview.groups,
        totals: overview.totals,
    })
}
