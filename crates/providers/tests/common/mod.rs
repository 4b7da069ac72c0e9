//! What the connector tests share.

use tributary_storage::Database;
use tributary_storage::testing::TestDatabase;

/// Runs `scenario` on every backend on a blocking thread, as syncs run in
/// Tributary (the connectors' HTTP clients are blocking); the fake
/// servers' async calls go through the handle of the test's runtime.
pub async fn on_every_backend_blocking(scenario: fn(&tokio::runtime::Handle, Database)) {
    let rt = tokio::runtime::Handle::current();
    tokio::task::spawn_blocking(move || {
        for database in TestDatabase::all() {
            eprintln!("-- on {:?}", database.backend());
            scenario(&rt, database.db().clone());
        }
    })
    .await
    .expect("the scenario thread");
}
