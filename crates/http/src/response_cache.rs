//! Data responses kept as the bytes they were sent as, for as long as no
//! data has changed since they were read (docs/architecture.md, "Caches"):
//! a client that polls the same listing gets it again without a blocking
//! thread, a connection or a row read, and without writing the JSON again.
//!
//! An entry is good only in the data epoch it was read in
//! (`storage::freshness`), the same rule the account versions follow: a
//! change in this process ends every entry as it commits, a change in
//! another within a second. It is kept under who asked (the person and the
//! accounts the credential may see, since a row shows other accounts only
//! to a viewer who may see them) and what was asked, so an answer is only
//! ever given to a viewer who would have been given the very same bytes.
//!
//! Memory is bounded twice: an answer larger than [`LARGEST_KEPT`] is never
//! kept (a long listing is streamed, not held), and when the entries would
//! pass [`CAPACITY_BYTES`] the cache starts over (it fills again from the
//! requests that follow, each answered the uncached way meanwhile).

use actix_web::web::Bytes;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use tributary_domain::access::Viewer;
use tributary_storage::freshness::{Epoch, Freshness};

/// The most the kept bodies (and their keys) may take together.
pub const CAPACITY_BYTES: usize = 32 << 20;
/// The largest body kept: a page of 1,000 transactions is about 160 KB.
pub const LARGEST_KEPT: usize = 256 << 10;

/// Who asked and what: one key names one exact representation.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ResponseKey(String);

impl ResponseKey {
    /// `what` names the request as it shapes the answer (the route and its
    /// parsed query, or a listing's entity tag, which holds both).
    pub fn new(viewer: &Viewer, what: &str) -> Self {
        let scope = match &viewer.account_scope {
            None => "all".to_owned(),
            Some(ids) => {
                let mut ids: Vec<i64> = ids.iter().map(|id| id.get()).collect();
                ids.sort_unstable();
                ids.iter().map(i64::to_string).collect::<Vec<_>>().join(",")
            }
        };
        Self(format!("{}|{scope}|{what}", viewer.user_id.get()))
    }
}

/// The entries of one data epoch: when the epoch moves on, every entry is
/// stale at once, so they are all dropped together.
#[derive(Debug)]
struct Entries {
    epoch: Option<Epoch>,
    by_key: HashMap<ResponseKey, Bytes>,
    bytes: usize,
}

impl Entries {
    fn of(epoch: Option<Epoch>) -> Self {
        Self {
            epoch,
            by_key: HashMap::new(),
            bytes: 0,
        }
    }
}

/// One per process and database.
#[derive(Debug)]
pub struct ResponseCache {
    freshness: Arc<Freshness>,
    entries: Mutex<Entries>,
}

impl ResponseCache {
    pub fn new(freshness: Arc<Freshness>) -> Self {
        Self {
            freshness,
            entries: Mutex::new(Entries::of(None)),
        }
    }

    /// The data epoch now: read it *before* reading what the answer is
    /// made of, and keep the answer under it.
    pub fn epoch(&self) -> Epoch {
        self.freshness.data()
    }

    /// The body kept under `key`, when no data has changed since it was
    /// read.
    pub fn get(&self, key: &ResponseKey) -> Option<Bytes> {
        let current = self.freshness.data();
        let entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        if entries.epoch != Some(current) {
            return None;
        }
        entries.by_key.get(key).cloned()
    }

    /// Keeps `body`, read in `epoch`, under `key`, unless it is too large
    /// or already stale.
    pub fn keep(&self, key: ResponseKey, epoch: Epoch, body: Bytes) {
        if body.len() > LARGEST_KEPT || epoch != self.freshness.data() {
            return;
        }
        let key_len = key.0.len();
        let size = key_len + body.len();
        let mut entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        if entries.epoch != Some(epoch) || entries.bytes + size > CAPACITY_BYTES {
            *entries = Entries::of(Some(epoch));
        }
        let replaced = entries.by_key.insert(key, body);
        entries.bytes += size;
        if let Some(replaced) = replaced {
            entries.bytes -= key_len + replaced.len();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tributary_domain::ids::{AccountId, UserId};
    use tributary_storage::testing::{TestDatabase, empty_account};

    fn viewer(user: i64, scope: Option<Vec<i64>>) -> Viewer {
        Viewer {
            user_id: UserId::new(user),
            account_scope: scope.map(|ids| ids.into_iter().map(AccountId::new).collect()),
        }
    }

    #[test]
    fn a_body_is_given_back_only_under_its_own_key_and_epoch() {
        let database = TestDatabase::sqlite();
        // Not the watcher's first look ending what is kept below.
        tributary_storage::testing::watching(database.db());
        let cache = ResponseCache::new(database.db().freshness().clone());
        let alice = ResponseKey::new(&viewer(1, None), "accounts");
        let epoch = cache.epoch();
        cache.keep(alice.clone(), epoch, Bytes::from_static(b"alice"));
        assert_eq!(cache.get(&alice), Some(Bytes::from_static(b"alice")));
        for other in [
            ResponseKey::new(&viewer(2, None), "accounts"),
            ResponseKey::new(&viewer(1, Some(vec![3])), "accounts"),
            ResponseKey::new(&viewer(1, None), "accounts?"),
        ] {
            assert_eq!(cache.get(&other), None, "{other:?}");
        }
        // The same scope in another order is the same viewer.
        let scoped = ResponseKey::new(&viewer(1, Some(vec![3, 2])), "x");
        cache.keep(scoped, epoch, Bytes::from_static(b"scoped"));
        assert!(
            cache
                .get(&ResponseKey::new(&viewer(1, Some(vec![2, 3])), "x"))
                .is_some()
        );

        // A write in this process ends every entry as it commits, and an
        // answer read before it is not kept.
        empty_account(
            database.db(),
            "ada@example.com",
            chrono::Utc::now().naive_utc(),
        )
        .expect("a write");
        assert_eq!(cache.get(&alice), None);
        cache.keep(alice.clone(), epoch, Bytes::from_static(b"stale"));
        assert_eq!(cache.get(&alice), None);
        cache.keep(alice.clone(), cache.epoch(), Bytes::from_static(b"new"));
        assert_eq!(cache.get(&alice), Some(Bytes::from_static(b"new")));
    }

    #[test]
    fn memory_stays_bounded() {
        let database = TestDatabase::sqlite();
        tributary_storage::testing::watching(database.db());
        let cache = ResponseCache::new(database.db().freshness().clone());
        let epoch = cache.epoch();
        let large = ResponseKey::new(&viewer(1, None), "large");
        cache.keep(
            large.clone(),
            epoch,
            Bytes::from(vec![b'x'; LARGEST_KEPT + 1]),
        );
        assert_eq!(cache.get(&large), None, "too large to keep");
        let body = Bytes::from(vec![b'x'; LARGEST_KEPT]);
        let fit = CAPACITY_BYTES / LARGEST_KEPT;
        for n in 0..fit * 3 {
            let key = ResponseKey::new(&viewer(1, None), &n.to_string());
            cache.keep(key, epoch, body.clone());
            let entries = cache.entries.lock().unwrap_or_else(PoisonError::into_inner);
            assert!(entries.bytes <= CAPACITY_BYTES, "{} bytes", entries.bytes);
            assert!(entries.by_key.len() <= fit);
        }
        // Keeping the same key again does not count it twice.
        let key = ResponseKey::new(&viewer(9, None), "again");
        cache.keep(key.clone(), epoch, body.clone());
        let held = cache
            .entries
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .bytes;
        cache.keep(key, epoch, body);
        let again = cache
            .entries
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .bytes;
        assert_eq!(held, again);
    }
}
