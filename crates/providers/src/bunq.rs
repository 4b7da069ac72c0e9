//! bunq (the Netherlands, customers across the EU), through the person's
//! own API key: no aggregator, no contract. Written against bunq's public
//! API `v1` as its documentation and OpenAPI document (`bunq/doc`) and its
//! SDKs describe it (docs/providers.md, "bunq").
//!
//! An API key alone reads nothing: a client first registers a key pair of
//! its own. `prepare` makes one for the connection (RSA-2048), then:
//!
//! 1. `POST /installation` with the public half: bunq answers an
//!    installation token and bunq's own public key;
//! 2. `POST /device-server` with the API key, signed, from any address
//!    (`permitted_ips: ["*"]`: a home server's address changes);
//! 3. `POST /session-server` with the API key, signed: the key is checked
//!    here, at once, before anything is stored.
//!
//! The API key, the private key, the installation token, bunq's key and
//! the open session are kept sealed, together ([`Installation`]). A sync
//! reads with the kept session while it lasts (bunq opens at most one
//! session a key every 30 seconds: the sync that follows connecting must
//! not open another), opens a new one when it has run out or bunq ends it
//! early (a 401 or 403 while reading; kept at once), and reads
//! `/user/{id}/monetary-account`, then each account's `/payment` listing
//! (newest first, `count=200`, along `older_url`) back to a week before
//! the last sync.
//!
//! Every request after the installation carries the installation's or the
//! session's token and a signature of its body with the connection's key
//! (`X-Bunq-Client-Signature`, RSA PKCS#1 v1.5 over SHA-256, as bunq has
//! signed bodies only since April 2020); every answer to one must carry
//! bunq's signature of its body (`X-Bunq-Server-Signature`), checked
//! against the key bunq gave at installation. A success without it, or
//! any answer with one that does not verify, is not bunq's and is not
//! read; a refusal bunq did not sign is read for its status alone.
//!
//! bunq lists booked payments only: a card payment is a `Payment` from the
//! start, and a changed amount is a reversal and a new payment, each kept
//! as bunq writes it. Amounts are decimal strings, negative for money out;
//! times are UTC, written without a zone (`2017-01-13 13:19:16.215235`),
//! and a payment's day is the bank's, in Amsterdam.

use crate::connector::{
    ConnectRequest, ConnectorError, FetchContext, HttpAnswer, Prepared,
};
use crate::description::{
    Answers, Connect, Constructor, Description, Environment, Reports, ReturnAddress, SettingError,
    Variable,
};
use crate::personal_token::{self, TokenBankConfig};
use crate::provider_http::{ProviderHttp, Refusal};
use base64::Engine as _;
use chrono::{DateTime, NaiveDateTime, Utc};
use reqwest::Method;
use reqwest::header::HeaderMap;
use rsa::pkcs8::{DecodePrivateKey, DecodePublicKey, EncodePrivateKey, EncodePublicKey, LineEnding};
use rsa::sha2::Sha256;
use rsa::{PrivateKey, PublicKey};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use std::time::{Duration, Instant};
use tributary_domain::model::{AccountKind, Provider};
use tributary_domain::money::{Decimal, parse_decimal};
use tributary_domain::snapshot::*;

pub const PROVIDER: Provider = Provider::new("bunq");

pub const DESCRIPTION: Description = Description {
    provider: PROVIDER,
    name: "bunq",
    summary: "bunq (EU): paste an API key made in the bunq app; no aggregator in between.",
    reports: Reports::ACCOUNTS,
    connect: Connect {
        fields: &[personal_token::token_field(
            "API key",
            "Your bunq API key (\"-\" reads it from standard input, keeping it out of the shell history).",
        )],
        note: Some("Make one in the bunq app (Profile, Security & Settings, Developers, API keys). It is checked at once and kept sealed, with a key pair made for this connection and registered at bunq; a key limited to some IP addresses must allow this server's. If you delete it in the app, connect again with a new one."),
        hands_off: false,
        picks_institution: false,
        return_address: ReturnAddress::Never,
        finish_on_return: false,
        command_help: "Connect your bunq accounts with an API key (--token, or - to paste it), then sync.",
        request: request_from,
    },
    environment: &[Variable {
        names: "TRIBUTARY_BUNQ_URL",
        help: "its API root [default: https://api.bunq.com/v1]",
    }],
    configure,
};

pub const DEFAULT_BASE_URL: &str = "https://api.bunq.com/v1";
/// The key size bunq's documentation asks for.
const KEY_BITS: usize = 2048;
/// Records a listing page asks for (bunq's maximum).
const PAGE_SIZE: &str = "200";
/// Later syncs read back this far before the last one: bunq writes a
/// payment once, so a week covers a sync cut short.
const OVERLAP_DAYS: i64 = 7;
/// bunq's documented limit is three `GET`s per three seconds an address
/// and endpoint: one sync leaves this much between its requests.
pub const REQUEST_SPACING: Duration = Duration::from_millis(1_050);
/// A listing ends here even if bunq keeps paging.
const MAX_PAGES: usize = 10_000;
/// How bunq names the signed-in user in a session's answer.
/// A session is renewed when less than this is left of it.
const SESSION_MARGIN_SECONDS: i64 = 60;
/// How long a session lasts where bunq's answer does not say (the
/// shortest its documentation gives).
const DEFAULT_SESSION_SECONDS: i64 = 30 * 60;
const USER_KINDS: [&str; 4] = [
    "UserPerson",
    "UserCompany",
    "UserApiKey",
    "UserPaymentServiceProvider",
];

/// Always offered: a person's own key needs no configuration.
fn configure(env: &Environment<'_>) -> Result<Option<Constructor>, SettingError> {
    Ok(personal_token::configure(
        env,
        ("TRIBUTARY_BUNQ_URL", DEFAULT_BASE_URL),
        ("bunq", BunqConnector::new),
    ))
}

fn request_from(answers: &Answers<'_>) -> Result<ConnectRequest, &'static str> {
    personal_token::request_from(answers, "Paste your bunq API key.")
}

pub type BunqConfig = TokenBankConfig;

#[derive(Debug)]
pub struct BunqConnector {
    config: BunqConfig,
    http: ProviderHttp,
    /// What one sync leaves between two requests ([`REQUEST_SPACING`]).
    spacing: Duration,
}

/// What a connection keeps sealed: the person's API key and the
/// installation registered for it. Never printed.
#[derive(Serialize, Deserialize)]
struct Installation {
    api_key: String,
    /// The connection's own key (PKCS#8 PEM), whose public half bunq holds.
    private_key: String,
    /// bunq's token for the installation: it opens sessions.
    installation_token: String,
    /// bunq's key (SubjectPublicKeyInfo PEM), which signs its answers.
    server_public_key: String,
    /// The session last opened, while it lasts.
    #[serde(default)]
    session: Option<Session>,
}

/// An [`Installation`]'s keys, read.
struct Keys {
    private: PrivateKey,
    server: PublicKey,
}

impl Installation {
    /// The installation as it is sealed.
    fn sealable(&self) -> Result<String, ConnectorError> {
        serde_json::to_string(self)
            .map_err(|err| ConnectorError::Protocol(format!("keeping bunq's installation: {err}")))
    }

    fn keys(&self) -> Result<Keys, ConnectorError> {
        let unreadable = |what: &str| {
            ConnectorError::ReauthRequired(format!(
                "the kept bunq {what} cannot be read: connect again with your API key (make a new one in the bunq app if you deleted it)"
            ))
        };
        Ok(Keys {
            private: PrivateKey::from_pkcs8_pem(&self.private_key)
                .map_err(|_| unreadable("key"))?,
            server: PublicKey::from_public_key_pem(&self.server_public_key)
                .map_err(|_| unreadable("server key"))?,
        })
    }
}

/// Who a request speaks for: the token in `X-Bunq-Client-Authentication`,
/// the body signed with the connection's key, the answer checked against
/// bunq's.
struct Caller<'a> {
    token: &'a str,
    keys: &'a Keys,
}

/// An open session: its token, the user whose accounts it reads, and
/// when it runs out (bunq's `session_timeout` after it was opened).
#[derive(Clone, Serialize, Deserialize)]
struct Session {
    token: String,
    user_id: i64,
    expires_at: DateTime<Utc>,
}

/// Keeps one sync's requests [`REQUEST_SPACING`] apart.
struct Pacer {
    spacing: Duration,
    last: Option<Instant>,
}

impl Pacer {
    fn wait(&mut self) {
        if let Some(last) = self.last {
            let due = last + self.spacing;
            let now = Instant::now();
            if due > now {
                std::thread::sleep(due - now);
            }
        }
        self.last = Some(Instant::now());
    }
}

/// bunq's answers: `{"Response": [{"<Kind>": {…}}, …], "Pagination": …}`.
/// Not `Debug`: a session's answer holds its token.
#[derive(Deserialize)]
struct Envelope {
    #[serde(rename = "Response")]
    response: Vec<Map<String, Value>>,
    #[serde(rename = "Pagination", default)]
    pagination: Option<Pagination>,
}

impl Envelope {
    /// The first object of `kind` in the answer.
    fn first(&self, kind: &str) -> Option<&Value> {
        self.response.iter().find_map(|item| item.get(kind))
    }
}

#[derive(Deserialize)]
struct Pagination {
    #[serde(default)]
    older_url: Option<String>,
}

#[derive(Debug, Deserialize)]
struct Amount {
    value: String,
    currency: String,
}

impl Amount {
    fn decimal(&self) -> Result<Decimal, ConnectorError> {
        parse_decimal(&self.value).map_err(|err| {
            ConnectorError::Protocol(format!("bunq sent `{}` as an amount: {err}", self.value))
        })
    }
}

#[derive(Debug, Deserialize)]
struct Pointer {
    #[serde(rename = "type")]
    kind: String,
    value: String,
}

#[derive(Debug, Deserialize)]
struct MonetaryAccount {
    id: i64,
    currency: String,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    display_name: Option<String>,
    #[serde(default)]
    balance: Option<Amount>,
    #[serde(default)]
    alias: Vec<Pointer>,
}

#[derive(Debug, Deserialize)]
struct Payment {
    id: i64,
    created: String,
    amount: Amount,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    counterparty_alias: Option<Label>,
}

#[derive(Debug, Deserialize)]
struct Label {
    #[serde(default)]
    display_name: Option<String>,
}

/// bunq's error document: `{"Error": [{"error_description"}]}`.
fn error_description(body: &str) -> String {
    let body: Value = serde_json::from_str(body).unwrap_or(Value::Null);
    body["Error"][0]["error_description"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// What a refusal means, by the call that was refused.
#[derive(Debug, Clone, Copy)]
enum KeyCheck {
    /// Registering the key pair: the API key is not sent yet, so a 4xx is
    /// bunq refusing what this client sent.
    Installation,
    /// Registering the device or opening a session: bunq judges the API
    /// key here (`400 User credentials are incorrect`, for a key deleted
    /// in the app too, or one limited to other addresses), and the
    /// installation token (401, 403).
    Credentials,
    /// Reading with a session: a 401 or 403 is a session bunq has ended
    /// ([`ConnectorError::ReauthRequired`] here, which the sync answers by
    /// opening another once).
    Reading,
}

fn refusal(check: KeyCheck, refused: &Refusal<'_>) -> ConnectorError {
    let message = error_description(refused.body);
    let what = refused.what;
    let status = refused.status;
    match (check, status.as_u16()) {
        (KeyCheck::Installation, 400..=428 | 430..=499) => {
            return ConnectorError::Protocol(format!(
                "bunq refused the installation of this connection's key ({status}: {message})"
            ));
        }
        (KeyCheck::Credentials, 400 | 401 | 403) => {
            return ConnectorError::ReauthRequired(format!(
                "bunq does not accept the API key ({message}; a key limited to some IP addresses must allow this server's)"
            ));
        }
        (KeyCheck::Reading, 401 | 403) => {
            return ConnectorError::ReauthRequired(format!(
                "bunq refused the session reading {what} ({message})"
            ));
        }
        // Maintenance, in bunq's own status code.
        (_, 491) => {
            return ConnectorError::Unavailable {
                reason: format!("bunq is down for maintenance ({message})"),
                retry_after: refused.seconds_header(&["retry-after"]),
            };
        }
        _ => {}
    }
    let answer = HttpAnswer {
        provider: "bunq",
        what,
        status,
        detail: &message,
        retry_after: refused.seconds_header(&["retry-after"]),
    };
    answer.error(|_| None)
}

/// The header bunq signs its answers' bodies in.
const SERVER_SIGNATURE: &str = "x-bunq-server-signature";

/// The base64 signature of `body` with the connection's key.
fn signature(key: &PrivateKey, body: &[u8]) -> Result<String, ConnectorError> {
    let signed = key
        .pkcs1v15_sign_with_rng::<Sha256, _>(&mut rand::rng(), body)
        .map_err(|err| ConnectorError::Protocol(format!("signing a bunq request failed: {err}")))?;
    Ok(base64::engine::general_purpose::STANDARD.encode(signed))
}

/// Whether bunq signed `body` (`X-Bunq-Server-Signature`) with `server`.
fn check_signed(
    server: &PublicKey,
    headers: &HeaderMap,
    body: &[u8],
    what: &str,
) -> Result<(), ConnectorError> {
    let unsigned = |why: &str| {
        ConnectorError::Protocol(format!(
            "bunq's answer to {what} {why}: it is not read"
        ))
    };
    let header = headers
        .get(SERVER_SIGNATURE)
        .and_then(|v| v.to_str().ok())
        .ok_or_else(|| unsigned("carries no X-Bunq-Server-Signature"))?;
    let signature = base64::engine::general_purpose::STANDARD
        .decode(header.trim())
        .map_err(|_| unsigned("carries a signature that is not base64"))?;
    server
        .pkcs1v15_verify::<Sha256>(body, &signature)
        .map_err(|_| unsigned("is not signed by the key bunq gave at installation"))
}

/// The day at `at` in Amsterdam, bunq's: the day its app and statements
/// show a payment on.
fn bank_day(at: DateTime<Utc>) -> Result<chrono::NaiveDate, ConnectorError> {
    static AMSTERDAM: jiff::tz::TimeZone = jiff::tz::get!("Europe/Amsterdam");
    crate::bank_day::day_in(&AMSTERDAM, at, "bunq")
}

/// When a payment was made: bunq writes UTC without a zone.
fn created_at(created: &str) -> Result<DateTime<Utc>, ConnectorError> {
    NaiveDateTime::parse_from_str(created, "%Y-%m-%d %H:%M:%S%.f")
        .map(|at| at.and_utc())
        .map_err(|_| {
            ConnectorError::Protocol(format!(
                "bunq sent `{created}` as a time (YYYY-MM-DD hh:mm:ss.ssssss expected)"
            ))
        })
}

fn kind(wrapper: &str) -> AccountKind {
    match wrapper {
        "MonetaryAccountBank" | "MonetaryAccountJoint" | "MonetaryAccountLight" => {
            AccountKind::Checking
        }
        "MonetaryAccountSavings" | "MonetaryAccountExternalSavings" => AccountKind::Savings,
        "MonetaryAccountInvestment" => AccountKind::Brokerage,
        // External, card, switch-service accounts, and kinds bunq adds.
        _ => AccountKind::Other,
    }
}

impl BunqConnector {
    pub fn new(config: BunqConfig) -> Result<Self, reqwest::Error> {
        let http = ProviderHttp::new("bunq", config.timeout)?;
        Ok(Self {
            config,
            http,
            spacing: REQUEST_SPACING,
        })
    }

    /// The same connector leaving `spacing` between a sync's requests (a
    /// local fake has no limit to keep).
    pub fn with_spacing(self, spacing: Duration) -> Self {
        Self { spacing, ..self }
    }

    fn root(&self) -> &str {
        self.config.base_url.trim_end_matches('/')
    }

    /// One request to `url`: bunq's headers, the caller's token and
    /// signature where there is a caller, and the answer's signature
    /// checked before its body is read.
    fn call(
        &self,
        (method, url): (Method, &str),
        body: Option<&Value>,
        caller: Option<&Caller<'_>>,
        (check, what): (KeyCheck, &str),
    ) -> Result<Envelope, ConnectorError> {
        let body = body.map(Value::to_string).unwrap_or_default();
        let mut request = self
            .http
            .client
            .request(method, url)
            .header("Cache-Control", "no-cache")
            .header("X-Bunq-Language", "en_US")
            .header("X-Bunq-Region", "nl_NL")
            .header("X-Bunq-Geolocation", "0 0 0 0 000");
        if !body.is_empty() {
            request = request
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .body(body.clone());
        }
        if let Some(caller) = caller {
            request = request
                .header("X-Bunq-Client-Authentication", caller.token)
                .header(
                    "X-Bunq-Client-Signature",
                    signature(&caller.keys.private, body.as_bytes())?,
                );
        }
        let response = self.http.send(request, what)?;
        let (headers, raw) = self.http.json_body(response, what, |refused| {
            // A refusal bunq signed must verify; one it did not sign (a
            // rate limit from its edge, say) is read for its status alone.
            if let Some(caller) = caller
                && refused.headers.contains_key(SERVER_SIGNATURE)
                && let Err(forged) = check_signed(
                    &caller.keys.server,
                    refused.headers,
                    refused.body.as_bytes(),
                    what,
                )
            {
                return forged;
            }
            refusal(check, refused)
        })?;
        if let Some(caller) = caller {
            check_signed(&caller.keys.server, &headers, &raw, what)?;
        }
        self.http.parse(&raw, what)
    }

    /// Registers a new key pair for `api_key`: installation, device, and
    /// a first session (which is where bunq judges the key), kept for the
    /// first sync.
    fn install(
        &self,
        api_key: String,
        now: DateTime<Utc>,
    ) -> Result<Installation, ConnectorError> {
        let private = PrivateKey::new(&mut rand::rng(), KEY_BITS)
            .map_err(|err| ConnectorError::Protocol(format!("making a key for bunq failed: {err}")))?;
        let pem_error = |err: &dyn std::fmt::Display| {
            ConnectorError::Protocol(format!("writing the key for bunq failed: {err}"))
        };
        let public_pem = private
            .to_public_key()
            .to_public_key_pem(LineEnding::LF)
            .map_err(|err| pem_error(&err))?;
        let installed = self.call(
            (Method::POST, &format!("{}/installation", self.root())),
            Some(&json!({"client_public_key": public_pem})),
            None,
            (KeyCheck::Installation, "the installation"),
        )?;
        let missing = |what: &str| {
            ConnectorError::Protocol(format!("bunq's installation answer has no {what}"))
        };
        let mut installation = Installation {
            session: None,
            installation_token: installed
                .first("Token")
                .and_then(|t| t["token"].as_str())
                .ok_or_else(|| missing("Token"))?
                .to_owned(),
            server_public_key: installed
                .first("ServerPublicKey")
                .and_then(|k| k["server_public_key"].as_str())
                .ok_or_else(|| missing("ServerPublicKey"))?
                .to_owned(),
            private_key: private
                .to_pkcs8_pem(LineEnding::LF)
                .map_err(|err| pem_error(&err))?
                .to_string(),
            api_key,
        };
        let keys = Keys {
            server: PublicKey::from_public_key_pem(&installation.server_public_key).map_err(
                |err| ConnectorError::Protocol(format!("bunq's server key does not read: {err}")),
            )?,
            private,
        };
        let caller = Caller {
            token: &installation.installation_token,
            keys: &keys,
        };
        self.call(
            (Method::POST, &format!("{}/device-server", self.root())),
            Some(&json!({
                "description": "Tributary",
                "secret": installation.api_key,
                "permitted_ips": ["*"],
            })),
            Some(&caller),
            (KeyCheck::Credentials, "the device registration"),
        )?;
        installation.session = Some(self.open_session(&installation, &keys, now)?);
        Ok(installation)
    }

    /// A new session for the installation's API key, opened at `now`.
    fn open_session(
        &self,
        installation: &Installation,
        keys: &Keys,
        now: DateTime<Utc>,
    ) -> Result<Session, ConnectorError> {
        let caller = Caller {
            token: &installation.installation_token,
            keys,
        };
        let opened = self.call(
            (Method::POST, &format!("{}/session-server", self.root())),
            Some(&json!({"secret": installation.api_key})),
            Some(&caller),
            (KeyCheck::Credentials, "the session"),
        )?;
        let token = opened
            .first("Token")
            .and_then(|t| t["token"].as_str())
            .ok_or_else(|| ConnectorError::Protocol("bunq's session answer has no Token".into()))?;
        let user = USER_KINDS
            .iter()
            .find_map(|kind| opened.first(kind))
            .ok_or_else(|| {
                ConnectorError::Protocol(format!(
                    "bunq's session answer names no user ({} expected)",
                    USER_KINDS.join(", ")
                ))
            })?;
        let user_id = user["id"].as_i64().ok_or_else(|| {
            ConnectorError::Protocol("bunq's session answer has no user id".into())
        })?;
        // An API key's user states its timeout on the user it acts for.
        let timeout = user["session_timeout"]
            .as_i64()
            .or_else(|| {
                user["requested_by_user"]
                    .as_object()
                    .and_then(|by| by.values().find_map(|u| u["session_timeout"].as_i64()))
            })
            .filter(|seconds| *seconds > 0)
            .unwrap_or(DEFAULT_SESSION_SECONDS);
        Ok(Session {
            token: token.to_owned(),
            user_id,
            expires_at: now + chrono::Duration::seconds(timeout),
        })
    }

    /// Every record of a listing at `path` (newest first), following
    /// `older_url` until it ends or, with `back_to`, until a page reaches
    /// a record made before then. Each record as bunq wraps it: its kind
    /// and its fields.
    fn listing(
        &self,
        (caller, pacer): (&Caller<'_>, &mut Pacer),
        path: &str,
        back_to: Option<DateTime<Utc>>,
        what: &str,
    ) -> Result<Vec<(String, Value)>, ConnectorError> {
        let root = url::Url::parse(self.root())
            .map_err(|err| ConnectorError::Protocol(format!("bunq's API root: {err}")))?;
        let mut url = root.clone();
        url.set_path(&format!("{}/{path}", root.path().trim_end_matches('/')));
        url.query_pairs_mut().append_pair("count", PAGE_SIZE);
        let mut records = Vec::new();
        let mut followed = std::collections::HashSet::new();
        for _ in 0..MAX_PAGES {
            pacer.wait();
            let page = self.call(
                (Method::GET, url.as_str()),
                None,
                Some(caller),
                (KeyCheck::Reading, what),
            )?;
            let mut reached = false;
            for item in page.response {
                for (kind, record) in item {
                    if let Some(back_to) = back_to
                        && let Some(created) = record["created"].as_str()
                    {
                        reached |= created_at(created)? < back_to;
                    }
                    records.push((kind, record));
                }
            }
            let older = page.pagination.and_then(|p| p.older_url);
            let Some(older) = older.filter(|_| !reached) else {
                return Ok(records);
            };
            // bunq writes the next page as a path (`/v1/user/…?older_id=…`):
            // it must stay on the configured API.
            let next = root.join(&older).ok().filter(|next| {
                next.origin() == root.origin() && next.path().starts_with(root.path())
            });
            let Some(next) = next else {
                return Err(ConnectorError::Protocol(format!(
                    "bunq's next page of {what} is not on its API ({older})"
                )));
            };
            if !followed.insert(next.to_string()) {
                return Err(ConnectorError::Protocol(format!(
                    "bunq gave the same next page of {what} twice"
                )));
            }
            url = next;
        }
        Err(ConnectorError::Protocol(format!(
            "bunq kept paging {what} past {MAX_PAGES} pages"
        )))
    }

    /// Opens a session in place of the kept one and keeps it at once (a
    /// sync that fails later must not open another within bunq's limit).
    fn renew_session(
        &self,
        installation: &mut Installation,
        keys: &Keys,
        context: &FetchContext<'_>,
    ) -> Result<Session, ConnectorError> {
        let session = self
            .open_session(installation, keys, context.now)
            .map_err(|err| {
                err.advising(|reason| {
                    format!("{reason}: make a new one in the bunq app and connect again")
                })
            })?;
        installation.session = Some(session.clone());
        if let Some(keep) = context.keep_credentials {
            keep(&installation.sealable()?)?;
        }
        Ok(session)
    }

    /// Every account of the session's user, with its payments.
    fn read_accounts(
        &self,
        session: &Session,
        keys: &Keys,
        context: &FetchContext<'_>,
    ) -> Result<Vec<SnapshotAccount>, ConnectorError> {
        let caller = Caller {
            token: &session.token,
            keys,
        };
        let mut pacer = Pacer {
            spacing: self.spacing,
            last: None,
        };
        let listed = self.listing(
            (&caller, &mut pacer),
            &format!("user/{}/monetary-account", session.user_id),
            None,
            "the accounts",
        )?;
        let mut accounts = Vec::new();
        for (wrapper, record) in listed {
            accounts.push(self.account(
                (&caller, &mut pacer),
                (session.user_id, &wrapper, record),
                context,
            )?);
        }
        Ok(accounts)
    }

    fn account(
        &self,
        (caller, pacer): (&Caller<'_>, &mut Pacer),
        (user_id, wrapper, record): (i64, &str, Value),
        context: &FetchContext<'_>,
    ) -> Result<SnapshotAccount, ConnectorError> {
        let account: MonetaryAccount = serde_json::from_value(record).map_err(|err| {
            ConnectorError::Protocol(format!("bunq sent a {wrapper} that does not read: {err}"))
        })?;
        let payments = self.listing(
            (caller, pacer),
            &format!("user/{user_id}/monetary-account/{}/payment", account.id),
            context.reach_back_for(&account.id.to_string(), OVERLAP_DAYS),
            "the payments",
        )?;
        let transactions = payments
            .into_iter()
            .filter(|(kind, _)| kind == "Payment")
            .map(|(_, record)| transaction(record))
            .collect::<Result<_, _>>()?;
        let iban = account
            .alias
            .iter()
            .find(|pointer| pointer.kind == "IBAN")
            .map(|pointer| pointer.value.replace(' ', ""));
        let balance = match &account.balance {
            Some(balance) => {
                let amount = balance.decimal()?;
                Some(SnapshotBalance {
                    current: amount,
                    available: Some(amount),
                    currency: balance.currency.clone(),
                    as_of: context.now,
                })
            }
            None => None,
        };
        Ok(SnapshotAccount {
            provider_account_id: account.id.to_string(),
            institution: None,
            name: account
                .description
                .filter(|d| !d.trim().is_empty())
                .or(account.display_name)
                .unwrap_or_else(|| "bunq".to_owned()),
            kind: kind(wrapper),
            currency: account.currency,
            mask: iban.as_deref().map(crate::mask::last_four),
            balance,
            balance_history: Vec::new(),
            transactions,
            investment_transactions: Vec::new(),
            liability: None,
            holdings: None,
        })
    }
}

fn transaction(record: Value) -> Result<SnapshotTransaction, ConnectorError> {
    let payment: Payment = serde_json::from_value(record).map_err(|err| {
        ConnectorError::Protocol(format!("bunq sent a payment that does not read: {err}"))
    })?;
    let counterparty = payment
        .counterparty_alias
        .and_then(|label| label.display_name)
        .filter(|name| !name.trim().is_empty());
    let description = payment
        .description
        .filter(|d| !d.trim().is_empty())
        .or_else(|| counterparty.clone());
    Ok(SnapshotTransaction {
        provider_id: payment.id.to_string(),
        pending_provider_id: None,
        is_pending: false,
        date: bank_day(created_at(&payment.created)?)?,
        amount: payment.amount.decimal()?,
        currency: payment.amount.currency,
        merchant: counterparty,
        description,
        hints: Default::default(),
    })
}

impl crate::connector::Connector for BunqConnector {
    fn provider(&self) -> Provider {
        PROVIDER
    }

    fn prepare(&self, request: &ConnectRequest) -> Result<Prepared, ConnectorError> {
        let api_key = personal_token::given(request, ("bunq", "API key"))?;
        let installation = self
            .install(api_key, Utc::now())
            .map_err(|err| {
                err.refused_at_connect(|reason| {
                    format!("{reason}: check it, or make a new one in the bunq app")
                })
            })?;
        Ok(Prepared {
            institution: institution(),
            settings: json!({}),
            credentials: Some(installation.sealable()?),
            consent: None,
        })
    }

    fn fetch(&self, context: &FetchContext<'_>) -> Result<ProviderSnapshot, ConnectorError> {
        let mut installation: Installation = serde_json::from_str(personal_token::kept(context)?)
            .map_err(|_| {
                ConnectorError::ReauthRequired(
                    "the kept bunq installation cannot be read: connect again with your API key (make a new one in the bunq app if you deleted it)".into(),
                )
            })?;
        let keys = installation.keys()?;
        let margin = chrono::Duration::seconds(SESSION_MARGIN_SECONDS);
        let kept = installation
            .session
            .clone()
            .filter(|session| session.expires_at - margin > context.now);
        let (session, fresh) = match kept {
            Some(session) => (session, false),
            None => (self.renew_session(&mut installation, &keys, context)?, true),
        };
        let accounts = match self.read_accounts(&session, &keys, context) {
            // bunq ended the kept session early: once more, with a new one.
            Err(ConnectorError::ReauthRequired(_)) if !fresh => {
                let session = self.renew_session(&mut installation, &keys, context)?;
                self.read_accounts(&session, &keys, context)
            }
            read => read,
        }
        .map_err(|err| {
            err.advising(|reason| {
                format!("{reason} with a session just opened: make a new API key in the bunq app and connect again")
            })
        })?;
        Ok(ProviderSnapshot {
            institution: institution(),
            accounts,
            notices: Vec::new(),
            // Booked payments only: nothing pending to pair.
            pending_match: None,
            complete: true,
        })
    }
}

fn institution() -> SnapshotInstitution {
    SnapshotInstitution {
        provider_institution_id: "bunq".into(),
        name: "bunq".into(),
        logo_url: None,
    }
}
