//! Hands an actix request to rmcp's Streamable HTTP service and its answer
//! back. rmcp's transport is a `tower` service over the `http` 1 types;
//! actix-web 4 speaks `http` 0.2, so the method, URI, headers and body are
//! copied across, and the answer's body is streamed back as rmcp writes
//! it (JSON for a plain call, an event stream when rmcp chooses one).

use actix_web::http::StatusCode;
use actix_web::http::header::HeaderValue;
use actix_web::{HttpRequest, HttpResponse};
use bytes::Bytes;
use http_body_util::{BodyDataStream, Full};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use std::sync::Arc;

/// Headers that carry the caller's credential: checked before the bridge
/// and not handed on, so no tool could read or echo them.
const CREDENTIAL_HEADERS: [&str; 3] = ["authorization", "x-api-key", "cookie"];

/// The MCP service of one server process: stateless (each POST carries a
/// whole exchange, so any process behind a balancer can answer it, and
/// nothing is kept between requests), answering JSON where it can.
pub(crate) fn service<S>(
    server: impl Fn() -> S + Send + Sync + 'static,
    max_body: usize,
) -> StreamableHttpService<S, LocalSessionManager>
where
    S: rmcp::ServerHandler + Send + 'static,
{
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true)
        .with_sse_keep_alive(None)
        .with_max_request_body_bytes(max_body)
        // rmcp's Host and Origin checks guard a server on loopback that
        // answers anyone who reaches it. Every request here carries a
        // bearer credential a rebinding page cannot have, and the public
        // host is the operator's (TRIBUTARY_PUBLIC_URL), not a list this
        // code could keep: the credential is the check.
        .disable_allowed_hosts()
        .disable_allowed_origins();
    StreamableHttpService::new(
        move || Ok(server()),
        Arc::new(LocalSessionManager::default()),
        config,
    )
}

/// `req` with `body` through `service`, `asker` (who asks, as checked)
/// in the request's extensions for the tools.
pub(crate) async fn forward<S>(
    service: &StreamableHttpService<S, LocalSessionManager>,
    req: &HttpRequest,
    body: Bytes,
    asker: impl Clone + Send + Sync + 'static,
) -> HttpResponse
where
    S: rmcp::ServerHandler + Send + 'static,
{
    let mut request = http::Request::builder()
        .method(req.method().as_str())
        .uri(req.uri().to_string());
    for (name, value) in req.headers() {
        if CREDENTIAL_HEADERS.contains(&name.as_str()) {
            continue;
        }
        request = request.header(name.as_str(), value.as_bytes());
    }
    let Ok(mut request) = request.body(Full::new(body)) else {
        // A header actix admits and `http` 1 refuses (a quote in a name).
        return HttpResponse::BadRequest()
            .content_type("text/plain")
            .body("Bad Request: a header of this request cannot be read");
    };
    request.extensions_mut().insert(asker);
    let (parts, body) = service.handle(request).await.into_parts();
    let status =
        StatusCode::from_u16(parts.status.as_u16()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut response = HttpResponse::build(status);
    for (name, value) in &parts.headers {
        if let Ok(value) = HeaderValue::from_bytes(value.as_bytes()) {
            response.append_header((name.as_str(), value));
        }
    }
    response.streaming(BodyDataStream::new(body))
}
