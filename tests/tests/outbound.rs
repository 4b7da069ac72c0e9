//! Outbound requests a user can aim, against the real Personal server on
//! SQLite and PostgreSQL (docs/operations.md#outbound-requests):
//! - a SimpleFIN setup token or claim answer aimed at this machine is
//!   refused and a trap listener on loopback is never connected to (an
//!   address in the token, a name that resolves to loopback, a redirect, an
//!   access URL), and the refusal names the operator's switch;
//! - eight connects to a claim URL that never answers leave another
//!   user's reads instant, and a user's third connect at once gets a 429;
//! - webhook registrations whose names never resolve leave `/healthz`
//!   instant, and are refused once the guard gives up on them.

// Test code: a failed unwrap is a failed test, with its message.
#![allow(clippy::unwrap_used)]

use base64::Engine as _;
use reqwest::{Client, StatusCode};
use std::io::{ErrorKind, Read, Write};
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tributary_auth::dashboard;
use tributary_domain::clock::Clock;
use tributary_e2e::TestServer;
use tributary_e2e::browser::Browser;
use tributary_outbound::lookup::{Lookup, LookupFuture};
use tributary_outbound::{Guard, PrivateAllowance};
use tributary_providers::Connector;
use tributary_storage::testing::TestDatabase;
use tributary_storage::users;

/// The fakes' address: the only private one the servers here may reach.
const FAKES: Ipv4Addr = Ipv4Addr::new(127, 0, 0, 2);

/// A listener on 127.0.0.1 that must never see a connection.
struct Trap(TcpListener);

impl Trap {
    fn new() -> Self {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
        listener.set_nonblocking(true).unwrap();
        Trap(listener)
    }
    fn port(&self) -> u16 {
        self.0.local_addr().unwrap().port()
    }
    fn assert_untouched(&self) {
        match self.0.accept() {
            Err(err) if err.kind() == ErrorKind::WouldBlock => {}
            Ok((_, from)) => panic!("the trap was connected to from {from}"),
            Err(err) => panic!("the trap failed: {err}"),
        }
    }
}

/// A server on [`FAKES`] answering every request with `answer`, or (None)
/// accepting and never answering; counts the connections it took.
struct Fake {
    addr: SocketAddr,
    accepted: Arc<AtomicUsize>,
    /// The connections held open without an answer.
    held: Arc<Mutex<Vec<TcpStream>>>,
}

impl Fake {
    fn start(answer: Option<String>) -> Self {
        let listener = TcpListener::bind((FAKES, 0)).unwrap();
        let addr = listener.local_addr().unwrap();
        let accepted = Arc::new(AtomicUsize::new(0));
        let held = Arc::new(Mutex::new(Vec::new()));
        let (count, hold) = (accepted.clone(), held.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { return };
                count.fetch_add(1, Ordering::SeqCst);
                match &answer {
                    None => hold.lock().unwrap().push(stream),
                    Some(answer) => {
                        let mut seen = Vec::new();
                        let mut buf = [0u8; 2048];
                        while !seen.windows(4).any(|w| w == b"\r\n\r\n") {
                            match stream.read(&mut buf) {
                                Ok(0) | Err(_) => break,
                                Ok(n) => seen.extend_from_slice(&buf[..n]),
                            }
                        }
                        let _ = stream.write_all(answer.as_bytes());
                    }
                }
            }
        });
        Fake {
            addr,
            accepted,
            held,
        }
    }

    /// Ends every held connection (the claims then fail).
    fn release(&self) {
        for stream in self.held.lock().unwrap().drain(..) {
            let _ = stream.shutdown(std::net::Shutdown::Both);
        }
    }
}

fn answer(status: &str, headers: &str, body: &str) -> String {
    format!(
        "HTTP/1.1 {status}\r\n{headers}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
}

fn setup_token(claim_url: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(claim_url)
}

/// The SimpleFIN connector as the operator of a home lab would have it:
/// its fakes' address allowed, nothing else private.
fn simplefin() -> Arc<dyn Connector> {
    tributary_e2e::fakes::simplefin_connector(
        Duration::from_secs(60),
        PrivateAllowance::Only(vec![IpAddr::V4(FAKES)]),
    )
}

fn user(server: &TestServer, email: &str) -> tributary_domain::ids::UserId {
    let conn = &mut *server.database.db().conn().unwrap();
    match users::find_personal_user(conn, email).unwrap() {
        Some(user) => user.id,
        None => {
            users::create_personal_user(conn, email, server.clock.now().naive_utc())
                .unwrap()
                .id
        }
    }
}

/// A browser signed in to `email`'s dashboard (the user made if new).
async fn signed_in(server: &TestServer, email: &str) -> Browser {
    let user = user(server, email);
    let token = {
        let conn = &mut *server.database.db().conn().unwrap();
        dashboard::issue_login_link(conn, user, server.clock.now().naive_utc()).unwrap()
    };
    let browser = Browser::at(&server.base_url);
    let opened = browser.get(&format!("/sign-in/link/{token}")).await;
    assert_eq!(opened.location, "/", "{}", opened.body);
    browser
}

async fn connect_simplefin(browser: &Browser, token: &str) -> tributary_e2e::browser::Page {
    let form = browser.get("/connect/banks/simplefin").await;
    browser
        .submit(&form, "/connect/banks/simplefin", &[("setup_token", token)])
        .await
}

fn connections_of(server: &TestServer, email: &str) -> usize {
    let user = user(server, email);
    let conn = &mut *server.database.db().conn().unwrap();
    tributary_storage::connections::list_connections(conn, Some(user))
        .unwrap()
        .len()
}

#[actix_web::test]
async fn setup_tokens_and_claims_aimed_inside_this_network_reach_nothing() {
    for database in TestDatabase::all() {
        eprintln!("-- on {:?}", database.backend());
        let server = tributary_e2e::start_with(database, vec![simplefin()]);
        let trap = Trap::new();
        let port = trap.port();
        let browser = signed_in(&server, "alice@example.com").await;
        let before = connections_of(&server, "alice@example.com");
        let redirect = Fake::start(Some(answer(
            "307 Temporary Redirect",
            &format!("Location: http://127.0.0.1:{port}/internal\r\n"),
            "",
        )));
        let to_loopback = Fake::start(Some(answer(
            "200 OK",
            "",
            &format!("http://user:pass@127.0.0.1:{port}/internal-service/simplefin"),
        )));
        let to_localhost = Fake::start(Some(answer(
            "200 OK",
            "",
            &format!("http://user:pass@localhost:{port}/simplefin"),
        )));
        for claim_url in [
            format!("http://127.0.0.1:{port}/x"),
            format!("http://[::ffff:127.0.0.1]:{port}/x"),
            format!("http://[2002:7f00:1::1]:{port}/x"),
            // A name that resolves to loopback.
            format!("http://localhost:{port}/x"),
            // An allowed claim server that redirects inside.
            format!("http://{}/claim", redirect.addr),
            // Claims answering access URLs inside.
            format!("http://{}/claim", to_loopback.addr),
            format!("http://{}/claim", to_localhost.addr),
        ] {
            let refused = connect_simplefin(&browser, &setup_token(&claim_url)).await;
            assert_eq!(refused.status, StatusCode::BAD_REQUEST, "{claim_url}");
            refused.assert_shows("TRIBUTARY_OUTBOUND_ALLOW_PRIVATE");
            assert!(
                !refused.body.contains("internal") && !refused.body.contains("Connection refused"),
                "{claim_url}: the page says nothing of the far side: {}",
                refused.body
            );
        }
        assert_eq!(redirect.accepted.load(Ordering::SeqCst), 1);
        assert_eq!(to_loopback.accepted.load(Ordering::SeqCst), 1);
        assert_eq!(
            connections_of(&server, "alice@example.com"),
            before,
            "nothing was added"
        );
        trap.assert_untouched();

        // A closed port and a silent one read alike: the page is no port
        // scanner (an allowed address stands in for a public one).
        let closed = {
            let listener = TcpListener::bind((FAKES, 0)).unwrap();
            listener.local_addr().unwrap()
        };
        let silent = Fake::start(Some(answer(
            "500 Internal Server Error",
            "",
            "db password: x",
        )));
        let on_closed =
            connect_simplefin(&browser, &setup_token(&format!("http://{closed}/c"))).await;
        let on_silent =
            connect_simplefin(&browser, &setup_token(&format!("http://{}/c", silent.addr))).await;
        assert_eq!(on_closed.status, StatusCode::BAD_REQUEST);
        assert_eq!(on_silent.status, StatusCode::BAD_REQUEST);
        on_closed.assert_shows("The bank cannot be reached right now");
        on_silent.assert_shows("The bank cannot be reached right now");
        assert!(!on_silent.body.contains("db password"));
        server.stop().await;
    }
}

#[actix_web::test]
async fn hanging_connects_leave_other_users_reads_instant() {
    for database in TestDatabase::all() {
        eprintln!("-- on {:?}", database.backend());
        let server = tributary_e2e::start_with(database, vec![simplefin()]);
        let hanging = Fake::start(None);
        let token = setup_token(&format!("http://{}/claim", hanging.addr));
        // Eight connects from four people, two each, all waiting on a claim
        // URL that never answers.
        let mut connects = Vec::new();
        let mut browsers = Vec::new();
        for person in ["carol", "dave", "erin", "frank"] {
            let browser = Arc::new(signed_in(&server, &format!("{person}@example.com")).await);
            for _ in 0..2 {
                let (browser, token) = (browser.clone(), token.clone());
                connects.push(actix_web::rt::spawn(async move {
                    connect_simplefin(&browser, &token).await.status
                }));
            }
            browsers.push(browser);
        }
        while hanging.accepted.load(Ordering::SeqCst) < 8 {
            actix_web::rt::task::yield_now().await;
            std::thread::yield_now();
        }
        // One of them asks a third time at once: told to wait, not queued.
        let third = connect_simplefin(&browsers[0], &token).await;
        assert_eq!(third.status, StatusCode::TOO_MANY_REQUESTS);
        third.assert_shows("You are already connecting other banks");

        // Bob reads his data as if nothing were happening.
        let bob = Client::new();
        let mut fastest = Duration::MAX;
        for _ in 0..3 {
            let started = Instant::now();
            let accounts = bob
                .get(server.url("/api/v1/accounts"))
                .header("x-api-key", &server.world.bob_key)
                .send()
                .await
                .unwrap();
            assert_eq!(accounts.status(), StatusCode::OK);
            fastest = fastest.min(started.elapsed());
        }
        assert!(
            fastest < Duration::from_millis(100),
            "bob waited {fastest:?} behind eight hanging connects"
        );
        assert_eq!(hanging.accepted.load(Ordering::SeqCst), 8, "still hanging");
        hanging.release();
        for connect in connects {
            assert_eq!(connect.await.unwrap(), StatusCode::BAD_REQUEST);
        }
        server.stop().await;
    }
}

/// A resolver that never answers, counting who asked.
#[derive(Debug, Default)]
struct NeverAnswers(Arc<AtomicUsize>);

impl Lookup for NeverAnswers {
    fn lookup(&self, _: &str, _: u16) -> LookupFuture {
        self.0.fetch_add(1, Ordering::SeqCst);
        Box::pin(std::future::pending())
    }
}

#[actix_web::test]
async fn webhook_names_that_never_resolve_hold_no_thread() {
    for database in TestDatabase::all() {
        eprintln!("-- on {:?}", database.backend());
        let asked = Arc::new(AtomicUsize::new(0));
        let guard = Guard::new(PrivateAllowance::None)
            .with_lookup(Arc::new(NeverAnswers(asked.clone())))
            .with_resolve_timeout(Duration::from_secs(3));
        let server = tributary_e2e::start_assembled(
            database,
            Vec::new(),
            |_| {},
            |parts| tributary_http::server::Parts {
                outbound: Some(guard),
                ..parts
            },
        );
        let registrations: Vec<_> = (0..4)
            .map(|n| {
                let request = Client::new()
                    .post(server.url("/api/v1/webhooks"))
                    .header("x-api-key", &server.world.alice_key)
                    .json(&serde_json::json!({"url": format!("https://never-{n}.example/hook")}));
                actix_web::rt::spawn(async move { request.send().await.unwrap() })
            })
            .collect();
        while asked.load(Ordering::SeqCst) < 4 {
            actix_web::rt::task::yield_now().await;
            std::thread::yield_now();
        }
        let started = Instant::now();
        let health = Client::new()
            .get(server.url("/healthz"))
            .send()
            .await
            .unwrap();
        let waited = started.elapsed();
        assert_eq!(health.status(), StatusCode::OK);
        assert!(
            waited < Duration::from_millis(100),
            "/healthz waited {waited:?} behind lookups"
        );
        for registration in registrations {
            let refused = registration.await.unwrap();
            assert_eq!(refused.status(), StatusCode::BAD_REQUEST);
            let body: serde_json::Value = refused.json().await.unwrap();
            let message = body.to_string();
            assert!(message.contains("INVALID_WEBHOOK_URL"), "{message}");
            assert!(message.contains("does not resolve"), "{message}");
        }
        let listed = tributary_e2e::json_answer(
            Client::new()
                .get(server.url("/api/v1/webhooks"))
                .header("x-api-key", &server.world.alice_key),
        )
        .await;
        assert_eq!(listed["total"], 0, "{listed}");
        server.stop().await;
    }
}
