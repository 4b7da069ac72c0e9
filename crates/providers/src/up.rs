//! Up (up.com.au, Australia), through the person's own personal access
//! token: no aggregator, no contract. Written against Up's API `v1` as its
//! OpenAPI document (github.com/up-banking/api, `v1/openapi.json`)
//! describes it (docs/providers.md, "Up").
//!
//! - `prepare`: the token is checked at once (`GET /util/ping`: 200, or 401
//!   for a token that is wrong, expired or revoked) and kept sealed.
//! - `fetch`: `/accounts`, then each account's `/accounts/{id}/transactions`
//!   (newest first; `filter[since]` 35 days before the last sync, or
//!   before the oldest held transaction stored, the whole history on the
//!   first), page by page along `links.next` (only on the configured
//!   API's own origin).
//!
//! A transaction is `HELD` (pending) until it is `SETTLED`, normally under
//! the same id, so the stored row turns posted in place; on the rare
//! occasions Up deletes the held one and creates the settled one anew, the
//! pending-match rule pairs them. Amounts are decimal strings, negative
//! for money out; an account's `balance` is its available balance (held
//! amounts taken off), the one balance Up gives.

use crate::connector::{
    ConnectRequest, ConnectorError, FetchContext, HttpAnswer, Prepared,
};
use crate::description::{
    Answers, Connect, Constructor, Description, Environment, Reports, ReturnAddress, SettingError,
    Variable,
};
use crate::personal_token::{self, TokenBankConfig};
use crate::provider_http::{ProviderHttp, Refusal};
use chrono::{DateTime, FixedOffset};
use serde::Deserialize;
use serde_json::Value;
use tributary_domain::model::{AccountKind, Provider};
use tributary_domain::money::{Decimal, parse_decimal};
use tributary_domain::pending_match::PendingMatchRule;
use tributary_domain::snapshot::*;

pub const PROVIDER: Provider = Provider::new("up");

pub const DESCRIPTION: Description = Description {
    provider: PROVIDER,
    name: "Up",
    summary: "Up (Australia): paste the personal access token you make in the Up app; no aggregator in between.",
    reports: Reports::ACCOUNTS,
    connect: Connect {
        fields: &[personal_token::token_field(
            "Personal access token (up:yeah:…)",
            "Your Up personal access token (\"-\" reads it from standard input, keeping it out of the shell history).",
        )],
        note: Some("Make one in the Up app (Data sharing, Personal Access Token) or at api.up.com.au. It is checked at once and kept sealed; making a new one at Up ends the old one, so connect again with the new one."),
        hands_off: false,
        picks_institution: false,
        return_address: ReturnAddress::Never,
        finish_on_return: false,
        command_help: "Connect your Up accounts with your personal access token (--token, or - to paste it), then sync.",
        request: request_from,
    },
    environment: &[Variable {
        names: "TRIBUTARY_UP_URL",
        help: "its API root [default: https://api.up.com.au/api/v1]",
    }],
    configure,
};

pub const DEFAULT_BASE_URL: &str = "https://api.up.com.au/api/v1";
/// Records a page asks for (Up's maximum page size, as its users report it).
const PAGE_SIZE: &str = "100";
/// Later syncs read from this long before the last one. Up filters by
/// when a transaction was made, and a card hold (a hotel, a car) can stay
/// held for weeks: a shorter window would lose sight of it, and a sync
/// would take it for gone.
const OVERLAP_DAYS: i64 = 35;
/// A listing ends here even if Up keeps paging.
const MAX_PAGES: usize = 10_000;

/// Always offered: a person's own token needs no configuration.
fn configure(env: &Environment<'_>) -> Result<Option<Constructor>, SettingError> {
    Ok(personal_token::configure(
        env,
        ("TRIBUTARY_UP_URL", DEFAULT_BASE_URL),
        ("Up", UpConnector::new),
    ))
}

fn request_from(answers: &Answers<'_>) -> Result<ConnectRequest, &'static str> {
    personal_token::request_from(answers, "Paste your Up personal access token.")
}

pub type UpConfig = TokenBankConfig;

#[derive(Debug)]
pub struct UpConnector {
    config: UpConfig,
    http: ProviderHttp,
}

/// Up's error document: `{"errors": [{"status", "title", "detail"}]}`.
fn refusal(refused: &Refusal<'_>) -> ConnectorError {
    let body: Value = serde_json::from_str(refused.body).unwrap_or(Value::Null);
    let first = &body["errors"][0];
    let message = first["detail"]
        .as_str()
        .or(first["title"].as_str())
        .unwrap_or_default()
        .to_owned();
    let what = refused.what;
    if refused.status == reqwest::StatusCode::UNAUTHORIZED {
        return ConnectorError::ReauthRequired(format!(
            "Up no longer accepts the personal access token ({message}): make a new one in the Up app and connect again"
        ));
    }
    let answer = HttpAnswer {
        provider: "Up",
        what,
        status: refused.status,
        detail: &message,
        retry_after: refused.seconds_header(&["retry-after"]),
    };
    answer.error(|_| None)
}

#[derive(Debug, Deserialize)]
struct Page<T> {
    data: Vec<T>,
    links: Links,
}

#[derive(Debug, Deserialize)]
struct Links {
    #[serde(default)]
    next: Option<String>,
}

#[derive(Debug, Deserialize)]
struct Money {
    #[serde(rename = "currencyCode")]
    currency_code: String,
    value: String,
}

impl Money {
    fn amount(&self) -> Result<Decimal, ConnectorError> {
        parse_decimal(&self.value).map_err(|err| {
            ConnectorError::Protocol(format!("Up sent `{}` as an amount: {err}", self.value))
        })
    }
}

#[derive(Debug, Deserialize)]
struct Account {
    id: String,
    attributes: AccountAttributes,
}

#[derive(Debug, Deserialize)]
struct AccountAttributes {
    #[serde(rename = "displayName")]
    display_name: String,
    #[serde(rename = "accountType")]
    account_type: String,
    balance: Money,
}

#[derive(Debug, Deserialize)]
struct Transaction {
    id: String,
    attributes: TransactionAttributes,
}

#[derive(Debug, Deserialize)]
struct TransactionAttributes {
    status: String,
    #[serde(rename = "rawText", default)]
    raw_text: Option<String>,
    description: String,
    #[serde(default)]
    message: Option<String>,
    amount: Money,
    /// With Up's own offset (Australian time): a transaction's date is
    /// the day it was there, not in UTC.
    #[serde(rename = "settledAt", default)]
    settled_at: Option<DateTime<FixedOffset>>,
    #[serde(rename = "createdAt")]
    created_at: DateTime<FixedOffset>,
}

fn kind(account_type: &str) -> AccountKind {
    match account_type {
        "TRANSACTIONAL" => AccountKind::Checking,
        "SAVER" => AccountKind::Savings,
        "HOME_LOAN" => AccountKind::Loan,
        // "Currently returned values", says Up: more may come.
        _ => AccountKind::Other,
    }
}

impl UpConnector {
    pub fn new(config: UpConfig) -> Result<Self, reqwest::Error> {
        let http = ProviderHttp::new("Up", config.timeout)?;
        Ok(Self { config, http })
    }

    fn root(&self) -> &str {
        self.config.base_url.trim_end_matches('/')
    }

    /// A `GET` of `url` (a path below the API root, or a `links.next`).
    fn get<T: serde::de::DeserializeOwned>(
        &self,
        token: &str,
        url: &str,
        query: &[(&str, String)],
        what: &str,
    ) -> Result<T, ConnectorError> {
        let response = self.http.send(
            self.http.client.get(url).bearer_auth(token).query(query),
            what,
        )?;
        self.http.json(response, what, refusal)
    }

    /// Every record of a listing at `path`, following `links.next`.
    fn all<T: serde::de::DeserializeOwned>(
        &self,
        token: &str,
        path: &str,
        query: Vec<(&str, String)>,
        what: &str,
    ) -> Result<Vec<T>, ConnectorError> {
        let mut records = Vec::new();
        let mut page: Page<T> = self.get(token, &format!("{}/{path}", self.root()), &query, what)?;
        let mut followed = std::collections::HashSet::new();
        for _ in 0..MAX_PAGES {
            records.append(&mut page.data);
            let Some(next) = page.links.next else {
                return Ok(records);
            };
            // The next page's address carries its own query; a link to
            // anywhere but Up's API is not followed with the token.
            if !same_origin(&next, self.root()) {
                return Err(ConnectorError::Protocol(format!(
                    "Up's next page of {what} is not on its API ({next})"
                )));
            }
            if !followed.insert(next.clone()) {
                return Err(ConnectorError::Protocol(format!(
                    "Up gave the same next page of {what} twice"
                )));
            }
            page = self.get(token, &next, &[], what)?;
        }
        Err(ConnectorError::Protocol(format!(
            "Up kept paging {what} past {MAX_PAGES} pages"
        )))
    }
}

/// Whether `link` is on the same scheme, host and port as `root`.
fn same_origin(link: &str, root: &str) -> bool {
    match (url::Url::parse(link), url::Url::parse(root)) {
        (Ok(link), Ok(root)) => link.origin() == root.origin(),
        _ => false,
    }
}

fn transaction(t: Transaction) -> Result<SnapshotTransaction, ConnectorError> {
    let a = t.attributes;
    let is_pending = match a.status.as_str() {
        "HELD" => true,
        "SETTLED" => false,
        other => {
            return Err(ConnectorError::Protocol(format!(
                "Up sent transaction {} with status `{other}` (HELD or SETTLED expected)",
                t.id
            )));
        }
    };
    let text = [a.raw_text.as_deref(), a.message.as_deref()]
        .into_iter()
        .flatten()
        .filter(|t| !t.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    Ok(SnapshotTransaction {
        provider_id: t.id,
        pending_provider_id: None,
        is_pending,
        // When it settled; a held one's when it was made.
        date: a.settled_at.unwrap_or(a.created_at).date_naive(),
        amount: a.amount.amount()?,
        currency: a.amount.currency_code,
        merchant: Some(a.description.clone()).filter(|d| !d.is_empty()),
        description: Some(if text.is_empty() { a.description } else { text }),
        hints: Default::default(),
    })
}

impl crate::connector::Connector for UpConnector {
    fn provider(&self) -> Provider {
        PROVIDER
    }

    fn prepare(&self, request: &ConnectRequest) -> Result<Prepared, ConnectorError> {
        personal_token::prepare(
            personal_token::given(request, ("Up", "personal access token"))?,
            |token| {
                let _: Value =
                    self.get(token, &format!("{}/util/ping", self.root()), &[], "the token check")?;
                Ok(())
            },
            "Up does not accept this personal access token: check it, or make a new one in the Up app",
            institution(),
        )
    }

    fn fetch(&self, context: &FetchContext<'_>) -> Result<ProviderSnapshot, ConnectorError> {
        let token = personal_token::kept(context)?;
        let accounts: Vec<Account> = self.all(
            token,
            "accounts",
            vec![("page[size]", PAGE_SIZE.to_owned())],
            "the accounts",
        )?;
        let mut snapshot_accounts = Vec::new();
        for account in accounts {
            let mut query = vec![("page[size]", PAGE_SIZE.to_owned())];
            if let Some(since) = context.reach_back_for(&account.id, OVERLAP_DAYS) {
                query.push((
                    "filter[since]",
                    since.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
                ));
            }
            let transactions: Vec<Transaction> = self.all(
                token,
                &format!("accounts/{}/transactions", account.id),
                query,
                "the transactions",
            )?;
            let a = account.attributes;
            let balance = a.balance.amount()?;
            snapshot_accounts.push(SnapshotAccount {
                provider_account_id: account.id,
                institution: None,
                name: a.display_name,
                kind: kind(&a.account_type),
                currency: a.balance.currency_code.clone(),
                mask: None,
                balance: Some(SnapshotBalance {
                    current: balance,
                    available: Some(balance),
                    currency: a.balance.currency_code,
                    as_of: context.now,
                }),
                balance_history: Vec::new(),
                transactions: transactions
                    .into_iter()
                    .map(transaction)
                    .collect::<Result<_, _>>()?,
                investment_transactions: Vec::new(),
                liability: None,
                holdings: None,
            });
        }
        Ok(ProviderSnapshot {
            institution: institution(),
            accounts: snapshot_accounts,
            notices: Vec::new(),
            // A held transaction settles under its id; when Up deletes it
            // and creates the settled one anew, the rule pairs them.
            pending_match: Some(PendingMatchRule::default()),
            complete: true,
        })
    }
}

fn institution() -> SnapshotInstitution {
    SnapshotInstitution {
        provider_institution_id: "up".into(),
        name: "Up".into(),
        logo_url: None,
    }
}
