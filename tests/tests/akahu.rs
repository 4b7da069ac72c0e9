//! Akahu against its local fake (`tributary_e2e::akahu`), on SQLite and
//! PostgreSQL: a personal app's tokens (wrong ones refused at once), the
//! first sync (each account at its own bank), a second that changes
//! nothing, refreshes kept to the rest period, a pending purchase that
//! settles under a new id without a duplicate, the fault matrix with
//! nothing stored lost, lost bank access (INACTIVE) and a revoked token
//! needing the user; and the full-app OAuth mode (declined, then granted).

// Test code: a failed unwrap is a failed test, with its message.
#![allow(clippy::unwrap_used)]

use chrono::Utc;
use std::sync::Arc;
use std::time::Duration;
use tributary_domain::access::Viewer;
use tributary_domain::clock::{Clock, ManualClock};
use tributary_domain::model::{ConnectionStatus, SyncJobKind};
use tributary_e2e::akahu::{AkahuFake, Fault, PERSONAL_APP_TOKEN, PERSONAL_USER_TOKEN};
use tributary_e2e::providers::{
    Matrix, case, engine_with, run_fault_matrix, test_keyring, transaction_lines,
};
use tributary_providers::sync::{SyncEngine, SyncError, SyncOutcome};
use tributary_providers::{AuthorizationReturn, ConnectRequest, Connector, ConnectorError};
use tributary_storage::read;
use tributary_storage::testing::{TestDatabase, dump};
use tributary_storage::{Database, connections, users};

const RETURN_URL: &str = "https://tributary.example/connect/akahu/return";

fn personal(user_token: &str) -> ConnectRequest {
    ConnectRequest {
        settings: serde_json::json!({"app_token": PERSONAL_APP_TOKEN}),
        secret: Some(user_token.to_owned()),
    }
}

#[actix_web::test]
async fn a_personal_app_syncs_settles_a_pending_and_meets_every_fault() {
    for database in TestDatabase::all() {
        eprintln!("-- on {:?}", database.backend());
        let fake = AkahuFake::start().await;
        let patient = fake.connector(Duration::from_secs(30), false);
        let impatient = fake.connector(Duration::from_secs(1), false);
        let db = database.db().clone();
        let fake_for_thread = fake.clone();
        actix_web::rt::task::spawn_blocking(move || {
            scenario(&db, &fake_for_thread, patient, impatient);
        })
        .await
        .unwrap();
    }
}

fn scenario(
    db: &Database,
    fake: &AkahuFake,
    patient: Arc<dyn Connector>,
    impatient: Arc<dyn Connector>,
) {
    let clock = Arc::new(ManualClock::new(Utc::now()));
    let keyring = test_keyring();
    let engine = engine_with(db, clock.clone(), &keyring, patient);
    let impatient = engine_with(db, clock.clone(), &keyring, impatient);
    let user = users::create_personal_user(
        &mut db.conn().unwrap(),
        "kiwi@example.com",
        clock.now().naive_utc(),
    )
    .unwrap()
    .id;

    // Wrong tokens are refused before anything is stored.
    let Err(SyncError::Connect(ConnectorError::InvalidCredentials(_))) = engine.connect(
        user,
        tributary_providers::akahu::PROVIDER,
        &personal("user_token_wrong"),
    ) else {
        panic!("a wrong user token connects nothing")
    };
    let connection = engine
        .connect(
            user,
            tributary_providers::akahu::PROVIDER,
            &personal(PERSONAL_USER_TOKEN),
        )
        .unwrap()
        .id;
    assert!(
        !dump(db).contains(PERSONAL_USER_TOKEN),
        "the token is sealed"
    );
    let sync = |engine: &SyncEngine| {
        engine
            .sync_now(connection, SyncJobKind::OnDemand, "test")
            .unwrap()
    };

    let SyncOutcome::Synced { summary, .. } = sync(&engine) else {
        panic!("the first sync failed")
    };
    assert_eq!(summary.accounts_seen, 2);
    assert_eq!(fake.refreshes(), 1, "a first sync asks for fresh data");
    let first = transaction_lines(db, user);
    assert_eq!(
        first,
        [
            "ASB Visa Light -42.1 true None Some(\"COUNTDOWN AUCKLAND\")",
            "ASB Visa Light -61.37 false None Some(\"Z ENERGY\")",
            "Westpac Choice -5.5 false Some(\"The Warehouse\") Some(\"THE WAREHOUSE\")",
            "Westpac Choice 2500 false None Some(\"SALARY ACME LTD\")",
        ],
        "every page read, past the empty one"
    );
    let accounts = read::list_accounts(&mut db.conn().unwrap(), &Viewer::whole_user(user)).unwrap();
    let banks: Vec<(&str, &str, Option<&str>)> = accounts
        .iter()
        .map(|a| {
            (
                a.name.as_str(),
                a.institution_name.as_str(),
                a.mask.as_deref(),
            )
        })
        .collect();
    assert_eq!(
        banks,
        [
            ("Westpac Choice", "Westpac", Some("0000")),
            ("ASB Visa Light", "ASB", Some("5678")),
        ],
        "each account at its own bank"
    );
    // The card's limit (Akahu's `balance.limit`); the checking account owes nothing.
    let limits: Vec<Option<String>> = accounts
        .iter()
        .map(|a| a.liability.credit_limit.map(|l| l.to_string()))
        .collect();
    assert_eq!(limits, [None, Some("2000".to_owned())]);

    // Within the hour: no refresh asked; nothing changed.
    clock.advance(chrono::Duration::minutes(20));
    let SyncOutcome::Synced { summary, .. } = sync(&engine) else {
        panic!("the second sync failed")
    };
    assert_eq!(
        fake.refreshes(),
        1,
        "a personal app refreshes at most hourly"
    );
    assert_eq!(
        (
            summary.transactions_added,
            summary.transactions_updated,
            summary.transactions_removed
        ),
        (0, 0, 0)
    );

    // The pending purchase settles under an id of its own: the same row.
    fake.settle_the_pending();
    clock.advance(chrono::Duration::hours(1));
    let SyncOutcome::Synced { summary, .. } = sync(&engine) else {
        panic!("the third sync failed")
    };
    assert_eq!(fake.refreshes(), 2);
    assert_eq!(summary.posted_from_pending, 1, "{summary:?}");
    let settled = transaction_lines(db, user);
    assert_eq!(settled.len(), first.len(), "no duplicate");
    assert!(
        settled.contains(
            &"ASB Visa Light -42.1 false None Some(\"COUNTDOWN AUCKLAND NZ\")".to_owned()
        )
    );

    run_fault_matrix(
        Matrix {
            db,
            user,
            connection,
            engine: &engine,
            impatient: &impatient,
        },
        &[
            case(Fault::Slow, true, true, ConnectionStatus::Error),
            case(Fault::ServerError, false, true, ConnectionStatus::Error),
            case(Fault::RateLimited, false, true, ConnectionStatus::Error),
            case(Fault::Malformed, false, false, ConnectionStatus::Error),
            case(
                Fault::Inactive,
                false,
                false,
                ConnectionStatus::ReauthRequired,
            ),
        ],
        |fault| fake.set_fault(fault),
        || {},
        |_, _, _| {},
    );
    // A revoked token needs the user too; what is stored stays.
    fake.set_fault(Some(Fault::Revoked));
    let SyncOutcome::ProviderFailed {
        error: ConnectorError::ReauthRequired(_),
        ..
    } = sync(&engine)
    else {
        panic!("a revoked token needs the user")
    };
    fake.set_fault(None);
    assert_eq!(transaction_lines(db, user), settled);
    // Connecting again with the tokens repairs it, data kept.
    engine
        .reconnect(connection, &personal(PERSONAL_USER_TOKEN))
        .unwrap();
    assert!(matches!(sync(&engine), SyncOutcome::Synced { .. }));
    assert_eq!(transaction_lines(db, user), settled);
    let record = connections::get_connection(&mut db.conn().unwrap(), connection).unwrap();
    assert_eq!(record.status, ConnectionStatus::Active);
}

#[actix_web::test]
async fn a_full_app_connects_through_akahus_oauth() {
    for database in TestDatabase::all() {
        eprintln!("-- on {:?}", database.backend());
        let fake = AkahuFake::start().await;
        let connector = fake.connector(Duration::from_secs(30), true);
        let db = database.db().clone();
        actix_web::rt::task::spawn_blocking(move || {
            let clock = Arc::new(ManualClock::new(Utc::now()));
            let engine = engine_with(&db, clock.clone(), &test_keyring(), connector);
            let user = users::create_personal_user(
                &mut db.conn().unwrap(),
                "oauth@example.com",
                clock.now().naive_utc(),
            )
            .unwrap()
            .id;
            let request = ConnectRequest {
                settings: serde_json::json!({"redirect": RETURN_URL}),
                secret: None,
            };
            let consent = |deny: bool| {
                let connection = engine
                    .connect(user, tributary_providers::akahu::PROVIDER, &request)
                    .unwrap();
                let link = connection.settings["link"].as_str().unwrap().to_owned();
                let link = if deny { format!("{link}&deny=1") } else { link };
                let back = tokio::runtime::Handle::current()
                    .block_on(tributary_e2e::fakes::sent_back_from(&link));
                assert!(back.starts_with(RETURN_URL), "{back}");
                let back = url::Url::parse(&back).unwrap();
                (
                    connection.id,
                    AuthorizationReturn::new(back.query_pairs().into_owned()),
                )
            };
            let (declined, returned) = consent(true);
            let Err(SyncError::Connect(ConnectorError::InvalidCredentials(why))) =
                engine.complete_authorization(declined, &returned)
            else {
                panic!("a declined consent connects nothing")
            };
            assert!(why.contains("declined"), "{why}");
            engine.disconnect(declined).unwrap();
            let (connection, returned) = consent(false);
            engine
                .complete_authorization(connection, &returned)
                .unwrap();
            // The code is used once.
            assert!(
                engine
                    .complete_authorization(connection, &returned)
                    .is_err()
            );
            let SyncOutcome::Synced { summary, .. } = engine
                .sync_now(connection, SyncJobKind::Initial, "test")
                .unwrap()
            else {
                panic!("the first sync failed")
            };
            assert_eq!(summary.accounts_seen, 2);
            assert!(!dump(&db).contains("user_token_"), "the token is sealed");
        })
        .await
        .unwrap();
    }
}
