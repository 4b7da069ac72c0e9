//! The authorization server assistants find from `/mcp` (the MCP
//! authorization specification; docs/mcp.md, "OAuth"):
//!
//! - `GET /.well-known/oauth-protected-resource[/mcp]`: Protected Resource
//!   Metadata (RFC 9728), named by the 401 of `/mcp`;
//! - `GET /.well-known/oauth-authorization-server`: Authorization Server
//!   Metadata (RFC 8414);
//! - `POST /mcp/oauth/register`: Dynamic Client Registration (RFC 7591),
//!   public clients only;
//! - `POST /mcp/oauth/token`: the authorization code (PKCE S256) and
//!   refresh token grants, tokens bound to `/mcp` (RFC 8707);
//! - `POST /mcp/oauth/revoke`: RFC 7009.
//!
//! The consent page (`/mcp/oauth/authorize`) is the Personal dashboard's
//! (`crate::web::dashboard`). Token rules (rotation, replay) are the
//! authorization server's in `tributary_auth::oauth`.

use crate::platform::metadata::cache_control;
use crate::platform::oauth::{TokenError, parameters, required};
use crate::state::AppState;
use actix_web::http::StatusCode;
use actix_web::http::header::{self, ContentType};
use actix_web::{HttpRequest, HttpResponse, web};
use serde::{Deserialize, Serialize};
use tributary_auth::mcp::{self as assistants, Registration, RegistrationError};
use tributary_auth::oauth::{self, OAuthError};
use tributary_storage::mcp_clients;

/// Where the consent page is.
pub const AUTHORIZE_PATH: &str = "/mcp/oauth/authorize";
const TOKEN_PATH: &str = "/mcp/oauth/token";
const REGISTER_PATH: &str = "/mcp/oauth/register";
const REVOKE_PATH: &str = "/mcp/oauth/revoke";
/// RFC 9728 §3.1: the metadata of the resource `/mcp` is at the
/// well-known path with the resource's path appended.
pub const RESOURCE_METADATA_PATH: &str = "/.well-known/oauth-protected-resource/mcp";
/// The only scope: reading what the grant's accounts hold.
const SCOPE: &str = "mcp";

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.service(crate::routes::get(
        RESOURCE_METADATA_PATH,
        resource_metadata,
    ))
    .service(crate::routes::get(
        "/.well-known/oauth-protected-resource",
        resource_metadata,
    ))
    .service(crate::routes::get(
        "/.well-known/oauth-authorization-server",
        server_metadata,
    ))
    .service(crate::routes::only(
        web::resource(REGISTER_PATH)
            .app_data(web::PayloadConfig::new(16 * 1024))
            .route(web::post().to(register)),
        "POST",
    ))
    .service(crate::routes::only(
        web::resource(TOKEN_PATH)
            .app_data(web::PayloadConfig::new(16 * 1024))
            .route(web::post().to(token)),
        "POST",
    ))
    .service(crate::routes::only(
        web::resource(REVOKE_PATH)
            .app_data(web::PayloadConfig::new(16 * 1024))
            .route(web::post().to(revoke)),
        "POST",
    ));
}

/// This server's identifier as an authorization server (RFC 8414 §2):
/// the same origin the Platform's metadata names.
pub(crate) use crate::platform::metadata::issuer;

/// The resource tokens are for (RFC 8707): `/mcp` at this server.
pub fn resource(state: &AppState, req: &HttpRequest) -> String {
    state.absolute_url(req, super::PATH)
}

/// `resource` as a client sent it is this server's `/mcp` (a trailing
/// slash aside); RFC 8707 lets a client name it at both steps.
pub fn names_this_resource(state: &AppState, req: &HttpRequest, asked: &str) -> bool {
    asked.trim_end_matches('/') == resource(state, req)
}

/// RFC 9728 Protected Resource Metadata.
#[derive(Serialize)]
struct ResourceMetadata {
    resource: String,
    authorization_servers: Vec<String>,
    bearer_methods_supported: [&'static str; 1],
    scopes_supported: [&'static str; 1],
    resource_name: &'static str,
}

async fn resource_metadata(req: HttpRequest, state: web::Data<AppState>) -> HttpResponse {
    HttpResponse::Ok()
        .insert_header((header::CACHE_CONTROL, cache_control(&state)))
        .json(ResourceMetadata {
            resource: resource(&state, &req),
            authorization_servers: vec![issuer(&state, &req)],
            bearer_methods_supported: ["header"],
            scopes_supported: [SCOPE],
            resource_name: "Tributary (MCP)",
        })
}

/// RFC 8414 Authorization Server Metadata.
#[derive(Serialize)]
struct ServerMetadata {
    issuer: String,
    authorization_endpoint: String,
    token_endpoint: String,
    registration_endpoint: String,
    revocation_endpoint: String,
    scopes_supported: [&'static str; 1],
    response_types_supported: [&'static str; 1],
    response_modes_supported: [&'static str; 1],
    grant_types_supported: [&'static str; 2],
    token_endpoint_auth_methods_supported: [&'static str; 1],
    revocation_endpoint_auth_methods_supported: [&'static str; 1],
    code_challenge_methods_supported: [&'static str; 1],
    authorization_response_iss_parameter_supported: bool,
}

async fn server_metadata(req: HttpRequest, state: web::Data<AppState>) -> HttpResponse {
    let url = |path: &str| state.absolute_url(&req, path);
    HttpResponse::Ok()
        .insert_header((header::CACHE_CONTROL, cache_control(&state)))
        .json(ServerMetadata {
            issuer: issuer(&state, &req),
            authorization_endpoint: url(AUTHORIZE_PATH),
            token_endpoint: url(TOKEN_PATH),
            registration_endpoint: url(REGISTER_PATH),
            revocation_endpoint: url(REVOKE_PATH),
            scopes_supported: [SCOPE],
            response_types_supported: ["code"],
            response_modes_supported: ["query"],
            grant_types_supported: ["authorization_code", "refresh_token"],
            // Assistants are public clients: PKCE protects their codes.
            token_endpoint_auth_methods_supported: ["none"],
            revocation_endpoint_auth_methods_supported: ["none"],
            code_challenge_methods_supported: ["S256"],
            authorization_response_iss_parameter_supported: true,
        })
}

/// What a client sends to register (RFC 7591 §2); fields not listed are
/// metadata this server does not keep, ignored as §2 allows.
#[derive(Deserialize)]
struct RegistrationRequest {
    #[serde(default)]
    redirect_uris: Vec<String>,
    client_name: Option<String>,
    grant_types: Option<Vec<String>>,
    response_types: Option<Vec<String>>,
}

/// RFC 7591 §3.2.1: what was registered.
#[derive(Serialize)]
struct Registered {
    client_id: String,
    client_id_issued_at: i64,
    client_name: String,
    redirect_uris: Vec<String>,
    grant_types: [&'static str; 2],
    response_types: [&'static str; 1],
    token_endpoint_auth_method: &'static str,
    scope: &'static str,
}

fn registration_error(status: StatusCode, code: &str, description: &str) -> HttpResponse {
    HttpResponse::build(status)
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .json(serde_json::json!({"error": code, "error_description": description}))
}

async fn register(req: HttpRequest, state: web::Data<AppState>, body: web::Bytes) -> HttpResponse {
    let asked: RegistrationRequest = match serde_json::from_slice(&body) {
        Ok(asked) => asked,
        Err(err) => {
            return registration_error(
                StatusCode::BAD_REQUEST,
                "invalid_client_metadata",
                &format!("the body is not the JSON of a client registration: {err}"),
            );
        }
    };
    // What was registered is what was asked, checked: stored as given.
    let redirect_uris = asked.redirect_uris.clone();
    let registration = Registration {
        redirect_uris: asked.redirect_uris,
        client_name: asked.client_name,
        grant_types: asked.grant_types,
        response_types: asked.response_types,
    };
    let (ip, now) = (state.client_ip(&req), state.clock.now().naive_utc());
    let registered = crate::fault::with_conn(&state, move |conn| {
        Ok::<_, crate::error::ApiError>(assistants::register(conn, &registration, &ip, now))
    })
    .await;
    match registered {
        Err(err) => actix_web::ResponseError::error_response(&err),
        Ok(Err(RegistrationError::Storage(err))) => {
            actix_web::ResponseError::error_response(&crate::error::ApiError::from(err))
        }
        Ok(Err(limited @ RegistrationError::RateLimited)) => {
            let mut response = registration_error(
                StatusCode::TOO_MANY_REQUESTS,
                limited.code(),
                &limited.to_string(),
            );
            response.headers_mut().insert(
                header::RETRY_AFTER,
                header::HeaderValue::from_static("3600"),
            );
            response
        }
        Ok(Err(refused)) => registration_error(
            StatusCode::BAD_REQUEST,
            refused.code(),
            &refused.to_string(),
        ),
        Ok(Ok(client)) => HttpResponse::Created()
            .insert_header((header::CACHE_CONTROL, "no-store"))
            .json(Registered {
                client_id: client.client_id,
                client_id_issued_at: client.created_at.and_utc().timestamp(),
                client_name: client.name,
                redirect_uris,
                grant_types: ["authorization_code", "refresh_token"],
                response_types: ["code"],
                token_endpoint_auth_method: "none",
                scope: SCOPE,
            }),
    }
}

/// A token pair for an assistant.
#[derive(Serialize)]
struct TokenResponse {
    access_token: String,
    refresh_token: String,
    token_type: &'static str,
    expires_in: i64,
    scope: &'static str,
}

async fn token(
    req: HttpRequest,
    state: web::Data<AppState>,
    body: web::Bytes,
) -> Result<HttpResponse, TokenError> {
    let params = with_basic_client(&req, parameters(&req, &body)?);
    if let Some(asked) = params.get("resource")
        && !names_this_resource(&state, &req, asked)
    {
        return Err(OAuthError::InvalidTarget(format!(
            "`resource` must be {} (tokens here are for it alone)",
            resource(&state, &req)
        ))
        .into());
    }
    let now = state.clock.now().naive_utc();
    let pair = crate::fault::with_conn(&state, move |conn| {
        grant(conn, &params, now).map_err(TokenError::from)
    })
    .await?;
    Ok(HttpResponse::Ok()
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .insert_header((header::PRAGMA, "no-cache"))
        .content_type(ContentType::json())
        .json(TokenResponse {
            access_token: pair.access_token,
            refresh_token: pair.refresh_token,
            token_type: "Bearer",
            expires_in: pair.expires_in,
            scope: SCOPE,
        }))
}

/// `params` with `client_id` taken from an HTTP Basic header when the body
/// has none: some client libraries send a public client's id that way,
/// with an empty secret (a secret, if any, is refused by [`assistant`]).
fn with_basic_client(
    req: &HttpRequest,
    mut params: std::collections::HashMap<String, String>,
) -> std::collections::HashMap<String, String> {
    if !params.contains_key("client_id")
        && let Some(Ok((id, secret))) = crate::auth::basic_credentials(req)
    {
        params.insert("client_id".into(), id);
        if !secret.is_empty() {
            params.insert("client_secret".into(), secret);
        }
    }
    params
}

/// The client named by `client_id`: a registered assistant, which has no
/// secret.
fn assistant(
    conn: &mut tributary_storage::AnyConnection,
    params: &std::collections::HashMap<String, String>,
    now: chrono::NaiveDateTime,
) -> Result<tributary_storage::apps::AppRecord, OAuthError> {
    let client_id = required(params, "client_id")
        .map_err(|_| OAuthError::InvalidClient("`client_id` is required".into()))?;
    if params.contains_key("client_secret") {
        return Err(OAuthError::InvalidClient(
            "assistants are public clients: they have no secret".into(),
        ));
    }
    assistants::find_client(conn, client_id, now)?.ok_or_else(|| {
        OAuthError::InvalidClient(
            "no assistant is registered with this client_id (or its registration expired)".into(),
        )
    })
}

/// The token endpoint's grants.
fn grant(
    conn: &mut tributary_storage::AnyConnection,
    params: &std::collections::HashMap<String, String>,
    now: chrono::NaiveDateTime,
) -> Result<oauth::TokenPair, OAuthError> {
    let client = assistant(conn, params, now)?;
    let pair = match required(params, "grant_type")? {
        "authorization_code" => oauth::redeem_code(
            conn,
            &client,
            required(params, "code")?,
            required(params, "redirect_uri")?,
            params.get("code_verifier").map(String::as_str),
            now,
        )?,
        "refresh_token" => oauth::refresh(conn, &client, required(params, "refresh_token")?, now)?,
        other => {
            return Err(OAuthError::UnsupportedGrantType(format!(
                "grant_type `{other}` is not supported"
            )));
        }
    };
    mcp_clients::mark_used(conn, client.id, now)?;
    Ok(pair)
}

/// RFC 7009: an unknown token, or another client's, answers 200 too.
async fn revoke(
    req: HttpRequest,
    state: web::Data<AppState>,
    body: web::Bytes,
) -> Result<HttpResponse, TokenError> {
    let params = with_basic_client(&req, parameters(&req, &body)?);
    let now = state.clock.now().naive_utc();
    crate::fault::with_conn(&state, move |conn| {
        let token = required(&params, "token")?;
        let client = assistant(conn, &params, now)?;
        oauth::revoke(conn, &client, token, now)?;
        Ok::<_, TokenError>(())
    })
    .await?;
    Ok(HttpResponse::Ok()
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .finish())
}
