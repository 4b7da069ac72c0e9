//! A `tributary worker` process killed with SIGKILL in the middle of a sync
//! (its provider stalls): a second worker takes the job over once the lease
//! expires, and the stored data equals that of a clean sync. And one
//! stopped with SIGTERM while it runs 16 syncs at once: it finishes them
//! all, each once, and exits. On SQLite and PostgreSQL. The tests follow
//! the workers' log lines; they never sleep.

// Test code: a failed unwrap is a failed test, with its message.
#![allow(clippy::unwrap_used)]

mod common;

use common::{
    Connected, accounts_ok, connect, connect_many, on_every_database, start_worker, wait_for_line,
};
use std::process::Command;
use std::time::Duration;
use tributary_auth::keyring::generate_key;
use tributary_domain::access::Viewer;
use tributary_domain::ids::UserId;
use tributary_domain::model::SyncJobKind;
use tributary_providers::sync::SyncOutcome;
use tributary_storage::read::{self, TransactionFilter};
use tributary_storage::testing::TestDatabase;
use tributary_storage::{Database, sync_jobs};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer};

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

#[tokio::test(flavor = "multi_thread")]
async fn a_killed_worker_s_job_is_taken_over_after_its_lease() {
    on_every_database(scenario).await;
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
    on_every_database(stopped_during_syncs).await;
}

fn stopped_during_syncs(rt: &tokio::runtime::Handle, database: &TestDatabase) {
    const SYNCS: usize = 16;
    let db = database.db();
    let key = generate_key();
    let server = rt.block_on(MockServer::start());
    let (first, jobs) = connect_many(rt, &server, db, &key, SYNCS);
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
