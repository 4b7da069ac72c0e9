//! The Account Set `GET /accounts` answers, in either protocol version,
//! built from what storage holds for the destination's viewer.
//!
//! Ids are Tributary's own, prefixed as the SimpleFIN Bridge prefixes its
//! ids: `ACT-<account id>`, `CON-<connection id>`, `TRN-<transaction row
//! id>`, `INV-<investment activity row id>`. A pending transaction that
//! posts keeps its row (the reconciler links them), so it keeps its
//! SimpleFIN id and clients never see it twice. Amounts and balances are strings with their exact digits.

use super::error::{ErrorCode, ErrorItem};
use super::query::{AccountsQuery, Version};
use chrono::{NaiveDate, NaiveDateTime};
use serde::Serialize;
use tributary_domain::ids::{AccountId, ConnectionId, TransactionId};
use tributary_domain::model::ConnectionStatus;
use tributary_domain::money::Decimal;
use tributary_storage::connections::ConnectionRecord;
use tributary_storage::investments::InvestmentTransactionView;
use tributary_storage::read::{AccountView, BalanceRecord, HoldingView, TransactionRecord};

const ACCOUNT_PREFIX: &str = "ACT-";
const CONNECTION_PREFIX: &str = "CON-";
const TRANSACTION_PREFIX: &str = "TRN-";
const INVESTMENT_PREFIX: &str = "INV-";

pub fn account_id(id: AccountId) -> String {
    format!("{ACCOUNT_PREFIX}{id}")
}

fn connection_id(id: ConnectionId) -> String {
    format!("{CONNECTION_PREFIX}{id}")
}

fn transaction_id(id: TransactionId) -> String {
    format!("{TRANSACTION_PREFIX}{id}")
}

/// The account an `account=` value names, if it has the shape of one.
pub fn parse_account_id(text: &str) -> Option<AccountId> {
    text.strip_prefix(ACCOUNT_PREFIX)?
        .parse::<i64>()
        .ok()
        .map(AccountId::new)
}

/// One account as read for the answer.
#[derive(Debug)]
pub struct AccountData {
    pub view: AccountView,
    /// Stated, else derived (see `gather`): the protocol requires one.
    pub balance: BalanceRecord,
    /// Oldest first, as the protocol orders them.
    pub transactions: Vec<TransactionRecord>,
    pub holdings: Vec<HoldingView>,
    /// Of the answer's dates, oldest first; empty where the source reports
    /// no investment activity.
    pub investment_transactions: Vec<InvestmentTransactionView>,
}

/// Everything an answer says, read in one snapshot.
#[derive(Debug)]
pub struct Gathered {
    /// The connections behind the accounts, for `connections` and errors.
    pub connections: Vec<ConnectionRecord>,
    pub accounts: Vec<AccountData>,
}

#[derive(Debug, Serialize)]
pub struct AccountSet {
    errors: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    errlist: Option<Vec<ErrorItem>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    connections: Option<Vec<Connection>>,
    accounts: Vec<Account>,
}

#[derive(Debug, Serialize)]
struct Connection {
    conn_id: String,
    name: String,
    org_id: String,
    org_name: String,
    sfin_url: String,
}

#[derive(Debug, Serialize)]
struct Org {
    name: String,
    /// Required when `name` is absent; Tributary always has the name, and
    /// gives the SimpleFIN server's host so clients that key on it work.
    domain: String,
    #[serde(rename = "sfin-url")]
    sfin_url: String,
    id: String,
}

#[derive(Debug, Serialize)]
struct Account {
    id: String,
    name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    conn_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    org: Option<Org>,
    currency: String,
    balance: String,
    /// Optional in the protocol, always sent: some clients require it.
    #[serde(rename = "available-balance")]
    available_balance: String,
    #[serde(rename = "balance-date")]
    balance_date: i64,
    transactions: Vec<Transaction>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    holdings: Vec<Holding>,
    /// The protocol's place for what a server adds to an account:
    /// investment activity, where the account has any in the dates asked.
    #[serde(skip_serializing_if = "Option::is_none")]
    extra: Option<AccountExtra>,
}

#[derive(Debug, Serialize)]
struct AccountExtra {
    investment_transactions: Vec<InvestmentTransaction>,
}

/// One buy, sell, dividend, fee… in the protocol's terms: ids prefixed,
/// dates as epoch seconds, amounts as strings with their exact digits
/// (docs/simplefin.md).
#[derive(Debug, Serialize)]
struct InvestmentTransaction {
    id: String,
    posted: i64,
    /// BUY, SELL, DIVIDEND, INTEREST, FEE, TAX, TRANSFER_IN, TRANSFER_OUT,
    /// SPLIT or OTHER.
    #[serde(rename = "type")]
    kind: &'static str,
    /// The cash effect on the account, negative when cash leaves it.
    amount: String,
    currency: String,
    /// Units gained (positive) or lost (negative); empty where unknown.
    shares: String,
    price: String,
    fees: String,
    symbol: String,
    /// The security's name, else the source's text.
    description: String,
}

#[derive(Debug, Serialize)]
struct Transaction {
    id: String,
    posted: i64,
    amount: String,
    description: String,
    payee: String,
    memo: String,
    transacted_at: i64,
    pending: bool,
    /// The protocol's place for what a server adds: enrichment's category
    /// (docs/enrichment.md), where the transaction has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    extra: Option<Extra>,
}

#[derive(Debug, Serialize)]
struct Extra {
    category: &'static str,
    subcategory: &'static str,
}

/// The SimpleFIN Bridge's holdings extension.
#[derive(Debug, Serialize)]
struct Holding {
    id: String,
    created: i64,
    currency: String,
    cost_basis: String,
    description: String,
    market_value: String,
    purchase_price: String,
    shares: String,
    symbol: String,
}

/// Where the answer is served from: `sfin-url` and the org's `domain`.
#[derive(Debug, Clone)]
pub struct Origin {
    pub root_url: String,
    pub host: String,
}

/// A decimal with its exact digits and at least two after the point, as
/// the Bridge sends them: Actual Budget reads a balance as cents by
/// removing the point, so `12.5` would read as 125 cents.
fn amount(value: Decimal) -> String {
    let mut value = value;
    if value.scale() < 2 {
        value.rescale(2);
    }
    value.to_string()
}

fn epoch(date: NaiveDate) -> i64 {
    date.and_time(chrono::NaiveTime::MIN).and_utc().timestamp()
}

fn epoch_of(time: NaiveDateTime) -> i64 {
    time.and_utc().timestamp()
}

impl AccountSet {
    pub fn build(gathered: Gathered, query: &AccountsQuery, origin: &Origin) -> Self {
        let mut problems: Vec<ErrorItem> = gathered
            .connections
            .iter()
            .flat_map(|c| connection_problems(c, &gathered.accounts))
            .collect();
        if let Some(capped) = query.capped {
            problems.push(ErrorItem::general(
                ErrorCode::Api,
                format!(
                    "Requested date range exceeds {} days and was capped: transactions from {} on.",
                    capped.max_window_days, capped.from
                ),
            ));
        }
        let v2 = query.version == Version::V2;
        let accounts = gathered
            .accounts
            .into_iter()
            .map(|data| account(data, query, origin))
            .collect();
        // Version 1's strings are worded as the SimpleFIN Bridge words them:
        // clients (Actual Budget, Home Assistant) find the affected
        // accounts by matching "Connection to <org name> may need
        // attention" against each account's `org.name`.
        let mut errors: Vec<String> = gathered
            .connections
            .iter()
            .filter(|c| c.status != ConnectionStatus::Active)
            .map(|c| format!("Connection to {} may need attention", c.institution_name))
            .collect();
        errors.extend(
            problems
                .iter()
                .filter(|p| p.conn_id.is_none() && p.account_id.is_none())
                .map(|p| p.msg.clone()),
        );
        Self {
            errors,
            connections: v2.then(|| {
                gathered
                    .connections
                    .iter()
                    .map(|c| Connection {
                        conn_id: connection_id(c.id),
                        name: c.institution_name.clone(),
                        org_id: format!("{}-{}", c.provider, c.institution_id),
                        org_name: c.institution_name.clone(),
                        sfin_url: origin.root_url.clone(),
                    })
                    .collect()
            }),
            errlist: v2.then_some(problems),
            accounts,
        }
    }
}

/// A connection that needs the user, in the protocol's terms: sign-in
/// again is `con.auth`; a failed update is `act.failed` for each of its
/// accounts in the answer (only those: a scoped destination never learns of
/// others); a disconnected one is `con.`. Its accounts still list what is
/// stored.
fn connection_problems(connection: &ConnectionRecord, accounts: &[AccountData]) -> Vec<ErrorItem> {
    let what = match connection.status {
        ConnectionStatus::Active => return Vec::new(),
        ConnectionStatus::ReauthRequired => "needs you to sign in to the bank again",
        ConnectionStatus::Error => "could not be updated; try again later",
        ConnectionStatus::Disconnected => "was disconnected",
    };
    let reason = connection
        .status_reason
        .as_deref()
        .map(|reason| format!(" ({reason})"))
        .unwrap_or_default();
    let msg = format!(
        "Connection to {} {what}{reason}",
        connection.institution_name
    );
    let on_connection = |code| ErrorItem {
        conn_id: Some(connection_id(connection.id)),
        ..ErrorItem::general(code, msg.clone())
    };
    match connection.status {
        ConnectionStatus::ReauthRequired => vec![on_connection(ErrorCode::ConnectionAuth)],
        ConnectionStatus::Error => accounts
            .iter()
            .filter(|a| a.view.connection_id == connection.id)
            .map(|a| ErrorItem {
                account_id: Some(account_id(a.view.id)),
                ..on_connection(ErrorCode::AccountFailed)
            })
            .collect(),
        _ => vec![on_connection(ErrorCode::Connection)],
    }
}

fn account(data: AccountData, query: &AccountsQuery, origin: &Origin) -> Account {
    let AccountData {
        view,
        balance,
        transactions,
        holdings,
        investment_transactions,
    } = data;
    let (balance_text, available, balance_date) = (
        amount(balance.amount),
        amount(balance.available.unwrap_or(balance.amount)),
        epoch_of(balance.as_of),
    );
    let currency = view.currency.clone();
    let holdings = holdings.into_iter().map(|h| holding(view.id, h)).collect();
    Account {
        id: account_id(view.id),
        name: view.name,
        conn_id: (query.version == Version::V2).then(|| connection_id(view.connection_id)),
        org: (query.version == Version::V1).then(|| Org {
            name: view.institution_name,
            domain: origin.host.clone(),
            sfin_url: origin.root_url.clone(),
            id: connection_id(view.connection_id),
        }),
        currency,
        balance: balance_text,
        available_balance: available,
        balance_date,
        transactions: transactions.into_iter().map(transaction).collect(),
        holdings,
        extra: (!investment_transactions.is_empty()).then(|| AccountExtra {
            investment_transactions: investment_transactions
                .into_iter()
                .map(investment_transaction)
                .collect(),
        }),
    }
}

fn investment_transaction(view: InvestmentTransactionView) -> InvestmentTransaction {
    let text = |value: Option<Decimal>| value.map(|v| v.to_string()).unwrap_or_default();
    let (symbol, name) = match view.security {
        Some(security) => (security.ticker.unwrap_or_default(), Some(security.name)),
        None => (String::new(), None),
    };
    InvestmentTransaction {
        id: format!("{INVESTMENT_PREFIX}{}", view.id),
        posted: epoch(view.date),
        kind: view.kind.as_str(),
        amount: amount(view.amount),
        currency: view.currency,
        shares: text(view.quantity),
        price: text(view.price),
        fees: text(view.fees),
        symbol,
        description: name.or(view.description).unwrap_or_default(),
    }
}

fn transaction(record: TransactionRecord) -> Transaction {
    let when = epoch(record.date);
    let extra = record.shown_subcategory().map(|s| Extra {
        category: s.category.name(),
        subcategory: s.id,
    });
    Transaction {
        id: transaction_id(record.id),
        posted: when,
        amount: amount(record.amount),
        // Required and shown to people: the bank's text, else the payee.
        description: record
            .description
            .clone()
            .or_else(|| record.merchant.clone())
            .unwrap_or_default(),
        payee: record
            .clean_merchant
            .or(record.merchant)
            .unwrap_or_default(),
        memo: record.description.unwrap_or_default(),
        transacted_at: when,
        pending: record.is_pending,
        extra,
    }
}

fn holding(account: AccountId, h: HoldingView) -> Holding {
    // What was paid a share, where the cost is known.
    let purchase_price = match h.cost_basis {
        Some(cost) if !h.quantity.is_zero() => {
            (cost / h.quantity).round_dp(6).normalize().to_string()
        }
        _ => String::new(),
    };
    // A security is held once per account: its ticker or name is stable
    // across syncs, where a position in the list is not.
    let security_key = h
        .security
        .ticker
        .clone()
        .unwrap_or_else(|| h.security.name.clone());
    Holding {
        id: format!("HOL-{account}-{security_key}"),
        created: epoch_of(h.as_of),
        currency: h.currency,
        cost_basis: h.cost_basis.map(|c| c.to_string()).unwrap_or_default(),
        description: h.security.name,
        market_value: h.value.to_string(),
        purchase_price,
        shares: h.quantity.to_string(),
        symbol: h.security.ticker.unwrap_or_default(),
    }
}
