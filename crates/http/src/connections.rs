//! Connections on the Personal interface (our extension of the contract):
//! `GET /connections` shows each connection's status and last error;
//! `POST /connections/{id}/sync` asks for a sync now and answers 202 with the
//! queued job, at most once a minute per connection; `POST
//! /connections/{id}/disconnect` stops its syncs and keeps its data.

use crate::auth::{self, Credential};
use crate::error::{ApiError, Envelope};
use crate::openapi::responses;
use crate::routes::Operation;
use crate::state::AppState;
use actix_web::{HttpResponse, web};
use chrono::NaiveDateTime;
use serde::Serialize;
use tributary_domain::ids::{ConnectionId, SyncJobId};
use tributary_domain::model::SyncJobKind;
use tributary_providers::sync::{self, Requester, SyncError};
use tributary_storage::AnyConnection;
use tributary_storage::connections::{self, ConnectionRecord};

/// The connection endpoints, for credentials `A`.
pub fn operations<A: Credential>() -> Vec<Operation> {
    vec![
        Operation::new::<__path_list, _, _>(list::<A>),
        Operation::new::<__path_request_sync, _, _>(request_sync::<A>),
        Operation::new::<__path_disconnect, _, _>(disconnect::<A>),
    ]
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
#[utoipa::path(
    post,
    path = "/connections/{connectionId}/disconnect",
    operation_id = "disconnect_connection",
    tag = "Connections",
    summary = "Disconnect a connection",
    description = "Stops its syncs and keeps its data (signing in to the bank again in the portal or dashboard resumes it). Disconnecting twice answers the same.",
    params(("connectionId" = i64, Path, description = "The connection's id.", minimum = 1)),
    responses(
        (status = 200, description = "The connection, now `DISCONNECTED`.", body = Connection),
        (status = 400, description = "`INVALID_CONNECTION_ID`.", body = Envelope),
        (status = 401, response = responses::Unauthorized),
        (status = 404, description = "`CONNECTION_NOT_FOUND`: missing, another user's, or holding none of a restricted key's accounts.", body = Envelope),
        (status = 409, description = "`CONNECTION_NOT_SYNCED`: the statement-import connection is never synced.", body = Envelope),
        (status = 503, response = responses::Unavailable),
    )
)]
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

/// A link to a bank or provider, and how its syncs go.
#[derive(Serialize, utoipa::ToSchema)]
pub(crate) struct Connection {
    #[schema(value_type = i64, minimum = 1, examples(3))]
    id: ConnectionId,
    /// sandbox, simplefin, gocardless, import.
    #[schema(value_type = String, examples("sandbox"))]
    provider: String,
    institution_name: String,
    /// ACTIVE, REAUTH_REQUIRED, ERROR, DISCONNECTED.
    #[schema(value_type = String, examples("ACTIVE"))]
    status: &'static str,
    /// Why the last sync failed, or what the provider reported beside its data.
    #[schema(required = true)]
    status_reason: Option<String>,
    /// RFC 3339, UTC.
    #[schema(required = true, format = DateTime)]
    last_synced_at: Option<String>,
    /// RFC 3339, UTC; null when none is planned.
    #[schema(required = true, format = DateTime)]
    next_sync_at: Option<String>,
    consecutive_failures: i32,
}

impl From<ConnectionRecord> for Connection {
    fn from(c: ConnectionRecord) -> Self {
        Connection {
            id: c.id,
            provider: c.provider.to_string(),
            institution_name: c.institution_name,
            status: c.status.as_str(),
            status_reason: c.status_reason,
            last_synced_at: rfc3339(c.last_synced_at),
            next_sync_at: rfc3339(c.next_sync_at),
            consecutive_failures: c.consecutive_failures,
        }
    }
}

#[derive(Serialize, utoipa::ToSchema)]
pub(crate) struct ConnectionList {
    connections: Vec<Connection>,
    total: usize,
}

/// The sync job that will run (or runs) for the request.
#[derive(Serialize, utoipa::ToSchema)]
pub(crate) struct SyncRequested {
    #[schema(value_type = i64, minimum = 1)]
    job_id: SyncJobId,
    /// `queued` or `running`.
    #[schema(value_type = String, examples("queued"))]
    status: &'static str,
    /// False when the connection already had a job queued or running.
    created: bool,
}

#[utoipa::path(
    get,
    path = "/connections",
    operation_id = "list_connections",
    tag = "Connections",
    summary = "List connections",
    description = "Each connection's status, last and next sync, and why the last sync failed.",
    responses(
        (status = 200, description = "The connections.", body = ConnectionList, links(
            ("sync" = (operation_id = "sync_connection", parameters(("connectionId" = "$response.body#/connections/0/id")), description = "Sync the first connection now.")),
            ("disconnect" = (operation_id = "disconnect_connection", parameters(("connectionId" = "$response.body#/connections/0/id")), description = "Disconnect the first connection.")),
        )),
        (status = 401, response = responses::Unauthorized),
        (status = 503, response = responses::Unavailable),
    )
)]
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

#[utoipa::path(
    post,
    path = "/connections/{connectionId}/sync",
    operation_id = "sync_connection",
    tag = "Connections",
    summary = "Sync a connection now",
    description = "Queues a sync, at most one asked for a minute per connection. While one is queued or running, asking again answers that job with `created: false`.",
    params(("connectionId" = i64, Path, description = "The connection's id.", minimum = 1)),
    responses(
        (status = 202, description = "The queued or running job.", body = SyncRequested),
        (status = 400, description = "`INVALID_CONNECTION_ID`.", body = Envelope),
        (status = 401, response = responses::Unauthorized),
        (status = 404, description = "`CONNECTION_NOT_FOUND`.", body = Envelope),
        (status = 409, description = "`CONNECTION_NOT_SYNCED` (statement imports) or `CONNECTION_DISCONNECTED`.", body = Envelope),
        (status = 429, description = "`SYNC_RATE_LIMITED`: `Retry-After` says when to ask again.", body = Envelope),
        (status = 503, response = responses::Unavailable),
    )
)]
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
