//! A local fake of Pluggy's API (as its OpenAPI document describes it), for
//! tests only: `POST /auth` gives an API key for the application's client
//! id and secret (else 401 `CLIENT_KEYS_UNAUTHORIZED`); every other call
//! must carry a key it gave (`X-API-KEY`). It holds one item at a bank, a
//! checking account and a credit card (a purchase positive, as Pluggy
//! writes them), pages `GET /v2/transactions` two at a time along its
//! cursor (`next` a query with `after`), honours `dateFrom`, and lets the
//! test post a pending transaction under a new id, put the item in
//! `LOGIN_ERROR` and back, rotate the client secret, and switch faults on.
//! The item also holds two investments (a stock and a CDB), one a page,
//! with their activity two a page (`GET /investments`,
//! `GET /investments/{id}/transactions`), amounts unsigned with their
//! `movementType`, as Pluggy writes them. The server's own application
//! (`SERVER_CLIENT_ID`) signs in too and asks for connect tokens
//! (`POST /connect_token`); the item is made for the `clientUserId` the
//! last new-item token named, as Pluggy Connect would.

use crate::fakes::{Answer, Route, mount_gets};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tributary_providers::Connector;
use tributary_providers::pluggy::{PluggyConfig, PluggyConnector, ServerApplication};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, ResponseTemplate};

pub const CLIENT_ID: &str = "5a1c2f1e-4b7d-4a8e-9f3b-2c6d8e0a1b2c";
pub const CLIENT_SECRET: &str = "pluggy-s3cr3t-f0r-t3sts";
/// The secret made after the first was revoked.
pub const NEW_CLIENT_SECRET: &str = "pluggy-n3w-s3cr3t";
pub const ITEM_ID: &str = "0b4c7e2a-1f3d-4e5a-8b6c-9d0e1f2a3b4c";
/// This server's own Pluggy application, for Pluggy Connect.
pub const SERVER_CLIENT_ID: &str = "9e8d7c6b-5a4f-4e3d-8c2b-1a0f9e8d7c6b";
pub const SERVER_CLIENT_SECRET: &str = "pluggy-s3rv3r-s3cr3t";
const PAGE: usize = 2;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    Slow,
    /// 500, Pluggy's error document.
    ServerError,
    /// 429 with `RateLimit-Reset` and `Retry-After`.
    RateLimited,
    /// 200 with a body that is not JSON.
    Malformed,
    /// The cursor's next page given again: not to be followed for ever.
    SameCursor,
    /// 500 for any page after the first.
    LaterPageFails,
}

#[derive(Debug)]
struct State {
    secrets: Vec<String>,
    keys: Vec<String>,
    item_status: &'static str,
    /// Transactions by account, newest first.
    transactions: HashMap<String, Vec<Value>>,
    fault: Option<Fault>,
    pages: usize,
    /// The `dateFrom` each account's transactions were last asked from.
    date_from: HashMap<String, Option<String>>,
    /// Whether the person has opened a savings account since connecting.
    savings: bool,
    /// Who the item was made for (`clientUserId`), if a token named them.
    item_client_user_id: Option<String>,
    /// The connect tokens asked for: the body of each request.
    connect_tokens: Vec<Value>,
    /// The API keys given to the server's application.
    server_keys: Vec<String>,
    /// Requests made with one of those keys.
    server_key_reads: usize,
}

#[derive(Debug, Clone)]
pub struct PluggyFake {
    pub server: Arc<MockServer>,
    state: Arc<Mutex<State>>,
}

fn error(status: u16, description: &str, message: &str) -> ResponseTemplate {
    ResponseTemplate::new(status)
        .set_body_json(json!({"code": status, "codeDescription": description, "message": message}))
}

fn day(days_ago: i64) -> String {
    format!(
        "{}T00:00:00.000Z",
        chrono::Utc::now().date_naive() - chrono::Duration::days(days_ago)
    )
}

const CHECKING: &str = "acc-checking";
const SAVINGS: &str = "acc-savings";
const CARD: &str = "acc-card";

/// A transaction as Pluggy writes one: amounts as JSON numbers.
fn transaction(
    (id, account): (&str, &str),
    (amount, days_ago): (Value, i64),
    (description, merchant): (&str, Option<&str>),
    status: &str,
) -> Value {
    json!({
        "id": id, "accountId": account, "description": description,
        "descriptionRaw": null, "currencyCode": "BRL", "amount": amount,
        "date": day(days_ago), "balance": null, "category": "Shopping",
        "status": status, "type": "DEBIT", "createdAt": day(days_ago), "updatedAt": day(days_ago),
        "merchant": merchant.map(|name| json!({"name": name, "businessName": format!("{name} LTDA"), "cnpj": "00000000000191"})),
        "paymentData": null, "creditCardMetadata": null
    })
}

impl PluggyFake {
    pub async fn start() -> Self {
        // Pluggy writes amounts as JSON numbers: these are read with their
        // exact digits (serde_json's arbitrary precision).
        let checking = vec![
            transaction(
                ("tx-pend", CHECKING),
                (number("-27.90"), 0),
                ("PIX ENVIADO PADARIA", Some("Padaria Sao Jorge")),
                "PENDING",
            ),
            transaction(
                ("tx-3", CHECKING),
                (number("-212.45"), 2),
                ("PAGAMENTO BOLETO ENERGIA", None),
                "POSTED",
            ),
            transaction(
                ("tx-2", CHECKING),
                (number("5500.00"), 5),
                ("SALARIO EMPRESA", None),
                "POSTED",
            ),
            transaction(
                ("tx-1", CHECKING),
                (number("-1800.00"), 40),
                ("ALUGUEL", None),
                "POSTED",
            ),
        ];
        let mut abroad = transaction(
            ("tx-c2", CARD),
            (number("19.99"), 3),
            ("NETFLIX.COM", Some("Netflix")),
            "POSTED",
        );
        abroad["currencyCode"] = json!("USD");
        abroad["amountInAccountCurrency"] = number("104.35");
        let card = vec![
            abroad,
            transaction(
                ("tx-c1", CARD),
                (number("159.20"), 6),
                ("MERCADO LIVRE", Some("Mercado Livre")),
                "POSTED",
            ),
        ];
        let fake = Self {
            server: Arc::new(MockServer::start().await),
            state: Arc::new(Mutex::new(State {
                secrets: vec![CLIENT_SECRET.to_owned()],
                keys: Vec::new(),
                item_status: "UPDATED",
                transactions: HashMap::from([
                    (CHECKING.to_owned(), checking),
                    (CARD.to_owned(), card),
                ]),
                fault: None,
                pages: 0,
                date_from: HashMap::new(),
                savings: false,
                item_client_user_id: None,
                connect_tokens: Vec::new(),
                server_keys: Vec::new(),
                server_key_reads: 0,
            })),
        };
        fake.mount().await;
        fake
    }

    pub fn connector(&self, timeout: Duration) -> Arc<dyn Connector> {
        self.connector_with(timeout, None)
    }

    /// A connector with this server's own application, for Pluggy Connect
    /// loaded from `script`.
    pub fn connector_for_the_server(&self, timeout: Duration, script: &str) -> Arc<dyn Connector> {
        let application = ServerApplication {
            client_id: SERVER_CLIENT_ID.to_owned(),
            client_secret: SERVER_CLIENT_SECRET.to_owned(),
            script: script.to_owned(),
            include_sandbox: true,
        };
        self.connector_with(timeout, Some(application))
    }

    fn connector_with(
        &self,
        timeout: Duration,
        server_application: Option<ServerApplication>,
    ) -> Arc<dyn Connector> {
        let config = PluggyConfig {
            base_url: self.server.uri(),
            timeout,
            server_application,
        };
        std::thread::spawn(move || {
            Arc::new(PluggyConnector::new(config).unwrap()) as Arc<dyn Connector>
        })
        .join()
        .unwrap()
    }

    /// The connect tokens asked for so far: each request's body.
    pub fn connect_tokens(&self) -> Vec<Value> {
        self.state.lock().unwrap().connect_tokens.clone()
    }

    /// Who the item was made for, as Pluggy keeps it.
    pub fn item_made_for(&self, client_user_id: Option<&str>) {
        self.state.lock().unwrap().item_client_user_id = client_user_id.map(str::to_owned);
    }

    /// How many keys the server's application was given.
    pub fn server_keys_given(&self) -> usize {
        self.state.lock().unwrap().server_keys.len()
    }

    /// How many requests carried a key of the server's application.
    pub fn server_key_reads(&self) -> usize {
        self.state.lock().unwrap().server_key_reads
    }

    pub fn set_fault(&self, fault: Option<Fault>) {
        self.state.lock().unwrap().fault = fault;
    }

    /// The `dateFrom` the checking account's transactions were last asked
    /// from.
    pub fn checking_date_from(&self) -> Option<String> {
        self.date_from(CHECKING).flatten()
    }

    /// The `dateFrom` the savings account's transactions were last asked
    /// from (outer `None`: never asked).
    pub fn savings_date_from(&self) -> Option<Option<String>> {
        self.date_from(SAVINGS)
    }

    fn date_from(&self, account: &str) -> Option<Option<String>> {
        self.state.lock().unwrap().date_from.get(account).cloned()
    }

    /// The person opens a savings account whose history reaches back
    /// before the next sync's window (a deposit 60 days ago).
    pub fn open_a_savings_account(&self) {
        let mut state = self.state.lock().unwrap();
        state.savings = true;
        state.transactions.insert(
            SAVINGS.to_owned(),
            vec![transaction(
                ("tx-s1", SAVINGS),
                (number("2500.00"), 60),
                ("APLICACAO POUPANCA", None),
                "POSTED",
            )],
        );
    }

    /// Pages of transactions served so far.
    pub fn pages(&self) -> usize {
        self.state.lock().unwrap().pages
    }

    /// The bakery's PIX posts under an id of its own.
    pub fn post_the_pending(&self) {
        let mut state = self.state.lock().unwrap();
        let checking = state.transactions.get_mut(CHECKING).unwrap();
        checking[0]["id"] = json!("tx-4");
        checking[0]["status"] = json!("POSTED");
    }

    /// The bank asks the person to sign in again at Pluggy, or they did.
    pub fn set_item_status(&self, status: &'static str) {
        self.state.lock().unwrap().item_status = status;
    }

    /// The application's secret is rotated in Pluggy's dashboard.
    pub fn revoke_the_secret(&self) {
        let mut state = self.state.lock().unwrap();
        state.secrets.clear();
        state.keys.clear();
    }

    pub fn issue_a_new_secret(&self) {
        self.state
            .lock()
            .unwrap()
            .secrets
            .push(NEW_CLIENT_SECRET.to_owned());
    }

    async fn mount(&self) {
        Mock::given(method("POST"))
            .and(path("/auth"))
            .respond_with(Answer {
                fake: self.clone(),
                answer: Arc::new(Self::auth) as Arc<Route<Self>>,
            })
            .mount(&self.server)
            .await;
        Mock::given(method("POST"))
            .and(path("/connect_token"))
            .respond_with(Answer {
                fake: self.clone(),
                answer: Arc::new(|f: &Self, r: &Request| f.with_key(r, Self::connect_token))
                    as Arc<Route<Self>>,
            })
            .mount(&self.server)
            .await;
        let routes: Vec<(&str, Box<Route<Self>>)> = vec![
            ("^/items/[^/]+$", Box::new(|f, r| f.with_key(r, Self::item))),
            (
                "^/accounts$",
                Box::new(|f, r| f.with_key(r, Self::accounts)),
            ),
            (
                "^/v2/transactions$",
                Box::new(|f, r| f.with_key(r, Self::transactions)),
            ),
            (
                "^/investments$",
                Box::new(|f, r| f.with_key(r, Self::investments)),
            ),
            (
                "^/investments/[^/]+/transactions$",
                Box::new(|f, r| f.with_key(r, Self::investment_transactions)),
            ),
        ];
        mount_gets(&self.server, self, routes).await;
    }

    fn auth(&self, request: &Request) -> ResponseTemplate {
        let body: Value = serde_json::from_slice(&request.body).unwrap_or_default();
        let mut state = self.state.lock().unwrap();
        let persons = body["clientId"] == json!(CLIENT_ID)
            && body["clientSecret"]
                .as_str()
                .is_some_and(|s| state.secrets.iter().any(|known| known == s));
        let servers = body["clientId"] == json!(SERVER_CLIENT_ID)
            && body["clientSecret"] == json!(SERVER_CLIENT_SECRET);
        if !persons && !servers {
            return error(401, "CLIENT_KEYS_UNAUTHORIZED", "Client keys are invalid");
        }
        let key = format!("api-key-{}", state.keys.len() + 1);
        state.keys.push(key.clone());
        if servers {
            state.server_keys.push(key.clone());
        }
        ResponseTemplate::new(200).set_body_json(json!({"apiKey": key}))
    }

    /// A connect token (the server's application only, in this fake); a
    /// new item's names who Pluggy Connect makes the item for.
    fn connect_token(&self, request: &Request) -> ResponseTemplate {
        let Ok(body) = serde_json::from_slice::<Value>(&request.body) else {
            return error(400, "INVALID_REQUEST", "body is not JSON");
        };
        let mut state = self.state.lock().unwrap();
        let key = request
            .headers
            .get("x-api-key")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default();
        if !state.server_keys.iter().any(|k| k == key) {
            return error(403, "FORBIDDEN", "not this application's key");
        }
        if body.get("itemId").is_none() {
            state.item_client_user_id = body["options"]["clientUserId"].as_str().map(str::to_owned);
        }
        state.connect_tokens.push(body);
        let token = format!("connect-token-{}", state.connect_tokens.len());
        ResponseTemplate::new(200).set_body_json(json!({"accessToken": token}))
    }

    fn with_key(
        &self,
        request: &Request,
        answer: fn(&Self, &Request) -> ResponseTemplate,
    ) -> ResponseTemplate {
        let fault = {
            let mut state = self.state.lock().unwrap();
            let key = request
                .headers
                .get("x-api-key")
                .and_then(|v| v.to_str().ok());
            if !key.is_some_and(|k| state.keys.iter().any(|known| known == k)) {
                return error(403, "FORBIDDEN", "Missing or invalid API key");
            }
            if key.is_some_and(|k| state.server_keys.iter().any(|known| known == k)) {
                state.server_key_reads += 1;
            }
            state.fault
        };
        match fault {
            Some(Fault::Slow) => answer(self, request).set_delay(Duration::from_secs(5)),
            Some(Fault::ServerError) => error(500, "INTERNAL_ERROR", "Internal server error"),
            Some(Fault::RateLimited) => error(
                429,
                "TOO_MANY_REQUESTS",
                "Too many requests. Please try again later (see Retry-After header in seconds)",
            )
            .insert_header("ratelimit-reset", "42")
            .insert_header("retry-after", "60"),
            Some(Fault::Malformed) => {
                ResponseTemplate::new(200).set_body_raw("{\"results\": [", "application/json")
            }
            Some(Fault::LaterPageFails)
                if request.url.query_pairs().any(|(name, _)| name == "after") =>
            {
                error(500, "INTERNAL_ERROR", "Internal server error")
            }
            Some(Fault::SameCursor | Fault::LaterPageFails) | None => answer(self, request),
        }
    }

    fn item(&self, request: &Request) -> ResponseTemplate {
        if !request.url.path().ends_with(ITEM_ID) {
            return error(404, "ITEM_NOT_FOUND", "item not found");
        }
        let (status, made_for) = {
            let state = self.state.lock().unwrap();
            (state.item_status, state.item_client_user_id.clone())
        };
        let login_error = status == "LOGIN_ERROR";
        ResponseTemplate::new(200).set_body_json(json!({
            "id": ITEM_ID,
            "connector": {"id": 201, "name": "Nubank", "imageUrl": "https://cdn.pluggy.ai/assets/connector-icons/201.svg",
                          "primaryColor": "820ad1", "country": "BR", "type": "PERSONAL_BANK"},
            "status": status,
            "executionStatus": if login_error { "INVALID_CREDENTIALS" } else { "SUCCESS" },
            "error": if login_error { json!({"code": "INVALID_CREDENTIALS", "message": "Invalid credentials."}) } else { Value::Null },
            "createdAt": day(60), "updatedAt": day(0), "lastUpdatedAt": day(0),
            "clientUserId": made_for
        }))
    }

    fn accounts(&self, request: &Request) -> ResponseTemplate {
        let query: HashMap<String, String> = request.url.query_pairs().into_owned().collect();
        if query.get("itemId").map(String::as_str) != Some(ITEM_ID) {
            return ResponseTemplate::new(200)
                .set_body_json(json!({"page": 1, "total": 0, "totalPages": 0, "results": []}));
        }
        // One account a page, so that the listing is paged.
        let page: usize = query.get("page").and_then(|p| p.parse().ok()).unwrap_or(1);
        let mut accounts = vec![
            json!({"id": CHECKING, "type": "BANK", "subtype": "CHECKING_ACCOUNT", "number": "0001/12345-0",
                   "name": "Conta Corrente", "marketingName": "NuConta", "balance": number("3487.65"),
                   "itemId": ITEM_ID, "currencyCode": "BRL", "owner": "Ada Lovelace",
                   "bankData": {"transferNumber": "0001/12345-0", "closingBalance": number("3487.65")},
                   "creditData": null}),
            json!({"id": CARD, "type": "CREDIT", "subtype": "CREDIT_CARD", "number": "xxxx8670",
                   "name": "Mastercard Black", "marketingName": null, "balance": number("263.55"),
                   "itemId": ITEM_ID, "currencyCode": "BRL", "owner": "Ada Lovelace",
                   "creditData": {"level": "BLACK", "brand": "MASTERCARD", "balanceCloseDate": "2026-12-03",
                                  "balanceDueDate": "2026-12-10", "availableCreditLimit": number("9736.45"),
                                  "minimumPayment": number("39.53"), "creditLimit": number("10000.00"),
                                  "isLimitFlexible": false, "status": "ACTIVE"}}),
        ];
        if self.state.lock().unwrap().savings {
            accounts.push(json!({"id": SAVINGS, "type": "BANK", "subtype": "SAVINGS_ACCOUNT", "number": "0001/98765-1",
                   "name": "Poupanca", "marketingName": null, "balance": number("2500.00"),
                   "itemId": ITEM_ID, "currencyCode": "BRL", "owner": "Ada Lovelace", "creditData": null}));
        }
        ResponseTemplate::new(200).set_body_json(json!({
            "page": page, "total": accounts.len(), "totalPages": accounts.len(),
            "results": accounts.get(page - 1).map(|a| vec![a.clone()]).unwrap_or_default()
        }))
    }

    /// The account's transactions newest first, two a page from the
    /// cursor `after` (the index to start at), `dateFrom` honoured.
    fn transactions(&self, request: &Request) -> ResponseTemplate {
        let query: HashMap<String, String> = request.url.query_pairs().into_owned().collect();
        let account = query.get("accountId").cloned().unwrap_or_default();
        let from = query.get("dateFrom").cloned();
        let mut state = self.state.lock().unwrap();
        state.pages += 1;
        state.date_from.insert(account.clone(), from.clone());
        let all: Vec<Value> = state
            .transactions
            .get(&account)
            .cloned()
            .unwrap_or_default()
            .into_iter()
            .filter(|t| {
                from.as_deref()
                    .is_none_or(|from| t["date"].as_str().unwrap()[..10] >= *from)
            })
            .collect();
        let start: usize = match query.get("after") {
            Some(after) => match after.strip_prefix("c-").and_then(|n| n.parse().ok()) {
                Some(at) => at,
                None => return error(400, "BAD_REQUEST", "Invalid cursor"),
            },
            None => 0,
        };
        let page: Vec<Value> = all.iter().skip(start).take(PAGE).cloned().collect();
        let same_cursor = state.fault == Some(Fault::SameCursor);
        let next_at = if same_cursor { 0 } else { start + PAGE };
        let next = (start + PAGE < all.len() || same_cursor).then(|| {
            let mut next = url::form_urlencoded::Serializer::new(String::new());
            next.append_pair("accountId", &account);
            if let Some(from) = &from {
                next.append_pair("dateFrom", from);
            }
            next.append_pair("after", &format!("c-{next_at}"));
            format!("?{}", next.finish())
        });
        ResponseTemplate::new(200).set_body_json(json!({"results": page, "next": next}))
    }

    /// The item's investments, one a page: a stock and a CDB (no quotas).
    fn investments(&self, request: &Request) -> ResponseTemplate {
        let query: HashMap<String, String> = request.url.query_pairs().into_owned().collect();
        if query.get("itemId").map(String::as_str) != Some(ITEM_ID) {
            return error(400, "BAD_REQUEST", "itemId must be a UUID");
        }
        let page: usize = query.get("page").and_then(|p| p.parse().ok()).unwrap_or(1);
        let investments = investments();
        ResponseTemplate::new(200).set_body_json(json!({
            "page": page, "total": investments.len(), "totalPages": investments.len(),
            "results": investments.get(page.saturating_sub(1)).map(|i| vec![i.clone()]).unwrap_or_default()
        }))
    }

    /// An investment's activity, two a page (404 for an unknown one).
    fn investment_transactions(&self, request: &Request) -> ResponseTemplate {
        let id = request.url.path().split('/').nth(2).unwrap_or_default();
        let all = match id {
            STOCK => stock_activity(),
            CDB => cdb_activity(),
            _ => return error(404, "INVESTMENT_NOT_FOUND", "investment not found"),
        };
        let page: usize = request
            .url
            .query_pairs()
            .find(|(name, _)| name == "page")
            .and_then(|(_, p)| p.parse().ok())
            .unwrap_or(1);
        let (total, pages) = (all.len(), all.len().div_ceil(PAGE));
        let results: Vec<Value> = all
            .into_iter()
            .skip((page.max(1) - 1) * PAGE)
            .take(PAGE)
            .collect();
        ResponseTemplate::new(200).set_body_json(
            json!({"page": page, "total": total, "totalPages": pages, "results": results}),
        )
    }
}

const STOCK: &str = "inv-petr4";
const CDB: &str = "inv-cdb";

fn number(text: &str) -> Value {
    serde_json::from_str(text).unwrap()
}

fn investments() -> [Value; 2] {
    [
        json!({"id": STOCK, "itemId": ITEM_ID, "name": "PETROBRAS PN", "code": "PETR4", "isin": "BRPETRACNPR6",
               "number": null, "owner": "Ada Lovelace", "currencyCode": "BRL", "type": "EQUITY", "subtype": "STOCK",
               "quantity": 100, "value": number("38.12"), "amount": number("3812.00"), "balance": number("3812.00"),
               "amountProfit": number("1412.00"), "amountWithdrawal": number("3812.00"), "amountOriginal": number("2400.00"),
               "date": day(0), "status": "ACTIVE", "institution": {"name": "XP INVESTIMENTOS CCTVM S/A", "number": "02332886000104"}}),
        json!({"id": CDB, "itemId": ITEM_ID, "name": "CDB BANCO INTER 110% CDI", "code": null, "isin": "BRBIDICDB0Z1",
               "number": "001234567", "owner": "Ada Lovelace", "currencyCode": "BRL", "type": "FIXED_INCOME", "subtype": "CDB",
               "quantity": null, "value": null, "amount": number("10534.12"), "balance": number("10412.66"),
               "amountWithdrawal": number("10412.66"), "amountOriginal": number("10000.00"), "taxes": number("121.46"),
               "rate": 110, "rateType": "CDI", "issuer": "Banco Inter", "dueDate": "2028-03-01T00:00:00.000Z",
               "date": day(0), "status": "ACTIVE"}),
    ]
}

/// A buy (with a brokerage fee: its net amount is what was paid), a sale
/// and the tax on it (no `movementType`: a tax's default, money out of the
/// position).
fn stock_activity() -> Vec<Value> {
    vec![
        json!({"id": "it-1", "type": "BUY", "movementType": "CREDIT", "quantity": 150, "value": number("24.00"),
               "amount": number("3600.00"), "netAmount": number("3604.90"), "date": day(90), "tradeDate": day(88),
               "description": "COMPRA PETR4", "brokerageNumber": "88123",
               "expenses": {"brokerageFee": number("4.90"), "incomeTax": null}}),
        json!({"id": "it-2", "type": "SELL", "movementType": "DEBIT", "quantity": 50, "value": number("40.00"),
               "amount": number("2000.00"), "date": day(20), "description": "VENDA PETR4", "expenses": {}}),
        json!({"id": "it-3", "type": "TAX", "quantity": null, "value": null, "amount": number("30.00"),
               "date": day(19), "description": "IRRF"}),
    ]
}

/// The money put in, and principal paid back early.
fn cdb_activity() -> Vec<Value> {
    vec![
        json!({"id": "it-4", "type": "BUY", "movementType": "CREDIT", "quantity": null, "value": null,
               "amount": number("10000.00"), "date": day(200)}),
        json!({"id": "it-5", "type": "AMORTIZATION", "movementType": "DEBIT", "amount": number("250.00"),
               "date": day(10)}),
    ]
}
