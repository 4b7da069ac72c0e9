//! bunq against its local fake (`tributary_e2e::bunq`), on SQLite and
//! PostgreSQL: a wrong API key refused at once, the installation's key
//! pair made and registered (every request signed, the fake verifying
//! each), the first sync (every page), a second that changes nothing and
//! reads only its window, a corrected card payment kept as bunq books it
//! (a reversal and a new payment, nothing merged), the fault matrix with
//! nothing stored lost (answers not signed by bunq's key refused), and a
//! deleted key needing the user, repaired with a new key keeping the
//! accounts and their data.

// Test code: a failed unwrap is a failed test, with its message.
#![allow(clippy::unwrap_used)]

use tributary_domain::access::Viewer;
use tributary_domain::model::{AccountKind, ConnectionStatus, SyncJobKind};
use tributary_e2e::bunq::{API_KEY, BunqFake, Fault, NEW_API_KEY};
use tributary_e2e::providers::{
    Bench, Matrix, a_revoked_token_is_replaced, case, connect_with_a_token,
    on_every_backend_against, run_fault_matrix, token_request, transaction_lines,
};
use tributary_providers::sync::{SyncEngine, SyncOutcome};
use tributary_storage::Database;
use tributary_storage::read;

#[actix_web::test]
async fn an_api_key_installs_signs_every_request_and_meets_every_fault() {
    on_every_backend_against(BunqFake::start, scenario).await;
}

fn scenario(db: &Database, fake: &BunqFake) {
    let Bench {
        clock,
        engine,
        impatient,
        user,
    } = Bench::against(
        db,
        |timeout| fake.connector(timeout),
        "nederland@example.com",
    );
    let bunq = tributary_providers::bunq::PROVIDER;

    let connection = connect_with_a_token(
        &engine,
        (db, user),
        bunq,
        (&token_request("sandbox_wrong"), &token_request(API_KEY)),
    );
    // One device, for the good key, usable from any address; the session
    // connecting opened is the one the first sync reads with.
    assert_eq!(fake.permitted_ips(), [serde_json::json!(["*"])]);
    assert_eq!(fake.sessions_opened(), 1);
    let dump = tributary_storage::testing::dump(db);
    assert!(!dump.contains("PRIVATE KEY"), "the key pair is sealed");
    assert!(
        !dump.contains("installation-"),
        "the installation token is sealed"
    );

    let sync = |engine: &SyncEngine| {
        engine
            .sync_now(connection, SyncJobKind::OnDemand, "test")
            .unwrap()
    };
    let (verified, pages) = (fake.verified(), fake.payment_pages());
    let SyncOutcome::Synced { summary, .. } = sync(&engine) else {
        panic!("the first sync failed")
    };
    assert_eq!(summary.accounts_seen, 2);
    // The accounts, three pages of the current account's payments and one
    // of the savings': each signed, each verified; no second session.
    assert_eq!(fake.payment_pages() - pages, 4);
    assert_eq!(fake.verified() - verified, 5);
    assert_eq!(fake.sessions_opened(), 1);
    let first = transaction_lines(db, user);
    assert_eq!(
        first,
        [
            "Main -250.00 false Some(\"Ada Lovelace\") Some(\"Ada Lovelace\")",
            "Main -4.20 false Some(\"Coffee Company\") Some(\"Coffee Company\")",
            "Main -61.37 false Some(\"Albert Heijn\") Some(\"Albert Heijn\")",
            "Main -9.99 false Some(\"Streaming service\") Some(\"Streaming service\")",
            "Main 3150.00 false Some(\"Acme B.V. salary\") Some(\"Acme B.V. salary\")",
            "Rainy day 250.00 false Some(\"Ada Lovelace\") Some(\"Ada Lovelace\")",
        ],
        "every page of every account, exact amounts, bunq's signs"
    );
    let accounts = read::list_accounts(&mut db.conn().unwrap(), &Viewer::whole_user(user)).unwrap();
    let kinds: Vec<(&str, AccountKind, &str, Option<&str>)> = accounts
        .iter()
        .map(|a| {
            (
                a.name.as_str(),
                a.kind,
                a.currency.as_str(),
                a.mask.as_deref(),
            )
        })
        .collect();
    assert_eq!(
        kinds,
        [
            ("Main", AccountKind::Checking, "EUR", Some("0188")),
            ("Rainy day", AccountKind::Savings, "EUR", Some("1234")),
        ]
    );
    let main = accounts[0].id;
    // Paid at 23:30 UTC on 14 January, 00:30 on the 15th in Amsterdam:
    // the bank's day.
    let salary = read::list_transactions(
        &mut db.conn().unwrap(),
        main,
        &Default::default(),
        None,
        None,
    )
    .unwrap()
    .into_iter()
    .find(|t| t.amount.to_string() == "3150.00")
    .unwrap();
    assert_eq!(salary.date.to_string(), "2026-01-15");
    let balance = read::latest_balance(&mut db.conn().unwrap(), main)
        .unwrap()
        .unwrap();
    assert_eq!(balance.amount.to_string(), "2834.43");

    // Nothing changed: nothing changes, and the current account's oldest
    // page (before the week's window) is not read again.
    clock.advance(chrono::Duration::hours(1));
    let pages = fake.payment_pages();
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
    assert_eq!(fake.payment_pages() - pages, 3, "the window's pages only");

    // The coffee settles at another amount: a reversal and a new payment,
    // the first kept as it was.
    fake.correct_the_coffee();
    clock.advance(chrono::Duration::hours(1));
    let SyncOutcome::Synced { summary, .. } = sync(&engine) else {
        panic!("the third sync failed")
    };
    assert_eq!(
        (summary.transactions_added, summary.transactions_updated),
        (2, 0),
        "{summary:?}"
    );
    let corrected = transaction_lines(db, user);
    assert_eq!(corrected.len(), first.len() + 2, "nothing merged");
    for line in [
        "Main -4.20 false Some(\"Coffee Company\") Some(\"Coffee Company\")",
        "Main 4.20 false Some(\"Coffee Company\") Some(\"Refund: Coffee Company\")",
        "Main -4.35 false Some(\"Coffee Company\") Some(\"Coffee Company\")",
    ] {
        assert!(
            corrected.contains(&line.to_owned()),
            "{line}: {corrected:?}"
        );
    }

    // bunq ends the session early: the sync opens another, keeps it at
    // once, and the next sync reads with it.
    fake.end_sessions();
    clock.advance(chrono::Duration::hours(1));
    let SyncOutcome::Synced { summary, .. } = sync(&engine) else {
        panic!("the sync after the session ended failed")
    };
    assert_eq!(
        (summary.transactions_added, summary.transactions_updated),
        (0, 0)
    );
    assert_eq!(fake.sessions_opened(), 2);
    clock.advance(chrono::Duration::hours(1));
    assert!(matches!(sync(&engine), SyncOutcome::Synced { .. }));
    assert_eq!(fake.sessions_opened(), 2, "the new session was kept");

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
            case(Fault::Slow, true, true, ConnectionStatus::Error),
            case(Fault::ServerError, false, true, ConnectionStatus::Error),
            case(Fault::RateLimited, false, true, ConnectionStatus::Error),
            case(Fault::Maintenance, false, true, ConnectionStatus::Error),
            case(Fault::Malformed, false, false, ConnectionStatus::Error),
            case(
                Fault::ForgedSignature,
                false,
                false,
                ConnectionStatus::Error,
            ),
            case(Fault::Unsigned, false, false, ConnectionStatus::Error),
            case(
                Fault::ForeignOlderUrl,
                false,
                false,
                ConnectionStatus::Error,
            ),
            case(
                Fault::SessionServerBusy,
                false,
                true,
                ConnectionStatus::Error,
            ),
            case(Fault::ForgedSession, false, false, ConnectionStatus::Error),
        ],
        |fault| fake.set_fault(fault),
        || clock.advance(chrono::Duration::hours(1)),
        |fault, error, _| {
            let expected = match fault {
                Fault::Slow => "in time",
                Fault::ServerError => "500",
                Fault::RateLimited | Fault::SessionServerBusy => "429",
                Fault::Maintenance => "maintenance",
                Fault::Malformed => "does not parse",
                Fault::ForgedSignature | Fault::ForgedSession => {
                    "is not signed by the key bunq gave at installation"
                }
                Fault::Unsigned => "carries no X-Bunq-Server-Signature",
                Fault::ForeignOlderUrl => "not on its API",
            };
            assert!(error.to_string().contains(expected), "{fault:?}: {error}");
        },
    );

    // The person deletes the key in the app: the user is needed, the data
    // stays; a new key (a new installation) repairs the connection.
    a_revoked_token_is_replaced(
        at,
        (|| fake.delete_the_key(), || fake.make_a_new_key()),
        &token_request(NEW_API_KEY),
        || clock.advance(chrono::Duration::hours(1)),
    );
}

/// The fake's check of signatures, which the scenario relies on, refuses:
/// a device registration without a signature is 466, one signed by
/// another key than the installed one is 400, and only the installed
/// key's signature of these very bytes registers the device.
#[actix_web::test]
async fn the_fake_refuses_a_request_not_signed_by_the_installed_key() {
    use base64::Engine as _;
    use rsa::pkcs8::{EncodePublicKey, LineEnding};
    use rsa::{Generate, PrivateKey, sha2::Sha256};
    let fake = BunqFake::start().await;
    let (installed, stranger) =
        std::thread::spawn(|| (PrivateKey::generate(), PrivateKey::generate()))
            .join()
            .unwrap();
    let client = reqwest::Client::new();
    let url = |path: &str| format!("{}/v1/{path}", fake.server.uri());
    let public = installed
        .to_public_key()
        .to_public_key_pem(LineEnding::LF)
        .unwrap();
    let answer: serde_json::Value = client
        .post(url("installation"))
        .json(&serde_json::json!({ "client_public_key": public }))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let token = answer["Response"][1]["Token"]["token"]
        .as_str()
        .unwrap()
        .to_owned();
    let body =
        serde_json::json!({"description": "test", "secret": API_KEY, "permitted_ips": ["*"]})
            .to_string();
    let register = |signer: Option<&PrivateKey>| {
        let mut request = client
            .post(url("device-server"))
            .header("X-Bunq-Client-Authentication", &token)
            .body(body.clone());
        if let Some(key) = signer {
            let signature = key.pkcs1v15_sign::<Sha256>(body.as_bytes()).unwrap();
            request = request.header(
                "X-Bunq-Client-Signature",
                base64::engine::general_purpose::STANDARD.encode(signature),
            );
        }
        async move { request.send().await.unwrap().status().as_u16() }
    };
    assert_eq!(register(None).await, 466);
    assert_eq!(register(Some(&stranger)).await, 400);
    assert_eq!(fake.permitted_ips().len(), 0, "nothing registered");
    assert_eq!(register(Some(&installed)).await, 200);
    assert_eq!(fake.permitted_ips().len(), 1);
}
