//! The bank list: the ways this server connects (searchable), the
//! user's connections and accounts, and how many more accounts the app
//! allows. Shared by the authorization flow and the portal; only where
//! "continue" leads differs.

use super::header::Header;
use super::page::{PageError, render, see_other};
use super::session::with_conn;
use super::visitor::Visitor;
use crate::state::{AppState, Engine};
use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
use askama::Template;
use serde::Deserialize;
use tributary_domain::ids::{ConnectionId, UserId};
use tributary_domain::model::{AccountKind, ConnectionStatus, Provider};
use tributary_domain::status::StatusDetail;
use tributary_providers::ConnectWidget;
use tributary_providers::catalog;
use tributary_providers::description::{Description, Field};
use tributary_storage::apps;
use tributary_storage::connections::{self, ConnectionRecord};
use tributary_storage::read::AccountSummary;

/// A way to connect, as the list shows it: a connector (from its
/// description), or the statement upload.
#[derive(Debug, Clone)]
pub(super) struct Bank {
    pub key: &'static str,
    pub name: &'static str,
    pub description: &'static str,
    /// Whether connecting may send the person on to another site (their
    /// bank, the aggregator's own pages) straight from the form's post.
    pub hands_off: bool,
    /// The connector's description; `None` for the upload.
    pub connector: Option<&'static Description>,
    /// The provider's own enrollment script, where the operator set it up.
    pub widget: Option<ConnectWidget>,
}

impl Bank {
    /// Whether its form names a login, so that connecting the same one
    /// again signs in to the connection it made (`connect::connect`).
    pub(super) fn names_logins(&self) -> bool {
        self.connector
            .is_some_and(|c| c.connect.login_field().is_some())
    }

    /// A connector's entry, as its description tells it.
    pub(super) fn of(description: &'static Description) -> Bank {
        Bank {
            key: description.provider.as_str(),
            name: description.name,
            description: description.summary,
            hands_off: description.connect.hands_off,
            connector: Some(description),
            widget: None,
        }
    }

    /// With the enrollment script its connector offers `person` for it
    /// (`repairing`: the settings of the connection signed in to again),
    /// asked where provider calls run: it may ask the provider for a
    /// token. One that cannot be had is said in plain words, and the form
    /// still takes what the person pastes.
    pub(super) async fn offering(
        mut self,
        state: &AppState,
        person: UserId,
        repairing: Option<&serde_json::Value>,
    ) -> Result<(Bank, Option<String>), PageError> {
        let Some((provider, engine)) = self
            .connector
            .map(|c| c.provider)
            .zip(state.engine.clone())
            .filter(|(provider, engine)| engine.connect_launcher(*provider).is_some())
        else {
            return Ok((self, None));
        };
        let repairing = repairing.cloned();
        let offered = state
            .provider_calls
            .run(person, move || {
                engine.connect_widget(provider, repairing.as_ref(), person)
            })
            .await?;
        match offered {
            Ok(widget) => {
                self.widget = widget;
                Ok((self, None))
            }
            Err(err) => {
                log::warn!("{provider}'s connect widget for user {person}: {err}");
                let trouble = format!(
                    "{}'s own connect window cannot open right now: reload this page in a few minutes.",
                    self.name
                );
                Ok((self, Some(trouble)))
            }
        }
    }

    /// What the person fills in (none for the upload).
    pub fn fields(&self) -> &'static [Field] {
        self.connector.map_or(&[], |c| c.connect.fields)
    }

    /// Whether `field` is the one the form fills in again.
    pub fn prefills(&self, field: &Field) -> bool {
        self.connector
            .and_then(|c| c.connect.remembered_field())
            .is_some_and(|remembered| remembered.name == field.name)
    }

    /// The paragraph the form shows with the fields.
    pub fn note(&self) -> Option<&'static str> {
        self.connector.and_then(|c| c.connect.note)
    }

    /// For providers that reach many banks: the provider, whose banks the
    /// person finds by country and name.
    pub(super) fn reaches_many(&self) -> Option<Provider> {
        self.connector
            .filter(|c| c.connect.picks_institution)
            .map(|c| c.provider)
    }
}

pub(super) const UPLOAD: Bank = Bank {
    key: "upload",
    name: "Upload a statement file",
    description: "camt.052/053/054, MT940/MT942, OFX/QFX or CSV from your bank's website.",
    hands_off: false,
    connector: None,
    widget: None,
};

pub(super) fn engine(state: &AppState) -> Result<Engine, PageError> {
    state.engine.clone().ok_or_else(|| {
        PageError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "Connecting banks is not available",
            "This server cannot connect banks right now. Try again later.",
        )
    })
}

/// The ways to connect this server offers: its connectors, in the
/// catalog's order, then the upload.
fn banks(state: &AppState) -> Vec<Bank> {
    let mut banks: Vec<Bank> = match &state.engine {
        Some(engine) => catalog::CATALOG
            .iter()
            .filter(|d| engine.supports(d.provider))
            .map(|d| Bank::of(d))
            .collect(),
        None => Vec::new(),
    };
    banks.push(UPLOAD);
    banks
}

/// The bank `key` names (its enrollment script is offered on its form
/// alone: [`Bank::offering`]).
pub(super) fn find_bank(state: &AppState, key: &str) -> Result<Bank, PageError> {
    banks(state)
        .into_iter()
        .find(|b| b.key == key)
        .ok_or_else(PageError::not_found)
}

/// What the user has, for the list and the limit.
pub(super) struct Holdings {
    pub connections: Vec<ConnectionRecord>,
    pub accounts: Vec<AccountSummary>,
    /// Accounts the user may still add; `None`: no limit.
    pub remaining: Option<i64>,
}

pub(super) async fn holdings(
    state: &web::Data<AppState>,
    user_id: UserId,
) -> Result<Holdings, PageError> {
    with_conn(state, move |conn| {
        let connections = connections::list_connections(conn, Some(user_id))?;
        let accounts = tributary_storage::read::account_summaries(conn, user_id)?;
        let remaining = apps::account_limit(conn, user_id)?
            .map(|limit| (i64::from(limit) - accounts.len() as i64).max(0));
        Ok(Holdings {
            connections,
            accounts,
            remaining,
        })
    })
    .await
}

#[derive(Template)]
#[template(path = "banks.html")]
struct BanksPage<'a> {
    title: &'a str,
    header: Header,
    limit_holder: &'a str,
    query: &'a str,
    banks: Vec<Bank>,
    connections: Vec<ConnectionLine>,
    remaining: Option<i64>,
    /// Where the button leads once banks are connected, and what it says.
    continue_to: Option<(&'a str, &'a str)>,
}

/// A connection as the pages show it.
pub(super) struct ConnectionLine {
    pub id: ConnectionId,
    pub institution: String,
    pub status: &'static str,
    /// The status as its badge says it.
    pub status_words: &'static str,
    pub needs_reauth: bool,
    /// A synced connection that is not disconnected yet.
    pub can_disconnect: bool,
    pub problem: Option<String>,
    pub last_synced: String,
    /// The person may choose which of its accounts to share: a synced
    /// connection that has accounts, or found more than may be kept.
    pub can_choose_accounts: bool,
    pub accounts: Vec<AccountLine>,
}

/// An account's kind as the pages say it ("credit card").
pub(super) fn kind_in_words(kind: AccountKind) -> &'static str {
    match kind {
        AccountKind::Checking => "checking",
        AccountKind::Savings => "savings",
        AccountKind::CreditCard => "credit card",
        AccountKind::Brokerage => "brokerage",
        AccountKind::Loan => "loan",
        AccountKind::Other => "account",
    }
}

/// An account as the pages show it.
pub(super) struct AccountLine {
    pub name: String,
    pub mask: Option<String>,
    /// The kind in words ("credit card").
    pub kind: &'static str,
    pub currency: String,
}

impl From<&AccountSummary> for AccountLine {
    fn from(account: &AccountSummary) -> Self {
        Self {
            name: account.name.clone(),
            mask: account.mask.clone(),
            kind: kind_in_words(account.kind),
            currency: account.currency.clone(),
        }
    }
}

/// The reason a connection failed, in plain words.
pub(super) fn plain_words(connection: &ConnectionRecord) -> Option<String> {
    let reason = connection.status_reason.clone().unwrap_or_default();
    match connection.status {
        ConnectionStatus::Active => None,
        ConnectionStatus::ReauthRequired => Some(format!(
            "Your bank asks you to sign in again ({}).",
            reason.trim_end_matches('.')
        )),
        ConnectionStatus::Disconnected => Some(
            "This connection is disconnected: it is not synced, and its accounts stay. Sign in to the bank again to resume.".into(),
        ),
        ConnectionStatus::Error => Some(match &connection.status_detail {
            Some(StatusDetail::AccountLimitReached(limit)) => format!(
                "This bank has more accounts than you may connect: {}. Nothing from it was stored yet: choose which of its accounts to share.",
                limit.describe_to_user()
            ),
            None => format!("We could not get your accounts from this bank: {reason}."),
        }),
    }
}

/// A connection's status as its badge says it.
pub(super) fn status_words(status: ConnectionStatus) -> &'static str {
    match status {
        ConnectionStatus::Active => "Connected",
        ConnectionStatus::ReauthRequired => "Sign-in needed",
        ConnectionStatus::Disconnected => "Disconnected",
        ConnectionStatus::Error => "Not syncing",
    }
}

/// A synced connection the bank wants signed in to again, or one that was
/// disconnected (signing in again resumes it).
pub(super) fn needs_reauth(connection: &ConnectionRecord) -> bool {
    matches!(
        connection.status,
        ConnectionStatus::ReauthRequired | ConnectionStatus::Disconnected
    ) && connection.provider.is_synced()
}

/// A synced connection that is not disconnected yet.
pub(super) fn can_disconnect(connection: &ConnectionRecord) -> bool {
    connection.status != ConnectionStatus::Disconnected && connection.provider.is_synced()
}

pub(super) fn lines(holdings: &Holdings) -> Vec<ConnectionLine> {
    holdings
        .connections
        .iter()
        .map(|c| ConnectionLine {
            id: c.id,
            institution: c.institution_name.clone(),
            status: c.status.as_str(),
            status_words: status_words(c.status),
            needs_reauth: needs_reauth(c),
            can_disconnect: can_disconnect(c),
            problem: plain_words(c),
            last_synced: super::page::when(c.last_synced_at, "never"),
            can_choose_accounts: can_choose_accounts(c)
                && (limit_reached(c) || holdings.accounts.iter().any(|a| a.connection_id == c.id)),
            accounts: holdings
                .accounts
                .iter()
                .filter(|a| a.connection_id == c.id)
                .map(AccountLine::from)
                .collect(),
        })
        .collect()
}

/// Whether a connection's accounts can be chosen: one synced from a
/// provider (a statement file's account is the file's).
pub(super) fn can_choose_accounts(connection: &ConnectionRecord) -> bool {
    connection.provider.is_synced()
}

/// The last sync found more accounts than the person may have.
pub(super) fn limit_reached(connection: &ConnectionRecord) -> bool {
    matches!(
        connection.status_detail,
        Some(StatusDetail::AccountLimitReached(_))
    )
}

pub(super) async fn user_lines(
    state: &web::Data<AppState>,
    user_id: UserId,
) -> Result<Vec<ConnectionLine>, PageError> {
    Ok(lines(&holdings(state, user_id).await?))
}

#[derive(Deserialize)]
pub(super) struct Search {
    #[serde(default)]
    q: String,
}

pub(super) async fn list<V: Visitor>(
    req: HttpRequest,
    state: web::Data<AppState>,
    search: web::Query<Search>,
) -> Result<HttpResponse, PageError> {
    let visitor = V::load(&req, &state).await?;
    if let Some(detour) = visitor.detour() {
        return Ok(see_other(detour.path));
    }
    let holdings = holdings(&state, visitor.user().id).await?;
    let needle = search.q.trim().to_lowercase();
    let banks = banks(&state)
        .into_iter()
        .filter(|b| {
            needle.is_empty()
                || b.name.to_lowercase().contains(&needle)
                || b.description.to_lowercase().contains(&needle)
        })
        .collect();
    let has_accounts = !holdings.accounts.is_empty();
    render(&BanksPage {
        title: "Connect a bank",
        header: visitor.header(),
        limit_holder: &visitor.limit_holder(),
        query: search.q.trim(),
        banks,
        connections: lines(&holdings),
        remaining: holdings.remaining,
        continue_to: has_accounts.then(|| (visitor.continue_to(), visitor.continue_label())),
    })
}
