//! Enriching stored transactions again (docs/enrichment.md, "Enriching
//! again"): after a person's rules change, and after the tables change
//! (`enrich::TABLES_VERSION`), which also enriches rows stored before
//! enrichment existed.
//!
//! A change asks for a run ([`request`]); the workers advance runs a batch
//! at a time ([`advance`]), each batch its own short database transaction,
//! so reads never wait and syncs wait at most one batch. A row whose
//! merchant or category comes out different is written with a new number
//! of the person's change sequence: the change feed reports it `modified`
//! once, and a `transactions.updated` webhook says how many changed.

use crate::changes;
use crate::columns::DecimalText;
use crate::db::AnyConnection;
use crate::schema::{accounts, enrichment_runs, enrichment_tables, transactions};
use crate::{StorageResult, rules};
use chrono::{NaiveDate, NaiveDateTime};
use diesel::prelude::*;
use rust_decimal::Decimal;
use std::collections::{BTreeSet, HashMap};
use tributary_domain::enrich::hints::Hints;
use tributary_domain::enrich::{self, Raw, TABLES_VERSION};
use tributary_domain::ids::UserId;
use tributary_domain::reconcile::SyncSummary;

/// Rows a batch reads: small enough that a sync of the same person waits
/// little behind it, large enough that a million rows take few batches.
pub const BATCH_ROWS: i64 = 1_000;

/// Where a person's run stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Progress {
    /// Rows read so far.
    pub checked: i64,
    /// Rows there were when the run (re)started.
    pub total: i64,
    /// Rows whose merchant or category changed.
    pub changed: i64,
    pub requested_at: NaiveDateTime,
    /// `None` while under way.
    pub finished_at: Option<NaiveDateTime>,
}

/// Asks for every stored row of `user_id` to be enriched again, from the
/// start (a run under way starts over: the rules it applies changed).
/// Runs in the caller's transaction, after the user's change number was
/// taken (see `rules::lock_and_check`).
pub(crate) fn request(
    conn: &mut AnyConnection,
    user_id: UserId,
    now: NaiveDateTime,
) -> StorageResult<()> {
    let total = rows_of(conn, user_id)?;
    diesel::delete(enrichment_runs::table.find(user_id.get())).execute(conn)?;
    diesel::insert_into(enrichment_runs::table)
        .values((
            enrichment_runs::user_id.eq(user_id.get()),
            enrichment_runs::total.eq(total),
            enrichment_runs::requested_at.eq(now),
            enrichment_runs::advanced_at.eq(now),
        ))
        .execute(conn)?;
    Ok(())
}

/// How many transactions `user_id` has (the accounts keep the count).
fn rows_of(conn: &mut AnyConnection, user_id: UserId) -> StorageResult<i64> {
    let counts: Vec<(i64, i64)> = accounts::table
        .filter(accounts::user_id.eq(user_id.get()))
        .select((
            accounts::posted_transactions,
            accounts::pending_transactions,
        ))
        .load(conn)?;
    Ok(counts
        .iter()
        .map(|(posted, pending)| posted + pending)
        .sum())
}

/// The progress of `user_id`'s latest run, if one was ever asked for.
pub fn progress(conn: &mut AnyConnection, user_id: UserId) -> StorageResult<Option<Progress>> {
    Ok(enrichment_runs::table
        .find(user_id.get())
        .select((
            enrichment_runs::checked,
            enrichment_runs::total,
            enrichment_runs::changed,
            enrichment_runs::requested_at,
            enrichment_runs::finished_at,
        ))
        .first::<(i64, i64, i64, NaiveDateTime, Option<NaiveDateTime>)>(conn)
        .optional()?
        .map(
            |(checked, total, changed, requested_at, finished_at)| Progress {
                checked,
                total,
                changed,
                requested_at,
                finished_at,
            },
        ))
}

/// Whether any person's run is under way.
pub fn under_way(conn: &mut AnyConnection) -> StorageResult<bool> {
    let open: i64 = enrichment_runs::table
        .filter(enrichment_runs::finished_at.is_null())
        .count()
        .get_result(conn)?;
    Ok(open > 0)
}

/// When the tables changed since every user's rows were last enriched
/// (or rows were stored before enrichment), asks for a run for every user
/// with accounts. Returns how many runs it asked for.
pub fn request_for_new_tables(
    conn: &mut AnyConnection,
    now: NaiveDateTime,
) -> StorageResult<usize> {
    // Read first, outside a transaction: every worker pass asks, and on
    // SQLite a write transaction would take the database's write lock.
    let version: i32 = enrichment_tables::table
        .find(1)
        .select(enrichment_tables::version)
        .first(conn)?;
    if version >= TABLES_VERSION {
        return Ok(0);
    }
    // One transaction, so that a crash between claiming the version and
    // asking for the runs cannot leave users unasked. Claimed by the update
    // itself: of two workers that both saw the old version, the second
    // updates nothing and asks for nothing.
    conn.atomically(|conn| {
        let claimed = diesel::update(
            enrichment_tables::table
                .find(1)
                .filter(enrichment_tables::version.lt(TABLES_VERSION)),
        )
        .set(enrichment_tables::version.eq(TABLES_VERSION))
        .execute(conn)?;
        if claimed == 0 {
            return Ok(0);
        }
        let owners: Vec<i64> = accounts::table
            .select(accounts::user_id)
            .distinct()
            .load(conn)?;
        // Without each user's change number: a batch of theirs running
        // meanwhile writes its rows, but not its position into the new
        // run (`advance` updates only the run it read).
        for owner in &owners {
            request(conn, UserId::new(*owner), now)?;
        }
        Ok(owners.len())
    })
}

#[derive(Queryable, Selectable)]
#[diesel(table_name = enrichment_runs)]
struct Run {
    account_id: i64,
    after_date: Option<NaiveDate>,
    after_id: Option<i64>,
    requested_at: NaiveDateTime,
}

#[derive(Queryable, Selectable)]
#[diesel(table_name = transactions)]
struct Stored {
    id: i64,
    account_id: i64,
    booked_on: NaiveDate,
    #[diesel(deserialize_as = DecimalText)]
    amount: Decimal,
    merchant: Option<String>,
    description: Option<String>,
    category_hints: Option<String>,
    clean_merchant: Option<String>,
    subcategory: Option<String>,
    category_source: Option<String>,
    enriched_version: i32,
}

/// What one batch did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Advanced {
    pub checked: usize,
    pub changed: usize,
    pub finished: bool,
}

/// Advances the run advanced least recently by one batch, in one database
/// transaction; `None` when no run is under way.
pub fn advance(conn: &mut AnyConnection, now: NaiveDateTime) -> StorageResult<Option<Advanced>> {
    let next: Option<i64> = enrichment_runs::table
        .filter(enrichment_runs::finished_at.is_null())
        .order(enrichment_runs::advanced_at)
        .select(enrichment_runs::user_id)
        .first(conn)
        .optional()?;
    let Some(user) = next else {
        return Ok(None);
    };
    let user_id = UserId::new(user);
    conn.atomically(|conn| {
        // The user's number first, as every change of theirs takes it: a
        // sync or a change of rules of the same person waits for this
        // batch, or this batch for them, and then reads where they left.
        let seq = changes::next_seq(conn, user_id)?;
        let run: Option<Run> = enrichment_runs::table
            .find(user)
            .filter(enrichment_runs::finished_at.is_null())
            .select(Run::as_select())
            .first(conn)
            .optional()?;
        // Another worker finished it meanwhile.
        let Some(run) = run else {
            return Ok(Some(Advanced::default()));
        };
        let rules = rules::load(conn, user_id)?;
        let accounts: Vec<i64> = accounts::table
            .filter(accounts::user_id.eq(user))
            .filter(accounts::id.ge(run.account_id))
            .order(accounts::id)
            .select(accounts::id)
            .load(conn)?;
        let mut done = Advanced::default();
        let mut position = (run.account_id, run.after_date, run.after_id);
        let mut changed_accounts = BTreeSet::new();
        let mut writes = Writes::default();
        let mut finished = true;
        for account in accounts {
            let after = match position {
                (at, Some(date), Some(id)) if at == account => Some((date, id)),
                _ => None,
            };
            let room = BATCH_ROWS - done.checked as i64;
            let rows = newest_first(conn, account, after, room)?;
            for row in &rows {
                if writes.enrich_again(row, &rules) {
                    done.changed += 1;
                    changed_accounts.insert(account);
                }
            }
            done.checked += rows.len();
            position = match rows.last() {
                Some(last) if rows.len() as i64 == room => {
                    (account, Some(last.booked_on), Some(last.id))
                }
                // The account is done: the next one, from its newest row.
                _ => (account + 1, None, None),
            };
            if rows.len() as i64 == room {
                finished = false;
                break;
            }
        }
        writes.write(conn, seq, now)?;
        done.finished = finished;
        // Only the run this batch read: one started over meanwhile (a new
        // tables version asks without the user's number) keeps its start.
        diesel::update(
            enrichment_runs::table
                .find(user)
                .filter(enrichment_runs::requested_at.eq(run.requested_at)),
        )
        .set((
            enrichment_runs::account_id.eq(position.0),
            enrichment_runs::after_date.eq(position.1),
            enrichment_runs::after_id.eq(position.2),
            enrichment_runs::checked.eq(enrichment_runs::checked + done.checked as i64),
            enrichment_runs::changed.eq(enrichment_runs::changed + done.changed as i64),
            enrichment_runs::advanced_at.eq(now),
            enrichment_runs::finished_at.eq(finished.then_some(now)),
        ))
        .execute(conn)?;
        if !changed_accounts.is_empty() {
            let accounts: Vec<i64> = changed_accounts.into_iter().collect();
            let summary = SyncSummary {
                transactions_updated: done.changed,
                ..SyncSummary::default()
            };
            crate::sync_apply::announce_transactions(conn, user_id, seq, &accounts, &summary, now)?;
        }
        Ok(Some(done))
    })
}

/// Up to `limit` rows of `account`, newest first, after `after` (along the
/// listing index).
fn newest_first(
    conn: &mut AnyConnection,
    account: i64,
    after: Option<(NaiveDate, i64)>,
    limit: i64,
) -> StorageResult<Vec<Stored>> {
    let mut query = transactions::table
        .filter(transactions::account_id.eq(account))
        .order((transactions::booked_on.desc(), transactions::id.desc()))
        .select(Stored::as_select())
        .limit(limit)
        .into_boxed();
    if let Some((date, id)) = after {
        query = query
            .filter(transactions::booked_on.le(date))
            .filter(transactions::booked_on.lt(date).or(transactions::id.lt(id)));
    }
    Ok(query.load(conn)?)
}

/// What a batch writes, gathered first so that rows given the same
/// values are written by one statement: a rule gives many rows the same
/// merchant and category, and each statement also runs the accounts'
/// tally trigger once.
#[derive(Default)]
struct Writes {
    /// Rows whose merchant or category changed, by their new values.
    changed: HashMap<(Option<String>, &'static str, &'static str), Vec<i64>>,
    /// Rows that stay as they are, enriched under older tables.
    version_only: Vec<i64>,
}

impl Writes {
    /// Enriches one stored row again; whether what it shows changed (then
    /// it is written with the batch's change number, so the feed reports
    /// it).
    fn enrich_again(&mut self, row: &Stored, rules: &enrich::rules::Rules) -> bool {
        let hints = Hints::from_text(row.category_hints.as_deref());
        let raw = Raw {
            merchant: row.merchant.as_deref(),
            description: row.description.as_deref(),
            amount: row.amount,
            hints: &hints,
        };
        let fresh = rules.apply(row.account_id, &raw, enrich::enrich(&raw));
        let same = row.clean_merchant == fresh.merchant
            && row.subcategory.as_deref() == Some(fresh.subcategory.id)
            && row.category_source.as_deref() == Some(fresh.source.as_str());
        if same {
            if row.enriched_version != TABLES_VERSION {
                self.version_only.push(row.id);
            }
            return false;
        }
        self.changed
            .entry((fresh.merchant, fresh.subcategory.id, fresh.source.as_str()))
            .or_default()
            .push(row.id);
        true
    }

    fn write(
        self,
        conn: &mut AnyConnection,
        seq: tributary_domain::changes::ChangeSeq,
        now: NaiveDateTime,
    ) -> StorageResult<()> {
        for ids in self.version_only.chunks(IDS_PER_QUERY) {
            diesel::update(transactions::table.filter(transactions::id.eq_any(ids)))
                .set(transactions::enriched_version.eq(TABLES_VERSION))
                .execute(conn)?;
        }
        for ((merchant, subcategory, source), ids) in self.changed {
            for ids in ids.chunks(IDS_PER_QUERY) {
                diesel::update(transactions::table.filter(transactions::id.eq_any(ids)))
                    .set((
                        transactions::clean_merchant.eq(&merchant),
                        transactions::subcategory.eq(subcategory),
                        transactions::category_source.eq(source),
                        transactions::enriched_version.eq(TABLES_VERSION),
                        transactions::change_seq.eq(seq.get()),
                        transactions::updated_at.eq(now),
                    ))
                    .execute(conn)?;
            }
        }
        Ok(())
    }
}

/// How many ids one `IN (…)` lists: well under both backends' limits on
/// bound parameters.
const IDS_PER_QUERY: usize = 500;
