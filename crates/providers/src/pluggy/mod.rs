//! Pluggy (Brazil): the item (one bank connected in Pluggy) to read, with
//! this server's Pluggy application (the operator's; the person connects
//! their bank in Pluggy Connect on the bank form: `connect`) or the
//! person's own (its client id and secret pasted with the item's id, the
//! way self-hosted budgeting apps use Pluggy today). Written against
//! Pluggy's OpenAPI document and its Node client (docs/providers.md,
//! "Pluggy").
//!
//! - `prepare`: the pair is checked at once (`POST /auth`: 401 for a wrong
//!   one) and the item read (`GET /items/{id}`: 404 for one the
//!   application does not hold); with the server's application the item
//!   must carry the person's `clientUserId`. The person's own pair is kept
//!   sealed, the item's id as a setting, the bank is the item's connector.
//! - `fetch`: an API key (`POST /auth`, two hours), the item (one whose
//!   bank wants the person, `LOGIN_ERROR` or `WAITING_USER_*`, needs them),
//!   its accounts (`GET /accounts?itemId=`, page by page), and each
//!   account's transactions along the cursor of `GET /v2/transactions`
//!   (`/transactions` is gone after 2026-12-31), from `dateFrom` 14 days
//!   before the last sync, or the oldest pending transaction stored.
//!   Then the item's investments, each an account holding that position,
//!   with its activity (`investments`).
//!
//! Amounts are JSON numbers, read with their exact digits. A bank account's
//! are signed for the holder (money out negative); a credit card's are
//! signed for the card's bill (a purchase positive), as Pluggy's examples
//! and the apps using it read them, so a card's amounts and its `balance`
//! (what is owed) are turned to Tributary's sign. `type` (DEBIT, CREDIT) is
//! not used: Pluggy's own example contradicts it for cards. A pending
//! transaction may come back posted under a new id: the pending-match rule
//! pairs them.

use crate::connector::{
    ConnectRequest, ConnectWidget, ConnectorError, FetchContext, HttpAnswer, Prepared,
};
use crate::description::{
    Answers, Connect, Constructor, Description, Environment, Field, Input, Reports, ReturnAddress,
    SettingError, SetupError, Variable, constructor,
};
use crate::personal_token;
use crate::provider_http::{ProviderHttp, Refusal};
use chrono::NaiveDate;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tributary_domain::ids::UserId;
use tributary_domain::model::{AccountKind, Provider};
use tributary_domain::money::Decimal;
use tributary_domain::pending_match::PendingMatchRule;
use tributary_domain::snapshot::*;

mod connect;
mod investments;

pub use connect::ServerApplication;

pub const PROVIDER: Provider = Provider::new("pluggy");

pub const DESCRIPTION: Description = Description {
    provider: PROVIDER,
    name: "Pluggy",
    summary: "Banks and brokers in Brazil through Pluggy: connect your bank in Pluggy Connect, or give your own Pluggy application's client id and secret with the item of the bank you connected there.",
    reports: Reports::INVESTMENTS,
    connect: Connect {
        fields: &[
            Field {
                name: "client_id",
                flag: Some("client-id"),
                label: "Pluggy client id",
                help: "Your own Pluggy application's client id (dashboard.pluggy.ai, Applications); none with Pluggy Connect.",
                input: Input::Text {
                    autocomplete: "off",
                },
                required: false,
                default: None,
                remembered_as: None,
            },
            Field {
                name: "client_secret",
                flag: Some("client-secret"),
                label: "Pluggy client secret",
                help: "Its client secret (\"-\" reads it from standard input, keeping it out of the shell history); none with Pluggy Connect.",
                input: Input::Secret {
                    autocomplete: "off",
                },
                required: false,
                default: None,
                remembered_as: None,
            },
            Field {
                name: "item_id",
                flag: Some("item"),
                label: "Pluggy item id",
                help: "The item of the bank you connected in Pluggy (its id, a UUID); Pluggy Connect fills it in.",
                input: Input::Text {
                    autocomplete: "off",
                },
                required: true,
                default: None,
                remembered_as: None,
            },
        ],
        note: Some("Where this server has a Pluggy application, connect your bank in Pluggy Connect: the item it makes is connected here. Else connect your bank in Pluggy for your own application, then paste the application's client id and secret and the item's id. They are checked at once; the secret is kept sealed. Each bank is an item: connect each one here."),
        hands_off: false,
        picks_institution: false,
        return_address: ReturnAddress::Never,
        finish_on_return: false,
        command_help: "Connect a bank you connected in Pluggy: your own application's --client-id and --client-secret (- to paste it) and the --item id, then sync; without the pair, an item made in Pluggy Connect for this user with the server's application.",
        request: request_from,
    },
    environment: &[
        Variable {
            names: "TRIBUTARY_PLUGGY_URL",
            help: "its API root [default: https://api.pluggy.ai]",
        },
        Variable {
            names: "TRIBUTARY_PLUGGY_CLIENT_ID, TRIBUTARY_PLUGGY_CLIENT_SECRET",
            help: "this server's Pluggy application: the Pluggy bank form offers Pluggy Connect",
        },
        Variable {
            names: "TRIBUTARY_PLUGGY_CONNECT_SCRIPT",
            help: "where Pluggy Connect's script is loaded from (https, or http on a loopback address) [default: https://cdn.pluggy.ai/pluggy-connect/latest/pluggy-connect.js]",
        },
        Variable {
            names: "TRIBUTARY_PLUGGY_INCLUDE_SANDBOX",
            help: "true: Pluggy Connect lists Pluggy's sandbox banks too, for trying it out [default: false]",
        },
    ],
    configure,
};

pub const DEFAULT_BASE_URL: &str = "https://api.pluggy.ai";
/// Later syncs read from this long before the last one.
const OVERLAP_DAYS: i64 = 14;
/// A listing ends here even if Pluggy keeps paging.
const MAX_PAGES: usize = 10_000;
/// Item statuses where the bank wants the person (new credentials, an MFA
/// step, an action at the bank).
const NEEDS_THE_PERSON: [&str; 3] = ["LOGIN_ERROR", "WAITING_USER_INPUT", "WAITING_USER_ACTION"];

/// Always offered: a person may bring their own Pluggy application; with
/// the server's, Pluggy Connect too.
fn configure(env: &Environment<'_>) -> Result<Option<Constructor>, SettingError> {
    let config = PluggyConfig {
        base_url: env
            .get("TRIBUTARY_PLUGGY_URL")
            .unwrap_or_else(|| DEFAULT_BASE_URL.to_owned()),
        timeout: crate::connector::PROVIDER_TIMEOUT,
        server_application: connect::configure(env)?,
    };
    Ok(constructor(move || {
        PluggyConnector::new(config.clone()).map_err(|err| SetupError::new("Pluggy", err))
    }))
}

fn request_from(answers: &Answers<'_>) -> Result<ConnectRequest, &'static str> {
    let (id, secret, item) = (
        answers.get("client_id").trim(),
        answers.get("client_secret").trim(),
        answers.get("item_id").trim(),
    );
    if item.is_empty() {
        return Err("Give the Pluggy item id (Pluggy Connect fills it in).");
    }
    if !is_item_id(item) {
        return Err("A Pluggy item id is a UUID (letters a-f, digits and dashes).");
    }
    match (id.is_empty(), secret.is_empty()) {
        // With this server's application: the item must be theirs.
        (true, true) => Ok(ConnectRequest {
            settings: json!({
                "item_id": item,
                "client_user_id": connect::client_user_id(answers.user),
            }),
            secret: None,
        }),
        (false, false) => Ok(ConnectRequest {
            settings: json!({ "item_id": item }),
            secret: Some(json!({"client_id": id, "client_secret": secret}).to_string()),
        }),
        _ => Err("Give both your Pluggy client id and client secret, or neither (with Pluggy Connect)."),
    }
}

/// Where Pluggy's API is, how long it may take, and this server's own
/// application where the operator set one.
#[derive(Debug, Clone)]
pub struct PluggyConfig {
    pub base_url: String,
    pub timeout: std::time::Duration,
    pub server_application: Option<ServerApplication>,
}

#[derive(Debug)]
pub struct PluggyConnector {
    config: PluggyConfig,
    http: ProviderHttp,
    /// This server's application's API key, and when it was made.
    server_key: std::sync::Mutex<Option<(String, std::time::Instant)>>,
}

/// How long this server's API key is used: Pluggy's last two hours.
const SERVER_KEY_REUSE: std::time::Duration = std::time::Duration::from_secs(100 * 60);

/// A Pluggy application's pair. Never printed.
#[derive(Serialize, Deserialize)]
struct Client {
    client_id: String,
    client_secret: String,
}

/// What a connection keeps sealed: the person's own application's pair
/// (neither half when it reads with this server's), and the item it was
/// given for. Never printed.
#[derive(Serialize, Deserialize)]
struct Kept {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    client_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    client_secret: Option<String>,
    /// The item connected: signing in again keeps to it.
    #[serde(default)]
    item_id: Option<String>,
}

impl Kept {
    fn new(client: Option<Client>, item_id: &str) -> Self {
        let (client_id, client_secret) = match client {
            Some(c) => (Some(c.client_id), Some(c.client_secret)),
            None => (None, None),
        };
        Self {
            client_id,
            client_secret,
            item_id: Some(item_id.to_owned()),
        }
    }

    /// The person's own application's pair; `None`: this server's. Half
    /// a pair is neither, and is refused rather than read as the server's.
    fn client(&self) -> Result<Option<Client>, ConnectorError> {
        match (&self.client_id, &self.client_secret) {
            (Some(client_id), Some(client_secret)) => Ok(Some(Client {
                client_id: client_id.clone(),
                client_secret: client_secret.clone(),
            })),
            (None, None) => Ok(None),
            _ => Err(ConnectorError::ReauthRequired(
                "the kept Pluggy client is half a pair: connect again".into(),
            )),
        }
    }
}

/// Whether `id` can be a Pluggy item's (a UUID): it goes in a path.
fn is_item_id(id: &str) -> bool {
    (1..=64).contains(&id.len()) && id.chars().all(|c| c.is_ascii_hexdigit() || c == '-')
}

/// `id` as one path segment: every byte but letters, digits, `-` and `_`
/// escaped, so that no id (`a/b`) reaches another address; `.` and `..`
/// are refused (URL parsers read `%2E%2E` as `..`).
fn path_segment(id: &str) -> Result<String, ConnectorError> {
    if id.is_empty() || id.bytes().all(|b| b == b'.') {
        return Err(ConnectorError::Protocol(format!(
            "Pluggy sent `{id}` as an id, which cannot name anything"
        )));
    }
    Ok(id
        .bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' | b'_' => char::from(b).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect())
}

/// What signing in is called in errors.
const SIGN_IN: &str = "the application's sign-in";
/// And signing in with this server's application.
const SERVER_SIGN_IN: &str = "this server's application's sign-in";

/// Pluggy's error document: `{"code", "message", "codeDescription"}`.
fn refusal(refused: &Refusal<'_>) -> ConnectorError {
    let body: Value = serde_json::from_str(refused.body).unwrap_or(Value::Null);
    let message = body["message"].as_str().unwrap_or_default();
    let described = body["codeDescription"].as_str().unwrap_or_default();
    let detail = [described, message]
        .into_iter()
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join(": ");
    let what = refused.what;
    match refused.status.as_u16() {
        401 | 403 if what == SIGN_IN => {
            return ConnectorError::ReauthRequired(format!(
                "Pluggy does not accept the application's client id and secret ({detail}): make a new one in Pluggy's dashboard and connect again"
            ));
        }
        401 | 403 if what == SERVER_SIGN_IN => {
            return ConnectorError::Misconfigured(format!(
                "Pluggy does not accept this server's application, TRIBUTARY_PLUGGY_CLIENT_ID and TRIBUTARY_PLUGGY_CLIENT_SECRET ({detail})"
            ));
        }
        404 if what == "the item" => {
            return ConnectorError::ReauthRequired(format!(
                "Pluggy no longer holds the item ({detail}): connect the bank in Pluggy again and add it here as a new connection"
            ));
        }
        _ => {}
    }
    // Pluggy says when its per-minute count starts again, and a wait of
    // its own: the later of the two.
    let retry_after = ["ratelimit-reset", "retry-after"]
        .iter()
        .filter_map(|name| refused.seconds_header(&[name]))
        .max();
    let answer = HttpAnswer {
        provider: "Pluggy",
        what,
        status: refused.status,
        detail: &detail,
        retry_after,
    };
    answer.error(|_| None)
}

/// Not `Debug`: it is a credential.
#[derive(Deserialize)]
struct ApiKey {
    #[serde(rename = "apiKey")]
    api_key: String,
}

#[derive(Debug, Deserialize)]
struct Item {
    status: String,
    #[serde(rename = "executionStatus", default)]
    execution_status: Option<String>,
    #[serde(default)]
    error: Option<ItemError>,
    #[serde(default)]
    connector: Option<ItemConnector>,
    /// Who the item was made for, where a connect token named them.
    #[serde(rename = "clientUserId", default)]
    client_user_id: Option<String>,
}

#[derive(Debug, Deserialize)]
struct ItemError {
    #[serde(default)]
    message: Option<String>,
}

#[derive(Debug, Deserialize)]
struct ItemConnector {
    id: Value,
    name: String,
    #[serde(rename = "imageUrl", default)]
    image_url: Option<String>,
}

#[derive(Debug, Deserialize)]
struct Page<T> {
    results: Vec<T>,
    #[serde(rename = "totalPages", default)]
    total_pages: Option<u64>,
}

#[derive(Debug, Deserialize)]
struct Account {
    id: String,
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    subtype: Option<String>,
    #[serde(default)]
    number: Option<String>,
    name: String,
    #[serde(rename = "marketingName", default)]
    marketing_name: Option<String>,
    balance: Decimal,
    #[serde(rename = "currencyCode")]
    currency_code: String,
    #[serde(rename = "creditData", default)]
    credit_data: Option<CreditData>,
}

#[derive(Debug, Deserialize)]
struct CreditData {
    #[serde(rename = "creditLimit", default)]
    credit_limit: Option<Decimal>,
    #[serde(rename = "availableCreditLimit", default)]
    available_credit_limit: Option<Decimal>,
    #[serde(rename = "minimumPayment", default)]
    minimum_payment: Option<Decimal>,
    #[serde(rename = "balanceDueDate", default)]
    balance_due_date: Option<String>,
}

#[derive(Debug, Deserialize)]
struct Cursor<T> {
    results: Vec<T>,
    /// The next page's query (`?accountId=…&after=…`), or null.
    #[serde(default)]
    next: Option<String>,
}

#[derive(Debug, Deserialize)]
struct Transaction {
    id: String,
    description: String,
    #[serde(rename = "descriptionRaw", default)]
    description_raw: Option<String>,
    amount: Decimal,
    #[serde(rename = "amountInAccountCurrency", default)]
    amount_in_account_currency: Option<Decimal>,
    #[serde(rename = "currencyCode")]
    currency_code: String,
    date: String,
    #[serde(default)]
    status: Option<String>,
    #[serde(default)]
    merchant: Option<Merchant>,
}

#[derive(Debug, Deserialize)]
struct Merchant {
    #[serde(default)]
    name: Option<String>,
    #[serde(rename = "businessName", default)]
    business_name: Option<String>,
}

/// How an account's amounts are signed at Pluggy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    /// For the holder: money out negative (Tributary's sign).
    Bank,
    /// For the card's bill: a purchase positive.
    Credit,
}

impl Side {
    fn of(account: &Account) -> Result<Side, String> {
        match account.kind.as_str() {
            "BANK" => Ok(Side::Bank),
            "CREDIT" => Ok(Side::Credit),
            other => Err(format!(
                "Pluggy sent account {} ({}) of type `{other}` (BANK or CREDIT expected): its amounts' sign is unknown, so it is left out",
                account.id, account.name
            )),
        }
    }

    fn signed(self, amount: Decimal) -> Decimal {
        match self {
            Side::Bank => amount,
            Side::Credit => -amount,
        }
    }
}

/// The day of a Pluggy date-time: a bank that gives days only is written
/// at midnight UTC (`2020-10-15T00:00:00.000Z`), and that date is the
/// day; a real time is the day it was in Brazil (São Paulo's zone).
fn day(text: &str) -> Result<NaiveDate, ConnectorError> {
    let unreadable =
        || ConnectorError::Protocol(format!("Pluggy sent `{text}` as a date (ISO 8601 expected)"));
    match chrono::DateTime::parse_from_rfc3339(text) {
        Ok(at) if at.time() == chrono::NaiveTime::MIN => Ok(at.date_naive()),
        Ok(at) => {
            static SAO_PAULO: jiff::tz::TimeZone = jiff::tz::get!("America/Sao_Paulo");
            crate::bank_day::day_in(&SAO_PAULO, at.to_utc(), "Pluggy")
        }
        Err(_) => text
            .get(..10)
            .and_then(|d| NaiveDate::parse_from_str(d, "%Y-%m-%d").ok())
            .ok_or_else(unreadable),
    }
}

/// `t` as stored in an account whose currency is `currency`.
fn transaction(
    side: Side,
    t: Transaction,
    currency: &str,
) -> Result<SnapshotTransaction, ConnectorError> {
    let is_pending = match t.status.as_deref() {
        Some("PENDING") => true,
        Some("POSTED") | None => false,
        Some(other) => {
            return Err(ConnectorError::Protocol(format!(
                "Pluggy sent transaction {} with status `{other}` (POSTED or PENDING expected)",
                t.id
            )));
        }
    };
    let named = |name: Option<String>| name.filter(|n| !n.trim().is_empty());
    let merchant = t
        .merchant
        .and_then(|m| named(m.name).or_else(|| named(m.business_name)));
    let description = t
        .description_raw
        .filter(|d| !d.trim().is_empty())
        .unwrap_or(t.description);
    Ok(SnapshotTransaction {
        provider_id: t.id,
        pending_provider_id: None,
        is_pending,
        date: day(&t.date)?,
        // What moved in the account, in its currency, where Pluggy gives
        // it beside a purchase abroad; else the amount in its own currency.
        amount: side.signed(t.amount_in_account_currency.unwrap_or(t.amount)),
        currency: if t.amount_in_account_currency.is_some() {
            currency.to_owned()
        } else {
            t.currency_code
        },
        merchant,
        description: Some(description).filter(|d| !d.trim().is_empty()),
        hints: Default::default(),
    })
}

fn kind(account: &Account) -> AccountKind {
    match (account.kind.as_str(), account.subtype.as_deref()) {
        ("CREDIT", _) => AccountKind::CreditCard,
        (_, Some("SAVINGS_ACCOUNT")) => AccountKind::Savings,
        (_, Some("CHECKING_ACCOUNT")) => AccountKind::Checking,
        _ => AccountKind::Other,
    }
}

impl PluggyConnector {
    pub fn new(config: PluggyConfig) -> Result<Self, reqwest::Error> {
        let http = ProviderHttp::new("Pluggy", config.timeout)?;
        Ok(Self {
            config,
            http,
            server_key: std::sync::Mutex::new(None),
        })
    }

    fn url(&self, path: &str) -> String {
        format!("{}/{path}", self.config.base_url.trim_end_matches('/'))
    }

    /// An API key for the person's own application.
    fn api_key(&self, client: &Client) -> Result<String, ConnectorError> {
        self.sign_in(client, SIGN_IN)
    }

    /// An API key for this server's application, reused while it lives
    /// (every connect page asks for a connect token with it, and
    /// `POST /auth` has a rate limit of its own).
    fn server_key(&self, application: &ServerApplication) -> Result<String, ConnectorError> {
        let kept = || {
            self.server_key
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
        };
        if let Some((key, made)) = kept().as_ref()
            && made.elapsed() < SERVER_KEY_REUSE
        {
            return Ok(key.clone());
        }
        let client = Client {
            client_id: application.client_id.clone(),
            client_secret: application.client_secret.clone(),
        };
        let key = self.sign_in(&client, SERVER_SIGN_IN)?;
        *kept() = Some((key.clone(), std::time::Instant::now()));
        Ok(key)
    }

    /// The key a connection reads with: its own application's, else this
    /// server's.
    fn key_for(&self, kept: &Kept) -> Result<String, ConnectorError> {
        match (kept.client()?, &self.config.server_application) {
            (Some(client), _) => self.api_key(&client),
            (None, Some(application)) => self.server_key(application),
            (None, None) => Err(ConnectorError::Misconfigured(
                "the connection reads with this server's Pluggy application, and TRIBUTARY_PLUGGY_CLIENT_ID is no longer set".into(),
            )),
        }
    }

    fn sign_in(&self, client: &Client, what: &str) -> Result<String, ConnectorError> {
        let response = self.http.send(
            self.http.client.post(self.url("auth")).json(&json!({
                "clientId": client.client_id,
                "clientSecret": client.client_secret,
            })),
            what,
        )?;
        let key: ApiKey = self.http.json(response, what, refusal)?;
        Ok(key.api_key)
    }

    fn get<T: serde::de::DeserializeOwned>(
        &self,
        key: &str,
        path: &str,
        query: &[(&str, String)],
        what: &str,
    ) -> Result<T, ConnectorError> {
        let response = self.http.send(
            self.http
                .client
                .get(self.url(path))
                .header("X-API-KEY", key)
                .query(query),
            what,
        )?;
        self.http.json(response, what, refusal)
    }

    fn item(&self, key: &str, item_id: &str) -> Result<Item, ConnectorError> {
        let id = path_segment(item_id)?;
        self.get(key, &format!("items/{id}"), &[], "the item")
    }

    /// Every page of a listing whose envelope says its `totalPages`.
    fn every_page<T: serde::de::DeserializeOwned>(
        &self,
        key: &str,
        path: &str,
        query: &[(&str, String)],
        what: &str,
    ) -> Result<Vec<T>, ConnectorError> {
        let mut all = Vec::new();
        for page in 1..=MAX_PAGES {
            let mut paged = query.to_vec();
            paged.push(("page", page.to_string()));
            let listed: Page<T> = self.get(key, path, &paged, what)?;
            let last = listed.total_pages.is_none_or(|total| page as u64 >= total);
            all.extend(listed.results);
            if last {
                return Ok(all);
            }
        }
        Err(ConnectorError::Protocol(format!(
            "Pluggy kept paging {what} past {MAX_PAGES} pages"
        )))
    }

    /// Every account of the item, page by page.
    fn accounts(&self, key: &str, item_id: &str) -> Result<Vec<Account>, ConnectorError> {
        self.every_page(
            key,
            "accounts",
            &[("itemId", item_id.to_owned())],
            "the accounts",
        )
    }

    /// The account's transactions from `from`, along Pluggy's cursor.
    fn transactions(
        &self,
        key: &str,
        account: &Account,
        from: Option<NaiveDate>,
    ) -> Result<Vec<Transaction>, ConnectorError> {
        let mut query = vec![("accountId", account.id.clone())];
        if let Some(from) = from {
            query.push(("dateFrom", from.to_string()));
        }
        let mut all = Vec::new();
        let mut followed = std::collections::HashSet::new();
        for _ in 0..MAX_PAGES {
            let page: Cursor<Transaction> =
                self.get(key, "v2/transactions", &query, "the transactions")?;
            all.extend(page.results);
            let Some(next) = page.next.filter(|n| !n.is_empty()) else {
                return Ok(all);
            };
            // `next` is the next page's query; its cursor is `after`.
            let after = url::form_urlencoded::parse(next.trim_start_matches('?').as_bytes())
                .find(|(name, _)| name == "after")
                .map(|(_, value)| value.into_owned())
                .ok_or_else(|| {
                    ConnectorError::Protocol(format!(
                        "Pluggy's next page of transactions carries no cursor ({next})"
                    ))
                })?;
            if !followed.insert(after.clone()) {
                return Err(ConnectorError::Protocol(
                    "Pluggy gave the same transactions cursor twice".into(),
                ));
            }
            query.retain(|(name, _)| *name != "after");
            query.push(("after", after));
        }
        Err(ConnectorError::Protocol(format!(
            "Pluggy kept paging the transactions past {MAX_PAGES} pages"
        )))
    }

    /// The account as stored, or why it is left out (a notice).
    fn account(
        &self,
        key: &str,
        account: Account,
        context: &FetchContext<'_>,
    ) -> Result<Result<SnapshotAccount, String>, ConnectorError> {
        let side = match Side::of(&account) {
            Ok(side) => side,
            Err(notice) => return Ok(Err(notice)),
        };
        let from = context
            .reach_back_for(&account.id, OVERLAP_DAYS)
            .map(|at| at.date_naive());
        let transactions = self
            .transactions(key, &account, from)?
            .into_iter()
            .map(|t| transaction(side, t, &account.currency_code))
            .collect::<Result<_, _>>()?;
        let credit = account.credit_data.as_ref();
        let liability = match (side, credit) {
            (Side::Credit, Some(credit)) => Some(SnapshotLiability {
                credit_limit: credit.credit_limit,
                minimum_payment: credit.minimum_payment,
                // A due date that does not read is left out, not the card.
                next_payment_due: credit.balance_due_date.as_deref().and_then(|d| day(d).ok()),
                last_statement_balance: None,
            }),
            _ => None,
        };
        Ok(Ok(SnapshotAccount {
            provider_account_id: account.id.clone(),
            institution: None,
            name: account
                .marketing_name
                .clone()
                .filter(|n| !n.trim().is_empty())
                .unwrap_or_else(|| account.name.clone()),
            kind: kind(&account),
            currency: account.currency_code.clone(),
            mask: account.number.as_deref().map(|number| {
                let digits: String = number.chars().filter(char::is_ascii_alphanumeric).collect();
                crate::mask::last_four(&digits)
            }),
            balance: Some(SnapshotBalance {
                // A card's balance is what is owed: stored negative.
                current: side.signed(account.balance),
                // Pluggy gives a bank account's balance alone (an overdraft
                // limit is not said): no available amount is made up.
                available: match side {
                    Side::Bank => None,
                    Side::Credit => credit.and_then(|c| c.available_credit_limit),
                },
                currency: account.currency_code.clone(),
                as_of: context.now,
            }),
            balance_history: Vec::new(),
            transactions,
            investment_transactions: Vec::new(),
            liability,
            holdings: None,
        }))
    }
}

/// The bank an item is at.
fn institution(item: &Item) -> SnapshotInstitution {
    match &item.connector {
        Some(connector) => SnapshotInstitution {
            provider_institution_id: match &connector.id {
                Value::String(id) => id.clone(),
                other => other.to_string(),
            },
            name: connector.name.clone(),
            logo_url: connector.image_url.clone(),
        },
        None => SnapshotInstitution {
            provider_institution_id: "pluggy".into(),
            name: "Pluggy".into(),
            logo_url: None,
        },
    }
}

/// The item setting a connection keeps.
fn item_id(settings: &Value) -> Result<&str, ConnectorError> {
    settings["item_id"]
        .as_str()
        .filter(|id| !id.trim().is_empty())
        .ok_or_else(|| {
            ConnectorError::Misconfigured("the connection names no Pluggy item".into())
        })
}

impl crate::connector::Connector for PluggyConnector {
    fn provider(&self) -> Provider {
        PROVIDER
    }

    fn prepare(&self, request: &ConnectRequest) -> Result<Prepared, ConnectorError> {
        let wrong = |why: &str| {
            ConnectorError::InvalidCredentials(format!(
                "Pluggy did not accept these details: {why}"
            ))
        };
        let item_id = item_id(&request.settings)
            .ok()
            .filter(|id| is_item_id(id))
            .ok_or_else(|| wrong("a Pluggy item id is a UUID"))?;
        let unaccepted = |err: ConnectorError| {
            err.refused_at_connect(|why| format!("Pluggy did not accept these details: {why}"))
        };
        let (kept, person) = match request.secret.as_deref() {
            Some(secret) => {
                let client: Client = serde_json::from_str(secret)
                    .map_err(|_| wrong("connecting Pluggy needs your client id and secret"))?;
                (Some(client), None)
            }
            None => {
                let person = request.settings["client_user_id"]
                    .as_str()
                    .filter(|_| self.config.server_application.is_some())
                    .ok_or_else(|| wrong("connecting Pluggy needs your client id and secret"))?;
                (None, Some(person))
            }
        };
        let kept = Kept::new(kept, item_id);
        let key = self.key_for(&kept).map_err(unaccepted)?;
        let item = self.item(&key, item_id).map_err(unaccepted)?;
        // The server's application holds every person's items: only one
        // made for this person is theirs to connect.
        if let Some(person) = person
            && item.client_user_id.as_deref() != Some(person)
        {
            return Err(wrong(
                "that item was not made in Pluggy Connect from your account here",
            ));
        }
        let mut settings = json!({ "item_id": item_id });
        if let Some(person) = person {
            settings["client_user_id"] = json!(person);
        }
        Ok(Prepared {
            institution: institution(&item),
            settings,
            credentials: Some(serde_json::to_string(&kept).map_err(|err| {
                ConnectorError::Protocol(format!("keeping Pluggy's client: {err}"))
            })?),
            consent: None,
        })
    }

    /// Signing in again keeps to the connection's item: another item has
    /// other accounts, and is a connection of its own.
    fn prepare_again(
        &self,
        request: &ConnectRequest,
        existing: Option<&str>,
    ) -> Result<Prepared, ConnectorError> {
        let kept = existing
            .and_then(|sealed| serde_json::from_str::<Kept>(sealed).ok())
            .and_then(|kept| kept.item_id);
        if let (Some(kept), Ok(given)) = (kept, item_id(&request.settings))
            && kept != given
        {
            return Err(ConnectorError::InvalidCredentials(format!(
                "this connection reads Pluggy item {kept}: add item {given} as a new connection"
            )));
        }
        self.prepare(request)
    }

    fn fetch(&self, context: &FetchContext<'_>) -> Result<ProviderSnapshot, ConnectorError> {
        let kept: Kept = serde_json::from_str(personal_token::kept(context)?).map_err(|_| {
            ConnectorError::ReauthRequired(
                "the kept Pluggy client cannot be read: connect again".into(),
            )
        })?;
        let item_id = item_id(context.settings)?;
        if !is_item_id(item_id) {
            return Err(ConnectorError::Misconfigured(
                "the connection's Pluggy item id is not a UUID".into(),
            ));
        }
        let key = self.key_for(&kept)?;
        let item = self.item(&key, item_id)?;
        // Read with this server's application, which holds every person's
        // items: only the one made for this connection's person.
        if kept.client()?.is_none() {
            let person = context.settings["client_user_id"].as_str();
            if person.is_none() || item.client_user_id.as_deref() != person {
                return Err(ConnectorError::ReauthRequired(
                    "Pluggy's item was not made for this connection's person: connect the bank again in Pluggy Connect".into(),
                ));
            }
        }
        if NEEDS_THE_PERSON.contains(&item.status.as_str()) {
            let why = item
                .error
                .and_then(|e| e.message)
                .or(item.execution_status)
                .unwrap_or_default();
            return Err(ConnectorError::ReauthRequired(format!(
                "the bank wants you at Pluggy ({}: {why}): update the item in Pluggy, then sync again",
                item.status
            )));
        }
        let mut accounts = Vec::new();
        let mut notices = Vec::new();
        // Pluggy could not bring the item up to date: what it holds is
        // read, and the connection says it may be old.
        if item.status == "OUTDATED" {
            let why = item
                .error
                .as_ref()
                .and_then(|e| e.message.clone())
                .or(item.execution_status.clone())
                .unwrap_or_default();
            notices.push(format!(
                "Pluggy could not update this bank lately ({why}): what it shows may be old"
            ));
        }
        for account in self.accounts(&key, item_id)? {
            match self.account(&key, account, context)? {
                Ok(account) => accounts.push(account),
                Err(notice) => notices.push(notice),
            }
        }
        accounts.extend(self.investment_accounts(&key, item_id, context.now)?);
        Ok(ProviderSnapshot {
            institution: institution(&item),
            accounts,
            notices,
            // A pending transaction may come back posted under a new id.
            pending_match: Some(PendingMatchRule::default()),
            complete: true,
        })
    }

    /// Pluggy Connect, where this server has a Pluggy application.
    fn connect_widget(
        &self,
        repairing: Option<&Value>,
        person: UserId,
    ) -> Result<Option<ConnectWidget>, ConnectorError> {
        self.widget(repairing, person)
    }

    fn connect_launcher(&self) -> Option<&'static str> {
        self.config
            .server_application
            .as_ref()
            .map(|_| include_str!("connect.js"))
    }
}

#[cfg(test)]
mod tests {
    // Test code: a failed unwrap is a failed test, with its message.
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn a_day_is_as_written_at_midnight_else_sao_paulos() {
        let day = |text| day(text).unwrap().to_string();
        assert_eq!(day("2026-03-10T00:00:00.000Z"), "2026-03-10");
        // 01:30 UTC is 22:30 the evening before in São Paulo.
        assert_eq!(day("2026-03-10T01:30:00.000Z"), "2026-03-09");
        assert_eq!(day("2026-03-10T15:00:00.000Z"), "2026-03-10");
        assert!(super::day("10/03/2026").is_err());
    }

    #[test]
    fn a_purchase_abroad_is_in_the_accounts_currency_only_where_pluggy_converted_it() {
        let t = |converted: Option<&str>| -> Transaction {
            let mut t = json!({"id": "t", "description": "NETFLIX.COM", "currencyCode": "USD",
                "amount": 19.99, "date": "2026-03-10T00:00:00.000Z", "status": "POSTED"});
            if let Some(converted) = converted {
                t["amountInAccountCurrency"] = serde_json::from_str(converted).unwrap();
            }
            serde_json::from_value(t).unwrap()
        };
        let converted = transaction(Side::Credit, t(Some("104.35")), "BRL").unwrap();
        assert_eq!((converted.amount.to_string(), converted.currency.as_str()), ("-104.35".to_owned(), "BRL"));
        let own = transaction(Side::Credit, t(None), "BRL").unwrap();
        assert_eq!((own.amount.to_string(), own.currency.as_str()), ("-19.99".to_owned(), "USD"));
    }

    #[test]
    fn an_id_stays_one_path_segment() {
        assert_eq!(path_segment("0b4c-7e2a_X").unwrap(), "0b4c-7e2a_X");
        assert_eq!(path_segment("a/b c.d").unwrap(), "a%2Fb%20c%2Ed");
        for nothing in ["", ".", "..", "..."] {
            assert!(path_segment(nothing).is_err(), "{nothing}");
        }
    }

    #[test]
    fn a_kept_pair_reads_whole_or_not_at_all() {
        let read = |text: &str| serde_json::from_str::<Kept>(text).unwrap().client();
        // As connections made before this server had an application kept it.
        let own = read(r#"{"client_id":"i","client_secret":"s","item_id":"x"}"#).unwrap();
        assert_eq!(own.map(|c| c.client_id).as_deref(), Some("i"));
        assert!(read(r#"{"item_id":"x"}"#).unwrap().is_none(), "the server's");
        for half in [r#"{"client_id":"i","item_id":"x"}"#, r#"{"client_secret":"s"}"#] {
            assert!(read(half).is_err(), "{half}: not the server's");
        }
        let written = serde_json::to_string(&Kept::new(None, "x")).unwrap();
        assert_eq!(written, r#"{"item_id":"x"}"#);
    }

    #[test]
    fn an_item_id_that_is_no_uuid_is_refused() {
        assert!(is_item_id("0b4c7e2a-1f3d-4e5a-8b6c-9d0e1f2a3b4c"));
        for bad in ["", "..", "a/b", "item id", "0b4c7e2a?x=1"] {
            assert!(!is_item_id(bad), "{bad}");
        }
    }
}
