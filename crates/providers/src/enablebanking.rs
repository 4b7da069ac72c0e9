//! Enable Banking (enablebanking.com, API 1.0, docs/providers.md): banks in
//! the EU/EEA through PSD2. The operator registers an application with
//! Enable Banking (its id and RSA private key in configuration); every call
//! carries a JWT the application signs itself (RS256, `kid` = the
//! application id, an hour long). A user connects in three steps:
//!
//! 1. `prepare`: find the bank (ASPSP: a name within a country), start an
//!    authorization (`POST /auth`) for as long as the bank allows (at most
//!    180 days) and keep the bank's page as the connection's `link`.
//! 2. The user consents at their bank, which sends them back to our return
//!    URL with a `code` and our `state`; `complete` exchanges the code for a
//!    session (`POST /sessions`), whose id and accounts are the connection's
//!    sealed credentials, and whose `access.valid_until` is its consent's end.
//! 3. `fetch`: each account's balances and transactions, page after page by
//!    `continuation_key`, the same query each page.
//!
//! Banks allow about 4 unattended reads a day per account (PSD2): a
//! connection syncs at most 4 times a UTC day, and a bank's
//! `ASPSP_RATE_LIMIT_EXCEEDED` waits for the next day. An expired, closed
//! or revoked session needs the user to connect again; accounts keep their
//! place across sessions by their `identification_hash`.

use tributary_domain::enrich::hints::{CategoryHint, Hints};
use crate::connector::{
    AuthorizationReturn, ConnectRequest, ConnectorError, ConsentEnd, FetchContext, HttpAnswer,
    InstitutionChoice, Prepared,
};
use crate::provider_http::{ProviderHttp, Refusal};
use crate::description::{
    Connect, Constructor, Description, Environment, Field, Input, Reports, ReturnAddress,
    SettingError, SetupError, Variable, constructor,
};
use crate::connector::PROVIDER_TIMEOUT;
use crate::psd2::{
    TypedBalance, hex_string, kept_institution, pick_balance, record_ids, returned_once,
    until_tomorrow,
};
use chrono::{DateTime, Days, NaiveDate, Utc};
use rand::Rng as _;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::sync::Mutex;
use std::time::Duration;
use tributary_domain::model::{AccountKind, Provider};
use tributary_domain::money::{Decimal, parse_decimal};
use tributary_domain::pending_match::PendingMatchRule;
use tributary_domain::snapshot::*;

pub const PROVIDER: Provider = Provider::new("enablebanking");

pub const DESCRIPTION: Description = Description {
    provider: PROVIDER,
    name: "Enable Banking",
    summary: "Banks in the EU and EEA (PSD2): find your bank, consent at your bank and come back here.",
    reports: Reports::ACCOUNTS,
    connect: Connect {
        fields: &[Field {
            name: "institution_id",
            flag: Some("bank"),
            label: "Bank id (for example FI/Nordea)",
            help: "The bank: its country and its name as Enable Banking lists it, e.g. FI/Nordea.",
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
        command_help: "Connect a bank through Enable Banking: prints the bank's page the user must open; the bank sends them back to --redirect with a code, which `tributary connect finish` takes (needs TRIBUTARY_ENABLEBANKING_APP_ID and _KEY_FILE).",
        request: crate::psd2::bank_request,
    },
    environment: &[
        Variable {
            names: "TRIBUTARY_ENABLEBANKING_APP_ID, TRIBUTARY_ENABLEBANKING_KEY_FILE",
            help: "enable Enable Banking: the application's id and its RSA private key (a PEM file)",
        },
        Variable {
            names: "TRIBUTARY_ENABLEBANKING_URL",
            help: "its API root [default: https://api.enablebanking.com]",
        },
    ],
    configure,
};

/// Offered with the operator's application: its id, and its private key,
/// read from the file when the connector is built (at start).
fn configure(env: &Environment<'_>) -> Result<Option<Constructor>, SettingError> {
    let Some((application_id, key_file)) = env.both_or_neither(
        "TRIBUTARY_ENABLEBANKING_APP_ID",
        "TRIBUTARY_ENABLEBANKING_KEY_FILE",
    )?
    else {
        return Ok(None);
    };
    let base_url = env
        .get("TRIBUTARY_ENABLEBANKING_URL")
        .unwrap_or_else(|| DEFAULT_BASE_URL.to_owned());
    Ok(constructor(move || {
        let private_key_pem = std::fs::read_to_string(&key_file).map_err(|err| {
            SetupError::new(
                "Enable Banking",
                format!("TRIBUTARY_ENABLEBANKING_KEY_FILE: reading {key_file}: {err}"),
            )
        })?;
        EnableBankingConnector::new(EnableBankingConfig {
            base_url: base_url.clone(),
            application_id: application_id.clone(),
            private_key_pem,
            timeout: PROVIDER_TIMEOUT,
        })
        .map_err(|err| {
            SetupError::new("Enable Banking", format!("TRIBUTARY_ENABLEBANKING_KEY_FILE: {err}"))
        })
    }))
}

pub const DEFAULT_BASE_URL: &str = "https://api.enablebanking.com";
/// PSD2 lets an application read an account about 4 times a day unattended.
pub const DAILY_SYNCS: i32 = 4;
/// The longest consent asked for; a bank may allow less
/// (`maximum_consent_validity`).
const LONGEST_CONSENT: chrono::Duration = chrono::Duration::days(180);
/// Asked for a little less than a bank's longest, so clocks that differ a
/// little do not make the request too long.
const CONSENT_MARGIN: chrono::Duration = chrono::Duration::hours(1);
/// Most banks give 90 days of history once the consent's first minutes
/// have passed: ask for a day less.
const HISTORY_DAYS: u64 = 89;
const OVERLAP_DAYS: u64 = 14;
/// How long a signed application JWT is used (the API accepts up to 24 h).
const JWT_LIFETIME: i64 = 3600;
/// A transactions listing ends here even if the bank keeps paging.
const MAX_PAGES: usize = 1000;

#[derive(Clone)]
pub struct EnableBankingConfig {
    pub base_url: String,
    /// The application's id (a UUID): the JWT's `kid`.
    pub application_id: String,
    /// The application's RSA private key, PEM.
    pub private_key_pem: String,
    pub timeout: Duration,
}

impl std::fmt::Debug for EnableBankingConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EnableBankingConfig")
            .field("base_url", &self.base_url)
            .field("application_id", &self.application_id)
            .finish_non_exhaustive()
    }
}

#[derive(Serialize)]
struct Claims<'a> {
    iss: &'a str,
    aud: &'a str,
    iat: i64,
    exp: i64,
}

pub struct EnableBankingConnector {
    config: EnableBankingConfig,
    http: ProviderHttp,
    key: jsonwebtoken::EncodingKey,
    /// The signed JWT and when it stops being used.
    jwt: Mutex<Option<(String, i64)>>,
}

impl std::fmt::Debug for EnableBankingConnector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EnableBankingConnector")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

/// An API error body: `message` always; `error` (a code) and `detail`
/// (any shape) mostly. A bank's own error may come through in its own
/// shape, so nothing here is required.
#[derive(Debug, Default, Deserialize)]
struct ApiError {
    #[serde(default)]
    message: Option<String>,
    #[serde(default)]
    error: Option<String>,
    #[serde(default)]
    detail: Option<Value>,
}

impl ApiError {
    fn read(body: &str) -> Self {
        serde_json::from_str(body).unwrap_or_default()
    }

    /// The earliest date a bank lists, where it says so
    /// (`WRONG_TRANSACTIONS_PERIOD`'s `detail.date_from`).
    fn earliest_date(&self) -> Option<NaiveDate> {
        if self.error.as_deref() != Some("WRONG_TRANSACTIONS_PERIOD") {
            return None;
        }
        self.detail
            .as_ref()?
            .get("date_from")?
            .as_str()?
            .parse()
            .ok()
    }

    fn text(&self) -> String {
        let detail = match &self.detail {
            Some(Value::String(s)) => Some(s.clone()),
            Some(Value::Object(o)) => o.get("message").and_then(Value::as_str).map(str::to_owned),
            _ => None,
        };
        [self.error.clone(), self.message.clone(), detail]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join(": ")
    }
}

/// Enable Banking's refusal as the error it means: by its error code
/// first (the HTTP status of each is not documented), then by the status.
fn refusal(refused: &Refusal<'_>, now: DateTime<Utc>) -> ConnectorError {
    let body = ApiError::read(refused.body);
    let text = body.text();
    let what = refused.what;
    match body.error.as_deref() {
        Some(
            "EXPIRED_SESSION" | "CLOSED_SESSION" | "REVOKED_SESSION" | "SESSION_DOES_NOT_EXIST",
        ) => ConnectorError::ReauthRequired(format!(
            "the bank access has ended ({text}): connect the bank again"
        )),
        Some("ASPSP_PSU_ACTION_REQUIRED") => ConnectorError::ReauthRequired(format!(
            "the bank asks the user to act ({text}): connect the bank again"
        )),
        Some("WRONG_AUTHORIZATION_CODE" | "EXPIRED_AUTHORIZATION_CODE" | "ALREADY_AUTHORIZED") => {
            ConnectorError::InvalidCredentials(format!(
                "the bank's authorization did not complete ({text}): start again"
            ))
        }
        Some("ASPSP_RATE_LIMIT_EXCEEDED") => ConnectorError::Unavailable {
            reason: format!("the bank's daily allowance for {what} is spent ({text})"),
            retry_after: Some(until_tomorrow(now)),
        },
        Some("ASPSP_ERROR" | "ASPSP_TIMEOUT") => ConnectorError::Unavailable {
            reason: format!("the bank failed {what} ({text})"),
            retry_after: None,
        },
        Some(
            "AUTHORIZATION_NOT_PROVIDED"
            | "UNAUTHORIZED_ACCESS"
            | "ACCESS_DENIED"
            | "UNAUTHORIZED_IP"
            | "REDIRECT_URI_NOT_ALLOWED",
        ) => ConnectorError::Misconfigured(format!(
            "Enable Banking refused the application ({text}): check TRIBUTARY_ENABLEBANKING_APP_ID, its key and its redirect URLs"
        )),
        _ => {
            let answer = HttpAnswer {
                provider: "Enable Banking",
                what,
                status: refused.status,
                detail: &text,
                retry_after: refused.seconds_header(&["retry-after"]),
            };
            answer.error(|_| None)
        }
    }
}

/// A bank, as `GET /aspsps` lists it.
#[derive(Debug, Clone, Deserialize)]
struct Aspsp {
    name: String,
    country: String,
    #[serde(default)]
    logo: Option<String>,
    /// Seconds.
    #[serde(default)]
    maximum_consent_validity: Option<i64>,
}

impl Aspsp {
    /// The id the connect pages and `prepare` use: `FI/Nordea`.
    fn choice_id(&self) -> String {
        format!("{}/{}", self.country, self.name)
    }

    fn institution(&self) -> SnapshotInstitution {
        SnapshotInstitution {
            provider_institution_id: self.choice_id(),
            name: self.name.clone(),
            logo_url: self.logo.clone(),
        }
    }
}

#[derive(Debug, Deserialize)]
struct AspspList {
    aspsps: Vec<Aspsp>,
}

/// An account as the session lists it; kept sealed with the session (its
/// IBAN and holder are personal), since the bank shows some of it once.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct SessionAccount {
    /// Reads balances and transactions while the session lasts; absent for
    /// an account the bank lets nobody read.
    #[serde(default)]
    uid: Option<String>,
    /// The same for the same account in every session: its place in ours.
    identification_hash: String,
    #[serde(default)]
    account_id: Option<Value>,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    details: Option<String>,
    #[serde(default)]
    product: Option<String>,
    #[serde(default)]
    cash_account_type: Option<String>,
    currency: String,
}

impl SessionAccount {
    fn iban(&self) -> Option<&str> {
        self.account_id.as_ref()?.get("iban")?.as_str()
    }

    /// The bank's name for the account, else what kind it is.
    fn display_name(&self) -> String {
        self.product
            .clone()
            .or_else(|| self.details.clone())
            .unwrap_or_else(|| {
                match self.kind() {
                    AccountKind::Savings => "Savings account",
                    AccountKind::CreditCard => "Card account",
                    AccountKind::Loan => "Loan account",
                    _ => "Current account",
                }
                .to_owned()
            })
    }

    fn kind(&self) -> AccountKind {
        match self.cash_account_type.as_deref() {
            Some("CACC" | "CASH") => AccountKind::Checking,
            Some("SVGS") => AccountKind::Savings,
            Some("CARD") => AccountKind::CreditCard,
            Some("LOAN") => AccountKind::Loan,
            _ => AccountKind::Other,
        }
    }
}

/// What the connection keeps sealed: the session and its accounts.
#[derive(Debug, Serialize, Deserialize)]
struct Session {
    session_id: String,
    accounts: Vec<SessionAccount>,
}

#[derive(Debug, Deserialize)]
struct Access {
    valid_until: DateTime<Utc>,
}

#[derive(Debug, Deserialize)]
struct AuthorizedSession {
    session_id: String,
    accounts: Vec<SessionAccount>,
    access: Access,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Amount {
    amount: String,
    currency: String,
}

#[derive(Debug, Deserialize)]
struct Balance {
    balance_amount: Amount,
    balance_type: String,
    #[serde(default)]
    reference_date: Option<NaiveDate>,
}

#[derive(Debug, Deserialize)]
struct Balances {
    balances: Vec<Balance>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Party {
    #[serde(default)]
    name: Option<String>,
}

/// A transaction; only the amount, its direction and the status are
/// required by the API. Serialised again for the content hash of one
/// without a usable `entry_reference`.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Transaction {
    #[serde(default)]
    entry_reference: Option<String>,
    transaction_amount: Amount,
    credit_debit_indicator: String,
    status: String,
    #[serde(default)]
    booking_date: Option<NaiveDate>,
    #[serde(default)]
    value_date: Option<NaiveDate>,
    #[serde(default)]
    transaction_date: Option<NaiveDate>,
    #[serde(default)]
    creditor: Option<Party>,
    #[serde(default)]
    debtor: Option<Party>,
    #[serde(default)]
    remittance_information: Option<Vec<String>>,
    #[serde(default)]
    note: Option<String>,
    /// The card merchant category code (ISO 18245); only read, never part
    /// of the content hash.
    #[serde(default, skip_serializing)]
    merchant_category_code: Option<String>,
}

#[derive(Debug, Deserialize)]
struct TransactionPage {
    transactions: Vec<Transaction>,
    #[serde(default)]
    continuation_key: Option<String>,
}

impl EnableBankingConnector {
    pub fn new(config: EnableBankingConfig) -> Result<Self, String> {
        let key = jsonwebtoken::EncodingKey::from_rsa_pem(config.private_key_pem.as_bytes())
            .map_err(|err| {
                format!("the Enable Banking key is not an RSA private key (PEM): {err}")
            })?;
        let http = ProviderHttp::new("Enable Banking", config.timeout)
            .map_err(|err| format!("the HTTP client: {err}"))?;
        Ok(Self {
            config,
            http,
            key,
            jwt: Mutex::new(None),
        })
    }

    fn url(&self, path: &str) -> String {
        format!("{}/{path}", self.config.base_url.trim_end_matches('/'))
    }

    /// The application's JWT, signed anew when the last is near its end.
    fn jwt(&self) -> Result<String, ConnectorError> {
        let now = Utc::now().timestamp();
        let mut held = self.jwt.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((token, until)) = held.as_ref()
            && *until > now
        {
            return Ok(token.clone());
        }
        let mut header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::RS256);
        header.kid = Some(self.config.application_id.clone());
        let claims = Claims {
            iss: "enablebanking.com",
            aud: "api.enablebanking.com",
            iat: now,
            exp: now + JWT_LIFETIME,
        };
        let token = jsonwebtoken::encode(&header, &claims, &self.key)
            .map_err(|err| ConnectorError::Misconfigured(format!("signing the JWT: {err}")))?;
        // Replaced five minutes before it runs out.
        *held = Some((token.clone(), now + JWT_LIFETIME - 300));
        Ok(token)
    }

    fn call<T: serde::de::DeserializeOwned>(
        &self,
        request: reqwest::blocking::RequestBuilder,
        what: &str,
        now: DateTime<Utc>,
    ) -> Result<T, ConnectorError> {
        let response = self.http.send(request.bearer_auth(self.jwt()?), what)?;
        self.http
            .json(response, what, |refused| refusal(refused, now))
    }

    fn aspsps(&self, country: &str) -> Result<Vec<Aspsp>, ConnectorError> {
        if country.len() != 2 || !country.bytes().all(|b| b.is_ascii_alphabetic()) {
            return Err(ConnectorError::Misconfigured(format!(
                "`{country}` is not a two-letter country code"
            )));
        }
        let list: AspspList = self.call(
            self.http.client.get(self.url("aspsps")).query(&[
                ("country", country.to_ascii_uppercase().as_str()),
                ("psu_type", "personal"),
                ("service", "AIS"),
            ]),
            "the list of banks",
            Utc::now(),
        )?;
        Ok(list.aspsps)
    }

    /// The bank `FI/Nordea` names.
    fn aspsp(&self, id: &str) -> Result<Aspsp, ConnectorError> {
        let (country, name) = id
            .split_once('/')
            .filter(|(country, name)| country.len() == 2 && !name.is_empty())
            .ok_or_else(|| {
                ConnectorError::Misconfigured(format!(
                    "`{id}` is not an Enable Banking bank: give COUNTRY/NAME, e.g. FI/Nordea"
                ))
            })?;
        self.aspsps(country)?
            .into_iter()
            .find(|a| a.name == name)
            .ok_or_else(|| {
                ConnectorError::Misconfigured(format!(
                    "Enable Banking lists no bank named `{name}` in {country}"
                ))
            })
    }

    /// Every transaction from `from`, page by page with the same query. A
    /// bank that keeps less history says from when it does
    /// (`WRONG_TRANSACTIONS_PERIOD` with `detail.date_from`): the listing
    /// starts again from there, once.
    fn transactions(
        &self,
        uid: &str,
        from: NaiveDate,
        now: DateTime<Utc>,
    ) -> Result<Vec<Transaction>, ConnectorError> {
        let hint = std::cell::Cell::new(None);
        match self.transactions_from(uid, from, now, &hint) {
            Err(_) if hint.get().is_some_and(|later| later > from) => {
                self.transactions_from(uid, hint.get().unwrap_or(from), now, &hint)
            }
            listed => listed,
        }
    }

    fn transactions_from(
        &self,
        uid: &str,
        from: NaiveDate,
        now: DateTime<Utc>,
        hint: &std::cell::Cell<Option<NaiveDate>>,
    ) -> Result<Vec<Transaction>, ConnectorError> {
        let what = "the account transactions";
        let mut all = Vec::new();
        let mut key: Option<String> = None;
        for _ in 0..MAX_PAGES {
            let mut query = vec![("date_from", from.to_string())];
            if let Some(key) = &key {
                query.push(("continuation_key", key.clone()));
            }
            let request = self
                .http
                .client
                .get(self.url(&format!("accounts/{uid}/transactions")))
                .query(&query)
                .bearer_auth(self.jwt()?);
            let response = self.http.send(request, what)?;
            let page: TransactionPage = self.http.json(response, what, |refused| {
                hint.set(ApiError::read(refused.body).earliest_date());
                refusal(refused, now)
            })?;
            all.extend(page.transactions);
            // A page may be empty and still not the last: the key decides.
            match page.continuation_key.filter(|k| !k.is_empty()) {
                Some(next) => key = Some(next),
                None => return Ok(all),
            }
        }
        Err(ConnectorError::Protocol(format!(
            "the bank kept paging the transactions past {MAX_PAGES} pages"
        )))
    }

    fn account(
        &self,
        account: &SessionAccount,
        uid: &str,
        from: NaiveDate,
        now: DateTime<Utc>,
    ) -> Result<SnapshotAccount, ConnectorError> {
        let balances: Balances = self.call(
            self.http
                .client
                .get(self.url(&format!("accounts/{uid}/balances"))),
            "the account balances",
            now,
        )?;
        let items = self.transactions(uid, from, now)?;
        // Cancelled and rejected entries never moved money.
        let items: Vec<Transaction> = items
            .into_iter()
            .filter(|t| !matches!(t.status.as_str(), "CNCL" | "RJCT"))
            .collect();
        let ids = record_ids(&items, |t| t.entry_reference.as_deref(), "eb:");
        let transactions = items
            .iter()
            .zip(ids)
            .map(|(t, id)| transaction(t, id, now))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(SnapshotAccount {
            balance_history: Vec::new(),
            provider_account_id: account.identification_hash.clone(),
            institution: None,
            name: account.display_name(),
            kind: account.kind(),
            currency: account.currency.clone(),
            mask: account.iban().map(crate::mask::last_four),
            balance: pick_balance(
                &balances.balances,
                BALANCE_TYPES,
                |b| amount(&b.balance_amount.amount, "a balance"),
                now,
            )?,
            transactions,
            investment_transactions: Vec::new(),
            liability: None,
            holdings: None,
        })
    }
}

fn amount(text: &str, field: &str) -> Result<Decimal, ConnectorError> {
    parse_decimal(text).map_err(|err| {
        ConnectorError::Protocol(format!("Enable Banking sent `{text}` as {field}: {err}"))
    })
}

/// Booked types (closing, interim, expected, opening, previously closed)
/// for the current balance; available types for the available one.
const BALANCE_TYPES: (&[&str], &[&str]) = (
    &["CLBD", "ITBD", "XPCD", "OPBD", "PRCD"],
    &["ITAV", "CLAV", "FWAV", "OPAV"],
);

impl TypedBalance for Balance {
    fn balance_type(&self) -> &str {
        &self.balance_type
    }
    fn currency(&self) -> &str {
        &self.balance_amount.currency
    }
    fn reference_date(&self) -> Option<NaiveDate> {
        self.reference_date
    }
}

fn transaction(
    t: &Transaction,
    provider_id: String,
    now: DateTime<Utc>,
) -> Result<SnapshotTransaction, ConnectorError> {
    // The direction is the indicator's; the amount's own sign is not
    // promised either way.
    let magnitude = amount(&t.transaction_amount.amount, "a transaction amount")?.abs();
    let amount = match t.credit_debit_indicator.as_str() {
        "DBIT" => -magnitude,
        "CRDT" => magnitude,
        other => {
            return Err(ConnectorError::Protocol(format!(
                "Enable Banking sent `{other}` as a transaction's credit_debit_indicator"
            )));
        }
    };
    // Money out names who received it; money in, who sent it.
    let counterparty = if amount.is_sign_negative() {
        &t.creditor
    } else {
        &t.debtor
    };
    let remittance = t
        .remittance_information
        .as_ref()
        .map(|lines| lines.join(" "))
        .filter(|text| !text.trim().is_empty());
    Ok(SnapshotTransaction {
        provider_id,
        pending_provider_id: None,
        is_pending: matches!(t.status.as_str(), "PDNG" | "HOLD" | "SCHD"),
        // A pending entry often has no booking date yet.
        date: t
            .booking_date
            .or(t.value_date)
            .or(t.transaction_date)
            .unwrap_or_else(|| now.date_naive()),
        amount,
        currency: t.transaction_amount.currency.clone(),
        merchant: counterparty.as_ref().and_then(|p| p.name.clone()),
        description: remittance.or_else(|| t.note.clone()),
        hints: Hints(
            t.merchant_category_code
                .as_deref()
                .and_then(|c| c.trim().parse().ok())
                .map(CategoryHint::Mcc)
                .into_iter()
                .collect(),
        ),
    })
}

impl crate::connector::Connector for EnableBankingConnector {
    fn provider(&self) -> Provider {
        PROVIDER
    }

    fn institutions(&self, country: &str) -> Result<Vec<InstitutionChoice>, ConnectorError> {
        Ok(self
            .aspsps(country)?
            .into_iter()
            .map(|a| InstitutionChoice {
                id: a.choice_id(),
                name: a.name,
                logo_url: a.logo,
            })
            .collect())
    }

    fn daily_sync_limit(&self) -> Option<i32> {
        Some(DAILY_SYNCS)
    }

    fn prepare(&self, request: &ConnectRequest) -> Result<Prepared, ConnectorError> {
        let setting = |name: &str| request.settings.get(name).and_then(Value::as_str);
        let id = setting("institution_id").ok_or_else(|| {
            ConnectorError::Misconfigured(
                "connecting Enable Banking needs a bank (institution_id COUNTRY/NAME)".into(),
            )
        })?;
        let redirect = setting("redirect").ok_or_else(|| {
            ConnectorError::Misconfigured("connecting Enable Banking needs a return URL".into())
        })?;
        let aspsp = self.aspsp(id)?;
        let now = Utc::now();
        let longest = aspsp
            .maximum_consent_validity
            .map_or(LONGEST_CONSENT, chrono::Duration::seconds)
            .min(LONGEST_CONSENT);
        let valid_until = now + (longest - CONSENT_MARGIN).max(chrono::Duration::hours(1));
        let mut state = [0u8; 16];
        rand::rng().fill_bytes(&mut state);
        let state = hex_string(&state);
        #[derive(Deserialize)]
        struct Started {
            url: String,
            authorization_id: String,
        }
        let started: Started = self.call(
            self.http.client.post(self.url("auth")).json(&json!({
                "access": {"valid_until": valid_until.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)},
                "aspsp": {"name": aspsp.name, "country": aspsp.country},
                "state": state,
                "redirect_url": redirect,
                "psu_type": "personal",
            })),
            "the authorization",
            now,
        )?;
        Ok(Prepared {
            institution: aspsp.institution(),
            settings: json!({
                "institution_id": aspsp.choice_id(),
                "institution_name": aspsp.name,
                "institution_logo": aspsp.logo,
                "authorization_id": started.authorization_id,
                "state": state,
                "link": started.url,
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
        let now = Utc::now();
        let session: AuthorizedSession = self.call(
            self.http
                .client
                .post(self.url("sessions"))
                .json(&json!({ "code": code })),
            "the session",
            now,
        )?;
        let credentials = serde_json::to_string(&Session {
            session_id: session.session_id,
            accounts: session.accounts,
        })
        .map_err(|err| ConnectorError::Protocol(format!("keeping the session: {err}")))?;
        let settings = returned_once(settings);
        Ok(Some(Prepared {
            institution: kept_institution(&settings),
            settings,
            credentials: Some(credentials),
            consent: Some(ConsentEnd::At(session.access.valid_until)),
        }))
    }

    fn fetch(&self, context: &FetchContext<'_>) -> Result<ProviderSnapshot, ConnectorError> {
        let session: Session = context
            .credentials
            .map(serde_json::from_str)
            .transpose()
            .map_err(|err| ConnectorError::Misconfigured(format!("the kept session: {err}")))?
            .ok_or_else(|| {
                ConnectorError::ReauthRequired(
                    "the bank was not authorised yet: open the bank's page and consent".into(),
                )
            })?;
        let now = context.now;
        let earliest = now.date_naive() - Days::new(HISTORY_DAYS);
        // An account new to the connection gets a first sync's history.
        let from = |account: &SessionAccount| {
            context
                .last_synced_for(&account.identification_hash)
                .map_or(earliest, |last| last.date_naive() - Days::new(OVERLAP_DAYS))
                .max(earliest)
        };
        let mut accounts = Vec::new();
        let mut notices = Vec::new();
        for account in &session.accounts {
            match &account.uid {
                Some(uid) => accounts.push(self.account(account, uid, from(account), now)?),
                None => notices.push(format!(
                    "the bank lets no one read {} ({})",
                    account.display_name(),
                    account.currency
                )),
            }
        }
        Ok(ProviderSnapshot {
            institution: kept_institution(context.settings),
            accounts,
            notices,
            // Banks give a booked entry a new reference and no link to the
            // pending one: recognise the pair by the default rule.
            pending_match: Some(PendingMatchRule::default()),
            complete: true,
        })
    }
}
