//! NUL and other control characters in what a request carries, on both
//! servers over SQLite and PostgreSQL (PostgreSQL cannot store NUL in text:
//! it answered 500 where SQLite answered 400, issue #33). One rule
//! (`tributary_http::control_characters`, docs/errors.md):
//!
//! - a sweep reads the OpenAPI document each server serves and, for every
//!   operation, sends NUL in each parameter, in each field of each request
//!   body it takes, and in the Basic credentials where it takes the app's:
//!   every one is 400 in the surface's shape, naming the field;
//! - the surfaces outside the documents: the sign-in form, SimpleFIN, the
//!   dashboards' search, key, destination and app names (names also
//!   refuse the bidi overrides and other controls of docs/operations.md);
//! - statement files are not refused for NUL: it is dropped, with a note;
//! - e-mail look-alikes are one address.

// Test code: a failed unwrap is a failed test, with its message.
#![allow(clippy::unwrap_used)]

use reqwest::{Client, StatusCode};
use serde_json::{Value, json};
use tributary_e2e::TestServer;
use tributary_e2e::browser::{Browser, authorize_path, developer_sign_in};
use tributary_e2e::harness;
use tributary_e2e::openapi::{Caller, operations, personal_caller, platform_caller};
use tributary_e2e::platform::PlatformServer;

/// A value with NUL in the middle, as the review sent it.
const NUL: &str = "a\0b";

/// How the surface at `path` answers a refusal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    Envelope,
    OAuth,
    Page,
}

fn shape_of(path: &str) -> Shape {
    if path.ends_with("/oauth/token") || path.ends_with("/oauth/revoke") {
        Shape::OAuth
    } else if path.ends_with("/oauth/authorize") || path.ends_with("/docs") {
        Shape::Page
    } else {
        Shape::Envelope
    }
}

/// Asserts that `response` refuses `what` with 400 in `shape`, its
/// message naming `field`.
async fn assert_refused(what: &str, response: reqwest::Response, shape: Shape, field: &str) {
    let status = response.status();
    let content_type = response
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default();
    let body = response.text().await.unwrap();
    assert_eq!(status, StatusCode::BAD_REQUEST, "{what}: {body}");
    let message = match shape {
        Shape::Envelope => {
            let body: Value = serde_json::from_str(&body).unwrap();
            assert_eq!(body["code"], "CONTROL_CHARACTER", "{what}: {body}");
            body["message"].as_str().unwrap().to_owned()
        }
        Shape::OAuth => {
            let body: Value = serde_json::from_str(&body).unwrap();
            assert_eq!(body["error"], "invalid_request", "{what}: {body}");
            body["error_description"].as_str().unwrap().to_owned()
        }
        Shape::Page => {
            assert!(
                content_type.starts_with("text/html"),
                "{what}: {content_type}"
            );
            body
        }
    };
    assert!(
        message.contains(field) && message.contains("U+0000"),
        "{what}: the refusal names {field}: {message}"
    );
}

/// The property names of a request body's schema (`$ref`s resolved).
fn fields(document: &Value, media: &Value) -> Vec<String> {
    let mut schema = &media["schema"];
    if let Some(reference) = schema["$ref"].as_str() {
        let name = reference.trim_start_matches("#/components/schemas/");
        schema = &document["components"]["schemas"][name];
    }
    schema["properties"]
        .as_object()
        .map(|properties| properties.keys().cloned().collect())
        .unwrap_or_default()
}

/// Every operation of the document `caller`'s server serves, with NUL in
/// each parameter, body field and Basic credential it takes; the number
/// of requests sent.
async fn sweep(caller: &Caller) -> usize {
    let client = Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let document = caller.document().await;
    let mut sent = 0;
    for (path, method, operation) in operations(&document) {
        let shape = shape_of(&path);
        let request =
            |url: String| caller.authorized(client.request(method.clone(), url), &operation);
        for parameter in operation["parameters"].as_array().into_iter().flatten() {
            let name = parameter["name"].as_str().unwrap();
            let what = format!("{method} {path} with NUL in `{name}`");
            let (url, field) = match parameter["in"].as_str().unwrap() {
                "query" => (
                    format!("{}?{name}=a%00b", caller.url(&path)),
                    format!("`{name}`"),
                ),
                "path" => (
                    caller.url(&path.replace(&format!("{{{name}}}"), "a%00b")),
                    "path".to_owned(),
                ),
                // Header values cannot hold NUL: the HTTP parser refuses
                // them (tests/tests/malformed_http.rs).
                _ => continue,
            };
            assert_refused(&what, request(url).send().await.unwrap(), shape, &field).await;
            sent += 1;
        }
        let body = &operation["requestBody"]["content"];
        for (content_type, media) in body.as_object().into_iter().flatten() {
            for field in fields(&document, media) {
                let what = format!("{method} {path} with NUL in {content_type} `{field}`");
                let with_nul = request(caller.url(&path));
                let with_nul = match content_type.as_str() {
                    "application/json" => with_nul.json(&json!({ field.clone(): NUL })),
                    "application/x-www-form-urlencoded" => with_nul.form(&[(&field, NUL)]),
                    "multipart/form-data" => {
                        with_nul.multipart(reqwest::multipart::Form::new().text(field.clone(), NUL))
                    }
                    other => panic!("{what}: no sweep for {other}"),
                };
                let response = with_nul.send().await.unwrap();
                assert_refused(&what, response, shape, &format!("`{field}`")).await;
                sent += 1;
            }
        }
        if let Some((id, secret)) = caller
            .app_basic
            .as_ref()
            .filter(|_| tributary_e2e::openapi::takes_app_credentials(&operation))
        {
            let url = caller.url(&path);
            for (basic, field) in [
                ((format!("{id}\0"), secret.clone()), "client id"),
                ((id.clone(), format!("{secret}\0")), "client secret"),
            ] {
                let what = format!("{method} {path} with NUL in the Basic {field}");
                let response = client
                    .request(method.clone(), &url)
                    .basic_auth(basic.0, Some(basic.1))
                    .send()
                    .await
                    .unwrap();
                assert_refused(&what, response, shape, field).await;
                sent += 1;
            }
        }
    }
    sent
}

#[actix_web::test]
async fn nul_in_any_parameter_or_field_of_the_personal_api_is_refused_on_both_backends() {
    harness::personal(|server: TestServer| async move {
        let sent = sweep(&personal_caller(&server)).await;
        eprintln!("{sent} requests with NUL, each refused");
        // Every operation's parameters and fields: 28 today.
        assert!(sent >= 25, "only {sent} requests");
        server
    })
    .await;
}

#[actix_web::test]
async fn nul_in_any_parameter_field_or_credential_of_the_platform_api_is_refused_on_both_backends()
{
    harness::platform(|server: PlatformServer| async move {
        let sent = sweep(&platform_caller(&server).await).await;
        eprintln!("{sent} requests with NUL, each refused");
        assert!(sent >= 60, "only {sent} requests");
        server
    })
    .await;
}

/// A CSV statement with NUL in its descriptions, as the review uploaded.
const CSV_WITH_NUL: &[u8] =
    b"Date,Description,Amount\n2026-01-02,Coffee\0 shop,-3.50\n2026-01-03,Sal\0ary,100.00\n";

/// `email`'s Personal dashboard session, from a one-time sign-in link.
async fn signed_in(server: &TestServer, email: &str) -> Browser {
    let link = {
        let conn = &mut *server.database.db().conn().unwrap();
        let user = tributary_storage::users::find_personal_user(conn, email)
            .unwrap()
            .unwrap();
        let now = tributary_domain::clock::Clock::now(server.clock.as_ref()).naive_utc();
        tributary_auth::dashboard::issue_login_link(conn, user.id, now).unwrap()
    };
    let browser = Browser::at(&server.base_url);
    browser.get(&format!("/sign-in/link/{link}")).await;
    browser
}

#[actix_web::test]
async fn the_personal_dashboard_refuses_control_characters_in_search_and_names_and_imports_statements_without_nul()
 {
    harness::personal(|server: TestServer| async move {
        let browser = signed_in(&server, "alice@example.com").await;
        let account = server.world.alice_imported;
        let search = browser
            .client
            .get(server.url(&format!("/accounts/{account}?q=a%00b")))
            .send()
            .await
            .unwrap();
        assert_refused("dashboard search", search, Shape::Page, "`q`").await;

        let keys = browser.get("/keys").await;
        let refused = browser.submit(&keys, "/keys", &[("name", NUL)]).await;
        assert_eq!(refused.status, StatusCode::BAD_REQUEST);
        refused.assert_shows("U+0000");
        // Not C0, or allowed in a body, but never in a name.
        for (name, shown) in [
            ("abc\u{202e}gpj.exe", "U+202E"),
            ("tab\tbed", "U+0009"),
            ("next\u{85}line", "U+0085"),
        ] {
            let refused = browser.submit(&keys, "/keys", &[("name", name)]).await;
            assert_eq!(refused.status, StatusCode::BAD_REQUEST, "{name:?}");
            refused.assert_shows("Name:");
            refused.assert_shows(shown);
        }
        let apps = browser.get("/budgeting-apps").await;
        let refused = browser
            .submit(&apps, "/budgeting-apps", &[("name", "Budget\u{2066}")])
            .await;
        assert_eq!(refused.status, StatusCode::BAD_REQUEST);
        refused.assert_shows("U+2066");
        let refused = browser
            .submit(&apps, "/budgeting-apps", &[("name", "red\u{1b}[31m")])
            .await;
        assert_eq!(refused.status, StatusCode::BAD_REQUEST);
        refused.assert_shows("U+001B");

        // A statement file is what a bank wrote: its NUL is dropped, and
        // the import says so, from the dashboard and through the API.
        let form = browser.get("/connect/banks/upload").await;
        let summary = browser
            .upload(&form, "nul.csv", CSV_WITH_NUL.to_vec())
            .await;
        assert_eq!(summary.status, StatusCode::OK, "{}", summary.body);
        summary.assert_shows("NUL character(s)");
        let upload = reqwest::multipart::Form::new().part(
            "files",
            reqwest::multipart::Part::bytes(CSV_WITH_NUL.to_vec()).file_name("nul.csv"),
        );
        let imported = Client::new()
            .post(server.url("/api/v1/imports"))
            .header("x-api-key", &server.world.alice_key)
            .multipart(upload)
            .send()
            .await
            .unwrap();
        assert_eq!(imported.status(), StatusCode::OK);
        let imported: Value = imported.json().await.unwrap();
        assert!(
            imported["notes"].to_string().contains("2 NUL character(s)"),
            "{imported}"
        );
        let alice = |path: String| {
            tributary_e2e::json_answer(
                Client::new()
                    .get(server.url(&path))
                    .header("x-api-key", &server.world.alice_key),
            )
        };
        let accounts = alice("/api/v1/accounts".to_owned()).await;
        let mut descriptions = Vec::new();
        for account in accounts["accounts"].as_array().unwrap() {
            let listed = alice(format!("/api/v1/accounts/{}/transactions", account["id"])).await;
            for transaction in listed["transactions"].as_array().unwrap() {
                descriptions.push(transaction["description"].to_string());
            }
        }
        assert!(
            descriptions.iter().any(|d| d.contains("Coffee shop")),
            "{descriptions:?}"
        );
        assert!(descriptions.iter().all(|d| !d.contains("\\u0000")));
        server
    })
    .await;
}

#[actix_web::test]
async fn the_sign_in_pages_simplefin_and_the_developer_dashboard_refuse_control_characters() {
    harness::with_pages(|server, outbox| async move {
        let app = &server.app_a;
        let browser = Browser::new(&server);
        let authorize = authorize_path(app, &app.redirect_uris[0], "st", "a\0@example.com");
        let response = browser
            .client
            .get(server.url(&authorize))
            .send()
            .await
            .unwrap();
        assert_refused(
            "authorize with NUL in email",
            response,
            Shape::Page,
            "`email`",
        )
        .await;
        let sign_in = browser
            .client
            .post(server.url("/connect/sign-in"))
            .form(&[("csrf", "x"), ("email", "ana\0@example.com")])
            .send()
            .await
            .unwrap();
        assert_refused("sign-in with NUL in email", sign_in, Shape::Page, "`email`").await;

        // SimpleFIN answers in its protocol: `errors` and `errlist`.
        for (what, request) in [
            (
                "Basic user",
                Client::new()
                    .get(server.url("/simplefin/accounts"))
                    .basic_auth("user\0", Some("secret")),
            ),
            (
                "start-date",
                Client::new().get(server.url("/simplefin/accounts?start-date=1%00")),
            ),
        ] {
            let response = request.send().await.unwrap();
            assert_eq!(response.status(), StatusCode::BAD_REQUEST, "{what}");
            let body: Value = response.json().await.unwrap();
            assert!(
                body["errors"][0].as_str().unwrap().contains("U+0000"),
                "{body}"
            );
            assert!(body["errlist"].is_array(), "{body}");
        }

        // The developer dashboard's app name.
        let developer = Browser::new(&server);
        let home = developer_sign_in(&developer, &outbox, "dev@example.com").await;
        // ESC is refused with every C0 character before the form is read;
        // a bidi override by the name rule.
        for (name, says, character) in [
            ("My\u{1b}[2Japp", "`name`", "U+001B"),
            ("ppa\u{202e}", "Name:", "U+202E"),
        ] {
            let refused = developer
                .submit(
                    &home,
                    "/developers/apps",
                    &[
                        ("name", name),
                        ("redirect_uris", "https://app.example/cb"),
                        ("client_type", "confidential"),
                        ("billing", "integrator"),
                        ("max_accounts", ""),
                    ],
                )
                .await;
            assert_eq!(refused.status, StatusCode::BAD_REQUEST, "{name:?}");
            refused.assert_shows(says);
            refused.assert_shows(character);
        }
        server
    })
    .await;
}

#[actix_web::test]
async fn e_mail_look_alikes_are_one_user_and_bidi_overrides_are_refused() {
    harness::platform(|server: PlatformServer| async move {
        let app = &server.app_a;
        let create = |email: &str| {
            Client::new()
                .post(server.url("/api/platform/v1/users"))
                .basic_auth(app.client_id(), Some(app.secret()))
                .json(&json!({ "email": email }))
                .send()
        };
        let first = create("Ana@Exämple.com").await.unwrap();
        assert_eq!(first.status(), StatusCode::CREATED);
        let first: Value = first.json().await.unwrap();
        for spelling in ["ana@xn--exmple-cua.com", "ana@exa\u{308}mple.com"] {
            let again = create(spelling).await.unwrap();
            assert_eq!(again.status(), StatusCode::OK, "{spelling}");
            let again: Value = again.json().await.unwrap();
            assert_eq!(again["user_id"], first["user_id"], "{spelling}");
        }
        let refused = create("ana\u{202e}moc@example.com").await.unwrap();
        assert_eq!(refused.status(), StatusCode::BAD_REQUEST);
        let refused: Value = refused.json().await.unwrap();
        assert_eq!(refused["code"], "INVALID_EMAIL", "{refused}");
        assert!(
            refused["message"].as_str().unwrap().contains("U+202E"),
            "{refused}"
        );
        server
    })
    .await;
}
