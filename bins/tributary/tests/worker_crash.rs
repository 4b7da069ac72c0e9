//! A `tributary worker` process killed with SIGKILL in the middle of a sync
//! (its provider stalls): a second worker takes the job over once the lease
//! expires, and the stored data equals that of a clean sync. And one
//! stopped with SIGTERM while it runs 16 syncs at once: it finishes them
//! all, each once, and exits. On SQLite and PostgreSQL. The tests follow
//! the workers' log lines; they never sleep.

// Test code: a failed unwrap is a failed test, with its message.
#![allow(clippy::unwrap_used)]

use base64::Engine as _;
use chrono::{TimeZone, Utc};
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::mpsc;
use std::time::Duration;
use tributary_auth::keyring::{Keyring, generate_key};
use tributary_domain::access::Viewer;
use tributary_domain::clock::{Clock, ManualClock};
use tributary_domain::ids::{ConnectionId, UserId};
use tributary_domain::model::SyncJobKind;
use tributary_providers::simplefin::SimpleFinConnector;
use tributary_providers::sync::{SyncEngine, SyncOutcome};
use tributary_providers::{ConnectRequest, Registry};
use tributary_storage::read::{self, TransactionFilter};
use tributary_storage::testing::TestDatabase;
use tributary_storage::{Database, sync_jobs, users};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

static PAYLOAD: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    tributary_storage::testing::testdata("home-assistant-simplefin/fin_data.json")
});

fn accounts_ok() -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_raw(PAYLOAD.as_str(), "application/json")
}

/// A worker process, killed and reaped when dropped, so that a failed
/// assertion does not leave it running.
struct WorkerProcess(Child);

impl Drop for WorkerProcess {
    fn drop(&mut self) {
        // Already exited when the test stopped it itself: nothing to kill.
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A worker process and a channel of its log lines.
fn start_worker(database_url: &str, key: &str) -> (WorkerProcess, mpsc::Receiver<String>) {
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
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let (lines, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if lines.send(line).is_err() {
                break;
            }
        }
    });
    (WorkerProcess(child), receiver)
}

fn wait_for_line(lines: &mpsc::Receiver<String>, needle: &str) -> String {
    loop {
        let line = lines
            .recv_timeout(Duration::from_secs(60))
            .unwrap_or_else(|_| panic!("no log line with `{needle}`"));
        if line.contains(needle) {
            return line;
        }
    }
}

/// Everything stored for the user, without Tributary's own ids.
fn contents(db: &Database, user: UserId) -> Vec<String> {
    let conn = &mut *db.conn().unwrap();
    let mut out = Vec::new();
    for account in read::list_accounts(conn, &Viewer::whole_user(user)).unwrap() {
        out.push(format!(
            "account {} {} {}",
            account.name, account.kind, account.currency
        ));
        let all = TransactionFilter {
            include_pending: true,
            ..Default::default()
        };
        for t in read::list_transactions(conn, account.id, &all, None, None).unwrap() {
            out.push(format!(
                "  {} {} {} {}",
                t.provider_transaction_id, t.date, t.amount, t.is_pending
            ));
        }
        for b in read::balance_history(conn, account.id).unwrap() {
            out.push(format!(
                "  balance {} {:?} {}",
                b.amount, b.available, b.as_of
            ));
        }
        for h in read::list_holdings(conn, account.id).unwrap() {
            out.push(format!(
                "  holding {} {} {}",
                h.security.name, h.quantity, h.value
            ));
        }
    }
    out
}

struct Connected {
    engine: SyncEngine,
    user: UserId,
    connection: ConnectionId,
}

/// A user with a SimpleFIN connection to `server`, sealed with `key`.
fn connect(
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
fn connect_another(
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

#[tokio::test(flavor = "multi_thread")]
async fn a_killed_worker_s_job_is_taken_over_after_its_lease() {
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

fn scenario(rt: &tokio::runtime::Handle, database: &TestDatabase) {
    let db = database.db();
    let key = generate_key();
    let server = rt.block_on(MockServer::start());
    let Connected {
        engine,
        user,
        connection,
    } = connect(rt, &server, db, &key, "/claim/A");
    let job = engine
        .request_sync(connection, SyncJobKind::OnDemand)
        .unwrap()
        .job_id;

    // The provider stalls; the first worker claims the job and hangs in it.
    rt.block_on(
        Mock::given(method("GET"))
            .and(path("/simplefin/accounts"))
            .respond_with(accounts_ok().set_delay(Duration::from_secs(300)))
            .mount(&server),
    );
    let (mut first, first_log) = start_worker(&database.url(), &key);
    wait_for_line(&first_log, &format!("claimed job {job} "));
    first.0.kill().unwrap(); // SIGKILL
    first.0.wait().unwrap();
    let held = sync_jobs::get_job(&mut db.conn().unwrap(), job).unwrap();
    assert_eq!(
        (held.status.as_str(), held.attempts),
        ("running", 1),
        "the dead worker still holds the job"
    );
    assert!(contents(db, user).is_empty(), "nothing was stored");

    // The provider answers again; a second worker takes the job over once
    // the lease has expired, and syncs it.
    rt.block_on(server.reset());
    rt.block_on(
        Mock::given(method("GET"))
            .and(path("/simplefin/accounts"))
            .respond_with(accounts_ok())
            .mount(&server),
    );
    let (mut second, second_log) = start_worker(&database.url(), &key);
    let claimed = wait_for_line(&second_log, &format!("claimed job {job} "));
    assert!(claimed.contains("attempt 2"), "{claimed}");
    wait_for_line(
        &second_log,
        &format!("job {job} synced connection {connection}"),
    );
    Command::new("kill")
        .arg("-TERM")
        .arg(second.0.id().to_string())
        .status()
        .unwrap();
    assert!(
        second.0.wait().unwrap().success(),
        "the worker stops cleanly on SIGTERM"
    );
    let done = sync_jobs::get_job(&mut db.conn().unwrap(), job).unwrap();
    assert_eq!((done.status.as_str(), done.attempts), ("succeeded", 2));

    // The same as a clean sync of the same data into an empty database.
    let clean = TestDatabase::sqlite();
    let reference = connect(rt, &server, clean.db(), &key, "/claim/B");
    let outcome = reference
        .engine
        .sync_now(reference.connection, SyncJobKind::OnDemand, "reference")
        .unwrap();
    assert!(matches!(outcome, SyncOutcome::Synced { .. }));
    let (ours, theirs) = (contents(db, user), contents(clean.db(), reference.user));
    assert!(!ours.is_empty());
    // Balance times come from the payload, so even those agree.
    assert_eq!(ours, theirs);
    drop(engine);
    drop(reference);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_worker_stopped_during_sixteen_syncs_finishes_each_once() {
    let rt = tokio::runtime::Handle::current();
    tokio::task::spawn_blocking(move || {
        for database in TestDatabase::all() {
            eprintln!("-- on {:?}", database.backend());
            stopped_during_syncs(&rt, &database);
        }
    })
    .await
    .unwrap();
}

fn stopped_during_syncs(rt: &tokio::runtime::Handle, database: &TestDatabase) {
    const SYNCS: usize = 16;
    let db = database.db();
    let key = generate_key();
    let server = rt.block_on(MockServer::start());
    let first = connect(rt, &server, db, &key, "/claim/0");
    let mut jobs = vec![first.connection];
    for n in 1..SYNCS {
        let token_path = format!("/claim/{n}");
        jobs.push(connect_another(
            rt,
            &server,
            &first.engine,
            first.user,
            &token_path,
        ));
    }
    let jobs: Vec<_> = jobs
        .into_iter()
        .map(|connection| {
            first
                .engine
                .request_sync(connection, SyncJobKind::OnDemand)
                .unwrap()
                .job_id
        })
        .collect();
    // The provider takes its time: every lane is waiting for it when the
    // worker is told to stop.
    rt.block_on(
        Mock::given(method("GET"))
            .and(path("/simplefin/accounts"))
            .respond_with(accounts_ok().set_delay(Duration::from_secs(5)))
            .mount(&server),
    );
    let (mut worker, log) = start_worker(&database.url(), &key);
    for _ in 0..SYNCS {
        wait_for_line(&log, "claimed job ");
    }
    for job in &jobs {
        let running = sync_jobs::get_job(&mut db.conn().unwrap(), *job).unwrap();
        assert_eq!(running.status.as_str(), "running", "all {SYNCS} at once");
    }
    Command::new("kill")
        .arg("-TERM")
        .arg(worker.0.id().to_string())
        .status()
        .unwrap();
    assert!(
        worker.0.wait().unwrap().success(),
        "the worker stops cleanly on SIGTERM"
    );
    let conn = &mut *db.conn().unwrap();
    for job in &jobs {
        let done = sync_jobs::get_job(conn, *job).unwrap();
        assert_eq!(
            (done.status.as_str(), done.attempts),
            ("succeeded", 1),
            "job {job}: {:?}",
            done.error
        );
    }
    drop(first);
}
