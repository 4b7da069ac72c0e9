//! Assistants that connect to `/mcp` by URL (the MCP authorization
//! specification; docs/mcp.md, "OAuth"): what a dynamic registration (RFC
//! 7591) may say and how often, the consent a code is issued under, and
//! the viewer an MCP access token reads as. Codes, token pairs, rotation
//! and replay detection are the authorization server's own
//! ([`crate::oauth`]); an MCP token carries its grant, which binds it to
//! `/mcp` and to the accounts the person chose.

use crate::oauth::{self, AccessError, OAuthError, Resource};
use crate::secret;
use chrono::{Duration, NaiveDateTime};
use tributary_domain::access::Viewer;
use tributary_domain::ids::{AccountId, GrantId, UserId};
use tributary_storage::apps::AppRecord;
use tributary_storage::mcp_clients::{self, NewClient};
use tributary_storage::{AnyConnection, StorageError};

/// Registrations one address may make an hour.
pub const REGISTRATIONS_PER_HOUR: i64 = 10;
/// A registration with no consent in force is deleted after this long
/// without a code or a token.
pub const UNUSED_REGISTRATION_LIFETIME: Duration = Duration::days(1);
/// Redirect URIs one registration may have.
pub const MAX_REDIRECT_URIS: usize = 10;
const MAX_URI_LENGTH: usize = 2000;
const MAX_NAME_LENGTH: usize = 100;
/// The grant's last use is written at most this often.
const USE_RESOLUTION: Duration = Duration::minutes(1);

/// Schemes a redirect URI may not use: they run or read something in the
/// browser or on the machine instead of handing the code to an app.
const REFUSED_SCHEMES: [&str; 7] = [
    "javascript",
    "data",
    "file",
    "blob",
    "about",
    "vbscript",
    "filesystem",
];

/// RFC 7591 §3.2.2 errors.
#[derive(Debug, thiserror::Error)]
pub enum RegistrationError {
    #[error("{0}")]
    InvalidRedirectUri(String),
    #[error("{0}")]
    InvalidClientMetadata(String),
    #[error(
        "this address registered {REGISTRATIONS_PER_HOUR} clients in the last hour; try again later"
    )]
    RateLimited,
    #[error(transparent)]
    Storage(#[from] StorageError),
}

impl RegistrationError {
    /// The `error` code of RFC 7591 §3.2.2.
    pub fn code(&self) -> &'static str {
        match self {
            RegistrationError::InvalidRedirectUri(_) => "invalid_redirect_uri",
            RegistrationError::InvalidClientMetadata(_) | RegistrationError::RateLimited => {
                "invalid_client_metadata"
            }
            RegistrationError::Storage(_) => "server_error",
        }
    }
}

/// What a client asks to be registered with, already read from its JSON.
#[derive(Debug, Clone, Default)]
pub struct Registration {
    pub redirect_uris: Vec<String>,
    pub client_name: Option<String>,
    pub grant_types: Option<Vec<String>>,
    pub response_types: Option<Vec<String>>,
}

/// Checks a redirect URI an assistant registers: absolute, no fragment;
/// https, http only to this machine (RFC 8252 §7.3), or an app's own
/// scheme (RFC 8252 §7.1: `cursor://…`, `com.example.app:/cb`), never one
/// that runs or reads something in the browser.
pub fn check_redirect_uri(uri: &str) -> Result<(), String> {
    if uri.len() > MAX_URI_LENGTH {
        return Err(format!(
            "a redirect URI is longer than {MAX_URI_LENGTH} characters"
        ));
    }
    let parsed =
        url::Url::parse(uri).map_err(|err| format!("`{uri}` is not an absolute URI: {err}"))?;
    if parsed.fragment().is_some() {
        return Err(format!(
            "`{uri}` has a fragment (#…), which redirect URIs may not have"
        ));
    }
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Err(format!("`{uri}` carries a user name or password"));
    }
    let loopback = matches!(parsed.host_str(), Some("localhost" | "127.0.0.1" | "[::1]"));
    match parsed.scheme() {
        "https" => Ok(()),
        "http" if loopback => Ok(()),
        "http" => Err(format!(
            "`{uri}` uses http: redirect URIs must use https (http only to localhost)"
        )),
        scheme if REFUSED_SCHEMES.contains(&scheme) => Err(format!(
            "`{uri}`: the scheme {scheme} cannot receive a code"
        )),
        _ => Ok(()),
    }
}

/// Registers a public client (RFC 7591): at least one redirect URI, each
/// checked; only the authorization code and refresh token grants. A
/// client asking for another token endpoint authentication is registered
/// as public anyway (`none`, RFC 7591 §3.2.1 lets the server say so):
/// PKCE is what protects its codes.
pub fn register(
    conn: &mut AnyConnection,
    asked: &Registration,
    ip: &str,
    now: NaiveDateTime,
) -> Result<AppRecord, RegistrationError> {
    let invalid = |why: String| RegistrationError::InvalidClientMetadata(why);
    if asked.redirect_uris.is_empty() {
        return Err(RegistrationError::InvalidRedirectUri(
            "redirect_uris: at least one is required".into(),
        ));
    }
    if asked.redirect_uris.len() > MAX_REDIRECT_URIS {
        return Err(RegistrationError::InvalidRedirectUri(format!(
            "redirect_uris: at most {MAX_REDIRECT_URIS}"
        )));
    }
    for uri in &asked.redirect_uris {
        check_redirect_uri(uri).map_err(|why| {
            RegistrationError::InvalidRedirectUri(format!("redirect_uris: {why}"))
        })?;
    }
    if let Some(grants) = &asked.grant_types
        && let Some(other) = grants
            .iter()
            .find(|g| !matches!(g.as_str(), "authorization_code" | "refresh_token"))
    {
        return Err(invalid(format!(
            "grant_types: `{other}` is not offered (authorization_code and refresh_token are)"
        )));
    }
    if let Some(types) = &asked.response_types
        && let Some(other) = types.iter().find(|t| t.as_str() != "code")
    {
        return Err(invalid(format!(
            "response_types: `{other}` is not offered (code is)"
        )));
    }
    let name = asked
        .client_name
        .as_deref()
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .unwrap_or("An MCP client");
    // The consent page shows the name: nothing in it may hide or reorder
    // what a person reads (controls, bidi overrides and isolates, zero
    // widths).
    let hides = |c: char| {
        c.is_control()
            || matches!(c, '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{2069}' | '\u{FEFF}')
    };
    if name.chars().count() > MAX_NAME_LENGTH || name.chars().any(hides) {
        return Err(invalid(format!(
            "client_name: at most {MAX_NAME_LENGTH} characters, none that hides or reorders text"
        )));
    }
    let registered = conn.atomically(|conn| {
        // The unused registrations of everyone go first, a batch at a time.
        mcp_clients::purge_unused(conn, now - UNUSED_REGISTRATION_LIFETIME)?;
        if mcp_clients::registrations_since(conn, ip, now - Duration::hours(1))?
            >= REGISTRATIONS_PER_HOUR
        {
            return Ok(None);
        }
        mcp_clients::register(
            conn,
            &NewClient {
                client_id: &secret::random_id("mcp_", 18),
                name,
                redirect_uris: &asked.redirect_uris,
                ip,
                now,
            },
        )
        .map(Some)
    })?;
    registered.ok_or(RegistrationError::RateLimited)
}

/// The registered assistant with this client id, while its registration
/// lasts ([`UNUSED_REGISTRATION_LIFETIME`] without a consent in force).
pub fn find_client(
    conn: &mut AnyConnection,
    client_id: &str,
    now: NaiveDateTime,
) -> Result<Option<AppRecord>, StorageError> {
    mcp_clients::find_live(conn, client_id, now - UNUSED_REGISTRATION_LIFETIME)
}

/// The consent page's answer: `user_id` lets `client` read `accounts`; a
/// code for it, bound to the redirect URI and the PKCE challenge (required,
/// S256).
pub fn consent(
    conn: &mut AnyConnection,
    client: &AppRecord,
    user_id: UserId,
    accounts: &[AccountId],
    redirect_uri: &str,
    challenge: (&str, &str),
    now: NaiveDateTime,
) -> Result<String, OAuthError> {
    // The grant and its code commit together: a refused code leaves no
    // consent behind.
    conn.atomically_or(|conn| {
        let grant = mcp_clients::create_grant(conn, user_id, client.id, accounts, now)?;
        mcp_clients::mark_used(conn, client.id, now)?;
        oauth::issue_code(
            conn,
            client,
            (user_id, Some(grant)),
            redirect_uri,
            Some(challenge),
            now,
        )
    })
}

/// Who an MCP access token reads as: its person, limited to the accounts
/// the grant names; refused when the grant was revoked.
pub fn authenticate(
    conn: &mut AnyConnection,
    token: &str,
    now: NaiveDateTime,
) -> Result<(GrantId, Viewer), AccessError> {
    let record = oauth::authenticate_access(conn, token, Resource::Mcp, now)?;
    let grant_id = record.grant_id.ok_or(AccessError::Unknown)?;
    let (grant, accounts) =
        mcp_clients::grant_scope(conn, grant_id)?.ok_or(AccessError::Unknown)?;
    if grant.revoked_at.is_some() || grant.user_id != record.user_id {
        return Err(AccessError::Unknown);
    }
    if grant
        .last_used_at
        .is_none_or(|last| now - last >= USE_RESOLUTION)
        && let Err(err) = mcp_clients::touch_grant(conn, grant_id, now)
    {
        // Bookkeeping: a failure must not turn reads away.
        log::warn!("MCP grant {grant_id}: last use not recorded: {err}");
    }
    Ok((
        grant_id,
        Viewer {
            user_id: record.user_id,
            account_scope: Some(accounts),
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redirect_uris_of_assistants() {
        for good in [
            "https://claude.ai/api/mcp/auth_callback",
            "http://127.0.0.1:33418/callback",
            "http://localhost:6274/oauth/callback",
            "cursor://anysphere.cursor-mcp/oauth/callback",
            "com.example.app:/oauth2redirect",
        ] {
            assert!(check_redirect_uri(good).is_ok(), "{good}");
        }
        for bad in [
            "http://evil.example/cb",
            "javascript:alert(1)",
            "data:text/html,hi",
            "file:///etc/passwd",
            "https://app.example/cb#frag",
            "https://user:pw@app.example/cb",
            "/relative",
        ] {
            assert!(check_redirect_uri(bad).is_err(), "{bad}");
        }
    }
}
