//! The browser flow and the Personal dashboard in headless Chromium, driven
//! over WebDriver (chromedriver) with fantoccini: a person fills and clicks
//! the real pages of the real servers. Every page of ours is checked with
//! axe-core (WCAG 2.2 A and AA: contrast, labels, names, keyboard access)
//! as Chromium rendered it, and a screenshot of each step goes to
//! `target/browser-screenshots/` (docs/platform.md and docs/dashboard.md
//! show them).
//!
//! Needs Debian's `chromium` and `chromium-driver`, and npm (axe-core is
//! installed from npm on first use). Without the browser the test says so
//! and passes, unless `TRIBUTARY_REQUIRE_BROWSER=1` (CI sets it), which
//! turns the skip into a failure.

// Test code: a failed unwrap is a failed test, with its message.
#![allow(clippy::unwrap_used)]

use actix_web::{App, HttpResponse, HttpServer, web};
use fantoccini::{Client, ClientBuilder, Locator};
use hyper_util::client::legacy::connect::HttpConnector;
use reqwest::Method;
use serde_json::Value;
use std::io::{BufRead, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;
use tributary_domain::clock::Clock;
use tributary_e2e::platform::start_platform_with_pages_and;
use tributary_outbound::PrivateAllowance;
use tributary_storage::apps;
use tributary_storage::testing::TestDatabase;

const CHROMIUM: &str = "/usr/bin/chromium";
const CHROMEDRIVER: &str = "/usr/bin/chromedriver";

/// chromedriver on a free port, killed on drop.
struct Driver {
    child: Child,
    url: String,
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts chromedriver and returns once it says it listens.
fn start_driver() -> Option<Driver> {
    let required = std::env::var("TRIBUTARY_REQUIRE_BROWSER").is_ok_and(|v| v == "1");
    let missing: Vec<&str> = [CHROMIUM, CHROMEDRIVER]
        .into_iter()
        .filter(|p| !Path::new(p).exists())
        .collect();
    if !missing.is_empty() {
        assert!(
            !required,
            "the browser test is required (TRIBUTARY_REQUIRE_BROWSER=1) but {missing:?} are not installed: apt-get install chromium chromium-driver"
        );
        // Straight to stderr: libtest hides `eprintln!` of a passing test.
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED: the Chromium test: {missing:?} not installed (apt-get install chromium chromium-driver; TRIBUTARY_REQUIRE_BROWSER=1 makes this a failure)"
        );
        return None;
    }
    // Port 0: chromedriver takes a free port and says which, so no other
    // process can take it between a probe and the start.
    let child = Command::new(CHROMEDRIVER)
        .arg("--port=0")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start chromedriver");
    let mut driver = Driver {
        url: String::new(),
        child,
    };
    let stdout = driver.child.stdout.take().unwrap();
    let (ports, port) = std::sync::mpsc::channel();
    // Reads its output to the end, so it never blocks on a full pipe.
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if let Some(number) = line.split("started successfully on port ").nth(1) {
                let _ = ports.send(number.trim_end_matches('.').parse::<u16>());
            }
        }
    });
    let port = port
        .recv_timeout(Duration::from_secs(60))
        .expect("chromedriver says on which port it started")
        .expect("a port number");
    driver.url = format!("http://127.0.0.1:{port}");
    Some(driver)
}

async fn open_browser(driver: &Driver, profile: &Path) -> Client {
    let capabilities: serde_json::Map<String, Value> = serde_json::from_value(serde_json::json!({
        "browserName": "chrome",
        "goog:chromeOptions": {
            "binary": CHROMIUM,
            "args": [
                "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--window-size=900,1100", format!("--user-data-dir={}", profile.display()),
            ],
        },
    }))
    .unwrap();
    ClientBuilder::new(HttpConnector::new())
        .capabilities(capabilities)
        .connect(&driver.url)
        .await
        .expect("a Chromium session")
}

fn screenshot_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/browser-screenshots");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Saves a screenshot of the page as `name`.png, `name` being
/// `surface/page` (`dashboard/03-overview-desktop`): the folder of
/// docs/images it belongs in (`make screenshots` copies them there).
async fn screenshot(browser: &Client, name: &str) {
    let png = browser.screenshot().await.unwrap();
    assert!(png.starts_with(b"\x89PNG"), "a PNG screenshot");
    let path = screenshot_dir().join(format!("{name}.png"));
    if let Some(folder) = path.parent() {
        std::fs::create_dir_all(folder).unwrap();
    }
    std::fs::write(path, png).unwrap();
}

/// One of Tributary's pages: checked by axe, then saved as `name`.png.
async fn shoot(browser: &Client, name: &str) {
    assert_accessible(browser, name).await;
    screenshot(browser, name).await;
}

/// The accessibility engine the pages are checked with, from npm. Pinned,
/// so a new rule in a later release cannot turn CI red on its own.
const AXE_CORE: &str = "axe-core@4.14.1";

/// axe-core's script, installed with npm into the test's temporary
/// directory on first use (once per test binary).
fn axe_script() -> &'static str {
    static SCRIPT: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    SCRIPT.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("axe-core");
        let script = dir.join("node_modules/axe-core/axe.min.js");
        if !script.exists() {
            let status = Command::new("npm")
                .args(["install", "--no-save", "--no-audit", "--no-fund", "--silent"])
                .arg("--prefix")
                .arg(&dir)
                .arg(AXE_CORE)
                .status()
                .unwrap_or_else(|e| {
                    panic!("the accessibility check installs {AXE_CORE} with npm (apt-get install npm): {e}")
                });
            assert!(status.success(), "npm install {AXE_CORE}: {status}");
        }
        std::fs::read_to_string(&script)
            .unwrap_or_else(|e| panic!("{}: {e}", script.display()))
    })
}

/// Runs axe's WCAG 2.2 A and AA rules (colour contrast, labels, names,
/// `lang`, landmarks, ...) on the page as Chromium rendered it, at the
/// window's current width; fails naming each violation and its elements.
async fn assert_accessible(browser: &Client, name: &str) {
    browser.execute(axe_script(), Vec::new()).await.unwrap();
    let violations = browser
        .execute_async(
            r#"const done = arguments[arguments.length - 1];
axe.run(document, {runOnly: {type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa']}})
  .then(result => done(result.violations.map(v =>
    `${v.id} (${v.impact}): ${v.help}: ` + v.nodes.map(n => n.target.join(' ') + ' ' + (n.failureSummary || '')).join(' | '))))
  .catch(err => done([`axe did not run: ${err}`]));"#,
            Vec::new(),
        )
        .await
        .unwrap();
    let violations = violations.as_array().expect("axe answers a list");
    assert!(
        violations.is_empty(),
        "{name}: {} accessibility violation(s):\n{}",
        violations.len(),
        violations
            .iter()
            .map(|v| v.as_str().unwrap_or_default())
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// From an authorization link's sign-in page (its address filled in as
/// `email`): the mailed code, the sandbox bank as `user_good`, the accounts
/// found, and consent; returns once the browser is on its way back.
async fn sign_in_connect_and_approve(
    browser: &Client,
    outbox: &tributary_notify::mail::DevOutbox,
    email: &str,
) {
    wait_for(browser, "send-code").await;
    fill(browser, "email", email).await;
    click(browser, "send-code").await;
    wait_for(browser, "verify").await;
    let code = outbox.last_to(email).unwrap().subject[..6].to_owned();
    fill(browser, "code", &code).await;
    click(browser, "verify").await;
    wait_for(browser, "bank-sandbox").await;
    click(browser, "bank-sandbox").await;
    wait_for(browser, "username").await;
    fill(browser, "username", "user_good").await;
    click(browser, "connect").await;
    wait_for(browser, "continue").await;
    click(browser, "continue").await;
    wait_for(browser, "approve").await;
    click(browser, "approve").await;
}

/// Checks the page at desktop and phone width and saves both as
/// `{name}-desktop.png` and `{name}-phone.png`.
async fn shoot_both_widths(browser: &Client, name: &str) {
    for (width, label) in [(1280, "desktop"), (390, "phone")] {
        browser.set_window_size(width, 1100).await.unwrap();
        // The whole page, not the first screenful: as tall as its content
        // (bounded, for the longest listings).
        let height = browser
            .execute("return document.documentElement.scrollHeight;", Vec::new())
            .await
            .unwrap()
            .as_u64()
            .unwrap_or(1100)
            .clamp(600, 4000);
        browser
            .set_window_size(width, u32::try_from(height).unwrap_or(1100))
            .await
            .unwrap();
        shoot(browser, &format!("{name}-{label}")).await;
    }
    browser.set_window_size(1280, 1100).await.unwrap();
}

async fn fill(browser: &Client, id: &str, text: &str) {
    let field = browser.find(Locator::Id(id)).await.unwrap();
    field.clear().await.unwrap();
    field.send_keys(text).await.unwrap();
}

async fn click(browser: &Client, id: &str) {
    browser
        .find(Locator::Id(id))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
}

/// Waits, as a person would, for an element the next page shows.
async fn wait_for(browser: &Client, id: &str) {
    browser
        .wait()
        .at_most(Duration::from_secs(60))
        .for_element(Locator::Id(id))
        .await
        .unwrap_or_else(|err| panic!("#{id} never appeared: {err}"));
}

/// The `href` of the element `id`, as the page has it (path and query).
async fn href_of(browser: &Client, id: &str) -> String {
    browser
        .find(Locator::Id(id))
        .await
        .unwrap()
        .attr("href")
        .await
        .unwrap()
        .unwrap_or_else(|| panic!("#{id} has no href"))
}

/// The page is an error page that kept its surface's navigation
/// (`nav_marker`, an element id only that navigation has) and offers a
/// way back to `back`.
async fn assert_error_page(browser: &Client, nav_marker: &str, back: &str) {
    wait_for(browser, "go-back").await;
    assert!(
        browser.find(Locator::Css("main .problem")).await.is_ok(),
        "an error page"
    );
    assert!(
        browser.find(Locator::Id(nav_marker)).await.is_ok(),
        "the error page keeps the navigation (#{nav_marker})"
    );
    assert_eq!(href_of(browser, "go-back").await, back);
}

/// The path and query the browser is at.
async fn here(browser: &Client) -> String {
    let url = browser.current_url().await.unwrap();
    match url.query() {
        Some(query) => format!("{}?{query}", url.path()),
        None => url.path().to_owned(),
    }
}

/// Follows the first link matching `css` to the page that asks first
/// (its button `confirm`), saves it as `shot` at both widths, keeps the
/// thing ("Keep it" back to where the link was), then follows the link
/// again and confirms; returns once the answer's `then` shows.
async fn ask_keep_then_confirm(browser: &Client, css: &str, confirm: &str, shot: &str, then: &str) {
    let list = here(browser).await;
    let link = browser.find(Locator::Css(css)).await.unwrap();
    let asking = link.attr("href").await.unwrap().unwrap();
    link.click().await.unwrap();
    wait_for(browser, confirm).await;
    assert_eq!(
        here(browser).await,
        asking,
        "the link opens a page that asks"
    );
    shoot_both_widths(browser, shot).await;
    click(browser, "keep").await;
    browser
        .wait()
        .at_most(Duration::from_secs(60))
        .for_element(Locator::Css(&format!("a[href='{asking}']")))
        .await
        .unwrap_or_else(|err| panic!("kept, {asking} is still offered on {list}: {err}"));
    browser
        .find(Locator::Css(&format!("a[href='{asking}']")))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    wait_for(browser, confirm).await;
    click(browser, confirm).await;
    wait_for(browser, then).await;
    assert!(
        browser
            .find(Locator::Css(&format!("a[href='{asking}']")))
            .await
            .is_err(),
        "done, {asking} is offered no more"
    );
}

/// From a SimpleFIN setup token's page, back to the list (the portal's or
/// the dashboard's), where revoking the app asks first (saved as `shot`).
async fn back_and_revoke_the_budgeting_app(browser: &Client, shot: &str) {
    click(browser, "done").await;
    wait_for(browser, "create-simplefin").await;
    ask_keep_then_confirm(
        browser,
        "#simplefin a[id^='revoke-']",
        "revoke",
        shot,
        "create-simplefin",
    )
    .await;
    assert!(browser.source().await.unwrap().contains("revoked"));
}

/// The integrator's site: its callback page just says the person is back.
fn start_integrator_site() -> (String, actix_web::dev::ServerHandle) {
    serve_on_loopback(
        "/callback",
        "text/html; charset=utf-8",
        "<!doctype html><title>Budget app</title><h1 id=\"back\">Welcome back to the budget app</h1>".into(),
    )
}

/// A server on loopback answering `path` with `body`; its address.
fn serve_on_loopback(
    path: &'static str,
    content_type: &'static str,
    body: String,
) -> (String, actix_web::dev::ServerHandle) {
    let server = HttpServer::new(move || {
        let body = body.clone();
        App::new().route(
            path,
            web::get().to(move || {
                let body = body.clone();
                async move { HttpResponse::Ok().content_type(content_type).body(body) }
            }),
        )
    })
    .workers(1)
    .bind("127.0.0.1:0")
    .unwrap();
    let port = server.addrs()[0].port();
    let server = server.run();
    let handle = server.handle();
    actix_web::rt::spawn(server);
    (format!("http://127.0.0.1:{port}{path}"), handle)
}

#[actix_web::test]
async fn a_person_connects_the_sandbox_bank_in_headless_chromium() {
    let Some(driver) = start_driver() else { return };
    for database in TestDatabase::all() {
        let _ = writeln!(std::io::stderr(), "-- on {:?}", database.backend());
        walk_through(&driver, database).await;
    }
}

/// Sign-in, bank connection, consent and the portal (a budgeting app let
/// in and revoked after a page that asks first; an error page with the
/// app's header and a way back, and one once the session is gone),
/// clicked through in Chromium against a Platform server on `database`.
async fn walk_through(driver: &Driver, database: TestDatabase) {
    // The banks a default server offers (GoCardless needs the operator's
    // credentials): the sandbox and SimpleFIN, whose blocking HTTP client
    // is made off the async runtime.
    let simplefin =
        tributary_e2e::fakes::simplefin_connector(Duration::from_secs(30), PrivateAllowance::All);
    let (server, outbox) = start_platform_with_pages_and(database, vec![simplefin], |parts| parts);
    let (callback, site) = start_integrator_site();
    apps::add_redirect_uri(
        &mut server.database.db().conn().unwrap(),
        server.app_a.record.id,
        &callback,
        server.clock.now().naive_utc(),
    )
    .unwrap();
    let profile = tempfile::tempdir().unwrap();
    let browser = open_browser(driver, profile.path()).await;

    let mut authorize = url::Url::parse(&server.url("/api/platform/oauth/authorize")).unwrap();
    authorize
        .query_pairs_mut()
        .append_pair("client_id", server.app_a.client_id())
        .append_pair("redirect_uri", &callback)
        .append_pair("state", "chromium-state")
        .append_pair("email", "reader@example.com");
    browser.goto(authorize.as_str()).await.unwrap();
    wait_for(&browser, "send-code").await;
    let prefilled = browser
        .find(Locator::Id("email"))
        .await
        .unwrap()
        .prop("value")
        .await
        .unwrap();
    assert_eq!(prefilled.as_deref(), Some("reader@example.com"));
    shoot_both_widths(&browser, "browser-flow/01-sign-in").await;
    click(&browser, "send-code").await;

    wait_for(&browser, "verify").await;
    let code = outbox.last_to("reader@example.com").unwrap().subject[..6].to_owned();
    fill(&browser, "code", &code).await;
    shoot_both_widths(&browser, "browser-flow/02-code").await;
    click(&browser, "verify").await;

    wait_for(&browser, "bank-sandbox").await;
    assert!(
        browser.find(Locator::Id("bank-simplefin")).await.is_ok(),
        "SimpleFIN is offered as on a default server"
    );
    shoot_both_widths(&browser, "browser-flow/03-banks").await;
    click(&browser, "bank-sandbox").await;

    wait_for(&browser, "username").await;
    fill(&browser, "username", "user_good").await;
    fill(&browser, "password", "any password").await;
    shoot_both_widths(&browser, "browser-flow/04-sandbox-sign-in").await;
    click(&browser, "connect").await;

    // The progress page refreshes itself until the first sync has ended.
    wait_for(&browser, "continue").await;
    let found = browser
        .find(Locator::Id("found"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(found.starts_with("Found "), "{found}");
    let found_all: u64 = found.split(' ').nth(1).unwrap().parse().unwrap();
    shoot_both_widths(&browser, "browser-flow/05-accounts-found").await;

    // The person shares all but the second account the bank has.
    click(&browser, "choose-accounts").await;
    wait_for(&browser, "share-accounts").await;
    let left_out = browser
        .find(Locator::Css("label[for='share-2']"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    click(&browser, "share-2").await;
    shoot_both_widths(&browser, "browser-flow/05-choose-accounts").await;
    click(&browser, "share-accounts").await;
    wait_for(&browser, "continue").await;
    let found = browser
        .find(Locator::Id("found"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert_eq!(found, format!("Found {} accounts:", found_all - 1));
    click(&browser, "continue").await;

    wait_for(&browser, "approve").await;
    shoot_both_widths(&browser, "browser-flow/06-consent").await;
    click(&browser, "approve").await;

    wait_for(&browser, "back").await;
    // The integrator's own page: not Tributary's to check.
    screenshot(&browser, "browser-flow/07-back-at-the-app").await;
    let landed = browser.current_url().await.unwrap();
    assert!(landed.as_str().starts_with(&callback), "{landed}");
    let query: std::collections::HashMap<_, _> = landed.query_pairs().into_owned().collect();
    assert_eq!(query["state"], "chromium-state");

    // The integrator redeems the code and reads what the person connected.
    let access = server
        .redeem_code(&server.app_a, &callback, &query["code"])
        .await;
    let accounts = server
        .bearer_json(Method::GET, "/api/platform/v1/accounts", &access)
        .await;
    assert_eq!(accounts["total"], found_all - 1, "{accounts}");
    let left_out_name = left_out
        .split(" (")
        .next()
        .unwrap()
        .split(" ····")
        .next()
        .unwrap();
    assert!(
        accounts["accounts"]
            .as_array()
            .unwrap()
            .iter()
            .all(|a| a["name"] != left_out_name),
        "{left_out_name} was left out: {accounts}"
    );

    // The portal, from a link the app asks for.
    let portal = server
        .bearer_json(Method::POST, "/api/platform/v1/portal_sessions", &access)
        .await;
    let link = portal["url"].as_str().unwrap();
    browser
        .goto(&server.url(&link[link.find("/portal/").unwrap()..]))
        .await
        .unwrap();
    wait_for(&browser, "add-bank").await;
    assert_eq!(browser.current_url().await.unwrap().path(), "/portal");
    shoot_both_widths(&browser, "browser-flow/08-portal").await;

    // A budgeting app let in, then revoked after a page that asks first.
    fill(&browser, "simplefin-name", "Actual Budget").await;
    click(&browser, "create-simplefin").await;
    wait_for(&browser, "setup-token").await;
    back_and_revoke_the_budgeting_app(&browser, "browser-flow/09-portal-revoke").await;

    // An error page keeps the app's header and leads back to the portal;
    // once the session is gone, the way to the portal is all it shows.
    browser
        .goto(&server.url("/connect/connections/999999/remove"))
        .await
        .unwrap();
    wait_for(&browser, "go-back").await;
    let header = browser
        .find(Locator::Css("header .for-app"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(header.contains(&server.app_a.record.name), "{header}");
    assert_eq!(href_of(&browser, "go-back").await, "/portal");
    shoot_both_widths(&browser, "browser-flow/10-portal-error").await;
    click(&browser, "go-back").await;
    wait_for(&browser, "add-bank").await;
    browser.delete_all_cookies().await.unwrap();
    browser.goto(&server.url("/portal")).await.unwrap();
    assert_error_page(&browser, "home", "/portal").await;
    shoot_both_widths(&browser, "browser-flow/11-portal-signed-out").await;

    browser.close().await.unwrap();
    site.stop(true).await;
    server.stop().await;
}

#[actix_web::test]
async fn a_person_reads_their_dashboard_in_headless_chromium() {
    let Some(driver) = start_driver() else { return };
    for database in TestDatabase::all() {
        let _ = writeln!(std::io::stderr(), "-- on {:?}", database.backend());
        dashboard_walk_through(&driver, database).await;
    }
}

/// The Personal dashboard clicked through: sign in with an e-mailed code,
/// the overview, an account with holdings and one searched, a bank's form,
/// a statement uploaded, a sync asked for and followed in place, the
/// re-authentication and disconnect pages, a connection removed, an API key
/// and a SimpleFIN setup token made (each for chosen accounts), sign out;
/// deleting the rule and revoking the key and the budgeting app each ask
/// first (kept, then confirmed); error pages (dates the wrong way round,
/// sync now twice, signed out) keep the navigation and lead back; each
/// page checked by axe and saved at desktop and phone width.
async fn dashboard_walk_through(driver: &Driver, database: TestDatabase) {
    let server = tributary_e2e::start(database);
    let world = &server.world;
    let profile = tempfile::tempdir().unwrap();
    let browser = open_browser(driver, profile.path()).await;
    /// Both widths the pages are checked at: desktop, then phone.
    async fn shoot_both(browser: &Client, name: &str) {
        shoot_both_widths(browser, &format!("dashboard/{name}")).await;
    }

    browser.goto(&server.url("/")).await.unwrap();
    wait_for(&browser, "how-to-sign-in").await;
    fill(&browser, "email", "alice@example.com").await;
    shoot_both(&browser, "01-signed-out").await;
    click(&browser, "send-code").await;
    wait_for(&browser, "code").await;
    shoot_both(&browser, "02-code").await;
    let code = tributary_e2e::browser::code_in(&server.outbox, "alice@example.com");
    fill(&browser, "code", &code).await;
    click(&browser, "verify").await;
    wait_for(&browser, "worth-title").await;
    assert_eq!(browser.current_url().await.unwrap().path(), "/");
    wait_for(&browser, &format!("account-{}", world.alice_imported)).await;
    assert_overview_answers(&browser).await;
    shoot_both(&browser, "03-overview").await;

    // An account with holdings, then one with many transactions, searched.
    click(&browser, &format!("open-{}", world.alice_brokerage)).await;
    wait_for(&browser, "holdings").await;
    shoot_both(&browser, "04-holdings").await;
    browser
        .goto(&server.url(&format!("/accounts/{}", world.alice_sandbox_accounts[0])))
        .await
        .unwrap();
    wait_for(&browser, "transactions").await;
    shoot_both(&browser, "05-account").await;
    let merchant = browser
        .find(Locator::Css("#transactions tbody strong"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    fill(&browser, "q", &merchant.to_lowercase()).await;
    click(&browser, "search").await;
    wait_for(&browser, "clear").await;
    let rows = browser
        .find_all(Locator::Css("#transactions tbody tr"))
        .await
        .unwrap();
    assert!(!rows.is_empty());
    for row in rows {
        let text = row.text().await.unwrap().to_lowercase();
        assert!(text.contains(&merchant.to_lowercase()), "{text}");
    }
    shoot_both(&browser, "06-search").await;

    // Dates the wrong way round: the error page keeps the navigation, and
    // "Go back" returns to the search it came from.
    let search = here(&browser).await;
    browser
        .execute(
            "document.getElementById('from').value = '2026-02-01'; document.getElementById('to').value = '2026-01-01';",
            Vec::new(),
        )
        .await
        .unwrap();
    click(&browser, "search").await;
    assert_error_page(&browser, "sign-out", &search).await;
    shoot_both(&browser, "06-error").await;
    click(&browser, "go-back").await;
    wait_for(&browser, "clear").await;
    assert_eq!(here(&browser).await, search);

    // "Always categorise…" on a row: the rules form, its merchant filled in.
    browser
        .find(Locator::Css("#transactions a.rule-link"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    wait_for(&browser, "new-rule").await;
    browser
        .find(Locator::Css(
            "#set-subcategory option[value='food_and_drink.cafes']",
        ))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    shoot_both(&browser, "06-rule-form").await;
    click(&browser, "create-rule").await;
    wait_for(&browser, "rules").await;
    shoot_both(&browser, "06-rules").await;
    // Deleting it asks first.
    ask_keep_then_confirm(
        &browser,
        "#rules a[id^='delete-']",
        "delete-rule",
        "dashboard/06-rule-delete",
        "no-rules",
    )
    .await;

    // A statement uploaded from the bank list.
    browser
        .find(Locator::LinkText("Add a bank"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    wait_for(&browser, "bank-upload").await;
    shoot_both(&browser, "07-add-bank").await;
    click(&browser, "bank-sandbox").await;
    wait_for(&browser, "username").await;
    shoot_both(&browser, "08-bank-form").await;
    // Alice's sandbox login again: offered to be signed in to again, and
    // connecting it again adds no account twice.
    wait_for(&browser, "already-connected").await;
    fill(&browser, "username", "user_good").await;
    fill(&browser, "password", "any").await;
    click(&browser, "connect").await;
    wait_for(&browser, "changed").await;
    browser.goto(&server.url("/")).await.unwrap();
    wait_for(&browser, "worth-title").await;
    let sandbox_accounts = browser
        .find_all(Locator::Css(&format!(
            "#connection-{} li.account",
            world.alice_sandbox_connection
        )))
        .await
        .unwrap()
        .len();
    assert_eq!(sandbox_accounts, world.alice_sandbox_accounts.len());
    let sandbox_connections = browser
        .find_all(Locator::Css("section.connection h3"))
        .await
        .unwrap()
        .len();
    assert_eq!(
        sandbox_connections, 2,
        "the sandbox and the statements, no third"
    );
    browser.goto(&server.url("/connect/banks")).await.unwrap();
    wait_for(&browser, "bank-upload").await;
    click(&browser, "bank-upload").await;
    wait_for(&browser, "files").await;
    let statement = std::fs::canonicalize(
        tributary_storage::testing::testdata_root().join("ofxparse/fixtures/checking.ofx"),
    )
    .unwrap();
    browser
        .find(Locator::Id("files"))
        .await
        .unwrap()
        .send_keys(statement.to_str().unwrap())
        .await
        .unwrap();
    click(&browser, "connect").await;
    wait_for(&browser, "import-summary").await;
    shoot_both(&browser, "09-import-summary").await;
    click(&browser, "continue").await;

    // Sync now, and the page that follows the sync.
    let sandbox = world.alice_sandbox_connection;
    wait_for(&browser, &format!("sync-{sandbox}")).await;
    click(&browser, &format!("sync-{sandbox}")).await;
    wait_for(&browser, "working").await;
    shoot_both(&browser, "10-sync").await;
    // The page updates itself in place once the sync has run: the mark set
    // on this document is still there when the accounts show.
    browser
        .execute("window.stillThisPage = true;", Vec::new())
        .await
        .unwrap();
    server.run_queued_jobs().await;
    wait_for(&browser, "found").await;
    assert_eq!(
        browser
            .execute("return window.stillThisPage === true;", Vec::new())
            .await
            .unwrap(),
        Value::Bool(true),
        "the progress page was updated in place, not reloaded"
    );
    shoot_both(&browser, "11-synced").await;
    // Sync now again at once: refused, on a page that keeps the
    // navigation and leads back to the overview.
    browser.goto(&server.url("/")).await.unwrap();
    wait_for(&browser, &format!("sync-{sandbox}")).await;
    click(&browser, &format!("sync-{sandbox}")).await;
    assert_error_page(&browser, "sign-out", "/").await;
    shoot_both(&browser, "11-sync-again").await;

    // Signing in to the bank again, and disconnecting, each on its page.
    browser
        .goto(&server.url(&format!("/connect/connections/{sandbox}/reauth")))
        .await
        .unwrap();
    wait_for(&browser, "username").await;
    shoot_both(&browser, "12-reauth").await;
    browser.goto(&server.url("/")).await.unwrap();
    click(&browser, &format!("disconnect-{sandbox}")).await;
    wait_for(&browser, "keep").await;
    shoot_both(&browser, "13-disconnect").await;
    click(&browser, "keep").await;

    // Removing a connection asks first.
    let imported = world.alice_imported_connection;
    browser.goto(&server.url("/")).await.unwrap();
    click(&browser, &format!("remove-{imported}")).await;
    wait_for(&browser, "remove").await;
    shoot_both(&browser, "14-remove").await;
    click(&browser, "remove").await;
    wait_for(&browser, "worth-title").await;
    assert!(
        !browser
            .source()
            .await
            .unwrap()
            .contains(&format!("connection-{imported}\""))
    );

    browser
        .find(Locator::LinkText("API keys"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    wait_for(&browser, "create-key").await;
    fill(&browser, "key-name", "Budget spreadsheet").await;
    click(
        &browser,
        &format!("scope-{}", world.alice_sandbox_accounts[0]),
    )
    .await;
    shoot_both(&browser, "15-keys").await;
    click(&browser, "create-key").await;
    wait_for(&browser, "api-key").await;
    let key = browser
        .find(Locator::Id("api-key"))
        .await
        .unwrap()
        .prop("value")
        .await
        .unwrap()
        .unwrap();
    assert!(key.starts_with("trb_"), "{key}");
    shoot_both(&browser, "16-key-created").await;
    // Revoking it asks first: kept, it reads; revoked, it no longer does.
    let reads = |key: String| {
        let url = server.url("/api/v1/accounts");
        async move {
            reqwest::Client::new()
                .get(url)
                .header("x-api-key", key)
                .send()
                .await
                .unwrap()
                .status()
        }
    };
    browser.goto(&server.url("/keys")).await.unwrap();
    wait_for(&browser, "create-key").await;
    let list = here(&browser).await;
    let link = browser
        .find(Locator::Css("a[id^='revoke-']"))
        .await
        .unwrap();
    let asking = link.attr("href").await.unwrap().unwrap();
    link.click().await.unwrap();
    wait_for(&browser, "revoke").await;
    shoot_both(&browser, "16-key-revoke").await;
    click(&browser, "keep").await;
    wait_for(&browser, "create-key").await;
    assert_eq!(here(&browser).await, list);
    assert_eq!(reads(key.clone()).await, reqwest::StatusCode::OK);
    browser.goto(&server.url(&asking)).await.unwrap();
    wait_for(&browser, "revoke").await;
    click(&browser, "revoke").await;
    wait_for(&browser, "create-key").await;
    assert_eq!(reads(key).await, reqwest::StatusCode::UNAUTHORIZED);

    browser
        .find(Locator::LinkText("Budgeting apps"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    wait_for(&browser, "create-simplefin").await;
    fill(&browser, "simplefin-name", "Actual Budget").await;
    click(
        &browser,
        &format!("scope-{}", world.alice_sandbox_accounts[1]),
    )
    .await;
    shoot_both(&browser, "17-budgeting-apps").await;
    click(&browser, "create-simplefin").await;
    wait_for(&browser, "setup-token").await;
    shoot_both(&browser, "18-setup-token").await;

    back_and_revoke_the_budgeting_app(&browser, "dashboard/18-budgeting-app-revoke").await;
    // Where a SimpleFIN app sends a person to make a token: a page like
    // the others, leading to Budgeting apps.
    browser
        .goto(&server.url("/simplefin/create"))
        .await
        .unwrap();
    wait_for(&browser, "budgeting-apps").await;
    shoot_both(&browser, "18-simplefin-create").await;
    click(&browser, "budgeting-apps").await;
    wait_for(&browser, "sign-out").await;
    click(&browser, "sign-out").await;
    wait_for(&browser, "how-to-sign-in").await;

    // Signed out, a dashboard page's error leads home (to sign in).
    browser.goto(&server.url("/keys")).await.unwrap();
    assert_error_page(&browser, "home", "/").await;
    shoot_both(&browser, "19-signed-out-error").await;
    click(&browser, "home").await;
    wait_for(&browser, "how-to-sign-in").await;
    browser.close().await.unwrap();
    server.stop().await;
}

/// The overview answers its three questions on the sandbox bank's data
/// (what a fresh demo holds): net worth written as money, with a chart of
/// at least twelve months whose points say their value when focused; last
/// month's spending by category; the bills coming.
async fn assert_overview_answers(browser: &Client) {
    let headline = browser
        .find(Locator::Css("#worth-USD .headline"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        headline.contains('$') && headline.contains(',') && headline.contains('.'),
        "symbol and grouping: {headline}"
    );
    let points = browser
        .find_all(Locator::Css("#worth-USD svg.chart-wide .point"))
        .await
        .unwrap();
    assert!(points.len() >= 12, "{} monthly points", points.len());
    // A point's label is hidden until the point has the focus.
    let tip = points[3].find(Locator::Css(".tip")).await.unwrap();
    assert!(!tip.is_displayed().await.unwrap());
    browser
        .execute(
            "document.querySelectorAll('#worth-USD svg.chart-wide .point')[3].focus();",
            Vec::new(),
        )
        .await
        .unwrap();
    assert!(tip.is_displayed().await.unwrap(), "focus shows the value");
    assert!(tip.text().await.unwrap().contains('$'));
    let categories = browser
        .find_all(Locator::Css("#spent-USD table.shares tr"))
        .await
        .unwrap();
    assert!(!categories.is_empty(), "last month's categories");
    let bars = browser
        .find_all(Locator::Css("#spending-chart-USD svg.chart-wide .bar"))
        .await
        .unwrap();
    assert_eq!(bars.len(), 12, "twelve months of spending");
    let bills = browser.find_all(Locator::Css("#bills li")).await.unwrap();
    assert!(
        !bills.is_empty(),
        "the sandbox's rent and subscriptions recur"
    );
}

#[actix_web::test]
async fn a_person_connects_an_assistant_over_oauth_in_headless_chromium() {
    let Some(driver) = start_driver() else { return };
    for database in TestDatabase::all() {
        let _ = writeln!(std::io::stderr(), "-- on {:?}", database.backend());
        assistant_walk_through(&driver, database).await;
    }
}

/// An assistant connects to `/mcp` by URL (tributary_e2e::mcp does its
/// side: discovery from the 401, registration, PKCE, the token exchange
/// with the `oauth2` crate); the person signs in from the consent link,
/// ticks two accounts, allows, and the assistant reads those two and no
/// other; then they revoke it under "Connected apps" (after a page that
/// asks first) and it reads nothing.
async fn assistant_walk_through(driver: &Driver, database: TestDatabase) {
    let server = tributary_e2e::start(database);
    let world = &server.world;
    let (callback, site) = start_integrator_site();
    let assistant = tributary_e2e::mcp::discover_and_register(&server, &callback).await;
    let (link, verifier) = assistant.link(&assistant.resource);
    let profile = tempfile::tempdir().unwrap();
    let browser = open_browser(driver, profile.path()).await;
    async fn shoot_both(browser: &Client, name: &str) {
        shoot_both_widths(browser, &format!("dashboard/assistant-{name}")).await;
    }

    browser.goto(&server.url(&link)).await.unwrap();
    wait_for(&browser, "how-to-sign-in").await;
    fill(&browser, "email", "alice@example.com").await;
    click(&browser, "send-code").await;
    wait_for(&browser, "code").await;
    let code = tributary_e2e::browser::code_in(&server.outbox, "alice@example.com");
    fill(&browser, "code", &code).await;
    click(&browser, "verify").await;
    // Signed in, the person is back on the consent page.
    wait_for(&browser, "allow").await;
    assert_eq!(
        browser.current_url().await.unwrap().path(),
        "/mcp/oauth/authorize"
    );
    let chosen = [world.alice_sandbox_accounts[0], world.alice_imported];
    for account in chosen {
        click(&browser, &format!("share-{account}")).await;
    }
    shoot_both(&browser, "01-consent").await;
    click(&browser, "allow").await;
    wait_for(&browser, "back").await;
    let back = browser.current_url().await.unwrap();
    let query: std::collections::HashMap<_, _> = back.query_pairs().into_owned().collect();
    assert_eq!(query["iss"], server.base_url);
    let tokens = {
        use oauth2::TokenResponse as _;
        assistant
            .oauth()
            .exchange_code(oauth2::AuthorizationCode::new(query["code"].clone()))
            .set_pkce_verifier(verifier)
            .add_extra_param("resource", &assistant.resource)
            .request_async(&tributary_e2e::mcp::http())
            .await
            .unwrap()
            .access_token()
            .secret()
            .clone()
    };
    let inspector = tributary_e2e::mcp::Inspector::installed(
        &Path::new(env!("CARGO_TARGET_TMPDIR")).join("mcp-inspector"),
    );
    let url = server.url("/mcp");
    let accounts = inspector
        .answer(&url, &tokens, "list_accounts", &serde_json::json!({}))
        .await;
    let seen: Vec<i64> = accounts["accounts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["id"].as_i64().unwrap())
        .collect();
    let mut expected: Vec<i64> = chosen.iter().map(|a| a.get()).collect();
    expected.sort_unstable();
    assert_eq!(seen, expected);

    // Connected apps: the assistant, what it reads; revoked, it reads no more.
    browser.goto(&server.url("/connected-apps")).await.unwrap();
    wait_for(&browser, "apps-title").await;
    shoot_both(&browser, "02-connected-apps").await;
    ask_keep_then_confirm(
        &browser,
        "a[id^='revoke-grant-']",
        "revoke",
        "dashboard/assistant-03-revoke",
        "no-apps",
    )
    .await;
    shoot_both(&browser, "04-revoked").await;
    let refused = inspector.list_tools(&url, &tokens).await;
    assert_eq!(refused.exit, 3, "{refused:?}");
    browser.close().await.unwrap();
    site.stop(true).await;
    server.stop().await;
}

#[actix_web::test]
async fn a_person_uploads_statements_into_the_account_they_choose_in_headless_chromium() {
    let Some(driver) = start_driver() else { return };
    for database in TestDatabase::all() {
        let _ = writeln!(std::io::stderr(), "-- on {:?}", database.backend());
        upload_walk_through(&driver, database).await;
    }
}

/// The upload form's choice of account: a US card export into a new USD
/// account, the next month's into that account picked from the list, and
/// a euro file refused by it with the choice kept; each step checked by
/// axe and saved at both widths.
async fn upload_walk_through(driver: &Driver, database: TestDatabase) {
    let server = tributary_e2e::start(database);
    let profile = tempfile::tempdir().unwrap();
    let browser = open_browser(driver, profile.path()).await;
    async fn shoot_both(browser: &Client, name: &str) {
        shoot_both_widths(browser, &format!("dashboard/upload-{name}")).await;
    }
    let files = tempfile::tempdir().unwrap();
    let file = |name: &str, text: &str| {
        let path = files.path().join(name);
        std::fs::write(&path, text).unwrap();
        path.to_string_lossy().into_owned()
    };
    let card = file(
        "card.csv",
        "Transaction Date,Description,Amount\n03/02/2026,NYC Coffee,-4.50\n03/03/2026,Bookshop,-23.99\n03/05/2026,Payment Thank You,100.00\n",
    );
    let later = file(
        "later.csv",
        "Transaction Date,Description,Amount\n03/05/2026,Payment Thank You,100.00\n04/01/2026,Subway,-2.90\n",
    );
    let euro = file(
        "euro.csv",
        "Date,Description,Amount,Currency\n2026-03-02,Groceries,-42.10,EUR\n",
    );
    async fn choose_file(browser: &Client, path: &str) {
        browser
            .find(Locator::Id("files"))
            .await
            .unwrap()
            .send_keys(path)
            .await
            .unwrap();
    }
    async fn text_of(browser: &Client, id: &str) -> String {
        browser
            .find(Locator::Id(id))
            .await
            .unwrap()
            .text()
            .await
            .unwrap()
    }

    sign_in_as_alice(&browser, &server).await;

    // Alice has no account of imported statements yet (hers is another
    // kind): the form offers the file's own account or a new one.
    browser
        .goto(&server.url("/connect/banks/upload"))
        .await
        .unwrap();
    wait_for(&browser, "into").await;
    assert!(
        browser.find(Locator::Id("into-account")).await.is_err(),
        "no imported account to choose yet"
    );
    // A new account filled in, but not chosen: said, never guessed; what
    // was typed stays.
    choose_file(&browser, &card).await;
    fill(&browser, "new_account_name", "Visa card").await;
    fill(&browser, "new_account_currency", "USD").await;
    click(&browser, "connect").await;
    wait_for(&browser, "error").await;
    assert!(
        text_of(&browser, "error")
            .await
            .starts_with("You filled in a new account but left"),
        "{}",
        text_of(&browser, "error").await
    );
    assert_eq!(
        browser
            .find(Locator::Id("new_account_name"))
            .await
            .unwrap()
            .prop("value")
            .await
            .unwrap()
            .as_deref(),
        Some("Visa card")
    );
    choose_file(&browser, &card).await;
    click(&browser, "into-new").await;
    shoot_both(&browser, "01-new-account").await;
    click(&browser, "connect").await;
    wait_for(&browser, "import-summary").await;
    assert_eq!(text_of(&browser, "added").await, "3");
    assert!(
        browser.find(Locator::Id("notes")).await.is_err(),
        "no currency was assumed"
    );

    // The next month, into the account picked from the list.
    browser
        .goto(&server.url("/connect/banks/upload"))
        .await
        .unwrap();
    wait_for(&browser, "into-account").await;
    assert!(
        browser
            .find(Locator::Id("into-file"))
            .await
            .unwrap()
            .is_selected()
            .await
            .unwrap(),
        "the file's own account is the default"
    );
    choose_file(&browser, &later).await;
    click(&browser, "into-account").await;
    browser
        .find(Locator::Id("account"))
        .await
        .unwrap()
        .select_by_label("Visa card (USD)")
        .await
        .unwrap();
    shoot_both(&browser, "02-into-account").await;
    click(&browser, "connect").await;
    wait_for(&browser, "import-summary").await;
    assert_eq!(
        (
            text_of(&browser, "added").await,
            text_of(&browser, "unchanged").await
        ),
        ("1".to_owned(), "1".to_owned())
    );

    // A euro file into the USD account: refused, saying both currencies,
    // with the choice kept.
    browser
        .goto(&server.url("/connect/banks/upload"))
        .await
        .unwrap();
    wait_for(&browser, "into-account").await;
    choose_file(&browser, &euro).await;
    click(&browser, "into-account").await;
    click(&browser, "connect").await;
    wait_for(&browser, "error").await;
    let error = text_of(&browser, "error").await;
    assert!(
        error.starts_with(
            "The account you chose: the file's amounts are in EUR, but \"Visa card\" is in USD"
        ),
        "{error}"
    );
    assert!(
        browser
            .find(Locator::Id("into-account"))
            .await
            .unwrap()
            .is_selected()
            .await
            .unwrap()
    );
    shoot_both(&browser, "03-refused").await;

    // A 401(k) statement: its buys and transfers counted as investment
    // activity on the summary.
    browser
        .goto(&server.url("/connect/banks/upload"))
        .await
        .unwrap();
    wait_for(&browser, "into-account").await;
    let retirement = std::fs::canonicalize(
        tributary_storage::testing::testdata_root().join("ofxparse/fixtures/investment_401k.ofx"),
    )
    .unwrap();
    choose_file(&browser, retirement.to_str().unwrap()).await;
    click(&browser, "connect").await;
    wait_for(&browser, "import-summary").await;
    assert_eq!(
        (
            text_of(&browser, "activity-added").await,
            text_of(&browser, "activity-updated").await
        ),
        ("3".to_owned(), "0".to_owned())
    );
    shoot_both(&browser, "04-investment-activity").await;

    // What is stored: one USD card account of four rows (and the 401(k)).
    browser.close().await.unwrap();
    let conn = &mut *server.database.db().conn().unwrap();
    let alice = tributary_storage::connections::get_connection(
        conn,
        server.world.alice_imported_connection,
    )
    .unwrap()
    .user_id;
    let accounts: Vec<_> = tributary_storage::read::imported_accounts(conn, alice)
        .unwrap()
        .into_iter()
        .filter(|a| a.kind != tributary_domain::model::AccountKind::Brokerage)
        .collect();
    assert_eq!(accounts.len(), 1, "{accounts:?}");
    let all = tributary_storage::read::TransactionFilter {
        include_pending: true,
        ..Default::default()
    };
    let rows =
        tributary_storage::read::list_transactions(conn, accounts[0].id, &all, None, None).unwrap();
    let sum: tributary_domain::money::Decimal = rows.iter().map(|t| t.amount).sum();
    assert_eq!(
        (
            accounts[0].name.as_str(),
            accounts[0].currency.as_str(),
            rows.len(),
            sum.to_string(),
            rows.iter().all(|t| t.currency == "USD")
        ),
        ("Visa card", "USD", 4, "68.61".to_owned(), true)
    );
    server.stop().await;
}

#[actix_web::test]
async fn a_developer_makes_an_app_and_manages_its_users_in_headless_chromium() {
    let Some(driver) = start_driver() else { return };
    for database in TestDatabase::all() {
        let _ = writeln!(std::io::stderr(), "-- on {:?}", database.backend());
        developers_walk_through(&driver, database).await;
    }
}

/// The value of the read-only field `id`.
async fn value_of(browser: &Client, id: &str) -> String {
    browser
        .find(Locator::Id(id))
        .await
        .unwrap()
        .prop("value")
        .await
        .unwrap()
        .unwrap()
}

/// The developer dashboard clicked through: sign up with a mailed code,
/// create an app and see its secret once, rotate it after a page that asks
/// first (the old one then fails at the token endpoint), register the
/// integrator's redirect URI and remove the first one (asked first),
/// a person walks the authorization flow to the integrator's, appears in the
/// app's users with their connection and is erased, the app is deleted and
/// its page is an error page that keeps the navigation; each page checked
/// by axe and saved at desktop and phone width.
async fn developers_walk_through(driver: &Driver, database: TestDatabase) {
    let (server, outbox) = start_platform_with_pages_and(database, Vec::new(), |parts| parts);
    let (callback, site) = start_integrator_site();
    let profile = tempfile::tempdir().unwrap();
    let browser = open_browser(driver, profile.path()).await;
    async fn shoot_both(browser: &Client, name: &str) {
        shoot_both_widths(browser, &format!("developers/developers-{name}")).await;
    }
    // What the token endpoint answers the app's credentials with for a
    // made-up code: 400 once they authenticate, 401 when they do not.
    let token_status = |client_id: String, secret: String| {
        let url = server.url("/api/platform/oauth/token");
        async move {
            reqwest::Client::new()
                .post(url)
                .basic_auth(client_id, Some(secret))
                .form(&[("grant_type", "authorization_code"), ("code", "tac_x")])
                .send()
                .await
                .unwrap()
                .status()
        }
    };

    browser.goto(&server.url("/developers")).await.unwrap();
    wait_for(&browser, "send-code").await;
    fill(&browser, "email", "ada@example.com").await;
    shoot_both(&browser, "01-signed-out").await;
    click(&browser, "send-code").await;
    wait_for(&browser, "code").await;
    let code = tributary_e2e::browser::code_in(&outbox, "ada@example.com");
    fill(&browser, "code", &code).await;
    shoot_both(&browser, "02-code").await;
    click(&browser, "verify").await;
    wait_for(&browser, "no-apps").await;
    fill(&browser, "app-name", "Budget app").await;
    fill(&browser, "redirect-uris", "https://budget.example/callback").await;
    fill(&browser, "max-accounts", "6").await;
    shoot_both(&browser, "03-new-app").await;
    click(&browser, "create-app").await;

    wait_for(&browser, "client-secret").await;
    let client_id = value_of(&browser, "client-id").await;
    let first_secret = value_of(&browser, "client-secret").await;
    shoot_both(&browser, "04-secret-once").await;
    click(&browser, "done").await;
    wait_for(&browser, "rotate-secret").await;
    assert!(!browser.source().await.unwrap().contains(&first_secret));
    // Rotating asks first; kept, the secret still works.
    click(&browser, "rotate-secret").await;
    wait_for(&browser, "rotate").await;
    shoot_both(&browser, "04-rotate-secret").await;
    click(&browser, "keep").await;
    wait_for(&browser, "rotate-secret").await;
    assert_eq!(
        token_status(client_id.clone(), first_secret.clone()).await,
        reqwest::StatusCode::BAD_REQUEST,
        "kept, the secret still authenticates"
    );
    click(&browser, "rotate-secret").await;
    wait_for(&browser, "rotate").await;
    click(&browser, "rotate").await;
    wait_for(&browser, "client-secret").await;
    let secret = value_of(&browser, "client-secret").await;
    assert_ne!(secret, first_secret);
    assert_eq!(
        token_status(client_id.clone(), first_secret).await,
        reqwest::StatusCode::UNAUTHORIZED,
        "the old secret fails at the token endpoint"
    );
    assert_eq!(
        token_status(client_id.clone(), secret.clone()).await,
        reqwest::StatusCode::BAD_REQUEST
    );
    click(&browser, "done").await;
    wait_for(&browser, "new-uri").await;
    fill(&browser, "new-uri", &callback).await;
    click(&browser, "add-uri").await;
    wait_for(&browser, "remove-uri-2").await;
    let app_path = browser.current_url().await.unwrap().path().to_owned();
    shoot_both(&browser, "05-app").await;
    // The first redirect URI removed, after a page that asks first.
    ask_keep_then_confirm(
        &browser,
        "#remove-uri-1",
        "remove-uri",
        "developers/developers-05-remove-uri",
        "redirect-uris",
    )
    .await;
    let source = browser.source().await.unwrap();
    assert!(!source.contains("budget.example/callback"));
    assert!(source.contains(&callback));

    // A person walks the authorization flow to the new redirect URI.
    let mut authorize = url::Url::parse(&server.url("/api/platform/oauth/authorize")).unwrap();
    authorize
        .query_pairs_mut()
        .append_pair("client_id", &client_id)
        .append_pair("redirect_uri", &callback)
        .append_pair("state", "developer-walk")
        .append_pair("email", "reader@example.com");
    browser.goto(authorize.as_str()).await.unwrap();
    sign_in_connect_and_approve(&browser, &outbox, "reader@example.com").await;
    wait_for(&browser, "back").await;
    let landed = browser.current_url().await.unwrap();
    assert!(landed.as_str().starts_with(&callback), "{landed}");
    let query: std::collections::HashMap<_, _> = landed.query_pairs().into_owned().collect();
    let app = tributary_e2e::platform::TestApp {
        record: apps::find_by_client_id(&mut server.database.db().conn().unwrap(), &client_id)
            .unwrap()
            .unwrap(),
        secret: Some(secret),
        redirect_uris: vec![callback.clone()],
    };
    let access = server.redeem_code(&app, &callback, &query["code"]).await;
    let accounts = server
        .bearer_json(Method::GET, "/api/platform/v1/accounts", &access)
        .await;
    let found = accounts["total"].as_u64().unwrap();

    // The person is among the app's users, with their connection.
    browser
        .goto(&server.url(&format!("{app_path}/users")))
        .await
        .unwrap();
    wait_for(&browser, "users").await;
    let row = browser
        .find(Locator::Css("#users tbody tr"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(row.contains("reader@example.com"), "{row}");
    assert!(row.contains("Tributary Sandbox Bank"), "{row}");
    assert!(row.contains("ACTIVE"), "{row}");
    assert!(row.contains(&format!("{found} of 6")), "{row}");
    shoot_both(&browser, "06-users").await;
    fill(&browser, "search", "READER").await;
    click(&browser, "search-users").await;
    // The list before the search has #users too: wait for the page that
    // answers the search (its box says what was searched).
    browser
        .wait()
        .at_most(Duration::from_secs(60))
        .for_element(Locator::Css("input#search[value='READER']"))
        .await
        .unwrap();
    wait_for(&browser, "users").await;
    let erase = browser
        .find(Locator::Css("#users a[id^='erase-']"))
        .await
        .unwrap();
    erase.click().await.unwrap();
    wait_for(&browser, "erase-user").await;
    shoot_both(&browser, "07-erase-user").await;
    click(&browser, "erase-user").await;
    wait_for(&browser, "no-users").await;
    let gone = reqwest::Client::new()
        .get(server.url("/api/platform/v1/accounts"))
        .bearer_auth(&access)
        .send()
        .await
        .unwrap();
    assert_eq!(gone.status(), reqwest::StatusCode::UNAUTHORIZED);

    // The app is deleted after a confirm page.
    browser.goto(&server.url(&app_path)).await.unwrap();
    wait_for(&browser, "delete-link").await;
    click(&browser, "delete-link").await;
    wait_for(&browser, "delete-app").await;
    shoot_both(&browser, "08-delete-app").await;
    click(&browser, "delete-app").await;
    wait_for(&browser, "no-apps").await;

    // The deleted app's page: an error page that keeps the navigation
    // and leads back to the apps.
    browser.goto(&server.url(&app_path)).await.unwrap();
    assert_error_page(&browser, "sign-out", "/developers").await;
    shoot_both(&browser, "09-not-found").await;
    click(&browser, "go-back").await;
    wait_for(&browser, "no-apps").await;
    browser.close().await.unwrap();
    site.stop(true).await;
    server.stop().await;
}

#[actix_web::test]
async fn the_api_references_read_well_in_headless_chromium() {
    let Some(driver) = start_driver() else { return };
    let profile = tempfile::tempdir().unwrap();
    let browser = open_browser(&driver, profile.path()).await;
    let personal = tributary_e2e::start(TestDatabase::sqlite());
    let platform = tributary_e2e::platform::start_platform(TestDatabase::sqlite());
    for (url, name) in [
        (
            personal.url("/api/v1/docs"),
            "reference/api-reference-personal",
        ),
        (
            platform.url("/api/platform/docs"),
            "reference/api-reference-platform",
        ),
    ] {
        browser.goto(&url).await.unwrap();
        wait_for(&browser, "document").await;
        shoot_both_widths(&browser, name).await;
        // On a phone nothing widens the page: long paths and names wrap,
        // examples scroll inside their own box.
        browser.set_window_size(390, 1100).await.unwrap();
        let overflow = browser
            .execute(
                "return document.documentElement.scrollWidth - document.documentElement.clientWidth;",
                Vec::new(),
            )
            .await
            .unwrap();
        assert_eq!(
            overflow.as_i64(),
            Some(0),
            "{name} scrolls sideways at 390 px"
        );
        browser.set_window_size(1280, 1100).await.unwrap();
        // Names set as code, not backticks; a 401's example is a 401's.
        let source = browser.source().await.unwrap();
        assert!(
            !source.contains("`INVALID_DATE`"),
            "{name}: backticks shown"
        );
        let unauthorized = source
            .split("<dt><code>401</code></dt>")
            .nth(1)
            .and_then(|rest| rest.split("</dd>").next())
            .unwrap_or_default();
        assert!(
            unauthorized.contains("Unauthorized") && !unauthorized.contains("ACCOUNT_NOT_FOUND"),
            "{name}: {unauthorized}"
        );
    }
    // Searching narrows the page to the operations that match.
    fill(&browser, "q", "revoke").await;
    click(&browser, "search").await;
    wait_for(&browser, "shown").await;
    let shown = browser
        .find(Locator::Id("shown"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(shown.starts_with("1 of "), "{shown}");
    wait_for(&browser, "revoke").await;
    shoot(&browser, "reference/api-reference-search").await;
    browser.close().await.unwrap();
    personal.stop().await;
    platform.stop().await;
}

/// A server's first start with nothing configured but a fresh SQLite file
/// in `dir`, built the way the binary builds it (off the async runtime:
/// the default connectors hold blocking HTTP clients) and served on a
/// free port: what it printed, and its handle.
fn first_start(
    dir: &Path,
    interface: tributary_http::server::Interface,
    parts: tributary_http::server::Parts,
) -> (String, actix_web::dev::ServerHandle) {
    let database_url = format!("sqlite://{}/tributary.db", dir.display());
    let application = std::thread::spawn(move || {
        let config = tributary_app::Config::from_lookup(|name| match name {
            "TRIBUTARY_DATABASE_URL" => Some(database_url.clone()),
            "TRIBUTARY_BIND" => Some("127.0.0.1:0".into()),
            _ => None,
        })
        .unwrap();
        tributary_http::server::Application::build(interface, config, parts)
            .and_then(tributary_http::server::Application::bind)
            .unwrap()
    })
    .join()
    .unwrap();
    let handle = application.server.handle();
    actix_web::rt::spawn(application.server);
    (application.greeting.join("\n"), handle)
}

#[actix_web::test]
async fn a_first_start_of_platform_api_walks_a_newcomer_to_the_demo_callback() {
    let Some(driver) = start_driver() else { return };
    // A fresh SQLite database and nothing else set: the binary's first
    // start, built the way the binary builds it (off the async runtime:
    // the default connectors hold blocking HTTP clients), with the mail
    // outbox the test reads the sign-in code from.
    let dir = tempfile::tempdir().unwrap();
    let outbox = tributary_notify::mail::DevOutbox::default();
    let (greeting, handle) = first_start(
        dir.path(),
        tributary_http::server::Interface::Platform,
        tributary_http::server::Parts {
            mailer: Some(Arc::new(outbox.clone())),
            ..Default::default()
        },
    );
    assert!(greeting.contains("client_id:     app_"), "{greeting}");
    assert!(greeting.contains("client_secret: tcs_"), "{greeting}");
    let link = greeting
        .lines()
        .find_map(|line| line.split("Try the whole flow in a browser").nth(1))
        .and_then(|rest| rest.split(": ").nth(1))
        .unwrap_or_else(|| panic!("no authorization link in:\n{greeting}"))
        .to_owned();

    let profile = tempfile::tempdir().unwrap();
    let browser = open_browser(&driver, profile.path()).await;
    browser.goto(&link).await.unwrap();
    sign_in_connect_and_approve(&browser, &outbox, "newcomer@example.com").await;

    // The demo callback redeemed the code and lists what it reads.
    wait_for(&browser, "accounts").await;
    let landed = browser.current_url().await.unwrap();
    assert_eq!(landed.path(), "/developers/demo/callback");
    let rows = browser
        .find_all(Locator::Css("#accounts tbody tr"))
        .await
        .unwrap();
    let names: Vec<String> = futures_util::future::join_all(rows.iter().map(|r| r.text()))
        .await
        .into_iter()
        .map(Result::unwrap)
        .collect();
    assert!(
        names.iter().any(|n| n.contains("Everyday Checking")),
        "{names:?}"
    );
    shoot_both_widths(&browser, "developers/quickstart-callback").await;
    // The access token it shows reads the same accounts through the API.
    let token = browser
        .find(Locator::Id("access-token"))
        .await
        .unwrap()
        .prop("value")
        .await
        .unwrap()
        .unwrap();
    let base = format!("{}://{}", landed.scheme(), landed.authority());
    let read: Value = reqwest::Client::new()
        .get(format!("{base}/api/platform/v1/accounts"))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        read["total"].as_u64(),
        Some(names.len() as u64),
        "the page lists what the token reads: {names:?} {read}"
    );
    // A code works once: reloading the callback refuses it.
    browser.refresh().await.unwrap();
    let again = browser.source().await.unwrap();
    assert!(again.contains("The code was not accepted"), "{again}");
    // The server's own address in a browser: what it is and the ways on,
    // with its icon.
    browser.goto(&format!("{base}/")).await.unwrap();
    wait_for(&browser, "what").await;
    shoot_both_widths(&browser, "developers/platform-landing").await;
    click(&browser, "to-developers").await;
    wait_for(&browser, "email").await;
    assert_eq!(browser.current_url().await.unwrap().path(), "/developers");
    let icon = reqwest::get(format!("{base}/favicon.ico")).await.unwrap();
    assert_eq!(icon.status(), 200);
    assert_eq!(icon.headers()["content-type"], "image/svg+xml");
    assert!(icon.text().await.unwrap().starts_with("<svg"));
    browser.close().await.unwrap();
    handle.stop(true).await;
}

/// The Personal API's first start as a newcomer meets it: no configuration
/// but a fresh SQLite file, built the way the binary builds it. The
/// dashboard link it prints signs the demo user in, and the overview
/// answers on the seeded demo (a year of month-end points, money with its
/// symbol and grouping), not on a test fixture.
#[actix_web::test]
async fn a_first_start_of_personal_api_opens_a_year_of_demo_history() {
    let Some(driver) = start_driver() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (greeting, handle) = first_start(
        dir.path(),
        tributary_http::server::Interface::Personal,
        tributary_http::server::Parts::default(),
    );
    let link = greeting
        .lines()
        .find_map(|line| line.strip_prefix("Dashboard (this sign-in link works once"))
        .and_then(|rest| rest.split(": ").nth(1))
        .unwrap_or_else(|| panic!("no dashboard link in:\n{greeting}"))
        .to_owned();

    let profile = tempfile::tempdir().unwrap();
    let browser = open_browser(&driver, profile.path()).await;
    browser.goto(&link).await.unwrap();
    wait_for(&browser, "worth-title").await;
    assert_eq!(browser.current_url().await.unwrap().path(), "/");
    assert_overview_answers(&browser).await;
    assert_accessible(&browser, "first-start overview").await;
    // The link worked once: a second visit is refused.
    browser.goto(&link).await.unwrap();
    let again = browser.source().await.unwrap();
    assert!(again.contains("This sign-in link does not work"), "{again}");
    browser.close().await.unwrap();
    handle.stop(true).await;
}

/// Alice signs in to her dashboard with the mailed code.
async fn sign_in_as_alice(browser: &Client, server: &tributary_e2e::TestServer) {
    browser.goto(&server.url("/")).await.unwrap();
    wait_for(browser, "how-to-sign-in").await;
    fill(browser, "email", "alice@example.com").await;
    click(browser, "send-code").await;
    wait_for(browser, "code").await;
    let code = tributary_e2e::browser::code_in(&server.outbox, "alice@example.com");
    fill(browser, "code", &code).await;
    click(browser, "verify").await;
    wait_for(browser, "worth-title").await;
}

/// A stand-in for Teller Connect's script (teller.io/docs/guides/connect:
/// `TellerConnect.setup(options).open()`, then `onSuccess` with the
/// enrollment), served on loopback: it enrolls only for the application
/// the server was configured with, else the person leaves (`onExit`).
fn start_teller_connect_script() -> (String, actix_web::dev::ServerHandle) {
    let script = format!(
        r#"window.TellerConnect = {{
  setup: function (options) {{
    return {{
      open: function () {{
        setTimeout(function () {{
          if (options.applicationId !== "app_tributarytest") {{ options.onExit(); return; }}
          options.onSuccess({{
            accessToken: "{token}",
            user: {{ id: "usr_f4k3" }},
            enrollment: {{ id: options.enrollmentId || "enr_f4k3", institution: {{ name: "Example Bank" }} }},
            signatures: []
          }});
        }}, 0);
      }}
    }};
  }}
}};
"#,
        token = tributary_e2e::teller::TOKEN
    );
    serve_on_loopback(
        "/connect/connect.js",
        "text/javascript; charset=utf-8",
        script,
    )
}

#[actix_web::test]
async fn a_person_enrolls_a_teller_bank_with_teller_connect_in_headless_chromium() {
    let Some(driver) = start_driver() else { return };
    for database in TestDatabase::all() {
        let _ = writeln!(std::io::stderr(), "-- on {:?}", database.backend());
        teller_connect_walk_through(&driver, database).await;
    }
}

/// Teller Connect on Teller's connect page: the page loads Teller's
/// script (its Content-Security-Policy lets that one in), the person
/// enrolls, and the token it hands over connects the bank; signing in to
/// the connection again opens Teller Connect in repair for its enrollment
/// and keeps the connection.
async fn teller_connect_walk_through(driver: &Driver, database: TestDatabase) {
    let fake = tributary_e2e::teller::TellerFake::start().await;
    let (script, script_server) = start_teller_connect_script();
    let teller = fake.connector_offering(
        fake.operator_identity(),
        Duration::from_secs(30),
        Some(tributary_providers::teller::TellerConnect {
            application_id: "app_tributarytest".into(),
            environment: "sandbox".into(),
            script,
        }),
    );
    let server = tributary_e2e::start_with(database, vec![teller]);
    let profile = tempfile::tempdir().unwrap();
    let browser = open_browser(driver, profile.path()).await;
    sign_in_as_alice(&browser, &server).await;

    browser
        .goto(&server.url("/connect/banks/teller"))
        .await
        .unwrap();
    wait_for(&browser, "connect-widget-open").await;
    assert_accessible(&browser, "teller-connect").await;
    shoot_both_widths(&browser, "dashboard/teller-connect").await;
    let options = open_connect_widget(&browser, TELLER_OPTIONS).await;
    assert_eq!(options["applicationId"], "app_tributarytest");
    assert_eq!(options["environment"], "sandbox");
    assert_eq!(
        options["products"],
        serde_json::json!(["balance", "transactions"])
    );
    assert!(options.get("enrollmentId").is_none(), "a new enrollment");
    assert_eq!(
        found_on_the_page(&browser).await,
        "Found 3 accounts:",
        "the enrollment's accounts"
    );
    assert!(
        !tributary_storage::testing::dump(server.database.db())
            .contains(tributary_e2e::teller::TOKEN),
        "the token is sealed"
    );

    // Signing in again: Teller Connect repairs the enrollment; the same
    // connection, no second one.
    sign_in_again_from_the_bank_form(&browser, &server, "teller").await;
    let options = open_connect_widget(&browser, TELLER_OPTIONS).await;
    assert_eq!(
        options["enrollmentId"], "enr_f4k3",
        "the repair of its enrollment"
    );
    assert_eq!(
        alices_connections(&server, tributary_providers::teller::PROVIDER),
        1,
        "signed in to again, not connected twice"
    );
    script_server.stop(true).await;
}

/// A stand-in for Pluggy Connect's script (the pluggy-connect-sdk's
/// documented interface: `new PluggyConnect(options).init()`, then
/// `onSuccess` with `{item}`), served on loopback. Like Pluggy's, it styles
/// the page with a `<style>` element of its own as it loads; it connects
/// only with a connect token from the server, else says so (`onError`).
fn start_pluggy_connect_script() -> (String, actix_web::dev::ServerHandle) {
    let script = format!(
        r##"(function () {{
  var style = document.createElement("style");
  style.textContent = "#connect-widget {{ outline: 3px dotted rgb(130, 10, 209); }}";
  document.head.appendChild(style);
}})();
window.PluggyConnect = function (options) {{
  this.init = function () {{
    setTimeout(function () {{
      if (!/^connect-token-/.test(options.connectToken)) {{ options.onError({{ message: "no connect token" }}); return; }}
      options.onSuccess({{ item: {{ id: options.updateItem || "{item}", status: "UPDATED" }} }});
    }}, 0);
    return Promise.resolve();
  }};
}};
"##,
        item = tributary_e2e::pluggy::ITEM_ID
    );
    serve_on_loopback(
        "/pluggy-connect/pluggy-connect.js",
        "text/javascript; charset=utf-8",
        script,
    )
}

#[actix_web::test]
async fn a_person_connects_a_bank_in_pluggy_connect_in_headless_chromium() {
    let Some(driver) = start_driver() else { return };
    for database in TestDatabase::all() {
        let _ = writeln!(std::io::stderr(), "-- on {:?}", database.backend());
        pluggy_connect_walk_through(&driver, database).await;
    }
}

/// Pluggy Connect on Pluggy's connect page, with this server's own Pluggy
/// application: the page loads Pluggy's script (its Content-Security-Policy
/// lets that one in, and its inline styles), the person connects their bank
/// in it, and the item it made connects here without any details of
/// theirs; signing in to the connection again opens Pluggy Connect on that
/// item and keeps the connection.
async fn pluggy_connect_walk_through(driver: &Driver, database: TestDatabase) {
    let fake = tributary_e2e::pluggy::PluggyFake::start().await;
    let (script, script_server) = start_pluggy_connect_script();
    let pluggy = fake.connector_for_the_server(Duration::from_secs(30), &script);
    let server = tributary_e2e::start_with(database, vec![pluggy]);
    let profile = tempfile::tempdir().unwrap();
    let browser = open_browser(driver, profile.path()).await;
    sign_in_as_alice(&browser, &server).await;

    // Pluggy failing: the form says so, and offers no widget.
    fake.set_fault(Some(tributary_e2e::pluggy::Fault::ServerError));
    browser
        .goto(&server.url("/connect/banks/pluggy"))
        .await
        .unwrap();
    let trouble = browser
        .find(Locator::Id("error"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert_eq!(
        trouble,
        "Pluggy's own connect window cannot open right now: reload this page in a few minutes."
    );
    assert!(
        browser
            .find(Locator::Id("connect-widget-open"))
            .await
            .is_err()
    );
    fake.set_fault(None);

    browser
        .goto(&server.url("/connect/banks/pluggy"))
        .await
        .unwrap();
    wait_for(&browser, "connect-widget-open").await;
    let styled = browser
        .execute(
            "return getComputedStyle(document.getElementById('connect-widget')).outlineStyle;",
            Vec::new(),
        )
        .await
        .unwrap();
    assert_eq!(
        styled, "dotted",
        "the widget's own <style> applies on its page"
    );
    assert_accessible(&browser, "pluggy-connect").await;
    shoot_both_widths(&browser, "dashboard/pluggy-connect").await;
    let options = open_connect_widget(&browser, PLUGGY_OPTIONS).await;
    assert_eq!(options["connectToken"], "connect-token-1");
    assert_eq!(options["includeSandbox"], true);
    assert!(options.get("updateItem").is_none(), "a new item");
    assert_eq!(
        found_on_the_page(&browser).await,
        "Found 4 accounts:",
        "the item's accounts"
    );
    let person = format!("tributary-user-{}", server.world.alice_user);
    assert_eq!(
        fake.connect_tokens()[0]["options"]["clientUserId"],
        person.as_str(),
        "the token named Alice, by nothing of hers"
    );

    // Signing in again: Pluggy Connect updates the item; the same
    // connection, no second one.
    sign_in_again_from_the_bank_form(&browser, &server, "pluggy").await;
    let options = open_connect_widget(&browser, PLUGGY_OPTIONS).await;
    assert_eq!(
        options["updateItem"],
        tributary_e2e::pluggy::ITEM_ID,
        "the update of its item"
    );
    assert_eq!(
        alices_connections(&server, tributary_providers::pluggy::PROVIDER),
        1,
        "signed in to again, not connected twice"
    );
    script_server.stop(true).await;
}

/// Script for the page that keeps what it hands Teller Connect (across
/// the form's post) in `sessionStorage.widget`.
const TELLER_OPTIONS: &str = "const setup = window.TellerConnect.setup;
window.TellerConnect.setup = function (options) {
  sessionStorage.setItem('widget', JSON.stringify(options));
  return setup(options);
};";

/// The same for Pluggy Connect (its constructor takes the options).
const PLUGGY_OPTIONS: &str = "const Widget = window.PluggyConnect;
window.PluggyConnect = function (options) {
  sessionStorage.setItem('widget', JSON.stringify(options));
  return new Widget(options);
};";

/// Opens the bank form's connect widget with `keep` watching what the
/// page hands the provider's script, waits for the first sync's progress
/// page to say what it found, and gives back what was handed.
async fn open_connect_widget(browser: &Client, keep: &str) -> Value {
    browser.execute(keep, Vec::new()).await.unwrap();
    click(browser, "connect-widget-open").await;
    wait_for(browser, "found").await;
    let options = browser
        .execute("return sessionStorage.getItem('widget');", Vec::new())
        .await
        .unwrap();
    serde_json::from_str(options.as_str().expect("the widget was opened")).unwrap()
}

/// What the progress page says it found.
async fn found_on_the_page(browser: &Client) -> String {
    browser
        .find(Locator::Id("found"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap()
}

/// From `bank`'s form, signs in again to the connection it lists, and
/// waits for the widget.
async fn sign_in_again_from_the_bank_form(
    browser: &Client,
    server: &tributary_e2e::TestServer,
    bank: &str,
) {
    browser
        .goto(&server.url(&format!("/connect/banks/{bank}")))
        .await
        .unwrap();
    let again = browser
        .find(Locator::Css("a[id^='reauth-existing-']"))
        .await
        .unwrap();
    again.click().await.unwrap();
    wait_for(browser, "connect-widget-open").await;
}

/// How many connections Alice has through `provider`.
fn alices_connections(
    server: &tributary_e2e::TestServer,
    provider: tributary_domain::model::Provider,
) -> usize {
    tributary_storage::connections::list_for_users(
        &mut server.database.db().conn().unwrap(),
        &[server.world.alice_user],
    )
    .unwrap()
    .into_iter()
    .filter(|c| c.provider == provider)
    .count()
}
