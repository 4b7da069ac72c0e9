//! RFC 8414 OAuth 2.0 Authorization Server Metadata, at
//! `/.well-known/oauth-authorization-server`, so that standard client
//! libraries configure themselves. The issuer is the server's origin
//! (`TRIBUTARY_PUBLIC_URL`, else the request's scheme and host:
//! [`AppState::base_url`]), so the well-known path has no suffix (RFC 8414
//! §3). An issuer read from the request is that request's alone: such an
//! answer is never kept by a shared cache, so a forged `Host` cannot put
//! another server's endpoints in what others read.

use crate::state::AppState;
use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse, web};
use serde::Serialize;

/// RFC 8414 authorization server metadata.
#[derive(Serialize, utoipa::ToSchema)]
pub(crate) struct Metadata {
    issuer: String,
    authorization_endpoint: String,
    token_endpoint: String,
    revocation_endpoint: String,
    #[schema(value_type = Vec<String>)]
    response_types_supported: [&'static str; 1],
    #[schema(value_type = Vec<String>)]
    response_modes_supported: [&'static str; 1],
    #[schema(value_type = Vec<String>)]
    grant_types_supported: [&'static str; 2],
    #[schema(value_type = Vec<String>)]
    token_endpoint_auth_methods_supported: [&'static str; 3],
    #[schema(value_type = Vec<String>)]
    revocation_endpoint_auth_methods_supported: [&'static str; 3],
    #[schema(value_type = Vec<String>)]
    code_challenge_methods_supported: [&'static str; 1],
    /// RFC 9207: every authorization response carries `iss`, this issuer.
    authorization_response_iss_parameter_supported: bool,
}

/// The authorization server's issuer identifier (RFC 8414 §2), as the
/// metadata and the `iss` of authorization responses (RFC 9207) name it.
pub(crate) fn issuer(state: &AppState, req: &HttpRequest) -> String {
    state.base_url(req)
}

/// How long the metadata may be kept, and by whom: an hour by anyone when
/// its URLs are the operator's `TRIBUTARY_PUBLIC_URL`; otherwise they came
/// from the request, and no cache keeps them.
pub(crate) fn cache_control(state: &AppState) -> &'static str {
    if state.has_public_url() {
        "public, max-age=3600"
    } else {
        "private, no-store"
    }
}

#[utoipa::path(
    get,
    path = "/.well-known/oauth-authorization-server",
    operation_id = "authorization_server_metadata",
    tag = "OAuth",
    summary = "Authorization server metadata (RFC 8414)",
    security(()),
    responses((status = 200, description = "Where the endpoints are and what they support.", body = Metadata))
)]
pub(super) async fn metadata(req: HttpRequest, state: web::Data<AppState>) -> HttpResponse {
    let url = |path: &str| state.absolute_url(&req, path);
    // Public apps authenticate with `none` (client_id only, PKCE required);
    // confidential ones with their secret in the Basic header or the body.
    let auth_methods = ["client_secret_basic", "client_secret_post", "none"];
    HttpResponse::Ok()
        .insert_header((header::CACHE_CONTROL, cache_control(&state)))
        .json(Metadata {
            issuer: issuer(&state, &req),
            authorization_endpoint: url("/api/platform/oauth/authorize"),
            token_endpoint: url("/api/platform/oauth/token"),
            revocation_endpoint: url("/api/platform/oauth/revoke"),
            response_types_supported: ["code"],
            response_modes_supported: ["query"],
            grant_types_supported: ["authorization_code", "refresh_token"],
            token_endpoint_auth_methods_supported: auth_methods,
            revocation_endpoint_auth_methods_supported: auth_methods,
            code_challenge_methods_supported: ["S256"],
            authorization_response_iss_parameter_supported: true,
        })
}
