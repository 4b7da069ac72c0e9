//! The MCP server at `/mcp` (docs/mcp.md): an assistant (Claude, ChatGPT,
//! Cursor, a local model) reads the person's accounts, transactions,
//! balances, holdings and insights through read-only tools, over the
//! Streamable HTTP transport of the Model Context Protocol, with the
//! official SDK (`rmcp`) speaking the protocol.
//!
//! A request is checked here before rmcp sees it: the credential (an API
//! key, as on the Personal API, scoped keys seeing their accounts only; or
//! an access token an assistant got through OAuth, reading the accounts
//! the person chose: [`oauth`]), then the credential's request limit. The
//! viewer it names goes with the request to the tools; the credential
//! itself does not. Without a valid credential the answer is 401 naming
//! the resource's metadata (RFC 9728), where an assistant finds how to
//! authorize.

mod bridge;
mod limit;
pub mod oauth;
mod server;
mod tools;

pub use limit::RequestLimit;

use crate::error::ApiError;
use crate::state::AppState;
use actix_web::{HttpRequest, HttpResponse, ResponseError as _, web};
use rmcp::transport::streamable_http_server::StreamableHttpService;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use tributary_auth::api_keys::{self, ApiKeyError};
use tributary_domain::access::Viewer;

/// The path the server answers at.
pub const PATH: &str = "/mcp";
/// The largest request body: a tool call's arguments are a few hundred
/// bytes; this leaves room for a batch of them and nothing more.
const MAX_BODY: usize = 64 * 1024;

type Service = StreamableHttpService<server::FinanceServer, LocalSessionManager>;

/// Mounts `/mcp` (the Personal interface's) and its authorization server.
pub fn configure(cfg: &mut web::ServiceConfig) {
    oauth::configure(cfg);
    cfg.service(
        web::resource(PATH)
            .app_data(web::Data::new(bridge::service(
                || server::FinanceServer,
                MAX_BODY,
            )))
            .app_data(web::PayloadConfig::new(MAX_BODY))
            .to(endpoint),
    );
}

async fn endpoint(
    req: HttpRequest,
    body: web::Bytes,
    state: web::Data<AppState>,
    service: web::Data<Service>,
) -> HttpResponse {
    let (caller, viewer) = match identify(&state, &req).await {
        Ok(known) => known,
        Err(refused) => return challenge(&state, &req, &refused),
    };
    let message = if req.method() == actix_web::http::Method::POST {
        match serde_json::from_slice::<serde_json::Value>(&body) {
            Ok(message) => Some(message),
            // JSON-RPC's own answer to a body that is not JSON (rmcp
            // answers 415 with a line of text, which clients show as a
            // transport failure).
            Err(err) => {
                return HttpResponse::BadRequest().json(serde_json::json!({
                    "jsonrpc": "2.0",
                    "id": null,
                    "error": {"code": -32700, "message": format!("Parse error: the body is not JSON: {err}.")},
                }));
            }
        }
    } else {
        None
    };
    let calls = message.as_ref().map_or(0, tool_calls);
    if calls > 0
        && let Err(wait) = state.mcp_limit.admit(&caller, calls, state.clock.now())
    {
        return ApiError::too_many_requests(
            "MCP_RATE_LIMITED",
            &format!(
                "This credential made {} MCP tool calls in the last minute, the most allowed (TRIBUTARY_MCP_REQUESTS_PER_MINUTE)",
                state.mcp_limit.allowed()
            ),
            wait,
        )
        .error_response();
    }
    let asker = tools::Asker {
        state: state.clone(),
        viewer,
    };
    bridge::forward(&service, &req, body, asker).await
}

/// How many tool calls a message makes (a JSON-RPC batch may hold
/// several): what the request limit counts. The handshake, the tool list
/// and notifications read nothing and are not counted.
fn tool_calls(message: &serde_json::Value) -> u32 {
    let is_call = |m: &serde_json::Value| m["method"] == "tools/call";
    match message {
        serde_json::Value::Array(batch) => {
            u32::try_from(batch.iter().filter(|m| is_call(m)).count()).unwrap_or(u32::MAX)
        }
        single => u32::from(is_call(single)),
    }
}

/// The 401 (or the failure) of a request without a valid credential; a
/// 401 names where the resource's metadata is (RFC 9728 §5.1), and says
/// `invalid_token` when a token was sent (RFC 6750 §3.1).
fn challenge(state: &AppState, req: &HttpRequest, refused: &ApiError) -> HttpResponse {
    let mut response = refused.error_response();
    if response.status() != actix_web::http::StatusCode::UNAUTHORIZED {
        return response;
    }
    let metadata = state.absolute_url(req, oauth::RESOURCE_METADATA_PATH);
    let invalid = if refused.code() == "MISSING_CREDENTIALS" {
        ""
    } else {
        r#", error="invalid_token""#
    };
    if let Ok(value) = actix_web::http::header::HeaderValue::from_str(&format!(
        r#"Bearer resource_metadata="{metadata}"{invalid}"#
    )) {
        response
            .headers_mut()
            .insert(actix_web::http::header::WWW_AUTHENTICATE, value);
    }
    response
}

/// The credential `req` presents, checked: what the request limit counts
/// it as, and the viewer it names; or the 401. An OAuth access token
/// (`tat_…`) reads as its grant; anything else is taken for an API key.
async fn identify(
    state: &web::Data<AppState>,
    req: &HttpRequest,
) -> Result<(String, Viewer), ApiError> {
    let presented = crate::auth::presented_key(req)?;
    let now = state.clock.now();
    crate::fault::with_conn(state, move |conn| {
        if presented.starts_with(tributary_auth::oauth::ACCESS_TOKEN_PREFIX) {
            return tributary_auth::mcp::authenticate(conn, &presented, now.naive_utc())
                .map(|(grant, viewer)| (format!("grant:{grant}"), viewer))
                .map_err(crate::auth::access_refused);
        }
        api_keys::authenticate(conn, &presented, now)
            .map(|(key, viewer)| (format!("key:{}", key.id), viewer))
            .map_err(|err| match err {
                ApiKeyError::Malformed | ApiKeyError::Unknown => {
                    ApiError::invalid_token("INVALID_API_KEY", "The API key is not valid.")
                }
                ApiKeyError::Revoked => {
                    ApiError::invalid_token("API_KEY_REVOKED", "The API key was revoked.")
                }
                ApiKeyError::Storage(err) => err.into(),
            })
    })
    .await
}
