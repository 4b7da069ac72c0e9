//! A browser without JavaScript for the end-to-end tests of the browser
//! flow: a cookie-keeping HTTP client that follows the server's own
//! redirects, with the steps every scenario shares (authorize, sign in with
//! the code from the development outbox, connect the sandbox, redeem).

use crate::platform::{PlatformServer, TestApp};
use reqwest::header::LOCATION;
use reqwest::{Client, Method, Response, StatusCode, redirect};
use serde_json::Value;
use std::time::{Duration, Instant};
use tributary_notify::mail::DevOutbox;

/// Where the statement upload form posts.
const UPLOAD: &str = "/connect/banks/upload";

/// A browser without JavaScript: keeps cookies, follows redirects within
/// the server itself, and stops at any redirect that leaves it.
#[derive(Debug)]
pub struct Browser {
    pub client: Client,
    pub base: String,
}

/// A page as the browser ended on it.
#[derive(Debug)]
pub struct Page {
    pub status: StatusCode,
    /// Path (and query) on the server, or the absolute URL it was sent to.
    pub location: String,
    pub body: String,
}

impl Page {
    pub fn csrf(&self) -> String {
        let start = self
            .body
            .find("name=\"csrf\" value=\"")
            .unwrap_or_else(|| panic!("no CSRF field on {}:\n{}", self.location, self.body))
            + "name=\"csrf\" value=\"".len();
        self.body[start..start + 64].to_owned()
    }

    /// N of "Found N accounts" on a progress page.
    pub fn accounts_found(&self) -> u64 {
        let start =
            self.body.find("Found ").unwrap_or_else(|| {
                panic!("no accounts found on {}:\n{}", self.location, self.body)
            }) + 6;
        self.body[start..]
            .split(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap()
    }

    pub fn assert_shows(&self, text: &str) {
        assert!(
            self.body.contains(text),
            "{} does not show `{text}`:\n{}",
            self.location,
            self.body
        );
    }

    /// A page that asks before doing anything: its button posts to
    /// `action` (the page's own address), its "Keep it" leads to `back`.
    pub fn assert_asks_first(&self, action: &str, back: &str) {
        assert_eq!(
            self.status,
            StatusCode::OK,
            "{}:\n{}",
            self.location,
            self.body
        );
        self.assert_shows(&format!("<form method=\"post\" action=\"{action}\">"));
        self.assert_shows(&format!("<a href=\"{back}\" id=\"keep\">"));
    }

    /// An error page that keeps the navigation labelled `nav` and leads
    /// back to `back`.
    pub fn assert_error_with_way_back(&self, nav: &str, back: &str) {
        assert!(self.status.is_client_error() || self.status.is_server_error());
        self.assert_shows("class=\"problem\"");
        self.assert_shows(&format!("aria-label=\"{nav}\""));
        self.assert_shows(&format!("<a href=\"{back}\" id=\"go-back\">Go back</a>"));
    }

    /// Every field a person fills has an id and a `<label for>` naming it,
    /// and the page says its language: what screen readers and keyboard
    /// users need of a form.
    pub fn assert_accessible(&self) {
        if self.body.is_empty() {
            return;
        }
        assert!(
            self.body.contains("<html lang=\"en\">"),
            "{}: no lang",
            self.location
        );
        for tag in ["<input", "<textarea", "<select"] {
            for (at, _) in self.body.match_indices(tag) {
                let element = &self.body[at..at + self.body[at..].find('>').unwrap_or(0)];
                if element.contains("type=\"hidden\"") {
                    continue;
                }
                let id = element
                    .split("id=\"")
                    .nth(1)
                    .and_then(|rest| rest.split('"').next())
                    .unwrap_or_else(|| panic!("{}: a field without id: {element}", self.location));
                assert!(
                    self.body.contains(&format!("<label for=\"{id}\"")),
                    "{}: field `{id}` has no label",
                    self.location
                );
            }
        }
    }
}

impl Browser {
    pub fn new(server: &PlatformServer) -> Self {
        Self::at(&server.base_url)
    }

    /// A browser of the server at `base` (the Personal dashboard's, say).
    pub fn at(base: &str) -> Self {
        Self {
            client: Client::builder()
                .cookie_store(true)
                .redirect(redirect::Policy::none())
                .build()
                .unwrap(),
            base: base.to_owned(),
        }
    }

    pub async fn follow(&self, mut response: Response, mut location: String) -> Page {
        loop {
            if !response.status().is_redirection() {
                let status = response.status();
                let html = response
                    .headers()
                    .get("content-type")
                    .is_some_and(|t| t.as_bytes().starts_with(b"text/html"));
                let page = Page {
                    status,
                    location,
                    body: response.text().await.unwrap(),
                };
                // Every page any test sees is checked for labelled fields.
                if html {
                    page.assert_accessible();
                }
                return page;
            }
            let next = response.headers()[LOCATION].to_str().unwrap().to_owned();
            if !next.starts_with('/') {
                // Leaves the server: to the app's redirect_uri, say.
                return Page {
                    status: response.status(),
                    location: next,
                    body: String::new(),
                };
            }
            location = next;
            response = self
                .client
                .get(format!("{}{location}", self.base))
                .send()
                .await
                .unwrap();
        }
    }

    pub async fn get(&self, path: &str) -> Page {
        let response = self
            .client
            .get(format!("{}{path}", self.base))
            .send()
            .await
            .unwrap();
        self.follow(response, path.to_owned()).await
    }

    /// `path`, as a link on the page at `referer` (an absolute URL) opens it.
    pub async fn get_from(&self, path: &str, referer: &str) -> Page {
        let response = self
            .client
            .get(format!("{}{path}", self.base))
            .header(reqwest::header::REFERER, referer)
            .send()
            .await
            .unwrap();
        self.follow(response, path.to_owned()).await
    }

    pub async fn post(&self, path: &str, form: &[(&str, &str)]) -> Page {
        let response = self
            .client
            .post(format!("{}{path}", self.base))
            .form(form)
            .send()
            .await
            .unwrap();
        self.follow(response, path.to_owned()).await
    }

    /// Reloads a progress page, as its refresh does, until the sync it
    /// shows has ended (a condition, bounded by a deadline).
    pub async fn until_synced(&self, mut progress: Page) -> Page {
        let deadline = Instant::now() + Duration::from_secs(60);
        while progress.body.contains("id=\"working\"") {
            assert!(Instant::now() < deadline, "the sync did not end");
            tokio::time::sleep(Duration::from_millis(50)).await;
            progress = self.get(&progress.location.clone()).await;
        }
        progress
    }

    /// Submits a GoCardless bank form `form` to `action` with `institution`
    /// and checks that Tributary sends the person on to the bank's own page
    /// (the requisition's link in the fake's mock data).
    pub async fn to_gocardless_bank(&self, form: &Page, action: &str, institution: &str) -> Page {
        let to_bank = self
            .submit(form, action, &[("institution_id", institution)])
            .await;
        assert!(
            to_bank
                .location
                .starts_with("https://ob.nordigen.com/psd2/start/"),
            "{}: {}",
            to_bank.location,
            to_bank.body
        );
        to_bank
    }

    /// Posts one file to the statement upload as a browser's file field
    /// does, with `csrf` as the form's token; the answer as it came.
    pub async fn upload_raw(&self, csrf: &str, name: &str, bytes: Vec<u8>) -> Response {
        let multipart = reqwest::multipart::Form::new()
            .text("csrf", csrf.to_owned())
            .part(
                "files",
                reqwest::multipart::Part::bytes(bytes).file_name(name.to_owned()),
            );
        self.client
            .post(format!("{}{UPLOAD}", self.base))
            .multipart(multipart)
            .send()
            .await
            .unwrap()
    }

    /// Uploads one file from the upload form `form`; the page it ends on.
    pub async fn upload(&self, form: &Page, name: &str, bytes: Vec<u8>) -> Page {
        let response = self.upload_raw(&form.csrf(), name, bytes).await;
        self.follow(response, UPLOAD.into()).await
    }

    /// Posts the form of `page` (its CSRF token added) to `path`.
    pub async fn submit(&self, page: &Page, path: &str, fields: &[(&str, &str)]) -> Page {
        let csrf = page.csrf();
        let mut form = vec![("csrf", csrf.as_str())];
        form.extend_from_slice(fields);
        self.post(path, &form).await
    }
}

pub fn authorize_path(app: &TestApp, redirect_uri: &str, state: &str, email: &str) -> String {
    let mut url = url::Url::parse("http://x/api/platform/oauth/authorize").unwrap();
    url.query_pairs_mut()
        .append_pair("client_id", app.client_id())
        .append_pair("redirect_uri", redirect_uri)
        .append_pair("state", state)
        .append_pair("email", email);
    format!("{}?{}", url.path(), url.query().unwrap())
}

pub fn code_in(outbox: &DevOutbox, email: &str) -> String {
    let mail = outbox.last_to(email).expect("a sign-in mail");
    let code: String = mail
        .subject
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    assert_eq!(code.len(), 6, "{}", mail.subject);
    assert!(mail.body.contains(&code));
    code
}

/// Authorize and sign in; returns the page after sign-in.
pub async fn sign_in(browser: &Browser, outbox: &DevOutbox, app: &TestApp, email: &str) -> Page {
    let authorize = authorize_path(app, &app.redirect_uris[0], "st-123", email);
    sign_in_at(browser, outbox, &authorize, email).await
}

/// Opens an authorization link (`path`, its `email` pre-filled) and signs
/// in with the mailed code; returns the page after sign-in.
pub async fn sign_in_at(browser: &Browser, outbox: &DevOutbox, path: &str, email: &str) -> Page {
    let sign_in = browser.get(path).await;
    assert_eq!(
        (sign_in.status, sign_in.location.as_str()),
        (StatusCode::OK, "/connect/sign-in")
    );
    sign_in.assert_shows(&format!("value=\"{email}\""));
    let verify = browser
        .submit(&sign_in, "/connect/sign-in", &[("email", email)])
        .await;
    assert_eq!(verify.location, "/connect/verify");
    verify.assert_shows(email);
    let code = code_in(outbox, email);
    browser
        .submit(&verify, "/connect/verify", &[("code", &code)])
        .await
}

/// Connects the sandbox from the bank list and waits, as the progress
/// page's refresh does, until the first sync has ended.
pub async fn connect_sandbox(browser: &Browser, banks: &Page, username: &str) -> Page {
    assert_eq!(banks.location, "/connect/banks", "{}", banks.body);
    let form = browser.get("/connect/banks/sandbox").await;
    assert_eq!(form.status, StatusCode::OK);
    let progress = browser
        .submit(
            &form,
            "/connect/banks/sandbox",
            &[("username", username), ("password", "x")],
        )
        .await;
    assert!(
        progress.location.starts_with("/connect/progress/"),
        "{}",
        progress.location
    );
    browser.until_synced(progress).await
}

/// Checks the redirect back to the app and redeems its code; returns the
/// access token and `GET /v1/accounts`.
pub async fn exchange(server: &PlatformServer, app: &TestApp, redirect: &str) -> (String, Value) {
    let url = url::Url::parse(redirect).unwrap();
    let query: std::collections::HashMap<_, _> = url.query_pairs().into_owned().collect();
    assert_eq!(
        query.get("state").map(String::as_str),
        Some("st-123"),
        "{redirect}"
    );
    let access = server
        .redeem_code(app, &app.redirect_uris[0], &query["code"])
        .await;
    let accounts = server
        .bearer_json(Method::GET, "/api/platform/v1/accounts", &access)
        .await;
    (access, accounts)
}

/// A code for `app` sent to `redirect_uri` by `email`, who connects the
/// sandbox and approves; the URL the browser is sent back to.
pub async fn approved_redirect(
    browser: &Browser,
    outbox: &DevOutbox,
    app: &TestApp,
    redirect_uri: &str,
    email: &str,
) -> String {
    let banks = sign_in_at(
        browser,
        outbox,
        &authorize_path(app, redirect_uri, "quickstart", email),
        email,
    )
    .await;
    connect_sandbox(browser, &banks, "user_good").await;
    let consent = browser.get("/connect/consent").await;
    let back = browser
        .submit(&consent, "/connect/consent", &[("decision", "approve")])
        .await;
    assert_eq!(back.status, StatusCode::FOUND, "{}", back.body);
    back.location
}

/// Signs `email` in to the developer dashboard with the mailed code; the
/// page it lands on (the apps).
pub async fn developer_sign_in(browser: &Browser, outbox: &DevOutbox, email: &str) -> Page {
    let signed_out = browser.get("/developers").await;
    assert_eq!(signed_out.status, StatusCode::OK);
    signed_out.assert_shows("Send me a code");
    let verify = browser
        .submit(&signed_out, "/developers/sign-in", &[("email", email)])
        .await;
    assert_eq!(verify.status, StatusCode::OK, "{}", verify.body);
    let code = code_in(outbox, email);
    let home = browser
        .submit(&verify, "/developers/sign-in/code", &[("code", &code)])
        .await;
    assert_eq!(
        (home.status, home.location.as_str()),
        (StatusCode::OK, "/developers"),
        "{}",
        home.body
    );
    home.assert_shows("Create an app");
    home
}
