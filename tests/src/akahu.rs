//! A local fake of Akahu's enduring API (`v1`, as its developer docs of
//! March 2026 and JS SDK 2.5 describe it), for tests only: every call must
//! carry a known user token (`Authorization: Bearer`, else 401) and the
//! app's token (`X-Akahu-ID`, else 403). It serves two accounts at two
//! banks, settled transactions page by page (`cursor.next`, with an empty
//! page before the last), pending transactions without ids, a refresh
//! endpoint that counts its calls, and OAuth (an authorize
//! page and `POST /token`) for the full-app mode. Faults are switched on
//! by the test.

use crate::fakes::{Answer, Route};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tributary_providers::Connector;
use tributary_providers::akahu::{AkahuApp, AkahuConfig, AkahuConnector};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, ResponseTemplate};

/// A personal app's tokens, as my.akahu.nz shows them.
pub const PERSONAL_APP_TOKEN: &str = "app_token_111111111111111111111111";
pub const PERSONAL_USER_TOKEN: &str = "user_token_111111111111111111111111";
/// The operator's full app.
pub const FULL_APP_TOKEN: &str = "app_token_222222222222222222222222";
pub const FULL_APP_SECRET: &str = "akahu-app-secret";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    Slow,
    /// 500 `Internal Error`.
    ServerError,
    /// 429, no body (none is documented).
    RateLimited,
    /// 200 with a body that is not JSON.
    Malformed,
    /// The user revoked the token: 401.
    Revoked,
    /// Akahu lost access to the bank: every account INACTIVE.
    Inactive,
}

#[derive(Debug)]
struct State {
    /// user token → its app token.
    tokens: HashMap<String, String>,
    /// OAuth codes → redirect.
    codes: HashMap<String, String>,
    settled: Vec<Value>,
    pending: Vec<Value>,
    fault: Option<Fault>,
    refreshes: usize,
    next: usize,
}

#[derive(Debug, Clone)]
pub struct AkahuFake {
    pub server: Arc<MockServer>,
    state: Arc<Mutex<State>>,
}

fn failure(status: u16, message: &str) -> ResponseTemplate {
    ResponseTemplate::new(status).set_body_json(json!({"success": false, "message": message}))
}

/// `days` before now, as Akahu writes dates (UTC, milliseconds).
pub fn days_ago(days: i64) -> String {
    (chrono::Utc::now() - chrono::Duration::days(days))
        .date_naive()
        .and_time(chrono::NaiveTime::MIN)
        .and_utc()
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

fn settled(id: &str, account: &str, amount: &str, days: i64, description: &str) -> Value {
    serde_json::from_str(&format!(
        r#"{{"_id": "{id}", "_account": "{account}", "_connection": "conn_westpac", "_user": "user_1",
            "created_at": "{d}", "updated_at": "{d}", "date": "{d}", "description": "{description}",
            "amount": {amount}, "balance": 100, "type": "EFTPOS"}}"#,
        d = days_ago(days)
    ))
    .unwrap()
}

fn pending(account: &str, amount: &str, days: i64, description: &str) -> Value {
    serde_json::from_str(&format!(
        r#"{{"_user": "user_1", "_account": "{account}", "_connection": "conn_asb", "updated_at": "{d}",
            "date": "{d}", "description": "{description}", "amount": {amount}, "type": "CREDIT CARD"}}"#,
        d = days_ago(days)
    ))
    .unwrap()
}

impl AkahuFake {
    pub async fn start() -> Self {
        let mut warehouse = settled("trans_1", "acc_checking", "-5.5", 3, "THE WAREHOUSE");
        warehouse["merchant"] = json!({"_id": "merchant_1", "name": "The Warehouse"});
        let fake = Self {
            server: Arc::new(MockServer::start().await),
            state: Arc::new(Mutex::new(State {
                tokens: HashMap::from([(
                    PERSONAL_USER_TOKEN.to_owned(),
                    PERSONAL_APP_TOKEN.to_owned(),
                )]),
                codes: HashMap::new(),
                settled: vec![
                    warehouse,
                    settled("trans_2", "acc_checking", "2500", 10, "SALARY ACME LTD"),
                    settled("trans_3", "acc_card", "-61.37", 6, "Z ENERGY"),
                ],
                pending: vec![pending("acc_card", "-42.1", 0, "COUNTDOWN AUCKLAND")],
                fault: None,
                refreshes: 0,
                next: 0,
            })),
        };
        fake.mount().await;
        fake
    }

    /// The real connector pointed at the fake; `full_app`: with the
    /// operator's app for OAuth.
    pub fn connector(&self, timeout: Duration, full_app: bool) -> Arc<dyn Connector> {
        let config = AkahuConfig {
            base_url: format!("{}/v1", self.server.uri()),
            oauth_url: format!("{}/oauth", self.server.uri()),
            app: full_app.then(|| AkahuApp {
                app_token: FULL_APP_TOKEN.into(),
                app_secret: FULL_APP_SECRET.into(),
            }),
            timeout,
        };
        std::thread::spawn(move || {
            Arc::new(AkahuConnector::new(config).unwrap()) as Arc<dyn Connector>
        })
        .join()
        .unwrap()
    }

    pub fn set_fault(&self, fault: Option<Fault>) {
        self.state.lock().unwrap().fault = fault;
    }

    /// Refreshes Akahu accepted so far.
    pub fn refreshes(&self) -> usize {
        self.state.lock().unwrap().refreshes
    }

    /// The pending purchase settles: gone from the pending list, and a
    /// settled transaction with an id of its own (and the final amount).
    pub fn settle_the_pending(&self) {
        let mut state = self.state.lock().unwrap();
        state.pending.clear();
        state.settled.push(settled(
            "trans_4",
            "acc_card",
            "-42.1",
            0,
            "COUNTDOWN AUCKLAND NZ",
        ));
    }

    async fn mount(&self) {
        let routes: Vec<(&str, &str, Box<Route<Self>>)> = vec![
            (
                "GET",
                "/v1/accounts",
                Box::new(|f, r| f.as_user(r, Self::accounts)),
            ),
            (
                "GET",
                "/v1/transactions",
                Box::new(|f, r| f.as_user(r, Self::transactions)),
            ),
            (
                "GET",
                "/v1/transactions/pending",
                Box::new(|f, r| f.as_user(r, Self::pending)),
            ),
            (
                "POST",
                "/v1/refresh",
                Box::new(|f, r| f.as_user(r, Self::refresh)),
            ),
            ("POST", "/v1/token", Box::new(|f, r| f.token(r))),
            ("GET", "/oauth", Box::new(|f, r| f.authorize(r))),
        ];
        for (verb, route, answer) in routes {
            Mock::given(method(verb))
                .and(path(route))
                .respond_with(Answer {
                    fake: self.clone(),
                    answer: Arc::from(answer),
                })
                .mount(&self.server)
                .await;
        }
    }

    fn as_user(
        &self,
        request: &Request,
        answer: fn(&Self, &Request) -> ResponseTemplate,
    ) -> ResponseTemplate {
        let header = |name: &str| {
            request
                .headers
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned)
        };
        let user =
            header("authorization").and_then(|v| v.strip_prefix("Bearer ").map(str::to_owned));
        let app = header("x-akahu-id");
        let (known, fault) = {
            let state = self.state.lock().unwrap();
            (
                user.as_ref().and_then(|u| state.tokens.get(u).cloned()),
                state.fault,
            )
        };
        let Some(app_of_user) = known else {
            return failure(401, "Unauthorized");
        };
        if fault == Some(Fault::Revoked) {
            return failure(401, "Unauthorized");
        }
        if app.as_deref() != Some(app_of_user.as_str()) {
            return failure(403, "Forbidden");
        }
        match fault {
            Some(Fault::Slow) => answer(self, request).set_delay(Duration::from_secs(5)),
            Some(Fault::ServerError) => failure(500, "Internal Error"),
            Some(Fault::RateLimited) => ResponseTemplate::new(429),
            Some(Fault::Malformed) => ResponseTemplate::new(200)
                .set_body_raw("{\"success\": true, \"items\": [", "application/json"),
            Some(Fault::Revoked | Fault::Inactive) | None => answer(self, request),
        }
    }

    fn accounts(&self, _: &Request) -> ResponseTemplate {
        let status = if self.state.lock().unwrap().fault == Some(Fault::Inactive) {
            "INACTIVE"
        } else {
            "ACTIVE"
        };
        ResponseTemplate::new(200).set_body_raw(
            format!(
                r#"{{"success": true, "items": [
                {{"_id": "acc_checking", "_authorisation": "auth_1", "_credentials": "creds_1",
                  "connection": {{"_id": "conn_westpac", "name": "Westpac", "logo": "https://static.akahu.nz/images/connections/westpac.png", "connection_type": "classic"}},
                  "name": "Westpac Choice", "status": "{status}", "formatted_account": "01-0137-0000000-00", "type": "CHECKING",
                  "attributes": ["TRANSACTIONS"], "balance": {{"currency": "NZD", "current": 447.75, "available": 447.75, "overdrawn": false}}}},
                {{"_id": "acc_card", "_authorisation": "auth_2",
                  "connection": {{"_id": "conn_asb", "name": "ASB", "logo": "https://static.akahu.nz/images/connections/asb.png", "connection_type": "official"}},
                  "name": "ASB Visa Light", "status": "{status}", "formatted_account": "4321-****-****-5678", "type": "CREDITCARD",
                  "attributes": ["TRANSACTIONS"], "balance": {{"currency": "NZD", "current": -103.47, "limit": 2000}}}}]}}"#
            ),
            "application/json",
        )
    }

    /// Settled transactions in `(start, end]`, two a page, with an empty
    /// page before the last (the docs: check `cursor.next`, not the page).
    fn transactions(&self, request: &Request) -> ResponseTemplate {
        let query: HashMap<String, String> = request.url.query_pairs().into_owned().collect();
        let (Some(start), Some(end)) = (query.get("start"), query.get("end")) else {
            return failure(400, "start and end are required here");
        };
        let all: Vec<Value> = self
            .state
            .lock()
            .unwrap()
            .settled
            .iter()
            .filter(|t| {
                let date = t["date"].as_str().unwrap_or_default();
                date > start.as_str() && date <= end.as_str()
            })
            .cloned()
            .collect();
        let page: usize = query
            .get("cursor")
            .and_then(|c| c.strip_prefix("page-"))
            .and_then(|p| p.parse().ok())
            .unwrap_or(0);
        let pages = all.len().div_ceil(2);
        // Page `pages` is the empty one; then no more.
        let items: Vec<&Value> = all.iter().skip(page * 2).take(2).collect();
        let next = (page < pages).then(|| format!("page-{}", page + 1));
        ResponseTemplate::new(200).set_body_raw(
            format!(
                r#"{{"success": true, "items": [{}], "cursor": {{"next": {}}}}}"#,
                items
                    .iter()
                    .map(|t| t.to_string())
                    .collect::<Vec<_>>()
                    .join(","),
                next.map_or("null".to_owned(), |n| format!("\"{n}\""))
            ),
            "application/json",
        )
    }

    fn pending(&self, _: &Request) -> ResponseTemplate {
        let items = self.state.lock().unwrap().pending.clone();
        ResponseTemplate::new(200).set_body_raw(
            format!(
                r#"{{"success": true, "items": [{}]}}"#,
                items
                    .iter()
                    .map(Value::to_string)
                    .collect::<Vec<_>>()
                    .join(",")
            ),
            "application/json",
        )
    }

    /// Akahu's refresh, counted: the test checks the connector keeps to
    /// the rest period (what Akahu answers within it is not documented).
    fn refresh(&self, _: &Request) -> ResponseTemplate {
        self.state.lock().unwrap().refreshes += 1;
        ResponseTemplate::new(200).set_body_json(json!({"success": true}))
    }

    /// `oauth.akahu.nz`: the user consents (or, with `deny`, does not) and
    /// goes back with a code and the state.
    fn authorize(&self, request: &Request) -> ResponseTemplate {
        let query: HashMap<String, String> = request.url.query_pairs().into_owned().collect();
        if query.get("response_type").map(String::as_str) != Some("code")
            || query.get("client_id").map(String::as_str) != Some(FULL_APP_TOKEN)
            || query.get("scope").map(String::as_str) != Some("ENDURING_CONSENT")
        {
            return ResponseTemplate::new(400);
        }
        let (Some(redirect), Some(state)) = (query.get("redirect_uri"), query.get("state")) else {
            return ResponseTemplate::new(400);
        };
        let mut back = url::Url::parse(redirect).unwrap();
        if query.contains_key("deny") {
            back.query_pairs_mut()
                .append_pair("error", "access_denied")
                .append_pair("error_description", "The user declined")
                .append_pair("state", state);
        } else {
            let code = {
                let mut s = self.state.lock().unwrap();
                s.next += 1;
                format!("code_{:08}", s.next)
            };
            self.state
                .lock()
                .unwrap()
                .codes
                .insert(code.clone(), redirect.clone());
            back.query_pairs_mut()
                .append_pair("code", &code)
                .append_pair("state", state);
        }
        ResponseTemplate::new(302).insert_header("location", back.as_str())
    }

    fn token(&self, request: &Request) -> ResponseTemplate {
        let body: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
        let oauth = |error: &str, description: &str| {
            ResponseTemplate::new(400)
                .set_body_json(json!({"error": error, "error_description": description}))
        };
        if body["grant_type"] != "authorization_code"
            || body["client_id"] != FULL_APP_TOKEN
            || body["client_secret"] != FULL_APP_SECRET
        {
            return oauth("unauthorized_client", "Bad client credentials");
        }
        let code = body["code"].as_str().unwrap_or_default();
        let mut state = self.state.lock().unwrap();
        match state.codes.remove(code) {
            Some(redirect) if body["redirect_uri"] == redirect.as_str() => {
                state.next += 1;
                let token = format!("user_token_{:024}", state.next);
                state
                    .tokens
                    .insert(token.clone(), FULL_APP_TOKEN.to_owned());
                ResponseTemplate::new(200).set_body_json(json!({
                    "success": true, "access_token": token, "token_type": "bearer", "scope": "ENDURING_CONSENT"}))
            }
            _ => oauth("invalid_grant", "This code has already been used."),
        }
    }
}
