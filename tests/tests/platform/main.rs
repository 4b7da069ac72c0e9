//! The Platform API end to end: the real server on a free port, over SQLite
//! and PostgreSQL; the `oauth2` crate plays the integrator's client. One
//! module per group of routes; the helpers they share are here.

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
use tributary_domain::model::SyncJobKind;
use tributary_domain::status::{AccountLimitExceeded, StatusDetail};
use tributary_e2e::harness::platform as on_every_backend;
use tributary_e2e::json_answer;
use tributary_e2e::platform::{PlatformServer, TestApp};
use tributary_providers::Registry;
use tributary_providers::sandbox::{self, SandboxConnector};
use tributary_providers::sync::{SyncEngine, SyncError};
use tributary_storage::testing::dump;
use tributary_storage::{StorageError, apps};

mod data;
mod tokens;
mod users;

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

/// Redeems an authorization code as `app` (HTTP Basic), by hand rather than
/// through the oauth2 crate, so a test sees every error answer.
async fn redeem(
    server: &PlatformServer,
    app: &TestApp,
    code: &str,
    redirect_uri: &str,
) -> (StatusCode, Value, reqwest::header::HeaderMap) {
    let form = [
        ("grant_type", "authorization_code"),
        ("code", code),
        ("redirect_uri", redirect_uri),
    ];
    token_request(server, &form, Some(app)).await
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
                tributary_providers::sandbox::PROVIDER,
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
        oauth::issue_code(
            &mut *conn,
            &record,
            (user_id, None),
            &redirect_uri,
            challenge,
            now,
        )
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
