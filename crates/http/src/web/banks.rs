//! Connecting a bank: the searchable list, each provider's credential step,
//! the progress page while the first sync runs, and removing or
//! re-authenticating a connection. Shared by the authorization flow and the
//! portal; only where "continue" leads differs.

use super::page::{PageError, render, render_with, see_other};
use super::session::{self, CsrfForm, Session, with_conn};
use super::sign_in::next_step;
use crate::imports::{UploadError, read_upload};
use crate::state::{AppState, Engine};
use actix_multipart::Multipart;
use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
use askama::Template;
use serde::Deserialize;
use tributary_domain::model::{ConnectionStatus, Provider, SyncJobKind};
use tributary_providers::import;
use tributary_providers::sandbox;
use tributary_providers::sync::SyncError;
use tributary_providers::{ConnectRequest, InstitutionChoice};
use tributary_storage::apps;
use tributary_storage::connections::{self, ConnectionRecord};
use tributary_storage::sync_jobs;
use tributary_storage::web::{self as store, AccountSummary};

/// A way to connect, as the list shows it.
#[derive(Debug, Clone)]
pub(super) struct Bank {
    pub key: &'static str,
    pub name: &'static str,
    pub description: &'static str,
}

const SANDBOX: Bank = Bank {
    key: "sandbox",
    name: sandbox::INSTITUTION_NAME,
    description: "A test bank with realistic accounts and transactions. Username user_good, any password.",
};
const SIMPLEFIN: Bank = Bank {
    key: "simplefin",
    name: "SimpleFIN Bridge",
    description: "US and Canadian banks through SimpleFIN: paste a setup token from the bridge.",
};
const GOCARDLESS: Bank = Bank {
    key: "gocardless",
    name: "GoCardless Bank Account Data",
    description: "European banks (PSD2): sign in at your bank and come back here.",
};
const UPLOAD: Bank = Bank {
    key: "upload",
    name: "Upload a statement file",
    description: "camt.052/053/054, MT940/MT942, OFX/QFX or CSV from your bank's website.",
};

fn engine(state: &AppState) -> Result<Engine, PageError> {
    state.engine.clone().ok_or_else(|| {
        PageError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "Connecting banks is not available",
            "This server cannot connect banks right now. Try again later.",
        )
    })
}

/// The ways to connect this server offers.
fn banks(state: &AppState) -> Vec<Bank> {
    let mut banks = vec![SANDBOX];
    if let Some(engine) = &state.engine {
        if engine.supports(Provider::SimpleFin) {
            banks.push(SIMPLEFIN);
        }
        if engine.supports(Provider::GoCardless) {
            banks.push(GOCARDLESS);
        }
    }
    banks.push(UPLOAD);
    banks
}

fn find_bank(state: &AppState, key: &str) -> Result<Bank, PageError> {
    banks(state)
        .into_iter()
        .find(|b| b.key == key)
        .ok_or_else(PageError::not_found)
}

/// A signed-in session that may connect banks (paid, where users pay).
async fn connecting_session(
    req: &HttpRequest,
    state: &web::Data<AppState>,
) -> Result<Session, PageError> {
    let session = session::load(req, state).await?;
    session.user()?;
    if next_step(&session) != "/connect/banks" {
        return Err(PageError::new(
            StatusCode::PAYMENT_REQUIRED,
            "Subscribe first",
            format!(
                "{} asks you to subscribe before connecting a bank.",
                session.app.name
            ),
        ));
    }
    Ok(session)
}

/// Where "continue" leads once banks are connected.
fn continue_to(session: &Session) -> &'static str {
    if session.is_portal() {
        "/portal"
    } else {
        "/connect/consent"
    }
}

/// What the user has, for the list and the limit.
struct Holdings {
    connections: Vec<ConnectionRecord>,
    accounts: Vec<AccountSummary>,
    /// Accounts the user may still add; `None`: no limit.
    remaining: Option<i64>,
}

async fn holdings(state: &web::Data<AppState>, user_id: i64) -> Result<Holdings, PageError> {
    with_conn(state, move |conn| {
        let connections = connections::list_connections(conn, Some(user_id))?;
        let accounts = store::account_summaries(conn, user_id)?;
        let remaining = apps::account_limit(conn, user_id)?
            .map(|limit| (i64::from(limit) - accounts.len() as i64).max(0));
        Ok(Holdings {
            connections,
            accounts,
            remaining,
        })
    })
    .await
}

#[derive(Template)]
#[template(path = "banks.html")]
struct BanksPage<'a> {
    title: &'a str,
    app_name: &'a str,
    query: &'a str,
    banks: Vec<Bank>,
    connections: Vec<ConnectionLine>,
    remaining: Option<i64>,
    continue_to: Option<&'a str>,
}

/// A connection as the pages show it.
pub(super) struct ConnectionLine {
    pub id: i64,
    pub institution: String,
    pub status: &'static str,
    pub needs_reauth: bool,
    pub problem: Option<String>,
    pub last_synced: String,
    pub accounts: Vec<AccountSummary>,
}

/// The reason a connection failed, in plain words.
pub(super) fn plain_words(connection: &ConnectionRecord) -> Option<String> {
    let reason = connection.status_reason.clone().unwrap_or_default();
    match connection.status {
        ConnectionStatus::Active => None,
        ConnectionStatus::ReauthRequired => Some(format!(
            "Your bank asks you to sign in again ({}).",
            reason.trim_end_matches('.')
        )),
        ConnectionStatus::Disconnected => Some("This connection was disconnected.".into()),
        ConnectionStatus::Error => Some(match reason.strip_prefix("ACCOUNT_LIMIT_REACHED: ") {
            Some(limit) => format!(
                "This bank has more accounts than you may connect: {}. Nothing from it was stored; remove it, or ask the app for a higher limit.",
                limit
                    .replace("this user may", "you may")
                    .replace("they have", "you have")
            ),
            None => format!("We could not get your accounts from this bank: {reason}."),
        }),
    }
}

fn lines(holdings: &Holdings) -> Vec<ConnectionLine> {
    holdings
        .connections
        .iter()
        .map(|c| ConnectionLine {
            id: c.id,
            institution: c.institution_name.clone(),
            status: c.status.as_str(),
            needs_reauth: c.status == ConnectionStatus::ReauthRequired && c.provider.is_synced(),
            problem: plain_words(c),
            last_synced: c
                .last_synced_at
                .map(|t| t.format("%Y-%m-%d %H:%M UTC").to_string())
                .unwrap_or_else(|| "never".into()),
            accounts: holdings
                .accounts
                .iter()
                .filter(|a| a.connection_id == c.id)
                .cloned()
                .collect(),
        })
        .collect()
}

pub(super) async fn user_lines(
    state: &web::Data<AppState>,
    user_id: i64,
) -> Result<Vec<ConnectionLine>, PageError> {
    Ok(lines(&holdings(state, user_id).await?))
}

#[derive(Deserialize)]
pub(super) struct Search {
    #[serde(default)]
    q: String,
}

pub(super) async fn list(
    req: HttpRequest,
    state: web::Data<AppState>,
    search: web::Query<Search>,
) -> Result<HttpResponse, PageError> {
    let session = session::load(&req, &state).await?;
    let user_id = session.user()?.id;
    if next_step(&session) != "/connect/banks" {
        return Ok(see_other(next_step(&session)));
    }
    let holdings = holdings(&state, user_id).await?;
    let needle = search.q.trim().to_lowercase();
    let banks = banks(&state)
        .into_iter()
        .filter(|b| {
            needle.is_empty()
                || b.name.to_lowercase().contains(&needle)
                || b.description.to_lowercase().contains(&needle)
        })
        .collect();
    let has_accounts = !holdings.accounts.is_empty();
    render(&BanksPage {
        title: "Connect a bank",
        app_name: &session.app.name,
        query: search.q.trim(),
        banks,
        connections: lines(&holdings),
        remaining: holdings.remaining,
        continue_to: has_accounts.then(|| continue_to(&session)),
    })
}

#[derive(Template)]
#[template(path = "bank_form.html")]
struct BankFormPage<'a> {
    title: &'a str,
    app_name: &'a str,
    csrf: &'a str,
    bank: &'a Bank,
    /// Where the form posts: connect, or re-authenticate a connection.
    action: &'a str,
    /// What the form's main field starts with (a username, a bank's id).
    prefill: &'a str,
    error: Option<&'a str>,
    /// For providers that reach many banks: the country and search, and
    /// the banks found.
    picker: Option<Picker>,
}

/// The bank search of a provider that reaches many banks (GoCardless).
pub(super) struct Picker {
    pub countries: &'static [&'static str],
    pub country: String,
    pub query: String,
    pub institutions: Vec<InstitutionChoice>,
}

/// The countries GoCardless Bank Account Data reaches (EEA and UK).
const GOCARDLESS_COUNTRIES: &[&str] = &[
    "AT", "BE", "BG", "CY", "CZ", "DE", "DK", "EE", "ES", "FI", "FR", "GB", "GR", "HR", "HU", "IE",
    "IS", "IT", "LI", "LT", "LU", "LV", "MT", "NL", "NO", "PL", "PT", "RO", "SE", "SI", "SK",
];

fn bank_form(
    session: &Session,
    bank: &Bank,
    action: &str,
    prefill: &str,
    error: Option<&str>,
    status: StatusCode,
) -> Result<HttpResponse, PageError> {
    render_with(
        status,
        &BankFormPage {
            title: bank.name,
            app_name: &session.app.name,
            csrf: &session.csrf(),
            bank,
            action,
            prefill,
            error,
            picker: None,
        },
    )
}

fn limit_reached(session: &Session) -> PageError {
    PageError::new(
        StatusCode::FORBIDDEN,
        "Account limit reached",
        format!(
            "You have connected as many accounts as {} allows. Remove a connection to add another.",
            session.app.name
        ),
    )
}

#[derive(Deserialize)]
pub(super) struct BankSearch {
    #[serde(default)]
    country: String,
    #[serde(default)]
    q: String,
}

pub(super) async fn form(
    req: HttpRequest,
    state: web::Data<AppState>,
    path: web::Path<String>,
    search: web::Query<BankSearch>,
) -> Result<HttpResponse, PageError> {
    let session = connecting_session(&req, &state).await?;
    let bank = find_bank(&state, &path)?;
    let holdings = holdings(&state, session.user()?.id).await?;
    if holdings.remaining == Some(0) {
        return Err(limit_reached(&session));
    }
    let action = format!("/connect/banks/{}", bank.key);
    if bank.key != GOCARDLESS.key {
        return bank_form(&session, &bank, &action, "", None, StatusCode::OK);
    }
    let country = search.country.trim().to_ascii_uppercase();
    let query = search.q.trim().to_owned();
    let (institutions, error) = if GOCARDLESS_COUNTRIES.contains(&country.as_str()) {
        let engine = engine(&state)?;
        let lookup = country.clone();
        match web::block(move || engine.institutions(Provider::GoCardless, &lookup)).await? {
            Ok(all) => {
                let needle = query.to_lowercase();
                let found = all
                    .into_iter()
                    .filter(|i| needle.is_empty() || i.name.to_lowercase().contains(&needle))
                    .collect();
                (found, None)
            }
            Err(err) => (Vec::new(), Some(connect_failure(&err))),
        }
    } else {
        (Vec::new(), None)
    };
    render(&BankFormPage {
        title: bank.name,
        app_name: &session.app.name,
        csrf: &session.csrf(),
        bank: &bank,
        action: &action,
        prefill: "",
        error: error.as_deref(),
        picker: Some(Picker {
            countries: GOCARDLESS_COUNTRIES,
            country,
            query,
            institutions,
        }),
    })
}

#[derive(Deserialize)]
pub(super) struct CredentialsForm {
    csrf: String,
    #[serde(default)]
    username: String,
    #[serde(default)]
    setup_token: String,
    #[serde(default)]
    institution_id: String,
}

impl CredentialsForm {
    /// What the form shows again after a refusal (never a secret).
    fn prefill(&self, bank: &Bank) -> &str {
        match bank.key {
            "gocardless" => &self.institution_id,
            "sandbox" => &self.username,
            _ => "",
        }
    }
}

/// What the provider needs, from the form; `Err`: what is missing.
fn connect_request(
    bank: &Bank,
    form: &CredentialsForm,
    email: &str,
    gocardless_return: String,
) -> Result<(Provider, ConnectRequest), &'static str> {
    match bank.key {
        "sandbox" => {
            let username = form.username.trim();
            if username.is_empty() {
                return Err("Enter the sandbox username (user_good connects).");
            }
            Ok((Provider::Sandbox, sandbox::connect_request(email, username)))
        }
        "simplefin" => {
            let token = form.setup_token.trim();
            if token.is_empty() {
                return Err("Paste the setup token from SimpleFIN Bridge.");
            }
            Ok((
                Provider::SimpleFin,
                ConnectRequest {
                    settings: serde_json::json!({}),
                    secret: Some(token.to_owned()),
                },
            ))
        }
        "gocardless" => {
            let institution = form.institution_id.trim();
            if institution.is_empty() {
                return Err("Enter your bank's GoCardless institution id.");
            }
            Ok((
                Provider::GoCardless,
                ConnectRequest {
                    settings: serde_json::json!({
                        "institution_id": institution,
                        "redirect": gocardless_return,
                    }),
                    secret: None,
                },
            ))
        }
        _ => Err("This bank connects by upload."),
    }
}

/// A connector's refusal, in plain words with what to do.
fn connect_failure(err: &SyncError) -> String {
    match err {
        SyncError::Connect(err) => match err {
            tributary_providers::ConnectorError::InvalidCredentials(_) => {
                "The bank did not accept these details. Check them and try again.".to_owned()
            }
            tributary_providers::ConnectorError::Unavailable { .. } => {
                "The bank cannot be reached right now. Try again in a few minutes.".to_owned()
            }
            other => format!("The bank did not let us connect: {other}. Try again."),
        },
        SyncError::NoSecretKey => {
            "This server cannot store bank credentials yet (no secret key is configured)."
                .to_owned()
        }
        other => {
            log::error!("connecting failed: {other}");
            "Something went wrong on our side. Try again in a moment.".to_owned()
        }
    }
}

/// Runs the connection's first sync on a worker thread; the progress page
/// shows how it goes. A worker that claimed the job first is as good.
pub(super) fn sync_in_background(state: &AppState, connection_id: i64) {
    let Some(engine) = state.engine.clone() else {
        return;
    };
    actix_web::rt::spawn(async move {
        let outcome = web::block(move || {
            engine.sync_now(connection_id, SyncJobKind::Initial, "web-first-sync")
        })
        .await;
        match outcome {
            Ok(Ok(_)) | Ok(Err(SyncError::AlreadyRunning { .. })) => {}
            Ok(Err(err)) => log::warn!("first sync of connection {connection_id}: {err}"),
            Err(err) => log::error!("first sync of connection {connection_id} did not run: {err}"),
        }
    });
}

pub(super) async fn connect(
    req: HttpRequest,
    state: web::Data<AppState>,
    path: web::Path<String>,
    form: web::Form<CredentialsForm>,
) -> Result<HttpResponse, PageError> {
    let session = connecting_session(&req, &state).await?;
    session.check_csrf(&form.csrf)?;
    let bank = find_bank(&state, &path)?;
    let user = session.user()?.clone();
    if holdings(&state, user.id).await?.remaining == Some(0) {
        return Err(limit_reached(&session));
    }
    let action = format!("/connect/banks/{}", bank.key);
    let return_url = state.absolute_url(&req, "/connect/gocardless/return");
    let (provider, request) = match connect_request(&bank, &form, &user.email, return_url) {
        Ok(request) => request,
        Err(missing) => {
            return bank_form(
                &session,
                &bank,
                &action,
                form.prefill(&bank),
                Some(missing),
                StatusCode::BAD_REQUEST,
            );
        }
    };
    let engine = engine(&state)?;
    let connected = web::block(move || engine.connect(user.id, provider, &request)).await?;
    let connection = match connected {
        Ok(connection) => connection,
        Err(err) => {
            let message = connect_failure(&err);
            return bank_form(
                &session,
                &bank,
                &action,
                form.prefill(&bank),
                Some(&message),
                StatusCode::BAD_REQUEST,
            );
        }
    };
    if provider == Provider::GoCardless {
        return to_the_bank(&state, &session, &connection).await;
    }
    sync_in_background(&state, connection.id);
    Ok(see_other(&format!("/connect/progress/{}", connection.id)))
}

/// Sends the person to their bank to consent (GoCardless); the first sync
/// starts when they come back to `/connect/gocardless/return`.
async fn to_the_bank(
    state: &web::Data<AppState>,
    session: &Session,
    connection: &ConnectionRecord,
) -> Result<HttpResponse, PageError> {
    let link = connection
        .settings
        .get("link")
        .and_then(|l| l.as_str())
        .map(str::to_owned)
        .ok_or_else(|| PageError::internal("GoCardless requisition without a link"))?;
    let (session_id, connection_id) = (session.record.id, connection.id);
    with_conn(state, move |conn| {
        Ok(store::set_pending_connection(
            conn,
            session_id,
            Some(connection_id),
        )?)
    })
    .await?;
    Ok(see_other(&link))
}

pub(super) async fn gocardless_return(
    req: HttpRequest,
    state: web::Data<AppState>,
) -> Result<HttpResponse, PageError> {
    let session = connecting_session(&req, &state).await?;
    let Some(connection_id) = session.record.pending_connection_id else {
        return Ok(see_other("/connect/banks"));
    };
    let session_id = session.record.id;
    with_conn(&state, move |conn| {
        Ok(store::set_pending_connection(conn, session_id, None)?)
    })
    .await?;
    sync_in_background(&state, connection_id);
    Ok(see_other(&format!("/connect/progress/{connection_id}")))
}

/// One of the session user's connections, or 404.
async fn own_connection(
    state: &web::Data<AppState>,
    session: &Session,
    raw_id: &str,
) -> Result<ConnectionRecord, PageError> {
    let id: i64 = raw_id.parse().map_err(|_| PageError::not_found())?;
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
    let session = session::load(&req, &state).await?;
    let connection = own_connection(&state, &session, &path).await?;
    let connection_id = connection.id;
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
    let line = lines(&holdings(&state, session.user()?.id).await?)
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
    let session = session::load(&req, &state).await?;
    session.check_csrf(&form.csrf)?;
    let connection = own_connection(&state, &session, &path).await?;
    sync_in_background(&state, connection.id);
    Ok(see_other(&format!("/connect/progress/{}", connection.id)))
}

#[derive(Template)]
#[template(path = "remove.html")]
struct RemovePage<'a> {
    title: &'a str,
    app_name: &'a str,
    csrf: &'a str,
    connection: &'a ConnectionRecord,
}

pub(super) async fn remove_form(
    req: HttpRequest,
    state: web::Data<AppState>,
    path: web::Path<String>,
) -> Result<HttpResponse, PageError> {
    let session = session::load(&req, &state).await?;
    let connection = own_connection(&state, &session, &path).await?;
    render(&RemovePage {
        title: "Remove a connection",
        app_name: &session.app.name,
        csrf: &session.csrf(),
        connection: &connection,
    })
}

pub(super) async fn remove(
    req: HttpRequest,
    state: web::Data<AppState>,
    path: web::Path<String>,
    form: web::Form<CsrfForm>,
) -> Result<HttpResponse, PageError> {
    let session = session::load(&req, &state).await?;
    session.check_csrf(&form.csrf)?;
    let connection = own_connection(&state, &session, &path).await?;
    let (user_id, connection_id) = (connection.user_id, connection.id);
    with_conn(&state, move |conn| {
        Ok(store::delete_connection(conn, user_id, connection_id)?)
    })
    .await?;
    Ok(see_other(if session.is_portal() {
        "/portal"
    } else {
        "/connect/banks"
    }))
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
    let session = session::load(&req, &state).await?;
    let connection = own_connection(&state, &session, &path).await?;
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
    let session = session::load(&req, &state).await?;
    session.check_csrf(&form.csrf)?;
    let connection = own_connection(&state, &session, &path).await?;
    let bank = bank_of(connection.provider).ok_or_else(PageError::not_found)?;
    let action = format!("/connect/connections/{}/reauth", connection.id);
    let email = session.user()?.email.clone();
    let return_url = state.absolute_url(&req, "/connect/gocardless/return");
    let (_, request) = match connect_request(&bank, &form, &email, return_url) {
        Ok(request) => request,
        Err(missing) => {
            return bank_form(
                &session,
                &bank,
                &action,
                form.prefill(&bank),
                Some(missing),
                StatusCode::BAD_REQUEST,
            );
        }
    };
    let engine = engine(&state)?;
    let connection_id = connection.id;
    let reconnected = web::block(move || engine.reconnect(connection_id, &request)).await?;
    match reconnected {
        Ok(connection) if connection.provider == Provider::GoCardless => {
            to_the_bank(&state, &session, &connection).await
        }
        Ok(_) => {
            sync_in_background(&state, connection_id);
            Ok(see_other(&format!("/connect/progress/{connection_id}")))
        }
        Err(err) => {
            let message = connect_failure(&err);
            bank_form(
                &session,
                &bank,
                &action,
                form.prefill(&bank),
                Some(&message),
                StatusCode::BAD_REQUEST,
            )
        }
    }
}

/// Statement upload from the browser: a multipart form with the CSRF token
/// and one or more files; all files are read before anything is stored.
pub(super) async fn upload(
    req: HttpRequest,
    state: web::Data<AppState>,
    mut payload: Multipart,
) -> Result<HttpResponse, PageError> {
    let session = connecting_session(&req, &state).await?;
    let upload = read_upload(&mut payload).await.map_err(|err| match err {
        UploadError::TooLarge => PageError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "The upload is too large",
            "Send fewer files at a time (at most 20 MiB together).",
        ),
        UploadError::Unreadable(why) => PageError::bad_request(why),
    })?;
    session.check_csrf(
        upload
            .fields
            .get("csrf")
            .map(String::as_str)
            .unwrap_or_default(),
    )?;
    let action = "/connect/banks/upload";
    if upload.files.is_empty() {
        return bank_form(
            &session,
            &UPLOAD,
            action,
            "",
            Some("Choose a statement file to upload."),
            StatusCode::BAD_REQUEST,
        );
    }
    let mut statements = Vec::new();
    for (name, bytes) in &upload.files {
        match import::parse(bytes, None) {
            Ok(read) => statements.extend(read),
            Err(err) => {
                let message =
                    format!("{name} does not read as a statement: {err}. Nothing was imported.");
                return bank_form(
                    &session,
                    &UPLOAD,
                    action,
                    "",
                    Some(&message),
                    StatusCode::BAD_REQUEST,
                );
            }
        }
    }
    let user_id = session.user()?.id;
    let now = state.clock.now().naive_utc();
    let connection_id = with_conn(&state, move |conn| {
        import::store(conn, user_id, statements, now).map_err(|err| match err {
            tributary_storage::StorageError::AccountLimit { .. } => PageError::new(
                StatusCode::FORBIDDEN,
                "Account limit reached",
                format!(
                    "{}. Nothing was imported.",
                    err.to_string()
                        .trim_start_matches("ACCOUNT_LIMIT_REACHED: ")
                ),
            ),
            other => other.into(),
        })?;
        connections::list_connections(conn, Some(user_id))?
            .into_iter()
            .find(|c| !c.provider.is_synced())
            .map(|c| c.id)
            .ok_or_else(|| PageError::internal("the import left no statement connection"))
    })
    .await?;
    Ok(see_other(&format!("/connect/progress/{connection_id}")))
}
