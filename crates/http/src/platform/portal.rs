//! `POST /v1/portal_sessions`: a single-use link, valid 15 minutes, where the
//! token's user manages their bank connections.

use crate::auth::BearerToken;
use crate::data::with_conn;
use crate::error::ApiError;
use crate::openapi::responses;
use crate::state::AppState;
use actix_web::{HttpRequest, HttpResponse, web};
use serde::Serialize;
use tributary_auth::oauth;

/// A single-use link to the portal.
#[derive(Serialize, utoipa::ToSchema)]
pub(crate) struct PortalSession {
    /// Send the user here; it works once.
    url: String,
    /// RFC 3339, UTC: 15 minutes from now.
    #[schema(format = DateTime)]
    expires_at: String,
}

#[utoipa::path(
    post,
    path = "/portal_sessions",
    operation_id = "create_portal_session",
    tag = "Users",
    summary = "Make a portal link for the token's user",
    description = "A single-use link, valid 15 minutes, where the user manages their bank connections and budgeting apps.",
    responses(
        (status = 200, description = "The link.", body = PortalSession),
        (status = 401, response = responses::Unauthorized),
        (status = 503, response = responses::Unavailable),
    )
)]
pub(super) async fn create(
    token: BearerToken,
    state: web::Data<AppState>,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    let now = state.clock.now();
    let cache = state.caches.credentials.clone();
    let (token, expires_at) = with_conn(&state, move |conn| {
        let access = token.access(&cache, conn, now)?;
        Ok(oauth::create_portal_session(
            conn,
            access.app_id,
            access.user_id,
            now.naive_utc(),
        )?)
    })
    .await?;
    Ok(HttpResponse::Ok()
        .insert_header(("Cache-Control", "no-store"))
        .json(PortalSession {
            url: state.absolute_url(&req, &format!("/portal/{token}")),
            expires_at: expires_at
                .and_utc()
                .to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        }))
}
