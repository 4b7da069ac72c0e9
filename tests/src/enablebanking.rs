//! A local fake of Enable Banking's API (API 1.0, the shapes of its
//! OpenAPI document `1.0.0-3030f99c` and API reference), for tests only:
//! it checks every call's application JWT against the test key's public
//! half, starts authorizations, plays the bank (a page that returns the
//! user with a one-time `code` and our `state`), opens sessions, and serves
//! balances and transactions page by page with a `continuation_key` bound
//! to its query. Faults are switched on by the test: a slow answer, a 5xx,
//! the bank's daily allowance spent (429 `ASPSP_RATE_LIMIT_EXCEEDED`), a
//! body that does not parse, an expired session (401 `EXPIRED_SESSION`).

use crate::fakes::{Answer, Route};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tributary_providers::Connector;
use tributary_providers::enablebanking::{EnableBankingConfig, EnableBankingConnector};
use wiremock::matchers::{method, path, path_regex};
use wiremock::{Mock, MockServer, Request, ResponseTemplate};

/// The application id the connector signs as.
pub const APPLICATION_ID: &str = "4e1c1d0a-9d6f-4c0b-8f7e-6b1f1f3c2a10";
/// Transactions the fake gives a page.
const PAGE: usize = 2;

fn key_file(name: &str) -> String {
    std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures")
            .join(name),
    )
    .expect("the Enable Banking test key")
}

/// A fault the next data calls meet, until cleared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// Answers after longer than the connector waits.
    Slow,
    /// 500.
    ServerError,
    /// 429 `ASPSP_RATE_LIMIT_EXCEEDED`, no `Retry-After` (none is documented).
    DailyAllowanceSpent,
    /// 200 with a body that is not JSON.
    Malformed,
    /// 401 `EXPIRED_SESSION`: the consent ended at the bank.
    SessionExpired,
}

#[derive(Debug, Default)]
struct State {
    /// authorization id → (state, redirect_url, bank).
    authorizations: HashMap<String, (String, String, String)>,
    /// One-time codes → authorization id.
    codes: HashMap<String, String>,
    sessions: Vec<String>,
    /// Account uid → its transactions, newest state.
    transactions: HashMap<String, Vec<Value>>,
    fault: Option<Fault>,
    /// Data calls answered (balances and transaction pages).
    data_calls: usize,
    /// The uids of the accounts of the newest session.
    uids: Vec<String>,
    next: usize,
}

/// The fake and what a test does to it.
#[derive(Debug, Clone)]
pub struct EnableBankingFake {
    pub server: Arc<MockServer>,
    state: Arc<Mutex<State>>,
}

fn error(status: u16, code: &str, message: &str) -> ResponseTemplate {
    ResponseTemplate::new(status)
        .set_body_json(json!({"code": status, "error": code, "message": message, "detail": null}))
}

/// A day `days` before today (UTC), as the API writes dates.
pub fn days_ago(days: i64) -> String {
    (chrono::Utc::now().date_naive() - chrono::Duration::days(days)).to_string()
}

/// The identification hashes of the two accounts every session lists.
pub const CHECKING_HASH: &str = "WwpbCiJpYmFuIiwiRkkwNDU1MjMxMTUyNDUzNTQ3Il1d";
pub const SAVINGS_HASH: &str = "WwpbCiJpYmFuIiwiRkkyMTEyMzQ1NjAwMDAwNzg1Il1d";

/// The checking account's transactions: booked entries with and without a
/// bank reference (two identical ones without: two rows), a pending one
/// without a booking date, a cancelled one (never imported).
pub fn checking_transactions() -> Vec<Value> {
    vec![
        json!({"entry_reference": "E1", "transaction_amount": {"amount": "12.50", "currency": "EUR"},
               "credit_debit_indicator": "DBIT", "status": "BOOK", "booking_date": days_ago(3),
               "creditor": {"name": "Coffee Roasters"}, "remittance_information": ["Card purchase", "Coffee Roasters Helsinki"]}),
        json!({"entry_reference": "E2", "transaction_amount": {"amount": "2500.00", "currency": "EUR"},
               "credit_debit_indicator": "CRDT", "status": "BOOK", "booking_date": days_ago(10), "value_date": days_ago(10),
               "debtor": {"name": "Employer Oy"}, "remittance_information": ["Salary"]}),
        json!({"transaction_amount": {"amount": "40.00", "currency": "EUR"},
               "credit_debit_indicator": "DBIT", "status": "BOOK", "booking_date": days_ago(5),
               "remittance_information": ["Kiosk"]}),
        json!({"transaction_amount": {"amount": "40.00", "currency": "EUR"},
               "credit_debit_indicator": "DBIT", "status": "BOOK", "booking_date": days_ago(5),
               "remittance_information": ["Kiosk"]}),
        json!({"transaction_amount": {"amount": "23.10", "currency": "EUR"},
               "credit_debit_indicator": "DBIT", "status": "PDNG", "value_date": days_ago(0),
               "creditor": {"name": "Grocer"}, "remittance_information": ["Grocer Kamppi"]}),
        json!({"entry_reference": "E3", "transaction_amount": {"amount": "99.00", "currency": "EUR"},
               "credit_debit_indicator": "DBIT", "status": "CNCL", "booking_date": days_ago(2)}),
    ]
}

impl EnableBankingFake {
    pub async fn start() -> Self {
        let server = Arc::new(MockServer::start().await);
        let fake = Self {
            server,
            state: Arc::new(Mutex::new(State::default())),
        };
        fake.mount().await;
        fake
    }

    /// The real connector pointed at the fake, waiting `timeout` for an
    /// answer; made off the async runtime (its blocking client may not be
    /// made on it).
    pub fn connector(&self, timeout: Duration) -> Arc<EnableBankingConnector> {
        let config = EnableBankingConfig {
            base_url: self.server.uri(),
            application_id: APPLICATION_ID.into(),
            private_key_pem: key_file("enablebanking-test-key.pem"),
            timeout,
        };
        std::thread::spawn(move || Arc::new(EnableBankingConnector::new(config).unwrap()))
            .join()
            .unwrap()
    }

    /// As a [`Connector`] for a registry.
    pub fn dyn_connector(&self, timeout: Duration) -> Arc<dyn Connector> {
        self.connector(timeout)
    }

    pub fn set_fault(&self, fault: Option<Fault>) {
        self.state.lock().unwrap().fault = fault;
    }

    /// Data calls answered so far.
    pub fn data_calls(&self) -> usize {
        self.state.lock().unwrap().data_calls
    }

    /// Replaces the checking account's transactions in every session.
    pub fn set_checking_transactions(&self, transactions: Vec<Value>) {
        let mut state = self.state.lock().unwrap();
        let uids = state.uids.clone();
        if let Some(uid) = uids.first() {
            state.transactions.insert(uid.clone(), transactions);
        }
    }

    fn fresh_id(&self, prefix: &str) -> String {
        let mut state = self.state.lock().unwrap();
        state.next += 1;
        format!("{prefix}-{:08}-0000-4000-8000-000000000000", state.next)
    }

    async fn mount(&self) {
        let public_key = key_file("enablebanking-test-key.pub.pem");
        let signed = SignedByTheApplication {
            key: jsonwebtoken::DecodingKey::from_rsa_pem(public_key.as_bytes()).unwrap(),
        };
        let routes: Vec<(&str, &str, Box<Route<Self>>)> = vec![
            ("GET", "^/aspsps$", Box::new(|_, request| aspsps(request))),
            (
                "POST",
                "^/auth$",
                Box::new(|fake, request| fake.authorize(request)),
            ),
            (
                "POST",
                "^/sessions$",
                Box::new(|fake, request| fake.session(request)),
            ),
            (
                "GET",
                "^/accounts/[^/]+/balances$",
                Box::new(|fake, request| fake.data(request, Self::balances)),
            ),
            (
                "GET",
                "^/accounts/[^/]+/transactions$",
                Box::new(|fake, request| fake.data(request, Self::transactions)),
            ),
        ];
        for (verb, route, answer) in routes {
            Mock::given(method(verb))
                .and(path_regex(route))
                .and(signed.clone())
                .respond_with(Answer {
                    fake: self.clone(),
                    answer: Arc::from(answer),
                })
                .mount(&self.server)
                .await;
        }
        // The bank's page: the user consents and is sent back.
        Mock::given(method("GET"))
            .and(path("/bank/authorize"))
            .respond_with(Answer {
                fake: self.clone(),
                answer: Arc::new(|fake: &Self, request: &Request| fake.bank_page(request)),
            })
            .mount(&self.server)
            .await;
        // Anything not signed with the application's key.
        Mock::given(path_regex("^/(aspsps|auth|sessions|accounts/.*)$"))
            .respond_with(error(401, "UNAUTHORIZED_ACCESS", "Unauthorized access"))
            .with_priority(10)
            .mount(&self.server)
            .await;
    }

    fn authorize(&self, request: &Request) -> ResponseTemplate {
        let Ok(body) = serde_json::from_slice::<Value>(&request.body) else {
            return error(422, "WRONG_REQUEST_PARAMETERS", "body is not JSON");
        };
        let (Some(state), Some(redirect), Some(bank), Some(valid_until)) = (
            body["state"].as_str(),
            body["redirect_url"].as_str(),
            body["aspsp"]["name"].as_str(),
            body["access"]["valid_until"].as_str(),
        ) else {
            return error(422, "WRONG_REQUEST_PARAMETERS", "field required");
        };
        // The bank allows 180 days (maximum_consent_validity).
        let Ok(until) = chrono::DateTime::parse_from_rfc3339(valid_until) else {
            return error(
                422,
                "WRONG_REQUEST_PARAMETERS",
                "valid_until is not a date-time",
            );
        };
        if until > chrono::Utc::now() + chrono::Duration::seconds(15_552_000) {
            return error(
                422,
                "WRONG_REQUEST_PARAMETERS",
                "ASPSP does not support consent validity more than 15552000 seconds in the future",
            );
        }
        let id = self.fresh_id("auth");
        self.state.lock().unwrap().authorizations.insert(
            id.clone(),
            (state.to_owned(), redirect.to_owned(), bank.to_owned()),
        );
        ResponseTemplate::new(200).set_body_json(json!({
            "url": format!("{}/bank/authorize?authorization_id={id}", self.server.uri()),
            "authorization_id": id,
            "psu_id_hash": "hash",
        }))
    }

    /// The bank sends the user back with a code (or, for `deny=1`, with
    /// the error the docs show for a cancelled consent).
    fn bank_page(&self, request: &Request) -> ResponseTemplate {
        let query: HashMap<String, String> = request.url.query_pairs().into_owned().collect();
        let Some(id) = query.get("authorization_id") else {
            return ResponseTemplate::new(400);
        };
        let Some((state, redirect, _)) = self.state.lock().unwrap().authorizations.get(id).cloned()
        else {
            return ResponseTemplate::new(404);
        };
        let mut back = url::Url::parse(&redirect).unwrap();
        if query.contains_key("deny") {
            back.query_pairs_mut()
                .append_pair("error", "access_denied")
                .append_pair("error_description", "Cancelled by user")
                .append_pair("state", &state);
        } else {
            let code = self.fresh_id("code");
            self.state
                .lock()
                .unwrap()
                .codes
                .insert(code.clone(), id.clone());
            back.query_pairs_mut()
                .append_pair("code", &code)
                .append_pair("state", &state);
        }
        ResponseTemplate::new(302).insert_header("location", back.as_str())
    }

    fn session(&self, request: &Request) -> ResponseTemplate {
        let code = serde_json::from_slice::<Value>(&request.body)
            .ok()
            .and_then(|b| b["code"].as_str().map(str::to_owned));
        let Some(code) = code else {
            return error(422, "WRONG_REQUEST_PARAMETERS", "code is required");
        };
        let Some(authorization) = self.state.lock().unwrap().codes.remove(&code) else {
            return error(400, "WRONG_AUTHORIZATION_CODE", "Wrong authorization code");
        };
        let session_id = self.fresh_id("session");
        let (checking, savings) = (self.fresh_id("acc"), self.fresh_id("acc"));
        {
            let mut state = self.state.lock().unwrap();
            state.sessions.push(session_id.clone());
            // Transactions are the bank's: a new session sees the same.
            let kept = state
                .uids
                .first()
                .and_then(|uid| state.transactions.get(uid).cloned())
                .unwrap_or_else(checking_transactions);
            state.transactions.insert(checking.clone(), kept);
            state.transactions.insert(
                savings.clone(),
                vec![json!({"entry_reference": "S1", "transaction_amount": {"amount": "100.00", "currency": "EUR"},
                            "credit_debit_indicator": "CRDT", "status": "BOOK", "booking_date": days_ago(20),
                            "debtor": {"name": "Ada Lovelace"}, "remittance_information": ["Monthly saving"]})],
            );
            state.uids = vec![checking.clone(), savings.clone()];
            let _ = authorization;
        }
        let valid_until = (chrono::Utc::now() + chrono::Duration::days(90))
            .to_rfc3339_opts(chrono::SecondsFormat::Micros, false);
        ResponseTemplate::new(200).set_body_json(json!({
            "session_id": session_id,
            "accounts": [
                {"uid": checking, "account_id": {"iban": "FI0455231152453547"}, "name": "Ada Lovelace",
                 "product": "Everyday account", "cash_account_type": "CACC", "currency": "EUR",
                 "identification_hash": CHECKING_HASH, "identification_hashes": [CHECKING_HASH]},
                {"uid": savings, "account_id": {"iban": "FI2112345600000785"}, "name": "Ada Lovelace",
                 "cash_account_type": "SVGS", "currency": "EUR",
                 "identification_hash": SAVINGS_HASH, "identification_hashes": [SAVINGS_HASH]},
                // An account the bank lets no one read: no uid.
                {"account_id": {"iban": "FI7912345600000123"}, "cash_account_type": "LOAN", "currency": "EUR",
                 "identification_hash": "WwpbCiJpYmFuIiwiRkk3OSJdXQ==", "identification_hashes": []}
            ],
            "aspsp": {"name": "Nordea", "country": "FI"},
            "psu_type": "personal",
            "access": {"valid_until": valid_until},
        }))
    }

    /// A data call: the fault switched on, or `answer`.
    fn data(
        &self,
        request: &Request,
        answer: fn(&Self, &Request, &str) -> ResponseTemplate,
    ) -> ResponseTemplate {
        let fault = {
            let mut state = self.state.lock().unwrap();
            state.data_calls += 1;
            state.fault
        };
        let uid = request
            .url
            .path()
            .split('/')
            .nth(2)
            .unwrap_or_default()
            .to_owned();
        match fault {
            Some(Fault::Slow) => answer(self, request, &uid).set_delay(Duration::from_secs(5)),
            Some(Fault::ServerError) => error(500, "INTERNAL", "Internal server error"),
            Some(Fault::DailyAllowanceSpent) => error(
                429,
                "ASPSP_RATE_LIMIT_EXCEEDED",
                "ASPSP Rate limit exceeded",
            ),
            Some(Fault::Malformed) => {
                ResponseTemplate::new(200).set_body_raw("{\"balances\": [", "application/json")
            }
            Some(Fault::SessionExpired) => error(401, "EXPIRED_SESSION", "Session is expired"),
            None => {
                if !self.state.lock().unwrap().uids.contains(&uid) {
                    return error(401, "EXPIRED_SESSION", "Session is expired");
                }
                answer(self, request, &uid)
            }
        }
    }

    fn balances(&self, _: &Request, uid: &str) -> ResponseTemplate {
        let checking = self.state.lock().unwrap().uids.first().map(String::as_str) == Some(uid);
        let (booked, available) = if checking {
            ("1843.27", "1820.17")
        } else {
            ("5100.00", "5100.00")
        };
        ResponseTemplate::new(200).set_body_json(json!({"balances": [
            {"name": "Available", "balance_amount": {"amount": available, "currency": "EUR"}, "balance_type": "ITAV"},
            {"name": "Booked balance", "balance_amount": {"amount": booked, "currency": "EUR"},
             "balance_type": "CLBD", "reference_date": days_ago(0)},
        ]}))
    }

    /// A page of transactions; the key carries the query it belongs to, and
    /// a key used with another `date_from` is refused, as banks do.
    fn transactions(&self, request: &Request, uid: &str) -> ResponseTemplate {
        let query: HashMap<String, String> = request.url.query_pairs().into_owned().collect();
        let Some(from) = query.get("date_from") else {
            return error(
                422,
                "WRONG_REQUEST_PARAMETERS",
                "date_from is required here",
            );
        };
        if from.as_str() < days_ago(90).as_str() {
            return ResponseTemplate::new(422).set_body_json(json!({
                "code": 422, "error": "WRONG_TRANSACTIONS_PERIOD", "message": "Wrong transactions period requested",
                "detail": {"message": "You can not request transactions more than 90 days in the past", "date_from": days_ago(89)}}));
        }
        let offset = match query.get("continuation_key") {
            None => 0,
            Some(key) => match key.split_once('|') {
                Some((bound, offset)) if bound == from => offset.parse().unwrap_or(0),
                _ => {
                    return error(
                        422,
                        "WRONG_REQUEST_PARAMETERS",
                        "Continuation key is only valid for the same getAccountTransactions parameters",
                    );
                }
            },
        };
        let all: Vec<Value> = self
            .state
            .lock()
            .unwrap()
            .transactions
            .get(uid)
            .cloned()
            .unwrap_or_default()
            .into_iter()
            .filter(|t| {
                let date = t["booking_date"]
                    .as_str()
                    .or(t["value_date"].as_str())
                    .unwrap_or_default();
                date >= from.as_str()
            })
            .collect();
        let page: Vec<Value> = all.iter().skip(offset).take(PAGE).cloned().collect();
        let next = (offset + PAGE < all.len()).then(|| format!("{from}|{}", offset + PAGE));
        ResponseTemplate::new(200)
            .set_body_json(json!({"transactions": page, "continuation_key": next}))
    }
}

fn aspsps(request: &Request) -> ResponseTemplate {
    let country = request
        .url
        .query_pairs()
        .find(|(k, _)| k == "country")
        .map(|(_, v)| v.into_owned());
    let banks = if country.as_deref() == Some("FI") {
        json!([
            {"name": "Nordea", "country": "FI", "logo": "https://enablebanking.com/brands/FI/Nordea/",
             "psu_types": ["personal", "business"], "auth_methods": [{"name": "MTA", "approach": "REDIRECT", "psu_type": "personal", "hidden_method": false}],
             "maximum_consent_validity": 15_552_000, "beta": false, "bic": "NDEAFIHH"},
            {"name": "S-Pankki", "country": "FI", "logo": "https://enablebanking.com/brands/FI/S-Pankki/",
             "psu_types": ["personal"], "auth_methods": [], "maximum_consent_validity": 7_776_000, "beta": false}
        ])
    } else {
        json!([])
    };
    ResponseTemplate::new(200).set_body_json(json!({ "aspsps": banks }))
}

/// Matches a call whose bearer JWT the application signed: RS256 with the
/// test key, `kid` the application id, the documented issuer and audience,
/// and at most 24 hours long.
#[derive(Clone)]
struct SignedByTheApplication {
    key: jsonwebtoken::DecodingKey,
}

impl wiremock::Match for SignedByTheApplication {
    fn matches(&self, request: &Request) -> bool {
        let Some(token) = request
            .headers
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
        else {
            return false;
        };
        let Ok(header) = jsonwebtoken::decode_header(token) else {
            return false;
        };
        if header.kid.as_deref() != Some(APPLICATION_ID)
            || header.alg != jsonwebtoken::Algorithm::RS256
        {
            return false;
        }
        let mut validation = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::RS256);
        validation.set_audience(&["api.enablebanking.com"]);
        validation.set_issuer(&["enablebanking.com"]);
        validation.set_required_spec_claims(&["exp", "iat", "iss", "aud"]);
        let Ok(claims) = jsonwebtoken::decode::<Value>(token, &self.key, &validation) else {
            return false;
        };
        let lifetime = claims.claims["exp"].as_i64().unwrap_or(i64::MAX)
            - claims.claims["iat"].as_i64().unwrap_or(0);
        lifetime <= 86_400
    }
}
