//! A local fake of Teller's API (as teller.io/docs/api describes it), for
//! tests only, behind TLS that asks for a client certificate as Teller
//! does: a connection presenting one its test authority signed is passed
//! on to the API; one presenting none is answered 400 (Teller's "Missing
//! certificate"); one presenting another authority's is refused in the
//! handshake. Every call must carry an enrollment's access token (Basic,
//! the token as the user name; else 401). It serves a checking account
//! with a long history (two pages of 250), a savings account and a credit
//! card (Teller's signs: a purchase positive), transactions newest first
//! along `from_id`, honours `count`, and lets the test post a pending
//! transaction under a new id, disconnect the enrollment, enroll anew, and
//! switch faults on.

use crate::fakes::{Route, mount_gets};
use base64::Engine as _;
use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, ExtendedKeyUsagePurpose, IsCa,
    KeyPair,
};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tributary_providers::Connector;
use tributary_providers::teller::{TellerConfig, TellerConnect, TellerConnector};
use wiremock::{MockServer, Request, ResponseTemplate};

/// An enrollment's access token, as Teller Connect hands one over.
pub const TOKEN: &str = "token_f4k3enr0llm3nt7ok3nab";
/// The token of the enrollment made after the first was disconnected.
pub const NEW_TOKEN: &str = "token_n3wenr0llm3ntaft3rmfa";
/// Transactions of the checking account's long history.
const HISTORY: usize = 258;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    Slow,
    /// 502, an institution's failure passed on.
    BadGateway,
    /// 429 with `Retry-After`.
    RateLimited,
    /// 200 with a body that is not JSON.
    Malformed,
    /// `from_id` not honoured: the first page again.
    IgnoresFromId,
    /// 502 for any page after the first.
    LaterPageFails,
}

/// The test authority, the fake's server certificate, and client
/// identities (certificate and key, PEM).
struct Pki {
    authority_pem: String,
    server: (CertificateDer<'static>, PrivatePkcs8KeyDer<'static>),
    operator_identity: String,
    stranger_identity: String,
}

fn authority(name: &str) -> CertifiedIssuer<'static, KeyPair> {
    let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.distinguished_name.push(DnType::CommonName, name);
    CertifiedIssuer::self_signed(params, KeyPair::generate().unwrap()).unwrap()
}

/// A client identity `issuer` signed: certificate then key, PEM.
fn client_identity(issuer: &CertifiedIssuer<'static, KeyPair>, name: &str) -> String {
    let key = KeyPair::generate().unwrap();
    let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
    params.distinguished_name.push(DnType::CommonName, name);
    params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
    let certificate = params.signed_by(&key, issuer).unwrap();
    format!("{}{}", certificate.pem(), key.serialize_pem())
}

impl Pki {
    fn new() -> Self {
        let authority_ = authority("Teller fake authority");
        let server_key = KeyPair::generate().unwrap();
        let mut params =
            CertificateParams::new(vec!["127.0.0.1".to_owned(), "localhost".to_owned()]).unwrap();
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        let server = params.signed_by(&server_key, &authority_).unwrap();
        let stranger = authority("Someone else's authority");
        Pki {
            authority_pem: authority_.pem(),
            server: (
                server.der().clone(),
                PrivatePkcs8KeyDer::from(server_key.serialize_der()),
            ),
            operator_identity: client_identity(&authority_, "operator application"),
            stranger_identity: client_identity(&stranger, "someone else's application"),
        }
    }

    fn authority_der(&self) -> CertificateDer<'static> {
        let body: String = self
            .authority_pem
            .lines()
            .filter(|line| !line.starts_with("-----"))
            .collect();
        CertificateDer::from(
            base64::engine::general_purpose::STANDARD
                .decode(body)
                .unwrap(),
        )
    }
}

#[derive(Debug)]
struct State {
    tokens: Vec<String>,
    /// Transactions by account, newest first.
    transactions: HashMap<String, Vec<Value>>,
    fault: Option<Fault>,
    /// The enrollment the bank disconnected.
    disconnected: bool,
    transaction_pages: usize,
}

/// What the TLS front saw.
#[derive(Debug, Default)]
struct Handshakes {
    with_certificate: AtomicUsize,
    without_certificate: AtomicUsize,
    refused: AtomicUsize,
}

#[derive(Clone)]
pub struct TellerFake {
    /// The API in plain HTTP, behind the TLS front.
    pub server: Arc<MockServer>,
    /// The API's root over TLS: where the connector is pointed.
    pub url: String,
    pki: Arc<Pki>,
    handshakes: Arc<Handshakes>,
    state: Arc<Mutex<State>>,
}

impl std::fmt::Debug for TellerFake {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TellerFake")
            .field("url", &self.url)
            .finish()
    }
}

fn error(status: u16, code: &str, message: &str) -> ResponseTemplate {
    ResponseTemplate::new(status)
        .set_body_json(json!({"error": {"code": code, "message": message}}))
}

fn day(days_ago: i64) -> String {
    (chrono::Utc::now().date_naive() - chrono::Duration::days(days_ago)).to_string()
}

fn transaction(
    (id, account): (&str, &str),
    (amount, days_ago): (&str, i64),
    (description, counterparty): (&str, Option<&str>),
    status: &str,
) -> Value {
    json!({
        "id": id, "account_id": account, "amount": amount, "date": day(days_ago),
        "description": description, "status": status, "type": "card_payment",
        "running_balance": null,
        "details": {
            "processing_status": if status == "pending" { "pending" } else { "complete" },
            "category": "dining",
            "counterparty": {"name": counterparty, "type": counterparty.map(|_| "organization")}
        },
        "links": {"self": format!("https://api.teller.io/accounts/{account}/transactions/{id}"),
                  "account": format!("https://api.teller.io/accounts/{account}")}
    })
}

const CHECKING: &str = "acc_checking01";
const SAVINGS: &str = "acc_savings001";
const CARD: &str = "acc_card000001";

impl TellerFake {
    pub async fn start() -> Self {
        let pki = Arc::new(std::thread::spawn(Pki::new).join().unwrap());
        let mut checking = vec![
            transaction(
                ("txn_pend", CHECKING),
                ("-18.40", 0),
                ("SQ *BLUE BOTTLE COFFEE", Some("Blue Bottle Coffee")),
                "pending",
            ),
            transaction(
                ("txn_003", CHECKING),
                ("-86.46", 1),
                ("TRADER JOE'S #552", Some("Trader Joe's")),
                "posted",
            ),
            transaction(
                ("txn_002", CHECKING),
                ("2450.00", 3),
                ("ACME CORP PAYROLL", None),
                "posted",
            ),
            transaction(
                ("txn_001", CHECKING),
                ("-1200.00", 20),
                ("RENT MARCH", None),
                "posted",
            ),
        ];
        // A long history, so that a first sync reads two pages.
        checking.extend((0..HISTORY).map(|n| {
            transaction(
                (&format!("txn_h{n:04}"), CHECKING),
                ("-3.50", 30 + i64::try_from(n).unwrap()),
                ("METRO TRANSIT", Some("Metro")),
                "posted",
            )
        }));
        let card = vec![
            transaction(
                ("txn_c002", CARD),
                ("-200.00", 2),
                ("PAYMENT THANK YOU", None),
                "posted",
            ),
            transaction(
                ("txn_c001", CARD),
                ("45.00", 4),
                ("AMAZON.COM", Some("Amazon")),
                "posted",
            ),
        ];
        let savings = vec![transaction(
            ("txn_s001", SAVINGS),
            ("0.42", 10),
            ("INTEREST", None),
            "posted",
        )];
        let server = Arc::new(MockServer::start().await);
        let handshakes = Arc::new(Handshakes::default());
        let url = tls_front(&pki, *server.address(), handshakes.clone());
        let fake = Self {
            server,
            url,
            pki,
            handshakes,
            state: Arc::new(Mutex::new(State {
                tokens: vec![TOKEN.to_owned()],
                transactions: HashMap::from([
                    (CHECKING.to_owned(), checking),
                    (SAVINGS.to_owned(), savings),
                    (CARD.to_owned(), card),
                ]),
                fault: None,
                disconnected: false,
                transaction_pages: 0,
            })),
        };
        fake.mount().await;
        fake
    }

    /// The test authority (PEM), for a client to trust the fake's server.
    pub fn authority_pem(&self) -> &str {
        &self.pki.authority_pem
    }

    /// The operator's application certificate and key (PEM).
    pub fn operator_identity(&self) -> &str {
        &self.pki.operator_identity
    }

    /// The real connector pointed at the fake, with `identity`.
    pub fn connector_with(&self, identity: &str, timeout: Duration) -> Arc<dyn Connector> {
        self.connector_offering(identity, timeout, None)
    }

    /// The real connector with the operator's certificate, offering
    /// Teller Connect as `connect` says (its script a fake's).
    pub fn connector_offering(
        &self,
        identity: &str,
        timeout: Duration,
        connect: Option<TellerConnect>,
    ) -> Arc<dyn Connector> {
        self.connector_configured(identity, timeout, (connect, Vec::new()))
    }

    /// The real connector with the operator's certificate, taking Teller's
    /// webhooks signed with `secrets`.
    pub fn connector_taking_webhooks(&self, secrets: &[&str]) -> Arc<dyn Connector> {
        let secrets = secrets.iter().map(|s| (*s).to_owned()).collect();
        self.connector_configured(
            &self.pki.operator_identity,
            Duration::from_secs(10),
            (None, secrets),
        )
    }

    fn connector_configured(
        &self,
        identity: &str,
        timeout: Duration,
        (connect, webhook_secrets): (Option<TellerConnect>, Vec<String>),
    ) -> Arc<dyn Connector> {
        let config = TellerConfig {
            base_url: self.url.clone(),
            identity_pem: identity.as_bytes().to_vec(),
            extra_roots_pem: Some(self.pki.authority_pem.as_bytes().to_vec()),
            timeout,
            connect,
            webhook_secrets,
        };
        std::thread::spawn(move || {
            Arc::new(TellerConnector::new(config).unwrap()) as Arc<dyn Connector>
        })
        .join()
        .unwrap()
    }

    /// The real connector with the operator's certificate.
    pub fn connector(&self, timeout: Duration) -> Arc<dyn Connector> {
        self.connector_with(&self.pki.operator_identity, timeout)
    }

    /// The connector of someone whose certificate another authority signed.
    pub fn strangers_connector(&self) -> Arc<dyn Connector> {
        self.connector_with(&self.pki.stranger_identity, Duration::from_secs(10))
    }

    /// TLS connections by whether they presented the operator's
    /// certificate, none, or another authority's (refused).
    pub fn handshakes(&self) -> (usize, usize, usize) {
        (
            self.handshakes.with_certificate.load(Ordering::SeqCst),
            self.handshakes.without_certificate.load(Ordering::SeqCst),
            self.handshakes.refused.load(Ordering::SeqCst),
        )
    }

    pub fn set_fault(&self, fault: Option<Fault>) {
        self.state.lock().unwrap().fault = fault;
    }

    pub fn transaction_pages(&self) -> usize {
        self.state.lock().unwrap().transaction_pages
    }

    /// The coffee posts under an id of its own, at its amount.
    pub fn post_the_pending(&self) {
        let mut state = self.state.lock().unwrap();
        let checking = state.transactions.get_mut(CHECKING).unwrap();
        checking.remove(0);
        checking.insert(
            0,
            transaction(
                ("txn_004", CHECKING),
                ("-18.40", 0),
                ("SQ *BLUE BOTTLE COFFEE", Some("Blue Bottle Coffee")),
                "posted",
            ),
        );
    }

    /// The bank asks for a new MFA: the enrollment is disconnected.
    pub fn disconnect(&self) {
        self.state.lock().unwrap().disconnected = true;
    }

    /// The person enrolls again: a new enrollment, a new token.
    pub fn enroll_again(&self) {
        let mut state = self.state.lock().unwrap();
        state.disconnected = false;
        state.tokens = vec![NEW_TOKEN.to_owned()];
    }

    async fn mount(&self) {
        let routes: Vec<(&str, Box<Route<Self>>)> = vec![
            (
                "^/accounts$",
                Box::new(|f, r| f.as_owner(r, Self::accounts)),
            ),
            (
                "^/accounts/[^/]+/balances$",
                Box::new(|f, r| f.as_owner(r, Self::balances)),
            ),
            (
                "^/accounts/[^/]+/transactions$",
                Box::new(|f, r| f.as_owner(r, Self::transactions)),
            ),
        ];
        mount_gets(&self.server, self, routes).await;
    }

    fn as_owner(
        &self,
        request: &Request,
        answer: fn(&Self, &Request) -> ResponseTemplate,
    ) -> ResponseTemplate {
        let token = request
            .headers
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Basic "))
            .and_then(|b| base64::engine::general_purpose::STANDARD.decode(b).ok())
            .and_then(|b| String::from_utf8(b).ok())
            .and_then(|pair| pair.strip_suffix(':').map(str::to_owned));
        let fault = {
            let state = self.state.lock().unwrap();
            if !token.is_some_and(|t| state.tokens.contains(&t)) {
                return error(401, "unauthorized", "Missing or invalid access token.");
            }
            if state.disconnected {
                return error(
                    404,
                    "enrollment.disconnected.user_action.mfa_required",
                    "Enrollment is not healthy",
                );
            }
            state.fault
        };
        match fault {
            Some(Fault::Slow) => answer(self, request).set_delay(Duration::from_secs(5)),
            Some(Fault::BadGateway) => error(
                502,
                "bad_gateway",
                "A 500 level response was received when making a request to a financial institution.",
            ),
            Some(Fault::RateLimited) => error(429, "too_many_requests", "Too many requests.")
                .insert_header("retry-after", "90"),
            Some(Fault::Malformed) => {
                ResponseTemplate::new(200).set_body_raw("[{\"id\": ", "application/json")
            }
            Some(Fault::LaterPageFails)
                if request.url.query().is_some_and(|q| q.contains("from_id")) =>
            {
                error(502, "bad_gateway", "The institution timed out.")
            }
            Some(Fault::IgnoresFromId | Fault::LaterPageFails) | None => answer(self, request),
        }
    }

    fn accounts(&self, _: &Request) -> ResponseTemplate {
        let account = |id: &str, name: &str, (kind, subtype): (&str, &str), last_four: &str| {
            json!({
                "id": id, "enrollment_id": "enr_f4k3", "name": name, "type": kind, "subtype": subtype,
                "currency": "USD", "last_four": last_four, "status": "open",
                "institution": {"id": "chase", "name": "Chase"},
                "links": {
                    "self": format!("https://api.teller.io/accounts/{id}"),
                    "details": format!("https://api.teller.io/accounts/{id}/details"),
                    "balances": format!("https://api.teller.io/accounts/{id}/balances"),
                    "transactions": format!("https://api.teller.io/accounts/{id}/transactions")
                }
            })
        };
        let mut closed = account(
            "acc_closed0001",
            "Old Checking",
            ("depository", "checking"),
            "0002",
        );
        closed["status"] = json!("closed");
        ResponseTemplate::new(200).set_body_json(json!([
            account(
                CHECKING,
                "Total Checking",
                ("depository", "checking"),
                "1234"
            ),
            account(
                SAVINGS,
                "Premier Savings",
                ("depository", "savings"),
                "5678"
            ),
            account(
                CARD,
                "Sapphire Preferred",
                ("credit", "credit_card"),
                "9012"
            ),
            closed,
        ]))
    }

    fn balances(&self, request: &Request) -> ResponseTemplate {
        let account = request.url.path().split('/').nth(2).unwrap_or_default();
        let (ledger, available) = match account {
            CHECKING => ("3104.62", "3086.22"),
            SAVINGS => ("10000.42", "10000.42"),
            CARD => ("1234.56", "3765.44"),
            _ => return error(410, "gone", "The account is closed."),
        };
        ResponseTemplate::new(200).set_body_json(json!({
            "account_id": account, "ledger": ledger, "available": available,
            "links": {"self": "…", "account": "…"}
        }))
    }

    /// The account's transactions newest first: `count` of them after
    /// `from_id`.
    fn transactions(&self, request: &Request) -> ResponseTemplate {
        let account = request.url.path().split('/').nth(2).unwrap_or_default();
        let query: HashMap<String, String> = request.url.query_pairs().into_owned().collect();
        let count: usize = query
            .get("count")
            .and_then(|c| c.parse().ok())
            .unwrap_or(usize::MAX);
        let mut state = self.state.lock().unwrap();
        state.transaction_pages += 1;
        let Some(all) = state.transactions.get(account) else {
            return error(410, "gone", "The account is closed.");
        };
        let from_id = query
            .get("from_id")
            .filter(|_| state.fault != Some(Fault::IgnoresFromId));
        let start = match from_id {
            Some(from) => match all.iter().position(|t| t["id"] == json!(from)) {
                Some(at) => at + 1,
                None => return error(404, "not_found", "No such transaction."),
            },
            None => 0,
        };
        let page: Vec<&Value> = all.iter().skip(start).take(count).collect();
        ResponseTemplate::new(200).set_body_json(json!(page))
    }
}

/// Listens on loopback with TLS: a connection presenting a certificate the
/// authority signed is passed on to `api`; one presenting none is answered
/// 400, as Teller answers; another authority's fails the handshake. The
/// API's root (`https://127.0.0.1:<port>`).
fn tls_front(pki: &Pki, api: std::net::SocketAddr, seen: Arc<Handshakes>) -> String {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut roots = rustls::RootCertStore::empty();
    roots.add(pki.authority_der()).unwrap();
    let verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(
        Arc::new(roots),
        provider.clone(),
    )
    .allow_unauthenticated()
    .build()
    .unwrap();
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_client_cert_verifier(verifier)
        .with_single_cert(
            vec![pki.server.0.clone()],
            PrivateKeyDer::Pkcs8(pki.server.1.clone_key()),
        )
        .unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let url = format!("https://{}", listener.local_addr().unwrap());
    // A runtime of its own, as the API's server has: a test that blocks
    // its own runtime (running the CLI, say) still reaches Teller.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    std::thread::spawn(move || {
        runtime.block_on(async move {
        let listener = tokio::net::TcpListener::from_std(listener).unwrap();
        while let Ok((tcp, _)) = listener.accept().await {
            let (acceptor, seen) = (acceptor.clone(), seen.clone());
            tokio::spawn(async move {
                let Ok(mut tls) = acceptor.accept(tcp).await else {
                    seen.refused.fetch_add(1, Ordering::SeqCst);
                    return;
                };
                let presented = tls
                    .get_ref()
                    .1
                    .peer_certificates()
                    .is_some_and(|certs| !certs.is_empty());
                if !presented {
                    seen.without_certificate.fetch_add(1, Ordering::SeqCst);
                    // The request is read before it is answered, as a
                    // server does (its head is enough: a GET has no body).
                    let mut head = Vec::new();
                    let mut chunk = [0_u8; 1024];
                    while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < 65_536 {
                        match tokio::io::AsyncReadExt::read(&mut tls, &mut chunk).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => head.extend_from_slice(&chunk[..n]),
                        }
                    }
                    let body = r#"{"error":{"code":"bad_request","message":"Missing certificate: Retry request using your Teller client certificate."}}"#;
                    let answer = format!(
                        "HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                        body.len()
                    );
                    let _ = tokio::io::AsyncWriteExt::write_all(&mut tls, answer.as_bytes()).await;
                    let _ = tokio::io::AsyncWriteExt::shutdown(&mut tls).await;
                    return;
                }
                seen.with_certificate.fetch_add(1, Ordering::SeqCst);
                if let Ok(mut upstream) = tokio::net::TcpStream::connect(api).await {
                    let _ = tokio::io::copy_bidirectional(&mut tls, &mut upstream).await;
                }
            });
        }
    })
    });
    url
}
