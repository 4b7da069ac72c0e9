//! Mail notices (docs/changes.md#notices): an outbox like the webhooks'
//! one. A notice is written in the transaction of what it tells of, claimed
//! by a worker under a lease, and marked done once sent or given up on.
//! The recipient's address is read at claim time, never stored here, so an
//! erased user's notices go with them (the foreign keys cascade).

use crate::db::AnyConnection;
use crate::schema::{developers, mail_notices, users};
use crate::{StorageError, StorageResult};
use chrono::NaiveDateTime;
use diesel::prelude::*;
use tributary_domain::ids::{DeveloperId, MailNoticeId, UserId};
use tributary_domain::notice::Notice;

/// Who a notice goes to: a user, or a developer (for their app; the
/// operator's own apps, made with the CLI, have none: the log tells the
/// operator).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recipient {
    User(UserId),
    Developer(DeveloperId),
}

/// Writes `notice` for `to`, to be mailed by a worker; `false` when
/// `once_key` was used before and nothing was written. Run it inside the
/// transaction of what it tells of.
pub fn record(
    conn: &mut AnyConnection,
    to: Recipient,
    notice: &Notice,
    once_key: Option<&str>,
    now: NaiveDateTime,
) -> StorageResult<bool> {
    if let Some(key) = once_key {
        let used: bool = diesel::select(diesel::dsl::exists(
            mail_notices::table.filter(mail_notices::once_key.eq(key)),
        ))
        .get_result(conn)?;
        if used {
            return Ok(false);
        }
    }
    let (user, developer) = match to {
        Recipient::User(id) => (Some(id.get()), None),
        Recipient::Developer(id) => (None, Some(id.get())),
    };
    let stored = serde_json::to_string(notice)
        .map_err(|err| StorageError::Corrupt(format!("a notice does not serialize: {err}")))?;
    diesel::insert_into(mail_notices::table)
        .values((
            mail_notices::user_id.eq(user),
            mail_notices::developer_id.eq(developer),
            mail_notices::notice.eq(stored),
            mail_notices::once_key.eq(once_key),
            mail_notices::next_attempt_at.eq(now),
            mail_notices::created_at.eq(now),
        ))
        .execute(conn)?;
    Ok(true)
}

/// A notice a worker holds: what to tell, and to which address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimedNotice {
    pub id: MailNoticeId,
    /// Attempts so far, this one included.
    pub attempts: i32,
    pub to: String,
    pub notice: Notice,
}

/// Claims up to `limit` due notices until `lease_until`, each attempt
/// counted as it is claimed.
pub fn claim_due(
    conn: &mut AnyConnection,
    now: NaiveDateTime,
    lease_until: NaiveDateTime,
    limit: i64,
) -> StorageResult<Vec<ClaimedNotice>> {
    let ids = crate::backend::claim_notices(conn, now, lease_until, limit)?;
    let mut claimed = Vec::with_capacity(ids.len());
    for (id, attempts) in ids {
        let (user, developer, stored): (Option<i64>, Option<i64>, String) = mail_notices::table
            .find(id)
            .select((
                mail_notices::user_id,
                mail_notices::developer_id,
                mail_notices::notice,
            ))
            .first(conn)?;
        let to: String = match (user, developer) {
            (Some(user), _) => users::table.find(user).select(users::email).first(conn)?,
            (None, Some(developer)) => developers::table
                .find(developer)
                .select(developers::email)
                .first(conn)?,
            (None, None) => {
                return Err(StorageError::Corrupt(format!(
                    "mail notice {id} has no recipient"
                )));
            }
        };
        let notice = serde_json::from_str(&stored)
            .map_err(|err| StorageError::Corrupt(format!("mail notice {id}: {err}")))?;
        claimed.push(ClaimedNotice {
            id: MailNoticeId::new(id),
            attempts,
            to,
            notice,
        });
    }
    Ok(claimed)
}

/// How sending a notice ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NoticeOutcome {
    Sent,
    /// Try again at `at`.
    Retry {
        at: NaiveDateTime,
        error: String,
    },
    /// The schedule is spent.
    GivenUp {
        error: String,
    },
}

/// Records how sending went; `false` when the worker no longer held the
/// notice (its lease ran out and another took it), and nothing changed.
pub fn record_outcome(
    conn: &mut AnyConnection,
    claimed: &ClaimedNotice,
    outcome: &NoticeOutcome,
    now: NaiveDateTime,
) -> StorageResult<bool> {
    let held = mail_notices::table
        .filter(mail_notices::id.eq(claimed.id.get()))
        .filter(mail_notices::done_at.is_null())
        .filter(mail_notices::attempts.eq(claimed.attempts));
    let (next, error, done) = match outcome {
        NoticeOutcome::Sent => (now, None, Some(now)),
        NoticeOutcome::Retry { at, error } => (*at, Some(error.as_str()), None),
        NoticeOutcome::GivenUp { error } => (now, Some(error.as_str()), Some(now)),
    };
    let updated = diesel::update(held)
        .set((
            mail_notices::next_attempt_at.eq(next),
            mail_notices::last_error.eq(error),
            mail_notices::done_at.eq(done),
            mail_notices::lease_until.eq(None::<NaiveDateTime>),
        ))
        .execute(conn)?;
    Ok(updated > 0)
}

/// How long a sent or abandoned notice is kept: longer than any reminder's
/// window (a week), so its `once_key` still stops a second one.
pub const DONE_KEPT: chrono::Duration = chrono::Duration::days(30);

/// Deletes the notices done before `before`; how many.
pub fn purge_done(conn: &mut AnyConnection, before: NaiveDateTime) -> StorageResult<usize> {
    Ok(
        diesel::delete(mail_notices::table.filter(mail_notices::done_at.lt(before)))
            .execute(conn)?,
    )
}
