//! Zero-config demo data: on an empty database, a demo user with a synced
//! sandbox connection, an API key and a dashboard sign-in link, so the
//! first curl and the first click show something.

use tributary_auth::{api_keys, dashboard};
use tributary_domain::model::{Provider, SyncJobKind};
use tributary_providers::sandbox;
use tributary_providers::sync::{SyncEngine, SyncOutcome};
use tributary_storage::{Database, StorageError, users};

pub const DEMO_EMAIL: &str = "demo@tributary.local";

#[derive(Debug)]
pub struct DemoSeed {
    pub email: &'static str,
    /// Shown once at start-up; only its hash is stored.
    pub api_key: String,
    /// A one-time dashboard sign-in link's token (15 minutes).
    pub sign_in_token: String,
    pub accounts: usize,
}

/// Seeds the demo when the database has no users; `None` when it has some.
pub fn seed_if_empty(
    db: &Database,
    engine: &SyncEngine,
    clock: &dyn tributary_domain::clock::Clock,
) -> anyhow::Result<Option<DemoSeed>> {
    let mut conn = db.conn()?;
    if users::count_users(&mut conn)? > 0 {
        return Ok(None);
    }
    let user = match users::create_personal_user(&mut conn, DEMO_EMAIL, clock.now().naive_utc()) {
        Ok(user) => user,
        // Another process seeded it first.
        Err(StorageError::Conflict(_)) => return Ok(None),
        Err(err) => return Err(err.into()),
    };
    drop(conn);
    let connection = engine.connect(
        user.id,
        Provider::Sandbox,
        &sandbox::connect_request(DEMO_EMAIL, sandbox::USER_GOOD),
    )?;
    let accounts = match engine.sync_now(connection.id, SyncJobKind::Initial, "demo-seed")? {
        SyncOutcome::Synced { summary, .. } => summary.accounts_seen,
        SyncOutcome::ProviderFailed { error, .. } => {
            anyhow::bail!("the demo sandbox sync failed: {error}")
        }
        SyncOutcome::Deferred { .. } => anyhow::bail!("the demo sandbox sync was deferred"),
        SyncOutcome::LeaseLost { .. } => anyhow::bail!("another worker took over the demo sync"),
        SyncOutcome::GaveUp { reason, .. } => {
            anyhow::bail!("the demo sandbox sync failed: {reason}")
        }
    };
    let mut conn = db.conn()?;
    let key = api_keys::issue(&mut conn, user.id, "demo", None, clock.now())?;
    let sign_in_token = dashboard::issue_login_link(&mut conn, user.id, clock.now().naive_utc())?;
    Ok(Some(DemoSeed {
        email: DEMO_EMAIL,
        api_key: key.plain_text,
        sign_in_token,
        accounts,
    }))
}
