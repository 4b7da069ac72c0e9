//! Starling against its local fake (`tributary_e2e::starling`), on SQLite
//! and PostgreSQL: a wrong token refused at once, the first sync (signs
//! from the direction, the UK day, items that moved no money left out), a
//! second that changes nothing, a pending payment that settles under its
//! uid without a duplicate, a released authorisation gone, the fault
//! matrix with nothing stored lost, and a revoked token needing the user,
//! repaired with a new token keeping the accounts and their data.

// Test code: a failed unwrap is a failed test, with its message.
#![allow(clippy::unwrap_used)]

use chrono::Utc;
use tributary_domain::access::Viewer;
use tributary_domain::model::{AccountKind, ConnectionStatus, SyncJobKind};
use tributary_e2e::providers::{
    Bench, FaultCase, Matrix, a_revoked_token_is_replaced, connect_with_a_token,
    on_every_backend_against, run_fault_matrix, token_request, transaction_lines,
};
use tributary_e2e::starling::{ACCOUNTS_ONLY_TOKEN, Fault, NEW_TOKEN, StarlingFake, TOKEN};
use tributary_providers::ConnectorError;
use tributary_providers::sync::{SyncEngine, SyncError, SyncOutcome};
use tributary_storage::Database;
use tributary_storage::read;

#[actix_web::test]
async fn a_token_syncs_settles_a_pending_payment_and_meets_every_fault() {
    on_every_backend_against(StarlingFake::start, scenario).await;
}

fn scenario(db: &Database, fake: &StarlingFake) {
    let Bench {
        clock,
        engine,
        impatient,
        user,
    } = Bench::against(
        db,
        |timeout| fake.connector(timeout),
        "londoner@example.com",
    );
    let starling = tributary_providers::starling::PROVIDER;

    // A token without the scopes a sync reads with is refused, naming them.
    let Err(SyncError::Connect(ConnectorError::InvalidCredentials(why))) =
        engine.connect(user, starling, &token_request(ACCOUNTS_ONLY_TOKEN))
    else {
        panic!("a token without the balance and transaction scopes connects nothing")
    };
    assert!(why.contains("balance:read, transaction:read"), "{why}");
    let connection = connect_with_a_token(
        &engine,
        (db, user),
        starling,
        (&token_request("not-a-token"), &token_request(TOKEN)),
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
    let first = transaction_lines(db, user);
    assert_eq!(
        first,
        [
            "Euro 100.50 false Some(\"Ada Lovelace\") Some(\"Dinner share\")",
            "Personal -11.99 true Some(\"Spotify\") Some(\"SPOTIFY P1234\")",
            "Personal -150.00 true Some(\"Premier Inn\") Some(\"PREMIER INN HOLD\")",
            "Personal -20.00 true Some(\"Council Tax\") Some(\"COUNCIL TAX OCT\")",
            "Personal -29.99 false Some(\"Shoe Shop\") Some(\"SHOE SHOP\")",
            "Personal -3.40 false Some(\"Night Bus Cafe\") Some(\"NIGHT BUS CAFE\")",
            "Personal -42.50 false Some(\"Tesco\") Some(\"TESCO STORES 2041\")",
            "Personal 2500.00 false Some(\"Acme Ltd\") Some(\"SALARY NOV\")",
            "Personal 29.99 false Some(\"Shoe Shop\") Some(\"REFUND SHOE SHOP\")",
        ],
        "signed by direction, in pounds and euros; a retried payment pending, a refunded one \
         posted; declined, upcoming, cancelled and card-check items left out"
    );
    let accounts = read::list_accounts(&mut db.conn().unwrap(), &Viewer::whole_user(user)).unwrap();
    let kinds: Vec<(&str, AccountKind, &str)> = accounts
        .iter()
        .map(|a| (a.name.as_str(), a.kind, a.currency.as_str()))
        .collect();
    assert_eq!(
        kinds,
        [
            ("Personal", AccountKind::Checking, "GBP"),
            ("Euro", AccountKind::Checking, "EUR"),
        ]
    );
    let personal = accounts[0].id;
    let listed = read::list_transactions(
        &mut db.conn().unwrap(),
        personal,
        &Default::default(),
        None,
        None,
    )
    .unwrap();
    // 23:30 UTC on 14 July is 00:30 on 15 July in London.
    let night = listed
        .iter()
        .find(|t| t.amount.to_string() == "-3.40")
        .unwrap();
    assert_eq!(night.date.to_string(), "2026-07-15");
    let balance = read::latest_balance(&mut db.conn().unwrap(), personal)
        .unwrap()
        .unwrap();
    // 1000.00 opening + 2500.00 - 3.40 - 42.50 cleared; the two pending
    // payments (161.99) off the available.
    assert_eq!(balance.amount.to_string(), "3454.10");
    assert_eq!(balance.available.unwrap().to_string(), "3292.11");

    // Nothing changed: nothing changes (the summer item is outside the
    // window now, and stays). The feed is read from 35 days back, or from
    // the payment retried for seven weeks, pending all along: out of
    // sight, it would be taken for gone.
    clock.advance(chrono::Duration::hours(1));
    let SyncOutcome::Synced { summary, .. } = sync(&engine) else {
        panic!("the second sync failed")
    };
    assert_eq!(
        (
            summary.transactions_added,
            summary.transactions_updated,
            summary.transactions_removed
        ),
        (0, 0, 0)
    );
    assert_eq!(transaction_lines(db, user), first);
    let since = fake.last_changes_since().unwrap();
    assert!(since <= Utc::now() - chrono::Duration::days(49), "{since}");
    assert!(since > Utc::now() - chrono::Duration::days(60), "{since}");

    // The pending payment settles under its uid: the same row, posted; the
    // hotel releases its hold: the pending row goes.
    fake.settle_the_pending();
    fake.release_the_hold();
    clock.advance(chrono::Duration::hours(1));
    let SyncOutcome::Synced { summary, .. } = sync(&engine) else {
        panic!("the third sync failed")
    };
    assert_eq!(
        (
            summary.transactions_added,
            summary.transactions_updated,
            summary.transactions_removed
        ),
        (0, 1, 1),
        "{summary:?}"
    );
    let settled = transaction_lines(db, user);
    assert_eq!(settled.len(), first.len() - 1, "no duplicate, no hold");
    assert!(
        settled.contains(
            &"Personal -11.99 false Some(\"Spotify\") Some(\"SPOTIFY P1234\")".to_owned()
        )
    );
    assert!(!settled.iter().any(|l| l.contains("Premier Inn")));

    let case = |fault, impatient, transient| FaultCase {
        fault,
        impatient,
        transient,
        status: ConnectionStatus::Error,
    };
    let at = Matrix {
        db,
        user,
        connection,
        engine: &engine,
        impatient: &impatient,
    };
    run_fault_matrix(
        at,
        &[
            case(Fault::Slow, true, true),
            case(Fault::ServerError, false, true),
            case(Fault::RateLimited, false, true),
            case(Fault::Malformed, false, false),
            case(Fault::UnknownStatus, false, false),
        ],
        |fault| fake.set_fault(fault),
        || clock.advance(chrono::Duration::hours(1)),
        |fault, error, _| {
            if fault == Fault::UnknownStatus {
                assert!(error.to_string().contains("SOMETHING_NEW"), "{error}");
            }
        },
    );

    // The person revokes the token: the user is needed, the data stays;
    // a new token repairs the connection.
    a_revoked_token_is_replaced(
        at,
        (|| fake.revoke(), || fake.issue_new_token()),
        &token_request(NEW_TOKEN),
        || clock.advance(chrono::Duration::hours(1)),
    );
}
