//! The error envelope of the data endpoints:
//! `{"error": <reason phrase>, "message": <human text>, "code": <STABLE_CODE>,
//! "request_id": <id>}`. Codes are listed in docs/errors.md and never reused.
//! A 5xx body never carries internal details; the log gets the cause
//! (server-side failures are classified in `crate::fault`).

use crate::fault::{Fault, FaultKind};
use crate::request_id;
use actix_web::http::StatusCode;
use actix_web::http::header::{self, HeaderValue};
use actix_web::{HttpResponse, ResponseError};
use serde::Serialize;
use std::borrow::Cow;
use std::fmt;
use tributary_storage::StorageError;

#[derive(Debug)]
pub struct ApiError {
    status: StatusCode,
    code: &'static str,
    message: String,
    /// A server-side failure: logged with the request id, never sent.
    /// Boxed: most errors have none, and a `Result` stays small.
    fault: Option<Box<Fault>>,
    /// Seconds for a `Retry-After` header.
    retry_after: Option<u64>,
    /// The `WWW-Authenticate` challenge of a 401.
    challenge: &'static str,
    /// The methods a 405's resource serves, for its `Allow` header.
    allow: Option<Cow<'static, str>>,
}

const BEARER_CHALLENGE: &str = r#"Bearer realm="tributary""#;
/// RFC 6750 §3.1: a token was sent and is not valid (unknown, expired,
/// revoked, malformed).
const INVALID_TOKEN_CHALLENGE: &str = r#"Bearer realm="tributary", error="invalid_token""#;
const BASIC_CHALLENGE: &str = r#"Basic realm="tributary", charset="UTF-8""#;

/// The body of every non-2xx answer under `/api/` (docs/errors.md).
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[schema(as = Error)]
pub struct Envelope<'a> {
    /// The HTTP reason phrase.
    #[schema(examples("Not Found"))]
    error: &'a str,
    /// A sentence for people, naming the field and why.
    #[schema(examples("No account with this id is visible with these credentials."))]
    message: &'a str,
    /// Stable, never reused; the codes each operation answers are listed
    /// with its responses.
    #[schema(examples("ACCOUNT_NOT_FOUND"))]
    code: &'a str,
    /// Equals the `x-request-id` response header; the server log has it.
    #[schema(examples("req_5f0c2a9b"))]
    request_id: &'a str,
}

impl ApiError {
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        Self {
            status,
            code,
            message: message.into(),
            fault: None,
            retry_after: None,
            challenge: BEARER_CHALLENGE,
            allow: None,
        }
    }

    fn with_allow(mut self, allow: Cow<'static, str>) -> Self {
        self.allow = Some(allow);
        self
    }

    /// 429 with `Retry-After`; the message ends "try again in N seconds"
    /// with the same N, for clients that read the wait from the text.
    pub fn too_many_requests(code: &'static str, reason: &str, retry_after_secs: u64) -> Self {
        let seconds = retry_after_secs.max(1);
        Self {
            retry_after: Some(seconds),
            ..Self::new(
                StatusCode::TOO_MANY_REQUESTS,
                code,
                format!("{reason}; try again in {seconds} seconds."),
            )
        }
    }

    /// 501: the endpoint exists, but not for this object (holdings of an
    /// account whose provider reports none).
    pub fn not_implemented(code: &'static str, message: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_IMPLEMENTED, code, message)
    }

    pub fn unauthorized(code: &'static str, message: impl Into<String>) -> Self {
        Self::new(StatusCode::UNAUTHORIZED, code, message)
    }

    /// 401 for a bearer token that was sent but is not valid (RFC 6750
    /// `error="invalid_token"`, which tells OAuth clients to refresh).
    pub fn invalid_token(code: &'static str, message: impl Into<String>) -> Self {
        Self {
            challenge: INVALID_TOKEN_CHALLENGE,
            ..Self::unauthorized(code, message)
        }
    }

    /// 405 for a method the resource does not serve; `allow` lists those it
    /// does (`GET, HEAD`).
    pub fn method_not_allowed(allow: impl Into<Cow<'static, str>>) -> Self {
        let allow = allow.into();
        Self::new(
            StatusCode::METHOD_NOT_ALLOWED,
            "METHOD_NOT_ALLOWED",
            format!("This endpoint answers {allow} only."),
        )
        .with_allow(allow)
    }

    /// 401 asking for app credentials (HTTP Basic: client id and secret).
    pub fn unauthorized_basic(code: &'static str, message: impl Into<String>) -> Self {
        Self {
            challenge: BASIC_CHALLENGE,
            ..Self::unauthorized(code, message)
        }
    }

    pub fn bad_request(code: &'static str, message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, code, message)
    }

    pub fn not_found(code: &'static str, message: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, code, message)
    }

    /// An unexpected failure: the client sees a generic message, the log sees
    /// `cause`.
    pub fn internal(cause: impl fmt::Display) -> Self {
        Fault::internal(cause).into()
    }

    pub fn code(&self) -> &'static str {
        self.code
    }

    /// The sentence for people (generic for a server-side failure).
    pub fn message(&self) -> &str {
        &self.message
    }

    /// Logs a server-side failure's cause with the request id, as an
    /// answer of the envelope would; the id, for an answer of another
    /// kind (an MCP tool's) to name. `None` for the client's own errors.
    pub fn log_fault(&self) -> Option<String> {
        self.fault.as_ref().map(|fault| fault.log())
    }
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {}: {}",
            self.status.as_u16(),
            self.code,
            self.message
        )
    }
}

impl From<Fault> for ApiError {
    fn from(fault: Fault) -> Self {
        let code = match fault.kind {
            FaultKind::Unavailable => "DATABASE_UNAVAILABLE",
            FaultKind::StorageFull => "STORAGE_FULL",
            FaultKind::Internal => "INTERNAL_ERROR",
        };
        let message = fault.kind.message();
        let status = fault.status();
        Self {
            retry_after: fault.retry_after(),
            fault: Some(Box::new(fault)),
            ..Self::new(status, code, message)
        }
    }
}

impl From<StorageError> for ApiError {
    fn from(err: StorageError) -> Self {
        match err {
            StorageError::AccountLimit(limit) => Self::new(
                StatusCode::CONFLICT,
                "ACCOUNT_LIMIT_REACHED",
                format!("{}.", limit.describe()),
            ),
            other => Fault::from(other).into(),
        }
    }
}

impl From<actix_web::error::BlockingError> for ApiError {
    fn from(err: actix_web::error::BlockingError) -> Self {
        Fault::from(err).into()
    }
}

impl ResponseError for ApiError {
    fn status_code(&self) -> StatusCode {
        self.status
    }

    fn error_response(&self) -> HttpResponse {
        let request_id = match &self.fault {
            Some(fault) => fault.log(),
            None => request_id::current().unwrap_or_else(|| "unknown".to_owned()),
        };
        let mut response = HttpResponse::build(self.status);
        if self.status == StatusCode::UNAUTHORIZED {
            response.insert_header((
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static(self.challenge),
            ));
        }
        if let Some(allow) = &self.allow {
            response.insert_header((header::ALLOW, allow.as_ref()));
        }
        if let Some(seconds) = self.retry_after {
            response.insert_header((header::RETRY_AFTER, seconds.to_string()));
        }
        response.json(Envelope {
            error: self.status.canonical_reason().unwrap_or("Error"),
            message: &self.message,
            code: self.code,
            request_id: &request_id,
        })
    }
}

/// Answers for paths no route serves, in the same envelope.
pub async fn no_route() -> Result<HttpResponse, ApiError> {
    Err(ApiError::not_found("NOT_FOUND", "No such endpoint."))
}

/// Gives the envelope to error answers that actix's extractors made
/// themselves on API paths (a body that does not read — a broken chunk —
/// comes back as `text/plain`): every error under `/api/` is JSON.
pub async fn envelope_framework_errors(
    req: actix_web::dev::ServiceRequest,
    next: actix_web::middleware::Next<impl actix_web::body::MessageBody + 'static>,
) -> Result<actix_web::dev::ServiceResponse<actix_web::body::BoxBody>, actix_web::Error> {
    let api = req.path().starts_with("/api/");
    let response = next.call(req).await?.map_into_boxed_body();
    let status = response.status();
    let is_json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    // Redirects and the pages' HTML are answers of their own.
    let is_html = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/html"));
    if !api || !(status.is_client_error() || status.is_server_error()) || is_json || is_html {
        return Ok(response);
    }
    let (request, response) = response.into_parts();
    let detail = actix_web::body::to_bytes_limited(response.into_body(), 1024)
        .await
        .ok()
        .and_then(Result::ok)
        .map(|bytes| String::from_utf8_lossy(&bytes).trim().to_owned())
        .filter(|text| !text.is_empty());
    let code = match status {
        StatusCode::PAYLOAD_TOO_LARGE => "PAYLOAD_TOO_LARGE",
        StatusCode::UNSUPPORTED_MEDIA_TYPE => "UNSUPPORTED_MEDIA_TYPE",
        s if s.is_server_error() => "INTERNAL_ERROR",
        _ => "MALFORMED_REQUEST",
    };
    let message = match (status.is_server_error(), detail) {
        (false, Some(detail)) => format!("The request could not be read: {detail}."),
        _ => "The request could not be read.".to_owned(),
    };
    let envelope = ApiError::new(status, code, message).error_response();
    Ok(actix_web::dev::ServiceResponse::new(request, envelope))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An unexpected failure answers 500 INTERNAL_ERROR, and its cause (a
    /// storage message, a path) stays in the log, out of the answer.
    #[actix_web::test]
    async fn internal_errors_keep_their_cause_out_of_the_answer() {
        let response = ApiError::internal("disk /var/lib/secret-path exploded").error_response();
        assert_eq!(response.status(), StatusCode::INTERNAL_SERVER_ERROR);
        let body = actix_web::body::to_bytes(response.into_body())
            .await
            .expect("a body");
        let body: serde_json::Value = serde_json::from_slice(&body).expect("JSON");
        assert_eq!(body["code"], "INTERNAL_ERROR");
        assert!(!body.to_string().contains("secret-path"), "{body}");
    }
}
