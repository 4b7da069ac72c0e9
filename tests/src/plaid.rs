//! A local fake of Plaid's API (version 2020-09-14, the shapes of its
//! OpenAPI document `2020-09-14_1.697.4`), for tests only: it checks the
//! operator's credentials and version headers on every call, starts Hosted
//! Link sessions and plays Plaid's pages (the user connects, or leaves),
//! exchanges one-time public tokens, and serves accounts, transactions by
//! `/transactions/sync` pages and investment holdings. Amounts go out as
//! JSON numbers with the decimals Plaid's examples show (`23.567`,
//! `0.177494362`), to test that they are read exactly. Faults are switched
//! on by the test.

use crate::fakes::{Answer, Route};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tributary_providers::Connector;
use tributary_providers::plaid::{PlaidConfig, PlaidConnector};
use wiremock::matchers::{header, method, path, path_regex};
use wiremock::{Mock, MockServer, Request, ResponseTemplate};

pub const CLIENT_ID: &str = "tributary-test-client";
pub const SECRET: &str = "plaid-test-secret";
/// Transactions the fake gives a `/transactions/sync` page, whatever the
/// `count` asked: the listing then takes several pages.
const PAGE: usize = 2;

/// A fault the next data calls meet, until cleared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// Answers after longer than the connector waits.
    Slow,
    /// 500 `INTERNAL_SERVER_ERROR`.
    ServerError,
    /// 429 `TRANSACTIONS_SYNC_LIMIT`.
    RateLimited,
    /// 400 `INSTITUTION_DOWN`: Plaid's way to say the bank is down.
    InstitutionDown,
    /// 200 with a body that is not JSON.
    Malformed,
    /// 400 `ITEM_LOGIN_REQUIRED`: the user must sign in again.
    LoginRequired,
    /// The listing changes between two pages, once (400
    /// `TRANSACTIONS_SYNC_MUTATION_DURING_PAGINATION`).
    MutationDuringPagination,
}

#[derive(Debug, Default)]
struct State {
    /// link token → (completion redirect, update mode, finished session).
    links: HashMap<String, (String, bool, Option<Value>)>,
    public_tokens: HashMap<String, String>,
    access_tokens: Vec<String>,
    transactions: Vec<Value>,
    fault: Option<Fault>,
    next: usize,
}

#[derive(Debug, Clone)]
pub struct PlaidFake {
    pub server: Arc<MockServer>,
    state: Arc<Mutex<State>>,
}

fn error(status: u16, kind: &str, code: &str, message: &str) -> ResponseTemplate {
    ResponseTemplate::new(status).set_body_json(json!({
        "error_type": kind, "error_code": code, "error_message": message,
        "display_message": null, "request_id": "fake"}))
}

/// A day `days` before today (UTC).
pub fn days_ago(days: i64) -> String {
    (chrono::Utc::now().date_naive() - chrono::Duration::days(days)).to_string()
}

fn plaid_transaction(id: &str, account: &str, amount: &str, day: i64, name: &str) -> Value {
    // The amount goes out as the JSON number it is written as.
    serde_json::from_str(&format!(
        r#"{{"transaction_id": "{id}", "account_id": "{account}", "amount": {amount},
            "iso_currency_code": "USD", "unofficial_currency_code": null, "date": "{}",
            "authorized_date": null, "authorized_datetime": null, "datetime": null,
            "name": "{name}", "merchant_name": null, "pending": false, "pending_transaction_id": null,
            "payment_channel": "in store", "location": {{}}, "payment_meta": {{}}, "account_owner": null,
            "transaction_code": null}}"#,
        days_ago(day)
    ))
    .unwrap()
}

/// The checking and card accounts' transactions: a purchase (Plaid: a
/// positive amount is money out), a payroll deposit, a card purchase with
/// a merchant, and a pending purchase.
pub fn initial_transactions() -> Vec<Value> {
    let mut walmart = plaid_transaction(
        "lPNjeW1nR6CDn5okmGQ6hEpMo4lLNoSrzqDje",
        "acc-checking",
        "72.1",
        3,
        "PURCHASE WM SUPERCENTER #1700",
    );
    walmart["merchant_name"] = "Walmart".into();
    let mut pending = plaid_transaction(
        "pending-uber",
        "acc-card",
        "5.4",
        0,
        "Uber 063015 SF**POOL**",
    );
    pending["pending"] = true.into();
    pending["counterparties"] =
        json!([{"name": "Uber", "type": "merchant", "logo_url": null, "website": "uber.com"}]);
    vec![
        walmart,
        plaid_transaction("payroll-1", "acc-checking", "-2500", 10, "ACME PAYROLL"),
        plaid_transaction(
            "card-1",
            "acc-card",
            "23.6319805",
            5,
            "Interest-bearing thing",
        ),
        pending,
    ]
}

impl PlaidFake {
    pub async fn start() -> Self {
        let fake = Self {
            server: Arc::new(MockServer::start().await),
            state: Arc::new(Mutex::new(State {
                transactions: initial_transactions(),
                ..State::default()
            })),
        };
        fake.mount().await;
        fake
    }

    /// The real connector pointed at the fake, made off the async runtime.
    pub fn connector(&self, timeout: Duration) -> Arc<dyn Connector> {
        let config = PlaidConfig {
            base_url: self.server.uri(),
            client_id: CLIENT_ID.into(),
            secret: SECRET.into(),
            country_codes: vec!["US".into(), "CA".into()],
            timeout,
        };
        std::thread::spawn(move || {
            Arc::new(PlaidConnector::new(config).unwrap()) as Arc<dyn Connector>
        })
        .join()
        .unwrap()
    }

    pub fn set_fault(&self, fault: Option<Fault>) {
        self.state.lock().unwrap().fault = fault;
    }

    /// The card's pending purchase posts: Plaid removes the pending one
    /// and adds the posted one, linked by `pending_transaction_id`, with
    /// the tip added.
    pub fn post_the_pending(&self) {
        let mut state = self.state.lock().unwrap();
        state
            .transactions
            .retain(|t| t["transaction_id"] != "pending-uber");
        let mut posted = plaid_transaction(
            "posted-uber",
            "acc-card",
            "6.33",
            0,
            "Uber 063015 SF**POOL**",
        );
        posted["pending_transaction_id"] = "pending-uber".into();
        posted["counterparties"] =
            json!([{"name": "Uber", "type": "merchant", "logo_url": null, "website": "uber.com"}]);
        state.transactions.push(posted);
    }

    fn fresh(&self, prefix: &str) -> String {
        let mut state = self.state.lock().unwrap();
        state.next += 1;
        format!("{prefix}-sandbox-{:08}", state.next)
    }

    async fn mount(&self) {
        let routes: Vec<(&str, Box<Route<Self>>)> = vec![
            (
                "/link/token/create",
                Box::new(|fake, request| fake.create_link(request)),
            ),
            (
                "/link/token/get",
                Box::new(|fake, request| fake.get_link(request)),
            ),
            (
                "/item/public_token/exchange",
                Box::new(|fake, request| fake.exchange(request)),
            ),
            (
                "/accounts/balance/get",
                Box::new(|fake, request| fake.data(request, Self::accounts)),
            ),
            (
                "/transactions/sync",
                Box::new(|fake, request| fake.data(request, Self::sync)),
            ),
            (
                "/investments/holdings/get",
                Box::new(|fake, request| fake.data(request, Self::holdings)),
            ),
            (
                "/liabilities/get",
                Box::new(|fake, request| fake.data(request, Self::liabilities)),
            ),
            (
                "/investments/transactions/get",
                Box::new(|fake, request| fake.data(request, Self::investment_transactions)),
            ),
        ];
        for (route, answer) in routes {
            Mock::given(method("POST"))
                .and(path(route))
                .and(header("PLAID-CLIENT-ID", CLIENT_ID))
                .and(header("PLAID-SECRET", SECRET))
                .and(header("Plaid-Version", "2020-09-14"))
                .respond_with(Answer {
                    fake: self.clone(),
                    answer: Arc::from(answer),
                })
                .mount(&self.server)
                .await;
        }
        Mock::given(method("GET"))
            .and(path_regex("^/hosted/"))
            .respond_with(Answer {
                fake: self.clone(),
                answer: Arc::new(|fake: &Self, request: &Request| fake.hosted_page(request)),
            })
            .mount(&self.server)
            .await;
        Mock::given(method("POST"))
            .respond_with(error(
                400,
                "INVALID_INPUT",
                "INVALID_API_KEYS",
                "invalid client_id or secret provided",
            ))
            .with_priority(10)
            .mount(&self.server)
            .await;
    }

    fn body(request: &Request) -> Value {
        serde_json::from_slice(&request.body).unwrap_or(Value::Null)
    }

    fn create_link(&self, request: &Request) -> ResponseTemplate {
        let body = Self::body(request);
        let Some(redirect) = body["hosted_link"]["completion_redirect_uri"].as_str() else {
            return error(
                400,
                "INVALID_REQUEST",
                "MISSING_FIELDS",
                "hosted_link.completion_redirect_uri",
            );
        };
        if body["client_name"].as_str().is_none_or(str::is_empty)
            || body["country_codes"].as_array().is_none_or(Vec::is_empty)
            || body["user"]["client_user_id"].as_str().is_none()
        {
            return error(
                400,
                "INVALID_REQUEST",
                "MISSING_FIELDS",
                "client_name, country_codes, user",
            );
        }
        let update_mode = body["access_token"].is_string();
        if update_mode == body["products"].is_array() {
            return error(
                400,
                "INVALID_REQUEST",
                "INVALID_FIELD",
                "products or access_token, not both",
            );
        }
        let token = self.fresh("link");
        self.state
            .lock()
            .unwrap()
            .links
            .insert(token.clone(), (redirect.to_owned(), update_mode, None));
        ResponseTemplate::new(200).set_body_json(json!({
            "link_token": token,
            "hosted_link_url": format!("{}/hosted/{token}", self.server.uri()),
            "expiration": "2030-01-01T00:00:00Z",
            "request_id": "fake",
        }))
    }

    /// Plaid's pages: `?leave=1` leaves without a bank; otherwise the
    /// user connects First Platypus Bank. Either way back to the
    /// completion redirect, with no parameters (none are documented).
    fn hosted_page(&self, request: &Request) -> ResponseTemplate {
        let token = request.url.path().trim_start_matches("/hosted/").to_owned();
        let leave = request.url.query_pairs().any(|(k, _)| k == "leave");
        let public_token = self.fresh("public");
        let mut state = self.state.lock().unwrap();
        let Some((redirect, update_mode, session)) = state.links.get_mut(&token) else {
            return ResponseTemplate::new(404);
        };
        // Update mode repairs the Item there is: it adds none.
        let results = if leave || *update_mode {
            json!({"item_add_results": []})
        } else {
            json!({"item_add_results": [{"public_token": public_token,
                "accounts": [], "institution": {"institution_id": "ins_109508", "name": "First Platypus Bank"}}]})
        };
        let exit = if leave {
            json!({"error": null, "metadata": {"status": "institution_not_found"}})
        } else {
            Value::Null
        };
        *session = Some(json!({
            "link_session_id": format!("session-{token}"),
            "started_at": "2026-11-25T10:00:00.522196741Z",
            "finished_at": "2026-11-25T10:01:05.330312653Z",
            "results": results, "exit": exit, "events": []}));
        let redirect = redirect.clone();
        if !leave && !*update_mode {
            state.public_tokens.insert(public_token, token);
        }
        ResponseTemplate::new(302).insert_header("location", redirect.as_str())
    }

    fn get_link(&self, request: &Request) -> ResponseTemplate {
        let token = Self::body(request)["link_token"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        let state = self.state.lock().unwrap();
        let Some((_, _, session)) = state.links.get(&token) else {
            return error(
                400,
                "INVALID_INPUT",
                "INVALID_LINK_TOKEN",
                "invalid link_token provided",
            );
        };
        ResponseTemplate::new(200).set_body_json(json!({
            "link_token": token, "created_at": "2026-11-25T10:00:00Z", "expiration": "2026-11-25T10:30:00Z",
            "metadata": {"client_name": "Tributary", "country_codes": ["US"]},
            "link_sessions": session.iter().collect::<Vec<_>>(),
            "request_id": "fake"}))
    }

    fn exchange(&self, request: &Request) -> ResponseTemplate {
        let public = Self::body(request)["public_token"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        let mut state = self.state.lock().unwrap();
        if state.public_tokens.remove(&public).is_none() {
            return error(
                400,
                "INVALID_INPUT",
                "INVALID_PUBLIC_TOKEN",
                "provided public token is expired",
            );
        }
        state.next += 1;
        let access = format!("access-sandbox-{:08}", state.next);
        state.access_tokens.push(access.clone());
        ResponseTemplate::new(200).set_body_json(json!({
            "access_token": access, "item_id": "M5eVJqLnv3tbzdngLDp9FL5OlDNxlNhlE55op", "request_id": "fake"}))
    }

    /// A call on an Item: the fault switched on, or `answer`.
    fn data(
        &self,
        request: &Request,
        answer: fn(&Self, &Request) -> ResponseTemplate,
    ) -> ResponseTemplate {
        let access = Self::body(request)["access_token"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        let fault = {
            let mut state = self.state.lock().unwrap();
            if !state.access_tokens.contains(&access) {
                return error(
                    400,
                    "INVALID_INPUT",
                    "INVALID_ACCESS_TOKEN",
                    "provided access token is in an invalid format",
                );
            }
            let fault = state.fault;
            if fault == Some(Fault::MutationDuringPagination) {
                // Once, and only past the first page.
                if Self::body(request)["cursor"].is_string() {
                    state.fault = None;
                    return error(
                        400,
                        "TRANSACTIONS_ERROR",
                        "TRANSACTIONS_SYNC_MUTATION_DURING_PAGINATION",
                        "Underlying transaction data changed since last page was fetched. Please restart pagination from last update.",
                    );
                }
            }
            fault
        };
        match fault {
            Some(Fault::Slow) => answer(self, request).set_delay(Duration::from_secs(5)),
            Some(Fault::ServerError) => error(
                500,
                "API_ERROR",
                "INTERNAL_SERVER_ERROR",
                "an unexpected error occurred",
            ),
            Some(Fault::RateLimited) => error(
                429,
                "RATE_LIMIT_EXCEEDED",
                "TRANSACTIONS_SYNC_LIMIT",
                "rate limit exceeded for attempts to access this item. please try again later",
            ),
            Some(Fault::InstitutionDown) => error(
                400,
                "INSTITUTION_ERROR",
                "INSTITUTION_DOWN",
                "this institution is not currently responding to this request. please try again soon",
            ),
            Some(Fault::Malformed) => {
                ResponseTemplate::new(200).set_body_raw("{\"accounts\": [", "application/json")
            }
            Some(Fault::LoginRequired) => error(
                400,
                "ITEM_ERROR",
                "ITEM_LOGIN_REQUIRED",
                "the login details of this item have changed (credentials, MFA, or required user action) and a user login is required to update this information. use Link's update mode to restore the item to a good state",
            ),
            Some(Fault::MutationDuringPagination) | None => answer(self, request),
        }
    }

    fn accounts(&self, _: &Request) -> ResponseTemplate {
        ResponseTemplate::new(200).set_body_raw(
            r#"{"accounts": [
                {"account_id": "acc-checking", "balances": {"available": 100, "current": 110.94, "iso_currency_code": "USD", "limit": null, "unofficial_currency_code": null},
                 "mask": "0000", "name": "Plaid Checking", "official_name": "Plaid Gold Standard 0% Interest Checking", "subtype": "checking", "type": "depository"},
                {"account_id": "acc-card", "balances": {"available": null, "current": 410, "iso_currency_code": "USD", "limit": 2000, "unofficial_currency_code": null},
                 "mask": "3333", "name": "Plaid Credit Card", "official_name": null, "subtype": "credit card", "type": "credit"},
                {"account_id": "acc-401k", "balances": {"available": null, "current": 24580.0605, "iso_currency_code": "USD", "limit": null, "unofficial_currency_code": null},
                 "mask": "6666", "name": "Plaid 401k", "official_name": null, "subtype": "401k", "type": "investment"}],
              "item": {"available_products": ["balance"], "billed_products": ["transactions", "investments"], "consent_expiration_time": null,
                       "error": null, "institution_id": "ins_109508", "institution_name": "First Platypus Bank",
                       "item_id": "M5eVJqLnv3tbzdngLDp9FL5OlDNxlNhlE55op", "update_type": "background", "webhook": null},
              "request_id": "fake"}"#,
            "application/json",
        )
    }

    /// A page from the cursor (the offset of the whole current list, as
    /// text), always from the start of the history.
    fn sync(&self, request: &Request) -> ResponseTemplate {
        let body = Self::body(request);
        let offset: usize = body["cursor"]
            .as_str()
            .and_then(|c| c.strip_prefix("c"))
            .and_then(|c| c.parse().ok())
            .unwrap_or(0);
        let all = self.state.lock().unwrap().transactions.clone();
        let page: Vec<Value> = all.iter().skip(offset).take(PAGE).cloned().collect();
        let has_more = offset + PAGE < all.len();
        // Built as text: the amounts keep the decimals they were written with.
        let text = format!(
            r#"{{"added": [{}], "modified": [], "removed": [], "next_cursor": "c{}", "has_more": {has_more},
                "accounts": [], "transactions_update_status": "HISTORICAL_UPDATE_COMPLETE", "request_id": "fake"}}"#,
            page.iter()
                .map(Value::to_string)
                .collect::<Vec<_>>()
                .join(","),
            offset + page.len(),
        );
        ResponseTemplate::new(200).set_body_raw(text, "application/json")
    }

    fn holdings(&self, _: &Request) -> ResponseTemplate {
        ResponseTemplate::new(200).set_body_raw(HOLDINGS, "application/json")
    }

    /// The card's terms, in the shape of Plaid's OpenAPI example (no
    /// mortgage or student loan on this Item).
    fn liabilities(&self, _: &Request) -> ResponseTemplate {
        ResponseTemplate::new(200).set_body_raw(
            r#"{"accounts": [], "item": {}, "request_id": "fake",
                "liabilities": {"credit": [
                  {"account_id": "acc-card", "aprs": [{"apr_percentage": 15.24, "apr_type": "balance_transfer_apr",
                    "balance_subject_to_apr": 1562.32, "interest_charge_amount": 130.22}],
                   "is_overdue": false, "last_payment_amount": 168.25, "last_payment_date": "2026-10-01",
                   "last_statement_issue_date": "2026-10-28", "last_statement_balance": 410.00,
                   "minimum_payment_amount": 20, "next_payment_due_date": "2026-11-25"}],
                 "mortgage": null, "student": null}}"#,
            "application/json",
        )
    }

    /// `INVESTMENT_TRANSACTIONS` from the request's `options.offset`, two
    /// a page (`options.count` is Plaid's to honour up to 500; two makes
    /// the connector page).
    fn investment_transactions(&self, request: &Request) -> ResponseTemplate {
        let body = Self::body(request);
        let offset = body["options"]["offset"].as_u64().unwrap_or(0) as usize;
        let all: Value = serde_json::from_str(INVESTMENT_TRANSACTIONS).unwrap();
        let list = all["investment_transactions"].as_array().unwrap();
        let page: Vec<String> = list
            .iter()
            .skip(offset)
            .take(2)
            .map(Value::to_string)
            .collect();
        let text = format!(
            r#"{{"accounts": [], "securities": {}, "investment_transactions": [{}], "total_investment_transactions": {}, "item": {{}}, "request_id": "fake"}}"#,
            all["securities"],
            page.join(","),
            list.len()
        );
        ResponseTemplate::new(200).set_body_raw(text, "application/json")
    }
}

/// The 401k's holdings as the OpenAPI document's example shows them (a
/// mutual fund, a crypto holding with nine decimals, cash), one account.
pub const HOLDINGS: &str = r#"{"accounts": [],
 "holdings": [
  {"account_id": "acc-401k", "cost_basis": 23, "institution_price": 27, "institution_price_as_of": "2021-04-13",
   "institution_price_datetime": null, "institution_value": 636.309, "iso_currency_code": "USD", "quantity": 23.567,
   "security_id": "JDdP7XPMklt5vwPmDN45t3KAoWAPmjtpaW7DP", "unofficial_currency_code": null, "vested_quantity": null, "vested_value": null},
  {"account_id": "acc-401k", "cost_basis": null, "institution_price": 0.177494362, "institution_price_as_of": null,
   "institution_price_datetime": null, "institution_value": 17.7494362, "iso_currency_code": "USD", "quantity": 100,
   "security_id": "vLRMV3MvY1FYNP91on35CJD5QN5rw9Fpa9qOL", "unofficial_currency_code": null},
  {"account_id": "acc-401k", "cost_basis": 12345.67, "institution_price": 1, "institution_price_as_of": null,
   "institution_value": 12345.67, "iso_currency_code": "USD", "quantity": 12345.67,
   "security_id": "d6ePmbPxgWCWmMVv66q9iPV94n91vMtov5Are", "unofficial_currency_code": null}],
 "securities": [
  {"close_price": 27, "close_price_as_of": null, "cusip": "577130834", "institution_id": null, "institution_security_id": null,
   "is_cash_equivalent": false, "isin": "US5771308344", "iso_currency_code": "USD", "name": "Matthews Pacific Tiger Fund Insti Class",
   "proxy_security_id": null, "security_id": "JDdP7XPMklt5vwPmDN45t3KAoWAPmjtpaW7DP", "sedol": null, "ticker_symbol": "MIPTX",
   "type": "mutual fund", "unofficial_currency_code": null, "update_datetime": null, "market_identifier_code": "XNAS"},
  {"close_price": 0.140034616, "close_price_as_of": null, "cusip": null, "institution_id": null, "institution_security_id": null,
   "is_cash_equivalent": false, "isin": null, "iso_currency_code": "USD", "name": "Dogecoin", "proxy_security_id": null,
   "security_id": "vLRMV3MvY1FYNP91on35CJD5QN5rw9Fpa9qOL", "sedol": null, "ticker_symbol": "DOGE", "type": "cryptocurrency",
   "unofficial_currency_code": null, "update_datetime": null},
  {"close_price": 1, "close_price_as_of": null, "cusip": null, "institution_id": null, "institution_security_id": null,
   "is_cash_equivalent": true, "isin": null, "iso_currency_code": "USD", "name": "U S Dollar", "proxy_security_id": null,
   "security_id": "d6ePmbPxgWCWmMVv66q9iPV94n91vMtov5Are", "sedol": null, "ticker_symbol": "USD", "type": "cash",
   "unofficial_currency_code": null, "update_datetime": null}],
 "item": {"institution_id": "ins_109508", "institution_name": "First Platypus Bank", "item_id": "M5eVJqLnv3tbzdngLDp9FL5OlDNxlNhlE55op"},
 "request_id": "fake"}"#;

/// The 401k's investment activity in the shapes of Plaid's OpenAPI
/// document: a buy, a sale (negative quantity, cash credited as a negative
/// amount), a dividend, a management fee, a deposit; each amount positive
/// when cash leaves the account, as Plaid writes it.
pub const INVESTMENT_TRANSACTIONS: &str = r#"{
 "investment_transactions": [
  {"investment_transaction_id": "inv-1", "account_id": "acc-401k", "security_id": "JDdP7XPMklt5vwPmDN45t3KAoWAPmjtpaW7DP",
   "date": "2026-10-02", "name": "BUY Matthews Pacific Tiger Fund Insti Class", "quantity": 10.123, "amount": 275.35,
   "price": 27.2, "fees": 0.01, "type": "buy", "subtype": "buy", "iso_currency_code": "USD", "unofficial_currency_code": null,
   "cancel_transaction_id": null},
  {"investment_transaction_id": "inv-2", "account_id": "acc-401k", "security_id": "vLRMV3MvY1FYNP91on35CJD5QN5rw9Fpa9qOL",
   "date": "2026-10-09", "name": "SELL Dogecoin", "quantity": -50, "amount": -8.874718,
   "price": 0.17749436, "fees": 0, "type": "sell", "subtype": "sell", "iso_currency_code": "USD", "unofficial_currency_code": null,
   "cancel_transaction_id": null},
  {"investment_transaction_id": "inv-3", "account_id": "acc-401k", "security_id": "JDdP7XPMklt5vwPmDN45t3KAoWAPmjtpaW7DP",
   "date": "2026-10-15", "name": "DIVIDEND Matthews Pacific Tiger Fund", "quantity": 0, "amount": -4.12,
   "price": 0, "fees": null, "type": "cash", "subtype": "dividend", "iso_currency_code": "USD", "unofficial_currency_code": null,
   "cancel_transaction_id": null},
  {"investment_transaction_id": "inv-4", "account_id": "acc-401k", "security_id": null,
   "date": "2026-10-31", "name": "Management fee", "quantity": 0, "amount": 1.5,
   "price": 0, "fees": 0, "type": "fee", "subtype": "management fee", "iso_currency_code": "USD", "unofficial_currency_code": null,
   "cancel_transaction_id": null},
  {"investment_transaction_id": "inv-5", "account_id": "acc-401k", "security_id": "d6ePmbPxgWCWmMVv66q9iPV94n91vMtov5Are",
   "date": "2026-11-01", "name": "Contribution", "quantity": 500, "amount": -500,
   "price": 1, "fees": 0, "type": "cash", "subtype": "contribution", "iso_currency_code": "USD", "unofficial_currency_code": null,
   "cancel_transaction_id": null}],
 "securities": [
  {"close_price": 27, "cusip": "577130834", "isin": "US5771308344", "iso_currency_code": "USD", "name": "Matthews Pacific Tiger Fund Insti Class",
   "security_id": "JDdP7XPMklt5vwPmDN45t3KAoWAPmjtpaW7DP", "ticker_symbol": "MIPTX", "type": "mutual fund", "unofficial_currency_code": null},
  {"close_price": 0.140034616, "cusip": null, "isin": null, "iso_currency_code": "USD", "name": "Dogecoin",
   "security_id": "vLRMV3MvY1FYNP91on35CJD5QN5rw9Fpa9qOL", "ticker_symbol": "DOGE", "type": "cryptocurrency", "unofficial_currency_code": null},
  {"close_price": 1, "cusip": null, "isin": null, "iso_currency_code": "USD", "name": "U S Dollar",
   "security_id": "d6ePmbPxgWCWmMVv66q9iPV94n91vMtov5Are", "ticker_symbol": "USD", "type": "cash", "unofficial_currency_code": null}]
}"#;

/// What a user's browser does at Plaid's page `link`: where Plaid sends
/// them back (`leave`: without connecting a bank).
pub async fn return_from_plaid(link: &str, leave: bool) -> String {
    let link = if leave {
        format!("{link}?leave=1")
    } else {
        link.to_owned()
    };
    crate::fakes::sent_back_from(&link).await
}
