//! A change made by another process (here the test, writing the way the
//! `tributary` CLI writes) reaches the running server's caches within a
//! second, on both backends (docs/architecture.md, "Caches"): a revoked key
//! is refused, a listing revalidated after new transactions is sent again,
//! a response the server kept whole is made again after the data it shows
//! changed.

// Test code: a failed unwrap is a failed test, with its message.
#![allow(clippy::unwrap_used)]

use chrono::{NaiveDate, Utc};
use reqwest::{StatusCode, header};
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use tributary_domain::money::Decimal;
use tributary_storage::testing::{TestDatabase, empty_account, insert_transactions, posted_row};

/// The server, killed on drop.
struct Server {
    child: Child,
    url: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start(database: &TestDatabase) -> Server {
    let mut child = Command::new(env!("CARGO_BIN_EXE_personal-api"))
        .env("TRIBUTARY_DATABASE_URL", database.url())
        .env("TRIBUTARY_BIND", "127.0.0.1:0")
        .env("TRIBUTARY_DEMO", "false")
        // PostgreSQL needs a key to seal provider credentials with.
        .env(
            "TRIBUTARY_SECRET_KEY",
            "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=",
        )
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start personal-api");
    // Its output is read to the end, on a thread of its own: a server
    // whose stdout is closed would fail on its next line.
    let stdout = child.stdout.take().unwrap();
    let (lines, listening) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if line.contains(" listening on ") {
                let _ = lines.send(line);
            }
        }
    });
    let listening = listening
        .recv_timeout(Duration::from_secs(120))
        .expect("the server says where it listens");
    let url = listening
        .split(" listening on ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .unwrap()
        .to_owned();
    Server { child, url }
}

async fn get(
    server: &Server,
    path: &str,
    key: &str,
    etag: Option<&str>,
) -> (StatusCode, Option<String>) {
    let mut request = reqwest::Client::new()
        .get(format!("{}{path}", server.url))
        .header("x-api-key", key);
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

/// Asks until the body holds `wanted`; how long after `since` it came.
async fn until_shown(
    server: &Server,
    path: &str,
    key: &str,
    wanted: &str,
    since: Instant,
) -> Duration {
    loop {
        let response = reqwest::Client::new()
            .get(format!("{}{path}", server.url))
            .header("x-api-key", key)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        if response.text().await.unwrap().contains(wanted) {
            return since.elapsed();
        }
        assert!(
            since.elapsed() < Duration::from_secs(10),
            "`{wanted}` still not shown after 10 s"
        );
    }
}

/// Asks until the answer is `wanted`; how long after `since` it came.
async fn until_answered(
    server: &Server,
    path: &str,
    key: &str,
    etag: Option<&str>,
    wanted: StatusCode,
    since: Instant,
) -> Duration {
    loop {
        let (status, _) = get(server, path, key, etag).await;
        if status == wanted {
            return since.elapsed();
        }
        assert!(
            since.elapsed() < Duration::from_secs(10),
            "still {status} after 10 s"
        );
    }
}

#[tokio::test]
async fn another_process_changes_reach_the_server_within_a_second() {
    for database in TestDatabase::all() {
        eprintln!("-- on {:?}", database.backend());
        let db = database.db();
        let now = Utc::now();
        let (user, account) = empty_account(db, "ada@example.com", now.naive_utc()).unwrap();
        let issued = {
            let conn = &mut *db.conn().unwrap();
            tributary_auth::api_keys::issue(conn, user, "laptop", None, now).unwrap()
        };
        let key = issued.plain_text.clone();
        let server = start(&database);

        // New transactions: a revalidation the server answered from its
        // caches is answered again with the new listing.
        let path = format!("/api/v1/accounts/{account}/transactions?limit=10");
        let (status, etag) = get(&server, &path, &key, None).await;
        assert_eq!(status, StatusCode::OK);
        let etag = etag.unwrap();
        for _ in 0..3 {
            let (status, _) = get(&server, &path, &key, Some(&etag)).await;
            assert_eq!(status, StatusCode::NOT_MODIFIED);
        }
        let row = posted_row(
            "other-process-1",
            NaiveDate::from_ymd_opt(2026, 11, 20).unwrap(),
            Decimal::new(-1999, 2),
            "EUR",
            "Bookshop",
        );
        insert_transactions(db, account, &[row]).unwrap();
        let written = Instant::now();
        let took = until_answered(&server, &path, &key, Some(&etag), StatusCode::OK, written).await;
        assert!(
            took < Duration::from_secs(1),
            "new data seen after {took:?}"
        );

        // Kept responses: the page and the list of accounts, asked for
        // again and again, show another process's change within a second.
        let path = format!("/api/v1/accounts/{account}/transactions?limit=5");
        let since = Instant::now();
        until_shown(&server, &path, &key, "Bookshop", since).await;
        let row = posted_row(
            "other-process-2",
            NaiveDate::from_ymd_opt(2026, 11, 21).unwrap(),
            Decimal::new(-250, 2),
            "EUR",
            "Bakery",
        );
        insert_transactions(db, account, &[row]).unwrap();
        let written = Instant::now();
        let took = until_shown(&server, &path, &key, "Bakery", written).await;
        assert!(
            took < Duration::from_secs(1),
            "a kept page showed new data after {took:?}"
        );
        let connection = {
            let conn = &mut *db.conn().unwrap();
            let viewer = tributary_domain::access::Viewer::whole_user(user);
            tributary_storage::read::find_account(conn, &viewer, account)
                .unwrap()
                .unwrap()
                .connection_id
        };
        for _ in 0..3 {
            until_shown(
                &server,
                "/api/v1/accounts",
                &key,
                "\"ACTIVE\"",
                Instant::now(),
            )
            .await;
        }
        tributary_storage::connections::disconnect(
            &mut db.conn().unwrap(),
            connection,
            Utc::now().naive_utc(),
        )
        .unwrap();
        let written = Instant::now();
        let took = until_shown(
            &server,
            "/api/v1/accounts",
            &key,
            "\"DISCONNECTED\"",
            written,
        )
        .await;
        assert!(
            took < Duration::from_secs(1),
            "a kept list of accounts showed a disconnection after {took:?}"
        );

        // A revocation, as `tributary keys revoke` makes it.
        let (status, _) = get(&server, "/api/v1/accounts", &key, None).await;
        assert_eq!(status, StatusCode::OK);
        tributary_storage::api_keys::revoke(
            &mut db.conn().unwrap(),
            issued.record.id,
            Utc::now().naive_utc(),
        )
        .unwrap();
        let revoked = Instant::now();
        let took = until_answered(
            &server,
            "/api/v1/accounts",
            &key,
            None,
            StatusCode::UNAUTHORIZED,
            revoked,
        )
        .await;
        assert!(
            took < Duration::from_secs(1),
            "revocation seen after {took:?}"
        );
        eprintln!(
            "-- {:?}: revocation refused after {took:?}",
            database.backend()
        );
    }
}
