//! What a bearer token reads and asks for (`/api/platform/v1/accounts…`,
//! connections, imports) and the limits on it.

use super::*;

#[actix_web::test]
async fn a_token_of_user_a_cannot_read_an_account_of_user_b() {
    on_every_backend(|server| async move {
        let (_, _, access_a, _) = user_with_bank(&server, "a@example.com").await;
        let (_, _, access_b, _) = user_with_bank(&server, "b@example.com").await;
        let b_accounts: Value = get_with(&server, "/api/platform/v1/accounts", &access_b)
            .await
            .json()
            .await
            .unwrap();
        let b_account = b_accounts["accounts"][0]["id"].as_i64().unwrap();
        for endpoint in ["transactions", "balance", "holdings"] {
            let path = format!("/api/platform/v1/accounts/{b_account}/{endpoint}");
            let response = get_with(&server, &path, &access_a).await;
            assert_eq!(response.status(), StatusCode::NOT_FOUND);
            assert_eq!(
                response.json::<Value>().await.unwrap()["code"],
                "ACCOUNT_NOT_FOUND"
            );
            assert_eq!(
                get_with(&server, &path, &access_b).await.status(),
                StatusCode::OK
            );
        }
        server
    })
    .await;
}

#[actix_web::test]
async fn an_apps_account_limit_stops_a_sync_that_would_pass_it() {
    on_every_backend(|server| async move {
        // App A lets each user connect 6 accounts; this user may have 3.
        let response = Client::new()
            .post(server.url("/api/platform/v1/users"))
            .basic_auth(server.app_a.client_id(), Some(server.app_a.secret()))
            .json(
                &serde_json::json!({"email": "limited@example.com", "limits": {"max_accounts": 3}}),
            )
            .send()
            .await
            .unwrap();
        let body: Value = response.json().await.unwrap();
        let user = internal_id(&server, &server.app_a, body["user_id"].as_str().unwrap());
        let (db, clock) = (server.database.db().clone(), server.clock.clone());
        let outcome = actix_web::web::block(move || {
            let mut registry = Registry::default();
            registry.register(Arc::new(SandboxConnector::default()));
            let engine = SyncEngine::new(db.clone(), registry, clock);
            let connection = engine
                .connect(
                    user,
                    tributary_providers::sandbox::PROVIDER,
                    &sandbox::connect_request("limited@example.com", sandbox::USER_GOOD),
                )
                .unwrap();
            let outcome = engine
                .sync_now(connection.id, SyncJobKind::Initial, "test")
                .map(|_| ());
            let record = tributary_storage::connections::get_connection(
                &mut db.conn().unwrap(),
                connection.id,
            )
            .unwrap();
            (outcome, record)
        })
        .await
        .unwrap();
        let limit = AccountLimitExceeded {
            limit: 3,
            existing: 0,
            adding: 5,
        };
        assert!(
            matches!(
                outcome.0,
                Err(SyncError::Storage(StorageError::AccountLimit(refused))) if refused == limit
            ),
            "{:?}",
            outcome.0
        );
        let record = outcome.1;
        assert_eq!(
            record.status_detail,
            Some(StatusDetail::AccountLimitReached(limit))
        );
        assert_eq!(
            record.status_reason.as_deref(),
            Some("ACCOUNT_LIMIT_REACHED: this user may have 3 accounts; they have 0 and this connection would add 5")
        );
        let accounts: Value = get_with(
            &server,
            "/api/platform/v1/accounts",
            body["access_token"].as_str().unwrap(),
        )
        .await
        .json()
        .await
        .unwrap();
        assert_eq!(
            accounts["total"], 0,
            "nothing of the refused sync was stored"
        );
        server
    })
    .await;
}

#[actix_web::test]
async fn bearer_401s_say_invalid_token_only_when_a_token_was_sent_and_wrong_methods_get_405() {
    on_every_backend(|server| async move {
        let challenge = |response: &reqwest::Response| {
            response.headers()["www-authenticate"]
                .to_str()
                .unwrap()
                .to_owned()
        };
        let unknown = get_with(&server, "/api/platform/v1/accounts", "tat_not-a-real-token").await;
        assert_eq!(unknown.status(), StatusCode::UNAUTHORIZED);
        assert_eq!(
            challenge(&unknown),
            r#"Bearer realm="tributary", error="invalid_token""#
        );
        let none = Client::new()
            .get(server.url("/api/platform/v1/accounts"))
            .send()
            .await
            .unwrap();
        assert_eq!(none.status(), StatusCode::UNAUTHORIZED);
        assert_eq!(
            challenge(&none),
            r#"Bearer realm="tributary""#,
            "RFC 6750 §3.1: no error code without a token"
        );
        for (method, path, allow) in [
            (reqwest::Method::GET, "/api/platform/oauth/token", "POST"),
            (
                reqwest::Method::POST,
                "/api/platform/v1/users/usr_x",
                "PUT, DELETE",
            ),
            (
                reqwest::Method::DELETE,
                "/api/platform/v1/accounts",
                "GET, HEAD",
            ),
        ] {
            let response = Client::new()
                .request(method.clone(), server.url(path))
                .send()
                .await
                .unwrap();
            assert_eq!(
                response.status(),
                StatusCode::METHOD_NOT_ALLOWED,
                "{method} {path}"
            );
            assert_eq!(response.headers()["allow"], allow);
            let body: Value = response.json().await.unwrap();
            assert_eq!(body["code"], "METHOD_NOT_ALLOWED");
        }
        server
    })
    .await;
}

#[actix_web::test]
async fn a_full_disk_answers_503_on_the_platforms_writes_too() {
    use tributary_storage::testing::{dump_rows, simulate_full_disk};
    on_every_backend(|server| async move {
        let (_, _, access, refresh) = user_with_bank(&server, "full@example.com").await;
        let rows_before = dump_rows(server.database.db());
        simulate_full_disk(server.database.db());
        let (status, body) = register(&server, &server.app_a, "new@example.com").await;
        assert_eq!(
            (status, body["code"].as_str()),
            (StatusCode::SERVICE_UNAVAILABLE, Some("STORAGE_FULL")),
            "{body}"
        );
        let (status, body, _) = token_request(
            &server,
            &[("grant_type", "refresh_token"), ("refresh_token", &refresh)],
            Some(&server.app_a),
        )
        .await;
        assert_eq!(
            (status, body["error"].as_str()),
            (StatusCode::SERVICE_UNAVAILABLE, Some("server_error")),
            "{body}"
        );
        let portal = Client::new()
            .post(server.url("/api/platform/v1/portal_sessions"))
            .bearer_auth(&access)
            .send()
            .await
            .unwrap();
        assert_eq!(portal.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(
            portal.json::<Value>().await.unwrap()["code"],
            "STORAGE_FULL"
        );
        tributary_e2e::assert_same_rows(&dump_rows(server.database.db()), &rows_before);
        server
    })
    .await;
}

#[actix_web::test]
async fn bearer_reads_answer_501_for_holdings_accept_start_and_end_dates_and_name_merchants() {
    on_every_backend(|server| async move {
        let (_, user, access, _) = user_with_bank(&server, "wire@example.com").await;
        let (_, statement_account) =
            tributary_e2e::imported_account(&server.database, server.clock.as_ref(), user);
        let holdings = get_with(
            &server,
            &format!("/api/platform/v1/accounts/{statement_account}/holdings"),
            &access,
        )
        .await;
        assert_eq!(holdings.status(), StatusCode::NOT_IMPLEMENTED);
        let body: Value = holdings.json().await.unwrap();
        assert_eq!(
            (body["error"].as_str(), body["code"].as_str()),
            (Some("Not Implemented"), Some("HOLDINGS_NOT_SUPPORTED"))
        );

        let accounts: Value = get_with(&server, "/api/platform/v1/accounts", &access)
            .await
            .json()
            .await
            .unwrap();
        let sandbox = accounts["accounts"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["provider"] == "sandbox")
            .unwrap()["id"]
            .clone();
        let path = format!("/api/platform/v1/accounts/{sandbox}/transactions");
        let by_from_to: Value = get_with(
            &server,
            &format!("{path}?from=2026-10-01&to=2026-10-31"),
            &access,
        )
        .await
        .json()
        .await
        .unwrap();
        let by_start_end: Value = get_with(
            &server,
            &format!("{path}?start_date=2026-10-01&end_date=2026-10-31"),
            &access,
        )
        .await
        .json()
        .await
        .unwrap();
        assert_eq!(by_start_end, by_from_to);
        assert!(by_start_end["total"].as_i64().unwrap() > 0);
        let differ = get_with(
            &server,
            &format!("{path}?to=2026-10-31&end_date=2026-11-30"),
            &access,
        )
        .await;
        assert_eq!(differ.status(), StatusCode::BAD_REQUEST);

        let imported: Value = get_with(
            &server,
            &format!("/api/platform/v1/accounts/{statement_account}/transactions"),
            &access,
        )
        .await
        .json()
        .await
        .unwrap();
        for t in imported["transactions"].as_array().unwrap() {
            assert!(
                t["merchant"].is_string(),
                "a record with text has a merchant: {t}"
            );
        }
        server
    })
    .await;
}

#[actix_web::test]
async fn bearer_tokens_list_connections_ask_for_syncs_and_import_statements_within_the_limit() {
    use tributary_storage::testing::testdata_bytes;
    on_every_backend(|server| async move {
        let (_, _, access, _) = user_with_bank(&server, "files@example.com").await;
        let connections = server
            .bearer_json(
                reqwest::Method::GET,
                "/api/platform/v1/connections",
                &access,
            )
            .await;
        let sandbox = &connections["connections"][0];
        assert_eq!(sandbox["provider"], "sandbox", "{connections}");
        let id = sandbox["id"].as_i64().unwrap();
        let sync = Client::new()
            .post(server.url(&format!("/api/platform/v1/connections/{id}/sync")))
            .bearer_auth(&access)
            .send()
            .await
            .unwrap();
        assert_eq!(sync.status(), StatusCode::ACCEPTED);

        let upload = |token: String, files: Vec<(&'static str, Vec<u8>)>| {
            let url = server.url("/api/platform/v1/imports");
            async move {
                let mut form = reqwest::multipart::Form::new();
                for (name, bytes) in files {
                    form = form.part(
                        "file",
                        reqwest::multipart::Part::bytes(bytes).file_name(name),
                    );
                }
                Client::new()
                    .post(url)
                    .bearer_auth(token)
                    .multipart(form)
                    .send()
                    .await
                    .unwrap()
            }
        };
        let mt940 = testdata_bytes("mt940-wolph/mBank/mt940.sta");
        let imported = upload(access.clone(), vec![("mbank.sta", mt940.clone())]).await;
        assert_eq!(imported.status(), StatusCode::OK);
        let summary: Value = imported.json().await.unwrap();
        assert!(summary["added"].as_u64().unwrap() > 0, "{summary}");

        // A user allowed one account cannot import files of two.
        let response = Client::new()
            .post(server.url("/api/platform/v1/users"))
            .basic_auth(server.app_a.client_id(), Some(server.app_a.secret()))
            .json(&serde_json::json!({"email": "one@example.com", "limits": {"max_accounts": 1}}))
            .send()
            .await
            .unwrap();
        let limited: Value = response.json().await.unwrap();
        let token = limited["access_token"].as_str().unwrap().to_owned();
        let camt = testdata_bytes("genkgo-camt/data/camt053.v2.multi.statement.xml");
        let refused = upload(
            token.clone(),
            vec![("one-account.xml", camt), ("another.sta", mt940)],
        )
        .await;
        assert_eq!(refused.status(), StatusCode::CONFLICT);
        let body: Value = refused.json().await.unwrap();
        assert_eq!(body["code"], "ACCOUNT_LIMIT_REACHED", "{body}");
        let accounts = server
            .bearer_json(reqwest::Method::GET, "/api/platform/v1/accounts", &token)
            .await;
        assert_eq!(
            accounts["total"], 0,
            "nothing of the refused file was stored"
        );
        server
    })
    .await;
}

#[actix_web::test]
async fn a_users_token_keeps_their_rules_and_the_rows_follow() {
    on_every_backend(|server| async move {
        let (_, _, access, _) = user_with_bank(&server, "rules@example.com").await;
        let (_, _, other, _) = user_with_bank(&server, "not-rules@example.com").await;
        let rule = serde_json::json!({
            "match": {"amountMin": -1000000, "amountMax": -0.01},
            "set": {"subcategory": "education.books"}
        });
        let created = Client::new()
            .post(server.url("/api/platform/v1/rules"))
            .bearer_auth(&access)
            .json(&rule)
            .send()
            .await
            .unwrap();
        assert_eq!(created.status(), StatusCode::CREATED);
        let listed: Value = get_with(&server, "/api/platform/v1/rules", &other)
            .await
            .json()
            .await
            .unwrap();
        assert_eq!(
            listed["rules"],
            serde_json::json!([]),
            "another user's rules"
        );
        tributary_e2e::enrich_again(server.database.db(), server.clock.clone());
        for (token, ruled) in [(&access, true), (&other, false)] {
            let accounts: Value = get_with(&server, "/api/platform/v1/accounts", token)
                .await
                .json()
                .await
                .unwrap();
            let account = accounts["accounts"][0]["id"].as_i64().unwrap();
            let page: Value = get_with(
                &server,
                &format!("/api/platform/v1/accounts/{account}/transactions"),
                token,
            )
            .await
            .json()
            .await
            .unwrap();
            let rows = page["transactions"].as_array().unwrap();
            let out: Vec<&Value> = rows
                .iter()
                .filter(|t| t["amount"].as_f64().unwrap() < 0.0)
                .collect();
            assert!(!out.is_empty());
            for t in out {
                assert_eq!(t["subcategory"] == "education.books", ruled, "{t}");
            }
        }
        server
    })
    .await;
}
