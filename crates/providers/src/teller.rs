//! Teller (US banks), with the operator's client certificate (mTLS, which
//! Teller asks of every request in development and production) and an
//! enrollment's access token (HTTP Basic, the token as the user name).
//! Written against Teller's API reference (teller.io/docs/api, read
//! November 2026) and importers using it (docs/providers.md, "Teller").
//!
//! - `prepare`: the access token an enrollment gave (Teller Connect's
//!   `accessToken`) is checked at once (`GET /accounts`: 401 or 403 for a
//!   token that is wrong or revoked) and kept sealed; the bank is the one
//!   its accounts name.
//! - `fetch`: `/accounts` (closed ones left out: Teller answers 410 for
//!   their data), then each account's `/balances` and `/transactions`
//!   where its `links` offer them (newest first, `count` a page, the next
//!   page `from_id` the last one read; the whole history on the first
//!   sync, then back to 14 days before the last one, or the oldest pending
//!   transaction stored). An account of another type than `depository` or
//!   `credit`, or one Teller says is gone, is left out with a notice.
//! - A request TLS refuses (Teller does not take the certificate) is the
//!   operator's to fix, never retried as an outage.
//!
//! Amounts are signed decimal strings. For a depository account Teller
//! signs them for the holder (money out negative); for a credit account
//! it signs them for the card's balance (a purchase positive), as the
//! importers using it read them, so a credit account's amounts and its
//! `ledger` (what is owed) are turned to Tributary's sign. A pending
//! transaction may post under another id: the pending-match rule pairs
//! them. An enrollment the bank has disconnected (`enrollment.disconnected`
//! and its reasons: a new MFA, a locked account, changed credentials)
//! needs the person; Teller's webhook of it, signed with the operator's
//! secret, says so at once (`webhook`). Where the operator gives the
//! application's id, the bank form offers Teller Connect (`connect_widget`).

use crate::connector::{
    ConnectRequest, ConnectWidget, ConnectorError, FetchContext, HttpAnswer, PROVIDER_TIMEOUT,
    Prepared,
};
use crate::description::{
    Answers, Connect, Constructor, Description, Environment, Reports, ReturnAddress, SettingError,
    SetupError, Variable, constructor,
};
use crate::personal_token;
use crate::provider_http::{ProviderHttp, Refusal};
use crate::provider_webhook::{InboundWebhook, ProviderEvent, WebhookRefusal};
use chrono::NaiveDate;
use serde::Deserialize;
use serde_json::{Value, json};
use std::time::Duration;
use tributary_domain::ids::UserId;
use tributary_domain::model::{AccountKind, Provider};
use tributary_domain::money::{Decimal, parse_decimal};
use tributary_domain::pending_match::PendingMatchRule;
use tributary_domain::snapshot::*;

pub const PROVIDER: Provider = Provider::new("teller");

pub const DESCRIPTION: Description = Description {
    provider: PROVIDER,
    name: "Teller",
    summary: "US banks through Teller: enroll your bank with Teller Connect, or paste the access token an enrollment gave.",
    reports: Reports::ACCOUNTS,
    connect: Connect {
        fields: &[personal_token::token_field(
            "Teller access token (token_…)",
            "The access token of your Teller enrollment (\"-\" reads it from standard input, keeping it out of the shell history).",
        )],
        note: Some("Enroll your bank with Teller Connect for this server's Teller application (the button above, where this server offers it; else Teller's quickstart shows the access token when it succeeds) and paste the token. It is checked at once and kept sealed; if the bank disconnects the enrollment, sign in to the connection again: Teller Connect repairs the enrollment, or paste a new enrollment's token."),
        hands_off: false,
        picks_institution: false,
        return_address: ReturnAddress::Never,
        finish_on_return: false,
        command_help: "Connect the accounts of a Teller enrollment with its access token (--token, or - to paste it), then sync.",
        request: request_from,
    },
    environment: &[
        Variable {
            names: "TRIBUTARY_TELLER_CERTIFICATE_FILE, TRIBUTARY_TELLER_PRIVATE_KEY_FILE",
            help: "enable Teller: the PEM certificate and private key of the operator's Teller application (mTLS)",
        },
        Variable {
            names: "TRIBUTARY_TELLER_URL",
            help: "its API root [default: https://api.teller.io]",
        },
        Variable {
            names: "TRIBUTARY_TELLER_CA_FILE",
            help: "a PEM certificate authority to trust for Teller's API besides the public ones (a proxy's)",
        },
        Variable {
            names: "TRIBUTARY_TELLER_WEBHOOK_SECRET",
            help: "the Teller application's webhook signing secret (several, comma-separated, while one is rotated): POST /providers/teller/webhook takes Teller's enrollment.disconnected",
        },
        Variable {
            names: "TRIBUTARY_TELLER_APPLICATION_ID",
            help: "the Teller application's id (app_…): the connect page offers Teller Connect, loading Teller's script",
        },
        Variable {
            names: "TRIBUTARY_TELLER_ENVIRONMENT",
            help: "where Teller Connect enrolls: sandbox, development or production [default: development]",
        },
        Variable {
            names: "TRIBUTARY_TELLER_CONNECT_SCRIPT",
            help: "where Teller Connect's script is loaded from (https, or http on a loopback address) [default: https://cdn.teller.io/connect/connect.js]",
        },
    ],
    configure,
};

pub const DEFAULT_BASE_URL: &str = "https://api.teller.io";
/// Teller Connect's script (teller.io/docs/guides/connect).
pub const CONNECT_SCRIPT: &str = "https://cdn.teller.io/connect/connect.js";
/// Where Teller Connect's script opens its frame.
const CONNECT_ORIGIN: &str = "https://teller.io";
const ENVIRONMENTS: [&str; 3] = ["sandbox", "development", "production"];
/// Transactions a page asks for.
const PAGE_SIZE: usize = 250;
/// Later syncs read back this far before the last one.
const OVERLAP_DAYS: i64 = 14;
/// A listing ends here even if Teller keeps paging.
const MAX_PAGES: usize = 10_000;

/// Where Teller's API is and how this server proves itself to it.
#[derive(Clone)]
pub struct TellerConfig {
    pub base_url: String,
    /// The application's certificate and private key, PEM.
    pub identity_pem: Vec<u8>,
    /// Certificate authorities to trust besides the public ones, PEM.
    pub extra_roots_pem: Option<Vec<u8>>,
    pub timeout: Duration,
    /// Teller Connect on the connect page, where the operator gave the
    /// application's id.
    pub connect: Option<TellerConnect>,
    /// The application's webhook signing secrets (Teller signs with each
    /// one not expired); none: no webhook is taken.
    pub webhook_secrets: Vec<String>,
}

/// Teller Connect as the connect page opens it: the operator's
/// application, the environment its enrollments are made in, and where
/// Teller's script is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TellerConnect {
    pub application_id: String,
    pub environment: String,
    pub script: String,
}

/// Teller Connect's settings, where `TRIBUTARY_TELLER_APPLICATION_ID` is
/// given.
fn teller_connect(env: &Environment<'_>) -> Result<Option<TellerConnect>, SettingError> {
    let Some(application_id) = env.get("TRIBUTARY_TELLER_APPLICATION_ID") else {
        return Ok(None);
    };
    // It goes in an attribute of the page: an id, nothing else.
    if application_id.is_empty()
        || !application_id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        return Err(SettingError {
            name: "TRIBUTARY_TELLER_APPLICATION_ID",
            value: Some(application_id),
            reason: "is not a Teller application id (letters, digits, _ and -)".into(),
        });
    }
    let environment = env
        .get("TRIBUTARY_TELLER_ENVIRONMENT")
        .unwrap_or_else(|| "development".to_owned());
    if !ENVIRONMENTS.contains(&environment.as_str()) {
        return Err(SettingError {
            name: "TRIBUTARY_TELLER_ENVIRONMENT",
            value: Some(environment),
            reason: "must be sandbox, development or production".into(),
        });
    }
    let script = crate::connector::script_setting(
        env,
        "TRIBUTARY_TELLER_CONNECT_SCRIPT",
        CONNECT_SCRIPT,
    )?;
    Ok(Some(TellerConnect {
        application_id,
        environment,
        script,
    }))
}

/// How old (or early) a signed webhook may be: Teller's guide says reject
/// one older than 3 minutes.
const WEBHOOK_TOLERANCE_SECONDS: i64 = 180;

/// A `Teller-Signature` header: its time and its `v1` signatures.
#[derive(Debug)]
struct Signature {
    timestamp: i64,
    /// HMAC-SHA256 values (32 bytes each).
    signatures: Vec<[u8; 32]>,
}

/// `v1` signatures read from one header: Teller sends one per secret not
/// expired (two while one is rotated); more are not read, so that no
/// header makes the server hash without end.
const MAX_SIGNATURES: usize = 8;

impl Signature {
    fn parse(header: &str) -> Result<Signature, WebhookRefusal> {
        let mut timestamp = None;
        let mut signatures = Vec::new();
        for part in header.split(',') {
            match part.trim().split_once('=') {
                Some(("t", t)) => timestamp = t.parse::<i64>().ok(),
                // One that is not 32 bytes of hex matches nothing.
                Some(("v1", hex)) if signatures.len() < MAX_SIGNATURES => {
                    signatures.extend(
                        hex::decode(hex)
                            .ok()
                            .and_then(|bytes| <[u8; 32]>::try_from(bytes).ok()),
                    );
                }
                _ => {}
            }
        }
        match (timestamp, signatures.is_empty()) {
            (Some(timestamp), false) => Ok(Signature {
                timestamp,
                signatures,
            }),
            _ => Err(WebhookRefusal::Unsigned(
                "Teller-Signature needs t=<time> and v1=<signature>".into(),
            )),
        }
    }

    /// Whether a signature is `message`'s HMAC-SHA256 under a secret:
    /// one HMAC a secret, compared with each signature in constant time.
    fn verifies(&self, message: &[u8], secrets: &[String]) -> bool {
        use hmac::{Hmac, KeyInit, Mac};
        use subtle::ConstantTimeEq;
        secrets.iter().any(|secret| {
            let Ok(mut mac) = Hmac::<sha2::Sha256>::new_from_slice(secret.as_bytes()) else {
                return false;
            };
            mac.update(message);
            let expected = mac.finalize().into_bytes();
            self.signatures
                .iter()
                .any(|signature| bool::from(expected.as_slice().ct_eq(signature)))
        })
    }
}

// The private key never reaches a log.
impl std::fmt::Debug for TellerConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TellerConfig")
            .field("base_url", &self.base_url)
            .field("identity_pem", &"<sealed>")
            .field("timeout", &self.timeout)
            .field("connect", &self.connect)
            .field("webhook_secrets", &self.webhook_secrets.len())
            .finish()
    }
}

fn configure(env: &Environment<'_>) -> Result<Option<Constructor>, SettingError> {
    let Some((certificate, key)) = env.both_or_neither(
        "TRIBUTARY_TELLER_CERTIFICATE_FILE",
        "TRIBUTARY_TELLER_PRIVATE_KEY_FILE",
    )?
    else {
        return Ok(None);
    };
    let read = |variable: &'static str, path: &str| {
        std::fs::read(path).map_err(|err| SettingError {
            name: variable,
            value: Some(path.to_owned()),
            reason: format!("cannot be read: {err}"),
        })
    };
    let mut identity_pem = read("TRIBUTARY_TELLER_CERTIFICATE_FILE", &certificate)?;
    identity_pem.push(b'\n');
    identity_pem.extend(read("TRIBUTARY_TELLER_PRIVATE_KEY_FILE", &key)?);
    let extra_roots_pem = match env.get("TRIBUTARY_TELLER_CA_FILE") {
        Some(path) => {
            let pem = read("TRIBUTARY_TELLER_CA_FILE", &path)?;
            let authorities = reqwest::Certificate::from_pem_bundle(&pem).unwrap_or_default();
            if authorities.is_empty() {
                return Err(SettingError {
                    name: "TRIBUTARY_TELLER_CA_FILE",
                    value: Some(path),
                    reason: "holds no PEM certificate".into(),
                });
            }
            Some(pem)
        }
        None => None,
    };
    let base_url = env
        .get("TRIBUTARY_TELLER_URL")
        .unwrap_or_else(|| DEFAULT_BASE_URL.to_owned());
    // The token goes in every request's Authorization header, and the
    // certificate is only presented over TLS.
    if !base_url.starts_with("https://") {
        return Err(SettingError {
            name: "TRIBUTARY_TELLER_URL",
            value: Some(base_url),
            reason: "must be an https:// address".into(),
        });
    }
    let config = TellerConfig {
        base_url,
        identity_pem,
        extra_roots_pem,
        timeout: PROVIDER_TIMEOUT,
        connect: teller_connect(env)?,
        webhook_secrets: env
            .get("TRIBUTARY_TELLER_WEBHOOK_SECRET")
            .map(|secrets| {
                secrets
                    .split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default(),
    };
    // The certificate and key are read now: one that does not parse is
    // said at start, naming the files.
    reqwest::Identity::from_pem(&config.identity_pem).map_err(|err| SettingError {
        name: "TRIBUTARY_TELLER_CERTIFICATE_FILE",
        value: Some(certificate.clone()),
        reason: format!(
            "the certificate and private key do not read as PEM: {}",
            crate::provider_http::causes(&err)
        ),
    })?;
    Ok(constructor(move || {
        TellerConnector::new(config.clone())
            .map_err(|err| SetupError::new("Teller", format!("the HTTP client: {err}")))
    }))
}

fn request_from(answers: &Answers<'_>) -> Result<ConnectRequest, &'static str> {
    personal_token::request_from(answers, "Paste the access token of your Teller enrollment.")
}

#[derive(Debug)]
pub struct TellerConnector {
    config: TellerConfig,
    http: ProviderHttp,
}

/// What the operator checks when Teller refuses the certificate.
const CHECK_CERTIFICATE: &str = "check TRIBUTARY_TELLER_CERTIFICATE_FILE and TRIBUTARY_TELLER_PRIVATE_KEY_FILE (the certificate of this Teller application, not expired or revoked), and TRIBUTARY_TELLER_CA_FILE if set";

/// A request that never reached Teller's API because TLS failed (Teller
/// refused the client certificate, or its own does not verify) is the
/// operator's to fix, not a passing outage to retry.
fn unreached(err: ConnectorError) -> ConnectorError {
    match err {
        ConnectorError::Unavailable { reason, .. }
            if ["certificate", "fatal alert", "handshake"]
                .iter()
                .any(|sign| reason.to_ascii_lowercase().contains(sign)) =>
        {
            ConnectorError::Misconfigured(format!(
                "TLS with Teller failed ({reason}): {CHECK_CERTIFICATE}"
            ))
        }
        other => other,
    }
}

/// Teller's error document: `{"error": {"code", "message"}}`.
fn refusal(refused: &Refusal<'_>) -> ConnectorError {
    let body: Value = serde_json::from_str(refused.body).unwrap_or(Value::Null);
    let code = body["error"]["code"].as_str().unwrap_or_default();
    let message = body["error"]["message"].as_str().unwrap_or_default();
    let what = refused.what;
    let status = refused.status.as_u16();
    if code.starts_with("enrollment.disconnected") {
        return ConnectorError::ReauthRequired(format!(
            "the bank disconnected the Teller enrollment ({code}: {message}): enroll again with Teller Connect to make a new one, and connect again with it"
        ));
    }
    match status {
        // Teller asks for the application's certificate with a 400; a
        // refusal naming it is the operator's, never every person's.
        400 | 401 | 403 if message.to_ascii_lowercase().contains("certificate") => {
            return ConnectorError::Misconfigured(format!(
                "Teller wants this server's client certificate ({message}): {CHECK_CERTIFICATE}"
            ));
        }
        401 | 403 => {
            return ConnectorError::ReauthRequired(format!(
                "Teller no longer accepts the access token ({message}): enroll again with Teller Connect to make a new one, and connect again with it"
            ));
        }
        _ => {}
    }
    let detail = if code.is_empty() {
        message.to_owned()
    } else {
        format!("{code}: {message}")
    };
    let answer = HttpAnswer {
        provider: "Teller",
        what,
        status: refused.status,
        detail: &detail,
        retry_after: refused.seconds_header(&["retry-after"]),
    };
    answer.error(|_| None)
}

#[derive(Debug, Deserialize)]
struct Account {
    id: String,
    #[serde(default)]
    enrollment_id: Option<String>,
    name: String,
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    subtype: Option<String>,
    currency: String,
    #[serde(default)]
    last_four: Option<String>,
    status: String,
    institution: Institution,
    #[serde(default)]
    links: serde_json::Map<String, Value>,
}

#[derive(Debug, Deserialize)]
struct Institution {
    id: String,
    name: String,
}

#[derive(Debug, Deserialize)]
struct Balances {
    #[serde(default)]
    ledger: Option<String>,
    #[serde(default)]
    available: Option<String>,
}

#[derive(Debug, Deserialize)]
struct Transaction {
    id: String,
    amount: String,
    date: NaiveDate,
    description: String,
    status: String,
    #[serde(default)]
    details: Option<Details>,
}

#[derive(Debug, Deserialize)]
struct Details {
    #[serde(default)]
    counterparty: Option<Counterparty>,
}

#[derive(Debug, Deserialize)]
struct Counterparty {
    #[serde(default)]
    name: Option<String>,
}

/// How an account's amounts are signed at Teller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    /// For the holder: money out negative (Tributary's sign).
    Depository,
    /// For the card's balance: a purchase positive.
    Credit,
}

impl Side {
    fn of(account: &Account) -> Result<Side, ConnectorError> {
        match account.kind.as_str() {
            "depository" => Ok(Side::Depository),
            "credit" => Ok(Side::Credit),
            other => Err(ConnectorError::Protocol(format!(
                "Teller sent account {} of type `{other}` (depository or credit expected): its amounts' sign is unknown",
                account.id
            ))),
        }
    }

    /// `text`, a Teller amount, in Tributary's sign.
    fn amount(self, text: &str) -> Result<Decimal, ConnectorError> {
        let amount = parse_decimal(text).map_err(|err| {
            ConnectorError::Protocol(format!("Teller sent `{text}` as an amount: {err}"))
        })?;
        Ok(match self {
            Side::Depository => amount,
            Side::Credit => -amount,
        })
    }
}

fn kind(account: &Account) -> AccountKind {
    match (account.kind.as_str(), account.subtype.as_deref()) {
        ("credit", _) => AccountKind::CreditCard,
        (_, Some("checking")) => AccountKind::Checking,
        (_, Some("savings" | "money_market" | "certificate_of_deposit")) => AccountKind::Savings,
        _ => AccountKind::Other,
    }
}

fn transaction(side: Side, t: Transaction) -> Result<SnapshotTransaction, ConnectorError> {
    let is_pending = match t.status.as_str() {
        "pending" => true,
        "posted" => false,
        other => {
            return Err(ConnectorError::Protocol(format!(
                "Teller sent transaction {} with status `{other}` (pending or posted expected)",
                t.id
            )));
        }
    };
    let merchant = t
        .details
        .and_then(|d| d.counterparty)
        .and_then(|c| c.name)
        .filter(|n| !n.trim().is_empty());
    Ok(SnapshotTransaction {
        provider_id: t.id,
        pending_provider_id: None,
        is_pending,
        date: t.date,
        amount: side.amount(&t.amount)?,
        currency: String::new(),
        merchant,
        description: Some(t.description).filter(|d| !d.trim().is_empty()),
        hints: Default::default(),
    })
}

impl TellerConnector {
    pub fn new(config: TellerConfig) -> Result<Self, reqwest::Error> {
        let identity = reqwest::Identity::from_pem(&config.identity_pem)?;
        let roots = match &config.extra_roots_pem {
            Some(pem) => reqwest::Certificate::from_pem_bundle(pem)?,
            None => Vec::new(),
        };
        let http = ProviderHttp::new_with("Teller", config.timeout, |builder| {
            roots
                .into_iter()
                .fold(builder.identity(identity), |builder, root| {
                    builder.add_root_certificate(root)
                })
        })?;
        Ok(Self { config, http })
    }

    /// The address of `segments` below the API root, each escaped (an
    /// account id is Teller's, and stays one path segment).
    fn url(&self, segments: &[&str]) -> Result<url::Url, ConnectorError> {
        let mut url = url::Url::parse(&self.config.base_url)
            .map_err(|err| ConnectorError::Misconfigured(format!("Teller's API root: {err}")))?;
        url.path_segments_mut()
            .map_err(|()| ConnectorError::Misconfigured("Teller's API root has no path".into()))?
            .pop_if_empty()
            .extend(segments);
        Ok(url)
    }

    /// A `GET` of `segments` with the token, sent.
    fn send(
        &self,
        token: &str,
        segments: &[&str],
        query: &[(&str, String)],
        what: &str,
    ) -> Result<reqwest::blocking::Response, ConnectorError> {
        let request = self
            .http
            .client
            .get(self.url(segments)?)
            .basic_auth(token, Some(""))
            .query(query);
        self.http.send(request, what).map_err(unreached)
    }

    fn get<T: serde::de::DeserializeOwned>(
        &self,
        token: &str,
        segments: &[&str],
        query: &[(&str, String)],
        what: &str,
    ) -> Result<T, ConnectorError> {
        let response = self.send(token, segments, query, what)?;
        self.http.json(response, what, refusal)
    }

    /// An account's resource, or `None` when Teller says it is gone (404,
    /// 410: the account closed since it was listed).
    fn account_get<T: serde::de::DeserializeOwned>(
        &self,
        token: &str,
        segments: &[&str],
        query: &[(&str, String)],
        what: &str,
    ) -> Result<Option<T>, ConnectorError> {
        let response = self.send(token, segments, query, what)?;
        let status = response.status();
        if matches!(status.as_u16(), 404 | 410) {
            let headers = response.headers().clone();
            let body = response.text().unwrap_or_default();
            // A disconnected enrollment answers 404 too: that is the
            // person's to repair, not one account gone.
            return match refusal(&Refusal {
                what,
                status,
                headers: &headers,
                body: &body,
            }) {
                needs_person @ ConnectorError::ReauthRequired(_) => Err(needs_person),
                _ => Ok(None),
            };
        }
        self.http.json(response, what, refusal).map(Some)
    }

    /// The account's transactions, newest first, page by page until a
    /// page is short or its oldest is from before `back_to`; `None` when
    /// the account is gone.
    fn transactions(
        &self,
        token: &str,
        account: &Account,
        back_to: Option<NaiveDate>,
    ) -> Result<Option<Vec<Transaction>>, ConnectorError> {
        let segments = ["accounts", account.id.as_str(), "transactions"];
        let mut all: Vec<Transaction> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for _ in 0..MAX_PAGES {
            let mut query = vec![("count", PAGE_SIZE.to_string())];
            if let Some(last) = all.last() {
                query.push(("from_id", last.id.clone()));
            }
            let Some(page) =
                self.account_get::<Vec<Transaction>>(token, &segments, &query, "the transactions")?
            else {
                return Ok(None);
            };
            let short = page.len() < PAGE_SIZE;
            // The page's oldest: a pending one dated earlier among newer
            // ones does not end the listing early.
            let reached = back_to.zip(page.last()).is_some_and(|(back_to, t)| t.date < back_to);
            for t in page {
                // A page that does not move on (a `from_id` not honoured)
                // would be read for ever.
                if !seen.insert(t.id.clone()) {
                    return Err(ConnectorError::Protocol(format!(
                        "Teller gave transaction {} twice while paging",
                        t.id
                    )));
                }
                all.push(t);
            }
            if short || reached {
                return Ok(Some(all));
            }
        }
        Err(ConnectorError::Protocol(format!(
            "Teller kept paging the transactions past {MAX_PAGES} pages"
        )))
    }

    /// The account as stored, or why it is left out this time (a notice).
    fn account(
        &self,
        token: &str,
        account: Account,
        context: &FetchContext<'_>,
    ) -> Result<Result<SnapshotAccount, String>, ConnectorError> {
        let side = match Side::of(&account) {
            Ok(side) => side,
            Err(ConnectorError::Protocol(why)) => return Ok(Err(why)),
            Err(other) => return Err(other),
        };
        let gone = || {
            format!(
                "Teller says account {} ({}) is gone: it is left as it was",
                account.id, account.name
            )
        };
        let balance = if offers(&account, "balances") {
            let Some(balances) = self.account_get::<Balances>(
                token,
                &["accounts", account.id.as_str(), "balances"],
                &[],
                "the balances",
            )?
            else {
                return Ok(Err(gone()));
            };
            let ledger = balances.ledger.as_deref().map(|l| side.amount(l)).transpose()?;
            let available = balances
                .available
                .as_deref()
                .map(parse_decimal)
                .transpose()
                .map_err(|err| {
                    ConnectorError::Protocol(format!("Teller sent an available balance: {err}"))
                })?;
            // At least one of the two, says Teller.
            match (ledger, available) {
                (Some(current), available) => Some(SnapshotBalance {
                    current,
                    available,
                    currency: account.currency.clone(),
                    as_of: context.now,
                }),
                (None, Some(available)) if side == Side::Depository => Some(SnapshotBalance {
                    current: available,
                    available: Some(available),
                    currency: account.currency.clone(),
                    as_of: context.now,
                }),
                _ => None,
            }
        } else {
            None
        };
        let transactions = if offers(&account, "transactions") {
            let back_to = context
                .reach_back_for(&account.id, OVERLAP_DAYS)
                .map(|at| at.date_naive());
            let Some(transactions) = self.transactions(token, &account, back_to)? else {
                return Ok(Err(gone()));
            };
            transactions
                .into_iter()
                .map(|t| {
                    transaction(side, t).map(|mut t| {
                        t.currency = account.currency.clone();
                        t
                    })
                })
                .collect::<Result<_, _>>()?
        } else {
            Vec::new()
        };
        Ok(Ok(SnapshotAccount {
            provider_account_id: account.id.clone(),
            institution: Some(SnapshotInstitution {
                provider_institution_id: account.institution.id.clone(),
                name: account.institution.name.clone(),
                logo_url: None,
            }),
            name: account.name.clone(),
            kind: kind(&account),
            currency: account.currency.clone(),
            mask: account.last_four.clone(),
            balance,
            balance_history: Vec::new(),
            transactions,
            investment_transactions: Vec::new(),
            liability: None,
            holdings: None,
        }))
    }
}

/// Whether the account's `links` offer `resource` (a link Teller leaves
/// out, or writes null, is a resource the bank does not give).
fn offers(account: &Account, resource: &str) -> bool {
    account
        .links
        .get(resource)
        .is_some_and(|link| !link.is_null())
}

/// The bank an enrollment's accounts are at (one enrollment, one bank).
fn institution_of(accounts: &[Account]) -> SnapshotInstitution {
    accounts.first().map_or_else(
        || SnapshotInstitution {
            provider_institution_id: "teller".into(),
            name: "Teller".into(),
            logo_url: None,
        },
        |a| SnapshotInstitution {
            provider_institution_id: a.institution.id.clone(),
            name: a.institution.name.clone(),
            logo_url: None,
        },
    )
}

impl crate::connector::Connector for TellerConnector {
    fn provider(&self) -> Provider {
        PROVIDER
    }

    fn prepare(&self, request: &ConnectRequest) -> Result<Prepared, ConnectorError> {
        let token = personal_token::given(request, ("Teller", "access token"))?;
        let accounts: Vec<Account> = self
            .get(&token, &["accounts"], &[], "the token check")
            .map_err(|err| {
                err.refused_at_connect(|reason| {
                    format!("Teller does not accept this access token: {reason}")
                })
            })?;
        // Not secret, and what a repair in Teller Connect or Teller's
        // webhook names the enrollment by.
        let enrollment = accounts.first().and_then(|a| a.enrollment_id.clone());
        Ok(Prepared {
            institution: institution_of(&accounts),
            settings: json!({ "enrollment_id": enrollment }),
            credentials: Some(token),
            consent: None,
        })
    }

    fn fetch(&self, context: &FetchContext<'_>) -> Result<ProviderSnapshot, ConnectorError> {
        let token = personal_token::kept(context)?;
        let accounts: Vec<Account> = self.get(token, &["accounts"], &[], "the accounts")?;
        let institution = institution_of(&accounts);
        let mut snapshot_accounts = Vec::new();
        let mut notices = Vec::new();
        for account in accounts {
            // A closed account's data is gone (410); what is stored stays.
            if account.status == "closed" {
                continue;
            }
            match self.account(token, account, context)? {
                Ok(account) => snapshot_accounts.push(account),
                Err(notice) => notices.push(notice),
            }
        }
        Ok(ProviderSnapshot {
            institution,
            accounts: snapshot_accounts,
            notices,
            // A pending transaction may post under another id.
            pending_match: Some(PendingMatchRule::default()),
            complete: true,
        })
    }

    /// Teller's webhook (teller.io/docs/api/webhooks): `Teller-Signature:
    /// t=<unix time>,v1=<hex HMAC-SHA256>[,v1=…]` over `<t>.<body>` with a
    /// signing secret, at most 3 minutes old. `enrollment.disconnected`
    /// needs the person on every connection to that enrollment; other
    /// events change nothing.
    fn webhook(&self, inbound: &InboundWebhook<'_>) -> Result<ProviderEvent, WebhookRefusal> {
        if self.config.webhook_secrets.is_empty() {
            return Err(WebhookRefusal::NotTaken);
        }
        let header = (inbound.header)("teller-signature")
            .ok_or_else(|| WebhookRefusal::Unsigned("no Teller-Signature header".into()))?;
        let signed = Signature::parse(&header)?;
        let age = inbound.now.timestamp().abs_diff(signed.timestamp);
        if age > WEBHOOK_TOLERANCE_SECONDS.unsigned_abs() {
            return Err(WebhookRefusal::Unsigned(format!(
                "not signed within {WEBHOOK_TOLERANCE_SECONDS} s of now"
            )));
        }
        let mut message = format!("{}.", signed.timestamp).into_bytes();
        message.extend_from_slice(inbound.body);
        if !signed.verifies(&message, &self.config.webhook_secrets) {
            return Err(WebhookRefusal::Unsigned(
                "no v1 signature matches a signing secret".into(),
            ));
        }
        #[derive(Deserialize)]
        struct Event {
            #[serde(rename = "type")]
            kind: String,
            #[serde(default)]
            payload: Value,
        }
        let event: Event = serde_json::from_slice(inbound.body)
            .map_err(|err| WebhookRefusal::Malformed(format!("not a Teller event: {err}")))?;
        if event.kind != "enrollment.disconnected" {
            return Ok(ProviderEvent::Nothing);
        }
        let enrollment = event.payload["enrollment_id"]
            .as_str()
            .filter(|id| !id.is_empty())
            .ok_or_else(|| {
                WebhookRefusal::Malformed("enrollment.disconnected names no enrollment_id".into())
            })?;
        let reason = event.payload["reason"].as_str().unwrap_or("disconnected");
        Ok(ProviderEvent::NeedsPerson {
            setting: "enrollment_id",
            value: enrollment.to_owned(),
            reason: format!(
                "Teller says the bank disconnected the enrollment ({reason}): sign in to the connection again to repair it"
            ),
        })
    }

    /// Teller Connect, where the operator configured it: a new
    /// enrollment, or the repair of the connection's (Teller restores it,
    /// and its access token stays good).
    fn connect_widget(
        &self,
        repairing: Option<&Value>,
        _person: UserId,
    ) -> Result<Option<ConnectWidget>, ConnectorError> {
        let Some(connect) = self.config.connect.as_ref() else {
            return Ok(None);
        };
        let mut options = vec![
            ("application-id", connect.application_id.clone()),
            ("environment", connect.environment.clone()),
            ("products", "balance,transactions".to_owned()),
        ];
        if let Some(enrollment) = repairing.and_then(|settings| settings["enrollment_id"].as_str())
        {
            options.push(("enrollment-id", enrollment.to_owned()));
        }
        Ok(Some(ConnectWidget {
            script: connect.script.clone(),
            origins: vec![CONNECT_ORIGIN.to_owned()],
            inline_styles: false,
            label: "Enroll your bank with Teller Connect",
            options,
        }))
    }

    fn connect_launcher(&self) -> Option<&'static str> {
        self.config
            .connect
            .as_ref()
            .map(|_| include_str!("teller_connect.js"))
    }
}

#[cfg(test)]
mod tests {
    // Test code: a failed unwrap is a failed test, with its message.
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn a_signature_header_is_read_within_bounds() {
        let hex = "ab".repeat(32);
        let many = std::iter::repeat_n(format!("v1={hex}"), 100)
            .collect::<Vec<_>>()
            .join(",");
        let read = Signature::parse(&format!("t=1700000000,{many}")).unwrap();
        assert_eq!(read.signatures.len(), MAX_SIGNATURES);
        // Not 32 bytes of hex: matches nothing, so none is left.
        assert!(Signature::parse("t=1,v1=,v1=abcd,v1=zz").is_err());
        assert!(Signature::parse(&format!("v1={hex}")).is_err(), "no time");
        let extreme = Signature::parse(&format!("t={},v1={hex}", i64::MIN)).unwrap();
        assert_eq!(extreme.timestamp, i64::MIN, "read, then refused as stale without overflow");
    }

    #[test]
    fn teller_connect_is_offered_only_as_configured() {
        let connect = |pairs: &[(&'static str, &'static str)]| {
            let pairs = pairs.to_vec();
            let lookup = move |name: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == name)
                    .map(|(_, v)| (*v).to_owned())
            };
            teller_connect(&Environment::new(&lookup))
        };
        assert_eq!(connect(&[]), Ok(None), "nothing of Teller's without the id");
        let offered = connect(&[("TRIBUTARY_TELLER_APPLICATION_ID", "app_o3k2")])
            .unwrap()
            .unwrap();
        assert_eq!(
            (offered.environment.as_str(), offered.script.as_str()),
            ("development", CONNECT_SCRIPT)
        );
        for (name, value) in [
            ("TRIBUTARY_TELLER_APPLICATION_ID", "app\" onload=\"x"),
            ("TRIBUTARY_TELLER_ENVIRONMENT", "staging"),
            ("TRIBUTARY_TELLER_CONNECT_SCRIPT", "http://cdn.example/connect.js"),
            ("TRIBUTARY_TELLER_CONNECT_SCRIPT", "javascript:alert(1)"),
            ("TRIBUTARY_TELLER_CONNECT_SCRIPT", "https://x;frame-src/c.js"),
        ] {
            // The one given first is the one read.
            let pairs = [(name, value), ("TRIBUTARY_TELLER_APPLICATION_ID", "app_o3k2")];
            let refused = connect(&pairs).unwrap_err();
            assert_eq!(refused.name, name, "{value}");
        }
        assert!(crate::connector::is_script_address("http://127.0.0.1:9/connect.js"));
        assert!(crate::connector::is_script_address("http://[::1]:9/connect.js"));
        assert!(crate::connector::is_script_address("http://localhost:9/connect.js"));
    }

    fn refused(status: u16, body: &str) -> ConnectorError {
        refusal(&Refusal {
            what: "the accounts",
            status: reqwest::StatusCode::from_u16(status).unwrap(),
            headers: &reqwest::header::HeaderMap::new(),
            body,
        })
    }

    #[test]
    fn a_missing_certificate_is_the_operators_setting() {
        let ConnectorError::Misconfigured(why) = refused(
            400,
            r#"{"error":{"code":"bad_request","message":"Missing certificate: Retry request using your Teller client certificate."}}"#,
        ) else {
            panic!("the operator's to fix")
        };
        assert!(why.contains("TRIBUTARY_TELLER_CERTIFICATE_FILE"), "{why}");
    }

    #[test]
    fn a_disconnected_enrollment_or_a_revoked_token_needs_the_person() {
        for (status, body) in [
            (
                404,
                r#"{"error":{"code":"enrollment.disconnected.account_locked","message":"Enrollment is not healthy"}}"#,
            ),
            (
                403,
                r#"{"error":{"code":"forbidden","message":"The token is revoked"}}"#,
            ),
        ] {
            let ConnectorError::ReauthRequired(why) = refused(status, body) else {
                panic!("{status} needs the person")
            };
            assert!(why.contains("enroll again"), "{why}");
        }
        assert!(refused(502, r#"{"error":{"code":"bad_gateway","message":"x"}}"#).is_transient());
    }

    #[test]
    fn a_credit_accounts_purchase_is_money_out() {
        assert_eq!(Side::Credit.amount("45.00").unwrap().to_string(), "-45.00");
        assert_eq!(Side::Credit.amount("-200.00").unwrap().to_string(), "200.00");
        assert_eq!(Side::Depository.amount("-86.46").unwrap().to_string(), "-86.46");
        let account: Account = serde_json::from_value(json!({
            "id": "acc_x", "name": "Brokerage", "type": "investment", "currency": "USD",
            "status": "open", "institution": {"id": "i", "name": "I"}}))
        .unwrap();
        let Err(ConnectorError::Protocol(why)) = Side::of(&account) else {
            panic!("an unknown type's sign is not guessed")
        };
        assert!(why.contains("investment"), "{why}");
    }
}
