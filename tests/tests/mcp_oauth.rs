//! An assistant connects to `/mcp` by URL, as the MCP authorization
//! specification describes, on both backends: discovery from the 401
//! (RFC 9728, RFC 8414), dynamic registration (RFC 7591), the person's
//! consent with the accounts they choose (in the dashboard), the code
//! exchanged with PKCE by a third-party OAuth client (the `oauth2` crate),
//! and a tool call that sees the chosen accounts only. Then each refusal:
//! a code used twice, a wrong verifier, a token for another resource, a
//! refresh token replayed, a connection revoked in the dashboard.

// Test code: a failed unwrap is a failed test, with its message.
#![allow(clippy::unwrap_used)]

use oauth2::{AuthorizationCode, RefreshToken, TokenResponse};
use reqwest::{Client, StatusCode};
use serde_json::{Value, json};
use std::collections::BTreeSet;
use tributary_domain::clock::Clock as _;
use tributary_domain::ids::AccountId;
use tributary_e2e::TestServer;
use tributary_e2e::browser::{Browser, Page, code_in};
use tributary_e2e::harness::personal as on_every_backend;
use tributary_e2e::mcp::{Assistant, CALLBACK, discover_and_register, http, tool_call as call};

/// Signs alice in from the consent link (she is sent back to it), and
/// returns the consent page.
async fn sign_in_to_consent(server: &TestServer, browser: &Browser, link: &str) -> Page {
    let sign_in = browser.get(link).await;
    assert_eq!(sign_in.status, StatusCode::OK);
    sign_in.assert_shows("id=\"send-code\"");
    let verify = browser
        .submit(&sign_in, "/sign-in", &[("email", "alice@example.com")])
        .await;
    let code = code_in(&server.outbox, "alice@example.com");
    let consent = browser
        .submit(&verify, "/sign-in/code", &[("code", &code)])
        .await;
    assert!(
        consent.location.starts_with("/mcp/oauth/authorize?"),
        "{}",
        consent.location
    );
    consent.assert_shows("Test Assistant");
    consent.assert_shows("127.0.0.1");
    consent
}

/// The hidden fields of the consent form, as the browser posts them back.
fn hidden_fields(page: &Page) -> Vec<(String, String)> {
    page.body
        .split("<input type=\"hidden\" name=\"")
        .skip(1)
        .map(|rest| {
            let name = rest.split('"').next().unwrap().to_owned();
            let value = rest
                .split("value=\"")
                .nth(1)
                .unwrap()
                .split('"')
                .next()
                .unwrap();
            (name, html_unescape(value))
        })
        .filter(|(name, _)| name != "csrf")
        .collect()
}

fn html_unescape(text: &str) -> String {
    text.replace("&#x2f;", "/")
        .replace("&#x2F;", "/")
        .replace("&quot;", "\"")
        .replace("&#x27;", "'")
        .replace("&#39;", "'")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

/// Allows the assistant to read `accounts`; the code from the redirect.
async fn allow(browser: &Browser, consent: &Page, accounts: &[AccountId]) -> String {
    let hidden = hidden_fields(consent);
    let ids: Vec<String> = accounts.iter().map(|a| a.to_string()).collect();
    let mut form: Vec<(&str, &str)> = hidden
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    form.push(("decision", "allow"));
    for id in &ids {
        form.push(("account", id));
    }
    let back = browser.submit(consent, "/mcp/oauth/authorize", &form).await;
    assert!(
        back.location.starts_with(CALLBACK),
        "{} {}",
        back.location,
        back.body
    );
    let url = url::Url::parse(&back.location).unwrap();
    let query: std::collections::HashMap<_, _> = url.query_pairs().into_owned().collect();
    assert_eq!(query["state"], "st-42");
    assert!(query.contains_key("iss"));
    query
        .get("code")
        .cloned()
        .unwrap_or_else(|| panic!("no code in {}", back.location))
}

fn account_ids(answer: &Value) -> BTreeSet<i64> {
    answer["result"]["structuredContent"]["accounts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["id"].as_i64().unwrap())
        .collect()
}

#[actix_web::test]
async fn an_assistant_connects_by_url_and_reads_only_the_accounts_chosen() {
    on_every_backend(|server: TestServer| async move {
        let world = &server.world;
        let chosen = [world.alice_sandbox_accounts[0], world.alice_imported];
        let assistant = discover_and_register(&server, CALLBACK).await;
        let browser = Browser::at(&server.base_url);
        let (link, verifier) = assistant.link(&assistant.resource);
        let consent = sign_in_to_consent(&server, &browser, &link).await;

        // Allowing with no account ticked asks again.
        let hidden = hidden_fields(&consent);
        let mut form: Vec<(&str, &str)> = hidden
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        form.push(("decision", "allow"));
        let again = browser
            .submit(&consent, "/mcp/oauth/authorize", &form)
            .await;
        assert_eq!(again.status, StatusCode::BAD_REQUEST);
        again.assert_shows("Choose at least one account");

        let code = allow(&browser, &consent, &chosen).await;
        // The third-party OAuth client exchanges the code (PKCE, resource).
        let tokens = assistant
            .oauth()
            .exchange_code(AuthorizationCode::new(code.clone()))
            .set_pkce_verifier(verifier)
            .add_extra_param("resource", &assistant.resource)
            .request_async(&http())
            .await
            .unwrap();
        assert_eq!(
            tokens.expires_in(),
            Some(std::time::Duration::from_secs(3600))
        );
        let access = tokens.access_token().secret().clone();
        let (status, answer) = call(&server, &access, "list_accounts", json!({})).await;
        assert_eq!(status, StatusCode::OK, "{answer}");
        let expected: BTreeSet<i64> = chosen.iter().map(|a| a.get()).collect();
        assert_eq!(account_ids(&answer), expected);
        // Through every tool and argument, the two and no third.
        tributary_e2e::mcp::assert_sees_only(
            &server,
            &access,
            &expected,
            &[
                world.alice_brokerage.get(),
                world.alice_sandbox_accounts[1].get(),
                world.bob_account.get(),
            ],
        )
        .await;
        // The token is for /mcp alone: the Personal API does not take it.
        let api = Client::new()
            .get(server.url("/api/v1/accounts"))
            .bearer_auth(&access)
            .send()
            .await
            .unwrap();
        assert_eq!(api.status(), StatusCode::UNAUTHORIZED);

        // The dashboard lists the assistant with the accounts it reads.
        let listed = browser.get("/connected-apps").await;
        listed.assert_shows("Test Assistant");
        listed.assert_shows("Giro");

        // Refresh rotates; the old refresh token again revokes the grant's
        // tokens, the new ones too.
        let refresh = tokens.refresh_token().unwrap().secret().clone();
        let rotated = assistant
            .oauth()
            .exchange_refresh_token(&RefreshToken::new(refresh.clone()))
            .request_async(&http())
            .await
            .unwrap();
        let new_access = rotated.access_token().secret().clone();
        let (status, _) = call(&server, &new_access, "list_accounts", json!({})).await;
        assert_eq!(status, StatusCode::OK);
        let replayed = assistant
            .oauth()
            .exchange_refresh_token(&RefreshToken::new(refresh))
            .request_async(&http())
            .await;
        assert!(replayed.is_err());
        let (status, _) = call(&server, &new_access, "list_accounts", json!({})).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
        server
    })
    .await;
}

/// The token request redeeming `code`.
fn redeem(
    assistant: &Assistant,
    code: &str,
    verifier: &str,
    resource: &str,
) -> Vec<(String, String)> {
    [
        ("grant_type", "authorization_code"),
        ("code", code),
        ("redirect_uri", CALLBACK),
        ("client_id", &assistant.client_id),
        ("code_verifier", verifier),
        ("resource", resource),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.to_owned()))
    .collect()
}

fn pairs(form: &[(String, String)]) -> Vec<(&str, &str)> {
    form.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect()
}

/// The tokens `form` redeems, and the access token, checked to work.
async fn redeemed(
    server: &TestServer,
    assistant: &Assistant,
    form: &[(String, String)],
) -> (Value, String) {
    let tokens: Value = Client::new()
        .post(&assistant.token)
        .form(&pairs(form))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let access = tokens["access_token"].as_str().unwrap().to_owned();
    let (status, _) = call(server, &access, "list_accounts", json!({})).await;
    assert_eq!(status, StatusCode::OK, "{tokens}");
    (tokens, access)
}

/// The RFC 6749 §5.2 `error` of a refused token request.
async fn token_error(assistant: &Assistant, form: &[(&str, &str)]) -> (StatusCode, String) {
    let response = Client::new()
        .post(&assistant.token)
        .form(form)
        .send()
        .await
        .unwrap();
    let status = response.status();
    let body: Value = response.json().await.unwrap();
    (
        status,
        body["error"].as_str().unwrap_or_default().to_owned(),
    )
}

#[actix_web::test]
async fn codes_verifiers_resources_and_revoked_connections_are_refused() {
    on_every_backend(|server: TestServer| async move {
        let world = &server.world;
        let assistant = discover_and_register(&server, CALLBACK).await;
        let browser = Browser::at(&server.base_url);

        // A link naming another resource is refused on a page: an error
        // never redirects before the person decided (no open redirect).
        let (link, _) = assistant.link("https://elsewhere.example/mcp");
        let refused = browser.get(&link).await;
        assert_eq!(refused.status, StatusCode::BAD_REQUEST);
        assert!(
            refused.location.starts_with("/mcp/oauth/authorize?"),
            "{}",
            refused.location
        );
        refused.assert_shows("invalid_target");
        // So is one without PKCE.
        let without_pkce = format!(
            "/mcp/oauth/authorize?response_type=code&client_id={}&redirect_uri={}&state=x",
            assistant.client_id,
            url::form_urlencoded::byte_serialize(CALLBACK.as_bytes()).collect::<String>()
        );
        let refused = browser.get(&without_pkce).await;
        assert_eq!(refused.status, StatusCode::BAD_REQUEST);
        refused.assert_shows("PKCE");
        let (link, verifier) = assistant.link(&assistant.resource);
        let consent = sign_in_to_consent(&server, &browser, &link).await;
        let code = allow(&browser, &consent, &[world.alice_imported]).await;
        // A token for another resource: refused, the code still good.
        let other = redeem(
            &assistant,
            &code,
            verifier.secret(),
            "https://elsewhere.example/mcp",
        );
        assert_eq!(
            token_error(&assistant, &pairs(&other)).await,
            (StatusCode::BAD_REQUEST, "invalid_target".into())
        );
        // A wrong verifier: refused.
        let wrong = redeem(&assistant, &code, &"w".repeat(64), &assistant.resource);
        assert_eq!(
            token_error(&assistant, &pairs(&wrong)).await,
            (StatusCode::BAD_REQUEST, "invalid_grant".into())
        );
        // The right one: tokens.
        let right = redeem(&assistant, &code, verifier.secret(), &assistant.resource);
        let (_, access) = redeemed(&server, &assistant, &right).await;
        // The code a second time: refused, and the tokens it gave revoked.
        assert_eq!(
            token_error(&assistant, &pairs(&right)).await,
            (StatusCode::BAD_REQUEST, "invalid_grant".into())
        );
        let (status, _) = call(&server, &access, "list_accounts", json!({})).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);

        // A Platform app's token, in the same database, does not open /mcp.
        let platform_token = {
            let conn = &mut *server.database.db().conn().unwrap();
            let (_, hash) = tributary_auth::oauth::new_client_secret();
            let app = tributary_storage::apps::create_app(
                conn,
                &tributary_storage::apps::NewApp {
                    client_id: "app_platform",
                    name: "A Platform app",
                    client_secret_hash: Some(&hash),
                    billing_model: tributary_domain::model::BillingModel::Integrator,
                    default_max_accounts: None,
                    redirect_uris: &[],
                    now: server.clock.now().naive_utc(),
                },
            )
            .unwrap();
            tributary_auth::oauth::issue_pair(
                conn,
                (app.id, world.alice_user, None),
                "fam_x",
                server.clock.now().naive_utc(),
            )
            .unwrap()
            .access_token
        };
        let (status, _) = call(&server, &platform_token, "list_accounts", json!({})).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
        // ...nor does an MCP token the Platform API's bearer check.
        {
            let conn = &mut *server.database.db().conn().unwrap();
            let refused = tributary_auth::oauth::authenticate_access(
                conn,
                &access,
                tributary_auth::oauth::Resource::PlatformApi,
                server.clock.now().naive_utc(),
            );
            assert!(refused.is_err());
        }

        // A connection revoked in the dashboard: its tokens stop at once.
        let (link, verifier) = assistant.link(&assistant.resource);
        let consent = browser.get(&link).await;
        let code = allow(&browser, &consent, &[world.alice_imported]).await;
        let fresh = redeem(&assistant, &code, verifier.secret(), &assistant.resource);
        let (tokens, access) = redeemed(&server, &assistant, &fresh).await;
        // A second consent whose code the assistant has not exchanged yet.
        let (link, unused_verifier) = assistant.link(&assistant.resource);
        let consent = browser.get(&link).await;
        let unused_code = allow(&browser, &consent, &[world.alice_imported]).await;
        let listed = browser.get("/connected-apps").await;
        let grants: Vec<String> = listed
            .body
            .split("href=\"/connected-apps/")
            .skip(1)
            .filter_map(|rest| rest.split('/').next())
            .map(str::to_owned)
            .collect();
        // Newest first: the unexchanged one, the fresh one, and the first
        // (its tokens revoked by the code's replay; the consent stays
        // listed until the person revokes it).
        assert_eq!(grants.len(), 3, "{}", listed.body);
        let grant = grants[1].clone();
        // Another person cannot revoke it (nor learn it exists).
        {
            let conn = &mut *server.database.db().conn().unwrap();
            let id = grant.parse().unwrap();
            let now = server.clock.now().naive_utc();
            assert!(
                !tributary_storage::mcp_clients::revoke_grant(conn, world.bob_user, id, now)
                    .unwrap()
            );
        }
        // Revoking asks first.
        let revoke = format!("/connected-apps/{grant}/revoke");
        let confirm = browser.get(&revoke).await;
        confirm.assert_asks_first(&revoke, "/connected-apps");
        confirm.assert_shows("It stops reading your accounts at once");
        let after = browser.submit(&confirm, &revoke, &[]).await;
        assert_eq!(after.location, "/connected-apps");
        let (status, _) = call(&server, &access, "list_accounts", json!({})).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
        let refreshed = token_error(
            &assistant,
            &[
                ("grant_type", "refresh_token"),
                ("refresh_token", tokens["refresh_token"].as_str().unwrap()),
                ("client_id", &assistant.client_id),
            ],
        )
        .await;
        assert_eq!(refreshed, (StatusCode::BAD_REQUEST, "invalid_grant".into()));
        // Revoking a consent spends the code it gave that was not exchanged.
        let listed = browser.get("/connected-apps").await;
        let after = browser
            .submit(
                &listed,
                &format!("/connected-apps/{}/revoke", grants[0]),
                &[],
            )
            .await;
        assert_eq!(after.location, "/connected-apps");
        let late = redeem(
            &assistant,
            &unused_code,
            unused_verifier.secret(),
            &assistant.resource,
        );
        assert_eq!(
            token_error(&assistant, &pairs(&late)).await,
            (StatusCode::BAD_REQUEST, "invalid_grant".into())
        );
        server
    })
    .await;
}

#[actix_web::test]
async fn registrations_are_checked_and_limited() {
    on_every_backend(|server: TestServer| async move {
        let client = Client::new();
        let register = |body: Value| {
            let client = client.clone();
            let url = server.url("/mcp/oauth/register");
            async move {
                let response = client.post(url).json(&body).send().await.unwrap();
                let status = response.status();
                (status, response.json::<Value>().await.unwrap())
            }
        };
        for (body, error) in [
            (json!({}), "invalid_redirect_uri"),
            (
                json!({"redirect_uris": ["http://evil.example/cb"]}),
                "invalid_redirect_uri",
            ),
            (
                json!({"redirect_uris": ["javascript:alert(1)"]}),
                "invalid_redirect_uri",
            ),
            (
                json!({"redirect_uris": ["https://a.example/cb#x"]}),
                "invalid_redirect_uri",
            ),
            (
                json!({"redirect_uris": [CALLBACK], "grant_types": ["client_credentials"]}),
                "invalid_client_metadata",
            ),
            (
                json!({"redirect_uris": [CALLBACK], "response_types": ["token"]}),
                "invalid_client_metadata",
            ),
            (
                json!({"redirect_uris": [CALLBACK], "client_name": "x".repeat(101)}),
                "invalid_client_metadata",
            ),
            (
                json!({"redirect_uris": "not a list"}),
                "invalid_client_metadata",
            ),
            (
                json!({"redirect_uris": [CALLBACK], "client_name": "Claude\u{202e}tfosorciM"}),
                "invalid_client_metadata",
            ),
        ] {
            let (status, answer) = register(body.clone()).await;
            assert_eq!(
                (status, answer["error"].as_str().unwrap()),
                (StatusCode::BAD_REQUEST, error),
                "{body}"
            );
        }
        // Ten an hour from one address, then 429 with Retry-After.
        let mut unused = String::new();
        for _ in 0..tributary_auth::mcp::REGISTRATIONS_PER_HOUR {
            let (status, registered) = register(
                json!({"redirect_uris": ["cursor://anysphere.cursor-mcp/oauth/callback"]}),
            )
            .await;
            assert_eq!(status, StatusCode::CREATED);
            unused = registered["client_id"].as_str().unwrap().to_owned();
        }
        let limited = client
            .post(server.url("/mcp/oauth/register"))
            .json(&json!({"redirect_uris": [CALLBACK]}))
            .send()
            .await
            .unwrap();
        assert_eq!(limited.status(), StatusCode::TOO_MANY_REQUESTS);
        assert_eq!(limited.headers()["retry-after"], "3600");
        // A day later the unused registrations are gone and the address may
        // register again.
        server.clock.advance(chrono::Duration::hours(25));
        // Unused for a day, a registration no longer opens the consent page.
        let expired = client
            .get(server.url(&format!(
                "/mcp/oauth/authorize?response_type=code&client_id={unused}&code_challenge=E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM&code_challenge_method=S256"
            )))
            .send()
            .await
            .unwrap();
        assert_eq!(expired.status(), StatusCode::BAD_REQUEST);
        assert!(expired.text().await.unwrap().contains("No assistant is registered"));
        let (status, registered) = register(json!({"redirect_uris": [CALLBACK]})).await;
        assert_eq!(status, StatusCode::CREATED);
        let conn = &mut *server.database.db().conn().unwrap();
        assert!(
            tributary_storage::mcp_clients::find(conn, registered["client_id"].as_str().unwrap())
                .unwrap()
                .is_some()
        );
        assert_eq!(
            tributary_storage::mcp_clients::registrations_since(
                conn,
                "127.0.0.1",
                server.clock.now().naive_utc() - chrono::Duration::days(30)
            )
            .unwrap(),
            1,
            "the unused ones were deleted"
        );
        server
    })
    .await;
}
