//! TrueLayer against its local fake (`tributary_e2e::truelayer`), through
//! the real sync engine, on SQLite and PostgreSQL: the banks of a country,
//! connect (the consent page and its return, a cancelled consent, a forged
//! state), the first sync (an account and a credit card, each signed as
//! TrueLayer documents it, the card's terms), a second that changes
//! nothing although TrueLayer's pending ids changed and the refresh token
//! was replaced (kept sealed at once), a pending payment that posts without
//! a duplicate, the fault matrix (slow, 5xx, rate limit, a malformed body,
//! an ended consent) losing nothing, and a re-authentication that keeps
//! the accounts and their data.

// Test code: a failed unwrap is a failed test, with its message.
#![allow(clippy::unwrap_used)]

use serde_json::json;
use std::time::Duration;
use tributary_domain::access::Viewer;
use tributary_domain::clock::Clock;
use tributary_domain::model::{ConnectionStatus, SyncJobKind};
use tributary_e2e::providers::{
    Bench, Matrix, case, consent_at, consenting_again_keeps_everything,
    not_before_the_next_utc_day, run_fault_matrix, transaction_lines,
};
use tributary_e2e::truelayer::{
    BANK, CLIENT_SECRET, Fault, TrueLayerFake, booked_transactions, days_ago,
};
use tributary_providers::sync::{SyncEngine, SyncError, SyncOutcome};
use tributary_providers::truelayer::PROVIDER;
use tributary_providers::{AuthorizationReturn, ConnectRequest, ConnectorError};
use tributary_storage::testing::{TestDatabase, dump};
use tributary_storage::{Database, read};

const RETURN_URL: &str = "https://tributary.example/connect/truelayer/return";

fn consent(link: &str, deny: bool) -> AuthorizationReturn {
    consent_at(link, deny, RETURN_URL)
}

fn request() -> ConnectRequest {
    ConnectRequest {
        settings: json!({"institution_id": BANK, "redirect": RETURN_URL}),
        secret: None,
    }
}

#[actix_web::test]
async fn connect_sync_post_a_pending_every_fault_and_reauthenticate() {
    for database in TestDatabase::all() {
        eprintln!("-- on {:?}", database.backend());
        let fake = TrueLayerFake::start().await;
        let connectors = (
            fake.connector(Duration::from_secs(30)),
            // Gives up after a second: only for the slow fault.
            fake.connector(Duration::from_secs(1)),
        );
        let db = database.db().clone();
        let fake_for_thread = fake.clone();
        actix_web::rt::task::spawn_blocking(move || {
            let bench = Bench::new(&db, connectors, "uk@example.com");
            scenario(&db, &fake_for_thread, &bench);
        })
        .await
        .unwrap();
    }
}

fn scenario(db: &Database, fake: &TrueLayerFake, bench: &Bench) {
    let Bench {
        clock,
        engine,
        impatient,
        user,
    } = bench;
    let user = *user;

    // The banks of a country, for the connect pages (TrueLayer's `uk` is
    // GB).
    let banks = engine.institutions(PROVIDER, "GB").unwrap();
    assert_eq!(
        banks.iter().map(|b| b.id.as_str()).collect::<Vec<_>>(),
        [BANK, "ob-monzo"]
    );

    let connection = engine.connect(user, PROVIDER, &request()).unwrap();
    let link = connection.settings["link"].as_str().unwrap().to_owned();
    let connection = connection.id;
    let sync = |engine: &SyncEngine| {
        engine
            .sync_now(connection, SyncJobKind::OnDemand, "test")
            .unwrap()
    };
    let SyncOutcome::ProviderFailed {
        error: ConnectorError::ReauthRequired(_),
        ..
    } = sync(engine)
    else {
        panic!("a sync before the consent must ask for it")
    };
    // Cancelled at the bank: refused in TrueLayer's words.
    let Err(SyncError::Connect(ConnectorError::InvalidCredentials(why))) =
        engine.complete_authorization(connection, &consent(&link, true))
    else {
        panic!("a cancelled consent completes nothing")
    };
    assert!(why.contains("cancelled at the bank"), "{why}");
    // Another connection's state is refused.
    let real = consent(&link, false);
    let forged = AuthorizationReturn::new([
        ("code".to_owned(), real.get("code").unwrap().to_owned()),
        ("state".to_owned(), "0".repeat(32)),
    ]);
    assert!(engine.complete_authorization(connection, &forged).is_err());

    // The consent: tokens sealed, the consent's end TrueLayer's.
    let record = engine.complete_authorization(connection, &real).unwrap();
    let ends = record.consent_expires_at.unwrap();
    let expected = (chrono::Utc::now() + chrono::Duration::days(90)).naive_utc();
    assert!(
        (ends - expected).num_minutes().abs() < 5,
        "{ends} vs {expected}"
    );
    assert!(
        record.settings.get("state").is_none(),
        "the state is used once"
    );
    assert!(engine.complete_authorization(connection, &real).is_err());

    // The first sync: the account and the card, amounts with the digits
    // TrueLayer sent (JSON numbers, read exactly).
    let SyncOutcome::Synced { summary, .. } = sync(engine) else {
        panic!("the first sync failed")
    };
    assert_eq!(summary.accounts_seen, 2);
    let first = transaction_lines(db, user);
    assert_eq!(
        first,
        [
            "Club Credit Card -18.0 false Some(\"Bookshop\") Some(\"BOOKSHOP\")",
            "Club Credit Card -3.2 true None Some(\"CAFE\")",
            "Club Credit Card 50.0 false None Some(\"PAYMENT RECEIVED - THANK YOU\")",
            "Club Lloyds -12.5 false Some(\"Coffee Roasters\") Some(\"COFFEE ROASTERS LONDON\")",
            "Club Lloyds -23.1 true Some(\"Grocer\") Some(\"GROCER KINGS CROSS\")",
            "Club Lloyds -4.0 false None Some(\"KIOSK\")",
            "Club Lloyds -4.0 false None Some(\"KIOSK\")",
            "Club Lloyds 2500.0 false None Some(\"SALARY ACME LTD\")",
        ],
        "a card purchase is money out, its payment money in; the two kiosk payments stay two"
    );
    {
        let conn = &mut *db.conn().unwrap();
        let accounts = read::list_accounts(conn, &Viewer::whole_user(user)).unwrap();
        let card = accounts
            .iter()
            .find(|a| a.name == "Club Credit Card")
            .unwrap();
        let current = accounts.iter().find(|a| a.name == "Club Lloyds").unwrap();
        assert_eq!(
            (current.mask.as_deref(), card.mask.as_deref()),
            (Some("1234"), Some("0044"))
        );
        assert_eq!(current.institution_name, "Lloyds");
        let owed = read::latest_balance(conn, card.id).unwrap().unwrap();
        assert_eq!(
            owed.amount.to_string(),
            "-21.0",
            "a card's balance is what is owed"
        );
        let liability = card.liability.clone();
        assert_eq!(
            (
                liability.credit_limit.map(|d| d.to_string()),
                liability.minimum_payment.map(|d| d.to_string()),
                liability.last_statement_balance.map(|d| d.to_string()),
            ),
            (
                Some("5500.0".into()),
                Some("5.0".into()),
                Some("420.0".into())
            )
        );
        let balance = read::latest_balance(conn, current.id).unwrap().unwrap();
        assert_eq!(
            (
                balance.amount.to_string(),
                balance.available.map(|a| a.to_string())
            ),
            ("1843.27".into(), Some("1820.17".into()))
        );
    }
    // Nothing secret in plain text: the client's secret, the tokens.
    let stored = dump(db);
    for secret in [CLIENT_SECRET, "refresh_token", "GB35LOYD"] {
        assert!(!stored.contains(secret), "{secret} is stored in plain text");
    }

    // A second sync: the refresh token was replaced and TrueLayer's
    // pending ids changed; nothing changes here.
    let SyncOutcome::Synced { summary, .. } = sync(engine) else {
        panic!("the second sync failed: the replaced refresh token was not kept?")
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

    // The grocer's payment is booked, under an id of its own: the same row,
    // posted.
    let mut booked = booked_transactions();
    booked.push(
        json!({"transaction_id": "tl-9", "normalised_provider_transaction_id": "txn-009",
        "timestamp": days_ago(0), "description": "GROCER KINGS CROSS", "amount": -23.10,
        "currency": "GBP", "transaction_type": "DEBIT", "merchant_name": "Grocer"}),
    );
    fake.set_transactions(booked, Vec::new());
    let SyncOutcome::Synced { summary, .. } = sync(engine) else {
        panic!("the third sync failed")
    };
    assert_eq!(summary.posted_from_pending, 1, "{summary:?}");
    let posted = transaction_lines(db, user);
    assert_eq!(posted.len(), first.len());
    assert!(posted.contains(
        &"Club Lloyds -23.1 false Some(\"Grocer\") Some(\"GROCER KINGS CROSS\")".to_owned()
    ));

    // Four syncs a UTC day: the fifth is deferred and calls nothing.
    let calls = fake.data_calls();
    let SyncOutcome::Deferred { .. } = sync(engine) else {
        panic!("the fifth sync of the day must be deferred")
    };
    assert_eq!(fake.data_calls(), calls);

    run_fault_matrix(
        Matrix {
            db,
            user,
            connection,
            engine,
            impatient,
        },
        &[
            case(Fault::Slow, true, true, ConnectionStatus::Error),
            case(Fault::ServerError, false, true, ConnectionStatus::Error),
            case(Fault::RateLimited, false, true, ConnectionStatus::Error),
            case(
                Fault::DailyAllowanceSpent,
                false,
                true,
                ConnectionStatus::Error,
            ),
            case(Fault::Malformed, false, false, ConnectionStatus::Error),
            case(
                Fault::ConsentEnded,
                false,
                false,
                ConnectionStatus::ReauthRequired,
            ),
        ],
        |fault| fake.set_fault(fault),
        || clock.advance(chrono::Duration::days(1)),
        |fault, _, retry_at| {
            if fault == Fault::DailyAllowanceSpent {
                // Not before the bank's day turns.
                not_before_the_next_utc_day(clock.now(), retry_at);
            }
        },
    );

    // Re-authentication: a new consent; the accounts keep their place and
    // their data.
    consenting_again_keeps_everything(
        Matrix {
            db,
            user,
            connection,
            engine,
            impatient,
        },
        clock,
        &request(),
        RETURN_URL,
    );

    // Access revoked at the bank: the person must consent again; nothing
    // stored is lost.
    clock.advance(chrono::Duration::days(1));
    let before = transaction_lines(db, user);
    fake.set_fault(Some(Fault::Revoked));
    let SyncOutcome::ProviderFailed {
        error: ConnectorError::ReauthRequired(why),
        ..
    } = sync(engine)
    else {
        panic!("a revoked access must ask the user")
    };
    assert!(why.contains("access_denied"), "{why}");
    assert_eq!(transaction_lines(db, user), before);
}
