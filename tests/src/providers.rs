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
use tributary_providers::{
    AuthorizationReturn, ConnectRequest, Connector, ConnectorError, Registry,
};
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

/// Every transaction of the user, pending ones too, as sorted lines:
/// `account amount pending merchant description`.
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

/// Runs `scenario` on SQLite and on PostgreSQL, each time against a fresh
/// fake from `start`, on a blocking thread (the connectors' HTTP clients
/// block, and must not run on the test's async runtime).
pub async fn on_every_backend_against<F, Started>(
    start: impl Fn() -> Started,
    scenario: fn(&Database, &F),
) where
    F: Send + 'static,
    Started: std::future::Future<Output = F>,
{
    for database in tributary_storage::testing::TestDatabase::all() {
        eprintln!("-- on {:?}", database.backend());
        let fake = start().await;
        let db = database.db().clone();
        actix_web::rt::task::spawn_blocking(move || scenario(&db, &fake))
            .await
            .expect("the scenario");
    }
}

/// A connector's test bench: a manual clock at now, an engine whose
/// connector waits long (`patient`) and one whose waits short
/// (`impatient`), sharing a keyring, and a Personal user `email`.
#[derive(Debug)]
pub struct Bench {
    pub clock: Arc<tributary_domain::clock::ManualClock>,
    pub engine: SyncEngine,
    pub impatient: SyncEngine,
    pub user: UserId,
}

impl Bench {
    /// A bench whose engines wait long (30 s) and short (1 s) on the
    /// connector `connector` makes for a timeout (a fake's).
    pub fn against(
        db: &Database,
        connector: impl Fn(std::time::Duration) -> Arc<dyn Connector>,
        email: &str,
    ) -> Self {
        Self::new(
            db,
            (
                connector(std::time::Duration::from_secs(30)),
                connector(std::time::Duration::from_secs(1)),
            ),
            email,
        )
    }

    pub fn new(
        db: &Database,
        (patient, impatient): (Arc<dyn Connector>, Arc<dyn Connector>),
        email: &str,
    ) -> Self {
        let clock = Arc::new(tributary_domain::clock::ManualClock::new(chrono::Utc::now()));
        let keyring = test_keyring();
        let engine = engine_with(db, clock.clone(), &keyring, patient);
        let impatient = engine_with(db, clock.clone(), &keyring, impatient);
        let user = tributary_storage::users::create_personal_user(
            &mut db.conn().expect("a connection"),
            email,
            clock.now().naive_utc(),
        )
        .expect("the user")
        .id;
        Bench {
            clock,
            engine,
            impatient,
            user,
        }
    }
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

/// A row of a fault matrix ([`FaultCase`]).
pub fn case<F>(
    fault: F,
    impatient: bool,
    transient: bool,
    status: ConnectionStatus,
) -> FaultCase<F> {
    FaultCase {
        fault,
        impatient,
        transient,
        status,
    }
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

/// Asserts that a sync failed at `now` is retried no earlier than the
/// next UTC day (a daily allowance spent).
pub fn not_before_the_next_utc_day(
    now: chrono::DateTime<chrono::Utc>,
    retry_at: Option<NaiveDateTime>,
) {
    let tomorrow = (now.date_naive() + chrono::Days::new(1)).and_time(chrono::NaiveTime::MIN);
    assert!(retry_at.expect("a retry time") >= tomorrow, "{retry_at:?}");
}

/// What a person gives to connect a bank with their own token.
pub fn token_request(token: &str) -> tributary_providers::ConnectRequest {
    tributary_providers::ConnectRequest {
        settings: serde_json::json!({}),
        secret: Some(token.to_owned()),
    }
}

/// Connects `provider` for `user` with a personal access token: `wrong`
/// is refused before anything is stored, `good` connects and its secret
/// is sealed.
pub fn connect_with_a_token(
    engine: &SyncEngine,
    (db, user): (&Database, UserId),
    provider: tributary_domain::model::Provider,
    (wrong, good): (
        &tributary_providers::ConnectRequest,
        &tributary_providers::ConnectRequest,
    ),
) -> ConnectionId {
    let Err(tributary_providers::sync::SyncError::Connect(ConnectorError::InvalidCredentials(why))) =
        engine.connect(user, provider, wrong)
    else {
        panic!("a wrong token connects nothing")
    };
    assert!(
        ["token", "API key", "secret"]
            .iter()
            .any(|word| why.contains(word)),
        "{why}"
    );
    let conn = &mut *db.conn().expect("a connection");
    assert!(
        read::list_accounts(conn, &Viewer::whole_user(user))
            .expect("the accounts")
            .is_empty()
    );
    let connection = engine
        .connect(user, provider, good)
        .expect("the token connects")
        .id;
    let secret = good.secret.as_deref().expect("a token");
    assert!(
        !tributary_storage::testing::dump(db).contains(secret),
        "the token is sealed"
    );
    connection
}

/// The person revokes the token (`revoke`): the next sync needs them and
/// loses nothing; a new token (`issue`, then connecting again with
/// `replacement`) repairs the connection with the same accounts and data,
/// sealed. `before` runs before each sync (a later hour, say).
pub fn a_revoked_token_is_replaced(
    at: Matrix<'_>,
    (revoke, issue): (impl Fn(), impl Fn()),
    replacement: &tributary_providers::ConnectRequest,
    before: impl Fn(),
) {
    let new_token = replacement.secret.as_deref().expect("a new token");
    let sync = || {
        before();
        at.engine
            .sync_now(at.connection, SyncJobKind::OnDemand, "test")
            .expect("a sync runs")
    };
    let stored = transaction_lines(at.db, at.user);
    let status = || {
        connections::get_connection(&mut at.db.conn().expect("a connection"), at.connection)
            .expect("the connection")
            .status
    };
    revoke();
    let SyncOutcome::ProviderFailed {
        error: ConnectorError::ReauthRequired(why),
        ..
    } = sync()
    else {
        panic!("a revoked token needs the user")
    };
    assert!(why.contains("make a new one"), "{why}");
    assert_eq!(transaction_lines(at.db, at.user), stored);
    assert_eq!(status(), ConnectionStatus::ReauthRequired);
    issue();
    at.engine
        .reconnect(at.connection, replacement)
        .expect("the new token reconnects");
    let SyncOutcome::Synced { summary, .. } = sync() else {
        panic!("the sync after the new token failed")
    };
    assert_eq!(summary.accounts_created, 0);
    assert_eq!(transaction_lines(at.db, at.user), stored);
    assert_eq!(status(), ConnectionStatus::Active);
    assert!(
        !tributary_storage::testing::dump(at.db).contains(new_token),
        "the new token is sealed"
    );
}

/// Opens the consent page `link` leads to, as the person's browser would
/// (`deny`: they cancel there), and reads the return to `return_url` the
/// bank sends them to. Run on a blocking thread: the fakes answer on the
/// test's runtime.
pub fn consent_at(link: &str, deny: bool, return_url: &str) -> AuthorizationReturn {
    let link = if deny {
        format!("{link}&deny=1")
    } else {
        link.to_owned()
    };
    let back = tokio::runtime::Handle::current().block_on(crate::fakes::sent_back_from(&link));
    let back = url::Url::parse(&back).expect("a return address");
    assert!(back.as_str().starts_with(return_url), "{back}");
    AuthorizationReturn::new(back.query_pairs().into_owned())
}

/// The ids of `user`'s accounts.
fn account_ids(db: &Database, user: UserId) -> Vec<tributary_domain::ids::AccountId> {
    read::list_accounts(
        &mut db.conn().expect("a connection"),
        &Viewer::whole_user(user),
    )
    .expect("the accounts")
    .iter()
    .map(|a| a.id)
    .collect()
}

/// Signing in at the bank again: `reconnect` with `request`, the person
/// consents on the page it links to (returning to `return_url`), and a day
/// later a sync; the accounts keep their place and their data, and the
/// connection is active again.
pub fn consenting_again_keeps_everything(
    at: Matrix<'_>,
    clock: &tributary_domain::clock::ManualClock,
    request: &ConnectRequest,
    return_url: &str,
) {
    let accounts = account_ids(at.db, at.user);
    let before = transaction_lines(at.db, at.user);
    let again = at
        .engine
        .reconnect(at.connection, request)
        .expect("reconnected");
    let link = again.settings["link"].as_str().expect("a link").to_owned();
    at.engine
        .complete_authorization(at.connection, &consent_at(&link, false, return_url))
        .expect("authorised again");
    clock.advance(chrono::Duration::days(1));
    let SyncOutcome::Synced { summary, .. } = at
        .engine
        .sync_now(at.connection, SyncJobKind::OnDemand, "test")
        .expect("a sync runs")
    else {
        panic!("the sync after re-authentication failed")
    };
    assert_eq!(summary.accounts_created, 0, "the same accounts");
    assert_eq!(account_ids(at.db, at.user), accounts);
    assert_eq!(transaction_lines(at.db, at.user), before);
    let record =
        connections::get_connection(&mut at.db.conn().expect("a connection"), at.connection)
            .expect("the connection");
    assert_eq!(record.status, ConnectionStatus::Active);
}
