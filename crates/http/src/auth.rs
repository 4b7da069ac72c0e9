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
use tributary_domain::access::Viewer;

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
