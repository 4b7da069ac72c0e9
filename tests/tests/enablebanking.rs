//! Enable Banking against its local fake (`tributary_e2e::enablebanking`),
//! through the real sync engine, on SQLite and PostgreSQL: connect (the
//! bank's page and its return), the first sync, a second that changes
//! nothing, a pending entry that posts without a duplicate, the fault
//! matrix (slow, 5xx, the bank's daily allowance, a malformed body, an
//! expired session) with nothing stored lost, and a re-authentication
//! that keeps the accounts and their data.

// Test code: a failed unwrap is a failed test, with its message.
#![allow(clippy::unwrap_used)]

use chrono::Utc;
use std::sync::Arc;
use std::time::Duration;
use tributary_domain::access::Viewer;
use tributary_domain::clock::{Clock, ManualClock};
use tributary_domain::ids::{ConnectionId, UserId};
use tributary_domain::model::{ConnectionStatus, SyncJobKind};
use tributary_e2e::enablebanking::{EnableBankingFake, Fault, checking_transactions, days_ago};
use tributary_e2e::providers::{
    Matrix, case, consent_at, consenting_again_keeps_everything, engine_with,
    not_before_the_next_utc_day, run_fault_matrix, test_keyring, transaction_lines,
};
use tributary_providers::sync::{SyncEngine, SyncError, SyncOutcome};
use tributary_providers::{AuthorizationReturn, ConnectRequest, ConnectorError};
use tributary_storage::read;
use tributary_storage::testing::{TestDatabase, dump};
use tributary_storage::{Database, connections, users};

const RETURN_URL: &str = "https://tributary.example/connect/enablebanking/return";

fn consent_at_the_bank(link: &str, deny: bool) -> AuthorizationReturn {
    consent_at(link, deny, RETURN_URL)
}

fn connect(engine: &SyncEngine, user: UserId) -> (ConnectionId, String) {
    let request = ConnectRequest {
        settings: serde_json::json!({"institution_id": "FI/Nordea", "redirect": RETURN_URL}),
        secret: None,
    };
    let connection = engine
        .connect(user, tributary_providers::enablebanking::PROVIDER, &request)
        .unwrap();
    let link = connection.settings["link"].as_str().unwrap().to_owned();
    (connection.id, link)
}

#[actix_web::test]
async fn connect_sync_post_a_pending_every_fault_and_reauthenticate() {
    for database in TestDatabase::all() {
        eprintln!("-- on {:?}", database.backend());
        let fake = EnableBankingFake::start().await;
        let patient = fake.dyn_connector(Duration::from_secs(30));
        // Gives up after a second: only for the slow fault, so that no other
        // answer races a short timeout on a loaded machine.
        let impatient = fake.dyn_connector(Duration::from_secs(1));
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
    fake: &EnableBankingFake,
    patient: Arc<dyn tributary_providers::Connector>,
    impatient: Arc<dyn tributary_providers::Connector>,
) {
    let clock = Arc::new(ManualClock::new(Utc::now()));
    let keyring = test_keyring();
    let engine = engine_with(db, clock.clone(), &keyring, patient);
    let impatient = engine_with(db, clock.clone(), &keyring, impatient);
    let user = users::create_personal_user(
        &mut db.conn().unwrap(),
        "eu@example.com",
        clock.now().naive_utc(),
    )
    .unwrap()
    .id;

    // The banks of a country, for the connect pages.
    let banks = engine
        .institutions(tributary_providers::enablebanking::PROVIDER, "fi")
        .unwrap();
    assert_eq!(
        banks.iter().map(|b| b.id.as_str()).collect::<Vec<_>>(),
        ["FI/Nordea", "FI/S-Pankki"]
    );

    // Connecting starts an authorization at the bank; before the user
    // consents, a sync asks for it.
    let (connection, link) = connect(&engine, user);
    let sync = |engine: &SyncEngine| {
        engine
            .sync_now(connection, SyncJobKind::OnDemand, "test")
            .unwrap()
    };
    let SyncOutcome::ProviderFailed {
        error: ConnectorError::ReauthRequired(_),
        ..
    } = sync(&engine)
    else {
        panic!("a sync before the consent must ask for it")
    };
    // The user cancels at the bank: refused in the bank's words.
    let denied = consent_at_the_bank(&link, true);
    let Err(SyncError::Connect(ConnectorError::InvalidCredentials(why))) =
        engine.complete_authorization(connection, &denied)
    else {
        panic!("a cancelled consent completes nothing")
    };
    assert!(why.contains("Cancelled by user"), "{why}");
    // A return with another connection's state is refused.
    let mut forged = consent_at_the_bank(&link, false);
    forged = AuthorizationReturn::new([
        ("code".to_owned(), forged.get("code").unwrap().to_owned()),
        ("state".to_owned(), "0".repeat(32)),
    ]);
    assert!(engine.complete_authorization(connection, &forged).is_err());

    // The user consents: the session is kept sealed, the consent's end is
    // the bank's.
    let returned = consent_at_the_bank(&link, false);
    let record = engine
        .complete_authorization(connection, &returned)
        .unwrap();
    let ends = record.consent_expires_at.unwrap();
    let expected = (clock.now() + chrono::Duration::days(90)).naive_utc();
    assert!(
        (ends - expected).num_minutes().abs() < 5,
        "{ends} vs {expected}"
    );
    assert!(
        record.settings.get("state").is_none(),
        "the state is used once"
    );
    let stored = dump(db);
    for personal in ["FI0455231152453547", "Ada Lovelace", "session-"] {
        assert!(!stored.contains(personal), "{personal} is sealed");
    }
    // The same return again: refused (its state was used).
    assert!(
        engine
            .complete_authorization(connection, &returned)
            .is_err()
    );

    // The first sync: two readable accounts, the unreadable one named.
    let SyncOutcome::Synced { summary, .. } = sync(&engine) else {
        panic!("the first sync failed")
    };
    assert_eq!(summary.accounts_seen, 2);
    let first = transaction_lines(db, user);
    assert_eq!(
        first,
        [
            "Everyday account -12.50 false Some(\"Coffee Roasters\") Some(\"Card purchase Coffee Roasters Helsinki\")",
            "Everyday account -23.10 true Some(\"Grocer\") Some(\"Grocer Kamppi\")",
            "Everyday account -40.00 false None Some(\"Kiosk\")",
            "Everyday account -40.00 false None Some(\"Kiosk\")",
            "Everyday account 2500.00 false Some(\"Employer Oy\") Some(\"Salary\")",
            "Savings account 100.00 false Some(\"Ada Lovelace\") Some(\"Monthly saving\")",
        ],
        "the cancelled entry is not money; the identical twins stay two"
    );
    {
        let conn = &mut *db.conn().unwrap();
        let accounts = read::list_accounts(conn, &Viewer::whole_user(user)).unwrap();
        let checking = &accounts[0];
        assert_eq!(
            (
                checking.institution_name.as_str(),
                checking.institution_logo.as_deref(),
                checking.mask.as_deref(),
                checking.currency.as_str()
            ),
            (
                "Nordea",
                Some("https://enablebanking.com/brands/FI/Nordea/"),
                Some("3547"),
                "EUR"
            )
        );
        let balance = read::latest_balance(conn, checking.id).unwrap().unwrap();
        assert_eq!(
            (
                balance.amount.to_string(),
                balance.available.map(|a| a.to_string())
            ),
            ("1843.27".to_owned(), Some("1820.17".to_owned()))
        );
        let record = connections::get_connection(conn, connection).unwrap();
        assert_eq!(record.status, ConnectionStatus::Active);
        assert!(
            record
                .status_reason
                .unwrap_or_default()
                .contains("lets no one read"),
            "the unreadable loan account is told"
        );
    }

    // A second sync the same day changes nothing.
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

    // The pending entry is booked under a reference of its own: the same
    // row, posted; no duplicate.
    let mut booked = checking_transactions();
    booked[4] = serde_json::json!({"entry_reference": "E9", "transaction_amount": {"amount": "23.10", "currency": "EUR"},
        "credit_debit_indicator": "DBIT", "status": "BOOK", "booking_date": days_ago(0),
        "creditor": {"name": "Grocer"}, "remittance_information": ["Grocer Kamppi"]});
    fake.set_checking_transactions(booked);
    let SyncOutcome::Synced { summary, .. } = sync(&engine) else {
        panic!("the third sync failed")
    };
    assert_eq!(summary.posted_from_pending, 1, "{summary:?}");
    let posted = transaction_lines(db, user);
    assert_eq!(posted.len(), first.len());
    assert!(posted.contains(
        &"Everyday account -23.10 false Some(\"Grocer\") Some(\"Grocer Kamppi\")".to_owned()
    ));

    // Four syncs a UTC day: the fifth is deferred and calls nothing.
    let calls = fake.data_calls();
    let SyncOutcome::Deferred { .. } = sync(&engine) else {
        panic!("the fifth sync of the day must be deferred")
    };
    assert_eq!(fake.data_calls(), calls);

    // Each fault on a day of its own (the daily quota).
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
            case(
                Fault::DailyAllowanceSpent,
                false,
                true,
                ConnectionStatus::Error,
            ),
            case(Fault::Malformed, false, false, ConnectionStatus::Error),
            case(
                Fault::SessionExpired,
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

    // Re-authentication: a new consent, a new session with new account
    // uids; the accounts keep their place and their data.
    let request = ConnectRequest {
        settings: serde_json::json!({"institution_id": "FI/Nordea", "redirect": RETURN_URL}),
        secret: None,
    };
    consenting_again_keeps_everything(
        Matrix {
            db,
            user,
            connection,
            engine: &engine,
            impatient: &impatient,
        },
        &clock,
        &request,
        RETURN_URL,
    );
}
