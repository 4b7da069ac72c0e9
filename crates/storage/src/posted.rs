//! Posted transactions as spending totals and recurring streams read them
//! (`tributary_domain::enrich::{spending, recurring}`): of the given
//! accounts, in a date range, read in pages so that a long history is
//! never held whole by the read itself.

use crate::StorageResult;
use crate::columns::DecimalText;
use crate::db::AnyConnection;
use crate::schema::transactions;
use chrono::NaiveDate;
use diesel::prelude::*;
use rust_decimal::Decimal;
use tributary_domain::enrich::{self, Posted};
use tributary_domain::ids::AccountId;

/// Rows a page holds.
const PAGE: i64 = 5000;

#[derive(Debug, Clone, Queryable)]
struct Row {
    id: i64,
    account_id: i64,
    date: NaiveDate,
    #[diesel(deserialize_as = DecimalText)]
    amount: Decimal,
    currency: String,
    clean_merchant: Option<String>,
    merchant: Option<String>,
    subcategory: Option<String>,
    category_source: Option<String>,
    transfer_subcategory: Option<String>,
}

/// Hands every posted transaction of `accounts` dated within `from` and
/// `to` (each inclusive, where given) to `visit`, account by account,
/// oldest row first.
pub fn each_posted(
    conn: &mut AnyConnection,
    accounts: &[AccountId],
    (from, to): (Option<NaiveDate>, Option<NaiveDate>),
    mut visit: impl FnMut(Posted),
) -> StorageResult<()> {
    for account in accounts {
        let mut after = 0i64;
        loop {
            let mut query = transactions::table
                .filter(transactions::account_id.eq(account.get()))
                .filter(transactions::is_pending.eq(false))
                .filter(transactions::id.gt(after))
                .into_boxed::<crate::db::MultiBackend>();
            if let Some(from) = from {
                query = query.filter(transactions::booked_on.ge(from));
            }
            if let Some(to) = to {
                query = query.filter(transactions::booked_on.le(to));
            }
            let rows: Vec<Row> = query
                .order(transactions::id)
                .limit(PAGE)
                .select((
                    transactions::id,
                    transactions::account_id,
                    transactions::booked_on,
                    transactions::amount,
                    transactions::currency,
                    transactions::clean_merchant,
                    transactions::merchant,
                    transactions::subcategory,
                    transactions::category_source,
                    transactions::transfer_subcategory,
                ))
                .load(conn)?;
            let full = rows.len() as i64 == PAGE;
            for row in rows {
                after = row.id;
                visit(Posted {
                    id: row.id,
                    account_id: row.account_id,
                    date: row.date,
                    amount: row.amount,
                    subcategory: enrich::shown_subcategory(
                        row.subcategory.as_deref(),
                        row.category_source.as_deref(),
                        row.transfer_subcategory.as_deref(),
                    ),
                    merchant: row.clean_merchant.or(row.merchant),
                    currency: row.currency,
                });
            }
            if !full {
                break;
            }
        }
    }
    Ok(())
}
