//! An app's users (`/api/platform/v1/users…`) and portal sessions.

use super::*;

#[actix_web::test]
async fn basic_credentials_of_app_a_cannot_touch_a_user_of_app_b() {
    on_every_backend(|server| async move {
        let (status, body) = register(&server, &server.app_b, "shared@example.com").await;
        assert_eq!(status, StatusCode::CREATED);
        let b_user = body["user_id"].as_str().unwrap().to_owned();
        let (status, a_body) = register(&server, &server.app_a, "shared@example.com").await;
        assert_eq!(
            status,
            StatusCode::CREATED,
            "the same e-mail in another app is another user"
        );
        assert_ne!(a_body["user_id"].as_str().unwrap(), b_user);
        let path = server.url(&format!("/api/platform/v1/users/{b_user}"));
        let client = Client::new();
        let put = client
            .put(&path)
            .basic_auth(server.app_a.client_id(), Some(server.app_a.secret()))
            .json(&serde_json::json!({"external_user_id": "x"}))
            .send()
            .await
            .unwrap();
        assert_eq!(put.status(), StatusCode::NOT_FOUND);
        assert_eq!(put.json::<Value>().await.unwrap()["code"], "USER_NOT_FOUND");
        let delete = client
            .delete(&path)
            .basic_auth(server.app_a.client_id(), Some(server.app_a.secret()))
            .send()
            .await
            .unwrap();
        assert_eq!(delete.status(), StatusCode::NOT_FOUND);
        let own = client
            .put(&path)
            .basic_auth(server.app_b.client_id(), Some(server.app_b.secret()))
            .json(&serde_json::json!({"limits": {"max_accounts": 2}}))
            .send()
            .await
            .unwrap();
        assert_eq!(own.status(), StatusCode::OK);
        let own: Value = own.json().await.unwrap();
        assert_eq!(own["user"]["limits"]["max_accounts"], 2);
        assert_eq!(own["user"]["email"], "shared@example.com");
        // Registering the existing user again with other limits applies
        // them (200: it existed); without limits, they stay.
        for (limits, expected) in [(Some(serde_json::json!({"max_accounts": 5})), 5), (None, 5)] {
            let mut body = serde_json::json!({"email": "shared@example.com"});
            if let Some(limits) = limits {
                body["limits"] = limits;
            }
            let again = client
                .post(server.url("/api/platform/v1/users"))
                .basic_auth(server.app_b.client_id(), Some(server.app_b.secret()))
                .json(&body)
                .send()
                .await
                .unwrap();
            assert_eq!(again.status(), StatusCode::OK);
            let read: Value = json_answer(
                client
                    .put(&path)
                    .basic_auth(server.app_b.client_id(), Some(server.app_b.secret()))
                    .json(&serde_json::json!({})),
            )
            .await;
            assert_eq!(read["user"]["limits"]["max_accounts"], expected, "{read}");
        }
        server
    })
    .await;
}

#[actix_web::test]
async fn user_management_and_bearer_errors_carry_their_documented_codes() {
    on_every_backend(|server| async move {
        let client = Client::new();
        let users = server.url("/api/platform/v1/users");
        let send = |body: reqwest::Body| {
            client
                .post(&users)
                .basic_auth(server.app_a.client_id(), Some(server.app_a.secret()))
                .header("content-type", "application/json")
                .body(body)
                .send()
        };
        let answer = send("not json".into()).await.unwrap();
        assert_eq!(answer.status(), StatusCode::BAD_REQUEST);
        assert_eq!(
            answer.json::<Value>().await.unwrap()["code"],
            "INVALID_BODY"
        );
        let answer = send(r#"{"email": "n@example.com", "external_user_id": 42}"#.into())
            .await
            .unwrap();
        assert_eq!(answer.status(), StatusCode::BAD_REQUEST);
        assert_eq!(
            answer.json::<Value>().await.unwrap()["code"],
            "INVALID_EXTERNAL_USER_ID"
        );
        // Renaming a user to another user's address of the same app.
        let (_, first) = register(&server, &server.app_a, "first@example.com").await;
        let (_, second) = register(&server, &server.app_a, "second@example.com").await;
        let taken = client
            .put(server.url(&format!(
                "/api/platform/v1/users/{}",
                second["user_id"].as_str().unwrap()
            )))
            .basic_auth(server.app_a.client_id(), Some(server.app_a.secret()))
            .json(&serde_json::json!({"email": "first@example.com"}))
            .send()
            .await
            .unwrap();
        assert_eq!(taken.status(), StatusCode::CONFLICT);
        assert_eq!(taken.json::<Value>().await.unwrap()["code"], "EMAIL_TAKEN");
        assert!(first["access_token"].is_string());
        // A bearer token that is no token of ours.
        let forged = get_with(&server, "/api/platform/v1/accounts", "tat_not-a-real-token").await;
        assert_eq!(forged.status(), StatusCode::UNAUTHORIZED);
        assert_eq!(
            forged.json::<Value>().await.unwrap()["code"],
            "INVALID_ACCESS_TOKEN"
        );
        server
    })
    .await;
}

#[actix_web::test]
async fn concurrent_identical_registrations_create_one_user() {
    on_every_backend(|server| async move {
        let results = futures_join(&server).await;
        let created = results
            .iter()
            .filter(|(status, _)| *status == StatusCode::CREATED)
            .count();
        let ids: std::collections::HashSet<&str> = results
            .iter()
            .map(|(_, body)| body["user_id"].as_str().unwrap())
            .collect();
        assert_eq!((created, ids.len()), (1, 1), "{results:?}");
        server
    })
    .await;
}

async fn futures_join(server: &PlatformServer) -> Vec<(StatusCode, Value)> {
    let tasks: Vec<_> = (0..8)
        .map(|_| {
            let (url, id, secret) = (
                server.url("/api/platform/v1/users"),
                server.app_a.client_id().to_owned(),
                server.app_a.secret().to_owned(),
            );
            tokio::spawn(async move {
                let response = Client::new()
                    .post(url)
                    .basic_auth(id, Some(secret))
                    .json(&serde_json::json!({"email": "race@example.com"}))
                    .send()
                    .await
                    .unwrap();
                (response.status(), response.json::<Value>().await.unwrap())
            })
        })
        .collect();
    let mut out = Vec::new();
    for task in tasks {
        out.push(task.await.unwrap());
    }
    out
}

#[actix_web::test]
async fn registration_validates_its_input() {
    on_every_backend(|server| async move {
        let post = |body: Value| {
            Client::new()
                .post(server.url("/api/platform/v1/users"))
                .basic_auth(server.app_a.client_id(), Some(server.app_a.secret()))
                .json(&body)
                .send()
        };
        for (body, code) in [
            (
                serde_json::json!({"email": "not an email"}),
                "INVALID_EMAIL",
            ),
            (serde_json::json!({}), "INVALID_EMAIL"),
            (
                serde_json::json!({"email": "ok@example.com", "limits": {"max_accounts": -1}}),
                "INVALID_LIMITS",
            ),
            (
                serde_json::json!({"email": "ok@example.com", "limits": {"bogus": 1}}),
                "INVALID_LIMITS",
            ),
        ] {
            let response = post(body.clone()).await.unwrap();
            assert_eq!(response.status(), StatusCode::BAD_REQUEST, "{body}");
            assert_eq!(
                response.json::<Value>().await.unwrap()["code"],
                code,
                "{body}"
            );
        }
        let (status, body) = register(&server, &server.public_app, "p@example.com").await;
        assert_eq!(
            (status, body["code"].as_str()),
            (StatusCode::UNAUTHORIZED, Some("INVALID_CLIENT")),
            "public apps cannot manage users"
        );
        server
    })
    .await;
}

#[actix_web::test]
async fn portal_sessions_and_revocation() {
    on_every_backend(|server| async move {
        let (_, _, access, refresh) = user_with_bank(&server, "portal@example.com").await;
        let response = Client::new()
            .post(server.url("/api/platform/v1/portal_sessions"))
            .bearer_auth(&access)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        let session: Value = response.json().await.unwrap();
        let url = session["url"].as_str().unwrap();
        assert!(
            url.starts_with("https://tributary.example/portal/tps_"),
            "{url}"
        );
        assert!(session["expires_at"].as_str().unwrap().ends_with('Z'));
        let token = url.rsplit('/').next().unwrap().to_owned();
        let (db, now) = (server.database.db().clone(), server.clock.now().naive_utc());
        let (first, second) = actix_web::web::block(move || {
            let mut conn = db.conn().unwrap();
            (
                oauth::consume_portal_session(&mut *conn, &token, now)
                    .map(|s| s.user_id)
                    .ok(),
                oauth::consume_portal_session(&mut *conn, &token, now)
                    .err()
                    .map(|e| e.to_string()),
            )
        })
        .await
        .unwrap();
        assert!(first.is_some());
        assert!(second.unwrap().contains("already used"));

        // RFC 7009: revoking the refresh token ends its whole grant.
        let revoked = Client::new()
            .post(server.url("/api/platform/oauth/revoke"))
            .basic_auth(server.app_a.client_id(), Some(server.app_a.secret()))
            .form(&[("token", refresh.as_str())])
            .send()
            .await
            .unwrap();
        assert_eq!(revoked.status(), StatusCode::OK);
        assert_eq!(
            get_with(&server, "/api/platform/v1/accounts", &access)
                .await
                .status(),
            StatusCode::UNAUTHORIZED
        );
        let (status, body, _) = token_request(
            &server,
            &[("grant_type", "refresh_token"), ("refresh_token", &refresh)],
            Some(&server.app_a),
        )
        .await;
        assert_eq!(
            (status, body["error"].as_str()),
            (StatusCode::BAD_REQUEST, Some("invalid_grant"))
        );
        server
    })
    .await;
}
