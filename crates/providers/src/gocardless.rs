//! GoCardless Bank Account Data (formerly Nordigen): European banks through
//! PSD2. The operator's secret id and key (configuration) buy API tokens; a
//! user connects by opening a bank link:
//!
//! 1. `prepare`: read the institution, create an end-user agreement
//!    (balances, details, transactions; as much history as the bank keeps, up
//!    to 730 days; 90 days of access) and a requisition, whose `link` the user
//!    opens to authorise their bank.
//! 2. `fetch`: the requisition's status says whether the link was completed
//!    (`LN`); its accounts then give details, balances and transactions
//!    (`booked` and `pending`).
//!
//! GoCardless allows 4 calls a day per account and scope, so a connection
//! syncs at most 4 times a UTC day (`daily_sync_limit`); an expired
//! agreement (`EX`, or 401/403/409 on an account) needs the user to
//! reconnect; 429 carries the time until the quota resets.

use tributary_domain::enrich::hints::{CategoryHint, Hints};
use crate::connector::{
    ConnectRequest, Connector, ConnectorError, ConsentEnd, FetchContext, HttpAnswer,
    InstitutionChoice, Prepared,
};
use crate::provider_http::{ProviderHttp, Refusal};
use crate::description::{
    Connect, Constructor, Description, Environment, Field, Input, Reports, ReturnAddress,
    SettingError, SetupError, Variable, constructor,
};
use crate::psd2::{TypedBalance, hex_string, pick_balance, record_ids};
use crate::connector::PROVIDER_TIMEOUT;
use chrono::{DateTime, NaiveDate, Utc};
use rand::Rng as _;
use reqwest::StatusCode;
use reqwest::blocking::{RequestBuilder, Response};
use serde::Deserialize;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};
use tributary_domain::model::{AccountKind, Provider};
use tributary_domain::money::parse_decimal;
use tributary_domain::snapshot::*;

pub const PROVIDER: Provider = Provider::new("gocardless");

pub const DESCRIPTION: Description = Description {
    provider: PROVIDER,
    name: "GoCardless Bank Account Data",
    summary: "European banks (PSD2): sign in at your bank and come back here.",
    reports: Reports::ACCOUNTS,
    connect: Connect {
        fields: &[Field {
            name: "institution_id",
            flag: Some("institution"),
            label: "Bank id (for example SANDBOXFINANCE_SFIN0000)",
            help: "GoCardless institution id, e.g. SANDBOXFINANCE_SFIN0000.",
            input: Input::Text { autocomplete: "off" },
            required: true,
            default: None,
            remembered_as: Some("institution_id"),
        }],
        note: None,
        hands_off: true,
        picks_institution: true,
        return_address: ReturnAddress::Always {
            default: Some("https://gocardless.com"),
        },
        finish_on_return: false,
        command_help: "Connect a bank through GoCardless Bank Account Data: prints the bank link the user must open; once they have, run `tributary sync --connection ID` (needs TRIBUTARY_GOCARDLESS_SECRET_ID and _KEY).",
        request: crate::psd2::bank_request,
    },
    environment: &[
        Variable {
            names: "TRIBUTARY_GOCARDLESS_SECRET_ID, TRIBUTARY_GOCARDLESS_SECRET_KEY",
            help: "enable GoCardless Bank Account Data",
        },
        Variable {
            names: "TRIBUTARY_GOCARDLESS_URL",
            help: "its API root [default: https://bankaccountdata.gocardless.com/api/v2]",
        },
    ],
    configure,
};

/// Offered with the operator's secret id and key.
fn configure(env: &Environment<'_>) -> Result<Option<Constructor>, SettingError> {
    let Some((secret_id, secret_key)) = env.both_or_neither(
        "TRIBUTARY_GOCARDLESS_SECRET_ID",
        "TRIBUTARY_GOCARDLESS_SECRET_KEY",
    )?
    else {
        return Ok(None);
    };
    let config = GoCardlessConfig {
        base_url: env
            .get("TRIBUTARY_GOCARDLESS_URL")
            .unwrap_or_else(|| DEFAULT_BASE_URL.to_owned()),
        secret_id,
        secret_key,
        timeout: PROVIDER_TIMEOUT,
    };
    Ok(constructor(move || {
        GoCardlessConnector::new(config.clone()).map_err(|err| SetupError::new("GoCardless", err))
    }))
}

pub const DEFAULT_BASE_URL: &str = "https://bankaccountdata.gocardless.com/api/v2";
/// GoCardless: 4 calls per day per account and scope.
pub const DAILY_SYNCS: i32 = 4;
const ACCESS_DAYS: u32 = 90;
/// How long a country's institution list is reused.
const INSTITUTIONS_TTL: Duration = Duration::from_secs(3600);
const OVERLAP_DAYS: i64 = 14;

#[derive(Clone)]
pub struct GoCardlessConfig {
    pub base_url: String,
    pub secret_id: String,
    pub secret_key: String,
    pub timeout: Duration,
}

impl std::fmt::Debug for GoCardlessConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GoCardlessConfig")
            .field("base_url", &self.base_url)
            .finish_non_exhaustive()
    }
}

struct Token {
    access: String,
    access_until: Instant,
    refresh: Option<(String, Instant)>,
}

pub struct GoCardlessConnector {
    config: GoCardlessConfig,
    http: ProviderHttp,
    token: Mutex<Option<Token>>,
    /// Institution lists by country, kept an hour: people search them as
    /// they type, and banks rarely join or leave.
    institutions: Mutex<HashMap<String, (Instant, Vec<Institution>)>>,
}

impl std::fmt::Debug for GoCardlessConnector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GoCardlessConnector")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

/// GoCardless error bodies carry `summary` and `detail`.
fn error_text(body: &str) -> String {
    serde_json::from_str::<Value>(body)
        .ok()
        .map(|v| {
            let pick = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_owned);
            match (pick("summary"), pick("detail")) {
                (Some(s), Some(d)) => format!("{s}: {d}"),
                (Some(s), None) | (None, Some(s)) => s,
                (None, None) => String::new(),
            }
        })
        .unwrap_or_default()
}

/// GoCardless's refusal as the error it means: 401, 403 and 409 on an
/// account mean its access has ended; 429 says when the quota resets.
fn refusal(refused: &Refusal<'_>) -> ConnectorError {
    let Refusal { what, status, .. } = *refused;
    let retry = refused.seconds_header(&[
        "http_x_ratelimit_account_success_reset",
        "x-ratelimit-account-success-reset",
        "x-ratelimit-reset",
        "retry-after",
    ]);
    let detail = error_text(refused.body);
    let answer = HttpAnswer {
        provider: "GoCardless",
        what,
        status,
        detail: &detail,
        retry_after: retry,
    };
    let needs_user = |status| {
        matches!(
            status,
            StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN | StatusCode::CONFLICT
        )
        .then(|| {
            format!(
                "GoCardless refused {what} ({status}): {detail}; the bank access has expired or was revoked, reconnect"
            )
        })
    };
    answer.error(needs_user)
}

impl GoCardlessConnector {
    pub fn new(config: GoCardlessConfig) -> Result<Self, reqwest::Error> {
        let http = ProviderHttp::new("GoCardless", config.timeout)?;
        Ok(Self {
            config,
            http,
            token: Mutex::new(None),
            institutions: Mutex::new(HashMap::new()),
        })
    }

    fn url(&self, path: &str) -> String {
        format!(
            "{}/{}",
            self.config.base_url.trim_end_matches('/'),
            path.trim_start_matches('/')
        )
    }

    fn send(&self, request: RequestBuilder, what: &str) -> Result<Response, ConnectorError> {
        self.http.send(request, what)
    }

    /// A JSON body from a successful answer; every other answer as the
    /// error it means.
    fn json<T: serde::de::DeserializeOwned>(
        &self,
        response: Response,
        what: &str,
    ) -> Result<T, ConnectorError> {
        self.http.json(response, what, refusal)
    }

    /// A valid access token: cached, refreshed, or new.
    fn access_token(&self) -> Result<String, ConnectorError> {
        let mut guard = self.token.lock().unwrap_or_else(|p| p.into_inner());
        let now = Instant::now();
        if let Some(token) = guard.as_ref().filter(|t| t.access_until > now) {
            return Ok(token.access.clone());
        }
        #[derive(Deserialize)]
        struct Issued {
            access: String,
            access_expires: u64,
            refresh: Option<String>,
            refresh_expires: Option<u64>,
        }
        let refresh = guard
            .as_ref()
            .and_then(|t| t.refresh.clone())
            .filter(|(_, until)| *until > now);
        let issued: Issued = match &refresh {
            Some((refresh, _)) => {
                let response = self.send(
                    self.http
                        .client
                        .post(self.url("token/refresh/"))
                        .json(&json!({ "refresh": refresh })),
                    "a token refresh",
                )?;
                self.json(response, "a token refresh")?
            }
            None => {
                let body = json!({ "secret_id": self.config.secret_id, "secret_key": self.config.secret_key });
                let response = self.send(
                    self.http.client.post(self.url("token/new/")).json(&body),
                    "a new token",
                )?;
                if response.status() == StatusCode::UNAUTHORIZED {
                    return Err(ConnectorError::Misconfigured(
                        "GoCardless rejected TRIBUTARY_GOCARDLESS_SECRET_ID / TRIBUTARY_GOCARDLESS_SECRET_KEY".into(),
                    ));
                }
                self.json(response, "a new token")?
            }
        };
        // Renew a minute early rather than have a call refused.
        let early = |secs: u64| now + Duration::from_secs(secs.saturating_sub(60));
        let refresh = match (issued.refresh, issued.refresh_expires) {
            (Some(token), Some(secs)) => Some((token, early(secs))),
            _ => refresh,
        };
        let token = Token {
            access: issued.access.clone(),
            access_until: early(issued.access_expires),
            refresh,
        };
        *guard = Some(token);
        Ok(issued.access)
    }

    fn get<T: serde::de::DeserializeOwned>(
        &self,
        path: &str,
        what: &str,
    ) -> Result<T, ConnectorError> {
        let token = self.access_token()?;
        let response = self.send(
            self.http.client.get(self.url(path)).bearer_auth(token),
            what,
        )?;
        self.json(response, what)
    }

    fn post<T: serde::de::DeserializeOwned>(
        &self,
        path: &str,
        body: &Value,
        what: &str,
    ) -> Result<T, ConnectorError> {
        let token = self.access_token()?;
        let response = self.send(
            self.http
                .client
                .post(self.url(path))
                .bearer_auth(token)
                .json(body),
            what,
        )?;
        self.json(response, what)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Institution {
    pub id: String,
    pub name: String,
    #[serde(default)]
    pub bic: Option<String>,
    #[serde(default)]
    pub logo: Option<String>,
    /// Days of history the bank keeps, as GoCardless spells it (text).
    #[serde(default)]
    pub transaction_total_days: Option<String>,
}

impl GoCardlessConnector {
    /// The banks GoCardless reaches in a country (ISO 3166 two letters).
    pub fn institutions(&self, country: &str) -> Result<Vec<Institution>, ConnectorError> {
        if country.len() != 2 || !country.bytes().all(|b| b.is_ascii_alphabetic()) {
            return Err(ConnectorError::Misconfigured(format!(
                "`{country}` is not a two-letter country code"
            )));
        }
        let country = country.to_ascii_uppercase();
        let cached = self.institutions.lock().ok().and_then(|cache| {
            cache
                .get(&country)
                .filter(|(at, _)| at.elapsed() < INSTITUTIONS_TTL)
                .map(|(_, list)| list.clone())
        });
        if let Some(list) = cached {
            return Ok(list);
        }
        let list: Vec<Institution> = self.get(
            &format!("institutions/?country={country}"),
            "the institution list",
        )?;
        if let Ok(mut cache) = self.institutions.lock() {
            cache.insert(country, (Instant::now(), list.clone()));
        }
        Ok(list)
    }
}

#[derive(Debug, Deserialize)]
struct Created {
    id: String,
}

#[derive(Debug, Deserialize)]
struct Requisition {
    id: String,
    status: String,
    #[serde(default)]
    accounts: Vec<String>,
    #[serde(default)]
    link: Option<String>,
}

impl Connector for GoCardlessConnector {
    fn provider(&self) -> Provider {
        PROVIDER
    }

    fn institutions(&self, country: &str) -> Result<Vec<InstitutionChoice>, ConnectorError> {
        Ok(GoCardlessConnector::institutions(self, country)?
            .into_iter()
            .map(|i| InstitutionChoice {
                id: i.id,
                name: i.name,
                logo_url: i.logo,
            })
            .collect())
    }

    fn daily_sync_limit(&self) -> Option<i32> {
        Some(DAILY_SYNCS)
    }

    fn prepare(&self, request: &ConnectRequest) -> Result<Prepared, ConnectorError> {
        let setting = |name: &str| {
            request
                .settings
                .get(name)
                .and_then(Value::as_str)
                .map(str::to_owned)
        };
        let institution_id = setting("institution_id").ok_or_else(|| {
            ConnectorError::Misconfigured("connecting GoCardless needs an institution id".into())
        })?;
        let redirect = setting("redirect").unwrap_or_else(|| "https://gocardless.com".into());
        let institution: Institution = self.get(
            &format!("institutions/{institution_id}/"),
            "the institution",
        )?;
        let history_days = institution
            .transaction_total_days
            .as_deref()
            .and_then(|d| d.parse::<u32>().ok())
            .unwrap_or(90)
            .clamp(1, 730);
        let agreement: Created = self.post(
            "agreements/enduser/",
            &json!({
                "institution_id": institution.id,
                "max_historical_days": history_days,
                "access_valid_for_days": ACCESS_DAYS,
                "access_scope": ["balances", "details", "transactions"],
            }),
            "the end-user agreement",
        )?;
        let mut reference = [0u8; 12];
        rand::rng().fill_bytes(&mut reference);
        let requisition: Requisition = self.post(
            "requisitions/",
            &json!({
                "redirect": redirect,
                "institution_id": institution.id,
                "agreement": agreement.id,
                "reference": hex_string(&reference),
                "user_language": "EN",
            }),
            "the requisition",
        )?;
        Ok(Prepared {
            institution: SnapshotInstitution {
                provider_institution_id: institution.id.clone(),
                name: institution.name.clone(),
                logo_url: institution.logo.clone(),
            },
            settings: json!({
                "institution_id": institution.id,
                "institution_name": institution.name,
                "institution_logo": institution.logo,
                "agreement_id": agreement.id,
                "requisition_id": requisition.id,
                "link": requisition.link,
                "history_days": history_days,
            }),
            credentials: None,
            consent: Some(ConsentEnd::After(chrono::Duration::days(i64::from(
                ACCESS_DAYS,
            )))),
        })
    }

    fn fetch(&self, context: &FetchContext<'_>) -> Result<ProviderSnapshot, ConnectorError> {
        let settings = context.settings;
        let requisition_id = settings
            .get("requisition_id")
            .and_then(Value::as_str)
            .ok_or_else(|| {
                ConnectorError::Misconfigured("the connection has no GoCardless requisition".into())
            })?;
        let requisition: Requisition = self.get(
            &format!("requisitions/{requisition_id}/"),
            "the requisition",
        )?;
        match requisition.status.as_str() {
            "LN" => {}
            "EX" => {
                return Err(ConnectorError::ReauthRequired(
                    "the bank access (end-user agreement) expired; reconnect".into(),
                ));
            }
            "RJ" | "SU" => {
                return Err(ConnectorError::ReauthRequired(format!(
                    "the bank refused or suspended the link (status {}); reconnect",
                    requisition.status
                )));
            }
            _ => {
                let link = requisition.link.as_deref().unwrap_or("the bank link");
                return Err(ConnectorError::ReauthRequired(format!(
                    "the bank link has not been completed yet: open {link}, then sync again"
                )));
            }
        }
        let history_days = settings
            .get("history_days")
            .and_then(Value::as_i64)
            .unwrap_or(90);
        let mut accounts = Vec::with_capacity(requisition.accounts.len());
        for account_id in &requisition.accounts {
            // An account new to the connection gets a first sync's history.
            let from = match context.last_synced_for(account_id) {
                Some(last) => last - chrono::Duration::days(OVERLAP_DAYS),
                None => context.now - chrono::Duration::days(history_days),
            }
            .date_naive();
            accounts.push(self.account(account_id, from, context.now)?);
        }
        // The institution as `prepare` found it, so syncs keep its name.
        let text = |name: &str| {
            settings
                .get(name)
                .and_then(Value::as_str)
                .map(str::to_owned)
        };
        let institution_id = text("institution_id").unwrap_or_else(|| "gocardless".into());
        Ok(ProviderSnapshot {
            institution: SnapshotInstitution {
                name: text("institution_name").unwrap_or_else(|| institution_id.clone()),
                logo_url: text("institution_logo"),
                provider_institution_id: institution_id,
            },
            accounts,
            notices: Vec::new(),
            // Booked records carry no link to the pending ones they replace.
            pending_match: Some(tributary_domain::reconcile::PendingMatchRule::default()),
            complete: true,
        })
    }
}

#[derive(Debug, Deserialize)]
struct DetailsEnvelope {
    account: Details,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Details {
    #[serde(default)]
    currency: Option<String>,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    product: Option<String>,
    #[serde(default)]
    owner_name: Option<String>,
    #[serde(default)]
    iban: Option<String>,
    #[serde(default)]
    bban: Option<String>,
    #[serde(default)]
    cash_account_type: Option<String>,
}

#[derive(Debug, Deserialize)]
struct Balances {
    balances: Vec<BalanceItem>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct BalanceItem {
    balance_amount: Amount,
    balance_type: String,
    #[serde(default)]
    reference_date: Option<NaiveDate>,
}

#[derive(Debug, Deserialize)]
struct Amount {
    amount: String,
    currency: String,
}

#[derive(Debug, Deserialize)]
struct TransactionsEnvelope {
    transactions: Transactions,
}

#[derive(Debug, Deserialize)]
struct Transactions {
    #[serde(default)]
    booked: Vec<TransactionItem>,
    #[serde(default)]
    pending: Vec<TransactionItem>,
}

#[derive(Debug, Deserialize, serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct TransactionItem {
    #[serde(default)]
    transaction_id: Option<String>,
    #[serde(default)]
    internal_transaction_id: Option<String>,
    transaction_amount: AmountItem,
    #[serde(default)]
    booking_date: Option<NaiveDate>,
    #[serde(default)]
    value_date: Option<NaiveDate>,
    #[serde(default)]
    creditor_name: Option<String>,
    #[serde(default)]
    debtor_name: Option<String>,
    #[serde(default)]
    remittance_information_unstructured: Option<String>,
    #[serde(default)]
    remittance_information_unstructured_array: Option<Vec<String>>,
    #[serde(default)]
    additional_information: Option<String>,
    /// Codes of the transaction's kind, only read (never part of the
    /// content that identifies a transaction without an id).
    #[serde(default, skip_serializing)]
    merchant_category_code: Option<String>,
    #[serde(default, skip_serializing)]
    bank_transaction_code: Option<String>,
    #[serde(default, skip_serializing)]
    purpose_code: Option<String>,
}

impl TransactionItem {
    /// What its codes say of its kind: the card merchant category code,
    /// the ISO purpose code, and the ISO bank transaction code (written
    /// `PMNT-RCDT-ESCT`).
    fn hints(&self) -> Hints {
        let mut hints = Hints::default();
        if let Some(code) = self
            .merchant_category_code
            .as_deref()
            .and_then(|c| c.trim().parse().ok())
        {
            hints.push(CategoryHint::Mcc(code));
        }
        if let Some(code) = &self.purpose_code {
            hints.push(CategoryHint::Purpose(code.trim().to_owned()));
        }
        if let Some(code) = &self.bank_transaction_code
            && code.matches('-').count() == 2
        {
            hints.push(CategoryHint::BankTransactionCode(code.trim().replace('-', "/")));
        }
        hints
    }
}

#[derive(Debug, Deserialize, serde::Serialize)]
struct AmountItem {
    amount: String,
    currency: String,
}

fn is_currency_code(text: &str) -> bool {
    text.len() == 3 && text.bytes().all(|b| b.is_ascii_uppercase())
}

/// Booked types first for the current balance, available types for the
/// available one.
const BALANCE_TYPES: (&[&str], &[&str]) = (
    &[
        "closingBooked",
        "interimBooked",
        "expected",
        "openingBooked",
    ],
    &[
        "interimAvailable",
        "closingAvailable",
        "forwardAvailable",
        "expected",
    ],
);

impl TypedBalance for BalanceItem {
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

/// Current and available balances from GoCardless's typed list.
fn pick_balances(
    items: &[BalanceItem],
    account: &str,
    now: DateTime<Utc>,
) -> Result<Option<SnapshotBalance>, ConnectorError> {
    let parse = |b: &BalanceItem| {
        parse_decimal(&b.balance_amount.amount).map_err(|err| {
            ConnectorError::Protocol(format!(
                "GoCardless account {account}: balance `{}`: {err}",
                b.balance_type
            ))
        })
    };
    pick_balance(items, BALANCE_TYPES, parse, now)
}

impl GoCardlessConnector {
    fn account(
        &self,
        id: &str,
        from: NaiveDate,
        now: DateTime<Utc>,
    ) -> Result<SnapshotAccount, ConnectorError> {
        let details: DetailsEnvelope =
            self.get(&format!("accounts/{id}/details/"), "the account details")?;
        let balances: Balances =
            self.get(&format!("accounts/{id}/balances/"), "the account balances")?;
        let transactions: TransactionsEnvelope = self.get(
            &format!("accounts/{id}/transactions/?date_from={from}"),
            "the account transactions",
        )?;
        let details = details.account;
        let balance = pick_balances(&balances.balances, id, now)?;
        let currency = details
            .currency
            .clone()
            .filter(|c| is_currency_code(c))
            .or_else(|| balance.as_ref().map(|b| b.currency.clone()))
            .unwrap_or_else(|| "EUR".into());
        let number = details
            .iban
            .as_deref()
            .or(details.bban.as_deref())
            .unwrap_or_default();
        let mask = (number.len() >= 4).then(|| number[number.len() - 4..].to_owned());
        let kind = match (
            details.cash_account_type.as_deref(),
            details.product.as_deref().map(str::to_lowercase),
        ) {
            (_, Some(p)) if p.contains("credit") => AccountKind::CreditCard,
            (Some("CARD"), _) => AccountKind::CreditCard,
            (Some("SVGS"), _) => AccountKind::Savings,
            (Some("LOAN"), _) => AccountKind::Loan,
            _ => AccountKind::Checking,
        };
        let name = details
            .name
            .clone()
            .or(details.product.clone())
            .or(details.owner_name.clone())
            .unwrap_or_else(|| "Account".into());
        let mut records = Vec::new();
        for (items, pending, prefix) in [
            (&transactions.transactions.booked, false, ""),
            (&transactions.transactions.pending, true, "p:"),
        ] {
            for (item, provider_id) in items.iter().zip(record_ids(
                items,
                |t| {
                    t.transaction_id
                        .as_deref()
                        .or(t.internal_transaction_id.as_deref())
                },
                prefix,
            )) {
                let amount = parse_decimal(&item.transaction_amount.amount).map_err(|err| {
                    ConnectorError::Protocol(format!(
                        "GoCardless account {id}: transaction amount: {err}"
                    ))
                })?;
                let Some(date) = item.booking_date.or(item.value_date) else {
                    return Err(ConnectorError::Protocol(format!(
                        "GoCardless account {id}: a transaction has no date"
                    )));
                };
                let counterparty = if amount.is_sign_negative() {
                    &item.creditor_name
                } else {
                    &item.debtor_name
                };
                let description = item
                    .remittance_information_unstructured
                    .clone()
                    .or_else(|| {
                        item.remittance_information_unstructured_array
                            .as_ref()
                            .map(|lines| lines.join(" "))
                    })
                    .or(item.additional_information.clone());
                records.push(SnapshotTransaction {
                    provider_id,
                    pending_provider_id: None,
                    is_pending: pending,
                    date,
                    amount,
                    currency: Some(item.transaction_amount.currency.clone())
                        .filter(|c| is_currency_code(c))
                        .unwrap_or_else(|| currency.clone()),
                    merchant: counterparty
                        .clone()
                        .or_else(|| item.creditor_name.clone())
                        .or_else(|| item.debtor_name.clone()),
                    description,
                    hints: item.hints(),
                });
            }
        }
        Ok(SnapshotAccount {
            balance_history: Vec::new(),
            institution: None,
            provider_account_id: id.to_owned(),
            name,
            kind,
            currency,
            mask,
            balance,
            transactions: records,
            investment_transactions: Vec::new(),
            liability: None,
            holdings: None,
        })
    }
}
