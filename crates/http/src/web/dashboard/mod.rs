//! The Personal dashboard (docs/dashboard.md): a person's own Tributary in
//! the browser, served by `personal-api` at `/`. It is built like the
//! browser flow's pages (askama, the one stylesheet, works without
//! JavaScript, CSRF on
//! every form, the same security headers) but has its own sessions: a
//! Personal user has no app, and signs in with a one-time link.
//!
//! - `GET /`: the overview (accounts by connection, totals per currency,
//!   balance charts, connection health), or how to sign in;
//! - `POST /sign-in`, `POST /sign-in/code`: sign in by e-mailed code;
//! - `GET /sign-in/link/{token}`: a one-time sign-in link opens a session;
//! - `POST /sign-out`;
//! - `GET /accounts/{id}`: one account, its holdings and transactions;
//! - `GET|POST /budgeting-apps`, `GET|POST /budgeting-apps/{id}/revoke`:
//!   SimpleFIN destinations;
//! - `GET|POST /keys`, `GET|POST /keys/{id}/revoke`: API keys;
//! - `GET|POST /mcp/oauth/authorize`: an assistant's consent page (MCP,
//!   docs/mcp.md), `GET /connected-apps`,
//!   `GET|POST /connected-apps/{id}/revoke`: the assistants a person let in;
//! - `GET|POST /rules`, `GET|POST /rules/{id}/delete`: rules for merchants
//!   and categories (a transaction row's "Always categorise" opens the form);
//! - `/connect/...`: the browser flow's connection pages (add a bank,
//!   upload a statement, progress, re-authenticate, disconnect, remove),
//!   and `POST /connect/connections/{id}/sync`: sync now.
//!
//! Whatever revokes, deletes or removes asks first: its GET is a page that
//! says what stops working and posts to the same address (`web::confirm`).

mod account;
mod assistant_consent;
mod bars;
mod budgeting_apps;
mod chart;
mod connected_apps;
mod insights;
mod keys;
mod overview;
mod rules;
mod session;
mod sign_in;

use super::code_sign_in;
use super::confirm::{Ask, ask_first};
use super::header::Header;
use super::page::PageError;
use super::session::with_conn;
use super::visitor::Visitor as _;
use super::{
    connection_pages, connections, form_config, no_page, query_config, security_headers, simplefin,
    static_files,
};
use crate::state::AppState;
use actix_web::{HttpRequest, HttpResponse, web};
use sign_in::PersonalSignIn;
use tributary_domain::ids::UserId;
use tributary_storage::AnyConnection;

pub use session::DASHBOARD_COOKIE;

/// Where a sign-in link points, under the server's public address (the
/// CLI prints such links too, hence the shared constant).
pub use tributary_app::links::SIGN_IN_LINK_PATH;

pub fn configure(cfg: &mut web::ServiceConfig) {
    static_files(cfg);
    cfg.app_data(form_config())
        .app_data(query_config())
        .service(
            web::resource("/")
                .wrap(security_headers())
                .route(web::get().to(overview::page)),
        )
        .service(
            web::resource("/sign-in")
                .wrap(security_headers())
                .route(web::post().to(code_sign_in::send_code::<PersonalSignIn>)),
        )
        .service(
            web::resource("/sign-in/code")
                .wrap(security_headers())
                .route(web::post().to(code_sign_in::verify::<PersonalSignIn>)),
        )
        .service(
            web::scope(SIGN_IN_LINK_PATH)
                .wrap(security_headers())
                .default_service(web::to(no_page))
                .route("/{token}", web::get().to(session::open_link)),
        )
        .service(
            web::resource("/sign-out")
                .wrap(security_headers())
                .route(web::post().to(session::sign_out)),
        )
        .service(
            web::scope("/accounts")
                .wrap(security_headers())
                .default_service(web::to(no_page))
                .route("/{id}", web::get().to(account::page)),
        )
        .service(
            web::scope(budgeting_apps::PATH)
                .wrap(security_headers())
                .default_service(web::to(no_page))
                .route("", web::get().to(budgeting_apps::page))
                .route("", web::post().to(simplefin::create::<session::SignedIn>))
                .route(
                    "/{id}/revoke",
                    web::get().to(simplefin::revoke_form::<session::SignedIn>),
                )
                .route(
                    "/{id}/revoke",
                    web::post().to(simplefin::revoke::<session::SignedIn>),
                ),
        )
        .service(
            web::scope("/keys")
                .wrap(security_headers())
                .default_service(web::to(no_page))
                .route("", web::get().to(keys::list))
                .route("", web::post().to(keys::create))
                .route("/{id}/revoke", web::get().to(keys::revoke_form))
                .route("/{id}/revoke", web::post().to(keys::revoke)),
        )
        .service(
            web::resource(crate::mcp::oauth::AUTHORIZE_PATH)
                .wrap(security_headers())
                .route(web::get().to(assistant_consent::page))
                .route(web::post().to(assistant_consent::decide)),
        )
        .service(
            web::scope(connected_apps::PATH)
                .wrap(security_headers())
                .default_service(web::to(no_page))
                .route("", web::get().to(connected_apps::page))
                .route("/{id}/revoke", web::get().to(connected_apps::revoke_form))
                .route("/{id}/revoke", web::post().to(connected_apps::revoke)),
        )
        .service(
            web::scope(rules::PATH)
                .wrap(security_headers())
                .default_service(web::to(no_page))
                .route("", web::get().to(rules::page))
                .route("", web::post().to(rules::create))
                .route("/{id}/delete", web::get().to(rules::delete_form))
                .route("/{id}/delete", web::post().to(rules::delete)),
        )
        .service(
            web::scope("/connect")
                .wrap(security_headers())
                .default_service(web::to(no_page))
                .configure(connection_pages::<session::SignedIn>)
                .route(
                    "/connections/{id}/sync",
                    web::post().to(connections::sync_now::<session::SignedIn>),
                ),
        );
}

/// The dashboard's navigation for the person behind the request, when
/// signed in: what its error pages show (`web::surface`).
pub(super) async fn navigation(
    req: &HttpRequest,
    state: &web::Data<AppState>,
) -> Result<Option<Header>, PageError> {
    Ok(session::current(req, state)
        .await?
        .map(|signed_in| signed_in.header()))
}

/// The page that asks first about one of the signed-in person's own
/// things, the path's `raw_id`: `name_of` finds its name among theirs, so
/// another person's and a made-up id are alike absent (404); `ask` says
/// what doing it means; "Keep it" returns to `back`.
async fn ask_about_own<Id: std::str::FromStr + Send + 'static>(
    req: &HttpRequest,
    state: &web::Data<AppState>,
    raw_id: &str,
    name_of: impl FnOnce(&mut AnyConnection, UserId, Id) -> Result<Option<String>, PageError>
    + Send
    + 'static,
    ask: impl FnOnce(String) -> Ask,
    back: &str,
) -> Result<HttpResponse, PageError> {
    let signed_in = session::required(req, state).await?;
    let id: Id = raw_id.parse().map_err(|_| PageError::not_found())?;
    let user_id = signed_in.user.id;
    let name = with_conn(state, move |conn| {
        name_of(conn, user_id, id)?.ok_or_else(PageError::not_found)
    })
    .await?;
    ask_first(req, signed_in.header(), &signed_in.csrf(), &ask(name), back)
}
