//! Which of a connection's accounts a person shares. By default a sync
//! stores every account the provider reports; once the person has chosen,
//! only the chosen ones (by the provider's account id), so that the API,
//! the SimpleFIN server and the feed never see the others. When a sync
//! finds more accounts than the person's account limit allows, it stores
//! nothing and keeps what it found as the offer they choose from.

use crate::db::AnyConnection;
use crate::schema::{accounts, connections};
use crate::{StorageError, StorageResult};
use chrono::NaiveDateTime;
use diesel::prelude::*;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use tributary_domain::ids::{ConnectionId, UserId};
use tributary_domain::model::AccountKind;
use tributary_domain::snapshot::SnapshotAccount;
use tributary_domain::status::AccountLimitExceeded;

/// An account a person may choose, stored or only found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Choosable {
    /// The provider's account id.
    pub id: String,
    pub name: String,
    pub mask: Option<String>,
    #[serde(with = "kind_text")]
    pub kind: AccountKind,
    pub currency: String,
}

mod kind_text {
    use serde::{Deserialize, Deserializer, Serializer};
    use tributary_domain::model::AccountKind;

    pub fn serialize<S: Serializer>(kind: &AccountKind, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(kind.as_str())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<AccountKind, D::Error> {
        let text = String::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

impl Choosable {
    pub fn of(account: &SnapshotAccount) -> Choosable {
        Choosable {
            id: account.provider_account_id.clone(),
            name: account.name.clone(),
            mask: account.mask.clone(),
            kind: account.kind,
            currency: account.currency.clone(),
        }
    }
}

/// The provider account ids the person chose; `None`: all.
pub fn chosen(
    conn: &mut AnyConnection,
    connection_id: ConnectionId,
) -> StorageResult<Option<BTreeSet<String>>> {
    let text: Option<String> = connections::table
        .find(connection_id.get())
        .select(connections::chosen_accounts)
        .first(conn)?;
    text.map(|text| {
        serde_json::from_str(&text)
            .map_err(|err| StorageError::Corrupt(format!("chosen_accounts: {err}")))
    })
    .transpose()
}

/// Keeps what a sync found but could not store for the person to choose
/// from.
pub fn offer(
    conn: &mut AnyConnection,
    connection_id: ConnectionId,
    found: &[Choosable],
) -> StorageResult<()> {
    let text = serde_json::to_string(found)
        .map_err(|err| StorageError::Corrupt(format!("offered_accounts: {err}")))?;
    diesel::update(connections::table.find(connection_id.get()))
        .set(connections::offered_accounts.eq(text))
        .execute(conn)?;
    Ok(())
}

/// Everything the person may choose from, with whether each is shared
/// now: the accounts stored, then those only offered.
pub fn choices(
    conn: &mut AnyConnection,
    connection_id: ConnectionId,
) -> StorageResult<Vec<(Choosable, bool)>> {
    let stored: Vec<(String, String, Option<String>, String, String)> = accounts::table
        .filter(accounts::connection_id.eq(connection_id.get()))
        .order(accounts::id)
        .select((
            accounts::provider_account_id,
            accounts::name,
            accounts::mask,
            accounts::kind,
            accounts::currency,
        ))
        .load(conn)?;
    let mut all: Vec<(Choosable, bool)> = Vec::new();
    for (id, name, mask, kind, currency) in stored {
        let kind = kind
            .parse()
            .map_err(|err| StorageError::Corrupt(format!("account kind: {err}")))?;
        all.push((
            Choosable {
                id,
                name,
                mask,
                kind,
                currency,
            },
            true,
        ));
    }
    let offered: Option<String> = connections::table
        .find(connection_id.get())
        .select(connections::offered_accounts)
        .first(conn)?;
    if let Some(text) = offered {
        let offered: Vec<Choosable> = serde_json::from_str(&text)
            .map_err(|err| StorageError::Corrupt(format!("offered_accounts: {err}")))?;
        for account in offered {
            if !all.iter().any(|(a, _)| a.id == account.id) {
                all.push((account, false));
            }
        }
    }
    Ok(all)
}

/// How many of this connection's accounts the user may keep under their
/// account limit (the accounts of their other connections count against
/// it); `None`: no limit.
pub fn allowance(
    conn: &mut AnyConnection,
    user_id: UserId,
    connection_id: ConnectionId,
) -> StorageResult<Option<i64>> {
    let Some(limit) = crate::apps::account_limit(conn, user_id)? else {
        return Ok(None);
    };
    let elsewhere: i64 = accounts::table
        .filter(accounts::user_id.eq(user_id.get()))
        .filter(accounts::connection_id.ne(connection_id.get()))
        .count()
        .get_result(conn)?;
    Ok(Some((i64::from(limit) - elsewhere).max(0)))
}

/// Shares exactly `chosen` (provider account ids, each among
/// [`choices`]) of the user's connection: the accounts not chosen are
/// erased with everything of theirs (the change feed says their
/// transactions went), later syncs skip them, and the offer is cleared.
/// Refused when the choice would pass the person's account limit, or
/// names an account that is not to be chosen.
pub fn choose(
    conn: &mut AnyConnection,
    user_id: UserId,
    connection_id: ConnectionId,
    chosen: &BTreeSet<String>,
    now: NaiveDateTime,
) -> StorageResult<()> {
    conn.atomically(|conn| {
        let owner: Option<i64> = connections::table
            .find(connection_id.get())
            .filter(connections::user_id.eq(user_id.get()))
            .select(connections::user_id)
            .first(conn)
            .optional()?;
        if owner.is_none() {
            return Err(StorageError::NotFound);
        }
        let choices = choices(conn, connection_id)?;
        if let Some(unknown) = chosen
            .iter()
            .find(|id| !choices.iter().any(|(c, _)| &c.id == *id))
        {
            return Err(StorageError::InvalidReference(format!(
                "account {unknown} is not one of this connection's"
            )));
        }
        if let Some(limit) = crate::apps::account_limit(conn, user_id)?
            && let Some(allowed) = allowance(conn, user_id, connection_id)?
            && chosen.len() as i64 > allowed
        {
            return Err(StorageError::AccountLimit(AccountLimitExceeded {
                limit,
                existing: i64::from(limit) - allowed,
                adding: chosen.len(),
            }));
        }
        let dropped: Vec<i64> = accounts::table
            .filter(accounts::connection_id.eq(connection_id.get()))
            .filter(accounts::provider_account_id.ne_all(chosen.iter()))
            .select(accounts::id)
            .load(conn)?;
        if !dropped.is_empty() {
            let seq = crate::changes::next_seq(conn, user_id)?;
            crate::changes::bury_accounts(conn, user_id, seq, &dropped, now)?;
            diesel::delete(accounts::table.filter(accounts::id.eq_any(&dropped))).execute(conn)?;
        }
        let text = serde_json::to_string(chosen)
            .map_err(|err| StorageError::Corrupt(format!("chosen_accounts: {err}")))?;
        diesel::update(connections::table.find(connection_id.get()))
            .set((
                connections::chosen_accounts.eq(text),
                connections::offered_accounts.eq(None::<String>),
                connections::updated_at.eq(now),
            ))
            .execute(conn)?;
        Ok(())
    })
}
