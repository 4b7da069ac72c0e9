//! An app's users as the developer dashboard lists them: each with their
//! connections and how many accounts they have. A read across users,
//! connections and accounts, apart from the developers' own tables.

use crate::StorageResult;
use crate::connections::{self, ConnectionRecord};
use crate::db::AnyConnection;
use crate::read::{contains_pattern, lower};
use crate::schema::{accounts, users};
use crate::users::UserRecord;
use diesel::prelude::*;
use std::collections::HashMap;
use tributary_domain::ids::{AppId, UserId};

/// One user of an app as the developer dashboard lists them.
#[derive(Debug, Clone, PartialEq)]
pub struct AppUserLine {
    pub user: UserRecord,
    pub connections: Vec<ConnectionRecord>,
    /// Accounts the user has now (what the account limit counts).
    pub accounts: i64,
}

/// The users of `app_id`, newest first, at most `limit`; with `search`,
/// only those whose e-mail, external id or user id contains it in any
/// case. Three queries whatever the number of users.
pub fn app_users(
    conn: &mut AnyConnection,
    app_id: AppId,
    search: Option<&str>,
    limit: i64,
) -> StorageResult<Vec<AppUserLine>> {
    let mut query = users::table
        .filter(users::app_id.eq(app_id.get()))
        .select(UserRecord::as_select())
        .order(users::id.desc())
        .limit(limit)
        .into_boxed();
    if let Some(text) = search {
        let pattern = contains_pattern(text);
        query = query.filter(
            lower(users::email.nullable())
                .like(pattern.clone())
                .escape('\\')
                .or(lower(users::external_user_id)
                    .like(pattern.clone())
                    .escape('\\'))
                .or(lower(users::public_id).like(pattern).escape('\\')),
        );
    }
    let found: Vec<UserRecord> = query.load(conn)?;
    let ids: Vec<UserId> = found.iter().map(|user| user.id).collect();
    let mut connections_of: HashMap<UserId, Vec<ConnectionRecord>> = HashMap::new();
    for connection in connections::list_for_users(conn, &ids)? {
        connections_of
            .entry(connection.user_id)
            .or_default()
            .push(connection);
    }
    let raw_ids: Vec<i64> = ids.iter().map(|id| id.get()).collect();
    let counts: HashMap<i64, i64> = accounts::table
        .filter(accounts::user_id.eq_any(raw_ids))
        .group_by(accounts::user_id)
        .select((accounts::user_id, diesel::dsl::count_star()))
        .load::<(i64, i64)>(conn)?
        .into_iter()
        .collect();
    Ok(found
        .into_iter()
        .map(|user| AppUserLine {
            connections: connections_of.remove(&user.id).unwrap_or_default(),
            accounts: counts.get(&user.id.get()).copied().unwrap_or(0),
            user,
        })
        .collect())
}
