//! `POST /v1/portal_sessions`: a single-use link, valid 15 minutes, where the
//! token's user manages their bank connections.

use crate::auth::BearerViewer;
use crate::data::with_conn;
use crate::error::ApiError;
use crate::state::AppState;
use actix_web::{HttpRequest, HttpResponse, web};
use serde::Serialize;
use tributary_auth::oauth;

#[derive(Serialize)]
struct PortalSession {
    url: String,
    expires_at: String,
}

pub(super) async fn create(
    auth: BearerViewer,
    state: web::Data<AppState>,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    let now = state.clock.now().naive_utc();
    let (app_id, user_id) = (auth.app_id, auth.viewer.user_id);
    let (token, expires_at) = with_conn(&state, move |conn| {
        Ok(oauth::create_portal_session(conn, app_id, user_id, now)?)
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
