//! The change feed over HTTP, on SQLite and PostgreSQL: a client keeps a
//! copy of a user's transactions through `GET /api/v1/transactions/sync`
//! alone while syncs (pending purchases posting, new ones arriving),
//! statement imports (a re-import, a corrected amount) and a connection's
//! removal run at the same time; at the end its copy equals the API's full
//! lists exactly. Cursors of others, old cursors and bad parameters are
//! refused with the codes docs/changes.md names.

// Test code: a failed unwrap is a failed test, with its message.
#![allow(clippy::unwrap_used)]

use reqwest::{Client, StatusCode};
use serde_json::Value;
use std::cell::Cell;
use std::collections::BTreeMap;
use tributary_domain::clock::Clock as _;
use tributary_domain::model::SyncJobKind;
use tributary_e2e::harness::personal as on_every_backend;
use tributary_e2e::{TestServer, json_answer, sandbox_registry};
use tributary_storage::testing::testdata_bytes;

/// A client's copy: transactions by id, and where it stands in the feed.
#[derive(Debug, Default)]
struct Mirror {
    cursor: Option<String>,
    rows: BTreeMap<String, Value>,
    /// Ids seen as added, to check none is added twice.
    added: Vec<String>,
}

impl Mirror {
    /// Reads the feed until `has_more` is false; the number of pages read.
    async fn catch_up(&mut self, server: &TestServer, key: &str, count: u32) -> usize {
        let mut pages = 0;
        loop {
            let mut request = Client::new()
                .get(server.url("/api/v1/transactions/sync"))
                .header("x-api-key", key)
                .query(&[("count", count.to_string())]);
            if let Some(cursor) = &self.cursor {
                request = request.query(&[("cursor", cursor)]);
            }
            let page = json_answer(request).await;
            let changes = page["added"].as_array().unwrap_or_else(|| panic!("{page}"));
            assert!(
                changes.len()
                    + page["modified"].as_array().unwrap().len()
                    + page["removed"].as_array().unwrap().len()
                    <= count as usize
            );
            for added in changes {
                let id = added["id"].as_str().unwrap().to_owned();
                assert!(
                    self.rows.insert(id.clone(), added.clone()).is_none(),
                    "{id} added though the copy has it"
                );
                assert!(!self.added.contains(&id), "{id} added twice");
                self.added.push(id);
            }
            for modified in page["modified"].as_array().unwrap() {
                let id = modified["id"].as_str().unwrap().to_owned();
                assert!(
                    self.rows.insert(id.clone(), modified.clone()).is_some(),
                    "{id} modified but never added"
                );
            }
            for removed in page["removed"].as_array().unwrap() {
                self.rows.remove(removed["id"].as_str().unwrap());
            }
            self.cursor = Some(page["next_cursor"].as_str().unwrap().to_owned());
            pages += 1;
            if page["has_more"] == false {
                return pages;
            }
        }
    }
}

/// Every transaction `key` can see through the listings, pending included.
async fn full_lists(server: &TestServer, key: &str) -> BTreeMap<String, Value> {
    let accounts = json_answer(
        Client::new()
            .get(server.url("/api/v1/accounts"))
            .header("x-api-key", key),
    )
    .await;
    let mut rows = BTreeMap::new();
    for account in accounts["accounts"].as_array().unwrap() {
        let listing = json_answer(
            Client::new()
                .get(server.url(&format!(
                    "/api/v1/accounts/{}/transactions?include_pending=true",
                    account["id"]
                )))
                .header("x-api-key", key),
        )
        .await;
        for t in listing["transactions"].as_array().unwrap() {
            rows.insert(t["id"].as_str().unwrap().to_owned(), t.clone());
        }
    }
    rows
}

async fn import(server: &TestServer, key: &str, name: &str, bytes: Vec<u8>) {
    let form = reqwest::multipart::Form::new().part(
        "files",
        reqwest::multipart::Part::bytes(bytes).file_name(name.to_owned()),
    );
    let answer = Client::new()
        .post(server.url("/api/v1/imports"))
        .header("x-api-key", key)
        .multipart(form)
        .send()
        .await
        .unwrap();
    assert_eq!(
        answer.status(),
        StatusCode::OK,
        "{}",
        answer.text().await.unwrap()
    );
}

/// A day passes and the sandbox connection syncs: purchases post (some
/// with a tip added), new ones arrive pending.
async fn next_day_sync(server: &TestServer) {
    server.clock.advance(chrono::Duration::days(1));
    let (db, clock) = (server.database.db().clone(), server.clock.clone());
    let connection = server.world.alice_sandbox_connection;
    actix_web::web::block(move || {
        tributary_providers::sync::SyncEngine::new(db, sandbox_registry(), clock)
            .sync_now(connection, SyncJobKind::Scheduled, "e2e-feed")
            .unwrap();
    })
    .await
    .unwrap();
}

#[actix_web::test]
async fn a_copy_kept_through_the_feed_alone_equals_the_lists_while_syncs_run() {
    on_every_backend(|server| async move {
        let key = server.world.alice_key.clone();
        let checking = testdata_bytes("ofxparse/fixtures/checking.ofx");
        let corrected = String::from_utf8(checking.clone())
            .unwrap()
            .replacen("<TRNAMT>-34.51", "<TRNAMT>-34.15", 1)
            .into_bytes();
        assert_ne!(checking, corrected);

        let writing = Cell::new(true);
        let mut mirror = Mirror::default();
        let reader = async {
            let mut reads = 0;
            while writing.get() {
                mirror.catch_up(&server, &key, 7).await;
                reads += 1;
                actix_web::rt::task::yield_now().await;
            }
            reads
        };
        let writer = async {
            for day in 0..5 {
                next_day_sync(&server).await;
                match day {
                    0 => import(&server, &key, "checking.ofx", checking.clone()).await,
                    // The same file again, then a corrected amount.
                    1 => import(&server, &key, "checking.ofx", checking.clone()).await,
                    2 => import(&server, &key, "checking.ofx", corrected.clone()).await,
                    3 => {
                        // A person removes the imported connection (the
                        // dashboard's remove): its transactions are gone.
                        let db = server.database.db().clone();
                        let connection = server.world.alice_imported_connection;
                        let now = server.clock.now().naive_utc();
                        actix_web::web::block(move || {
                            let conn = &mut *db.conn().unwrap();
                            let alice =
                                tributary_storage::connections::get_connection(conn, connection)
                                    .unwrap()
                                    .user_id;
                            tributary_storage::connections::delete_connection(
                                conn, alice, connection, now,
                            )
                            .unwrap()
                        })
                        .await
                        .unwrap();
                    }
                    _ => {}
                }
                actix_web::rt::task::yield_now().await;
            }
            writing.set(false);
        };
        let (reads, ()) = futures_util::join!(reader, writer);
        assert!(reads > 0);
        mirror.catch_up(&server, &key, 7).await;
        let lists = full_lists(&server, &key).await;
        assert!(lists.len() > 20, "{}", lists.len());
        assert_eq!(mirror.rows, lists, "nothing missed, nothing twice");

        // Read again from the start, all at once: the same copy.
        let mut fresh = Mirror::default();
        fresh.catch_up(&server, &key, 500).await;
        assert_eq!(fresh.rows, lists);
        // Caught up: nothing more, the cursor stays.
        let cursor = mirror.cursor.clone();
        assert_eq!(mirror.catch_up(&server, &key, 7).await, 1);
        assert_eq!(mirror.cursor, cursor);
        server
    })
    .await;
}

#[actix_web::test]
async fn cursors_belong_to_their_viewer_and_expire_with_the_removals_kept() {
    on_every_backend(|server| async move {
        let world = &server.world;
        let sync = |key: &str, query: &[(&str, String)]| {
            json_answer(
                Client::new()
                    .get(server.url("/api/v1/transactions/sync"))
                    .header("x-api-key", key.to_owned())
                    .query(query),
            )
        };
        let status = |key: &str, query: Vec<(&'static str, String)>| {
            let request = Client::new()
                .get(server.url("/api/v1/transactions/sync"))
                .header("x-api-key", key.to_owned())
                .query(&query);
            async move {
                let answer = request.send().await.unwrap();
                (answer.status(), answer.json::<Value>().await.unwrap())
            }
        };

        // A scoped key's copy holds its account's transactions only.
        let mut scoped = Mirror::default();
        scoped.catch_up(&server, &world.alice_scoped_key, 3).await;
        assert_eq!(
            scoped.rows,
            full_lists(&server, &world.alice_scoped_key).await
        );
        assert!(
            scoped
                .rows
                .values()
                .all(|t| t["accountId"] == world.alice_imported.get())
        );
        // One account's feed, asked for by id, is the same.
        let one = sync(
            &world.alice_key,
            &[
                ("account_id", world.alice_imported.to_string()),
                ("count", "500".into()),
            ],
        )
        .await;
        assert_eq!(one["added"].as_array().unwrap().len(), scoped.rows.len());

        // Another viewer's cursor, or one made for one account, is refused.
        let alices = sync(&world.alice_key, &[]).await["next_cursor"]
            .as_str()
            .unwrap()
            .to_owned();
        for (key, query) in [
            (&world.bob_key, vec![("cursor", alices.clone())]),
            (&world.alice_scoped_key, vec![("cursor", alices.clone())]),
            (
                &world.alice_key,
                vec![
                    ("cursor", alices.clone()),
                    ("account_id", world.alice_imported.to_string()),
                ],
            ),
        ] {
            let (code, body) = status(key, query).await;
            assert_eq!(
                (code, body["code"].as_str()),
                (StatusCode::BAD_REQUEST, Some("RESYNC_REQUIRED")),
                "{body}"
            );
        }
        for (query, expected) in [
            (
                vec![("cursor", "not-a-cursor".to_owned())],
                "INVALID_CURSOR",
            ),
            (vec![("count", "0".to_owned())], "INVALID_COUNT"),
            (vec![("count", "501".to_owned())], "INVALID_COUNT"),
            (vec![("account_id", "x".to_owned())], "INVALID_ACCOUNT_ID"),
        ] {
            let (code, body) = status(&world.alice_key, query).await;
            assert_eq!(
                (code, body["code"].as_str()),
                (StatusCode::BAD_REQUEST, Some(expected)),
                "{body}"
            );
        }
        let (code, body) = status(
            &world.alice_key,
            vec![("account_id", world.bob_account.to_string())],
        )
        .await;
        assert_eq!(
            (code, body["code"].as_str()),
            (StatusCode::NOT_FOUND, Some("ACCOUNT_NOT_FOUND"))
        );
        let (code, _) = status(&world.alice_revoked_key, vec![]).await;
        assert_eq!(code, StatusCode::UNAUTHORIZED);

        // A removal, then its tombstone purged: the cursor from before it
        // must start again; the one from after it goes on.
        let mut alice = Mirror::default();
        alice.catch_up(&server, &world.alice_key, 500).await;
        let before = alice.cursor.clone().unwrap();
        next_day_sync(&server).await;
        next_day_sync(&server).await;
        let removed = {
            let conn = &mut *server.database.db().conn().unwrap();
            tributary_storage::connections::delete_connection(
                conn,
                server.world.bob_user,
                server.world.bob_connection,
                server.clock.now().naive_utc(),
            )
            .unwrap();
            let alice_user = tributary_storage::connections::get_connection(
                conn,
                world.alice_imported_connection,
            )
            .unwrap()
            .user_id;
            tributary_storage::connections::delete_connection(
                conn,
                alice_user,
                world.alice_imported_connection,
                server.clock.now().naive_utc(),
            )
            .unwrap()
        };
        assert!(removed);
        alice.catch_up(&server, &world.alice_key, 500).await;
        let after = alice.cursor.clone().unwrap();
        tributary_storage::changes::purge_tombstones(
            &mut server.database.db().conn().unwrap(),
            server.clock.now().naive_utc() + chrono::Duration::days(1),
        )
        .unwrap();
        let (code, body) = status(&world.alice_key, vec![("cursor", before)]).await;
        assert_eq!(
            (code, body["code"].as_str()),
            (StatusCode::BAD_REQUEST, Some("RESYNC_REQUIRED")),
            "{body}"
        );
        let (code, _) = status(&world.alice_key, vec![("cursor", after)]).await;
        assert_eq!(code, StatusCode::OK);
        server
    })
    .await;
}

#[actix_web::test]
async fn an_apps_user_reads_the_feed_with_their_bearer_token() {
    tributary_e2e::harness::platform(|server| async move {
        let (token, _) =
            tributary_e2e::platform::user_with_statement(&server, "feed@example.com").await;
        let feed = server
            .bearer_json(
                reqwest::Method::GET,
                "/api/platform/v1/transactions/sync",
                &token,
            )
            .await;
        let accounts = server
            .bearer_json(reqwest::Method::GET, "/api/platform/v1/accounts", &token)
            .await;
        let account = accounts["accounts"][0]["id"].clone();
        let listing = server
            .bearer_json(
                reqwest::Method::GET,
                &format!("/api/platform/v1/accounts/{account}/transactions?include_pending=true"),
                &token,
            )
            .await;
        let mut added = feed["added"].as_array().unwrap().clone();
        let mut listed = listing["transactions"].as_array().unwrap().clone();
        let by_id = |t: &Value| t["id"].as_str().unwrap().parse::<i64>().unwrap();
        added.sort_by_key(by_id);
        listed.sort_by_key(by_id);
        assert!(!added.is_empty());
        assert_eq!(added, listed);
        assert_eq!(feed["has_more"], false);
        // Without a token: 401.
        let anonymous = Client::new()
            .get(server.url("/api/platform/v1/transactions/sync"))
            .send()
            .await
            .unwrap();
        assert_eq!(anonymous.status(), StatusCode::UNAUTHORIZED);
        server
    })
    .await;
}
