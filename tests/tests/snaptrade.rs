//! SnapTrade against its local fake (`tributary_e2e::snaptrade`), which
//! checks every request's signature the way SnapTrade's guide describes, on
//! SQLite and PostgreSQL: the Connection Portal, the first sync, a second
//! that changes nothing, a second brokerage behind the same connection
//! (each account at its own), the fault matrix with nothing stored lost, a
//! broken brokerage connection and its repair in place, and the holdings
//! read through the Personal API matching the fake's records.

// Test code: a failed unwrap is a failed test, with its message.
#![allow(clippy::unwrap_used)]

use chrono::Utc;
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;
use tributary_domain::access::Viewer;
use tributary_domain::clock::{Clock, ManualClock};
use tributary_domain::ids::{ConnectionId, UserId};
use tributary_domain::model::{ConnectionStatus, SyncJobKind};
use tributary_domain::money::parse_decimal;
use tributary_e2e::providers::{
    Matrix, case, engine_with, holdings_through_the_personal_api, investment_lines,
    run_fault_matrix, test_keyring, transaction_lines,
};
use tributary_e2e::snaptrade::{Fault, POSITIONS, SnapTradeFake, return_from_the_portal};
use tributary_providers::sync::{SyncEngine, SyncOutcome};
use tributary_providers::{AuthorizationReturn, ConnectRequest, Connector, ConnectorError};
use tributary_storage::read;
use tributary_storage::testing::{TestDatabase, dump};
use tributary_storage::{Database, connections, users};

const RETURN_URL: &str = "https://tributary.example/connect/snaptrade/return";

fn request() -> ConnectRequest {
    ConnectRequest {
        settings: serde_json::json!({"redirect": RETURN_URL}),
        secret: None,
    }
}

/// Through the portal `link` (on the scenario's blocking thread).
fn through_the_portal(link: &str) -> AuthorizationReturn {
    let back = tokio::runtime::Handle::current().block_on(return_from_the_portal(link));
    assert_eq!(back, RETURN_URL);
    AuthorizationReturn::default()
}

fn connect(engine: &SyncEngine, user: UserId) -> ConnectionId {
    let connection = engine
        .connect(user, tributary_providers::snaptrade::PROVIDER, &request())
        .unwrap();
    let link = connection.settings["link"].as_str().unwrap().to_owned();
    engine
        .complete_authorization(connection.id, &through_the_portal(&link))
        .unwrap();
    connection.id
}

/// (account name, institution, logo) of the user's accounts.
fn banks(db: &Database, user: UserId) -> Vec<(String, String, Option<String>)> {
    read::list_accounts(&mut db.conn().unwrap(), &Viewer::whole_user(user))
        .unwrap()
        .into_iter()
        .map(|a| (a.name, a.institution_name, a.institution_logo))
        .collect()
}

#[actix_web::test]
async fn the_portal_sync_two_brokerages_every_fault_and_a_repaired_connection() {
    for database in TestDatabase::all() {
        eprintln!("-- on {:?}", database.backend());
        let fake = SnapTradeFake::start().await;
        let patient = fake.connector(Duration::from_secs(30));
        let impatient = fake.connector(Duration::from_secs(1));
        let db = database.db().clone();
        let fake_for_thread = fake.clone();
        actix_web::rt::task::spawn_blocking(move || {
            scenario(&db, &fake_for_thread, patient, impatient);
        })
        .await
        .unwrap();
        assert_eq!(
            fake.refused(),
            0,
            "every request was signed as the guide says"
        );
    }
}

fn scenario(
    db: &Database,
    fake: &SnapTradeFake,
    patient: Arc<dyn Connector>,
    impatient: Arc<dyn Connector>,
) {
    let clock = Arc::new(ManualClock::new(Utc::now()));
    let keyring = test_keyring();
    let engine = engine_with(db, clock.clone(), &keyring, patient);
    let impatient = engine_with(db, clock.clone(), &keyring, impatient);
    let user = users::create_personal_user(
        &mut db.conn().unwrap(),
        "investor@example.com",
        clock.now().naive_utc(),
    )
    .unwrap()
    .id;
    let connection = connect(&engine, user);
    let record = connections::get_connection(&mut db.conn().unwrap(), connection).unwrap();
    assert_eq!(record.institution_name, "Robinhood");
    assert!(
        !dump(db).contains("tributary-"),
        "the SnapTrade user is sealed"
    );
    let sync = |engine: &SyncEngine| {
        engine
            .sync_now(connection, SyncJobKind::OnDemand, "test")
            .unwrap()
    };

    let SyncOutcome::Synced { summary, .. } = sync(&engine) else {
        panic!("the first sync failed")
    };
    assert_eq!((summary.accounts_seen, summary.holdings_replaced), (1, 2));
    let first = transaction_lines(db, user);
    assert_eq!(
        first,
        [
            "Robinhood Individual -1296.225 false Some(\"AAPL\") Some(\"BUY: Bought 10.5 AAPL\")",
            "Robinhood Individual -304.76 false Some(\"BTC\") Some(\"BUY: Bought BTC\")",
            "Robinhood Individual 0 false Some(\"AAPL\") Some(\"SPLIT: Stock split\")",
            "Robinhood Individual 2.63 false Some(\"AAPL\") Some(\"DIVIDEND: AAPL dividend\")",
            "Robinhood Individual 5000 false None Some(\"CONTRIBUTION: Deposit\")",
        ],
        "every activity, the split without cash kept at zero"
    );
    // The same activities as investment activity, but the deposit (cash).
    assert_eq!(
        investment_lines(db, user),
        [
            "BUY AAPL 10.5 123.45 -1296.225",
            "BUY BTC 0.00314159 97012.33 -304.76",
            "DIVIDEND AAPL None None 2.63",
            "SPLIT AAPL None None 0",
        ]
    );
    let SyncOutcome::Synced { summary, .. } = sync(&engine) else {
        panic!("the second sync failed")
    };
    assert_eq!(
        (
            summary.transactions_added,
            summary.transactions_updated,
            summary.transactions_removed,
            summary.investment_transactions_added,
            summary.investment_transactions_updated,
        ),
        (0, 0, 0, 0, 0)
    );

    // A second brokerage behind the same connection: each account is at
    // its own.
    let again = engine.reconnect(connection, &request()).unwrap();
    let link = again.settings["link"].as_str().unwrap().to_owned();
    engine
        .complete_authorization(connection, &through_the_portal(&link))
        .unwrap();
    clock.advance(chrono::Duration::days(1));
    assert!(matches!(sync(&engine), SyncOutcome::Synced { .. }));
    let logo = |slug: &str| {
        Some(format!(
            "https://passiv-brokerage-logos.s3.ca-central-1.amazonaws.com/{slug}-logo-square.png"
        ))
    };
    assert_eq!(
        banks(db, user),
        [
            (
                "Robinhood Individual".into(),
                "Robinhood".into(),
                logo("robinhood")
            ),
            (
                "Questrade Individual".into(),
                "Questrade".into(),
                logo("questrade")
            ),
        ]
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
            case(Fault::Busy, false, true, ConnectionStatus::Error),
            case(Fault::Malformed, false, false, ConnectionStatus::Error),
        ],
        |fault| fake.set_fault(fault),
        || clock.advance(chrono::Duration::days(1)),
        |fault, _, retry_at| {
            if fault == Fault::RateLimited {
                // Not before SnapTrade's reset (7 s).
                let earliest = clock.now().naive_utc() + chrono::Duration::seconds(7);
                assert!(retry_at.unwrap() >= earliest, "{retry_at:?}");
            }
        },
    );

    // The brokerage connections break: the user must reconnect, and what
    // is stored stays.
    let stored = transaction_lines(db, user);
    fake.disable_connections();
    clock.advance(chrono::Duration::days(1));
    let SyncOutcome::ProviderFailed {
        error: ConnectorError::ReauthRequired(why),
        ..
    } = sync(&engine)
    else {
        panic!("a broken connection needs the user")
    };
    assert!(why.contains("Robinhood"), "{why}");
    assert_eq!(transaction_lines(db, user), stored);
    // Repaired in place (`reconnect`): the same accounts, the same data.
    let again = engine.reconnect(connection, &request()).unwrap();
    let link = again.settings["link"].as_str().unwrap().to_owned();
    engine
        .complete_authorization(connection, &through_the_portal(&link))
        .unwrap();
    clock.advance(chrono::Duration::days(1));
    let SyncOutcome::Synced { summary, .. } = sync(&engine) else {
        panic!("the sync after the repair failed")
    };
    assert_eq!(summary.accounts_created, 0);
    assert_eq!(transaction_lines(db, user), stored);
}

#[actix_web::test]
async fn holdings_read_through_the_personal_api_match_snaptrades_positions() {
    for database in TestDatabase::all() {
        eprintln!("-- on {:?}", database.backend());
        let fake = SnapTradeFake::start().await;
        let connector = fake.connector(Duration::from_secs(30));
        let server = tributary_e2e::start_with(database, vec![connector.clone()]);
        let (account, served) =
            holdings_through_the_personal_api(&server, connector, connect, "Robinhood Individual")
                .await;
        assert_eq!(account["provider"], "snaptrade");
        assert_eq!(account["institution_name"], "Robinhood");
        let positions: Value = serde_json::from_str(POSITIONS).unwrap();
        let holdings = served["holdings"].as_array().unwrap();
        assert_eq!(holdings.len(), 2, "{served}");
        let exact = |v: &Value| parse_decimal(&v.to_string().replace('"', "")).unwrap();
        for position in positions["results"].as_array().unwrap() {
            let instrument = &position["instrument"];
            let held = holdings
                .iter()
                .find(|h| h["security"]["tickerSymbol"] == instrument["symbol"])
                .unwrap_or_else(|| panic!("{} is served: {served}", instrument["symbol"]));
            let units = exact(&position["units"]);
            let price = exact(&position["price"]);
            assert_eq!(exact(&held["quantity"]), units);
            assert_eq!(exact(&held["price"]), price);
            assert_eq!(
                exact(&held["value"]),
                units * price,
                "value = units × price"
            );
            match position["cost_basis"].as_str() {
                Some(per_unit) => assert_eq!(
                    exact(&held["costBasis"]),
                    parse_decimal(per_unit).unwrap() * units,
                    "SnapTrade's cost basis is per unit"
                ),
                None => assert!(held["costBasis"].is_null()),
            }
            assert_eq!(held["currency"], position["currency"]);
            assert_eq!(held["security"]["name"], instrument["description"]);
            assert_eq!(
                held["security"]["figi"],
                instrument["figi_instrument"]
                    .get("figi_code")
                    .cloned()
                    .unwrap_or(Value::Null)
            );
            assert_eq!(held["raw"], *position, "SnapTrade's record, verbatim");
        }
        assert_eq!(fake.refused(), 0);
        server.stop().await;
    }
}
