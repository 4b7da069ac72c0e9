//! The developer dashboard end to end over HTTP, on SQLite and PostgreSQL:
//! a developer signs up with a mailed code, creates an app (its secret
//! shown once), rotates the secret (the old one then fails at the token
//! endpoint), registers a redirect URI, a user walks the authorization
//! flow to it, the user appears in the app's user list with their
//! connection and is erased; the app is deleted. Another developer tries
//! every page and form of the first one's app and gets 404 from each.

// Test code: a failed unwrap is a failed test, with its message.
#![allow(clippy::unwrap_used)]

use reqwest::{Client, Method, StatusCode};
use serde_json::Value;
use tributary_auth::developers::Signup;
use tributary_e2e::browser::{Browser, Page, approved_redirect, authorize_path, developer_sign_in};
use tributary_e2e::harness::with_pages as on_every_backend;
use tributary_e2e::platform::{PlatformServer, TestApp, start_platform_with_signup};
use tributary_storage::apps;
use tributary_storage::testing::{TestDatabase, dump, dump_rows};

/// The value of the read-only field `id` on `page`.
fn field(page: &Page, id: &str) -> Option<String> {
    let marker = format!("id=\"{id}\" readonly value=\"");
    let start = page.body.find(&marker)? + marker.len();
    Some(page.body[start..].split('"').next()?.to_owned())
}

/// A created (or re-keyed) app as its secret page shows it: the app's
/// page path, client id and secret.
struct Shown {
    path: String,
    client_id: String,
    secret: Option<String>,
}

fn shown(page: &Page) -> Shown {
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    let start = page.body.find("href=\"/developers/apps/").unwrap() + "href=\"".len();
    Shown {
        path: page.body[start..].split('"').next().unwrap().to_owned(),
        client_id: field(page, "client-id").unwrap(),
        secret: field(page, "client-secret"),
    }
}

/// Creates a confidential app from the apps page `home`.
async fn create_app(browser: &Browser, home: &Page, name: &str, uri: &str) -> Shown {
    let created = browser
        .submit(
            home,
            "/developers/apps",
            &[
                ("name", name),
                ("redirect_uris", uri),
                ("client_type", "confidential"),
                ("billing", "integrator"),
                ("max_accounts", "6"),
            ],
        )
        .await;
    let app = shown(&created);
    assert!(app.client_id.starts_with("app_"), "{}", app.client_id);
    assert!(app.secret.is_some(), "a confidential app's secret, once");
    app
}

/// What the token endpoint says to `client_id` with `secret` redeeming a
/// made-up code: `invalid_grant` once the client is authenticated,
/// `invalid_client` when it is not.
async fn token_error(
    server: &PlatformServer,
    client_id: &str,
    secret: &str,
) -> (StatusCode, Value) {
    let response = Client::new()
        .post(server.url("/api/platform/oauth/token"))
        .basic_auth(client_id, Some(secret))
        .form(&[
            ("grant_type", "authorization_code"),
            ("code", "tac_made_up"),
            ("redirect_uri", "https://ada.example/callback"),
        ])
        .send()
        .await
        .unwrap();
    (response.status(), response.json().await.unwrap())
}

async fn assert_authenticates(server: &PlatformServer, client_id: &str, secret: &str) {
    let (status, body) = token_error(server, client_id, secret).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (StatusCode::BAD_REQUEST, Some("invalid_grant")),
        "{body}"
    );
}

async fn assert_refused(server: &PlatformServer, client_id: &str, secret: &str) {
    let (status, body) = token_error(server, client_id, secret).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (StatusCode::UNAUTHORIZED, Some("invalid_client")),
        "{body}"
    );
}

/// The app as the test harness's flow helpers take it.
fn test_app(server: &PlatformServer, client_id: &str, secret: &str, uri: &str) -> TestApp {
    let record = apps::find_by_client_id(&mut server.database.db().conn().unwrap(), client_id)
        .unwrap()
        .unwrap();
    TestApp {
        record,
        secret: Some(secret.to_owned()),
        redirect_uris: vec![uri.to_owned()],
    }
}

#[actix_web::test]
async fn a_developer_creates_an_app_rotates_its_secret_and_sees_and_erases_its_users() {
    on_every_backend(|server, outbox| async move {
        let browser = Browser::new(&server);
        let home = developer_sign_in(&browser, &outbox, "ada@example.com").await;
        home.assert_shows("No apps yet");

        // A refused form names the field and keeps what was typed.
        let refused = browser
            .submit(
                &home,
                "/developers/apps",
                &[
                    ("name", "Ada's budget"),
                    ("redirect_uris", "http://ada.example/callback"),
                    ("client_type", "confidential"),
                    ("billing", "integrator"),
                    ("max_accounts", ""),
                ],
            )
            .await;
        assert_eq!(refused.status, StatusCode::BAD_REQUEST);
        refused.assert_shows("Redirect URIs: `http://ada.example/callback` uses http");
        refused.assert_shows("value=\"Ada&#39;s budget\"");
        let refused = browser
            .submit(
                &home,
                "/developers/apps",
                &[
                    ("name", "Ada's budget"),
                    ("redirect_uris", "https://ada.example/callback"),
                    ("client_type", "confidential"),
                    ("billing", "integrator"),
                    ("max_accounts", "-1"),
                ],
            )
            .await;
        assert_eq!(refused.status, StatusCode::BAD_REQUEST);
        refused.assert_shows("Accounts a user may connect");

        let app = create_app(
            &browser,
            &home,
            "Ada's budget",
            "https://ada.example/callback",
        )
        .await;
        let first_secret = app.secret.clone().unwrap();
        assert_authenticates(&server, &app.client_id, &first_secret).await;
        // Shown once: the app's page and the database never show it.
        let page = browser.get(&app.path).await;
        assert_eq!(page.status, StatusCode::OK);
        page.assert_shows(&app.client_id);
        page.assert_shows("https://ada.example/callback");
        assert!(!page.body.contains(&first_secret));
        assert!(!dump(server.database.db()).contains(&first_secret));
        let listed = browser.get("/developers").await;
        listed.assert_shows(&app.client_id);

        // Rotating asks first; then the new secret works, the old one no
        // longer does.
        let rotate = format!("{}/secret", app.path);
        page.assert_shows(&format!("<a href=\"{rotate}\" id=\"rotate-secret\">"));
        let confirm = browser.get(&rotate).await;
        confirm.assert_asks_first(&rotate, &app.path);
        confirm.assert_shows("Rotate the secret of Ada&#39;s budget?");
        confirm.assert_shows("aria-label=\"Developer dashboard\"");
        assert_authenticates(&server, &app.client_id, &first_secret).await;
        let rotated = shown(&browser.submit(&confirm, &rotate, &[]).await);
        let secret = rotated.secret.unwrap();
        assert_ne!(secret, first_secret);
        assert_refused(&server, &app.client_id, &first_secret).await;
        assert_authenticates(&server, &app.client_id, &secret).await;

        // A second redirect URI, checked like the first.
        let second = "https://ada.example/second";
        let bad = browser
            .submit(
                &page,
                &format!("{}/redirect-uris", app.path),
                &[("uri", "https://ada.example/cb#fragment")],
            )
            .await;
        assert_eq!(bad.status, StatusCode::BAD_REQUEST);
        bad.assert_shows("Redirect URI: `https://ada.example/cb#fragment` has a fragment");
        let page = browser
            .submit(
                &page,
                &format!("{}/redirect-uris", app.path),
                &[("uri", second)],
            )
            .await;
        assert_eq!(page.location, app.path);
        page.assert_shows(second);

        // A user walks the authorization flow to the new URI.
        let users_path = format!("{}/users", app.path);
        browser.get(&users_path).await.assert_shows("No users yet");
        let flow = Browser::new(&server);
        let oauth_app = test_app(&server, &app.client_id, &secret, second);
        let back = approved_redirect(&flow, &outbox, &oauth_app, second, "user1@example.com").await;
        assert!(back.starts_with(&format!("{second}?code=")), "{back}");
        let code = url::Url::parse(&back)
            .unwrap()
            .query_pairs()
            .find(|(k, _)| k == "code")
            .unwrap()
            .1
            .into_owned();
        let access = server.redeem_code(&oauth_app, second, &code).await;
        let accounts = server
            .bearer_json(Method::GET, "/api/platform/v1/accounts", &access)
            .await;
        let found = accounts["total"].as_u64().unwrap();
        assert!(found >= 3, "{accounts}");

        // The user is listed with their connection and accounts used.
        let users = browser.get(&users_path).await;
        users.assert_shows("user1@example.com");
        users.assert_shows("Tributary Sandbox Bank (sandbox)");
        users.assert_shows("status-ACTIVE");
        users.assert_shows(&format!("{found} of 6"));
        assert!(!users.body.contains("last sync never"), "synced once");
        let public_id = {
            let start = users.body.find("id=\"user-").unwrap() + "id=\"user-".len();
            users.body[start..].split('"').next().unwrap().to_owned()
        };
        // Search: any case, any of the ids; nothing else.
        browser
            .get(&format!("{users_path}?q=USER1"))
            .await
            .assert_shows("user1@example.com");
        browser
            .get(&format!("{users_path}?q={public_id}"))
            .await
            .assert_shows("user1@example.com");
        let none = browser.get(&format!("{users_path}?q=nobody")).await;
        none.assert_shows("No user matches");
        assert!(!none.body.contains("user1@example.com"));

        // Erasing asks first, then the user and their token are gone.
        let erase_path = format!("{users_path}/{public_id}/erase");
        let confirm = browser.get(&erase_path).await;
        confirm.assert_shows("Erase user1@example.com from Ada&#39;s budget?");
        let after = browser.submit(&confirm, &erase_path, &[]).await;
        assert_eq!(after.location, users_path);
        after.assert_shows("No users yet");
        let gone = Client::new()
            .get(server.url("/api/platform/v1/accounts"))
            .bearer_auth(&access)
            .send()
            .await
            .unwrap();
        assert_eq!(gone.status(), StatusCode::UNAUTHORIZED);
        assert!(!dump_rows(server.database.db()).contains("user1@example.com"));

        // Redirect URIs: one removed after a page that asks first; the
        // last one stays, and the page that would ask says so at once.
        let remove = format!("{}/redirect-uris/remove", app.path);
        let asking = format!("{remove}?uri=https%3A%2F%2Fada.example%2Fsecond");
        let page = browser.get(&app.path).await;
        page.assert_shows(&format!("<a href=\"{asking}\""));
        let confirm = browser.get(&asking).await;
        confirm.assert_asks_first(&remove, &app.path);
        confirm.assert_shows(&format!(
            "<input type=\"hidden\" name=\"uri\" value=\"{second}\">"
        ));
        assert!(browser.get(&app.path).await.body.contains(second));
        let page = browser.submit(&confirm, &remove, &[("uri", second)]).await;
        assert!(!page.body.contains(second));
        let not_registered = browser.get(&asking).await;
        assert_eq!(not_registered.status, StatusCode::NOT_FOUND);
        let last_one = browser
            .get(&format!(
                "{remove}?uri=https%3A%2F%2Fada.example%2Fcallback"
            ))
            .await;
        assert_eq!(last_one.status, StatusCode::BAD_REQUEST);
        last_one.assert_shows("keeps at least one");
        let last = browser
            .submit(
                &page,
                &format!("{}/redirect-uris/remove", app.path),
                &[("uri", "https://ada.example/callback")],
            )
            .await;
        assert_eq!(last.status, StatusCode::BAD_REQUEST);
        last.assert_shows("keeps at least one");

        // Deleting asks first; then the client is unknown.
        let delete_path = format!("{}/delete", app.path);
        let confirm = browser.get(&delete_path).await;
        confirm.assert_shows("Delete Ada&#39;s budget?");
        let home = browser.submit(&confirm, &delete_path, &[]).await;
        assert_eq!(home.location, "/developers");
        home.assert_shows("No apps yet");
        assert_refused(&server, &app.client_id, &secret).await;
        assert_eq!(browser.get(&app.path).await.status, StatusCode::NOT_FOUND);

        // Signing out ends the session.
        browser.submit(&home, "/developers/sign-out", &[]).await;
        browser
            .get("/developers")
            .await
            .assert_shows("Send me a code");
        assert_eq!(
            browser.get(&app.path).await.status,
            StatusCode::UNAUTHORIZED
        );
        server
    })
    .await;
}

#[actix_web::test]
async fn a_developer_cannot_see_or_change_another_developers_apps_or_users() {
    on_every_backend(|server, outbox| async move {
        let ada = Browser::new(&server);
        let home = developer_sign_in(&ada, &outbox, "ada@example.com").await;
        let app = create_app(&ada, &home, "Ada's budget", "https://ada.example/callback").await;
        let secret = app.secret.clone().unwrap();
        let oauth_app = test_app(
            &server,
            &app.client_id,
            &secret,
            "https://ada.example/callback",
        );
        let flow = Browser::new(&server);
        approved_redirect(
            &flow,
            &outbox,
            &oauth_app,
            "https://ada.example/callback",
            "user1@example.com",
        )
        .await;
        let users_path = format!("{}/users", app.path);
        let listed = ada.get(&users_path).await;
        let public_id = {
            let start = listed.body.find("id=\"user-").unwrap() + "id=\"user-".len();
            listed.body[start..].split('"').next().unwrap().to_owned()
        };
        let bob = Browser::new(&server);
        let bobs_home = developer_sign_in(&bob, &outbox, "bob@example.com").await;
        let before = dump_rows(server.database.db());
        assert!(!bobs_home.body.contains(&app.client_id));
        assert!(!bobs_home.body.contains("Ada&#39;s budget"));
        let erase_path = format!("{users_path}/{public_id}/erase");
        // Every page of Ada's app, and the operator's app A.
        let operators = format!("/developers/apps/{}", server.app_a.record.id);
        for path in [
            app.path.clone(),
            users_path.clone(),
            format!("{users_path}?q=user1"),
            format!("{}/delete", app.path),
            format!("{}/secret", app.path),
            format!(
                "{}/redirect-uris/remove?uri=https%3A%2F%2Fada.example%2Fcallback",
                app.path
            ),
            erase_path.clone(),
            operators.clone(),
            format!("{operators}/secret"),
            format!("{operators}/users"),
            "/developers/apps/not-a-number".to_owned(),
        ] {
            let page = bob.get(&path).await;
            assert_eq!(page.status, StatusCode::NOT_FOUND, "{path}: {}", page.body);
            assert!(!page.body.contains("user1@example.com"), "{path}");
        }
        // Every form, with Bob's own valid CSRF token.
        for (path, fields) in [
            (format!("{}/secret", app.path), vec![]),
            (
                format!("{}/redirect-uris", app.path),
                vec![("uri", "https://bob.example/steal")],
            ),
            (
                format!("{}/redirect-uris/remove", app.path),
                vec![("uri", "https://ada.example/callback")],
            ),
            (format!("{}/delete", app.path), vec![]),
            (erase_path.clone(), vec![]),
            (format!("{operators}/secret"), vec![]),
            (format!("{operators}/delete"), vec![]),
        ] {
            let answer = bob.submit(&bobs_home, &path, &fields).await;
            assert_eq!(
                answer.status,
                StatusCode::NOT_FOUND,
                "{path}: {}",
                answer.body
            );
        }
        tributary_e2e::assert_same_rows(&dump_rows(server.database.db()), &before);
        assert_authenticates(&server, &app.client_id, &secret).await;
        assert_authenticates(&server, server.app_a.client_id(), server.app_a.secret()).await;

        // Ada's own forms need her CSRF token, and a signed-in session.
        let forged = ada
            .post(
                &format!("{}/secret", app.path),
                &[("csrf", &bobs_home.csrf())],
            )
            .await;
        assert_eq!(forged.status, StatusCode::FORBIDDEN);
        let stranger = Browser::new(&server);
        let signed_out = stranger.get(&users_path).await;
        assert_eq!(signed_out.status, StatusCode::UNAUTHORIZED);
        // Error pages keep the developer dashboard's navigation (the way
        // home alone for a stranger) and lead back.
        signed_out.assert_error_with_way_back("Developer dashboard", "/developers");
        signed_out.assert_shows("<a href=\"/developers\" id=\"home\">");
        let missing = bob
            .get_from(&app.path, &server.url("/api/platform/docs"))
            .await;
        assert_eq!(missing.status, StatusCode::NOT_FOUND);
        missing.assert_error_with_way_back("Developer dashboard", "/api/platform/docs");
        missing.assert_shows("id=\"sign-out\"");
        missing.assert_shows("bob@example.com");
        assert_authenticates(&server, &app.client_id, &secret).await;
        ada.get(&users_path).await.assert_shows("user1@example.com");
        server
    })
    .await;
}

#[actix_web::test]
async fn with_sign_up_closed_only_added_developers_get_a_code() {
    for database in TestDatabase::all() {
        eprintln!("-- on {:?}", database.backend());
        let (server, outbox) = start_platform_with_signup(database, Signup::Closed);
        let browser = Browser::new(&server);
        let signed_out = browser.get("/developers").await;
        let verify = browser
            .submit(
                &signed_out,
                "/developers/sign-in",
                &[("email", "stranger@example.com")],
            )
            .await;
        // The same answer as for an added address, and no mail.
        assert_eq!(verify.status, StatusCode::OK);
        verify.assert_shows("has an account here, we sent it a 6-digit code");
        assert!(outbox.last_to("stranger@example.com").is_none());

        // `tributary developers add` does this.
        tributary_storage::developers::add(
            &mut server.database.db().conn().unwrap(),
            "added@example.com",
            chrono::Utc::now().naive_utc(),
        )
        .unwrap();
        let home = developer_sign_in(&browser, &outbox, "added@example.com").await;
        home.assert_shows("added@example.com");
        server.stop().await;
    }
}

/// The statuses of `times` code requests for `email` at the developer
/// sign-in, each from a fresh signed-out page of `browser`.
async fn developer_code_requests(browser: &Browser, email: &str, times: usize) -> Vec<StatusCode> {
    let mut statuses = Vec::new();
    for _ in 0..times {
        let signed_out = browser.get("/developers").await;
        let answer = browser
            .submit(&signed_out, "/developers/sign-in", &[("email", email)])
            .await;
        statuses.push(answer.status);
    }
    statuses
}

#[actix_web::test]
async fn sign_in_limits_do_not_tell_who_is_a_developer_and_app_pages_cannot_lock_the_dashboard() {
    for database in TestDatabase::all() {
        eprintln!("-- on {:?}", database.backend());
        let (server, outbox) = start_platform_with_signup(database, Signup::Closed);
        for email in ["dev@example.com", "both@example.com"] {
            tributary_storage::developers::add(
                &mut server.database.db().conn().unwrap(),
                email,
                chrono::Utc::now().naive_utc(),
            )
            .unwrap();
        }
        // Six requests: the same answers for a developer and for nobody.
        let browser = Browser::new(&server);
        let mut expected = vec![StatusCode::OK; 5];
        expected.push(StatusCode::TOO_MANY_REQUESTS);
        assert_eq!(
            developer_code_requests(&browser, "dev@example.com", 6).await,
            expected
        );
        assert_eq!(
            developer_code_requests(&browser, "ghost@example.com", 6).await,
            expected
        );
        assert!(
            outbox.last_to("ghost@example.com").is_none(),
            "nothing mailed to nobody"
        );

        // Five codes asked for through an app's authorization page use up
        // that surface's budget for the address, not the dashboard's.
        let stranger = Browser::new(&server);
        let app = &server.app_a;
        let mut statuses = Vec::new();
        for _ in 0..6 {
            let sign_in = stranger
                .get(&authorize_path(
                    app,
                    &app.redirect_uris[0],
                    "st",
                    "both@example.com",
                ))
                .await;
            let sent = stranger
                .submit(
                    &sign_in,
                    "/connect/sign-in",
                    &[("email", "both@example.com")],
                )
                .await;
            statuses.push(sent.status);
        }
        assert_eq!(statuses, expected);
        developer_sign_in(&Browser::new(&server), &outbox, "both@example.com").await;
        server.stop().await;
    }
}
