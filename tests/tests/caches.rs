//! The caches of a serving process (docs/architecture.md, "Caches"): a
//! known credential and an account's version are used without the
//! database, a response read again is sent from the bytes kept of it, and a
//! change made in the same process is seen at once.
//! (Another process's change is seen within a second:
//! bins/personal-api/tests/other_process.rs.)

// Test code: a failed unwrap is a failed test, with its message.
#![allow(clippy::unwrap_used)]

use chrono::NaiveDate;
use reqwest::{Client, StatusCode, header};
use tributary_domain::clock::Clock;
use tributary_domain::money::Decimal;
use tributary_e2e::TestServer;
use tributary_e2e::harness::personal as on_every_backend;
use tributary_storage::testing::{insert_transactions, posted_row};

async fn status_of(
    server: &TestServer,
    path: &str,
    key: &str,
    etag: Option<&str>,
) -> (StatusCode, Option<String>) {
    let mut request = Client::new().get(server.url(path)).header("x-api-key", key);
    if let Some(etag) = etag {
        request = request.header(header::IF_NONE_MATCH, etag);
    }
    let response = request.send().await.unwrap();
    let tag = response
        .headers()
        .get(header::ETAG)
        .map(|v| v.to_str().unwrap().to_owned());
    (response.status(), tag)
}

/// Pool checkouts so far: a request answered from the caches makes none.
fn checkouts(server: &TestServer) -> u64 {
    server.database.db().pool_use().served
}

#[actix_web::test]
async fn a_revalidation_is_answered_from_the_caches_until_something_changes() {
    on_every_backend(|server| async move {
        let world = &server.world;
        let path = format!(
            "/api/v1/accounts/{}/transactions?limit=50",
            world.alice_imported
        );
        let key = world.alice_key.clone();
        let (status, etag) = status_of(&server, &path, &key, None).await;
        assert_eq!(status, StatusCode::OK);
        let etag = etag.unwrap();
        // The first revalidation reads the version and keeps it; the next
        // ones are answered without the database. One of them may fill the
        // caches again: the first request recorded the key's use, a write,
        // and on SQLite the watcher takes any commit for a change (the
        // file's change counter cannot tell whose) when it next looks,
        // within 100 ms.
        let (status, _) = status_of(&server, &path, &key, Some(&etag)).await;
        assert_eq!(status, StatusCode::NOT_MODIFIED);
        let before = checkouts(&server);
        for _ in 0..10 {
            let (status, _) = status_of(&server, &path, &key, Some(&etag)).await;
            assert_eq!(status, StatusCode::NOT_MODIFIED);
        }
        assert!(
            checkouts(&server) <= before + 1,
            "ten revalidations took {} checkouts",
            checkouts(&server) - before
        );

        // Another key of the same person is not known yet: it is checked.
        let before = checkouts(&server);
        let (status, _) = status_of(&server, &path, &world.alice_scoped_key, Some(&etag)).await;
        assert_eq!(status, StatusCode::NOT_MODIFIED);
        assert_eq!(
            checkouts(&server),
            before + 1,
            "a new key is checked in the database"
        );
        // Bob's key never sees Alice's account, cached or not.
        let (status, _) = status_of(&server, &path, &world.bob_key, Some(&etag)).await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        let (status, _) = status_of(&server, &path, &world.bob_key, Some(&etag)).await;
        assert_eq!(status, StatusCode::NOT_FOUND);

        // A new transaction, written in this process: the next
        // revalidation sees it at once.
        let row = posted_row(
            "cache-test-1",
            NaiveDate::from_ymd_opt(2026, 11, 20).unwrap(),
            Decimal::new(-499, 2),
            "USD",
            "Bakery",
        );
        insert_transactions(server.database.db(), world.alice_imported, &[row]).unwrap();
        let (status, changed) = status_of(&server, &path, &key, Some(&etag)).await;
        assert_eq!(status, StatusCode::OK, "the listing changed");
        assert_ne!(changed.unwrap(), etag);
        server
    })
    .await;
}

async fn body_of(server: &TestServer, path: &str, key: &str) -> serde_json::Value {
    let response = Client::new()
        .get(server.url(path))
        .header("x-api-key", key)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK, "{path}");
    response.json().await.unwrap()
}

fn account_ids(accounts: &serde_json::Value) -> Vec<i64> {
    accounts["accounts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["id"].as_i64().unwrap())
        .collect()
}

#[actix_web::test]
async fn a_response_read_again_is_sent_from_kept_bytes_until_something_changes() {
    on_every_backend(|server| async move {
        let world = &server.world;
        let key = world.alice_key.clone();
        let page = format!(
            "/api/v1/accounts/{}/transactions?limit=5",
            world.alice_imported
        );
        let list = format!("/api/v1/accounts/{}/transactions", world.alice_imported);
        for path in [page.as_str(), list.as_str(), "/api/v1/accounts"] {
            let first = body_of(&server, path, &key).await;
            // The second request may read again (see the revalidation test
            // above: the first recorded the key's use).
            assert_eq!(body_of(&server, path, &key).await, first);
            let before = checkouts(&server);
            for _ in 0..10 {
                assert_eq!(body_of(&server, path, &key).await, first, "{path}");
            }
            assert!(
                checkouts(&server) <= before + 1,
                "{path}: ten reads took {} checkouts",
                checkouts(&server) - before
            );
        }

        // Kept under who asked: the scoped key and Bob each get their own
        // list, before and after Alice's was kept.
        let alice_accounts = account_ids(&body_of(&server, "/api/v1/accounts", &key).await);
        assert!(alice_accounts.len() > 1);
        for _ in 0..2 {
            let scoped = body_of(&server, "/api/v1/accounts", &world.alice_scoped_key).await;
            assert_eq!(account_ids(&scoped), vec![world.alice_imported.get()]);
            let bob = body_of(&server, "/api/v1/accounts", &world.bob_key).await;
            assert!(!account_ids(&bob).contains(&world.alice_imported.get()));
            assert!(account_ids(&bob).contains(&world.bob_account.get()));
        }

        // A new transaction written in this process: the next read of the
        // kept page and list shows it at once.
        let row = posted_row(
            "kept-bytes-1",
            NaiveDate::from_ymd_opt(2099, 1, 1).unwrap(),
            Decimal::new(-120, 2),
            "USD",
            "Kiosk",
        );
        insert_transactions(server.database.db(), world.alice_imported, &[row]).unwrap();
        for path in [page.as_str(), list.as_str()] {
            let body = body_of(&server, path, &key).await;
            assert_eq!(
                body["transactions"][0]["description"], "Kiosk",
                "{path}: {body}"
            );
        }

        // A disconnection: the kept list of accounts is made again.
        tributary_storage::connections::disconnect(
            &mut server.database.db().conn().unwrap(),
            world.alice_imported_connection,
            server.clock.now().naive_utc(),
        )
        .unwrap();
        let accounts = body_of(&server, "/api/v1/accounts", &key).await;
        let imported = accounts["accounts"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["id"].as_i64() == Some(world.alice_imported.get()))
            .unwrap();
        assert_eq!(imported["status"], "DISCONNECTED");
        server
    })
    .await;
}

#[actix_web::test]
async fn a_key_revoked_in_this_process_is_refused_at_once() {
    on_every_backend(|server| async move {
        let world = &server.world;
        let now = server.clock.now();
        let issued = {
            let conn = &mut *server.database.db().conn().unwrap();
            tributary_auth::api_keys::issue(conn, world.alice_user, "cached", None, now).unwrap()
        };
        let key = issued.plain_text.clone();
        for _ in 0..2 {
            let (status, _) = status_of(&server, "/api/v1/accounts", &key, None).await;
            assert_eq!(status, StatusCode::OK);
        }
        tributary_storage::api_keys::revoke(
            &mut server.database.db().conn().unwrap(),
            issued.record.id,
            now.naive_utc(),
        )
        .unwrap();
        let (status, _) = status_of(&server, "/api/v1/accounts", &key, None).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "refused at once");

        server
    })
    .await;
}
