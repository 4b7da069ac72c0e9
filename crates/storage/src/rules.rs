//! A person's enrichment rules (docs/enrichment.md, "Rules"): kept here,
//! applied by every sync and import as it stores rows
//! ([`crate::backend::TransactionValues`]), and to the rows already stored
//! by the workers ([`crate::reenrich`]), which each change of rules asks
//! for in the same database transaction.

use crate::changes;
use crate::columns::OptionalDecimalText;
use crate::db::AnyConnection;
use crate::reenrich;
use crate::schema::{accounts, enrichment_rules};
use crate::{StorageError, StorageResult};
use chrono::NaiveDateTime;
use diesel::prelude::*;
use tributary_domain::enrich::rules::{Actions, Conditions, MAX_RULES, Rule, Rules};
use tributary_domain::ids::{RuleId, UserId};
use tributary_domain::taxonomy::Subcategory;

/// A rule as kept.
#[derive(Debug, Clone, PartialEq)]
pub struct RuleRecord {
    pub id: RuleId,
    pub rule: Rule,
    pub created_at: NaiveDateTime,
}

#[derive(Queryable, Selectable)]
#[diesel(table_name = enrichment_rules)]
struct Row {
    id: i64,
    match_text: Option<String>,
    match_merchant: Option<String>,
    #[diesel(deserialize_as = OptionalDecimalText)]
    amount_min: Option<rust_decimal::Decimal>,
    #[diesel(deserialize_as = OptionalDecimalText)]
    amount_max: Option<rust_decimal::Decimal>,
    account_id: Option<i64>,
    set_merchant: Option<String>,
    set_subcategory: Option<String>,
    created_at: NaiveDateTime,
}

impl Row {
    fn record(self) -> RuleRecord {
        RuleRecord {
            id: RuleId::new(self.id),
            rule: Rule {
                when: Conditions {
                    text: self.match_text,
                    merchant: self.match_merchant,
                    amount_min: self.amount_min,
                    amount_max: self.amount_max,
                    account_id: self.account_id,
                },
                then: Actions {
                    merchant: self.set_merchant,
                    // An id the taxonomy no longer has sets nothing (ids
                    // are never retired, so this is data from elsewhere).
                    subcategory: self
                        .set_subcategory
                        .as_deref()
                        .and_then(Subcategory::from_id),
                },
            },
            created_at: self.created_at,
        }
    }
}

/// The rules of `user_id`, oldest first.
pub fn list(conn: &mut AnyConnection, user_id: UserId) -> StorageResult<Vec<RuleRecord>> {
    Ok(enrichment_rules::table
        .filter(enrichment_rules::user_id.eq(user_id.get()))
        .order(enrichment_rules::id)
        .select(Row::as_select())
        .load::<Row>(conn)?
        .into_iter()
        .map(Row::record)
        .collect())
}

/// The rules of `user_id`, ready to apply.
pub(crate) fn load(conn: &mut AnyConnection, user_id: UserId) -> StorageResult<Rules> {
    Ok(Rules::new(list(conn, user_id)?.into_iter().map(|r| r.rule)))
}

/// What a change of rules could not do.
#[derive(Debug, thiserror::Error)]
pub enum RuleChangeError {
    /// The person keeps [`MAX_RULES`] already.
    #[error("at most {MAX_RULES} rules; delete one first")]
    TooMany,
    /// `match.accountId` is not one of the person's accounts.
    #[error("account {0} is not one of yours")]
    UnknownAccount(i64),
    #[error(transparent)]
    Storage(#[from] StorageError),
}

impl From<diesel::result::Error> for RuleChangeError {
    fn from(err: diesel::result::Error) -> Self {
        RuleChangeError::Storage(err.into())
    }
}

/// Adds a rule (checked by the caller with `Rule::check`) and asks for
/// the stored rows to be enriched again.
pub fn create(
    conn: &mut AnyConnection,
    user_id: UserId,
    rule: &Rule,
    now: NaiveDateTime,
) -> Result<RuleRecord, RuleChangeError> {
    conn.atomically_or(|conn| {
        lock_and_check(conn, user_id, rule)?;
        let kept: i64 = enrichment_rules::table
            .filter(enrichment_rules::user_id.eq(user_id.get()))
            .count()
            .get_result(conn)?;
        if kept >= MAX_RULES as i64 {
            return Err(RuleChangeError::TooMany);
        }
        let id: i64 = diesel::insert_into(enrichment_rules::table)
            .values((
                enrichment_rules::user_id.eq(user_id.get()),
                values(rule),
                enrichment_rules::created_at.eq(now),
            ))
            .returning(enrichment_rules::id)
            .get_result(conn)?;
        reenrich::request(conn, user_id, now)?;
        Ok(RuleRecord {
            id: RuleId::new(id),
            rule: rule.clone(),
            created_at: now,
        })
    })
}

/// Replaces rule `id` of `user_id` (keeping its place among the rules);
/// `None` when the person has no such rule.
pub fn replace(
    conn: &mut AnyConnection,
    user_id: UserId,
    id: RuleId,
    rule: &Rule,
    now: NaiveDateTime,
) -> Result<Option<RuleRecord>, RuleChangeError> {
    conn.atomically_or(|conn| {
        lock_and_check(conn, user_id, rule)?;
        let kept: Option<Row> = enrichment_rules::table
            .filter(enrichment_rules::id.eq(id.get()))
            .filter(enrichment_rules::user_id.eq(user_id.get()))
            .select(Row::as_select())
            .first(conn)
            .optional()?;
        let Some(kept) = kept.map(Row::record) else {
            return Ok(None);
        };
        // The same rule again changes nothing: no run starts over.
        if kept.rule == *rule {
            return Ok(Some(kept));
        }
        diesel::update(enrichment_rules::table.find(id.get()))
            .set(values(rule))
            .execute(conn)?;
        reenrich::request(conn, user_id, now)?;
        Ok(Some(RuleRecord {
            rule: rule.clone(),
            ..kept
        }))
    })
}

/// Deletes rule `id` of `user_id`; whether there was one.
pub fn delete(
    conn: &mut AnyConnection,
    user_id: UserId,
    id: RuleId,
    now: NaiveDateTime,
) -> StorageResult<bool> {
    conn.atomically(|conn| {
        changes::next_seq(conn, user_id)?;
        let deleted = diesel::delete(
            enrichment_rules::table
                .filter(enrichment_rules::id.eq(id.get()))
                .filter(enrichment_rules::user_id.eq(user_id.get())),
        )
        .execute(conn)?;
        if deleted > 0 {
            reenrich::request(conn, user_id, now)?;
        }
        Ok(deleted > 0)
    })
}

/// Takes the user's change number first, as every change of the user's
/// data does (changes.rs): a sync storing rows now finishes before this
/// commits, or starts after and reads the new rules. Then checks that the
/// rule's account is the person's.
fn lock_and_check(
    conn: &mut AnyConnection,
    user_id: UserId,
    rule: &Rule,
) -> Result<(), RuleChangeError> {
    changes::next_seq(conn, user_id)?;
    if let Some(account) = rule.when.account_id {
        let theirs: i64 = accounts::table
            .filter(accounts::id.eq(account))
            .filter(accounts::user_id.eq(user_id.get()))
            .count()
            .get_result(conn)?;
        if theirs == 0 {
            return Err(RuleChangeError::UnknownAccount(account));
        }
    }
    Ok(())
}

/// The columns a rule is written to.
#[allow(clippy::type_complexity)]
fn values(
    rule: &Rule,
) -> (
    diesel::dsl::Eq<enrichment_rules::match_text, Option<String>>,
    diesel::dsl::Eq<enrichment_rules::match_merchant, Option<String>>,
    diesel::dsl::Eq<enrichment_rules::amount_min, Option<String>>,
    diesel::dsl::Eq<enrichment_rules::amount_max, Option<String>>,
    diesel::dsl::Eq<enrichment_rules::account_id, Option<i64>>,
    diesel::dsl::Eq<enrichment_rules::set_merchant, Option<String>>,
    diesel::dsl::Eq<enrichment_rules::set_subcategory, Option<&'static str>>,
) {
    let (when, then) = (&rule.when, &rule.then);
    (
        enrichment_rules::match_text.eq(when.text.clone()),
        enrichment_rules::match_merchant.eq(when.merchant.clone()),
        enrichment_rules::amount_min.eq(when.amount_min.map(|a| a.to_string())),
        enrichment_rules::amount_max.eq(when.amount_max.map(|a| a.to_string())),
        enrichment_rules::account_id.eq(when.account_id),
        enrichment_rules::set_merchant.eq(then.merchant.clone()),
        enrichment_rules::set_subcategory.eq(then.subcategory.map(|s| s.id)),
    )
}
