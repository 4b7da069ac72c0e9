//! The contract between the sync engine and a data source.
//!
//! Connectors are synchronous: a sync runs on a worker thread (never on the
//! async HTTP runtime), between two short database transactions, and holds no
//! pooled database connection while it waits on the provider.

use chrono::{DateTime, Utc};
use std::collections::{BTreeSet, HashSet};
use std::fmt;
use std::time::Duration;
use tributary_domain::ids::UserId;
use tributary_domain::model::{ConnectionStatus, Provider};
use tributary_domain::provider_limits::ProviderLimits;
use tributary_domain::snapshot::{ProviderSnapshot, SnapshotInstitution};

/// What a connector knows about the connection it fetches for.
#[derive(Clone)]
pub struct FetchContext<'a> {
    pub now: DateTime<Utc>,
    /// The connection's non-secret settings, as `prepare` returned them.
    pub settings: &'a serde_json::Value,
    /// The connection's credentials, opened for this fetch only.
    pub credentials: Option<&'a str>,
    /// The end of the previous successful sync, if any.
    pub last_synced_at: Option<DateTime<Utc>>,
    /// The day of the oldest pending transaction stored for the
    /// connection: a complete snapshot that does not list it removes it,
    /// so a connector that reads a window must reach back to it
    /// ([`FetchContext::reach_back`]).
    pub oldest_pending: Option<chrono::NaiveDate>,
    /// The provider's ids of the accounts the connection holds: an account
    /// not among them (opened, or shared, since the last sync) is read
    /// whole ([`FetchContext::reach_back_for`]) if it would be taken.
    pub stored_accounts: &'a HashSet<String>,
    /// The accounts the person chose to share; `None`: all. One left out
    /// is not stored, so not read whole either.
    pub chosen_accounts: Option<&'a BTreeSet<String>>,
    /// Keeps, sealed and at once, credentials the provider replaced during
    /// this fetch (a refresh token that is good for one use): a sync that
    /// fails after the exchange must not lose them. `None` where nothing
    /// is stored (a connector tried on its own).
    pub keep_credentials: Option<CredentialKeeper<'a>>,
}

/// Where a fetch keeps replaced credentials ([`FetchContext::keep_credentials`]).
pub type CredentialKeeper<'a> = &'a dyn Fn(&str) -> Result<(), ConnectorError>;

impl FetchContext<'_> {
    /// Where a later sync reads from: `overlap_days` before the last one,
    /// or earlier, a day before the oldest pending transaction stored (a
    /// window that left it out would take it for gone). `None` on the
    /// first sync: everything.
    pub fn reach_back(&self, overlap_days: i64) -> Option<DateTime<Utc>> {
        let last = self.last_synced_at?;
        let window = last - chrono::Duration::days(overlap_days);
        let pending = self
            .oldest_pending
            .and_then(|day| day.pred_opt())
            .map(|day| day.and_time(chrono::NaiveTime::MIN).and_utc());
        Some(pending.map_or(window, |pending| pending.min(window)))
    }

    /// The previous successful sync, for one account: `None` for an
    /// account the connection does not hold yet and would take (all are
    /// taken, or the person chose it), as on a first sync.
    pub fn last_synced_for(&self, provider_account_id: &str) -> Option<DateTime<Utc>> {
        let taken_anew = !self.stored_accounts.contains(provider_account_id)
            && self
                .chosen_accounts
                .is_none_or(|chosen| chosen.contains(provider_account_id));
        self.last_synced_at.filter(|_| !taken_anew)
    }

    /// [`FetchContext::reach_back`] for one account: `None` (its whole
    /// history) for an account the connection does not hold yet. An
    /// account opened or shared since the last sync has history from
    /// before the window that no later sync would read.
    pub fn reach_back_for(
        &self,
        provider_account_id: &str,
        overlap_days: i64,
    ) -> Option<DateTime<Utc>> {
        self.last_synced_for(provider_account_id)?;
        self.reach_back(overlap_days)
    }
}

// Credentials never reach a log through `{:?}`.
impl std::fmt::Debug for FetchContext<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FetchContext")
            .field("now", &self.now)
            .field("settings", &self.settings)
            .field("credentials", &self.credentials.map(|_| "<sealed>"))
            .field("last_synced_at", &self.last_synced_at)
            .field("oldest_pending", &self.oldest_pending)
            .field("stored_accounts", &self.stored_accounts.len())
            .field("chosen_accounts", &self.chosen_accounts.map(BTreeSet::len))
            .finish()
    }
}

/// What a user gives to connect: settings, and a one-time secret where the
/// provider needs one (a SimpleFIN setup token, say).
#[derive(Clone, Default)]
pub struct ConnectRequest {
    pub settings: serde_json::Value,
    pub secret: Option<String>,
}

impl std::fmt::Debug for ConnectRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConnectRequest")
            .field("settings", &self.settings)
            .field("secret", &self.secret.as_ref().map(|_| "<redacted>"))
            .finish()
    }
}

/// A connection ready to be stored.
pub struct Prepared {
    pub institution: SnapshotInstitution,
    /// Non-secret settings to keep.
    pub settings: serde_json::Value,
    /// Credentials to keep (sealed before they are stored).
    pub credentials: Option<String>,
    /// When the user's consent at the provider runs out, where it does.
    pub consent: Option<ConsentEnd>,
}

/// When a consent ends: a stretch from now (what the connector asked for),
/// or the time the provider gave.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConsentEnd {
    After(chrono::Duration),
    At(DateTime<Utc>),
}

impl ConsentEnd {
    pub fn at(self, now: DateTime<Utc>) -> DateTime<Utc> {
        match self {
            ConsentEnd::After(stretch) => now + stretch,
            ConsentEnd::At(at) => at,
        }
    }
}

/// What the user's return from their bank carried (the query of the return
/// URL: `code`, `state`, or `error` and `error_description`). The code is
/// a credential: it never reaches a log through `{:?}`.
#[derive(Clone, Default)]
pub struct AuthorizationReturn(std::collections::BTreeMap<String, String>);

impl AuthorizationReturn {
    pub fn new(params: impl IntoIterator<Item = (String, String)>) -> Self {
        Self(params.into_iter().collect())
    }

    pub fn get(&self, name: &str) -> Option<&str> {
        self.0
            .get(name)
            .map(String::as_str)
            .filter(|v| !v.is_empty())
    }
}

impl AuthorizationReturn {
    /// The code an OAuth-style return carries, once its `state` is the
    /// one the connection sent (compared in constant time); an `error` (the
    /// user declined, say) as the refusal it is, in the provider's words.
    pub fn code_for(
        &self,
        expected_state: Option<&str>,
        provider: &str,
    ) -> Result<&str, ConnectorError> {
        if let Some(error) = self.get("error") {
            let why = self.get("error_description").unwrap_or(error);
            return Err(ConnectorError::InvalidCredentials(format!(
                "{provider} did not give access: {why}"
            )));
        }
        let state_matches = match (expected_state, self.get("state")) {
            (Some(expected), Some(given)) => {
                subtle::ConstantTimeEq::ct_eq(expected.as_bytes(), given.as_bytes()).into()
            }
            _ => false,
        };
        if !state_matches {
            return Err(ConnectorError::InvalidCredentials(
                "the return is not for this connection (its state differs, or was used)".into(),
            ));
        }
        self.get("code").ok_or_else(|| {
            ConnectorError::InvalidCredentials(format!("{provider}'s return carries no code"))
        })
    }
}

impl std::fmt::Debug for AuthorizationReturn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.0.keys()).finish()
    }
}

impl std::fmt::Debug for Prepared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Prepared")
            .field("institution", &self.institution)
            .field("settings", &self.settings)
            .field(
                "credentials",
                &self.credentials.as_ref().map(|_| "<redacted>"),
            )
            .finish()
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConnectorError {
    /// The credentials are wrong; retrying will not help.
    #[error("the provider rejected the credentials: {0}")]
    InvalidCredentials(String),
    /// The user must log in at the provider again (expired consent, MFA…).
    #[error("the provider asks the user to re-authenticate: {0}")]
    ReauthRequired(String),
    /// A transient failure (outage, timeout, 5xx, 429); worth retrying.
    #[error("the provider is unavailable: {reason}")]
    Unavailable {
        reason: String,
        retry_after: Option<Duration>,
    },
    /// The connection's stored settings are unusable.
    #[error("the connection is misconfigured: {0}")]
    Misconfigured(String),
    /// The provider answered something we cannot read.
    #[error("the provider sent an unexpected answer: {0}")]
    Protocol(String),
    /// An address the user gave (a SimpleFIN setup token's, say) is one the
    /// outbound guard refuses; nothing was sent. The user must give another.
    #[error("{0}")]
    Refused(String),
}

impl ConnectorError {
    /// The connection status a sync that failed this way leaves behind.
    pub fn connection_status(&self) -> ConnectionStatus {
        match self {
            ConnectorError::InvalidCredentials(_)
            | ConnectorError::ReauthRequired(_)
            | ConnectorError::Refused(_) => ConnectionStatus::ReauthRequired,
            ConnectorError::Unavailable { .. }
            | ConnectorError::Misconfigured(_)
            | ConnectorError::Protocol(_) => ConnectionStatus::Error,
        }
    }

    /// While connecting, what would need the user at a sync (the
    /// provider refusing their credentials) is their input being wrong:
    /// said as `say` words its reason.
    pub(crate) fn refused_at_connect(self, say: impl FnOnce(String) -> String) -> Self {
        match self {
            ConnectorError::ReauthRequired(reason) => {
                ConnectorError::InvalidCredentials(say(reason))
            }
            other => other,
        }
    }

    /// The user's part, with what they should do (`say` words it).
    pub(crate) fn advising(self, say: impl FnOnce(String) -> String) -> Self {
        match self {
            ConnectorError::ReauthRequired(reason) => ConnectorError::ReauthRequired(say(reason)),
            other => other,
        }
    }

    /// Whether retrying later may succeed without the user doing anything.
    pub fn is_transient(&self) -> bool {
        matches!(self, ConnectorError::Unavailable { .. })
    }
}

/// An HTTP provider's answer that is not a success, as the error it means.
/// The rule every HTTP connector shares: 429 and 5xx are transient (retried,
/// honouring the provider's wait); the statuses `needs_user` names (each
/// provider's own: SimpleFIN's 402, GoCardless's 401/403/409) need the user,
/// in the words it returns; anything else is an answer we cannot use.
pub(crate) fn classify_http_status(
    answer: &HttpAnswer<'_>,
    needs_user: impl FnOnce(reqwest::StatusCode) -> Option<String>,
) -> Option<ConnectorError> {
    let HttpAnswer {
        provider,
        what,
        status,
        detail,
        retry_after,
    } = *answer;
    let detail = if detail.is_empty() {
        String::new()
    } else {
        format!(": {detail}")
    };
    Some(match status {
        s if s.is_success() => return None,
        reqwest::StatusCode::TOO_MANY_REQUESTS => ConnectorError::Unavailable {
            reason: format!("{provider} rate-limited {what} (429){detail}"),
            retry_after,
        },
        s if s.is_server_error() => ConnectorError::Unavailable {
            reason: format!("{provider} answered {what} with {s}{detail}"),
            retry_after,
        },
        s => match needs_user(s) {
            Some(advice) => ConnectorError::ReauthRequired(advice),
            None => {
                ConnectorError::Protocol(format!("{provider} answered {what} with {s}{detail}"))
            }
        },
    })
}

impl HttpAnswer<'_> {
    /// The error this answer means ([`classify_http_status`]); one whose
    /// status is a success after all (a connector refused what came with
    /// it) is an answer we cannot use.
    pub(crate) fn error(
        &self,
        needs_user: impl FnOnce(reqwest::StatusCode) -> Option<String>,
    ) -> ConnectorError {
        classify_http_status(self, needs_user).unwrap_or_else(|| {
            let detail = if self.detail.is_empty() {
                String::new()
            } else {
                format!(": {}", self.detail)
            };
            ConnectorError::Protocol(format!(
                "{} answered {} with {}{detail}",
                self.provider, self.what, self.status
            ))
        })
    }
}

/// What [`classify_http_status`] reads of an answer.
#[derive(Debug, Clone, Copy)]
pub(crate) struct HttpAnswer<'a> {
    /// The provider's name as people know it (`SimpleFIN`).
    pub provider: &'a str,
    /// What was asked (`the accounts request`).
    pub what: &'a str,
    pub status: reqwest::StatusCode,
    /// The provider's own words about the error, if any.
    pub detail: &'a str,
    /// How long the provider asked us to wait.
    pub retry_after: Option<Duration>,
}

/// A bank a user can pick, for providers that reach many.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstitutionChoice {
    /// What `prepare` takes as the `institution_id` setting.
    pub id: String,
    pub name: String,
    pub logo_url: Option<String>,
}

/// How long a provider may take to answer one request.
pub const PROVIDER_TIMEOUT: Duration = Duration::from_secs(60);

pub trait Connector: Send + Sync + fmt::Debug {
    fn provider(&self) -> Provider;

    /// Checks what the user gave (claiming a one-time token where the
    /// provider uses one) before anything is stored.
    fn prepare(&self, request: &ConnectRequest) -> Result<Prepared, ConnectorError>;

    /// Re-authenticating a connection whose stored credentials are
    /// `existing`: a provider that repairs a connection in place (Plaid's
    /// update mode) uses them; the rest prepare anew.
    fn prepare_again(
        &self,
        request: &ConnectRequest,
        _existing: Option<&str>,
    ) -> Result<Prepared, ConnectorError> {
        self.prepare(request)
    }

    /// For providers whose user consents at their bank (or an aggregator's
    /// pages) and comes back: turns what the return carried, with the
    /// connection's settings and opened credentials, into its credentials
    /// from now on (and its consent's end, and the institution chosen).
    /// `None`: the provider learns of the consent itself, and nothing
    /// changes.
    fn complete(
        &self,
        _settings: &serde_json::Value,
        _credentials: Option<&str>,
        _returned: &AuthorizationReturn,
    ) -> Result<Option<Prepared>, ConnectorError> {
        Ok(None)
    }

    /// The provider's current view of the connection.
    fn fetch(&self, context: &FetchContext<'_>) -> Result<ProviderSnapshot, ConnectorError>;

    /// The banks a user can pick from in `country` (ISO 3166 alpha-2), for
    /// providers that reach many; none for those that connect one way.
    fn institutions(&self, _country: &str) -> Result<Vec<InstitutionChoice>, ConnectorError> {
        Ok(Vec::new())
    }

    /// Syncs a connection may make per UTC day, when the provider limits
    /// calls; a sync over the limit is deferred to the next day, not sent.
    fn daily_sync_limit(&self) -> Option<i32> {
        None
    }

    /// How hard all workers together may press the provider (syncs at once,
    /// syncs per period), where its API sets limits per client; the
    /// operator's `TRIBUTARY_PROVIDER_LIMITS` replaces them.
    fn limits(&self) -> ProviderLimits {
        ProviderLimits::default()
    }

    /// The provider's own enrollment script for the connect page, where
    /// the operator configured one; `repairing` is the settings of the
    /// connection being signed in to again, `person` who is connecting
    /// (a provider may record them on what they enroll, so that connecting
    /// checks it is theirs, from `Answers::user`). `None`: the
    /// fields alone. It may ask the provider for a token, so it runs where
    /// provider calls run.
    fn connect_widget(
        &self,
        _repairing: Option<&serde_json::Value>,
        _person: UserId,
    ) -> Result<Option<ConnectWidget>, ConnectorError> {
        Ok(None)
    }

    /// This server's script that opens the provider's enrollment script
    /// (JavaScript source, served as `/static/connect/{provider}.js`), for
    /// a connector that offers [`connect_widget`](Self::connect_widget).
    fn connect_launcher(&self) -> Option<&'static str> {
        None
    }

    /// A webhook the provider sent (`POST /providers/{provider}/webhook`):
    /// its signature checked, what it says. By default none is taken.
    fn webhook(
        &self,
        _inbound: &crate::provider_webhook::InboundWebhook<'_>,
    ) -> Result<crate::provider_webhook::ProviderEvent, crate::provider_webhook::WebhookRefusal>
    {
        Err(crate::provider_webhook::WebhookRefusal::NotTaken)
    }
}

/// A provider's own script that enrolls the person on the connect page,
/// for a provider with no page of its own to send them to and back
/// (Teller Connect, Pluggy Connect). The page loads `script` and this
/// server's launcher (`Connector::connect_launcher`, served as
/// `/static/connect/{provider}.js`), which opens the provider's
/// script with `options` (the holder's `data-` attributes) when the person
/// clicks, and once they have enrolled puts what the provider gave in the
/// form's fields and sends it: connecting then goes on as if they had
/// pasted it. The page's Content-Security-Policy adds `script`'s origin,
/// and `origins` for the frames the script opens and the requests it
/// makes, on that page only (docs/platform.md, "Content-Security-Policy").
#[derive(Clone, PartialEq, Eq)]
pub struct ConnectWidget {
    /// The provider's script (https, or http on a loopback address).
    pub script: String,
    /// Origins its frames and requests go to.
    pub origins: Vec<String>,
    /// Whether it styles the page with `<style>` elements of its own
    /// (which carry no nonce): the page then allows inline styles.
    pub inline_styles: bool,
    /// The button's words.
    pub label: &'static str,
    /// What the launcher reads, as `data-{name}` attributes.
    pub options: Vec<(&'static str, String)>,
}

/// Whether a page may load a script from `address`: https, or plain http
/// on this machine only (a local copy, a test's fake). Its origin goes in
/// the page's Content-Security-Policy: a host name is letters, digits,
/// `.` and `-` only (a URL parser takes `;` in one).
pub(crate) fn is_script_address(address: &str) -> bool {
    let Ok(url) = url::Url::parse(address) else {
        return false;
    };
    match (url.scheme(), url.host()) {
        (_, Some(url::Host::Domain(name)))
            if !name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'-') =>
        {
            false
        }
        ("https", Some(_)) => true,
        ("http", Some(url::Host::Ipv4(ip))) => ip.is_loopback(),
        ("http", Some(url::Host::Ipv6(ip))) => ip.is_loopback(),
        ("http", Some(url::Host::Domain(name))) => name == "localhost",
        _ => false,
    }
}

// An option may be a credential (Pluggy's connect token): names only.
impl fmt::Debug for ConnectWidget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ConnectWidget")
            .field("script", &self.script)
            .field("origins", &self.origins)
            .field("inline_styles", &self.inline_styles)
            .field("label", &self.label)
            .field(
                "options",
                &self
                    .options
                    .iter()
                    .map(|(name, _)| name)
                    .collect::<Vec<_>>(),
            )
            .finish()
    }
}

/// A connect widget's script address from the operator's `variable`
/// (else `default`), refused unless a page may load it.
pub(crate) fn script_setting(
    env: &crate::description::Environment<'_>,
    variable: &'static str,
    default: &str,
) -> Result<String, crate::description::SettingError> {
    let script = env.get(variable).unwrap_or_else(|| default.to_owned());
    if !is_script_address(&script) {
        return Err(crate::description::SettingError {
            name: variable,
            value: Some(script),
            reason: "must be an https:// address (or http:// on a loopback address)".into(),
        });
    }
    Ok(script)
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    #[test]
    fn an_account_new_to_the_connection_is_read_whole() {
        let last = Utc.with_ymd_and_hms(2026, 11, 20, 12, 0, 0).unwrap();
        let stored = HashSet::from(["held".to_owned()]);
        let context = FetchContext {
            now: last + chrono::Duration::days(1),
            settings: &serde_json::Value::Null,
            credentials: None,
            last_synced_at: Some(last),
            oldest_pending: None,
            stored_accounts: &stored,
            chosen_accounts: None,
            keep_credentials: None,
        };
        let window = Some(last - chrono::Duration::days(14));
        assert_eq!(context.reach_back_for("held", 14), window);
        assert_eq!(context.reach_back_for("opened-since", 14), None);
        assert_eq!(context.last_synced_for("held"), Some(last));
        assert_eq!(context.last_synced_for("opened-since"), None);
        let first = FetchContext {
            last_synced_at: None,
            ..context
        };
        assert_eq!(first.reach_back_for("held", 14), None, "a first sync");
        // The person chose which accounts to share: one left out is not
        // taken, so not read whole; one chosen but not stored yet is.
        let picked = BTreeSet::from(["held".to_owned(), "chosen-since".to_owned()]);
        let chosen = FetchContext {
            chosen_accounts: Some(&picked),
            ..context
        };
        assert_eq!(chosen.reach_back_for("opened-since", 14), window);
        assert_eq!(chosen.reach_back_for("chosen-since", 14), None);
        assert_eq!(chosen.reach_back_for("held", 14), window);
    }
}
