//! Support for the end-to-end tests: a world of users, connections and keys
//! in a fresh database, and the real Personal API serving it on a free port.

// Test support: a failed unwrap here is a failed test, with its message.
#![allow(clippy::unwrap_used)]

pub mod browser;
pub mod fakes;
pub mod harness;
pub mod platform;

use actix_web::dev::ServerHandle;
use chrono::{TimeZone, Utc};
use std::sync::Arc;
use tributary_auth::api_keys;
use tributary_domain::access::Viewer;
use tributary_domain::clock::{Clock, ManualClock};
use tributary_domain::ids::{AccountId, ConnectionId, UserId};
use tributary_domain::model::{AccountKind, Provider, SyncJobKind};
use tributary_domain::money::parse_decimal;
use tributary_domain::snapshot::*;
use tributary_http::AppState;
use tributary_http::server::{self, Interface};
use tributary_providers::Registry;
use tributary_providers::sandbox::{self, SandboxConnector};
use tributary_providers::sync::{SyncEngine, SyncOutcome};
use tributary_storage::connections::{self, NewConnection};
use tributary_storage::read;
use tributary_storage::testing::TestDatabase;
use tributary_storage::{sync_apply, users};

/// Amounts whose digits must survive storage and JSON unchanged.
pub const EXACT_AMOUNTS: [&str; 3] = ["12345678901234.56789", "-0.10", "0.1"];

/// What the tests know about the seeded data.
#[derive(Debug)]
pub struct World {
    pub alice_key: String,
    /// Alice's key that may read only her imported account.
    pub alice_scoped_key: String,
    pub alice_revoked_key: String,
    pub bob_key: String,
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
            Provider::Sandbox,
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
            provider: Provider::Csv,
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
    });
    let snapshot = ProviderSnapshot {
        institution,
        accounts: vec![SnapshotAccount {
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
        }],
        notices: Vec::new(),
        pending_match: None,
        complete: true,
    };
    sync_apply::apply_snapshot(conn, connection.id, &snapshot, clock.now().naive_utc()).unwrap();
    let account = read::list_accounts(conn, &Viewer::whole_user(user_id))
        .unwrap()
        .into_iter()
        .find(|a| a.provider == Provider::Csv)
        .unwrap()
        .id;
    (connection.id, account)
}

pub fn seed(database: &TestDatabase, clock: Arc<ManualClock>) -> World {
    // The sandbox only: the seed runs on the test's async runtime, where the
    // blocking HTTP clients of the other connectors must not be dropped.
    let mut registry = Registry::default();
    registry.register(Arc::new(SandboxConnector::default()));
    let engine = SyncEngine::new(database.db().clone(), registry, clock.clone());
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

/// Seeds `database` and serves it with the real Personal API on a free port.
pub fn start(database: TestDatabase) -> TestServer {
    let clock = clock();
    let world = seed(&database, clock.clone());
    let state = AppState::new(database.db().clone(), clock.clone(), None);
    let (server, addrs) =
        server::bind(state, Interface::Personal, "127.0.0.1:0").expect("bind a free port");
    let handle = server.handle();
    actix_web::rt::spawn(server);
    TestServer {
        base_url: server::local_url(addrs[0]),
        clock,
        world,
        database,
        handle,
    }
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
