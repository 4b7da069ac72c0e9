//! The Personal API end to end: the real server on a free port, over SQLite
//! and PostgreSQL, checked field by field against the shapes existing
//! clients read (crates/http/src/wire.rs, docs/api-reference.md).

// Test code: a failed unwrap is a failed test, with its message.
#![allow(clippy::unwrap_used)]

use reqwest::{Client, Response, StatusCode};
use serde_json::Value;
use tributary_e2e::harness::personal as on_every_backend;
use tributary_e2e::{EXACT_AMOUNTS, TestServer, assert_same_rows, start};
use tributary_storage::testing::{TestDatabase, dump};

async fn get(server: &TestServer, path: &str, key: Option<&str>) -> Response {
    let mut request = Client::new().get(server.url(path));
    if let Some(key) = key {
        request = request.header("x-api-key", key);
    }
    request.send().await.expect("request")
}

async fn get_json(server: &TestServer, path: &str, key: &str) -> Value {
    let response = get(server, path, Some(key)).await;
    assert_eq!(response.status(), StatusCode::OK, "{path}");
    response.json().await.expect("JSON body")
}

/// Asserts the error envelope and returns the body.
async fn expect_error(response: Response, status: StatusCode, code: &str) -> Value {
    assert_eq!(response.status(), status);
    let header_id = response
        .headers()
        .get("x-request-id")
        .expect("x-request-id")
        .to_str()
        .unwrap()
        .to_owned();
    let body: Value = response.json().await.expect("JSON error body");
    assert_eq!(body["code"], code, "{body}");
    assert_eq!(body["error"], status.canonical_reason().unwrap(), "{body}");
    assert!(
        body["message"].as_str().is_some_and(|m| !m.is_empty()),
        "{body}"
    );
    assert_eq!(
        body["request_id"],
        header_id.as_str(),
        "body and header carry the same id"
    );
    assert_eq!(body.as_object().unwrap().len(), 4, "{body}");
    body
}

fn keys(value: &Value) -> Vec<&str> {
    let mut keys: Vec<&str> = value
        .as_object()
        .expect("object")
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort_unstable();
    keys
}

fn is_string_or_null(v: &Value) -> bool {
    v.is_string() || v.is_null()
}

#[actix_web::test]
async fn accounts_match_the_wire_format() {
    on_every_backend(|server| async move {
        let body = get_json(&server, "/api/v1/accounts", &server.world.alice_key).await;
        assert_eq!(keys(&body), ["accounts", "total"]);
        let accounts = body["accounts"].as_array().unwrap();
        assert_eq!(body["total"].as_u64().unwrap() as usize, accounts.len());
        assert_eq!(
            accounts.len(),
            server.world.alice_sandbox_accounts.len() + 1
        );
        for account in accounts {
            // `liability` is there for a card or loan whose provider
            // states its terms, and only then.
            let mut expected = vec!["currency", "id", "institution_logo", "institution_name"];
            if account["type"] == "credit_card" {
                expected.push("liability");
            }
            expected.extend(["mask", "name", "provider", "status", "type"]);
            assert_eq!(keys(account), expected, "{account}");
            assert!(account["id"].is_i64());
            assert!(account["name"].is_string() && account["institution_name"].is_string());
            assert!(is_string_or_null(&account["institution_logo"]));
            assert!(["sandbox", "csv"].contains(&account["provider"].as_str().unwrap()));
            assert_eq!(account["status"], "ACTIVE");
        }
        let imported = accounts
            .iter()
            .find(|a| a["id"] == server.world.alice_imported.get())
            .unwrap();
        assert_eq!(imported["institution_logo"], "https://logos.example/cu.png");
        // The sandbox card's terms: its limit, last month's statement and
        // the 2 % minimum (at least 25.00), due on the 5th.
        let card = accounts
            .iter()
            .find(|a| a["type"] == "credit_card")
            .unwrap();
        let terms = &card["liability"];
        assert_eq!(
            keys(terms),
            [
                "creditLimit",
                "lastStatementBalance",
                "minimumPayment",
                "nextPaymentDueDate"
            ]
        );
        assert_eq!(terms["creditLimit"].to_string(), "15000.00");
        let statement: f64 = terms["lastStatementBalance"].as_f64().unwrap();
        let minimum: f64 = terms["minimumPayment"].as_f64().unwrap();
        assert!(
            statement > 0.0 && minimum > 0.0 && minimum <= statement,
            "{terms}"
        );
        assert!(
            terms["nextPaymentDueDate"]
                .as_str()
                .unwrap()
                .ends_with("-05"),
            "{terms}"
        );
        assert_eq!(imported["currency"], "EUR");
        let ids: Vec<i64> = accounts.iter().map(|a| a["id"].as_i64().unwrap()).collect();
        assert!(
            !ids.contains(&server.world.bob_account.get()),
            "no one sees another user's accounts"
        );
        server
    })
    .await;
}

#[actix_web::test]
async fn transactions_match_the_wire_format_and_keep_exact_amounts() {
    on_every_backend(|server| async move {
        let path = format!(
            "/api/v1/accounts/{}/transactions",
            server.world.alice_imported
        );
        let response = get(&server, &path, Some(&server.world.alice_key)).await;
        let text = response.text().await.unwrap();
        for amount in EXACT_AMOUNTS {
            assert!(
                text.contains(&format!("\"amount\":{amount},")),
                "{amount} in {text}"
            );
        }
        let body: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            keys(&body),
            ["total", "transactions"],
            "no nextCursor when not paging"
        );
        let list = body["transactions"].as_array().unwrap();
        assert_eq!(list.len(), 3, "posted only by default");
        assert_eq!(body["total"], 3);
        for t in list {
            assert_eq!(
                keys(t),
                [
                    "accountId",
                    "amount",
                    "category",
                    "currency",
                    "date",
                    "description",
                    "id",
                    "isPending",
                    "merchant",
                    "subcategory",
                    "transferAccountId"
                ]
            );
            // Enriched as stored: a category of the taxonomy, and its
            // subcategory's id under it.
            let category = t["category"].as_str().unwrap();
            assert!(
                tributary_domain::taxonomy::Category::from_name(category).is_some(),
                "{category}"
            );
            let subcategory = t["subcategory"].as_str().unwrap();
            assert_eq!(
                tributary_domain::taxonomy::Subcategory::from_id(subcategory)
                    .map(|s| s.category.name()),
                Some(category)
            );
            assert!(t["id"].is_string());
            assert_eq!(t["accountId"], server.world.alice_imported.get());
            assert!(t["amount"].is_number());
            assert_eq!(t["currency"], "EUR");
            assert_eq!(t["date"].as_str().unwrap().len(), 10);
            assert!(is_string_or_null(&t["merchant"]) && is_string_or_null(&t["description"]));
            assert_eq!(t["isPending"], false);
        }
        let dates: Vec<&str> = list.iter().map(|t| t["date"].as_str().unwrap()).collect();
        assert_eq!(
            dates,
            ["2026-11-03", "2026-11-02", "2026-11-01"],
            "newest first"
        );

        let with_pending = get_json(
            &server,
            &format!("{path}?include_pending=true"),
            &server.world.alice_key,
        )
        .await;
        let first = &with_pending["transactions"][0];
        assert_eq!(
            (first["isPending"].clone(), first["merchant"].clone()),
            (Value::Bool(true), Value::from("Bakery"))
        );
        assert_eq!(with_pending["total"], 4);

        let window = get_json(
            &server,
            &format!("{path}?from=2026-11-02&to=2026-11-02"),
            &server.world.alice_key,
        )
        .await;
        assert_eq!(window["total"], 1, "from and to are inclusive");
        assert_eq!(window["transactions"][0]["date"], "2026-11-02");
        server
    })
    .await;
}

#[actix_web::test]
async fn paging_walks_the_whole_list_once() {
    on_every_backend(|server| async move {
        let account = server.world.alice_sandbox_accounts[2];
        let path = format!("/api/v1/accounts/{account}/transactions");
        let whole = get_json(&server, &path, &server.world.alice_key).await;
        let expected: Vec<Value> = whole["transactions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["id"].clone())
            .collect();
        assert!(
            expected.len() > 100,
            "the card account has a year of purchases"
        );

        let mut seen = Vec::new();
        let mut next = format!("{path}?limit=50");
        loop {
            let page = get_json(&server, &next, &server.world.alice_key).await;
            assert_eq!(page["total"].as_u64().unwrap() as usize, expected.len());
            let items = page["transactions"].as_array().unwrap();
            assert!(items.len() <= 50);
            seen.extend(items.iter().map(|t| t["id"].clone()));
            match &page["nextCursor"] {
                Value::String(cursor) => next = format!("{path}?limit=50&cursor={cursor}"),
                Value::Null => break,
                other => panic!("nextCursor must be a string or null, got {other}"),
            }
        }
        assert_eq!(seen, expected);
        server
    })
    .await;
}

#[actix_web::test]
async fn balance_and_holdings_match_the_wire_format() {
    on_every_backend(|server| async move {
        let key = &server.world.alice_key;
        let balance = get_json(
            &server,
            &format!("/api/v1/accounts/{}/balance", server.world.alice_imported),
            key,
        )
        .await;
        assert_eq!(keys(&balance), ["balance"]);
        assert_eq!(keys(&balance["balance"]), ["amount", "asOf", "currency"]);
        assert_eq!(balance["balance"]["amount"].to_string(), "1000.50");
        assert_eq!(balance["balance"]["asOf"], "2026-11-21T12:00:00Z");

        let holdings = get_json(
            &server,
            &format!("/api/v1/accounts/{}/holdings", server.world.alice_brokerage),
            key,
        )
        .await;
        assert_eq!(keys(&holdings), ["currency", "holdings", "totalValue"]);
        assert_eq!(holdings["currency"], "USD");
        let list = holdings["holdings"].as_array().unwrap();
        assert!(list.len() >= 2);
        let mut currencies = std::collections::HashSet::new();
        for h in list {
            assert_eq!(
                keys(h),
                [
                    "costBasis",
                    "currency",
                    "price",
                    "quantity",
                    "raw",
                    "security",
                    "value"
                ]
            );
            assert_eq!(
                keys(&h["security"]),
                ["currency", "cusp", "figi", "isin", "name", "tickerSymbol"]
            );
            for field in ["quantity", "price", "value"] {
                assert!(h[field].is_number(), "{field}");
            }
            assert!(h["costBasis"].is_number() || h["costBasis"].is_null());
            assert!(h["raw"].is_object());
            currencies.insert(h["currency"].as_str().unwrap().to_owned());
        }
        assert!(currencies.len() >= 2, "holdings in two currencies");
        let apple = list
            .iter()
            .find(|h| h["security"]["tickerSymbol"] == "AAPL")
            .unwrap();
        assert_eq!(apple["security"]["cusp"], "037833100");
        assert!(holdings["totalValue"].as_f64().unwrap() > 0.0);

        let response = get(
            &server,
            &format!("/api/v1/accounts/{}/holdings", server.world.alice_imported),
            Some(key),
        )
        .await;
        // 501 exactly: clients map it to "not supported" (400 fails their sync).
        expect_error(
            response,
            StatusCode::NOT_IMPLEMENTED,
            "HOLDINGS_NOT_SUPPORTED",
        )
        .await;
        server
    })
    .await;
}

#[actix_web::test]
async fn credentials_are_checked() {
    on_every_backend(|server| async move {
        let path = "/api/v1/accounts";
        let response = get(&server, path, None).await;
        assert_eq!(
            response.headers()["www-authenticate"],
            r#"Bearer realm="tributary""#
        );
        expect_error(response, StatusCode::UNAUTHORIZED, "MISSING_CREDENTIALS").await;
        expect_error(
            get(&server, path, Some("not-a-key")).await,
            StatusCode::UNAUTHORIZED,
            "MALFORMED_API_KEY",
        )
        .await;
        let unknown = format!("trb_{}", "A".repeat(43));
        expect_error(
            get(&server, path, Some(&unknown)).await,
            StatusCode::UNAUTHORIZED,
            "INVALID_API_KEY",
        )
        .await;
        expect_error(
            get(&server, path, Some(&server.world.alice_revoked_key)).await,
            StatusCode::UNAUTHORIZED,
            "API_KEY_REVOKED",
        )
        .await;
        let basic = Client::new()
            .get(server.url(path))
            .header("authorization", "Basic YTpi")
            .send()
            .await
            .unwrap();
        expect_error(basic, StatusCode::UNAUTHORIZED, "MISSING_CREDENTIALS").await;

        let bearer = Client::new()
            .get(server.url(path))
            .bearer_auth(&server.world.alice_key)
            .send()
            .await
            .unwrap();
        assert_eq!(
            bearer.status(),
            StatusCode::OK,
            "Authorization: Bearer is accepted too"
        );
        server
    })
    .await;
}

#[actix_web::test]
async fn a_scoped_key_sees_only_its_accounts() {
    on_every_backend(|server| async move {
        let key = &server.world.alice_scoped_key;
        let body = get_json(&server, "/api/v1/accounts", key).await;
        assert_eq!(body["total"], 1);
        assert_eq!(body["accounts"][0]["id"], server.world.alice_imported.get());
        for endpoint in ["transactions", "balance", "holdings"] {
            let path = format!(
                "/api/v1/accounts/{}/{endpoint}",
                server.world.alice_brokerage
            );
            expect_error(
                get(&server, &path, Some(key)).await,
                StatusCode::NOT_FOUND,
                "ACCOUNT_NOT_FOUND",
            )
            .await;
        }
        server
    })
    .await;
}

#[actix_web::test]
async fn another_users_account_looks_exactly_like_a_missing_one() {
    on_every_backend(|server| async move {
        let key = &server.world.alice_key;
        let foreign_id = server.world.bob_account;
        // The same id, asked by its owner, exists:
        let owner = get(
            &server,
            &format!("/api/v1/accounts/{foreign_id}/balance"),
            Some(&server.world.bob_key),
        )
        .await;
        assert_eq!(owner.status(), StatusCode::OK);
        for endpoint in ["transactions", "balance", "holdings"] {
            let foreign = get(
                &server,
                &format!("/api/v1/accounts/{foreign_id}/{endpoint}"),
                Some(key),
            )
            .await;
            let nowhere = get(
                &server,
                &format!("/api/v1/accounts/987654/{endpoint}"),
                Some(key),
            )
            .await;
            let mut foreign =
                expect_error(foreign, StatusCode::NOT_FOUND, "ACCOUNT_NOT_FOUND").await;
            let mut nowhere =
                expect_error(nowhere, StatusCode::NOT_FOUND, "ACCOUNT_NOT_FOUND").await;
            foreign["request_id"] = Value::Null;
            nowhere["request_id"] = Value::Null;
            assert_eq!(foreign, nowhere, "{endpoint}");
        }
        server
    })
    .await;
}

#[actix_web::test]
async fn malformed_input_gets_400_naming_the_parameter() {
    on_every_backend(|server| async move {
        let key = Some(server.world.alice_key.as_str());
        let base = format!(
            "/api/v1/accounts/{}/transactions",
            server.world.alice_imported
        );
        let cases = [
            (
                "/api/v1/accounts/abc/transactions".to_owned(),
                "INVALID_ACCOUNT_ID",
                "accountId",
            ),
            (
                "/api/v1/accounts/12.5/balance".to_owned(),
                "INVALID_ACCOUNT_ID",
                "accountId",
            ),
            (format!("{base}?from=2026-02-30"), "INVALID_DATE", "from"),
            (format!("{base}?to=21/11/2026"), "INVALID_DATE", "to"),
            (
                format!("{base}?from=2026-11-05&to=2026-11-01"),
                "INVALID_DATE_RANGE",
                "from",
            ),
            (format!("{base}?cursor=garbage"), "INVALID_CURSOR", "cursor"),
            (format!("{base}?limit=0"), "INVALID_LIMIT", "limit"),
            (format!("{base}?limit=5000"), "INVALID_LIMIT", "limit"),
            (
                format!("{base}?include_pending=yes"),
                "INVALID_PARAMETER",
                "include_pending",
            ),
        ];
        for (path, code, parameter) in cases {
            let body = expect_error(
                get(&server, &path, key).await,
                StatusCode::BAD_REQUEST,
                code,
            )
            .await;
            assert!(
                body["message"].as_str().unwrap().contains(parameter),
                "{path}: {body}"
            );
            // Without a valid key the same request is turned away as
            // unauthenticated first: validation tells a stranger nothing.
            let forged = "trb_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";
            expect_error(
                get(&server, &path, Some(forged)).await,
                StatusCode::UNAUTHORIZED,
                "INVALID_API_KEY",
            )
            .await;
        }
        expect_error(
            get(&server, "/api/v1/nothing-here", key).await,
            StatusCode::NOT_FOUND,
            "NOT_FOUND",
        )
        .await;
        server
    })
    .await;
}

#[actix_web::test]
async fn health_checks_answer() {
    on_every_backend(|server| async move {
        let health = get(&server, "/healthz", None).await;
        assert_eq!(health.status(), StatusCode::OK);
        assert!(health.headers().contains_key("x-request-id"));
        let ready: Value = get(&server, "/readyz", None).await.json().await.unwrap();
        assert_eq!(ready["status"], "ready");
        server
    })
    .await;
}

#[actix_web::test]
async fn no_issued_key_is_stored_in_plain_text() {
    on_every_backend(|server| async move {
        // Use every key once, so last-used bookkeeping has written too.
        for key in &server.world.issued_keys {
            let _ = get(&server, "/api/v1/accounts", Some(key)).await;
        }
        let everything = dump(server.database.db());
        assert!(
            everything.contains("alice@example.com"),
            "the dump does show stored data"
        );
        for key in &server.world.issued_keys {
            assert!(
                !everything.contains(key.as_str()),
                "a key is stored in plain text"
            );
            assert!(
                !everything.contains(&key[4..]),
                "a key's secret part is stored in plain text"
            );
            assert!(
                everything.contains(&tributary_auth::secret::hash(key)),
                "its hash is what is stored"
            );
        }
        server
    })
    .await;
}

#[actix_web::test]
async fn a_caller_supplied_request_id_is_echoed() {
    on_every_backend(|server| async move {
        let response = Client::new()
            .get(server.url("/api/v1/accounts"))
            .header("x-request-id", "trace-42")
            .send()
            .await
            .unwrap();
        assert_eq!(response.headers()["x-request-id"], "trace-42");
        let body: Value = response.json().await.unwrap();
        assert_eq!(body["request_id"], "trace-42");
        server
    })
    .await;
}

async fn post(server: &TestServer, path: &str, key: &str) -> Response {
    Client::new()
        .post(server.url(path))
        .header("x-api-key", key)
        .send()
        .await
        .expect("request")
}

#[actix_web::test]
async fn connections_show_their_status() {
    on_every_backend(|server| async move {
        let body = get_json(&server, "/api/v1/connections", &server.world.alice_key).await;
        assert_eq!(body["total"], 2);
        for c in body["connections"].as_array().unwrap() {
            assert_eq!(
                keys(c),
                [
                    "consecutive_failures",
                    "id",
                    "institution_name",
                    "last_synced_at",
                    "next_sync_at",
                    "provider",
                    "status",
                    "status_reason"
                ]
            );
            assert_eq!(c["status"], "ACTIVE");
            assert!(c["last_synced_at"].as_str().unwrap().ends_with('Z'));
        }
        let scoped = get_json(
            &server,
            "/api/v1/connections",
            &server.world.alice_scoped_key,
        )
        .await;
        assert_eq!(
            scoped["total"], 1,
            "a restricted key sees only the connections of its accounts"
        );
        assert_eq!(
            scoped["connections"][0]["id"],
            server.world.alice_imported_connection.get()
        );
        server
    })
    .await;
}

#[actix_web::test]
async fn a_sync_can_be_asked_for_once_a_minute() {
    on_every_backend(|server| async move {
        let key = server.world.alice_key.clone();
        let path = format!(
            "/api/v1/connections/{}/sync",
            server.world.alice_sandbox_connection
        );
        let first = post(&server, &path, &key).await;
        assert_eq!(first.status(), StatusCode::ACCEPTED);
        let first: Value = first.json().await.unwrap();
        assert_eq!(
            (first["status"].as_str(), first["created"].as_bool()),
            (Some("queued"), Some(true))
        );
        assert!(first["job_id"].is_i64());

        // Asked again while queued: the same job.
        let again: Value = post(&server, &path, &key).await.json().await.unwrap();
        assert_eq!(
            (again["job_id"].clone(), again["created"].clone()),
            (first["job_id"].clone(), Value::Bool(false))
        );

        // The job runs (as a worker would), then a new request within the
        // minute is refused with Retry-After, and accepted after it.
        let db = server.database.db().clone();
        let clock = server.clock.clone();
        actix_web::web::block(move || {
            let mut registry = tributary_providers::Registry::default();
            registry.register(std::sync::Arc::new(
                tributary_providers::sandbox::SandboxConnector::default(),
            ));
            let engine = tributary_providers::sync::SyncEngine::new(db, registry, clock);
            let job = engine.claim_next("e2e-worker").unwrap().unwrap();
            engine.run_job(&job).unwrap();
        })
        .await
        .unwrap();
        server.clock.advance(chrono::Duration::seconds(20));
        let limited = post(&server, &path, &key).await;
        assert_eq!(limited.headers()["retry-after"], "40");
        let body = expect_error(limited, StatusCode::TOO_MANY_REQUESTS, "SYNC_RATE_LIMITED").await;
        // Some clients read the wait from the text, as "try again in N seconds".
        assert!(
            body["message"]
                .as_str()
                .unwrap()
                .ends_with("try again in 40 seconds."),
            "{body}"
        );
        server.clock.advance(chrono::Duration::seconds(41));
        assert_eq!(
            post(&server, &path, &key).await.status(),
            StatusCode::ACCEPTED
        );
        server
    })
    .await;
}

#[actix_web::test]
async fn a_disconnected_connection_keeps_its_data_and_is_not_synced() {
    on_every_backend(|server| async move {
        let key = server.world.alice_key.clone();
        let connection = server.world.alice_sandbox_connection;
        let before = get_json(&server, "/api/v1/accounts", &key).await;
        let path = format!("/api/v1/connections/{connection}/disconnect");
        let answer = post(&server, &path, &key).await;
        assert_eq!(answer.status(), StatusCode::OK);
        let body: Value = answer.json().await.unwrap();
        assert_eq!(
            (body["id"].as_i64(), body["status"].as_str()),
            (Some(connection.get()), Some("DISCONNECTED")),
            "{body}"
        );
        // Its data stays (its accounts say DISCONNECTED); a sync is
        // refused; nothing is scheduled.
        let mut after = get_json(&server, "/api/v1/accounts", &key).await;
        for account in after["accounts"].as_array_mut().unwrap() {
            if account["provider"] == "sandbox" {
                assert_eq!(account["status"], "DISCONNECTED");
                account["status"] = Value::from("ACTIVE");
            }
        }
        assert_eq!(after, before);
        let sync = post(
            &server,
            &format!("/api/v1/connections/{connection}/sync"),
            &key,
        )
        .await;
        expect_error(sync, StatusCode::CONFLICT, "CONNECTION_DISCONNECTED").await;
        let listed = get_json(&server, "/api/v1/connections", &key).await;
        let line = listed["connections"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["id"] == connection.get())
            .unwrap()
            .clone();
        assert_eq!(
            (line["status"].as_str(), line["next_sync_at"].as_str()),
            (Some("DISCONNECTED"), None),
            "{line}"
        );
        // Again: still disconnected, still 200.
        assert_eq!(post(&server, &path, &key).await.status(), StatusCode::OK);
        // Statement imports are never synced; others' connections are unseen.
        let imported = post(
            &server,
            &format!(
                "/api/v1/connections/{}/disconnect",
                server.world.alice_imported_connection
            ),
            &key,
        )
        .await;
        expect_error(imported, StatusCode::CONFLICT, "CONNECTION_NOT_SYNCED").await;
        let foreign = post(
            &server,
            &format!(
                "/api/v1/connections/{}/disconnect",
                server.world.bob_connection
            ),
            &key,
        )
        .await;
        expect_error(foreign, StatusCode::NOT_FOUND, "CONNECTION_NOT_FOUND").await;
        server
    })
    .await;
}

#[actix_web::test]
async fn foreign_and_malformed_connection_ids_are_refused() {
    on_every_backend(|server| async move {
        let key = server.world.alice_key.clone();
        let foreign = post(
            &server,
            &format!("/api/v1/connections/{}/sync", server.world.bob_connection),
            &key,
        )
        .await;
        let mut foreign =
            expect_error(foreign, StatusCode::NOT_FOUND, "CONNECTION_NOT_FOUND").await;
        let missing = post(&server, "/api/v1/connections/999999/sync", &key).await;
        let mut missing =
            expect_error(missing, StatusCode::NOT_FOUND, "CONNECTION_NOT_FOUND").await;
        foreign["request_id"] = Value::Null;
        missing["request_id"] = Value::Null;
        assert_eq!(foreign, missing);
        let scoped = post(
            &server,
            &format!(
                "/api/v1/connections/{}/sync",
                server.world.alice_sandbox_connection
            ),
            &server.world.alice_scoped_key,
        )
        .await;
        expect_error(scoped, StatusCode::NOT_FOUND, "CONNECTION_NOT_FOUND").await;
        expect_error(
            post(&server, "/api/v1/connections/abc/sync", &key).await,
            StatusCode::BAD_REQUEST,
            "INVALID_CONNECTION_ID",
        )
        .await;
        server
    })
    .await;
}

async fn upload(server: &TestServer, key: &str, files: &[(&str, Vec<u8>)]) -> Response {
    let mut form = reqwest::multipart::Form::new();
    for (name, bytes) in files {
        form = form.part(
            "file",
            reqwest::multipart::Part::bytes(bytes.clone()).file_name(name.to_string()),
        );
    }
    upload_form(server, key, form).await
}

async fn upload_form(server: &TestServer, key: &str, form: reqwest::multipart::Form) -> Response {
    Client::new()
        .post(server.url("/api/v1/imports"))
        .header("x-api-key", key)
        .multipart(form)
        .send()
        .await
        .unwrap()
}

#[actix_web::test]
async fn statements_uploaded_over_http_are_served_and_a_bad_file_changes_nothing() {
    use tributary_storage::testing::testdata_bytes;
    on_every_backend(|server| async move {
        let key = server.world.bob_key.clone();
        let camt = testdata_bytes("genkgo-camt/data/camt053.v2.multi.statement.xml");
        let ofx = testdata_bytes("ofxparse/fixtures/investment_401k.ofx");
        let files = [("statement.xml", camt.clone()), ("401k.ofx", ofx.clone())];
        let first = upload(&server, &key, &files).await;
        assert_eq!(first.status(), StatusCode::OK);
        let summary: Value = first.json().await.unwrap();
        assert_eq!(
            (summary["files"].as_u64(), summary["statements"].as_u64()),
            (Some(2), Some(3)),
            "{summary}"
        );
        assert!(summary["added"].as_u64().unwrap() > 0);

        let accounts = get_json(&server, "/api/v1/accounts", &key).await;
        let imported: Vec<&Value> = accounts["accounts"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|a| a["provider"] == "file")
            .collect();
        assert_eq!(imported.len(), 2, "{accounts}");
        let camt_account = imported.iter().find(|a| a["mask"] == "6890").unwrap()["id"]
            .as_i64()
            .unwrap();
        let transactions = get_json(
            &server,
            &format!("/api/v1/accounts/{camt_account}/transactions"),
            &key,
        )
        .await;
        assert_eq!(transactions["total"], 2);
        let balance = get_json(
            &server,
            &format!("/api/v1/accounts/{camt_account}/balance"),
            &key,
        )
        .await;
        assert_eq!(
            balance["balance"]["amount"].to_string(),
            "20.00",
            "the last statement's closing balance"
        );
        let brokerage = imported.iter().find(|a| a["type"] == "brokerage").unwrap()["id"]
            .as_i64()
            .unwrap();
        let holdings = get_json(
            &server,
            &format!("/api/v1/accounts/{brokerage}/holdings"),
            &key,
        )
        .await;
        assert!(holdings["holdings"].as_array().unwrap().len() >= 2);

        // The same files again: nothing new.
        let again: Value = upload(&server, &key, &files).await.json().await.unwrap();
        assert_eq!(
            (again["added"].as_u64(), again["updated"].as_u64()),
            (Some(0), Some(0)),
            "{again}"
        );

        // A truncated file among good ones: 400 naming it, nothing stored.
        let before = get_json(&server, "/api/v1/accounts", &key).await;
        let truncated = camt[..camt.len() / 2].to_vec();
        let mbank = testdata_bytes("mt940-wolph/mBank/mt940.sta");
        let bad = upload(
            &server,
            &key,
            &[("good.sta", mbank), ("half.xml", truncated)],
        )
        .await;
        let body = expect_error(bad, StatusCode::BAD_REQUEST, "FILE_UNREADABLE").await;
        let message = body["message"].as_str().unwrap();
        assert!(
            message.contains("half.xml") && message.contains("byte"),
            "{message}"
        );
        assert_eq!(
            get_json(&server, "/api/v1/accounts", &key).await,
            before,
            "the good file was not stored either"
        );

        // A CSV layout Tributary does not know: the answer says what an
        // HTTP caller can do, and a `profile` part does it.
        let csv = b"when;what;how much\n2026-01-05;Rent;-850,00\n".to_vec();
        let unknown = upload(&server, &key, &[("bank.csv", csv.clone())]).await;
        let body = expect_error(unknown, StatusCode::BAD_REQUEST, "FILE_UNREADABLE").await;
        let message = body["message"].as_str().unwrap();
        assert!(
            message.contains("?format=") && message.contains("`profile` part") && !message.contains("--"),
            "{message}"
        );
        let profile = r#"{"delimiter": ";", "date": "when", "amount": "how much", "description": "what", "decimal_comma": true, "account": "DE02100100109307118603"}"#;
        let form = reqwest::multipart::Form::new()
            .text("profile", profile)
            .part("file", reqwest::multipart::Part::bytes(csv).file_name("bank.csv"));
        let read: Value = upload_form(&server, &key, form).await.json().await.unwrap();
        assert_eq!(read["added"], 1, "{read}");
        let bad_profile = reqwest::multipart::Form::new()
            .text("profile", r#"{"date": 0, "colour": "red"}"#)
            .part("file", reqwest::multipart::Part::bytes(b"x".to_vec()).file_name("a.csv"));
        let refused = upload_form(&server, &key, bad_profile).await;
        let body = expect_error(refused, StatusCode::BAD_REQUEST, "INVALID_PARAMETER").await;
        assert!(body["message"].as_str().unwrap().contains("colour"), "{body}");

        // Keys limited to some accounts may not import.
        let restricted = upload(&server, &server.world.alice_scoped_key, &files).await;
        expect_error(restricted, StatusCode::FORBIDDEN, "KEY_RESTRICTED").await;
        server
    })
    .await;
}

/// (date, amount, description) of every transaction of `key`'s account
/// named `name`, sorted.
async fn transactions_of(
    server: &TestServer,
    key: &str,
    name: &str,
) -> Vec<(String, String, String)> {
    let accounts = get_json(server, "/api/v1/accounts", key).await;
    let id = accounts["accounts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == name)
        .unwrap_or_else(|| panic!("an account {name}: {accounts}"))["id"]
        .as_i64()
        .unwrap();
    let list = get_json(server, &format!("/api/v1/accounts/{id}/transactions"), key).await;
    let mut rows: Vec<(String, String, String)> = list["transactions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["date"].to_string(),
                t["amount"].to_string(),
                t["description"].to_string(),
            )
        })
        .collect();
    rows.sort();
    rows
}

#[actix_web::test]
async fn a_daily_camt_series_uploads_whole_in_any_order_or_all_at_once() {
    use tributary_providers::import::samples;
    let days = 10;
    on_every_backend(|server| async move {
        let series = samples::daily_camt053_series(days);
        // Bob: one file a request, odd days first, then the even ones.
        let (odd, even): (Vec<_>, Vec<_>) =
            series.iter().enumerate().partition(|(n, _)| n % 2 == 0);
        for (_, (name, bytes)) in odd.into_iter().chain(even) {
            let answer = upload(
                &server,
                &server.world.bob_key,
                &[(name.as_str(), bytes.clone())],
            )
            .await;
            assert_eq!(answer.status(), StatusCode::OK);
        }
        // Alice: all in one request, then again.
        let files: Vec<(&str, Vec<u8>)> = series
            .iter()
            .map(|(name, bytes)| (name.as_str(), bytes.clone()))
            .collect();
        let first: Value = upload(&server, &server.world.alice_key, &files)
            .await
            .json()
            .await
            .unwrap();
        assert!(
            !first["notes"].to_string().contains("may be missing"),
            "the balances run on from day to day: {first}"
        );
        let again: Value = upload(&server, &server.world.alice_key, &files)
            .await
            .json()
            .await
            .unwrap();
        assert_eq!(
            (again["added"].as_u64(), again["updated"].as_u64()),
            (Some(0), Some(0)),
            "{again}"
        );
        let bob = transactions_of(&server, &server.world.bob_key, "Ada Lovelace").await;
        assert_eq!(bob.len(), 3 * days as usize, "twins kept apart: {bob:?}");
        assert_eq!(
            bob,
            transactions_of(&server, &server.world.alice_key, "Ada Lovelace").await
        );
        server
    })
    .await;
}

/// A multipart import: CSV files (name, text) and plain fields.
fn import_form(files: &[(&str, &str)], fields: &[(&str, &str)]) -> reqwest::multipart::Form {
    let mut form = reqwest::multipart::Form::new();
    for (name, value) in fields {
        form = form.text(name.to_string(), value.to_string());
    }
    for (name, text) in files {
        form = form.part(
            "file",
            reqwest::multipart::Part::bytes(text.as_bytes().to_vec()).file_name(name.to_string()),
        );
    }
    form
}

/// (name, currency, mask, count, signed sum, currencies of the rows) of
/// each imported account of `key`'s user.
async fn imported_accounts(
    server: &TestServer,
    key: &str,
) -> Vec<(String, String, Value, usize, String, Vec<String>)> {
    use tributary_domain::money::Decimal;
    let accounts = get_json(server, "/api/v1/accounts", key).await;
    let mut out = Vec::new();
    for account in accounts["accounts"].as_array().unwrap() {
        if account["provider"] != "file" {
            continue;
        }
        let id = account["id"].as_i64().unwrap();
        let list = get_json(server, &format!("/api/v1/accounts/{id}/transactions"), key).await;
        let rows = list["transactions"].as_array().unwrap();
        let sum: Decimal = rows
            .iter()
            .map(|t| t["amount"].to_string().parse::<Decimal>().unwrap())
            .sum();
        let mut currencies: Vec<String> = rows
            .iter()
            .map(|t| t["currency"].as_str().unwrap().to_owned())
            .collect();
        currencies.sort();
        currencies.dedup();
        out.push((
            account["name"].as_str().unwrap().to_owned(),
            account["currency"].as_str().unwrap().to_owned(),
            account["mask"].clone(),
            rows.len(),
            sum.to_string(),
            currencies,
        ));
    }
    out
}

/// A German savings-bank export of two accounts (`Auftragskonto`), one
/// IBAN written in groups; `Kontonummer/IBAN` is the other party's.
const TWO_IBANS: &str = "Auftragskonto;Buchungstag;Valutadatum;Buchungstext;Verwendungszweck;Beguenstigter/Zahlungspflichtiger;Kontonummer/IBAN;Betrag;Waehrung\n\
DE02120300000000202051;02.03.26;02.03.26;LASTSCHRIFT;Strom;Stadtwerke;DE89370400440532013000;-84,00;EUR\n\
DE02 5001 0517 0137 0750 30;03.03.26;03.03.26;GUTSCHRIFT;Zinsen;;;1,25;EUR\n\
DE02120300000000202051;04.03.26;04.03.26;GEHALT;Gehalt;Arbeitgeber;DE75512108001245126199;2.500,00;EUR\n";

/// A US card export: no currency anywhere, charges negative.
const CARD: &str = "Transaction Date,Description,Amount\n03/02/2026,NYC Coffee,-4.50\n03/03/2026,Bookshop,-23.99\n03/05/2026,Payment Thank You,100.00\n";

#[actix_web::test]
async fn uploads_route_rows_by_their_account_column_or_into_the_account_chosen() {
    on_every_backend(|server| async move {
        let key = server.world.bob_key.clone();
        let post = |form| upload_form(&server, &key, form);
        // Two IBANs, and another bank's export naming no account, in one
        // upload: three accounts.
        let bank = "Date,Description,Amount,Currency\n2026-03-02,Groceries,-42.10,EUR\n";
        let answer: Value = post(import_form(
            &[("sparkasse.csv", TWO_IBANS), ("bank.csv", bank)],
            &[],
        ))
        .await
        .json()
        .await
        .unwrap();
        assert_eq!(
            (&answer["statements"], &answer["accounts"], &answer["added"]),
            (&Value::from(3), &Value::from(3), &Value::from(4)),
            "{answer}"
        );
        assert!(answer.get("target_account").is_none(), "{answer}");
        let eur = |rows: &[&str]| rows.iter().map(|r| r.to_string()).collect::<Vec<_>>();
        assert_eq!(
            imported_accounts(&server, &key).await,
            [
                ("Account …2051".to_owned(), "EUR".to_owned(), Value::from("2051"), 2, "2416.00".to_owned(), eur(&["EUR"])),
                ("Account …5030".to_owned(), "EUR".to_owned(), Value::from("5030"), 1, "1.25".to_owned(), eur(&["EUR"])),
                ("Imported EUR account (CSV: Date, Description, Amount, …)".to_owned(), "EUR".to_owned(), Value::Null, 1, "-42.10".to_owned(), eur(&["EUR"])),
            ]
        );

        // The card export into a new USD account: its rows are USD, and
        // nothing is said of an assumed currency.
        let answer: Value = post(import_form(
            &[("card.csv", CARD)],
            &[("new_account_name", "Visa card"), ("new_account_currency", "usd")],
        ))
        .await
        .json()
        .await
        .unwrap();
        assert_eq!((&answer["added"], &answer["notes"]), (&Value::from(3), &serde_json::json!([])), "{answer}");
        let card = answer["target_account"].as_i64().unwrap();
        let later = "Transaction Date,Description,Amount\n03/05/2026,Payment Thank You,100.00\n04/01/2026,Subway,-2.90\n";
        let answer: Value = post(import_form(&[("later.csv", later)], &[("account", &card.to_string())]))
            .await
            .json()
            .await
            .unwrap();
        assert_eq!((&answer["added"], &answer["skipped"], &answer["target_account"]), (&Value::from(1), &Value::from(1), &Value::from(card)), "{answer}");
        let accounts = imported_accounts(&server, &key).await;
        assert_eq!(accounts.len(), 4);
        assert_eq!(
            accounts[3],
            ("Visa card".to_owned(), "USD".to_owned(), Value::Null, 4, "68.61".to_owned(), eur(&["USD"]))
        );

        // Refusals name the field; none stores anything.
        let sandbox = server.world.bob_account.get().to_string();
        let alices = server.world.alice_imported.get().to_string();
        for (fields, status, code, says) in [
            (vec![("account", "abc")], StatusCode::BAD_REQUEST, "INVALID_PARAMETER", vec!["`account`", "`abc`"]),
            (vec![("account", sandbox.as_str())], StatusCode::BAD_REQUEST, "INVALID_PARAMETER", vec!["`account`", "imported statements"]),
            (vec![("account", alices.as_str())], StatusCode::BAD_REQUEST, "INVALID_PARAMETER", vec!["`account`", "imported statements"]),
            (vec![("new_account_name", "Card")], StatusCode::BAD_REQUEST, "INVALID_PARAMETER", vec!["`new_account_currency`"]),
            (vec![("new_account_name", "Card"), ("new_account_currency", "US")], StatusCode::BAD_REQUEST, "INVALID_PARAMETER", vec!["`new_account_currency`", "`US`"]),
            (vec![("new_account_name", "Visa card"), ("new_account_currency", "USD")], StatusCode::BAD_REQUEST, "INVALID_PARAMETER", vec!["`new_account_name`", "already"]),
            (vec![("account", "7"), ("new_account_name", "Card"), ("new_account_currency", "USD")], StatusCode::BAD_REQUEST, "INVALID_PARAMETER", vec!["`account`", "`new_account_name`"]),
            (vec![("account", &card.to_string())], StatusCode::UNPROCESSABLE_ENTITY, "CURRENCY_MISMATCH", vec!["`account`", "in EUR", "is in USD"]),
        ] {
            let answer = post(import_form(&[("bank.csv", "Date,Description,Amount,Currency\n2026-05-02,Fee,-1.00,EUR\n")], &fields)).await;
            let body = expect_error(answer, status, code).await;
            let message = body["message"].as_str().unwrap();
            assert!(says.iter().all(|s| message.contains(s)), "{fields:?}: {message}");
        }
        assert_eq!(imported_accounts(&server, &key).await, accounts);
        server
    })
    .await;
}

#[actix_web::test]
async fn uploads_and_balances_answer_their_documented_errors() {
    on_every_backend(|server| async move {
        let key = server.world.bob_key.clone();
        // A CSV statement states no balance: the account has none to show.
        let csv = b"Date,Description,Amount\n2026-01-05,Coffee,-3.50\n".to_vec();
        assert_eq!(
            upload(&server, &key, &[("cafe.csv", csv)]).await.status(),
            StatusCode::OK
        );
        let accounts = get_json(&server, "/api/v1/accounts", &key).await;
        let imported = accounts["accounts"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["provider"] == "file")
            .unwrap()["id"]
            .as_i64()
            .unwrap();
        let balance = get(
            &server,
            &format!("/api/v1/accounts/{imported}/balance"),
            Some(&key),
        )
        .await;
        expect_error(balance, StatusCode::NOT_FOUND, "BALANCE_NOT_AVAILABLE").await;
        // A multipart body without a file part.
        let no_file = reqwest::multipart::Form::new().text("note", "no file here");
        let answer = upload_form(&server, &key, no_file).await;
        expect_error(answer, StatusCode::BAD_REQUEST, "INVALID_UPLOAD").await;
        // Past 20 MiB, refused whole, nothing stored.
        let before = get_json(&server, "/api/v1/accounts", &key).await;
        let huge = vec![b'x'; 21 * 1024 * 1024];
        let answer = upload(&server, &key, &[("huge.csv", huge)]).await;
        expect_error(answer, StatusCode::PAYLOAD_TOO_LARGE, "UPLOAD_TOO_LARGE").await;
        assert_eq!(get_json(&server, "/api/v1/accounts", &key).await, before);
        server
    })
    .await;
}

#[actix_web::test]
async fn crafted_statement_files_are_refused_and_the_server_keeps_serving() {
    use tributary_providers::import::hostile;
    on_every_backend(|server| async move {
        let key = server.world.bob_key.clone();
        let before = get_json(&server, "/api/v1/accounts", &key).await;
        let refused = [
            // The review's crash: 50,000 nested <OFX> (250 KB).
            (
                "deep.ofx",
                hostile::deep_ofx_sgml(50_000),
                "deeper than 100 levels",
            ),
            (
                "deep2.ofx",
                hostile::deep_ofx_xml(50_000),
                "deeper than 100 levels",
            ),
            (
                "deep.xml",
                hostile::deep_camt(50_000),
                "deeper than 100 levels",
            ),
            (
                "flat.ofx",
                hostile::flat_ofx(1_000_000),
                "holds no statement",
            ),
            ("flat.xml", hostile::flat_camt(1_000_000), "no camt"),
            (
                "wide.csv",
                hostile::csv_wide_header(1_000_000),
                "not recognised",
            ),
        ];
        for (name, bytes, reason) in refused {
            let response = upload(&server, &key, &[(name, bytes)]).await;
            let body = expect_error(response, StatusCode::BAD_REQUEST, "FILE_UNREADABLE").await;
            let message = body["message"].as_str().unwrap();
            assert!(
                message.starts_with(&format!("{name}: ")) && message.contains(reason),
                "{message}"
            );
            // Still serving, and nothing was stored.
            assert_eq!(get_json(&server, "/api/v1/accounts", &key).await, before);
        }
        // Long lines and endless continuations are read, not refused.
        let read = [
            ("long.sta", hostile::mt940_long_line(4 << 20)),
            ("wrapped.sta", hostile::mt940_wrapped_details(200_000)),
            ("long.csv", hostile::csv_long_field(4 << 20)),
        ];
        for (name, bytes) in read {
            let response = upload(&server, &key, &[(name, bytes)]).await;
            assert_eq!(response.status(), StatusCode::OK, "{name}");
        }
        server
    })
    .await;
}

#[actix_web::test]
async fn wrong_methods_get_405_with_allow_and_head_answers_like_get() {
    on_every_backend(|server| async move {
        let key = server.world.alice_key.clone();
        let client = Client::new();
        for (method, path, allow) in [
            (reqwest::Method::POST, "/api/v1/accounts", "GET, HEAD"),
            (
                reqwest::Method::DELETE,
                "/api/v1/accounts/1/transactions",
                "GET, HEAD",
            ),
            (reqwest::Method::PUT, "/api/v1/connections", "GET, HEAD"),
            (reqwest::Method::GET, "/api/v1/imports", "POST"),
            (reqwest::Method::GET, "/api/v1/connections/1/sync", "POST"),
            (reqwest::Method::POST, "/readyz", "GET, HEAD"),
        ] {
            let response = client
                .request(method.clone(), server.url(path))
                .header("x-api-key", &key)
                .send()
                .await
                .unwrap();
            assert_eq!(response.headers()["allow"], allow, "{method} {path}");
            expect_error(
                response,
                StatusCode::METHOD_NOT_ALLOWED,
                "METHOD_NOT_ALLOWED",
            )
            .await;
        }
        let account = server.world.alice_sandbox_accounts[0];
        for path in [
            "/api/v1/accounts".to_owned(),
            format!("/api/v1/accounts/{account}/transactions"),
            format!("/api/v1/accounts/{account}/balance"),
            "/healthz".to_owned(),
        ] {
            let get = get(&server, &path, Some(&key)).await;
            let head = client
                .head(server.url(&path))
                .header("x-api-key", &key)
                .send()
                .await
                .unwrap();
            assert_eq!(head.status(), get.status(), "{path}");
            assert_eq!(
                head.headers()["content-type"],
                get.headers()["content-type"]
            );
            assert!(
                head.bytes().await.unwrap().is_empty(),
                "HEAD {path} has no body"
            );
        }
        // HEAD is authenticated like GET.
        let head = client
            .head(server.url("/api/v1/accounts"))
            .send()
            .await
            .unwrap();
        assert_eq!(head.status(), StatusCode::UNAUTHORIZED);
        server
    })
    .await;
}

#[actix_web::test]
async fn a_full_disk_answers_503_on_every_write_and_changes_nothing() {
    use tributary_storage::testing::{simulate_full_disk, testdata_bytes};
    on_every_backend(|server| async move {
        let key = server.world.alice_key.clone();
        let before = get_json(&server, "/api/v1/accounts", &key).await;
        let rows_before = tributary_storage::testing::dump_rows(server.database.db());
        simulate_full_disk(server.database.db());

        let camt = testdata_bytes("genkgo-camt/data/camt053.v2.multi.statement.xml");
        let import = upload(&server, &key, &[("statement.xml", camt)]).await;
        assert_eq!(import.headers()["retry-after"], "60");
        expect_error(import, StatusCode::SERVICE_UNAVAILABLE, "STORAGE_FULL").await;
        let connection = server.world.alice_sandbox_connection;
        let sync = post(
            &server,
            &format!("/api/v1/connections/{connection}/sync"),
            &key,
        )
        .await;
        expect_error(sync, StatusCode::SERVICE_UNAVAILABLE, "STORAGE_FULL").await;

        // Reads go on, and nothing was half-written.
        assert_eq!(get_json(&server, "/api/v1/accounts", &key).await, before);
        assert_same_rows(
            &tributary_storage::testing::dump_rows(server.database.db()),
            &rows_before,
        );
        server
    })
    .await;
}

#[actix_web::test]
async fn a_vanished_database_answers_503_at_once_and_service_resumes_by_itself() {
    // PostgreSQL only: an embedded SQLite file cannot go away under a
    // running server the way a database server can.
    let Some(database) = TestDatabase::postgres() else {
        return;
    };
    let server = start(database);
    let key = server.world.alice_key.clone();
    let before = get_json(&server, "/api/v1/accounts", &key).await;
    server.database.set_postgres_accepting(false);
    // The pool waits up to 10 s for a connection; a known-down database
    // must not cost that much per request.
    for path in [
        "/api/v1/accounts",
        "/readyz",
        "/api/v1/connections",
        "/readyz",
    ] {
        let started = std::time::Instant::now();
        let response = get(&server, path, Some(&key)).await;
        let elapsed = started.elapsed();
        expect_error(
            response,
            StatusCode::SERVICE_UNAVAILABLE,
            "DATABASE_UNAVAILABLE",
        )
        .await;
        assert!(
            elapsed < std::time::Duration::from_secs(1),
            "{path} took {elapsed:?}"
        );
    }
    server.database.set_postgres_accepting(true);
    // The pool reconnects in the background (retrying at most every 5 s);
    // each failed look answers within a second, so 100 looks bound this.
    let mut ready = false;
    for _ in 0..100 {
        if get(&server, "/readyz", None).await.status() == StatusCode::OK {
            ready = true;
            break;
        }
    }
    assert!(ready, "service resumed without a restart");
    assert_eq!(get_json(&server, "/api/v1/accounts", &key).await, before);
    server.stop().await;
}

#[actix_web::test]
async fn start_date_and_end_date_filter_like_from_and_to() {
    on_every_backend(|server| async move {
        let key = server.world.alice_key.clone();
        let account = server.world.alice_sandbox_accounts[0];
        let path = format!("/api/v1/accounts/{account}/transactions");
        let whole = get_json(&server, &path, &key).await;
        let by_from_to = get_json(
            &server,
            &format!("{path}?from=2026-10-01&to=2026-10-31"),
            &key,
        )
        .await;
        // What a client of the hosted service sends.
        let by_start_end = get_json(
            &server,
            &format!("{path}?start_date=2026-10-01&end_date=2026-10-31"),
            &key,
        )
        .await;
        assert_eq!(by_start_end, by_from_to);
        assert!(by_start_end["total"].as_i64().unwrap() < whole["total"].as_i64().unwrap());
        for t in by_start_end["transactions"].as_array().unwrap() {
            let date = t["date"].as_str().unwrap();
            assert!(("2026-10-01"..="2026-10-31").contains(&date), "{date}");
        }
        let mixed = get_json(
            &server,
            &format!("{path}?start_date=2026-10-01&to=2026-10-31"),
            &key,
        )
        .await;
        assert_eq!(mixed, by_from_to);
        let same = get_json(
            &server,
            &format!("{path}?from=2026-10-01&start_date=2026-10-01"),
            &key,
        )
        .await;
        assert_eq!(
            same["total"],
            get_json(&server, &format!("{path}?from=2026-10-01"), &key).await["total"]
        );
        let differ = get(
            &server,
            &format!("{path}?from=2026-10-01&start_date=2026-09-01"),
            Some(&key),
        )
        .await;
        let body = expect_error(differ, StatusCode::BAD_REQUEST, "INVALID_PARAMETER").await;
        let message = body["message"].as_str().unwrap();
        assert!(
            message.contains("`from`") && message.contains("`start_date`"),
            "{message}"
        );
        let bad = get(&server, &format!("{path}?end_date=31.10.2026"), Some(&key)).await;
        let body = expect_error(bad, StatusCode::BAD_REQUEST, "INVALID_DATE").await;
        assert!(body["message"].as_str().unwrap().contains("`end_date`"));
        // A query string that does not decode, or names a parameter twice.
        for (query, named) in [
            ("from=%FF", "`from`"),
            ("to=2026-10-01&to=2026-10-02", "`to`"),
        ] {
            let bad = get(&server, &format!("{path}?{query}"), Some(&key)).await;
            let body = expect_error(bad, StatusCode::BAD_REQUEST, "INVALID_QUERY").await;
            assert!(body["message"].as_str().unwrap().contains(named), "{body}");
        }
        server
    })
    .await;
}

#[actix_web::test]
async fn merchant_is_null_only_for_records_without_any_text_for_every_provider() {
    use tributary_domain::clock::Clock as _;
    use tributary_domain::model::{AccountKind, Provider};
    use tributary_domain::snapshot::*;
    use tributary_storage::{connections, sync_apply};
    on_every_backend(|server| async move {
        // The sandbox as synced: every record with text has a merchant.
        let key = server.world.alice_key.clone();
        for account in &server.world.alice_sandbox_accounts {
            let list = get_json(
                &server,
                &format!("/api/v1/accounts/{account}/transactions?include_pending=true"),
                &key,
            )
            .await;
            for t in list["transactions"].as_array().unwrap() {
                assert!(
                    t["merchant"].is_string() || t["description"].is_null(),
                    "{t}"
                );
            }
        }
        // Every provider's records, stored as its connector stores them.
        let user = server.world.bob_user;
        let record =
            |id: &str, merchant: Option<&str>, description: Option<&str>| SnapshotTransaction {
                provider_id: id.into(),
                pending_provider_id: None,
                is_pending: id == "pending",
                date: chrono::NaiveDate::from_ymd_opt(2026, 11, 2).unwrap(),
                amount: tributary_domain::money::parse_decimal("-4.20").unwrap(),
                currency: "EUR".into(),
                merchant: merchant.map(str::to_owned),
                description: description.map(str::to_owned),
                hints: Default::default(),
            };
        // Every provider id there is: each connector's and each statement format's.
        let every_provider: Vec<Provider> = tributary_providers::catalog::CATALOG
            .iter()
            .map(|d| d.provider)
            .chain(Provider::STATEMENT_FORMATS)
            .collect();
        for provider in &every_provider {
            let conn = &mut *server.database.db().conn().unwrap();
            let institution = SnapshotInstitution {
                provider_institution_id: format!("bank-{provider}"),
                name: "Bank".into(),
                logo_url: None,
            };
            let connection = connections::create_connection(
                conn,
                &connections::NewConnection {
                    user_id: user,
                    provider: *provider,
                    institution: &institution,
                    settings: &serde_json::json!({}),
                    sealed_credentials: None,
                    consent_expires_at: None,
                    now: server.clock.now().naive_utc(),
                },
            )
            .unwrap();
            let snapshot = ProviderSnapshot {
                institution,
                accounts: vec![SnapshotAccount {
                    balance_history: Vec::new(),
                    institution: None,
                    provider_account_id: format!("acct-{provider}"),
                    name: format!("{provider} account"),
                    kind: AccountKind::Checking,
                    currency: "EUR".into(),
                    mask: None,
                    balance: None,
                    transactions: vec![
                        record("named", Some("Corner Bakery"), Some("Card payment 4411")),
                        record(
                            "pending",
                            None,
                            Some(
                                "  POS PURCHASE   CORNER BAKERY BERLIN 12/11 CARD 4411 CONTACTLESS",
                            ),
                        ),
                        record("silent", None, None),
                    ],
                    holdings: None,
                    investment_transactions: Vec::new(),
                    liability: None,
                }],
                notices: Vec::new(),
                pending_match: None,
                complete: true,
            };
            sync_apply::apply_snapshot(
                conn,
                connection.id,
                &snapshot,
                server.clock.now().naive_utc(),
            )
            .unwrap();
        }
        let bob = server.world.bob_key.clone();
        let accounts = get_json(&server, "/api/v1/accounts", &bob).await;
        for provider in &every_provider {
            let account = accounts["accounts"]
                .as_array()
                .unwrap()
                .iter()
                .find(|a| a["name"] == format!("{provider} account"))
                .unwrap();
            let list = get_json(
                &server,
                &format!(
                    "/api/v1/accounts/{}/transactions?include_pending=true",
                    account["id"]
                ),
                &bob,
            )
            .await;
            let merchants: Vec<&Value> = list["transactions"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| &t["merchant"])
                .collect();
            // Named by the provider, and named only in the description:
            // the name in it, without the kind of payment, the city and
            // the date (docs/enrichment.md).
            assert_eq!(
                merchants
                    .iter()
                    .filter(|m| **m == &Value::from("Corner Bakery"))
                    .count(),
                2,
                "{provider}: {merchants:?}"
            );
            assert_eq!(
                merchants.iter().filter(|m| m.is_null()).count(),
                1,
                "{provider}: only the record without text"
            );
        }
        server
    })
    .await;
}

/// The listing's bytes and headers, asked for with `headers`.
async fn listing(
    server: &TestServer,
    path: &str,
    headers: &[(&str, &str)],
) -> (StatusCode, reqwest::header::HeaderMap, Vec<u8>) {
    let mut request = Client::new()
        .get(server.url(path))
        .header("x-api-key", &server.world.alice_key);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = request.send().await.unwrap();
    let status = response.status();
    let headers = response.headers().clone();
    (status, headers, response.bytes().await.unwrap().to_vec())
}

fn header<'a>(headers: &'a reqwest::header::HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).map(|v| v.to_str().unwrap())
}

#[actix_web::test]
async fn a_long_listing_streams_whole_and_revalidates_by_its_etag() {
    on_every_backend(|server| async move {
        let account = server.world.alice_sandbox_accounts[2];
        let before = get_json(
            &server,
            &format!("/api/v1/accounts/{account}/transactions?limit=1"),
            &server.world.alice_key,
        )
        .await["total"]
            .as_i64()
            .unwrap();
        // Several of the stream's batches' worth.
        let db = server.database.db().clone();
        tokio::task::spawn_blocking(move || {
            tributary_storage::testing::insert_generated_transactions(
                &db,
                account,
                1_234,
                chrono::NaiveDate::from_ymd_opt(2020, 1, 1).unwrap(),
            )
        })
        .await
        .unwrap()
        .unwrap();
        let path = format!("/api/v1/accounts/{account}/transactions");

        let (status, headers, body) = listing(&server, &path, &[]).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(
            header(&headers, "transfer-encoding"),
            Some("chunked"),
            "streamed"
        );
        assert_eq!(header(&headers, "cache-control"), Some("private, no-cache"));
        assert_eq!(header(&headers, "content-type"), Some("application/json"));
        let etag = header(&headers, "etag").expect("an ETag").to_owned();
        assert!(etag.starts_with('"'), "a strong tag: {etag}");
        let whole: Value = serde_json::from_slice(&body).unwrap();
        let ids: Vec<&str> = whole["transactions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["id"].as_str().unwrap())
            .collect();
        assert_eq!(whole["total"].as_i64().unwrap(), before + 1_234);
        assert_eq!(ids.len() as i64, before + 1_234);
        let distinct: std::collections::HashSet<&str> = ids.iter().copied().collect();
        assert_eq!(distinct.len(), ids.len(), "no row twice");

        // Pages of the same data: the same rows in the same order, and a
        // total from the account's tally that agrees.
        let mut paged = Vec::new();
        let mut next = format!("{path}?limit=1000");
        loop {
            let page = get_json(&server, &next, &server.world.alice_key).await;
            assert_eq!(page["total"].as_i64().unwrap(), before + 1_234);
            paged.extend(
                page["transactions"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|t| t["id"].as_str().unwrap().to_owned()),
            );
            match page["nextCursor"].as_str() {
                Some(cursor) => next = format!("{path}?limit=1000&cursor={cursor}"),
                None => break,
            }
        }
        assert_eq!(paged, ids);

        // More long listings at once than streams may hold connections:
        // the others wait for a slot, none is refused, none is cut.
        let concurrent: Vec<_> = (0..8)
            .map(|_| {
                let (server, path) = (&server, &path);
                async move { listing(server, path, &[]).await }
            })
            .collect();
        for (status, _, concurrent_body) in futures_util::future::join_all(concurrent).await {
            assert_eq!(status, StatusCode::OK);
            assert_eq!(concurrent_body, body);
        }

        // Asked again with its tag, unchanged: 304, no body.
        let (status, again, body) = listing(&server, &path, &[("if-none-match", &etag)]).await;
        assert_eq!(status, StatusCode::NOT_MODIFIED);
        assert_eq!(header(&again, "etag"), Some(etag.as_str()));
        assert_eq!(header(&again, "cache-control"), Some("private, no-cache"));
        assert!(body.is_empty());

        // Compressed when the client accepts it: the same JSON, its own tag,
        // which revalidates too.
        let (status, gzipped, compressed) =
            listing(&server, &path, &[("accept-encoding", "gzip")]).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(header(&gzipped, "content-encoding"), Some("gzip"));
        let gzip_tag = header(&gzipped, "etag").unwrap().to_owned();
        assert_ne!(gzip_tag, etag, "another representation, another strong tag");
        let mut plain = Vec::new();
        std::io::Read::read_to_end(
            &mut flate2::read::GzDecoder::new(compressed.as_slice()),
            &mut plain,
        )
        .unwrap();
        assert_eq!(serde_json::from_slice::<Value>(&plain).unwrap(), whole);
        assert!(
            compressed.len() * 4 < plain.len(),
            "{} of {}",
            compressed.len(),
            plain.len()
        );
        let (status, _, _) = listing(
            &server,
            &path,
            &[("if-none-match", &gzip_tag), ("accept-encoding", "gzip")],
        )
        .await;
        assert_eq!(status, StatusCode::NOT_MODIFIED);

        // A page has a tag of its own.
        let (_, page_headers, _) = listing(&server, &format!("{path}?limit=10"), &[]).await;
        assert_ne!(header(&page_headers, "etag"), Some(etag.as_str()));

        // Changed data: the old tag no longer matches.
        let db = server.database.db().clone();
        tokio::task::spawn_blocking(move || {
            tributary_storage::testing::insert_generated_transactions(
                &db,
                account,
                1,
                chrono::NaiveDate::from_ymd_opt(2019, 1, 1).unwrap(),
            )
        })
        .await
        .unwrap()
        .unwrap();
        let (status, changed, body) = listing(&server, &path, &[("if-none-match", &etag)]).await;
        assert_eq!(status, StatusCode::OK);
        assert_ne!(header(&changed, "etag"), Some(etag.as_str()));
        let changed: Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(changed["total"].as_i64().unwrap(), before + 1_235);
        server
    })
    .await;
}
