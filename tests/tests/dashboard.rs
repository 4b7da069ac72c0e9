//! The Personal dashboard end to end over HTTP, on SQLite and PostgreSQL: a
//! one-time sign-in link, the overview's numbers against the API's, the
//! balance chart against the stored history, API keys created (scoped),
//! used and revoked through the API, and another person's ids refused on
//! every form; every revoke and delete asks first, and every error page
//! keeps the navigation and a way back.

// Test code: a failed unwrap is a failed test, with its message.
#![allow(clippy::unwrap_used)]

use chrono::Duration;
use reqwest::header::LOCATION;
use reqwest::{Client, StatusCode};
use serde_json::Value;
use std::collections::BTreeMap;
use tributary_auth::dashboard;
use tributary_domain::clock::Clock;
use tributary_domain::ids::{AccountId, UserId};
use tributary_domain::money::{Decimal, parse_decimal};
use tributary_e2e::TestServer;
use tributary_e2e::browser::{Browser, code_in};
use tributary_e2e::harness::personal as on_every_backend;
use tributary_storage::testing::testdata_bytes;
use tributary_storage::users;

/// A browser: keeps cookies, does not follow redirects (tests read them).
fn browser() -> Client {
    Client::builder()
        .cookie_store(true)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

struct Page {
    status: StatusCode,
    location: String,
    body: String,
}

impl Page {
    fn csrf(&self) -> String {
        between(&self.body, r#"name="csrf" value=""#, "\"").to_owned()
    }
}

async fn page(response: reqwest::Response) -> Page {
    Page {
        status: response.status(),
        location: response
            .headers()
            .get(LOCATION)
            .map(|l| l.to_str().unwrap().to_owned())
            .unwrap_or_default(),
        body: response.text().await.unwrap(),
    }
}

async fn get(client: &Client, server: &TestServer, path: &str) -> Page {
    page(client.get(server.url(path)).send().await.unwrap()).await
}

async fn post(client: &Client, server: &TestServer, path: &str, form: &[(&str, &str)]) -> Page {
    page(
        client
            .post(server.url(path))
            .form(form)
            .send()
            .await
            .unwrap(),
    )
    .await
}

/// The text between the first `start` and the next `end` after it.
fn between<'a>(text: &'a str, start: &str, end: &str) -> &'a str {
    let from = text
        .find(start)
        .unwrap_or_else(|| panic!("{start} in {text}"))
        + start.len();
    let to = from + text[from..].find(end).unwrap();
    &text[from..to]
}

fn user_id(server: &TestServer, email: &str) -> UserId {
    let conn = &mut *server.database.db().conn().unwrap();
    users::find_personal_user(conn, email).unwrap().unwrap().id
}

fn login_link(server: &TestServer, email: &str) -> String {
    let user = user_id(server, email);
    let conn = &mut *server.database.db().conn().unwrap();
    let token = dashboard::issue_login_link(conn, user, server.clock.now().naive_utc()).unwrap();
    format!("/sign-in/link/{token}")
}

/// Signs alice in; the browser now carries her session.
async fn signed_in_alice(server: &TestServer) -> Client {
    let client = browser();
    let opened = get(&client, server, &login_link(server, "alice@example.com")).await;
    assert_eq!(
        (opened.status, opened.location.as_str()),
        (StatusCode::SEE_OTHER, "/")
    );
    client
}

async fn api(server: &TestServer, key: &str, path: &str) -> (StatusCode, Value) {
    let response = Client::new()
        .get(server.url(path))
        .header("x-api-key", key)
        .send()
        .await
        .unwrap();
    let status = response.status();
    (status, response.json().await.unwrap_or(Value::Null))
}

async fn api_account_ids(server: &TestServer, key: &str) -> Vec<i64> {
    let (status, body) = api(server, key, "/api/v1/accounts").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let mut ids: Vec<i64> = body["accounts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["id"].as_i64().unwrap())
        .collect();
    ids.sort();
    ids
}

#[actix_web::test]
async fn a_sign_in_link_works_once_and_only_in_time() {
    on_every_backend(|server| async move {
        let signed_out = get(&browser(), &server, "/").await;
        assert_eq!(signed_out.status, StatusCode::OK);
        assert!(signed_out.body.contains("tributary users login-link"));

        let link = login_link(&server, "alice@example.com");
        let first = browser();
        assert_eq!(get(&first, &server, &link).await.location, "/");
        let overview = get(&first, &server, "/").await;
        assert!(overview.body.contains("alice@example.com"), "signed in");
        let again = get(&browser(), &server, &link).await;
        assert_eq!(again.status, StatusCode::NOT_FOUND, "a link works once");

        // Of concurrent uses of one link, exactly one opens a session.
        let raced = server.url(&login_link(&server, "alice@example.com"));
        let answers = futures_util::future::join_all((0..8).map(|_| {
            let (client, url) = (browser(), raced.clone());
            async move { client.get(url).send().await.unwrap().status() }
        }))
        .await;
        assert_eq!(
            answers
                .iter()
                .filter(|s| **s == StatusCode::SEE_OTHER)
                .count(),
            1,
            "{answers:?}"
        );

        let late = login_link(&server, "alice@example.com");
        server.clock.advance(Duration::minutes(15));
        assert_eq!(
            get(&browser(), &server, &late).await.status,
            StatusCode::NOT_FOUND,
            "and for 15 minutes"
        );
        // The session itself ends after 30 idle minutes.
        server.clock.advance(Duration::minutes(16));
        let idle = get(&first, &server, "/keys").await;
        assert_eq!(idle.status, StatusCode::UNAUTHORIZED);

        // Signing out ends the session on the server.
        let client = signed_in_alice(&server).await;
        let keys = get(&client, &server, "/keys").await;
        let out = post(&client, &server, "/sign-out", &[("csrf", &keys.csrf())]).await;
        assert_eq!(out.location, "/");
        assert_eq!(
            get(&client, &server, "/keys").await.status,
            StatusCode::UNAUTHORIZED
        );
        server
    })
    .await;
}

/// Balances on three days for the imported account (two on one day: the
/// later one is that day's).
fn add_balance_history(server: &TestServer, account: AccountId) {
    use diesel::prelude::*;
    use tributary_storage::schema::balances;
    let conn = &mut *server.database.db().conn().unwrap();
    for (at, amount) in [
        ("2026-10-01 09:00:00", "400.00"),
        ("2026-10-10 08:00:00", "900.25"),
        ("2026-10-10 20:00:00", "650.75"),
        ("2026-10-20 12:00:00", "-120.00"),
    ] {
        let at = chrono::NaiveDateTime::parse_from_str(at, "%Y-%m-%d %H:%M:%S").unwrap();
        diesel::insert_into(balances::table)
            .values((
                balances::account_id.eq(account.get()),
                balances::amount.eq(amount),
                balances::currency.eq("EUR"),
                balances::as_of.eq(at),
                balances::created_at.eq(at),
            ))
            .execute(conn)
            .unwrap();
    }
}

/// The points a chart draws: (day, amount, cx, cy) from each circle.
fn chart_points(svg: &str) -> Vec<(String, Decimal, i64, Decimal)> {
    svg.split("<circle ")
        .skip(1)
        .map(|circle| {
            let cx = between(circle, "cx=\"", "\"").parse().unwrap();
            let cy = parse_decimal(between(circle, "cy=\"", "\"")).unwrap();
            let day = between(circle, "data-day=\"", "\"");
            let amount = parse_decimal(between(circle, "data-amount=\"", "\"")).unwrap();
            (day.to_owned(), amount, cx, cy)
        })
        .collect()
}

#[actix_web::test]
async fn the_overview_shows_what_the_api_reads_and_charts_the_stored_history() {
    on_every_backend(|server| async move {
        let world = &server.world;
        add_balance_history(&server, world.alice_imported);
        let client = signed_in_alice(&server).await;
        let overview = get(&client, &server, "/").await;
        assert_eq!(overview.status, StatusCode::OK);
        let html = &overview.body;

        // Every account the API lists, with the API's balance, written as
        // money (symbol, grouping) with the exact digits kept; net worth is
        // their sum per currency, what a card or loan owes subtracted.
        let mut worth: BTreeMap<String, Decimal> = BTreeMap::new();
        let (_, listed) = api(&server, &world.alice_key, "/api/v1/accounts").await;
        for account in listed["accounts"].as_array().unwrap() {
            let id = account["id"].as_i64().unwrap();
            let item = between(html, &format!("id=\"account-{id}\""), "</li>");
            let (_, balance) = api(
                &server,
                &world.alice_key,
                &format!("/api/v1/accounts/{id}/balance"),
            )
            .await;
            let amount = parse_decimal(&balance["balance"]["amount"].to_string()).unwrap();
            let currency = balance["balance"]["currency"].as_str().unwrap();
            let shown = between(item, "<span class=\"money", "</span>");
            assert_eq!(
                parse_decimal(between(shown, "data-amount=\"", "\"")).unwrap(),
                amount,
                "account {id}: {item}"
            );
            assert!(shown.contains(&format!("data-currency=\"{currency}\"")));
            let owed = matches!(account["type"].as_str(), Some("credit_card" | "loan"));
            *worth.entry(currency.to_owned()).or_default() +=
                if owed { -amount.abs() } else { amount };
        }
        for (currency, total) in &worth {
            let headline = between(html, &format!("id=\"worth-{currency}\">"), "</p>");
            assert_eq!(
                parse_decimal(between(headline, "data-amount=\"", "\"")).unwrap(),
                *total,
                "{currency}: {headline}"
            );
        }
        // Alice's euros read as euros, her dollars with their grouping.
        let euros = between(html, "id=\"worth-EUR\">", "</p>");
        assert!(euros.contains('€'), "{euros}");
        let dollars = between(html, "id=\"worth-USD\">", "</p>");
        assert!(dollars.contains('$') && dollars.contains(','), "{dollars}");
        // What is owed reads as an amount owed, not a negative one.
        let owed = between(
            between(html, "id=\"worth-USD\">", "(cards and loans)"),
            "and owe ",
            "</span>",
        );
        assert!(
            parse_decimal(between(owed, "data-amount=\"", "\"")).unwrap() > Decimal::ZERO,
            "Alice's card is owed: {owed}"
        );
        let shown = owed.rsplit('>').next().unwrap();
        assert!(!shown.contains('−') && !shown.contains('-'), "{owed}");
        assert!(
            !html.contains(&format!("account-{}\"", world.bob_account)),
            "bob's account is not on alice's page"
        );

        // The chart plots each day's last stored balance, in order, with
        // the lowest at the bottom and the highest at the top.
        let item = between(
            html,
            &format!("id=\"account-{}\"", world.alice_imported),
            "</li>",
        );
        let svg = between(item, "<svg", "</svg>");
        let history = {
            let conn = &mut *server.database.db().conn().unwrap();
            tributary_storage::read::balance_history(conn, world.alice_imported).unwrap()
        };
        let mut daily: BTreeMap<String, Decimal> = BTreeMap::new();
        for balance in &history {
            daily.insert(balance.as_of.date().to_string(), balance.amount);
        }
        let points = chart_points(svg);
        let plotted: Vec<(String, Decimal)> =
            points.iter().map(|(d, a, _, _)| (d.clone(), *a)).collect();
        let expected: Vec<(String, Decimal)> = daily.into_iter().collect();
        assert_eq!(
            plotted, expected,
            "one point per day, the day's last balance"
        );
        // The plot box and the amounts its top and bottom stand for.
        let plot: Vec<i64> = between(svg, "data-plot=\"", "\"")
            .split(' ')
            .map(|n| n.parse().unwrap())
            .collect();
        let (left, top, right, bottom) = (plot[0], plot[1], plot[2], plot[3]);
        let low = parse_decimal(between(svg, "data-low=\"", "\"")).unwrap();
        let high = parse_decimal(between(svg, "data-high=\"", "\"")).unwrap();
        let (top, bottom) = (Decimal::from(top), Decimal::from(bottom));
        for (day, amount, _, cy) in &points {
            // Inverse of the plot: the amount a point's height stands for.
            let read_back = high - (*cy - top) * (high - low) / (bottom - top);
            assert!(
                (read_back - amount).abs() <= (high - low) / Decimal::from(1000),
                "{day}: drawn at {cy} reads {read_back}, stored {amount}"
            );
        }
        let xs: Vec<i64> = points.iter().map(|p| p.2).collect();
        assert!(
            xs.windows(2).all(|w| w[0] < w[1]),
            "time runs left to right: {xs:?}"
        );
        assert_eq!(xs.first(), Some(&left));
        assert_eq!(xs.last(), Some(&right));
        server
    })
    .await;
}

#[actix_web::test]
async fn a_scoped_key_made_in_the_dashboard_reads_only_its_accounts_until_revoked() {
    on_every_backend(|server| async move {
        let world = &server.world;
        let client = signed_in_alice(&server).await;
        let keys = get(&client, &server, "/keys").await;
        assert_eq!(keys.status, StatusCode::OK);
        let csrf = keys.csrf();

        // Forms refuse a forged token, a missing name, and bob's account.
        let forged = post(&client, &server, "/keys", &[("csrf", "x"), ("name", "n")]).await;
        assert_eq!(forged.status, StatusCode::FORBIDDEN);
        let nameless = post(&client, &server, "/keys", &[("csrf", &csrf), ("name", " ")]).await;
        assert_eq!(nameless.status, StatusCode::BAD_REQUEST);
        assert!(nameless.body.contains("Name:"));
        let bobs = world.bob_account.to_string();
        let foreign = post(
            &client,
            &server,
            "/keys",
            &[("csrf", &csrf), ("name", "n"), ("account", &bobs)],
        )
        .await;
        assert_eq!(foreign.status, StatusCode::BAD_REQUEST);
        assert!(foreign.body.contains("Accounts:"));

        // A key scoped to two accounts reads exactly those.
        let scoped = [world.alice_imported, world.alice_sandbox_accounts[0]];
        let (a, b) = (scoped[0].to_string(), scoped[1].to_string());
        let created = post(
            &client,
            &server,
            "/keys",
            &[
                ("csrf", &csrf),
                ("name", "spreadsheet"),
                ("account", &a),
                ("account", &b),
            ],
        )
        .await;
        assert_eq!(created.status, StatusCode::OK);
        let key = between(&created.body, r#"id="api-key" readonly value=""#, "\"").to_owned();
        // askama escapes the quotes; the browser shows them as typed.
        let curl = between(
            &created.body,
            r#"id="curl-line" readonly rows="3">"#,
            "</textarea>",
        )
        .replace("&#39;", "'")
        .replace("&#x27;", "'");
        assert_eq!(
            curl,
            format!(
                "curl -H 'x-api-key: {key}' {}",
                server.url("/api/v1/accounts")
            )
        );
        let mut expected: Vec<i64> = scoped.iter().map(|id| id.get()).collect();
        expected.sort();
        assert_eq!(api_account_ids(&server, &key).await, expected);

        // Listed, then revoked: the API answers 401.
        let listed = get(&client, &server, "/keys").await;
        assert!(listed.body.contains("spreadsheet"));
        let row = between(&listed.body, "<tr id=\"key-", "</tr>");
        let key_id = row.split('"').next().unwrap().to_owned();
        assert!(row.contains("spreadsheet"), "newest first: {row}");

        // Bob's key is not alice's to revoke.
        let bob_key_id = {
            let conn = &mut *server.database.db().conn().unwrap();
            tributary_storage::api_keys::list_for_user(conn, world.bob_user).unwrap()[0]
                .0
                .id
        };
        let refused = post(
            &client,
            &server,
            &format!("/keys/{bob_key_id}/revoke"),
            &[("csrf", &csrf)],
        )
        .await;
        assert_eq!(refused.status, StatusCode::NOT_FOUND);
        assert_eq!(
            api(&server, &world.bob_key, "/api/v1/accounts").await.0,
            StatusCode::OK
        );
        assert!(!listed.body.contains(&format!("id=\"key-{bob_key_id}\"")));

        let revoked = post(
            &client,
            &server,
            &format!("/keys/{key_id}/revoke"),
            &[("csrf", &csrf)],
        )
        .await;
        assert_eq!(revoked.location, "/keys");
        let (status, _) = api(&server, &key, "/api/v1/accounts").await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
        assert!(
            get(&client, &server, "/keys")
                .await
                .body
                .contains("revoked")
        );

        // Signed out, no form does anything.
        let anonymous = browser();
        let answer = post(
            &anonymous,
            &server,
            &format!("/keys/{bob_key_id}/revoke"),
            &[("csrf", &csrf)],
        )
        .await;
        assert_eq!(answer.status, StatusCode::UNAUTHORIZED);
        server
    })
    .await;
}

/// Uploads the statement `name` of the shared test data from `form`.
async fn upload_statement(
    browser: &Browser,
    form: &tributary_e2e::browser::Page,
    name: &str,
) -> tributary_e2e::browser::Page {
    let file_name = name.rsplit('/').next().unwrap();
    browser.upload(form, file_name, testdata_bytes(name)).await
}

/// The number in `<dd id="{id}">N</dd>` of an import summary.
fn summary_figure(page: &tributary_e2e::browser::Page, id: &str) -> i64 {
    between(&page.body, &format!("<dd id=\"{id}\">"), "</dd>")
        .parse()
        .unwrap()
}

#[actix_web::test]
async fn connections_are_added_synced_uploaded_and_removed_from_the_dashboard() {
    on_every_backend(|server| async move {
        let world = &server.world;
        let key = world.alice_key.clone();
        let browser = Browser::at(&server.base_url);
        let link = login_link(&server, "alice@example.com");
        let overview = browser.get(&link).await;
        assert_eq!(overview.location, "/");
        overview.assert_shows("href=\"/connect/banks\" id=\"add-bank\"");

        // Sync now: the API's rule and its limit, shared with the API.
        let sandbox = world.alice_sandbox_connection;
        let progress = browser
            .submit(
                &overview,
                &format!("/connect/connections/{sandbox}/sync"),
                &[],
            )
            .await;
        assert_eq!(progress.location, format!("/connect/progress/{sandbox}"));
        progress.assert_shows("id=\"working\"");
        let job = {
            let conn = &mut *server.database.db().conn().unwrap();
            tributary_storage::sync_jobs::active_job(conn, sandbox)
                .unwrap()
                .expect("a queued job")
        };
        assert_eq!(job.kind, tributary_domain::model::SyncJobKind::OnDemand);
        let (status, _) = api_post(
            &server,
            &key,
            &format!("/api/v1/connections/{sandbox}/sync"),
        )
        .await;
        assert_eq!(status, StatusCode::ACCEPTED, "the same job, not a second");
        server.run_queued_jobs().await;
        let done = browser.until_synced(progress).await;
        assert_eq!(
            done.accounts_found(),
            world.alice_sandbox_accounts.len() as u64
        );
        done.assert_shows("href=\"/\" id=\"continue\"");
        let again = browser
            .submit(&done, &format!("/connect/connections/{sandbox}/sync"), &[])
            .await;
        assert_eq!(again.status, StatusCode::TOO_MANY_REQUESTS);
        again.assert_shows("Try again in 60 seconds");
        let (status, _) = api_post(
            &server,
            &key,
            &format!("/api/v1/connections/{sandbox}/sync"),
        )
        .await;
        assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "one limit for both");
        let statements = world.alice_imported_connection;
        let refused = browser
            .submit(
                &done,
                &format!("/connect/connections/{statements}/sync"),
                &[],
            )
            .await;
        assert_eq!(refused.status, StatusCode::CONFLICT);

        // A statement upload answers with its summary, whose numbers are
        // what the API then reads; the same file again adds nothing.
        let before = api_account_ids(&server, &key).await;
        let form = browser.get("/connect/banks/upload").await;
        assert_eq!(form.status, StatusCode::OK);
        let summary = upload_statement(&browser, &form, "ofxparse/fixtures/checking.ofx").await;
        assert_eq!(summary.status, StatusCode::OK, "{}", summary.body);
        let after = api_account_ids(&server, &key).await;
        let new: Vec<i64> = after
            .iter()
            .filter(|id| !before.contains(id))
            .copied()
            .collect();
        assert_eq!(new.len() as i64, 1);
        summary.assert_shows("1 statement for 1 account");
        let (_, listed) = api(
            &server,
            &key,
            &format!("/api/v1/accounts/{}/transactions", new[0]),
        )
        .await;
        assert_eq!(
            summary_figure(&summary, "added"),
            listed["total"].as_i64().unwrap()
        );
        assert_eq!(summary_figure(&summary, "unchanged"), 0);
        summary.assert_shows("href=\"/\" id=\"continue\"");
        let again = upload_statement(&browser, &form, "ofxparse/fixtures/checking.ofx").await;
        assert_eq!(summary_figure(&again, "added"), 0);
        assert_eq!(
            summary_figure(&again, "unchanged"),
            listed["total"].as_i64().unwrap()
        );

        // Removing asks first, then erases the connection and its data.
        let confirm = browser
            .get(&format!("/connect/connections/{statements}/remove"))
            .await;
        assert_eq!(confirm.status, StatusCode::OK);
        confirm.assert_shows("href=\"/\" id=\"keep\"");
        let removed = browser
            .submit(
                &confirm,
                &format!("/connect/connections/{statements}/remove"),
                &[],
            )
            .await;
        assert_eq!(removed.location, "/");
        let left = api_account_ids(&server, &key).await;
        assert!(!left.contains(&world.alice_imported.get()), "{left:?}");
        let (status, _) = api(
            &server,
            &key,
            &format!("/api/v1/accounts/{}/transactions", world.alice_imported),
        )
        .await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        assert!(!removed.body.contains(&format!("connection-{statements}\"")));

        // The sandbox login Alice connected before: the form offers to
        // sign in to it again, and connecting it again does that instead
        // of adding its accounts a second time.
        let form = browser.get("/connect/banks/sandbox").await;
        form.assert_shows(&format!(
            "href=\"/connect/connections/{}/reauth\" id=\"reauth-existing-{}\"",
            world.alice_sandbox_connection, world.alice_sandbox_connection
        ));
        let same = browser
            .submit(
                &form,
                "/connect/banks/sandbox",
                &[("username", "user_good"), ("password", "x")],
            )
            .await;
        assert_eq!(
            same.location,
            format!("/connect/progress/{}", world.alice_sandbox_connection),
            "the connection it made before"
        );
        let same = browser.until_synced(same).await;
        assert_eq!(
            api_account_ids(&server, &key).await,
            left,
            "nothing added twice"
        );
        // What the sync changed, in words.
        same.assert_shows("id=\"changed\">The sync at");

        // A bank added from the dashboard: another login, synced at once.
        let progress = browser
            .submit(
                &form,
                "/connect/banks/sandbox",
                &[("username", "alice_joint"), ("password", "x")],
            )
            .await;
        assert!(
            progress.location.starts_with("/connect/progress/"),
            "{} {}",
            progress.location,
            progress.body
        );
        let done = browser.until_synced(progress).await;
        assert_eq!(
            api_account_ids(&server, &key).await.len(),
            left.len() + done.accounts_found() as usize
        );
        server
    })
    .await;
}

#[actix_web::test]
async fn another_persons_connection_is_not_found_on_any_dashboard_page_or_form() {
    on_every_backend(|server| async move {
        let world = &server.world;
        let browser = Browser::at(&server.base_url);
        let overview = browser.get(&login_link(&server, "alice@example.com")).await;
        let bobs = world.bob_connection;
        let bob_before = api_account_ids(&server, &world.bob_key).await;
        for path in [
            format!("/connect/progress/{bobs}"),
            format!("/connect/connections/{bobs}/remove"),
            format!("/connect/connections/{bobs}/disconnect"),
            format!("/connect/connections/{bobs}/reauth"),
        ] {
            let page = browser.get(&path).await;
            assert_eq!(page.status, StatusCode::NOT_FOUND, "{path}");
        }
        for path in [
            format!("/connect/connections/{bobs}/sync"),
            format!("/connect/progress/{bobs}/retry"),
            format!("/connect/connections/{bobs}/remove"),
            format!("/connect/connections/{bobs}/disconnect"),
        ] {
            let answer = browser.submit(&overview, &path, &[]).await;
            assert_eq!(answer.status, StatusCode::NOT_FOUND, "{path}");
        }
        let reauth = browser
            .submit(
                &overview,
                &format!("/connect/connections/{bobs}/reauth"),
                &[("username", "user_good")],
            )
            .await;
        assert_eq!(reauth.status, StatusCode::NOT_FOUND);
        assert_eq!(api_account_ids(&server, &world.bob_key).await, bob_before);
        {
            let conn = &mut *server.database.db().conn().unwrap();
            assert!(
                tributary_storage::sync_jobs::active_job(conn, bobs)
                    .unwrap()
                    .is_none(),
                "no sync was queued for bob"
            );
        }

        // Signed out, the connection pages send nobody anywhere.
        let stranger = Browser::at(&server.base_url);
        for path in ["/connect/banks", "/connect/banks/sandbox"] {
            assert_eq!(
                stranger.get(path).await.status,
                StatusCode::UNAUTHORIZED,
                "{path}"
            );
        }
        let forged = stranger
            .post(
                &format!(
                    "/connect/connections/{}/sync",
                    world.alice_sandbox_connection
                ),
                &[("csrf", &overview.csrf())],
            )
            .await;
        assert_eq!(forged.status, StatusCode::UNAUTHORIZED);
        server
    })
    .await;
}

async fn api_post(server: &TestServer, key: &str, path: &str) -> (StatusCode, Value) {
    let response = Client::new()
        .post(server.url(path))
        .header("x-api-key", key)
        .send()
        .await
        .unwrap();
    let status = response.status();
    (status, response.json().await.unwrap_or(Value::Null))
}

/// The rows of an account page's transaction table: (date, amount, pending).
fn table_rows(page: &tributary_e2e::browser::Page) -> Vec<(String, Decimal, bool)> {
    if !page.body.contains("id=\"transactions\"") {
        return Vec::new();
    }
    let body = between(&page.body, "<tbody>", "</tbody>");
    body.split("<tr")
        .skip(1)
        .map(|row| {
            let pending = row.starts_with(" class=\"pending\"");
            assert_eq!(pending, row.contains(">pending</span>"), "marked: {row}");
            let date = between(row, "<td>", "</td>").to_owned();
            let amount = between(row, "data-amount=\"", "\"");
            (date, parse_decimal(amount).unwrap(), pending)
        })
        .collect()
}

/// Every row of an account page's listing from `path` on, following its
/// "Older transactions" links; and how many pages that took.
async fn all_pages(browser: &Browser, path: &str) -> (Vec<(String, Decimal, bool)>, usize) {
    let mut page = browser.get(path).await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    let mut rows = table_rows(&page);
    let mut pages = 1;
    while page.body.contains("id=\"older\"") {
        let link = between(&page.body, "<a href=\"", "\" id=\"older\"");
        let link = link
            .rsplit("<a href=\"")
            .next()
            .unwrap()
            .replace("&amp;", "&");
        page = browser.get(&link).await;
        assert_eq!(page.status, StatusCode::OK, "{link}: {}", page.body);
        page.assert_shows("id=\"newest\"");
        rows.extend(table_rows(&page));
        pages += 1;
    }
    (rows, pages)
}

#[actix_web::test]
async fn an_account_page_lists_what_the_api_lists_in_pages_searches_and_shows_holdings() {
    on_every_backend(|server| async move {
        let world = &server.world;
        let key = world.alice_key.clone();
        let browser = Browser::at(&server.base_url);
        browser.get(&login_link(&server, "alice@example.com")).await;

        // The sandbox account with the most transactions, over a page's worth.
        let mut busiest = (0, 0);
        for id in &world.alice_sandbox_accounts {
            let (_, listed) = api(
                &server,
                &key,
                &format!("/api/v1/accounts/{id}/transactions?include_pending=true&limit=1"),
            )
            .await;
            busiest = busiest.max((listed["total"].as_i64().unwrap(), id.get()));
        }
        let (total, account) = busiest;
        assert!(total > 50, "a second page to walk: {total}");
        let (_, listed) = api(
            &server,
            &key,
            &format!("/api/v1/accounts/{account}/transactions?include_pending=true"),
        )
        .await;
        let from_api: Vec<(String, Decimal, bool)> = listed["transactions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| {
                (
                    t["date"].as_str().unwrap().to_owned(),
                    parse_decimal(&t["amount"].to_string()).unwrap(),
                    t["isPending"].as_bool().unwrap(),
                )
            })
            .collect();
        let first = browser.get(&format!("/accounts/{account}")).await;
        first.assert_shows(&format!(
            "<p class=\"small\" id=\"total\">{total} transactions."
        ));
        let (shown, pages) = all_pages(&browser, &format!("/accounts/{account}")).await;
        assert_eq!(shown, from_api, "every row once, newest first");
        assert_eq!(pages as i64, (total + 49) / 50);

        // A text search finds the description or merchant in any case.
        let stored = {
            let conn = &mut *server.database.db().conn().unwrap();
            tributary_storage::read::list_transactions(
                conn,
                AccountId::new(account),
                &tributary_storage::read::TransactionFilter {
                    include_pending: true,
                    ..Default::default()
                },
                None,
                None,
            )
            .unwrap()
        };
        let word = stored
            .iter()
            .find_map(|t| t.merchant.clone())
            .expect("a merchant to search for");
        let needle = word.to_lowercase();
        let expected: Vec<(String, Decimal, bool)> = stored
            .iter()
            .filter(|t| {
                [&t.merchant, &t.description].iter().any(|text| {
                    text.as_deref()
                        .is_some_and(|s| s.to_lowercase().contains(&needle))
                })
            })
            .map(|t| (t.date.to_string(), t.amount, t.is_pending))
            .collect();
        let query = url::form_urlencoded::Serializer::new(String::new())
            .append_pair("q", &word.to_uppercase())
            .finish();
        let (found, _) = all_pages(&browser, &format!("/accounts/{account}?{query}")).await;
        assert_eq!(found, expected, "searching {word}");

        // Dates bound the listing as the API's `from` and `to` do.
        let day = &from_api[from_api.len() / 2].0;
        let (in_range, _) = all_pages(
            &browser,
            &format!("/accounts/{account}?from={day}&to={day}"),
        )
        .await;
        let (_, same_day) = api(
            &server,
            &key,
            &format!(
                "/api/v1/accounts/{account}/transactions?include_pending=true&from={day}&to={day}"
            ),
        )
        .await;
        assert_eq!(
            in_range.len(),
            same_day["transactions"].as_array().unwrap().len()
        );
        assert!(in_range.iter().all(|(date, _, _)| date == day));

        // A pending transaction is marked as one.
        let (imported, _) =
            all_pages(&browser, &format!("/accounts/{}", world.alice_imported)).await;
        assert_eq!(
            imported.iter().filter(|(_, _, pending)| *pending).count(),
            1
        );

        // Holdings: the API's values and cost bases, and the gain between.
        let brokerage = world.alice_brokerage;
        let page = browser.get(&format!("/accounts/{brokerage}")).await;
        let (_, holdings) = api(
            &server,
            &key,
            &format!("/api/v1/accounts/{brokerage}/holdings"),
        )
        .await;
        let holdings = holdings["holdings"].as_array().unwrap();
        assert!(!holdings.is_empty());
        let table = between(&page.body, "id=\"holdings\"", "</table>");
        for holding in holdings {
            let name = holding["security"]["name"].as_str().unwrap();
            let row = between(table, &format!("<th scope=\"row\">{name}"), "</tr>");
            let cells: Vec<Decimal> = row
                .split("<td class=\"number")
                .skip(1)
                .map(|cell| match cell.split_once("data-amount=\"") {
                    // Money keeps its exact digits; a quantity is plain.
                    Some((_, rest)) => parse_decimal(rest.split('"').next().unwrap()).unwrap(),
                    None => {
                        let text = cell.split_once('>').unwrap().1;
                        parse_decimal(text.split('<').next().unwrap()).unwrap()
                    }
                })
                .collect();
            let value = parse_decimal(&holding["value"].to_string()).unwrap();
            let cost = parse_decimal(&holding["costBasis"].to_string()).unwrap();
            assert_eq!(cells[2], value, "{name}: {row}");
            assert_eq!(cells[3], cost, "{name}: {row}");
            assert_eq!(cells[4], value - cost, "{name}: gain");
        }

        // Another person's account, a bad date, signed out.
        let bobs = browser
            .get(&format!("/accounts/{}", world.bob_account))
            .await;
        assert_eq!(bobs.status, StatusCode::NOT_FOUND);
        let bad = browser
            .get(&format!("/accounts/{account}?from=2026-02-31"))
            .await;
        assert_eq!(bad.status, StatusCode::BAD_REQUEST);
        bad.assert_shows("From: a date as YYYY-MM-DD");
        let stranger = Browser::at(&server.base_url);
        assert_eq!(
            stranger.get(&format!("/accounts/{account}")).await.status,
            StatusCode::UNAUTHORIZED
        );
        server
    })
    .await;
}

#[actix_web::test]
async fn a_mailed_code_signs_in_only_the_browser_that_asked_for_it() {
    on_every_backend(|server| async move {
        let browser = Browser::at(&server.base_url);
        let signed_out = browser.get("/").await;
        signed_out.assert_shows("id=\"send-code\"");
        let verify = browser
            .submit(&signed_out, "/sign-in", &[("email", " Alice@Example.com ")])
            .await;
        assert_eq!(verify.status, StatusCode::OK, "{}", verify.body);
        verify.assert_shows("<strong>alice@example.com</strong>");
        let code = code_in(&server.outbox, "alice@example.com");

        // Another browser cannot use it.
        let other = Browser::at(&server.base_url);
        let elsewhere = other.get("/").await;
        let refused = other
            .submit(&elsewhere, "/sign-in/code", &[("code", &code)])
            .await;
        assert_eq!(refused.status, StatusCode::BAD_REQUEST);
        refused.assert_shows("That code is not right");

        // A wrong code counts as an attempt; the right one signs in, once.
        let wrong = if code == "000000" { "111111" } else { "000000" };
        let wrong = browser
            .submit(&verify, "/sign-in/code", &[("code", wrong)])
            .await;
        assert_eq!(wrong.status, StatusCode::BAD_REQUEST);
        wrong.assert_shows("4 attempt(s) left");
        let forged = browser
            .post(
                "/sign-in/code",
                &[("csrf", &"0".repeat(64)), ("code", &code)],
            )
            .await;
        assert_eq!(forged.status, StatusCode::FORBIDDEN);
        let overview = browser
            .submit(&verify, "/sign-in/code", &[("code", &code)])
            .await;
        assert_eq!(overview.location, "/");
        overview.assert_shows("id=\"sign-out\"");
        overview.assert_shows("alice@example.com");
        let keys = browser.get("/keys").await;
        assert_eq!(keys.status, StatusCode::OK);
        let reused = other
            .submit(&elsewhere, "/sign-in/code", &[("code", &code)])
            .await;
        assert_eq!(reused.status, StatusCode::BAD_REQUEST);

        // An address without a user here gets the same answer and no mail.
        let stranger = Browser::at(&server.base_url);
        let form = stranger.get("/").await;
        let answer = stranger
            .submit(&form, "/sign-in", &[("email", "nobody@example.com")])
            .await;
        assert_eq!(answer.status, StatusCode::OK);
        answer.assert_shows("If <strong>nobody@example.com</strong> has an account here");
        assert!(server.outbox.last_to("nobody@example.com").is_none());
        let guessed = stranger
            .submit(&answer, "/sign-in/code", &[("code", "123456")])
            .await;
        assert_eq!(guessed.status, StatusCode::BAD_REQUEST);
        guessed.assert_shows("That code is not right");

        // A malformed address is refused naming the field.
        let malformed = stranger
            .submit(&form, "/sign-in", &[("email", "not an address")])
            .await;
        assert_eq!(malformed.status, StatusCode::BAD_REQUEST);
        malformed.assert_shows("E-mail address:");
        server
    })
    .await;
}

/// The SimpleFIN setup token a page shows once.
fn setup_token(shown: &tributary_e2e::browser::Page) -> String {
    between(
        &shown.body,
        "id=\"setup-token\" readonly rows=\"4\">",
        "</textarea>",
    )
    .trim()
    .to_owned()
}

#[actix_web::test]
async fn a_budgeting_app_gets_simplefin_access_from_the_dashboard_until_revoked() {
    use tributary_e2e::simplefin::{accounts, claim, claim_url, create_page};
    on_every_backend(|server| async move {
        let world = &server.world;
        let browser = Browser::at(&server.base_url);
        browser.get(&login_link(&server, "alice@example.com")).await;
        // The protocol's `GET /create` sends a person here.
        assert!(
            create_page(&server.url("/simplefin/create"))
                .await
                .contains("href=\"/budgeting-apps\"")
        );
        let apps = browser.get("/budgeting-apps").await;
        assert_eq!(apps.status, StatusCode::OK);
        let refused = browser
            .submit(&apps, "/budgeting-apps", &[("name", " ")])
            .await;
        assert_eq!(refused.status, StatusCode::BAD_REQUEST);
        refused.assert_shows("Name:");
        let shown = browser
            .submit(&apps, "/budgeting-apps", &[("name", "Budget Buddy")])
            .await;
        assert_eq!(shown.status, StatusCode::OK);
        shown.assert_shows("href=\"/budgeting-apps\" id=\"done\"");
        let token = setup_token(&shown);
        assert!(claim_url(&token).starts_with(&server.url("/simplefin/claim/")));
        let (status, access_url) = claim(&token).await;
        assert_eq!(status, StatusCode::OK, "{access_url}");
        let (status, set) = accounts(&access_url, "version=2&balances-only=1").await;
        assert_eq!(status, StatusCode::OK, "{set}");
        let mut listed: Vec<i64> = set["accounts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a["id"].as_str().unwrap()["ACT-".len()..].parse().unwrap())
            .collect();
        listed.sort();
        assert_eq!(listed, api_account_ids(&server, &world.alice_key).await);

        let apps = browser.get("/budgeting-apps").await;
        apps.assert_shows("Budget Buddy");
        apps.assert_shows("in use");
        let id = between(&apps.body, "<li id=\"simplefin-", "\"").to_owned();
        let revoke = format!("/budgeting-apps/{id}/revoke");

        // Bob cannot revoke it; alice can, and the app reads no more.
        let bob = Browser::at(&server.base_url);
        let bobs = bob.get(&login_link(&server, "bob@example.com")).await;
        assert!(
            !bob.get("/budgeting-apps")
                .await
                .body
                .contains("Budget Buddy")
        );
        assert_eq!(
            bob.submit(&bobs, &revoke, &[]).await.status,
            StatusCode::NOT_FOUND
        );
        assert_eq!(accounts(&access_url, "").await.0, StatusCode::OK);
        let after = browser.submit(&apps, &revoke, &[]).await;
        assert_eq!(after.location, "/budgeting-apps");
        after.assert_shows("revoked");
        assert_eq!(accounts(&access_url, "").await.0, StatusCode::FORBIDDEN);

        // A token limited to one account: the app reads that one only, and
        // the list says so. Bob's account cannot be chosen.
        let bobs = world.bob_account.to_string();
        let foreign = browser
            .submit(
                &apps,
                "/budgeting-apps",
                &[("name", "Sneaky"), ("account", &bobs)],
            )
            .await;
        assert_eq!(foreign.status, StatusCode::BAD_REQUEST);
        foreign.assert_shows("Accounts:");
        let apps = browser.get("/budgeting-apps").await;
        apps.assert_shows(&format!("id=\"scope-{}\"", world.alice_imported));
        let only = world.alice_imported.to_string();
        let shown = browser
            .submit(
                &apps,
                "/budgeting-apps",
                &[("name", "Checking only"), ("account", &only)],
            )
            .await;
        assert_eq!(shown.status, StatusCode::OK);
        let token = setup_token(&shown);
        let (status, access_url) = claim(&token).await;
        assert_eq!(status, StatusCode::OK, "{access_url}");
        let (status, set) = accounts(&access_url, "version=2").await;
        assert_eq!(status, StatusCode::OK, "{set}");
        let ids: Vec<&str> = set["accounts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a["id"].as_str().unwrap())
            .collect();
        assert_eq!(ids, [format!("ACT-{only}")]);
        let listed = browser.get("/budgeting-apps").await;
        assert!(
            !listed.body.contains("Sneaky"),
            "a refused form stores nothing"
        );
        let line = between(&listed.body, "<strong>Checking only</strong>", "</li>");
        let (_, listed_by_api) = api(&server, &world.alice_key, "/api/v1/accounts").await;
        let imported_name = listed_by_api["accounts"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["id"].as_i64() == Some(world.alice_imported.get()))
            .and_then(|a| a["name"].as_str())
            .unwrap();
        assert!(line.contains(&format!("reads {imported_name};")), "{line}");
        server
    })
    .await;
}

#[actix_web::test]
async fn a_gocardless_bank_is_connected_and_reauthenticated_from_the_dashboard() {
    use tributary_e2e::fakes::{gocardless_connector, gocardless_requisitions};
    for database in tributary_storage::testing::TestDatabase::all() {
        eprintln!("-- on {:?}", database.backend());
        let (api, connector) = gocardless_connector().await;
        let server = tributary_e2e::start_with(database, vec![connector]);
        let before = api_account_ids(&server, &server.world.alice_key).await;
        let browser = Browser::at(&server.base_url);
        browser.get(&login_link(&server, "alice@example.com")).await;
        browser
            .get("/")
            .await
            .assert_shows("href=\"/connect/banks\"");
        let banks = browser.get("/connect/banks").await;
        banks.assert_shows("GoCardless Bank Account Data");
        let found = browser
            .get("/connect/banks/gocardless?country=DE&q=n26")
            .await;
        found.assert_shows("N26 Bank");

        // To the bank's own page, asked to send the person back here.
        browser
            .to_gocardless_bank(&found, "/connect/banks/gocardless", "N26_NTSBDEB1")
            .await;
        assert_eq!(
            gocardless_requisitions(&api).await[0]["redirect"],
            server.url("/connect/gocardless/return")
        );

        // The consent waits in alice's session, not in anyone else's.
        let bob = Browser::at(&server.base_url);
        bob.get(&login_link(&server, "bob@example.com")).await;
        assert_eq!(
            bob.get("/connect/gocardless/return").await.location,
            "/connect/banks"
        );
        let progress = browser.get("/connect/gocardless/return").await;
        assert!(
            progress.location.starts_with("/connect/progress/"),
            "{}",
            progress.location
        );
        let connection = progress.location["/connect/progress/".len()..].to_owned();
        let progress = browser.until_synced(progress).await;
        assert!(progress.accounts_found() >= 1, "{}", progress.body);
        assert_eq!(
            browser.get("/connect/gocardless/return").await.location,
            "/connect/banks",
            "coming back twice starts nothing new"
        );
        let after = api_account_ids(&server, &server.world.alice_key).await;
        assert_eq!(
            after.len() as u64,
            before.len() as u64 + progress.accounts_found(),
            "the API reads the new accounts"
        );
        let overview = browser.get("/").await;
        overview.assert_shows(&format!("id=\"connection-{connection}\""));
        assert!(
            bob.get(&format!("/connect/progress/{connection}"))
                .await
                .status
                == StatusCode::NOT_FOUND
        );

        // Re-authenticating goes back to the same bank, for the same
        // connection: no new accounts.
        let reauth_path = format!("/connect/connections/{connection}/reauth");
        let reauth = browser.get(&reauth_path).await;
        assert_eq!(reauth.status, StatusCode::OK);
        reauth.assert_shows("value=\"N26_NTSBDEB1\"");
        browser
            .to_gocardless_bank(&reauth, &reauth_path, "N26_NTSBDEB1")
            .await;
        assert_eq!(gocardless_requisitions(&api).await.len(), 2);
        let back = browser.get("/connect/gocardless/return").await;
        assert_eq!(back.location, format!("/connect/progress/{connection}"));
        let back = browser.until_synced(back).await;
        back.assert_shows("Found ");
        assert_eq!(
            api_account_ids(&server, &server.world.alice_key).await,
            after
        );
        server.stop().await;
    }
}

/// Text with the HTML escapes an askama page writes undone.
fn unescaped(html: &str) -> String {
    html.replace("&amp;", "&")
        .replace("&#38;", "&")
        .replace("&#39;", "'")
        .replace("&quot;", "\"")
        .replace("&#34;", "\"")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
}

#[actix_web::test]
async fn always_categorise_from_a_row_keeps_a_rule_that_reaches_every_row() {
    on_every_backend(|server| async move {
        let browser = Browser::at(&server.base_url);
        browser.get(&login_link(&server, "alice@example.com")).await;
        let account = server.world.alice_sandbox_accounts[0];
        let listed = browser.get(&format!("/accounts/{account}")).await;
        listed.assert_shows("<th scope=\"col\">Category</th>");
        // The first row's "Always categorise…" link opens the form with its
        // merchant filled in.
        let link = between(
            &listed.body,
            "<a href=\"/rules?",
            "\" class=\"small rule-link\"",
        );
        let form = browser.get(&unescaped(&format!("/rules?{link}"))).await;
        assert_eq!(form.status, StatusCode::OK, "{}", form.body);
        let merchant = unescaped(between(
            &form.body,
            "name=\"match_merchant\" value=\"",
            "\"",
        ));
        assert!(!merchant.is_empty());
        form.assert_shows("Always categorise");
        let kept = browser
            .submit(
                &form,
                "/rules",
                &[
                    ("match_merchant", merchant.as_str()),
                    ("match_text", ""),
                    ("set_subcategory", "education.books"),
                    ("set_merchant", ""),
                ],
            )
            .await;
        assert_eq!(kept.status, StatusCode::OK, "{}", kept.body);
        assert_eq!(kept.location, "/rules");
        kept.assert_shows("id=\"applying\"");
        assert!(unescaped(&kept.body).contains(&format!("merchant is \"{merchant}\"")));

        tributary_e2e::enrich_again(server.database.db(), server.clock.clone());
        // Every row of that merchant, on every page, shows the category;
        // the API agrees.
        let (_, rows) = api(
            &server,
            &server.world.alice_key,
            &format!("/api/v1/accounts/{account}/transactions?include_pending=true"),
        )
        .await;
        let rows = rows["transactions"].as_array().unwrap();
        let of_merchant: Vec<&Value> = rows
            .iter()
            .filter(|t| t["merchant"] == merchant.as_str())
            .collect();
        assert!(!of_merchant.is_empty());
        assert!(
            of_merchant
                .iter()
                .all(|t| t["subcategory"] == "education.books")
        );
        assert!(
            rows.iter()
                .filter(|t| t["merchant"] != merchant.as_str())
                .all(|t| t["subcategory"] != "education.books")
        );
        let again = browser.get(&format!("/accounts/{account}")).await;
        again.assert_shows("Education › Books");

        // Deleted from the list; another person's rule id is no page.
        let rules = browser.get("/rules").await;
        let id = between(&rules.body, "<tr id=\"rule-", "\"").to_owned();
        let bobs = browser
            .submit(
                &rules,
                &format!("/rules/{}/delete", id.parse::<i64>().unwrap() + 1000),
                &[],
            )
            .await;
        assert_eq!(bobs.status, StatusCode::NOT_FOUND);
        let gone = browser
            .submit(&rules, &format!("/rules/{id}/delete"), &[])
            .await;
        gone.assert_shows("id=\"no-rules\"");
        server
    })
    .await;
}

/// The first start's demo (what `personal-api` seeds on an empty database)
/// holds thirteen months of balances, so the overview's net worth chart has
/// a point for each month; syncing again states the same past balances
/// and adds only the new current one.
#[test]
fn a_fresh_demo_charts_thirteen_months_and_a_second_sync_adds_no_past_balance() {
    use tributary_domain::access::Viewer;
    use tributary_domain::model::SyncJobKind;
    use tributary_domain::net_worth::{self, Interval};
    use tributary_providers::sync::{SyncEngine, SyncOutcome};
    use tributary_storage::read;
    use tributary_storage::testing::TestDatabase;
    for database in TestDatabase::all() {
        let clock = tributary_e2e::clock();
        let engine = SyncEngine::new(
            database.db().clone(),
            tributary_e2e::sandbox_registry(),
            clock.clone(),
        );
        let seed = tributary_app::demo::seed_if_empty(database.db(), &engine, clock.as_ref())
            .unwrap()
            .expect("an empty database gets the demo");
        let conn = &mut *database.db().conn().unwrap();
        let user = users::find_personal_user(conn, seed.email)
            .unwrap()
            .unwrap();
        let accounts = read::list_accounts(conn, &Viewer::whole_user(user.id)).unwrap();
        assert_eq!(accounts.len(), seed.accounts);
        let mut reports = Vec::new();
        for account in &accounts {
            let history = read::balance_history(conn, account.id).unwrap();
            let months: std::collections::BTreeSet<String> = history
                .iter()
                .map(|b| b.as_of.format("%Y-%m").to_string())
                .collect();
            assert!(months.len() >= 13, "{}: {months:?}", account.name);
            reports.push(
                history
                    .iter()
                    .map(|b| (b.as_of.date(), net_worth::counted(account.kind, b.amount)))
                    .collect(),
            );
        }
        let today = clock.now().date_naive();
        let from = today.checked_sub_months(chrono::Months::new(13));
        let monthly = net_worth::summed(&reports, Interval::Monthly, from);
        assert!(monthly.len() >= 13, "{monthly:?}");

        let before = tributary_storage::testing::row_count(database.db(), "balances");
        clock.advance(Duration::hours(6));
        let connection = tributary_storage::connections::list_connections(conn, Some(user.id))
            .unwrap()
            .remove(0);
        let outcome = engine
            .sync_now(connection.id, SyncJobKind::Scheduled, "again")
            .unwrap();
        let SyncOutcome::Synced { summary, .. } = outcome else {
            panic!("{outcome:?}")
        };
        assert_eq!(
            summary.balances_recorded,
            accounts.len(),
            "one current each"
        );
        assert_eq!(
            tributary_storage::testing::row_count(database.db(), "balances"),
            before + accounts.len() as i64
        );
    }
}

/// Revoking a key or a budgeting app and deleting a rule each ask first on
/// a page of their own (another person's id is no page); every error page
/// keeps the navigation, and "Go back" leads where the person came from
/// on this server, else to the overview.
#[actix_web::test]
async fn destructive_forms_ask_first_and_error_pages_keep_the_navigation() {
    on_every_backend(|server| async move {
        let world = &server.world;
        let browser = Browser::at(&server.base_url);
        browser.get(&login_link(&server, "alice@example.com")).await;
        let keys = browser.get("/keys").await;
        let created = browser
            .submit(&keys, "/keys", &[("name", "Spreadsheet")])
            .await;
        assert_eq!(created.status, StatusCode::OK, "{}", created.body);
        let rules = browser
            .submit(
                &keys,
                "/rules",
                &[
                    ("match_merchant", "Blue Bottle"),
                    ("set_subcategory", "food_and_drink.cafes"),
                ],
            )
            .await;
        let apps = browser
            .submit(&keys, "/budgeting-apps", &[("name", "Budget Buddy")])
            .await;
        assert_eq!(apps.status, StatusCode::OK, "{}", apps.body);
        let keys = browser.get("/keys").await;
        let key = between(&keys.body, "<tr id=\"key-", "\"").to_owned();
        let rule = between(&rules.body, "<tr id=\"rule-", "\"").to_owned();
        let apps = browser.get("/budgeting-apps").await;
        let app = between(&apps.body, "<li id=\"simplefin-", "\"").to_owned();
        let asked = [
            (
                format!("/keys/{key}/revoke"),
                "/keys",
                "Revoke the key “Spreadsheet”?",
            ),
            (format!("/rules/{rule}/delete"), "/rules", "Delete the rule"),
            (
                format!("/budgeting-apps/{app}/revoke"),
                "/budgeting-apps",
                "Revoke Budget Buddy?",
            ),
        ];
        for (path, list, question) in &asked {
            let listed = browser.get(list).await;
            listed.assert_shows(&format!("<a href=\"{path}\""));
            let confirm = browser.get(path).await;
            confirm.assert_asks_first(path, list);
            confirm.assert_shows(question);
            confirm.assert_shows("aria-label=\"Dashboard\"");
        }
        // Nothing happened by asking; confirming does it.
        assert!(
            browser
                .get("/keys")
                .await
                .body
                .contains(&format!("href=\"/keys/{key}/revoke\""))
        );
        for (path, list, _) in &asked {
            let confirm = browser.get(path).await;
            let done = browser.submit(&confirm, path, &[]).await;
            assert_eq!(done.location, *list);
            assert!(
                !done.body.contains(&format!("href=\"{path}\"")),
                "{}",
                done.body
            );
            // Done, there is nothing left to ask about.
            let again = browser.get(path).await;
            assert_eq!(again.status, StatusCode::NOT_FOUND, "{path}");
            again.assert_error_with_way_back("Dashboard", "/");
        }

        // Bob's ids are no page for alice.
        let bobs_key = {
            let conn = &mut *server.database.db().conn().unwrap();
            tributary_storage::api_keys::list_for_user(conn, world.bob_user).unwrap()[0]
                .0
                .id
        };
        let refused = browser.get(&format!("/keys/{bobs_key}/revoke")).await;
        assert_eq!(refused.status, StatusCode::NOT_FOUND);

        // An error page: the dashboard's navigation with its sign-out
        // form, and "Go back" to the page a link was followed from.
        let account = world.alice_sandbox_accounts[0];
        let reversed = format!("/accounts/{account}?from=2026-02-01&to=2026-01-01");
        let error = browser.get(&reversed).await;
        assert_eq!(error.status, StatusCode::BAD_REQUEST);
        error.assert_error_with_way_back("Dashboard", "/");
        error.assert_shows("id=\"sign-out\"");
        error.assert_shows("alice@example.com");
        let from_the_account = browser
            .get_from(
                &reversed,
                &server.url(&format!("/accounts/{account}?q=coffee")),
            )
            .await;
        from_the_account
            .assert_error_with_way_back("Dashboard", &format!("/accounts/{account}?q=coffee"));
        // Another site's address is never a way back.
        let from_elsewhere = browser
            .get_from(&reversed, "https://elsewhere.example/accounts")
            .await;
        from_elsewhere.assert_error_with_way_back("Dashboard", "/");

        // Signed out: the way home, no sign-out form.
        let stranger = Browser::at(&server.base_url);
        let signed_out = stranger.get(&format!("/keys/{key}/revoke")).await;
        assert_eq!(signed_out.status, StatusCode::UNAUTHORIZED);
        signed_out.assert_error_with_way_back("Dashboard", "/");
        signed_out.assert_shows("<a href=\"/\" id=\"home\">");
        assert!(!signed_out.body.contains("sign-out"));
        let nowhere = stranger.get("/keys/1/2/3").await;
        assert_eq!(nowhere.status, StatusCode::NOT_FOUND);
        nowhere.assert_error_with_way_back("Dashboard", "/");
        server
    })
    .await;
}
