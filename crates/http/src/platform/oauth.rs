//! `POST /oauth/token` (authorization_code and refresh_token grants) and
//! `POST /oauth/revoke` (RFC 7009). Bodies may be form-encoded or JSON;
//! client credentials come in an HTTP Basic header or in the body. Errors
//! use the RFC 6749 §5.2 body, not the data endpoints' envelope.

use crate::auth::basic_credentials;
use crate::fault::Fault;
use crate::state::AppState;
use actix_web::http::StatusCode;
use actix_web::http::header::{self, ContentType};
use actix_web::{HttpRequest, HttpResponse, ResponseError, web};
use serde::Serialize;
use std::collections::HashMap;
use std::fmt;
use tributary_auth::oauth::{self, OAuthError};
use tributary_storage::{AnyConnection, users};

/// An RFC 6749 §5.2 error answer: the client's mistake, or a server-side
/// [`Fault`] answered as `server_error`.
#[derive(Debug)]
pub(crate) enum TokenError {
    OAuth(OAuthError),
    Fault(Fault),
}

impl fmt::Display for TokenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TokenError::OAuth(err) => write!(f, "{}: {err}", err.code()),
            TokenError::Fault(fault) => write!(f, "server_error: {:?}", fault.kind),
        }
    }
}

impl From<OAuthError> for TokenError {
    fn from(err: OAuthError) -> Self {
        match err {
            OAuthError::Storage(err) => TokenError::Fault(err.into()),
            other => TokenError::OAuth(other),
        }
    }
}

impl From<tributary_storage::StorageError> for TokenError {
    fn from(err: tributary_storage::StorageError) -> Self {
        TokenError::Fault(err.into())
    }
}

impl From<actix_web::error::BlockingError> for TokenError {
    fn from(err: actix_web::error::BlockingError) -> Self {
        TokenError::Fault(err.into())
    }
}

/// An RFC 6749 §5.2 error.
#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = OAuthError)]
pub(crate) struct ErrorBody<'a> {
    /// invalid_request, invalid_client, invalid_grant,
    /// unsupported_grant_type, server_error.
    #[schema(examples("invalid_grant"))]
    error: &'a str,
    error_description: String,
}

impl ResponseError for TokenError {
    fn status_code(&self) -> StatusCode {
        match self {
            TokenError::OAuth(OAuthError::InvalidClient(_)) => StatusCode::UNAUTHORIZED,
            TokenError::OAuth(_) => StatusCode::BAD_REQUEST,
            TokenError::Fault(fault) => fault.status(),
        }
    }

    fn error_response(&self) -> HttpResponse {
        let mut response = HttpResponse::build(self.status_code());
        response
            .insert_header((header::CACHE_CONTROL, "no-store"))
            .insert_header((header::PRAGMA, "no-cache"));
        let (error, description) = match self {
            TokenError::OAuth(err) => (err.code(), err.to_string()),
            TokenError::Fault(fault) => {
                let request_id = fault.log();
                if let Some(seconds) = fault.retry_after() {
                    response.insert_header((header::RETRY_AFTER, seconds.to_string()));
                }
                (
                    "server_error",
                    format!("the server could not complete the request (request {request_id})"),
                )
            }
        };
        if matches!(self, TokenError::OAuth(OAuthError::InvalidClient(_))) {
            response.insert_header((
                header::WWW_AUTHENTICATE,
                r#"Basic realm="tributary", charset="UTF-8""#,
            ));
        }
        response.json(ErrorBody {
            error,
            error_description: description,
        })
    }
}

/// RFC 6749's `invalid_request`, for a request refused before the endpoint
/// runs (`crate::control_characters`).
pub(crate) fn invalid_request(description: String) -> HttpResponse {
    TokenError::OAuth(OAuthError::InvalidRequest(description)).error_response()
}

/// The request's parameters, from a form-encoded or JSON body.
pub(crate) fn parameters(
    req: &HttpRequest,
    body: &[u8],
) -> Result<HashMap<String, String>, OAuthError> {
    let content_type = req
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_ascii_lowercase();
    if content_type.starts_with("application/json") {
        let value: serde_json::Value = serde_json::from_slice(body).map_err(|err| {
            OAuthError::InvalidRequest(format!("the JSON body does not parse: {err}"))
        })?;
        let object = value
            .as_object()
            .ok_or_else(|| OAuthError::InvalidRequest("the JSON body must be an object".into()))?;
        return object
            .iter()
            // OAuth parameters are strings (RFC 6749 Appendix A); a
            // number is refused rather than guessed at, and a null is a
            // parameter not sent (JSON clients write their empty fields).
            .filter(|(_, v)| !v.is_null())
            .map(|(k, v)| match v {
                serde_json::Value::String(s) => Ok((k.clone(), s.clone())),
                _ => Err(OAuthError::InvalidRequest(format!(
                    "`{k}` must be a string"
                ))),
            })
            .collect();
    }
    let text = std::str::from_utf8(body)
        .map_err(|_| OAuthError::InvalidRequest("the body is not UTF-8".into()))?;
    web::Query::<HashMap<String, String>>::from_query(text)
        .map(web::Query::into_inner)
        .map_err(|err| OAuthError::InvalidRequest(format!("the form body does not parse: {err}")))
}

/// Client credentials from the Basic header or the body (not both). Every
/// `invalid_client` is answered 401 with `WWW-Authenticate: Basic`: RFC
/// 6749 §5.2 requires it when the client tried Basic and allows it
/// otherwise, and RFC 9110 §15.5.2 wants the header on every 401.
fn client_credentials(
    req: &HttpRequest,
    params: &HashMap<String, String>,
) -> Result<(String, Option<String>), OAuthError> {
    match basic_credentials(req) {
        Some(Ok((id, secret))) => {
            if params.contains_key("client_secret") {
                return Err(OAuthError::InvalidRequest(
                    "send client credentials in the Basic header or the body, not both".into(),
                ));
            }
            if params
                .get("client_id")
                .is_some_and(|body_id| *body_id != id)
            {
                return Err(OAuthError::InvalidRequest(
                    "client_id in the body differs from the Basic header".into(),
                ));
            }
            Ok((id, Some(secret)))
        }
        Some(Err(())) => Err(OAuthError::InvalidClient(
            "the Basic credentials do not decode".into(),
        )),
        // No client authentication at all is `invalid_client` (RFC 6749
        // §5.2, RFC 7009 §2.2.1), answered 401 with the scheme to use.
        None => {
            let id = params.get("client_id").cloned().ok_or_else(|| {
                OAuthError::InvalidClient(
                    "client authentication is required: send the client id and secret in the Basic header or as client_id and client_secret (a public client: client_id)".into(),
                )
            })?;
            Ok((id, params.get("client_secret").cloned()))
        }
    }
}

pub(crate) fn required<'a>(
    params: &'a HashMap<String, String>,
    name: &str,
) -> Result<&'a str, OAuthError> {
    params
        .get(name)
        .map(String::as_str)
        .filter(|v| !v.is_empty())
        .ok_or_else(|| OAuthError::InvalidRequest(format!("`{name}` is required")))
}

/// A token pair for a user of the app.
#[derive(Serialize, utoipa::ToSchema)]
pub(crate) struct TokenResponse {
    /// `tat_…`, for an hour.
    access_token: String,
    /// `trt_…`, single use.
    refresh_token: String,
    #[schema(value_type = String, examples("Bearer"))]
    token_type: &'static str,
    /// Seconds.
    #[schema(examples(3600))]
    expires_in: i64,
    user_id: String,
}

/// The token endpoint's parameters (form-encoded or JSON). Client
/// credentials go in the Basic header or as `client_id`/`client_secret`
/// (a public client sends `client_id` only, and `code_verifier`).
#[derive(utoipa::ToSchema)]
#[allow(dead_code)] // read only by the schema derive
pub(crate) struct TokenRequest {
    grant_type: GrantType,
    /// With `authorization_code`.
    code: Option<String>,
    /// With `authorization_code`: the one the code was issued for.
    redirect_uri: Option<String>,
    /// With `authorization_code`: PKCE.
    code_verifier: Option<String>,
    /// With `refresh_token`.
    refresh_token: Option<String>,
    client_id: Option<String>,
    client_secret: Option<String>,
}

/// The grants the token endpoint takes.
#[derive(utoipa::ToSchema)]
#[schema(rename_all = "snake_case")]
#[allow(dead_code)] // read only by the schema derive
pub(crate) enum GrantType {
    AuthorizationCode,
    RefreshToken,
}

/// RFC 7009 revocation parameters (form-encoded or JSON).
#[derive(utoipa::ToSchema)]
#[allow(dead_code)] // read only by the schema derive
pub(crate) struct RevokeRequest {
    /// An access or refresh token (a refresh token takes its grant with it).
    #[schema(min_length = 1)]
    token: String,
    token_type_hint: Option<String>,
    client_id: Option<String>,
    client_secret: Option<String>,
}

fn grant(
    conn: &mut AnyConnection,
    req_params: &HashMap<String, String>,
    client: (String, Option<String>),
    now: chrono::NaiveDateTime,
) -> Result<TokenResponse, OAuthError> {
    let grant_type = required(req_params, "grant_type")?;
    if !matches!(grant_type, "authorization_code" | "refresh_token") {
        return Err(OAuthError::UnsupportedGrantType(format!(
            "grant_type `{grant_type}` is not supported"
        )));
    }
    let app = oauth::authenticate_client(conn, &client.0, client.1.as_deref())?;
    let pair = match grant_type {
        "authorization_code" => {
            let code = required(req_params, "code")?;
            let redirect_uri = required(req_params, "redirect_uri")?;
            oauth::redeem_code(
                conn,
                &app,
                code,
                redirect_uri,
                req_params.get("code_verifier").map(String::as_str),
                now,
            )?
        }
        _ => oauth::refresh(conn, &app, required(req_params, "refresh_token")?, now)?,
    };
    let user = users::get_user(conn, pair.user_id)?;
    Ok(TokenResponse {
        access_token: pair.access_token,
        refresh_token: pair.refresh_token,
        token_type: "Bearer",
        expires_in: pair.expires_in,
        user_id: user.public_id.unwrap_or_else(|| user.id.to_string()),
    })
}

#[utoipa::path(
    post,
    path = "/oauth/token",
    tag = "OAuth",
    summary = "Exchange a code or a refresh token for tokens",
    description = "RFC 6749 with PKCE (RFC 7636). Refresh tokens rotate: a refresh token used twice revokes its whole grant.",
    security((), ("appBasic" = [])),
    request_body(content(
        (TokenRequest = "application/x-www-form-urlencoded"),
        (TokenRequest = "application/json"),
    )),
    responses(
        (status = 200, description = "A token pair.", body = TokenResponse),
        (status = 400, description = "`invalid_request`, `invalid_grant`, `unsupported_grant_type`.", body = ErrorBody),
        (status = 401, description = "`invalid_client`: no client credentials, or wrong ones (with `WWW-Authenticate: Basic`).", body = ErrorBody),
        (status = 503, description = "`server_error`: try again after `Retry-After`.", body = ErrorBody),
    )
)]
pub(super) async fn token(
    req: HttpRequest,
    state: web::Data<AppState>,
    body: web::Bytes,
) -> Result<HttpResponse, TokenError> {
    let params = parameters(&req, &body)?;
    let client = client_credentials(&req, &params)?;
    let now = state.clock.now().naive_utc();
    let db = state.db.clone();
    let response = web::block(move || -> Result<TokenResponse, OAuthError> {
        let mut conn = db.conn()?;
        grant(&mut conn, &params, client, now)
    })
    .await??;
    Ok(HttpResponse::Ok()
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .insert_header((header::PRAGMA, "no-cache"))
        .content_type(ContentType::json())
        .json(response))
}

#[utoipa::path(
    post,
    path = "/oauth/revoke",
    tag = "OAuth",
    summary = "Revoke a token (RFC 7009)",
    description = "An unknown or already revoked token answers 200 too, as RFC 7009 says.",
    security((), ("appBasic" = [])),
    request_body(content(
        (RevokeRequest = "application/x-www-form-urlencoded"),
        (RevokeRequest = "application/json"),
    )),
    responses(
        (status = 200, description = "Revoked, or was not valid."),
        (status = 400, description = "`invalid_request`.", body = ErrorBody),
        (status = 401, description = "`invalid_client`: no client credentials, or wrong ones (with `WWW-Authenticate: Basic`).", body = ErrorBody),
        (status = 503, description = "`server_error`.", body = ErrorBody),
    )
)]
pub(super) async fn revoke(
    req: HttpRequest,
    state: web::Data<AppState>,
    body: web::Bytes,
) -> Result<HttpResponse, TokenError> {
    let params = parameters(&req, &body)?;
    let client = client_credentials(&req, &params)?;
    let token = required(&params, "token")?.to_owned();
    let now = state.clock.now().naive_utc();
    let db = state.db.clone();
    web::block(move || -> Result<(), OAuthError> {
        let mut conn = db.conn()?;
        let app = oauth::authenticate_client(&mut *conn, &client.0, client.1.as_deref())?;
        Ok(oauth::revoke(&mut *conn, &app, &token, now)?)
    })
    .await??;
    Ok(HttpResponse::Ok()
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .finish())
}
