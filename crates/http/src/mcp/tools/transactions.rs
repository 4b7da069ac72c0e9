//! `get_transactions`: the transactions of one account or of all the
//! credential sees, newest first, narrowed by dates, text, category,
//! merchant, amount and pending, a page at a time.
//!
//! Dates, pending and text narrow the database query; category, merchant
//! and amount are read from each row as the API shows it (the category a
//! rule or a transfer gives, the clean merchant; amounts are exact decimal
//! text the database cannot compare), so a call reads at most
//! [`SCAN_LIMIT`] rows: a rare filter answers a short page and a cursor
//! rather than reading an account's whole history in one call.

use super::shared::{
    Answer, Asker, Failure, Spec, account_argument, date_range, exact, listed, output_schema,
    schema, short_text,
};
use crate::data::{decode_cursor, encode_cursor, visible_accounts};
use crate::wire::shown_merchant;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tributary_domain::money::Decimal;
use tributary_storage::read::{self, TransactionFilter, TransactionPosition, TransactionRecord};

pub(super) const NAME: &str = "get_transactions";

/// Rows a page holds when the call does not say.
const DEFAULT_LIMIT: u32 = 50;
/// The most a page holds: a model's context is not a database.
pub(crate) const MAX_LIMIT: u32 = 100;
/// Rows read from the database in one go while filtering row by row.
const BATCH: i64 = 500;
/// The most rows one call reads while filtering.
const SCAN_LIMIT: usize = 5_000;

pub(super) const SPEC: Spec = Spec {
    name: NAME,
    title: "Get transactions",
    description: "Transactions, newest first, of one account (`account_id`) or of every account this connection may read. Narrow them by dates (`from`, `to`, inclusive, YYYY-MM-DD), `text` (in the description or merchant, any case), `category` (a category name such as \"Groceries\" or a subcategory id such as \"food_and_drink.restaurants\"), `merchant` (part of the merchant's name, any case), `min_amount`/`max_amount` (signed: money out is negative, so spending of 100 or more is `max_amount: -100`) and `include_pending`. At most 100 a call (50 unless `limit` says); when `next_cursor` is set, call again with it and the same arguments for more. Amounts are exact decimal strings with their currency.",
    input: schema::<TransactionsQuery>,
    output: output_schema::<TransactionsAnswer>,
};

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct TransactionsQuery {
    /// Only this account (an id from list_accounts); every account when left out.
    account_id: Option<i64>,
    /// Only on or after this date (YYYY-MM-DD).
    from: Option<String>,
    /// Only on or before this date (YYYY-MM-DD).
    to: Option<String>,
    /// Words in the description or merchant, any case.
    text: Option<String>,
    /// A category name ("Groceries") or a subcategory id ("food_and_drink.restaurants").
    category: Option<String>,
    /// Part of the merchant's name, any case.
    merchant: Option<String>,
    /// Only amounts of at least this (signed: money out is negative).
    #[schemars(with = "Option<f64>")]
    min_amount: Option<Decimal>,
    /// Only amounts of at most this (signed: money out is negative).
    #[schemars(with = "Option<f64>")]
    max_amount: Option<Decimal>,
    /// Include pending transactions (default false: posted only).
    include_pending: Option<bool>,
    /// Transactions a page holds, 1 to 100 (default 50).
    #[schemars(range(min = 1, max = 100))]
    limit: Option<u32>,
    /// The `next_cursor` of the previous answer.
    cursor: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub(super) struct TransactionsAnswer {
    transactions: Vec<TransactionAnswer>,
    /// Set when more may follow: call again with it and the same arguments.
    next_cursor: Option<String>,
    /// Set when the answer was cut short, saying why.
    note: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct TransactionAnswer {
    pub id: String,
    pub account_id: i64,
    /// YYYY-MM-DD.
    pub date: String,
    /// Exact decimal, negative for money out.
    pub amount: String,
    /// ISO 4217.
    pub currency: String,
    pub description: Option<String>,
    pub merchant: Option<String>,
    /// The top-level category, once enriched.
    pub category: Option<String>,
    /// The subcategory id (`<category>.<name>`), once enriched.
    pub subcategory: Option<String>,
    pub pending: bool,
    /// Where this is one side of a transfer between the person's own
    /// accounts this connection sees, the other side's account.
    pub transfer_account_id: Option<i64>,
}

impl From<&TransactionRecord> for TransactionAnswer {
    fn from(record: &TransactionRecord) -> Self {
        let subcategory = record.shown_subcategory();
        TransactionAnswer {
            id: record.id.to_string(),
            account_id: record.account_id.get(),
            date: record.date.to_string(),
            amount: exact(&record.amount),
            currency: record.currency.clone(),
            description: record.description.clone(),
            merchant: shown_merchant(record).map(Into::into),
            category: subcategory.map(|s| s.category.name().to_owned()),
            subcategory: subcategory.map(|s| s.id.to_owned()),
            pending: record.is_pending,
            transfer_account_id: record.transfer_account_id,
        }
    }
}

/// What a row must be, beyond what the query narrowed.
struct RowFilter {
    category: Option<String>,
    merchant: Option<String>,
    min_amount: Option<Decimal>,
    max_amount: Option<Decimal>,
}

impl RowFilter {
    /// Whether every row the query yields is taken.
    fn takes_all(&self) -> bool {
        self.category.is_none()
            && self.merchant.is_none()
            && self.min_amount.is_none()
            && self.max_amount.is_none()
    }

    fn admits(&self, row: &TransactionRecord) -> bool {
        if let Some(wanted) = &self.category {
            let Some(shown) = row.shown_subcategory() else {
                return false;
            };
            if !(shown.id.eq_ignore_ascii_case(wanted)
                || shown.category.name().eq_ignore_ascii_case(wanted))
            {
                return false;
            }
        }
        if let Some(wanted) = &self.merchant {
            let Some(shown) = shown_merchant(row) else {
                return false;
            };
            if !shown.to_lowercase().contains(wanted) {
                return false;
            }
        }
        self.min_amount.is_none_or(|min| row.amount >= min)
            && self.max_amount.is_none_or(|max| row.amount <= max)
    }
}

pub(super) async fn run(asker: &Asker, query: TransactionsQuery) -> Result<Answer, Failure> {
    let account = account_argument(query.account_id)?;
    let (from, to) = date_range(query.from, query.to)?;
    let text = short_text("text", query.text)?;
    let limit = match query.limit {
        None => DEFAULT_LIMIT,
        Some(n @ 1..=MAX_LIMIT) => n,
        Some(n) => {
            return Err(Failure::Arguments(format!(
                "`limit` must be from 1 to {MAX_LIMIT}, got {n}."
            )));
        }
    } as usize;
    let after = query
        .cursor
        .map(|raw| decode_cursor(&raw))
        .transpose()
        .map_err(Failure::Refused)?;
    let rows = RowFilter {
        category: short_text("category", query.category)?,
        merchant: short_text("merchant", query.merchant)?.map(|m| m.to_lowercase()),
        min_amount: query.min_amount,
        max_amount: query.max_amount,
    };
    let filter = TransactionFilter {
        include_pending: query.include_pending.unwrap_or(false),
        from,
        to,
    };
    let (page, next, scanned_out) = asker
        .read(move |conn, viewer| {
            let accounts = visible_accounts(conn, viewer, account)?;
            let mut page = Vec::new();
            let mut position = after;
            let mut scanned = 0usize;
            // Without row filters, the page and one row more (to know
            // whether another follows) is all there is to read.
            let batch_size = if rows.takes_all() {
                limit as i64 + 1
            } else {
                BATCH
            };
            loop {
                let batch = read::transactions_of_accounts(
                    conn,
                    &accounts,
                    &filter,
                    text.as_deref(),
                    batch_size,
                    position,
                )?;
                let exhausted = (batch.len() as i64) < batch_size;
                let read_here = batch.len();
                for (i, row) in batch.into_iter().enumerate() {
                    scanned += 1;
                    position = Some(TransactionPosition {
                        date: row.date,
                        id: row.id,
                    });
                    if rows.admits(&row) {
                        page.push(TransactionAnswer::from(&row.seen_by(viewer)));
                        if page.len() == limit {
                            let more = i + 1 < read_here || !exhausted;
                            return Ok((page, more.then_some(position).flatten(), false));
                        }
                    }
                }
                if exhausted {
                    return Ok((page, None, false));
                }
                if scanned >= SCAN_LIMIT {
                    return Ok((page, position, true));
                }
            }
        })
        .await?;
    let next_cursor = next.map(encode_cursor);
    let note = if scanned_out {
        Some(format!(
            "Read {SCAN_LIMIT} transactions and found {} matching; more may match further back: call again with next_cursor.",
            page.len()
        ))
    } else {
        next_cursor.as_ref().map(|_| {
            format!(
                "The first {} matching; more follow with next_cursor.",
                page.len()
            )
        })
    };
    let mut text = if page.is_empty() {
        "No transactions match.".to_owned()
    } else {
        listed(
            page.iter().map(|t| {
                format!(
                    "{} {} {} {}{}{} [account {}, id {}]",
                    t.date,
                    t.amount,
                    t.currency,
                    t.merchant
                        .as_deref()
                        .or(t.description.as_deref())
                        .unwrap_or("(no description)"),
                    t.category
                        .as_deref()
                        .map(|c| format!(" ({c})"))
                        .unwrap_or_default(),
                    if t.pending { " pending" } else { "" },
                    t.account_id,
                    t.id
                )
            }),
            MAX_LIMIT as usize,
        )
    };
    if let Some(note) = &note {
        text.push('\n');
        text.push_str(note);
    }
    Ok(Answer::new(
        &TransactionsAnswer {
            transactions: page,
            next_cursor,
            note,
        },
        text,
    ))
}
