//! A local fake of Up's API (`v1`, as its OpenAPI document
//! `up-banking/api` `v1/openapi.json` describes it), for tests only: every
//! call must carry a token the fake knows (`Authorization: Bearer`, else
//! 401 with Up's `errors` document). It serves a spending account and a
//! saver, transactions newest first one a page along `links.next` (an
//! absolute address carrying an opaque `page[after]`), honours
//! `filter[since]`, and lets the test settle a held purchase under its id,
//! revoke the token, make a new one, and switch faults on.

use crate::fakes::{Route, bearer_token, mount_gets};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tributary_providers::Connector;
use tributary_providers::up::{UpConfig, UpConnector};
use wiremock::matchers::path;
use wiremock::{Mock, MockServer, Request, ResponseTemplate};

/// A personal access token as the Up app shows one.
pub const TOKEN: &str = "up:yeah:f4k3t0k3nF0rT3st5";
/// The token made after the first was revoked.
pub const NEW_TOKEN: &str = "up:yeah:n3wt0k3nAft3rR3v0ke";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    Slow,
    /// 500, Up's error document.
    ServerError,
    /// 429 with `Retry-After`, as Up's hourly limit answers.
    RateLimited,
    /// 200 with a body that is not JSON.
    Malformed,
    /// A `links.next` to another host: not to be followed with the token.
    ForeignNextLink,
}

#[derive(Debug)]
struct State {
    tokens: Vec<String>,
    /// Every transaction of both accounts, newest first.
    transactions: Vec<(String, Value)>,
    fault: Option<Fault>,
    /// Requests that reached a data endpoint with a known token.
    served: usize,
}

#[derive(Debug, Clone)]
pub struct UpFake {
    pub server: Arc<MockServer>,
    state: Arc<Mutex<State>>,
}

fn error(status: u16, title: &str, detail: &str) -> ResponseTemplate {
    ResponseTemplate::new(status).set_body_json(json!({"errors": [
        {"status": status.to_string(), "title": title, "detail": detail}]}))
}

/// `days` before now, as Up writes times (Australian offset).
fn days_ago(days: i64) -> String {
    (chrono::Utc::now() - chrono::Duration::days(days))
        .with_timezone(&chrono::FixedOffset::east_opt(10 * 3600).unwrap())
        .to_rfc3339_opts(chrono::SecondsFormat::Secs, false)
}

/// An amount as Up writes it: the decimal string (two places) and cents.
fn money(value: &str) -> Value {
    let cents: i64 = value.replace('.', "").parse().unwrap();
    json!({"currencyCode": "AUD", "value": value, "valueInBaseUnits": cents})
}

/// A transaction as Up writes it: every attribute key present.
fn transaction(id: &str, account: &str, status: &str, value: &str, days: i64, text: &str) -> Value {
    let at = days_ago(days);
    json!({
        "type": "transactions", "id": id,
        "attributes": {
            "status": status, "rawText": format!("{text} SYDNEY AU"), "description": text,
            "message": null, "isCategorizable": true,
            "holdInfo": if status == "HELD" { json!({"amount": money(value), "foreignAmount": null}) } else { Value::Null },
            "roundUp": null, "cashback": null, "amount": money(value), "foreignAmount": null,
            "cardPurchaseMethod": {"method": "CONTACTLESS", "cardNumberSuffix": "0001"},
            "settledAt": if status == "SETTLED" { json!(at) } else { Value::Null },
            "createdAt": at, "transactionType": "Purchase", "note": null,
            "performingCustomer": {"displayName": "Ada"}
        },
        "relationships": {
            "account": {"data": {"type": "accounts", "id": account}, "links": {"related": "…"}},
            "transferAccount": {"data": null}, "category": {"data": null, "links": {"self": "…"}},
            "parentCategory": {"data": null}, "tags": {"data": [], "links": {"self": "…"}},
            "attachment": {"data": null}
        },
        "links": {"self": format!("…/transactions/{id}")}
    })
}

/// The salary, paid at 07:00 on 15 January in Sydney: 14 January in UTC.
fn salary(account: &str) -> Value {
    let mut salary = transaction(
        "tx-1",
        account,
        "SETTLED",
        "3200.00",
        9,
        "Salary Acme Pty Ltd",
    );
    let at = json!("2026-01-15T07:00:00+11:00");
    salary["attributes"]["createdAt"] = at.clone();
    salary["attributes"]["settledAt"] = at;
    salary
}

impl UpFake {
    pub async fn start() -> Self {
        let spending = "acc-spending";
        let fake = Self {
            server: Arc::new(MockServer::start().await),
            state: Arc::new(Mutex::new(State {
                tokens: vec![TOKEN.to_owned()],
                transactions: vec![
                    (
                        spending.into(),
                        transaction("tx-4", spending, "HELD", "-11.95", 0, "Spotify"),
                    ),
                    (
                        spending.into(),
                        transaction("tx-3", spending, "SETTLED", "-42.50", 2, "Woolworths"),
                    ),
                    (
                        "acc-saver".into(),
                        transaction(
                            "tx-2",
                            "acc-saver",
                            "SETTLED",
                            "500.00",
                            5,
                            "Transfer from Spending",
                        ),
                    ),
                    (spending.into(), salary(spending)),
                ],
                fault: None,
                served: 0,
            })),
        };
        fake.mount().await;
        fake
    }

    /// The real connector pointed at the fake.
    pub fn connector(&self, timeout: Duration) -> Arc<dyn Connector> {
        let config = UpConfig {
            base_url: format!("{}/api/v1", self.server.uri()),
            timeout,
        };
        std::thread::spawn(move || {
            Arc::new(UpConnector::new(config).unwrap()) as Arc<dyn Connector>
        })
        .join()
        .unwrap()
    }

    pub fn set_fault(&self, fault: Option<Fault>) {
        self.state.lock().unwrap().fault = fault;
    }

    /// The held Spotify charge settles under its own id, at its amount.
    pub fn settle_the_held(&self) {
        let mut state = self.state.lock().unwrap();
        let (_, held) = &mut state.transactions[0];
        held["attributes"]["status"] = json!("SETTLED");
        held["attributes"]["settledAt"] = json!(days_ago(0));
    }

    /// The person revokes the token in the Up app (every call: 401).
    pub fn revoke(&self) {
        self.state.lock().unwrap().tokens.clear();
    }

    /// The person makes a new token.
    pub fn issue_new_token(&self) {
        self.state.lock().unwrap().tokens.push(NEW_TOKEN.to_owned());
    }

    async fn mount(&self) {
        let routes: Vec<(&str, Box<Route<Self>>)> = vec![
            (
                "^/api/v1/util/ping$",
                Box::new(|f, r| f.as_owner(r, Self::ping)),
            ),
            (
                "^/api/v1/accounts$",
                Box::new(|f, r| f.as_owner(r, Self::accounts)),
            ),
            (
                "^/api/v1/accounts/[^/]+/transactions$",
                Box::new(|f, r| f.as_owner(r, Self::transactions)),
            ),
        ];
        mount_gets(&self.server, self, routes).await;
        Mock::given(path("/elsewhere"))
            .respond_with(ResponseTemplate::new(200))
            .mount(&self.server)
            .await;
    }

    fn as_owner(
        &self,
        request: &Request,
        answer: fn(&Self, &Request) -> ResponseTemplate,
    ) -> ResponseTemplate {
        let token = bearer_token(request);
        let fault = {
            let mut state = self.state.lock().unwrap();
            if !token.is_some_and(|t| state.tokens.contains(&t)) {
                return error(
                    401,
                    "Not Authorized",
                    "The request was not authenticated because no valid credential was found in the Authorization header, or the Authorization header was not present.",
                );
            }
            state.served += 1;
            state.fault
        };
        match fault {
            Some(Fault::Slow) => answer(self, request).set_delay(Duration::from_secs(5)),
            Some(Fault::ServerError) => error(500, "Internal Server Error", "Something went wrong."),
            Some(Fault::RateLimited) => error(
                429,
                "Too Many Requests",
                "The request exceeded the rate limit of 1000 per hour and was not processed. Please wait before retrying this request.",
            )
            .insert_header("retry-after", "1200"),
            Some(Fault::Malformed) => {
                ResponseTemplate::new(200).set_body_raw("{\"data\": [", "application/json")
            }
            Some(Fault::ForeignNextLink) | None => answer(self, request),
        }
    }

    fn ping(&self, _: &Request) -> ResponseTemplate {
        ResponseTemplate::new(200).set_body_json(json!({"meta": {
            "id": "3b5d17a4-6778-48dc-ae7d-9f8aace2e2fc", "statusEmoji": "⚡️"}}))
    }

    fn accounts(&self, _: &Request) -> ResponseTemplate {
        let account = |id: &str, name: &str, kind: &str, balance: &str| {
            json!({"type": "accounts", "id": id,
                   "attributes": {"displayName": name, "accountType": kind, "ownershipType": "INDIVIDUAL",
                                  "balance": money(balance), "createdAt": "2024-08-06T12:18:29+10:00"},
                   "relationships": {"transactions": {"links": {"related": format!("…/accounts/{id}/transactions")}}},
                   "links": {"self": format!("…/accounts/{id}")}})
        };
        ResponseTemplate::new(200).set_body_json(json!({
            "data": [
                account("acc-spending", "Spending", "TRANSACTIONAL", "2645.55"),
                account("acc-saver", "🏖️ Holiday", "SAVER", "500.00"),
            ],
            "links": {"prev": null, "next": null}
        }))
    }

    /// The account's transactions newest first, one a page (so that a
    /// later sync's window of two still has a next page); `filter[since]`
    /// keeps those created then or later.
    fn transactions(&self, request: &Request) -> ResponseTemplate {
        let account = request
            .url
            .path()
            .split('/')
            .nth(4)
            .unwrap_or_default()
            .to_owned();
        let query: HashMap<String, String> = request.url.query_pairs().into_owned().collect();
        let since = query
            .get("filter[since]")
            .map(|s| chrono::DateTime::parse_from_rfc3339(s));
        let since = match since {
            Some(Err(_)) => {
                return error(
                    400,
                    "Invalid Parameter",
                    "invalid date-time value (must be rfc-3339)",
                );
            }
            Some(Ok(at)) => Some(at),
            None => None,
        };
        let state = self.state.lock().unwrap();
        let all: Vec<&Value> = state
            .transactions
            .iter()
            .filter(|(of, _)| *of == account)
            .map(|(_, t)| t)
            .filter(|t| {
                since.is_none_or(|since| {
                    chrono::DateTime::parse_from_rfc3339(
                        t["attributes"]["createdAt"].as_str().unwrap(),
                    )
                    .unwrap()
                        >= since
                })
            })
            .collect();
        let after: usize = query
            .get("page[after]")
            .and_then(|c| c.strip_prefix("cursor-"))
            .and_then(|n| n.parse().ok())
            .unwrap_or(0);
        let page: Vec<&Value> = all.iter().skip(after).take(1).copied().collect();
        let next = (after + 1 < all.len()).then(|| {
            let mut next =
                url::Url::parse(&format!("{}{}", self.server.uri(), request.url.path())).unwrap();
            if state.fault == Some(Fault::ForeignNextLink) {
                next = url::Url::parse("http://127.0.0.2:9/elsewhere").unwrap();
            }
            next.query_pairs_mut()
                .append_pair("page[size]", "1")
                .append_pair("page[after]", &format!("cursor-{}", after + 1));
            if let Some(since) = query.get("filter[since]") {
                next.query_pairs_mut().append_pair("filter[since]", since);
            }
            next.to_string()
        });
        ResponseTemplate::new(200).set_body_json(json!({
            "data": page,
            "links": {"prev": null, "next": next}
        }))
    }
}
