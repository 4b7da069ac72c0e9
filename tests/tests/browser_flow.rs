//! The browser flow end to end over HTTP, on SQLite and PostgreSQL: a
//! cookie-keeping client walks the real pages of the real Platform API
//! (authorize, sign in with the code from the development outbox, checkout,
//! connect the sandbox, consent) and the `oauth2` crate redeems the code.

// Test code: a failed unwrap is a failed test, with its message.
#![allow(clippy::unwrap_used)]

use base64::Engine as _;
use reqwest::header::LOCATION;
use reqwest::{Client, Method, StatusCode};
use serde_json::Value;
use sha2::Digest as _;
use tributary_e2e::browser::{
    Browser, approved_redirect, authorize_path, code_in, connect_sandbox, exchange, sign_in,
    sign_in_at,
};
use tributary_e2e::harness::with_pages as on_every_backend;
use tributary_e2e::json_answer;

use tributary_storage::testing::{TestDatabase, dump, dump_rows, row_count, testdata_bytes};

#[actix_web::test]
async fn the_whole_flow_ends_with_a_code_that_reads_the_sandbox_accounts() {
    on_every_backend(|server, outbox| async move {
        let browser = Browser::new(&server);
        let banks = sign_in(&browser, &outbox, &server.app_a, "flow@example.com").await;
        banks.assert_shows("You can connect 6 more accounts");
        banks.assert_shows("Tributary Sandbox Bank");
        let searched = browser.get("/connect/banks?q=statement").await;
        searched.assert_shows("Upload a statement file");
        assert!(
            !searched.body.contains("Tributary Sandbox Bank"),
            "search filters the list"
        );

        let progress = connect_sandbox(&browser, &banks, "user_good").await;
        let found = progress.accounts_found();
        assert!(found >= 3, "the sandbox gives several accounts");
        let consent = browser.get("/connect/consent").await;
        assert_eq!(consent.status, StatusCode::OK);
        consent.assert_shows("app-a");
        consent.assert_shows("their transactions");
        let back = browser
            .submit(&consent, "/connect/consent", &[("decision", "approve")])
            .await;
        assert_eq!(back.status, StatusCode::FOUND);
        assert!(
            back.location
                .starts_with("https://app-a.example/callback?code=tac_"),
            "{}",
            back.location
        );

        let (_, accounts) = exchange(&server, &server.app_a, &back.location).await;
        assert_eq!(accounts["total"], found, "{accounts}");
        assert!(
            accounts["accounts"]
                .as_array()
                .unwrap()
                .iter()
                .all(|a| a["provider"] == "sandbox")
        );

        // The session ended with the redirect: its pages are gone.
        assert_eq!(
            browser.get("/connect/consent").await.status,
            StatusCode::UNAUTHORIZED
        );
        // Neither the sign-in code nor the session token is stored in plain text.
        let code = code_in(&outbox, "flow@example.com");
        assert!(!dump_rows(server.database.db()).contains(&format!("\"{code}\"")));
        assert!(!dump(server.database.db()).contains("tws_"));
        server
    })
    .await;
}

#[actix_web::test]
async fn a_person_over_the_limit_chooses_the_accounts_to_share_and_the_app_reads_only_those() {
    on_every_backend(|server, outbox| async move {
        let _: Value = json_answer(Client::new()
            .post(server.url("/api/platform/v1/users"))
            .basic_auth(server.app_a.client_id(), Some(server.app_a.secret()))
            .json(&serde_json::json!({"email": "choose@example.com", "limits": {"max_accounts": 2}}))).await;
        let browser = Browser::new(&server);
        let banks = sign_in(&browser, &outbox, &server.app_a, "choose@example.com").await;
        let progress = connect_sandbox(&browser, &banks, "user_good").await;
        progress.assert_shows("This bank has more accounts than you may connect");
        let connection = progress
            .location
            .trim_start_matches("/connect/progress/")
            .to_owned();
        let choose_path = format!("/connect/connections/{connection}/accounts");
        progress.assert_shows(&format!("href=\"{choose_path}\""));

        // Every account the bank has is offered; the limit is said.
        let choose = browser.get(&choose_path).await;
        assert_eq!(choose.status, StatusCode::OK);
        choose.assert_shows("You may share up to 2 accounts from this bank");
        let found = choose.body.matches("name=\"account\"").count();
        progress.assert_shows(&format!("this connection would add {found}"));
        assert!(found >= 4, "{}", choose.body);
        let too_many = browser
            .submit(
                &choose,
                &choose_path,
                &[("account", "chk"), ("account", "sav"), ("account", "card")],
            )
            .await;
        assert_eq!(too_many.status, StatusCode::BAD_REQUEST);
        too_many.assert_shows("Accounts: you chose 3, and app-a allows 2 more.");
        let none = browser.submit(&choose, &choose_path, &[]).await;
        assert_eq!(none.status, StatusCode::BAD_REQUEST);
        let foreign = browser
            .submit(&choose, &choose_path, &[("account", "not-at-this-bank")])
            .await;
        assert_eq!(foreign.status, StatusCode::BAD_REQUEST);

        let chosen = browser
            .submit(&choose, &choose_path, &[("account", "chk"), ("account", "card")])
            .await;
        assert!(chosen.location.starts_with("/connect/progress/"), "{}", chosen.location);
        let synced = browser.until_synced(chosen).await;
        assert_eq!(synced.accounts_found(), 2, "{}", synced.body);

        // The app reads exactly the two chosen, and a later sync keeps it so.
        let consent = browser.get("/connect/consent").await;
        let back = browser
            .submit(&consent, "/connect/consent", &[("decision", "approve")])
            .await;
        let (access, accounts) = exchange(&server, &server.app_a, &back.location).await;
        let mut names: Vec<&str> = accounts["accounts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a["name"].as_str().unwrap())
            .collect();
        names.sort_unstable();
        assert_eq!(names, ["Everyday Checking", "Rewards Visa"], "{accounts}");
        let engine = tributary_providers::sync::SyncEngine::new(
            server.database.db().clone(),
            tributary_e2e::sandbox_registry(),
            server.clock.clone(),
        );
        let id: tributary_domain::ids::ConnectionId = connection.parse().unwrap();
        let outcome = engine
            .sync_now(id, tributary_domain::model::SyncJobKind::Scheduled, "again")
            .unwrap();
        assert!(
            matches!(outcome, tributary_providers::sync::SyncOutcome::Synced { .. }),
            "{outcome:?}"
        );
        let again = server
            .bearer_json(Method::GET, "/api/platform/v1/accounts", &access)
            .await;
        assert_eq!(again["total"], 2, "{again}");
        server
    })
    .await;
}

#[actix_web::test]
async fn an_integrator_pays_limit_stops_a_bank_with_too_many_accounts() {
    on_every_backend(|server, outbox| async move {
        // The integrator registered the user with room for 2 accounts.
        let registered: Value = json_answer(Client::new()
            .post(server.url("/api/platform/v1/users"))
            .basic_auth(server.app_a.client_id(), Some(server.app_a.secret()))
            .json(&serde_json::json!({"email": "limit@example.com", "limits": {"max_accounts": 2}}))).await;
        let browser = Browser::new(&server);
        let banks = sign_in(&browser, &outbox, &server.app_a, "limit@example.com").await;
        banks.assert_shows("You can connect 2 more accounts");
        let progress = connect_sandbox(&browser, &banks, "user_good").await;
        progress.assert_shows("This bank has more accounts than you may connect");
        progress
            .assert_shows("you may have 2 accounts; you have 0 and this connection would add 4");
        progress.assert_shows("Try again");
        // Nothing was stored, so there is nothing to consent to yet.
        assert_eq!(
            browser.get("/connect/consent").await.location,
            "/connect/banks"
        );

        // A limit of 0: the list says so, and connecting is refused.
        let user_id = registered["user_id"].as_str().unwrap();
        let changed = Client::new()
            .put(server.url(&format!("/api/platform/v1/users/{user_id}")))
            .basic_auth(server.app_a.client_id(), Some(server.app_a.secret()))
            .json(&serde_json::json!({"limits": {"max_accounts": 0}}))
            .send()
            .await
            .unwrap();
        assert_eq!(changed.status(), StatusCode::OK);
        let full = browser.get("/connect/banks").await;
        full.assert_shows("You have connected as many accounts as app-a allows");
        assert!(!full.body.contains("bank-sandbox"), "no bank is offered");
        let refused = browser
            .submit(
                &progress,
                "/connect/banks/sandbox",
                &[("username", "user_good")],
            )
            .await;
        assert_eq!(refused.status, StatusCode::FORBIDDEN);

        // The person who signed in is the user the integrator registered.
        let rows = dump_rows(server.database.db());
        assert_eq!(
            rows.matches("\"email\":\"limit@example.com\"").count(),
            2,
            "one user row and one sign-in code row:\n{rows}"
        );
        server
    })
    .await;
}

#[actix_web::test]
async fn without_payments_a_user_pays_app_says_so_before_the_subscribe_button() {
    for database in TestDatabase::all() {
        let (server, outbox) = tributary_e2e::platform::start_platform_with_pages_and(
            database,
            Vec::new(),
            |mut parts| {
                parts.payments = None;
                parts
            },
        );
        let browser = Browser::new(&server);
        let signed_in = sign_in(&browser, &outbox, &server.app_b, "payer@example.com").await;
        assert_eq!(signed_in.location, "/connect/checkout");
        let page = browser.get("/connect/checkout").await;
        assert_eq!(page.status, StatusCode::SERVICE_UNAVAILABLE);
        page.assert_shows("Payments are not available");
        assert!(
            !page.body.contains("id=\"subscribe\""),
            "no button to click"
        );
        server.stop().await;
    }
}

#[actix_web::test]
async fn a_user_pays_app_takes_the_test_card_before_connecting() {
    on_every_backend(|server, outbox| async move {
        let browser = Browser::new(&server);
        let checkout = sign_in(&browser, &outbox, &server.app_b, "payer@example.com").await;
        assert_eq!(checkout.location, "/connect/checkout");
        checkout.assert_shows("charges for connecting your banks");
        // Banks wait until the user paid.
        assert_eq!(
            browser.get("/connect/banks").await.location,
            "/connect/checkout"
        );

        let card_page = browser.submit(&checkout, "/connect/checkout", &[]).await;
        assert!(
            card_page.location.starts_with("/checkout/test/test_cs_"),
            "{}",
            card_page.location
        );
        let declined = browser
            .submit(
                &card_page,
                &card_page.location.clone(),
                &[("card_number", "4000 0000 0000 0002")],
            )
            .await;
        assert_eq!(declined.status, StatusCode::PAYMENT_REQUIRED);
        declined.assert_shows("Your card was declined");
        let banks = browser
            .submit(
                &declined,
                &card_page.location.clone(),
                &[("card_number", "4242 4242 4242 4242")],
            )
            .await;
        assert_eq!(banks.location, "/connect/banks");
        assert!(
            !banks.body.contains("more account"),
            "no account limit where users pay"
        );
        assert!(
            dump_rows(server.database.db()).contains("test_sub_"),
            "the subscription is recorded on the user"
        );

        let found = connect_sandbox(&browser, &banks, "user_good")
            .await
            .accounts_found();
        let consent = browser.get("/connect/consent").await;
        let back = browser
            .submit(&consent, "/connect/consent", &[("decision", "approve")])
            .await;
        let (_, accounts) = exchange(&server, &server.app_b, &back.location).await;
        assert_eq!(accounts["total"], found, "{accounts}");
        server
    })
    .await;
}

#[actix_web::test]
async fn denying_consent_redirects_with_access_denied_and_issues_no_code() {
    on_every_backend(|server, outbox| async move {
        let browser = Browser::new(&server);
        let banks = sign_in(&browser, &outbox, &server.app_a, "deny@example.com").await;
        connect_sandbox(&browser, &banks, "user_good").await;
        let consent = browser.get("/connect/consent").await;
        let back = browser
            .submit(&consent, "/connect/consent", &[("decision", "deny")])
            .await;
        assert_eq!(back.status, StatusCode::FOUND);
        let url = url::Url::parse(&back.location).unwrap();
        let query: std::collections::HashMap<_, _> = url.query_pairs().into_owned().collect();
        assert_eq!(query["error"], "access_denied");
        assert_eq!(query["state"], "st-123");
        assert_eq!(query["iss"], server.base_url, "RFC 9207");
        assert!(!query.contains_key("code"));
        assert_eq!(
            row_count(server.database.db(), "oauth_codes"),
            0,
            "no code was issued"
        );
        server
    })
    .await;
}

#[actix_web::test]
async fn unknown_clients_and_unregistered_redirect_uris_get_a_page_never_a_redirect() {
    on_every_backend(|server, _outbox| async move {
        let browser = Browser::new(&server);
        let app = &server.app_a;
        for path in [
            authorize_path(app, "https://evil.example/callback", "s", "a@example.com"),
            authorize_path(app, "https://app-a.example/callback/", "s", "a@example.com"),
            "/api/platform/oauth/authorize?client_id=app_nobody&redirect_uri=https%3A%2F%2Fapp-a.example%2Fcallback&state=s".to_owned(),
            "/api/platform/oauth/authorize?state=s".to_owned(),
        ] {
            let response = browser.client.get(format!("{}{path}", browser.base)).send().await.unwrap();
            assert_eq!(response.status(), StatusCode::BAD_REQUEST, "{path}");
            assert!(response.headers().get(LOCATION).is_none(), "{path}");
            assert_eq!(response.headers()["x-frame-options"], "DENY");
            assert!(response.headers()["content-security-policy"].to_str().unwrap().contains("frame-ancestors 'none'"));
            assert!(response.text().await.unwrap().contains("<h1>"), "an HTML page");
        }
        // Other errors go back to the app with error= and the state.
        let public = &server.public_app;
        let back = browser.get(&authorize_path(public, &public.redirect_uris[0], "st-9", "p@example.com")).await;
        assert_eq!(back.status, StatusCode::FOUND);
        assert!(back.location.starts_with("https://app-p.example/callback?error=invalid_request"), "{}", back.location);
        let query: std::collections::HashMap<_, _> = url::Url::parse(&back.location).unwrap().query_pairs().into_owned().collect();
        assert_eq!(query["state"], "st-9", "{}", back.location);
        assert_eq!(query["iss"], server.base_url, "RFC 9207: {}", back.location);
        server
    })
    .await;
}

#[actix_web::test]
async fn sign_in_codes_allow_five_attempts_and_forms_need_their_csrf_token() {
    on_every_backend(|server, outbox| async move {
        let browser = Browser::new(&server);
        let sign_in = browser
            .get(&authorize_path(
                &server.app_a,
                &server.app_a.redirect_uris[0],
                "s",
                "",
            ))
            .await;
        let cookie_check = browser
            .client
            .get(format!("{}/connect/sign-in", browser.base))
            .send()
            .await
            .unwrap();
        assert_eq!(cookie_check.status(), StatusCode::OK);
        let forged = browser
            .post(
                "/connect/sign-in",
                &[("csrf", &"0".repeat(64)), ("email", "guess@example.com")],
            )
            .await;
        assert_eq!(forged.status, StatusCode::FORBIDDEN);
        assert!(
            outbox.last_to("guess@example.com").is_none(),
            "a forged form sends nothing"
        );

        let verify = browser
            .submit(
                &sign_in,
                "/connect/sign-in",
                &[("email", "Guess@Example.com ")],
            )
            .await;
        let code = code_in(&outbox, "guess@example.com");
        let wrong = if code == "000000" { "111111" } else { "000000" };
        for remaining in (1..=4).rev() {
            let page = browser
                .submit(&verify, "/connect/verify", &[("code", wrong)])
                .await;
            assert_eq!(page.status, StatusCode::BAD_REQUEST);
            page.assert_shows(&format!("{remaining} attempt(s) left"));
        }
        let fifth = browser
            .submit(&verify, "/connect/verify", &[("code", wrong)])
            .await;
        fifth.assert_shows("Too many wrong attempts");
        // Even the right code is refused now.
        let late = browser
            .submit(&verify, "/connect/verify", &[("code", &code)])
            .await;
        late.assert_shows("Too many wrong attempts");

        // Sends are limited per address: the sixth code in an hour is refused.
        let mut last = verify;
        for _ in 0..4 {
            let page = browser.get("/connect/sign-in").await;
            last = browser
                .submit(&page, "/connect/sign-in", &[("email", "guess@example.com")])
                .await;
            assert_eq!(last.location, "/connect/verify");
        }
        let page = browser.get("/connect/sign-in").await;
        let refused = browser
            .submit(&page, "/connect/sign-in", &[("email", "guess@example.com")])
            .await;
        assert_eq!(refused.status, StatusCode::TOO_MANY_REQUESTS);
        refused.assert_shows("Too many codes were sent to this address");
        drop(last);
        server
    })
    .await;
}

#[actix_web::test]
async fn the_portal_lists_connections_and_removes_one_with_its_data() {
    on_every_backend(|server, outbox| async move {
        let browser = Browser::new(&server);
        let banks = sign_in(&browser, &outbox, &server.app_a, "portal@example.com").await;
        connect_sandbox(&browser, &banks, "user_good").await;
        let consent = browser.get("/connect/consent").await;
        let back = browser
            .submit(&consent, "/connect/consent", &[("decision", "approve")])
            .await;
        let (access, _) = exchange(&server, &server.app_a, &back.location).await;

        let session = server
            .bearer_json(Method::POST, "/api/platform/v1/portal_sessions", &access)
            .await;
        let link = session["url"].as_str().unwrap();
        let path = &link[link.find("/portal/").unwrap()..];
        let fresh = Browser::new(&server);
        let portal = fresh.get(path).await;
        assert_eq!(
            (portal.status, portal.location.as_str()),
            (StatusCode::OK, "/portal"),
            "the secret leaves the address bar"
        );
        portal.assert_shows("Tributary Sandbox Bank");
        portal.assert_shows("ACTIVE");
        assert_eq!(
            fresh.get(path).await.status,
            StatusCode::NOT_FOUND,
            "the link works once"
        );

        let id = {
            let start = portal.body.find("id=\"connection-").unwrap() + "id=\"connection-".len();
            let end = start + portal.body[start..].find('"').unwrap();
            portal.body[start..end].to_owned()
        };

        // Disconnect: no more syncs, the data stays, and it can resume.
        let disconnect_path = format!("/connect/connections/{id}/disconnect");
        portal.assert_shows(&format!("href=\"{disconnect_path}\""));
        let confirm = fresh.get(&disconnect_path).await;
        confirm.assert_shows("It is no longer synced");
        assert!(confirm.body.contains(r#"<a href="/portal" id="keep">"#));
        let after = fresh.submit(&confirm, &disconnect_path, &[]).await;
        assert_eq!(after.location, "/portal");
        after.assert_shows("DISCONNECTED");
        after.assert_shows(&format!("href=\"/connect/connections/{id}/reauth\""));
        assert!(!after.body.contains(&format!("href=\"{disconnect_path}\"")));
        let sync = reqwest::Client::new()
            .post(server.url(&format!("/api/platform/v1/connections/{id}/sync")))
            .bearer_auth(&access)
            .send()
            .await
            .unwrap();
        assert_eq!(sync.status(), StatusCode::CONFLICT);
        let kept = server
            .bearer_json(Method::GET, "/api/platform/v1/accounts", &access)
            .await;
        assert!(
            kept["total"].as_u64().unwrap() > 0,
            "the data stays: {kept}"
        );

        let remove_path = format!("/connect/connections/{id}/remove");
        let confirm = fresh.get(&remove_path).await;
        confirm.assert_shows("are erased");
        assert!(
            confirm
                .body
                .contains(r#"<a href="/portal" id="keep">Keep it</a>"#),
            "keeping it returns to the portal"
        );
        let after = fresh.submit(&confirm, &remove_path, &[]).await;
        assert_eq!(after.location, "/portal");
        after.assert_shows("No bank is connected");
        let accounts = server
            .bearer_json(Method::GET, "/api/platform/v1/accounts", &access)
            .await;
        assert_eq!(accounts["total"], 0);

        // Adding a bank from the portal leads back to the portal.
        let banks = fresh.get("/connect/banks").await;
        let progress = connect_sandbox(&fresh, &banks, "user_good").await;
        progress.assert_shows("href=\"/portal\" id=\"continue\"");
        let portal = fresh.get("/portal").await;
        portal.assert_shows("ACTIVE");
        let accounts = server
            .bearer_json(Method::GET, "/api/platform/v1/accounts", &access)
            .await;
        assert_eq!(accounts["total"], progress.accounts_found());
        // The portal session gives no consent page: the app already has it.
        assert_eq!(
            fresh.get("/connect/consent").await.status,
            StatusCode::NOT_FOUND
        );
        server
    })
    .await;
}

/// Signs `email` in to app A, connects the sandbox, consents, and opens a
/// portal session in a fresh browser: the browser and the user's token.
async fn portal_of(
    server: &tributary_e2e::platform::PlatformServer,
    outbox: &tributary_notify::mail::DevOutbox,
    email: &str,
) -> (Browser, String) {
    let browser = Browser::new(server);
    let banks = sign_in(&browser, outbox, &server.app_a, email).await;
    connect_sandbox(&browser, &banks, "user_good").await;
    let consent = browser.get("/connect/consent").await;
    let back = browser
        .submit(&consent, "/connect/consent", &[("decision", "approve")])
        .await;
    let (access, _) = exchange(server, &server.app_a, &back.location).await;
    let session = server
        .bearer_json(Method::POST, "/api/platform/v1/portal_sessions", &access)
        .await;
    let link = session["url"].as_str().unwrap();
    let fresh = Browser::new(server);
    fresh.get(&link[link.find("/portal/").unwrap()..]).await;
    (fresh, access)
}

#[actix_web::test]
async fn an_app_user_gives_a_simplefin_app_access_from_the_portal() {
    use tributary_e2e::simplefin::{accounts, claim, claim_url, create_page};
    on_every_backend(|server, outbox| async move {
        let (portal_browser, access) = portal_of(&server, &outbox, "sfin@example.com").await;
        let portal = portal_browser.get("/portal").await;
        portal.assert_shows("Budgeting apps (SimpleFIN)");
        // The protocol's `GET /create` sends a person to the portal.
        assert!(
            create_page(&server.url("/simplefin/create"))
                .await
                .contains("Create a setup token")
        );
        let refused = portal_browser
            .submit(&portal, "/portal/simplefin", &[("name", "  ")])
            .await;
        assert_eq!(refused.status, StatusCode::BAD_REQUEST);
        refused.assert_shows("Name:");

        let shown = portal_browser
            .submit(&portal, "/portal/simplefin", &[("name", "Budget Buddy")])
            .await;
        assert_eq!(shown.status, StatusCode::OK);
        let start = shown.body.find("id=\"setup-token\"").unwrap();
        let start = start + shown.body[start..].find('>').unwrap() + 1;
        let end = start + shown.body[start..].find("</textarea>").unwrap();
        let token = shown.body[start..end].trim().to_owned();
        assert!(
            claim_url(&token).starts_with(&server.url("/simplefin/claim/")),
            "the claim URL is this server's"
        );
        let (status, access_url) = claim(&token).await;
        assert_eq!(status, StatusCode::OK, "{access_url}");

        // The Account Set is this user's accounts, as the app reads them.
        let (status, set) = accounts(&access_url, "version=2").await;
        assert_eq!(status, StatusCode::OK, "{set}");
        let by_token = server
            .bearer_json(Method::GET, "/api/platform/v1/accounts", &access)
            .await;
        let mut expected: Vec<String> = by_token["accounts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| format!("ACT-{}", a["id"].as_i64().unwrap()))
            .collect();
        let mut listed: Vec<String> = set["accounts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a["id"].as_str().unwrap().to_owned())
            .collect();
        expected.sort();
        listed.sort();
        assert!(!listed.is_empty());
        assert_eq!(listed, expected);
        let portal = portal_browser.get("/portal").await;
        portal.assert_shows("Budget Buddy");
        portal.assert_shows("in use");
        let id = {
            let marker = "<li id=\"simplefin-";
            let start = portal.body.find(marker).unwrap() + marker.len();
            let end = start + portal.body[start..].find('"').unwrap();
            portal.body[start..end].to_owned()
        };
        let revoke_path = format!("/portal/simplefin/{id}/revoke");

        // Another user of the app cannot revoke it; an authorization
        // session cannot either.
        let (other, _) = portal_of(&server, &outbox, "other@example.com").await;
        let others_portal = other.get("/portal").await;
        assert!(!others_portal.body.contains("Budget Buddy"));
        let answer = other.submit(&others_portal, &revoke_path, &[]).await;
        assert_eq!(answer.status, StatusCode::NOT_FOUND);
        // Not theirs to be asked about either: the error page keeps the
        // portal's header and leads back to the portal it came from.
        let asked = other.get_from(&revoke_path, &server.url("/portal")).await;
        assert_eq!(asked.status, StatusCode::NOT_FOUND);
        asked.assert_shows("<span class=\"for-app\">");
        asked.assert_shows("<a href=\"/portal\" id=\"go-back\">Go back</a>");
        let (status, _) = accounts(&access_url, "").await;
        assert_eq!(status, StatusCode::OK, "still readable");

        // Revoking asks first.
        portal.assert_shows(&format!("<a href=\"{revoke_path}\""));
        let confirm = portal_browser.get(&revoke_path).await;
        confirm.assert_asks_first(&revoke_path, "/portal#simplefin");
        confirm.assert_shows("Revoke Budget Buddy?");
        confirm.assert_shows("<span class=\"for-app\">");
        let after = portal_browser.submit(&confirm, &revoke_path, &[]).await;
        assert_eq!(after.location, "/portal#simplefin");
        after.assert_shows("revoked");
        let (status, _) = accounts(&access_url, "").await;
        assert_eq!(status, StatusCode::FORBIDDEN);
        server
    })
    .await;
}

#[actix_web::test]
async fn a_refused_bank_login_is_explained_and_a_reauthentication_keeps_the_connection() {
    on_every_backend(|server, outbox| async move {
        let browser = Browser::new(&server);
        let banks = sign_in(&browser, &outbox, &server.app_a, "retry@example.com").await;
        let form = browser.get("/connect/banks/sandbox").await;
        let refused = browser
            .submit(
                &form,
                "/connect/banks/sandbox",
                &[("username", "user_bad_credentials")],
            )
            .await;
        assert_eq!(refused.status, StatusCode::BAD_REQUEST);
        refused.assert_shows("The bank did not accept these details");
        refused.assert_shows("value=\"user_bad_credentials\"");

        // Connects, then the first sync asks for the bank's sign-in again.
        let progress = connect_sandbox(&browser, &banks, "user_reauth_required").await;
        progress.assert_shows("Your bank asks you to sign in again");
        let reauth_path = format!(
            "{}/reauth",
            progress
                .location
                .replace("/connect/progress/", "/connect/connections/")
        );
        progress.assert_shows(&format!("href=\"{reauth_path}\""));
        let reauth = browser.get(&reauth_path).await;
        assert_eq!(reauth.status, StatusCode::OK);
        let fixed = browser
            .submit(&reauth, &reauth_path, &[("username", "user_good")])
            .await;
        assert_eq!(fixed.location, progress.location, "the same connection");
        let fixed = browser.until_synced(fixed).await;
        assert!(fixed.accounts_found() >= 3, "{}", fixed.body);
        server
    })
    .await;
}

#[actix_web::test]
async fn a_statement_file_uploads_from_the_browser_and_a_broken_one_stores_nothing() {
    on_every_backend(|server, outbox| async move {
        let browser = Browser::new(&server);
        sign_in(&browser, &outbox, &server.app_a, "upload@example.com").await;
        let form = browser.get("/connect/banks/upload").await;
        form.assert_shows("enctype=\"multipart/form-data\"");
        let broken = browser
            .upload(&form, "broken.ofx", b"<OFX><BANKMSGSRSV1>".to_vec())
            .await;
        assert_eq!(broken.status, StatusCode::BAD_REQUEST);
        broken.assert_shows("broken.ofx does not read as a statement");
        let checking = || testdata_bytes("ofxparse/fixtures/checking.ofx");
        let forged = browser
            .upload_raw(&"0".repeat(64), "checking.ofx", checking())
            .await;
        assert_eq!(forged.status(), StatusCode::FORBIDDEN);
        assert_eq!(
            (
                row_count(server.database.db(), "connections"),
                row_count(server.database.db(), "transactions")
            ),
            (0, 0),
            "nothing stored"
        );

        // The answer is the import's summary, its numbers those stored; the
        // same file again adds nothing.
        let summary = browser.upload(&form, "checking.ofx", checking()).await;
        assert_eq!(summary.status, StatusCode::OK, "{}", summary.body);
        let stored = row_count(server.database.db(), "transactions");
        assert!(stored > 0);
        summary.assert_shows(&format!("<dd id=\"added\">{stored}</dd>"));
        summary.assert_shows("<dd id=\"unchanged\">0</dd>");
        summary.assert_shows("href=\"/connect/consent\" id=\"continue\"");
        let again = browser.upload(&form, "checking.ofx", checking()).await;
        again.assert_shows("<dd id=\"added\">0</dd>");
        again.assert_shows(&format!("<dd id=\"unchanged\">{stored}</dd>"));
        assert_eq!(row_count(server.database.db(), "transactions"), stored);
        server
    })
    .await;
}

#[actix_web::test]
async fn a_crafted_upload_from_the_browser_is_refused_and_the_server_keeps_serving() {
    use tributary_providers::import::hostile;
    on_every_backend(|server, outbox| async move {
        let browser = Browser::new(&server);
        sign_in(&browser, &outbox, &server.app_a, "deep@example.com").await;
        for (name, bytes) in [
            ("deep.ofx", hostile::deep_ofx_sgml(50_000)),
            ("deep.xml", hostile::deep_camt(50_000)),
        ] {
            let form = browser.get("/connect/banks/upload").await;
            let page = browser.upload(&form, name, bytes).await;
            assert_eq!(page.status, StatusCode::BAD_REQUEST);
            page.assert_shows(&format!("{name} does not read as a statement"));
            page.assert_shows("deeper than 100 levels");
        }
        // The server is still up and the person can go on.
        let banks = browser.get("/connect/banks").await;
        assert_eq!(banks.status, StatusCode::OK);
        server
    })
    .await;
}

#[actix_web::test]
async fn one_person_cannot_see_or_touch_another_persons_connection() {
    on_every_backend(|server, outbox| async move {
        let alice = Browser::new(&server);
        let banks = sign_in(&alice, &outbox, &server.app_a, "alice@example.com").await;
        let progress = connect_sandbox(&alice, &banks, "user_good").await;
        let connection = progress.location.rsplit('/').next().unwrap().to_owned();

        let mallory = Browser::new(&server);
        let own = sign_in(&mallory, &outbox, &server.app_a, "mallory@example.com").await;
        let form = mallory.get("/connect/banks/upload").await;
        for path in [
            format!("/connect/progress/{connection}"),
            format!("/connect/connections/{connection}/remove"),
            format!("/connect/connections/{connection}/reauth"),
        ] {
            let page = mallory.get(&path).await;
            assert_eq!(page.status, StatusCode::NOT_FOUND, "{path}");
            assert!(!page.body.contains("Everyday Checking"), "{path}");
        }
        for path in [
            format!("/connect/connections/{connection}/remove"),
            format!("/connect/progress/{connection}/retry"),
        ] {
            let answer = mallory.submit(&form, &path, &[]).await;
            assert_eq!(answer.status, StatusCode::NOT_FOUND, "{path}");
        }
        // Alice's bank list shows her connection by id; Mallory's does not.
        let listed = format!("id=\"connection-{connection}\"");
        assert!(alice.get("/connect/banks").await.body.contains(&listed));
        assert!(
            !own.body.contains(&listed)
                && !mallory.get("/connect/banks").await.body.contains(&listed),
            "no connection of Alice's is listed"
        );
        // Alice's connection is untouched.
        let still = alice.get(&progress.location).await;
        assert_eq!(still.accounts_found(), progress.accounts_found());
        // An authorization session does not open the portal.
        assert_eq!(
            mallory.get("/portal").await.status,
            StatusCode::UNAUTHORIZED
        );
        server
    })
    .await;
}

#[actix_web::test]
async fn a_public_app_completes_the_flow_with_pkce() {
    on_every_backend(|server, outbox| async move {
        let app = &server.public_app;
        let verifier = "a-public-app-s-verifier-of-forty-three-chars-or-more";
        let challenge = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .encode(sha2::Sha256::digest(verifier.as_bytes()));
        let authorize = format!(
            "{}&code_challenge={challenge}&code_challenge_method=S256",
            authorize_path(app, &app.redirect_uris[0], "st-123", "pkce@example.com")
        );
        let browser = Browser::new(&server);
        let banks = sign_in_at(&browser, &outbox, &authorize, "pkce@example.com").await;
        connect_sandbox(&browser, &banks, "user_good").await;
        let consent = browser.get("/connect/consent").await;
        let back = browser
            .submit(&consent, "/connect/consent", &[("decision", "approve")])
            .await;
        let url = url::Url::parse(&back.location).unwrap();
        let code = url
            .query_pairs()
            .find(|(k, _)| k == "code")
            .unwrap()
            .1
            .into_owned();
        let token = |verifier: &'static str| {
            Client::new()
                .post(server.url("/api/platform/oauth/token"))
                .form(&[
                    ("grant_type", "authorization_code"),
                    ("code", code.as_str()),
                    ("redirect_uri", app.redirect_uris[0].as_str()),
                    ("client_id", app.client_id()),
                    ("code_verifier", verifier),
                ])
                .send()
        };
        let wrong = token("not-the-verifier-that-made-the-challenge-at-all")
            .await
            .unwrap();
        assert_eq!(wrong.status(), StatusCode::BAD_REQUEST);
        let body: Value = wrong.json().await.unwrap();
        assert_eq!(body["error"], "invalid_grant");
        let right = token(verifier).await.unwrap();
        assert_eq!(right.status(), StatusCode::OK);
        let tokens: Value = right.json().await.unwrap();
        let access = tokens["access_token"].as_str().unwrap();
        let accounts = server
            .bearer_json(Method::GET, "/api/platform/v1/accounts", access)
            .await;
        assert!(accounts["total"].as_u64().unwrap() >= 3, "{accounts}");
        server
    })
    .await;
}

#[actix_web::test]
async fn a_form_missing_a_field_gets_a_page_naming_it() {
    on_every_backend(|server, outbox| async move {
        let browser = Browser::new(&server);
        sign_in(&browser, &outbox, &server.app_a, "fields@example.com").await;
        let page = browser
            .post("/connect/banks/sandbox", &[("username", "user_good")])
            .await;
        assert_eq!(page.status, StatusCode::BAD_REQUEST);
        page.assert_shows("missing field `csrf`");
        page.assert_shows("<h1>");
        let unknown = browser.get("/connect/nowhere").await;
        assert_eq!(unknown.status, StatusCode::NOT_FOUND);
        unknown.assert_shows("<h1>Not found</h1>");
        server
    })
    .await;
}

#[actix_web::test]
async fn the_demo_callback_redeems_the_demo_apps_codes_once_and_no_one_elses() {
    use tributary_domain::clock::Clock as _;
    use tributary_storage::apps;
    on_every_backend(|server, outbox| async move {
        let callback = server.url("/developers/demo/callback");
        // Without a demo app the page is not there.
        let missing = Client::new().get(&callback).send().await.unwrap();
        assert_eq!(missing.status(), StatusCode::NOT_FOUND);
        let demo = {
            let conn = &mut *server.database.db().conn().unwrap();
            let now = server.clock.now().naive_utc();
            let record = apps::create_app(
                conn,
                &apps::NewApp {
                    client_id: "app_demo_for_the_test",
                    name: "Tributary demo app",
                    client_secret_hash: Some("unused"),
                    billing_model: tributary_domain::model::BillingModel::Integrator,
                    default_max_accounts: None,
                    redirect_uris: std::slice::from_ref(&callback),
                    now,
                },
            )
            .unwrap();
            apps::mark_demo(conn, record.id).unwrap();
            // App A registers the same page: its codes must still be refused.
            apps::add_redirect_uri(conn, server.app_a.record.id, &callback, now).unwrap();
            tributary_e2e::platform::TestApp {
                record: apps::get_app(conn, record.id).unwrap(),
                secret: None,
                redirect_uris: vec![callback.clone()],
            }
        };

        let foreign = approved_redirect(
            &Browser::new(&server),
            &outbox,
            &server.app_a,
            &callback,
            "someone@example.com",
        )
        .await;
        let path = |url: &str| url.trim_start_matches(&server.base_url).to_owned();
        let refused = Browser::new(&server).get(&path(&foreign)).await;
        assert_eq!(refused.status, StatusCode::BAD_REQUEST);
        refused.assert_shows("The code was not accepted");

        let browser = Browser::new(&server);
        let back =
            approved_redirect(&browser, &outbox, &demo, &callback, "newcomer@example.com").await;
        assert!(back.starts_with(&format!("{callback}?code=tac_")), "{back}");
        let shown = browser.get(&path(&back)).await;
        assert_eq!(shown.status, StatusCode::OK, "{}", shown.body);
        shown.assert_shows("Everyday Checking");
        shown.assert_accessible();
        let token = shown
            .body
            .split("id=\"access-token\" readonly value=\"")
            .nth(1)
            .and_then(|rest| rest.split('"').next())
            .unwrap()
            .to_owned();
        let accounts = server
            .bearer_json(Method::GET, "/api/platform/v1/accounts", &token)
            .await;
        for account in accounts["accounts"].as_array().unwrap() {
            shown.assert_shows(account["name"].as_str().unwrap());
        }
        // Once only; an error the flow sent back is shown, not redeemed.
        let again = browser.get(&path(&back)).await;
        assert_eq!(again.status, StatusCode::BAD_REQUEST);
        let declined = browser
            .get("/developers/demo/callback?error=access_denied&state=quickstart")
            .await;
        assert_eq!(declined.status, StatusCode::BAD_REQUEST);
        declined.assert_shows("access_denied");
        server
    })
    .await;
}

/// The Content-Security-Policy a page was answered with.
async fn policy_of(browser: &Browser, path: &str) -> String {
    let response = browser
        .client
        .get(format!("{}{path}", browser.base))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK, "{path}");
    response.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .to_owned()
}

#[actix_web::test]
async fn a_code_comes_back_with_the_metadatas_issuer_and_pages_allow_only_the_forms_they_need() {
    on_every_backend(|server, outbox| async move {
        let metadata =
            json_answer(Client::new().get(server.url("/.well-known/oauth-authorization-server")))
                .await;
        assert_eq!(
            metadata["authorization_response_iss_parameter_supported"],
            true
        );
        let browser = Browser::new(&server);
        let app = &server.app_a;
        let banks = sign_in(&browser, &outbox, app, "iss@example.com").await;

        // Sign-in and the banks: forms stay here, no images.
        let strict = policy_of(&browser, "/connect/banks").await;
        assert!(strict.contains("form-action 'self'"), "{strict}");
        assert!(
            !strict.contains("form-action 'self' "),
            "nothing beside 'self': {strict}"
        );
        assert!(!strict.contains("img-src"), "{strict}");
        assert!(
            policy_of(&browser, "/connect/banks/sandbox")
                .await
                .ends_with("form-action 'self'")
        );

        // Consent ends in the redirect to the app: its origin, exactly.
        connect_sandbox(&browser, &banks, "user_good").await;
        let consent_policy = policy_of(&browser, "/connect/consent").await;
        assert!(
            consent_policy.ends_with("form-action 'self' https://app-a.example"),
            "{consent_policy}"
        );
        let consent = browser.get("/connect/consent").await;
        let back = browser
            .submit(&consent, "/connect/consent", &[("decision", "approve")])
            .await;
        assert_eq!(back.status, StatusCode::FOUND);
        let query: std::collections::HashMap<_, _> = url::Url::parse(&back.location)
            .unwrap()
            .query_pairs()
            .into_owned()
            .collect();
        assert_eq!(
            query["iss"], metadata["issuer"],
            "RFC 9207: {}",
            back.location
        );
        assert_eq!(query["state"], "st-123");
        exchange(&server, app, &back.location).await;
        server
    })
    .await;
}
