//! Akahu (akahu.nz, the enduring API `v1` as its developer docs of March
//! 2026 and its JS SDK 2.5 describe it, docs/providers.md): New Zealand
//! banks. Every call carries the user's token (`Authorization: Bearer`)
//! and the app's token (`X-Akahu-ID`). Two ways to connect:
//!
//! - **Personal app**: the user made an app at my.akahu.nz for their own
//!   accounts and pastes its app token and their user token; both are kept
//!   sealed. Nothing for the operator to configure.
//! - **Full app** (the operator's app id and secret in configuration):
//!   OAuth at `oauth.akahu.nz` with a random `state`; the code that comes
//!   back is exchanged (`POST /token`) for the user's long-lived token.
//!
//! A sync asks Akahu for a refresh (at most once per rest period: an hour
//! for personal apps, a quarter of an hour for full apps; the refresh is
//! asynchronous, so the next sync sees it), then reads the accounts, the
//! settled transactions page by page (`cursor.next` until null, empty
//! pages included) and the pending ones, which have no ids and change:
//! they are keyed by their content and matched to the settled ones by the
//! pending-match rule. Accounts Akahu lost access to are `INACTIVE`.

use tributary_domain::enrich::hints::{CategoryHint, Hints};
use crate::connector::{
    AuthorizationReturn, ConnectRequest, ConnectorError, FetchContext, HttpAnswer, Prepared,
};
use crate::provider_http::{ProviderHttp, Refusal};
use crate::description::{
    Connect, Constructor, Description, Environment, Field, Input, Reports, ReturnAddress,
    SettingError, SetupError, Variable, constructor,
};
use crate::connector::PROVIDER_TIMEOUT;
use crate::psd2::{hex_string, record_ids};
use chrono::{DateTime, Utc};
use rand::Rng as _;
use rust_decimal::serde::{arbitrary_precision, arbitrary_precision_option};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::time::Duration;
use tributary_domain::model::{AccountKind, Provider};
use tributary_domain::money::Decimal;
use tributary_domain::pending_match::PendingMatchRule;
use tributary_domain::snapshot::*;

pub const PROVIDER: Provider = Provider::new("akahu");

pub const DESCRIPTION: Description = Description {
    provider: PROVIDER,
    name: "Akahu",
    summary: "New Zealand banks through Akahu: paste your personal app's tokens from my.akahu.nz.",
    reports: Reports::ACCOUNTS,
    connect: Connect {
        fields: &[
            Field {
                name: "app_token",
                flag: Some("app-token"),
                label: "App token (app_token_…)",
                help: "The personal app's token (app_token_…).",
                input: Input::Text { autocomplete: "off" },
                required: false,
                default: None,
                remembered_as: None,
            },
            Field {
                name: "user_token",
                flag: Some("user-token"),
                label: "User token (user_token_…)",
                help: "The user token (\"-\" reads it from standard input, keeping it out of the shell history).",
                input: Input::Secret { autocomplete: "off" },
                required: false,
                default: None,
                remembered_as: None,
            },
        ],
        note: Some("Both are on the Developers page of my.akahu.nz. If this server has its own Akahu app, leave both empty to sign in at Akahu instead."),
        hands_off: true,
        picks_institution: false,
        return_address: ReturnAddress::Sometimes,
        finish_on_return: true,
        command_help: "Connect New Zealand banks through Akahu: with a personal app's tokens (--app-token and --user-token, then it syncs), or, when the server has an Akahu app (TRIBUTARY_AKAHU_APP_TOKEN and _SECRET), through Akahu's sign-in page (--redirect; then `tributary connect finish`).",
        request: request_from,
    },
    environment: &[
        Variable {
            names: "TRIBUTARY_AKAHU_APP_TOKEN, TRIBUTARY_AKAHU_APP_SECRET",
            help: "an Akahu full app, for OAuth (without: users connect Akahu with their personal app's tokens)",
        },
        Variable {
            names: "TRIBUTARY_AKAHU_URL",
            help: "its API root [default: https://api.akahu.io/v1]",
        },
        Variable {
            names: "TRIBUTARY_AKAHU_OAUTH_URL",
            help: "its sign-in page [default: https://oauth.akahu.nz]",
        },
    ],
    configure,
};

/// Always offered (a person's own personal app needs no configuration);
/// with the operator's full app, people may also sign in at Akahu.
fn configure(env: &Environment<'_>) -> Result<Option<Constructor>, SettingError> {
    let app = env
        .both_or_neither("TRIBUTARY_AKAHU_APP_TOKEN", "TRIBUTARY_AKAHU_APP_SECRET")?
        .map(|(app_token, app_secret)| AkahuApp {
            app_token,
            app_secret,
        });
    let config = AkahuConfig {
        base_url: env
            .get("TRIBUTARY_AKAHU_URL")
            .unwrap_or_else(|| DEFAULT_BASE_URL.to_owned()),
        oauth_url: env
            .get("TRIBUTARY_AKAHU_OAUTH_URL")
            .unwrap_or_else(|| DEFAULT_OAUTH_URL.to_owned()),
        app,
        timeout: PROVIDER_TIMEOUT,
    };
    Ok(constructor(move || {
        AkahuConnector::new(config.clone()).map_err(|err| SetupError::new("Akahu", err))
    }))
}

/// A personal app's two tokens, or neither and a return address (the
/// server's own app, through Akahu's sign-in page).
fn request_from(
    answers: &crate::description::Answers<'_>,
) -> Result<ConnectRequest, &'static str> {
    let (app_token, user_token) = (answers.get("app_token"), answers.get("user_token"));
    if app_token.is_empty() != user_token.is_empty() {
        return Err("Paste both tokens of your personal app from my.akahu.nz.");
    }
    if !app_token.is_empty() {
        return Ok(ConnectRequest {
            settings: json!({ "app_token": app_token }),
            secret: Some(user_token.to_owned()),
        });
    }
    let redirect = answers.return_address.ok_or(
        "Give both tokens of your personal app (--app-token and --user-token), or --redirect to sign in at Akahu.",
    )?;
    Ok(ConnectRequest {
        settings: json!({ "redirect": redirect }),
        secret: None,
    })
}

pub const DEFAULT_BASE_URL: &str = "https://api.akahu.io/v1";
pub const DEFAULT_OAUTH_URL: &str = "https://oauth.akahu.nz";
/// How often a personal app may ask for a refresh.
const PERSONAL_REST: chrono::Duration = chrono::Duration::hours(1);
/// A full app's default rest period.
const FULL_APP_REST: chrono::Duration = chrono::Duration::minutes(15);
/// Transactions asked for on a first sync; later from 14 days before the
/// last one.
const HISTORY_DAYS: i64 = 365;
const OVERLAP_DAYS: i64 = 14;
/// A listing ends here even if Akahu keeps paging.
const MAX_PAGES: usize = 10_000;

/// The operator's full app, for OAuth.
#[derive(Clone)]
pub struct AkahuApp {
    pub app_token: String,
    pub app_secret: String,
}

impl std::fmt::Debug for AkahuApp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AkahuApp")
            .field("app_token", &self.app_token)
            .finish_non_exhaustive()
    }
}

#[derive(Clone)]
pub struct AkahuConfig {
    pub base_url: String,
    pub oauth_url: String,
    pub app: Option<AkahuApp>,
    pub timeout: Duration,
}

impl std::fmt::Debug for AkahuConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AkahuConfig")
            .field("base_url", &self.base_url)
            .field("oauth_url", &self.oauth_url)
            .field("full_app", &self.app.is_some())
            .finish_non_exhaustive()
    }
}

pub struct AkahuConnector {
    config: AkahuConfig,
    http: ProviderHttp,
}

impl std::fmt::Debug for AkahuConnector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AkahuConnector")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

/// The tokens a connection's calls carry, sealed with it.
#[derive(Debug, Serialize, Deserialize)]
struct Tokens {
    app_token: String,
    user_token: String,
    /// A personal app (an hour between refreshes) or the operator's.
    personal: bool,
}

fn refusal(refused: &Refusal<'_>) -> ConnectorError {
    let body: Value = serde_json::from_str(refused.body).unwrap_or(Value::Null);
    let message = body["error_description"]
        .as_str()
        .or(body["error"].as_str())
        .or(body["message"].as_str())
        .unwrap_or_default()
        .to_owned();
    let what = refused.what;
    match refused.status.as_u16() {
        // Since September 2024 only a dead token answers 401.
        401 => ConnectorError::ReauthRequired(format!(
            "Akahu no longer accepts the user's token ({message}): connect again"
        )),
        // 403 is a missing or wrong app token, or a permission: not the user's.
        403 => ConnectorError::Misconfigured(format!(
            "Akahu refused {what} ({message}): check the app token and its permissions"
        )),
        _ => {
            let answer = HttpAnswer {
                provider: "Akahu",
                what,
                status: refused.status,
                detail: &message,
                retry_after: refused.seconds_header(&["retry-after"]),
            };
            answer.error(|_| None)
        }
    }
}

#[derive(Debug, Deserialize)]
struct Items<T> {
    items: Vec<T>,
    #[serde(default)]
    cursor: Option<Cursor>,
}

#[derive(Debug, Deserialize)]
struct Cursor {
    #[serde(default)]
    next: Option<String>,
}

#[derive(Debug, Deserialize)]
struct Bank {
    #[serde(rename = "_id")]
    id: String,
    name: String,
    #[serde(default)]
    logo: Option<String>,
}

#[derive(Debug, Deserialize)]
struct Balance {
    currency: String,
    #[serde(with = "arbitrary_precision")]
    current: Decimal,
    #[serde(default, with = "arbitrary_precision_option")]
    available: Option<Decimal>,
    /// A card's or loan's limit.
    #[serde(default, with = "arbitrary_precision_option")]
    limit: Option<Decimal>,
}

#[derive(Debug, Deserialize)]
struct Account {
    #[serde(rename = "_id")]
    id: String,
    connection: Bank,
    name: String,
    status: String,
    #[serde(default)]
    formatted_account: Option<String>,
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    balance: Option<Balance>,
}

impl Account {
    fn kind(&self) -> AccountKind {
        match self.kind.as_str() {
            "CHECKING" => AccountKind::Checking,
            "SAVINGS" | "TERMDEPOSIT" => AccountKind::Savings,
            "CREDITCARD" => AccountKind::CreditCard,
            "LOAN" => AccountKind::Loan,
            "KIWISAVER" | "INVESTMENT" => AccountKind::Brokerage,
            _ => AccountKind::Other,
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
struct Merchant {
    name: String,
}

/// A transaction, settled (with its `_id`) or pending (without one).
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Transaction {
    #[serde(rename = "_id", default, skip_serializing_if = "Option::is_none")]
    id: Option<String>,
    #[serde(rename = "_account")]
    account: String,
    date: DateTime<Utc>,
    description: String,
    #[serde(with = "arbitrary_precision")]
    amount: Decimal,
    #[serde(rename = "type", default)]
    kind: Option<String>,
    /// Only read (an enriched transaction's), never part of a pending
    /// transaction's identity.
    #[serde(default, skip_serializing)]
    merchant: Option<Merchant>,
    /// An enriched transaction's NZFCC category; only read.
    #[serde(default, skip_serializing)]
    category: Option<AkahuCategory>,
}

/// Akahu's category of a transaction: an NZFCC category, and the
/// personal-finance group it is in.
#[derive(Debug, Clone, Deserialize)]
struct AkahuCategory {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    groups: Option<CategoryGroups>,
}

#[derive(Debug, Clone, Deserialize)]
struct CategoryGroups {
    #[serde(default)]
    personal_finance: Option<CategoryGroup>,
}

#[derive(Debug, Clone, Deserialize)]
struct CategoryGroup {
    #[serde(default)]
    name: Option<String>,
}

impl AkahuCategory {
    /// The category's name, then its group's, as hints.
    fn hints(&self) -> Hints {
        let group = self
            .groups
            .as_ref()
            .and_then(|g| g.personal_finance.as_ref())
            .and_then(|g| g.name.clone());
        Hints(
            [self.name.clone(), group]
                .into_iter()
                .flatten()
                .map(CategoryHint::Nzfcc)
                .collect(),
        )
    }
}

impl AkahuConnector {
    pub fn new(config: AkahuConfig) -> Result<Self, reqwest::Error> {
        let http = ProviderHttp::new("Akahu", config.timeout)?;
        Ok(Self { config, http })
    }

    fn request(
        &self,
        method: reqwest::Method,
        path: &str,
        tokens: &Tokens,
    ) -> reqwest::blocking::RequestBuilder {
        self.http
            .client
            .request(
                method,
                format!("{}/{path}", self.config.base_url.trim_end_matches('/')),
            )
            .bearer_auth(&tokens.user_token)
            .header("X-Akahu-ID", &tokens.app_token)
    }

    fn get<T: serde::de::DeserializeOwned>(
        &self,
        tokens: &Tokens,
        path: &str,
        query: &[(&str, String)],
        what: &str,
    ) -> Result<T, ConnectorError> {
        let response = self.http.send(
            self.request(reqwest::Method::GET, path, tokens)
                .query(query),
            what,
        )?;
        self.http.json(response, what, refusal)
    }

    /// Asks for fresh data when the rest period since the last sync has
    /// passed; a refusal (too soon, no permission) only means the data is
    /// as fresh as Akahu's own schedule keeps it.
    fn refresh(&self, tokens: &Tokens, context: &FetchContext<'_>) -> Option<String> {
        let rest = if tokens.personal {
            PERSONAL_REST
        } else {
            FULL_APP_REST
        };
        if context
            .last_synced_at
            .is_some_and(|last| context.now - last < rest)
        {
            return None;
        }
        let what = "a refresh";
        let answer = self
            .http
            .send(self.request(reqwest::Method::POST, "refresh", tokens), what)
            .and_then(|response| self.http.json::<Value>(response, what, refusal));
        answer
            .err()
            .map(|err| format!("Akahu did not refresh the data: {err}"))
    }

    /// Settled transactions in `(start, end]`, page by page.
    fn settled(
        &self,
        tokens: &Tokens,
        start: &str,
        end: &str,
    ) -> Result<Vec<Transaction>, ConnectorError> {
        let mut all = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..MAX_PAGES {
            let mut query = vec![("start", start.to_owned()), ("end", end.to_owned())];
            if let Some(cursor) = &cursor {
                query.push(("cursor", cursor.clone()));
            }
            let page: Items<Transaction> =
                self.get(tokens, "transactions", &query, "the transactions")?;
            all.extend(page.items);
            // An empty page may still have more after it: the cursor says.
            match page.cursor.and_then(|c| c.next) {
                Some(next) => cursor = Some(next),
                None => return Ok(all),
            }
        }
        Err(ConnectorError::Protocol(format!(
            "Akahu kept paging the transactions past {MAX_PAGES} pages"
        )))
    }

    fn tokens(text: Option<&str>) -> Result<Tokens, ConnectorError> {
        text.map(serde_json::from_str)
            .transpose()
            .map_err(|err| ConnectorError::Misconfigured(format!("the kept tokens: {err}")))?
            .ok_or_else(|| {
                ConnectorError::ReauthRequired(
                    "the bank was not connected yet: sign in at Akahu".into(),
                )
            })
    }

    fn prepared(settings: Value, credentials: Option<String>) -> Prepared {
        Prepared {
            // Akahu reaches many banks: each account names its own.
            institution: SnapshotInstitution {
                provider_institution_id: "akahu".into(),
                name: "Akahu".into(),
                logo_url: None,
            },
            settings,
            credentials,
            consent: None,
        }
    }
}

fn transaction(t: &Transaction, provider_id: String) -> SnapshotTransaction {
    SnapshotTransaction {
        provider_id,
        pending_provider_id: None,
        is_pending: t.id.is_none(),
        date: t.date.date_naive(),
        amount: t.amount,
        currency: String::new(),
        merchant: t.merchant.as_ref().map(|m| m.name.clone()),
        description: Some(t.description.clone()),
        hints: t.category.as_ref().map(AkahuCategory::hints).unwrap_or_default(),
    }
}

impl crate::connector::Connector for AkahuConnector {
    fn provider(&self) -> Provider {
        PROVIDER
    }

    fn prepare(&self, request: &ConnectRequest) -> Result<Prepared, ConnectorError> {
        let app_token = request.settings.get("app_token").and_then(Value::as_str);
        if let (Some(app_token), Some(user_token)) = (app_token, request.secret.as_deref()) {
            // A personal app: both tokens from the user, checked now.
            let tokens = Tokens {
                app_token: app_token.trim().to_owned(),
                user_token: user_token.trim().to_owned(),
                personal: true,
            };
            let _: Items<Value> =
                self.get(&tokens, "accounts", &[], "the accounts")
                    .map_err(|err| match err {
                        ConnectorError::ReauthRequired(why)
                        | ConnectorError::Misconfigured(why) => {
                            ConnectorError::InvalidCredentials(why)
                        }
                        other => other,
                    })?;
            let credentials = serde_json::to_string(&tokens)
                .map_err(|err| ConnectorError::Protocol(format!("keeping the tokens: {err}")))?;
            return Ok(Self::prepared(
                json!({"mode": "personal"}),
                Some(credentials),
            ));
        }
        let app = self.config.app.as_ref().ok_or_else(|| {
            ConnectorError::Misconfigured(
                "connecting Akahu needs the personal app's tokens (this server has no Akahu app for OAuth)".into(),
            )
        })?;
        let redirect = request
            .settings
            .get("redirect")
            .and_then(Value::as_str)
            .ok_or_else(|| {
                ConnectorError::Misconfigured("connecting Akahu needs a return URL".into())
            })?;
        let mut state = [0u8; 16];
        rand::rng().fill_bytes(&mut state);
        let state = hex_string(&state);
        let mut link = url::Url::parse(&self.config.oauth_url).map_err(|err| {
            ConnectorError::Misconfigured(format!("TRIBUTARY_AKAHU_OAUTH_URL: {err}"))
        })?;
        link.query_pairs_mut()
            .append_pair("response_type", "code")
            .append_pair("client_id", &app.app_token)
            .append_pair("redirect_uri", redirect)
            .append_pair("scope", "ENDURING_CONSENT")
            .append_pair("state", &state);
        Ok(Self::prepared(
            json!({"mode": "oauth", "link": link.as_str(), "state": state, "redirect": redirect}),
            None,
        ))
    }

    fn complete(
        &self,
        settings: &Value,
        _credentials: Option<&str>,
        returned: &AuthorizationReturn,
    ) -> Result<Option<Prepared>, ConnectorError> {
        if settings["mode"] != "oauth" {
            return Ok(None);
        }
        let code = returned.code_for(settings["state"].as_str(), "Akahu")?;
        let app = self.config.app.as_ref().ok_or_else(|| {
            ConnectorError::Misconfigured("this server has no Akahu app for OAuth".into())
        })?;
        #[derive(Deserialize)]
        struct Token {
            access_token: String,
        }
        let what = "the token exchange";
        let response = self.http.send(
            self.http
                .client
                .post(format!(
                    "{}/token",
                    self.config.base_url.trim_end_matches('/')
                ))
                .json(&json!({
                    "grant_type": "authorization_code",
                    "code": code,
                    "redirect_uri": settings["redirect"],
                    "client_id": app.app_token,
                    "client_secret": app.app_secret,
                })),
            what,
        )?;
        let token: Token = self.http.json(response, what, |refused| {
            // An OAuth error here is about the code: start again.
            match refusal(refused) {
                ConnectorError::Protocol(why) | ConnectorError::ReauthRequired(why) => {
                    ConnectorError::InvalidCredentials(why)
                }
                other => other,
            }
        })?;
        let tokens = Tokens {
            app_token: app.app_token.clone(),
            user_token: token.access_token,
            personal: false,
        };
        let credentials = serde_json::to_string(&tokens)
            .map_err(|err| ConnectorError::Protocol(format!("keeping the tokens: {err}")))?;
        Ok(Some(Self::prepared(
            json!({"mode": "oauth"}),
            Some(credentials),
        )))
    }

    fn fetch(&self, context: &FetchContext<'_>) -> Result<ProviderSnapshot, ConnectorError> {
        let tokens = Self::tokens(context.credentials)?;
        let mut notices: Vec<String> = self.refresh(&tokens, context).into_iter().collect();
        let accounts: Items<Account> = self.get(&tokens, "accounts", &[], "the accounts")?;
        let inactive: Vec<&Account> = accounts
            .items
            .iter()
            .filter(|a| a.status != "ACTIVE")
            .collect();
        if !accounts.items.is_empty() && inactive.len() == accounts.items.len() {
            return Err(ConnectorError::ReauthRequired(
                "Akahu lost access to the bank (its accounts are INACTIVE): connect again".into(),
            ));
        }
        notices.extend(inactive.iter().map(|a| {
            format!(
                "{} at {}: Akahu lost access to it; connect the bank again",
                a.name, a.connection.name
            )
        }));
        let now = context.now;
        let start = context
            .last_synced_at
            .map_or(now - chrono::Duration::days(HISTORY_DAYS), |last| {
                last - chrono::Duration::days(OVERLAP_DAYS)
            });
        let (start, end) = (
            start.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            now.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        );
        let settled = self.settled(&tokens, &start, &end)?;
        let pending: Items<Transaction> = self.get(
            &tokens,
            "transactions/pending",
            &[("start", start.clone()), ("end", end.clone())],
            "the pending transactions",
        )?;
        let mut by_account: HashMap<String, Vec<SnapshotTransaction>> = HashMap::new();
        for t in &settled {
            let id = t.id.clone().unwrap_or_default();
            by_account
                .entry(t.account.clone())
                .or_default()
                .push(transaction(t, id));
        }
        // Pending transactions have no ids: their content is their key.
        let pending_ids = record_ids(&pending.items, |_| None, "akahu-pending:");
        for (t, id) in pending.items.iter().zip(pending_ids) {
            by_account
                .entry(t.account.clone())
                .or_default()
                .push(transaction(t, id));
        }
        let snapshot_accounts = accounts
            .items
            .iter()
            .map(|a| {
                let currency = a
                    .balance
                    .as_ref()
                    .map_or_else(|| "NZD".to_owned(), |b| b.currency.clone());
                let mut transactions = by_account.remove(&a.id).unwrap_or_default();
                for t in &mut transactions {
                    t.currency = currency.clone();
                }
                SnapshotAccount {
                    balance_history: Vec::new(),
                    provider_account_id: a.id.clone(),
                    institution: Some(SnapshotInstitution {
                        provider_institution_id: a.connection.id.clone(),
                        name: a.connection.name.clone(),
                        logo_url: a.connection.logo.clone(),
                    }),
                    name: a.name.clone(),
                    kind: a.kind(),
                    currency: currency.clone(),
                    mask: a.formatted_account.as_ref().map(|n| {
                        let digits: String = n.chars().filter(char::is_ascii_digit).collect();
                        crate::mask::last_four(&digits)
                    }),
                    balance: a.balance.as_ref().map(|b| SnapshotBalance {
                        current: b.current,
                        available: b.available,
                        currency: currency.clone(),
                        as_of: now,
                    }),
                    transactions,
                    investment_transactions: Vec::new(),
                    liability: a.balance.as_ref().and_then(|b| b.limit).map(|limit| {
                        SnapshotLiability {
                            credit_limit: Some(limit),
                            ..SnapshotLiability::default()
                        }
                    }),
                    holdings: None,
                }
            })
            .collect();
        Ok(ProviderSnapshot {
            institution: SnapshotInstitution {
                provider_institution_id: "akahu".into(),
                name: "Akahu".into(),
                logo_url: None,
            },
            accounts: snapshot_accounts,
            notices,
            // A settled transaction has a new id and no link to its pending
            // one: the pair is recognised by the rule.
            pending_match: Some(PendingMatchRule::default()),
            complete: true,
        })
    }
}
