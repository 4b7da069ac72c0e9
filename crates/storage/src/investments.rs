//! Investment activity (buys, sells, income, fees, transfers, splits) as
//! such: written by a sync or an import beside the account's cash
//! transactions, read by `GET /accounts/{id}/investment_transactions`
//! (docs/api-reference.md, "Investment transactions").
//!
//! One row per account and provider id. A record seen again replaces what
//! it said; none is removed for not being seen again, since providers and
//! statement files show a window of the account's history, not all of it.

use crate::backend;
use crate::read::{SECURITY_COLUMNS, SecurityColumns};
use crate::schema::{investment_transactions, securities};
use crate::{AnyConnection, StorageError, StorageResult};
use chrono::{NaiveDate, NaiveDateTime};
use diesel::prelude::*;
use std::collections::HashMap;
use tributary_domain::changes::ChangeSeq;
use tributary_domain::ids::{AccountId, SecurityId, UserId};
use tributary_domain::model::InvestmentKind;
use tributary_domain::money::Decimal;
use tributary_domain::snapshot::{Security, SnapshotInvestmentTransaction};

/// How many provider ids one lookup lists (well under both backends'
/// limits on bound parameters).
const IDS_PER_QUERY: usize = 500;

/// What one write did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Written {
    pub added: usize,
    /// Records changed, themselves or through their security's names.
    pub updated: usize,
}

/// `owner`'s row for `security` (`backend::upsert_security`). When that
/// restates what the row said (a new name, ticker, FIGI or CUSIP), every
/// record of the owner's activity naming it is stamped as changed by
/// `seq`: the change feed carries the security with each record, so a
/// reader must be told. Returns the id and how many records were stamped.
pub(crate) fn upsert_security(
    conn: &mut AnyConnection,
    owner: UserId,
    security: &Security,
    (seq, now): (ChangeSeq, NaiveDateTime),
) -> StorageResult<(SecurityId, usize)> {
    type Said = (
        Option<String>,
        Option<String>,
        Option<String>,
        Option<String>,
    );
    let before: Option<Said> = securities::table
        .filter(securities::identity_key.eq(backend::owned_identity_key(owner, security)))
        .select((
            securities::name.nullable(),
            securities::ticker,
            securities::figi,
            securities::cusip,
        ))
        .first(conn)
        .optional()?;
    let id = backend::upsert_security(conn, owner, security)?;
    let now_said: Said = (
        Some(security.name.clone()),
        security.ticker.clone(),
        security.figi.clone(),
        security.cusip.clone(),
    );
    let restated = match before {
        Some(said) if said != now_said => diesel::update(
            investment_transactions::table
                .filter(investment_transactions::security_id.eq(id.get()))
                .filter(investment_transactions::change_seq.lt(seq.get())),
        )
        .set((
            investment_transactions::change_seq.eq(seq.get()),
            investment_transactions::updated_at.eq(now),
        ))
        .execute(conn)?,
        _ => 0,
    };
    Ok((id, restated))
}

/// A record's values as stored; compared with the stored row to tell an
/// unchanged record from a changed one.
#[derive(Debug, Clone, PartialEq, Eq, Insertable, AsChangeset, Queryable, Selectable)]
#[diesel(table_name = investment_transactions, treat_none_as_null = true)]
pub(crate) struct Values {
    traded_on: NaiveDate,
    kind: String,
    subtype: Option<String>,
    security_id: Option<i64>,
    quantity: Option<String>,
    price: Option<String>,
    amount: String,
    fees: Option<String>,
    currency: String,
    description: Option<String>,
    raw: String,
}

impl Values {
    fn new(record: &SnapshotInvestmentTransaction, security_id: Option<SecurityId>) -> Self {
        Values {
            traded_on: record.date,
            kind: record.kind.as_str().to_owned(),
            subtype: record.subtype.clone(),
            security_id: security_id.map(SecurityId::get),
            quantity: record.quantity.map(|q| q.to_string()),
            price: record.price.map(|p| p.to_string()),
            amount: record.amount.to_string(),
            fees: record.fees.map(|f| f.to_string()),
            currency: record.currency.clone(),
            description: record.description.clone(),
            raw: record.raw.to_string(),
        }
    }
}

/// Writes `records` of `account_id` as change `seq` at `now`: new provider
/// ids inserted, changed ones updated, the rest left alone. Two records of
/// one write with the same provider id are the same record seen twice: the
/// first counts, as for transactions (`reconcile`), so a provider's cash
/// row and its activity come from the same copy. Securities are the
/// account owner's own rows.
pub(crate) fn write(
    conn: &mut AnyConnection,
    (owner, account_id): (UserId, AccountId),
    records: &[SnapshotInvestmentTransaction],
    (seq, now): (ChangeSeq, NaiveDateTime),
    securities: &mut SecuritiesWritten,
) -> StorageResult<Written> {
    let mut written = Written::default();
    let mut rows: HashMap<String, (i64, Values)> = HashMap::new();
    // Provider ids this write has taken: a repeat is left out.
    let mut seen: std::collections::HashSet<&str> = std::collections::HashSet::new();
    for chunk in records.chunks(IDS_PER_QUERY) {
        let ids: Vec<&str> = chunk.iter().map(|r| r.provider_id.as_str()).collect();
        let stored: Vec<(i64, String, Values)> = investment_transactions::table
            .filter(investment_transactions::account_id.eq(account_id.get()))
            .filter(investment_transactions::provider_id.eq_any(&ids))
            .select((
                investment_transactions::id,
                investment_transactions::provider_id,
                Values::as_select(),
            ))
            .load(conn)?;
        for (id, provider_id, values) in stored {
            rows.entry(provider_id).or_insert((id, values));
        }
        for record in chunk {
            if !seen.insert(record.provider_id.as_str()) {
                continue;
            }
            let security_id = match &record.security {
                Some(security) => {
                    let (id, restated) =
                        security_id(conn, owner, securities, security, (seq, now))?;
                    written.updated += restated;
                    Some(id)
                }
                None => None,
            };
            let values = Values::new(record, security_id);
            match rows.get(&record.provider_id) {
                Some((_, same)) if *same == values => {}
                Some(&(id, _)) => {
                    diesel::update(investment_transactions::table.find(id))
                        .set((
                            &values,
                            investment_transactions::updated_at.eq(now),
                            investment_transactions::change_seq.eq(seq.get()),
                        ))
                        .execute(conn)?;
                    written.updated += 1;
                }
                None => {
                    diesel::insert_into(investment_transactions::table)
                        .values((
                            &values,
                            investment_transactions::account_id.eq(account_id.get()),
                            investment_transactions::provider_id.eq(&record.provider_id),
                            investment_transactions::created_at.eq(now),
                            investment_transactions::updated_at.eq(now),
                            investment_transactions::change_seq.eq(seq.get()),
                            investment_transactions::created_seq.eq(seq.get()),
                        ))
                        .execute(conn)?;
                    written.added += 1;
                }
            }
        }
    }
    Ok(written)
}

/// The securities one change has written, by identity key.
pub(crate) type SecuritiesWritten = HashMap<String, SecurityId>;

/// The stored id of `security`, upserted once per change, and how many
/// records its upsert restated. The first source of a change to state a
/// security names it for that change: two sources of one sync that name
/// it differently (a brokerage's positions and its activity) do not
/// restate it back and forth on every sync.
pub(crate) fn security_id(
    conn: &mut AnyConnection,
    owner: UserId,
    known: &mut HashMap<String, SecurityId>,
    security: &Security,
    stamp: (ChangeSeq, NaiveDateTime),
) -> StorageResult<(SecurityId, usize)> {
    let key = security.identity_key();
    if let Some(id) = known.get(&key) {
        return Ok((*id, 0));
    }
    let (id, restated) = upsert_security(conn, owner, security, stamp)?;
    known.insert(key, id);
    Ok((id, restated))
}

/// One piece of investment activity, as read back.
#[derive(Debug, Clone, PartialEq)]
pub struct InvestmentTransactionView {
    /// The row's id: the wire `id`, stable (a row is never replaced).
    pub id: i64,
    /// The provider's id.
    pub provider_id: String,
    pub account_id: AccountId,
    pub date: NaiveDate,
    pub kind: InvestmentKind,
    pub subtype: Option<String>,
    pub security: Option<Security>,
    pub quantity: Option<Decimal>,
    pub price: Option<Decimal>,
    pub amount: Decimal,
    pub fees: Option<Decimal>,
    pub currency: String,
    pub description: Option<String>,
    pub raw: serde_json::Value,
}

/// How many records of `account_id` lie from `from` to `to`.
pub fn count(
    conn: &mut AnyConnection,
    account_id: AccountId,
    (from, to): (Option<NaiveDate>, Option<NaiveDate>),
) -> StorageResult<i64> {
    let mut query = investment_transactions::table
        .filter(investment_transactions::account_id.eq(account_id.get()))
        .into_boxed();
    if let Some(from) = from {
        query = query.filter(investment_transactions::traded_on.ge(from));
    }
    if let Some(to) = to {
        query = query.filter(investment_transactions::traded_on.le(to));
    }
    Ok(query.count().get_result(conn)?)
}

/// The activity of `account_id` from `from` to `to` (inclusive, each
/// optional), newest first; the newest `limit` of it where one is given.
pub fn list(
    conn: &mut AnyConnection,
    account_id: AccountId,
    (from, to): (Option<NaiveDate>, Option<NaiveDate>),
    limit: Option<i64>,
) -> StorageResult<Vec<InvestmentTransactionView>> {
    let mut query = investment_transactions::table
        .left_join(securities::table)
        .filter(investment_transactions::account_id.eq(account_id.get()))
        .into_boxed();
    if let Some(from) = from {
        query = query.filter(investment_transactions::traded_on.ge(from));
    }
    if let Some(to) = to {
        query = query.filter(investment_transactions::traded_on.le(to));
    }
    if let Some(limit) = limit {
        query = query.limit(limit);
    }
    let rows: Vec<(i64, String, Values, Option<SecurityColumns>)> = query
        .order((
            investment_transactions::traded_on.desc(),
            investment_transactions::id.desc(),
        ))
        .select((
            investment_transactions::id,
            investment_transactions::provider_id,
            Values::as_select(),
            SECURITY_COLUMNS.nullable(),
        ))
        .load(conn)?;
    rows.into_iter()
        .map(|(id, provider_id, values, security)| {
            view(account_id, (id, provider_id), values, security)
        })
        .collect()
}

pub(crate) fn view(
    account_id: AccountId,
    (id, provider_id): (i64, String),
    values: Values,
    security: Option<SecurityColumns>,
) -> StorageResult<InvestmentTransactionView> {
    let corrupt = |what: &str| {
        StorageError::Corrupt(format!(
            "investment transaction {provider_id} of account {account_id}: {what}"
        ))
    };
    let decimal = |text: &str, what: &str| {
        text.parse::<Decimal>()
            .map_err(|_| corrupt(&format!("{what} `{text}` is not a decimal")))
    };
    let optional =
        |text: &Option<String>, what: &str| text.as_deref().map(|t| decimal(t, what)).transpose();
    Ok(InvestmentTransactionView {
        id,
        account_id,
        date: values.traded_on,
        kind: values
            .kind
            .parse()
            .map_err(|err| corrupt(&format!("{err}")))?,
        quantity: optional(&values.quantity, "quantity")?,
        price: optional(&values.price, "price")?,
        amount: decimal(&values.amount, "amount")?,
        fees: optional(&values.fees, "fees")?,
        raw: serde_json::from_str(&values.raw)
            .map_err(|err| corrupt(&format!("raw is not JSON: {err}")))?,
        security: security.map(Security::from),
        subtype: values.subtype,
        currency: values.currency,
        description: values.description,
        provider_id,
    })
}
