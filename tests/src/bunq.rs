//! A local fake of bunq's public API (`v1`, as bunq's documentation and
//! OpenAPI document `bunq/doc` describe it), for tests only. Like bunq it
//! holds the client's public key from `POST /installation` and checks the
//! RSA signature of every later request's body against it
//! (`X-Bunq-Client-Signature`; 466 without one, 400 with a wrong one), so
//! a signature the connector does not make right fails; it signs each of
//! its own answers' bodies with its server key (`X-Bunq-Server-Signature`).
//! A device must be registered for the API key before a session opens,
//! and a key opens at most one session every 30 seconds while its last
//! lives (429, bunq's limit on `/session-server`); data calls need a
//! session token. It serves a current account and a
//! savings account, payments newest first two a page along `older_url`,
//! and lets the test correct a card payment (a reversal and a new
//! payment, as bunq books a changed amount), delete the API key, make a
//! new one, and switch faults on.

use crate::fakes::Answer;
use base64::Engine as _;
use rsa::pkcs8::{DecodePublicKey, EncodePublicKey, LineEnding};
use rsa::sha2::Sha256;
use rsa::{Generate, PrivateKey, PublicKey};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tributary_providers::Connector;
use tributary_providers::bunq::{BunqConfig, BunqConnector};
use wiremock::matchers::{method, path_regex};
use wiremock::{Mock, MockServer, Request, ResponseTemplate};

/// An API key as the bunq app shows one.
pub const API_KEY: &str = "sandbox_3f1c0a9e2d7b4c5a8e6f1d2c3b4a5968f7e6d5c4b3a29180";
/// The key made after the first was deleted.
pub const NEW_API_KEY: &str = "sandbox_9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f";
/// The signed-in person's user id.
pub const USER_ID: i64 = 4242;
const PAGE: usize = 2;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    Slow,
    /// 500, bunq's error document.
    ServerError,
    /// 429, as bunq's per-endpoint limit answers (no `Retry-After`).
    RateLimited,
    /// 491, bunq's maintenance.
    Maintenance,
    /// 200, signed, with a body that is not JSON.
    Malformed,
    /// The data answers signed by another key: not bunq's.
    ForgedSignature,
    /// The data answers without `X-Bunq-Server-Signature`.
    Unsigned,
    /// An `older_url` to another host: not to be followed with the token.
    ForeignOlderUrl,
    /// bunq ends the sessions, and `/session-server` answers 429.
    SessionServerBusy,
    /// bunq ends the sessions, and the new session's answer is signed by
    /// another key: its token is not to be used.
    ForgedSession,
}

/// What bunq holds for one installation.
#[derive(Debug)]
struct Installed {
    client_key: PublicKey,
    /// API keys with a device registered from this installation, and the
    /// addresses each may call from.
    devices: Vec<(String, Value)>,
}

#[derive(Debug)]
struct State {
    api_keys: Vec<String>,
    installations: HashMap<String, Installed>,
    /// Session token to the installation and the API key it was opened
    /// with, and when.
    sessions: HashMap<String, (String, String, Instant)>,
    /// Sessions opened so far.
    sessions_opened: usize,
    /// Every payment of both accounts, newest first.
    payments: Vec<(i64, Value)>,
    next_id: i64,
    fault: Option<Fault>,
    /// Requests whose signature the fake verified.
    verified: usize,
    /// Pages of payments served.
    payment_pages: usize,
}

#[derive(Debug, Clone)]
pub struct BunqFake {
    pub server: Arc<MockServer>,
    server_key: Arc<PrivateKey>,
    /// Signs forged answers.
    other_key: Arc<PrivateKey>,
    state: Arc<Mutex<State>>,
}

/// A refusal: its status and bunq's description.
type Refused = (u16, &'static str);

fn error(status: u16, description: &str) -> ResponseTemplate {
    ResponseTemplate::new(status).set_body_json(json!({"Error": [
        {"error_description": description, "error_description_translated": description}]}))
}

/// `days` before now at `time`, as bunq writes times (UTC, no zone).
fn at(days: i64, time: &str) -> String {
    format!(
        "{} {time}.123456",
        chrono::Utc::now().date_naive() - chrono::Duration::days(days)
    )
}

fn amount(value: &str) -> Value {
    json!({"value": value, "currency": "EUR"})
}

/// A payment as bunq lists one: every documented key present.
fn payment(id: i64, account: i64, (value, created): (&str, &str), text: &str, kind: &str) -> Value {
    json!({"Payment": {
        "id": id, "created": created, "updated": created, "monetary_account_id": account,
        "amount": amount(value), "description": text, "type": kind, "sub_type": "PAYMENT",
        "alias": {"iban": "NL65BUNQ9900000188", "display_name": "Ada Lovelace", "country": "NL",
                  "avatar": null, "label_user": {}, "is_light": false},
        "counterparty_alias": {"iban": null, "display_name": text, "country": "NL",
                               "merchant_category_code": "5411"},
        "attachment": [], "geolocation": null, "batch_id": null, "scheduled_id": null,
        "balance_after_mutation": amount("0.00"), "request_reference_split_the_bill": []
    }})
}

const CURRENT: i64 = 11;
const SAVINGS: i64 = 12;

impl BunqFake {
    pub async fn start() -> Self {
        let keys = std::thread::spawn(|| (PrivateKey::generate(), PrivateKey::generate()))
            .join()
            .unwrap();
        let fake = Self {
            server: Arc::new(MockServer::start().await),
            server_key: Arc::new(keys.0),
            other_key: Arc::new(keys.1),
            state: Arc::new(Mutex::new(State {
                api_keys: vec![API_KEY.to_owned()],
                installations: HashMap::new(),
                sessions: HashMap::new(),
                payments: vec![
                    (
                        CURRENT,
                        payment(
                            105,
                            CURRENT,
                            ("-4.20", &at(0, "08:15:00")),
                            "Coffee Company",
                            "MASTERCARD",
                        ),
                    ),
                    (
                        CURRENT,
                        payment(
                            104,
                            CURRENT,
                            ("-61.37", &at(2, "17:40:12")),
                            "Albert Heijn",
                            "MASTERCARD",
                        ),
                    ),
                    (
                        SAVINGS,
                        payment(
                            103,
                            SAVINGS,
                            ("250.00", &at(5, "09:00:00")),
                            "Ada Lovelace",
                            "BUNQ",
                        ),
                    ),
                    (
                        CURRENT,
                        payment(
                            102,
                            CURRENT,
                            ("-250.00", &at(5, "09:00:00")),
                            "Ada Lovelace",
                            "BUNQ",
                        ),
                    ),
                    // 23:30 in UTC, 00:30 the next day in Amsterdam.
                    (
                        CURRENT,
                        payment(
                            101,
                            CURRENT,
                            ("3150.00", "2026-01-14 23:30:00.000000"),
                            "Acme B.V. salary",
                            "EBA_SCT",
                        ),
                    ),
                    (
                        CURRENT,
                        payment(
                            100,
                            CURRENT,
                            ("-9.99", "2025-12-01 12:00:00.000000"),
                            "Streaming service",
                            "MASTERCARD",
                        ),
                    ),
                ],
                next_id: 106,
                fault: None,
                verified: 0,
                payment_pages: 0,
                sessions_opened: 0,
            })),
        };
        fake.mount().await;
        fake
    }

    /// The real connector pointed at the fake, leaving no time between
    /// requests (the fake has no rate limit to keep).
    pub fn connector(&self, timeout: Duration) -> Arc<dyn Connector> {
        let config = BunqConfig {
            base_url: format!("{}/v1", self.server.uri()),
            timeout,
        };
        std::thread::spawn(move || {
            Arc::new(
                BunqConnector::new(config)
                    .unwrap()
                    .with_spacing(Duration::ZERO),
            ) as Arc<dyn Connector>
        })
        .join()
        .unwrap()
    }

    pub fn set_fault(&self, fault: Option<Fault>) {
        let mut state = self.state.lock().unwrap();
        if matches!(fault, Some(Fault::SessionServerBusy | Fault::ForgedSession)) {
            state.sessions.clear();
        }
        state.fault = fault;
    }

    /// bunq ends every session (their timeout, say).
    pub fn end_sessions(&self) {
        self.state.lock().unwrap().sessions.clear();
    }

    /// Sessions opened so far.
    pub fn sessions_opened(&self) -> usize {
        self.state.lock().unwrap().sessions_opened
    }

    /// Requests whose body signature the fake has verified.
    pub fn verified(&self) -> usize {
        self.state.lock().unwrap().verified
    }

    /// Pages of payments served so far.
    pub fn payment_pages(&self) -> usize {
        self.state.lock().unwrap().payment_pages
    }

    /// The addresses each registered device may call from.
    pub fn permitted_ips(&self) -> Vec<Value> {
        let state = self.state.lock().unwrap();
        state
            .installations
            .values()
            .flat_map(|i| i.devices.iter().map(|(_, ips)| ips.clone()))
            .collect()
    }

    /// The coffee was charged in another currency and settles at another
    /// amount: bunq leaves the payment, books a reversal of it and a new
    /// payment at the settled amount.
    pub fn correct_the_coffee(&self) {
        let mut state = self.state.lock().unwrap();
        let (reversal, corrected) = (state.next_id, state.next_id + 1);
        state.next_id += 2;
        let today = at(0, "20:00:00");
        let mut refund = payment(
            reversal,
            CURRENT,
            ("4.20", &today),
            "Refund: Coffee Company",
            "MASTERCARD",
        );
        refund["Payment"]["sub_type"] = json!("REVERSAL");
        refund["Payment"]["counterparty_alias"]["display_name"] = json!("Coffee Company");
        state.payments.insert(0, (CURRENT, refund));
        state.payments.insert(
            0,
            (
                CURRENT,
                payment(
                    corrected,
                    CURRENT,
                    ("-4.35", &today),
                    "Coffee Company",
                    "MASTERCARD",
                ),
            ),
        );
    }

    /// The person deletes the API key in the app: its sessions end, and
    /// bunq refuses it.
    pub fn delete_the_key(&self) {
        let mut state = self.state.lock().unwrap();
        state.api_keys.clear();
        state.sessions.clear();
    }

    /// The person makes a new API key.
    pub fn make_a_new_key(&self) {
        self.state
            .lock()
            .unwrap()
            .api_keys
            .push(NEW_API_KEY.to_owned());
    }

    async fn mount(&self) {
        type Route = dyn Fn(&BunqFake, &Request) -> ResponseTemplate + Send + Sync;
        let routes: Vec<(&str, &str, Arc<Route>)> = vec![
            ("POST", "^/v1/installation$", Arc::new(Self::installation)),
            ("POST", "^/v1/device-server$", Arc::new(Self::device)),
            ("POST", "^/v1/session-server$", Arc::new(Self::session)),
            (
                "GET",
                "^/v1/user/[0-9]+/monetary-account$",
                Arc::new(|f: &Self, r: &Request| f.as_session(r, Self::accounts)),
            ),
            (
                "GET",
                "^/v1/user/[0-9]+/monetary-account/[0-9]+/payment$",
                Arc::new(|f: &Self, r: &Request| f.as_session(r, Self::payments)),
            ),
        ];
        for (verb, route, answer) in routes {
            Mock::given(method(verb))
                .and(path_regex(route))
                .respond_with(Answer {
                    fake: self.clone(),
                    answer,
                })
                .mount(&self.server)
                .await;
        }
    }

    /// `body` as bunq answers it: JSON, signed with `key`.
    fn signed(&self, body: &[u8], key: &PrivateKey) -> ResponseTemplate {
        let signature = key.pkcs1v15_sign::<Sha256>(body).unwrap();
        ResponseTemplate::new(200)
            .set_body_raw(body.to_vec(), "application/json")
            .insert_header(
                "X-Bunq-Server-Signature",
                base64::engine::general_purpose::STANDARD.encode(signature),
            )
    }

    fn ok(&self, body: &Value) -> ResponseTemplate {
        self.signed(body.to_string().as_bytes(), &self.server_key)
    }

    /// The token of `request`, if its body is signed with its
    /// installation's key: else bunq's refusal.
    fn verify(&self, request: &Request, state: &mut State) -> Result<String, Refused> {
        let token = header(request, "x-bunq-client-authentication")
            .ok_or((401, "Insufficient authorisation."))?;
        let installation = match state.sessions.get(&token) {
            // A session's calls are signed with its installation's key.
            Some((installation, _, _)) => Some(installation.clone()),
            None => state
                .installations
                .contains_key(&token)
                .then(|| token.clone()),
        };
        let Some(installation) = installation else {
            return Err((401, "Insufficient authorisation."));
        };
        let Some(signature) = header(request, "x-bunq-client-signature") else {
            return Err((466, "Request signature required."));
        };
        let signature = base64::engine::general_purpose::STANDARD
            .decode(signature)
            .map_err(|_| (400, "The request signature is invalid."))?;
        let key = &state.installations[&installation].client_key;
        key.pkcs1v15_verify::<Sha256>(&request.body, &signature)
            .map_err(|_| (400, "The request signature is invalid."))?;
        state.verified += 1;
        Ok(token)
    }

    fn installation(&self, request: &Request) -> ResponseTemplate {
        let body: Value = serde_json::from_slice(&request.body).unwrap_or_default();
        let Some(key) = body["client_public_key"]
            .as_str()
            .and_then(|pem| PublicKey::from_public_key_pem(pem).ok())
        else {
            return error(
                400,
                "Public key is not a valid PEM-encoded 2048-bit RSA key.",
            );
        };
        let mut state = self.state.lock().unwrap();
        let token = format!("installation-{}", state.installations.len() + 1);
        state.installations.insert(
            token.clone(),
            Installed {
                client_key: key,
                devices: Vec::new(),
            },
        );
        let server_key = self
            .server_key
            .to_public_key()
            .to_public_key_pem(LineEnding::LF)
            .unwrap();
        self.ok(&json!({"Response": [
            {"Id": {"id": 1234}},
            {"Token": {"id": 5678, "created": at(0, "10:00:00"), "updated": at(0, "10:00:00"), "token": token}},
            {"ServerPublicKey": {"server_public_key": server_key}}
        ]}))
    }

    fn device(&self, request: &Request) -> ResponseTemplate {
        let mut state = self.state.lock().unwrap();
        let installation = match self.verify(request, &mut state) {
            Ok(token) if state.installations.contains_key(&token) => token,
            Ok(_) => return error(401, "Insufficient authorisation."),
            Err((status, why)) => return error(status, why),
        };
        let body: Value = serde_json::from_slice(&request.body).unwrap_or_default();
        let secret = body["secret"].as_str().unwrap_or_default().to_owned();
        if body["description"].as_str().is_none() || !state.api_keys.contains(&secret) {
            return error(
                400,
                "User credentials are incorrect. Incorrect API key or IP address.",
            );
        }
        let ips = body["permitted_ips"].clone();
        if let Some(installed) = state.installations.get_mut(&installation) {
            installed.devices.push((secret, ips));
        }
        self.ok(&json!({"Response": [{"Id": {"id": 91011}}]}))
    }

    fn session(&self, request: &Request) -> ResponseTemplate {
        let mut state = self.state.lock().unwrap();
        let installation = match self.verify(request, &mut state) {
            Ok(token) if state.installations.contains_key(&token) => token,
            Ok(_) => return error(401, "Insufficient authorisation."),
            Err((status, why)) => return error(status, why),
        };
        let body: Value = serde_json::from_slice(&request.body).unwrap_or_default();
        let secret = body["secret"].as_str().unwrap_or_default().to_owned();
        let registered = state.installations[&installation]
            .devices
            .iter()
            .any(|(key, _)| *key == secret);
        if !registered || !state.api_keys.contains(&secret) {
            return error(
                400,
                "User credentials are incorrect. Incorrect API key or IP address.",
            );
        }
        let too_soon = state
            .sessions
            .values()
            .any(|(_, key, opened)| *key == secret && opened.elapsed() < Duration::from_secs(30));
        if too_soon || state.fault == Some(Fault::SessionServerBusy) {
            return error(
                429,
                "Too many requests. You can do a maximum of 1 calls per 30 seconds to this endpoint.",
            );
        }
        // A forged answer names a session bunq never opened.
        let (token, key) = if state.fault == Some(Fault::ForgedSession) {
            ("session-forged".to_owned(), &self.other_key)
        } else {
            state.sessions_opened += 1;
            let token = format!("session-{}", state.sessions_opened);
            state
                .sessions
                .insert(token.clone(), (installation, secret, Instant::now()));
            (token, &self.server_key)
        };
        let body = json!({"Response": [
            {"Id": {"id": 25536694}},
            {"Token": {"id": 25536694, "created": at(0, "10:00:00"), "updated": at(0, "10:00:00"), "token": token}},
            {"UserPerson": {"id": USER_ID, "display_name": "Ada Lovelace", "session_timeout": 604800}}
        ]});
        self.signed(body.to_string().as_bytes(), key)
    }

    /// A data call: a session token, a verified signature, the session's
    /// own user, and the fault switched on.
    fn as_session(
        &self,
        request: &Request,
        answer: fn(&Self, &Request) -> Value,
    ) -> ResponseTemplate {
        let fault = {
            let mut state = self.state.lock().unwrap();
            match self.verify(request, &mut state) {
                Ok(token) if state.sessions.contains_key(&token) => {}
                Ok(_) => return error(401, "Insufficient authorisation."),
                Err((status, why)) => return error(status, why),
            }
            if request.url.path().split('/').nth(3) != Some(&USER_ID.to_string()) {
                return error(403, "Insufficient authorisation.");
            }
            state.fault
        };
        let body = || answer(self, request);
        match fault {
            Some(Fault::Slow) => self.ok(&body()).set_delay(Duration::from_secs(5)),
            Some(Fault::ServerError) => error(500, "We're having some trouble. Try again later."),
            Some(Fault::RateLimited) => error(
                429,
                "Too many requests. You can do a maximum of 3 calls per 3 seconds to this endpoint.",
            ),
            Some(Fault::Maintenance) => error(491, "bunq is in maintenance."),
            Some(Fault::Malformed) => self.signed(b"{\"Response\": [", &self.server_key),
            Some(Fault::ForgedSignature) => {
                self.signed(body().to_string().as_bytes(), &self.other_key)
            }
            Some(Fault::Unsigned) => {
                ResponseTemplate::new(200).set_body_raw(body().to_string(), "application/json")
            }
            Some(Fault::ForeignOlderUrl | Fault::SessionServerBusy | Fault::ForgedSession)
            | None => self.ok(&body()),
        }
    }

    fn accounts(&self, _: &Request) -> Value {
        let account = |wrapper: &str, id: i64, description: &str, balance: &str, iban: &str| {
            json!({wrapper: {
                "id": id, "created": "2024-03-01 10:00:00.000000", "updated": "2024-03-01 10:00:00.000000",
                "currency": "EUR", "description": description, "balance": amount(balance),
                "daily_limit": amount("1000.00"), "overdraft_limit": amount("0.00"),
                "alias": [{"type": "EMAIL", "value": "ada@example.com", "name": "Ada Lovelace"},
                          {"type": "IBAN", "value": iban, "name": "Ada Lovelace"}],
                "status": "ACTIVE", "sub_status": "NONE", "user_id": USER_ID,
                "display_name": "Ada Lovelace", "public_uuid": format!("uuid-{id}"), "setting": {}
            }})
        };
        json!({
            "Response": [
                account("MonetaryAccountBank", CURRENT, "Main", "2834.43", "NL65BUNQ9900000188"),
                account("MonetaryAccountSavings", SAVINGS, "Rainy day", "250.00", "NL12BUNQ9900001234"),
            ],
            "Pagination": {"future_url": null, "newer_url": null, "older_url": null}
        })
    }

    /// The account's payments newest first, two a page; `older_id` keeps
    /// those with a smaller id.
    fn payments(&self, request: &Request) -> Value {
        let account: i64 = request
            .url
            .path()
            .split('/')
            .nth(5)
            .and_then(|id| id.parse().ok())
            .unwrap_or_default();
        let query: HashMap<String, String> = request.url.query_pairs().into_owned().collect();
        let older_id: Option<i64> = query.get("older_id").and_then(|id| id.parse().ok());
        let count: usize = query
            .get("count")
            .and_then(|c| c.parse().ok())
            .unwrap_or(10);
        assert!(count <= 200, "bunq's largest page is 200");
        let mut state = self.state.lock().unwrap();
        state.payment_pages += 1;
        let all: Vec<&Value> = state
            .payments
            .iter()
            .filter(|(of, p)| {
                *of == account
                    && older_id.is_none_or(|older| p["Payment"]["id"].as_i64() < Some(older))
            })
            .map(|(_, p)| p)
            .collect();
        let page: Vec<&Value> = all.iter().take(PAGE).copied().collect();
        let older_url = (all.len() > PAGE).then(|| {
            let last = page.last().unwrap()["Payment"]["id"].as_i64().unwrap();
            let path = format!(
                "/v1/user/{USER_ID}/monetary-account/{account}/payment?count={PAGE}&older_id={last}"
            );
            if state.fault == Some(Fault::ForeignOlderUrl) {
                format!("http://127.0.0.2:9/elsewhere{path}")
            } else {
                path
            }
        });
        json!({
            "Response": page,
            "Pagination": {"future_url": null, "newer_url": null, "older_url": older_url}
        })
    }
}

fn header(request: &Request, name: &str) -> Option<String> {
    request
        .headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
}
