//! SimpleFIN against a local fake server, through the real sync engine, on
//! SQLite and PostgreSQL: connect, sync, then every kind of failure.

// Test code: a failed unwrap is a failed test, with its message.
#![allow(clippy::unwrap_used)]

mod common;

use base64::Engine as _;
use chrono::{TimeZone, Utc};
use std::sync::Arc;
use std::time::Duration;
use tributary_auth::keyring::{Keyring, generate_key};
use tributary_domain::access::Viewer;
use tributary_domain::clock::{Clock, ManualClock};
use tributary_domain::ids::{ConnectionId, UserId};
use tributary_domain::model::{ConnectionStatus, SyncJobKind};
use tributary_outbound::{Guard, PrivateAllowance};
use tributary_providers::simplefin::SimpleFinConnector;
use tributary_providers::sync::{SyncEngine, SyncError, SyncOutcome};
use tributary_providers::{ConnectRequest, ConnectorError, Registry};
use tributary_storage::read::{self, TransactionFilter};
use tributary_storage::testing::dump;
use tributary_storage::{Database, connections, users};
use wiremock::matchers::{header_exists, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

static PAYLOAD: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    tributary_storage::testing::testdata("home-assistant-simplefin/fin_data.json")
});
const PASSWORD: &str = "s3cr3t-simplefin-password";

fn accounts_ok() -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_raw(PAYLOAD.as_str(), "application/json")
}

/// (posted transactions, balance snapshots) of the user.
fn counts(db: &Database, user: UserId) -> (i64, usize) {
    let conn = &mut *db.conn().unwrap();
    read::list_accounts(conn, &Viewer::whole_user(user))
        .unwrap()
        .iter()
        .fold((0, 0), |(t, b), a| {
            (
                t + read::count_transactions(conn, a.id, &TransactionFilter::default()).unwrap(),
                b + read::balance_history(conn, a.id).unwrap().len(),
            )
        })
}

/// The scenario runs on a blocking thread, as syncs do in Tributary (the
/// connectors' HTTP clients are blocking); the fake server's async calls go
/// through `rt`.
#[tokio::test(flavor = "multi_thread")]
async fn connect_sync_and_every_failure() {
    common::on_every_backend_blocking(scenario).await;
}

/// A fake SimpleFIN whose setup token claims once, an engine with a fresh
/// key, a user, and that user's SimpleFIN connection (not yet synced).
struct Setup {
    server: MockServer,
    access_url: String,
    setup_token: String,
    engine: SyncEngine,
    /// The same, with a connector that gives up after 500 ms: only for the
    /// timeout fault, so that no other answer races a short timeout on a
    /// loaded machine.
    impatient: SyncEngine,
    /// The same, with private addresses refused (the fake's among them).
    guarded: SyncEngine,
    clock: Arc<ManualClock>,
    user: UserId,
    connection: ConnectionId,
}

fn setup(rt: &tokio::runtime::Handle, db: &Database) -> Setup {
    let server = rt.block_on(MockServer::start());
    let access_url = format!(
        "http://bridge-user:{PASSWORD}@{}/simplefin",
        server.address()
    );
    rt.block_on(
        Mock::given(method("POST"))
            .and(path("/claim/TOKEN"))
            .respond_with(ResponseTemplate::new(200).set_body_string(access_url.clone()))
            .up_to_n_times(1)
            .mount(&server),
    );
    rt.block_on(
        Mock::given(method("POST"))
            .and(path("/claim/TOKEN"))
            .respond_with(ResponseTemplate::new(403))
            .mount(&server),
    );
    let setup_token =
        base64::engine::general_purpose::STANDARD.encode(format!("{}/claim/TOKEN", server.uri()));
    let clock = Arc::new(ManualClock::new(
        Utc.with_ymd_and_hms(2024, 1, 20, 12, 0, 0).unwrap(),
    ));
    let keyring = Arc::new(Keyring::new(&generate_key(), &[]).unwrap());
    // The fake listens on loopback: allowed here, as a home lab would.
    let engine_with = |timeout: Duration, allowance: PrivateAllowance| {
        let mut registry = Registry::default();
        let guard = Guard::new(allowance);
        registry.register(Arc::new(SimpleFinConnector::new(timeout, &guard).unwrap()));
        SyncEngine::new(db.clone(), registry, clock.clone()).with_sealer(keyring.clone())
    };
    let engine = engine_with(Duration::from_secs(30), PrivateAllowance::All);
    let impatient = engine_with(Duration::from_millis(500), PrivateAllowance::All);
    let guarded = engine_with(Duration::from_secs(30), PrivateAllowance::None);
    let user = users::create_personal_user(
        &mut db.conn().unwrap(),
        "fin@example.com",
        clock.now().naive_utc(),
    )
    .unwrap()
    .id;
    let request = ConnectRequest {
        settings: serde_json::json!({}),
        secret: Some(setup_token.clone()),
    };
    let connection = engine
        .connect(user, tributary_providers::simplefin::PROVIDER, &request)
        .unwrap()
        .id;
    Setup {
        server,
        access_url,
        setup_token,
        engine,
        impatient,
        guarded,
        clock,
        user,
        connection,
    }
}

fn scenario(rt: &tokio::runtime::Handle, db: Database) {
    let Setup {
        server,
        access_url,
        setup_token,
        engine,
        impatient,
        guarded,
        clock,
        user,
        connection,
    } = setup(rt, &db);

    // The token was claimed once; the access URL is stored sealed.
    let request = ConnectRequest {
        settings: serde_json::json!({}),
        secret: Some(setup_token),
    };
    let again = engine
        .connect(user, tributary_providers::simplefin::PROVIDER, &request)
        .unwrap_err();
    assert!(
        matches!(again, SyncError::Connect(ConnectorError::InvalidCredentials(ref m)) if m.contains("already claimed")),
        "{again}"
    );
    let everything = dump(&db);
    assert!(
        !everything.contains(PASSWORD) && !everything.contains(&access_url),
        "the access URL is stored sealed"
    );

    // A good sync, with the accounts request carrying Basic credentials.
    rt.block_on(
        Mock::given(method("GET"))
            .and(path("/simplefin/accounts"))
            .and(header_exists("authorization"))
            .respond_with(accounts_ok())
            .mount(&server),
    );
    let sync = |engine: &SyncEngine| engine.sync_now(connection, SyncJobKind::OnDemand, "test");
    let outcome = sync(&engine).unwrap();
    let SyncOutcome::Synced { summary, .. } = outcome else {
        panic!("first sync failed: {outcome:?}")
    };
    assert_eq!(summary.accounts_seen, 8);
    let record = connections::get_connection(&mut db.conn().unwrap(), connection).unwrap();
    assert_eq!(record.status, ConnectionStatus::Active);
    assert!(
        record.status_reason.unwrap().contains("may need attention"),
        "SimpleFIN's errors are surfaced"
    );
    let stored = counts(&db, user);

    // Each fault: (response, connection status after, retried?).
    let faults: Vec<(&str, ResponseTemplate, ConnectionStatus, bool)> = vec![
        (
            "timeout",
            accounts_ok().set_delay(Duration::from_secs(3)),
            ConnectionStatus::Error,
            true,
        ),
        (
            "500",
            ResponseTemplate::new(500),
            ConnectionStatus::Error,
            true,
        ),
        (
            "429",
            ResponseTemplate::new(429).insert_header("retry-after", "120"),
            ConnectionStatus::Error,
            true,
        ),
        (
            "malformed JSON",
            ResponseTemplate::new(200).set_body_raw("{\"accounts\": [{", "application/json"),
            ConnectionStatus::Error,
            false,
        ),
        (
            "wrong content type",
            ResponseTemplate::new(200).set_body_raw("<html>", "text/html"),
            ConnectionStatus::Error,
            false,
        ),
        (
            "empty body",
            ResponseTemplate::new(200).set_body_raw("", "application/json"),
            ConnectionStatus::Error,
            false,
        ),
        (
            "payment required",
            ResponseTemplate::new(402),
            ConnectionStatus::ReauthRequired,
            false,
        ),
        (
            "revoked credentials",
            ResponseTemplate::new(403),
            ConnectionStatus::ReauthRequired,
            false,
        ),
    ];
    for (name, response, status, retried) in faults {
        rt.block_on(server.reset());
        rt.block_on(
            Mock::given(method("GET"))
                .and(path("/simplefin/accounts"))
                .respond_with(response)
                .mount(&server),
        );
        clock.advance(chrono::Duration::hours(1));
        let outcome = sync(if name == "timeout" {
            &impatient
        } else {
            &engine
        })
        .unwrap();
        let SyncOutcome::ProviderFailed {
            error, retry_at, ..
        } = outcome
        else {
            panic!("{name}: expected a failure, got {outcome:?}")
        };
        assert_eq!(retry_at.is_some(), retried, "{name}: {error}");
        if name == "429" {
            assert!(
                retry_at.unwrap() >= (clock.now() + chrono::Duration::seconds(120)).naive_utc(),
                "Retry-After honoured"
            );
        }
        let record = connections::get_connection(&mut db.conn().unwrap(), connection).unwrap();
        assert_eq!(record.status, status, "{name}");
        assert!(
            !record
                .status_reason
                .as_deref()
                .unwrap_or_default()
                .contains(PASSWORD),
            "{name}: no secret in the reason"
        );
        assert_eq!(
            counts(&db, user),
            stored,
            "{name}: nothing stored before is lost"
        );
    }

    // The provider recovers, and so does the connection.
    rt.block_on(server.reset());
    rt.block_on(
        Mock::given(method("GET"))
            .and(path("/simplefin/accounts"))
            .respond_with(accounts_ok())
            .mount(&server),
    );
    clock.advance(chrono::Duration::hours(1));
    assert!(matches!(sync(&engine).unwrap(), SyncOutcome::Synced { .. }));
    let record = connections::get_connection(&mut db.conn().unwrap(), connection).unwrap();
    assert_eq!(
        (record.status, record.consecutive_failures),
        (ConnectionStatus::Active, 0)
    );
    assert_eq!(
        counts(&db, user).0,
        stored.0,
        "re-reading the same window adds no posted transaction"
    );

    // The operator no longer allows private addresses: the stored access
    // URL (on loopback) is refused at the next sync before anything is
    // connected to, and the connection needs a new setup token.
    let asked_before = rt.block_on(server.received_requests()).unwrap().len();
    let stored = counts(&db, user);
    clock.advance(chrono::Duration::hours(1));
    let outcome = guarded
        .sync_now(connection, SyncJobKind::OnDemand, "test")
        .unwrap();
    let SyncOutcome::ProviderFailed {
        error, retry_at, ..
    } = outcome
    else {
        panic!("expected a refusal, got {outcome:?}")
    };
    let error = error.to_string();
    assert!(
        error.contains("TRIBUTARY_OUTBOUND_ALLOW_PRIVATE"),
        "{error}"
    );
    assert!(!error.contains(PASSWORD), "{error}");
    assert_eq!(retry_at, None, "a refusal is not retried");
    assert_eq!(
        rt.block_on(server.received_requests()).unwrap().len(),
        asked_before,
        "nothing reached the refused address"
    );
    let record = connections::get_connection(&mut db.conn().unwrap(), connection).unwrap();
    assert_eq!(record.status, ConnectionStatus::ReauthRequired);
    assert_eq!(counts(&db, user), stored, "nothing stored is lost");
}

/// One account's SimpleFIN answer with these transactions:
/// (id, day of January 2024, amount, payee, pending).
fn window(transactions: &[(&str, u32, &str, &str, bool)]) -> ResponseTemplate {
    let transactions: Vec<serde_json::Value> = transactions
        .iter()
        .map(|(id, day, amount, payee, pending)| {
            let at = Utc.with_ymd_and_hms(2024, 1, *day, 15, 0, 0).unwrap().timestamp();
            serde_json::json!({"id": id, "posted": if *pending { 0 } else { at }, "transacted_at": at,
                               "amount": amount, "payee": payee, "description": payee, "pending": pending})
        })
        .collect();
    let body = serde_json::json!({"accounts": [{"id": "ACT-1", "name": "Checking", "currency": "USD",
        "balance": "100.00", "balance-date": 1705752000, "transactions": transactions}]});
    ResponseTemplate::new(200).set_body_raw(body.to_string(), "application/json")
}

#[tokio::test(flavor = "multi_thread")]
async fn overlapping_windows_in_any_order_never_duplicate() {
    common::on_every_backend_blocking(overlapping_windows).await;
}

fn overlapping_windows(rt: &tokio::runtime::Handle, db: Database) {
    let Setup {
        server,
        engine,
        clock,
        user,
        connection,
        ..
    } = setup(rt, &db);
    let early = window(&[
        ("t1", 1, "-10.00", "Grocer", false),
        ("t2", 5, "-20.00", "Pharmacy", false),
        ("p5", 10, "-4.50", "Blue Bottle Coffee", true),
    ]);
    // Later, the coffee has posted with a tip, under a new id and no link.
    let late = window(&[
        ("t2", 5, "-20.00", "Pharmacy", false),
        ("t5", 11, "-5.40", "BLUE BOTTLE COFFEE #12", false),
        ("t4", 15, "-40.00", "Fuel", false),
    ]);
    let all = window(&[
        ("t1", 1, "-10.00", "Grocer", false),
        ("t2", 5, "-20.00", "Pharmacy", false),
        ("t5", 11, "-5.40", "BLUE BOTTLE COFFEE #12", false),
        ("t4", 15, "-40.00", "Fuel", false),
    ]);
    // (window, posted count after, pending count after)
    let steps = [
        (early.clone(), 2, 1),
        (late.clone(), 4, 0),
        (early, 4, 0),
        (all, 4, 0),
        (late, 4, 0),
    ];
    let mut coffee_id = None;
    for (n, (answer, posted, pending)) in steps.into_iter().enumerate() {
        rt.block_on(server.reset());
        rt.block_on(
            Mock::given(method("GET"))
                .and(path("/simplefin/accounts"))
                .respond_with(answer)
                .mount(&server),
        );
        clock.advance(chrono::Duration::hours(6));
        let outcome = engine
            .sync_now(connection, SyncJobKind::Scheduled, "test")
            .unwrap();
        assert!(
            matches!(outcome, SyncOutcome::Synced { .. }),
            "step {n}: {outcome:?}"
        );
        let conn = &mut *db.conn().unwrap();
        let account = read::list_accounts(conn, &Viewer::whole_user(user)).unwrap()[0].id;
        let all_rows = read::list_transactions(
            conn,
            account,
            &TransactionFilter {
                include_pending: true,
                ..Default::default()
            },
            None,
            None,
        )
        .unwrap();
        let posted_now = all_rows.iter().filter(|t| !t.is_pending).count();
        assert_eq!(
            (posted_now, all_rows.len() - posted_now),
            (posted, pending),
            "step {n}"
        );
        // The coffee keeps its Tributary id from pending to posted.
        let coffee = all_rows
            .iter()
            .find(|t| {
                t.merchant
                    .as_deref()
                    .is_some_and(|m| m.to_lowercase().contains("coffee"))
            })
            .unwrap();
        assert_eq!(*coffee_id.get_or_insert(coffee.id), coffee.id, "step {n}");
    }
}
