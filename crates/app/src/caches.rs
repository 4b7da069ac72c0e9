//! The caches a serving process keeps of its database (docs/architecture.md,
//! "Caches"): credentials and accounts' data versions, each entry good only
//! while the database's epochs say nothing it depends on has changed.

use std::sync::Arc;
use tributary_auth::cache::CredentialCache;
use tributary_storage::Database;
use tributary_storage::account_versions::AccountVersions;

/// One set per process and database, shared by every request.
#[derive(Debug, Clone)]
pub struct Caches {
    pub credentials: Arc<CredentialCache>,
    pub account_versions: Arc<AccountVersions>,
}

impl Caches {
    pub fn for_database(db: &Database) -> Self {
        Self {
            credentials: Arc::new(CredentialCache::new(db.freshness().clone())),
            account_versions: Arc::new(AccountVersions::new(db.freshness().clone())),
        }
    }
}
