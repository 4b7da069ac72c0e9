//! One connection of the signed-in user: the progress page while a sync
//! runs, trying again, re-authenticating (the data is kept) and removing
//! (the data is erased).

use super::banks::{
    Bank, ConnectionLine, GOCARDLESS, SANDBOX, SIMPLEFIN, continue_to, holdings, lines,
};
use super::connect::{CredentialsForm, Target, bank_form, submit_credentials, sync_in_background};
use super::page::{PageError, render, see_other};
use super::session::{self, CsrfForm, Session, with_conn};
use crate::state::AppState;
use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
use askama::Template;
use tributary_domain::ids::ConnectionId;
use tributary_domain::model::{ConnectionStatus, Provider};
use tributary_storage::connections::{self, ConnectionRecord};
use tributary_storage::sync_jobs;

/// The request's session and the connection its path names, which must be
/// the session user's; for a form, its CSRF token checked first.
async fn open(
    req: &HttpRequest,
    state: &web::Data<AppState>,
    raw_id: &str,
    csrf: Option<&str>,
) -> Result<(Session, ConnectionRecord), PageError> {
    let session = session::load(req, state).await?;
    if let Some(csrf) = csrf {
        session.check_csrf(csrf)?;
    }
    let connection = own_connection(state, &session, raw_id).await?;
    Ok((session, connection))
}

/// One of the session user's connections, or 404.
async fn own_connection(
    state: &web::Data<AppState>,
    session: &Session,
    raw_id: &str,
) -> Result<ConnectionRecord, PageError> {
    let id: ConnectionId = raw_id.parse().map_err(|_| PageError::not_found())?;
    let user_id = session.user()?.id;
    with_conn(state, move |conn| {
        let connection = connections::list_connections(conn, Some(user_id))?
            .into_iter()
            .find(|c| c.id == id);
        connection.ok_or_else(PageError::not_found)
    })
    .await
}

#[derive(Template)]
#[template(path = "progress.html")]
struct ProgressPage<'a> {
    title: &'a str,
    app_name: &'a str,
    csrf: &'a str,
    connection: ConnectionLine,
    working: bool,
    continue_to: &'a str,
}

pub(super) async fn progress(
    req: HttpRequest,
    state: web::Data<AppState>,
    path: web::Path<String>,
) -> Result<HttpResponse, PageError> {
    // Polled every second while a sync runs: the user's connections and
    // accounts are read once, and the connection is found among them.
    let session = session::load(&req, &state).await?;
    let connection_id: ConnectionId = path.parse().map_err(|_| PageError::not_found())?;
    let holdings = holdings(&state, session.user()?.id).await?;
    let connection = holdings
        .connections
        .iter()
        .find(|c| c.id == connection_id)
        .ok_or_else(PageError::not_found)?;
    let job_running = with_conn(&state, move |conn| {
        Ok(sync_jobs::active_job(conn, connection_id)?.is_some())
    })
    .await?;
    // Until the background task has queued the first job, a new connection
    // is still "working": active, never synced, never failed.
    let working = connection.provider.is_synced()
        && (job_running
            || (connection.status == ConnectionStatus::Active
                && connection.last_synced_at.is_none()
                && connection.consecutive_failures == 0));
    let line = lines(&holdings)
        .into_iter()
        .find(|l| l.id == connection_id)
        .ok_or_else(PageError::not_found)?;
    let title = if working {
        "Connecting…".to_owned()
    } else {
        line.institution.clone()
    };
    render(&ProgressPage {
        title: &title,
        app_name: &session.app.name,
        csrf: &session.csrf(),
        connection: line,
        working,
        continue_to: continue_to(&session),
    })
}

pub(super) async fn retry(
    req: HttpRequest,
    state: web::Data<AppState>,
    path: web::Path<String>,
    form: web::Form<CsrfForm>,
) -> Result<HttpResponse, PageError> {
    let (_, connection) = open(&req, &state, &path, Some(&form.csrf)).await?;
    sync_in_background(&state, connection.id);
    Ok(see_other(&format!("/connect/progress/{}", connection.id)))
}

/// What a confirmation page asks about a connection.
struct Confirmation {
    title: &'static str,
    /// Before the bank's name: "Remove".
    verb: &'static str,
    /// After it: what follows, in plain words.
    consequence: &'static str,
    button: &'static str,
    button_id: &'static str,
    danger: bool,
    keep: &'static str,
}

const REMOVE: Confirmation = Confirmation {
    title: "Remove a connection",
    verb: "Remove",
    consequence: "Its accounts, transactions, balances and holdings are erased from this service, and the app can no longer read them.",
    button: "Remove and erase",
    button_id: "remove",
    danger: true,
    keep: "Keep it",
};

const DISCONNECT: Confirmation = Confirmation {
    title: "Disconnect a bank",
    verb: "Disconnect",
    consequence: "It is no longer synced. Its accounts and transactions stay, and the app can still read them; sign in to the bank again to resume.",
    button: "Disconnect",
    button_id: "disconnect",
    danger: false,
    keep: "Keep it connected",
};

#[derive(Template)]
#[template(path = "confirm.html")]
struct ConfirmPage<'a> {
    title: &'a str,
    app_name: &'a str,
    csrf: &'a str,
    connection: &'a ConnectionRecord,
    ask: &'a Confirmation,
    /// Where the form posts: the page's own address.
    action: &'a str,
    /// Where "Keep it" goes: back where the person came from.
    back: &'a str,
}

/// The page a connection's actions return to: the portal in a portal
/// session, else the bank list of the authorization flow.
fn home(session: &Session) -> &'static str {
    if session.is_portal() {
        "/portal"
    } else {
        "/connect/banks"
    }
}

async fn confirm_page(
    req: &HttpRequest,
    state: &web::Data<AppState>,
    path: &str,
    ask: &Confirmation,
) -> Result<HttpResponse, PageError> {
    let (session, connection) = open(req, state, path, None).await?;
    render(&ConfirmPage {
        title: ask.title,
        app_name: &session.app.name,
        csrf: &session.csrf(),
        connection: &connection,
        ask,
        action: req.path(),
        back: home(&session),
    })
}

pub(super) async fn remove_form(
    req: HttpRequest,
    state: web::Data<AppState>,
    path: web::Path<String>,
) -> Result<HttpResponse, PageError> {
    confirm_page(&req, &state, &path, &REMOVE).await
}

pub(super) async fn remove(
    req: HttpRequest,
    state: web::Data<AppState>,
    path: web::Path<String>,
    form: web::Form<CsrfForm>,
) -> Result<HttpResponse, PageError> {
    let (session, connection) = open(&req, &state, &path, Some(&form.csrf)).await?;
    let (user_id, connection_id) = (connection.user_id, connection.id);
    with_conn(&state, move |conn| {
        Ok(tributary_storage::connections::delete_connection(
            conn,
            user_id,
            connection_id,
        )?)
    })
    .await?;
    Ok(see_other(home(&session)))
}

pub(super) async fn disconnect_form(
    req: HttpRequest,
    state: web::Data<AppState>,
    path: web::Path<String>,
) -> Result<HttpResponse, PageError> {
    confirm_page(&req, &state, &path, &DISCONNECT).await
}

/// Stops syncing the connection and keeps its data (the rule every surface
/// shares: `tributary_providers::sync::disconnect`).
pub(super) async fn disconnect(
    req: HttpRequest,
    state: web::Data<AppState>,
    path: web::Path<String>,
    form: web::Form<CsrfForm>,
) -> Result<HttpResponse, PageError> {
    let (session, connection) = open(&req, &state, &path, Some(&form.csrf)).await?;
    let now = state.clock.now().naive_utc();
    with_conn(&state, move |conn| {
        tributary_providers::sync::disconnect(conn, &connection, now)
            .map(|_| ())
            .map_err(|err| match err {
                tributary_providers::sync::SyncError::Storage(err) => err.into(),
                _ => PageError::not_found(),
            })
    })
    .await?;
    Ok(see_other(home(&session)))
}

fn bank_of(provider: Provider) -> Option<Bank> {
    match provider {
        Provider::Sandbox => Some(SANDBOX),
        Provider::SimpleFin => Some(SIMPLEFIN),
        Provider::GoCardless => Some(GOCARDLESS),
        _ => None,
    }
}

pub(super) async fn reauth_form(
    req: HttpRequest,
    state: web::Data<AppState>,
    path: web::Path<String>,
) -> Result<HttpResponse, PageError> {
    let (session, connection) = open(&req, &state, &path, None).await?;
    let bank = bank_of(connection.provider).ok_or_else(PageError::not_found)?;
    let action = format!("/connect/connections/{}/reauth", connection.id);
    // The same login or the same bank as before, unless changed.
    let setting = match connection.provider {
        Provider::Sandbox => "username",
        Provider::GoCardless => "institution_id",
        _ => "",
    };
    let prefill = connection
        .settings
        .get(setting)
        .and_then(|v| v.as_str())
        .unwrap_or_default()
        .to_owned();
    bank_form(&session, &bank, &action, &prefill, None, StatusCode::OK)
}

pub(super) async fn reauth(
    req: HttpRequest,
    state: web::Data<AppState>,
    path: web::Path<String>,
    form: web::Form<CredentialsForm>,
) -> Result<HttpResponse, PageError> {
    let (session, connection) = open(&req, &state, &path, Some(&form.csrf)).await?;
    let bank = bank_of(connection.provider).ok_or_else(PageError::not_found)?;
    let action = format!("/connect/connections/{}/reauth", connection.id);
    let target = Target::Existing(connection.id);
    submit_credentials(&req, &state, &session, &bank, &action, &form, target).await
}
