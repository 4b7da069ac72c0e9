//! Credentials of the data interfaces. A [`Credential`] extractor reads what
//! a request presents (an API key, a bearer token) from its headers and
//! nothing more; checking it needs the database, so the handler does that
//! in its own blocking section with [`as_viewer`], on the one connection the
//! request checks out. The data handlers are generic over the credential, so
//! one implementation serves the Personal interface (API keys) and the
//! Platform interface (bearer tokens).

use crate::error::ApiError;
use crate::state::AppState;
use actix_web::dev::Payload;
use actix_web::http::header;
use actix_web::{FromRequest, HttpRequest, web};
use chrono::{DateTime, Utc};
use std::fmt;
use std::future::{Future, Ready, ready};
use std::pin::Pin;
use tributary_auth::api_keys::ApiKeyError;
use tributary_auth::cache::CredentialCache;
use tributary_auth::oauth::{self, AccessError};
use tributary_domain::access::Viewer;
use tributary_storage::AnyConnection;
use tributary_storage::apps::AppRecord;
use tributary_storage::oauth::TokenRecord;

/// What a request presents to say who it is, not yet checked.
pub trait Credential: FromRequest<Error = ApiError> + Clone + Send + 'static {
    /// Who presented it and what they may see, or the 401 to answer; from
    /// the credential cache when it knows, else from the database.
    fn verify(
        &self,
        cache: &CredentialCache,
        conn: &mut AnyConnection,
        now: DateTime<Utc>,
    ) -> Result<Viewer, ApiError>;

    /// The viewer, when the cache knows the credential holds; `None` says
    /// only that the database must be asked.
    fn cached(&self, cache: &CredentialCache, now: DateTime<Utc>) -> Option<Viewer>;
}

/// Checks `credential` and runs `work` as the viewer it names, in one
/// blocking section on one pooled connection.
pub(crate) async fn as_viewer<C: Credential, T: Send + 'static>(
    state: &web::Data<AppState>,
    credential: C,
    work: impl FnOnce(&mut AnyConnection, Viewer) -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    let now = state.clock.now();
    let cache = state.caches.credentials.clone();
    crate::fault::with_conn(state, move |conn| {
        let viewer = credential.verify(&cache, conn, now)?;
        work(conn, viewer)
    })
    .await
}

/// `parsed`, a request's own validation (a malformed id or parameter):
/// when it failed and the credential does not hold either, the 401 comes
/// first, as it would for a valid request, so an unauthenticated caller
/// learns nothing from validation.
pub(crate) async fn checked<C: Credential, T>(
    state: &web::Data<AppState>,
    credential: &C,
    parsed: Result<T, ApiError>,
) -> Result<T, ApiError> {
    let invalid = match parsed {
        Ok(valid) => return Ok(valid),
        Err(invalid) => invalid,
    };
    Err(
        match as_viewer(state, credential.clone(), |_, _| Ok(())).await {
            Ok(()) => invalid,
            Err(unauthenticated) => unauthenticated,
        },
    )
}

/// The Personal interface's credential: `x-api-key: <key>`, or
/// `Authorization: Bearer <key>`.
#[derive(Clone)]
pub struct ApiKey(String);

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(..)")
    }
}

impl Credential for ApiKey {
    fn verify(
        &self,
        cache: &CredentialCache,
        conn: &mut AnyConnection,
        now: DateTime<Utc>,
    ) -> Result<Viewer, ApiError> {
        cache.api_key(conn, &self.0, now).map_err(key_refused)
    }

    fn cached(&self, cache: &CredentialCache, now: DateTime<Utc>) -> Option<Viewer> {
        cache.cached_api_key(&self.0, now)
    }
}

/// The 401 of an API key that does not hold, or the failure.
pub(crate) fn key_refused(err: ApiKeyError) -> ApiError {
    match err {
        ApiKeyError::Malformed => ApiError::unauthorized("MALFORMED_API_KEY", err.to_string()),
        ApiKeyError::Unknown => {
            ApiError::unauthorized("INVALID_API_KEY", "The API key is not valid.")
        }
        ApiKeyError::Revoked => {
            ApiError::unauthorized("API_KEY_REVOKED", "The API key was revoked.")
        }
        ApiKeyError::Storage(err) => err.into(),
    }
}

/// The presented key, from `x-api-key` first, else a Bearer authorization
/// (`/mcp` reads its credential the same way: a key or an access token).
pub(crate) fn presented_key(req: &HttpRequest) -> Result<String, ApiError> {
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

impl FromRequest for ApiKey {
    type Error = ApiError;
    type Future = Ready<Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        ready(presented_key(req).map(ApiKey))
    }
}

/// The Platform interface's user credential: `Authorization: Bearer
/// <access token>`, valid for one hour.
#[derive(Clone)]
pub struct BearerToken(String);

impl fmt::Debug for BearerToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("BearerToken(..)")
    }
}

impl BearerToken {
    /// The token's record: its user and the app it was issued to.
    pub fn access(
        &self,
        cache: &CredentialCache,
        conn: &mut AnyConnection,
        now: DateTime<Utc>,
    ) -> Result<TokenRecord, ApiError> {
        cache
            .platform_access(conn, &self.0, now.naive_utc())
            .map_err(access_refused)
    }
}

/// The 401 of an access token that does not hold (RFC 6750
/// `invalid_token`, which tells OAuth clients to refresh), or the failure.
pub(crate) fn access_refused(err: AccessError) -> ApiError {
    match err {
        AccessError::Malformed | AccessError::Unknown => {
            ApiError::invalid_token("INVALID_ACCESS_TOKEN", "The access token is not valid.")
        }
        AccessError::Expired => ApiError::invalid_token(
            "ACCESS_TOKEN_EXPIRED",
            "The access token has expired; get a new one with the refresh token.",
        ),
        AccessError::Storage(err) => err.into(),
    }
}

impl Credential for BearerToken {
    fn verify(
        &self,
        cache: &CredentialCache,
        conn: &mut AnyConnection,
        now: DateTime<Utc>,
    ) -> Result<Viewer, ApiError> {
        self.access(cache, conn, now)
            .map(|record| Viewer::whole_user(record.user_id))
    }

    fn cached(&self, cache: &CredentialCache, now: DateTime<Utc>) -> Option<Viewer> {
        cache
            .cached_access(&self.0, now.naive_utc())
            .map(|record| Viewer::whole_user(record.user_id))
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

impl FromRequest for BearerToken {
    type Error = ApiError;
    type Future = Ready<Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        ready(bearer_token(req).map(BearerToken))
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
