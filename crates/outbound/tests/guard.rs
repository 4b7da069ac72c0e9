//! The guard against real sockets on loopback: a trap listener proves that
//! nothing refused was ever connected to, whether the address was spelled
//! in the URL, came from a name, or from a redirect.

use std::io::{ErrorKind, Read, Write};
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpListener};
use std::sync::Arc;
use std::time::Duration;
use tributary_outbound::lookup::{Lookup, LookupFuture};
use tributary_outbound::{Guard, PrivateAllowance, Redirects, Refusal, refusal_in};
use url::Url;

/// A listener that must never see a connection.
struct Trap(TcpListener);

impl Trap {
    fn on(ip: IpAddr) -> Self {
        let listener = TcpListener::bind((ip, 0)).expect("bind the trap");
        listener.set_nonblocking(true).expect("nonblocking");
        Trap(listener)
    }
    fn port(&self) -> u16 {
        self.0.local_addr().expect("addr").port()
    }
    fn assert_untouched(&self) {
        match self.0.accept() {
            Err(err) if err.kind() == ErrorKind::WouldBlock => {}
            Ok((_, from)) => panic!("the trap was connected to from {from}"),
            Err(err) => panic!("the trap failed: {err}"),
        }
    }
}

/// A server on 127.0.0.2 that answers every request with `answer`.
fn server(answer: String) -> SocketAddr {
    let listener = TcpListener::bind((Ipv4Addr::new(127, 0, 0, 2), 0)).expect("bind");
    let addr = listener.local_addr().expect("addr");
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let mut seen = Vec::new();
            let mut buf = [0u8; 1024];
            while !seen.windows(4).any(|w| w == b"\r\n\r\n") {
                match stream.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => seen.extend_from_slice(&buf[..n]),
                }
            }
            let _ = stream.write_all(answer.as_bytes());
        }
    });
    addr
}

fn redirect_to(location: &str) -> String {
    format!(
        "HTTP/1.1 302 Found\r\nLocation: {location}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    )
}

const OK: &str = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok";

/// The fake servers' address allowed, nothing else private.
fn guard() -> Guard {
    Guard::new(PrivateAllowance::Only(vec![IpAddr::V4(Ipv4Addr::new(
        127, 0, 0, 2,
    ))]))
}

fn client(guard: &Guard) -> tributary_outbound::GuardedClient {
    guard
        .blocking_client(
            reqwest::blocking::Client::builder().timeout(Duration::from_secs(10)),
            Redirects::FollowedWhenAllowed,
        )
        .expect("client")
}

/// Names resolved from a table, like a DNS server that says what a test
/// wants it to.
#[derive(Debug)]
struct Table(Vec<(&'static str, IpAddr)>);

impl Lookup for Table {
    fn lookup(&self, host: &str, port: u16) -> LookupFuture {
        let found: Vec<SocketAddr> = self
            .0
            .iter()
            .filter(|(name, _)| *name == host)
            .map(|(_, ip)| SocketAddr::new(*ip, port))
            .collect();
        Box::pin(std::future::ready(Ok(found)))
    }
}

#[derive(Debug)]
struct NeverAnswers;

impl Lookup for NeverAnswers {
    fn lookup(&self, _: &str, _: u16) -> LookupFuture {
        Box::pin(std::future::pending())
    }
}

#[test]
fn refused_addresses_are_never_connected_to() {
    let trap = Trap::on(IpAddr::V4(Ipv4Addr::LOCALHOST));
    let port = trap.port();
    let client = client(&guard());
    for url in [
        format!("http://127.0.0.1:{port}/claim"),
        format!("http://[::ffff:127.0.0.1]:{port}/claim"),
        // `localhost` is a name: refused when it resolves, not by spelling.
        format!("http://localhost:{port}/claim"),
        format!("http://user:secret@localhost:{port}/accounts"),
    ] {
        let url = Url::parse(&url).expect("url");
        let refusal = match client.post(url.clone()) {
            Err(refusal) => refusal,
            Ok(request) => {
                let err = request.send().expect_err(url.as_str());
                refusal_in(&err).unwrap_or_else(|| panic!("{url}: not refused but {err}"))
            }
        };
        assert!(matches!(refusal, Refusal::Private(_)), "{url}: {refusal}");
        assert!(
            refusal
                .to_string()
                .contains("TRIBUTARY_OUTBOUND_ALLOW_PRIVATE")
        );
    }
    trap.assert_untouched();
}

#[test]
fn every_redirect_hop_is_checked() {
    let trap = Trap::on(IpAddr::V4(Ipv4Addr::LOCALHOST));
    let port = trap.port();
    let client = client(&guard());
    for location in [
        format!("http://127.0.0.1:{port}/internal"),
        format!("http://localhost:{port}/internal"),
        format!("ftp://127.0.0.1:{port}/"),
    ] {
        let first = server(redirect_to(&location));
        let url = Url::parse(&format!("http://{first}/claim")).expect("url");
        let err = client
            .post(url)
            .expect("the first hop is allowed")
            .send()
            .expect_err("the redirect is refused");
        assert!(refusal_in(&err).is_some(), "{location}: {err}");
    }
    trap.assert_untouched();
    // An allowed hop is followed.
    let last = server(OK.to_owned());
    let first = server(redirect_to(&format!("http://{last}/next")));
    let answer = client
        .get(Url::parse(&format!("http://{first}/")).expect("url"))
        .expect("allowed")
        .send()
        .expect("followed");
    assert_eq!(answer.text().expect("body"), "ok");
}

#[test]
fn a_name_is_connected_to_at_the_address_that_was_checked() {
    let fake = server(OK.to_owned());
    let trap = Trap::on(IpAddr::V4(Ipv4Addr::LOCALHOST));
    let guard = guard().with_lookup(Arc::new(Table(vec![
        ("bank.test", fake.ip()),
        (
            "rebinding.test",
            IpAddr::V4(Ipv4Addr::new(93, 184, 216, 34)),
        ),
        ("rebinding.test", IpAddr::V4(Ipv4Addr::LOCALHOST)),
    ])));
    let client = client(&guard);
    let answer = client
        .get(Url::parse(&format!("http://bank.test:{}/", fake.port())).expect("url"))
        .expect("allowed")
        .send()
        .expect("the checked address answers");
    assert_eq!(answer.text().expect("body"), "ok");
    // One private address among public ones refuses the name.
    let err = client
        .get(Url::parse(&format!("http://rebinding.test:{}/", trap.port())).expect("url"))
        .expect("a name is checked when resolved")
        .send()
        .expect_err("refused");
    assert!(
        matches!(refusal_in(&err), Some(Refusal::Private(_))),
        "{err}"
    );
    trap.assert_untouched();
}

#[test]
fn a_resolver_that_never_answers_is_given_up_on() {
    let guard = Guard::new(PrivateAllowance::None)
        .with_lookup(Arc::new(NeverAnswers))
        .with_resolve_timeout(Duration::from_millis(200));
    let url = Url::parse("https://never.test/hook").expect("url");
    assert_eq!(
        guard.resolve_blocking(&url),
        Err(Refusal::Unresolvable("never.test".into()))
    );
}

#[test]
fn the_operator_switch_reads_all_none_or_addresses() {
    assert_eq!(PrivateAllowance::parse("1"), Ok(PrivateAllowance::All));
    assert_eq!(PrivateAllowance::parse(" off "), Ok(PrivateAllowance::None));
    assert_eq!(
        PrivateAllowance::parse("192.168.1.20, ::1"),
        Ok(PrivateAllowance::Only(vec![
            "192.168.1.20".parse().expect("ip"),
            "::1".parse().expect("ip")
        ]))
    );
    assert!(
        PrivateAllowance::parse("192.168.1.0/24")
            .expect_err("not an address")
            .contains("192.168.1.0/24")
    );
    let lan = Guard::new(PrivateAllowance::parse("192.168.1.20").expect("parse"));
    assert!(
        lan.check_url(&Url::parse("http://192.168.1.20:8443/").expect("url"))
            .is_ok()
    );
    assert!(
        lan.check_url(&Url::parse("http://192.168.1.21/").expect("url"))
            .is_err()
    );
    assert_eq!(
        lan.check_url(&Url::parse("file:///etc/passwd").expect("url")),
        Err(Refusal::Scheme)
    );
}
