//! What the connector tests against local fakes share: an engine over one
//! connector, the user's transactions as comparable lines, and the fault
//! matrix.

use chrono::NaiveDateTime;
use std::sync::Arc;
use tributary_auth::keyring::{Keyring, generate_key};
use tributary_domain::access::Viewer;
use tributary_domain::clock::Clock;
use tributary_domain::ids::{ConnectionId, UserId};
use tributary_domain::model::{ConnectionStatus, SyncJobKind};
use tributary_providers::sync::{SyncEngine, SyncOutcome};
use tributary_providers::{Connector, ConnectorError, Registry};
use tributary_storage::read::{self, TransactionFilter};
use tributary_storage::{Database, connections};

/// A keyring with a fresh key, for engines that must open each other's
/// sealed credentials (share it).
pub fn test_keyring() -> Arc<Keyring> {
    Arc::new(Keyring::new(&generate_key(), &[]).expect("a fresh key"))
}

/// A sync engine over `connector` alone.
pub fn engine_with(
    db: &Database,
    clock: Arc<dyn Clock>,
    keyring: &Arc<Keyring>,
    connector: Arc<dyn Connector>,
) -> SyncEngine {
    let mut registry = Registry::default();
    registry.register(connector);
    SyncEngine::new(db.clone(), registry, clock).with_sealer(keyring.clone())
}

/// Every transaction of the user, pending ones too, as sorted lines:
/// `account amount pending merchant description`.
/// Every investment transaction of `user`'s accounts as "TYPE TICKER
/// QUANTITY PRICE AMOUNT" (None where absent), sorted.
pub fn investment_lines(db: &Database, user: UserId) -> Vec<String> {
    let conn = &mut *db.conn().expect("a connection");
    let show = |d: Option<tributary_domain::money::Decimal>| {
        d.map_or_else(|| "None".to_owned(), |d| d.to_string())
    };
    let mut lines: Vec<String> = read::list_accounts(conn, &Viewer::whole_user(user))
        .expect("the accounts")
        .iter()
        .flat_map(|a| {
            tributary_storage::investments::list(conn, a.id, (None, None), None)
                .expect("the investment transactions")
                .into_iter()
                .map(|t| {
                    format!(
                        "{} {} {} {} {}",
                        t.kind.as_str(),
                        t.security
                            .and_then(|s| s.ticker)
                            .unwrap_or_else(|| "-".into()),
                        show(t.quantity),
                        show(t.price),
                        t.amount
                    )
                })
                .collect::<Vec<_>>()
        })
        .collect();
    lines.sort();
    lines
}

pub fn transaction_lines(db: &Database, user: UserId) -> Vec<String> {
    let conn = &mut *db.conn().expect("a connection");
    let all = TransactionFilter {
        include_pending: true,
        ..Default::default()
    };
    let mut lines: Vec<String> = read::list_accounts(conn, &Viewer::whole_user(user))
        .expect("the accounts")
        .iter()
        .flat_map(|a| {
            read::list_transactions(conn, a.id, &all, None, None)
                .expect("the transactions")
                .into_iter()
                .map(|t| {
                    format!(
                        "{} {} {} {:?} {:?}",
                        a.name, t.amount, t.is_pending, t.merchant, t.description
                    )
                })
                .collect::<Vec<_>>()
        })
        .collect();
    lines.sort();
    lines
}

/// One row of a connector's fault matrix: the fault, whether the
/// impatient engine (a short timeout) meets it, whether the sync is
/// retried, and the connection's status after.
#[derive(Debug, Clone, Copy)]
pub struct FaultCase<F> {
    pub fault: F,
    pub impatient: bool,
    pub transient: bool,
    pub status: ConnectionStatus,
}

/// Where a fault matrix runs: the connection, its user, the two engines.
#[derive(Debug, Clone, Copy)]
pub struct Matrix<'a> {
    pub db: &'a Database,
    pub user: UserId,
    pub connection: ConnectionId,
    pub engine: &'a SyncEngine,
    pub impatient: &'a SyncEngine,
}

/// Runs each case: `before` (a new day, say), the fault switched on by
/// `set_fault`, a sync that must fail as the case says and lose nothing
/// stored (`check` sees its error and retry time), then, healthy again, a
/// sync that works. A case leaving REAUTH_REQUIRED ends the matrix.
pub fn run_fault_matrix<F: std::fmt::Debug + Copy>(
    at: Matrix<'_>,
    cases: &[FaultCase<F>],
    set_fault: impl Fn(Option<F>),
    before: impl Fn(),
    check: impl Fn(F, &ConnectorError, Option<NaiveDateTime>),
) {
    let sync = |engine: &SyncEngine| {
        engine
            .sync_now(at.connection, SyncJobKind::OnDemand, "fault-matrix")
            .expect("a sync runs")
    };
    for case in cases {
        before();
        let stored = transaction_lines(at.db, at.user);
        set_fault(Some(case.fault));
        let failing = if case.impatient {
            at.impatient
        } else {
            at.engine
        };
        let SyncOutcome::ProviderFailed {
            error, retry_at, ..
        } = sync(failing)
        else {
            panic!("{:?} must fail the sync", case.fault)
        };
        set_fault(None);
        assert_eq!(
            error.is_transient(),
            case.transient,
            "{:?}: {error}",
            case.fault
        );
        assert_eq!(
            retry_at.is_some(),
            case.transient,
            "{:?}: retried?",
            case.fault
        );
        check(case.fault, &error, retry_at);
        let record =
            connections::get_connection(&mut at.db.conn().expect("a connection"), at.connection)
                .expect("the connection");
        assert_eq!(record.status, case.status, "{:?}", case.fault);
        assert_eq!(
            transaction_lines(at.db, at.user),
            stored,
            "{:?} loses nothing stored",
            case.fault
        );
        if case.status == ConnectionStatus::ReauthRequired {
            return;
        }
        before();
        assert!(
            matches!(sync(at.engine), SyncOutcome::Synced { .. }),
            "healthy again after {:?}",
            case.fault
        );
    }
}

/// What alice's API key reads after `connect` (on the server's database,
/// through `connector`) and a first sync: her account named `account`
/// (from `GET /accounts`) and its holdings (`GET
/// /accounts/{id}/holdings`), as served.
pub async fn holdings_through_the_personal_api(
    server: &crate::TestServer,
    connector: Arc<dyn Connector>,
    connect: fn(&SyncEngine, UserId) -> ConnectionId,
    account: &str,
) -> (serde_json::Value, serde_json::Value) {
    let db = server.database.db().clone();
    let clock: Arc<dyn Clock> = server.clock.clone();
    actix_web::rt::task::spawn_blocking(move || {
        let alice = tributary_storage::users::find_personal_user(
            &mut db.conn().expect("a connection"),
            "alice@example.com",
        )
        .expect("a lookup")
        .expect("alice")
        .id;
        let engine = engine_with(&db, clock, &test_keyring(), connector);
        let connection = connect(&engine, alice);
        let outcome = engine
            .sync_now(connection, SyncJobKind::Initial, "test")
            .expect("a sync runs");
        assert!(matches!(outcome, SyncOutcome::Synced { .. }), "{outcome:?}");
    })
    .await
    .expect("the sync thread");
    let client = reqwest::Client::new();
    let get = |path: String| {
        client
            .get(server.url(&format!("/api/v1{path}")))
            .header("x-api-key", &server.world.alice_key)
            .send()
    };
    let accounts: serde_json::Value = get("/accounts".into())
        .await
        .expect("an answer")
        .json()
        .await
        .expect("JSON");
    let found = accounts["accounts"]
        .as_array()
        .expect("a list")
        .iter()
        .find(|a| a["name"] == account)
        .unwrap_or_else(|| panic!("no {account} in {accounts}"))
        .clone();
    let answer = get(format!("/accounts/{}/holdings", found["id"]))
        .await
        .expect("an answer");
    assert_eq!(answer.status(), reqwest::StatusCode::OK);
    (found, answer.json().await.expect("JSON"))
}
