//! The read path of the data endpoints. Each function is one indexed query,
//! whatever the number of rows: accounts join their connection and
//! institution, holdings join their security, nothing is fetched per row.

use crate::columns::{DecimalText, OptionalDecimalText};
use crate::db::AnyConnection;
use crate::schema::{
    accounts, balances, connections, holdings, institutions, securities, transactions,
};
use crate::{StorageError, StorageResult};
use chrono::{NaiveDate, NaiveDateTime};
use diesel::prelude::*;
use tributary_domain::access::Viewer;
use tributary_domain::enrich;
use tributary_domain::ids::{AccountId, ConnectionId, TransactionId, UserId};
use tributary_domain::model::{AccountKind, ConnectionStatus, Provider};
use tributary_domain::money::{Decimal, parse_decimal};
use tributary_domain::snapshot::Security;
use tributary_domain::taxonomy::Subcategory;

/// An account with its connection's provider and status and its own
/// institution (the bank it is at), read in one row.
#[derive(Debug, Clone, PartialEq, Queryable)]
pub struct AccountView {
    #[diesel(deserialize_as = i64)]
    pub id: AccountId,
    pub name: String,
    #[diesel(deserialize_as = String)]
    pub kind: AccountKind,
    pub currency: String,
    pub mask: Option<String>,
    #[diesel(deserialize_as = i64)]
    pub connection_id: ConnectionId,
    #[diesel(deserialize_as = String)]
    pub provider: Provider,
    #[diesel(deserialize_as = String)]
    pub status: ConnectionStatus,
    pub institution_name: String,
    pub institution_logo: Option<String>,
    pub transactions: TransactionTally,
    pub liability: AccountLiability,
}

/// A card's or loan's terms as its provider last stated them; every part
/// `None` for an account that owes nothing, or whose provider says nothing.
#[derive(Debug, Clone, PartialEq, Default, Queryable)]
pub struct AccountLiability {
    #[diesel(deserialize_as = OptionalDecimalText)]
    pub credit_limit: Option<Decimal>,
    #[diesel(deserialize_as = OptionalDecimalText)]
    pub minimum_payment: Option<Decimal>,
    pub next_payment_due: Option<NaiveDate>,
    #[diesel(deserialize_as = OptionalDecimalText)]
    pub last_statement_balance: Option<Decimal>,
}

impl AccountLiability {
    /// Whether the provider stated any of it.
    pub fn is_stated(&self) -> bool {
        *self != AccountLiability::default()
    }
}

/// What an account's transactions amount to, kept by the database in the
/// same transaction as every change to them (migration
/// `transaction_counts`), so a page reads them with its account instead of
/// counting rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Queryable)]
pub struct TransactionTally {
    pub posted: i64,
    pub pending: i64,
    /// Changes with every insert, update and delete of the account's
    /// transactions: equal versions, equal listings.
    pub version: i64,
}

impl TransactionTally {
    /// How many transactions a filter without dates matches.
    pub fn matching(&self, include_pending: bool) -> i64 {
        if include_pending {
            self.posted + self.pending
        } else {
            self.posted
        }
    }
}

/// The columns of [`AccountView`], in its field order.
type AccountColumns = (
    accounts::id,
    accounts::name,
    accounts::kind,
    accounts::currency,
    accounts::mask,
    connections::id,
    connections::provider,
    connections::status,
    institutions::name,
    institutions::logo_url,
    (
        accounts::posted_transactions,
        accounts::pending_transactions,
        accounts::transactions_version,
    ),
    (
        accounts::credit_limit,
        accounts::minimum_payment,
        accounts::next_payment_due,
        accounts::last_statement_balance,
    ),
);

const ACCOUNT_COLUMNS: AccountColumns = (
    accounts::id,
    accounts::name,
    accounts::kind,
    accounts::currency,
    accounts::mask,
    connections::id,
    connections::provider,
    connections::status,
    institutions::name,
    institutions::logo_url,
    (
        accounts::posted_transactions,
        accounts::pending_transactions,
        accounts::transactions_version,
    ),
    (
        accounts::credit_limit,
        accounts::minimum_payment,
        accounts::next_payment_due,
        accounts::last_statement_balance,
    ),
);

/// Every account the viewer may see, in id order.
pub fn list_accounts(conn: &mut AnyConnection, viewer: &Viewer) -> StorageResult<Vec<AccountView>> {
    let mut query = accounts::table
        .inner_join(connections::table)
        .inner_join(
            institutions::table.on(accounts::institution_id.eq(institutions::id.nullable())),
        )
        .filter(accounts::user_id.eq(viewer.user_id.get()))
        .select(ACCOUNT_COLUMNS)
        .order(accounts::id)
        .into_boxed();
    if let Some(scope) = &viewer.account_scope {
        query = query.filter(accounts::id.eq_any(scope.iter().map(|id| id.get())));
    }
    Ok(query.load(conn)?)
}

/// The account, when it exists and the viewer may see it. Someone else's
/// account and a missing one are both `None`.
pub fn find_account(
    conn: &mut AnyConnection,
    viewer: &Viewer,
    account_id: AccountId,
) -> StorageResult<Option<AccountView>> {
    if !viewer.may_see_account(account_id) {
        return Ok(None);
    }
    Ok(accounts::table
        .inner_join(connections::table)
        .inner_join(
            institutions::table.on(accounts::institution_id.eq(institutions::id.nullable())),
        )
        .filter(accounts::id.eq(account_id.get()))
        .filter(accounts::user_id.eq(viewer.user_id.get()))
        .select(ACCOUNT_COLUMNS)
        .first(conn)
        .optional()?)
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TransactionFilter {
    pub include_pending: bool,
    /// Inclusive bounds on the transaction date.
    pub from: Option<NaiveDate>,
    pub to: Option<NaiveDate>,
}

/// A position in the newest-first order: rows strictly after it come next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TransactionPosition {
    pub date: NaiveDate,
    pub id: TransactionId,
}

#[derive(Debug, Clone, PartialEq, Queryable, Selectable)]
#[diesel(table_name = transactions)]
pub struct TransactionRecord {
    #[diesel(deserialize_as = i64)]
    pub id: TransactionId,
    #[diesel(deserialize_as = i64)]
    pub account_id: AccountId,
    pub provider_transaction_id: String,
    pub pending_provider_id: Option<String>,
    pub is_pending: bool,
    #[diesel(column_name = booked_on)]
    pub date: NaiveDate,
    #[diesel(deserialize_as = DecimalText)]
    pub amount: Decimal,
    pub currency: String,
    pub merchant: Option<String>,
    pub description: Option<String>,
    /// Enrichment's clean merchant (docs/enrichment.md); `None` on a row
    /// stored before enrichment.
    pub clean_merchant: Option<String>,
    /// Enrichment's subcategory id; `None` on a row stored before it.
    pub subcategory: Option<String>,
    /// Where `subcategory` came from (`enrich::Source`).
    pub category_source: Option<String>,
    /// The account of the other side, where this is one side of a
    /// transfer between the person's own accounts.
    pub transfer_account_id: Option<i64>,
    /// The transfer's subcategory, where it is one.
    pub transfer_subcategory: Option<String>,
}

impl TransactionRecord {
    /// The row as `viewer` may read it: a credential scoped to some of the
    /// person's accounts learns nothing of the others, not even that the
    /// other side of a transfer is one of them (docs/enrichment.md,
    /// "Transfers"). The category still says Transfer: the row's own text
    /// says as much.
    pub fn seen_by(mut self, viewer: &Viewer) -> Self {
        if self
            .transfer_account_id
            .is_some_and(|other| !viewer.may_see_account(AccountId::new(other)))
        {
            self.transfer_account_id = None;
        }
        self
    }

    /// The subcategory the transaction shows (a rule's, else a transfer's,
    /// else the tables'): `enrich::shown_subcategory`.
    pub fn shown_subcategory(&self) -> Option<&'static Subcategory> {
        enrich::shown_subcategory(
            self.subcategory.as_deref(),
            self.category_source.as_deref(),
            self.transfer_subcategory.as_deref(),
        )
    }
}

fn filtered_transactions<'a>(
    account_id: AccountId,
    filter: &TransactionFilter,
) -> transactions::BoxedQuery<'a, crate::db::MultiBackend> {
    within(
        transactions::table
            .filter(transactions::account_id.eq(account_id.get()))
            .into_boxed(),
        filter,
    )
}

/// `query` narrowed to what `filter` lets through.
fn within<'a>(
    mut query: transactions::BoxedQuery<'a, crate::db::MultiBackend>,
    filter: &TransactionFilter,
) -> transactions::BoxedQuery<'a, crate::db::MultiBackend> {
    if !filter.include_pending {
        query = query.filter(transactions::is_pending.eq(false));
    }
    if let Some(from) = filter.from {
        query = query.filter(transactions::booked_on.ge(from));
    }
    if let Some(to) = filter.to {
        query = query.filter(transactions::booked_on.le(to));
    }
    query
}

/// Transactions of one account, newest first (date, then id). With `limit`,
/// one page of at most `limit` rows after `after`; ordering by the unique
/// (date, id) keeps pages stable while new rows arrive.
pub fn list_transactions(
    conn: &mut AnyConnection,
    account_id: AccountId,
    filter: &TransactionFilter,
    limit: Option<i64>,
    after: Option<TransactionPosition>,
) -> StorageResult<Vec<TransactionRecord>> {
    Ok(newest_first(filtered_transactions(account_id, filter), limit, after).load(conn)?)
}

/// A `LIKE ... ESCAPE '\\'` pattern matching `lower(column)` when it
/// contains `text` in any case, `%` and `_` taken literally.
pub(crate) fn contains_pattern(text: &str) -> String {
    let escaped: String = text
        .to_lowercase()
        .chars()
        .flat_map(|c| match c {
            '%' | '_' | '\\' => vec!['\\', c],
            other => vec![other],
        })
        .collect();
    format!("%{escaped}%")
}

#[diesel::declare_sql_function]
extern "SQL" {
    /// SQL's `lower`: ASCII letters on SQLite, every letter on PostgreSQL.
    fn lower(
        text: diesel::sql_types::Nullable<diesel::sql_types::Text>,
    ) -> diesel::sql_types::Nullable<diesel::sql_types::Text>;
}

/// One page of the transactions of an account whose description or
/// merchant contains `text`, in any case, newest first like
/// [`list_transactions`]; no total is counted.
///
/// The listing is read first: the newest [`LISTING_FIRST`] rows from the
/// position, through the listing index, matched as they come, so a text
/// that is frequent fills its page among them. When it has not, the text
/// index finds the rows: the SQLite FTS5 table `transactions_text`, or
/// PostgreSQL's trigram indexes (migration `text_search`), with the
/// account written `account_id + 0` so that no index on the account serves
/// it and the planner starts from the text index. Whichever way the rows
/// are found, the condition that decides a match is the same `LIKE`, so
/// the index changes how fast, never what.
pub fn search_transactions(
    conn: &mut AnyConnection,
    account_id: AccountId,
    filter: &TransactionFilter,
    text: &str,
    limit: i64,
    after: Option<TransactionPosition>,
) -> StorageResult<Vec<TransactionRecord>> {
    let matching = |rows: Rows<'static>, through| {
        newest_first(rows.filter(containing(text, through)), Some(limit), after)
    };
    if text.chars().count() < INDEXED_CHARS {
        return Ok(
            matching(filtered_transactions(account_id, filter), Through::Listing).load(conn)?,
        );
    }
    // Where the first LISTING_FIRST rows of the listing end.
    let window_end: Option<(NaiveDate, i64)> =
        after_position(filtered_transactions(account_id, filter), after)
            .select((transactions::booked_on, transactions::id))
            .order((transactions::booked_on.desc(), transactions::id.desc()))
            .offset(LISTING_FIRST - 1)
            .first(conn)
            .optional()?;
    let Some((end_date, end_id)) = window_end else {
        // Fewer rows than that are left: reading them all is the search.
        return Ok(
            matching(filtered_transactions(account_id, filter), Through::Listing).load(conn)?,
        );
    };
    let in_window = filtered_transactions(account_id, filter)
        .filter(transactions::booked_on.ge(end_date))
        .filter(
            transactions::booked_on
                .gt(end_date)
                .or(transactions::id.ge(end_id)),
        );
    let found = matching(in_window, Through::Listing).load(conn)?;
    if found.len() as i64 >= limit {
        return Ok(found);
    }
    let unlisted = within(
        transactions::table
            .filter((transactions::account_id + 0_i64).eq(account_id.get()))
            .into_boxed(),
        filter,
    );
    let indexed = match conn {
        AnyConnection::Sqlite(_) => unlisted.filter(
            diesel::dsl::sql::<diesel::sql_types::Bool>(
                "transactions.id IN (SELECT rowid FROM transactions_text WHERE transactions_text MATCH ",
            )
            .bind::<diesel::sql_types::Text, _>(fts_phrase(text))
            .sql(")"),
        ),
        // The trigram indexes serve the `LIKE` itself.
        AnyConnection::Postgresql(_) => unlisted,
    };
    Ok(matching(indexed, Through::TextIndex).load(conn)?)
}

/// Where a text condition is read: on rows the listing index found, or as
/// the way to the rows (PostgreSQL's trigram indexes).
#[derive(Clone, Copy)]
enum Through {
    Listing,
    TextIndex,
}

/// Rows whose description or merchant contains `text`, in any case.
///
/// Read on rows the listing found, the condition is written so that no
/// text index can serve it (`|| ''` changes no value, but it is not the
/// expression the trigram indexes are on): before a table's statistics
/// were gathered (a million rows just written) PostgreSQL intersected the
/// listing's few hundred rows with a trigram scan of every row of every
/// account holding a frequent text, 122 ms where reading the listing takes
/// 0.3 ms.
fn containing(
    text: &str,
    through: Through,
) -> Box<
    dyn BoxableExpression<
            transactions::table,
            crate::db::MultiBackend,
            SqlType = diesel::sql_types::Nullable<diesel::sql_types::Bool>,
        >,
> {
    let pattern = contains_pattern(text);
    match through {
        Through::TextIndex => Box::new(
            lower(transactions::description)
                .like(pattern.clone())
                .escape('\\')
                .or(lower(transactions::merchant).like(pattern).escape('\\')),
        ),
        Through::Listing => Box::new(
            lower(transactions::description)
                .concat("")
                .like(pattern.clone())
                .escape('\\')
                .or(lower(transactions::merchant)
                    .concat("")
                    .like(pattern)
                    .escape('\\')),
        ),
    }
}

/// A search reads at most this many of the newest rows of the listing
/// before it turns to the text index ([`search_transactions`]).
const LISTING_FIRST: i64 = 500;

/// The text index keys on every three characters: a shorter text has
/// nothing to look up, and is matched against the listing alone.
const INDEXED_CHARS: usize = 3;

type Rows<'a> = transactions::BoxedQuery<'a, crate::db::MultiBackend>;

/// `text` as one FTS5 phrase: every character taken as typed (a double
/// quote doubled), matched as a run of trigrams anywhere in a column.
fn fts_phrase(text: &str) -> String {
    format!("\"{}\"", text.replace('"', "\"\""))
}

/// One page of the transactions of `accounts` (several at once), newest
/// first across them (date, then id), with `text` (when given) in the
/// description or merchant in any case. The order is the one
/// [`list_transactions`] pages by, so a position from either continues
/// here. An empty `accounts` matches nothing.
///
/// Each account's page is read on its own, through its listing index
/// (or [`search_transactions`]), and the pages are merged: the first
/// `limit` rows of the merge are the first `limit` of all. Asking for
/// every account at once (`account_id IN (…)`) would read and sort every
/// row of them for each page, since no index gives that order across
/// accounts: at 10,000 rows, 25 ms a page on PostgreSQL instead of 3.
pub fn transactions_of_accounts(
    conn: &mut AnyConnection,
    accounts: &[AccountId],
    filter: &TransactionFilter,
    text: Option<&str>,
    limit: i64,
    after: Option<TransactionPosition>,
) -> StorageResult<Vec<TransactionRecord>> {
    let mut rows = Vec::new();
    for &account in accounts {
        rows.extend(match text {
            Some(text) => search_transactions(conn, account, filter, text, limit, after)?,
            None => list_transactions(conn, account, filter, Some(limit), after)?,
        });
    }
    rows.sort_unstable_by_key(|t| std::cmp::Reverse((t.date, t.id)));
    rows.truncate(usize::try_from(limit).unwrap_or(0));
    Ok(rows)
}

/// `query` in the newest-first order, from after `after`, at most `limit`.
fn newest_first<'a>(
    query: transactions::BoxedQuery<'a, crate::db::MultiBackend>,
    limit: Option<i64>,
    after: Option<TransactionPosition>,
) -> diesel::dsl::Select<
    transactions::BoxedQuery<'a, crate::db::MultiBackend>,
    diesel::dsl::AsSelect<TransactionRecord, crate::db::MultiBackend>,
> {
    let mut query = after_position(query, after)
        .select(TransactionRecord::as_select())
        .order((transactions::booked_on.desc(), transactions::id.desc()));
    if let Some(limit) = limit {
        query = query.limit(limit);
    }
    query
}

/// `query`'s rows that come after `after` in the newest-first order.
fn after_position<'a>(
    query: transactions::BoxedQuery<'a, crate::db::MultiBackend>,
    after: Option<TransactionPosition>,
) -> transactions::BoxedQuery<'a, crate::db::MultiBackend> {
    let Some(after) = after else {
        return query;
    };
    // `booked_on <= date` on its own is what lets both planners start the
    // index scan at the position: with only the OR below, SQLite read the
    // account's rows from the newest on every page, and a streamed
    // million-row list took minutes.
    query.filter(transactions::booked_on.le(after.date)).filter(
        transactions::booked_on
            .lt(after.date)
            .or(transactions::id.lt(after.id.get())),
    )
}

/// How many transactions match the filter, counted row by row.
pub fn count_transactions(
    conn: &mut AnyConnection,
    account_id: AccountId,
    filter: &TransactionFilter,
) -> StorageResult<i64> {
    Ok(filtered_transactions(account_id, filter)
        .count()
        .get_result(conn)?)
}

/// The `total` of a paged listing: without dates, the account's tally
/// (read with the account, nothing counted); with dates, a count of the
/// range, which the listing index covers (rows are not read).
pub fn page_total(
    conn: &mut AnyConnection,
    account: &AccountView,
    filter: &TransactionFilter,
) -> StorageResult<i64> {
    if filter.from.is_none() && filter.to.is_none() {
        return Ok(account.transactions.matching(filter.include_pending));
    }
    count_transactions(conn, account.id, filter)
}

#[derive(Debug, Clone, PartialEq, Queryable, Selectable)]
#[diesel(table_name = balances)]
pub struct BalanceRecord {
    #[diesel(deserialize_as = DecimalText)]
    pub amount: Decimal,
    #[diesel(deserialize_as = OptionalDecimalText)]
    pub available: Option<Decimal>,
    pub currency: String,
    pub as_of: NaiveDateTime,
}

/// The newest balance snapshot of an account.
pub fn latest_balance(
    conn: &mut AnyConnection,
    account_id: AccountId,
) -> StorageResult<Option<BalanceRecord>> {
    Ok(balances::table
        .filter(balances::account_id.eq(account_id.get()))
        .order((balances::as_of.desc(), balances::id.desc()))
        .select(BalanceRecord::as_select())
        .first(conn)
        .optional()?)
}

/// For an account no balance was ever stated for (a statement file
/// without one, say): the sum of its posted transactions, as of the day of
/// the newest; `None` when it has none. Read whole, since amounts are exact
/// decimal text the database cannot add.
pub fn balance_from_transactions(
    conn: &mut AnyConnection,
    account_id: AccountId,
    currency: &str,
) -> StorageResult<Option<BalanceRecord>> {
    let rows: Vec<(String, NaiveDate)> = transactions::table
        .filter(transactions::account_id.eq(account_id.get()))
        .filter(transactions::is_pending.eq(false))
        .select((transactions::amount, transactions::booked_on))
        .load(conn)?;
    let Some(newest) = rows.iter().map(|(_, day)| *day).max() else {
        return Ok(None);
    };
    let mut sum = Decimal::ZERO;
    for (text, _) in &rows {
        sum += parse_decimal(text)
            .map_err(|err| StorageError::Corrupt(format!("amount `{text}`: {err}")))?;
    }
    Ok(Some(BalanceRecord {
        amount: sum,
        available: None,
        currency: currency.to_owned(),
        as_of: newest.and_time(chrono::NaiveTime::MIN),
    }))
}

/// The provider's ids of the accounts a connection holds.
pub fn provider_account_ids(
    conn: &mut AnyConnection,
    connection_id: ConnectionId,
) -> StorageResult<std::collections::HashSet<String>> {
    Ok(accounts::table
        .filter(accounts::connection_id.eq(connection_id.get()))
        .select(accounts::provider_account_id)
        .load::<String>(conn)?
        .into_iter()
        .collect())
}

/// The newest balance a connection holds for the account it knows as
/// `provider_account_id`, dated before `before` and no later than `until`
/// (a statement's closing and opening dates): the closing balance a new
/// statement should open on.
pub fn stated_balance_before(
    conn: &mut AnyConnection,
    connection_id: ConnectionId,
    provider_account_id: &str,
    until: NaiveDate,
    before: NaiveDate,
) -> StorageResult<Option<BalanceRecord>> {
    let limit = until.succ_opt().unwrap_or(until).min(before);
    Ok(balances::table
        .inner_join(accounts::table)
        .filter(accounts::connection_id.eq(connection_id.get()))
        .filter(accounts::provider_account_id.eq(provider_account_id))
        .filter(balances::as_of.lt(limit.and_time(chrono::NaiveTime::MIN)))
        .order((balances::as_of.desc(), balances::id.desc()))
        .select(BalanceRecord::as_select())
        .first(conn)
        .optional()?)
}

/// Balance history of every account the user has, in one query: each
/// account's balances oldest first, with the account they belong to.
pub fn balance_histories(
    conn: &mut AnyConnection,
    user_id: UserId,
) -> StorageResult<Vec<(AccountId, BalanceRecord)>> {
    let rows: Vec<(i64, BalanceRecord)> = balances::table
        .inner_join(accounts::table)
        .filter(accounts::user_id.eq(user_id.get()))
        .order((
            balances::account_id.asc(),
            balances::as_of.asc(),
            balances::id.asc(),
        ))
        .select((balances::account_id, BalanceRecord::as_select()))
        .load(conn)?;
    Ok(rows
        .into_iter()
        .map(|(account, balance)| (AccountId::new(account), balance))
        .collect())
}

/// Balance history of an account, oldest first.
pub fn balance_history(
    conn: &mut AnyConnection,
    account_id: AccountId,
) -> StorageResult<Vec<BalanceRecord>> {
    Ok(balances::table
        .filter(balances::account_id.eq(account_id.get()))
        .order((balances::as_of.asc(), balances::id.asc()))
        .select(BalanceRecord::as_select())
        .load(conn)?)
}

#[derive(Debug, Clone, PartialEq)]
pub struct HoldingView {
    pub security: Security,
    pub quantity: Decimal,
    pub price: Decimal,
    pub value: Decimal,
    pub value_in_account_currency: Option<Decimal>,
    pub cost_basis: Option<Decimal>,
    pub currency: String,
    pub raw: serde_json::Value,
    pub as_of: NaiveDateTime,
}

/// The columns of a security's stored description, as holdings and
/// investment activity read it (`.nullable()` beside a left join).
pub(crate) const SECURITY_COLUMNS: (
    securities::name,
    securities::currency,
    securities::ticker,
    securities::figi,
    securities::cusip,
    securities::isin,
) = (
    securities::name,
    securities::currency,
    securities::ticker,
    securities::figi,
    securities::cusip,
    securities::isin,
);

/// A security's stored description, read from [`SECURITY_COLUMNS`].
#[derive(Queryable)]
pub(crate) struct SecurityColumns {
    name: String,
    currency: String,
    ticker: Option<String>,
    figi: Option<String>,
    cusip: Option<String>,
    isin: Option<String>,
}

impl From<SecurityColumns> for Security {
    fn from(row: SecurityColumns) -> Security {
        Security {
            name: row.name,
            currency: row.currency,
            ticker: row.ticker,
            figi: row.figi,
            cusip: row.cusip,
            isin: row.isin,
        }
    }
}

type HoldingRow = (
    SecurityColumns,
    (
        String,
        String,
        String,
        Option<String>,
        Option<String>,
        String,
        String,
        NaiveDateTime,
    ),
);

/// Holdings of an account with their securities, by security name.
pub fn list_holdings(
    conn: &mut AnyConnection,
    account_id: AccountId,
) -> StorageResult<Vec<HoldingView>> {
    let rows: Vec<HoldingRow> = holdings::table
        .inner_join(securities::table)
        .filter(holdings::account_id.eq(account_id.get()))
        .order((securities::name, holdings::id))
        .select((
            SECURITY_COLUMNS,
            (
                holdings::quantity,
                holdings::price,
                holdings::value,
                holdings::value_in_account_currency,
                holdings::cost_basis,
                holdings::currency,
                holdings::raw,
                holdings::as_of,
            ),
        ))
        .load(conn)?;
    rows.into_iter()
        .map(
            |(
                security,
                (
                    quantity,
                    price,
                    value,
                    value_in_account_currency,
                    cost_basis,
                    currency,
                    raw,
                    as_of,
                ),
            )| {
                Ok(HoldingView {
                    security: security.into(),
                    quantity: parse_decimal(&quantity)?,
                    price: parse_decimal(&price)?,
                    value: parse_decimal(&value)?,
                    value_in_account_currency: value_in_account_currency
                        .as_deref()
                        .map(parse_decimal)
                        .transpose()?,
                    cost_basis: cost_basis.as_deref().map(parse_decimal).transpose()?,
                    currency,
                    raw: serde_json::from_str(&raw).map_err(|err| {
                        StorageError::Corrupt(format!("holding raw record: {err}"))
                    })?,
                    as_of,
                })
            },
        )
        .collect()
}

/// One of a user's accounts, as the browser pages list them.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable)]
#[diesel(table_name = accounts)]
pub struct AccountSummary {
    #[diesel(deserialize_as = i64)]
    pub connection_id: ConnectionId,
    #[diesel(deserialize_as = i64)]
    pub id: AccountId,
    pub name: String,
    #[diesel(deserialize_as = String)]
    pub kind: AccountKind,
    pub currency: String,
    pub mask: Option<String>,
}

/// Every account of the user, by connection then id.
pub fn account_summaries(
    conn: &mut AnyConnection,
    user_id: UserId,
) -> StorageResult<Vec<AccountSummary>> {
    Ok(accounts::table
        .filter(accounts::user_id.eq(user_id.get()))
        .order((accounts::connection_id, accounts::id))
        .select(AccountSummary::as_select())
        .load(conn)?)
}

/// One of the accounts of a user's statement imports (their `file`
/// connection), with the id the imports know it by: what a statement that
/// names no account can be imported into.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable)]
#[diesel(table_name = accounts)]
pub struct ImportedAccount {
    #[diesel(deserialize_as = i64)]
    pub id: AccountId,
    #[diesel(deserialize_as = i64)]
    pub connection_id: ConnectionId,
    pub provider_account_id: String,
    pub name: String,
    #[diesel(deserialize_as = String)]
    pub kind: AccountKind,
    pub currency: String,
    pub mask: Option<String>,
}

/// Every account of the user's statement imports, in id order.
pub fn imported_accounts(
    conn: &mut AnyConnection,
    user_id: UserId,
) -> StorageResult<Vec<ImportedAccount>> {
    Ok(accounts::table
        .inner_join(connections::table)
        .filter(accounts::user_id.eq(user_id.get()))
        .filter(connections::provider.eq(Provider::FILE.as_str()))
        .order(accounts::id)
        .select(ImportedAccount::as_select())
        .load(conn)?)
}

/// Which of these provider ids the account holds a transaction of.
pub fn stored_transaction_ids(
    conn: &mut AnyConnection,
    account_id: AccountId,
    provider_ids: &[&str],
) -> StorageResult<std::collections::HashSet<String>> {
    let mut found = std::collections::HashSet::new();
    for ids in provider_ids.chunks(500) {
        found.extend(
            transactions::table
                .filter(transactions::account_id.eq(account_id.get()))
                .filter(transactions::provider_transaction_id.eq_any(ids))
                .select(transactions::provider_transaction_id)
                .load::<String>(conn)?,
        );
    }
    Ok(found)
}

/// The day of the oldest pending transaction of `connection`'s accounts
/// (by the partial index of pending rows): a sync must read back to it.
pub fn oldest_pending(
    conn: &mut AnyConnection,
    connection: ConnectionId,
) -> StorageResult<Option<NaiveDate>> {
    Ok(transactions::table
        .inner_join(accounts::table)
        .filter(accounts::connection_id.eq(connection.get()))
        .filter(transactions::is_pending.eq(true))
        .select(diesel::dsl::min(transactions::booked_on))
        .first(conn)?)
}
