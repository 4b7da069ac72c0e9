//! Connections on the Personal interface (our extension of the contract):
//! `GET /connections` shows each connection's status and last error;
//! `POST /connections/{id}/sync` asks for a sync now and answers 202 with the
//! queued job, at most once a minute per connection; `POST
//! /connections/{id}/disconnect` stops its syncs and keeps its data.

use crate::auth::{self, Credential};
use crate::error::ApiError;
use crate::routes;
use crate::state::AppState;
use actix_web::{HttpResponse, web};
use chrono::NaiveDateTime;
use serde::Serialize;
use tributary_domain::ids::{ConnectionId, SyncJobId};
use tributary_domain::model::SyncJobKind;
use tributary_providers::sync::{self, Requester, SyncError};
use tributary_storage::AnyConnection;
use tributary_storage::connections::{self, ConnectionRecord};

pub fn configure<A: Credential>(cfg: &mut web::ServiceConfig) {
    cfg.service(routes::get("/connections", list::<A>))
        .service(routes::one(
            "/connections/{connectionId}/sync",
            "POST",
            web::post().to(request_sync::<A>),
        ))
        .service(routes::one(
            "/connections/{connectionId}/disconnect",
            "POST",
            web::post().to(disconnect::<A>),
        ));
}

/// The `{connectionId}` of a path: a positive integer.
fn connection_id(path: &str) -> Result<ConnectionId, ApiError> {
    path.parse::<i64>()
        .ok()
        .filter(|id| *id > 0)
        .map(ConnectionId::new)
        .ok_or_else(|| {
            ApiError::bad_request(
                "INVALID_CONNECTION_ID",
                format!("connectionId must be a positive integer, got `{path}`."),
            )
        })
}

fn connection_not_found() -> ApiError {
    ApiError::not_found(
        "CONNECTION_NOT_FOUND",
        "No connection with this id is visible with these credentials.",
    )
}

/// Runs `work` on the connection the path names, if the caller may see it
/// (else 404, the same for someone else's and a missing one), at `now`.
async fn with_visible_connection<C: Credential, T: Send + 'static>(
    credential: C,
    state: &web::Data<AppState>,
    path: &str,
    work: impl FnOnce(&mut AnyConnection, ConnectionRecord, NaiveDateTime) -> Result<T, ApiError>
    + Send
    + 'static,
) -> Result<T, ApiError> {
    let id = auth::checked(state, &credential, connection_id(path)).await?;
    let now = state.clock.now().naive_utc();
    auth::as_viewer(state, credential, move |conn, viewer| {
        let connection =
            connections::find_visible(conn, &viewer, id)?.ok_or_else(connection_not_found)?;
        work(conn, connection, now)
    })
    .await
}

/// Stops syncing a connection and keeps its data (200 with the connection).
async fn disconnect<C: Credential>(
    credential: C,
    state: web::Data<AppState>,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let connection = with_visible_connection(credential, &state, &path, |conn, connection, now| {
        sync::disconnect(conn, &connection, now).map_err(|err| match err {
            SyncError::NotSynced(_) => not_synced(),
            SyncError::Storage(err) => err.into(),
            other => ApiError::internal(other),
        })
    })
    .await?;
    Ok(HttpResponse::Ok().json(Connection::from(connection)))
}

fn not_synced() -> ApiError {
    ApiError::new(
        actix_web::http::StatusCode::CONFLICT,
        "CONNECTION_NOT_SYNCED",
        "This connection holds imported statements, which are not synced: upload new files to /imports instead.",
    )
}

fn rfc3339(at: Option<NaiveDateTime>) -> Option<String> {
    at.map(|t| {
        t.and_utc()
            .to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
    })
}

#[derive(Serialize)]
struct Connection {
    id: ConnectionId,
    provider: &'static str,
    institution_name: String,
    status: &'static str,
    /// Why the last sync failed, or what the provider reported beside its data.
    status_reason: Option<String>,
    last_synced_at: Option<String>,
    next_sync_at: Option<String>,
    consecutive_failures: i32,
}

impl From<ConnectionRecord> for Connection {
    fn from(c: ConnectionRecord) -> Self {
        Connection {
            id: c.id,
            provider: c.provider.as_str(),
            institution_name: c.institution_name,
            status: c.status.as_str(),
            status_reason: c.status_reason,
            last_synced_at: rfc3339(c.last_synced_at),
            next_sync_at: rfc3339(c.next_sync_at),
            consecutive_failures: c.consecutive_failures,
        }
    }
}

#[derive(Serialize)]
struct ConnectionList {
    connections: Vec<Connection>,
    total: usize,
}

#[derive(Serialize)]
struct SyncRequested {
    job_id: SyncJobId,
    /// `queued` or `running`.
    status: &'static str,
    /// False when the connection already had a job queued or running.
    created: bool,
}

async fn list<C: Credential>(
    credential: C,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ApiError> {
    let list = auth::as_viewer(&state, credential, |conn, viewer| {
        Ok(connections::list_visible(conn, &viewer)?)
    })
    .await?;
    let connections: Vec<Connection> = list.into_iter().map(Into::into).collect();
    Ok(HttpResponse::Ok().json(ConnectionList {
        total: connections.len(),
        connections,
    }))
}

async fn request_sync<C: Credential>(
    credential: C,
    state: web::Data<AppState>,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let answer = with_visible_connection(credential, &state, &path, |conn, connection, now| {
        let requested = sync::request_sync(
            conn,
            &connection,
            SyncJobKind::OnDemand,
            Requester::Client,
            now,
        )
            .map_err(|err| match err {
                SyncError::Disconnected(_) => ApiError::new(
                    actix_web::http::StatusCode::CONFLICT,
                    "CONNECTION_DISCONNECTED",
                    "This connection is disconnected; sign in to the bank again (the portal's \"Sign in to the bank again\") to sync it.",
                ),
                SyncError::NotSynced(_) => not_synced(),
                SyncError::RateLimited { wait, .. } => ApiError::too_many_requests(
                    "SYNC_RATE_LIMITED",
                    "This connection was synced on request less than a minute ago",
                    // Rounded up: asking again after the whole seconds succeeds.
                    wait.as_secs() + u64::from(wait.subsec_nanos() > 0),
                ),
                SyncError::Storage(err) => err.into(),
                other => ApiError::internal(other),
            })?;
        Ok(SyncRequested {
            job_id: requested.job_id,
            status: requested.status.as_str(),
            created: requested.created,
        })
    })
    .await?;
    Ok(HttpResponse::Accepted().json(answer))
}
