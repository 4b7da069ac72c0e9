//! Teller against its local fake (`tributary_e2e::teller`), on SQLite and
//! PostgreSQL, over TLS with the operator's client certificate (the fake
//! checks it, as Teller does): a wrong access token refused at once, the
//! first sync (a long history's two pages, a credit card turned to
//! Tributary's sign), a second that changes nothing and reads only its
//! window, a pending transaction that posts under a new id without a
//! duplicate, the fault matrix with nothing stored lost, a certificate
//! another authority signed refused, and a disconnected enrollment needing
//! the user, repaired by enrolling again, keeping the accounts and data.

// Test code: a failed unwrap is a failed test, with its message.
#![allow(clippy::unwrap_used)]

use tributary_domain::access::Viewer;
use tributary_domain::clock::Clock;
use tributary_domain::model::{AccountKind, ConnectionStatus, SyncJobKind};
use tributary_e2e::providers::{
    Bench, Matrix, a_revoked_token_is_replaced, case, connect_with_a_token,
    on_every_backend_against, run_fault_matrix, token_request, transaction_lines,
};
use tributary_e2e::teller::{Fault, NEW_TOKEN, TOKEN, TellerFake};
use tributary_providers::ConnectorError;
use tributary_providers::sync::{SyncEngine, SyncOutcome};
use tributary_storage::Database;
use tributary_storage::read;

#[actix_web::test]
async fn an_enrollment_syncs_over_mtls_posts_a_pending_and_meets_every_fault() {
    on_every_backend_against(TellerFake::start, scenario).await;
}

fn scenario(db: &Database, fake: &TellerFake) {
    let Bench {
        clock,
        engine,
        impatient,
        user,
    } = Bench::against(db, |timeout| fake.connector(timeout), "texas@example.com");
    let teller = tributary_providers::teller::PROVIDER;
    let connection = connect_with_a_token(
        &engine,
        (db, user),
        teller,
        (&token_request("token_wrong"), &token_request(TOKEN)),
    );
    let sync = |engine: &SyncEngine| {
        engine
            .sync_now(connection, SyncJobKind::OnDemand, "test")
            .unwrap()
    };

    let pages = fake.transaction_pages();
    let SyncOutcome::Synced { summary, .. } = sync(&engine) else {
        panic!("the first sync failed")
    };
    assert_eq!(summary.accounts_seen, 3, "the closed account left out");
    // Checking's 262 transactions in two pages of 250, one each for the
    // savings and the card.
    assert_eq!(fake.transaction_pages() - pages, 4);
    let first = transaction_lines(db, user);
    assert_eq!(first.len(), 4 + 258 + 1 + 2, "every page");
    let named: Vec<&String> = first.iter().filter(|l| !l.contains("Metro")).collect();
    assert_eq!(
        named,
        [
            "Premier Savings 0.42 false None Some(\"INTEREST\")",
            "Sapphire Preferred -45.00 false Some(\"Amazon\") Some(\"AMAZON.COM\")",
            "Sapphire Preferred 200.00 false None Some(\"PAYMENT THANK YOU\")",
            "Total Checking -1200.00 false None Some(\"RENT MARCH\")",
            "Total Checking -18.40 true Some(\"Blue Bottle Coffee\") Some(\"SQ *BLUE BOTTLE COFFEE\")",
            "Total Checking -86.46 false Some(\"Trader Joe's\") Some(\"TRADER JOE'S #552\")",
            "Total Checking 2450.00 false None Some(\"ACME CORP PAYROLL\")",
        ],
        "exact amounts; the card's purchase is money out, its payment money in"
    );
    let accounts = read::list_accounts(&mut db.conn().unwrap(), &Viewer::whole_user(user)).unwrap();
    let kinds: Vec<(&str, AccountKind, Option<&str>)> = accounts
        .iter()
        .map(|a| (a.name.as_str(), a.kind, a.mask.as_deref()))
        .collect();
    assert_eq!(
        kinds,
        [
            ("Total Checking", AccountKind::Checking, Some("1234")),
            ("Premier Savings", AccountKind::Savings, Some("5678")),
            ("Sapphire Preferred", AccountKind::CreditCard, Some("9012")),
        ]
    );
    let balance = |id| {
        read::latest_balance(&mut db.conn().unwrap(), id)
            .unwrap()
            .unwrap()
            .amount
            .to_string()
    };
    assert_eq!(balance(accounts[0].id), "3104.62");
    assert_eq!(balance(accounts[2].id), "-1234.56", "what is owed");
    let (with_certificate, without, refused) = fake.handshakes();
    assert!(with_certificate > 0);
    assert_eq!(
        (without, refused),
        (0, 0),
        "every request with the certificate"
    );

    // Nothing changed: nothing changes, and the checking account's second
    // page (before the window) is not read again.
    clock.advance(chrono::Duration::hours(1));
    let pages = fake.transaction_pages();
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
    assert_eq!(fake.transaction_pages() - pages, 3);

    // The coffee posts under an id of its own: the same row, posted.
    fake.post_the_pending();
    clock.advance(chrono::Duration::hours(1));
    let SyncOutcome::Synced { summary, .. } = sync(&engine) else {
        panic!("the third sync failed")
    };
    assert_eq!(summary.posted_from_pending, 1, "{summary:?}");
    let posted = transaction_lines(db, user);
    assert_eq!(posted.len(), first.len(), "no duplicate");
    assert!(posted.contains(
        &"Total Checking -18.40 false Some(\"Blue Bottle Coffee\") Some(\"SQ *BLUE BOTTLE COFFEE\")"
            .to_owned()
    ));

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
            case(Fault::BadGateway, false, true, ConnectionStatus::Error),
            case(Fault::RateLimited, false, true, ConnectionStatus::Error),
            case(Fault::Malformed, false, false, ConnectionStatus::Error),
        ],
        |fault| fake.set_fault(fault),
        || clock.advance(chrono::Duration::hours(1)),
        |fault, error, retry_at| {
            let expected = match fault {
                Fault::Slow => "in time",
                Fault::BadGateway | Fault::LaterPageFails => "bad_gateway",
                Fault::IgnoresFromId => "twice while paging",
                Fault::RateLimited => "429",
                Fault::Malformed => "does not parse",
            };
            assert!(error.to_string().contains(expected), "{fault:?}: {error}");
            if fault == Fault::RateLimited {
                // Not before Teller's Retry-After.
                let earliest = clock.now().naive_utc() + chrono::Duration::seconds(90);
                assert!(retry_at.unwrap() >= earliest, "{retry_at:?}");
            }
        },
    );

    // A certificate another authority signed: refused in the handshake,
    // the operator's to fix (not retried for ever).
    let Err(ConnectorError::Misconfigured(why)) =
        fake.strangers_connector().prepare(&token_request(TOKEN))
    else {
        panic!("a stranger's certificate connects nothing")
    };
    assert!(why.contains("TRIBUTARY_TELLER_CERTIFICATE_FILE"), "{why}");

    // The bank asks for a new MFA: the enrollment is disconnected, the
    // user is needed, the data stays; enrolling again repairs it.
    a_revoked_token_is_replaced(
        at,
        (|| fake.disconnect(), || fake.enroll_again()),
        &token_request(NEW_TOKEN),
        || clock.advance(chrono::Duration::hours(1)),
    );
}

/// A first sync whose paging goes wrong stores nothing, and says why: a
/// `from_id` not honoured (the same transactions again) is refused rather
/// than read for ever; a later page failing is retried; healthy again, the
/// whole history is read.
#[actix_web::test]
async fn a_first_sync_whose_paging_fails_stores_nothing() {
    on_every_backend_against(TellerFake::start, |db, fake| {
        let Bench { engine, user, .. } =
            Bench::against(db, |timeout| fake.connector(timeout), "paging@example.com");
        let connection = engine
            .connect(
                user,
                tributary_providers::teller::PROVIDER,
                &token_request(TOKEN),
            )
            .unwrap()
            .id;
        let sync = || {
            engine
                .sync_now(connection, SyncJobKind::OnDemand, "test")
                .unwrap()
        };
        for (fault, transient, said) in [
            (Fault::IgnoresFromId, false, "twice while paging"),
            (Fault::LaterPageFails, true, "bad_gateway"),
        ] {
            fake.set_fault(Some(fault));
            let SyncOutcome::ProviderFailed { error, .. } = sync() else {
                panic!("{fault:?} fails the sync")
            };
            assert_eq!(error.is_transient(), transient, "{fault:?}: {error}");
            assert!(error.to_string().contains(said), "{fault:?}: {error}");
            assert!(transaction_lines(db, user).is_empty(), "{fault:?}");
        }
        fake.set_fault(None);
        assert!(matches!(sync(), SyncOutcome::Synced { .. }));
        assert_eq!(transaction_lines(db, user).len(), 4 + 258 + 1 + 2);
    })
    .await;
}

/// The fake asks for the certificate as Teller does: a request without
/// one is answered 400 naming it; with the operator's it reaches the API
/// (which wants a token).
#[actix_web::test]
async fn the_fake_answers_a_request_without_a_certificate_400() {
    let fake = TellerFake::start().await;
    let authority = reqwest::Certificate::from_pem(fake.authority_pem().as_bytes()).unwrap();
    let anonymous = reqwest::Client::builder()
        .add_root_certificate(authority.clone())
        .build()
        .unwrap();
    let answer = anonymous
        .get(format!("{}/accounts", fake.url))
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), reqwest::StatusCode::BAD_REQUEST);
    assert!(answer.text().await.unwrap().contains("Missing certificate"));
    let operator = reqwest::Client::builder()
        .add_root_certificate(authority)
        .identity(reqwest::Identity::from_pem(fake.operator_identity().as_bytes()).unwrap())
        .build()
        .unwrap();
    let answer = operator
        .get(format!("{}/accounts", fake.url))
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), reqwest::StatusCode::UNAUTHORIZED);
    assert_eq!(fake.handshakes().0, 1);
    assert_eq!(fake.handshakes().1, 1);
}

/// Teller's `enrollment.disconnected` webhook over real HTTP, on both
/// backends: only a body signed with a signing secret (either, while one
/// is rotated) and at most 3 minutes old is taken; it marks the
/// enrollment's connection as needing the person at once; other events
/// and other enrollments change nothing; a provider that sends none here
/// is 404.
#[actix_web::test]
async fn a_signed_enrollment_disconnected_webhook_needs_the_person() {
    use hmac::{Hmac, KeyInit, Mac};
    const OLD: &str = "whsec_0ld5ecret";
    const NEW: &str = "whsec_n3w5ecret";
    for database in tributary_storage::testing::TestDatabase::all() {
        eprintln!("-- on {:?}", database.backend());
        let fake = TellerFake::start().await;
        let server =
            tributary_e2e::start_with(database, vec![fake.connector_taking_webhooks(&[OLD, NEW])]);
        let db = server.database.db().clone();
        let webhooks = fake.clone();
        let connection = std::thread::spawn(move || {
            let bench = Bench::against(
                &db,
                |_| webhooks.connector_taking_webhooks(&[OLD, NEW]),
                "webhook@example.com",
            );
            connect_with_a_token(
                &bench.engine,
                (&db, bench.user),
                tributary_providers::teller::PROVIDER,
                (&token_request("token_wrong"), &token_request(TOKEN)),
            )
        })
        .join()
        .unwrap();
        let status = || {
            tributary_storage::connections::get_connection(
                &mut server.database.db().conn().unwrap(),
                connection,
            )
            .unwrap()
        };
        let client = reqwest::Client::new();
        let now = server.clock.now().timestamp();
        let send = |body: String, signature: Option<String>, provider: &str| {
            let mut request = client
                .post(server.url(&format!("/providers/{provider}/webhook")))
                .header("content-type", "application/json")
                .body(body);
            if let Some(signature) = signature {
                request = request.header("Teller-Signature", signature);
            }
            async move {
                let response = request.send().await.unwrap();
                let status = response.status().as_u16();
                let body: serde_json::Value = response.json().await.unwrap_or_default();
                // The error envelope's code beside the status.
                (status, body["code"].as_str().unwrap_or_default().to_owned())
            }
        };
        let sign = |secret: &str, at: i64, body: &str| {
            let mut mac = Hmac::<sha2::Sha256>::new_from_slice(secret.as_bytes()).unwrap();
            mac.update(format!("{at}.{body}").as_bytes());
            mac.finalize()
                .into_bytes()
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect::<String>()
        };
        let event = |kind: &str, enrollment: &str| {
            serde_json::json!({"id": "wh_1", "type": kind, "timestamp": "2026-11-29T12:00:00Z",
                "payload": {"enrollment_id": enrollment, "reason": "disconnected.account_locked"}})
            .to_string()
        };
        let disconnected = event("enrollment.disconnected", "enr_f4k3");

        // Refused, changing nothing: no signature, another secret, a stale
        // one, a signature of another body.
        let refused = [
            None,
            Some(format!(
                "t={now},v1={}",
                sign("whsec_other", now, &disconnected)
            )),
            Some(format!(
                "t={},v1={}",
                now - 400,
                sign(OLD, now - 400, &disconnected)
            )),
            Some(format!("t={now},v1={}", sign(OLD, now, "{}"))),
        ];
        for signature in refused {
            assert_eq!(
                send(disconnected.clone(), signature.clone(), "teller").await,
                (401, "WEBHOOK_SIGNATURE_INVALID".to_owned()),
                "{signature:?}"
            );
        }
        assert_eq!(status().status, ConnectionStatus::Active);
        // Signed but unreadable: 400.
        let garbled = "{\"type\": \"enrollment.disconnected\"}".to_owned();
        let signature = format!("t={now},v1={}", sign(OLD, now, &garbled));
        assert_eq!(
            send(garbled, Some(signature), "teller").await,
            (400, "WEBHOOK_MALFORMED".to_owned())
        );
        // A test event, and another enrollment's: taken, nothing changes.
        for body in [
            event("webhook.test", "enr_f4k3"),
            event("enrollment.disconnected", "enr_other"),
        ] {
            let signature = format!("t={now},v1=00ff,v1={}", sign(NEW, now, &body));
            assert_eq!(
                send(body, Some(signature), "teller").await,
                (204, String::new())
            );
        }
        assert_eq!(status().status, ConnectionStatus::Active);
        // The enrollment's: the person is needed at once.
        let signature = format!("t={now},v1={}", sign(OLD, now, &disconnected));
        assert_eq!(
            send(disconnected.clone(), Some(signature.clone()), "teller").await,
            (204, String::new())
        );
        let after = status();
        assert_eq!(after.status, ConnectionStatus::ReauthRequired);
        // Delivered again: taken, and counted once.
        assert_eq!(
            send(disconnected.clone(), Some(signature), "teller").await,
            (204, String::new())
        );
        assert_eq!(
            status().consecutive_failures,
            after.consecutive_failures,
            "a repeated delivery changes nothing more"
        );
        assert!(
            after
                .status_reason
                .as_deref()
                .unwrap_or_default()
                .contains("account_locked"),
            "{:?}",
            after.status_reason
        );
        // A provider that sends none here, and no provider at all.
        let signature = format!("t={now},v1={}", sign(OLD, now, &disconnected));
        assert_eq!(
            send(disconnected.clone(), Some(signature.clone()), "sandbox").await,
            (404, "WEBHOOK_NOT_TAKEN".to_owned())
        );
        assert_eq!(
            send(disconnected, Some(signature), "nobody").await,
            (404, "WEBHOOK_NOT_TAKEN".to_owned())
        );
    }
}
