//! Transfers between a person's own accounts, kept paired as syncs and
//! imports change transactions (docs/enrichment.md, "Transfers"): in the
//! same database transaction as the change, every row the change wrote is
//! checked (a pair whose sides no longer match comes apart) and paired
//! where it can be (`tributary_domain::enrich::transfers`). A row whose
//! pairing changes is written with the change's number, so the change feed
//! reports it `modified`.

use crate::columns::DecimalText;
use crate::db::AnyConnection;
use crate::schema::{accounts, transactions};
use crate::{StorageError, StorageResult};
use chrono::{Duration, NaiveDate, NaiveDateTime};
use diesel::prelude::*;
use rust_decimal::Decimal;
use std::collections::HashMap;
use tributary_domain::changes::ChangeSeq;
use tributary_domain::enrich::transfers::{self, Candidate, WINDOW_DAYS};
use tributary_domain::ids::{TransactionId, UserId};
use tributary_domain::model::AccountKind;

/// How many ids one `IN (…)` lists.
const IDS_PER_QUERY: usize = 500;

#[derive(Debug, Clone, Queryable, Selectable)]
#[diesel(table_name = transactions)]
struct Row {
    id: i64,
    account_id: i64,
    #[diesel(column_name = booked_on)]
    date: NaiveDate,
    #[diesel(deserialize_as = DecimalText)]
    amount: Decimal,
    currency: String,
    #[diesel(column_name = transfer_transaction_id)]
    partner: Option<i64>,
}

impl Row {
    fn candidate(&self) -> Candidate {
        Candidate {
            id: self.id,
            account_id: self.account_id,
            date: self.date,
            amount: self.amount,
            currency: self.currency.clone(),
        }
    }
}

/// Takes apart the pairs of rows about to be deleted: their partners are
/// no longer transfers.
pub(crate) fn release(
    conn: &mut AnyConnection,
    deleted: &[TransactionId],
    seq: ChangeSeq,
    now: NaiveDateTime,
) -> StorageResult<()> {
    for ids in deleted.chunks(IDS_PER_QUERY) {
        let ids: Vec<i64> = ids.iter().map(|id| id.get()).collect();
        let partners: Vec<i64> = transactions::table
            .filter(transactions::id.eq_any(&ids))
            .filter(transactions::transfer_transaction_id.is_not_null())
            .select(transactions::transfer_transaction_id.assume_not_null())
            .load(conn)?;
        unpair(conn, &partners, seq, now)?;
    }
    Ok(())
}

/// Checks and pairs the rows of `user_id` that change `seq` wrote.
/// Returns how many rows it paired or took apart.
pub(crate) fn pair_changed(
    conn: &mut AnyConnection,
    user_id: UserId,
    seq: ChangeSeq,
    now: NaiveDateTime,
) -> StorageResult<usize> {
    let kinds: HashMap<i64, Option<AccountKind>> = accounts::table
        .filter(accounts::user_id.eq(user_id.get()))
        .select((accounts::id, accounts::kind))
        .load::<(i64, String)>(conn)?
        .into_iter()
        .map(|(id, kind)| (id, kind.parse().ok()))
        .collect();
    // One account: nothing to pair with (the common case of a long
    // history imported into a new user's only account).
    if kinds.len() < 2 {
        return Ok(0);
    }
    let account_ids: Vec<i64> = kinds.keys().copied().collect();
    let touched: Vec<Row> = transactions::table
        .filter(transactions::account_id.eq_any(&account_ids))
        .filter(transactions::change_seq.eq(seq.get()))
        .select(Row::as_select())
        .load(conn)?;
    if touched.is_empty() {
        return Ok(0);
    }
    let mut changed = 0;

    // A pair whose sides no longer match (an amount corrected, a pending
    // amount posted differently) comes apart.
    let partnered: Vec<i64> = touched.iter().filter_map(|r| r.partner).collect();
    let partners: HashMap<i64, Row> = load_rows(conn, &partnered)?
        .into_iter()
        .map(|r| (r.id, r))
        .collect();
    let mut broken = Vec::new();
    for row in touched.iter() {
        let Some(partner_id) = row.partner else {
            continue;
        };
        let still = partners.get(&partner_id).is_some_and(|p| {
            p.partner == Some(row.id)
                && p.currency == row.currency
                && p.amount == -row.amount
                && (p.date - row.date).num_days().abs() <= WINDOW_DAYS
        });
        if !still {
            broken.extend([row.id, partner_id]);
        }
    }
    changed += unpair(conn, &broken, seq, now)?;

    let new: Vec<Candidate> = touched
        .iter()
        .filter(|r| r.partner.is_none() || broken.contains(&r.id))
        .map(Row::candidate)
        .collect();
    if new.is_empty() {
        return Ok(changed);
    }
    let (first, last) = new
        .iter()
        .fold((NaiveDate::MAX, NaiveDate::MIN), |(a, b), c| {
            (a.min(c.date), b.max(c.date))
        });
    let window = Duration::days(WINDOW_DAYS);
    let pool: Vec<Candidate> = transactions::table
        .filter(transactions::account_id.eq_any(&account_ids))
        .filter(transactions::transfer_transaction_id.is_null())
        .filter(transactions::booked_on.ge(first - window))
        .filter(transactions::booked_on.le(last + window))
        .select(Row::as_select())
        .load::<Row>(conn)?
        .iter()
        .map(Row::candidate)
        .collect();
    let accounts_of: HashMap<i64, i64> = pool.iter().map(|c| (c.id, c.account_id)).collect();
    for (a, b) in transfers::pair(&new, &pool) {
        let (account_a, account_b) = (accounts_of[&a], accounts_of[&b]);
        let kind = |account: i64| kinds.get(&account).copied().flatten();
        let subcategory = transfers::subcategory([kind(account_a), kind(account_b)]);
        for (row, partner, partner_account) in [(a, b, account_b), (b, a, account_a)] {
            diesel::update(transactions::table.find(row))
                .set((
                    transactions::transfer_transaction_id.eq(partner),
                    transactions::transfer_account_id.eq(partner_account),
                    transactions::transfer_subcategory.eq(subcategory),
                    transactions::change_seq.eq(seq.get()),
                    transactions::updated_at.eq(now),
                ))
                .execute(conn)?;
        }
        changed += 2;
    }
    Ok(changed)
}

fn load_rows(conn: &mut AnyConnection, ids: &[i64]) -> StorageResult<Vec<Row>> {
    let mut rows = Vec::new();
    for ids in ids.chunks(IDS_PER_QUERY) {
        rows.extend(
            transactions::table
                .filter(transactions::id.eq_any(ids))
                .select(Row::as_select())
                .load::<Row>(conn)?,
        );
    }
    Ok(rows)
}

/// Clears the transfer of these rows, as a change `seq` makes.
fn unpair(
    conn: &mut AnyConnection,
    ids: &[i64],
    seq: ChangeSeq,
    now: NaiveDateTime,
) -> StorageResult<usize> {
    let mut changed = 0;
    for ids in ids.chunks(IDS_PER_QUERY) {
        changed += diesel::update(transactions::table.filter(transactions::id.eq_any(ids)))
            .set((
                transactions::transfer_transaction_id.eq(None::<i64>),
                transactions::transfer_account_id.eq(None::<i64>),
                transactions::transfer_subcategory.eq(None::<String>),
                transactions::change_seq.eq(seq.get()),
                transactions::updated_at.eq(now),
            ))
            .execute(conn)
            .map_err(StorageError::from)?;
    }
    Ok(changed)
}
