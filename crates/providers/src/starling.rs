//! Starling Bank (UK), through the person's own personal access token: no
//! aggregator, no contract. Written against Starling's public API `v2`
//! (its OpenAPI document, served at `/api/openapi.json` of Starling's
//! sandbox, and its JS SDK's fixtures; docs/providers.md, "Starling").
//!
//! - `prepare`: the token is checked at once (`GET /api/v2/identity/token`:
//!   401/403 for a token that is wrong, expired or revoked; its `scopes`
//!   must hold those a sync reads with) and kept sealed.
//! - `fetch`: `/api/v2/accounts`, then each account's balance and its
//!   default category's feed (`/api/v2/feed/account/{account}/category/
//!   {category}?changesSince=…`): every item changed since then, the
//!   whole history on the first sync, and never later than the oldest
//!   pending item stored (one out of sight would be taken for gone).
//!
//! Amounts are unsigned minor units with a `direction` (`IN`, `OUT`): the
//! sign comes from the direction alone. A `PENDING` item settles under its
//! own `feedItemUid`, so its row turns posted in place; one released
//! (`REVERSED`) is no transaction, and its stored pending row goes.

use crate::connector::{
    ConnectRequest, ConnectorError, FetchContext, HttpAnswer, Prepared,
};
use crate::description::{
    Answers, Connect, Constructor, Description, Environment, Reports, ReturnAddress, SettingError,
    Variable,
};
use crate::personal_token::{self, TokenBankConfig};
use crate::provider_http::{ProviderHttp, Refusal};
use chrono::{DateTime, Utc};
use serde::Deserialize;
use serde_json::Value;
use tributary_domain::model::{AccountKind, Provider};
use tributary_domain::money::Decimal;
use tributary_domain::snapshot::*;

pub const PROVIDER: Provider = Provider::new("starling");

pub const DESCRIPTION: Description = Description {
    provider: PROVIDER,
    name: "Starling Bank",
    summary: "Starling Bank (UK): paste a personal access token made in Starling's developer portal; no aggregator in between.",
    reports: Reports::ACCOUNTS,
    connect: Connect {
        fields: &[personal_token::token_field(
            "Personal access token",
            "Your Starling personal access token (\"-\" reads it from standard input, keeping it out of the shell history).",
        )],
        note: Some("Make one at developer.starlingbank.com (Personal Access, with the account:read, account-list:read, balance:read and transaction:read scopes). It is checked at once and kept sealed; if you revoke it at Starling, connect again with a new one."),
        hands_off: false,
        picks_institution: false,
        return_address: ReturnAddress::Never,
        finish_on_return: false,
        command_help: "Connect your Starling accounts with a personal access token (--token, or - to paste it), then sync.",
        request: request_from,
    },
    environment: &[Variable {
        names: "TRIBUTARY_STARLING_URL",
        help: "its API root [default: https://api.starlingbank.com]",
    }],
    configure,
};

pub const DEFAULT_BASE_URL: &str = "https://api.starlingbank.com";
/// Later syncs ask for what changed from this long before the last one: a
/// change Starling stamps late, or a sync cut short, is read again, and a
/// pending item unchanged for a while stays in sight (one out of sight
/// would be taken for gone).
const OVERLAP_DAYS: i64 = 35;
/// Where the first sync's feed starts: before any Starling account existed.
const FIRST_CHANGES_SINCE: &str = "2014-01-01T00:00:00.000Z";

/// Always offered: a person's own token needs no configuration.
fn configure(env: &Environment<'_>) -> Result<Option<Constructor>, SettingError> {
    Ok(personal_token::configure(
        env,
        ("TRIBUTARY_STARLING_URL", DEFAULT_BASE_URL),
        ("Starling", StarlingConnector::new),
    ))
}

fn request_from(answers: &Answers<'_>) -> Result<ConnectRequest, &'static str> {
    personal_token::request_from(answers, "Paste your Starling personal access token.")
}

pub type StarlingConfig = TokenBankConfig;

#[derive(Debug)]
pub struct StarlingConnector {
    config: StarlingConfig,
    http: ProviderHttp,
}

/// Starling's refusals: an OAuth-style `{"error", "error_description"}`
/// for a token it does not accept, else `{"errors": [{"message"}]}`.
fn refusal(refused: &Refusal<'_>) -> ConnectorError {
    let body: Value = serde_json::from_str(refused.body).unwrap_or(Value::Null);
    let message = body["error_description"]
        .as_str()
        .or(body["error"].as_str())
        .or(body["errors"][0]["message"].as_str())
        .unwrap_or_default()
        .to_owned();
    let what = refused.what;
    if matches!(
        refused.status,
        reqwest::StatusCode::UNAUTHORIZED | reqwest::StatusCode::FORBIDDEN
    ) {
        return ConnectorError::ReauthRequired(format!(
            "Starling no longer accepts the personal access token for {what} ({message}): make a new one with the account:read, account-list:read, balance:read and transaction:read scopes and connect again"
        ));
    }
    let answer = HttpAnswer {
        provider: "Starling",
        what,
        status: refused.status,
        detail: &message,
        retry_after: refused.seconds_header(&["retry-after"]),
    };
    answer.error(|_| None)
}

/// The scopes a sync reads with: the accounts, their balances, their feeds.
const SCOPES: [&str; 3] = ["account:read", "balance:read", "transaction:read"];

/// What `identity/token` says of a token.
#[derive(Debug, Deserialize)]
struct Identity {
    /// Optional in Starling's document: a token it does not list scopes
    /// for is taken at its word.
    #[serde(default)]
    scopes: Option<Vec<String>>,
}

impl Identity {
    /// A token without a scope a sync needs would connect and fail at
    /// once: it is refused, naming what it lacks.
    fn can_sync(&self) -> Result<(), ConnectorError> {
        let Some(scopes) = &self.scopes else {
            return Ok(());
        };
        let missing: Vec<&str> = SCOPES
            .into_iter()
            .filter(|needed| !scopes.iter().any(|s| s == needed))
            .collect();
        if missing.is_empty() {
            return Ok(());
        }
        Err(ConnectorError::InvalidCredentials(format!(
            "this Starling personal access token lacks the {} scope{}: make one with {} in Starling's developer portal",
            missing.join(", "),
            if missing.len() == 1 { "" } else { "s" },
            SCOPES.join(", ")
        )))
    }
}

#[derive(Debug, Deserialize)]
struct Accounts {
    accounts: Vec<Account>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Account {
    account_uid: String,
    /// Both absent in Starling's older answers.
    #[serde(default)]
    account_type: Option<String>,
    #[serde(default)]
    name: Option<String>,
    default_category: String,
    currency: String,
}

/// An amount as Starling writes it: a whole number of the currency's minor
/// units (pence, cents), never signed on feed items.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Money {
    currency: String,
    minor_units: i64,
}

impl Money {
    fn amount(&self, what: &str) -> Result<Decimal, ConnectorError> {
        let places = minor_unit_places(&self.currency).ok_or_else(|| {
            ConnectorError::Protocol(format!(
                "Starling sent {what} in `{}`, a currency whose minor unit Tributary does not know",
                self.currency
            ))
        })?;
        Ok(Decimal::new(self.minor_units, places))
    }
}

/// ISO 4217's minor-unit places for the currencies a Starling account can
/// hold (sterling, euro, US dollar): a feed item's `amount` is always in
/// its account's currency (a foreign card payment's own amount,
/// `sourceAmount`, is not read).
fn minor_unit_places(currency: &str) -> Option<u32> {
    match currency {
        "GBP" | "EUR" | "USD" => Some(2),
        _ => None,
    }
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Balance {
    cleared_balance: Money,
    effective_balance: Money,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Feed {
    feed_items: Vec<FeedItem>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct FeedItem {
    feed_item_uid: String,
    amount: Money,
    direction: String,
    status: String,
    transaction_time: DateTime<Utc>,
    /// Absent until the item settles.
    #[serde(default)]
    settlement_time: Option<DateTime<Utc>>,
    #[serde(default)]
    counter_party_name: Option<String>,
    #[serde(default)]
    reference: Option<String>,
    #[serde(default)]
    user_note: Option<String>,
}

/// What an item's status makes of it: a transaction (pending or posted),
/// or nothing that moved money.
enum Standing {
    Pending,
    Posted,
    NoMoneyMoved,
}

fn standing(status: &str) -> Option<Standing> {
    Some(match status {
        // Authorised, waiting to settle; a failed payment Starling retries.
        "PENDING" | "RETRYING" => Standing::Pending,
        // A refunded item stays what it was: the refund is its own item.
        "SETTLED" | "REFUNDED" => Standing::Posted,
        // Not yet happened (a standing order's next payment), refused,
        // an authorisation released, or a card check for nothing.
        "UPCOMING" | "UPCOMING_CANCELLED" | "DECLINED" | "REVERSED" | "ACCOUNT_CHECK" => {
            Standing::NoMoneyMoved
        }
        _ => return None,
    })
}

fn kind(account_type: Option<&str>) -> AccountKind {
    match account_type {
        Some("PRIMARY" | "ADDITIONAL") => AccountKind::Checking,
        Some("LOAN") => AccountKind::Loan,
        Some("FIXED_TERM_DEPOSIT" | "SAVINGS") => AccountKind::Savings,
        _ => AccountKind::Other,
    }
}

/// The item as a transaction; `None` for an item that moved no money.
fn transaction(item: FeedItem) -> Result<Option<SnapshotTransaction>, ConnectorError> {
    let id = item.feed_item_uid;
    let is_pending = match standing(&item.status) {
        Some(Standing::Pending) => true,
        Some(Standing::Posted) => false,
        Some(Standing::NoMoneyMoved) => return Ok(None),
        None => {
            return Err(ConnectorError::Protocol(format!(
                "Starling sent feed item {id} with status `{}`, which Tributary does not know",
                item.status
            )));
        }
    };
    let unsigned = item.amount.amount("a feed item's amount")?;
    if unsigned.is_sign_negative() {
        return Err(ConnectorError::Protocol(format!(
            "Starling sent feed item {id} with a negative amount ({unsigned}); its sign is its direction's"
        )));
    }
    let amount = match item.direction.as_str() {
        "IN" => unsigned,
        "OUT" => -unsigned,
        other => {
            return Err(ConnectorError::Protocol(format!(
                "Starling sent feed item {id} with direction `{other}` (IN or OUT expected)"
            )));
        }
    };
    let merchant = item.counter_party_name.filter(|n| !n.trim().is_empty());
    let description = [item.reference.as_deref(), item.user_note.as_deref()]
        .into_iter()
        .flatten()
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    Ok(Some(SnapshotTransaction {
        provider_id: id,
        pending_provider_id: None,
        is_pending,
        // When it settled (UK time is the day Starling shows); a pending
        // one's when it was made.
        date: uk_day(item.settlement_time.unwrap_or(item.transaction_time))?,
        amount,
        currency: item.amount.currency,
        description: Some(description)
            .filter(|d| !d.is_empty())
            .or_else(|| merchant.clone()),
        merchant,
        hints: Default::default(),
    }))
}

/// The day in the UK at `at`: Starling writes times in UTC, and a card
/// payment at 00:30 on a summer morning belongs to that morning, not to
/// the day before.
fn uk_day(at: DateTime<Utc>) -> Result<chrono::NaiveDate, ConnectorError> {
    static LONDON: jiff::tz::TimeZone = jiff::tz::get!("Europe/London");
    crate::bank_day::day_in(&LONDON, at, "Starling")
}

impl StarlingConnector {
    pub fn new(config: StarlingConfig) -> Result<Self, reqwest::Error> {
        let http = ProviderHttp::new("Starling", config.timeout)?;
        Ok(Self { config, http })
    }

    fn get<T: serde::de::DeserializeOwned>(
        &self,
        token: &str,
        path: &str,
        query: &[(&str, String)],
        what: &str,
    ) -> Result<T, ConnectorError> {
        let url = format!("{}/api/v2/{path}", self.config.base_url.trim_end_matches('/'));
        let response = self.http.send(
            self.http
                .client
                .get(url)
                .bearer_auth(token)
                .header(reqwest::header::ACCEPT, "application/json")
                .query(query),
            what,
        )?;
        self.http.json(response, what, refusal)
    }
}

impl crate::connector::Connector for StarlingConnector {
    fn provider(&self) -> Provider {
        PROVIDER
    }

    fn prepare(&self, request: &ConnectRequest) -> Result<Prepared, ConnectorError> {
        personal_token::prepare(
            personal_token::given(request, ("Starling", "personal access token"))?,
            |token| {
                let identity: Identity =
                    self.get(token, "identity/token", &[], "the token check")?;
                identity.can_sync()
            },
            "Starling does not accept this personal access token: check it, or make a new one in Starling's developer portal",
            institution(),
        )
    }

    fn fetch(&self, context: &FetchContext<'_>) -> Result<ProviderSnapshot, ConnectorError> {
        let token = personal_token::kept(context)?;
        let Accounts { accounts } = self.get(token, "accounts", &[], "the accounts")?;
        let mut snapshot_accounts = Vec::new();
        for account in accounts {
            let changes_since = match context.reach_back_for(&account.account_uid, OVERLAP_DAYS) {
                Some(since) => since.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
                None => FIRST_CHANGES_SINCE.to_owned(),
            };
            let balance: Balance = self.get(
                token,
                &format!("accounts/{}/balance", account.account_uid),
                &[],
                "the balance",
            )?;
            let Feed { feed_items } = self.get(
                token,
                &format!(
                    "feed/account/{}/category/{}",
                    account.account_uid, account.default_category
                ),
                &[("changesSince", changes_since)],
                "the transactions",
            )?;
            let mut transactions = Vec::with_capacity(feed_items.len());
            for item in feed_items {
                transactions.extend(transaction(item)?);
            }
            snapshot_accounts.push(SnapshotAccount {
                name: account
                    .name
                    .clone()
                    .filter(|n| !n.trim().is_empty())
                    .unwrap_or_else(|| format!("Starling {}", account.currency)),
                provider_account_id: account.account_uid,
                institution: None,
                kind: kind(account.account_type.as_deref()),
                currency: account.currency.clone(),
                mask: None,
                balance: Some(SnapshotBalance {
                    current: balance.cleared_balance.amount("the cleared balance")?,
                    available: Some(balance.effective_balance.amount("the effective balance")?),
                    currency: balance.cleared_balance.currency,
                    as_of: context.now,
                }),
                balance_history: Vec::new(),
                transactions,
                investment_transactions: Vec::new(),
                liability: None,
                holdings: None,
            });
        }
        Ok(ProviderSnapshot {
            institution: institution(),
            accounts: snapshot_accounts,
            notices: Vec::new(),
            // A pending item settles under its own uid, and a released one
            // says so: no rule pairs rows (it could take a released hold
            // for another payment of a like amount).
            pending_match: None,
            complete: true,
        })
    }
}

fn institution() -> SnapshotInstitution {
    SnapshotInstitution {
        provider_institution_id: "starling".into(),
        name: "Starling Bank".into(),
        logo_url: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn day(at: &str) -> String {
        uk_day(at.parse().unwrap()).unwrap().to_string()
    }

    #[test]
    fn a_date_is_the_uk_day_in_summer_and_in_winter() {
        // British Summer Time (UTC+1) ...
        assert_eq!(day("2026-07-14T23:30:00.000Z"), "2026-07-15");
        assert_eq!(day("2026-07-14T22:59:59.000Z"), "2026-07-14");
        // ... and Greenwich Mean Time (UTC+0).
        assert_eq!(day("2026-01-14T23:30:00.000Z"), "2026-01-14");
        // The clocks go forward at 01:00 UTC on the last Sunday of March.
        assert_eq!(day("2026-03-28T23:30:00.000Z"), "2026-03-28");
        assert_eq!(day("2026-03-29T23:30:00.000Z"), "2026-03-30");
    }

    #[test]
    fn an_account_in_starlings_older_shape_is_read() {
        let accounts: Accounts = serde_json::from_value(json!({"accounts": [{
            "accountUid": "a", "defaultCategory": "c", "currency": "GBP",
            "createdAt": "2017-09-08T12:34:21.000Z"}]}))
        .unwrap();
        assert_eq!(kind(accounts.accounts[0].account_type.as_deref()), AccountKind::Other);
    }

    #[test]
    fn a_401_or_a_403_needs_the_person() {
        for status in [reqwest::StatusCode::UNAUTHORIZED, reqwest::StatusCode::FORBIDDEN] {
            let refused = Refusal {
                what: "the accounts",
                status,
                headers: &reqwest::header::HeaderMap::new(),
                body: r#"{"error":"invalid_token","error_description":"Could not validate provided access token"}"#,
            };
            let ConnectorError::ReauthRequired(why) = refusal(&refused) else {
                panic!("{status} needs the person")
            };
            assert!(why.contains("Could not validate"), "{why}");
        }
    }

    #[test]
    fn a_sign_comes_from_the_direction_and_nothing_else() {
        let item = |direction: &str| -> FeedItem {
            serde_json::from_value(json!({
                "feedItemUid": "i", "amount": {"currency": "GBP", "minorUnits": 1234},
                "direction": direction, "status": "SETTLED",
                "transactionTime": "2026-01-01T10:00:00.000Z"}))
            .unwrap()
        };
        let amount = |direction| transaction(item(direction)).unwrap().unwrap().amount;
        assert_eq!(amount("IN").to_string(), "12.34");
        assert_eq!(amount("OUT").to_string(), "-12.34");
        let Err(ConnectorError::Protocol(why)) = transaction(item("SIDEWAYS")) else {
            panic!("an unknown direction is refused")
        };
        assert!(why.contains("SIDEWAYS"), "{why}");
        let mut negative = item("OUT");
        negative.amount.minor_units = -1234;
        let Err(ConnectorError::Protocol(why)) = transaction(negative) else {
            panic!("a signed amount is refused, not flipped")
        };
        assert!(why.contains("negative amount"), "{why}");
    }
}
