//! The data endpoints, written once and mounted behind any authentication
//! scheme: `configure::<ApiKey>` for the Personal interface.
//!
//! Each request does its database work in one blocking section, on one
//! pooled connection: the credential's check, the account lookup (which
//! also enforces ownership and key scope) and one query for the data. An
//! account that is someone else's, out of the key's scope, or missing gets
//! the very same 404.

use crate::auth::{self, Credential};
use crate::error::{ApiError, Envelope};
use crate::openapi::responses;
use crate::response_cache::ResponseKey;
use crate::routes::Operation;
use crate::state::AppState;
use crate::{conditional, transaction_stream, wire};
use actix_web::http::header::{self, EntityTag};
use actix_web::web::Bytes;
use actix_web::{HttpRequest, HttpResponse, web};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chrono::NaiveDate;
use std::collections::HashMap;
use tributary_domain::access::Viewer;
use tributary_domain::ids::AccountId;
use tributary_domain::money::Decimal;
use tributary_storage::investments::{self, InvestmentTransactionView};
use tributary_storage::read::{
    self, AccountView, HoldingView, TransactionFilter, TransactionPosition, TransactionRecord,
};
use tributary_storage::{AnyConnection, HeldSnapshot};

/// Largest page a client may ask for.
pub const MAX_LIMIT: i64 = 1000;
/// Page size when a `cursor` comes without a `limit`.
pub const DEFAULT_LIMIT: i64 = 100;

/// The data endpoints, for credentials `A`.
pub fn operations<A: Credential>() -> Vec<Operation> {
    vec![
        Operation::new::<__path_list_accounts, _, _>(list_accounts::<A>).data(),
        Operation::new::<__path_list_transactions, _, _>(list_transactions::<A>).data(),
        Operation::new::<__path_get_balance, _, _>(get_balance::<A>).data(),
        Operation::new::<__path_get_holdings, _, _>(get_holdings::<A>).data(),
        Operation::new::<__path_list_investment_transactions, _, _>(
            list_investment_transactions::<A>,
        )
        .data(),
    ]
}

/// Runs blocking database work off the async runtime (see
/// [`crate::fault::with_conn`]), for handlers that answer the envelope.
pub(crate) async fn with_conn<T: Send + 'static>(
    state: &web::Data<AppState>,
    work: impl FnOnce(&mut AnyConnection) -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    crate::fault::with_conn(state, work).await
}

pub(crate) fn parse_account_id(raw: &str) -> Result<AccountId, ApiError> {
    raw.parse::<i64>()
        .ok()
        .filter(|id| *id > 0)
        .map(AccountId::new)
        .ok_or_else(|| {
            ApiError::bad_request(
                "INVALID_ACCOUNT_ID",
                format!("accountId must be a positive integer, got `{raw}`."),
            )
        })
}

/// The same answer whether the account is missing, someone else's or out of
/// the key's scope: it must not tell them apart, so it quotes nothing.
fn account_not_found() -> ApiError {
    ApiError::not_found(
        "ACCOUNT_NOT_FOUND",
        "No account with this id is visible with these credentials.",
    )
}

pub(crate) fn visible_account(
    conn: &mut AnyConnection,
    viewer: &Viewer,
    id: AccountId,
) -> Result<AccountView, ApiError> {
    read::find_account(conn, viewer, id)?.ok_or_else(account_not_found)
}

/// The ids of the accounts a question is about: `only` (404 unless the
/// viewer sees it), else every account the viewer sees.
pub(crate) fn visible_accounts(
    conn: &mut AnyConnection,
    viewer: &Viewer,
    only: Option<AccountId>,
) -> Result<Vec<AccountId>, ApiError> {
    Ok(match only {
        Some(account) => vec![visible_account(conn, viewer, account)?.id],
        None => read::list_accounts(conn, viewer)?
            .into_iter()
            .map(|a| a.id)
            .collect(),
    })
}

#[utoipa::path(
    get,
    path = "/accounts",
    tag = "Accounts",
    summary = "List accounts",
    description = "Every account the credentials can see (a key limited to some accounts sees those).",
    responses(
        (status = 200, description = "The accounts.", body = wire::AccountList, links(
            ("transactions" = (operation_id = "list_transactions", parameters(("accountId" = "$response.body#/accounts/0/id")), description = "The first account's transactions.")),
            ("balance" = (operation_id = "get_balance", parameters(("accountId" = "$response.body#/accounts/0/id")), description = "The first account's balance.")),
            ("holdings" = (operation_id = "get_holdings", parameters(("accountId" = "$response.body#/accounts/0/id")), description = "The first account's holdings.")),
            ("investment_transactions" = (operation_id = "list_investment_transactions", parameters(("accountId" = "$response.body#/accounts/0/id")), description = "The first account's investment activity.")),
        )),
        (status = 304, response = responses::NotModified),
        (status = 401, response = responses::Unauthorized),
        (status = 503, response = responses::Unavailable),
    )
)]
async fn list_accounts<C: Credential>(
    credential: C,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ApiError> {
    const ACCOUNTS: &str = "accounts";
    if let Some(viewer) = credential.cached(&state.caches.credentials, state.clock.now())
        && let Some(body) = state.responses.get(&ResponseKey::new(&viewer, ACCOUNTS))
    {
        return Ok(json_body(body));
    }
    let epoch = state.responses.epoch();
    let (viewer, accounts) = auth::as_viewer(&state, credential, |conn, viewer| {
        let accounts = read::list_accounts(conn, &viewer)?;
        Ok((viewer, accounts))
    })
    .await?;
    let accounts: Vec<wire::Account> = accounts.into_iter().map(Into::into).collect();
    let body = to_json(&wire::AccountList {
        total: accounts.len(),
        accounts,
    })?;
    state
        .responses
        .keep(ResponseKey::new(&viewer, ACCOUNTS), epoch, body.clone());
    Ok(json_body(body))
}

/// `value` as the JSON bytes of a response body.
fn to_json(value: &impl serde::Serialize) -> Result<Bytes, ApiError> {
    serde_json::to_vec(value)
        .map(Bytes::from)
        .map_err(|err| ApiError::internal(format!("writing a response: {err}")))
}

/// 200 with `body`, JSON bytes written before.
fn json_body(body: Bytes) -> HttpResponse {
    HttpResponse::Ok()
        .insert_header(header::ContentType::json())
        .body(body)
}

/// The query of a transaction listing, validated.
#[derive(Debug, Clone, PartialEq)]
struct TransactionQuery {
    filter: TransactionFilter,
    /// `Some` when the client pages.
    page: Option<Page>,
}

#[derive(Debug, Clone, PartialEq)]
struct Page {
    limit: i64,
    after: Option<TransactionPosition>,
}

pub(crate) fn parse_date(name: &str, raw: &str) -> Result<NaiveDate, ApiError> {
    let invalid = || {
        ApiError::bad_request(
            "INVALID_DATE",
            format!("`{name}` must be a date as YYYY-MM-DD, got `{raw}`."),
        )
    };
    if raw.len() != 10 {
        return Err(invalid());
    }
    NaiveDate::parse_from_str(raw, "%Y-%m-%d").map_err(|_| invalid())
}

/// A date given as `name` or as `alias` (the spelling existing clients of
/// the hosted service send); both given and different is an error naming
/// both.
/// `from` and `to` (or `start_date` and `end_date`), each inclusive; 400
/// `INVALID_DATE_RANGE` when `from` comes after `to`.
pub(crate) fn date_range(
    params: &HashMap<String, String>,
) -> Result<(Option<NaiveDate>, Option<NaiveDate>), ApiError> {
    in_order(
        date_parameter(params, "from", "start_date")?,
        date_parameter(params, "to", "end_date")?,
    )
}

/// `from` and `to` when `from` does not come after `to`; 400
/// `INVALID_DATE_RANGE` otherwise.
pub(crate) fn in_order(
    from: Option<NaiveDate>,
    to: Option<NaiveDate>,
) -> Result<(Option<NaiveDate>, Option<NaiveDate>), ApiError> {
    if let (Some(from), Some(to)) = (from, to)
        && from > to
    {
        return Err(ApiError::bad_request(
            "INVALID_DATE_RANGE",
            format!("`from` ({from}) is after `to` ({to})."),
        ));
    }
    Ok((from, to))
}

fn date_parameter(
    params: &HashMap<String, String>,
    name: &'static str,
    alias: &'static str,
) -> Result<Option<NaiveDate>, ApiError> {
    let value = params
        .get(name)
        .map(|raw| parse_date(name, raw))
        .transpose()?;
    let aliased = params
        .get(alias)
        .map(|raw| parse_date(alias, raw))
        .transpose()?;
    match (value, aliased) {
        (Some(a), Some(b)) if a != b => Err(ApiError::bad_request(
            "INVALID_PARAMETER",
            format!(
                "`{name}` ({a}) and `{alias}` ({b}) are the same parameter and differ: send one."
            ),
        )),
        (value, aliased) => Ok(value.or(aliased)),
    }
}

pub(crate) fn encode_cursor(position: TransactionPosition) -> String {
    URL_SAFE_NO_PAD.encode(format!(
        "v1:{}:{}",
        position.date.format("%Y-%m-%d"),
        position.id
    ))
}

pub(crate) fn decode_cursor(raw: &str) -> Result<TransactionPosition, ApiError> {
    let invalid = || {
        ApiError::bad_request(
            "INVALID_CURSOR",
            "`cursor` is not a cursor this API returned; start again without it.",
        )
    };
    let text = URL_SAFE_NO_PAD
        .decode(raw)
        .ok()
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .ok_or_else(invalid)?;
    let mut parts = text.split(':');
    match (parts.next(), parts.next(), parts.next(), parts.next()) {
        (Some("v1"), Some(date), Some(id), None) => Ok(TransactionPosition {
            date: NaiveDate::parse_from_str(date, "%Y-%m-%d").map_err(|_| invalid())?,
            id: id.parse().map_err(|_| invalid())?,
        }),
        _ => Err(invalid()),
    }
}

/// The query string's parameters, refusing what would otherwise be guessed
/// at: bytes that do not decode to UTF-8 (form decoding would turn them
/// into U+FFFD silently) and a parameter given twice (which one counts?).
pub(crate) fn query_parameters(query_string: &str) -> Result<HashMap<String, String>, ApiError> {
    let invalid = |why: String| ApiError::bad_request("INVALID_QUERY", why);
    let mut params = HashMap::new();
    for pair in query_string.split('&').filter(|p| !p.is_empty()) {
        let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
        let decode = |text: &str| {
            percent_encoding::percent_decode_str(&text.replace('+', " "))
                .decode_utf8()
                .map(|s| s.into_owned())
        };
        let name = decode(name).map_err(|_| {
            invalid(format!(
                "The query string does not decode: `{name}` is not percent-encoded UTF-8."
            ))
        })?;
        let value = decode(value).map_err(|_| {
            invalid(format!(
                "The query string does not decode: the value of `{name}` is not percent-encoded UTF-8."
            ))
        })?;
        if params.insert(name.clone(), value).is_some() {
            return Err(invalid(format!(
                "`{name}` is given more than once in the query string."
            )));
        }
    }
    Ok(params)
}

impl TransactionQuery {
    fn parse(query_string: &str) -> Result<Self, ApiError> {
        let params = query_parameters(query_string)?;
        let include_pending = match params.get("include_pending").map(String::as_str) {
            None => false,
            Some("true" | "1") => true,
            Some("false" | "0") => false,
            Some(other) => {
                return Err(ApiError::bad_request(
                    "INVALID_PARAMETER",
                    format!("`include_pending` must be true or false, got `{other}`."),
                ));
            }
        };
        let (from, to) = date_range(&params)?;
        let limit = params
            .get("limit")
            .map(|raw| {
                raw.parse::<i64>()
                    .ok()
                    .filter(|n| (1..=MAX_LIMIT).contains(n))
                    .ok_or_else(|| {
                        ApiError::bad_request(
                            "INVALID_LIMIT",
                            format!(
                                "`limit` must be an integer from 1 to {MAX_LIMIT}, got `{raw}`."
                            ),
                        )
                    })
            })
            .transpose()?;
        let after = params
            .get("cursor")
            .map(|raw| decode_cursor(raw))
            .transpose()?;
        let page = (limit.is_some() || after.is_some()).then(|| Page {
            limit: limit.unwrap_or(DEFAULT_LIMIT),
            after,
        });
        Ok(TransactionQuery {
            filter: TransactionFilter {
                include_pending,
                from,
                to,
            },
            page,
        })
    }

    /// The query as it shapes the answer, for the listing's entity tag:
    /// two requests with the same tag part get the same bytes of the same
    /// data. (No `+`: the tag's content-coding suffix starts with one.)
    fn tag(&self) -> String {
        let date = |d: Option<NaiveDate>| d.map_or_else(|| "-".to_owned(), |d| d.to_string());
        let mut tag = format!(
            "p{}.f{}.t{}",
            u8::from(self.filter.include_pending),
            date(self.filter.from),
            date(self.filter.to)
        );
        if let Some(page) = &self.page {
            tag.push_str(&format!(".l{}", page.limit));
            if let Some(after) = page.after {
                tag.push_str(&format!(".c{}", encode_cursor(after)));
            }
        }
        tag
    }
}

/// What the listing's first blocking step found.
enum Listed {
    /// The client's copy is current (`If-None-Match`): no row was read.
    NotModified(EntityTag),
    /// A page, or an unpaged listing that fit in one batch: the whole body.
    Whole(EntityTag, Bytes),
    /// The unpaged listing, its first batch read, the rest to stream.
    Stream(EntityTag, Box<transaction_stream::Batch>),
}

/// The unpaged listing is longer than a batch and every stream slot is
/// taken: wait for one, then start again.
struct NeedsSlot;

#[utoipa::path(
    get,
    path = "/accounts/{accountId}/transactions",
    tag = "Accounts",
    summary = "List an account's transactions",
    description = "Newest first (date, then id). Without `limit` and `cursor` every matching transaction comes in one answer; with either, a page of `limit` and a `nextCursor` for the next.",
    params(
        ("accountId" = i64, Path, description = "The account's id.", minimum = 1),
        ("from" = Option<String>, Query, description = "Only transactions on or after this date (`YYYY-MM-DD`); `start_date` is the same.", format = Date),
        ("to" = Option<String>, Query, description = "Only transactions on or before this date (`YYYY-MM-DD`); `end_date` is the same.", format = Date),
        ("start_date" = Option<String>, Query, description = "The same as `from`.", format = Date),
        ("end_date" = Option<String>, Query, description = "The same as `to`.", format = Date),
        ("include_pending" = Option<bool>, Query, description = "Include pending transactions (default false)."),
        ("limit" = Option<i64>, Query, description = "Page size, 1 to 1000 (100 when only `cursor` is given).", minimum = 1, maximum = 1000),
        ("cursor" = Option<String>, Query, description = "The `nextCursor` of the previous page."),
    ),
    responses(
        (status = 200, description = "The transactions (`nextCursor` only when paging).", body = wire::TransactionPage),
        (status = 304, response = responses::NotModified),
        (status = 400, description = "A parameter cannot be used: `INVALID_ACCOUNT_ID`, `INVALID_DATE`, `INVALID_DATE_RANGE`, `INVALID_LIMIT`, `INVALID_CURSOR`, `INVALID_PARAMETER`, `INVALID_QUERY`.", body = Envelope),
        (status = 401, response = responses::Unauthorized),
        (status = 404, description = "`ACCOUNT_NOT_FOUND`: missing, another user's, or outside the key's scope (one answer for all three).", body = Envelope),
        (status = 503, response = responses::Unavailable),
    )
)]
async fn list_transactions<C: Credential>(
    credential: C,
    state: web::Data<AppState>,
    path: web::Path<String>,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    let parsed = parse_account_id(&path)
        .and_then(|id| Ok((id, TransactionQuery::parse(req.query_string())?)));
    let (account_id, query) = auth::checked(&state, &credential, parsed).await?;
    let if_none_match = conditional::if_none_match(&req);
    if let Some(answer) = answered_from_caches(
        &state,
        &credential,
        account_id,
        &query,
        if_none_match.as_ref(),
    ) {
        return Ok(answer);
    }
    let mut slot = None;
    let listed = loop {
        let (credential, query, if_none_match) =
            (credential.clone(), query.clone(), if_none_match.clone());
        let state_for_block = state.clone();
        let listed = web::block(move || {
            first_step(
                &state_for_block,
                &credential,
                account_id,
                query,
                if_none_match,
                slot,
            )
        })
        .await??;
        match listed {
            Ok(listed) => break listed,
            Err(NeedsSlot) => {
                slot = Some(state.streams.take(state.db.checkout_timeout()).await?);
            }
        }
    };
    Ok(match listed {
        Listed::NotModified(matched) => conditional::not_modified(&matched),
        Listed::Whole(tag, body) => listing_body(&tag, body),
        Listed::Stream(tag, first) => HttpResponse::Ok()
            .insert_header(header::ContentType::json())
            .insert_header((header::ETAG, tag.to_string()))
            .streaming(transaction_stream::body(*first)),
    })
}

/// A listing answered without the database, on the event loop: the
/// credential and the account's version are both cached and still current,
/// and either the client has the listing of that version (304) or this
/// process kept its bytes.
fn answered_from_caches(
    state: &AppState,
    credential: &impl Credential,
    account_id: AccountId,
    query: &TransactionQuery,
    if_none_match: Option<&header::IfNoneMatch>,
) -> Option<HttpResponse> {
    let viewer = credential.cached(&state.caches.credentials, state.clock.now())?;
    let version = state.caches.account_versions.cached(&viewer, account_id)?;
    let current = conditional::listing_tag(account_id.get(), version, &query.tag());
    if let Some(matched) = conditional::matching(if_none_match, &current) {
        return Some(conditional::not_modified(&matched));
    }
    let body = state
        .responses
        .get(&ResponseKey::new(&viewer, current.tag()))?;
    Some(listing_body(&current, body))
}

/// 200 with a listing's whole body and its tag.
fn listing_body(tag: &EntityTag, body: Bytes) -> HttpResponse {
    let mut response = json_body(body);
    if let Ok(value) = header::HeaderValue::from_str(&tag.to_string()) {
        response.headers_mut().insert(header::ETAG, value);
    }
    response
}

/// The listing's blocking part: the credential's check, then every read of
/// one listing (the account and its tally, the rows, a range count) from
/// one snapshot: a sync committing in between must not make a page and its
/// total disagree, nor a streamed list show a row twice. The check comes
/// first, outside the snapshot, because it may record the key's last use.
fn first_step(
    state: &AppState,
    credential: &impl Credential,
    account_id: AccountId,
    query: TransactionQuery,
    if_none_match: Option<header::IfNoneMatch>,
    slot: Option<tokio::sync::OwnedSemaphorePermit>,
) -> Result<Result<Listed, NeedsSlot>, ApiError> {
    // Read before any row: what is read under it is stale the moment the
    // epoch moves on.
    let epoch = state.responses.epoch();
    let mut conn = state.db.conn()?;
    let viewer = credential.verify(&state.caches.credentials, &mut conn, state.clock.now())?;
    let tag_of = |account: &AccountView| {
        conditional::listing_tag(account.id.get(), account.transactions.version, &query.tag())
    };
    if if_none_match.is_some() {
        // Revalidation needs the account's version alone: one query, no
        // snapshot to open and close (two round trips on PostgreSQL); the
        // version read is kept for the next revalidation.
        let account = state
            .caches
            .account_versions
            .find_account(&mut conn, &viewer, account_id)?
            .ok_or_else(account_not_found)?;
        if let Some(matched) = conditional::matching(if_none_match.as_ref(), &tag_of(&account)) {
            return Ok(Ok(Listed::NotModified(matched)));
        }
    }
    let mut snapshot = HeldSnapshot::begin(conn)?;
    let account = visible_account(snapshot.conn(), &viewer, account_id)?;
    state
        .caches
        .account_versions
        .remember(&viewer, &account, epoch);
    let tag = tag_of(&account);
    let key = ResponseKey::new(&viewer, tag.tag());
    let Some(page) = query.page else {
        let mut first =
            transaction_stream::Listing::new(snapshot, viewer, account_id, query.filter)
                .next_batch()?;
        if first.rest.is_none() {
            state.responses.keep(key, epoch, first.bytes.clone());
            return Ok(Ok(Listed::Whole(tag, first.bytes)));
        }
        if let Some(rest) = first.rest.take() {
            // Only a listing longer than one batch holds its connection
            // between batches, and for that it needs a slot.
            match rest.continue_with(slot.or_else(|| state.streams.try_take()))? {
                Some(rest) => first.rest = Some(rest),
                None => return Ok(Err(NeedsSlot)),
            }
        }
        return Ok(Ok(Listed::Stream(tag, Box::new(first))));
    };
    let conn = snapshot.conn();
    // One row more than asked tells whether another page follows.
    let mut rows: Vec<TransactionRecord> = read::list_transactions(
        conn,
        account_id,
        &query.filter,
        Some(page.limit + 1),
        page.after,
    )?
    .into_iter()
    .map(|row| row.seen_by(&viewer))
    .collect();
    let more = rows.len() as i64 > page.limit;
    rows.truncate(page.limit as usize);
    let next_cursor = more
        .then(|| {
            rows.last().map(|last| {
                encode_cursor(TransactionPosition {
                    date: last.date,
                    id: last.id,
                })
            })
        })
        .flatten();
    let total = read::page_total(conn, &account, &query.filter)?;
    snapshot.finish()?;
    let body = to_json(&wire::TransactionPage {
        transactions: &rows,
        total,
        next_cursor,
    })?;
    state.responses.keep(key, epoch, body.clone());
    Ok(Ok(Listed::Whole(tag, body)))
}

#[utoipa::path(
    get,
    path = "/accounts/{accountId}/balance",
    tag = "Accounts",
    summary = "Get an account's balance",
    description = "The latest balance the provider reported.",
    params(("accountId" = i64, Path, description = "The account's id.", minimum = 1)),
    responses(
        (status = 200, description = "The balance.", body = wire::BalanceResponse),
        (status = 304, response = responses::NotModified),
        (status = 400, description = "`INVALID_ACCOUNT_ID`.", body = Envelope),
        (status = 401, response = responses::Unauthorized),
        (status = 404, description = "`ACCOUNT_NOT_FOUND`, or `BALANCE_NOT_AVAILABLE` (never synced).", body = Envelope),
        (status = 503, response = responses::Unavailable),
    )
)]
async fn get_balance<C: Credential>(
    credential: C,
    state: web::Data<AppState>,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let account_id = auth::checked(&state, &credential, parse_account_id(&path)).await?;
    let balance = auth::as_viewer(&state, credential, move |conn, viewer| {
        visible_account(conn, &viewer, account_id)?;
        read::latest_balance(conn, account_id)?.ok_or_else(|| {
            ApiError::not_found(
                "BALANCE_NOT_AVAILABLE",
                format!("Account {account_id} has no balance yet; it has not been synced."),
            )
        })
    })
    .await?;
    Ok(HttpResponse::Ok().json(wire::BalanceResponse {
        balance: balance.into(),
    }))
}

#[utoipa::path(
    get,
    path = "/accounts/{accountId}/holdings",
    tag = "Accounts",
    summary = "Get a brokerage account's holdings",
    description = "Positions with quantity, price, value and cost basis; `totalValue` is in the account's currency.",
    params(("accountId" = i64, Path, description = "The account's id.", minimum = 1)),
    responses(
        (status = 200, description = "The holdings.", body = wire::HoldingsResponse),
        (status = 304, response = responses::NotModified),
        (status = 400, description = "`INVALID_ACCOUNT_ID`.", body = Envelope),
        (status = 401, response = responses::Unauthorized),
        (status = 404, description = "`ACCOUNT_NOT_FOUND`.", body = Envelope),
        (status = 501, description = "`HOLDINGS_NOT_SUPPORTED`: the account's provider reports no holdings.", body = Envelope),
        (status = 503, response = responses::Unavailable),
    )
)]
async fn get_holdings<C: Credential>(
    credential: C,
    state: web::Data<AppState>,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let account_id = auth::checked(&state, &credential, parse_account_id(&path)).await?;
    let (account, holdings) = auth::as_viewer(&state, credential, move |conn, viewer| {
        holdings_of(conn, &viewer, account_id)
    })
    .await?;
    Ok(HttpResponse::Ok().json(wire::HoldingsResponse {
        total_value: total_value(&account, &holdings),
        holdings: holdings.into_iter().map(Into::into).collect(),
        currency: account.currency,
    }))
}

#[utoipa::path(
    get,
    path = "/accounts/{accountId}/investment_transactions",
    tag = "Accounts",
    summary = "List an investment account's buys, sells, income and fees",
    description = "Investment activity as such, newest first: buys, sells, dividends, interest, fees, taxes, transfers of units and splits, each with its security, quantity, price, cash amount and fees. Their cash effect may also be among the account's transactions.",
    params(
        ("accountId" = i64, Path, description = "The account's id.", minimum = 1),
        ("from" = Option<String>, Query, description = "Only activity on or after this date (`YYYY-MM-DD`).", format = Date),
        ("to" = Option<String>, Query, description = "Only activity on or before this date (`YYYY-MM-DD`).", format = Date),
    ),
    responses(
        (status = 200, description = "The activity.", body = wire::InvestmentTransactionsResponse),
        (status = 304, response = responses::NotModified),
        (status = 400, description = "`INVALID_ACCOUNT_ID`, `INVALID_DATE`, `INVALID_DATE_RANGE` or `INVALID_QUERY`.", body = Envelope),
        (status = 401, response = responses::Unauthorized),
        (status = 404, description = "`ACCOUNT_NOT_FOUND`.", body = Envelope),
        (status = 501, description = "`INVESTMENTS_NOT_SUPPORTED`: the account's source reports no investment activity.", body = Envelope),
        (status = 503, response = responses::Unavailable),
    )
)]
async fn list_investment_transactions<C: Credential>(
    credential: C,
    state: web::Data<AppState>,
    path: web::Path<String>,
    request: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    let asked = parse_account_id(&path).and_then(|account_id| {
        let params = query_parameters(request.query_string())?;
        Ok((account_id, date_range(&params)?))
    });
    let (account_id, dates) = auth::checked(&state, &credential, asked).await?;
    let activity = auth::as_viewer(&state, credential, move |conn, viewer| {
        investment_transactions_of(conn, &viewer, account_id, dates, None)
    })
    .await?;
    Ok(
        HttpResponse::Ok().json(wire::InvestmentTransactionsResponse {
            total: activity.len(),
            investment_transactions: activity.into_iter().map(Into::into).collect(),
        }),
    )
}

/// The investment activity of an account `viewer` sees, between `dates`
/// (the newest `limit` of it where one is given): 501
/// `INVESTMENTS_NOT_SUPPORTED` where its source reports none.
pub(crate) fn investment_transactions_of(
    conn: &mut AnyConnection,
    viewer: &Viewer,
    account_id: AccountId,
    dates: (Option<NaiveDate>, Option<NaiveDate>),
    limit: Option<i64>,
) -> Result<Vec<InvestmentTransactionView>, ApiError> {
    let account = visible_account(conn, viewer, account_id)?;
    if !tributary_providers::catalog::reports_investment_activity(account.provider) {
        // 501, like HOLDINGS_NOT_SUPPORTED: clients map it to "not
        // supported".
        return Err(ApiError::not_implemented(
            "INVESTMENTS_NOT_SUPPORTED",
            format!(
                "Account {account_id} comes from provider `{}`, which does not report investment activity.",
                account.provider
            ),
        ));
    }
    Ok(investments::list(conn, account_id, dates, limit)?)
}

/// The holdings of an account `viewer` sees, with the account: 501
/// `HOLDINGS_NOT_SUPPORTED` where its provider reports none.
pub(crate) fn holdings_of(
    conn: &mut AnyConnection,
    viewer: &Viewer,
    account_id: AccountId,
) -> Result<(AccountView, Vec<HoldingView>), ApiError> {
    let account = visible_account(conn, viewer, account_id)?;
    if !tributary_providers::catalog::reports_holdings(account.provider) {
        // 501, as the hosted service answers: clients map exactly this
        // status to "not supported" (a 400 fails their whole sync).
        return Err(ApiError::not_implemented(
            "HOLDINGS_NOT_SUPPORTED",
            format!(
                "Account {account_id} comes from provider `{}`, which does not report holdings.",
                account.provider
            ),
        ));
    }
    let holdings = read::list_holdings(conn, account_id)?;
    Ok((account, holdings))
}

/// What `holdings` are worth in the account's currency: a holding in
/// another currency counts with the converted value its provider reported
/// (one without is left out, and logged).
pub(crate) fn total_value(account: &AccountView, holdings: &[HoldingView]) -> Decimal {
    let mut total = Decimal::ZERO;
    for holding in holdings {
        match (
            holding.currency == account.currency,
            holding.value_in_account_currency,
        ) {
            (_, Some(converted)) => total += converted,
            (true, None) => total += holding.value,
            (false, None) => log::warn!(
                "account {}: holding of {} in {} has no value in {}; left out of totalValue",
                account.id,
                holding.security.name,
                holding.currency,
                account.currency
            ),
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;
    use tributary_domain::ids::TransactionId;

    fn parse(q: &str) -> Result<TransactionQuery, String> {
        TransactionQuery::parse(q).map_err(|e| e.code().to_owned())
    }

    #[test]
    fn defaults_are_posted_only_and_unpaged() {
        assert_eq!(
            parse("").unwrap(),
            TransactionQuery {
                filter: TransactionFilter::default(),
                page: None
            }
        );
    }

    #[test]
    fn each_bad_parameter_has_its_code() {
        assert_eq!(
            parse("include_pending=maybe").unwrap_err(),
            "INVALID_PARAMETER"
        );
        assert_eq!(parse("from=2026-13-01").unwrap_err(), "INVALID_DATE");
        assert_eq!(parse("to=yesterday").unwrap_err(), "INVALID_DATE");
        assert_eq!(parse("from=2026-1-5").unwrap_err(), "INVALID_DATE");
        assert_eq!(
            parse("from=2026-11-02&to=2026-11-01").unwrap_err(),
            "INVALID_DATE_RANGE"
        );
        assert_eq!(parse("limit=0").unwrap_err(), "INVALID_LIMIT");
        assert_eq!(parse("limit=1001").unwrap_err(), "INVALID_LIMIT");
        assert_eq!(parse("limit=ten").unwrap_err(), "INVALID_LIMIT");
        assert_eq!(parse("cursor=bm9wZQ").unwrap_err(), "INVALID_CURSOR");
        assert_eq!(parse("cursor=%%%").unwrap_err(), "INVALID_CURSOR");
    }

    #[test]
    fn cursors_round_trip() {
        let position = TransactionPosition {
            date: NaiveDate::from_ymd_opt(2026, 11, 3).unwrap(),
            id: TransactionId::new(42),
        };
        assert_eq!(decode_cursor(&encode_cursor(position)).unwrap(), position);
        let q = parse(&format!("cursor={}", encode_cursor(position))).unwrap();
        assert_eq!(
            q.page,
            Some(Page {
                limit: DEFAULT_LIMIT,
                after: Some(position)
            })
        );
    }

    #[test]
    fn account_ids_must_be_positive_integers() {
        assert_eq!(parse_account_id("17").unwrap(), AccountId::new(17));
        for bad in ["abc", "0", "-3", "1.5", "99999999999999999999"] {
            assert_eq!(
                parse_account_id(bad).unwrap_err().code(),
                "INVALID_ACCOUNT_ID",
                "{bad}"
            );
        }
    }
}
