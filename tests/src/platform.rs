//! A running Platform API over a fresh database with three apps: two
//! confidential ones (A and B) and a public one (P).

use crate::clock;
use actix_web::dev::ServerHandle;
use oauth2::basic::BasicClient;
use oauth2::{AuthorizationCode, ClientId, ClientSecret, RedirectUrl, TokenResponse, TokenUrl};
use serde_json::Value;
use std::sync::Arc;
use tributary_auth::developers::Signup;
use tributary_auth::oauth::{new_client_id, new_client_secret};
use tributary_domain::clock::{Clock, ManualClock};
use tributary_domain::model::BillingModel;
use tributary_http::server::{Interface, Parts};
use tributary_notify::mail::DevOutbox;
use tributary_providers::Connector;
use tributary_providers::payments::TestProcessor;
use tributary_storage::apps::{self, AppRecord, NewApp};
use tributary_storage::testing::TestDatabase;

/// An app and its plain-text secret (for confidential apps).
#[derive(Debug, Clone)]
pub struct TestApp {
    pub record: AppRecord,
    pub secret: Option<String>,
    pub redirect_uris: Vec<String>,
}

impl TestApp {
    pub fn client_id(&self) -> &str {
        &self.record.client_id
    }

    pub fn secret(&self) -> &str {
        self.secret.as_deref().unwrap_or_default()
    }
}

#[derive(Debug)]
pub struct PlatformServer {
    pub base_url: String,
    pub clock: Arc<ManualClock>,
    pub database: TestDatabase,
    pub app_a: TestApp,
    pub app_b: TestApp,
    pub public_app: TestApp,
    handle: ServerHandle,
}

impl PlatformServer {
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base_url)
    }

    pub async fn stop(self) {
        self.handle.stop(true).await;
    }

    /// Redeems an authorization code as `app` does, with the oauth2 crate
    /// and the app's secret; returns the access token.
    pub async fn redeem_code(&self, app: &TestApp, redirect_uri: &str, code: &str) -> String {
        let client = BasicClient::new(ClientId::new(app.client_id().to_owned()))
            .set_client_secret(ClientSecret::new(app.secret().to_owned()))
            .set_token_uri(TokenUrl::new(self.url("/api/platform/oauth/token")).unwrap())
            .set_redirect_uri(RedirectUrl::new(redirect_uri.to_owned()).unwrap());
        let http = oauth2::reqwest::ClientBuilder::new()
            .redirect(oauth2::reqwest::redirect::Policy::none())
            .build()
            .unwrap();
        let tokens = client
            .exchange_code(AuthorizationCode::new(code.to_owned()))
            .request_async(&http)
            .await
            .unwrap();
        tokens.access_token().secret().clone()
    }

    /// `method path` with a bearer access token; the JSON answer.
    pub async fn bearer_json(&self, method: reqwest::Method, path: &str, access: &str) -> Value {
        crate::json_answer(
            reqwest::Client::new()
                .request(method, self.url(path))
                .bearer_auth(access),
        )
        .await
    }
}

fn create_app(
    database: &TestDatabase,
    clock: &dyn Clock,
    name: &str,
    public: bool,
    billing_model: BillingModel,
    max_accounts: Option<i32>,
) -> TestApp {
    let secret = (!public).then(new_client_secret);
    let redirect_uris = vec![
        format!("https://{name}.example/callback"),
        format!("https://{name}.example/other"),
    ];
    let record = apps::create_app(
        &mut database.db().conn().expect("connection"),
        &NewApp {
            client_id: &new_client_id(),
            name,
            client_secret_hash: secret.as_ref().map(|(_, hash)| hash.as_str()),
            billing_model,
            default_max_accounts: max_accounts,
            redirect_uris: &redirect_uris,
            now: clock.now().naive_utc(),
        },
    )
    .expect("create app");
    TestApp {
        record,
        secret: secret.map(|(s, _)| s),
        redirect_uris,
    }
}

/// Apps A (confidential, integrator pays, 6 accounts), B (confidential,
/// `app_b_billing`) and P (public).
fn seed_apps(
    database: &TestDatabase,
    clock: &dyn Clock,
    app_b_billing: BillingModel,
) -> [TestApp; 3] {
    [
        create_app(
            database,
            clock,
            "app-a",
            false,
            BillingModel::Integrator,
            Some(6),
        ),
        create_app(database, clock, "app-b", false, app_b_billing, None),
        create_app(
            database,
            clock,
            "app-p",
            true,
            BillingModel::Integrator,
            None,
        ),
    ]
}

/// The `TRIBUTARY_PUBLIC_URL` of the Platform API test server.
pub const PUBLIC_URL: &str = "https://tributary.example";

/// Seeds the apps and serves the real Platform API on a free port.
pub fn start_platform(database: TestDatabase) -> PlatformServer {
    let clock = clock();
    let apps = seed_apps(&database, clock.as_ref(), BillingModel::Integrator);
    let config = crate::test_config(&database, Some(PUBLIC_URL));
    let parts = Parts {
        clock: Some(clock.clone()),
        database: Some(database.db().clone()),
        registry: Some(crate::sandbox_registry()),
        ..Parts::default()
    };
    serve(database, clock, config, parts, apps)
}

/// The browser flow's server: the Platform API with the sandbox bank, the
/// development outbox and the test payment processor, reached over plain
/// http on loopback (so its cookies are not `Secure`). App A is the
/// integrator-pays app (6 accounts by default), app B is user-pays.
pub fn start_platform_with_pages(database: TestDatabase) -> (PlatformServer, DevOutbox) {
    start_platform_with_pages_and(database, Vec::new(), |parts| parts)
}

/// As [`start_platform_with_pages`] (the developer dashboard's sign-up
/// open), with more connectors beside the
/// sandbox (made off the async runtime where they hold blocking clients)
/// and a last say over the state (another payment processor, say).
pub fn start_platform_with_pages_and(
    database: TestDatabase,
    connectors: Vec<Arc<dyn Connector>>,
    customize: impl FnOnce(Parts) -> Parts,
) -> (PlatformServer, DevOutbox) {
    pages_server(database, connectors, customize, Signup::Open)
}

/// As [`start_platform_with_pages`], with the developer dashboard's
/// sign-up as `signup` says.
pub fn start_platform_with_signup(
    database: TestDatabase,
    signup: Signup,
) -> (PlatformServer, DevOutbox) {
    pages_server(database, Vec::new(), |parts| parts, signup)
}

/// As [`start_platform_with_pages`], its configuration (no public URL
/// yet) changed by `configure` first.
pub fn start_platform_configured(
    database: TestDatabase,
    configure: impl FnOnce(&mut tributary_app::Config),
) -> (PlatformServer, DevOutbox) {
    configured_pages_server(database, Vec::new(), |parts| parts, Signup::Open, configure)
}

fn pages_server(
    database: TestDatabase,
    connectors: Vec<Arc<dyn Connector>>,
    customize: impl FnOnce(Parts) -> Parts,
    signup: Signup,
) -> (PlatformServer, DevOutbox) {
    configured_pages_server(database, connectors, customize, signup, |_| {})
}

fn configured_pages_server(
    database: TestDatabase,
    connectors: Vec<Arc<dyn Connector>>,
    customize: impl FnOnce(Parts) -> Parts,
    signup: Signup,
    configure: impl FnOnce(&mut tributary_app::Config),
) -> (PlatformServer, DevOutbox) {
    let clock = clock();
    let apps = seed_apps(&database, clock.as_ref(), BillingModel::User);
    let mut registry = crate::sandbox_registry();
    for connector in connectors {
        registry.register(connector);
    }
    let outbox = DevOutbox::default();
    let parts = Parts {
        clock: Some(clock.clone()),
        database: Some(database.db().clone()),
        registry: Some(registry),
        mailer: Some(Arc::new(outbox.clone())),
        payments: Some(Arc::new(TestProcessor::new(database.db().clone()))),
        outbound: None,
    };
    let mut config = crate::test_config(&database, None);
    config.developer_signup = signup;
    configure(&mut config);
    (
        serve(database, clock, config, customize(parts), apps),
        outbox,
    )
}

fn serve(
    database: TestDatabase,
    clock: Arc<ManualClock>,
    config: tributary_app::Config,
    parts: Parts,
    [app_a, app_b, public_app]: [TestApp; 3],
) -> PlatformServer {
    let (handle, base_url) = crate::serve(Interface::Platform, config, parts);
    PlatformServer {
        base_url,
        clock,
        database,
        app_a,
        app_b,
        public_app,
        handle,
    }
}

/// A new user of app A (made with the app's credentials) with the OFX
/// statement `checking.ofx` imported; their access token and user id.
pub async fn user_with_statement(server: &PlatformServer, email: &str) -> (String, String) {
    let created = crate::json_answer(
        reqwest::Client::new()
            .post(server.url("/api/platform/v1/users"))
            .basic_auth(server.app_a.client_id(), Some(server.app_a.secret()))
            .json(&serde_json::json!({ "email": email })),
    )
    .await;
    let token = created["access_token"].as_str().unwrap().to_owned();
    let statement = reqwest::multipart::Form::new().part(
        "files",
        reqwest::multipart::Part::bytes(tributary_storage::testing::testdata_bytes(
            "ofxparse/fixtures/checking.ofx",
        ))
        .file_name("checking.ofx"),
    );
    let imported = reqwest::Client::new()
        .post(server.url("/api/platform/v1/imports"))
        .bearer_auth(&token)
        .multipart(statement)
        .send()
        .await
        .unwrap();
    assert_eq!(imported.status(), reqwest::StatusCode::OK);
    (token, created["user_id"].as_str().unwrap().to_owned())
}
