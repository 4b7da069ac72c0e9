//! Checkouts at a payment processor and the subscriptions they buy (for the
//! users of "user pays" apps).

use crate::StorageResult;
use crate::db::AnyConnection;
use crate::schema::{checkouts, users};
use chrono::NaiveDateTime;
use diesel::prelude::*;
use tributary_domain::ids::{CheckoutId, UserId};
use tributary_domain::model::{CheckoutStatus, PaymentProcessorKind};

#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable)]
#[diesel(table_name = checkouts)]
pub struct CheckoutRecord {
    #[diesel(deserialize_as = i64)]
    pub id: CheckoutId,
    #[diesel(deserialize_as = i64)]
    pub user_id: UserId,
    #[diesel(deserialize_as = String)]
    pub processor: PaymentProcessorKind,
    pub external_id: String,
    #[diesel(deserialize_as = String)]
    pub status: CheckoutStatus,
    pub subscription_reference: Option<String>,
    pub created_at: NaiveDateTime,
    pub updated_at: NaiveDateTime,
}

pub fn insert_checkout(
    conn: &mut AnyConnection,
    user_id: UserId,
    processor: PaymentProcessorKind,
    external_id: &str,
    now: NaiveDateTime,
) -> StorageResult<()> {
    diesel::insert_into(checkouts::table)
        .values((
            checkouts::user_id.eq(user_id.get()),
            checkouts::processor.eq(processor.as_str()),
            checkouts::external_id.eq(external_id),
            checkouts::status.eq(CheckoutStatus::Open.as_str()),
            checkouts::created_at.eq(now),
            checkouts::updated_at.eq(now),
        ))
        .execute(conn)?;
    Ok(())
}

pub fn find_checkout(
    conn: &mut AnyConnection,
    processor: PaymentProcessorKind,
    external_id: &str,
) -> StorageResult<Option<CheckoutRecord>> {
    Ok(checkouts::table
        .filter(checkouts::processor.eq(processor.as_str()))
        .filter(checkouts::external_id.eq(external_id))
        .select(CheckoutRecord::as_select())
        .first(conn)
        .optional()?)
}

/// The user's most recent checkout.
pub fn latest_checkout(
    conn: &mut AnyConnection,
    user_id: UserId,
) -> StorageResult<Option<CheckoutRecord>> {
    Ok(checkouts::table
        .filter(checkouts::user_id.eq(user_id.get()))
        .order(checkouts::id.desc())
        .select(CheckoutRecord::as_select())
        .first(conn)
        .optional()?)
}

pub fn set_checkout_status(
    conn: &mut AnyConnection,
    id: CheckoutId,
    status: CheckoutStatus,
    subscription_reference: Option<&str>,
    now: NaiveDateTime,
) -> StorageResult<()> {
    diesel::update(checkouts::table.find(id.get()))
        .set((
            checkouts::status.eq(status.as_str()),
            checkouts::subscription_reference.eq(subscription_reference),
            checkouts::updated_at.eq(now),
        ))
        .execute(conn)?;
    Ok(())
}

/// Records a checkout paid and the subscription it bought, together: a
/// crash between the two cannot leave a paid checkout without a subscription.
pub fn record_paid(
    conn: &mut AnyConnection,
    checkout: &CheckoutRecord,
    subscription_reference: &str,
    now: NaiveDateTime,
) -> StorageResult<()> {
    conn.atomically(|conn| {
        set_checkout_status(
            conn,
            checkout.id,
            CheckoutStatus::Paid,
            Some(subscription_reference),
            now,
        )?;
        record_subscription(
            conn,
            checkout.user_id,
            checkout.processor,
            subscription_reference,
            now,
        )
    })
}

/// Records that the user holds a paid subscription.
pub fn record_subscription(
    conn: &mut AnyConnection,
    user_id: UserId,
    processor: PaymentProcessorKind,
    reference: &str,
    now: NaiveDateTime,
) -> StorageResult<()> {
    diesel::update(users::table.find(user_id.get()))
        .set((
            users::subscription_processor.eq(processor.as_str()),
            users::subscription_reference.eq(reference),
            users::subscribed_at.eq(now),
            users::updated_at.eq(now),
        ))
        .execute(conn)?;
    Ok(())
}
