//! The change feed (docs/changes.md): each user's change sequence, the
//! tombstones removed transactions leave, and reading what changed past a
//! position.
//!
//! Every write that changes a user's transactions, balances or holdings
//! first takes the next number of the user's sequence with [`next_seq`].
//! That is an update of the user's row, whose lock the database holds until
//! the transaction ends: two changes of one user (two connections syncing
//! at once) take their numbers one after the other and commit in that
//! order, so a reader never sees number N+1 while N is still to commit.

use crate::StorageResult;
use crate::db::AnyConnection;
use crate::read::TransactionRecord;
use crate::schema::{accounts, transaction_tombstones, transactions, users};
use chrono::NaiveDateTime;
use diesel::prelude::*;
use std::collections::HashMap;
use tributary_domain::access::Viewer;
use tributary_domain::changes::{ChangeSeq, FeedPosition};
use tributary_domain::ids::{AccountId, TransactionId, UserId};

/// The next number of `user_id`'s change sequence, the user's row held
/// until the transaction this runs in ends (see the module's notes).
pub(crate) fn next_seq(conn: &mut AnyConnection, user_id: UserId) -> StorageResult<ChangeSeq> {
    let seq: i64 = diesel::update(users::table.find(user_id.get()))
        .set(users::change_seq.eq(users::change_seq + 1))
        .returning(users::change_seq)
        .get_result(conn)?;
    Ok(ChangeSeq::new(seq))
}

/// The accounts of `user_id` with a row that change `seq` wrote (along
/// the index of where rows last changed).
pub(crate) fn accounts_written(
    conn: &mut AnyConnection,
    user_id: UserId,
    seq: ChangeSeq,
) -> StorageResult<Vec<i64>> {
    let accounts: Vec<i64> = accounts::table
        .filter(accounts::user_id.eq(user_id.get()))
        .select(accounts::id)
        .load(conn)?;
    Ok(transactions::table
        .filter(transactions::account_id.eq_any(&accounts))
        .filter(transactions::change_seq.eq(seq.get()))
        .select(transactions::account_id)
        .distinct()
        .load(conn)?)
}

/// Leaves a tombstone numbered `seq` for each of the transactions `ids`,
/// which the caller then deletes.
pub(crate) fn bury(
    conn: &mut AnyConnection,
    user_id: UserId,
    seq: ChangeSeq,
    ids: &[TransactionId],
    now: NaiveDateTime,
) -> StorageResult<()> {
    for chunk in ids.chunks(500) {
        let removed: Vec<(i64, i64)> = transactions::table
            .filter(transactions::id.eq_any(chunk.iter().map(|id| id.get())))
            .select((transactions::id, transactions::account_id))
            .load(conn)?;
        let rows: Vec<_> = removed
            .into_iter()
            .map(|(id, account_id)| {
                (
                    transaction_tombstones::id.eq(id),
                    transaction_tombstones::user_id.eq(user_id.get()),
                    transaction_tombstones::account_id.eq(account_id),
                    transaction_tombstones::seq.eq(seq.get()),
                    transaction_tombstones::removed_at.eq(now),
                )
            })
            .collect();
        crate::backend::insert_tombstones(conn, &rows)?;
    }
    Ok(())
}

/// Tombstones for every transaction and every piece of investment activity
/// of `account_ids` (their connection is being removed), numbered `seq`.
pub(crate) fn bury_accounts(
    conn: &mut AnyConnection,
    user_id: UserId,
    seq: ChangeSeq,
    account_ids: &[i64],
    now: NaiveDateTime,
) -> StorageResult<()> {
    for account_id in account_ids {
        let ids: Vec<TransactionId> = transactions::table
            .filter(transactions::account_id.eq(account_id))
            .select(transactions::id)
            .load::<i64>(conn)?
            .into_iter()
            .map(TransactionId::new)
            .collect();
        bury(conn, user_id, seq, &ids, now)?;
    }
    crate::investment_feed::bury_accounts(conn, user_id, seq, account_ids, now)
}

/// One change past a reader's position, of a feed of rows `R` with ids
/// `Id` (transactions by default; investment activity has its own,
/// `investment_feed`).
#[derive(Debug, Clone, PartialEq)]
pub enum FeedEntry<R = TransactionRecord, Id = TransactionId> {
    /// A row as it is now: met where it was added (`added`; a reader meets
    /// this once), or where it last changed.
    Current {
        /// Boxed: a row is many times the size of a removal.
        record: Box<R>,
        added: bool,
        position: FeedPosition,
    },
    /// A row removed past the reader's position.
    Removed {
        id: Id,
        account_id: AccountId,
        position: FeedPosition,
    },
}

impl<R, Id> FeedEntry<R, Id> {
    pub fn position(&self) -> FeedPosition {
        match self {
            FeedEntry::Current { position, .. } | FeedEntry::Removed { position, .. } => *position,
        }
    }
}

/// What [`read_feed`] found.
#[derive(Debug, Clone, PartialEq)]
pub enum FeedPage<R = TransactionRecord, Id = TransactionId> {
    Changes {
        /// In the order of their positions.
        entries: Vec<FeedEntry<R, Id>>,
        /// More changes lie past the last entry.
        has_more: bool,
    },
    /// The position is from before the newest purged tombstones: removals
    /// may be missing, and the reader must start again from the start.
    Expired,
}

/// The accounts a feed read past `after` covers (the viewer's, or
/// `account` alone), and the scope its tombstones are cut to; `None` when
/// `after` is older than the kept tombstones.
pub(crate) struct FeedScope {
    pub account_ids: Vec<i64>,
    pub tombstones_of: Option<Vec<i64>>,
}

pub(crate) fn feed_scope(
    conn: &mut AnyConnection,
    viewer: &Viewer,
    account: Option<AccountId>,
    after: FeedPosition,
) -> StorageResult<Option<FeedScope>> {
    let purged: i64 = users::table
        .find(viewer.user_id.get())
        .select(users::tombstones_purged_seq)
        .first(conn)?;
    if after != FeedPosition::START && after.seq.get() < purged {
        return Ok(None);
    }
    let tombstones_of: Option<Vec<i64>> = match account {
        Some(account) => Some(vec![account.get()]),
        None => viewer
            .account_scope
            .as_ref()
            .map(|ids| ids.iter().map(|id| id.get()).collect()),
    };
    let mut visible = accounts::table
        .filter(accounts::user_id.eq(viewer.user_id.get()))
        .select(accounts::id)
        .into_boxed();
    if let Some(ids) = &tombstones_of {
        visible = visible.filter(accounts::id.eq_any(ids.clone()));
    }
    Ok(Some(FeedScope {
        account_ids: visible.load(conn)?,
        tombstones_of,
    }))
}

/// The page of at most `count` entries from what a read gathered: each
/// scan read one more than a page, so the first `count` of them all lie
/// before anything a scan left unread. A row added and changed within the
/// page comes once, at its addition, which carries it as it is now.
pub(crate) fn page_of<R, Id>(
    mut entries: Vec<FeedEntry<R, Id>>,
    count: i64,
    row_id: impl Fn(&R) -> i64,
) -> FeedPage<R, Id> {
    entries.sort_by_key(FeedEntry::position);
    let mut met = std::collections::HashSet::new();
    entries.retain(|entry| match entry {
        FeedEntry::Current { record, .. } => met.insert(row_id(record)),
        FeedEntry::Removed { .. } => true,
    });
    let limit = usize::try_from(count).unwrap_or(usize::MAX);
    let has_more = entries.len() > limit;
    entries.truncate(limit);
    FeedPage::Changes { entries, has_more }
}

#[derive(Queryable, Selectable)]
#[diesel(table_name = transactions)]
struct ChangedRow {
    #[diesel(embed)]
    record: TransactionRecord,
    change_seq: i64,
    created_seq: i64,
}

impl ChangedRow {
    /// The row as met where it was added (`added`), or where it last
    /// changed, as `viewer` may read it.
    fn entry(self, added: bool, viewer: &Viewer) -> FeedEntry {
        let id = self.record.id.get();
        let seq = if added {
            self.created_seq
        } else {
            self.change_seq
        };
        FeedEntry::Current {
            record: Box::new(self.record.seen_by(viewer)),
            added,
            position: FeedPosition::new(ChangeSeq::new(seq), id),
        }
    }
}

/// At most `count` changes of what `viewer` may see (only `account` when
/// given, which the caller has checked the viewer may see) past `after`,
/// read from one snapshot.
pub fn read_feed(
    conn: &mut AnyConnection,
    viewer: &Viewer,
    account: Option<AccountId>,
    after: FeedPosition,
    count: i64,
) -> StorageResult<FeedPage> {
    conn.read_snapshot(|conn| {
        let Some(FeedScope {
            account_ids,
            tombstones_of,
        }) = feed_scope(conn, viewer, account, after)?
        else {
            return Ok(FeedPage::Expired);
        };

        let (seq, id) = (after.seq.get(), after.id);
        let mut entries = Vec::new();
        // One account at a time, each along its two indexes (where rows
        // were added, where they last changed): a page costs the same in a
        // long history.
        for account_id in account_ids {
            let added: Vec<ChangedRow> = transactions::table
                .filter(transactions::account_id.eq(account_id))
                .filter(transactions::created_seq.ge(seq))
                .filter(
                    transactions::created_seq
                        .gt(seq)
                        .or(transactions::id.gt(id)),
                )
                .order((transactions::created_seq, transactions::id))
                .limit(count + 1)
                .select(ChangedRow::as_select())
                .load(conn)?;
            let changed: Vec<ChangedRow> = transactions::table
                .filter(transactions::account_id.eq(account_id))
                .filter(transactions::change_seq.ge(seq))
                .filter(transactions::change_seq.gt(seq).or(transactions::id.gt(id)))
                .order((transactions::change_seq, transactions::id))
                .limit(count + 1)
                .select(ChangedRow::as_select())
                .load(conn)?;
            entries.extend(added.into_iter().map(|row| row.entry(true, viewer)));
            entries.extend(changed.into_iter().map(|row| {
                let unchanged = row.created_seq == row.change_seq;
                row.entry(unchanged, viewer)
            }));
        }
        let mut buried = transaction_tombstones::table
            .filter(transaction_tombstones::user_id.eq(viewer.user_id.get()))
            .filter(transaction_tombstones::seq.ge(seq))
            .filter(
                transaction_tombstones::seq
                    .gt(seq)
                    .or(transaction_tombstones::id.gt(id)),
            )
            .order((transaction_tombstones::seq, transaction_tombstones::id))
            .limit(count + 1)
            .select((
                transaction_tombstones::id,
                transaction_tombstones::account_id,
                transaction_tombstones::seq,
            ))
            .into_boxed();
        if let Some(ids) = tombstones_of {
            buried = buried.filter(transaction_tombstones::account_id.eq_any(ids));
        }
        let tombstones: Vec<(i64, i64, i64)> = buried.load(conn)?;
        entries.extend(
            tombstones
                .into_iter()
                .map(|(id, account_id, seq)| FeedEntry::Removed {
                    id: TransactionId::new(id),
                    account_id: AccountId::new(account_id),
                    position: FeedPosition::new(ChangeSeq::new(seq), id),
                }),
        );
        Ok(page_of(entries, count, |record| record.id.get()))
    })
}

/// The user's newest change number (where a reader that has read
/// everything stands).
pub fn head(conn: &mut AnyConnection, user_id: UserId) -> StorageResult<ChangeSeq> {
    let seq: i64 = users::table
        .find(user_id.get())
        .select(users::change_seq)
        .first(conn)?;
    Ok(ChangeSeq::new(seq))
}

/// Deletes the tombstones of removals before `before` (of transactions
/// and of investment activity), recording for each user the newest number
/// purged (cursors of either feed from before it have expired). Returns
/// how many were deleted.
pub fn purge_tombstones(conn: &mut AnyConnection, before: NaiveDateTime) -> StorageResult<usize> {
    conn.atomically(|conn| {
        let transactions: Vec<(i64, Option<i64>)> = transaction_tombstones::table
            .filter(transaction_tombstones::removed_at.lt(before))
            .group_by(transaction_tombstones::user_id)
            .select((
                transaction_tombstones::user_id,
                diesel::dsl::max(transaction_tombstones::seq),
            ))
            .load(conn)?;
        let activity = crate::investment_feed::newest_tombstones(conn, before)?;
        let mut newest: HashMap<i64, i64> = HashMap::new();
        for (user, seq) in transactions.into_iter().chain(activity) {
            if let Some(seq) = seq {
                let kept = newest.entry(user).or_insert(seq);
                *kept = (*kept).max(seq);
            }
        }
        for (user, seq) in newest {
            diesel::update(
                users::table
                    .find(user)
                    .filter(users::tombstones_purged_seq.lt(seq)),
            )
            .set(users::tombstones_purged_seq.eq(seq))
            .execute(conn)?;
        }
        let transactions = diesel::delete(
            transaction_tombstones::table.filter(transaction_tombstones::removed_at.lt(before)),
        )
        .execute(conn)?;
        Ok(transactions + crate::investment_feed::delete_tombstones(conn, before)?)
    })
}
