//! GoCardless Bank Account Data against a local fake built from the real
//! responses in ../shared/testdata/gocardless-robintty, through the real sync
//! engine, on SQLite and PostgreSQL.

// Test code: a failed unwrap is a failed test, with its message.
#![allow(clippy::unwrap_used)]

mod common;

use chrono::{TimeZone, Utc};
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;
use tributary_domain::access::Viewer;
use tributary_domain::clock::{Clock, ManualClock};
use tributary_domain::ids::{ConnectionId, UserId};
use tributary_domain::model::{ConnectionStatus, SyncJobKind};
use tributary_providers::gocardless::{GoCardlessConfig, GoCardlessConnector};
use tributary_providers::sync::{SyncEngine, SyncOutcome};
use tributary_providers::{ConnectRequest, ConnectorError, Registry};
use tributary_storage::read::{self, TransactionFilter};
use tributary_storage::{Database, connections, users};
use wiremock::matchers::{method, path, path_regex};
use wiremock::{Mock, MockServer, ResponseTemplate};

static RESPONSES: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    tributary_storage::testing::testdata("gocardless-robintty/responses.json")
});
const SECRET_KEY: &str = "gocardless-operator-secret";

fn fixture(group: &str, name: &str) -> Value {
    let all: Value = serde_json::from_str(&RESPONSES).unwrap();
    all[group][name].clone()
}

fn json(value: &Value) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_raw(value.to_string(), "application/json")
}

/// The requisition as GoCardless shows it, in `status`.
fn requisition(status: &str) -> ResponseTemplate {
    let mut value = fixture("RequisitionsEndpointMockData", "GetRequisition");
    value["status"] = Value::from(status);
    json(&value)
}

fn mount(rt: &tokio::runtime::Handle, server: &MockServer, mock: Mock) {
    rt.block_on(mock.mount(server));
}

/// Token, institution, agreement and requisition creation, and the three
/// account endpoints answering the fixture.
fn mount_happy_path(rt: &tokio::runtime::Handle, server: &MockServer, requisition_status: &str) {
    mount(
        rt,
        server,
        Mock::given(method("POST"))
            .and(path("/token/new/"))
            .respond_with(json(&fixture("TokenEndpointMockData", "GetNewToken"))),
    );
    mount(
        rt,
        server,
        Mock::given(method("GET"))
            .and(path_regex("^/institutions/[^/]+/$"))
            .respond_with(json(&fixture(
                "InstitutionsEndpointMockData",
                "GetInstitution",
            ))),
    );
    mount(
        rt,
        server,
        Mock::given(method("POST"))
            .and(path("/agreements/enduser/"))
            .respond_with(json(&fixture(
                "AgreementsEndpointMockData",
                "CreateAgreement",
            ))),
    );
    mount(
        rt,
        server,
        Mock::given(method("POST"))
            .and(path("/requisitions/"))
            .respond_with(requisition("CR")),
    );
    mount(
        rt,
        server,
        Mock::given(method("GET"))
            .and(path_regex("^/requisitions/[^/]+/$"))
            .respond_with(requisition(requisition_status)),
    );
    mount(
        rt,
        server,
        Mock::given(method("GET"))
            .and(path_regex("^/accounts/[^/]+/details/$"))
            .respond_with(json(&fixture(
                "AccountsEndpointMockData",
                "GetAccountDetails",
            ))),
    );
    mount(
        rt,
        server,
        Mock::given(method("GET"))
            .and(path_regex("^/accounts/[^/]+/balances/$"))
            .respond_with(json(&fixture("AccountsEndpointMockData", "GetBalances"))),
    );
    mount(
        rt,
        server,
        Mock::given(method("GET"))
            .and(path_regex("^/accounts/[^/]+/transactions/$"))
            .respond_with(json(&fixture(
                "AccountsEndpointMockData",
                "GetTransactions",
            ))),
    );
}

/// (posted, pending) transactions of the user.
fn counts(db: &Database, user: UserId) -> (i64, i64) {
    let conn = &mut *db.conn().unwrap();
    read::list_accounts(conn, &Viewer::whole_user(user))
        .unwrap()
        .iter()
        .fold((0, 0), |(posted, pending), a| {
            let p = read::count_transactions(conn, a.id, &TransactionFilter::default()).unwrap();
            let all = read::count_transactions(
                conn,
                a.id,
                &TransactionFilter {
                    include_pending: true,
                    ..Default::default()
                },
            )
            .unwrap();
            (posted + p, pending + all - p)
        })
}

#[tokio::test(flavor = "multi_thread")]
async fn link_sync_quota_and_every_failure() {
    common::on_every_backend_blocking(scenario).await;
}

fn scenario(rt: &tokio::runtime::Handle, db: Database) {
    let server = rt.block_on(MockServer::start());
    mount_happy_path(rt, &server, "CR");
    let clock = Arc::new(ManualClock::new(
        Utc.with_ymd_and_hms(2021, 11, 22, 8, 0, 0).unwrap(),
    ));
    let engine_with = |timeout: Duration| {
        let connector = GoCardlessConnector::new(GoCardlessConfig {
            base_url: server.uri(),
            secret_id: "operator".into(),
            secret_key: SECRET_KEY.into(),
            timeout,
        })
        .unwrap();
        let mut registry = Registry::default();
        registry.register(Arc::new(connector));
        SyncEngine::new(db.clone(), registry, clock.clone())
    };
    let engine = engine_with(Duration::from_secs(30));
    // Gives up after 500 ms: only for the timeout fault, so that no other
    // answer races a short timeout on a loaded machine.
    let impatient = engine_with(Duration::from_millis(500));
    let user = users::create_personal_user(
        &mut db.conn().unwrap(),
        "eu@example.com",
        clock.now().naive_utc(),
    )
    .unwrap()
    .id;
    let sync_with = |engine: &SyncEngine| {
        engine
            .sync_now(connection_of(&db, user), SyncJobKind::OnDemand, "test")
            .unwrap()
    };
    let sync = || sync_with(&engine);

    // Connecting creates the agreement and requisition and keeps the link.
    let request = ConnectRequest {
        settings: serde_json::json!({"institution_id": "SANDBOXFINANCE_SFIN0000"}),
        secret: None,
    };
    let connection = engine
        .connect(user, tributary_providers::gocardless::PROVIDER, &request)
        .unwrap();
    let link = connection.settings["link"].as_str().unwrap().to_owned();
    assert!(link.starts_with("https://ob.nordigen.com/psd2/start/"));
    assert_eq!(connection.institution_name, "N26 Bank");
    assert_eq!(
        connection.consent_expires_at,
        Some((clock.now() + chrono::Duration::days(90)).naive_utc()),
        "the agreement's 90 days of access"
    );

    // Before the user completes the link: REAUTH_REQUIRED, naming the link.
    let SyncOutcome::ProviderFailed {
        error: ConnectorError::ReauthRequired(reason),
        retry_at: None,
        ..
    } = sync()
    else {
        panic!("expected reauth")
    };
    assert!(reason.contains(&link), "{reason}");

    // Linked: two accounts with the fixture's data.
    rt.block_on(server.reset());
    mount_happy_path(rt, &server, "LN");
    let SyncOutcome::Synced { summary, .. } = sync() else {
        panic!("sync failed")
    };
    assert_eq!(summary.accounts_seen, 2);
    {
        let conn = &mut *db.conn().unwrap();
        let accounts = read::list_accounts(conn, &Viewer::whole_user(user)).unwrap();
        let account = &accounts[0];
        assert_eq!(
            (
                account.name.as_str(),
                account.currency.as_str(),
                account.mask.as_deref()
            ),
            ("Main Account", "EUR", Some("0445"))
        );
        let all = TransactionFilter {
            include_pending: true,
            ..Default::default()
        };
        let rows = read::list_transactions(conn, account.id, &all, None, None).unwrap();
        assert_eq!(
            rows.len(),
            3,
            "two booked records share the id `string`: both are kept"
        );
        assert!(
            rows.iter().all(|t| t.currency == "EUR"),
            "the fixture's currency `string` falls back to the account's"
        );
        let mut amounts: Vec<String> = rows
            .iter()
            .map(|t| format!("{} {}", t.amount, t.is_pending))
            .collect();
        amounts.sort();
        assert_eq!(amounts, ["45.00 false", "947.26 false", "99.20 true"]);
        let balance = read::latest_balance(conn, account.id).unwrap().unwrap();
        assert_eq!(
            (
                balance.amount.to_string().as_str(),
                balance.currency.as_str()
            ),
            ("1913.12", "EUR")
        );
    }
    let stored = counts(&db, user);
    let after_sync = connections::get_connection(&mut db.conn().unwrap(), connection.id).unwrap();
    assert_eq!(
        after_sync.institution_name, "N26 Bank",
        "a sync keeps the institution's name"
    );

    // The daily quota: 4 syncs a UTC day (the one before the link counted).
    assert!(matches!(sync(), SyncOutcome::Synced { .. }));
    assert!(matches!(sync(), SyncOutcome::Synced { .. }));
    rt.block_on(server.reset());
    // Not one call may reach GoCardless now.
    mount(
        rt,
        &server,
        Mock::given(wiremock::matchers::any())
            .respond_with(ResponseTemplate::new(500))
            .expect(0),
    );
    let SyncOutcome::Deferred { until, .. } = sync() else {
        panic!("the fifth sync of the day must be deferred")
    };
    assert_eq!(
        until,
        Utc.with_ymd_and_hms(2021, 11, 23, 0, 0, 0)
            .unwrap()
            .naive_utc()
    );
    rt.block_on(server.verify());
    let record = connections::get_connection(&mut db.conn().unwrap(), connection.id).unwrap();
    assert_eq!(record.status, ConnectionStatus::Active);
    assert!(record.status_reason.unwrap().contains("deferred"));
    assert_eq!(
        counts(&db, user),
        stored,
        "re-syncing the same data adds nothing"
    );

    // Each fault, one a day (the quota): (name, answer for the account
    // endpoints, status after, retried?).
    let faults: Vec<(&str, ResponseTemplate, ConnectionStatus, bool)> = vec![
        (
            "timeout",
            json(&fixture("AccountsEndpointMockData", "GetAccountDetails"))
                .set_delay(Duration::from_secs(3)),
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
            ResponseTemplate::new(429)
                .insert_header("HTTP_X_RATELIMIT_ACCOUNT_SUCCESS_RESET", "3600"),
            ConnectionStatus::Error,
            true,
        ),
        (
            "malformed JSON",
            ResponseTemplate::new(200).set_body_raw("{\"account\": ", "application/json"),
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
            "revoked access",
            ResponseTemplate::new(401).set_body_raw(
                fixture("CredentialMockData", "NoAccountForGivenCredentialsError").to_string(),
                "application/json",
            ),
            ConnectionStatus::ReauthRequired,
            false,
        ),
    ];
    for (name, answer, status, retried) in faults {
        clock.advance(chrono::Duration::days(1));
        rt.block_on(server.reset());
        mount_happy_path(rt, &server, "LN");
        // Mounted last, so it takes precedence for the details endpoint.
        mount(
            rt,
            &server,
            Mock::given(method("GET"))
                .and(path_regex("^/accounts/[^/]+/details/$"))
                .respond_with(answer)
                .with_priority(1),
        );
        let outcome = sync_with(if name == "timeout" {
            &impatient
        } else {
            &engine
        });
        let SyncOutcome::ProviderFailed {
            error, retry_at, ..
        } = outcome
        else {
            panic!("{name}: expected a failure, got {outcome:?}")
        };
        assert_eq!(retry_at.is_some(), retried, "{name}: {error}");
        if name == "429" {
            assert!(
                retry_at.unwrap() >= (clock.now() + chrono::Duration::seconds(3600)).naive_utc(),
                "the quota reset time is honoured"
            );
        }
        let record = connections::get_connection(&mut db.conn().unwrap(), connection.id).unwrap();
        assert_eq!(record.status, status, "{name}");
        assert_eq!(
            counts(&db, user),
            stored,
            "{name}: nothing stored before is lost"
        );
        // Let the next fault start from a clean queue.
        let mut conn = db.conn().unwrap();
        if let Some(job) =
            tributary_storage::sync_jobs::active_job(&mut conn, connection.id).unwrap()
        {
            let claimed = tributary_storage::sync_jobs::claim_job(
                &mut conn,
                job.id,
                "cleanup",
                clock.now().naive_utc(),
                clock.now().naive_utc(),
            )
            .unwrap()
            .unwrap();
            tributary_storage::sync_jobs::finish(
                &mut conn,
                &claimed,
                tributary_domain::model::SyncJobStatus::Failed,
                None,
                None,
                clock.now().naive_utc(),
            )
            .unwrap();
        }
    }

    // An expired agreement.
    clock.advance(chrono::Duration::days(1));
    rt.block_on(server.reset());
    mount_happy_path(rt, &server, "EX");
    let SyncOutcome::ProviderFailed {
        error: ConnectorError::ReauthRequired(reason),
        ..
    } = sync()
    else {
        panic!("expected reauth")
    };
    assert!(reason.contains("expired"), "{reason}");
    let everything = tributary_storage::testing::dump(&db);
    assert!(
        !everything.contains(SECRET_KEY),
        "the operator's secret is never stored"
    );
    drop(engine);
    drop(impatient);
}

fn connection_of(db: &Database, user: UserId) -> ConnectionId {
    connections::list_connections(&mut db.conn().unwrap(), Some(user)).unwrap()[0].id
}

#[tokio::test(flavor = "multi_thread")]
async fn institutions_by_country_and_tokens_refreshed_when_they_expire() {
    let server = MockServer::start().await;
    // An access token that is stale at once (GoCardless renews a minute
    // early), and a long-lived refresh token.
    let mut short = fixture("TokenEndpointMockData", "GetNewToken");
    short["access_expires"] = Value::from(60);
    Mock::given(method("POST"))
        .and(path("/token/new/"))
        .respond_with(json(&short))
        .expect(1)
        .mount(&server)
        .await;
    let mut refreshed = fixture("TokenEndpointMockData", "RefreshAccessToken");
    refreshed["access_expires"] = Value::from(60);
    Mock::given(method("POST"))
        .and(path("/token/refresh/"))
        .respond_with(json(&refreshed))
        .expect(1)
        .mount(&server)
        .await;
    // Each country's list is fetched once and then reused for an hour.
    for country in ["DE", "AT"] {
        Mock::given(method("GET"))
            .and(path("/institutions/"))
            .and(wiremock::matchers::query_param("country", country))
            .respond_with(json(&fixture(
                "InstitutionsEndpointMockData",
                "GetInstitutions",
            )))
            .expect(1)
            .mount(&server)
            .await;
    }
    let uri = server.uri();
    let (first, again, second, bad) = tokio::task::spawn_blocking(move || {
        let connector = GoCardlessConnector::new(GoCardlessConfig {
            base_url: uri,
            secret_id: "operator".into(),
            secret_key: SECRET_KEY.into(),
            timeout: Duration::from_secs(5),
        })
        .unwrap();
        (
            connector.institutions("de"),
            connector.institutions("DE"),
            connector.institutions("AT"),
            connector.institutions("Germany"),
        )
    })
    .await
    .unwrap();
    let banks = first.unwrap();
    assert!(!banks.is_empty());
    assert_eq!(
        (banks[0].id.as_str(), banks[0].name.as_str()),
        ("N26_NTSBDEB1", "N26 Bank")
    );
    assert_eq!(again.unwrap(), banks, "from the cache");
    assert_eq!(second.unwrap(), banks);
    assert!(matches!(bad, Err(ConnectorError::Misconfigured(_))));
    // One new token, then one refresh for the second fetch, and one fetch
    // per country: checked here.
    server.verify().await;
}
