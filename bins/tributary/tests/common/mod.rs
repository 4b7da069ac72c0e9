//! What the tests of `tributary worker` processes share: a SimpleFIN fake's
//! answer, worker processes and their log lines, SimpleFIN connections.

// Each test file uses its own share of these.
#![allow(dead_code)]

use base64::Engine as _;
use chrono::{TimeZone, Utc};
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::mpsc;
use std::time::Duration;
use tributary_auth::keyring::Keyring;
use tributary_domain::clock::{Clock, ManualClock};
use tributary_domain::ids::{ConnectionId, UserId};
use tributary_providers::simplefin::SimpleFinConnector;
use tributary_providers::sync::SyncEngine;
use tributary_providers::{ConnectRequest, Registry};
use tributary_storage::testing::TestDatabase;
use tributary_storage::{Database, users};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

pub static PAYLOAD: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    tributary_storage::testing::testdata("home-assistant-simplefin/fin_data.json")
});

pub fn accounts_ok() -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_raw(PAYLOAD.as_str(), "application/json")
}

/// A worker process, killed and reaped when dropped, so that a failed
/// assertion does not leave it running.
pub struct WorkerProcess(pub Child);

impl Drop for WorkerProcess {
    fn drop(&mut self) {
        // Already exited when the test stopped it itself: nothing to kill.
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A worker process and a channel of its log lines.
pub fn start_worker(database_url: &str, key: &str) -> (WorkerProcess, mpsc::Receiver<String>) {
    let (lines, receiver) = mpsc::channel();
    (start_worker_with(database_url, key, &[], lines), receiver)
}

/// A worker process with settings of its own, its log lines sent to
/// `lines` (several workers may share one channel).
pub fn start_worker_with(
    database_url: &str,
    key: &str,
    settings: &[(&str, &str)],
    lines: mpsc::Sender<String>,
) -> WorkerProcess {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tributary"))
        .arg("worker")
        .env("TRIBUTARY_DATABASE_URL", database_url)
        .env("TRIBUTARY_SECRET_KEY", key)
        .env("TRIBUTARY_WORKER_LEASE_SECS", "2")
        .env("TRIBUTARY_WORKER_POLL_SECS", "1")
        .env("TRIBUTARY_WORKER_CONCURRENCY", "16")
        // The SimpleFIN fake listens on loopback, which the outbound guard
        // refuses unless allowed.
        .env("TRIBUTARY_OUTBOUND_ALLOW_PRIVATE", "1")
        .env("RUST_LOG", "info")
        .envs(settings.iter().copied())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if lines.send(line).is_err() {
                break;
            }
        }
    });
    WorkerProcess(child)
}

pub fn wait_for_line(lines: &mpsc::Receiver<String>, needle: &str) -> String {
    loop {
        let line = lines
            .recv_timeout(Duration::from_secs(60))
            .unwrap_or_else(|_| panic!("no log line with `{needle}`"));
        if line.contains(needle) {
            return line;
        }
    }
}

pub struct Connected {
    pub engine: SyncEngine,
    pub user: UserId,
    pub connection: ConnectionId,
}

/// A user with a SimpleFIN connection to `server`, sealed with `key`.
pub fn connect(
    rt: &tokio::runtime::Handle,
    server: &MockServer,
    db: &Database,
    key: &str,
    token_path: &str,
) -> Connected {
    let clock = Arc::new(ManualClock::new(
        Utc.with_ymd_and_hms(2024, 1, 20, 12, 0, 0).unwrap(),
    ));
    let mut registry = Registry::default();
    registry.register(Arc::new(
        SimpleFinConnector::new(
            Duration::from_secs(5),
            &tributary_outbound::Guard::new(tributary_outbound::PrivateAllowance::All),
        )
        .unwrap(),
    ));
    let engine = SyncEngine::new(db.clone(), registry, clock.clone())
        .with_sealer(Arc::new(Keyring::new(key, &[]).unwrap()));
    let user = users::create_personal_user(
        &mut db.conn().unwrap(),
        "crash@example.com",
        clock.now().naive_utc(),
    )
    .unwrap()
    .id;
    let connection = connect_another(rt, server, &engine, user, token_path);
    Connected {
        engine,
        user,
        connection,
    }
}

/// Another SimpleFIN connection of `user` to `server`, claimed at
/// `token_path`.
pub fn connect_another(
    rt: &tokio::runtime::Handle,
    server: &MockServer,
    engine: &SyncEngine,
    user: UserId,
    token_path: &str,
) -> ConnectionId {
    let access_url = format!("http://u:p@{}/simplefin", server.address());
    rt.block_on(
        Mock::given(method("POST"))
            .and(path(token_path))
            .respond_with(ResponseTemplate::new(200).set_body_string(access_url))
            .mount(server),
    );
    let token =
        base64::engine::general_purpose::STANDARD.encode(format!("{}{token_path}", server.uri()));
    let request = ConnectRequest {
        settings: serde_json::json!({}),
        secret: Some(token),
    };
    engine
        .connect(user, tributary_providers::simplefin::PROVIDER, &request)
        .unwrap()
        .id
}

/// `scenario` on every backend, off the test's runtime (it blocks on the
/// fake through `rt`).
pub async fn on_every_database(scenario: fn(&tokio::runtime::Handle, &TestDatabase)) {
    let rt = tokio::runtime::Handle::current();
    tokio::task::spawn_blocking(move || {
        for database in TestDatabase::all() {
            eprintln!("-- on {:?}", database.backend());
            scenario(&rt, &database);
        }
    })
    .await
    .unwrap();
}

/// A user with `count` SimpleFIN connections to `server`: the first as
/// [`connect`] makes it, and every connection's id.
pub fn connect_many(
    rt: &tokio::runtime::Handle,
    server: &MockServer,
    db: &Database,
    key: &str,
    count: usize,
) -> (Connected, Vec<ConnectionId>) {
    let first = connect(rt, server, db, key, "/claim/0");
    let mut connections = vec![first.connection];
    for n in 1..count {
        let token_path = format!("/claim/{n}");
        connections.push(connect_another(
            rt,
            server,
            &first.engine,
            first.user,
            &token_path,
        ));
    }
    (first, connections)
}
