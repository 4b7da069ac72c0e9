//! What the metrics endpoint reports from the database, read when it is
//! scraped (never on a request's path): sync jobs by status, and when each
//! connection last synced.

use crate::StorageResult;
use crate::db::AnyConnection;
use crate::schema::{connections, sync_jobs};
use chrono::NaiveDateTime;
use diesel::prelude::*;
use std::str::FromStr as _;
use tributary_domain::model::Provider;

/// How many sync jobs are in each status (`queued` is the queue's depth).
pub fn sync_jobs_by_status(conn: &mut AnyConnection) -> StorageResult<Vec<(String, i64)>> {
    Ok(sync_jobs::table
        .group_by(sync_jobs::status)
        .select((sync_jobs::status, diesel::dsl::count_star()))
        .order_by(sync_jobs::status)
        .load(conn)?)
}

/// A connection as the metrics see it: no user, no institution, nothing
/// personal.
#[derive(Debug, Clone, PartialEq, Eq, Queryable)]
pub struct ConnectionFreshness {
    pub id: i64,
    pub provider: String,
    pub status: String,
    /// The end of its last successful sync, if it had one.
    pub last_synced_at: Option<NaiveDateTime>,
}

/// Every connection that is synced (imported statements are not), with its
/// last successful sync.
pub fn connection_freshness(conn: &mut AnyConnection) -> StorageResult<Vec<ConnectionFreshness>> {
    let all: Vec<ConnectionFreshness> = connections::table
        .select((
            connections::id,
            connections::provider,
            connections::status,
            connections::last_synced_at,
        ))
        .order_by(connections::id)
        .load(conn)?;
    Ok(all
        .into_iter()
        .filter(|c| Provider::from_str(&c.provider).is_ok_and(Provider::is_synced))
        .collect())
}
