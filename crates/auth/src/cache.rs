//! The credential cache (docs/architecture.md, "Caches"): who a presented
//! API key or Platform access token belongs to and what it may see, kept
//! while no credential has changed since it was read, so that a request
//! with a known credential needs no query to be let in.
//!
//! What is kept is the principal, scope and expiry, under the SHA-256 of
//! the credential (what the database keeps too), never the credential. A
//! credential that failed is not kept: a refusal always reads the
//! database, so guessing fills no memory. Finding an entry compares hashes,
//! as the database's index does; the preimage resistance of SHA-256 is
//! what keeps that comparison from telling a guesser anything.

use crate::api_keys::{self, ApiKeyError, LAST_USED_RESOLUTION};
use crate::oauth::{self, AccessError, Resource};
use crate::secret;
use chrono::{DateTime, NaiveDateTime, Utc};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use tributary_domain::access::Viewer;
use tributary_storage::AnyConnection;
use tributary_storage::freshness::{Epoch, Freshness};
use tributary_storage::oauth::TokenRecord;

/// At most this many credentials are kept; a full cache starts over
/// (credentials in use come back with their next request).
const CAPACITY: usize = 10_000;

#[derive(Debug, Clone)]
enum Principal {
    ApiKey(Viewer),
    Access(Box<TokenRecord>),
}

#[derive(Debug)]
struct Entry {
    principal: Principal,
    /// The credentials' epoch it was read in.
    epoch: Epoch,
    /// When it must be read again: a token's expiry; for an API key, when
    /// its last use is due to be recorded again.
    until: NaiveDateTime,
}

/// One per process and database, shared by every request.
#[derive(Debug)]
pub struct CredentialCache {
    freshness: Arc<Freshness>,
    entries: Mutex<HashMap<String, Entry>>,
}

impl CredentialCache {
    pub fn new(freshness: Arc<Freshness>) -> Self {
        Self {
            freshness,
            entries: Mutex::new(HashMap::new()),
        }
    }

    /// The viewer of an API key known to hold, without the database; `None`
    /// when it must be checked there ([`Self::api_key`]).
    pub fn cached_api_key(&self, presented: &str, now: DateTime<Utc>) -> Option<Viewer> {
        match self.cached(&secret::hash(presented), now.naive_utc())? {
            Principal::ApiKey(viewer) => Some(viewer),
            Principal::Access(_) => None,
        }
    }

    /// [`api_keys::authenticate`], answered from the cache when it can be.
    pub fn api_key(
        &self,
        conn: &mut AnyConnection,
        presented: &str,
        now: DateTime<Utc>,
    ) -> Result<Viewer, ApiKeyError> {
        let key = secret::hash(presented);
        if let Some(Principal::ApiKey(viewer)) = self.cached(&key, now.naive_utc()) {
            return Ok(viewer);
        }
        let epoch = self.freshness.credentials();
        let (_, viewer) = api_keys::authenticate(conn, presented, now)?;
        self.keep(
            key,
            Entry {
                principal: Principal::ApiKey(viewer.clone()),
                epoch,
                until: now.naive_utc() + LAST_USED_RESOLUTION,
            },
        );
        Ok(viewer)
    }

    /// The record of a Platform access token known to hold, without the
    /// database.
    pub fn cached_access(&self, presented: &str, now: NaiveDateTime) -> Option<TokenRecord> {
        match self.cached(&secret::hash(presented), now)? {
            Principal::Access(record) => Some(*record),
            Principal::ApiKey(_) => None,
        }
    }

    /// [`oauth::authenticate_access`] for the Platform API, answered from
    /// the cache when it can be.
    pub fn platform_access(
        &self,
        conn: &mut AnyConnection,
        presented: &str,
        now: NaiveDateTime,
    ) -> Result<TokenRecord, AccessError> {
        let key = secret::hash(presented);
        if let Some(Principal::Access(record)) = self.cached(&key, now) {
            return Ok(*record);
        }
        let epoch = self.freshness.credentials();
        let record = oauth::authenticate_access(conn, presented, Resource::PlatformApi, now)?;
        self.keep(
            key,
            Entry {
                principal: Principal::Access(Box::new(record.clone())),
                epoch,
                until: record.expires_at,
            },
        );
        Ok(record)
    }

    /// The entry under `key` (a credential's hash), while it is current.
    fn cached(&self, key: &str, now: NaiveDateTime) -> Option<Principal> {
        let current = self.freshness.credentials();
        let mut entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        let entry = entries.get(key)?;
        if entry.epoch == current && now < entry.until {
            return Some(entry.principal.clone());
        }
        entries.remove(key);
        None
    }

    fn keep(&self, key: String, entry: Entry) {
        let mut entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        if entries.len() >= CAPACITY {
            entries.clear();
        }
        entries.insert(key, entry);
    }
}
