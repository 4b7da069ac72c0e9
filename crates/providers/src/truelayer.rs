//! TrueLayer (truelayer.com, Data API v1, docs/providers.md): banks in the
//! UK and Europe through open banking. The operator registers a client in
//! TrueLayer's console (its id and secret in configuration, and
//! `<public URL>/connect/truelayer/return` among its redirect URIs). A user
//! connects in three steps:
//!
//! 1. `prepare`: the bank chosen from TrueLayer's providers (by country),
//!    and the link to TrueLayer's authorization page for it, with a fresh
//!    `state`; kept as the connection's `link`.
//! 2. The user consents at their bank, which sends them back to our return
//!    URL with a `code` and our `state`; `complete` exchanges the code for
//!    tokens (`POST /connect/token`) and reads the consent's end
//!    (`GET /data/v1/me`, `consent_expires_at`; 90 days where it is not
//!    said). The refresh token is the connection's sealed credential.
//! 3. `fetch`: a fresh access token from the refresh token (a new refresh
//!    token, when one comes back, is kept at once), then every account and
//!    card with its balance, transactions and pending transactions.
//!
//! Signs: an account's `amount` is signed as money moves for the account
//! holder (out negative); a card's is not promised either way, so its
//! direction is `transaction_type` (`DEBIT` a charge, `CREDIT` a payment or
//! refund) and its size the amount's. An expired or revoked consent
//! (`invalid_grant`, `access_denied`, `sca_exceeded`) needs the user to
//! connect again; the consent's end is reminded by the existing notices.

use crate::connector::PROVIDER_TIMEOUT;
use crate::connector::{
    AuthorizationReturn, ConnectRequest, ConnectorError, ConsentEnd, FetchContext, HttpAnswer,
    InstitutionChoice, Prepared,
};
use crate::description::{
    Connect, Constructor, Description, Environment, Field, Input, Reports, ReturnAddress,
    SettingError, SetupError, Variable, constructor,
};
use crate::provider_http::{ProviderHttp, Refusal};
use crate::psd2::{hex_string, kept_institution, record_ids, returned_once, until_tomorrow};
use chrono::{DateTime, Days, NaiveDate, NaiveDateTime, Utc};
use rand::Rng as _;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::time::Duration;
use tributary_domain::model::{AccountKind, Provider};
use tributary_domain::money::Decimal;
use tributary_domain::pending_match::PendingMatchRule;
use tributary_domain::snapshot::*;

pub const PROVIDER: Provider = Provider::new("truelayer");

pub const DESCRIPTION: Description = Description {
    provider: PROVIDER,
    name: "TrueLayer",
    summary: "Banks in the UK and Europe through TrueLayer: find your bank, consent at your bank and come back here.",
    reports: Reports::ACCOUNTS,
    connect: Connect {
        fields: &[Field {
            name: "institution_id",
            flag: Some("bank"),
            label: "Bank id (for example ob-monzo)",
            help: "The bank: its TrueLayer provider id, e.g. ob-monzo (`tributary institutions --country GB` lists them).",
            input: Input::Text { autocomplete: "off" },
            required: true,
            default: None,
            remembered_as: Some("institution_id"),
        }],
        note: None,
        hands_off: true,
        picks_institution: true,
        return_address: ReturnAddress::Always { default: None },
        finish_on_return: true,
        command_help: "Connect a bank through TrueLayer: prints the page the user must open; the bank sends them back to --redirect with a code, which `tributary connect finish` takes (needs TRIBUTARY_TRUELAYER_CLIENT_ID and _CLIENT_SECRET).",
        request: crate::psd2::bank_request,
    },
    environment: &[
        Variable {
            names: "TRIBUTARY_TRUELAYER_CLIENT_ID, TRIBUTARY_TRUELAYER_CLIENT_SECRET",
            help: "enable TrueLayer: the client's id and secret, from TrueLayer's console",
        },
        Variable {
            names: "TRIBUTARY_TRUELAYER_AUTH_URL",
            help: "its authorization server [default: https://auth.truelayer.com]",
        },
        Variable {
            names: "TRIBUTARY_TRUELAYER_API_URL",
            help: "its Data API root [default: https://api.truelayer.com]",
        },
    ],
    configure,
};

fn configure(env: &Environment<'_>) -> Result<Option<Constructor>, SettingError> {
    let Some((client_id, client_secret)) = env.both_or_neither(
        "TRIBUTARY_TRUELAYER_CLIENT_ID",
        "TRIBUTARY_TRUELAYER_CLIENT_SECRET",
    )?
    else {
        return Ok(None);
    };
    let config = TrueLayerConfig {
        auth_url: env
            .get("TRIBUTARY_TRUELAYER_AUTH_URL")
            .unwrap_or_else(|| DEFAULT_AUTH_URL.to_owned()),
        api_url: env
            .get("TRIBUTARY_TRUELAYER_API_URL")
            .unwrap_or_else(|| DEFAULT_API_URL.to_owned()),
        client_id,
        client_secret,
        timeout: PROVIDER_TIMEOUT,
    };
    Ok(constructor(move || {
        TrueLayerConnector::new(config.clone())
            .map_err(|err| SetupError::new("TrueLayer", format!("the HTTP client: {err}")))
    }))
}

pub const DEFAULT_AUTH_URL: &str = "https://auth.truelayer.com";
pub const DEFAULT_API_URL: &str = "https://api.truelayer.com";
/// What the connection reads: identity is not asked for.
const SCOPES: &str = "info accounts balance cards transactions offline_access";
/// A consent lasts 90 days where `/me` does not say (UK open banking).
const CONSENT_DAYS: i64 = 90;
/// Banks give 90 days of history without the user present: ask for a day
/// less.
const HISTORY_DAYS: u64 = 89;
const OVERLAP_DAYS: i64 = 14;
/// PSD2 lets an application read an account about 4 times a day unattended.
pub const DAILY_SYNCS: i32 = 4;

#[derive(Clone)]
pub struct TrueLayerConfig {
    pub auth_url: String,
    pub api_url: String,
    pub client_id: String,
    pub client_secret: String,
    pub timeout: Duration,
}

impl std::fmt::Debug for TrueLayerConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TrueLayerConfig")
            .field("auth_url", &self.auth_url)
            .field("api_url", &self.api_url)
            .field("client_id", &self.client_id)
            .finish_non_exhaustive()
    }
}

#[derive(Debug)]
pub struct TrueLayerConnector {
    config: TrueLayerConfig,
    http: ProviderHttp,
}

/// TrueLayer's error body: `error` (a code) and `error_description`.
#[derive(Debug, Default, Deserialize)]
struct ApiError {
    #[serde(default)]
    error: Option<String>,
    #[serde(default)]
    error_description: Option<String>,
}

impl ApiError {
    fn read(body: &str) -> Self {
        serde_json::from_str(body).unwrap_or_default()
    }

    fn text(&self) -> String {
        [self.error.clone(), self.error_description.clone()]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join(": ")
    }
}

/// TrueLayer's refusal as the error it means: by its error code first, then
/// by the status.
fn refusal(refused: &Refusal<'_>, now: DateTime<Utc>) -> ConnectorError {
    let body = ApiError::read(refused.body);
    let text = body.text();
    let what = refused.what;
    match body.error.as_deref() {
        // The bank's allowance of unattended reads (PSD2: about 4 a day)
        // is spent: it returns with the next day.
        Some("provider_request_limit_exceeded" | "unattended_calls_limit_exceeded") => {
            ConnectorError::Unavailable {
                reason: format!("the bank's daily allowance for {what} is spent ({text})"),
                retry_after: Some(until_tomorrow(now)),
            }
        }
        Some("invalid_grant" | "access_denied" | "sca_exceeded") => ConnectorError::ReauthRequired(
            format!("the bank access has ended ({text}): connect the bank again"),
        ),
        Some("invalid_authorization_code") => ConnectorError::InvalidCredentials(format!(
            "the bank's authorization did not complete ({text}): start again"
        )),
        Some("invalid_client" | "unauthorized_client") => ConnectorError::Misconfigured(format!(
            "TrueLayer refused the client ({text}): check TRIBUTARY_TRUELAYER_CLIENT_ID, its secret and its redirect URIs"
        )),
        _ => {
            let answer = HttpAnswer {
                provider: "TrueLayer",
                what,
                status: refused.status,
                detail: &text,
                retry_after: refused.seconds_header(&["retry-after"]),
            };
            // A 401 just after a fresh token is TrueLayer's trouble, not
            // the consent's (an ended consent is `invalid_grant` or
            // `access_denied`): tried again.
            if refused.status == reqwest::StatusCode::UNAUTHORIZED {
                return ConnectorError::Unavailable {
                    reason: format!("TrueLayer refused a fresh access token for {what} ({text})"),
                    retry_after: None,
                };
            }
            answer.error(|_| None)
        }
    }
}

/// A bank as `GET /api/providers` lists it.
#[derive(Debug, Clone, Deserialize)]
struct ListedProvider {
    provider_id: String,
    display_name: String,
    #[serde(default)]
    logo_url: Option<String>,
    /// `uk`, `ie`, `fr`…
    #[serde(default)]
    country: Option<String>,
    /// What the bank lets a client read; absent: everything asked.
    #[serde(default)]
    scopes: Option<Vec<String>>,
}

impl ListedProvider {
    /// The scopes asked of this bank: Tributary's, less those it does not
    /// give (asking a bank for cards it has not can hide it from the list).
    fn scopes(&self) -> String {
        SCOPES
            .split(' ')
            .filter(|scope| {
                self.scopes
                    .as_ref()
                    .is_none_or(|given| given.iter().any(|g| g == scope))
            })
            .collect::<Vec<_>>()
            .join(" ")
    }

    fn institution(&self) -> SnapshotInstitution {
        SnapshotInstitution {
            provider_institution_id: self.provider_id.clone(),
            name: self.display_name.clone(),
            logo_url: self.logo_url.clone(),
        }
    }
}

/// Whether TrueLayer's `country` is the ISO 3166 code asked for (TrueLayer
/// writes the United Kingdom `uk`).
fn same_country(listed: &str, asked: &str) -> bool {
    let listed = listed.to_ascii_lowercase();
    let asked = asked.to_ascii_lowercase();
    listed == asked || (listed == "uk" && asked == "gb")
}

/// What the connection keeps sealed.
#[derive(Serialize, Deserialize)]
struct Kept {
    refresh_token: String,
}

// The token never reaches a log through `{:?}`.
impl std::fmt::Debug for Kept {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Kept(<sealed>)")
    }
}

#[derive(Deserialize)]
struct Tokens {
    access_token: String,
    #[serde(default)]
    refresh_token: Option<String>,
}

/// The Data API's envelope.
#[derive(Debug, Deserialize)]
struct Results<T> {
    results: Vec<T>,
}

#[derive(Debug, Deserialize)]
struct Me {
    #[serde(default)]
    consent_expires_at: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
struct AccountNumber {
    #[serde(default)]
    iban: Option<String>,
    #[serde(default)]
    number: Option<String>,
}

/// A bank account (`/accounts`) or a card (`/cards`): the fields both have,
/// and each one's own.
#[derive(Debug, Deserialize)]
struct Listed {
    account_id: String,
    currency: String,
    #[serde(default)]
    display_name: Option<String>,
    /// Accounts: TRANSACTION, SAVINGS, BUSINESS_TRANSACTION, BUSINESS_SAVINGS.
    #[serde(default)]
    account_type: Option<String>,
    #[serde(default)]
    account_number: Option<AccountNumber>,
    #[serde(default)]
    partial_card_number: Option<String>,
}

#[derive(Debug, Deserialize)]
struct Balance {
    currency: String,
    current: Decimal,
    #[serde(default)]
    available: Option<Decimal>,
    #[serde(default)]
    credit_limit: Option<Decimal>,
    #[serde(default)]
    last_statement_balance: Option<Decimal>,
    #[serde(default)]
    payment_due: Option<Decimal>,
    #[serde(default)]
    payment_due_date: Option<String>,
    #[serde(default)]
    update_timestamp: Option<String>,
}

#[derive(Debug, Serialize, Deserialize)]
struct Transaction {
    transaction_id: String,
    #[serde(default)]
    normalised_provider_transaction_id: Option<String>,
    #[serde(default)]
    provider_transaction_id: Option<String>,
    timestamp: String,
    #[serde(default)]
    description: Option<String>,
    amount: Decimal,
    currency: String,
    #[serde(default)]
    transaction_type: Option<String>,
    #[serde(default)]
    merchant_name: Option<String>,
}

/// What a transaction is, without TrueLayer's id for it (which "may
/// change between requests", a pending one's always): where the bank gives
/// no id of its own, a transaction's id is the hash of this, numbered where
/// two are alike (`psd2::record_ids`), so that neither a new TrueLayer id
/// adds a row nor two alike become one.
#[derive(Serialize)]
struct Content<'a> {
    /// The bank's own id, when TrueLayer passes one on (it lasts).
    #[serde(skip)]
    bank_id: Option<&'a str>,
    timestamp: &'a str,
    amount: &'a Decimal,
    currency: &'a str,
    transaction_type: Option<&'a str>,
    description: Option<&'a str>,
    merchant_name: Option<&'a str>,
}

impl<'a> Content<'a> {
    fn of(t: &'a Transaction) -> Self {
        Content {
            bank_id: t
                .normalised_provider_transaction_id
                .as_deref()
                .or(t.provider_transaction_id.as_deref()),
            timestamp: &t.timestamp,
            amount: &t.amount,
            currency: &t.currency,
            transaction_type: t.transaction_type.as_deref(),
            description: t.description.as_deref(),
            merchant_name: t.merchant_name.as_deref(),
        }
    }
}

/// Which of TrueLayer's two lists an account comes from: their amounts are
/// signed differently, and their paths differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Account,
    Card,
}

impl Kind {
    fn path(self) -> &'static str {
        match self {
            Kind::Account => "accounts",
            Kind::Card => "cards",
        }
    }
}

/// A time as TrueLayer writes it: RFC 3339, or without a zone (UTC).
fn parse_time(text: &str, field: &str) -> Result<DateTime<Utc>, ConnectorError> {
    DateTime::parse_from_rfc3339(text)
        .map(|t| t.with_timezone(&Utc))
        .or_else(|_| {
            NaiveDateTime::parse_from_str(text, "%Y-%m-%dT%H:%M:%S%.f").map(|t| t.and_utc())
        })
        .map_err(|_| {
            ConnectorError::Protocol(format!("TrueLayer sent `{text}` as {field}, not a time"))
        })
}

/// The day of a time as TrueLayer writes it, in the zone it is written in
/// (the bank's day: `2026-06-14T00:00:00+01:00` is the 14th).
fn parse_day(text: &str, field: &str) -> Result<NaiveDate, ConnectorError> {
    match DateTime::parse_from_rfc3339(text) {
        Ok(t) => Ok(t.date_naive()),
        Err(_) => text
            .parse::<NaiveDate>()
            .or_else(|_| parse_time(text, field).map(|t| t.date_naive()))
            .map_err(|_| {
                ConnectorError::Protocol(format!("TrueLayer sent `{text}` as {field}, not a day"))
            }),
    }
}

impl TrueLayerConnector {
    pub fn new(config: TrueLayerConfig) -> Result<Self, reqwest::Error> {
        let http = ProviderHttp::new("TrueLayer", config.timeout)?;
        Ok(Self { config, http })
    }

    fn auth(&self, path: &str) -> String {
        format!("{}/{path}", self.config.auth_url.trim_end_matches('/'))
    }

    fn data(&self, path: &str) -> String {
        format!(
            "{}/data/v1/{path}",
            self.config.api_url.trim_end_matches('/')
        )
    }

    /// What a Data API endpoint lists; nothing where the bank does not
    /// serve it (501 `endpoint_not_supported`: cards at a bank that has
    /// none, pending transactions at a bank that shows none).
    fn list<T: DeserializeOwned>(
        &self,
        (access_token, now): (&str, DateTime<Utc>),
        (path, query): (&str, &[(&str, String)]),
        what: &str,
    ) -> Result<Vec<T>, ConnectorError> {
        let request = self
            .http
            .client
            .get(self.data(path))
            .query(query)
            .bearer_auth(access_token);
        let response = self.http.send(request, what)?;
        let unsupported = std::cell::Cell::new(false);
        let listed = self.http.json::<Results<T>>(response, what, |refused| {
            unsupported.set(
                refused.status == reqwest::StatusCode::NOT_IMPLEMENTED
                    && ApiError::read(refused.body).error.as_deref()
                        == Some("endpoint_not_supported"),
            );
            refusal(refused, now)
        });
        match listed {
            Ok(listed) => Ok(listed.results),
            Err(_) if unsupported.get() => Ok(Vec::new()),
            Err(err) => Err(err),
        }
    }

    fn tokens(
        &self,
        form: &[(&str, &str)],
        what: &str,
        now: DateTime<Utc>,
    ) -> Result<Tokens, ConnectorError> {
        let mut fields = vec![
            ("client_id", self.config.client_id.as_str()),
            ("client_secret", self.config.client_secret.as_str()),
        ];
        fields.extend_from_slice(form);
        let request = self.http.client.post(self.auth("connect/token")).form(&fields);
        let response = self.http.send(request, what)?;
        self.http.json(response, what, |refused| refusal(refused, now))
    }

    fn providers(&self) -> Result<Vec<ListedProvider>, ConnectorError> {
        let request = self
            .http
            .client
            .get(self.auth("api/providers"))
            .query(&[("clientId", self.config.client_id.as_str())]);
        let response = self.http.send(request, "the list of banks")?;
        self.http
            .json(response, "the list of banks", |refused| refusal(refused, Utc::now()))
    }

    fn provider(&self, id: &str) -> Result<ListedProvider, ConnectorError> {
        self.providers()?
            .into_iter()
            .find(|p| p.provider_id == id)
            .ok_or_else(|| {
                ConnectorError::Misconfigured(format!("TrueLayer lists no bank with the id `{id}`"))
            })
    }

    fn account(
        &self,
        access_token: &str,
        (listed, kind): (&Listed, Kind),
        (from, now): (DateTime<Utc>, DateTime<Utc>),
    ) -> Result<SnapshotAccount, ConnectorError> {
        let base = format!("{}/{}", kind.path(), listed.account_id);
        let balance: Vec<Balance> =
            self.list((access_token, now), (&format!("{base}/balance"), &[]), "the balance")?;
        let window = [
            ("from", from.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)),
            ("to", now.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)),
        ];
        let booked: Vec<Transaction> = self.list(
            (access_token, now),
            (&format!("{base}/transactions"), &window),
            "the transactions",
        )?;
        let pending: Vec<Transaction> = self.list(
            (access_token, now),
            (&format!("{base}/transactions/pending"), &[]),
            "the pending transactions",
        )?;
        let booked_content: Vec<Content<'_>> = booked.iter().map(Content::of).collect();
        let booked_ids = record_ids(&booked_content, |c| c.bank_id, "tl:");
        // A pending one is keyed by its content even where the bank names
        // it: the posted one may carry the same bank id.
        let pending_content: Vec<Content<'_>> = pending.iter().map(Content::of).collect();
        let pending_ids = record_ids(&pending_content, |_| None, "tl:pending:");
        let mut transactions = Vec::new();
        for (t, id, is_pending) in booked
            .iter()
            .zip(booked_ids)
            .map(|(t, id)| (t, id, false))
            .chain(pending.iter().zip(pending_ids).map(|(t, id)| (t, id, true)))
        {
            transactions.push(transaction(t, kind, (id, is_pending))?);
        }
        let balance = balance.into_iter().next();
        let (kind_of, name) = match (kind, listed.account_type.as_deref()) {
            (Kind::Account, Some("SAVINGS" | "BUSINESS_SAVINGS")) => {
                (AccountKind::Savings, "Savings account")
            }
            (Kind::Account, Some("TRANSACTION" | "BUSINESS_TRANSACTION")) => {
                (AccountKind::Checking, "Current account")
            }
            (Kind::Account, _) => (AccountKind::Other, "Account"),
            (Kind::Card, _) => (AccountKind::CreditCard, "Card"),
        };
        let mask = match kind {
            Kind::Card => listed.partial_card_number.clone(),
            Kind::Account => listed.account_number.as_ref().and_then(|n| {
                let digits = n.iban.as_ref().or(n.number.as_ref())?;
                Some(crate::mask::last_four(digits))
            }),
        };
        Ok(SnapshotAccount {
            provider_account_id: account_id(kind, listed),
            institution: None,
            name: listed
                .display_name
                .clone()
                .unwrap_or_else(|| name.to_owned()),
            kind: kind_of,
            currency: listed.currency.clone(),
            mask,
            balance: balance
                .as_ref()
                .map(|b| snapshot_balance(b, kind, now))
                .transpose()?,
            balance_history: Vec::new(),
            liability: match (kind, &balance) {
                (Kind::Card, Some(b)) => Some(liability(b)?),
                _ => None,
            },
            transactions,
            investment_transactions: Vec::new(),
            holdings: None,
        })
    }
}

/// A card's balance is what is owed, as a positive amount: the account's
/// balance is its negative.
fn snapshot_balance(
    b: &Balance,
    kind: Kind,
    now: DateTime<Utc>,
) -> Result<SnapshotBalance, ConnectorError> {
    let as_of = match &b.update_timestamp {
        Some(text) => parse_time(text, "a balance's update_timestamp")?,
        None => now,
    };
    Ok(SnapshotBalance {
        current: match kind {
            Kind::Account => b.current,
            Kind::Card => -b.current,
        },
        available: b.available,
        currency: b.currency.clone(),
        as_of,
    })
}

fn liability(b: &Balance) -> Result<SnapshotLiability, ConnectorError> {
    let due = b
        .payment_due_date
        .as_deref()
        .map(|text| parse_day(text, "payment_due_date"))
        .transpose()?;
    Ok(SnapshotLiability {
        credit_limit: b.credit_limit,
        minimum_payment: b.payment_due,
        next_payment_due: due,
        last_statement_balance: b.last_statement_balance,
    })
}

fn transaction(
    t: &Transaction,
    kind: Kind,
    (provider_id, is_pending): (String, bool),
) -> Result<SnapshotTransaction, ConnectorError> {
    let amount = match kind {
        // Signed for the holder, as the Data API documents it.
        Kind::Account => t.amount,
        // Not promised: the type says which way.
        Kind::Card => match t.transaction_type.as_deref() {
            Some("DEBIT") => -t.amount.abs(),
            Some("CREDIT") => t.amount.abs(),
            other => {
                return Err(ConnectorError::Protocol(format!(
                    "TrueLayer sent card transaction {} with transaction_type {other:?}: neither DEBIT nor CREDIT, so its direction is unknown",
                    t.transaction_id
                )));
            }
        },
    };
    Ok(SnapshotTransaction {
        provider_id,
        pending_provider_id: None,
        is_pending,
        date: parse_day(&t.timestamp, "a transaction's timestamp")?,
        amount,
        currency: t.currency.clone(),
        merchant: t.merchant_name.clone(),
        description: t.description.clone(),
        hints: Default::default(),
    })
}

impl crate::connector::Connector for TrueLayerConnector {
    fn provider(&self) -> Provider {
        PROVIDER
    }

    fn institutions(&self, country: &str) -> Result<Vec<InstitutionChoice>, ConnectorError> {
        if country.len() != 2 || !country.bytes().all(|b| b.is_ascii_alphabetic()) {
            return Err(ConnectorError::Misconfigured(format!(
                "`{country}` is not a two-letter country code"
            )));
        }
        // A bank the list names no country for is shown everywhere rather
        // than nowhere.
        Ok(self
            .providers()?
            .into_iter()
            .filter(|p| p.country.as_deref().is_none_or(|c| same_country(c, country)))
            .map(|p| InstitutionChoice {
                id: p.provider_id,
                name: p.display_name,
                logo_url: p.logo_url,
            })
            .collect())
    }

    fn daily_sync_limit(&self) -> Option<i32> {
        Some(DAILY_SYNCS)
    }

    /// Signing in again (the consent ends soon, or has ended) starts a new
    /// consent and keeps the tokens that may still work until it completes:
    /// a person who heeds the reminder and then leaves the bank's page
    /// loses nothing.
    fn prepare_again(
        &self,
        request: &ConnectRequest,
        existing: Option<&str>,
    ) -> Result<Prepared, ConnectorError> {
        let mut prepared = self.prepare(request)?;
        prepared.credentials = existing.map(str::to_owned);
        Ok(prepared)
    }

    fn prepare(&self, request: &ConnectRequest) -> Result<Prepared, ConnectorError> {
        let setting = |name: &str| request.settings.get(name).and_then(Value::as_str);
        let id = setting("institution_id").ok_or_else(|| {
            ConnectorError::Misconfigured(
                "connecting TrueLayer needs a bank (institution_id, e.g. ob-monzo)".into(),
            )
        })?;
        let redirect = setting("redirect").ok_or_else(|| {
            ConnectorError::Misconfigured("connecting TrueLayer needs a return URL".into())
        })?;
        let bank = self.provider(id)?;
        let mut state = [0u8; 16];
        rand::rng().fill_bytes(&mut state);
        let state = hex_string(&state);
        // The bank chosen, and only it: `providers` must cover
        // `provider_id`. Spaces as %20, as TrueLayer's examples write them
        // (form encoding's `+` is not promised to be read as one).
        let query = url::form_urlencoded::Serializer::new(String::new())
            .append_pair("response_type", "code")
            .append_pair("client_id", &self.config.client_id)
            .append_pair("redirect_uri", redirect)
            .append_pair("scope", &bank.scopes())
            .append_pair("providers", &bank.provider_id)
            .append_pair("provider_id", &bank.provider_id)
            .append_pair("state", &state)
            .finish()
            .replace('+', "%20");
        let link = format!("{}?{query}", self.auth(""));
        Ok(Prepared {
            institution: bank.institution(),
            settings: json!({
                "institution_id": bank.provider_id,
                "institution_name": bank.display_name,
                "institution_logo": bank.logo_url,
                "redirect": redirect,
                "state": state,
                "link": link,
            }),
            credentials: None,
            consent: None,
        })
    }

    fn complete(
        &self,
        settings: &Value,
        _credentials: Option<&str>,
        returned: &AuthorizationReturn,
    ) -> Result<Option<Prepared>, ConnectorError> {
        let code = returned.code_for(settings.get("state").and_then(Value::as_str), "the bank")?;
        let redirect = settings
            .get("redirect")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let tokens = self.tokens(
            &[
                ("grant_type", "authorization_code"),
                ("redirect_uri", redirect),
                ("code", code),
            ],
            "the code exchange",
            Utc::now(),
        )?;
        let refresh_token = tokens.refresh_token.ok_or_else(|| {
            ConnectorError::Protocol(
                "TrueLayer gave no refresh token (the client must be allowed offline_access)"
                    .into(),
            )
        })?;
        // The code is spent: whatever `/me` answers, the tokens are kept,
        // and a consent whose end it does not say lasts the UK's 90 days.
        let stated_end = self
            .list::<Me>((&tokens.access_token, Utc::now()), ("me", &[]), "the consent")
            .ok()
            .and_then(|me| me.into_iter().next()?.consent_expires_at)
            .and_then(|text| parse_time(&text, "consent_expires_at").ok());
        let consent = match stated_end {
            Some(at) => ConsentEnd::At(at),
            None => ConsentEnd::After(chrono::Duration::days(CONSENT_DAYS)),
        };
        let credentials = serde_json::to_string(&Kept { refresh_token })
            .map_err(|err| ConnectorError::Protocol(format!("keeping the tokens: {err}")))?;
        let settings = returned_once(settings);
        Ok(Some(Prepared {
            institution: kept_institution(&settings),
            settings,
            credentials: Some(credentials),
            consent: Some(consent),
        }))
    }

    fn fetch(&self, context: &FetchContext<'_>) -> Result<ProviderSnapshot, ConnectorError> {
        let kept: Kept = context
            .credentials
            .map(serde_json::from_str)
            .transpose()
            .map_err(|err| ConnectorError::Misconfigured(format!("the kept tokens: {err}")))?
            .ok_or_else(|| {
                ConnectorError::ReauthRequired(
                    "the bank was not authorised yet: open the bank's page and consent".into(),
                )
            })?;
        let tokens = self.tokens(
            &[
                ("grant_type", "refresh_token"),
                ("refresh_token", &kept.refresh_token),
            ],
            "the token refresh",
            context.now,
        )?;
        if let (Some(fresh), Some(keep)) = (&tokens.refresh_token, context.keep_credentials)
            && *fresh != kept.refresh_token
        {
            let fresh = serde_json::to_string(&Kept {
                refresh_token: fresh.clone(),
            })
            .map_err(|err| ConnectorError::Protocol(format!("keeping the tokens: {err}")))?;
            keep(&fresh)?;
        }
        let now = context.now;
        let earliest = (now.date_naive() - Days::new(HISTORY_DAYS))
            .and_time(chrono::NaiveTime::MIN)
            .and_utc();
        let access = tokens.access_token.as_str();
        let mut accounts = Vec::new();
        for kind in [Kind::Account, Kind::Card] {
            let what = match kind {
                Kind::Account => "the accounts",
                Kind::Card => "the cards",
            };
            for listed in self.list::<Listed>((access, now), (kind.path(), &[]), what)? {
                // An account new to the connection gets a first sync's history.
                let from = context
                    .reach_back_for(&account_id(kind, &listed), OVERLAP_DAYS)
                    .map_or(earliest, |f| f.max(earliest));
                accounts.push(self.account(access, (&listed, kind), (from, now))?);
            }
        }
        Ok(ProviderSnapshot {
            institution: kept_institution(context.settings),
            accounts,
            notices: Vec::new(),
            // A pending transaction's id is not kept when it posts: pair
            // them by the default rule.
            pending_match: Some(PendingMatchRule::default()),
            complete: true,
        })
    }
}

/// The id an account or card is kept under (the two lists' ids may meet).
fn account_id(kind: Kind, listed: &Listed) -> String {
    format!("{}:{}", kind.path(), listed.account_id)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn card(kind: Option<&str>, amount: &str) -> Transaction {
        Transaction {
            transaction_id: "t".into(),
            normalised_provider_transaction_id: None,
            provider_transaction_id: None,
            timestamp: "2026-11-20T00:00:00".into(),
            description: None,
            amount: amount.parse().unwrap(),
            currency: "GBP".into(),
            transaction_type: kind.map(str::to_owned),
            merchant_name: None,
        }
    }

    #[test]
    fn a_cards_direction_is_its_type_and_never_guessed() {
        for (kind, amount, signed) in [
            (Some("DEBIT"), "12.50", "-12.50"),
            (Some("DEBIT"), "-12.50", "-12.50"),
            (Some("CREDIT"), "40.00", "40.00"),
            (Some("CREDIT"), "-40.00", "40.00"),
        ] {
            let read = transaction(&card(kind, amount), Kind::Card, ("t".into(), false)).unwrap();
            assert_eq!(read.amount.to_string(), signed, "{kind:?} {amount}");
        }
        assert!(transaction(&card(None, "1.00"), Kind::Card, ("t".into(), false)).is_err());
        // An account's amount is signed as given.
        let read = transaction(&card(Some("CREDIT"), "-20.50"), Kind::Account, ("t".into(), false)).unwrap();
        assert_eq!(read.amount.to_string(), "-20.50");
    }

    #[test]
    fn times_with_and_without_a_zone_read() {
        assert_eq!(
            parse_time("2018-03-06T00:00:00", "t").unwrap().to_rfc3339(),
            "2018-03-06T00:00:00+00:00"
        );
        assert_eq!(
            parse_time("2017-02-07T17:29:24.740802Z", "t")
                .unwrap()
                .date_naive(),
            NaiveDate::from_ymd_opt(2017, 2, 7).unwrap()
        );
        assert!(parse_time("07/02/2017", "t").is_err());
    }

    #[test]
    fn the_united_kingdom_is_uk_to_truelayer() {
        assert!(same_country("uk", "GB"));
        assert!(same_country("ie", "IE"));
        assert!(!same_country("uk", "IE"));
    }
}
