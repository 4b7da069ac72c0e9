//! The OAuth 2 authorization server's rules: client authentication, access
//! and refresh tokens (rotation, replay detection), authorization codes
//! (single use, PKCE), revocation (RFC 7009) and portal sessions. Every
//! secret is random with a readable prefix and stored only as SHA-256;
//! persistence goes through [`OAuthStore`], time comes in as `now`.

use crate::secret;
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chrono::{Duration, NaiveDateTime};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;
use tributary_domain::ids::{AppId, AuthCodeId, GrantId, PortalSessionId, TokenId, UserId};
use tributary_domain::model::{PkceMethod, TokenKind};
use tributary_storage::apps::{self, AppRecord};
use tributary_storage::oauth::{
    self as store, CodeRecord, NewCode, NewToken, PortalSessionRecord, TokenRecord,
};
use tributary_storage::{AnyConnection, StorageError};

pub const ACCESS_TOKEN_PREFIX: &str = "tat_";
pub const REFRESH_TOKEN_PREFIX: &str = "trt_";
pub const CODE_PREFIX: &str = "tac_";
pub const PORTAL_SESSION_PREFIX: &str = "tps_";
pub const CLIENT_SECRET_PREFIX: &str = "tcs_";

pub const ACCESS_TOKEN_TTL: Duration = Duration::seconds(3600);
pub const REFRESH_TOKEN_TTL: Duration = Duration::days(60);
pub const CODE_TTL: Duration = Duration::minutes(10);
pub const PORTAL_SESSION_TTL: Duration = Duration::minutes(15);

/// Where OAuth state lives; implemented over storage for `AnyConnection`.
pub trait OAuthStore {
    /// Runs `work` as one database transaction: all of its writes or none.
    /// A rotation (mark the old token used, issue the new pair) must be one
    /// unit, so that a concurrent replay's family revocation, which runs
    /// after the rotation's row lock is released, sees the new pair too.
    fn atomically<T>(
        &mut self,
        work: impl FnOnce(&mut Self) -> Result<T, StorageError>,
    ) -> Result<T, StorageError>;
    fn find_app(&mut self, client_id: &str) -> Result<Option<AppRecord>, StorageError>;
    fn redirect_uris(&mut self, app_id: AppId) -> Result<Vec<String>, StorageError>;
    fn insert_token(&mut self, token: &NewToken<'_>) -> Result<(), StorageError>;
    fn find_token(&mut self, token_hash: &str) -> Result<Option<TokenRecord>, StorageError>;
    /// The token, read under a lock that serialises its rotations.
    fn lock_token(&mut self, id: TokenId) -> Result<Option<TokenRecord>, StorageError>;
    fn mark_token_used(&mut self, id: TokenId, now: NaiveDateTime) -> Result<bool, StorageError>;
    fn revoke_family(&mut self, family: &str, now: NaiveDateTime) -> Result<usize, StorageError>;
    fn revoke_token(&mut self, id: TokenId, now: NaiveDateTime) -> Result<(), StorageError>;
    fn insert_code(&mut self, code: &NewCode<'_>) -> Result<(), StorageError>;
    fn find_code(&mut self, code_hash: &str) -> Result<Option<CodeRecord>, StorageError>;
    fn mark_code_redeemed(
        &mut self,
        id: AuthCodeId,
        family: &str,
        now: NaiveDateTime,
    ) -> Result<bool, StorageError>;
    fn insert_portal_session(
        &mut self,
        app_id: AppId,
        user_id: UserId,
        hash: &str,
        expires_at: NaiveDateTime,
        now: NaiveDateTime,
    ) -> Result<(), StorageError>;
    fn find_portal_session(
        &mut self,
        hash: &str,
    ) -> Result<Option<PortalSessionRecord>, StorageError>;
    fn mark_portal_session_used(
        &mut self,
        id: PortalSessionId,
        now: NaiveDateTime,
    ) -> Result<bool, StorageError>;
}

impl OAuthStore for AnyConnection {
    fn atomically<T>(
        &mut self,
        work: impl FnOnce(&mut Self) -> Result<T, StorageError>,
    ) -> Result<T, StorageError> {
        AnyConnection::atomically(self, work)
    }
    fn find_app(&mut self, client_id: &str) -> Result<Option<AppRecord>, StorageError> {
        apps::find_by_client_id(self, client_id)
    }
    fn redirect_uris(&mut self, app_id: AppId) -> Result<Vec<String>, StorageError> {
        apps::redirect_uris(self, app_id)
    }
    fn insert_token(&mut self, token: &NewToken<'_>) -> Result<(), StorageError> {
        store::insert_token(self, token)
    }
    fn find_token(&mut self, token_hash: &str) -> Result<Option<TokenRecord>, StorageError> {
        store::find_token(self, token_hash)
    }
    fn lock_token(&mut self, id: TokenId) -> Result<Option<TokenRecord>, StorageError> {
        store::lock_token(self, id)
    }
    fn mark_token_used(&mut self, id: TokenId, now: NaiveDateTime) -> Result<bool, StorageError> {
        store::mark_token_used(self, id, now)
    }
    fn revoke_family(&mut self, family: &str, now: NaiveDateTime) -> Result<usize, StorageError> {
        store::revoke_family(self, family, now)
    }
    fn revoke_token(&mut self, id: TokenId, now: NaiveDateTime) -> Result<(), StorageError> {
        store::revoke_token(self, id, now)
    }
    fn insert_code(&mut self, code: &NewCode<'_>) -> Result<(), StorageError> {
        store::insert_code(self, code)
    }
    fn find_code(&mut self, code_hash: &str) -> Result<Option<CodeRecord>, StorageError> {
        store::find_code(self, code_hash)
    }
    fn mark_code_redeemed(
        &mut self,
        id: AuthCodeId,
        family: &str,
        now: NaiveDateTime,
    ) -> Result<bool, StorageError> {
        store::mark_code_redeemed(self, id, family, now)
    }
    fn insert_portal_session(
        &mut self,
        app_id: AppId,
        user_id: UserId,
        hash: &str,
        expires_at: NaiveDateTime,
        now: NaiveDateTime,
    ) -> Result<(), StorageError> {
        store::insert_portal_session(self, app_id, user_id, hash, expires_at, now)
    }
    fn find_portal_session(
        &mut self,
        hash: &str,
    ) -> Result<Option<PortalSessionRecord>, StorageError> {
        store::find_portal_session(self, hash)
    }
    fn mark_portal_session_used(
        &mut self,
        id: PortalSessionId,
        now: NaiveDateTime,
    ) -> Result<bool, StorageError> {
        store::mark_portal_session_used(self, id, now)
    }
}

/// RFC 6749 §5.2 errors; the message goes to `error_description`.
#[derive(Debug, thiserror::Error)]
pub enum OAuthError {
    #[error("{0}")]
    InvalidRequest(String),
    #[error("{0}")]
    InvalidClient(String),
    #[error("{0}")]
    InvalidGrant(String),
    #[error("{0}")]
    UnsupportedGrantType(String),
    /// RFC 8707 §2: the `resource` asked for is not one this server issues
    /// tokens for.
    #[error("{0}")]
    InvalidTarget(String),
    #[error(transparent)]
    Storage(#[from] StorageError),
}

impl OAuthError {
    /// The `error` code of RFC 6749 §5.2.
    pub fn code(&self) -> &'static str {
        match self {
            OAuthError::InvalidRequest(_) => "invalid_request",
            OAuthError::InvalidClient(_) => "invalid_client",
            OAuthError::InvalidGrant(_) => "invalid_grant",
            OAuthError::UnsupportedGrantType(_) => "unsupported_grant_type",
            OAuthError::InvalidTarget(_) => "invalid_target",
            OAuthError::Storage(_) => "server_error",
        }
    }
}

/// A token pair as issued: shown to the client once.
#[derive(Debug)]
pub struct TokenPair {
    pub access_token: String,
    pub refresh_token: String,
    pub expires_in: i64,
    pub app_id: AppId,
    /// Tributary's id of the user (the response carries the public id).
    pub user_id: UserId,
}

/// A new token family id, for a pair issued from a fresh grant.
pub fn new_family() -> String {
    secret::random_id("fam_", 16)
}

/// A new access and refresh token of `family`, for `user_id` at `app_id`,
/// under the person's MCP consent `grant` (`None`: a Platform app's).
pub fn issue_pair(
    store: &mut impl OAuthStore,
    (app_id, user_id, grant): (AppId, UserId, Option<GrantId>),
    family: &str,
    now: NaiveDateTime,
) -> Result<TokenPair, StorageError> {
    let access_token = secret::generate(ACCESS_TOKEN_PREFIX);
    let refresh_token = secret::generate(REFRESH_TOKEN_PREFIX);
    for (token, kind, ttl) in [
        (&access_token, TokenKind::Access, ACCESS_TOKEN_TTL),
        (&refresh_token, TokenKind::Refresh, REFRESH_TOKEN_TTL),
    ] {
        store.insert_token(&NewToken {
            app_id,
            user_id,
            grant_id: grant,
            family,
            kind,
            token_hash: &secret::hash(token),
            expires_at: now + ttl,
            now,
        })?;
    }
    Ok(TokenPair {
        access_token,
        refresh_token,
        expires_in: ACCESS_TOKEN_TTL.num_seconds(),
        app_id,
        user_id,
    })
}

/// Checks a redirect URI an app registers: absolute, no fragment, and
/// https (http only for loopback, for development).
pub fn validate_redirect_uri(uri: &str) -> Result<(), String> {
    let parsed =
        url::Url::parse(uri).map_err(|err| format!("`{uri}` is not an absolute URL: {err}"))?;
    if parsed.fragment().is_some() {
        return Err(format!(
            "`{uri}` has a fragment (#…), which redirect URIs may not have"
        ));
    }
    let loopback = matches!(parsed.host_str(), Some("localhost" | "127.0.0.1" | "[::1]"));
    match parsed.scheme() {
        "https" => Ok(()),
        "http" if loopback => Ok(()),
        other => Err(format!(
            "`{uri}` uses {other}: redirect URIs must use https (http only for localhost)"
        )),
    }
}

/// A new client id for an app (not secret).
pub fn new_client_id() -> String {
    secret::random_id("app_", 18)
}

/// A new public id for an app's user (the `user_id` apps see; not secret).
pub fn new_user_public_id() -> String {
    secret::random_id("usr_", 16)
}

/// A new client secret and its hash (the hash is what is stored).
pub fn new_client_secret() -> (String, String) {
    let secret = secret::generate(CLIENT_SECRET_PREFIX);
    let hash = secret::hash(&secret);
    (secret, hash)
}

/// Authenticates an app by its client id and, for confidential apps, its
/// secret (compared in constant time; an unknown client costs the same).
pub fn authenticate_client(
    store: &mut impl OAuthStore,
    client_id: &str,
    client_secret: Option<&str>,
) -> Result<AppRecord, OAuthError> {
    let client_secret = client_secret.filter(|s| !s.is_empty());
    let app = store.find_app(client_id)?;
    let stored_hash = app
        .as_ref()
        .and_then(|a| a.client_secret_hash.clone())
        .unwrap_or_else(|| "0".repeat(64));
    let secret_ok = client_secret.is_some_and(|s| secret::matches_hash(s, &stored_hash));
    match app {
        Some(app) if app.is_public && client_secret.is_none() => Ok(app),
        Some(app) if !app.is_public && secret_ok => Ok(app),
        Some(app) if app.is_public => Err(OAuthError::InvalidClient(format!(
            "{} is a public client: it has no secret",
            app.client_id
        ))),
        _ => Err(OAuthError::InvalidClient(
            "client authentication failed".into(),
        )),
    }
}

/// Where an access token is presented: each kind of client's tokens work
/// only where they belong (RFC 8707), so a token an assistant got for
/// `/mcp` reads nothing of the Platform API, nor the other way round.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resource {
    /// The Platform API's bearer data endpoints: tokens of Platform apps.
    PlatformApi,
    /// The MCP server: tokens issued under a person's consent (a grant).
    Mcp,
}

/// The token record behind a bearer access token, when it is valid now
/// for `resource`.
pub fn authenticate_access(
    store: &mut impl OAuthStore,
    token: &str,
    resource: Resource,
    now: NaiveDateTime,
) -> Result<TokenRecord, AccessError> {
    if !secret::is_well_formed(token, ACCESS_TOKEN_PREFIX) {
        return Err(AccessError::Malformed);
    }
    let record = store
        .find_token(&secret::hash(token))?
        .ok_or(AccessError::Unknown)?;
    let belongs = match resource {
        Resource::PlatformApi => record.grant_id.is_none(),
        Resource::Mcp => record.grant_id.is_some(),
    };
    if record.kind != TokenKind::Access
        || !secret::matches_hash(token, &record.token_hash)
        || record.revoked_at.is_some()
        || !belongs
    {
        return Err(AccessError::Unknown);
    }
    if now >= record.expires_at {
        return Err(AccessError::Expired);
    }
    Ok(record)
}

#[derive(Debug, thiserror::Error)]
pub enum AccessError {
    #[error("the access token is malformed")]
    Malformed,
    #[error("the access token is not valid")]
    Unknown,
    #[error("the access token has expired; refresh it")]
    Expired,
    #[error(transparent)]
    Storage(#[from] StorageError),
}

/// `refresh_token` grant: rotates the pair. A refresh token presented a
/// second time revokes its whole family (it was stolen, or the client is
/// broken: either way nothing of that grant may be trusted).
pub fn refresh(
    store: &mut impl OAuthStore,
    app: &AppRecord,
    refresh_token: &str,
    now: NaiveDateTime,
) -> Result<TokenPair, OAuthError> {
    let invalid = |why: &str| OAuthError::InvalidGrant(why.to_owned());
    if !secret::is_well_formed(refresh_token, REFRESH_TOKEN_PREFIX) {
        return Err(invalid("the refresh token is malformed"));
    }
    let record = store
        .find_token(&secret::hash(refresh_token))?
        .ok_or_else(|| invalid("the refresh token is not valid"))?;
    if record.kind != TokenKind::Refresh
        || record.app_id != app.id
        || !secret::matches_hash(refresh_token, &record.token_hash)
    {
        return Err(invalid("the refresh token is not valid"));
    }
    if record.revoked_at.is_some() {
        return Err(invalid("the refresh token was revoked"));
    }
    if record.used_at.is_none() && now >= record.expires_at {
        return Err(invalid("the refresh token has expired"));
    }
    // One transaction, serialised on the token's row: the first rotation
    // marks it used and issues the successors; every concurrent or later
    // one then finds it used, with those successors committed, and revokes
    // the whole family. The revocation commits though the request fails.
    let rotation = store.atomically(|store| {
        let current = store.lock_token(record.id)?;
        let Some(current) = current.filter(|t| t.revoked_at.is_none()) else {
            return Ok(Rotation::Revoked);
        };
        if current.used_at.is_some() || !store.mark_token_used(record.id, now)? {
            store.revoke_family(&record.family, now)?;
            return Ok(Rotation::Replayed);
        }
        issue_pair(
            store,
            (app.id, record.user_id, record.grant_id),
            &record.family,
            now,
        )
        .map(Rotation::Rotated)
    })?;
    match rotation {
        Rotation::Rotated(pair) => Ok(pair),
        Rotation::Revoked => Err(invalid("the refresh token was revoked")),
        Rotation::Replayed => Err(invalid(
            "the refresh token was already used; every token of its grant is now revoked",
        )),
    }
}

/// What one `refresh_token` grant did.
enum Rotation {
    Rotated(TokenPair),
    Revoked,
    Replayed,
}

/// PKCE methods: only S256 (`plain` would let an eavesdropper redeem).
fn check_challenge(challenge: &str, method: &str) -> Result<PkceMethod, OAuthError> {
    let method: PkceMethod = method.parse().map_err(|_| {
        OAuthError::InvalidRequest(format!(
            "code_challenge_method `{method}` is not supported: use S256"
        ))
    })?;
    if challenge.len() != 43
        || !challenge
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    {
        return Err(OAuthError::InvalidRequest(
            "code_challenge must be the base64url SHA-256 of the verifier (43 characters)".into(),
        ));
    }
    Ok(method)
}

/// The PKCE part of an authorization request: required of public apps,
/// S256 only, a well-formed challenge. Answers the challenge with its method.
pub fn check_pkce<'a>(
    app: &AppRecord,
    challenge: Option<(&'a str, &str)>,
) -> Result<Option<(&'a str, PkceMethod)>, OAuthError> {
    match challenge {
        Some((challenge, method)) => Ok(Some((challenge, check_challenge(challenge, method)?))),
        None if app.is_public => Err(OAuthError::InvalidRequest(
            "public clients must send a code_challenge (PKCE, S256)".into(),
        )),
        None => Ok(None),
    }
}

/// Issues an authorization code (for the browser flow): bound to the app,
/// the user, the exact registered `redirect_uri` and the PKCE challenge
/// (required of public apps, S256 only).
pub fn issue_code(
    store: &mut impl OAuthStore,
    app: &AppRecord,
    (user_id, grant): (UserId, Option<GrantId>),
    redirect_uri: &str,
    challenge: Option<(&str, &str)>,
    now: NaiveDateTime,
) -> Result<String, OAuthError> {
    if !store
        .redirect_uris(app.id)?
        .iter()
        .any(|uri| uri == redirect_uri)
    {
        return Err(OAuthError::InvalidRequest(
            "redirect_uri is not registered for this client".into(),
        ));
    }
    let challenge = check_pkce(app, challenge)?;
    let code = secret::generate(CODE_PREFIX);
    store.insert_code(&NewCode {
        app_id: app.id,
        user_id,
        grant_id: grant,
        code_hash: &secret::hash(&code),
        redirect_uri,
        code_challenge: challenge.map(|(c, _)| c),
        code_challenge_method: challenge.map(|(_, method)| method),
        expires_at: now + CODE_TTL,
        now,
    })?;
    Ok(code)
}

fn verifier_matches(verifier: &str, challenge: &str) -> bool {
    let well_formed = (43..=128).contains(&verifier.len())
        && verifier
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~'));
    let computed = URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()));
    well_formed && bool::from(computed.as_bytes().ct_eq(challenge.as_bytes()))
}

/// `authorization_code` grant. A code redeemed twice revokes the tokens its
/// first redemption issued.
pub fn redeem_code(
    store: &mut impl OAuthStore,
    app: &AppRecord,
    code: &str,
    redirect_uri: &str,
    code_verifier: Option<&str>,
    now: NaiveDateTime,
) -> Result<TokenPair, OAuthError> {
    let invalid = |why: &str| OAuthError::InvalidGrant(why.to_owned());
    if !secret::is_well_formed(code, CODE_PREFIX) {
        return Err(invalid("the code is malformed"));
    }
    let record = store
        .find_code(&secret::hash(code))?
        .ok_or_else(|| invalid("the code is not valid"))?;
    if record.app_id != app.id || !secret::matches_hash(code, &record.code_hash) {
        return Err(invalid("the code was not issued to this client"));
    }
    if record.redeemed_at.is_some() {
        if let Some(family) = &record.family {
            store.revoke_family(family, now)?;
        }
        return Err(invalid(
            "the code was already used; the tokens it issued are now revoked",
        ));
    }
    if now >= record.expires_at {
        return Err(invalid("the code has expired"));
    }
    if record.redirect_uri != redirect_uri {
        return Err(invalid(
            "redirect_uri differs from the one the code was issued for",
        ));
    }
    match (&record.code_challenge, code_verifier) {
        (Some(challenge), Some(verifier)) if verifier_matches(verifier, challenge) => {}
        (Some(_), Some(_)) => {
            return Err(invalid("code_verifier does not match the code_challenge"));
        }
        (Some(_), None) => {
            return Err(invalid(
                "code_verifier is required: the code was issued with a code_challenge",
            ));
        }
        (None, Some(_)) => {
            return Err(invalid(
                "code_verifier was sent but the code was issued without a code_challenge",
            ));
        }
        (None, None) if app.is_public => return Err(invalid("public clients must use PKCE")),
        (None, None) => {}
    }
    // Consuming the code and issuing its tokens commit together: a failure
    // in between burns nothing, and a concurrent second redemption (which
    // waits for the first's row lock) finds the tokens it must revoke.
    let family = new_family();
    let issued = store.atomically(|store| {
        if !store.mark_code_redeemed(record.id, &family, now)? {
            if let Some(first) = store.find_code(&record.code_hash)?.and_then(|c| c.family) {
                store.revoke_family(&first, now)?;
            }
            return Ok(None);
        }
        issue_pair(
            store,
            (app.id, record.user_id, record.grant_id),
            &family,
            now,
        )
        .map(Some)
    })?;
    issued.ok_or_else(|| invalid("the code was already used; the tokens it issued are now revoked"))
}

/// RFC 7009: revokes a token of `app` (a refresh token takes its whole
/// family with it). Unknown tokens and other apps' tokens are ignored, as
/// the RFC asks, so the answer reveals nothing.
pub fn revoke(
    store: &mut impl OAuthStore,
    app: &AppRecord,
    token: &str,
    now: NaiveDateTime,
) -> Result<(), StorageError> {
    let Some(record) = store.find_token(&secret::hash(token))? else {
        return Ok(());
    };
    if record.app_id != app.id {
        return Ok(());
    }
    if record.kind == TokenKind::Refresh {
        store.revoke_family(&record.family, now)?;
    } else {
        store.revoke_token(record.id, now)?;
    }
    Ok(())
}

/// A portal session: a single-use secret (for the URL) valid 15 minutes.
pub fn create_portal_session(
    store: &mut impl OAuthStore,
    app_id: AppId,
    user_id: UserId,
    now: NaiveDateTime,
) -> Result<(String, NaiveDateTime), StorageError> {
    let token = secret::generate(PORTAL_SESSION_PREFIX);
    let expires_at = now + PORTAL_SESSION_TTL;
    store.insert_portal_session(app_id, user_id, &secret::hash(&token), expires_at, now)?;
    Ok((token, expires_at))
}

#[derive(Debug, thiserror::Error)]
pub enum PortalError {
    #[error("this portal link is not valid")]
    Unknown,
    #[error("this portal link has expired; ask the app for a new one")]
    Expired,
    #[error("this portal link was already used; ask the app for a new one")]
    Used,
    #[error(transparent)]
    Storage(#[from] StorageError),
}

/// Opens a portal session once: the portal page calls this when the user
/// arrives.
pub fn consume_portal_session(
    store: &mut impl OAuthStore,
    token: &str,
    now: NaiveDateTime,
) -> Result<PortalSessionRecord, PortalError> {
    if !secret::is_well_formed(token, PORTAL_SESSION_PREFIX) {
        return Err(PortalError::Unknown);
    }
    let record = store
        .find_portal_session(&secret::hash(token))?
        .ok_or(PortalError::Unknown)?;
    if now >= record.expires_at {
        return Err(PortalError::Expired);
    }
    if record.used_at.is_some() || !store.mark_portal_session_used(record.id, now)? {
        return Err(PortalError::Used);
    }
    Ok(record)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redirect_uris_must_be_absolute_https_without_fragment() {
        assert!(validate_redirect_uri("https://app.example/callback?x=1").is_ok());
        assert!(validate_redirect_uri("http://localhost:3000/cb").is_ok());
        assert!(validate_redirect_uri("http://app.example/cb").is_err());
        assert!(validate_redirect_uri("https://app.example/cb#frag").is_err());
        assert!(validate_redirect_uri("/relative").is_err());
    }

    #[test]
    fn s256_verifiers_match_their_challenge_only() {
        // RFC 7636 appendix B.
        let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
        let challenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";
        assert!(verifier_matches(verifier, challenge));
        assert!(!verifier_matches(
            "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXK",
            challenge
        ));
        assert!(!verifier_matches("short", challenge));
        assert!(check_challenge(challenge, "S256").is_ok());
        assert!(matches!(
            check_challenge(challenge, "plain"),
            Err(OAuthError::InvalidRequest(_))
        ));
    }
}
