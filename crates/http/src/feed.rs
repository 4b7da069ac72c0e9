//! `GET /transactions/sync`, the change feed (docs/changes.md): what was
//! added, modified and removed past the client's cursor, in the order the
//! changes were made, so that a client mirrors a user's transactions with
//! one cursor; and `GET /investment_transactions/sync`, the same for
//! investment activity, with cursors of its own. Mounted for both
//! interfaces, behind their credentials.
//!
//! A cursor is opaque to clients: a position in the user's change sequence
//! (`tributary_domain::changes`) and a fingerprint of who may use it (the
//! user, the key's account scope and the `account_id` asked for). A cursor
//! of another viewer, or one older than the kept tombstones, answers 400
//! `RESYNC_REQUIRED`: the client drops its copy and reads from the start.

use crate::auth::{self, Credential};
use crate::data::{parse_account_id, query_parameters, visible_account};
use crate::error::{ApiError, Envelope};
use crate::openapi::responses;
use crate::routes::Operation;
use crate::state::AppState;
use crate::wire;
use actix_web::{HttpRequest, HttpResponse, web};
use tributary_domain::access::Viewer;
use tributary_domain::changes::{FINGERPRINT_BYTES, Feed, FeedCursor, FeedPosition};
use tributary_domain::ids::AccountId;
use tributary_storage::AnyConnection;
use tributary_storage::changes::{self, FeedEntry, FeedPage};
use tributary_storage::investment_feed;

/// Changes a page holds when the client does not say.
pub const DEFAULT_COUNT: i64 = 100;
/// The most a page holds.
pub const MAX_COUNT: i64 = 500;

/// The feed, for credentials `A`.
pub fn operations<A: Credential>() -> Vec<Operation> {
    vec![
        Operation::new::<__path_transactions_sync, _, _>(transactions_sync::<A>),
        Operation::new::<__path_investment_transactions_sync, _, _>(
            investment_transactions_sync::<A>,
        ),
    ]
}

/// The query, validated (the cursor's fingerprint is checked once the
/// viewer is known).
#[derive(Debug, Clone, PartialEq)]
struct FeedQuery {
    cursor: Option<FeedCursor>,
    count: i64,
    account: Option<AccountId>,
}

pub(crate) fn decode_cursor(raw: &str) -> Result<FeedCursor, ApiError> {
    FeedCursor::parse(raw).map_err(|_| {
        ApiError::bad_request(
            "INVALID_CURSOR",
            "`cursor` is not a cursor this API returned; start again without it.",
        )
    })
}

fn resync_required(why: &str) -> ApiError {
    ApiError::bad_request(
        "RESYNC_REQUIRED",
        format!("{why} Drop the copy made with it and read again without a cursor."),
    )
}

impl FeedQuery {
    fn parse(query_string: &str) -> Result<Self, ApiError> {
        let params = query_parameters(query_string)?;
        let count = params
            .get("count")
            .map(|raw| {
                raw.parse::<i64>()
                    .ok()
                    .filter(|n| (1..=MAX_COUNT).contains(n))
                    .ok_or_else(|| {
                        ApiError::bad_request(
                            "INVALID_COUNT",
                            format!(
                                "`count` must be an integer from 1 to {MAX_COUNT}, got `{raw}`."
                            ),
                        )
                    })
            })
            .transpose()?
            .unwrap_or(DEFAULT_COUNT);
        let account = params
            .get("account_id")
            .map(|raw| parse_account_id(raw))
            .transpose()?;
        let cursor = params
            .get("cursor")
            .map(|raw| decode_cursor(raw))
            .transpose()?;
        Ok(FeedQuery {
            cursor,
            count,
            account,
        })
    }
}

#[utoipa::path(
    get,
    path = "/transactions/sync",
    tag = "Accounts",
    summary = "Changes since a cursor",
    description = "The transactions added, modified and removed since `cursor`, in the order the changes were made: a client keeps a copy of every transaction exactly by applying each page and sending `next_cursor` back (docs/changes.md). Without `cursor` it starts from the beginning. A pending transaction that posts is `modified` with the same `id`. Pending transactions are included. Follow `next_cursor` while `has_more` is true; later, call again with the last `next_cursor` to get what changed since.",
    params(
        ("cursor" = Option<String>, Query, description = "The `next_cursor` of the previous answer; none to start from the beginning."),
        ("count" = Option<i64>, Query, description = "Changes a page holds, 1 to 500 (default 100).", minimum = 1, maximum = 500),
        ("account_id" = Option<i64>, Query, description = "Only this account's changes (a cursor made with it works only with it).", minimum = 1),
    ),
    responses(
        (status = 200, description = "The changes past the cursor.", body = wire::TransactionChanges, links(
            ("next" = (operation_id = "transactions_sync", parameters(("cursor" = "$response.body#/next_cursor")), description = "The next page, or later what changed since.")),
        )),
        (status = 400, description = "`INVALID_CURSOR` (not a cursor of this API), `RESYNC_REQUIRED` (another viewer's cursor, or one older than the kept removals: read again without a cursor), `INVALID_COUNT`, `INVALID_ACCOUNT_ID`, `INVALID_QUERY`.", body = Envelope),
        (status = 401, response = responses::Unauthorized),
        (status = 404, description = "`ACCOUNT_NOT_FOUND`: `account_id` is missing, another user's, or outside the key's scope.", body = Envelope),
        (status = 503, response = responses::Unavailable),
    )
)]
async fn transactions_sync<C: Credential>(
    credential: C,
    state: web::Data<AppState>,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    serve(credential, state, req, changes_past).await
}

/// How a feed reads a page: `viewer`'s changes past a cursor, at most a
/// count, of one account when given.
type ReadPage<W> = fn(
    &mut AnyConnection,
    &Viewer,
    Option<FeedCursor>,
    i64,
    Option<AccountId>,
) -> Result<W, ApiError>;

/// Answers a feed's request with the page `read` reads.
async fn serve<C: Credential, W: serde::Serialize + Send + 'static>(
    credential: C,
    state: web::Data<AppState>,
    req: HttpRequest,
    read: ReadPage<W>,
) -> Result<HttpResponse, ApiError> {
    let query = auth::checked(&state, &credential, FeedQuery::parse(req.query_string())).await?;
    let answer = auth::as_viewer(&state, credential, move |conn, viewer| {
        read(conn, &viewer, query.cursor, query.count, query.account)
    })
    .await?;
    Ok(HttpResponse::Ok()
        .insert_header(("Cache-Control", "private, no-store"))
        .json(answer))
}

/// A page's entries sorted into the answer's lists, each row as `shown`.
struct Sorted<W> {
    added: Vec<W>,
    modified: Vec<W>,
    removed: Vec<wire::RemovedTransaction>,
    next_cursor: String,
}

fn sort<R, Id: ToString, W>(
    entries: Vec<FeedEntry<R, Id>>,
    (after, fingerprint): (FeedPosition, [u8; FINGERPRINT_BYTES]),
    shown: impl Fn(R) -> W,
) -> Sorted<W> {
    let next = entries.last().map_or(after, FeedEntry::position);
    let mut sorted = Sorted {
        added: Vec::new(),
        modified: Vec::new(),
        removed: Vec::new(),
        next_cursor: FeedCursor {
            position: next,
            fingerprint,
        }
        .to_text(),
    };
    for entry in entries {
        match entry {
            FeedEntry::Current { record, added, .. } => {
                let row = shown(*record);
                if added {
                    sorted.added.push(row);
                } else {
                    sorted.modified.push(row);
                }
            }
            FeedEntry::Removed { id, account_id, .. } => {
                sorted.removed.push(wire::RemovedTransaction {
                    id: id.to_string(),
                    account_id: account_id.get(),
                })
            }
        }
    }
    sorted
}

/// The changes `viewer` may see past `cursor` (from the start without
/// one), at most `count`, of `account` alone when given: the answer of
/// `GET /transactions/sync`, also the MCP tool's.
pub(crate) fn changes_past(
    conn: &mut AnyConnection,
    viewer: &Viewer,
    cursor: Option<FeedCursor>,
    count: i64,
    account: Option<AccountId>,
) -> Result<wire::TransactionChanges, ApiError> {
    let start = start(conn, Feed::Transactions, viewer, cursor, account)?;
    let FeedPage::Changes { entries, has_more } =
        changes::read_feed(conn, viewer, account, start.0, count)?
    else {
        return Err(expired());
    };
    let sorted = sort(entries, start, |record| record);
    Ok(wire::TransactionChanges {
        added: sorted.added,
        modified: sorted.modified,
        removed: sorted.removed,
        next_cursor: sorted.next_cursor,
        has_more,
    })
}

/// Where `viewer` reads `feed` from with `cursor` (of `account` alone when
/// given), and the fingerprint of the cursors it is given: 404 for an
/// account it does not see, `RESYNC_REQUIRED` for a cursor made for
/// another viewer, account or feed.
fn start(
    conn: &mut AnyConnection,
    feed: Feed,
    viewer: &Viewer,
    cursor: Option<FeedCursor>,
    account: Option<AccountId>,
) -> Result<(FeedPosition, [u8; FINGERPRINT_BYTES]), ApiError> {
    if let Some(account) = account {
        visible_account(conn, viewer, account)?;
    }
    let fingerprint = FeedCursor::fingerprint_of(feed, viewer, account);
    match cursor {
        None => Ok((FeedPosition::START, fingerprint)),
        Some(cursor) if cursor.fingerprint == fingerprint => Ok((cursor.position, fingerprint)),
        Some(_) => Err(resync_required(
            "This cursor was made for other credentials, another `account_id` or another feed.",
        )),
    }
}

fn expired() -> ApiError {
    resync_required("This cursor is older than the removals this server keeps.")
}

#[utoipa::path(
    get,
    path = "/investment_transactions/sync",
    tag = "Accounts",
    summary = "Investment activity changed since a cursor",
    description = "The investment activity (buys, sells, dividends, interest, fees, taxes, transfers, splits) added, modified and removed since `cursor`, in the order the changes were made, with cursors of its own: the transactions' feed, for investment accounts (docs/changes.md, \"Investment activity\"). Without `cursor` it starts from the beginning. Follow `next_cursor` while `has_more` is true; later, call again with the last `next_cursor`.",
    params(
        ("cursor" = Option<String>, Query, description = "The `next_cursor` of the previous answer of this feed; none to start from the beginning."),
        ("count" = Option<i64>, Query, description = "Changes a page holds, 1 to 500 (default 100).", minimum = 1, maximum = 500),
        ("account_id" = Option<i64>, Query, description = "Only this account's changes (a cursor made with it works only with it).", minimum = 1),
    ),
    responses(
        (status = 200, description = "The changes past the cursor.", body = wire::InvestmentTransactionChanges, links(
            ("next" = (operation_id = "investment_transactions_sync", parameters(("cursor" = "$response.body#/next_cursor")), description = "The next page, or later what changed since.")),
        )),
        (status = 400, description = "`INVALID_CURSOR` (not a cursor of this API), `RESYNC_REQUIRED` (another viewer's cursor, another feed's, or one older than the kept removals: read again without a cursor), `INVALID_COUNT`, `INVALID_ACCOUNT_ID`, `INVALID_QUERY`.", body = Envelope),
        (status = 401, response = responses::Unauthorized),
        (status = 404, description = "`ACCOUNT_NOT_FOUND`: `account_id` is missing, another user's, or outside the key's scope.", body = Envelope),
        (status = 503, response = responses::Unavailable),
    )
)]
async fn investment_transactions_sync<C: Credential>(
    credential: C,
    state: web::Data<AppState>,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    serve(credential, state, req, activity_changes_past).await
}

/// The investment activity `viewer` may see changed past `cursor`: the
/// answer of `GET /investment_transactions/sync`.
pub(crate) fn activity_changes_past(
    conn: &mut AnyConnection,
    viewer: &Viewer,
    cursor: Option<FeedCursor>,
    count: i64,
    account: Option<AccountId>,
) -> Result<wire::InvestmentTransactionChanges, ApiError> {
    let start = start(conn, Feed::InvestmentTransactions, viewer, cursor, account)?;
    let FeedPage::Changes { entries, has_more } =
        investment_feed::read_feed(conn, viewer, account, start.0, count)?
    else {
        return Err(expired());
    };
    let sorted = sort(entries, start, wire::InvestmentTransaction::from);
    Ok(wire::InvestmentTransactionChanges {
        added: sorted.added,
        modified: sorted.modified,
        removed: sorted.removed,
        next_cursor: sorted.next_cursor,
        has_more,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use tributary_domain::access::Viewer;
    use tributary_domain::changes::ChangeSeq;
    use tributary_domain::ids::UserId;

    #[test]
    fn a_cursor_reads_back_and_names_its_viewer() {
        let alice = Viewer::whole_user(UserId::new(1));
        let position = FeedPosition::new(ChangeSeq::new(42), 7);
        let raw = FeedCursor {
            position,
            fingerprint: FeedCursor::fingerprint(&alice, None),
        }
        .to_text();
        let cursor = decode_cursor(&raw).unwrap();
        assert_eq!(cursor.position, position);
        assert_eq!(cursor.fingerprint, FeedCursor::fingerprint(&alice, None));
        let scoped = Viewer {
            user_id: UserId::new(1),
            account_scope: Some(vec![AccountId::new(3)]),
        };
        for other in [
            FeedCursor::fingerprint(&Viewer::whole_user(UserId::new(2)), None),
            FeedCursor::fingerprint(&scoped, None),
            FeedCursor::fingerprint(&alice, Some(AccountId::new(3))),
        ] {
            assert_ne!(cursor.fingerprint, other);
        }
        for bad in ["", "x", "AAAA", &raw[..raw.len() - 2], "v1:2026-01-01:3"] {
            assert!(decode_cursor(bad).is_err(), "{bad}");
        }
    }
}
