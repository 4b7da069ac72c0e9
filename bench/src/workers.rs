//! Scale-out, measured (`--workers 1,2,4`): how sync throughput grows with
//! `tributary worker` processes on one PostgreSQL database, and how long a
//! claim takes with a deep queue.
//!
//! For each worker count K, on a fresh database: N users each connect to a
//! local SimpleFIN fake whose answers take a set latency; K real
//! `tributary worker` processes (the binary, built next to this one) then
//! run one schedule tick, every connection being due at once. The figures
//! come from the database itself (the jobs' start and finish times) and
//! from the fake (how often each connection was fetched), not from the
//! workers' own account. Then 100,000 queued jobs are added and K threads
//! claim from that queue the way workers do, timing each claim.

use anyhow::{Context as _, bail};
use base64::Engine as _;
use std::collections::HashMap;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tributary_auth::keyring::{Keyring, generate_key};
use tributary_domain::clock::SystemClock;
use tributary_providers::simplefin::{self, SimpleFinConnector};
use tributary_providers::sync::SyncEngine;
use tributary_providers::{ConnectRequest, Registry};
use tributary_storage::testing::TestDatabase;
use tributary_storage::{Database, queue_load, sync_jobs, users};

/// How one worker count did.
pub struct Measured {
    pub workers: usize,
    pub connections: usize,
    /// Syncs a second, in thousandths.
    pub milli_syncs_per_second: u128,
    pub missed: usize,
    pub doubled: usize,
    pub most_database_connections: i64,
    pub claim_p50: Duration,
    pub claim_p99: Duration,
}

/// The fake's answers, and how often each connection asked for them.
struct Fake {
    latency: Duration,
    payload: String,
    fetches: Mutex<HashMap<u64, usize>>,
}

/// Jobs added behind the tick for the claim measurement.
pub const DEEP_QUEUE: usize = 100_000;
/// Claims each claiming thread times.
const CLAIMS_PER_THREAD: usize = 500;

pub fn measure(
    workers: usize,
    connections: usize,
    latency: Duration,
    concurrency: usize,
) -> anyhow::Result<Measured> {
    let worker_binary = std::env::current_exe()?.with_file_name("tributary");
    if !worker_binary.is_file() {
        bail!(
            "--workers runs `tributary worker` processes: build them first with `cargo build --release -p tributary` ({} is missing)",
            worker_binary.display()
        );
    }
    let database = TestDatabase::postgres()
        .context("--workers needs PostgreSQL (set TRIBUTARY_TEST_POSTGRES_URL)")?;
    let db = database.db();
    let fake = Arc::new(Fake {
        latency,
        payload: tributary_storage::testing::testdata("home-assistant-simplefin/fin_data.json"),
        fetches: Mutex::default(),
    });
    // The fake runs on an actix system of its own thread, as a bank would
    // run elsewhere.
    let (started, learn_started) = std::sync::mpsc::channel();
    let serving = fake.clone();
    let fake_thread = std::thread::spawn(move || -> std::io::Result<()> {
        let system = actix_web::rt::System::new();
        let addr = system.block_on(start_fake(serving));
        let _ = started.send(addr.map(|addr| (addr, actix_web::rt::System::current())));
        system.run()
    });
    let (addr, fake_system) = learn_started.recv()??;

    let key = generate_key();
    seed(db, &key, &addr.to_string(), connections)?;

    // The bench's own pool is open already: counted before, taken off after.
    let own_connections = queue_load::open_connections(&mut *db.conn()?)?;
    let before = Instant::now();
    let mut running: Vec<WorkerProcess> = (0..workers)
        .map(|_| start_worker(&worker_binary, &database.url(), &key, concurrency))
        .collect::<anyhow::Result<_>>()?;
    let mut most_database_connections = 0;
    let deadline = before + Duration::from_secs(60) + latency * u32::try_from(connections)?;
    let mut pooled = db.conn()?;
    let conn = &mut *pooled;
    loop {
        most_database_connections =
            most_database_connections.max(queue_load::open_connections(conn)? - own_connections);
        if usize::try_from(queue_load::finished_jobs(conn)?)? >= connections
            || Instant::now() > deadline
        {
            break;
        }
        for worker in &mut running {
            if let Some(status) = worker.0.try_wait()? {
                bail!("a worker exited early ({status})");
            }
        }
        // A measurement's sampling interval, not a wait for an event.
        std::thread::sleep(Duration::from_millis(20));
    }
    drop(running);
    let tick = queue_load::tick(conn)?;
    let synced = usize::try_from(tick.synced_once)?;
    let fetches = fake
        .fetches
        .lock()
        .map_err(|_| anyhow::anyhow!("fake poisoned"))?;
    let doubled = fetches.values().map(|n| n.saturating_sub(1)).sum::<usize>()
        + usize::try_from(tick.extra_jobs)?;
    let missed = connections - synced;
    drop(fetches);
    // The claiming threads need every connection of the pool.
    drop(pooled);

    let claims = claim_latencies(db, workers)?;
    fake_system.stop();
    let _ = fake_thread.join();
    Ok(Measured {
        workers,
        connections,
        milli_syncs_per_second: u128::try_from(synced)? * 1_000_000_000
            / span(&tick).as_micros().max(1),
        missed,
        doubled,
        most_database_connections,
        claim_p50: percentile(&claims, 50),
        claim_p99: percentile(&claims, 99),
    })
}

async fn start_fake(fake: Arc<Fake>) -> std::io::Result<std::net::SocketAddr> {
    use actix_web::{App, HttpResponse, HttpServer, web};
    let server = HttpServer::new(move || {
        App::new()
            .app_data(web::Data::new(fake.clone()))
            .route(
                "/claim/{n}",
                web::post().to(
                    |req: actix_web::HttpRequest, n: web::Path<u64>| async move {
                        let host = req.connection_info().host().to_owned();
                        HttpResponse::Ok().body(format!("http://u:p@{host}/sf/{n}"))
                    },
                ),
            )
            .route(
                "/sf/{n}/accounts",
                web::get().to(|fake: web::Data<Arc<Fake>>, n: web::Path<u64>| async move {
                    // The bank's latency: what a worker waits on.
                    actix_web::rt::time::sleep(fake.latency).await;
                    if let Ok(mut fetches) = fake.fetches.lock() {
                        *fetches.entry(*n).or_default() += 1;
                    }
                    HttpResponse::Ok()
                        .content_type("application/json")
                        .body(fake.payload.clone())
                }),
            )
    })
    .workers(2)
    .bind("127.0.0.1:0")?;
    let addr = server.addrs()[0];
    actix_web::rt::spawn(server.run());
    Ok(addr)
}

/// N users, each with one SimpleFIN connection to the fake, due now.
fn seed(db: &Database, key: &str, fake: &str, connections: usize) -> anyhow::Result<()> {
    let mut registry = Registry::default();
    registry.register(Arc::new(SimpleFinConnector::new(
        Duration::from_secs(10),
        &tributary_outbound::Guard::new(tributary_outbound::PrivateAllowance::All),
    )?));
    let engine = SyncEngine::new(db.clone(), registry, Arc::new(SystemClock))
        .with_sealer(Arc::new(Keyring::new(key, &[])?));
    let now = chrono::Utc::now().naive_utc();
    for n in 0..connections {
        let user =
            users::create_personal_user(&mut *db.conn()?, &format!("scale-{n}@example.com"), now)?;
        let token =
            base64::engine::general_purpose::STANDARD.encode(format!("http://{fake}/claim/{n}"));
        engine.connect(
            user.id,
            simplefin::PROVIDER,
            &ConnectRequest {
                settings: serde_json::json!({}),
                secret: Some(token),
            },
        )?;
    }
    Ok(())
}

/// A `tributary worker` process, killed when dropped.
struct WorkerProcess(Child);

impl Drop for WorkerProcess {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start_worker(
    binary: &std::path::Path,
    url: &str,
    key: &str,
    concurrency: usize,
) -> anyhow::Result<WorkerProcess> {
    let child = Command::new(binary)
        .arg("worker")
        .env("TRIBUTARY_DATABASE_URL", url)
        .env("TRIBUTARY_SECRET_KEY", key)
        // The fake listens on loopback, which the outbound guard refuses
        // unless allowed.
        .env("TRIBUTARY_OUTBOUND_ALLOW_PRIVATE", "1")
        .env("TRIBUTARY_WORKER_POLL_SECS", "1")
        .env("TRIBUTARY_WORKER_CONCURRENCY", concurrency.to_string())
        .env("RUST_LOG", "error")
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .context("starting `tributary worker`")?;
    Ok(WorkerProcess(child))
}

/// From the first claim to the last finish of the tick.
fn span(tick: &queue_load::Tick) -> Duration {
    match (tick.first_start, tick.last_finish) {
        (Some(first), Some(last)) => (last - first).to_std().unwrap_or_default(),
        _ => Duration::ZERO,
    }
}

/// Queues [`DEEP_QUEUE`] jobs (on copies of the first connection), then
/// `threads` threads claim from the queue at once; every claim's time.
fn claim_latencies(db: &Database, threads: usize) -> anyhow::Result<Vec<Duration>> {
    queue_load::queue_deep(&mut *db.conn()?, DEEP_QUEUE)?;
    let times = Mutex::new(Vec::with_capacity(threads * CLAIMS_PER_THREAD));
    std::thread::scope(|scope| -> anyhow::Result<()> {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let times = &times;
                scope.spawn(move || -> anyhow::Result<()> {
                    let conn = &mut *db.conn()?;
                    let mut mine = Vec::with_capacity(CLAIMS_PER_THREAD);
                    for _ in 0..CLAIMS_PER_THREAD {
                        let now = chrono::Utc::now().naive_utc();
                        let started = Instant::now();
                        let claimed = sync_jobs::claim(
                            conn,
                            &format!("claimer-{t}"),
                            now,
                            now + chrono::Duration::minutes(5),
                        )?;
                        mine.push(started.elapsed());
                        anyhow::ensure!(claimed.is_some(), "the deep queue ran dry");
                    }
                    times
                        .lock()
                        .map_err(|_| anyhow::anyhow!("poisoned"))?
                        .extend(mine);
                    Ok(())
                })
            })
            .collect();
        for handle in handles {
            handle
                .join()
                .map_err(|_| anyhow::anyhow!("a claiming thread panicked"))??;
        }
        Ok(())
    })?;
    let mut times = times
        .into_inner()
        .map_err(|_| anyhow::anyhow!("poisoned"))?;
    times.sort();
    Ok(times)
}

fn percentile(sorted: &[Duration], p: usize) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    sorted[(sorted.len() * p / 100).min(sorted.len() - 1)]
}
