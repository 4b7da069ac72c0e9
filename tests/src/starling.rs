//! A local fake of Starling Bank's public API (`v2`, in the shapes of
//! Starling's developer documentation and its own JS SDK's fixtures), for
//! tests only: every call must carry a token the fake knows
//! (`Authorization: Bearer`, else 403 `invalid_token`). It serves a sterling
//! account and a euro one, each with its balance and its default
//! category's feed; `changesSince` keeps the items updated since then.
//! The test can settle the pending card payment under its uid, release an
//! authorisation, revoke the token, make a new one, and switch faults on.

use crate::fakes::{Route, bearer_token, mount_gets};
use chrono::{DateTime, SecondsFormat, Utc};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tributary_providers::Connector;
use tributary_providers::starling::{StarlingConfig, StarlingConnector};
use wiremock::{MockServer, Request, ResponseTemplate};

/// A personal access token (Starling's are long opaque strings).
pub const TOKEN: &str = "eyJhbGciOiJQUzI1NiIsInppcCI6IkdaSVAifQ.starling-fake-token";
/// The token made after the first was revoked.
pub const NEW_TOKEN: &str = "eyJhbGciOiJQUzI1NiIsInppcCI6IkdaSVAifQ.starling-new-token";
/// A token made with the account scope only: it may list accounts, not
/// read their balances or feeds.
pub const ACCOUNTS_ONLY_TOKEN: &str =
    "eyJhbGciOiJQUzI1NiIsInppcCI6IkdaSVAifQ.starling-accounts-only";
/// A payment Starling has been retrying for seven weeks: pending, and
/// unchanged for longer than a later sync's usual window.
pub const OLD_RETRY_UID: &str = "f0000000-0000-4000-8000-000000000009";

pub const PERSONAL: &str = "9b3d5e6a-1b1e-4c0e-9d7a-1f2a3b4c5d6e";
pub const PERSONAL_CATEGORY: &str = "c1d2e3f4-0000-4000-8000-00000000aaaa";
pub const EURO: &str = "7a6b5c4d-2e2f-4a1b-8c3d-4e5f6a7b8c9d";
pub const EURO_CATEGORY: &str = "c1d2e3f4-0000-4000-8000-00000000bbbb";
/// The card payment that is pending until the test settles it.
pub const PENDING_UID: &str = "f0000000-0000-4000-8000-000000000004";
/// The hotel's card authorisation, released when the test says.
pub const HOLD_UID: &str = "f0000000-0000-4000-8000-000000000005";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    Slow,
    /// 500 with Starling's `errors` document.
    ServerError,
    /// 429, as Starling's rate limit answers.
    RateLimited,
    /// 200 with a body that is not JSON.
    Malformed,
    /// A feed item with a status nobody has seen yet.
    UnknownStatus,
}

#[derive(Debug)]
struct State {
    tokens: Vec<String>,
    /// Every feed item: (account uid, item).
    items: Vec<(String, Value)>,
    fault: Option<Fault>,
    /// Every `changesSince` asked for, in order.
    changes_since: Vec<String>,
}

#[derive(Debug, Clone)]
pub struct StarlingFake {
    pub server: Arc<MockServer>,
    state: Arc<Mutex<State>>,
}

fn stamp(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::Millis, true)
}

fn days_ago(days: i64) -> String {
    stamp(Utc::now() - chrono::Duration::days(days))
}

fn money(currency: &str, minor_units: i64) -> Value {
    json!({"currency": currency, "minorUnits": minor_units})
}

/// A feed item as Starling writes one: every key present, amounts
/// unsigned with a direction; `settlementTime` only once settled.
#[allow(clippy::too_many_arguments)]
fn item(
    uid: &str,
    (currency, category): (&str, &str),
    (direction, minor_units): (&str, i64),
    status: &str,
    at: &str,
    counter_party: &str,
    reference: &str,
) -> Value {
    let mut item = json!({
        "feedItemUid": uid, "categoryUid": category,
        "amount": money(currency, minor_units), "sourceAmount": money(currency, minor_units),
        "direction": direction, "updatedAt": at, "transactionTime": at,
        "source": if direction == "IN" { "FASTER_PAYMENTS_IN" } else { "MASTER_CARD" },
        "sourceSubType": if direction == "IN" { Value::Null } else { json!("CONTACTLESS") },
        "status": status, "transactingApplicationUserUid": null,
        "counterPartyType": if direction == "IN" { "SENDER" } else { "MERCHANT" },
        "counterPartyUid": "0e0e0e0e-0000-4000-8000-000000000000",
        "counterPartyName": counter_party, "counterPartySubEntityUid": null,
        "counterPartySubEntityName": null, "counterPartySubEntityIdentifier": null,
        "counterPartySubEntitySubIdentifier": null,
        "reference": reference, "country": "GB", "spendingCategory": "GENERAL",
        "userNote": null, "roundUp": null, "hasAttachment": false, "hasReceipt": false,
        "batchPaymentDetails": null
    });
    if status == "SETTLED" {
        item["settlementTime"] = json!(at);
    }
    item
}

impl StarlingFake {
    pub async fn start() -> Self {
        let gbp = ("GBP", PERSONAL_CATEGORY);
        let eur = ("EUR", EURO_CATEGORY);
        let personal = |i: Value| (PERSONAL.to_owned(), i);
        let items = vec![
            // Paid on a summer night: 23:30 in UTC, 00:30 the next day in
            // London, the day the person sees.
            personal(item(
                "f0000000-0000-4000-8000-000000000001",
                gbp,
                ("OUT", 340),
                "SETTLED",
                "2026-07-14T23:30:00.000Z",
                "Night Bus Cafe",
                "NIGHT BUS CAFE",
            )),
            personal(item(
                "f0000000-0000-4000-8000-000000000002",
                gbp,
                ("IN", 250_000),
                "SETTLED",
                &days_ago(9),
                "Acme Ltd",
                "SALARY NOV",
            )),
            personal(item(
                "f0000000-0000-4000-8000-000000000003",
                gbp,
                ("OUT", 4_250),
                "SETTLED",
                &days_ago(2),
                "Tesco",
                "TESCO STORES 2041",
            )),
            personal(item(
                PENDING_UID,
                gbp,
                ("OUT", 1_199),
                "PENDING",
                &days_ago(0),
                "Spotify",
                "SPOTIFY P1234",
            )),
            personal(item(
                HOLD_UID,
                gbp,
                ("OUT", 15_000),
                "PENDING",
                &days_ago(1),
                "Premier Inn",
                "PREMIER INN HOLD",
            )),
            // Moved no money: never a transaction.
            personal(item(
                "f0000000-0000-4000-8000-000000000006",
                gbp,
                ("OUT", 9_999),
                "DECLINED",
                &days_ago(3),
                "Gadget Shop",
                "GADGET SHOP",
            )),
            personal(item(
                "f0000000-0000-4000-8000-000000000007",
                gbp,
                ("OUT", 80_000),
                "UPCOMING",
                &days_ago(0),
                "Landlord",
                "RENT DEC",
            )),
            personal(item(
                OLD_RETRY_UID,
                gbp,
                ("OUT", 2_000),
                "RETRYING",
                &days_ago(49),
                "Council Tax",
                "COUNCIL TAX OCT",
            )),
            // Refunded later: the payment stays what it was.
            personal(item(
                "f0000000-0000-4000-8000-000000000010",
                gbp,
                ("OUT", 2_999),
                "REFUNDED",
                &days_ago(6),
                "Shoe Shop",
                "SHOE SHOP",
            )),
            personal(item(
                "f0000000-0000-4000-8000-000000000011",
                gbp,
                ("IN", 2_999),
                "SETTLED",
                &days_ago(4),
                "Shoe Shop",
                "REFUND SHOE SHOP",
            )),
            // A card check for nothing, a standing order cancelled: no money.
            personal(item(
                "f0000000-0000-4000-8000-000000000012",
                gbp,
                ("OUT", 0),
                "ACCOUNT_CHECK",
                &days_ago(3),
                "Streaming Co",
                "CARD CHECK",
            )),
            personal(item(
                "f0000000-0000-4000-8000-000000000013",
                gbp,
                ("OUT", 5_000),
                "UPCOMING_CANCELLED",
                &days_ago(1),
                "Gym",
                "GYM DEC",
            )),
            (
                EURO.to_owned(),
                item(
                    "f0000000-0000-4000-8000-000000000008",
                    eur,
                    ("IN", 10_050),
                    "SETTLED",
                    &days_ago(5),
                    "Ada Lovelace",
                    "Dinner share",
                ),
            ),
        ];
        let fake = Self {
            server: Arc::new(MockServer::start().await),
            state: Arc::new(Mutex::new(State {
                tokens: vec![TOKEN.to_owned(), ACCOUNTS_ONLY_TOKEN.to_owned()],
                items,
                fault: None,
                changes_since: Vec::new(),
            })),
        };
        fake.mount().await;
        fake
    }

    /// The real connector pointed at the fake.
    pub fn connector(&self, timeout: Duration) -> Arc<dyn Connector> {
        let config = StarlingConfig {
            base_url: self.server.uri(),
            timeout,
        };
        std::thread::spawn(move || {
            Arc::new(StarlingConnector::new(config).unwrap()) as Arc<dyn Connector>
        })
        .join()
        .unwrap()
    }

    pub fn set_fault(&self, fault: Option<Fault>) {
        self.state.lock().unwrap().fault = fault;
    }

    fn change(&self, uid: &str, status: &str) {
        let now = stamp(Utc::now());
        let mut state = self.state.lock().unwrap();
        let (_, item) = state
            .items
            .iter_mut()
            .find(|(_, i)| i["feedItemUid"] == uid)
            .unwrap();
        item["status"] = json!(status);
        item["updatedAt"] = json!(now);
        if status == "SETTLED" {
            item["settlementTime"] = json!(now);
        }
    }

    /// The pending Spotify payment settles under its own uid.
    pub fn settle_the_pending(&self) {
        self.change(PENDING_UID, "SETTLED");
    }

    /// The hotel releases its card authorisation: no money moved.
    pub fn release_the_hold(&self) {
        self.change(HOLD_UID, "REVERSED");
    }

    /// The person revokes the token (every call: 403 `invalid_token`).
    pub fn revoke(&self) {
        self.state.lock().unwrap().tokens.retain(|t| t != TOKEN);
    }

    /// The `changesSince` of the last feed read.
    pub fn last_changes_since(&self) -> Option<DateTime<Utc>> {
        let state = self.state.lock().unwrap();
        let last = state.changes_since.last()?;
        Some(DateTime::parse_from_rfc3339(last).unwrap().to_utc())
    }

    /// The person makes a new token.
    pub fn issue_new_token(&self) {
        self.state.lock().unwrap().tokens.push(NEW_TOKEN.to_owned());
    }

    async fn mount(&self) {
        let routes: Vec<(&str, Box<Route<Self>>)> = vec![
            (
                "^/api/v2/identity/token$",
                Box::new(|f, r| f.as_owner(r, Self::identity)),
            ),
            (
                "^/api/v2/accounts$",
                Box::new(|f, r| f.as_owner(r, Self::accounts)),
            ),
            (
                "^/api/v2/accounts/[^/]+/balance$",
                Box::new(|f, r| f.as_owner(r, Self::balance)),
            ),
            (
                "^/api/v2/feed/account/[^/]+/category/[^/]+$",
                Box::new(|f, r| f.as_owner(r, Self::feed)),
            ),
        ];
        mount_gets(&self.server, self, routes).await;
    }

    fn as_owner(
        &self,
        request: &Request,
        answer: fn(&Self, &Request) -> ResponseTemplate,
    ) -> ResponseTemplate {
        let token = bearer_token(request);
        let fault = {
            let state = self.state.lock().unwrap();
            if !token.is_some_and(|t| state.tokens.contains(&t)) {
                return ResponseTemplate::new(403).set_body_json(json!({
                    "error": "invalid_token",
                    "error_description": "Could not validate provided access token"
                }));
            }
            state.fault
        };
        match fault {
            Some(Fault::Slow) => answer(self, request).set_delay(Duration::from_secs(5)),
            Some(Fault::ServerError) => ResponseTemplate::new(500).set_body_json(json!({
                "errors": [{"message": "An unexpected error occurred"}], "success": false})),
            Some(Fault::RateLimited) => ResponseTemplate::new(429).set_body_json(json!({
                "errors": [{"message": "Too many requests"}], "success": false})),
            Some(Fault::Malformed) => {
                ResponseTemplate::new(200).set_body_raw("{\"feedItems\": [", "application/json")
            }
            Some(Fault::UnknownStatus) | None => answer(self, request),
        }
    }

    fn identity(&self, request: &Request) -> ResponseTemplate {
        let scopes = if bearer_token(request).as_deref() == Some(ACCOUNTS_ONLY_TOKEN) {
            json!(["account:read", "account-list:read"])
        } else {
            json!([
                "account:read",
                "account-list:read",
                "balance:read",
                "transaction:read"
            ])
        };
        ResponseTemplate::new(200).set_body_json(json!({
            "accessTokenUid": "1a2b3c4d-0000-4000-8000-000000000001",
            "applicationUserUid": "1a2b3c4d-0000-4000-8000-000000000002",
            "accountHolderUid": "1a2b3c4d-0000-4000-8000-000000000003",
            "expiresAt": null, "expiresInSeconds": null, "authenticated": true,
            "scopes": scopes
        }))
    }

    fn accounts(&self, _: &Request) -> ResponseTemplate {
        ResponseTemplate::new(200).set_body_json(json!({"accounts": [
            {"accountUid": PERSONAL, "accountType": "PRIMARY", "defaultCategory": PERSONAL_CATEGORY,
             "currency": "GBP", "createdAt": "2021-03-02T10:11:12.000Z", "name": "Personal"},
            {"accountUid": EURO, "accountType": "ADDITIONAL", "defaultCategory": EURO_CATEGORY,
             "currency": "EUR", "createdAt": "2022-06-01T08:00:00.000Z", "name": "Euro"}
        ]}))
    }

    /// Cleared: settled items only; effective: pending ones taken off.
    fn balance(&self, request: &Request) -> ResponseTemplate {
        let account = request.url.path().split('/').nth(4).unwrap_or_default();
        let (currency, opening) = if account == EURO {
            ("EUR", 0)
        } else {
            ("GBP", 100_000)
        };
        let state = self.state.lock().unwrap();
        let (mut cleared, mut pending) = (opening, 0);
        for (_, item) in state.items.iter().filter(|(of, _)| of == account) {
            let units = item["amount"]["minorUnits"].as_i64().unwrap();
            let signed = if item["direction"] == "IN" {
                units
            } else {
                -units
            };
            match item["status"].as_str().unwrap() {
                "SETTLED" | "REFUNDED" => cleared += signed,
                "PENDING" => pending += signed,
                _ => {}
            }
        }
        ResponseTemplate::new(200).set_body_json(json!({
            "clearedBalance": money(currency, cleared),
            "effectiveBalance": money(currency, cleared + pending),
            "pendingTransactions": money(currency, -pending),
            "acceptedOverdraft": money(currency, 0),
            "amount": money(currency, cleared + pending),
            "totalClearedBalance": money(currency, cleared),
            "totalEffectiveBalance": money(currency, cleared + pending)
        }))
    }

    /// The category's items updated at or after `changesSince` (required).
    fn feed(&self, request: &Request) -> ResponseTemplate {
        let segments: Vec<&str> = request.url.path().split('/').collect();
        let (account, category) = (segments[5], segments[7]);
        let query: HashMap<String, String> = request.url.query_pairs().into_owned().collect();
        let Some(Ok(since)) = query
            .get("changesSince")
            .map(|s| DateTime::parse_from_rfc3339(s))
        else {
            return ResponseTemplate::new(400).set_body_json(json!({
                "errors": [{"message": "changesSince must be an ISO-8601 timestamp"}],
                "success": false}));
        };
        let mut state = self.state.lock().unwrap();
        state.changes_since.push(query["changesSince"].clone());
        let mut items: Vec<Value> = state
            .items
            .iter()
            .filter(|(of, item)| of == account && item["categoryUid"] == category)
            .map(|(_, item)| item.clone())
            .filter(|item| {
                DateTime::parse_from_rfc3339(item["updatedAt"].as_str().unwrap()).unwrap() >= since
            })
            .collect();
        if state.fault == Some(Fault::UnknownStatus) && !items.is_empty() {
            items[0]["status"] = json!("SOMETHING_NEW");
        }
        ResponseTemplate::new(200).set_body_json(json!({"feedItems": items}))
    }
}
