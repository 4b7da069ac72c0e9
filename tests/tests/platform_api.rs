//! The Platform API end to end: the real server on a free port, over SQLite
//! and PostgreSQL; the `oauth2` crate plays the integrator's client.

// Test code: a failed unwrap is a failed test, with its message.
#![allow(clippy::unwrap_used)]

use base64::Engine as _;
use oauth2::basic::{BasicClient, BasicErrorResponseType};
use oauth2::{ClientId, ClientSecret, RefreshToken, RequestTokenError, TokenResponse, TokenUrl};
use reqwest::{Client, StatusCode};
use serde_json::Value;
use sha2::Digest as _;
use std::sync::Arc;
use tributary_auth::oauth;
use tributary_domain::clock::Clock;
use tributary_domain::ids::UserId;
use tributary_domain::model::{Provider, SyncJobKind};
use tributary_domain::status::{AccountLimitExceeded, StatusDetail};
use tributary_e2e::platform::{PlatformServer, TestApp, start_platform};
use tributary_providers::Registry;
use tributary_providers::sandbox::{self, SandboxConnector};
use tributary_providers::sync::{SyncEngine, SyncError};
use tributary_storage::testing::{TestDatabase, dump};
use tributary_storage::{StorageError, apps};

async fn on_every_backend<F, Fut>(scenario: F)
where
    F: Fn(PlatformServer) -> Fut,
    Fut: std::future::Future<Output = PlatformServer>,
{
    for database in TestDatabase::all() {
        eprintln!("-- on {:?}", database.backend());
        scenario(start_platform(database)).await.stop().await;
    }
}

/// `POST /v1/users` as `app`: (status, body).
async fn register(server: &PlatformServer, app: &TestApp, email: &str) -> (StatusCode, Value) {
    let response = Client::new()
        .post(server.url("/api/platform/v1/users"))
        .basic_auth(app.client_id(), Some(app.secret()))
        .json(&serde_json::json!({ "email": email }))
        .send()
        .await
        .unwrap();
    (response.status(), response.json().await.unwrap())
}

async fn get_with(server: &PlatformServer, path: &str, access_token: &str) -> reqwest::Response {
    Client::new()
        .get(server.url(path))
        .bearer_auth(access_token)
        .send()
        .await
        .unwrap()
}

/// A form POST to the token endpoint: (status, body, headers).
async fn token_request(
    server: &PlatformServer,
    form: &[(&str, &str)],
    basic: Option<&TestApp>,
) -> (StatusCode, Value, reqwest::header::HeaderMap) {
    let mut request = Client::new()
        .post(server.url("/api/platform/oauth/token"))
        .form(form);
    if let Some(app) = basic {
        request = request.basic_auth(app.client_id(), Some(app.secret()));
    }
    let response = request.send().await.unwrap();
    let headers = response.headers().clone();
    (response.status(), response.json().await.unwrap(), headers)
}

/// Tributary's id of an app's user, from the id the app knows.
fn internal_id(server: &PlatformServer, app: &TestApp, public_id: &str) -> UserId {
    apps::find_app_user(
        &mut server.database.db().conn().unwrap(),
        app.record.id,
        public_id,
    )
    .unwrap()
    .unwrap()
    .id
}

/// Gives the user a synced sandbox connection.
async fn give_sandbox_bank(server: &PlatformServer, user_id: UserId, email: &str) {
    let (db, clock, email) = (
        server.database.db().clone(),
        server.clock.clone(),
        email.to_owned(),
    );
    actix_web::web::block(move || {
        let mut registry = Registry::default();
        registry.register(Arc::new(SandboxConnector::default()));
        let engine = SyncEngine::new(db, registry, clock);
        let connection = engine
            .connect(
                user_id,
                Provider::Sandbox,
                &sandbox::connect_request(&email, sandbox::USER_GOOD),
            )
            .unwrap();
        engine
            .sync_now(connection.id, SyncJobKind::Initial, "test")
            .unwrap();
    })
    .await
    .unwrap();
}

/// An authorization code, as the browser flow will issue it.
async fn issue_code(
    server: &PlatformServer,
    app: &TestApp,
    user_id: UserId,
    redirect_uri: &str,
    challenge: Option<(&str, &str)>,
) -> Result<String, String> {
    let db = server.database.db().clone();
    let now = server.clock.now().naive_utc();
    let (record, redirect_uri) = (app.record.clone(), redirect_uri.to_owned());
    let challenge = challenge.map(|(c, m)| (c.to_owned(), m.to_owned()));
    actix_web::web::block(move || {
        let mut conn = db.conn().unwrap();
        let challenge = challenge.as_ref().map(|(c, m)| (c.as_str(), m.as_str()));
        oauth::issue_code(&mut *conn, &record, user_id, &redirect_uri, challenge, now)
            .map_err(|e| format!("{}: {e}", e.code()))
    })
    .await
    .unwrap()
}

fn s256(verifier: &str) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .encode(sha2::Sha256::digest(verifier.as_bytes()))
}

const VERIFIER: &str = "a-random-code-verifier-of-at-least-43-characters-0123456789";

/// A registered user of app A with a sandbox bank; (public id, internal id, access, refresh).
async fn user_with_bank(server: &PlatformServer, email: &str) -> (String, UserId, String, String) {
    let (status, body) = register(server, &server.app_a, email).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let public_id = body["user_id"].as_str().unwrap().to_owned();
    let user = internal_id(server, &server.app_a, &public_id);
    give_sandbox_bank(server, user, email).await;
    (
        public_id,
        user,
        body["access_token"].as_str().unwrap().to_owned(),
        body["refresh_token"].as_str().unwrap().to_owned(),
    )
}

#[actix_web::test]
async fn an_integrator_registers_reads_refreshes_and_reads_again_with_the_oauth2_crate() {
    on_every_backend(|server| async move {
        let (public_id, _, access, refresh) = user_with_bank(&server, "ana@example.com").await;
        let first = get_with(&server, "/api/platform/v1/accounts", &access).await;
        assert_eq!(first.status(), StatusCode::OK);
        let accounts: Value = first.json().await.unwrap();
        assert!(accounts["total"].as_u64().unwrap() >= 3);
        assert_eq!(accounts["accounts"][0]["provider"], "sandbox");

        let client = BasicClient::new(ClientId::new(server.app_a.client_id().to_owned()))
            .set_client_secret(ClientSecret::new(server.app_a.secret().to_owned()))
            .set_token_uri(TokenUrl::new(server.url("/api/platform/oauth/token")).unwrap());
        let http = oauth2::reqwest::ClientBuilder::new().redirect(oauth2::reqwest::redirect::Policy::none()).build().unwrap();
        let refreshed = client.exchange_refresh_token(&RefreshToken::new(refresh.clone())).request_async(&http).await.unwrap();
        assert_eq!(refreshed.expires_in(), Some(std::time::Duration::from_secs(3600)));
        let new_access = refreshed.access_token().secret().clone();
        let new_refresh = refreshed.refresh_token().unwrap().secret().clone();
        let again = get_with(&server, "/api/platform/v1/accounts", &new_access).await;
        assert_eq!(again.status(), StatusCode::OK);
        assert_eq!(again.json::<Value>().await.unwrap(), accounts);

        // The old refresh token again: refused, and the new family with it.
        let replay = client.exchange_refresh_token(&RefreshToken::new(refresh)).request_async(&http).await.unwrap_err();
        let RequestTokenError::ServerResponse(error) = replay else { panic!("expected an OAuth error") };
        assert_eq!(*error.error(), BasicErrorResponseType::InvalidGrant);
        let after = client.exchange_refresh_token(&RefreshToken::new(new_refresh)).request_async(&http).await.unwrap_err();
        assert!(matches!(after, RequestTokenError::ServerResponse(ref e) if *e.error() == BasicErrorResponseType::InvalidGrant));
        assert_eq!(get_with(&server, "/api/platform/v1/accounts", &new_access).await.status(), StatusCode::UNAUTHORIZED);

        // The token response carries user_id (the oauth2 crate ignores it).
        let (status, body) = register(&server, &server.app_a, "ana@example.com").await;
        assert_eq!((status, body["user_id"].as_str()), (StatusCode::OK, Some(public_id.as_str())), "the same user again: 200");
        let (status, body, headers) =
            token_request(&server, &[("grant_type", "refresh_token"), ("refresh_token", body["refresh_token"].as_str().unwrap())], Some(&server.app_a)).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(body["user_id"], public_id.as_str());
        assert_eq!(body["token_type"], "Bearer");
        assert_eq!(headers["cache-control"], "no-store");
        server
    })
    .await;
}

/// Whether every token given is revoked in the database.
fn all_revoked(server: &PlatformServer, tokens: &[&str]) -> bool {
    let mut conn = server.database.db().conn().unwrap();
    tokens.iter().all(|token| {
        tributary_storage::oauth::find_token(&mut conn, &tributary_auth::secret::hash(token))
            .unwrap()
            .is_some_and(|record| record.revoked_at.is_some())
    })
}

#[actix_web::test]
async fn concurrent_refreshes_of_one_token_leave_every_token_of_the_family_revoked() {
    on_every_backend(|server| async move {
        for round in 0..10 {
            let (status, body) =
                register(&server, &server.app_a, &format!("race{round}@example.com")).await;
            assert_eq!(status, StatusCode::CREATED);
            let access = body["access_token"].as_str().unwrap().to_owned();
            let refresh = body["refresh_token"].as_str().unwrap().to_owned();
            let form = [
                ("grant_type", "refresh_token"),
                ("refresh_token", refresh.as_str()),
            ];
            let requests = (0..20).map(|_| token_request(&server, &form, Some(&server.app_a)));
            let answers = futures_util::future::join_all(requests).await;
            let winners: Vec<&Value> = answers
                .iter()
                .filter(|(status, _, _)| *status == StatusCode::OK)
                .map(|(_, body, _)| body)
                .collect();
            assert_eq!(winners.len(), 1, "round {round}: exactly one rotation wins");
            for (status, body, _) in &answers {
                assert!(
                    *status == StatusCode::OK || body["error"] == "invalid_grant",
                    "round {round}: {status} {body}"
                );
            }
            let (new_access, new_refresh) = (
                winners[0]["access_token"].as_str().unwrap(),
                winners[0]["refresh_token"].as_str().unwrap(),
            );
            assert!(
                all_revoked(&server, &[&access, &refresh, new_access, new_refresh]),
                "round {round}: the replay revoked the whole family, the winner's new pair included"
            );
            let (status, _, _) = token_request(
                &server,
                &[
                    ("grant_type", "refresh_token"),
                    ("refresh_token", new_refresh),
                ],
                Some(&server.app_a),
            )
            .await;
            assert_eq!(status, StatusCode::BAD_REQUEST, "round {round}");
            assert_eq!(
                get_with(&server, "/api/platform/v1/accounts", new_access)
                    .await
                    .status(),
                StatusCode::UNAUTHORIZED
            );
        }
        server
    })
    .await;
}

#[actix_web::test]
async fn code_reuse_revokes_what_the_first_redemption_issued() {
    on_every_backend(|server| async move {
        let (_, user, _, _) = user_with_bank(&server, "reuse@example.com").await;
        let redirect = server.app_a.redirect_uris[0].clone();
        let code = issue_code(&server, &server.app_a, user, &redirect, None)
            .await
            .unwrap();
        let form = [
            ("grant_type", "authorization_code"),
            ("code", code.as_str()),
            ("redirect_uri", redirect.as_str()),
        ];
        let (status, first, _) = token_request(&server, &form, Some(&server.app_a)).await;
        assert_eq!(status, StatusCode::OK, "{first}");
        let access = first["access_token"].as_str().unwrap();
        assert_eq!(
            get_with(&server, "/api/platform/v1/accounts", access)
                .await
                .status(),
            StatusCode::OK
        );
        let (status, second, _) = token_request(&server, &form, Some(&server.app_a)).await;
        assert_eq!(
            (status, second["error"].as_str()),
            (StatusCode::BAD_REQUEST, Some("invalid_grant"))
        );
        assert_eq!(
            get_with(&server, "/api/platform/v1/accounts", access)
                .await
                .status(),
            StatusCode::UNAUTHORIZED
        );
        server
    })
    .await;
}

#[actix_web::test]
async fn redirect_uri_must_be_the_one_the_code_was_issued_for() {
    on_every_backend(|server| async move {
        let (_, user, _, _) = user_with_bank(&server, "redirect@example.com").await;
        let code = issue_code(
            &server,
            &server.app_a,
            user,
            &server.app_a.redirect_uris[0],
            None,
        )
        .await
        .unwrap();
        let other = server.app_a.redirect_uris[1].as_str();
        let (status, body, _) = token_request(
            &server,
            &[
                ("grant_type", "authorization_code"),
                ("code", &code),
                ("redirect_uri", other),
            ],
            Some(&server.app_a),
        )
        .await;
        assert_eq!(
            (status, body["error"].as_str()),
            (StatusCode::BAD_REQUEST, Some("invalid_grant"))
        );
        assert!(
            body["error_description"]
                .as_str()
                .unwrap()
                .contains("redirect_uri")
        );
        // A redirect URI the app never registered gets no code at all.
        let err = issue_code(
            &server,
            &server.app_a,
            user,
            "https://evil.example/cb",
            None,
        )
        .await
        .unwrap_err();
        assert!(err.starts_with("invalid_request"), "{err}");
        server
    })
    .await;
}

#[actix_web::test]
async fn a_code_of_app_a_cannot_be_redeemed_by_app_b() {
    on_every_backend(|server| async move {
        let (_, user, _, _) = user_with_bank(&server, "cross@example.com").await;
        let redirect = server.app_a.redirect_uris[0].clone();
        let code = issue_code(&server, &server.app_a, user, &redirect, None)
            .await
            .unwrap();
        let (status, body, _) = token_request(
            &server,
            &[
                ("grant_type", "authorization_code"),
                ("code", &code),
                ("redirect_uri", &redirect),
            ],
            Some(&server.app_b),
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

#[actix_web::test]
async fn an_expired_code_is_refused() {
    on_every_backend(|server| async move {
        let (_, user, _, _) = user_with_bank(&server, "late@example.com").await;
        let redirect = server.app_a.redirect_uris[0].clone();
        let code = issue_code(&server, &server.app_a, user, &redirect, None)
            .await
            .unwrap();
        server.clock.advance(chrono::Duration::minutes(10));
        let (status, body, _) = token_request(
            &server,
            &[
                ("grant_type", "authorization_code"),
                ("code", &code),
                ("redirect_uri", &redirect),
            ],
            Some(&server.app_a),
        )
        .await;
        assert_eq!(
            (status, body["error"].as_str()),
            (StatusCode::BAD_REQUEST, Some("invalid_grant"))
        );
        assert!(
            body["error_description"]
                .as_str()
                .unwrap()
                .contains("expired")
        );
        server
    })
    .await;
}

#[actix_web::test]
async fn an_access_token_expires_after_an_hour() {
    on_every_backend(|server| async move {
        let (_, _, access, _) = user_with_bank(&server, "hour@example.com").await;
        server.clock.advance(chrono::Duration::seconds(3599));
        assert_eq!(
            get_with(&server, "/api/platform/v1/accounts", &access)
                .await
                .status(),
            StatusCode::OK
        );
        server.clock.advance(chrono::Duration::seconds(1));
        let expired = get_with(&server, "/api/platform/v1/accounts", &access).await;
        assert_eq!(expired.status(), StatusCode::UNAUTHORIZED);
        let body: Value = expired.json().await.unwrap();
        assert_eq!(body["code"], "ACCESS_TOKEN_EXPIRED");
        server
    })
    .await;
}

#[actix_web::test]
async fn a_public_client_must_use_pkce() {
    on_every_backend(|server| async move {
        let (status, body) = register(&server, &server.app_a, "pub@example.com").await;
        assert_eq!(status, StatusCode::CREATED);
        let user = internal_id(&server, &server.app_a, body["user_id"].as_str().unwrap());
        let app = server.public_app.clone();
        let err = issue_code(&server, &app, user, &app.redirect_uris[0], None)
            .await
            .unwrap_err();
        assert!(err.starts_with("invalid_request"), "{err}");
        // With a challenge, the code exchange needs the verifier.
        let challenge = s256(VERIFIER);
        let code = issue_code(
            &server,
            &app,
            user,
            &app.redirect_uris[0],
            Some((&challenge, "S256")),
        )
        .await
        .unwrap();
        let base = [
            ("grant_type", "authorization_code"),
            ("code", code.as_str()),
            ("redirect_uri", app.redirect_uris[0].as_str()),
            ("client_id", app.client_id()),
        ];
        let (status, body, _) = token_request(&server, &base, None).await;
        assert_eq!(
            (status, body["error"].as_str()),
            (StatusCode::BAD_REQUEST, Some("invalid_grant")),
            "{body}"
        );
        server
    })
    .await;
}

#[actix_web::test]
async fn a_wrong_code_verifier_is_refused_and_the_right_one_accepted() {
    on_every_backend(|server| async move {
        let (status, body) = register(&server, &server.app_a, "pkce@example.com").await;
        assert_eq!(status, StatusCode::CREATED);
        let user = internal_id(&server, &server.app_a, body["user_id"].as_str().unwrap());
        let app = server.public_app.clone();
        let challenge = s256(VERIFIER);
        let redirect = app.redirect_uris[0].as_str();
        let code = issue_code(&server, &app, user, redirect, Some((&challenge, "S256")))
            .await
            .unwrap();
        let wrong = "another-random-code-verifier-of-at-least-43-characters-xyz";
        let form = |verifier: &'static str| {
            vec![
                ("grant_type", "authorization_code"),
                ("code", code.as_str()),
                ("redirect_uri", redirect),
                ("client_id", app.client_id()),
                ("code_verifier", verifier),
            ]
        };
        let (status, body, _) = token_request(&server, &form(wrong), None).await;
        assert_eq!(
            (status, body["error"].as_str()),
            (StatusCode::BAD_REQUEST, Some("invalid_grant"))
        );
        let code = issue_code(&server, &app, user, redirect, Some((&challenge, "S256")))
            .await
            .unwrap();
        let (status, body, _) = token_request(
            &server,
            &[
                ("grant_type", "authorization_code"),
                ("code", &code),
                ("redirect_uri", redirect),
                ("client_id", app.client_id()),
                ("code_verifier", VERIFIER),
            ],
            None,
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        server
    })
    .await;
}

#[actix_web::test]
async fn plain_pkce_is_refused() {
    on_every_backend(|server| async move {
        let (_, body) = register(&server, &server.app_a, "plain@example.com").await;
        let user = internal_id(&server, &server.app_a, body["user_id"].as_str().unwrap());
        let app = server.public_app.clone();
        let err = issue_code(
            &server,
            &app,
            user,
            &app.redirect_uris[0],
            Some((VERIFIER, "plain")),
        )
        .await
        .unwrap_err();
        assert!(
            err.starts_with("invalid_request") && err.contains("S256"),
            "{err}"
        );
        server
    })
    .await;
}

#[actix_web::test]
async fn a_wrong_client_secret_is_invalid_client() {
    on_every_backend(|server| async move {
        let (_, _, _, refresh) = user_with_bank(&server, "secret@example.com").await;
        let mut impostor = server.app_a.clone();
        impostor.secret = Some("tcs_wrongwrongwrongwrongwrongwrongwrongwrongwro".into());
        let (status, body, headers) = token_request(
            &server,
            &[("grant_type", "refresh_token"), ("refresh_token", &refresh)],
            Some(&impostor),
        )
        .await;
        assert_eq!(
            (status, body["error"].as_str()),
            (StatusCode::UNAUTHORIZED, Some("invalid_client"))
        );
        assert!(
            headers["www-authenticate"]
                .to_str()
                .unwrap()
                .starts_with("Basic")
        );
        let (status, _) = register(&server, &impostor, "x@example.com").await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
        // Credentials in the body work as well as in the header.
        let (status, body, _) = token_request(
            &server,
            &[
                ("grant_type", "refresh_token"),
                ("refresh_token", &refresh),
                ("client_id", server.app_a.client_id()),
                ("client_secret", server.app_a.secret()),
            ],
            None,
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        server
    })
    .await;
}

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
            let read: Value = client
                .put(&path)
                .basic_auth(server.app_b.client_id(), Some(server.app_b.secret()))
                .json(&serde_json::json!({}))
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
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
async fn refresh_after_the_user_was_deleted_is_invalid_grant() {
    on_every_backend(|server| async move {
        let (public_id, user, access, refresh) = user_with_bank(&server, "gone@example.com").await;
        let deleted = Client::new()
            .delete(server.url(&format!("/api/platform/v1/users/{public_id}")))
            .basic_auth(server.app_a.client_id(), Some(server.app_a.secret()))
            .send()
            .await
            .unwrap();
        assert_eq!(deleted.status(), StatusCode::NO_CONTENT);
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
        assert_eq!(
            get_with(&server, "/api/platform/v1/accounts", &access)
                .await
                .status(),
            StatusCode::UNAUTHORIZED
        );
        // Every row of the user is gone.
        let everything = tributary_storage::testing::dump_rows(server.database.db());
        assert!(
            everything.contains("app-a"),
            "the dump shows the data that remains"
        );
        assert!(!everything.contains("gone@example.com"));
        assert!(
            apps::find_app_user(
                &mut server.database.db().conn().unwrap(),
                server.app_a.record.id,
                &public_id
            )
            .unwrap()
            .is_none()
        );
        let _ = user;
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

#[actix_web::test]
async fn the_token_endpoint_speaks_rfc_6749_errors_and_json_bodies() {
    on_every_backend(|server| async move {
        let (_, _, _, refresh) = user_with_bank(&server, "json@example.com").await;
        let (status, body, _) = token_request(&server, &[("grant_type", "password")], Some(&server.app_a)).await;
        assert_eq!((status, body["error"].as_str()), (StatusCode::BAD_REQUEST, Some("unsupported_grant_type")));
        let (status, body, _) = token_request(&server, &[("grant_type", "refresh_token")], Some(&server.app_a)).await;
        assert_eq!((status, body["error"].as_str()), (StatusCode::BAD_REQUEST, Some("invalid_request")));
        let json = Client::new()
            .post(server.url("/api/platform/oauth/token"))
            .json(&serde_json::json!({"grant_type": "refresh_token", "refresh_token": refresh, "client_id": server.app_a.client_id(), "client_secret": server.app_a.secret()}))
            .send()
            .await
            .unwrap();
        assert_eq!(json.status(), StatusCode::OK);
        let body: Value = json.json().await.unwrap();
        for field in ["access_token", "refresh_token", "token_type", "expires_in", "user_id"] {
            assert!(body.get(field).is_some(), "{field}");
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
                    Provider::Sandbox,
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
async fn no_secret_token_or_code_is_stored_in_plain_text() {
    on_every_backend(|server| async move {
        let (_, user, access, refresh) = user_with_bank(&server, "plain-text@example.com").await;
        let redirect = server.app_a.redirect_uris[0].clone();
        let code = issue_code(&server, &server.app_a, user, &redirect, None)
            .await
            .unwrap();
        let (_, pair, _) = token_request(
            &server,
            &[
                ("grant_type", "authorization_code"),
                ("code", &code),
                ("redirect_uri", &redirect),
            ],
            Some(&server.app_a),
        )
        .await;
        let portal: Value = Client::new()
            .post(server.url("/api/platform/v1/portal_sessions"))
            .bearer_auth(&access)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let everything = dump(server.database.db());
        let secrets = [
            server.app_a.secret().to_owned(),
            server.app_b.secret().to_owned(),
            access,
            refresh,
            code,
            pair["access_token"].as_str().unwrap().to_owned(),
            pair["refresh_token"].as_str().unwrap().to_owned(),
            portal["url"]
                .as_str()
                .unwrap()
                .rsplit('/')
                .next()
                .unwrap()
                .to_owned(),
        ];
        // The dump holds what was stored (so its silence means something):
        // the apps, and the SHA-256 of the first access token.
        assert!(
            everything.contains(server.app_a.client_id()),
            "the dump holds the apps"
        );
        assert!(
            everything.contains(&tributary_auth::secret::hash(&secrets[2])),
            "the dump holds the token's hash"
        );
        for secret in secrets {
            assert!(
                !everything.contains(&secret),
                "stored in plain text: {}…",
                &secret[..8]
            );
            assert!(
                !everything.contains(&secret[4..]),
                "stored in plain text: {}…",
                &secret[..8]
            );
        }
        server
    })
    .await;
}

#[actix_web::test]
async fn authorization_server_metadata_follows_rfc_8414_and_its_endpoints_work() {
    on_every_backend(|server| async move {
        let response = Client::new()
            .get(server.url("/.well-known/oauth-authorization-server"))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        assert!(
            response.headers()["content-type"]
                .to_str()
                .unwrap()
                .starts_with("application/json")
        );
        let metadata: Value = response.json().await.unwrap();
        // §2: required members; §3.3: the issuer is the URL the document is
        // published under (the public URL), minus the well-known suffix.
        assert_eq!(metadata["issuer"], tributary_e2e::platform::PUBLIC_URL);
        for member in [
            "authorization_endpoint",
            "token_endpoint",
            "revocation_endpoint",
        ] {
            let url = url::Url::parse(metadata[member].as_str().unwrap()).unwrap();
            assert!(
                url.query().is_none() && url.fragment().is_none(),
                "{member}"
            );
        }
        assert_eq!(
            metadata["response_types_supported"],
            serde_json::json!(["code"])
        );
        assert_eq!(
            metadata["code_challenge_methods_supported"],
            serde_json::json!(["S256"])
        );
        assert_eq!(
            metadata["grant_types_supported"],
            serde_json::json!(["authorization_code", "refresh_token"])
        );
        for method in ["client_secret_basic", "client_secret_post", "none"] {
            assert!(
                metadata["token_endpoint_auth_methods_supported"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|m| m == method),
                "{method}"
            );
        }
        // A client configured from the document alone refreshes a token.
        let (_, _, _, refresh) = user_with_bank(&server, "meta@example.com").await;
        let client = BasicClient::new(ClientId::new(server.app_a.client_id().to_owned()))
            .set_client_secret(ClientSecret::new(server.app_a.secret().to_owned()))
            .set_token_uri(
                TokenUrl::new(
                    server.url(
                        url::Url::parse(metadata["token_endpoint"].as_str().unwrap())
                            .unwrap()
                            .path(),
                    ),
                )
                .unwrap(),
            );
        let http = oauth2::reqwest::ClientBuilder::new()
            .redirect(oauth2::reqwest::redirect::Policy::none())
            .build()
            .unwrap();
        client
            .exchange_refresh_token(&RefreshToken::new(refresh))
            .request_async(&http)
            .await
            .unwrap();
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
