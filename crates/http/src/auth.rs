//! Authentication extractors. Each yields a [`Viewer`]; the data handlers are
//! generic over the extractor, so one implementation serves the Personal
//! interface (API keys) and, later, the Platform interface (bearer tokens).

use crate::error::ApiError;
use crate::state::AppState;
use actix_web::dev::Payload;
use actix_web::http::header;
use actix_web::{FromRequest, HttpRequest, web};
use std::future::Future;
use std::pin::Pin;
use tributary_auth::api_keys::{self, ApiKeyError};
use tributary_auth::oauth::{self, AccessError};
use tributary_domain::access::Viewer;
use tributary_domain::ids::AppId;
use tributary_storage::apps::AppRecord;

/// An extractor that authenticates a request as some [`Viewer`].
pub trait Authenticated: FromRequest<Error = ApiError> + 'static {
    fn viewer(&self) -> &Viewer;
}

/// The Personal interface's credential: `x-api-key: <key>`, or
/// `Authorization: Bearer <key>`.
#[derive(Debug)]
pub struct ApiKeyViewer(pub Viewer);

impl Authenticated for ApiKeyViewer {
    fn viewer(&self) -> &Viewer {
        &self.0
    }
}

/// The presented key, from `x-api-key` first, else a Bearer authorization.
fn presented_key(req: &HttpRequest) -> Result<String, ApiError> {
    if let Some(value) = req.headers().get("x-api-key") {
        return value.to_str().map(|v| v.trim().to_owned()).map_err(|_| {
            ApiError::unauthorized(
                "MALFORMED_API_KEY",
                "The x-api-key header is not valid text.",
            )
        });
    }
    match req.headers().get(header::AUTHORIZATION).map(|v| v.to_str()) {
        Some(Ok(value)) => {
            let (scheme, token) = value.trim().split_once(' ').unwrap_or((value, ""));
            if scheme.eq_ignore_ascii_case("bearer") && !token.trim().is_empty() {
                Ok(token.trim().to_owned())
            } else {
                Err(ApiError::unauthorized(
                    "MISSING_CREDENTIALS",
                    "The Authorization header must be `Bearer <API key>`; or send the key in the x-api-key header.",
                ))
            }
        }
        Some(Err(_)) => Err(ApiError::unauthorized(
            "MALFORMED_API_KEY",
            "The Authorization header is not valid text.",
        )),
        None => Err(ApiError::unauthorized(
            "MISSING_CREDENTIALS",
            "No API key was sent: put it in the x-api-key header (or Authorization: Bearer).",
        )),
    }
}

impl FromRequest for ApiKeyViewer {
    type Error = ApiError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, ApiError>>>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let presented = presented_key(req);
        let state = req.app_data::<web::Data<AppState>>().cloned();
        Box::pin(async move {
            let key = presented?;
            let state =
                state.ok_or_else(|| ApiError::internal("application state is not configured"))?;
            let viewer = web::block(move || {
                let mut conn = state.db.conn()?;
                api_keys::authenticate(&mut conn, &key, state.clock.now()).map(|(_, viewer)| viewer)
            })
            .await?
            .map_err(|err| match err {
                ApiKeyError::Malformed => {
                    ApiError::unauthorized("MALFORMED_API_KEY", err.to_string())
                }
                ApiKeyError::Unknown => {
                    ApiError::unauthorized("INVALID_API_KEY", "The API key is not valid.")
                }
                ApiKeyError::Revoked => {
                    ApiError::unauthorized("API_KEY_REVOKED", "The API key was revoked.")
                }
                ApiKeyError::Storage(err) => err.into(),
            })?;
            Ok(ApiKeyViewer(viewer))
        })
    }
}

/// The Platform interface's user credential: `Authorization: Bearer
/// <access token>`, valid for one hour.
#[derive(Debug)]
pub struct BearerViewer {
    pub viewer: Viewer,
    /// The app the token was issued to.
    pub app_id: AppId,
}

impl Authenticated for BearerViewer {
    fn viewer(&self) -> &Viewer {
        &self.viewer
    }
}

fn bearer_token(req: &HttpRequest) -> Result<String, ApiError> {
    let value = req
        .headers()
        .get(header::AUTHORIZATION)
        .ok_or_else(|| {
            ApiError::unauthorized(
                "MISSING_CREDENTIALS",
                "No access token was sent: use Authorization: Bearer <access_token>.",
            )
        })?
        .to_str()
        .map_err(|_| {
            ApiError::invalid_token(
                "INVALID_ACCESS_TOKEN",
                "The Authorization header is not valid text.",
            )
        })?;
    match value.trim().split_once(' ') {
        Some((scheme, token))
            if scheme.eq_ignore_ascii_case("bearer") && !token.trim().is_empty() =>
        {
            Ok(token.trim().to_owned())
        }
        _ => Err(ApiError::unauthorized(
            "MISSING_CREDENTIALS",
            "The Authorization header must be `Bearer <access_token>`.",
        )),
    }
}

impl FromRequest for BearerViewer {
    type Error = ApiError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, ApiError>>>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let token = bearer_token(req);
        let state = req.app_data::<web::Data<AppState>>().cloned();
        Box::pin(async move {
            let token = token?;
            let state =
                state.ok_or_else(|| ApiError::internal("application state is not configured"))?;
            let record = web::block(move || {
                let mut conn = state.db.conn()?;
                oauth::authenticate_access(&mut *conn, &token, state.clock.now().naive_utc())
            })
            .await?
            .map_err(|err| match err {
                AccessError::Malformed | AccessError::Unknown => ApiError::invalid_token(
                    "INVALID_ACCESS_TOKEN",
                    "The access token is not valid.",
                ),
                AccessError::Expired => ApiError::invalid_token(
                    "ACCESS_TOKEN_EXPIRED",
                    "The access token has expired; get a new one with the refresh token.",
                ),
                AccessError::Storage(err) => err.into(),
            })?;
            Ok(BearerViewer {
                viewer: Viewer::whole_user(record.user_id),
                app_id: record.app_id,
            })
        })
    }
}

/// An app authenticated with HTTP Basic `client_id:client_secret`, for
/// managing its users. Public apps have no secret and cannot.
#[derive(Debug)]
pub struct AppClient(pub AppRecord);

/// `(client_id, client_secret)` from an HTTP Basic header, if one was sent.
pub fn basic_credentials(req: &HttpRequest) -> Option<Result<(String, String), ()>> {
    use base64::Engine as _;
    let value = req.headers().get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, encoded) = value.trim().split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return None;
    }
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(encoded.trim())
        .ok()
        .and_then(|b| String::from_utf8(b).ok());
    Some(
        decoded
            .and_then(|text| {
                text.split_once(':')
                    .map(|(id, secret)| (id.to_owned(), secret.to_owned()))
            })
            .ok_or(()),
    )
}

impl FromRequest for AppClient {
    type Error = ApiError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, ApiError>>>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let credentials = basic_credentials(req);
        let state = req.app_data::<web::Data<AppState>>().cloned();
        Box::pin(async move {
            let (client_id, secret) = match credentials {
                Some(Ok(pair)) => pair,
                Some(Err(())) => {
                    return Err(ApiError::unauthorized_basic(
                        "INVALID_CLIENT",
                        "The Basic credentials do not decode.",
                    ));
                }
                None => {
                    return Err(ApiError::unauthorized_basic(
                        "MISSING_CREDENTIALS",
                        "Send the app's credentials as HTTP Basic client_id:client_secret.",
                    ));
                }
            };
            let state =
                state.ok_or_else(|| ApiError::internal("application state is not configured"))?;
            let app = web::block(move || {
                let mut conn = state.db.conn()?;
                Ok::<_, tributary_storage::StorageError>(oauth::authenticate_client(
                    &mut *conn,
                    &client_id,
                    Some(&secret),
                ))
            })
            .await??
            .map_err(|err| match err {
                oauth::OAuthError::Storage(err) => err.into(),
                _ => ApiError::unauthorized_basic(
                    "INVALID_CLIENT",
                    "The client id or secret is not valid.",
                ),
            })?;
            if app.is_public {
                return Err(ApiError::unauthorized_basic(
                    "INVALID_CLIENT",
                    "Public apps have no secret and cannot manage users.",
                ));
            }
            Ok(AppClient(app))
        })
    }
}
