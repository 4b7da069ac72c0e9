//! One account at `/accounts/{id}`: its balance and chart, its holdings
//! (value, cost basis, gain), and its transactions newest first, searched
//! by text and dates and paged by position like the API (a page never
//! counts or skips rows, however many the account has).

use super::chart::{LineChart, Points, daily};
use super::session;
use crate::state::AppState;
use crate::web::banks::kind_in_words;
use crate::web::money::{MoneyFormat, NumberStyle, Shown};
use crate::web::page::{PageError, render, when};
use crate::web::session::with_conn;
use actix_web::{HttpRequest, HttpResponse, web};
use askama::Template;
use chrono::NaiveDate;
use serde::Deserialize;
use tributary_domain::access::Viewer;
use tributary_domain::enrich::merchant;
use tributary_domain::ids::{AccountId, TransactionId, UserId};
use tributary_storage::read::{self, TransactionFilter, TransactionPosition};

/// Transactions per page.
const PAGE_ROWS: i64 = 50;

/// The longest search text a page takes.
const SEARCH_MAX_CHARS: usize = 200;

/// The page's query, as the search form and the paging links send it.
#[derive(Debug, Default, Deserialize)]
pub(super) struct AccountQuery {
    #[serde(default)]
    q: String,
    #[serde(default)]
    from: String,
    #[serde(default)]
    to: String,
    /// The last row of the previous page: `YYYY-MM-DD.ID`.
    #[serde(default)]
    after: String,
}

/// The query, checked: what to search and from where.
struct Search {
    text: Option<String>,
    filter: TransactionFilter,
    after: Option<TransactionPosition>,
}

fn date(field: &str, raw: &str) -> Result<Option<NaiveDate>, PageError> {
    let raw = raw.trim();
    if raw.is_empty() {
        return Ok(None);
    }
    NaiveDate::parse_from_str(raw, "%Y-%m-%d")
        .map(Some)
        .map_err(|_| PageError::bad_request(format!("{field}: a date as YYYY-MM-DD, not “{raw}”.")))
}

impl AccountQuery {
    fn check(&self) -> Result<Search, PageError> {
        let text = self.q.trim();
        if text.chars().count() > SEARCH_MAX_CHARS {
            return Err(PageError::bad_request(format!(
                "Search: at most {SEARCH_MAX_CHARS} characters."
            )));
        }
        let (from, to) = (date("From", &self.from)?, date("To", &self.to)?);
        if let (Some(from), Some(to)) = (from, to)
            && from > to
        {
            return Err(PageError::bad_request(
                "From: the first day comes before the last (To).",
            ));
        }
        let after = match self.after.trim() {
            "" => None,
            raw => Some(position(raw).ok_or_else(|| {
                PageError::bad_request(
                    "The page's position could not be read; start from the newest.",
                )
            })?),
        };
        Ok(Search {
            text: (!text.is_empty()).then(|| text.to_owned()),
            filter: TransactionFilter {
                include_pending: true,
                from,
                to,
            },
            after,
        })
    }

    /// This query's link to the page after `last`.
    fn next_page(&self, last: TransactionPosition) -> String {
        self.link(Some(&format!("{}.{}", last.date, last.id)))
    }

    /// This query's link from the newest row, or to the page after a
    /// position.
    fn link(&self, after: Option<&str>) -> String {
        let mut query = url::form_urlencoded::Serializer::new(String::new());
        for (name, value) in [("q", &self.q), ("from", &self.from), ("to", &self.to)] {
            if !value.trim().is_empty() {
                query.append_pair(name, value.trim());
            }
        }
        if let Some(after) = after {
            query.append_pair("after", after);
        }
        let query = query.finish();
        if query.is_empty() {
            String::new()
        } else {
            format!("?{query}")
        }
    }
}

fn position(raw: &str) -> Option<TransactionPosition> {
    let (date, id) = raw.split_once('.')?;
    Some(TransactionPosition {
        date: NaiveDate::parse_from_str(date, "%Y-%m-%d").ok()?,
        id: TransactionId::new(id.parse().ok().filter(|id: &i64| *id > 0)?),
    })
}

pub(super) struct TransactionRow {
    pub date: String,
    pub merchant: Option<String>,
    /// "Category › subcategory", for a row enriched.
    pub category: Option<String>,
    /// Where "Always categorise" goes: the rules form with this row's
    /// merchant and category filled in.
    pub rule_link: Option<String>,
    pub description: Option<String>,
    pub amount: Shown,
    pub pending: bool,
}

pub(super) struct HoldingRow {
    pub name: String,
    pub ticker: Option<String>,
    pub quantity: String,
    pub price: Shown,
    pub value: Shown,
    pub cost_basis: Option<Shown>,
    /// Value less cost basis, where the cost basis is known.
    pub gain: Option<Shown>,
}

#[derive(Template)]
#[template(path = "dashboard_account.html")]
struct AccountPage<'a> {
    title: &'a str,
    email: &'a str,
    csrf: &'a str,
    id: AccountId,
    institution: String,
    kind: &'static str,
    mask: Option<String>,
    currency: String,
    balance: Option<Shown>,
    as_of: String,
    chart: Option<String>,
    holdings: Vec<HoldingRow>,
    transactions: Vec<TransactionRow>,
    /// How many rows the listing holds; `None` for a text search, which is
    /// not counted.
    total: Option<i64>,
    q: &'a str,
    from: &'a str,
    to: &'a str,
    searching: bool,
    /// Links to the newest page (when not on it) and to the next.
    newest: Option<String>,
    older: Option<String>,
}

/// Everything the page shows, read in one snapshot.
struct Gathered {
    account: read::AccountView,
    history: Vec<read::BalanceRecord>,
    holdings: Vec<read::HoldingView>,
    rows: Vec<read::TransactionRecord>,
    total: Option<i64>,
}

fn gather(
    conn: &mut tributary_storage::AnyConnection,
    user: UserId,
    id: AccountId,
    search: &Search,
) -> Result<Gathered, PageError> {
    conn.read_snapshot(|conn| {
        let account = read::find_account(conn, &Viewer::whole_user(user), id)?
            .ok_or_else(PageError::not_found)?;
        // One row more than a page says whether another page follows.
        let rows = match &search.text {
            Some(text) => read::search_transactions(
                conn,
                id,
                &search.filter,
                text,
                PAGE_ROWS + 1,
                search.after,
            )?,
            None => read::list_transactions(
                conn,
                id,
                &search.filter,
                Some(PAGE_ROWS + 1),
                search.after,
            )?,
        };
        let total = match search.text {
            Some(_) => None,
            None => Some(read::page_total(conn, &account, &search.filter)?),
        };
        Ok(Gathered {
            history: read::balance_history(conn, id)?,
            holdings: read::list_holdings(conn, id)?,
            account,
            rows,
            total,
        })
    })
}

fn transaction_row(t: read::TransactionRecord, money: &MoneyFormat) -> TransactionRow {
    let shown = t.shown_subcategory();
    let merchant = t.clean_merchant.clone().or(t.merchant.clone());
    // A rule's merchant condition is the name the tables find, before any
    // rule renamed it: the form starts with that one.
    let tables_name =
        merchant::clean(t.merchant.as_deref(), t.description.as_deref()).map(|p| p.name);
    let rule_link = tables_name.as_ref().map(|name| {
        let mut query = url::form_urlencoded::Serializer::new(String::new());
        query.append_pair("merchant", name);
        if let Some(subcategory) = shown {
            query.append_pair("subcategory", subcategory.id);
        }
        format!("/rules?{}", query.finish())
    });
    TransactionRow {
        date: t.date.to_string(),
        amount: money.amount(t.amount, &t.currency),
        category: shown.map(|s| format!("{} › {}", s.category.name(), s.name)),
        rule_link,
        merchant,
        description: t.description,
        pending: t.is_pending,
    }
}

fn holding_row(holding: read::HoldingView, money: &MoneyFormat) -> HoldingRow {
    let gain = holding.cost_basis.map(|cost| holding.value - cost);
    let currency = &holding.currency;
    HoldingRow {
        ticker: holding.security.ticker,
        name: holding.security.name,
        quantity: holding.quantity.normalize().to_string(),
        price: money.amount(holding.price, currency),
        value: money.amount(holding.value, currency),
        cost_basis: holding.cost_basis.map(|c| money.amount(c, currency)),
        gain: gain.map(|g| money.change(g, currency)),
    }
}

pub(super) async fn page(
    req: HttpRequest,
    state: web::Data<AppState>,
    path: web::Path<String>,
    query: web::Query<AccountQuery>,
) -> Result<HttpResponse, PageError> {
    let signed_in = session::required(&req, &state).await?;
    let id: AccountId = path.parse().map_err(|_| PageError::not_found())?;
    let search = query.check()?;
    let user = signed_in.user.id;
    let (gathered, search) = with_conn(&state, move |conn| {
        Ok((gather(conn, user, id, &search)?, search))
    })
    .await?;
    let Gathered {
        account,
        history,
        holdings,
        mut rows,
        total,
    } = gathered;
    let more = rows.len() as i64 > PAGE_ROWS;
    rows.truncate(PAGE_ROWS as usize);
    let older = rows.last().filter(|_| more).map(|last| {
        query.next_page(TransactionPosition {
            date: last.date,
            id: last.id,
        })
    });
    let latest = history.last();
    let money = MoneyFormat::new(
        NumberStyle::of_request(&req),
        std::iter::once(account.currency.as_str())
            .chain(holdings.iter().map(|h| h.currency.as_str()))
            .chain(rows.iter().map(|t| t.currency.as_str())),
    );
    let days = daily(
        history
            .iter()
            .filter(|b| b.currency == account.currency)
            .map(|b| (b.as_of, b.amount)),
    );
    let chart = LineChart {
        id: &format!("chart-account-{id}"),
        title: &format!("Balance of {} over time", account.name),
        currency: &account.currency,
        points: &days,
        kind: Points::Days,
        money: &money,
    }
    .render();
    render(&AccountPage {
        title: &account.name,
        email: &signed_in.user.email,
        csrf: &signed_in.csrf(),
        id,
        institution: account.institution_name.clone(),
        kind: kind_in_words(account.kind),
        mask: account.mask.clone(),
        currency: account.currency.clone(),
        balance: latest.map(|b| money.amount(b.amount, &b.currency)),
        as_of: when(latest.map(|b| b.as_of), "never"),
        chart,
        holdings: holdings
            .into_iter()
            .map(|h| holding_row(h, &money))
            .collect(),
        transactions: rows
            .into_iter()
            .map(|t| transaction_row(t, &money))
            .collect(),
        total,
        q: query.q.trim(),
        from: query.from.trim(),
        to: query.to.trim(),
        searching: search.text.is_some()
            || search.filter.from.is_some()
            || search.filter.to.is_some(),
        newest: search
            .after
            .map(|_| format!("/accounts/{id}{}", query.link(None))),
        older: older.map(|link| format!("/accounts/{id}{link}")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn query(q: &str, from: &str, to: &str, after: &str) -> AccountQuery {
        AccountQuery {
            q: q.into(),
            from: from.into(),
            to: to.into(),
            after: after.into(),
        }
    }

    #[test]
    fn a_query_names_the_field_it_cannot_read() {
        let refused = |q: AccountQuery| q.check().err().map(|e| e.to_string()).unwrap_or_default();
        assert!(refused(query("", "2026-13-01", "", "")).contains("From: a date as YYYY-MM-DD"));
        assert!(refused(query("", "", "yesterday", "")).contains("To: a date"));
        assert!(refused(query("", "2026-02-02", "2026-02-01", "")).contains("From: the first day"));
        assert!(refused(query(&"x".repeat(201), "", "", "")).contains("Search: at most 200"));
        for after in [
            "x",
            "2026-01-01",
            "2026-01-01.0",
            "2026-01-01.-3",
            "01/01/2026.4",
        ] {
            assert!(
                refused(query("", "", "", after)).contains("position"),
                "{after}"
            );
        }
        let fine = query(" coffee ", "2026-01-01", "", "2026-01-31.17")
            .check()
            .unwrap();
        assert_eq!(fine.text.as_deref(), Some("coffee"));
        assert_eq!(fine.after.map(|p| p.id.get()), Some(17));
        assert!(
            fine.filter.include_pending,
            "pending rows are listed, marked"
        );
    }

    #[test]
    fn paging_links_keep_the_search_and_escape_it() {
        let q = query("café & co", "2026-01-01", "", "");
        let next = q.next_page(TransactionPosition {
            date: NaiveDate::from_ymd_opt(2026, 3, 4).unwrap(),
            id: TransactionId::new(99),
        });
        assert_eq!(
            next,
            "?q=caf%C3%A9+%26+co&from=2026-01-01&after=2026-03-04.99"
        );
        assert_eq!(query("", "", "", "").link(None), "");
        assert_eq!(
            position("2026-03-04.99"),
            Some(TransactionPosition {
                date: NaiveDate::from_ymd_opt(2026, 3, 4).unwrap(),
                id: TransactionId::new(99),
            })
        );
    }
}
