//! The browser flow with third-party services behind it, each a local fake
//! of its API: Stripe Checkout for an app whose users pay, a SimpleFIN
//! bridge connected by pasting a setup token, a GoCardless bank found by
//! country and linked on the bank's own page, an Enable Banking bank whose
//! return carries the code, a Plaid bank chosen on Plaid's Hosted Link
//! pages, a brokerage connected in SnapTrade's portal, Akahu with a
//! personal app's tokens, Up and Starling with a personal access token,
//! Interactive Brokers with a Flex token and query id, bunq with an API key
//! (a key pair registered at once), Teller with an enrollment's access
//! token (over mTLS), Pluggy with a person's own application and item, and a TrueLayer bank found by country whose consent
//! returns with the code. SQLite and PostgreSQL.

// Test code: a failed unwrap is a failed test, with its message.
#![allow(clippy::unwrap_used)]

use reqwest::{Client, StatusCode};
use std::sync::Arc;
use std::time::Duration;
use tributary_e2e::akahu::{AkahuFake, PERSONAL_APP_TOKEN, PERSONAL_USER_TOKEN};
use tributary_e2e::browser::{Browser, exchange, sign_in};
use tributary_e2e::bunq::BunqFake;
use tributary_e2e::enablebanking::EnableBankingFake;
use tributary_e2e::fakes::{SimpleFinBridge, gocardless_connector, gocardless_requisitions};
use tributary_e2e::ibkr::IbkrFake;
use tributary_e2e::plaid::PlaidFake;
use tributary_e2e::platform::start_platform_with_pages_and;
use tributary_e2e::pluggy::PluggyFake;
use tributary_e2e::snaptrade::SnapTradeFake;
use tributary_e2e::starling::StarlingFake;
use tributary_e2e::teller::TellerFake;
use tributary_e2e::truelayer::TrueLayerFake;
use tributary_e2e::up::UpFake;
use tributary_http::server::Parts;
use tributary_outbound::PrivateAllowance;
use tributary_providers::payments::StripeProcessor;
use tributary_storage::testing::{TestDatabase, dump, dump_rows};
use wiremock::matchers::{body_string_contains, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

#[actix_web::test]
async fn stripe_decides_whether_the_checkout_was_paid() {
    for database in TestDatabase::all() {
        eprintln!("-- on {:?}", database.backend());
        let stripe = MockServer::start().await;
        Mock::given(method("POST"))
            .and(path("/v1/checkout/sessions"))
            .and(body_string_contains("mode=subscription"))
            .respond_with(ResponseTemplate::new(200).set_body_json(serde_json::json!({
                "id": "cs_test_flow", "url": "https://checkout.stripe.test/pay/cs_test_flow", "status": "open",
            })))
            .expect(1)
            .mount(&stripe)
            .await;
        // The first look finds the session unpaid, the second paid.
        Mock::given(method("GET"))
            .and(path("/v1/checkout/sessions/cs_test_flow"))
            .respond_with(ResponseTemplate::new(200).set_body_json(serde_json::json!({
                "id": "cs_test_flow", "status": "open", "payment_status": "unpaid",
            })))
            .up_to_n_times(1)
            .mount(&stripe)
            .await;
        Mock::given(method("GET"))
            .and(path("/v1/checkout/sessions/cs_test_flow"))
            .respond_with(ResponseTemplate::new(200).set_body_json(serde_json::json!({
                "id": "cs_test_flow", "status": "complete", "payment_status": "paid", "subscription": "sub_flow",
            })))
            .mount(&stripe)
            .await;
        let processor = StripeProcessor {
            api_base: stripe.uri(),
            secret_key: "sk_test_flow".into(),
            price_id: "price_flow".into(),
            timeout: Duration::from_secs(5),
        };
        let (server, outbox) = start_platform_with_pages_and(database, Vec::new(), |parts| Parts {
            payments: Some(Arc::new(processor)),
            ..parts
        });
        let browser = Browser::new(&server);
        let checkout = sign_in(&browser, &outbox, &server.app_b, "stripe@example.com").await;
        assert_eq!(checkout.location, "/connect/checkout");
        let to_stripe = browser.submit(&checkout, "/connect/checkout", &[]).await;
        assert_eq!(
            to_stripe.location,
            "https://checkout.stripe.test/pay/cs_test_flow"
        );
        let started = &stripe.received_requests().await.unwrap()[0];
        let form = String::from_utf8_lossy(&started.body).into_owned();
        let return_url = format!("{}/connect/checkout/return", server.base_url);
        assert!(
            form.contains(
                &url::form_urlencoded::byte_serialize(return_url.as_bytes()).collect::<String>()
            ),
            "{form}"
        );
        assert!(
            form.contains("customer_email=stripe%40example.com"),
            "{form}"
        );

        // Coming back before paying: still the checkout.
        let early = browser.get("/connect/checkout/return").await;
        assert_eq!(early.status, StatusCode::PAYMENT_REQUIRED);
        early.assert_shows("The payment was not completed");
        // After paying at Stripe: on to the banks, the subscription recorded.
        let banks = browser.get("/connect/checkout/return").await;
        assert_eq!(banks.location, "/connect/banks");
        assert!(dump_rows(server.database.db()).contains("sub_flow"));
        server.stop().await;
    }
}

#[actix_web::test]
async fn a_simplefin_setup_token_connects_from_the_browser() {
    for database in TestDatabase::all() {
        eprintln!("-- on {:?}", database.backend());
        let bridge = SimpleFinBridge::start().await;
        let simplefin = tributary_e2e::fakes::simplefin_connector(
            Duration::from_secs(5),
            PrivateAllowance::All,
        );
        let (server, outbox) =
            start_platform_with_pages_and(database, vec![simplefin], |parts| parts);
        // The app registered the user with room for the bridge's 8 accounts.
        let registered = Client::new()
            .post(server.url("/api/platform/v1/users"))
            .basic_auth(server.app_a.client_id(), Some(server.app_a.secret()))
            .json(&serde_json::json!({"email": "fin@example.com", "limits": {"max_accounts": 10}}))
            .send()
            .await
            .unwrap();
        assert_eq!(registered.status(), StatusCode::CREATED);

        let browser = Browser::new(&server);
        let banks = sign_in(&browser, &outbox, &server.app_a, "fin@example.com").await;
        banks.assert_shows("SimpleFIN Bridge");
        let form = browser.get("/connect/banks/simplefin").await;
        form.assert_shows("Setup token");
        let token = bridge.setup_token();
        let progress = browser
            .submit(
                &form,
                "/connect/banks/simplefin",
                &[("setup_token", &token)],
            )
            .await;
        let progress = browser.until_synced(progress).await;
        assert_eq!(progress.accounts_found(), 8, "{}", progress.body);
        progress.assert_shows("My Checking");

        // A claimed token is refused in plain words, and nothing is added.
        let again = browser
            .submit(
                &form,
                "/connect/banks/simplefin",
                &[("setup_token", &token)],
            )
            .await;
        assert_eq!(again.status, StatusCode::BAD_REQUEST);
        again.assert_shows("The bank did not accept these details");
        assert!(
            !dump(server.database.db()).contains(bridge.password),
            "the access URL is sealed"
        );

        let consent = browser.get("/connect/consent").await;
        let back = browser
            .submit(&consent, "/connect/consent", &[("decision", "approve")])
            .await;
        let (_, accounts) = exchange(&server, &server.app_a, &back.location).await;
        assert_eq!(accounts["total"], 8);
        assert!(
            accounts["accounts"]
                .as_array()
                .unwrap()
                .iter()
                .all(|a| a["provider"] == "simplefin")
        );
        // Several banks behind one SimpleFIN connection: each account names
        // its own bank, under its own name.
        let listed: Vec<(&str, &str)> = accounts["accounts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| {
                (
                    a["name"].as_str().unwrap(),
                    a["institution_name"].as_str().unwrap(),
                )
            })
            .collect();
        assert!(
            listed.contains(&("The Bank", "The Bank of Go")),
            "{listed:?}"
        );
        assert!(
            listed.contains(&("My Checking", "Investments")),
            "{listed:?}"
        );
        assert!(
            listed.contains(&("PRIME SAVINGS", "The Bank of Go")),
            "{listed:?}"
        );
        assert!(listed.iter().all(|(_, bank)| *bank != "SimpleFIN"));
        server.stop().await;
    }
}

#[actix_web::test]
async fn a_gocardless_bank_is_found_by_country_and_connected_through_the_banks_own_page() {
    for database in TestDatabase::all() {
        eprintln!("-- on {:?}", database.backend());
        let (api, connector) = gocardless_connector().await;
        let (server, outbox) =
            start_platform_with_pages_and(database, vec![connector], |parts| parts);
        let browser = Browser::new(&server);
        let banks = sign_in(&browser, &outbox, &server.app_a, "eu@example.com").await;
        banks.assert_shows("GoCardless Bank Account Data");
        let picker = browser.get("/connect/banks/gocardless").await;
        picker.assert_shows("<option value=\"DE\">DE</option>");
        let found = browser
            .get("/connect/banks/gocardless?country=de&q=n26")
            .await;
        found.assert_shows("N26 Bank");
        found.assert_shows("name=\"institution_id\" value=\"N26_NTSBDEB1\"");
        let none = browser
            .get("/connect/banks/gocardless?country=DE&q=nonesuch")
            .await;
        none.assert_shows("No bank in DE matches");

        // Picking the bank sends the person to the bank's own page…
        browser
            .to_gocardless_bank(&found, "/connect/banks/gocardless", "N26_NTSBDEB1")
            .await;
        assert_eq!(
            gocardless_requisitions(&api).await[0]["redirect"],
            format!("{}/connect/gocardless/return", server.base_url)
        );
        // …who comes back to Tributary, where the first sync runs.
        let progress = browser.get("/connect/gocardless/return").await;
        assert!(
            progress.location.starts_with("/connect/progress/"),
            "{}",
            progress.location
        );
        let progress = browser.until_synced(progress).await;
        assert!(progress.accounts_found() >= 1, "{}", progress.body);
        // Coming back twice starts nothing new.
        assert_eq!(
            browser.get("/connect/gocardless/return").await.location,
            "/connect/banks"
        );
        server.stop().await;
    }
}

#[actix_web::test]
async fn an_enable_banking_bank_is_found_consented_to_and_returns_with_its_code() {
    for database in TestDatabase::all() {
        eprintln!("-- on {:?}", database.backend());
        let fake = EnableBankingFake::start().await;
        let connector = fake.dyn_connector(Duration::from_secs(10));
        let (server, outbox) =
            start_platform_with_pages_and(database, vec![connector], |parts| parts);
        let browser = Browser::new(&server);
        let banks = sign_in(&browser, &outbox, &server.app_a, "fi@example.com").await;
        banks.assert_shows("Enable Banking");
        let found = browser
            .get("/connect/banks/enablebanking?country=fi&q=nord")
            .await;
        found.assert_shows("Nordea");
        found.assert_shows("name=\"institution_id\" value=\"FI/Nordea\"");
        assert!(!found.body.contains("S-Pankki"), "searched by name");
        // The page loads the logos of the banks it shows, from where they
        // are, and its form may lead on to the bank.
        let policy = browser
            .client
            .get(server.url("/connect/banks/enablebanking?country=fi&q=nord"))
            .send()
            .await
            .unwrap()
            .headers()["content-security-policy"]
            .to_str()
            .unwrap()
            .to_owned();
        assert!(policy.contains("; form-action 'self' https:"), "{policy}");
        assert!(
            policy.ends_with("; img-src https://enablebanking.com"),
            "{policy}"
        );

        // Picking the bank sends the person to the bank's page…
        let to_bank = browser
            .submit(
                &found,
                "/connect/banks/enablebanking",
                &[("institution_id", "FI/Nordea")],
            )
            .await;
        assert!(
            to_bank.location.starts_with(&fake.server.uri()),
            "{}: {}",
            to_bank.location,
            to_bank.body
        );
        // …which sends them back with a code, to Tributary's return page.
        let at_the_bank = Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap()
            .get(&to_bank.location)
            .send()
            .await
            .unwrap();
        let back = at_the_bank.headers()["location"]
            .to_str()
            .unwrap()
            .to_owned();
        let back_path = back
            .strip_prefix(&server.base_url)
            .unwrap_or_else(|| panic!("the bank returns to Tributary: {back}"))
            .to_owned();
        assert!(back_path.starts_with("/connect/enablebanking/return?code="));
        let progress = browser.get(&back_path).await;
        assert!(
            progress.location.starts_with("/connect/progress/"),
            "{}: {}",
            progress.location,
            progress.body
        );
        let progress = browser.until_synced(progress).await;
        assert_eq!(progress.accounts_found(), 2, "{}", progress.body);
        progress.assert_shows("Everyday account");
        // The same return again starts nothing.
        assert_eq!(browser.get(&back_path).await.location, "/connect/banks");
        server.stop().await;
    }
}

#[actix_web::test]
async fn a_truelayer_bank_is_found_by_country_consented_to_and_returns_with_its_code() {
    for database in TestDatabase::all() {
        eprintln!("-- on {:?}", database.backend());
        let fake = TrueLayerFake::start().await;
        let connector = fake.connector(Duration::from_secs(10));
        let (server, outbox) =
            start_platform_with_pages_and(database, vec![connector], |parts| parts);
        let browser = Browser::new(&server);
        let banks = sign_in(&browser, &outbox, &server.app_a, "gb@example.com").await;
        banks.assert_shows("TrueLayer");
        // TrueLayer's `uk` banks are the United Kingdom's.
        let found = browser
            .get("/connect/banks/truelayer?country=GB&q=llo")
            .await;
        found.assert_shows("Lloyds");
        found.assert_shows("name=\"institution_id\" value=\"ob-lloyds\"");
        assert!(!found.body.contains("Monzo"), "searched by name");
        assert!(!found.body.contains("AIB"), "another country's");

        // Picking the bank sends the person to TrueLayer's page…
        let to_bank = browser
            .submit(
                &found,
                "/connect/banks/truelayer",
                &[("institution_id", "ob-lloyds")],
            )
            .await;
        assert!(
            to_bank.location.starts_with(&fake.server.uri()),
            "{}: {}",
            to_bank.location,
            to_bank.body
        );
        // …which sends them back with a code, to Tributary's return page.
        let back = tributary_e2e::fakes::sent_back_from(&to_bank.location).await;
        let back_path = back
            .strip_prefix(&server.base_url)
            .unwrap_or_else(|| panic!("TrueLayer returns to Tributary: {back}"))
            .to_owned();
        assert!(back_path.starts_with("/connect/truelayer/return?code="));
        let progress = browser.get(&back_path).await;
        assert!(
            progress.location.starts_with("/connect/progress/"),
            "{}: {}",
            progress.location,
            progress.body
        );
        let progress = browser.until_synced(progress).await;
        assert_eq!(progress.accounts_found(), 2, "{}", progress.body);
        progress.assert_shows("Club Lloyds");
        // The client's secret and the tokens are nowhere in plain text.
        let stored = dump(server.database.db());
        for secret in [tributary_e2e::truelayer::CLIENT_SECRET, "refresh_token"] {
            assert!(!stored.contains(secret), "{secret}");
        }
        server.stop().await;
    }
}

#[actix_web::test]
async fn a_consent_cancelled_at_the_bank_is_explained() {
    let fake = EnableBankingFake::start().await;
    let connector = fake.dyn_connector(Duration::from_secs(10));
    let (server, outbox) =
        start_platform_with_pages_and(TestDatabase::sqlite(), vec![connector], |parts| parts);
    let browser = Browser::new(&server);
    sign_in(&browser, &outbox, &server.app_a, "no@example.com").await;
    let found = browser.get("/connect/banks/enablebanking?country=FI").await;
    let to_bank = browser
        .submit(
            &found,
            "/connect/banks/enablebanking",
            &[("institution_id", "FI/Nordea")],
        )
        .await;
    let cancelled = Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
        .get(format!("{}&deny=1", to_bank.location))
        .send()
        .await
        .unwrap();
    let back = cancelled.headers()["location"].to_str().unwrap().to_owned();
    let page = browser
        .get(back.strip_prefix(&server.base_url).unwrap())
        .await;
    assert_eq!(page.status, StatusCode::BAD_REQUEST);
    page.assert_shows("Cancelled by user");
    server.stop().await;
}

#[actix_web::test]
async fn a_plaid_bank_is_connected_on_plaids_hosted_pages() {
    for database in TestDatabase::all() {
        eprintln!("-- on {:?}", database.backend());
        let fake = PlaidFake::start().await;
        let connector = fake.connector(Duration::from_secs(10));
        let (server, outbox) =
            start_platform_with_pages_and(database, vec![connector], |parts| parts);
        let browser = Browser::new(&server);
        let banks = sign_in(&browser, &outbox, &server.app_a, "us@example.com").await;
        banks.assert_shows("Plaid");
        let progress = on_their_pages(&browser, &server, "plaid", &fake.server.uri()).await;
        assert_eq!(progress.accounts_found(), 3, "{}", progress.body);
        progress.assert_shows("Plaid 401k");
        server.stop().await;
    }
}

#[actix_web::test]
async fn a_brokerage_is_connected_in_snaptrades_portal() {
    for database in TestDatabase::all() {
        eprintln!("-- on {:?}", database.backend());
        let fake = SnapTradeFake::start().await;
        let connector = fake.connector(Duration::from_secs(10));
        let (server, outbox) =
            start_platform_with_pages_and(database, vec![connector], |parts| parts);
        let browser = Browser::new(&server);
        let banks = sign_in(&browser, &outbox, &server.app_a, "investor@example.com").await;
        banks.assert_shows("SnapTrade");
        let progress = on_their_pages(&browser, &server, "snaptrade", &fake.server.uri()).await;
        assert_eq!(progress.accounts_found(), 1, "{}", progress.body);
        progress.assert_shows("Robinhood Individual");
        assert_eq!(fake.refused(), 0);
        server.stop().await;
    }
}

/// Connects through an aggregator whose user chooses the bank on its own
/// pages (`key`: plaid, snaptrade; `pages`: where they are): the form
/// with nothing to fill, the aggregator's pages, the return, and the first
/// sync's progress page once it is done.
async fn on_their_pages(
    browser: &Browser,
    server: &tributary_e2e::platform::PlatformServer,
    key: &str,
    pages: &str,
) -> tributary_e2e::browser::Page {
    let action = format!("/connect/banks/{key}");
    let form = browser.get(&action).await;
    form.assert_shows("brings you back here");
    let away = browser.submit(&form, &action, &[]).await;
    assert!(
        away.location.starts_with(pages),
        "{}: {}",
        away.location,
        away.body
    );
    let back = tributary_e2e::fakes::sent_back_from(&away.location).await;
    let return_page = format!("/connect/{key}/return");
    assert_eq!(back, format!("{}{return_page}", server.base_url));
    let progress = browser.get(&return_page).await;
    assert!(
        progress.location.starts_with("/connect/progress/"),
        "{}: {}",
        progress.location,
        progress.body
    );
    browser.until_synced(progress).await
}

#[actix_web::test]
async fn an_akahu_personal_app_connects_with_its_tokens() {
    for database in TestDatabase::all() {
        eprintln!("-- on {:?}", database.backend());
        let fake = AkahuFake::start().await;
        let connector = fake.connector(Duration::from_secs(10), false);
        let (server, outbox) =
            start_platform_with_pages_and(database, vec![connector], |parts| parts);
        let browser = Browser::new(&server);
        let banks = sign_in(&browser, &outbox, &server.app_a, "kiwi@example.com").await;
        banks.assert_shows("Akahu");
        let form = browser.get("/connect/banks/akahu").await;
        form.assert_shows("my.akahu.nz");
        // One token without the other: said, nothing connected.
        let half = browser
            .submit(
                &form,
                "/connect/banks/akahu",
                &[("app_token", PERSONAL_APP_TOKEN)],
            )
            .await;
        assert_eq!(half.status, StatusCode::BAD_REQUEST);
        half.assert_shows("Paste both tokens");
        // No tokens, and this server has no Akahu app: said plainly.
        let none = browser.submit(&form, "/connect/banks/akahu", &[]).await;
        assert_eq!(none.status, StatusCode::BAD_REQUEST);
        none.assert_shows("personal app");
        let progress = browser
            .submit(
                &form,
                "/connect/banks/akahu",
                &[
                    ("app_token", PERSONAL_APP_TOKEN),
                    ("user_token", PERSONAL_USER_TOKEN),
                ],
            )
            .await;
        let progress = browser.until_synced(progress).await;
        assert_eq!(progress.accounts_found(), 2, "{}", progress.body);
        progress.assert_shows("Westpac Choice");
        assert!(
            !dump(server.database.db()).contains(PERSONAL_USER_TOKEN),
            "the user token is sealed"
        );
        server.stop().await;
    }
}

#[actix_web::test]
async fn up_connects_with_a_personal_access_token_checked_at_once() {
    for database in TestDatabase::all() {
        eprintln!("-- on {:?}", database.backend());
        let fake = UpFake::start().await;
        let bank = TokenBank {
            name: "Up",
            id: "up",
            label: "Personal Access Token",
            secret_field: "token",
            token: tributary_e2e::up::TOKEN,
            wrong: "up:yeah:wrong",
            an_account: "Spending",
            accounts: 2,
            also: &[],
        };
        connects_with_a_token(database, fake.connector(Duration::from_secs(10)), bank).await;
    }
}

#[actix_web::test]
async fn starling_connects_with_a_personal_access_token_checked_at_once() {
    for database in TestDatabase::all() {
        eprintln!("-- on {:?}", database.backend());
        let fake = StarlingFake::start().await;
        let bank = TokenBank {
            name: "Starling Bank",
            id: "starling",
            label: "Personal access token",
            secret_field: "token",
            token: tributary_e2e::starling::TOKEN,
            wrong: "not-a-token",
            an_account: "Personal",
            accounts: 2,
            also: &[],
        };
        connects_with_a_token(database, fake.connector(Duration::from_secs(10)), bank).await;
    }
}

#[actix_web::test]
async fn bunq_connects_with_an_api_key_checked_at_once() {
    for database in TestDatabase::all() {
        eprintln!("-- on {:?}", database.backend());
        let fake = BunqFake::start().await;
        let bank = TokenBank {
            name: "bunq",
            id: "bunq",
            label: "API key",
            secret_field: "token",
            token: tributary_e2e::bunq::API_KEY,
            wrong: "sandbox_wrong",
            an_account: "Main",
            accounts: 2,
            also: &[],
        };
        connects_with_a_token(database, fake.connector(Duration::from_secs(10)), bank).await;
    }
}

#[actix_web::test]
async fn teller_connects_with_an_enrollments_access_token_over_mtls() {
    for database in TestDatabase::all() {
        eprintln!("-- on {:?}", database.backend());
        let fake = TellerFake::start().await;
        let bank = TokenBank {
            name: "Teller",
            id: "teller",
            label: "Teller access token",
            secret_field: "token",
            token: tributary_e2e::teller::TOKEN,
            wrong: "token_wrong",
            an_account: "Total Checking",
            accounts: 3,
            also: &[],
        };
        connects_with_a_token(database, fake.connector(Duration::from_secs(10)), bank).await;
    }
}

#[actix_web::test]
async fn pluggy_connects_with_a_persons_own_application_and_item() {
    for database in TestDatabase::all() {
        eprintln!("-- on {:?}", database.backend());
        let fake = PluggyFake::start().await;
        let bank = TokenBank {
            name: "Pluggy",
            id: "pluggy",
            label: "Pluggy item id",
            secret_field: "client_secret",
            token: tributary_e2e::pluggy::CLIENT_SECRET,
            wrong: "not-the-secret",
            an_account: "NuConta",
            accounts: 4,
            also: &[
                ("client_id", tributary_e2e::pluggy::CLIENT_ID),
                ("item_id", tributary_e2e::pluggy::ITEM_ID),
            ],
        };
        connects_with_a_token(database, fake.connector(Duration::from_secs(10)), bank).await;
    }
}

#[actix_web::test]
async fn interactive_brokers_connects_with_a_flex_token_and_query() {
    for database in TestDatabase::all() {
        eprintln!("-- on {:?}", database.backend());
        let fake = IbkrFake::start().await;
        let bank = TokenBank {
            name: "Interactive Brokers",
            id: "ibkr",
            label: "Flex query id",
            secret_field: "token",
            token: tributary_e2e::ibkr::TOKEN,
            wrong: "285716543219876543210000",
            an_account: "Main",
            accounts: 2,
            also: &[("query_id", tributary_e2e::ibkr::QUERY_ID)],
        };
        connects_with_a_token(database, fake.connector(Duration::from_secs(10)), bank).await;
    }
}

/// A bank connected with the person's own token, and what its fake serves.
struct TokenBank {
    name: &'static str,
    id: &'static str,
    label: &'static str,
    /// The form field the secret goes in.
    secret_field: &'static str,
    token: &'static str,
    wrong: &'static str,
    an_account: &'static str,
    /// How many accounts its fake serves.
    accounts: u64,
    /// The form's other fields.
    also: &'static [(&'static str, &'static str)],
}

/// The bank is offered; a token it refuses is said at once and connects
/// nothing; its token connects two accounts and is sealed.
async fn connects_with_a_token(
    database: TestDatabase,
    connector: std::sync::Arc<dyn tributary_providers::Connector>,
    bank: TokenBank,
) {
    let (server, outbox) = start_platform_with_pages_and(database, vec![connector], |parts| parts);
    let browser = Browser::new(&server);
    let banks = sign_in(&browser, &outbox, &server.app_a, "person@example.com").await;
    banks.assert_shows(bank.name);
    let form_path = format!("/connect/banks/{}", bank.id);
    let form = browser.get(&form_path).await;
    form.assert_shows(bank.label);
    // A token the bank does not accept: said at once, nothing connected.
    let fields = |token| [&[(bank.secret_field, token)], bank.also].concat();
    let wrong = browser.submit(&form, &form_path, &fields(bank.wrong)).await;
    assert_eq!(wrong.status, StatusCode::BAD_REQUEST, "{}", wrong.body);
    wrong.assert_shows("did not accept these details");
    let progress = browser.submit(&form, &form_path, &fields(bank.token)).await;
    let progress = browser.until_synced(progress).await;
    assert_eq!(
        progress.accounts_found(),
        bank.accounts,
        "{}",
        progress.body
    );
    progress.assert_shows(bank.an_account);
    assert!(
        !dump(server.database.db()).contains(bank.token),
        "the token is sealed"
    );
    server.stop().await;
}
