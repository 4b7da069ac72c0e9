//! SnapTrade (snaptrade.com, its OpenAPI document of August 2026 and its
//! request-signature guide, docs/providers.md): brokerage accounts, their
//! holdings and their activities. The operator's client id and consumer
//! key (configuration) sign every request: `clientId` and `timestamp` in
//! the query, and a `Signature` header, the base64 HMAC-SHA256 (keyed with
//! the consumer key) of `{"content":…,"path":…,"query":…}` with its keys
//! sorted at every level and no spaces, over the path and the raw query
//! exactly as sent.
//!
//! 1. `prepare`: register a SnapTrade user for the connection (an id that
//!    says nothing about the person; its secret is the connection's sealed
//!    credentials) and open the Connection Portal (`/snapTrade/login`),
//!    whose `redirectURI` is the connection's link.
//! 2. The user picks their brokerage and signs in on the portal, which
//!    sends them back; `complete` reads the brokerage connections the user
//!    made (`/authorizations`).
//! 3. `fetch`: the accounts, each at its own brokerage (one SnapTrade user
//!    may connect several), with its balance, its positions
//!    (`/positions/all`: decimal strings) as holdings, and its activities
//!    (page by page) as transactions; buys, sells, income, fees, transfers
//!    and splits among them also as investment activity.
//!
//! A disabled brokerage connection still answers with its last cached data:
//! `disabled` on the authorization is the sign that the user must reconnect
//! (the portal with `reconnect`, which keeps the connection's accounts).

use crate::connector::{
    AuthorizationReturn, ConnectRequest, ConnectorError, FetchContext, HttpAnswer, Prepared,
};
use crate::provider_http::{ProviderHttp, Refusal};
use crate::description::{
    Connect, Constructor, Description, Environment, Reports, ReturnAddress,
    SettingError, SetupError, Variable, constructor,
};
use crate::connector::PROVIDER_TIMEOUT;
use crate::psd2::hex_string;
use base64::Engine as _;
use chrono::{DateTime, Days, NaiveDate, Utc};
use hmac::{Hmac, KeyInit, Mac};
use rand::Rng as _;
use rust_decimal::serde::arbitrary_precision_option;
use serde::Deserialize;
use serde_json::{Value, json};
use sha2::Sha256;
use std::collections::{BTreeMap, HashMap};
use std::time::Duration;
use tributary_domain::model::{AccountKind, InvestmentKind, Provider};
use tributary_domain::money::{Decimal, parse_decimal};
use tributary_domain::snapshot::*;

pub const PROVIDER: Provider = Provider::new("snaptrade");

pub const DESCRIPTION: Description = Description {
    provider: PROVIDER,
    name: "SnapTrade",
    summary: "Brokerage accounts and their holdings: connect your brokerage in SnapTrade's portal and come back here.",
    reports: Reports::INVESTMENTS,
    connect: Connect {
        fields: &[],
        note: Some("You choose your brokerage and sign in in SnapTrade's portal; SnapTrade brings you back here."),
        hands_off: true,
        picks_institution: false,
        return_address: ReturnAddress::Always { default: None },
        finish_on_return: true,
        command_help: "Connect brokerages through SnapTrade's Connection Portal: prints the portal's address the user must open; once SnapTrade sends them to --redirect, `tributary connect finish` completes it (needs TRIBUTARY_SNAPTRADE_CLIENT_ID and _CONSUMER_KEY).",
        request: crate::description::return_only,
    },
    environment: &[
        Variable {
            names: "TRIBUTARY_SNAPTRADE_CLIENT_ID, TRIBUTARY_SNAPTRADE_CONSUMER_KEY",
            help: "enable SnapTrade (brokerages) with the operator's keys",
        },
        Variable {
            names: "TRIBUTARY_SNAPTRADE_URL",
            help: "its API root [default: https://api.snaptrade.com]",
        },
    ],
    configure,
};

/// Offered with the operator's client id and consumer key.
fn configure(env: &Environment<'_>) -> Result<Option<Constructor>, SettingError> {
    let Some((client_id, consumer_key)) = env.both_or_neither(
        "TRIBUTARY_SNAPTRADE_CLIENT_ID",
        "TRIBUTARY_SNAPTRADE_CONSUMER_KEY",
    )?
    else {
        return Ok(None);
    };
    let config = SnapTradeConfig {
        base_url: env
            .get("TRIBUTARY_SNAPTRADE_URL")
            .unwrap_or_else(|| DEFAULT_BASE_URL.to_owned()),
        client_id,
        consumer_key,
        timeout: PROVIDER_TIMEOUT,
    };
    Ok(constructor(move || {
        SnapTradeConnector::new(config.clone()).map_err(|err| SetupError::new("SnapTrade", err))
    }))
}

pub const DEFAULT_BASE_URL: &str = "https://api.snaptrade.com";
/// SnapTrade asks for holdings at most 4 times a day per user in the
/// background.
pub const DAILY_SYNCS: i32 = 4;
/// Activities a page holds (SnapTrade's most).
const PAGE: usize = 1000;
/// A listing ends here even if SnapTrade keeps paging.
const MAX_PAGES: usize = 1000;
/// Activities asked for on a first sync; later from 14 days before the
/// last one.
const HISTORY_DAYS: u64 = 365 * 5;
const OVERLAP_DAYS: u64 = 14;

#[derive(Clone)]
pub struct SnapTradeConfig {
    pub base_url: String,
    pub client_id: String,
    pub consumer_key: String,
    pub timeout: Duration,
}

impl std::fmt::Debug for SnapTradeConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SnapTradeConfig")
            .field("base_url", &self.base_url)
            .field("client_id", &self.client_id)
            .finish_non_exhaustive()
    }
}

pub struct SnapTradeConnector {
    config: SnapTradeConfig,
    http: ProviderHttp,
}

impl std::fmt::Debug for SnapTradeConnector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SnapTradeConnector")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

/// `value` with its object keys sorted at every level, as the signature
/// asks (whatever order a map keeps them in).
fn canonical(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let sorted: BTreeMap<&String, Value> =
                map.iter().map(|(k, v)| (k, canonical(v))).collect();
            let mut out = serde_json::Map::new();
            for (k, v) in sorted {
                out.insert(k.clone(), v);
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(canonical).collect()),
        other => other.clone(),
    }
}

/// The text SnapTrade's signature covers: `content` (the body, `null` for
/// none or `{}`), `path` and `query` as sent, keys sorted, no spaces.
pub fn signed_text(content: Option<&Value>, path: &str, query: &str) -> String {
    let content = match content {
        Some(Value::Object(map)) if map.is_empty() => Value::Null,
        Some(body) => canonical(body),
        None => Value::Null,
    };
    // Written out in order: "content" < "path" < "query".
    format!(
        "{{\"content\":{},\"path\":{},\"query\":{}}}",
        content,
        Value::from(path),
        Value::from(query)
    )
}

/// The `Signature` header for a request.
pub fn signature(consumer_key: &str, content: Option<&Value>, path: &str, query: &str) -> String {
    let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(consumer_key.as_bytes()) else {
        unreachable!("HMAC takes a key of any length")
    };
    mac.update(signed_text(content, path, query).as_bytes());
    base64::engine::general_purpose::STANDARD.encode(mac.finalize().into_bytes())
}

/// SnapTrade's error body, in either of its shapes (`detail`/`code`, or
/// `default_detail`/`default_code`; codes as text or numbers).
fn error_text(body: &str) -> (String, String) {
    let value: Value = serde_json::from_str(body).unwrap_or(Value::Null);
    let text = |key: &str| match &value[key] {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    };
    (
        text("detail")
            .or(text("default_detail"))
            .unwrap_or_default(),
        text("code").or(text("default_code")).unwrap_or_default(),
    )
}

fn refusal(refused: &Refusal<'_>) -> ConnectorError {
    let (detail, code) = error_text(refused.body);
    let what = refused.what;
    let status = refused.status.as_u16();
    let retry_after = refused.seconds_header(&[
        "x-ratelimit-account-reset",
        "x-ratelimit-reset",
        "retry-after",
    ]);
    match (status, code.as_str()) {
        // A signature or key SnapTrade does not accept: the operator's.
        (401, "1076") => ConnectorError::Misconfigured(format!(
            "SnapTrade refused the request's signature ({detail}): check TRIBUTARY_SNAPTRADE_CLIENT_ID and TRIBUTARY_SNAPTRADE_CONSUMER_KEY"
        )),
        // The connection's user is gone, or its brokerage connection is.
        (401, _) | (402, _) => ConnectorError::ReauthRequired(format!(
            "SnapTrade needs the user to connect the brokerage again ({detail})"
        )),
        // Holdings still being gathered; a sync lock; a brokerage down.
        (425, _) | (503, _) => ConnectorError::Unavailable {
            reason: format!("SnapTrade could not answer {what} now ({detail})"),
            retry_after,
        },
        _ => {
            let answer = HttpAnswer {
                provider: "SnapTrade",
                what,
                status: refused.status,
                detail: &detail,
                retry_after,
            };
            answer.error(|_| None)
        }
    }
}

/// The SnapTrade user a connection speaks for, sealed with it.
#[derive(Debug, serde::Serialize, Deserialize)]
struct User {
    #[serde(rename = "userId")]
    user_id: String,
    #[serde(rename = "userSecret")]
    user_secret: String,
}

#[derive(Debug, Clone, Deserialize)]
struct Brokerage {
    #[serde(default)]
    slug: Option<String>,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    display_name: Option<String>,
    #[serde(default)]
    aws_s3_square_logo_url: Option<String>,
    #[serde(default)]
    aws_s3_logo_url: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
struct Authorization {
    id: String,
    brokerage: Brokerage,
    #[serde(default)]
    disabled: bool,
}

impl Authorization {
    fn institution(&self) -> SnapshotInstitution {
        let b = &self.brokerage;
        SnapshotInstitution {
            provider_institution_id: b.slug.clone().unwrap_or_else(|| self.id.clone()),
            name: b
                .display_name
                .clone()
                .or(b.name.clone())
                .unwrap_or_else(|| "Brokerage".into()),
            logo_url: b
                .aws_s3_square_logo_url
                .clone()
                .or(b.aws_s3_logo_url.clone()),
        }
    }
}

#[derive(Debug, Deserialize)]
struct Money {
    #[serde(default, with = "arbitrary_precision_option")]
    amount: Option<Decimal>,
    #[serde(default)]
    currency: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
struct AccountBalance {
    #[serde(default)]
    total: Option<Money>,
}

#[derive(Debug, Deserialize)]
struct Account {
    id: String,
    brokerage_authorization: String,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    number: Option<String>,
    #[serde(default)]
    institution_name: Option<String>,
    #[serde(default)]
    balance: AccountBalance,
    #[serde(default)]
    account_category: Option<String>,
}

#[derive(Debug, Deserialize)]
struct CurrencyRef {
    code: String,
}

#[derive(Debug, Deserialize)]
struct CashBalance {
    #[serde(default)]
    currency: Option<CurrencyRef>,
    #[serde(default, with = "arbitrary_precision_option")]
    cash: Option<Decimal>,
}

#[derive(Debug, Deserialize)]
struct Positions {
    results: Vec<Value>,
}

#[derive(Debug, Deserialize)]
struct ActivityPage {
    data: Vec<Value>,
    pagination: Pagination,
}

#[derive(Debug, Deserialize)]
struct Pagination {
    total: usize,
}

#[derive(Debug, Deserialize)]
struct Activity {
    id: String,
    #[serde(default)]
    symbol: Option<Value>,
    #[serde(default, with = "arbitrary_precision_option")]
    amount: Option<Decimal>,
    #[serde(default)]
    currency: Option<CurrencyRef>,
    #[serde(rename = "type", default)]
    kind: Option<String>,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    trade_date: Option<DateTime<Utc>>,
    #[serde(default)]
    settlement_date: Option<DateTime<Utc>>,
}

impl SnapTradeConnector {
    pub fn new(config: SnapTradeConfig) -> Result<Self, reqwest::Error> {
        let http = ProviderHttp::new("SnapTrade", config.timeout)?;
        Ok(Self { config, http })
    }

    /// One signed call: `query` after `clientId` and `timestamp`, `body`
    /// as the JSON content.
    fn call<T: serde::de::DeserializeOwned>(
        &self,
        method: reqwest::Method,
        path: &str,
        query: &[(&str, &str)],
        body: Option<&Value>,
        what: &str,
    ) -> Result<T, ConnectorError> {
        let base = url::Url::parse(&self.config.base_url).map_err(|err| {
            ConnectorError::Misconfigured(format!("TRIBUTARY_SNAPTRADE_URL: {err}"))
        })?;
        let path = format!("{}{path}", base.path().trim_end_matches('/'));
        let timestamp = Utc::now().timestamp().to_string();
        let mut pairs = url::form_urlencoded::Serializer::new(String::new());
        pairs.append_pair("clientId", &self.config.client_id);
        pairs.append_pair("timestamp", &timestamp);
        for (name, value) in query {
            pairs.append_pair(name, value);
        }
        let query = pairs.finish();
        let mut url = base.clone();
        url.set_path(&path);
        url.set_query(Some(&query));
        let signed = signature(&self.config.consumer_key, body, &path, &query);
        let mut request = self
            .http
            .client
            .request(method, url)
            .header("Signature", signed);
        if let Some(body) = body {
            request = request.json(body);
        }
        let response = self.http.send(request, what)?;
        self.http.json(response, what, refusal)
    }

    fn as_user<T: serde::de::DeserializeOwned>(
        &self,
        user: &User,
        path: &str,
        query: &[(&str, &str)],
        what: &str,
    ) -> Result<T, ConnectorError> {
        let mut all = vec![
            ("userId", user.user_id.as_str()),
            ("userSecret", user.user_secret.as_str()),
        ];
        all.extend_from_slice(query);
        self.call(reqwest::Method::GET, path, &all, None, what)
    }

    /// The Connection Portal for `user`; `reconnect`: the brokerage
    /// connection to repair (its accounts kept).
    fn portal(
        &self,
        user: &User,
        redirect: &str,
        reconnect: Option<&str>,
    ) -> Result<String, ConnectorError> {
        let mut body = json!({
            "immediateRedirect": true,
            "customRedirect": redirect,
            "connectionType": "read",
        });
        if let Some(id) = reconnect {
            body["reconnect"] = id.into();
        }
        #[derive(Deserialize)]
        struct Login {
            #[serde(rename = "redirectURI")]
            redirect_uri: String,
        }
        let login: Login = self.call(
            reqwest::Method::POST,
            "/snapTrade/login",
            &[
                ("userId", user.user_id.as_str()),
                ("userSecret", user.user_secret.as_str()),
            ],
            Some(&body),
            "the Connection Portal",
        )?;
        Ok(login.redirect_uri)
    }

    fn prepared(user: &User, link: String) -> Result<Prepared, ConnectorError> {
        Ok(Prepared {
            // The user picks their brokerage in the portal: named once
            // they have.
            institution: SnapshotInstitution {
                provider_institution_id: "snaptrade".into(),
                name: "SnapTrade".into(),
                logo_url: None,
            },
            settings: json!({ "link": link }),
            credentials: Some(
                serde_json::to_string(user)
                    .map_err(|err| ConnectorError::Protocol(format!("keeping the user: {err}")))?,
            ),
            consent: None,
        })
    }

    fn authorizations(&self, user: &User) -> Result<Vec<Authorization>, ConnectorError> {
        self.as_user(user, "/authorizations", &[], "the brokerage connections")
    }

    fn activities(
        &self,
        user: &User,
        account: &str,
        from: NaiveDate,
        to: NaiveDate,
    ) -> Result<Vec<Value>, ConnectorError> {
        let (from, to) = (from.to_string(), to.to_string());
        let mut all = Vec::new();
        for _ in 0..MAX_PAGES {
            let offset = all.len().to_string();
            let limit = PAGE.to_string();
            let page: ActivityPage = self.as_user(
                user,
                &format!("/accounts/{account}/activities"),
                &[
                    ("startDate", &from),
                    ("endDate", &to),
                    ("offset", &offset),
                    ("limit", &limit),
                ],
                "the account activities",
            )?;
            let got = page.data.len();
            all.extend(page.data);
            if got == 0 || all.len() >= page.pagination.total {
                return Ok(all);
            }
        }
        Err(ConnectorError::Protocol(format!(
            "SnapTrade kept paging the activities past {MAX_PAGES} pages"
        )))
    }
}

/// A decimal SnapTrade sends as text (`positions/all`).
fn decimal_text(value: &Value, field: &str) -> Result<Option<Decimal>, ConnectorError> {
    match value {
        Value::Null => Ok(None),
        Value::String(text) => parse_decimal(text).map(Some).map_err(|err| {
            ConnectorError::Protocol(format!("SnapTrade sent `{text}` as {field}: {err}"))
        }),
        Value::Number(n) => parse_decimal(&n.to_string()).map(Some).map_err(|err| {
            ConnectorError::Protocol(format!("SnapTrade sent {n} as {field}: {err}"))
        }),
        other => Err(ConnectorError::Protocol(format!(
            "SnapTrade sent {other} as {field}"
        ))),
    }
}

/// A position as a holding; `raw` is SnapTrade's record. Value and cost
/// basis are per unit at SnapTrade: the holding's are the whole position's.
fn holding(raw: &Value, account_currency: &str) -> Result<SnapshotHolding, ConnectorError> {
    let instrument = &raw["instrument"];
    let text = |v: &Value| v.as_str().map(str::to_owned);
    let quantity = decimal_text(&raw["units"], "a position's units")?.unwrap_or_default();
    let price = decimal_text(&raw["price"], "a position's price")?.unwrap_or_default();
    let cost_per_unit = decimal_text(&raw["cost_basis"], "a position's cost basis")?;
    let currency = text(&raw["currency"])
        .or(text(&instrument["currency"]))
        .unwrap_or_else(|| account_currency.to_owned());
    Ok(SnapshotHolding {
        security: Security {
            name: text(&instrument["description"])
                .or(text(&instrument["symbol"]))
                .unwrap_or_else(|| "Unnamed security".into()),
            currency: text(&instrument["currency"]).unwrap_or_else(|| currency.clone()),
            ticker: text(&instrument["symbol"]),
            figi: text(&instrument["figi_instrument"]["figi_code"]),
            cusip: None,
            isin: None,
        },
        quantity,
        price,
        value: quantity * price,
        value_in_account_currency: None,
        cost_basis: cost_per_unit.map(|c| c * quantity),
        currency,
        raw: raw.clone(),
    })
}

/// An activity as the cash transaction it is (every one, a split at zero)
/// and, where it is investment activity, as that too.
fn activity(
    raw: &Value,
    account_currency: &str,
    now: DateTime<Utc>,
) -> Result<(SnapshotTransaction, Option<SnapshotInvestmentTransaction>), ConnectorError> {
    let a: Activity = serde_json::from_value(raw.clone()).map_err(|err| {
        ConnectorError::Protocol(format!(
            "SnapTrade sent an activity that does not read: {err}"
        ))
    })?;
    let ticker = a
        .symbol
        .as_ref()
        .and_then(|s| s["symbol"].as_str())
        .map(str::to_owned);
    let kind = a.kind.clone().unwrap_or_default();
    let date = a
        .trade_date
        .or(a.settlement_date)
        .map_or(now.date_naive(), |d| d.date_naive());
    // Positive is cash gained, negative cash spent; an activity that
    // moves no cash (a split) is kept, at zero.
    let amount = a.amount.unwrap_or_default();
    let currency = a
        .currency
        .map(|c| c.code)
        .unwrap_or_else(|| account_currency.to_owned());
    let units = decimal_text(&raw["units"], "an activity's units")?;
    let investment = investment_kind(&kind, units.or(Some(amount)))
        .map(|investment_kind| -> Result<_, ConnectorError> {
            let symbol = a.symbol.as_ref().filter(|s| s.is_object());
            Ok(SnapshotInvestmentTransaction {
                provider_id: a.id.clone(),
                date,
                kind: investment_kind,
                subtype: Some(kind.clone()),
                security: symbol.map(|s| security(s, &currency)),
                // SnapTrade writes 0 where a field does not apply.
                quantity: units.filter(|u| !u.is_zero()),
                price: decimal_text(&raw["price"], "an activity's price")?.filter(|p| !p.is_zero()),
                amount,
                fees: decimal_text(&raw["fee"], "an activity's fee")?.filter(|f| !f.is_zero()),
                currency: currency.clone(),
                description: a.description.clone().filter(|d| !d.is_empty()),
                raw: raw.clone(),
            }
            .with_quantity_signed())
        })
        .transpose()?;
    let transaction = SnapshotTransaction {
        provider_id: a.id,
        pending_provider_id: None,
        is_pending: false,
        date,
        amount,
        currency,
        merchant: ticker,
        description: Some(
            [Some(kind), a.description]
                .into_iter()
                .flatten()
                .filter(|t| !t.is_empty())
                .collect::<Vec<_>>()
                .join(": "),
        )
        .filter(|t| !t.is_empty()),
        hints: Default::default(),
    };
    Ok((transaction, investment))
}

/// The investment kind of a SnapTrade activity `type`; `None` for the cash
/// movements (`CONTRIBUTION`, `WITHDRAWAL`), which stay cash transactions
/// only. A transfer's direction is its units' sign (else its amount's).
fn investment_kind(kind: &str, signed: Option<Decimal>) -> Option<InvestmentKind> {
    use InvestmentKind::*;
    Some(match kind {
        "CONTRIBUTION" | "WITHDRAWAL" => return None,
        "BUY" | "REI" => Buy,
        "SELL" => Sell,
        "DIVIDEND" | "STOCK_DIVIDEND" => Dividend,
        "INTEREST" => Interest,
        "FEE" => Fee,
        "TAX" => Tax,
        "SPLIT" => Split,
        "TRANSFER" => match signed {
            Some(n) if n.is_sign_positive() && !n.is_zero() => TransferIn,
            Some(n) if n.is_sign_negative() && !n.is_zero() => TransferOut,
            _ => Other,
        },
        _ => Other,
    })
}

/// The security an activity's `symbol` names.
fn security(symbol: &Value, currency: &str) -> Security {
    let text = |v: &Value| v.as_str().map(str::to_owned);
    Security {
        name: text(&symbol["description"])
            .or(text(&symbol["symbol"]))
            .unwrap_or_else(|| "Unnamed security".into()),
        currency: text(&symbol["currency"]["code"]).unwrap_or_else(|| currency.to_owned()),
        ticker: text(&symbol["symbol"]),
        figi: text(&symbol["figi_code"]),
        cusip: None,
        isin: None,
    }
}

/// Where the portal sends the user back.
fn return_url(request: &ConnectRequest) -> Result<&str, ConnectorError> {
    request
        .settings
        .get("redirect")
        .and_then(Value::as_str)
        .ok_or_else(|| {
            ConnectorError::Misconfigured("connecting SnapTrade needs a return URL".into())
        })
}

impl crate::connector::Connector for SnapTradeConnector {
    fn provider(&self) -> Provider {
        PROVIDER
    }

    fn daily_sync_limit(&self) -> Option<i32> {
        Some(DAILY_SYNCS)
    }

    fn prepare(&self, request: &ConnectRequest) -> Result<Prepared, ConnectorError> {
        let redirect = return_url(request)?;
        // An id that says nothing about the person (SnapTrade advises
        // against e-mail addresses).
        let mut id = [0u8; 12];
        rand::rng().fill_bytes(&mut id);
        #[derive(Deserialize)]
        struct Registered {
            #[serde(rename = "userSecret")]
            user_secret: String,
        }
        let user_id = format!("tributary-{}", hex_string(&id));
        let registered: Registered = self.call(
            reqwest::Method::POST,
            "/snapTrade/registerUser",
            &[],
            Some(&json!({ "userId": user_id })),
            "the user registration",
        )?;
        let user = User {
            user_id,
            user_secret: registered.user_secret,
        };
        let link = self.portal(&user, redirect, None)?;
        Self::prepared(&user, link)
    }

    /// The same SnapTrade user; a disabled brokerage connection repaired
    /// in place (`reconnect`), keeping its accounts.
    fn prepare_again(
        &self,
        request: &ConnectRequest,
        existing: Option<&str>,
    ) -> Result<Prepared, ConnectorError> {
        let Some(user) = existing.and_then(|text| serde_json::from_str::<User>(text).ok()) else {
            return self.prepare(request);
        };
        let redirect = return_url(request)?;
        let broken = self
            .authorizations(&user)?
            .into_iter()
            .find(|a| a.disabled)
            .map(|a| a.id);
        let link = self.portal(&user, redirect, broken.as_deref())?;
        Self::prepared(&user, link)
    }

    fn complete(
        &self,
        _settings: &Value,
        credentials: Option<&str>,
        returned: &AuthorizationReturn,
    ) -> Result<Option<Prepared>, ConnectorError> {
        if let Some(code) = returned.get("error_code") {
            return Err(ConnectorError::InvalidCredentials(format!(
                "the brokerage was not connected (SnapTrade error {code})"
            )));
        }
        let text = credentials.ok_or_else(|| {
            ConnectorError::Misconfigured("the connection has no SnapTrade user".into())
        })?;
        let user: User = serde_json::from_str(text)
            .map_err(|err| ConnectorError::Misconfigured(format!("the kept user: {err}")))?;
        let authorizations = self.authorizations(&user)?;
        let Some(first) = authorizations.iter().find(|a| !a.disabled) else {
            return Err(ConnectorError::InvalidCredentials(
                "no brokerage was connected in SnapTrade's portal".into(),
            ));
        };
        Ok(Some(Prepared {
            institution: first.institution(),
            settings: json!({}),
            credentials: Some(text.to_owned()),
            consent: None,
        }))
    }

    fn fetch(&self, context: &FetchContext<'_>) -> Result<ProviderSnapshot, ConnectorError> {
        let user: User = context
            .credentials
            .map(serde_json::from_str)
            .transpose()
            .map_err(|err| ConnectorError::Misconfigured(format!("the kept user: {err}")))?
            .ok_or_else(|| {
                ConnectorError::Misconfigured("the connection has no SnapTrade user".into())
            })?;
        let authorizations: HashMap<String, Authorization> = self
            .authorizations(&user)?
            .into_iter()
            .map(|a| (a.id.clone(), a))
            .collect();
        if authorizations.is_empty() {
            return Err(ConnectorError::ReauthRequired(
                "no brokerage is connected yet: open SnapTrade's portal and connect one".into(),
            ));
        }
        // Disabled connections still answer with their last data, which is
        // stored; the user is told to reconnect.
        let broken: Vec<String> = authorizations
            .values()
            .filter(|a| a.disabled)
            .map(|a| a.institution().name)
            .collect();
        if broken.len() == authorizations.len() {
            return Err(ConnectorError::ReauthRequired(format!(
                "the brokerage connection is broken ({}): connect it again",
                broken.join(", ")
            )));
        }
        let now = context.now;
        let to = now.date_naive();
        // An account new to the connection gets a first sync's history.
        let from = |account: &Account| {
            context
                .last_synced_for(&account.id)
                .map_or(to - Days::new(HISTORY_DAYS), |last| {
                    last.date_naive() - Days::new(OVERLAP_DAYS)
                })
        };
        let accounts: Vec<Account> = self.as_user(&user, "/accounts", &[], "the accounts")?;
        let mut snapshot_accounts = Vec::with_capacity(accounts.len());
        for account in accounts {
            let path = format!("/accounts/{}", account.id);
            let cash: Vec<CashBalance> = self.as_user(
                &user,
                &format!("{path}/balances"),
                &[],
                "the account balances",
            )?;
            let total = account.balance.total.as_ref();
            let currency = total
                .and_then(|t| t.currency.clone())
                .or_else(|| {
                    cash.iter()
                        .find_map(|c| c.currency.as_ref().map(|c| c.code.clone()))
                })
                .unwrap_or_else(|| "USD".into());
            let positions: Positions = self.as_user(
                &user,
                &format!("{path}/positions/all"),
                &[],
                "the account positions",
            )?;
            let holdings = positions
                .results
                .iter()
                .map(|raw| holding(raw, &currency))
                .collect::<Result<Vec<_>, _>>()?;
            let mut transactions = Vec::new();
            let mut investment_transactions = Vec::new();
            for raw in self.activities(&user, &account.id, from(&account), to)? {
                let (transaction, investment) = activity(&raw, &currency, now)?;
                transactions.push(transaction);
                investment_transactions.extend(investment);
            }
            let institution = authorizations
                .get(&account.brokerage_authorization)
                .map(Authorization::institution)
                .or_else(|| {
                    account
                        .institution_name
                        .clone()
                        .map(|name| SnapshotInstitution {
                            provider_institution_id: name.clone(),
                            name,
                            logo_url: None,
                        })
                });
            let mask = account.number.as_deref().map(crate::mask::last_four);
            snapshot_accounts.push(SnapshotAccount {
                balance_history: Vec::new(),
                provider_account_id: account.id.clone(),
                institution,
                name: account
                    .name
                    .clone()
                    .or(account.institution_name.clone())
                    .unwrap_or_else(|| "Brokerage account".into()),
                kind: match account.account_category.as_deref() {
                    Some("DEPOSIT") => AccountKind::Checking,
                    Some("LOC") => AccountKind::Loan,
                    _ => AccountKind::Brokerage,
                },
                currency: currency.clone(),
                mask,
                balance: total.and_then(|t| t.amount).map(|amount| SnapshotBalance {
                    current: amount,
                    available: cash
                        .iter()
                        .find(|c| c.currency.as_ref().is_some_and(|c| c.code == currency))
                        .and_then(|c| c.cash),
                    currency: currency.clone(),
                    as_of: now,
                }),
                transactions,
                investment_transactions,
                liability: None,
                holdings: Some(holdings),
            });
        }
        let first = authorizations
            .values()
            .next()
            .map(Authorization::institution);
        Ok(ProviderSnapshot {
            institution: first.unwrap_or(SnapshotInstitution {
                provider_institution_id: "snaptrade".into(),
                name: "SnapTrade".into(),
                logo_url: None,
            }),
            accounts: snapshot_accounts,
            notices: broken
                .iter()
                .map(|name| format!("{name}: the connection is broken, connect it again"))
                .collect(),
            pending_match: None,
            complete: true,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_signed_text_is_the_guides_example() {
        // docs.snaptrade.com, request signatures: the worked example.
        assert_eq!(
            signed_text(
                Some(&json!({"substring": "AAPL"})),
                "/api/v1/symbols",
                "clientId=YOUR_CLIENT_ID&timestamp=1715123456"
            ),
            r#"{"content":{"substring":"AAPL"},"path":"/api/v1/symbols","query":"clientId=YOUR_CLIENT_ID&timestamp=1715123456"}"#
        );
        // No body, or an empty one: null. Nested keys sorted.
        assert_eq!(
            signed_text(Some(&json!({})), "/accounts", "a=1"),
            r#"{"content":null,"path":"/accounts","query":"a=1"}"#
        );
        assert_eq!(
            signed_text(
                Some(&json!({"b": {"z": 1, "a": 2}, "a": [ {"y": 0, "x": 1} ]})),
                "/p",
                ""
            ),
            r#"{"content":{"a":[{"x":1,"y":0}],"b":{"a":2,"z":1}},"path":"/p","query":""}"#
        );
    }
}
