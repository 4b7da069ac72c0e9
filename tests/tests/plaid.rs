//! Plaid against its local fake (`tributary_e2e::plaid`), on SQLite and
//! PostgreSQL: Hosted Link (connected, or left without a bank), the first
//! sync, a second that changes nothing, a pending purchase that posts
//! without a duplicate, a listing that changes between its pages, the
//! fault matrix with nothing stored lost, re-authentication in update mode
//! (the same Item, accounts and data), and the holdings read through the
//! Personal API matching the fake's records field by field.

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
use tributary_e2e::plaid::{Fault, HOLDINGS, PlaidFake, return_from_plaid};
use tributary_e2e::providers::{
    Matrix, case, engine_with, holdings_through_the_personal_api, run_fault_matrix, test_keyring,
    transaction_lines,
};
use tributary_providers::sync::{SyncEngine, SyncError, SyncOutcome};
use tributary_providers::{AuthorizationReturn, ConnectRequest, Connector, ConnectorError};
use tributary_storage::read;
use tributary_storage::testing::{TestDatabase, dump};
use tributary_storage::{Database, connections, users};

const RETURN_URL: &str = "https://tributary.example/connect/plaid/return";

fn request() -> ConnectRequest {
    ConnectRequest {
        settings: serde_json::json!({"redirect": RETURN_URL}),
        secret: None,
    }
}

/// Plaid's page, as the user's browser sees it (on the scenario's blocking
/// thread: the fake answers on the test's runtime).
fn at_plaid(link: &str, leave: bool) -> AuthorizationReturn {
    let back = tokio::runtime::Handle::current().block_on(return_from_plaid(link, leave));
    assert_eq!(
        back, RETURN_URL,
        "no parameters are documented on the return"
    );
    AuthorizationReturn::default()
}

/// Connects through Hosted Link; the connection's id.
fn connect(engine: &SyncEngine, user: UserId) -> ConnectionId {
    let connection = engine
        .connect(user, tributary_providers::plaid::PROVIDER, &request())
        .unwrap();
    let link = connection.settings["link"].as_str().unwrap().to_owned();
    engine
        .complete_authorization(connection.id, &at_plaid(&link, false))
        .unwrap();
    connection.id
}

#[actix_web::test]
async fn hosted_link_sync_post_a_pending_every_fault_and_update_mode() {
    for database in TestDatabase::all() {
        eprintln!("-- on {:?}", database.backend());
        let fake = PlaidFake::start().await;
        let patient = fake.connector(Duration::from_secs(30));
        let impatient = fake.connector(Duration::from_secs(1));
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
    fake: &PlaidFake,
    patient: Arc<dyn Connector>,
    impatient: Arc<dyn Connector>,
) {
    let clock = Arc::new(ManualClock::new(Utc::now()));
    let keyring = test_keyring();
    let engine = engine_with(db, clock.clone(), &keyring, patient);
    let impatient = engine_with(db, clock.clone(), &keyring, impatient);
    let user = users::create_personal_user(
        &mut db.conn().unwrap(),
        "us@example.com",
        clock.now().naive_utc(),
    )
    .unwrap()
    .id;

    // The user leaves Plaid's pages without a bank: said, nothing kept.
    let left = engine
        .connect(user, tributary_providers::plaid::PROVIDER, &request())
        .unwrap();
    let link = left.settings["link"].as_str().unwrap().to_owned();
    let Err(SyncError::Connect(ConnectorError::InvalidCredentials(why))) =
        engine.complete_authorization(left.id, &at_plaid(&link, true))
    else {
        panic!("leaving connects nothing")
    };
    assert!(why.contains("left"), "{why}");
    engine.disconnect(left.id).unwrap();

    // Connected: the bank the user chose names the connection; the token
    // is sealed.
    let connection = connect(&engine, user);
    let record = connections::get_connection(&mut db.conn().unwrap(), connection).unwrap();
    assert_eq!(record.institution_name, "First Platypus Bank");
    assert!(
        !dump(db).contains("access-sandbox-"),
        "the access token is sealed"
    );

    let sync = |engine: &SyncEngine| {
        engine
            .sync_now(connection, SyncJobKind::OnDemand, "test")
            .unwrap()
    };
    let SyncOutcome::Synced { summary, .. } = sync(&engine) else {
        panic!("the first sync failed")
    };
    assert_eq!(summary.accounts_seen, 3);
    assert_eq!(
        summary.investment_transactions_added, 5,
        "the 401k's activity, read in pages of two"
    );
    let first = transaction_lines(db, user);
    assert_eq!(
        first,
        [
            "Plaid Checking -72.1 false Some(\"Walmart\") Some(\"PURCHASE WM SUPERCENTER #1700\")",
            "Plaid Checking 2500 false None Some(\"ACME PAYROLL\")",
            "Plaid Credit Card -23.6319805 false None Some(\"Interest-bearing thing\")",
            "Plaid Credit Card -5.4 true Some(\"Uber\") Some(\"Uber 063015 SF**POOL**\")",
        ],
        "Plaid's positive amounts are money out; every decimal kept"
    );
    {
        let conn = &mut *db.conn().unwrap();
        let accounts = read::list_accounts(conn, &Viewer::whole_user(user)).unwrap();
        let card = accounts
            .iter()
            .find(|a| a.name == "Plaid Credit Card")
            .unwrap();
        let balance = read::latest_balance(conn, card.id).unwrap().unwrap();
        assert_eq!(
            balance.amount.to_string(),
            "-410",
            "a card's balance is owed"
        );
        let checking = accounts
            .iter()
            .find(|a| a.name == "Plaid Checking")
            .unwrap();
        let balance = read::latest_balance(conn, checking.id).unwrap().unwrap();
        assert_eq!(
            (
                balance.amount.to_string(),
                balance.available.map(|a| a.to_string())
            ),
            ("110.94".to_owned(), Some("100".to_owned()))
        );
        assert!(
            accounts
                .iter()
                .all(|a| a.institution_name == "First Platypus Bank")
        );
    }

    // Nothing changed: nothing changes.
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

    // The pending ride posts with its tip: the same row, posted.
    fake.post_the_pending();
    let SyncOutcome::Synced { summary, .. } = sync(&engine) else {
        panic!("the third sync failed")
    };
    assert_eq!(summary.posted_from_pending, 1, "{summary:?}");
    let posted = transaction_lines(db, user);
    assert_eq!(posted.len(), first.len(), "no duplicate");
    assert!(posted.contains(
        &"Plaid Credit Card -6.33 false Some(\"Uber\") Some(\"Uber 063015 SF**POOL**\")".to_owned()
    ));

    // The listing changes between two pages: read again from the start.
    fake.set_fault(Some(Fault::MutationDuringPagination));
    assert!(matches!(sync(&engine), SyncOutcome::Synced { .. }));
    assert_eq!(transaction_lines(db, user), posted);

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
            case(Fault::InstitutionDown, false, true, ConnectionStatus::Error),
            case(Fault::Malformed, false, false, ConnectionStatus::Error),
            case(
                Fault::LoginRequired,
                false,
                false,
                ConnectionStatus::ReauthRequired,
            ),
        ],
        |fault| fake.set_fault(fault),
        || {},
        |_, _, _| {},
    );

    // Update mode: Link with the Item's own token; the token stays, and
    // so do the accounts and their data.
    let again = engine.reconnect(connection, &request()).unwrap();
    assert_eq!(again.settings["update_mode"], true);
    let link = again.settings["link"].as_str().unwrap().to_owned();
    engine
        .complete_authorization(connection, &at_plaid(&link, false))
        .unwrap();
    let SyncOutcome::Synced { summary, .. } = sync(&engine) else {
        panic!("the sync after update mode failed")
    };
    assert_eq!(summary.accounts_created, 0);
    assert_eq!(transaction_lines(db, user), posted);
    let record = connections::get_connection(&mut db.conn().unwrap(), connection).unwrap();
    assert_eq!(record.status, ConnectionStatus::Active);
}

#[actix_web::test]
async fn holdings_read_through_the_personal_api_match_plaids_records_exactly() {
    for database in TestDatabase::all() {
        eprintln!("-- on {:?}", database.backend());
        let fake = PlaidFake::start().await;
        let connector = fake.connector(Duration::from_secs(30));
        let server = tributary_e2e::start_with(database, vec![connector.clone()]);
        let (account, served) =
            holdings_through_the_personal_api(&server, connector, connect, "Plaid 401k").await;
        assert_eq!(account["provider"], "plaid");
        assert_eq!(account["institution_name"], "First Platypus Bank");
        let plaid: Value = serde_json::from_str(HOLDINGS).unwrap();
        let holdings = served["holdings"].as_array().unwrap();
        assert_eq!(holdings.len(), 3, "{served}");
        for record in plaid["holdings"].as_array().unwrap() {
            let security = plaid["securities"]
                .as_array()
                .unwrap()
                .iter()
                .find(|s| s["security_id"] == record["security_id"])
                .unwrap();
            let held = holdings
                .iter()
                .find(|h| h["security"]["tickerSymbol"] == security["ticker_symbol"])
                .unwrap_or_else(|| panic!("{} is served: {served}", security["ticker_symbol"]));
            let number = |v: &Value| v.to_string();
            assert_eq!(number(&held["quantity"]), number(&record["quantity"]));
            assert_eq!(number(&held["price"]), number(&record["institution_price"]));
            assert_eq!(number(&held["value"]), number(&record["institution_value"]));
            assert_eq!(number(&held["costBasis"]), number(&record["cost_basis"]));
            assert_eq!(held["currency"], record["iso_currency_code"]);
            assert_eq!(held["security"]["name"], security["name"]);
            assert_eq!(held["security"]["isin"], security["isin"]);
            assert_eq!(held["security"]["cusp"], security["cusip"]);
            assert_eq!(held["security"]["currency"], security["iso_currency_code"]);
            assert_eq!(
                held["raw"]["holding"], *record,
                "the provider's record, verbatim"
            );
            assert_eq!(held["raw"]["security"], *security);
        }

        // The 401k's activity: each of Plaid's records, the cash amount
        // turned to Tributary's sign (negative when cash leaves).
        let activity: Value = reqwest::Client::new()
            .get(server.url(&format!(
                "/api/v1/accounts/{}/investment_transactions",
                account["id"]
            )))
            .header("x-api-key", &server.world.alice_key)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let served: Vec<(String, String, String, String, String)> =
            activity["investmentTransactions"]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| {
                    (
                        a["date"].as_str().unwrap().to_owned(),
                        a["type"].as_str().unwrap().to_owned(),
                        a["security"]["tickerSymbol"].to_string(),
                        a["quantity"].to_string(),
                        a["amount"].to_string(),
                    )
                })
                .collect();
        let line = |date: &str, kind: &str, ticker: &str, quantity: &str, amount: &str| {
            (
                date.to_owned(),
                kind.to_owned(),
                ticker.to_owned(),
                quantity.to_owned(),
                amount.to_owned(),
            )
        };
        assert_eq!(
            served,
            [
                line("2026-11-01", "OTHER", "\"USD\"", "500", "500"),
                line("2026-10-31", "FEE", "null", "null", "-1.5"),
                line("2026-10-15", "DIVIDEND", "\"MIPTX\"", "null", "4.12"),
                line("2026-10-09", "SELL", "\"DOGE\"", "-50", "8.874718"),
                line("2026-10-02", "BUY", "\"MIPTX\"", "10.123", "-275.35"),
            ],
            "{activity}"
        );
        assert_eq!(
            activity["investmentTransactions"][4]["fees"].to_string(),
            "0.01"
        );
        assert_eq!(
            activity["investmentTransactions"][0]["subtype"],
            "contribution"
        );

        // The card's terms: its limit from the balances, the rest from
        // /liabilities/get; accounts that owe nothing have none.
        let accounts: Value = reqwest::Client::new()
            .get(server.url("/api/v1/accounts"))
            .header("x-api-key", &server.world.alice_key)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let named = |name: &str| {
            accounts["accounts"]
                .as_array()
                .unwrap()
                .iter()
                .find(|a| a["name"] == name)
                .unwrap()
                .clone()
        };
        let card = named("Plaid Credit Card");
        assert_eq!(
            card["liability"].to_string(),
            r#"{"creditLimit":2000,"lastStatementBalance":410.00,"minimumPayment":20,"nextPaymentDueDate":"2026-11-25"}"#
        );
        assert!(named("Plaid 401k").get("liability").is_none());
        server.stop().await;
    }
}
