//! Support for the end-to-end tests: a world of users, connections and keys
//! in a fresh database, and the real Personal API serving it on a free port.

// Test support: a failed unwrap here is a failed test, with its message.
#![allow(clippy::unwrap_used)]
// Only for the tests (feature `e2e`, which they turn on): see Cargo.toml.
#![cfg(feature = "e2e")]

pub mod akahu;
pub mod browser;
pub mod bunq;
pub mod enablebanking;
pub mod fakes;
pub mod harness;
pub mod ibkr;
pub mod mcp;
pub mod node;
pub mod openapi;
pub mod plaid;
pub mod platform;
pub mod pluggy;
pub mod providers;
pub mod python;
pub mod simplefin;
pub mod snaptrade;
pub mod starling;
pub mod teller;
pub mod truelayer;
pub mod up;
pub mod webhooks;

use actix_web::dev::ServerHandle;
use chrono::{TimeZone, Utc};
use std::sync::Arc;
use tributary_app::Config;
use tributary_auth::api_keys;
use tributary_domain::access::Viewer;
use tributary_domain::clock::{Clock, ManualClock};
use tributary_domain::ids::{AccountId, ConnectionId, UserId};
use tributary_domain::model::{AccountKind, Provider, SyncJobKind};
use tributary_domain::money::parse_decimal;
use tributary_domain::snapshot::*;
use tributary_http::server::{self, Application, Interface, Parts};
use tributary_notify::mail::DevOutbox;
use tributary_providers::Registry;
use tributary_providers::sandbox::{self, SandboxConnector};
use tributary_providers::sync::{SyncEngine, SyncOutcome};
use tributary_storage::connections::{self, NewConnection};
use tributary_storage::read;
use tributary_storage::testing::TestDatabase;
use tributary_storage::{sync_apply, users};

/// Amounts whose digits must survive storage and JSON unchanged.
pub const EXACT_AMOUNTS: [&str; 3] = ["12345678901234.56789", "-0.10", "0.1"];

/// Runs the workers' chore of enriching stored rows again (the real one,
/// `tributary_app::workers::enrichment_chore`) until no run is under way.
pub fn enrich_again(db: &tributary_storage::Database, clock: Arc<dyn Clock>) {
    let chore = tributary_app::workers::enrichment_chore(db.clone(), clock);
    for _ in 0..1_000 {
        chore();
        let conn = &mut *db.conn().unwrap();
        if !tributary_storage::reenrich::under_way(conn).unwrap() {
            return;
        }
    }
    panic!("enriching again never finished");
}

/// What the tests know about the seeded data.
#[derive(Debug)]
pub struct World {
    pub alice_key: String,
    /// Alice's key that may read only her imported account.
    pub alice_scoped_key: String,
    pub alice_revoked_key: String,
    pub bob_key: String,
    pub alice_user: UserId,
    pub bob_user: UserId,
    pub alice_sandbox_accounts: Vec<AccountId>,
    pub alice_brokerage: AccountId,
    /// A `csv` account (no holdings) with the exact amounts and one pending.
    pub alice_imported: AccountId,
    pub bob_account: AccountId,
    pub alice_sandbox_connection: ConnectionId,
    pub alice_imported_connection: ConnectionId,
    pub bob_connection: ConnectionId,
    /// Every key issued, to search the database for.
    pub issued_keys: Vec<String>,
}

/// A running Personal API over a seeded database.
#[derive(Debug)]
pub struct TestServer {
    pub base_url: String,
    /// The server's clock; tests move it.
    pub clock: Arc<ManualClock>,
    pub world: World,
    pub database: TestDatabase,
    /// Where the server's mail goes (sign-in codes).
    pub outbox: DevOutbox,
    /// The configuration it runs with (its key seals webhook secrets).
    pub config: Config,
    handle: ServerHandle,
}

impl TestServer {
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base_url)
    }

    pub async fn stop(self) {
        self.handle.stop(true).await;
    }
}

pub fn clock() -> Arc<ManualClock> {
    Arc::new(ManualClock::new(
        Utc.with_ymd_and_hms(2026, 11, 21, 12, 0, 0).unwrap(),
    ))
}

fn sandbox_user(
    engine: &SyncEngine,
    database: &TestDatabase,
    clock: &dyn Clock,
    email: &str,
) -> (UserId, ConnectionId, Vec<AccountId>) {
    let mut conn = database.db().conn().unwrap();
    let user = users::create_personal_user(&mut conn, email, clock.now().naive_utc()).unwrap();
    drop(conn);
    let connection = engine
        .connect(
            user.id,
            tributary_providers::sandbox::PROVIDER,
            &sandbox::connect_request(email, sandbox::USER_GOOD),
        )
        .unwrap();
    let outcome = engine
        .sync_now(connection.id, SyncJobKind::Initial, "e2e-seed")
        .unwrap();
    assert!(matches!(outcome, SyncOutcome::Synced { .. }), "{outcome:?}");
    let accounts = read::list_accounts(
        &mut database.db().conn().unwrap(),
        &Viewer::whole_user(user.id),
    )
    .unwrap();
    (
        user.id,
        connection.id,
        accounts.iter().map(|a| a.id).collect(),
    )
}

/// A `csv` connection with one account (exact amounts, one pending); returns (connection id, account id).
pub fn imported_account(
    database: &TestDatabase,
    clock: &dyn Clock,
    user_id: UserId,
) -> (ConnectionId, AccountId) {
    let conn = &mut *database.db().conn().unwrap();
    let institution = SnapshotInstitution {
        provider_institution_id: "statement".into(),
        name: "Credit Union".into(),
        logo_url: Some("https://logos.example/cu.png".into()),
    };
    let settings = serde_json::json!({});
    let connection = connections::create_connection(
        conn,
        &NewConnection {
            user_id,
            provider: Provider::CSV,
            institution: &institution,
            settings: &settings,
            sealed_credentials: None,
            consent_expires_at: None,
            now: clock.now().naive_utc(),
        },
    )
    .unwrap();
    let mut transactions: Vec<SnapshotTransaction> = EXACT_AMOUNTS
        .iter()
        .enumerate()
        .map(|(i, amount)| SnapshotTransaction {
            provider_id: format!("row-{i}"),
            pending_provider_id: None,
            is_pending: false,
            date: chrono::NaiveDate::from_ymd_opt(2026, 11, 1 + i as u32).unwrap(),
            amount: parse_decimal(amount).unwrap(),
            currency: "EUR".into(),
            merchant: None,
            description: Some(format!("Exact amount {amount}")),
            hints: Default::default(),
        })
        .collect();
    transactions.push(SnapshotTransaction {
        provider_id: "row-pending".into(),
        pending_provider_id: None,
        is_pending: true,
        date: chrono::NaiveDate::from_ymd_opt(2026, 11, 20).unwrap(),
        amount: parse_decimal("-42.00").unwrap(),
        currency: "EUR".into(),
        merchant: Some("Bakery".into()),
        description: None,
        hints: Default::default(),
    });
    let snapshot = ProviderSnapshot {
        institution,
        accounts: vec![SnapshotAccount {
            balance_history: Vec::new(),
            institution: None,
            provider_account_id: "DE89370400440532013000".into(),
            name: "Giro".into(),
            kind: AccountKind::Checking,
            currency: "EUR".into(),
            mask: Some("3000".into()),
            balance: Some(SnapshotBalance {
                current: parse_decimal("1000.50").unwrap(),
                available: None,
                currency: "EUR".into(),
                as_of: clock.now(),
            }),
            transactions,
            holdings: None,
            investment_transactions: Vec::new(),
            liability: None,
        }],
        notices: Vec::new(),
        pending_match: None,
        complete: true,
    };
    sync_apply::apply_snapshot(conn, connection.id, &snapshot, clock.now().naive_utc()).unwrap();
    let account = read::list_accounts(conn, &Viewer::whole_user(user_id))
        .unwrap()
        .into_iter()
        .find(|a| a.provider == Provider::CSV)
        .unwrap()
        .id;
    (connection.id, account)
}

pub fn seed(database: &TestDatabase, clock: Arc<ManualClock>) -> World {
    let engine = SyncEngine::new(database.db().clone(), sandbox_registry(), clock.clone());
    let (alice, alice_sandbox_connection, alice_sandbox_accounts) =
        sandbox_user(&engine, database, clock.as_ref(), "alice@example.com");
    let (bob, bob_connection, bob_accounts) =
        sandbox_user(&engine, database, clock.as_ref(), "bob@example.com");
    let (alice_imported_connection, alice_imported) =
        imported_account(database, clock.as_ref(), alice);
    let brokerage = {
        let conn = &mut *database.db().conn().unwrap();
        read::list_accounts(conn, &Viewer::whole_user(alice))
            .unwrap()
            .into_iter()
            .find(|a| a.kind == AccountKind::Brokerage)
            .unwrap()
            .id
    };
    let conn = &mut *database.db().conn().unwrap();
    let now = clock.now();
    let alice_key = api_keys::issue(conn, alice, "full", None, now)
        .unwrap()
        .plain_text;
    let alice_scoped_key = api_keys::issue(conn, alice, "scoped", Some(&[alice_imported]), now)
        .unwrap()
        .plain_text;
    let revoked = api_keys::issue(conn, alice, "old", None, now).unwrap();
    tributary_storage::api_keys::revoke(conn, revoked.record.id, now.naive_utc()).unwrap();
    let bob_key = api_keys::issue(conn, bob, "bob", None, now)
        .unwrap()
        .plain_text;
    World {
        issued_keys: vec![
            alice_key.clone(),
            alice_scoped_key.clone(),
            revoked.plain_text.clone(),
            bob_key.clone(),
        ],
        alice_key,
        alice_scoped_key,
        alice_revoked_key: revoked.plain_text,
        bob_key,
        alice_user: alice,
        bob_user: bob,
        alice_sandbox_accounts,
        alice_brokerage: brokerage,
        alice_imported,
        bob_account: bob_accounts[0],
        alice_sandbox_connection,
        alice_imported_connection,
        bob_connection,
    }
}

/// The configuration the end-to-end servers run with: the test database, a
/// free loopback port, no demo data and no embedded worker (tests drive
/// syncs themselves), a secret key of their own.
pub fn test_config(database: &TestDatabase, public_url: Option<&str>) -> Config {
    let url = database.url();
    let key = tributary_auth::keyring::generate_key();
    Config::from_lookup(|name| match name {
        "TRIBUTARY_DATABASE_URL" => Some(url.clone()),
        "TRIBUTARY_BIND" => Some("127.0.0.1:0".into()),
        "TRIBUTARY_DEMO" | "TRIBUTARY_EMBEDDED_WORKER" => Some("0".into()),
        "TRIBUTARY_SECRET_KEY" => Some(key.clone()),
        "TRIBUTARY_PUBLIC_URL" => public_url.map(str::to_owned),
        _ => None,
    })
    .expect("the test configuration")
}

/// Builds the application the way the binaries do ([`Application::build`])
/// from `config` and the test's `parts`, and serves it on a free port;
/// returns the server's handle and URL.
pub fn serve(interface: Interface, config: Config, parts: Parts) -> (ServerHandle, String) {
    let started = Application::build(interface, config, parts)
        .and_then(Application::bind)
        .expect("build and bind the application");
    let handle = started.server.handle();
    let url = server::local_url(started.addrs[0]);
    actix_web::rt::spawn(started.server);
    (handle, url)
}

/// The sandbox as the only connector (the others hold blocking HTTP clients,
/// which must not be made or dropped on the test's async runtime).
pub fn sandbox_registry() -> Registry {
    let mut registry = Registry::default();
    registry.register(Arc::new(SandboxConnector::default()));
    registry
}

/// Seeds `database` and serves it with the real Personal API on a free port.
pub fn start(database: TestDatabase) -> TestServer {
    start_with(database, Vec::new())
}

/// [`start`] with `connectors` (fakes' clients) beside the sandbox.
pub fn start_with(
    database: TestDatabase,
    connectors: Vec<Arc<dyn tributary_providers::Connector>>,
) -> TestServer {
    start_configured(database, connectors, |_| {})
}

/// [`start_with`], the configuration changed by `configure` first.
pub fn start_configured(
    database: TestDatabase,
    connectors: Vec<Arc<dyn tributary_providers::Connector>>,
    configure: impl FnOnce(&mut Config),
) -> TestServer {
    start_assembled(database, connectors, configure, |parts| parts)
}

/// [`start_configured`], the parts changed by `customize` too.
pub fn start_assembled(
    database: TestDatabase,
    connectors: Vec<Arc<dyn tributary_providers::Connector>>,
    configure: impl FnOnce(&mut Config),
    customize: impl FnOnce(Parts) -> Parts,
) -> TestServer {
    let clock = clock();
    let world = seed(&database, clock.clone());
    let outbox = DevOutbox::default();
    let mut registry = sandbox_registry();
    for connector in connectors {
        registry.register(connector);
    }
    let parts = Parts {
        clock: Some(clock.clone()),
        database: Some(database.db().clone()),
        registry: Some(registry),
        mailer: Some(Arc::new(outbox.clone())),
        ..Parts::default()
    };
    let parts = customize(parts);
    let mut config = test_config(&database, None);
    configure(&mut config);
    let (handle, base_url) = serve(Interface::Personal, config.clone(), parts);
    TestServer {
        base_url,
        clock,
        world,
        database,
        outbox,
        config,
        handle,
    }
}

impl TestServer {
    /// Runs the queued sync jobs as a worker would (the test servers run
    /// none), on a blocking thread.
    pub async fn run_queued_jobs(&self) {
        let (db, clock) = (self.database.db().clone(), self.clock.clone());
        actix_web::web::block(move || {
            let engine = tributary_providers::sync::SyncEngine::new(db, sandbox_registry(), clock);
            while let Some(job) = engine.claim_next("e2e-worker").unwrap() {
                engine.run_job(&job).unwrap();
            }
        })
        .await
        .unwrap();
    }
}

impl TestServer {
    /// Sends the webhooks that are due, as a worker would (the test
    /// servers run none); how many attempts were made.
    pub async fn deliver_webhooks(&self) -> usize {
        let (config, db, clock) = (
            self.config.clone(),
            self.database.db().clone(),
            self.clock.clone(),
        );
        // Its blocking HTTP client is made, used and dropped off the runtime.
        actix_web::web::block(move || {
            tributary_app::workers::deliverer(&config, &db, clock)
                .unwrap()
                .run_due()
                .unwrap()
        })
        .await
        .unwrap()
    }

    /// Mails the notices that are due to the test outbox, as a worker
    /// would; how many were tried.
    pub async fn send_notices(&self) -> usize {
        let sender = tributary_notify::notices::NoticeSender::new(
            self.database.db().clone(),
            self.clock.clone(),
            Arc::new(self.outbox.clone()),
        );
        actix_web::web::block(move || sender.run_due().unwrap())
            .await
            .unwrap()
    }

    /// Runs the scheduler once, as the workers do every poll.
    pub async fn schedule_due(&self) -> usize {
        let (db, clock) = (self.database.db().clone(), self.clock.clone());
        actix_web::web::block(move || {
            tributary_providers::sync::SyncEngine::new(db, sandbox_registry(), clock)
                .schedule_due()
                .unwrap()
        })
        .await
        .unwrap()
    }

    /// Makes every pending webhook delivery due now: the retry schedule's
    /// waits (5 s, 5 min, ...) pass without the clock moving, so the
    /// deliveries' timestamps stay real for the receiver's check.
    pub fn webhooks_due_now(&self) {
        tributary_storage::testing::webhook_deliveries_due(self.database.db());
    }
}

/// Sends `request` and reads its JSON answer, whatever the status.
pub async fn json_answer(request: reqwest::RequestBuilder) -> serde_json::Value {
    request.send().await.unwrap().json().await.unwrap()
}

/// Asserts that two `dump_rows` outputs hold the same rows (in any order),
/// naming only the rows that differ.
pub fn assert_same_rows(after: &str, before: &str) {
    let sorted = |dump: &str| {
        let mut lines: Vec<String> = dump.lines().map(str::to_owned).collect();
        lines.sort_unstable();
        lines
    };
    let (after, before) = (sorted(after), sorted(before));
    let added: Vec<&String> = after.iter().filter(|l| !before.contains(l)).collect();
    let gone: Vec<&String> = before.iter().filter(|l| !after.contains(l)).collect();
    assert!(
        added.is_empty() && gone.is_empty(),
        "rows changed.\nadded: {added:#?}\ngone: {gone:#?}"
    );
}
