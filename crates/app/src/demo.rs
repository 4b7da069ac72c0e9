//! Zero-config demo data: on an empty database, a demo user with a synced
//! sandbox connection, an API key and a dashboard sign-in link, so the
//! first curl and the first click show something.

use tributary_auth::{api_keys, dashboard};
use tributary_domain::model::SyncJobKind;
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
        tributary_providers::sandbox::PROVIDER,
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

/// Where the demo app's codes come back to: a page of this server
/// (`web::demo_callback`).
pub const DEMO_CALLBACK_PATH: &str = "/developers/demo/callback";

/// The demo app a first start of `platform-api` makes.
#[derive(Debug)]
pub struct DemoAppSeed {
    pub name: String,
    pub client_id: String,
    /// Shown once at start-up; only its hash is stored.
    pub client_secret: String,
    /// The authorization link that walks the whole flow to the demo
    /// callback page.
    pub authorize_link: String,
}

/// The name the demo app has.
pub const DEMO_APP_NAME: &str = "Tributary demo app";

/// On a database without apps, makes the demo app, confidential, its
/// redirect URI this server's demo callback under `base` (the address the
/// server answers at); `None` when the database has apps.
pub fn seed_demo_app_if_empty(
    db: &Database,
    clock: &dyn tributary_domain::clock::Clock,
    base: &str,
) -> anyhow::Result<Option<DemoAppSeed>> {
    use tributary_auth::oauth::{new_client_id, new_client_secret};
    use tributary_storage::apps::{self, NewApp};
    let redirect_uri = format!("{base}{DEMO_CALLBACK_PATH}");
    let mut conn = db.conn()?;
    let (client_secret, secret_hash) = new_client_secret();
    let client_id = new_client_id();
    let created = conn.atomically(|conn| {
        if apps::has_apps(conn)? {
            return Ok(None);
        }
        let app = apps::create_app(
            conn,
            &NewApp {
                client_id: &client_id,
                name: DEMO_APP_NAME,
                client_secret_hash: Some(&secret_hash),
                billing_model: tributary_domain::model::BillingModel::Integrator,
                default_max_accounts: None,
                redirect_uris: std::slice::from_ref(&redirect_uri),
                now: clock.now().naive_utc(),
            },
        )?;
        apps::mark_demo(conn, app.id)?;
        Ok(Some(app))
    })?;
    Ok(created.map(|app| DemoAppSeed {
        authorize_link: authorize_link(base, &app.client_id, &redirect_uri),
        name: app.name,
        client_id: app.client_id,
        client_secret,
    }))
}

/// The demo app's authorization link: `state` is fixed, since the demo
/// callback page only shows what the code reads and signs nobody in.
pub fn authorize_link(base: &str, client_id: &str, redirect_uri: &str) -> String {
    let query: String = url::form_urlencoded::Serializer::new(String::new())
        .append_pair("response_type", "code")
        .append_pair("client_id", client_id)
        .append_pair("redirect_uri", redirect_uri)
        .append_pair("state", "quickstart")
        .finish();
    format!("{base}/api/platform/oauth/authorize?{query}")
}
