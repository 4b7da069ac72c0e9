//! Tributary as a SimpleFIN server (simplefin.org, protocol versions 1 and
//! 2; docs/simplefin.md), so that apps with a SimpleFIN client built in read
//! a Personal user's or an app user's data. The root is [`ROOT`] on both
//! servers:
//!
//! - `GET /simplefin/info`: the protocol versions served;
//! - `GET /simplefin/create`: where a person makes a setup token here (the
//!   CLI on `personal-api`, the portal on `platform-api`);
//! - `POST /simplefin/claim/{token}`: a setup token's claim URL, answered
//!   once with the Access URL (403 afterwards);
//! - `GET /simplefin/accounts`: the Account Set, with HTTP Basic
//!   credentials from the Access URL (403 when they are wrong or revoked).
//!
//! Failures are answered in the protocol's terms: a JSON body with
//! `errors` (strings) and `errlist` (codes), never the data envelope.

mod account_set;
mod error;
mod query;

use crate::fault::Fault;
use crate::interface::Interface;
use crate::routes;
use crate::state::AppState;
use account_set::{AccountData, AccountSet, Gathered, Origin};
use actix_web::http::StatusCode;
use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse, web};
use error::ErrorCode;
pub use error::SimpleFinError;
use query::AccountsQuery;
use std::collections::HashSet;
use tributary_auth::simplefin::{self as access, SimpleFinAuthError};
use tributary_domain::access::Viewer;
use tributary_domain::ids::{AccountId, ConnectionId};
use tributary_storage::{AnyConnection, StorageError, connections, investments, read};

pub use account_set::account_id as simplefin_account_id;

/// Where the SimpleFIN server is mounted: its root URL is this path on the
/// server's public address (the CLI prints such URLs too).
pub use tributary_app::links::SIMPLEFIN_ROOT as ROOT;

/// Versions `GET /info` lists (the protocol's version prefixes).
const VERSIONS: [&str; 2] = ["1.0", "2.0"];

pub fn configure(cfg: &mut web::ServiceConfig, interface: Interface) {
    let create = match interface {
        Interface::Personal => routes::get("/create", create_on_personal),
        Interface::Platform => routes::get("/create", create_on_platform),
    };
    cfg.service(
        web::scope(ROOT)
            .service(routes::get("/info", info))
            .service(create)
            .service(routes::one("/claim/{token}", "POST", web::post().to(claim)))
            .service(routes::get("/accounts", accounts)),
    );
}

/// `GET /create`, where the protocol sends a person to make a setup token:
/// this page says where they make one on this server.
#[derive(askama::Template)]
#[template(path = "simplefin_create.html")]
struct CreatePage {
    title: &'static str,
    personal: bool,
}

fn create_page(personal: bool) -> Result<HttpResponse, SimpleFinError> {
    let html = askama::Template::render(&CreatePage {
        title: "Create a SimpleFIN setup token",
        personal,
    })
    .map_err(|err| Fault::internal(format!("SimpleFIN create page: {err}")))?;
    Ok(HttpResponse::Ok()
        .content_type("text/html; charset=utf-8")
        // Text, links and the pages' stylesheet: nothing else to load,
        // nothing to frame.
        .insert_header((
            "Content-Security-Policy",
            "default-src 'none'; style-src 'self'; img-src 'self'",
        ))
        .insert_header(("X-Frame-Options", "DENY"))
        .body(html))
}

async fn create_on_personal() -> Result<HttpResponse, SimpleFinError> {
    create_page(true)
}

async fn create_on_platform() -> Result<HttpResponse, SimpleFinError> {
    create_page(false)
}

async fn info() -> HttpResponse {
    HttpResponse::Ok().json(serde_json::json!({ "versions": VERSIONS }))
}

/// The server's SimpleFIN root as the client reached it (or as
/// `TRIBUTARY_PUBLIC_URL` says).
fn root_url(state: &AppState, req: &HttpRequest) -> String {
    state.absolute_url(req, ROOT)
}

async fn claim(
    state: web::Data<AppState>,
    req: HttpRequest,
    token: web::Path<String>,
) -> Result<HttpResponse, SimpleFinError> {
    let access_root = root_url(&state, &req);
    let now = state.clock.now();
    let token = token.into_inner();
    let access_url = crate::fault::with_conn(&state, move |conn| {
        match access::claim(conn, &token, &access_root, now) {
            Ok(url) => Ok(Ok(url)),
            Err(SimpleFinAuthError::Storage(err)) => Err(SimpleFinError::from(err)),
            Err(SimpleFinAuthError::BadAccessRoot(why)) => {
                Err(Fault::internal(format!("SimpleFIN access root: {why}")).into())
            }
            Err(refused) => Ok(Err(refused)),
        }
    })
    .await?;
    match access_url {
        Ok(url) => Ok(HttpResponse::Ok()
            .content_type("text/plain; charset=utf-8")
            .insert_header((header::CACHE_CONTROL, "no-store"))
            .body(url)),
        Err(_) => Err(SimpleFinError::forbidden(
            "This setup token does not exist, was already claimed or has expired. If you did not claim it, revoke the destination: someone else may have it.",
        )),
    }
}

async fn accounts(
    state: web::Data<AppState>,
    req: HttpRequest,
) -> Result<HttpResponse, SimpleFinError> {
    let Some(Ok((username, password))) = crate::auth::basic_credentials(&req) else {
        return Err(SimpleFinError::forbidden(
            "Send the Access URL's credentials with HTTP Basic authentication.",
        ));
    };
    let now = state.clock.now();
    let parsed = AccountsQuery::parse(req.query_string(), now, state.simplefin_max_window_days);
    let root = root_url(&state, &req);
    let origin = Origin {
        host: state.public_host(&req),
        root_url: root,
    };
    let daily_requests = state.simplefin_daily_requests;
    let (gathered, query) = crate::fault::with_conn(&state, move |conn| {
        let (destination, viewer) = match access::authenticate(conn, &username, &password, now) {
            Ok(found) => found,
            Err(SimpleFinAuthError::Storage(err)) => return Err(err.into()),
            Err(SimpleFinAuthError::Revoked) => {
                return Err(SimpleFinError::forbidden("This access was revoked."));
            }
            Err(_) => {
                return Err(SimpleFinError::forbidden(
                    "The access credentials are not valid.",
                ));
            }
        };
        // A malformed request is refused before it costs a request.
        let query = parsed?;
        if !tributary_storage::simplefin::take_daily_request(
            conn,
            destination.id,
            now.date_naive(),
            daily_requests,
        )? {
            return Err(budget_spent(now, daily_requests));
        }
        let gathered = gather(conn, &viewer, &query, now.naive_utc())?;
        Ok((gathered, query))
    })
    .await?;
    Ok(HttpResponse::Ok()
        .insert_header((header::CACHE_CONTROL, "private, no-store"))
        .json(AccountSet::build(gathered, &query, &origin)))
}

/// 429 until the next UTC day, when the budget is whole again.
fn budget_spent(now: chrono::DateTime<chrono::Utc>, daily_requests: i32) -> SimpleFinError {
    let tomorrow = (now.date_naive() + chrono::Days::new(1))
        .and_time(chrono::NaiveTime::MIN)
        .and_utc();
    let wait = (tomorrow - now).num_seconds().max(1) as u64;
    SimpleFinError::new(
        StatusCode::TOO_MANY_REQUESTS,
        ErrorCode::Api,
        format!(
            "This access may make {daily_requests} requests a day and has made them; try again in {wait} seconds."
        ),
    )
    .retrying_after(wait)
}

/// Everything the answer says, read in one snapshot: the accounts the
/// destination may see (narrowed to `account=` when given; ids it may not
/// see are passed over as if they did not exist), their connections, and
/// each account's balance, transactions and holdings.
///
/// The protocol requires a balance and its date. An account no balance was
/// ever stated for answers the sum of its posted transactions as of the
/// newest one's day, and one without any answers zero as of now: never a
/// made-up 1970 date.
fn gather(
    conn: &mut AnyConnection,
    viewer: &Viewer,
    query: &AccountsQuery,
    now: chrono::NaiveDateTime,
) -> Result<Gathered, SimpleFinError> {
    conn.read_snapshot(|conn| {
        let mut accounts = read::list_accounts(conn, viewer)?;
        let mut connections = connections::list_visible(conn, viewer)?;
        if !query.accounts.is_empty() {
            let wanted: HashSet<AccountId> = query
                .accounts
                .iter()
                .filter_map(|id| account_set::parse_account_id(id))
                .collect();
            accounts.retain(|account| wanted.contains(&account.id));
            let behind: HashSet<ConnectionId> = accounts
                .iter()
                .map(|account| account.connection_id)
                .collect();
            connections.retain(|connection| behind.contains(&connection.id));
        }
        let filter = query.filter();
        let accounts = accounts
            .into_iter()
            .map(|view| {
                let balance = match read::latest_balance(conn, view.id)? {
                    Some(stated) => stated,
                    None => read::balance_from_transactions(conn, view.id, &view.currency)?
                        .unwrap_or_else(|| read::BalanceRecord {
                            amount: rust_decimal::Decimal::ZERO,
                            available: None,
                            currency: view.currency.clone(),
                            as_of: now,
                        }),
                };
                let mut transactions = if query.balances_only {
                    Vec::new()
                } else {
                    read::list_transactions(conn, view.id, &filter, None, None)?
                };
                // Newest first from storage; the protocol orders by `posted`.
                transactions.reverse();
                let holdings = if tributary_providers::catalog::reports_holdings(view.provider) {
                    read::list_holdings(conn, view.id)?
                } else {
                    Vec::new()
                };
                let investment_transactions = if !query.balances_only
                    && tributary_providers::catalog::reports_investment_activity(view.provider)
                {
                    let mut activity =
                        investments::list(conn, view.id, (filter.from, filter.to), None)?;
                    activity.reverse();
                    activity
                } else {
                    Vec::new()
                };
                Ok(AccountData {
                    view,
                    balance,
                    transactions,
                    holdings,
                    investment_transactions,
                })
            })
            .collect::<Result<Vec<_>, StorageError>>()?;
        Ok(Gathered {
            connections,
            accounts,
        })
    })
}
