//! One connection of the signed-in user: the progress page while a sync
//! runs, trying again, re-authenticating (the data is kept) and removing
//! (the data is erased).

use super::banks::{Bank, ConnectionLine, holdings, lines};
use super::confirm::{Ask, ask_first};
use super::connect::{CredentialsForm, Target, bank_form, submit_credentials, sync_in_background};
use super::header::Header;
use super::page::{PageError, render, see_other};
use super::session::{CsrfForm, with_conn};
use super::visitor::Visitor;
use crate::state::AppState;
use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
use askama::Template;
use tributary_domain::access::Viewer;
use tributary_domain::ids::ConnectionId;
use tributary_domain::model::{ConnectionStatus, SyncJobKind};
use tributary_domain::summary::SyncSummary;
use tributary_providers::sync::{self, Requester, SyncError};
use tributary_storage::connections::{self, ConnectionRecord};
use tributary_storage::sync_jobs;

/// The request's visitor and the connection its path names, which must be
/// the visitor's; for a form, its CSRF token checked first.
pub(super) async fn open<V: Visitor>(
    req: &HttpRequest,
    state: &web::Data<AppState>,
    raw_id: &str,
    csrf: Option<&str>,
) -> Result<(V, ConnectionRecord), PageError> {
    let visitor = V::load(req, state).await?;
    if let Some(csrf) = csrf {
        visitor.check_csrf(csrf)?;
    }
    let connection = own_connection(state, &visitor, raw_id).await?;
    Ok((visitor, connection))
}

/// One of the visitor's connections, or 404.
async fn own_connection(
    state: &web::Data<AppState>,
    visitor: &impl Visitor,
    raw_id: &str,
) -> Result<ConnectionRecord, PageError> {
    let id: ConnectionId = raw_id.parse().map_err(|_| PageError::not_found())?;
    let viewer = Viewer::whole_user(visitor.user().id);
    with_conn(state, move |conn| {
        connections::find_visible(conn, &viewer, id)?.ok_or_else(PageError::not_found)
    })
    .await
}

#[derive(Template)]
#[template(path = "progress.html")]
struct ProgressPage<'a> {
    title: &'a str,
    header: Header,
    csrf: &'a str,
    connection: ConnectionLine,
    working: bool,
    /// What the newest successful sync changed, in a sentence.
    changed: Option<String>,
    continue_to: &'a str,
    continue_label: &'a str,
}

/// A sync's changes as a person reads them: "The sync at 2026-11-28 09:14
/// UTC added 12 transactions, updated 1 and removed none; 1 account is
/// new."
fn what_changed(finished: chrono::NaiveDateTime, summary: &SyncSummary) -> String {
    let count = |n: usize, one: &str, many: &str| match n {
        0 => format!("no {many}"),
        1 => format!("1 {one}"),
        n => format!("{n} {many}"),
    };
    let nothing = |n: usize| {
        if n == 0 {
            "none".to_owned()
        } else {
            n.to_string()
        }
    };
    let mut sentence = format!(
        "The sync at {} added {}, updated {} and removed {}",
        super::page::when(Some(finished), ""),
        count(summary.transactions_added, "transaction", "transactions"),
        nothing(summary.transactions_updated),
        nothing(summary.transactions_removed),
    );
    if summary.posted_from_pending > 0 {
        sentence.push_str(&format!(
            "; {} pending became posted",
            summary.posted_from_pending
        ));
    }
    if summary.accounts_created > 0 {
        sentence.push_str(&format!(
            "; {} new",
            count(summary.accounts_created, "account is", "accounts are")
        ));
    }
    sentence.push('.');
    sentence
}

pub(super) async fn progress<V: Visitor>(
    req: HttpRequest,
    state: web::Data<AppState>,
    path: web::Path<String>,
) -> Result<HttpResponse, PageError> {
    // Polled every second while a sync runs: the user's connections and
    // accounts are read once, and the connection is found among them.
    let visitor = V::load(&req, &state).await?;
    let connection_id: ConnectionId = path.parse().map_err(|_| PageError::not_found())?;
    let holdings = holdings(&state, visitor.user().id).await?;
    let connection = holdings
        .connections
        .iter()
        .find(|c| c.id == connection_id)
        .ok_or_else(PageError::not_found)?;
    let (job_running, last_success) = with_conn(&state, move |conn| {
        Ok((
            sync_jobs::active_job(conn, connection_id)?.is_some(),
            sync_jobs::last_success(conn, connection_id)?,
        ))
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
        header: visitor.header(),
        csrf: &visitor.csrf(),
        connection: line,
        working,
        changed: last_success.map(|(finished, summary)| what_changed(finished, &summary)),
        continue_to: visitor.continue_to(),
        continue_label: visitor.continue_label(),
    })
}

pub(super) async fn retry<V: Visitor>(
    req: HttpRequest,
    state: web::Data<AppState>,
    path: web::Path<String>,
    form: web::Form<CsrfForm>,
) -> Result<HttpResponse, PageError> {
    let (_, connection) = open::<V>(&req, &state, &path, Some(&form.csrf)).await?;
    sync_in_background(&state, connection.id).await;
    Ok(see_other(&format!("/connect/progress/{}", connection.id)))
}

/// "Sync now": the API's rule and limit ([`sync::request_sync`], one
/// on-demand sync a minute per connection); the progress page shows how it
/// goes while a worker runs the job.
pub(super) async fn sync_now<V: Visitor>(
    req: HttpRequest,
    state: web::Data<AppState>,
    path: web::Path<String>,
    form: web::Form<CsrfForm>,
) -> Result<HttpResponse, PageError> {
    let (_, connection) = open::<V>(&req, &state, &path, Some(&form.csrf)).await?;
    let (connection_id, now) = (connection.id, state.clock.now().naive_utc());
    with_conn(&state, move |conn| {
        sync::request_sync(
            conn,
            &connection,
            SyncJobKind::OnDemand,
            Requester::Client,
            now,
        )
        .map(|_| ())
        .map_err(|err| match err {
            SyncError::RateLimited { wait, .. } => PageError::new(
                StatusCode::TOO_MANY_REQUESTS,
                "Synced a moment ago",
                format!(
                    "This bank was synced on request less than a minute ago. Try again in {} seconds.",
                    wait.as_secs() + u64::from(wait.subsec_nanos() > 0)
                ),
            ),
            SyncError::Disconnected(_) => PageError::new(
                StatusCode::CONFLICT,
                "This connection is disconnected",
                "Sign in to the bank again to sync it.",
            ),
            SyncError::NotSynced(_) => PageError::new(
                StatusCode::CONFLICT,
                "Statements are not synced",
                "Accounts from statement files change when you upload a newer statement.",
            ),
            SyncError::Storage(err) => err.into(),
            other => PageError::internal(other),
        })
    })
    .await?;
    Ok(see_other(&format!("/connect/progress/{connection_id}")))
}

/// What the page before removing a connection asks.
fn removing(bank: &str) -> Ask {
    Ask {
        title: "Remove a connection",
        question: format!("Remove {bank}?"),
        consequence: "Its accounts, transactions, balances and holdings are erased from this service, and nothing can read them any more.",
        button: "Remove and erase",
        button_id: "remove",
        danger: true,
        keep: "Keep it",
    }
}

/// What the page before disconnecting asks: the data stays, so the
/// button is not a red one.
fn disconnecting(bank: &str) -> Ask {
    Ask {
        title: "Disconnect a bank",
        question: format!("Disconnect {bank}?"),
        consequence: "It is no longer synced. Its accounts and transactions stay readable as they are; sign in to the bank again to resume.",
        button: "Disconnect",
        button_id: "disconnect",
        danger: false,
        keep: "Keep it connected",
    }
}

async fn confirm_page<V: Visitor>(
    req: &HttpRequest,
    state: &web::Data<AppState>,
    path: &str,
    ask: fn(&str) -> Ask,
) -> Result<HttpResponse, PageError> {
    let (visitor, connection) = open::<V>(req, state, path, None).await?;
    let ask = ask(&connection.institution_name);
    ask_first(req, visitor.header(), &visitor.csrf(), &ask, visitor.home())
}

pub(super) async fn remove_form<V: Visitor>(
    req: HttpRequest,
    state: web::Data<AppState>,
    path: web::Path<String>,
) -> Result<HttpResponse, PageError> {
    confirm_page::<V>(&req, &state, &path, removing).await
}

pub(super) async fn remove<V: Visitor>(
    req: HttpRequest,
    state: web::Data<AppState>,
    path: web::Path<String>,
    form: web::Form<CsrfForm>,
) -> Result<HttpResponse, PageError> {
    let (visitor, connection) = open::<V>(&req, &state, &path, Some(&form.csrf)).await?;
    let (user_id, connection_id) = (connection.user_id, connection.id);
    let now = state.clock.now().naive_utc();
    with_conn(&state, move |conn| {
        Ok(tributary_storage::connections::delete_connection(
            conn,
            user_id,
            connection_id,
            now,
        )?)
    })
    .await?;
    Ok(see_other(visitor.home()))
}

pub(super) async fn disconnect_form<V: Visitor>(
    req: HttpRequest,
    state: web::Data<AppState>,
    path: web::Path<String>,
) -> Result<HttpResponse, PageError> {
    confirm_page::<V>(&req, &state, &path, disconnecting).await
}

/// Stops syncing the connection and keeps its data (the rule every surface
/// shares: `tributary_providers::sync::disconnect`).
pub(super) async fn disconnect<V: Visitor>(
    req: HttpRequest,
    state: web::Data<AppState>,
    path: web::Path<String>,
    form: web::Form<CsrfForm>,
) -> Result<HttpResponse, PageError> {
    let (visitor, connection) = open::<V>(&req, &state, &path, Some(&form.csrf)).await?;
    let now = state.clock.now().naive_utc();
    with_conn(&state, move |conn| {
        sync::disconnect(conn, &connection, now)
            .map(|_| ())
            .map_err(|err| match err {
                SyncError::Storage(err) => err.into(),
                _ => PageError::not_found(),
            })
    })
    .await?;
    Ok(see_other(visitor.home()))
}

/// The bank `connection` is at.
fn bank_of(connection: &ConnectionRecord) -> Option<Bank> {
    tributary_providers::catalog::describe(connection.provider).map(Bank::of)
}

pub(super) async fn reauth_form<V: Visitor>(
    req: HttpRequest,
    state: web::Data<AppState>,
    path: web::Path<String>,
) -> Result<HttpResponse, PageError> {
    let (visitor, connection) = open::<V>(&req, &state, &path, None).await?;
    let bank = bank_of(&connection).ok_or_else(PageError::not_found)?;
    // Its provider's enrollment script, in repair (where there is one).
    let (bank, trouble) = bank
        .offering(&state, visitor.user().id, Some(&connection.settings))
        .await?;
    let action = format!("/connect/connections/{}/reauth", connection.id);
    // The same login or the same bank as before, unless changed.
    let prefill = bank
        .connector
        .and_then(|c| c.connect.remembered_field())
        .and_then(|field| field.remembered_as)
        .and_then(|setting| connection.settings.get(setting))
        .and_then(|v| v.as_str())
        .unwrap_or_default()
        .to_owned();
    bank_form(
        &visitor,
        &bank,
        &action,
        &prefill,
        trouble.as_deref(),
        StatusCode::OK,
    )
}

pub(super) async fn reauth<V: Visitor>(
    req: HttpRequest,
    state: web::Data<AppState>,
    path: web::Path<String>,
    form: web::Form<CredentialsForm>,
) -> Result<HttpResponse, PageError> {
    let (visitor, connection) = open::<V>(&req, &state, &path, Some(form.csrf())).await?;
    let bank = bank_of(&connection).ok_or_else(PageError::not_found)?;
    let action = format!("/connect/connections/{}/reauth", connection.id);
    let target = Target::Existing(connection.id);
    let offered = (&bank, Some(&connection.settings));
    submit_credentials(&req, &state, &visitor, offered, &action, &form, target).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sync_says_what_it_changed_in_words() {
        let at = chrono::NaiveDate::from_ymd_opt(2026, 11, 28)
            .unwrap()
            .and_hms_opt(9, 14, 0)
            .unwrap();
        let summary = SyncSummary {
            transactions_added: 12,
            transactions_updated: 1,
            accounts_created: 1,
            ..SyncSummary::default()
        };
        assert_eq!(
            what_changed(at, &summary),
            "The sync at 2026-11-28 09:14 UTC added 12 transactions, updated 1 and removed none; 1 account is new."
        );
        assert_eq!(
            what_changed(at, &SyncSummary::default()),
            "The sync at 2026-11-28 09:14 UTC added no transactions, updated none and removed none."
        );
    }
}
