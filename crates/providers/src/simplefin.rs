//! SimpleFIN (simplefin.org): a user gives a one-time *setup token*, which is
//! the base64 of a claim URL; claiming it (POST) returns an *access URL* with
//! Basic credentials in it, which is stored sealed. Syncs then read
//! `GET {access URL}/accounts?version=2&pending=1&start-date=…`.
//!
//! The claim and access URLs come from the user, so every request goes
//! through the outbound guard (docs/operations.md#outbound-requests): a
//! claim or access URL inside a private network is refused before anything
//! is connected to, redirects are checked hop by hop, and a failure to reach
//! the server reads the same whatever answered (or did not) at the address.
//!
//! Status handling (docs/providers.md): 403 on claim = token already claimed
//! or invalid; 403 on accounts = access revoked; 402 = the user's SimpleFIN
//! subscription needs payment; both need the user (REAUTH_REQUIRED, no
//! retry). 429 and 5xx and timeouts are transient (retried, `Retry-After`
//! honoured). A body that is not the JSON we expect is a protocol error.

use crate::connector::{
    ConnectRequest, Connector, ConnectorError, FetchContext, HttpAnswer, Prepared,
    classify_http_status,
};
use base64::Engine as _;
use chrono::{DateTime, Utc};
use reqwest::StatusCode;
use reqwest::blocking::Response;
use reqwest::header::{CONTENT_TYPE, RETRY_AFTER};
use serde::Deserialize;
use std::sync::Arc;
use std::time::Duration;
use crate::description::{
    Answers, Connect, Constructor, Description, Environment, Field, Input, Reports, ReturnAddress,
    SettingError, SetupError,
};
use crate::connector::PROVIDER_TIMEOUT;
use tributary_domain::model::{AccountKind, Provider};
use tributary_domain::money::{Decimal, parse_decimal};
use tributary_domain::reconcile::PendingMatchRule;
use tributary_domain::snapshot::*;
use tributary_outbound::{Guard, GuardedClient, Redirects, Refusal};

pub const PROVIDER: Provider = Provider::new("simplefin");

pub const DESCRIPTION: Description = Description {
    provider: PROVIDER,
    name: "SimpleFIN Bridge",
    summary: "US and Canadian banks through SimpleFIN: paste a setup token from the bridge.",
    reports: Reports::ACCOUNTS_AND_HOLDINGS,
    connect: Connect {
        fields: &[Field {
            name: "setup_token",
            flag: Some("setup-token"),
            label: "Setup token",
            help: "The setup token from SimpleFIN (\"-\" reads it from standard input, keeping it out of the shell history).",
            input: Input::LongSecret,
            required: true,
            default: None,
            remembered_as: None,
        }],
        note: None,
        hands_off: false,
        picks_institution: false,
        return_address: ReturnAddress::Never,
        finish_on_return: false,
        command_help: "Connect SimpleFIN with a setup token (claimed once; the access URL it yields is stored sealed) and sync it.",
        request: request_from,
    },
    environment: &[],
    configure,
};

/// Always offered: the addresses it reaches are the users' (their setup
/// tokens'), checked by the outbound guard.
fn configure(_: &Environment<'_>) -> Result<Option<Constructor>, SettingError> {
    Ok(Some(Arc::new(|guard: &Guard| {
        SimpleFinConnector::new(PROVIDER_TIMEOUT, guard)
            .map(|c| Arc::new(c) as Arc<dyn Connector>)
            .map_err(|err| SetupError::new("SimpleFIN", err))
    })))
}

fn request_from(answers: &Answers<'_>) -> Result<ConnectRequest, &'static str> {
    match answers.get("setup_token") {
        "" => Err("Paste the setup token from SimpleFIN Bridge."),
        token => Ok(ConnectRequest {
            settings: serde_json::json!({}),
            secret: Some(token.to_owned()),
        }),
    }
}

/// How far back the first sync reads.
const FIRST_SYNC_DAYS: i64 = 90;
/// Later syncs re-read this much before the previous sync, so late postings
/// and pending→posted changes are seen.
const OVERLAP_DAYS: i64 = 14;

#[derive(Debug, Clone)]
pub struct SimpleFinConnector {
    client: GuardedClient,
}

impl SimpleFinConnector {
    /// A connector whose requests reach only what `guard` allows.
    pub fn new(timeout: Duration, guard: &Guard) -> Result<Self, reqwest::Error> {
        let client = guard.blocking_client(
            reqwest::blocking::Client::builder()
                .timeout(timeout)
                .user_agent(concat!("tributary/", env!("CARGO_PKG_VERSION"))),
            Redirects::FollowedWhenAllowed,
        )?;
        Ok(Self { client })
    }
}

/// Which URL the user gave: the refusal and the failure name it.
#[derive(Debug, Clone, Copy)]
enum Aim {
    /// The setup token's claim URL (a refusal is the token's fault).
    Claim,
    /// The stored access URL (a refusal needs a new setup token).
    Access,
}

impl Aim {
    fn refused(self, refusal: &Refusal) -> ConnectorError {
        ConnectorError::Refused(match self {
            Aim::Claim => format!("the setup token's address was refused: {refusal}"),
            Aim::Access => format!(
                "the SimpleFIN access URL was refused: {refusal}; connect with a new setup token"
            ),
        })
    }

    /// A request that got no usable answer: refused by the guard, or one
    /// text for every way of not reaching the server (no connection, a
    /// reset, a TLS failure, silence), so that the message says nothing of
    /// what listens at the address.
    fn transport_error(self, err: &reqwest::Error) -> ConnectorError {
        if let Some(refusal) = tributary_outbound::refusal_in(err) {
            return self.refused(&refusal);
        }
        ConnectorError::Unavailable {
            reason: "could not reach the SimpleFIN server (no connection, or no answer in time)"
                .into(),
            retry_after: None,
        }
    }
}

fn retry_after(response: &Response) -> Option<Duration> {
    let value = response.headers().get(RETRY_AFTER)?.to_str().ok()?;
    value.trim().parse::<u64>().ok().map(Duration::from_secs)
}

/// Errors every SimpleFIN answer can carry, whatever the endpoint.
fn status_error(response: &Response, what: &str) -> Option<ConnectorError> {
    let answer = HttpAnswer {
        provider: "SimpleFIN",
        what,
        status: response.status(),
        detail: "",
        retry_after: retry_after(response),
    };
    classify_http_status(&answer, |status| {
        (status == StatusCode::PAYMENT_REQUIRED)
            .then(|| "SimpleFIN asks for payment (402): renew the SimpleFIN subscription".into())
    })
}

/// The access URL split into the address to call and its Basic credentials.
struct Access {
    base: reqwest::Url,
    username: String,
    password: String,
}

fn parse_access_url(text: &str) -> Result<Access, ConnectorError> {
    let invalid = |why: &str| {
        ConnectorError::Misconfigured(format!("the SimpleFIN access URL is unusable: {why}"))
    };
    let mut url = reqwest::Url::parse(text.trim()).map_err(|_| invalid("not a URL"))?;
    if !matches!(url.scheme(), "https" | "http") {
        return Err(invalid("not an http(s) URL"));
    }
    let username = url.username().to_owned();
    let password = url.password().unwrap_or_default().to_owned();
    if username.is_empty() {
        return Err(invalid("it carries no credentials"));
    }
    url.set_username("")
        .map_err(|()| invalid("cannot strip credentials"))?;
    url.set_password(None)
        .map_err(|()| invalid("cannot strip credentials"))?;
    Ok(Access {
        base: url,
        username,
        password,
    })
}

/// A setup token is the base64 of the claim URL.
fn claim_url(setup_token: &str) -> Result<reqwest::Url, ConnectorError> {
    let invalid = || {
        ConnectorError::InvalidCredentials(
            "this is not a SimpleFIN setup token (expected the base64 text SimpleFIN shows when you create an app connection)".into(),
        )
    };
    let compact: String = setup_token.chars().filter(|c| !c.is_whitespace()).collect();
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(&compact)
        .or_else(|_| base64::engine::general_purpose::URL_SAFE.decode(&compact))
        .map_err(|_| invalid())?;
    let url = reqwest::Url::parse(std::str::from_utf8(&bytes).map_err(|_| invalid())?)
        .map_err(|_| invalid())?;
    if !matches!(url.scheme(), "https" | "http") {
        return Err(invalid());
    }
    Ok(url)
}

impl SimpleFinConnector {
    /// Exchanges a setup token for the access URL (once: SimpleFIN answers
    /// 403 to a second claim).
    fn claim(&self, setup_token: &str) -> Result<String, ConnectorError> {
        let url = claim_url(setup_token)?;
        let response = self
            .client
            .post(url)
            .map_err(|refusal| Aim::Claim.refused(&refusal))?
            .header(reqwest::header::CONTENT_LENGTH, "0")
            .send()
            .map_err(|err| Aim::Claim.transport_error(&err))?;
        if response.status() == StatusCode::FORBIDDEN {
            return Err(ConnectorError::InvalidCredentials(
                "SimpleFIN refused the setup token (403): it was already claimed, or it is not valid; create a new one".into(),
            ));
        }
        if let Some(err) = status_error(&response, "the claim") {
            return Err(err);
        }
        let access_url = response
            .text()
            .map_err(|err| Aim::Claim.transport_error(&err))?
            .trim()
            .to_owned();
        parse_access_url(&access_url).map_err(|_| {
            ConnectorError::Protocol("SimpleFIN's claim answer is not an access URL".into())
        })?;
        Ok(access_url)
    }

    fn get_accounts(
        &self,
        access: &Access,
        start: DateTime<Utc>,
    ) -> Result<AccountSet, ConnectorError> {
        let mut url = access.base.clone();
        url.path_segments_mut()
            .map_err(|()| {
                ConnectorError::Misconfigured("the SimpleFIN access URL has no path".into())
            })?
            .pop_if_empty()
            .push("accounts");
        url.query_pairs_mut()
            .append_pair("version", "2")
            .append_pair("pending", "1")
            .append_pair("start-date", &start.timestamp().to_string());
        let response = self
            .client
            .get(url)
            .map_err(|refusal| Aim::Access.refused(&refusal))?
            .basic_auth(&access.username, Some(&access.password))
            .send()
            .map_err(|err| Aim::Access.transport_error(&err))?;
        if response.status() == StatusCode::FORBIDDEN
            || response.status() == StatusCode::UNAUTHORIZED
        {
            return Err(ConnectorError::ReauthRequired(
                "SimpleFIN refused the stored access (403): it was revoked; connect with a new setup token".into(),
            ));
        }
        if let Some(err) = status_error(&response, "the accounts request") {
            return Err(err);
        }
        let is_json = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.to_ascii_lowercase().contains("json"));
        if !is_json {
            return Err(ConnectorError::Protocol(
                "SimpleFIN answered without a JSON content type".into(),
            ));
        }
        let body = response
            .bytes()
            .map_err(|err| Aim::Access.transport_error(&err))?;
        if body.is_empty() {
            return Err(ConnectorError::Protocol(
                "SimpleFIN answered with an empty body".into(),
            ));
        }
        // Where it stopped, not serde's words: those quote the answer.
        serde_json::from_slice(&body).map_err(|err| {
            ConnectorError::Protocol(format!(
                "SimpleFIN's answer is not an account set (line {}, column {})",
                err.line(),
                err.column()
            ))
        })
    }
}

/// The SimpleFIN Bridge expects 24 requests or fewer a day per access
/// token (its developer guide, "Limits"); a sync is one request.
pub const DAILY_SYNCS: i32 = 24;

impl Connector for SimpleFinConnector {
    fn provider(&self) -> Provider {
        PROVIDER
    }

    fn daily_sync_limit(&self) -> Option<i32> {
        Some(DAILY_SYNCS)
    }

    fn prepare(&self, request: &ConnectRequest) -> Result<Prepared, ConnectorError> {
        let token = request.secret.as_deref().ok_or_else(|| {
            ConnectorError::Misconfigured("connecting SimpleFIN needs a setup token".into())
        })?;
        let access_url = self.claim(token)?;
        let access = parse_access_url(&access_url)?;
        // Where the claim sends syncs is checked now, so that a claim answer
        // aimed inside a private network fails the connect, not every sync
        // (each sync checks again: a name may resolve elsewhere later).
        self.client
            .guard()
            .resolve_blocking(&access.base)
            .map_err(|refusal| Aim::Claim.refused(&refusal))?;
        let host = access.base.host_str().unwrap_or("simplefin").to_owned();
        Ok(Prepared {
            institution: SnapshotInstitution {
                provider_institution_id: host.clone(),
                name: "SimpleFIN".into(),
                logo_url: None,
            },
            settings: serde_json::json!({ "server": host }),
            credentials: Some(access_url),
            consent: None,
        })
    }

    fn fetch(&self, context: &FetchContext<'_>) -> Result<ProviderSnapshot, ConnectorError> {
        let access = parse_access_url(context.credentials.ok_or_else(|| {
            ConnectorError::Misconfigured("the connection has no SimpleFIN access URL".into())
        })?)?;
        let start = match context.last_synced_at {
            Some(last) => last - chrono::Duration::days(OVERLAP_DAYS),
            None => context.now - chrono::Duration::days(FIRST_SYNC_DAYS),
        };
        let set = self.get_accounts(&access, start)?;
        snapshot_from(set, access.base.host_str().unwrap_or("simplefin"))
    }
}

// ---- The SimpleFIN account set (protocol versions 1 and 2) ----

#[derive(Debug, Deserialize)]
pub(crate) struct AccountSet {
    #[serde(default)]
    errors: Vec<String>,
    #[serde(default)]
    errlist: Vec<ErrorItem>,
    #[serde(default)]
    connections: Vec<ConnectionItem>,
    accounts: Vec<AccountItem>,
}

#[derive(Debug, Deserialize)]
struct ErrorItem {
    #[serde(default)]
    code: String,
    #[serde(default)]
    message: String,
    #[serde(default)]
    conn_id: Option<String>,
}

#[derive(Debug, Deserialize)]
struct ConnectionItem {
    conn_id: String,
    #[serde(default)]
    org_id: Option<String>,
    #[serde(default)]
    org_name: Option<String>,
    #[serde(default)]
    name: Option<String>,
}

/// Version 1's organization of an account: only `sfin-url` is required.
#[derive(Debug, Deserialize)]
struct Org {
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    domain: Option<String>,
    #[serde(rename = "sfin-url", default)]
    sfin_url: Option<String>,
}

impl Org {
    /// The bank, keyed by what the protocol gives: its id, else its domain
    /// (two banks may share a name), else its name or server.
    fn institution(&self) -> Option<SnapshotInstitution> {
        let key = [
            ("id", &self.id),
            ("domain", &self.domain),
            ("name", &self.name),
            ("sfin-url", &self.sfin_url),
        ]
        .into_iter()
        .find_map(|(kind, value)| Some(format!("{kind}:{}", value.as_deref()?)))?;
        let name = self.name.clone().or_else(|| self.domain.clone())?;
        Some(SnapshotInstitution {
            provider_institution_id: key,
            name,
            logo_url: None,
        })
    }
}

impl ConnectionItem {
    /// Version 2's bank behind a connection.
    fn institution(&self) -> SnapshotInstitution {
        SnapshotInstitution {
            provider_institution_id: match &self.org_id {
                Some(org) => format!("id:{org}"),
                None => format!("conn:{}", self.conn_id),
            },
            name: self
                .org_name
                .clone()
                .or_else(|| self.name.clone())
                .unwrap_or_else(|| self.conn_id.clone()),
            logo_url: None,
        }
    }
}

#[derive(Debug, Deserialize)]
struct AccountItem {
    id: String,
    name: String,
    #[serde(default)]
    conn_id: Option<String>,
    #[serde(default)]
    org: Option<Org>,
    currency: String,
    balance: String,
    #[serde(rename = "available-balance", default)]
    available_balance: Option<String>,
    #[serde(rename = "balance-date")]
    balance_date: i64,
    #[serde(default)]
    transactions: Vec<TransactionItem>,
    #[serde(default)]
    holdings: Vec<HoldingItem>,
}

#[derive(Debug, Deserialize)]
struct TransactionItem {
    id: String,
    #[serde(default)]
    posted: i64,
    amount: String,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    payee: Option<String>,
    #[serde(default)]
    memo: Option<String>,
    #[serde(default)]
    transacted_at: Option<i64>,
    #[serde(default)]
    pending: bool,
}

#[derive(Debug, Deserialize, serde::Serialize)]
struct HoldingItem {
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    currency: Option<String>,
    #[serde(default)]
    cost_basis: Option<String>,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    market_value: Option<String>,
    #[serde(default)]
    purchase_price: Option<String>,
    #[serde(default)]
    shares: Option<String>,
    #[serde(default)]
    symbol: Option<String>,
}

fn decimal(field: &str, account: &str, text: &str) -> Result<Decimal, ConnectorError> {
    parse_decimal(text).map_err(|err| {
        ConnectorError::Protocol(format!("SimpleFIN account {account}: `{field}`: {err}"))
    })
}

fn timestamp(field: &str, account: &str, seconds: i64) -> Result<DateTime<Utc>, ConnectorError> {
    DateTime::from_timestamp(seconds, 0).ok_or_else(|| {
        ConnectorError::Protocol(format!(
            "SimpleFIN account {account}: `{field}` {seconds} is not a time"
        ))
    })
}

/// SimpleFIN does not say what kind an account is; guess from what it holds
/// and its name (docs/providers.md).
fn guess_kind(account: &AccountItem) -> AccountKind {
    let name = account.name.to_lowercase();
    let has = |words: &[&str]| words.iter().any(|w| name.contains(w));
    if !account.holdings.is_empty() || has(&["brokerage", "invest", "401k", "ira", "roth"]) {
        AccountKind::Brokerage
    } else if has(&["card", "visa", "mastercard", "amex", "credit"]) {
        AccountKind::CreditCard
    } else if has(&["mortgage", "loan"]) {
        AccountKind::Loan
    } else if has(&["saving", "pot"]) {
        AccountKind::Savings
    } else {
        AccountKind::Checking
    }
}

fn transaction(
    account: &AccountItem,
    item: TransactionItem,
) -> Result<SnapshotTransaction, ConnectorError> {
    // A pending record may have `posted` 0; its date is when it happened.
    let when = if item.posted > 0 && !item.pending {
        item.posted
    } else {
        item.transacted_at.unwrap_or(item.posted)
    };
    let description = item
        .description
        .filter(|d| !d.trim().is_empty())
        .or(item.memo.filter(|m| !m.trim().is_empty()));
    Ok(SnapshotTransaction {
        provider_id: item.id,
        pending_provider_id: None,
        is_pending: item.pending,
        date: timestamp("posted", &account.id, when)?.date_naive(),
        amount: decimal("amount", &account.id, &item.amount)?,
        currency: account.currency.clone(),
        merchant: item.payee.filter(|p| !p.trim().is_empty()),
        description,
        hints: Default::default(),
    })
}

fn holding(account: &AccountItem, item: HoldingItem) -> Result<SnapshotHolding, ConnectorError> {
    let quantity = decimal("shares", &account.id, item.shares.as_deref().unwrap_or("0"))?;
    let value = decimal(
        "market_value",
        &account.id,
        item.market_value.as_deref().unwrap_or("0"),
    )?;
    // SimpleFIN gives no price; it is value per share, to 6 places.
    let price = if quantity.is_zero() {
        Decimal::ZERO
    } else {
        (value / quantity).round_dp(6).normalize()
    };
    let currency = item
        .currency
        .clone()
        .filter(|c| !c.is_empty())
        .unwrap_or_else(|| account.currency.clone());
    let raw = serde_json::to_value(&item).unwrap_or_default();
    Ok(SnapshotHolding {
        security: Security {
            name: item
                .description
                .clone()
                .or(item.symbol.clone())
                .unwrap_or_else(|| "Unnamed security".into()),
            currency: currency.clone(),
            ticker: item.symbol.clone().filter(|s| !s.is_empty()),
            figi: None,
            cusip: None,
            isin: None,
        },
        quantity,
        price,
        value,
        value_in_account_currency: (currency == account.currency).then_some(value),
        cost_basis: item
            .cost_basis
            .as_deref()
            .map(|c| decimal("cost_basis", &account.id, c))
            .transpose()?,
        currency,
        raw,
    })
}

pub(crate) fn snapshot_from(
    set: AccountSet,
    host: &str,
) -> Result<ProviderSnapshot, ConnectorError> {
    // Problems SimpleFIN reports beside its data (v2 `errlist`, v1 `errors`).
    let connection_names: std::collections::HashMap<&str, &str> = set
        .connections
        .iter()
        .map(|c| {
            (
                c.conn_id.as_str(),
                c.org_name
                    .as_deref()
                    .or(c.name.as_deref())
                    .unwrap_or(c.conn_id.as_str()),
            )
        })
        .collect();
    let mut notices: Vec<String> = set
        .errlist
        .iter()
        .map(|e| {
            let place = e
                .conn_id
                .as_deref()
                .and_then(|id| connection_names.get(id).copied());
            match place {
                Some(place) => format!("{place}: {} ({})", e.message, e.code),
                None => format!("{} ({})", e.message, e.code),
            }
        })
        .collect();
    if notices.is_empty() {
        notices = set.errors.clone();
    }
    let mut accounts = Vec::with_capacity(set.accounts.len());
    for mut item in set.accounts {
        let balance_date = timestamp("balance-date", &item.id, item.balance_date)?;
        let current = decimal("balance", &item.id, &item.balance)?;
        let available = item
            .available_balance
            .as_deref()
            .map(|a| decimal("available-balance", &item.id, a))
            .transpose()?;
        let kind = guess_kind(&item);
        // SimpleFIN bridges several banks: each account names its own.
        let institution = item.org.as_ref().and_then(Org::institution).or_else(|| {
            let conn_id = item.conn_id.as_deref()?;
            set.connections
                .iter()
                .find(|c| c.conn_id == conn_id)
                .map(ConnectionItem::institution)
        });
        let transactions = std::mem::take(&mut item.transactions)
            .into_iter()
            .map(|t| transaction(&item, t))
            .collect::<Result<Vec<_>, _>>()?;
        let holdings = std::mem::take(&mut item.holdings)
            .into_iter()
            .map(|h| holding(&item, h))
            .collect::<Result<Vec<_>, _>>()?;
        accounts.push(SnapshotAccount {
            balance_history: Vec::new(),
            provider_account_id: item.id.clone(),
            institution,
            name: item.name.clone(),
            kind,
            currency: item.currency.clone(),
            mask: None,
            balance: Some(SnapshotBalance {
                current,
                available,
                currency: item.currency.clone(),
                as_of: balance_date,
            }),
            transactions,
            investment_transactions: Vec::new(),
            liability: None,
            holdings: (kind == AccountKind::Brokerage || !holdings.is_empty()).then_some(holdings),
        });
    }
    Ok(ProviderSnapshot {
        institution: SnapshotInstitution {
            provider_institution_id: host.to_owned(),
            name: "SimpleFIN".into(),
            logo_url: None,
        },
        accounts,
        notices,
        // SimpleFIN gives a posted record a new id and no link to its
        // pending one: recognise the pair by the default rule.
        pending_match: Some(PendingMatchRule::default()),
        complete: true,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn setup_tokens_decode_to_claim_urls() {
        let token = base64::engine::general_purpose::STANDARD
            .encode("https://bridge.example/simplefin/claim/ABC");
        assert_eq!(
            claim_url(&token).unwrap().as_str(),
            "https://bridge.example/simplefin/claim/ABC"
        );
        assert!(matches!(
            claim_url("not base64!"),
            Err(ConnectorError::InvalidCredentials(_))
        ));
        let ftp = base64::engine::general_purpose::STANDARD.encode("ftp://x/y");
        assert!(claim_url(&ftp).is_err());
    }

    #[test]
    fn access_urls_lose_their_credentials_to_basic_auth() {
        let access = parse_access_url("https://user:p%40ss@bridge.example/simplefin").unwrap();
        assert_eq!(access.base.as_str(), "https://bridge.example/simplefin");
        assert_eq!(
            (access.username.as_str(), access.password.as_str()),
            ("user", "p%40ss")
        );
        assert!(parse_access_url("https://bridge.example/simplefin").is_err());
    }

    #[test]
    fn the_real_payload_becomes_a_snapshot() {
        let text = tributary_storage::testing::testdata("home-assistant-simplefin/fin_data.json");
        let snapshot = snapshot_from(
            serde_json::from_str(&text).unwrap(),
            "beta-bridge.simplefin.org",
        )
        .unwrap();
        assert_eq!(snapshot.accounts.len(), 8);
        assert_eq!(snapshot.notices.len(), 2, "the errors are surfaced");
        let bank = &snapshot.accounts[0];
        assert_eq!(bank.provider_account_id, "ACT-1a2b3c4d-5e6f-7g8h-9i0j");
        assert_eq!(
            bank.balance.as_ref().unwrap().current.to_string(),
            "7777.77"
        );
        assert_eq!(bank.name, "The Bank");
        // Each account is at its own bank; two banks of one name stay two.
        let banks: Vec<(&str, &str)> = snapshot
            .accounts
            .iter()
            .map(|a| {
                let i = a.institution.as_ref().unwrap();
                (i.name.as_str(), i.provider_institution_id.as_str())
            })
            .collect();
        assert_eq!(
            banks[0],
            ("The Bank of Go", "domain:www.newwealthfront.com")
        );
        assert_eq!(banks[1], ("Investments", "domain:www.newfidelity.com"));
        assert_eq!(banks[2], ("The Bank of Go", "domain:www.newhfcu.org"));
        let t = &bank.transactions[0];
        assert_eq!(
            (t.amount.to_string().as_str(), t.merchant.as_deref()),
            ("-1234.56", Some("Uncle Frank"))
        );
        assert_eq!(t.date.to_string(), "1995-02-18");
        let card = snapshot
            .accounts
            .iter()
            .find(|a| a.name.starts_with("Costco"))
            .unwrap();
        assert_eq!(card.kind, AccountKind::CreditCard);
        let evil = snapshot
            .accounts
            .iter()
            .find(|a| a.name.starts_with("Dr Evil"))
            .unwrap();
        let holding = &evil.holdings.as_ref().unwrap()[0];
        assert_eq!(evil.kind, AccountKind::Brokerage);
        assert_eq!(holding.security.ticker.as_deref(), Some("FGKFX"));
        assert_eq!(
            (
                holding.quantity.to_string().as_str(),
                holding.value.to_string().as_str()
            ),
            ("200.00", "15000.00")
        );
        assert_eq!(holding.price.to_string(), "75");
        assert_eq!(
            holding.currency, "USD",
            "an empty holding currency is the account's"
        );
    }

    #[test]
    fn version_2_errors_name_their_connection() {
        let set: AccountSet = serde_json::from_value(serde_json::json!({
            "errlist": [{"code": "con.auth", "message": "Authentication required", "conn_id": "CON-1"}],
            "connections": [{"conn_id": "CON-1", "org_name": "My Bank", "name": "My Bank - Jeff"}],
            "accounts": [{"id": "A1", "name": "Savings", "conn_id": "CON-1", "currency": "USD",
                          "balance": "100.23", "available-balance": "75.23", "balance-date": 978366153,
                          "transactions": [{"id": "T1", "posted": 0, "transacted_at": 978366000,
                                            "amount": "-4.50", "description": "Coffee", "pending": true}]}]
        }))
        .unwrap();
        let snapshot = snapshot_from(set, "bridge").unwrap();
        assert_eq!(
            snapshot.notices,
            vec!["My Bank: Authentication required (con.auth)".to_owned()]
        );
        let account = &snapshot.accounts[0];
        assert_eq!(account.name, "Savings", "the bank's own name");
        let bank = account.institution.as_ref().unwrap();
        assert_eq!(
            (bank.name.as_str(), bank.provider_institution_id.as_str()),
            ("My Bank", "conn:CON-1")
        );
        assert!(account.transactions[0].is_pending);
        assert_eq!(account.transactions[0].date.to_string(), "2001-01-01");
    }

    #[test]
    fn a_bad_amount_names_the_account_and_field() {
        let set: AccountSet = serde_json::from_value(serde_json::json!({
            "accounts": [{"id": "A1", "name": "X", "currency": "USD", "balance": "12,5", "balance-date": 1}]
        }))
        .unwrap();
        let err = snapshot_from(set, "bridge").unwrap_err().to_string();
        assert!(err.contains("A1") && err.contains("`balance`"), "{err}");
    }
}
