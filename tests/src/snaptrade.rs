//! A local fake of SnapTrade's API (its OpenAPI document of August 2026,
//! and the request-signature guide), for tests only. Every signed call is
//! checked the way the guide describes, with a canonical form written here
//! independently of the connector's: `clientId` and a fresh `timestamp` in
//! the query, and `Signature` = base64 HMAC-SHA256 (consumer key) of
//! `{"content","path","query"}` with sorted keys, over the path and raw
//! query as received; a bad one answers 401 code 1076. It registers users,
//! plays the Connection Portal (each visit connects one more brokerage, or
//! repairs the one named by `reconnect`), and serves accounts, balances,
//! positions (decimal strings, as `/positions/all` sends them) and
//! activities page by page. Faults are switched on by the test.

use crate::fakes::{Answer, Route};
use base64::Engine as _;
use hmac::{Hmac, KeyInit, Mac};
use serde_json::{Value, json};
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tributary_providers::Connector;
use tributary_providers::snaptrade::{SnapTradeConfig, SnapTradeConnector};
use wiremock::matchers::{method, path, path_regex};
use wiremock::{Mock, MockServer, Request, ResponseTemplate};

pub const CLIENT_ID: &str = "TRIBUTARY-TEST";
pub const CONSUMER_KEY: &str = "YWJjZGVmZ2hpamtsbW5vcHFyc3R1dnd4eXo0NTY3ODk";
/// Activities a page holds here, whatever `limit` asks: the listing then
/// takes several pages.
const PAGE: usize = 2;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    Slow,
    /// 500 code 1000.
    ServerError,
    /// 429, with `X-RateLimit-Reset`.
    RateLimited,
    /// 503 code 3002: a sync lock, or the brokerage down.
    Busy,
    /// 200 with a body that is not JSON.
    Malformed,
}

#[derive(Debug, Clone)]
struct Brokerage {
    authorization: String,
    slug: &'static str,
    name: &'static str,
    disabled: bool,
    accounts: Vec<String>,
}

#[derive(Debug, Default)]
struct State {
    /// userId → userSecret.
    users: HashMap<String, String>,
    /// Portal sessions: token → (user, redirect, reconnect).
    portals: HashMap<String, (String, String, Option<String>)>,
    brokerages: HashMap<String, Vec<Brokerage>>,
    fault: Option<Fault>,
    next: usize,
    /// Signed calls refused.
    refused: usize,
}

#[derive(Debug, Clone)]
pub struct SnapTradeFake {
    pub server: Arc<MockServer>,
    state: Arc<Mutex<State>>,
}

fn error(status: u16, code: &str, detail: &str) -> ResponseTemplate {
    ResponseTemplate::new(status)
        .set_body_json(json!({"detail": detail, "status_code": status, "code": code}))
}

/// `value` written with its keys sorted at every level and no spaces.
fn canonical_text(value: &Value) -> String {
    match value {
        Value::Object(map) => {
            let sorted: BTreeMap<&String, &Value> = map.iter().collect();
            let fields: Vec<String> = sorted
                .into_iter()
                .map(|(k, v)| format!("{}:{}", Value::from(k.as_str()), canonical_text(v)))
                .collect();
            format!("{{{}}}", fields.join(","))
        }
        Value::Array(items) => format!(
            "[{}]",
            items
                .iter()
                .map(canonical_text)
                .collect::<Vec<_>>()
                .join(",")
        ),
        other => other.to_string(),
    }
}

/// A day `days` before today (UTC), as SnapTrade writes trade dates.
fn days_ago(days: i64) -> String {
    format!(
        "{}T16:27:55Z",
        chrono::Utc::now().date_naive() - chrono::Duration::days(days)
    )
}

/// The positions of the first brokerage's account, as `/positions/all`
/// sends them: decimal strings.
pub const POSITIONS: &str = r#"{"results": [
  {"instrument": {"kind": "stock", "id": "1ef3a5d3-4a9b-40b2-b8d1-cc35f74d6324", "symbol": "AAPL", "raw_symbol": "AAPL",
     "description": "Apple Inc.", "currency": "USD", "exchange": "XNAS",
     "figi_instrument": {"figi_code": "BBG000B9Y5X2", "figi_share_class": "BBG001S5N8V8"}},
   "units": "10.5", "price": "123.45", "cost_basis": "118.2", "currency": "USD", "cash_equivalent": false, "tax_lots": []},
  {"instrument": {"kind": "crypto", "id": "0b1d0b61-1a7e-4d8e-9c2c-4b3ba0e6d1f0", "symbol": "BTC", "raw_symbol": "BTC",
     "description": "Bitcoin", "currency": "USD", "exchange": null, "figi_instrument": null},
   "units": "0.00314159", "price": "97012.33", "cost_basis": null, "currency": "USD", "cash_equivalent": false, "tax_lots": []}],
 "data_freshness": {"as_of": "2026-11-25T14:30:00Z"}}"#;

fn activities() -> Vec<Value> {
    let activity = |id: &str,
                    kind: &str,
                    amount: Value,
                    ticker: Option<&str>,
                    days: i64,
                    description: &str| {
        // Units and price of a trade, as its description says; 0 where
        // they do not apply, as SnapTrade writes them.
        let (units, price): (Value, Value) = match id {
            "act-2" => (
                serde_json::from_str("10.5").unwrap(),
                serde_json::from_str("123.45").unwrap(),
            ),
            "act-5" => (
                serde_json::from_str("0.00314159").unwrap(),
                serde_json::from_str("97012.33").unwrap(),
            ),
            _ => (json!(0), json!(0)),
        };
        json!({"id": id, "symbol": ticker.map(|t| json!({"id": "x", "symbol": t, "raw_symbol": t, "description": t})),
               "option_symbol": null, "price": price, "units": units, "amount": amount,
               "currency": {"id": "c", "code": "USD", "name": "US Dollar"}, "type": kind, "option_type": "",
               "description": description, "trade_date": days_ago(days), "settlement_date": days_ago(days - 2),
               "fee": 0, "fx_rate": null, "institution": "Robinhood", "external_reference_id": null})
    };
    vec![
        activity("act-1", "CONTRIBUTION", json!(5000), None, 40, "Deposit"),
        activity(
            "act-2",
            "BUY",
            serde_json::from_str("-1296.225").unwrap(),
            Some("AAPL"),
            30,
            "Bought 10.5 AAPL",
        ),
        activity(
            "act-3",
            "DIVIDEND",
            serde_json::from_str("2.63").unwrap(),
            Some("AAPL"),
            10,
            "AAPL dividend",
        ),
        // A split moves no cash: no amount.
        activity(
            "act-4",
            "SPLIT",
            Value::Null,
            Some("AAPL"),
            5,
            "Stock split",
        ),
        activity(
            "act-5",
            "BUY",
            serde_json::from_str("-304.76").unwrap(),
            Some("BTC"),
            3,
            "Bought BTC",
        ),
    ]
}

impl SnapTradeFake {
    pub async fn start() -> Self {
        let fake = Self {
            server: Arc::new(MockServer::start().await),
            state: Arc::new(Mutex::new(State::default())),
        };
        fake.mount().await;
        fake
    }

    /// The real connector pointed at the fake, made off the async runtime.
    pub fn connector(&self, timeout: Duration) -> Arc<dyn Connector> {
        let config = SnapTradeConfig {
            base_url: self.server.uri(),
            client_id: CLIENT_ID.into(),
            consumer_key: CONSUMER_KEY.into(),
            timeout,
        };
        std::thread::spawn(move || {
            Arc::new(SnapTradeConnector::new(config).unwrap()) as Arc<dyn Connector>
        })
        .join()
        .unwrap()
    }

    pub fn set_fault(&self, fault: Option<Fault>) {
        self.state.lock().unwrap().fault = fault;
    }

    /// Signed calls the fake refused so far.
    pub fn refused(&self) -> usize {
        self.state.lock().unwrap().refused
    }

    /// Breaks every brokerage connection, as `POST
    /// /authorizations/{id}/disable` does on test keys.
    pub fn disable_connections(&self) {
        for list in self.state.lock().unwrap().brokerages.values_mut() {
            for b in list {
                b.disabled = true;
            }
        }
    }

    fn fresh(&self) -> String {
        let mut state = self.state.lock().unwrap();
        state.next += 1;
        format!("{:08x}-0000-4000-8000-{:012x}", state.next, state.next)
    }

    async fn mount(&self) {
        let routes: Vec<(&str, &str, Box<Route<Self>>)> = vec![
            (
                "POST",
                "^/snapTrade/registerUser$",
                Box::new(|f, r| f.signed(r, Self::register)),
            ),
            (
                "POST",
                "^/snapTrade/login$",
                Box::new(|f, r| f.signed(r, Self::login)),
            ),
            (
                "GET",
                "^/authorizations$",
                Box::new(|f, r| f.signed(r, Self::authorizations)),
            ),
            (
                "GET",
                "^/accounts$",
                Box::new(|f, r| f.signed(r, Self::accounts)),
            ),
            (
                "GET",
                "^/accounts/[^/]+/balances$",
                Box::new(|f, r| f.signed(r, Self::balances)),
            ),
            (
                "GET",
                "^/accounts/[^/]+/positions/all$",
                Box::new(|f, r| f.signed(r, Self::positions)),
            ),
            (
                "GET",
                "^/accounts/[^/]+/activities$",
                Box::new(|f, r| f.signed(r, Self::activities)),
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
        Mock::given(method("GET"))
            .and(path("/portal"))
            .respond_with(Answer {
                fake: self.clone(),
                answer: Arc::new(|fake: &Self, request: &Request| fake.portal(request)),
            })
            .mount(&self.server)
            .await;
    }

    fn query(request: &Request) -> HashMap<String, String> {
        request.url.query_pairs().into_owned().collect()
    }

    /// Checks the signature, the timestamp and (for a user's data) the
    /// user's secret, then the fault, then `answer`.
    fn signed(
        &self,
        request: &Request,
        answer: fn(&Self, &Request, &HashMap<String, String>) -> ResponseTemplate,
    ) -> ResponseTemplate {
        let query = Self::query(request);
        let content = if request.body.is_empty() {
            Value::Null
        } else {
            match serde_json::from_slice::<Value>(&request.body) {
                Ok(Value::Object(map)) if map.is_empty() => Value::Null,
                Ok(body) => body,
                Err(_) => return error(400, "1012", "Invalid input"),
            }
        };
        let text = format!(
            "{{\"content\":{},\"path\":{},\"query\":{}}}",
            canonical_text(&content),
            Value::from(request.url.path()),
            Value::from(request.url.query().unwrap_or_default())
        );
        let mut mac = Hmac::<sha2::Sha256>::new_from_slice(CONSUMER_KEY.as_bytes()).unwrap();
        mac.update(text.as_bytes());
        let expected =
            base64::engine::general_purpose::STANDARD.encode(mac.finalize().into_bytes());
        let given = request
            .headers
            .get("signature")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default();
        let fresh = query
            .get("timestamp")
            .and_then(|t| t.parse::<i64>().ok())
            .is_some_and(|t| (chrono::Utc::now().timestamp() - t).abs() < 300);
        if given != expected
            || query.get("clientId").map(String::as_str) != Some(CLIENT_ID)
            || !fresh
        {
            self.state.lock().unwrap().refused += 1;
            return error(401, "1076", "Unable to verify signature sent");
        }
        if let Some(user) = query.get("userId") {
            let known = self.state.lock().unwrap().users.get(user).cloned();
            if known.is_none() || known.as_ref() != query.get("userSecret") {
                return error(401, "1083", "Invalid userID or userSecret provided");
            }
        }
        let fault = self.state.lock().unwrap().fault;
        let data = request.url.path().starts_with("/accounts");
        match fault.filter(|_| data) {
            Some(Fault::Slow) => answer(self, request, &query).set_delay(Duration::from_secs(5)),
            Some(Fault::ServerError) => error(500, "1000", "Encountered an unexpected exception."),
            Some(Fault::RateLimited) => error(
                429,
                "0000",
                "Request was throttled. Expected available in 7 seconds.",
            )
            .insert_header("X-RateLimit-Reset", "7"),
            Some(Fault::Busy) => error(
                503,
                "3002",
                "Unable to sync with brokerage account. Invalid response from Brokerage API.",
            ),
            Some(Fault::Malformed) => {
                ResponseTemplate::new(200).set_body_raw("[{\"currency\": ", "application/json")
            }
            None => answer(self, request, &query),
        }
    }

    fn register(&self, request: &Request, _: &HashMap<String, String>) -> ResponseTemplate {
        let body: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
        let Some(user) = body["userId"].as_str() else {
            return error(400, "1012", "userId is required");
        };
        let secret = self.fresh();
        let mut state = self.state.lock().unwrap();
        if state.users.contains_key(user) {
            return error(400, "1010", "User already exist");
        }
        state.users.insert(user.to_owned(), secret.clone());
        ResponseTemplate::new(200).set_body_json(json!({"userId": user, "userSecret": secret}))
    }

    fn login(&self, request: &Request, query: &HashMap<String, String>) -> ResponseTemplate {
        let body: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
        let Some(redirect) = body["customRedirect"].as_str() else {
            return error(400, "1012", "customRedirect is required here");
        };
        let token = self.fresh();
        let user = query.get("userId").cloned().unwrap_or_default();
        self.state.lock().unwrap().portals.insert(
            token.clone(),
            (
                user,
                redirect.to_owned(),
                body["reconnect"].as_str().map(str::to_owned),
            ),
        );
        ResponseTemplate::new(200).set_body_json(json!({
            "redirectURI": format!("{}/portal?token={token}", self.server.uri()),
            "sessionId": token}))
    }

    /// The portal: connects the next brokerage (Robinhood, then Questrade),
    /// or repairs the one to reconnect; then back to the redirect.
    fn portal(&self, request: &Request) -> ResponseTemplate {
        let token = Self::query(request)
            .get("token")
            .cloned()
            .unwrap_or_default();
        let Some((user, redirect, reconnect)) = self.state.lock().unwrap().portals.remove(&token)
        else {
            return ResponseTemplate::new(302)
                .insert_header("location", "/?error_code=1006&status_code=400");
        };
        let authorization = self.fresh();
        let account = self.fresh();
        let mut state = self.state.lock().unwrap();
        let list = state.brokerages.entry(user).or_default();
        match reconnect {
            Some(id) => {
                for b in list.iter_mut().filter(|b| b.authorization == id) {
                    b.disabled = false;
                }
            }
            None => {
                let (slug, name) = if list.is_empty() {
                    ("ROBINHOOD", "Robinhood")
                } else {
                    ("QUESTRADE", "Questrade")
                };
                list.push(Brokerage {
                    authorization,
                    slug,
                    name,
                    disabled: false,
                    accounts: vec![account],
                });
            }
        }
        ResponseTemplate::new(302).insert_header("location", redirect.as_str())
    }

    fn brokerages(&self, query: &HashMap<String, String>) -> Vec<Brokerage> {
        let user = query.get("userId").cloned().unwrap_or_default();
        self.state
            .lock()
            .unwrap()
            .brokerages
            .get(&user)
            .cloned()
            .unwrap_or_default()
    }

    fn authorizations(&self, _: &Request, query: &HashMap<String, String>) -> ResponseTemplate {
        let list: Vec<Value> = self
            .brokerages(query)
            .iter()
            .map(|b| json!({
                "id": b.authorization, "created_date": "2024-08-20T21:56:19.123935Z",
                "brokerage": {"id": "ebf91a5b", "slug": b.slug, "name": b.name, "display_name": b.name,
                    "aws_s3_logo_url": format!("https://passiv-brokerage-logos.s3.ca-central-1.amazonaws.com/{}-logo.png", b.slug.to_lowercase()),
                    "aws_s3_square_logo_url": format!("https://passiv-brokerage-logos.s3.ca-central-1.amazonaws.com/{}-logo-square.png", b.slug.to_lowercase()),
                    "enabled": true, "maintenance_mode": false, "is_degraded": false},
                "name": "Connection-1", "type": "read", "disabled": b.disabled, "disabled_date": null}))
            .collect();
        ResponseTemplate::new(200).set_body_json(list)
    }

    fn accounts(&self, _: &Request, query: &HashMap<String, String>) -> ResponseTemplate {
        let list: Vec<Value> = self
            .brokerages(query)
            .iter()
            .flat_map(|b| {
                b.accounts.iter().map(move |id| json!({
                    "id": id, "brokerage_authorization": b.authorization,
                    "name": format!("{} Individual", b.name), "number": "Q6542138443",
                    "institution_name": b.name, "created_date": "2024-07-23T22:50:22.761390Z",
                    "sync_status": {"transactions": {"initial_sync_completed": true}, "holdings": {"initial_sync_completed": true}},
                    "balance": {"total": {"amount": 15363.23, "currency": "USD"}},
                    "status": "open", "raw_type": "Margin", "account_category": "INVESTMENT", "is_paper": false}))
            })
            .collect();
        ResponseTemplate::new(200).set_body_json(list)
    }

    fn balances(&self, _: &Request, _: &HashMap<String, String>) -> ResponseTemplate {
        ResponseTemplate::new(200).set_body_raw(
            r#"[{"currency": {"id": "c", "code": "USD", "name": "US Dollar"}, "cash": 300.71, "buying_power": 410.71}]"#,
            "application/json",
        )
    }

    fn positions(&self, _: &Request, _: &HashMap<String, String>) -> ResponseTemplate {
        ResponseTemplate::new(200).set_body_raw(POSITIONS, "application/json")
    }

    /// Newest first, `offset`/`limit` paging (at most [`PAGE`] here),
    /// `startDate`/`endDate` inclusive on the trade date.
    fn activities(&self, _: &Request, query: &HashMap<String, String>) -> ResponseTemplate {
        let (Some(start), Some(end)) = (query.get("startDate"), query.get("endDate")) else {
            return error(400, "1012", "startDate and endDate are required here");
        };
        let mut all: Vec<Value> = activities()
            .into_iter()
            .filter(|a| {
                let day = &a["trade_date"].as_str().unwrap_or_default()[..10];
                day >= start.as_str() && day <= end.as_str()
            })
            .collect();
        all.reverse();
        let offset: usize = query
            .get("offset")
            .and_then(|o| o.parse().ok())
            .unwrap_or(0);
        let limit: usize = query
            .get("limit")
            .and_then(|l| l.parse().ok())
            .unwrap_or(1000)
            .min(PAGE);
        let page: Vec<Value> = all.iter().skip(offset).take(limit).cloned().collect();
        ResponseTemplate::new(200).set_body_json(json!({
            "data": page, "pagination": {"offset": offset, "limit": limit, "total": all.len()}}))
    }
}

/// The portal, as the user's browser sees it: where it sends them back.
pub async fn return_from_the_portal(link: &str) -> String {
    crate::fakes::sent_back_from(link).await
}
