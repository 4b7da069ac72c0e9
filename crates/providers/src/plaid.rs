//! Plaid (plaid.com, API version 2020-09-14, docs/providers.md): banks and
//! brokerages in the US, Canada, the UK and the EU. The operator's client
//! id and secret (configuration) go in headers on every call, all `POST`s
//! with JSON bodies. A user connects through **Hosted Link**, Plaid's own
//! pages, so Tributary's pages carry no script:
//!
//! 1. `prepare`: `/link/token/create` with a `hosted_link` whose
//!    `completion_redirect_uri` is our return page; the connection keeps the
//!    `hosted_link_url` as its link and the `link_token`.
//! 2. The user picks their bank and signs in at Plaid, which sends them back
//!    on success and on exit alike; `complete` asks `/link/token/get` how
//!    the session ended, and exchanges its `public_token` for the Item's
//!    `access_token` (sealed), naming the bank the user chose.
//! 3. `fetch`: `/accounts/balance/get` (accounts, balances read from the
//!    bank now, the Item's bank), then
//!    `/transactions/sync` page after page (a change between pages restarts
//!    the listing), and `/investments/holdings/get` and
//!    `/investments/transactions/get` (24 months, page by page) for
//!    investment accounts.
//!
//! `ITEM_LOGIN_REQUIRED` and the like need the user: re-authentication runs
//! Link in update mode with the same `access_token`, which stays the Item's.
//! Plaid's amounts are JSON numbers with any number of decimals, read
//! exactly (never through a float); a positive amount is money out.

use tributary_domain::enrich::hints::{CategoryHint, Hints};
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
use chrono::{DateTime, NaiveDate, Utc};
use rand::Rng as _;
use rust_decimal::serde::{arbitrary_precision, arbitrary_precision_option};
use serde::Deserialize;
use serde_json::{Value, json};
use std::collections::{BTreeMap, HashMap};
use std::time::Duration;
use tributary_domain::model::{AccountKind, InvestmentKind, Provider};
use tributary_domain::money::Decimal;
use tributary_domain::snapshot::*;

pub const PROVIDER: Provider = Provider::new("plaid");

pub const DESCRIPTION: Description = Description {
    provider: PROVIDER,
    name: "Plaid",
    summary: "Banks and brokerages in the US, Canada, the UK and Europe: connect on Plaid's pages and come back here.",
    reports: Reports::INVESTMENTS,
    connect: Connect {
        fields: &[],
        note: Some("You choose your bank and sign in on Plaid's pages; Plaid brings you back here."),
        hands_off: true,
        picks_institution: false,
        return_address: ReturnAddress::Always { default: None },
        finish_on_return: true,
        command_help: "Connect a bank or brokerage through Plaid's Hosted Link: prints Plaid's page the user must open; once Plaid sends them to --redirect, `tributary connect finish` completes it (needs TRIBUTARY_PLAID_CLIENT_ID and _SECRET).",
        request: crate::description::return_only,
    },
    environment: &[
        Variable {
            names: "TRIBUTARY_PLAID_CLIENT_ID, TRIBUTARY_PLAID_SECRET",
            help: "enable Plaid (Hosted Link) with the operator's keys",
        },
        Variable {
            names: "TRIBUTARY_PLAID_URL",
            help: "its API root: https://sandbox.plaid.com for Plaid's sandbox [default: https://production.plaid.com]",
        },
        Variable {
            names: "TRIBUTARY_PLAID_COUNTRIES",
            help: "countries whose banks Plaid's Link offers [default: US,CA]",
        },
    ],
    configure,
};

/// Offered with the operator's client id and secret.
fn configure(env: &Environment<'_>) -> Result<Option<Constructor>, SettingError> {
    let Some((client_id, secret)) =
        env.both_or_neither("TRIBUTARY_PLAID_CLIENT_ID", "TRIBUTARY_PLAID_SECRET")?
    else {
        return Ok(None);
    };
    let config = PlaidConfig {
        base_url: env
            .get("TRIBUTARY_PLAID_URL")
            .unwrap_or_else(|| DEFAULT_BASE_URL.to_owned()),
        client_id,
        secret,
        country_codes: country_codes(
            env.get("TRIBUTARY_PLAID_COUNTRIES")
                .unwrap_or_else(|| "US,CA".into()),
        )?,
        timeout: PROVIDER_TIMEOUT,
    };
    Ok(constructor(move || {
        PlaidConnector::new(config.clone()).map_err(|err| SetupError::new("Plaid", err))
    }))
}

/// `TRIBUTARY_PLAID_COUNTRIES`: two-letter country codes (`US,CA`), upper
/// case.
fn country_codes(list: String) -> Result<Vec<String>, SettingError> {
    let codes: Vec<String> = list
        .split(',')
        .map(|c| c.trim().to_ascii_uppercase())
        .filter(|c| !c.is_empty())
        .collect();
    if codes.is_empty()
        || !codes
            .iter()
            .all(|c| c.len() == 2 && c.bytes().all(|b| b.is_ascii_alphabetic()))
    {
        return Err(SettingError {
            name: "TRIBUTARY_PLAID_COUNTRIES",
            value: Some(list),
            reason: "give two-letter country codes, separated by commas (US,CA)".into(),
        });
    }
    Ok(codes)
}

pub const DEFAULT_BASE_URL: &str = "https://production.plaid.com";
const API_VERSION: &str = "2020-09-14";
/// How long the Hosted Link page stays open for the user.
const LINK_LIFETIME_SECONDS: u64 = 1800;
/// Transactions a page of `/transactions/sync` holds (Plaid's most).
const PAGE: u32 = 500;
/// Restarts of a listing that changed between its pages, before giving up
/// for this sync.
const RESTARTS: usize = 3;
/// A listing ends here even if Plaid keeps paging.
const MAX_PAGES: usize = 1000;
/// Until an Item's first transactions are ready, ask again after this.
const NOT_READY_WAIT: Duration = Duration::from_secs(60);

#[derive(Clone)]
pub struct PlaidConfig {
    pub base_url: String,
    pub client_id: String,
    pub secret: String,
    /// Countries whose banks Link offers (ISO 3166 alpha-2).
    pub country_codes: Vec<String>,
    pub timeout: Duration,
}

impl std::fmt::Debug for PlaidConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PlaidConfig")
            .field("base_url", &self.base_url)
            .field("country_codes", &self.country_codes)
            .finish_non_exhaustive()
    }
}

pub struct PlaidConnector {
    config: PlaidConfig,
    http: ProviderHttp,
}

impl std::fmt::Debug for PlaidConnector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PlaidConnector")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

/// Plaid's error body: `error_type` and `error_code` are for programs,
/// `display_message` (nullable) for people.
#[derive(Debug, Default, Deserialize)]
struct PlaidError {
    #[serde(default)]
    error_type: Option<String>,
    #[serde(default)]
    error_code: Option<String>,
    #[serde(default)]
    error_message: Option<String>,
    #[serde(default)]
    display_message: Option<String>,
}

impl PlaidError {
    fn text(&self) -> String {
        [
            self.error_code.clone(),
            self.display_message.clone().or(self.error_message.clone()),
        ]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(": ")
    }
}

/// Plaid's refusal as the error it means, by its error code (Plaid answers
/// a bank that is down with a 400, so the status alone misleads).
fn refusal(refused: &Refusal<'_>) -> ConnectorError {
    let body: PlaidError = serde_json::from_str(refused.body).unwrap_or_default();
    let text = body.text();
    let what = refused.what;
    let code = body.error_code.as_deref().unwrap_or_default();
    match code {
        "ITEM_LOGIN_REQUIRED"
        | "ITEM_NOT_FOUND"
        | "ACCESS_NOT_GRANTED"
        | "INVALID_CREDENTIALS"
        | "ITEM_LOCKED"
        | "NO_ACCOUNTS"
        | "USER_SETUP_REQUIRED"
        | "INVALID_ACCESS_TOKEN" => {
            return ConnectorError::ReauthRequired(format!(
                "Plaid needs the user to sign in to the bank again ({text})"
            ));
        }
        "INVALID_API_KEYS" => {
            return ConnectorError::Misconfigured(format!(
                "Plaid refused TRIBUTARY_PLAID_CLIENT_ID / TRIBUTARY_PLAID_SECRET ({text})"
            ));
        }
        "PRODUCT_NOT_READY"
        | "INSTITUTION_DOWN"
        | "INSTITUTION_NOT_RESPONDING"
        | "INSTITUTION_NOT_AVAILABLE"
        | "INTERNAL_SERVER_ERROR"
        | "PLANNED_MAINTENANCE"
        | "TRANSACTIONS_SYNC_MUTATION_DURING_PAGINATION" => {
            return ConnectorError::Unavailable {
                reason: format!("Plaid could not answer {what} now ({text})"),
                retry_after: refused.seconds_header(&["retry-after"]),
            };
        }
        _ => {}
    }
    if body.error_type.as_deref() == Some("RATE_LIMIT_EXCEEDED") {
        return ConnectorError::Unavailable {
            reason: format!("Plaid rate-limited {what} ({text})"),
            retry_after: refused.seconds_header(&["retry-after"]),
        };
    }
    let answer = HttpAnswer {
        provider: "Plaid",
        what,
        status: refused.status,
        detail: &text,
        retry_after: refused.seconds_header(&["retry-after"]),
    };
    answer.error(|_| None)
}

/// The Item's token, sealed with the connection.
#[derive(Debug, serde::Serialize, Deserialize)]
struct Item {
    access_token: String,
    item_id: String,
}

#[derive(Debug, Deserialize)]
struct Balances {
    #[serde(default, with = "arbitrary_precision_option")]
    available: Option<Decimal>,
    #[serde(default, with = "arbitrary_precision_option")]
    current: Option<Decimal>,
    /// A credit account's limit.
    #[serde(default, with = "arbitrary_precision_option")]
    limit: Option<Decimal>,
    #[serde(default)]
    iso_currency_code: Option<String>,
    #[serde(default)]
    unofficial_currency_code: Option<String>,
}

#[derive(Debug, Deserialize)]
struct Account {
    account_id: String,
    balances: Balances,
    #[serde(default)]
    mask: Option<String>,
    name: String,
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    subtype: Option<String>,
}

impl Account {
    fn kind(&self) -> AccountKind {
        match (self.kind.as_str(), self.subtype.as_deref()) {
            ("depository", Some("savings" | "money market" | "cd" | "hsa")) => AccountKind::Savings,
            ("depository", _) => AccountKind::Checking,
            ("credit", _) => AccountKind::CreditCard,
            ("loan", _) => AccountKind::Loan,
            ("investment" | "brokerage", _) => AccountKind::Brokerage,
            _ => AccountKind::Other,
        }
    }

    fn currency(&self) -> Option<&str> {
        self.balances
            .iso_currency_code
            .as_deref()
            .or(self.balances.unofficial_currency_code.as_deref())
    }

    /// Credit and loan balances are what is owed, positive: stored as the
    /// negative they are to the user, like every other provider's.
    fn signed(&self, amount: Decimal) -> Decimal {
        match self.kind() {
            AccountKind::CreditCard | AccountKind::Loan => -amount,
            _ => amount,
        }
    }
}

#[derive(Debug, Deserialize)]
struct ItemInfo {
    #[serde(default)]
    institution_id: Option<String>,
    #[serde(default)]
    institution_name: Option<String>,
}

#[derive(Debug, Deserialize)]
struct AccountsAnswer {
    accounts: Vec<Account>,
    item: ItemInfo,
}

#[derive(Debug, Clone, Deserialize)]
struct Counterparty {
    name: String,
}

#[derive(Debug, Clone, Deserialize)]
struct Transaction {
    transaction_id: String,
    account_id: String,
    #[serde(with = "arbitrary_precision")]
    amount: Decimal,
    #[serde(default)]
    iso_currency_code: Option<String>,
    #[serde(default)]
    unofficial_currency_code: Option<String>,
    date: NaiveDate,
    name: String,
    #[serde(default)]
    merchant_name: Option<String>,
    #[serde(default)]
    counterparties: Vec<Counterparty>,
    pending: bool,
    #[serde(default)]
    pending_transaction_id: Option<String>,
    #[serde(default)]
    personal_finance_category: Option<PersonalFinanceCategory>,
}

/// Plaid's category of a transaction (its personal finance taxonomy).
#[derive(Debug, Clone, Deserialize)]
struct PersonalFinanceCategory {
    #[serde(default)]
    primary: Option<String>,
    #[serde(default)]
    detailed: Option<String>,
}

#[derive(Debug, Deserialize)]
struct Removed {
    transaction_id: String,
}

#[derive(Debug, Deserialize)]
struct SyncPage {
    added: Vec<Transaction>,
    modified: Vec<Transaction>,
    removed: Vec<Removed>,
    next_cursor: String,
    has_more: bool,
    #[serde(default)]
    transactions_update_status: Option<String>,
}

#[derive(Debug, Deserialize)]
struct PlaidSecurity {
    security_id: String,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    ticker_symbol: Option<String>,
    #[serde(default)]
    isin: Option<String>,
    #[serde(default)]
    cusip: Option<String>,
    #[serde(default)]
    iso_currency_code: Option<String>,
    #[serde(default)]
    unofficial_currency_code: Option<String>,
}

#[derive(Debug, Deserialize)]
struct PlaidHolding {
    account_id: String,
    security_id: String,
    #[serde(with = "arbitrary_precision")]
    institution_price: Decimal,
    #[serde(with = "arbitrary_precision")]
    institution_value: Decimal,
    #[serde(default, with = "arbitrary_precision_option")]
    cost_basis: Option<Decimal>,
    #[serde(with = "arbitrary_precision")]
    quantity: Decimal,
    #[serde(default)]
    iso_currency_code: Option<String>,
    #[serde(default)]
    unofficial_currency_code: Option<String>,
}

#[derive(Debug, Deserialize)]
struct HoldingsAnswer {
    holdings: Vec<Value>,
    securities: Vec<Value>,
}

#[derive(Debug, Deserialize)]
struct LiabilitiesAnswer {
    liabilities: Liabilities,
}

/// `/liabilities/get`'s three lists (each may be null).
#[derive(Debug, Default, Deserialize)]
struct Liabilities {
    #[serde(default)]
    credit: Option<Vec<PlaidLiability>>,
    #[serde(default)]
    mortgage: Option<Vec<PlaidLiability>>,
    #[serde(default)]
    student: Option<Vec<PlaidLiability>>,
}

/// What a card's, a mortgage's or a student loan's record says of the
/// next payment (their common fields).
#[derive(Debug, Deserialize)]
struct PlaidLiability {
    #[serde(default)]
    account_id: Option<String>,
    #[serde(default, with = "arbitrary_precision_option")]
    minimum_payment_amount: Option<Decimal>,
    /// A mortgage's next payment (it has no minimum).
    #[serde(default, with = "arbitrary_precision_option")]
    next_monthly_payment: Option<Decimal>,
    #[serde(default)]
    next_payment_due_date: Option<NaiveDate>,
    #[serde(default, with = "arbitrary_precision_option")]
    last_statement_balance: Option<Decimal>,
}

#[derive(Debug, Deserialize)]
struct InvestmentTransactionsAnswer {
    investment_transactions: Vec<Value>,
    securities: Vec<Value>,
    total_investment_transactions: usize,
}

#[derive(Debug, Deserialize)]
struct PlaidInvestmentTransaction {
    investment_transaction_id: String,
    account_id: String,
    #[serde(default)]
    security_id: Option<String>,
    date: NaiveDate,
    #[serde(default)]
    name: Option<String>,
    #[serde(with = "arbitrary_precision")]
    quantity: Decimal,
    #[serde(with = "arbitrary_precision")]
    amount: Decimal,
    #[serde(with = "arbitrary_precision")]
    price: Decimal,
    #[serde(default, with = "arbitrary_precision_option")]
    fees: Option<Decimal>,
    #[serde(rename = "type")]
    kind: String,
    subtype: String,
    #[serde(default)]
    iso_currency_code: Option<String>,
    #[serde(default)]
    unofficial_currency_code: Option<String>,
}

/// The kind of a Plaid investment transaction (`type`, `subtype`): a
/// transfer's direction is its quantity's sign (Plaid: positive when
/// securities are received).
fn investment_kind(kind: &str, subtype: &str, quantity: Decimal) -> InvestmentKind {
    use InvestmentKind::*;
    match (kind, subtype) {
        (_, "split" | "stock split") => Split,
        (_, "tax" | "tax withheld" | "non-resident tax") => Tax,
        ("buy", _) => Buy,
        ("sell", _) => Sell,
        ("fee", _) => Fee,
        ("cash", "dividend" | "qualified dividend" | "non-qualified dividend") => Dividend,
        ("cash", "interest" | "interest receivable") => Interest,
        ("transfer", _) if quantity.is_sign_positive() && !quantity.is_zero() => TransferIn,
        ("transfer", _) if quantity.is_sign_negative() && !quantity.is_zero() => TransferOut,
        // Deposits, withdrawals, capital gains, cancellations: their
        // subtype says which.
        _ => Other,
    }
}

/// How far back investment activity is asked for (Plaid keeps 24 months).
const INVESTMENT_HISTORY_DAYS: u64 = 730;

/// Investment transactions Plaid lists in one page (its maximum).
const INVESTMENT_PAGE: usize = 500;

impl PlaidConnector {
    pub fn new(config: PlaidConfig) -> Result<Self, reqwest::Error> {
        let http = ProviderHttp::new("Plaid", config.timeout)?;
        Ok(Self { config, http })
    }

    /// One call: a `POST` of `body` with the operator's credentials.
    fn call<T: serde::de::DeserializeOwned>(
        &self,
        path: &str,
        body: &Value,
        what: &str,
    ) -> Result<T, ConnectorError> {
        let request = self
            .http
            .client
            .post(format!(
                "{}/{path}",
                self.config.base_url.trim_end_matches('/')
            ))
            .header("PLAID-CLIENT-ID", &self.config.client_id)
            .header("PLAID-SECRET", &self.config.secret)
            .header("Plaid-Version", API_VERSION)
            .json(body);
        let response = self.http.send(request, what)?;
        self.http.json(response, what, refusal)
    }

    /// Starts Hosted Link: for a new Item, or (`access_token`) in update
    /// mode for an Item that needs its user again.
    fn start_link(
        &self,
        request: &ConnectRequest,
        access_token: Option<&str>,
    ) -> Result<Prepared, ConnectorError> {
        let redirect = request
            .settings
            .get("redirect")
            .and_then(Value::as_str)
            .ok_or_else(|| {
                ConnectorError::Misconfigured("connecting Plaid needs a return URL".into())
            })?;
        // A reference for Plaid that says nothing about the user.
        let mut reference = [0u8; 12];
        rand::rng().fill_bytes(&mut reference);
        let mut body = json!({
            "client_name": "Tributary",
            "language": "en",
            "country_codes": self.config.country_codes,
            "user": {"client_user_id": hex_string(&reference)},
            "hosted_link": {
                "completion_redirect_uri": redirect,
                "url_lifetime_seconds": LINK_LIFETIME_SECONDS,
            },
        });
        match access_token {
            Some(token) => body["access_token"] = token.into(),
            None => {
                body["products"] = json!(["transactions"]);
                body["optional_products"] = json!(["investments"]);
                body["transactions"] = json!({"days_requested": 730});
            }
        }
        #[derive(Deserialize)]
        struct Created {
            link_token: String,
            #[serde(default)]
            hosted_link_url: Option<String>,
        }
        let created: Created = self.call("link/token/create", &body, "the Link session")?;
        let link = created.hosted_link_url.ok_or_else(|| {
            ConnectorError::Protocol("Plaid started Link without a Hosted Link URL".into())
        })?;
        Ok(Prepared {
            // The user picks their bank at Plaid: named once they have.
            institution: SnapshotInstitution {
                provider_institution_id: "plaid".into(),
                name: "Plaid".into(),
                logo_url: None,
            },
            settings: json!({
                "link": link,
                "link_token": created.link_token,
                "update_mode": access_token.is_some(),
            }),
            credentials: None,
            consent: None,
        })
    }

    /// Every transaction of the Item, from the start of its history: the
    /// pages of one listing, restarted when Plaid's data changed between
    /// them (nothing of a half-read listing is used).
    fn transactions(&self, access_token: &str) -> Result<Vec<Transaction>, ConnectorError> {
        let mut last = None;
        for _ in 0..RESTARTS {
            match self.one_listing(access_token) {
                Err(ConnectorError::Unavailable { reason, .. })
                    if reason.contains("TRANSACTIONS_SYNC_MUTATION_DURING_PAGINATION") =>
                {
                    last = Some(reason);
                }
                listed => return listed,
            }
        }
        Err(ConnectorError::Unavailable {
            reason: last.unwrap_or_default(),
            retry_after: None,
        })
    }

    fn one_listing(&self, access_token: &str) -> Result<Vec<Transaction>, ConnectorError> {
        let mut by_id: BTreeMap<String, Transaction> = BTreeMap::new();
        let mut cursor: Option<String> = None;
        for _ in 0..MAX_PAGES {
            let mut body = json!({"access_token": access_token, "count": PAGE});
            if let Some(cursor) = &cursor {
                body["cursor"] = cursor.clone().into();
            }
            let page: SyncPage = self.call("transactions/sync", &body, "the transactions")?;
            if page.transactions_update_status.as_deref() == Some("NOT_READY")
                && page.added.is_empty()
                && by_id.is_empty()
            {
                return Err(ConnectorError::Unavailable {
                    reason: "Plaid is still gathering the bank's transactions".into(),
                    retry_after: Some(NOT_READY_WAIT),
                });
            }
            for t in page.added.into_iter().chain(page.modified) {
                by_id.insert(t.transaction_id.clone(), t);
            }
            for gone in page.removed {
                by_id.remove(&gone.transaction_id);
            }
            if !page.has_more {
                return Ok(by_id.into_values().collect());
            }
            cursor = Some(page.next_cursor);
        }
        Err(ConnectorError::Protocol(format!(
            "Plaid kept paging the transactions past {MAX_PAGES} pages"
        )))
    }

    /// Holdings by account, for an Item with investment accounts.
    fn holdings(
        &self,
        access_token: &str,
    ) -> Result<HashMap<String, Vec<SnapshotHolding>>, ConnectorError> {
        let answer: HoldingsAnswer = match self.call(
            "investments/holdings/get",
            &json!({"access_token": access_token}),
            "the holdings",
        ) {
            Ok(answer) => answer,
            // The Item was linked without investments: nothing to read.
            Err(ConnectorError::Protocol(why)) if not_linked_for(&why) => {
                return Ok(HashMap::new());
            }
            Err(err) => return Err(err),
        };
        let mut securities: HashMap<String, (PlaidSecurity, Value)> = HashMap::new();
        for raw in &answer.securities {
            let security: PlaidSecurity = parse(raw, "security")?;
            securities.insert(security.security_id.clone(), (security, raw.clone()));
        }
        let mut by_account: HashMap<String, Vec<SnapshotHolding>> = HashMap::new();
        for raw in &answer.holdings {
            let holding: PlaidHolding = parse(raw, "holding")?;
            let (security, security_raw) =
                securities.get(&holding.security_id).ok_or_else(|| {
                    ConnectorError::Protocol(format!(
                        "Plaid sent a holding of security {} it does not describe",
                        holding.security_id
                    ))
                })?;
            let currency = holding
                .iso_currency_code
                .clone()
                .or(holding.unofficial_currency_code.clone())
                .or(security.iso_currency_code.clone())
                .or(security.unofficial_currency_code.clone())
                .unwrap_or_default();
            by_account
                .entry(holding.account_id.clone())
                .or_default()
                .push(SnapshotHolding {
                    security: plaid_security(security, &currency),
                    quantity: holding.quantity,
                    price: holding.institution_price,
                    value: holding.institution_value,
                    value_in_account_currency: None,
                    cost_basis: holding.cost_basis,
                    currency,
                    raw: json!({"holding": raw, "security": security_raw}),
                });
        }
        Ok(by_account)
    }
}

impl PlaidConnector {
    /// The terms of the Item's cards and loans by account
    /// (`/liabilities/get`); none where the Item was linked without
    /// liabilities.
    fn liabilities(
        &self,
        access_token: &str,
    ) -> Result<HashMap<String, SnapshotLiability>, ConnectorError> {
        let answer: LiabilitiesAnswer = match self.call(
            "liabilities/get",
            &json!({"access_token": access_token}),
            "the liabilities",
        ) {
            Ok(answer) => answer,
            Err(ConnectorError::Protocol(why)) if not_linked_for(&why) => {
                return Ok(HashMap::new());
            }
            Err(err) => return Err(err),
        };
        let Liabilities {
            credit,
            mortgage,
            student,
        } = answer.liabilities;
        Ok([credit, mortgage, student]
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|l| {
                let account = l.account_id?;
                Some((
                    account,
                    SnapshotLiability {
                        credit_limit: None,
                        minimum_payment: l.minimum_payment_amount.or(l.next_monthly_payment),
                        next_payment_due: l.next_payment_due_date,
                        last_statement_balance: l.last_statement_balance,
                    },
                ))
            })
            .collect())
    }

    /// Investment activity by account, for an Item with investment
    /// accounts: `/investments/transactions/get`, page by page.
    fn investment_transactions(
        &self,
        access_token: &str,
        today: NaiveDate,
    ) -> Result<HashMap<String, Vec<SnapshotInvestmentTransaction>>, ConnectorError> {
        let start = today - chrono::Days::new(INVESTMENT_HISTORY_DAYS);
        let mut securities: HashMap<String, PlaidSecurity> = HashMap::new();
        let mut by_account: HashMap<String, Vec<SnapshotInvestmentTransaction>> = HashMap::new();
        let mut offset = 0;
        for _ in 0..MAX_PAGES {
            let answer: InvestmentTransactionsAnswer = match self.call(
                "investments/transactions/get",
                &json!({"access_token": access_token, "start_date": start.to_string(),
                        "end_date": today.to_string(),
                        "options": {"count": INVESTMENT_PAGE, "offset": offset}}),
                "the investment transactions",
            ) {
                Ok(answer) => answer,
                // The Item was linked without investments: nothing to read.
                Err(ConnectorError::Protocol(why)) if not_linked_for(&why) => {
                    return Ok(HashMap::new());
                }
                Err(err) => return Err(err),
            };
            for raw in &answer.securities {
                let security: PlaidSecurity = parse(raw, "security")?;
                securities.insert(security.security_id.clone(), security);
            }
            let listed = answer.investment_transactions.len();
            for raw in answer.investment_transactions {
                let t: PlaidInvestmentTransaction = parse(&raw, "investment transaction")?;
                let security = t.security_id.as_ref().and_then(|id| securities.get(id));
                let currency = t
                    .iso_currency_code
                    .clone()
                    .or(t.unofficial_currency_code.clone())
                    .or(security.and_then(|s| s.iso_currency_code.clone()))
                    .or(security.and_then(|s| s.unofficial_currency_code.clone()))
                    .unwrap_or_default();
                by_account.entry(t.account_id.clone()).or_default().push(
                    SnapshotInvestmentTransaction {
                        provider_id: t.investment_transaction_id,
                        date: t.date,
                        kind: investment_kind(&t.kind, &t.subtype, t.quantity),
                        subtype: Some(t.subtype),
                        security: security.map(|s| plaid_security(s, &currency)),
                        // Plaid writes 0 where a field does not apply.
                        quantity: Some(t.quantity).filter(|q| !q.is_zero()),
                        price: Some(t.price).filter(|p| !p.is_zero()),
                        // Plaid: positive when cash leaves the account.
                        amount: -t.amount,
                        fees: t.fees.filter(|f| !f.is_zero()),
                        currency,
                        description: t.name,
                        raw,
                    }
                    .with_quantity_signed(),
                );
            }
            offset += listed;
            if listed == 0 || offset >= answer.total_investment_transactions {
                return Ok(by_account);
            }
        }
        Err(ConnectorError::Protocol(format!(
            "Plaid kept paging the investment transactions past {MAX_PAGES} pages"
        )))
    }
}

/// Whether Plaid refused a product's call because the Item was linked
/// without it (or has no account it covers): nothing to read, no error.
fn not_linked_for(why: &str) -> bool {
    [
        "PRODUCTS_NOT_SUPPORTED",
        "NO_INVESTMENT_ACCOUNTS",
        "NO_LIABILITY_ACCOUNTS",
        "INVALID_PRODUCT",
    ]
    .iter()
    .any(|code| why.contains(code))
}

/// A Plaid security as the one Tributary stores.
fn plaid_security(security: &PlaidSecurity, currency: &str) -> Security {
    Security {
        name: security
            .name
            .clone()
            .or(security.ticker_symbol.clone())
            .unwrap_or_else(|| "Unnamed security".into()),
        currency: currency.to_owned(),
        ticker: security.ticker_symbol.clone(),
        figi: None,
        cusip: security.cusip.clone(),
        isin: security.isin.clone(),
    }
}

/// One record of a list kept verbatim (served as a holding's `raw`).
fn parse<T: serde::de::DeserializeOwned>(value: &Value, what: &str) -> Result<T, ConnectorError> {
    serde_json::from_value(value.clone()).map_err(|err| {
        ConnectorError::Protocol(format!("Plaid sent a {what} that does not read: {err}"))
    })
}

fn transaction(t: Transaction) -> SnapshotTransaction {
    // The text a person recognises: the merchant, else the counterparty.
    let merchant = t
        .merchant_name
        .clone()
        .or_else(|| t.counterparties.first().map(|c| c.name.clone()));
    let hints = Hints(
        t.personal_finance_category
            .and_then(|c| c.detailed.or(c.primary))
            .map(CategoryHint::Plaid)
            .into_iter()
            .collect(),
    );
    SnapshotTransaction {
        provider_id: t.transaction_id,
        pending_provider_id: t.pending_transaction_id,
        is_pending: t.pending,
        date: t.date,
        // Plaid: positive is money out.
        amount: -t.amount,
        currency: t
            .iso_currency_code
            .or(t.unofficial_currency_code)
            .unwrap_or_default(),
        merchant,
        description: Some(t.name),
        hints,
    }
}

impl crate::connector::Connector for PlaidConnector {
    fn provider(&self) -> Provider {
        PROVIDER
    }

    fn prepare(&self, request: &ConnectRequest) -> Result<Prepared, ConnectorError> {
        self.start_link(request, None)
    }

    /// Update mode: the same Item, its token kept (it does not change).
    fn prepare_again(
        &self,
        request: &ConnectRequest,
        existing: Option<&str>,
    ) -> Result<Prepared, ConnectorError> {
        let Some(item) = existing.and_then(|text| serde_json::from_str::<Item>(text).ok()) else {
            return self.prepare(request);
        };
        let mut prepared = self.start_link(request, Some(&item.access_token))?;
        prepared.credentials = existing.map(str::to_owned);
        Ok(prepared)
    }

    fn complete(
        &self,
        settings: &Value,
        _credentials: Option<&str>,
        _returned: &AuthorizationReturn,
    ) -> Result<Option<Prepared>, ConnectorError> {
        let link_token = settings
            .get("link_token")
            .and_then(Value::as_str)
            .ok_or_else(|| {
                ConnectorError::Misconfigured("the connection has no Link session".into())
            })?;
        // The return comes on success and on exit alike: Plaid says which.
        let session: Value = self.call(
            "link/token/get",
            &json!({"link_token": link_token}),
            "the Link session",
        )?;
        let sessions = session["link_sessions"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let finished = sessions.iter().rev().find(|s| !s["finished_at"].is_null());
        let Some(finished) = finished else {
            return Err(ConnectorError::InvalidCredentials(
                "the bank was not connected: Plaid's session has not ended".into(),
            ));
        };
        let mut settings = settings.clone();
        if let Some(map) = settings.as_object_mut() {
            map.remove("link");
        }
        let update_mode = settings["update_mode"].as_bool().unwrap_or(false);
        let added = finished["results"]["item_add_results"]
            .as_array()
            .and_then(|results| results.first());
        let Some(added) = added else {
            let why = finished["exit"]["error"]["display_message"]
                .as_str()
                .or(finished["exit"]["error"]["error_message"].as_str())
                .unwrap_or("the user left before connecting a bank");
            if update_mode && finished["exit"]["error"].is_null() {
                // Update mode adds no Item: a session that ended without an
                // error repaired the one there is; its token stays.
                return Ok(None);
            }
            return Err(ConnectorError::InvalidCredentials(format!(
                "the bank was not connected: {why}"
            )));
        };
        let public_token = added["public_token"].as_str().ok_or_else(|| {
            ConnectorError::Protocol("Plaid's session result has no public_token".into())
        })?;
        let item: Item = self.call(
            "item/public_token/exchange",
            &json!({"public_token": public_token}),
            "the public token exchange",
        )?;
        let institution = SnapshotInstitution {
            provider_institution_id: added["institution"]["institution_id"]
                .as_str()
                .unwrap_or("plaid")
                .to_owned(),
            name: added["institution"]["name"]
                .as_str()
                .unwrap_or("Plaid")
                .to_owned(),
            logo_url: None,
        };
        let credentials = serde_json::to_string(&item)
            .map_err(|err| ConnectorError::Protocol(format!("keeping the Item: {err}")))?;
        Ok(Some(Prepared {
            institution,
            settings,
            credentials: Some(credentials),
            consent: None,
        }))
    }

    fn fetch(&self, context: &FetchContext<'_>) -> Result<ProviderSnapshot, ConnectorError> {
        let item: Item = context
            .credentials
            .map(serde_json::from_str)
            .transpose()
            .map_err(|err| ConnectorError::Misconfigured(format!("the kept Item: {err}")))?
            .ok_or_else(|| {
                ConnectorError::ReauthRequired(
                    "the bank was not connected yet: open Plaid's page and connect it".into(),
                )
            })?;
        let token = json!({"access_token": item.access_token});
        // Balances as the bank has them now (`/accounts/get` would give
        // Plaid's cached ones, up to a day old).
        let accounts: AccountsAnswer =
            self.call("accounts/balance/get", &token, "the accounts and balances")?;
        let transactions = self.transactions(&item.access_token)?;
        let (mut holdings, mut activity) = if accounts
            .accounts
            .iter()
            .any(|a| a.kind() == AccountKind::Brokerage)
        {
            (
                self.holdings(&item.access_token)?,
                self.investment_transactions(&item.access_token, context.now.date_naive())?,
            )
        } else {
            (HashMap::new(), HashMap::new())
        };
        let mut liabilities = if accounts
            .accounts
            .iter()
            .any(|a| a.kind().is_liability())
        {
            self.liabilities(&item.access_token)?
        } else {
            HashMap::new()
        };
        let mut by_account: HashMap<String, Vec<SnapshotTransaction>> = HashMap::new();
        for t in transactions {
            by_account
                .entry(t.account_id.clone())
                .or_default()
                .push(transaction(t));
        }
        let now: DateTime<Utc> = context.now;
        let snapshot_accounts = accounts
            .accounts
            .iter()
            .map(|a| {
                let currency = a.currency().unwrap_or_default().to_owned();
                let balance = a.balances.current.map(|current| SnapshotBalance {
                    current: a.signed(current),
                    available: a.balances.available,
                    currency: currency.clone(),
                    as_of: now,
                });
                SnapshotAccount {
                    balance_history: Vec::new(),
                    provider_account_id: a.account_id.clone(),
                    institution: None,
                    name: a.name.clone(),
                    kind: a.kind(),
                    currency,
                    mask: a.mask.clone(),
                    balance,
                    transactions: by_account.remove(&a.account_id).unwrap_or_default(),
                    investment_transactions: activity.remove(&a.account_id).unwrap_or_default(),
                    liability: a.kind().is_liability().then(|| SnapshotLiability {
                        credit_limit: a.balances.limit,
                        ..liabilities.remove(&a.account_id).unwrap_or_default()
                    }),
                    holdings: (a.kind() == AccountKind::Brokerage)
                        .then(|| holdings.remove(&a.account_id).unwrap_or_default()),
                }
            })
            .collect();
        Ok(ProviderSnapshot {
            institution: SnapshotInstitution {
                provider_institution_id: accounts
                    .item
                    .institution_id
                    .unwrap_or_else(|| "plaid".into()),
                name: accounts
                    .item
                    .institution_name
                    .unwrap_or_else(|| "Plaid".into()),
                logo_url: None,
            },
            accounts: snapshot_accounts,
            notices: Vec::new(),
            // Plaid links a posted transaction to its pending one.
            pending_match: None,
            complete: true,
        })
    }
}
