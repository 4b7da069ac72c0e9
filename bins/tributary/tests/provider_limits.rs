//! Three `tributary worker` processes, 16 lanes each, against one SimpleFIN
//! fake under `TRIBUTARY_PROVIDER_LIMITS`: the fake, which notes when each
//! request arrives and answers after a set delay, never sees more syncs at
//! once or in one period than the limits allow, and every sync still runs,
//! once. On SQLite and PostgreSQL. The test follows the workers' log lines.

// Test code: a failed unwrap is a failed test, with its message.
#![allow(clippy::unwrap_used)]

mod common;

use common::{accounts_ok, connect_many, on_every_database, start_worker_with, wait_for_line};
use std::process::Command;
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};
use tributary_auth::keyring::generate_key;
use tributary_domain::model::SyncJobKind;
use tributary_storage::sync_jobs;
use tributary_storage::testing::TestDatabase;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

const SYNCS: usize = 12;
const WORKERS: usize = 3;
/// At most 2 at once, 5 in any 3 seconds.
const LIMITS: &str = "simplefin=concurrent:2,rate:5/3s";
const AT_ONCE: usize = 2;
const PER_PERIOD: usize = 5;
const PERIOD: Duration = Duration::from_secs(3);
/// How long the fake takes to answer.
const DELAY: Duration = Duration::from_millis(300);

/// The fake's accounts endpoint: notes when each request arrived.
#[derive(Clone, Default)]
struct Arrivals(Arc<Mutex<Vec<Instant>>>);

impl Respond for Arrivals {
    fn respond(&self, _: &Request) -> ResponseTemplate {
        self.0.lock().unwrap().push(Instant::now());
        accounts_ok().set_delay(DELAY)
    }
}

/// The most arrivals in any window of `width` starting at an arrival.
fn most_within(arrivals: &[Instant], width: Duration) -> usize {
    arrivals
        .iter()
        .map(|start| {
            arrivals
                .iter()
                .filter(|at| **at >= *start && at.duration_since(*start) < width)
                .count()
        })
        .max()
        .unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread")]
async fn three_workers_together_keep_a_provider_s_limits() {
    on_every_database(limited).await;
}

fn limited(rt: &tokio::runtime::Handle, database: &TestDatabase) {
    let db = database.db();
    let key = generate_key();
    let server = rt.block_on(MockServer::start());
    let (first, connections) = connect_many(rt, &server, db, &key, SYNCS);
    let arrivals = Arrivals::default();
    rt.block_on(
        Mock::given(method("GET"))
            .and(path("/simplefin/accounts"))
            .respond_with(arrivals.clone())
            .mount(&server),
    );
    let jobs: Vec<_> = connections
        .iter()
        .map(|connection| {
            first
                .engine
                .request_sync(*connection, SyncJobKind::OnDemand)
                .unwrap()
                .job_id
        })
        .collect();

    let (lines, log) = mpsc::channel();
    let workers: Vec<_> = (0..WORKERS)
        .map(|_| {
            start_worker_with(
                &database.url(),
                &key,
                &[("TRIBUTARY_PROVIDER_LIMITS", LIMITS)],
                lines.clone(),
            )
        })
        .collect();
    for _ in 0..SYNCS {
        wait_for_line(&log, " synced connection ");
    }
    for worker in &workers {
        Command::new("kill")
            .arg("-TERM")
            .arg(worker.0.id().to_string())
            .status()
            .unwrap();
    }
    drop(workers);

    let conn = &mut *db.conn().unwrap();
    for job in &jobs {
        let done = sync_jobs::get_job(conn, *job).unwrap();
        assert_eq!(
            (done.status.as_str(), done.attempts),
            ("succeeded", 1),
            "job {job}: {:?} (a job held back spends no attempt)",
            done.error
        );
    }
    let arrivals = arrivals.0.lock().unwrap().clone();
    assert_eq!(arrivals.len(), SYNCS, "one request a sync, each sync once");
    // Two requests within one delay of each other were in flight together.
    let at_once = most_within(&arrivals, DELAY);
    assert!(at_once <= AT_ONCE, "{at_once} syncs at once");
    // Admissions are timed by the workers, arrivals by the fake: a few
    // milliseconds of their difference are not the limit's.
    let per_period = most_within(&arrivals, PERIOD - Duration::from_millis(100));
    assert!(per_period <= PER_PERIOD, "{per_period} syncs in one period");
    drop(first);
}
