//! A local fake of TrueLayer (its authorization server and Data API v1,
//! from the shapes of its documentation and its published client's
//! fixtures), for tests only. It checks the client's id and secret on every
//! token request, plays the bank's consent page (a return with a one-time
//! `code` and our `state`, or `access_denied`), hands out tokens whose
//! refresh token is good for one use (each refresh gives a new one, as an
//! OAuth server may), and serves `/me`, a current account and a credit
//! card with balances, booked and pending transactions (TrueLayer's ids for
//! pending ones, and for booked ones without the bank's id, change on every
//! request, as TrueLayer warns they may; `from` is read and filters).
//! Faults are switched on by the test: a slow answer, a 5xx, a rate limit,
//! the bank's daily allowance spent, a body that does not parse, a consent
//! that has ended (`invalid_grant`) or was revoked (`access_denied`).

use crate::fakes::{Answer, Route};
use serde_json::{Value, json};
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tributary_providers::Connector;
use tributary_providers::truelayer::{TrueLayerConfig, TrueLayerConnector};
use wiremock::matchers::{method, path, path_regex};
use wiremock::{Mock, MockServer, Request, ResponseTemplate};

pub const CLIENT_ID: &str = "sandbox-tributary-3f2a1c";
pub const CLIENT_SECRET: &str = "tl-client-secret-not-for-logs";
/// The bank every test connects.
pub const BANK: &str = "ob-lloyds";

/// A fault the next data calls meet, until cleared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// Answers after longer than the connector waits.
    Slow,
    /// 503 `provider_error`.
    ServerError,
    /// 429 `provider_too_many_requests`.
    RateLimited,
    /// 429 `provider_request_limit_exceeded`: the bank's unattended reads
    /// for the day are spent.
    DailyAllowanceSpent,
    /// 403 `access_denied`: the person revoked the access at their bank.
    Revoked,
    /// 200 with a body that is not JSON.
    Malformed,
    /// The consent has ended: the refresh grant is `invalid_grant`.
    ConsentEnded,
}

#[derive(Debug, Default)]
struct State {
    /// One-time codes → the redirect URI they were issued for.
    codes: HashMap<String, String>,
    /// Refresh tokens still good (each is used once).
    refresh_tokens: HashSet<String>,
    access_tokens: HashSet<String>,
    /// The current account's booked transactions, newest state.
    booked: Vec<Value>,
    /// Its pending ones.
    pending: Vec<Value>,
    fault: Option<Fault>,
    data_calls: usize,
    next: usize,
}

/// The fake and what a test does to it.
#[derive(Debug, Clone)]
pub struct TrueLayerFake {
    pub server: Arc<MockServer>,
    state: Arc<Mutex<State>>,
}

fn error(status: u16, code: &str, description: &str) -> ResponseTemplate {
    ResponseTemplate::new(status)
        .set_body_json(json!({"error": code, "error_description": description}))
}

/// Midnight of a day `days` before today (UTC), as TrueLayer writes
/// timestamps (no zone).
pub fn days_ago(days: i64) -> String {
    format!(
        "{}T00:00:00",
        chrono::Utc::now().date_naive() - chrono::Duration::days(days)
    )
}

/// The current account's booked transactions: with the bank's normalised
/// id, and two alike with none of the bank's (TrueLayer's ids for them
/// change on every request; they stay two rows, and the same two).
pub fn booked_transactions() -> Vec<Value> {
    vec![
        json!({"transaction_id": "tl-1", "normalised_provider_transaction_id": "txn-001",
               "timestamp": days_ago(3), "description": "COFFEE ROASTERS LONDON", "amount": -12.50,
               "currency": "GBP", "transaction_type": "DEBIT", "transaction_category": "PURCHASE",
               "transaction_classification": ["Food & Dining", "Coffee shops"], "merchant_name": "Coffee Roasters",
               "running_balance": {"amount": 1830.77, "currency": "GBP"}, "meta": {"provider_transaction_category": "DEB"}}),
        json!({"transaction_id": "tl-2", "normalised_provider_transaction_id": "txn-002",
               "timestamp": days_ago(10), "description": "SALARY ACME LTD", "amount": 2500.00,
               "currency": "GBP", "transaction_type": "CREDIT", "transaction_category": "CREDIT",
               "transaction_classification": [], "meta": {}}),
        json!({"transaction_id": "tl-3", "timestamp": days_ago(5), "description": "KIOSK", "amount": -4.00,
               "currency": "GBP", "transaction_type": "DEBIT", "transaction_category": "PURCHASE",
               "transaction_classification": [], "meta": {}}),
        json!({"transaction_id": "tl-4", "timestamp": days_ago(5), "description": "KIOSK", "amount": -4.00,
               "currency": "GBP", "transaction_type": "DEBIT", "transaction_category": "PURCHASE",
               "transaction_classification": [], "meta": {}}),
    ]
}

/// A pending card payment at the grocer's.
pub fn pending_transactions() -> Vec<Value> {
    vec![
        json!({"timestamp": days_ago(0), "description": "GROCER KINGS CROSS", "amount": -23.10,
               "currency": "GBP", "transaction_type": "DEBIT", "transaction_category": "PURCHASE",
               "transaction_classification": [], "merchant_name": "Grocer", "meta": {}}),
    ]
}

impl TrueLayerFake {
    pub async fn start() -> Self {
        let fake = Self {
            server: Arc::new(MockServer::start().await),
            state: Arc::new(Mutex::new(State {
                booked: booked_transactions(),
                pending: pending_transactions(),
                ..State::default()
            })),
        };
        fake.mount().await;
        fake
    }

    /// The real connector pointed at the fake (both its servers), waiting
    /// `timeout` for an answer; made off the async runtime.
    pub fn connector(&self, timeout: Duration) -> Arc<dyn Connector> {
        let config = TrueLayerConfig {
            auth_url: self.server.uri(),
            api_url: self.server.uri(),
            client_id: CLIENT_ID.into(),
            client_secret: CLIENT_SECRET.into(),
            timeout,
        };
        std::thread::spawn(move || {
            Arc::new(TrueLayerConnector::new(config).unwrap()) as Arc<dyn Connector>
        })
        .join()
        .unwrap()
    }

    pub fn set_fault(&self, fault: Option<Fault>) {
        self.state.lock().unwrap().fault = fault;
    }

    pub fn data_calls(&self) -> usize {
        self.state.lock().unwrap().data_calls
    }

    /// Replaces the current account's booked and pending transactions.
    pub fn set_transactions(&self, booked: Vec<Value>, pending: Vec<Value>) {
        let mut state = self.state.lock().unwrap();
        state.booked = booked;
        state.pending = pending;
    }

    fn fresh(&self, prefix: &str) -> String {
        let mut state = self.state.lock().unwrap();
        state.next += 1;
        format!("{prefix}-{:06}", state.next)
    }

    async fn mount(&self) {
        let routes: Vec<(&str, &str, Box<Route<Self>>)> = vec![
            (
                "GET",
                "^/$",
                Box::new(|fake, request| fake.consent_page(request)),
            ),
            (
                "GET",
                "^/api/providers$",
                Box::new(|_, request| providers(request)),
            ),
            (
                "POST",
                "^/connect/token$",
                Box::new(|fake, request| fake.token(request)),
            ),
            (
                "GET",
                "^/data/v1/.*$",
                Box::new(|fake, request| fake.data(request)),
            ),
        ];
        for (verb, route, answer) in routes {
            Mock::given(method(verb))
                .and(path_regex(route))
                .respond_with(Answer {
                    fake: self.clone(),
                    answer: Arc::from(answer),
                })
                .mount(&self.server)
                .await;
        }
        Mock::given(path("/favicon.ico"))
            .respond_with(ResponseTemplate::new(404))
            .mount(&self.server)
            .await;
    }

    /// TrueLayer's authorization page: checks the link as TrueLayer does
    /// (the client, a code response, offline access, a known bank) and
    /// plays the user's consent at their bank (`deny=1`: they cancel).
    fn consent_page(&self, request: &Request) -> ResponseTemplate {
        let query: HashMap<String, String> = request.url.query_pairs().into_owned().collect();
        let given = |name: &str| query.get(name).map(String::as_str).unwrap_or_default();
        if given("client_id") != CLIENT_ID
            || given("response_type") != "code"
            || !given("scope").split(' ').any(|s| s == "offline_access")
            || given("provider_id") != BANK
            || !given("providers").split(' ').any(|p| p == BANK)
        {
            return ResponseTemplate::new(400).set_body_string(format!("bad link: {query:?}"));
        }
        let Ok(mut back) = url::Url::parse(given("redirect_uri")) else {
            return ResponseTemplate::new(400).set_body_string("redirect_uri");
        };
        if query.contains_key("deny") {
            back.query_pairs_mut()
                .append_pair("error", "access_denied")
                .append_pair("error_description", "The user cancelled at the bank")
                .append_pair("state", given("state"));
        } else {
            let code = self.fresh("code");
            self.state
                .lock()
                .unwrap()
                .codes
                .insert(code.clone(), given("redirect_uri").to_owned());
            back.query_pairs_mut()
                .append_pair("code", &code)
                .append_pair("state", given("state"));
        }
        ResponseTemplate::new(302).insert_header("location", back.as_str())
    }

    /// `POST /connect/token`, form-encoded, for the code and refresh grants.
    fn token(&self, request: &Request) -> ResponseTemplate {
        let form: HashMap<String, String> = url::form_urlencoded::parse(&request.body)
            .into_owned()
            .collect();
        let given = |name: &str| form.get(name).map(String::as_str).unwrap_or_default();
        if given("client_id") != CLIENT_ID || given("client_secret") != CLIENT_SECRET {
            return error(400, "invalid_client", "Client authentication failed");
        }
        let mut state = self.state.lock().unwrap();
        match given("grant_type") {
            "authorization_code" => match state.codes.remove(given("code")) {
                Some(redirect) if redirect == given("redirect_uri") => {}
                _ => {
                    return error(
                        400,
                        "invalid_authorization_code",
                        "The authorization code is invalid or was used",
                    );
                }
            },
            "refresh_token" => {
                if state.fault == Some(Fault::ConsentEnded)
                    || !state.refresh_tokens.remove(given("refresh_token"))
                {
                    return error(400, "invalid_grant", "The refresh token is no longer valid");
                }
            }
            _ => return error(400, "unsupported_grant_type", "grant_type"),
        }
        state.next += 1;
        let (access, refresh) = (format!("at-{}", state.next), format!("rt-{}", state.next));
        state.access_tokens.insert(access.clone());
        state.refresh_tokens.insert(refresh.clone());
        ResponseTemplate::new(200).set_body_json(json!({
            "access_token": access, "expires_in": 3600, "token_type": "Bearer",
            "refresh_token": refresh, "scope": "info accounts balance cards transactions offline_access"
        }))
    }

    /// A Data API call: a valid access token, then the fault switched on,
    /// or the answer.
    fn data(&self, request: &Request) -> ResponseTemplate {
        let token = request
            .headers
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .unwrap_or_default()
            .to_owned();
        let fault = {
            let mut state = self.state.lock().unwrap();
            if !state.access_tokens.contains(&token) {
                return error(401, "invalid_token", "Invalid access token");
            }
            state.data_calls += 1;
            state.fault
        };
        let path = request
            .url
            .path()
            .trim_start_matches("/data/v1/")
            .to_owned();
        let answer = |body: Value| ResponseTemplate::new(200).set_body_json(body);
        let results = |results: Value| answer(json!({"results": results, "status": "Succeeded"}));
        let ok = match path.as_str() {
            "me" => results(json!([{
                "client_id": CLIENT_ID, "credentials_id": "6L7RxyPKX0THy1tw93PB4V+8DB+KjnX9Pxa451yXPu0=",
                "consent_status": "Authorised",
                "consent_created_at": chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
                "consent_expires_at": (chrono::Utc::now() + chrono::Duration::days(90)).to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
                "provider": {"display_name": "Lloyds", "logo_uri": "https://truelayer-provider-assets.s3.amazonaws.com/global/logos/lloyds.svg", "provider_id": BANK},
                "scopes": ["info", "accounts", "balance", "cards", "transactions", "offline_access"]
            }])),
            "accounts" => results(json!([{
                "update_timestamp": days_ago(0), "account_id": "acc-56c7b029e0f8ec5a2334fb0ffc2fface",
                "account_type": "TRANSACTION", "display_name": "Club Lloyds", "currency": "GBP",
                "account_number": {"iban": "GB35LOYD12345678901234", "number": "78901234", "sort_code": "12-34-56", "swift_bic": "LOYDGB2L"},
                "provider": {"provider_id": BANK}
            }])),
            "cards" => results(json!([{
                "account_id": "card-f7b093437032c216d4350b7d442b9c5c", "card_network": "VISA", "card_type": "CREDIT",
                "currency": "GBP", "display_name": "Club Credit Card", "partial_card_number": "0044",
                "name_on_card": "Ada Lovelace", "valid_from": "2024-01", "valid_to": "2028-01",
                "update_timestamp": days_ago(0), "provider": {"provider_id": BANK}
            }])),
            "accounts/acc-56c7b029e0f8ec5a2334fb0ffc2fface/balance" => results(json!([{
                "currency": "GBP", "available": 1820.17, "current": 1843.27, "overdraft": 500.00,
                "update_timestamp": format!("{}Z", days_ago(0))
            }])),
            "cards/card-f7b093437032c216d4350b7d442b9c5c/balance" => results(json!([{
                "currency": "GBP", "available": 5479.00, "current": 21.00, "credit_limit": 5500.00,
                "last_statement_date": days_ago(20), "last_statement_balance": 420.00,
                "payment_due": 5.00, "payment_due_date": days_ago(-10), "update_timestamp": format!("{}Z", days_ago(0))
            }])),
            "accounts/acc-56c7b029e0f8ec5a2334fb0ffc2fface/transactions" => {
                let from = request
                    .url
                    .query_pairs()
                    .find(|(k, _)| k == "from")
                    .and_then(|(_, v)| chrono::DateTime::parse_from_rfc3339(&v).ok());
                let Some(from) = from else {
                    return error(400, "invalid_date_range", "from must be an ISO 8601 date");
                };
                let from = from.date_naive().to_string();
                let booked = self.state.lock().unwrap().booked.clone();
                let listed: Vec<Value> = booked
                    .into_iter()
                    .filter(|t| t["timestamp"].as_str().unwrap_or_default() >= from.as_str())
                    .map(|mut t| {
                        // Without the bank's id, TrueLayer's is new each time.
                        if t.get("normalised_provider_transaction_id").is_none() {
                            t["transaction_id"] = json!(self.fresh("tl"));
                        }
                        t
                    })
                    .collect();
                results(Value::Array(listed))
            }
            "accounts/acc-56c7b029e0f8ec5a2334fb0ffc2fface/transactions/pending" => {
                // TrueLayer's ids for pending transactions change from one
                // request to the next.
                let listed = self.state.lock().unwrap().pending.clone();
                let pending: Vec<Value> = listed
                    .into_iter()
                    .map(|mut t| {
                        t["transaction_id"] = json!(self.fresh("pending"));
                        t
                    })
                    .collect();
                results(Value::Array(pending))
            }
            // A card purchase is positive, a payment negative: the type
            // says which.
            "cards/card-f7b093437032c216d4350b7d442b9c5c/transactions" => results(json!([
                {"transaction_id": "c-1", "normalised_provider_transaction_id": "card-001", "timestamp": days_ago(4),
                 "description": "BOOKSHOP", "amount": 18.00, "currency": "GBP", "transaction_type": "DEBIT",
                 "transaction_category": "PURCHASE", "transaction_classification": [], "merchant_name": "Bookshop", "meta": {}},
                {"transaction_id": "c-2", "normalised_provider_transaction_id": "card-002", "timestamp": days_ago(8),
                 "description": "PAYMENT RECEIVED - THANK YOU", "amount": -50.00, "currency": "GBP", "transaction_type": "CREDIT",
                 "transaction_category": "CREDIT", "transaction_classification": [], "meta": {}}
            ])),
            "cards/card-f7b093437032c216d4350b7d442b9c5c/transactions/pending" => results(json!([
                {"transaction_id": self.fresh("pending"), "timestamp": days_ago(0), "description": "CAFE",
                 "amount": 3.20, "currency": "GBP", "transaction_type": "DEBIT", "meta": {}}
            ])),
            _ => error(404, "account_not_found", "Account not found"),
        };
        match fault {
            Some(Fault::Slow) => ok.set_delay(Duration::from_secs(5)),
            Some(Fault::ServerError) => {
                error(503, "provider_error", "The provider service is unavailable")
            }
            Some(Fault::RateLimited) => error(
                429,
                "provider_too_many_requests",
                "Provider rate limit exceeded",
            ),
            Some(Fault::Malformed) => {
                ResponseTemplate::new(200).set_body_raw("{\"results\": [", "application/json")
            }
            Some(Fault::DailyAllowanceSpent) => error(
                429,
                "provider_request_limit_exceeded",
                "The provider's limit of unattended requests has been reached",
            ),
            Some(Fault::Revoked) => {
                error(403, "access_denied", "Access has been revoked by the user")
            }
            Some(Fault::ConsentEnded) | None => ok,
        }
    }
}

/// `GET /api/providers`: a bare list, the client's banks of every country.
fn providers(request: &Request) -> ResponseTemplate {
    if !request
        .url
        .query_pairs()
        .any(|(k, v)| k == "clientId" && v == CLIENT_ID)
    {
        return error(400, "invalid_client", "clientId");
    }
    ResponseTemplate::new(200).set_body_json(json!([
        {"provider_id": BANK, "display_name": "Lloyds", "country": "uk",
         "logo_url": "https://truelayer-provider-assets.s3.amazonaws.com/global/logos/lloyds.svg",
         "scopes": ["info", "accounts", "balance", "cards", "transactions", "offline_access"]},
        {"provider_id": "ob-monzo", "display_name": "Monzo", "country": "uk",
         "logo_url": "https://truelayer-provider-assets.s3.amazonaws.com/global/logos/monzo.svg",
         "scopes": ["info", "accounts", "balance", "transactions", "offline_access"]},
        {"provider_id": "ie-ob-aib", "display_name": "AIB", "country": "ie",
         "logo_url": "https://truelayer-provider-assets.s3.amazonaws.com/global/logos/aib.svg",
         "scopes": ["info", "accounts", "balance", "transactions", "offline_access"]}
    ]))
}
