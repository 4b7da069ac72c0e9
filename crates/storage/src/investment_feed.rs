//! Investment activity's change feed (`GET /investment_transactions/sync`,
//! docs/changes.md "Investment activity"): the same user change sequence
//! as the transactions' feed numbers it, and it reads the same way (where a
//! row was added, where it last changed, tombstones of removed rows; see
//! `changes`), over `investment_transactions` and `investment_tombstones`.
//!
//! A sync never removes activity (`investments`); a removed connection or
//! an account the person stops sharing does, leaving tombstones.

use crate::StorageResult;
use crate::changes::{FeedEntry, FeedPage, FeedScope, feed_scope, page_of};
use crate::db::AnyConnection;
use crate::investments::{InvestmentTransactionView, Values, view};
use crate::read::{SECURITY_COLUMNS, SecurityColumns};
use crate::schema::{investment_tombstones, investment_transactions, securities};
use chrono::NaiveDateTime;
use diesel::prelude::*;
use tributary_domain::access::Viewer;
use tributary_domain::changes::{ChangeSeq, FeedPosition};
use tributary_domain::ids::{AccountId, UserId};

/// One change past a reader's position: a record as it is now, or the
/// id of one removed.
pub type ActivityEntry = FeedEntry<InvestmentTransactionView, i64>;
/// What [`read_feed`] found.
pub type ActivityPage = FeedPage<InvestmentTransactionView, i64>;

/// A row as the feed reads it: its id, provider id, values and security,
/// then where it was added and where it last changed.
type ChangedRow = (i64, String, Values, Option<SecurityColumns>, i64, i64);

/// The columns of a [`ChangedRow`], from activity left-joined to
/// securities.
macro_rules! changed_row {
    () => {
        (
            investment_transactions::id,
            investment_transactions::provider_id,
            Values::as_select(),
            SECURITY_COLUMNS.nullable(),
            investment_transactions::created_seq,
            investment_transactions::change_seq,
        )
    };
}

/// The accounts of `user_id` with activity that change `seq` wrote.
pub(crate) fn accounts_written(
    conn: &mut AnyConnection,
    user_id: UserId,
    seq: ChangeSeq,
) -> StorageResult<Vec<i64>> {
    let theirs = crate::schema::accounts::table
        .filter(crate::schema::accounts::user_id.eq(user_id.get()))
        .select(crate::schema::accounts::id);
    Ok(investment_transactions::table
        .filter(investment_transactions::account_id.eq_any(theirs))
        .filter(investment_transactions::change_seq.eq(seq.get()))
        .select(investment_transactions::account_id)
        .distinct()
        .order(investment_transactions::account_id)
        .load(conn)?)
}

/// Tombstones numbered `seq` for the activity of `account_ids`, which the
/// caller then deletes (with their connection, or as no longer shared).
pub(crate) fn bury_accounts(
    conn: &mut AnyConnection,
    user_id: UserId,
    seq: ChangeSeq,
    account_ids: &[i64],
    now: NaiveDateTime,
) -> StorageResult<()> {
    for account_id in account_ids {
        let ids: Vec<i64> = investment_transactions::table
            .filter(investment_transactions::account_id.eq(account_id))
            .select(investment_transactions::id)
            .load(conn)?;
        for chunk in ids.chunks(500) {
            let rows: Vec<_> = chunk
                .iter()
                .map(|id| {
                    (
                        investment_tombstones::id.eq(*id),
                        investment_tombstones::user_id.eq(user_id.get()),
                        investment_tombstones::account_id.eq(*account_id),
                        investment_tombstones::seq.eq(seq.get()),
                        investment_tombstones::removed_at.eq(now),
                    )
                })
                .collect();
            crate::backend::insert_activity_tombstones(conn, &rows)?;
        }
    }
    Ok(())
}

/// At most `count` changes of the activity `viewer` may see (only
/// `account` when given, which the caller has checked the viewer may see)
/// past `after`, read from one snapshot.
pub fn read_feed(
    conn: &mut AnyConnection,
    viewer: &Viewer,
    account: Option<AccountId>,
    after: FeedPosition,
    count: i64,
) -> StorageResult<ActivityPage> {
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
        // One account at a time along its two indexes, as transactions are
        // read (changes::read_feed).
        for account_id in account_ids {
            let added: Vec<ChangedRow> = investment_transactions::table
                .left_join(securities::table)
                .filter(investment_transactions::account_id.eq(account_id))
                .filter(investment_transactions::created_seq.ge(seq))
                .filter(
                    investment_transactions::created_seq
                        .gt(seq)
                        .or(investment_transactions::id.gt(id)),
                )
                .order((
                    investment_transactions::created_seq,
                    investment_transactions::id,
                ))
                .limit(count + 1)
                .select(changed_row!())
                .load(conn)?;
            let changed: Vec<ChangedRow> = investment_transactions::table
                .left_join(securities::table)
                .filter(investment_transactions::account_id.eq(account_id))
                .filter(investment_transactions::change_seq.ge(seq))
                .filter(
                    investment_transactions::change_seq
                        .gt(seq)
                        .or(investment_transactions::id.gt(id)),
                )
                .order((
                    investment_transactions::change_seq,
                    investment_transactions::id,
                ))
                .limit(count + 1)
                .select(changed_row!())
                .load(conn)?;
            for row in added {
                entries.push(entry(AccountId::new(account_id), row, true)?);
            }
            for row in changed {
                let unchanged = row.4 == row.5;
                entries.push(entry(AccountId::new(account_id), row, unchanged)?);
            }
        }
        let mut buried = investment_tombstones::table
            .filter(investment_tombstones::user_id.eq(viewer.user_id.get()))
            .filter(investment_tombstones::seq.ge(seq))
            .filter(
                investment_tombstones::seq
                    .gt(seq)
                    .or(investment_tombstones::id.gt(id)),
            )
            .order((investment_tombstones::seq, investment_tombstones::id))
            .limit(count + 1)
            .select((
                investment_tombstones::id,
                investment_tombstones::account_id,
                investment_tombstones::seq,
            ))
            .into_boxed();
        if let Some(ids) = tombstones_of {
            buried = buried.filter(investment_tombstones::account_id.eq_any(ids));
        }
        let tombstones: Vec<(i64, i64, i64)> = buried.load(conn)?;
        entries.extend(
            tombstones
                .into_iter()
                .map(|(id, account_id, seq)| FeedEntry::Removed {
                    id,
                    account_id: AccountId::new(account_id),
                    position: FeedPosition::new(ChangeSeq::new(seq), id),
                }),
        );
        Ok(page_of(entries, count, |record| record.id))
    })
}

/// The row as met where it was added (`added`), or where it last changed.
fn entry(account_id: AccountId, row: ChangedRow, added: bool) -> StorageResult<ActivityEntry> {
    let (id, provider_id, values, security, created_seq, change_seq) = row;
    let seq = if added { created_seq } else { change_seq };
    Ok(FeedEntry::Current {
        record: Box::new(view(account_id, (id, provider_id), values, security)?),
        added,
        position: FeedPosition::new(ChangeSeq::new(seq), id),
    })
}

/// Each user's newest number among the activity tombstones of removals
/// before `before` (`changes::purge_tombstones`).
pub(crate) fn newest_tombstones(
    conn: &mut AnyConnection,
    before: NaiveDateTime,
) -> StorageResult<Vec<(i64, Option<i64>)>> {
    Ok(investment_tombstones::table
        .filter(investment_tombstones::removed_at.lt(before))
        .group_by(investment_tombstones::user_id)
        .select((
            investment_tombstones::user_id,
            diesel::dsl::max(investment_tombstones::seq),
        ))
        .load(conn)?)
}

/// Deletes the activity tombstones of removals before `before`.
pub(crate) fn delete_tombstones(
    conn: &mut AnyConnection,
    before: NaiveDateTime,
) -> StorageResult<usize> {
    Ok(diesel::delete(
        investment_tombstones::table.filter(investment_tombstones::removed_at.lt(before)),
    )
    .execute(conn)?)
}
