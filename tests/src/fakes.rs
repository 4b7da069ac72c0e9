//! Local fakes of the internet providers' APIs, built from their documented
//! shapes (the providers' own published mock data where there is some), for
//! tests that drive the real servers and CLI. Loopback only.

use base64::Engine as _;
use std::sync::Arc;
use std::time::Duration;
use tributary_outbound::{Guard, PrivateAllowance};
use tributary_providers::Connector;
use tributary_providers::gocardless::{GoCardlessConfig, GoCardlessConnector};
use tributary_providers::simplefin::SimpleFinConnector;
use tributary_storage::testing::testdata;
use wiremock::matchers::{method, path, path_regex};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

/// A SimpleFIN bridge: one setup token, claimable once (then 403), whose
/// Access URL reads the eight accounts of `home-assistant-simplefin`.
#[derive(Debug)]
pub struct SimpleFinBridge {
    pub server: MockServer,
    /// The Basic password inside the Access URL: it must never be stored in
    /// plain text.
    pub password: &'static str,
}

impl SimpleFinBridge {
    pub async fn start() -> Self {
        let server = MockServer::start().await;
        let password = "s3cret-bridge-pw";
        let access_url = format!("http://bridge:{password}@{}/simplefin", server.address());
        Mock::given(method("POST"))
            .and(path("/claim/TOKEN"))
            .respond_with(ResponseTemplate::new(200).set_body_string(access_url))
            .up_to_n_times(1)
            .mount(&server)
            .await;
        Mock::given(method("POST"))
            .and(path("/claim/TOKEN"))
            .respond_with(ResponseTemplate::new(403))
            .mount(&server)
            .await;
        Mock::given(method("GET"))
            .and(path("/simplefin/accounts"))
            .respond_with(ResponseTemplate::new(200).set_body_raw(
                testdata("home-assistant-simplefin/fin_data.json"),
                "application/json",
            ))
            .mount(&server)
            .await;
        Self { server, password }
    }

    /// The setup token a person pastes: base64 of the claim URL.
    pub fn setup_token(&self) -> String {
        base64::engine::general_purpose::STANDARD
            .encode(format!("{}/claim/TOKEN", self.server.uri()))
    }
}

/// A SimpleFIN connector that reaches the private addresses `allowed`
/// (the fakes listen on loopback, as a home lab's SimpleFIN server would
/// on its LAN), made off the async runtime: its blocking HTTP client must
/// not be made or dropped on it.
pub fn simplefin_connector(timeout: Duration, allowed: PrivateAllowance) -> Arc<dyn Connector> {
    std::thread::spawn(move || {
        let guard = Guard::new(allowed);
        Arc::new(SimpleFinConnector::new(timeout, &guard).expect("SimpleFIN's client"))
            as Arc<dyn Connector>
    })
    .join()
    .expect("made the SimpleFIN connector")
}

/// GoCardless Bank Account Data: token, institutions, agreements and
/// requisitions answer with the published mock data
/// (`gocardless-robintty/responses.json`); a requisition read back is
/// linked, as it is once the person has authorised their bank, and its
/// accounts have details, balances and transactions. Any institution id
/// reads as the mock data's institution.
pub async fn gocardless_api() -> MockServer {
    let api = MockServer::start().await;
    mount_gocardless(&api).await;
    api
}

/// A fresh [`gocardless_api`] and the real connector pointed at it, for a
/// server's registry. The connector's blocking HTTP client is made off the
/// async runtime, which may not hold one.
pub async fn gocardless_connector() -> (MockServer, Arc<dyn Connector>) {
    let api = gocardless_api().await;
    let config = GoCardlessConfig {
        base_url: api.uri(),
        secret_id: "operator".into(),
        secret_key: "operator-secret".into(),
        timeout: Duration::from_secs(5),
    };
    let connector: Arc<dyn Connector> =
        std::thread::spawn(move || Arc::new(GoCardlessConnector::new(config).unwrap()))
            .join()
            .unwrap();
    (api, connector)
}

/// The bodies of the requisitions Tributary created at the fake.
pub async fn gocardless_requisitions(api: &MockServer) -> Vec<serde_json::Value> {
    api.received_requests()
        .await
        .unwrap()
        .into_iter()
        .filter(|r| r.url.path() == "/requisitions/")
        .map(|r| serde_json::from_slice(&r.body).unwrap())
        .collect()
}

async fn mount_gocardless(api: &MockServer) {
    for (verb, route, group, name, status) in [
        (
            "POST",
            "^/token/new/$",
            "TokenEndpointMockData",
            "GetNewToken",
            None,
        ),
        (
            "GET",
            "^/institutions/$",
            "InstitutionsEndpointMockData",
            "GetInstitutions",
            None,
        ),
        (
            "GET",
            "^/institutions/[^/]+/$",
            "InstitutionsEndpointMockData",
            "GetInstitution",
            None,
        ),
        (
            "POST",
            "^/agreements/enduser/$",
            "AgreementsEndpointMockData",
            "CreateAgreement",
            None,
        ),
        (
            "POST",
            "^/requisitions/$",
            "RequisitionsEndpointMockData",
            "GetRequisition",
            None,
        ),
        (
            "GET",
            "^/requisitions/[^/]+/$",
            "RequisitionsEndpointMockData",
            "GetRequisition",
            Some("LN"),
        ),
        (
            "GET",
            "^/accounts/[^/]+/details/$",
            "AccountsEndpointMockData",
            "GetAccountDetails",
            None,
        ),
        (
            "GET",
            "^/accounts/[^/]+/balances/$",
            "AccountsEndpointMockData",
            "GetBalances",
            None,
        ),
        (
            "GET",
            "^/accounts/[^/]+/transactions/$",
            "AccountsEndpointMockData",
            "GetTransactions",
            None,
        ),
    ] {
        Mock::given(method(verb))
            .and(path_regex(route))
            .respond_with(gocardless_fixture(group, name, status))
            .mount(api)
            .await;
    }
}

/// A GoCardless fixture response; a requisition in `status`, where given.
pub fn gocardless_fixture(group: &str, name: &str, status: Option<&str>) -> ResponseTemplate {
    let all: serde_json::Value =
        serde_json::from_str(&testdata("gocardless-robintty/responses.json"))
            .expect("the GoCardless mock data is JSON");
    let mut value = all[group][name].clone();
    if let Some(status) = status {
        value["status"] = status.into();
    }
    ResponseTemplate::new(200).set_body_raw(value.to_string(), "application/json")
}

/// How a stateful fake answers one route: from its state and the request.
pub type Route<F> = dyn Fn(&F, &Request) -> ResponseTemplate + Send + Sync;

/// A route of a stateful fake (`F`: the fake's handle, its state inside).
pub struct Answer<F> {
    pub fake: F,
    pub answer: Arc<Route<F>>,
}

impl<F> std::fmt::Debug for Answer<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Answer")
    }
}

impl<F: Send + Sync + 'static> Respond for Answer<F> {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        (self.answer)(&self.fake, request)
    }
}

/// Mounts each `GET` route (a path pattern and its answer) of `fake` on
/// `server`.
pub async fn mount_gets<F: Clone + Send + Sync + 'static>(
    server: &MockServer,
    fake: &F,
    routes: Vec<(&str, Box<Route<F>>)>,
) {
    for (route, answer) in routes {
        Mock::given(method("GET"))
            .and(path_regex(route))
            .respond_with(Answer {
                fake: fake.clone(),
                answer: Arc::from(answer),
            })
            .mount(server)
            .await;
    }
}

/// The token of a request's `Authorization: Bearer` header.
pub fn bearer_token(request: &Request) -> Option<String> {
    request
        .headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::to_owned)
}

/// What a user's browser does at a provider's page `link` (a bank's, an
/// aggregator's sign-in or portal, on a local fake): where it is sent back.
pub async fn sent_back_from(link: &str) -> String {
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("a client");
    let answer = client.get(link).send().await.expect("the page answers");
    assert_eq!(answer.status(), reqwest::StatusCode::FOUND, "{link}");
    answer.headers()["location"]
        .to_str()
        .expect("a location")
        .to_owned()
}
