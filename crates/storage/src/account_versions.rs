//! Accounts' data versions, kept while no data has changed since they were
//! read (docs/architecture.md, "Caches"): a client revalidating a listing
//! it already has (`If-None-Match`) is answered without the database.

use crate::StorageResult;
use crate::connection::AnyConnection;
use crate::freshness::{Epoch, Freshness};
use crate::read::{self, AccountView};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use tributary_domain::access::Viewer;
use tributary_domain::ids::{AccountId, UserId};

/// At most this many accounts are kept; a full cache starts over.
const CAPACITY: usize = 100_000;

#[derive(Debug)]
struct Kept {
    owner: UserId,
    version: i64,
    /// The data epoch it was read in.
    epoch: Epoch,
}

/// One per process and database.
#[derive(Debug)]
pub struct AccountVersions {
    freshness: Arc<Freshness>,
    kept: Mutex<HashMap<AccountId, Kept>>,
}

impl AccountVersions {
    pub fn new(freshness: Arc<Freshness>) -> Self {
        Self {
            freshness,
            kept: Mutex::new(HashMap::new()),
        }
    }

    /// The version of the transactions of `account`, when it is known
    /// without the database and `viewer` may see the account. `None` says
    /// nothing about the account: ask [`Self::find_account`].
    pub fn cached(&self, viewer: &Viewer, account: AccountId) -> Option<i64> {
        if !viewer.may_see_account(account) {
            return None;
        }
        let current = self.freshness.data();
        let kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        kept.get(&account)
            .filter(|k| k.epoch == current && k.owner == viewer.user_id)
            .map(|k| k.version)
    }

    /// [`read::find_account`], remembering the version it read.
    pub fn find_account(
        &self,
        conn: &mut AnyConnection,
        viewer: &Viewer,
        account: AccountId,
    ) -> StorageResult<Option<AccountView>> {
        let epoch = self.freshness.data();
        let found = read::find_account(conn, viewer, account)?;
        if let Some(view) = &found {
            self.remember(viewer, view, epoch);
        }
        Ok(found)
    }

    /// Keeps the version of `view`, which `viewer` was shown, read in
    /// `epoch` (taken before the read began).
    pub fn remember(&self, viewer: &Viewer, view: &AccountView, epoch: Epoch) {
        let mut kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        if kept.len() >= CAPACITY {
            kept.clear();
        }
        kept.insert(
            view.id,
            Kept {
                owner: viewer.user_id,
                version: view.transactions.version,
                epoch,
            },
        );
    }
}
