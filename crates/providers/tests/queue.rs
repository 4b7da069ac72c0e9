//! The job queue and workers over real databases (SQLite file and
//! PostgreSQL): exclusivity, leases, scheduling.

// Test code: a failed unwrap is a failed test, with its message.
#![allow(clippy::unwrap_used)]

use chrono::{Duration, TimeZone, Utc};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tributary_domain::clock::{Clock, ManualClock};
use tributary_domain::ids::{ConnectionId, UserId};
use tributary_domain::model::{ConnectionStatus, Provider, SyncJobKind};
use tributary_domain::snapshot::ProviderSnapshot;
use tributary_providers::sandbox::{self, SandboxConnector};
use tributary_providers::sync::{SyncEngine, SyncOutcome};
use tributary_providers::worker::{StopSignal, Worker};
use tributary_providers::{
    ConnectRequest, Connector, ConnectorError, FetchContext, Prepared, Registry,
};
use tributary_storage::testing::on_every_backend;
use tributary_storage::{Database, connections, sync_apply, sync_jobs, users};

/// The sandbox, counting how often each connection's data is fetched.
#[derive(Debug, Default)]
struct CountingSandbox {
    inner: SandboxConnector,
    fetches: Mutex<HashMap<u64, usize>>,
}

/// A provider of these tests: speaks as the sandbox (its name, its
/// connect step) with a fetch of its own.
trait SandboxFetch: Send + Sync + std::fmt::Debug {
    fn fetch(&self, context: &FetchContext<'_>) -> Result<ProviderSnapshot, ConnectorError>;
}

/// Registers `fetching` under the sandbox's name.
#[derive(Debug)]
struct AsSandbox<T>(Arc<T>);

impl<T: SandboxFetch> Connector for AsSandbox<T> {
    fn provider(&self) -> Provider {
        tributary_providers::sandbox::PROVIDER
    }
    fn prepare(&self, request: &ConnectRequest) -> Result<Prepared, ConnectorError> {
        SandboxConnector::default().prepare(request)
    }
    fn fetch(&self, context: &FetchContext<'_>) -> Result<ProviderSnapshot, ConnectorError> {
        self.0.fetch(context)
    }
}

impl SandboxFetch for CountingSandbox {
    fn fetch(&self, context: &FetchContext<'_>) -> Result<ProviderSnapshot, ConnectorError> {
        let seed = context.settings["seed"].as_u64().unwrap();
        *self.fetches.lock().unwrap().entry(seed).or_default() += 1;
        self.inner.fetch(context)
    }
}

fn clock() -> Arc<ManualClock> {
    Arc::new(ManualClock::new(
        Utc.with_ymd_and_hms(2026, 11, 21, 8, 0, 0).unwrap(),
    ))
}

fn new_connection(
    engine: &SyncEngine,
    db: &Database,
    clock: &dyn Clock,
    email: &str,
) -> ConnectionId {
    let user = users::create_personal_user(&mut db.conn().unwrap(), email, clock.now().naive_utc())
        .unwrap();
    engine
        .connect(
            user.id,
            tributary_providers::sandbox::PROVIDER,
            &sandbox::connect_request(email, sandbox::USER_GOOD),
        )
        .unwrap()
        .id
}

#[test]
fn two_workers_run_every_job_exactly_once() {
    const CONNECTIONS: usize = 200;
    on_every_backend(|db| {
        let clock = clock();
        let counting = Arc::new(CountingSandbox::default());
        let mut registry = Registry::default();
        registry.register(Arc::new(AsSandbox(counting.clone())));
        let engine = SyncEngine::new(db.clone(), registry, clock.clone());
        let ids: Vec<ConnectionId> = (0..CONNECTIONS)
            .map(|i| new_connection(&engine, db, clock.as_ref(), &format!("user{i}@example.com")))
            .collect();

        // New connections are due now: the scheduler queues each once.
        assert_eq!(engine.schedule_due().unwrap(), CONNECTIONS);
        assert_eq!(engine.schedule_due().unwrap(), 0, "nothing is due twice");

        let stop = StopSignal::default();
        let ran: Vec<usize> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..2)
                .map(|n| {
                    let worker = Worker::new(
                        engine.clone(),
                        format!("worker-{n}"),
                        std::time::Duration::ZERO,
                    );
                    let stop = stop.clone();
                    scope.spawn(move || worker.run_due(&stop))
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert_eq!(
            ran.iter().sum::<usize>(),
            CONNECTIONS,
            "jobs run per worker: {ran:?}"
        );

        let fetches = counting.fetches.lock().unwrap();
        assert_eq!(fetches.len(), CONNECTIONS);
        assert!(
            fetches.values().all(|n| *n == 1),
            "a connection was fetched twice"
        );
        let conn = &mut *db.conn().unwrap();
        for id in &ids {
            let jobs = sync_jobs::jobs_of_connection(conn, *id).unwrap();
            assert_eq!(jobs.len(), 1);
            assert_eq!(
                (jobs[0].status.as_str(), jobs[0].attempts),
                ("succeeded", 1),
                "job error: {:?}",
                jobs[0].error
            );
            let record = connections::get_connection(conn, *id).unwrap();
            assert_eq!(record.status, ConnectionStatus::Active);
            assert!(record.next_sync_at.unwrap() >= (clock.now() + Duration::hours(6)).naive_utc());
        }
    });
}

#[test]
fn an_expired_lease_is_taken_over_and_the_late_worker_stores_nothing() {
    on_every_backend(|db| {
        let clock = clock();
        let engine = SyncEngine::new(
            db.clone(),
            Registry::with_defaults(&tributary_outbound::Guard::new(Default::default())),
            clock.clone(),
        );
        let connection = new_connection(&engine, db, clock.as_ref(), "lease@example.com");
        engine
            .request_sync(connection, SyncJobKind::OnDemand)
            .unwrap();

        let first = engine.claim_next("worker-a").unwrap().unwrap();
        assert!(
            engine.claim_next("worker-b").unwrap().is_none(),
            "a held job is not handed out twice"
        );

        // worker-a goes silent; once its lease has expired, worker-b takes over.
        clock.advance(Duration::from_std(engine.policy().lease).unwrap() + Duration::seconds(1));
        let second = engine.claim_next("worker-b").unwrap().unwrap();
        assert_eq!((second.id, second.attempts), (first.id, 2));
        let SyncOutcome::Synced { summary, .. } = engine.run_job(&second).unwrap() else {
            panic!("takeover failed")
        };
        assert!(summary.transactions_added > 0);

        // worker-a wakes up and tries to store what it fetched: fenced off.
        let late = engine.run_job(&first).unwrap();
        assert_eq!(late, SyncOutcome::LeaseLost { job_id: first.id });
        let job = sync_jobs::get_job(&mut db.conn().unwrap(), first.id).unwrap();
        assert_eq!(
            (job.status.as_str(), job.locked_by.as_deref()),
            ("succeeded", Some("worker-b"))
        );
    });
}

#[test]
fn asking_twice_queues_one_job() {
    on_every_backend(|db| {
        let clock = clock();
        let engine = SyncEngine::new(
            db.clone(),
            Registry::with_defaults(&tributary_outbound::Guard::new(Default::default())),
            clock.clone(),
        );
        let connection = new_connection(&engine, db, clock.as_ref(), "twice@example.com");
        let first = engine
            .request_sync(connection, SyncJobKind::OnDemand)
            .unwrap();
        let second = engine
            .request_sync(connection, SyncJobKind::OnDemand)
            .unwrap();
        assert!(first.created && !second.created);
        assert_eq!(first.job_id, second.job_id);
        // Once it has run, a new request queues a new job.
        engine
            .run_job(&engine.claim_next("w").unwrap().unwrap())
            .unwrap();
        let third = engine
            .request_sync(connection, SyncJobKind::OnDemand)
            .unwrap();
        assert!(third.created && third.job_id != first.job_id);
    });
}

#[test]
fn the_scheduler_skips_connections_only_the_user_can_fix() {
    on_every_backend(|db| {
        let clock = clock();
        let engine = SyncEngine::new(
            db.clone(),
            Registry::with_defaults(&tributary_outbound::Guard::new(Default::default())),
            clock.clone(),
        );
        let healthy = new_connection(&engine, db, clock.as_ref(), "ok@example.com");
        let user = users::create_personal_user(
            &mut db.conn().unwrap(),
            "reauth@example.com",
            clock.now().naive_utc(),
        )
        .unwrap();
        let settings =
            sandbox::connect_request("reauth@example.com", sandbox::USER_REAUTH_REQUIRED);
        let broken = engine
            .connect(user.id, tributary_providers::sandbox::PROVIDER, &settings)
            .unwrap()
            .id;
        engine.sync_now(broken, SyncJobKind::Initial, "w").unwrap();
        engine.sync_now(healthy, SyncJobKind::Initial, "w").unwrap();

        // Long after every next_sync_at, only the healthy one is queued.
        clock.advance(Duration::days(2));
        assert_eq!(engine.schedule_due().unwrap(), 1);
        let job = engine.claim_next("w").unwrap().unwrap();
        assert_eq!(job.connection_id, healthy);
        assert!(
            sync_jobs::active_job(&mut db.conn().unwrap(), broken)
                .unwrap()
                .is_none()
        );
    });
}

/// (balance snapshots, transactions) stored for a user's accounts.
fn stored_counts(db: &Database, user_id: UserId) -> (usize, i64) {
    use tributary_domain::access::Viewer;
    use tributary_storage::read::{self, TransactionFilter};
    let conn = &mut *db.conn().unwrap();
    let all = TransactionFilter {
        include_pending: true,
        ..Default::default()
    };
    read::list_accounts(conn, &Viewer::whole_user(user_id))
        .unwrap()
        .iter()
        .fold((0, 0), |(b, t), account| {
            (
                b + read::balance_history(conn, account.id).unwrap().len(),
                t + read::count_transactions(conn, account.id, &all).unwrap(),
            )
        })
}

#[test]
fn a_worker_that_does_not_hold_the_job_stores_nothing() {
    on_every_backend(|db| {
        let clock = clock();
        let engine = SyncEngine::new(
            db.clone(),
            Registry::with_defaults(&tributary_outbound::Guard::new(Default::default())),
            clock.clone(),
        );
        let connection = new_connection(&engine, db, clock.as_ref(), "fenced@example.com");
        engine
            .sync_now(connection, SyncJobKind::Initial, "w")
            .unwrap();
        let user = connections::get_connection(&mut db.conn().unwrap(), connection)
            .unwrap()
            .user_id;
        clock.advance(Duration::days(3));
        engine
            .request_sync(connection, SyncJobKind::OnDemand)
            .unwrap();
        let job = engine.claim_next("w").unwrap().unwrap();
        let before = stored_counts(db, user);

        // A snapshot with new days in it, stored under someone else's name.
        let impostor = sync_jobs::ClaimedJob {
            worker: "someone-else".into(),
            ..job.clone()
        };
        let settings = connections::get_connection(&mut db.conn().unwrap(), connection)
            .unwrap()
            .settings;
        let snapshot = SandboxConnector::default()
            .fetch(&FetchContext {
                now: clock.now(),
                settings: &settings,
                credentials: None,
                last_synced_at: None,
                oldest_pending: None,
                stored_accounts: &Default::default(),
                chosen_accounts: None,
                keep_credentials: None,
            })
            .unwrap();
        let now = clock.now().naive_utc();
        let stored =
            sync_apply::apply_for_job(&mut db.conn().unwrap(), &impostor, &snapshot, now, now, now)
                .unwrap();
        assert!(stored.is_none());
        assert_eq!(stored_counts(db, user), before, "nothing was written");

        // The holder stores it.
        let SyncOutcome::Synced { summary, .. } = engine.run_job(&job).unwrap() else {
            panic!("sync failed")
        };
        assert!(summary.transactions_added > 0);
        assert_eq!(
            stored_counts(db, user).0,
            before.0 + summary.balances_recorded
        );
    });
}

/// The sandbox with `user_slow` taking `delay`, counting fetches per seed.
fn slow_sandbox(delay: std::time::Duration) -> Arc<CountingSandbox> {
    Arc::new(CountingSandbox {
        inner: SandboxConnector::with_pause(delay, std::thread::sleep),
        fetches: Mutex::default(),
    })
}

#[test]
fn a_sync_longer_than_the_lease_finishes_once_with_two_workers() {
    use tributary_domain::clock::SystemClock;
    use tributary_domain::schedule::SyncPolicy;
    on_every_backend(|db| {
        // Real time: the provider takes 4 s, the lease is 3 s. Without a
        // heartbeat the other worker takes each job over mid-fetch.
        let clock: Arc<dyn Clock> = Arc::new(SystemClock);
        let counting = slow_sandbox(std::time::Duration::from_secs(4));
        let mut registry = Registry::default();
        registry.register(Arc::new(AsSandbox(counting.clone())));
        let policy = SyncPolicy {
            lease: std::time::Duration::from_secs(3),
            ..SyncPolicy::default()
        };
        let engine = SyncEngine::with_policy(db.clone(), registry, clock.clone(), policy);
        let ids: Vec<ConnectionId> = (0..3)
            .map(|i| {
                let email = format!("slow{i}@example.com");
                let user = users::create_personal_user(
                    &mut db.conn().unwrap(),
                    &email,
                    clock.now().naive_utc(),
                )
                .unwrap();
                let request = sandbox::connect_request(&email, sandbox::USER_SLOW);
                engine
                    .connect(user.id, tributary_providers::sandbox::PROVIDER, &request)
                    .unwrap()
                    .id
            })
            .collect();
        let started = std::time::Instant::now();
        let stop = StopSignal::default();
        std::thread::scope(|scope| {
            for n in 0..2 {
                let worker = Worker::new(
                    engine.clone(),
                    format!("worker-{n}"),
                    std::time::Duration::ZERO,
                );
                let stop = stop.clone();
                scope.spawn(move || worker.run_due(&stop));
            }
        });
        assert!(started.elapsed() < std::time::Duration::from_secs(60));
        let fetches = counting.fetches.lock().unwrap();
        assert_eq!(fetches.len(), 3);
        assert!(
            fetches.values().all(|n| *n == 1),
            "fetched twice: {fetches:?}"
        );
        let conn = &mut *db.conn().unwrap();
        for id in ids {
            let jobs = sync_jobs::jobs_of_connection(conn, id).unwrap();
            assert_eq!(
                jobs.iter()
                    .map(|j| (j.status.as_str(), j.attempts))
                    .collect::<Vec<_>>(),
                [("succeeded", 1)]
            );
            let record = connections::get_connection(conn, id).unwrap();
            assert_eq!(record.status, ConnectionStatus::Active);
        }
    });
}

#[test]
fn a_job_taken_over_too_often_fails_with_a_reason_instead_of_cycling() {
    on_every_backend(|db| {
        let clock = clock();
        let engine = SyncEngine::new(
            db.clone(),
            Registry::with_defaults(&tributary_outbound::Guard::new(Default::default())),
            clock.clone(),
        );
        let connection = new_connection(&engine, db, clock.as_ref(), "cycle@example.com");
        engine
            .request_sync(connection, SyncJobKind::OnDemand)
            .unwrap();
        let lease = Duration::from_std(engine.policy().lease).unwrap() + Duration::seconds(1);
        let max = engine.policy().max_attempts;
        // Each worker claims the job and dies before storing anything.
        for attempt in 1..=max {
            let job = engine
                .claim_next(&format!("dies-{attempt}"))
                .unwrap()
                .unwrap();
            assert_eq!(job.attempts, attempt);
            clock.advance(lease);
        }
        let last = engine.claim_next("survivor").unwrap().unwrap();
        let outcome = engine.run_job(&last).unwrap();
        let SyncOutcome::GaveUp { reason, .. } = outcome else {
            panic!("expected GaveUp, got {outcome:?}")
        };
        assert!(
            reason.contains(&format!("did not finish in {max} attempts")),
            "{reason}"
        );
        let conn = &mut *db.conn().unwrap();
        let record = connections::get_connection(conn, connection).unwrap();
        assert_eq!(record.status, ConnectionStatus::Error);
        assert_eq!(record.status_reason.as_deref(), Some(reason.as_str()));
        assert!(
            engine.claim_next("another").unwrap().is_none(),
            "the job is over"
        );
    });
}

#[test]
fn a_worker_purges_tombstones_older_than_the_policy_keeps_them() {
    on_every_backend(|db| {
        let clock = clock();
        let engine = SyncEngine::new(db.clone(), sandbox_registry(), clock.clone());
        let connection = new_connection(&engine, db, clock.as_ref(), "purge@example.com");
        engine
            .sync_now(connection, SyncJobKind::Scheduled, "purger")
            .unwrap();
        let user = connections::get_connection(&mut db.conn().unwrap(), connection)
            .unwrap()
            .user_id;
        // Removing the connection leaves a tombstone per transaction and
        // per piece of investment activity (the sandbox's brokerage).
        assert!(
            connections::delete_connection(
                &mut db.conn().unwrap(),
                user,
                connection,
                clock.now().naive_utc()
            )
            .unwrap()
        );
        let count = |table| tributary_storage::testing::row_count(db, table);
        let tombstones = || count("transaction_tombstones") + count("investment_tombstones");
        let left = tombstones();
        assert!(count("transaction_tombstones") > 0 && count("investment_tombstones") > 0);
        clock.advance(Duration::days(399));
        let worker = Worker::new(engine.clone(), "purger".into(), std::time::Duration::ZERO);
        worker.run_due(&StopSignal::default());
        assert_eq!(tombstones(), left, "kept for 400 days");
        clock.advance(Duration::days(2));
        assert_eq!(engine.purge_tombstones().unwrap(), left as usize);
        assert_eq!(tombstones(), 0);
    });
}

fn sandbox_registry() -> Registry {
    let mut registry = Registry::default();
    registry.register(Arc::new(SandboxConnector::default()));
    registry
}

/// A provider that answers only once `wanted` syncs wait for it at the
/// same time: a worker running one sync at a time, or holding a database
/// connection while it waits (the test pool has 4), never gets there, and
/// after `PATIENCE` the gate gives up and lets every sync through, so the
/// test fails on its count instead of hanging.
#[derive(Debug)]
struct Gate {
    inner: SandboxConnector,
    wanted: usize,
    state: Mutex<GateState>,
    opened: std::sync::Condvar,
}

#[derive(Debug, Default)]
struct GateState {
    waiting: usize,
    most_at_once: usize,
    open: bool,
    fetches: HashMap<u64, usize>,
}

const PATIENCE: std::time::Duration = std::time::Duration::from_secs(30);

impl SandboxFetch for Gate {
    fn fetch(&self, context: &FetchContext<'_>) -> Result<ProviderSnapshot, ConnectorError> {
        let seed = context.settings["seed"].as_u64().unwrap();
        let mut state = self.state.lock().unwrap();
        *state.fetches.entry(seed).or_default() += 1;
        state.waiting += 1;
        state.most_at_once = state.most_at_once.max(state.waiting);
        if state.waiting >= self.wanted {
            state.open = true;
            self.opened.notify_all();
        }
        let (mut state, waited) = self
            .opened
            .wait_timeout_while(state, PATIENCE, |state| !state.open)
            .unwrap();
        if waited.timed_out() {
            state.open = true;
            self.opened.notify_all();
        }
        state.waiting -= 1;
        drop(state);
        self.inner.fetch(context)
    }
}

#[test]
fn one_worker_runs_its_lanes_of_syncs_at_once_each_exactly_once() {
    const CONNECTIONS: usize = 20;
    const LANES: usize = 16;
    on_every_backend(|db| {
        let clock = clock();
        let gate = Arc::new(Gate {
            inner: SandboxConnector::default(),
            wanted: LANES,
            state: Mutex::new(GateState::default()),
            opened: std::sync::Condvar::new(),
        });
        let mut registry = Registry::default();
        registry.register(Arc::new(AsSandbox(gate.clone())));
        let engine = SyncEngine::new(db.clone(), registry, clock.clone());
        let ids: Vec<ConnectionId> = (0..CONNECTIONS)
            .map(|i| new_connection(&engine, db, clock.as_ref(), &format!("lane{i}@example.com")))
            .collect();
        assert_eq!(engine.schedule_due().unwrap(), CONNECTIONS);
        let worker = Worker::new(
            engine.clone(),
            "laned".to_owned(),
            std::time::Duration::ZERO,
        )
        .with_concurrency(LANES);
        assert_eq!(worker.run_due(&StopSignal::default()), CONNECTIONS);

        let state = gate.state.lock().unwrap();
        assert_eq!(state.most_at_once, LANES, "syncs at once");
        assert_eq!(state.fetches.len(), CONNECTIONS);
        assert!(
            state.fetches.values().all(|n| *n == 1),
            "{:?}",
            state.fetches
        );
        let conn = &mut *db.conn().unwrap();
        let mut holders = std::collections::HashSet::new();
        for id in &ids {
            let jobs = sync_jobs::jobs_of_connection(conn, *id).unwrap();
            assert_eq!(jobs.len(), 1);
            assert_eq!(
                (jobs[0].status.as_str(), jobs[0].attempts),
                ("succeeded", 1),
                "job error: {:?}",
                jobs[0].error
            );
            holders.extend(jobs[0].locked_by.clone());
        }
        // Each lane claims under its own name.
        assert!(holders.len() > 1, "{holders:?}");
        assert!(
            holders.iter().all(|h| h.starts_with("laned/")),
            "{holders:?}"
        );
    });
}

/// Records the order in which connections' data is asked for (by the
/// sandbox seed, which follows the e-mail it was connected with) and
/// answers with nothing, so a thousand syncs cost little.
#[derive(Debug, Default)]
struct Recording {
    order: Mutex<Vec<u64>>,
}

impl SandboxFetch for Recording {
    fn fetch(&self, context: &FetchContext<'_>) -> Result<ProviderSnapshot, ConnectorError> {
        let seed = context.settings["seed"].as_u64().unwrap();
        self.order.lock().unwrap().push(seed);
        Ok(ProviderSnapshot {
            institution: tributary_domain::snapshot::SnapshotInstitution {
                provider_institution_id: "recorded".into(),
                name: "Recorded".into(),
                logo_url: None,
            },
            accounts: Vec::new(),
            notices: Vec::new(),
            pending_match: None,
            complete: true,
        })
    }
}

fn seed_of(email: &str) -> u64 {
    sandbox::connect_request(email, sandbox::USER_GOOD).settings["seed"]
        .as_u64()
        .unwrap()
}

/// Connects `count` connections for one new person, all due now.
fn connections_of(
    engine: &SyncEngine,
    db: &Database,
    clock: &dyn Clock,
    email: &str,
    count: usize,
) {
    let user = users::create_personal_user(&mut db.conn().unwrap(), email, clock.now().naive_utc())
        .unwrap();
    for _ in 0..count {
        engine
            .connect(
                user.id,
                tributary_providers::sandbox::PROVIDER,
                &sandbox::connect_request(email, sandbox::USER_GOOD),
            )
            .unwrap();
    }
}

#[test]
fn owners_take_turns_and_a_sync_asked_for_goes_first() {
    on_every_backend(|db| {
        let clock = clock();
        let recording = Arc::new(Recording::default());
        let mut registry = Registry::default();
        registry.register(Arc::new(AsSandbox(recording.clone())));
        let engine = SyncEngine::new(db.clone(), registry, clock.clone());
        // The big owner connected first: in line by age, the small one's
        // syncs would all come after the big one's thousand.
        connections_of(&engine, db, clock.as_ref(), "big@example.com", 1_000);
        connections_of(&engine, db, clock.as_ref(), "small@example.com", 10);
        assert_eq!(engine.schedule_due().unwrap(), 1_010, "one pass queues all");
        // A person presses Sync now on a connection made after the pass.
        connections_of(&engine, db, clock.as_ref(), "eager@example.com", 1);
        let eager = connections::due_for_sync(&mut db.conn().unwrap(), clock.now().naive_utc(), 10)
            .unwrap();
        assert_eq!(eager.len(), 1);
        engine
            .request_sync(eager[0], SyncJobKind::OnDemand)
            .unwrap();

        // One lane: claims in exactly the queue's order.
        let worker = Worker::new(engine.clone(), "fair".to_owned(), std::time::Duration::ZERO);
        assert_eq!(worker.run_due(&StopSignal::default()), 1_011);

        let order = recording.order.lock().unwrap();
        assert_eq!(order.len(), 1_011);
        assert_eq!(order[0], seed_of("eager@example.com"), "asked for: first");
        let small = seed_of("small@example.com");
        let small_at: Vec<usize> = order
            .iter()
            .enumerate()
            .filter(|(_, seed)| **seed == small)
            .map(|(at, _)| at)
            .collect();
        assert_eq!(small_at.len(), 10);
        // All within the first tenth of the drain (they take turns: the
        // small owner's tenth sync is about the twentieth claimed).
        assert!(
            small_at.iter().all(|at| *at < 101),
            "the small owner's syncs ran at {small_at:?}"
        );
    });
}
