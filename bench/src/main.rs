//! `make bench`: Tributary's read path measured beside a bare actix-web
//! server that sends the same bytes from memory, in the same run, so every
//! figure is a ratio that holds on another machine (docs/performance.md).
//!
//! For each backend and data set it seeds one account with N generated
//! transactions, starts the real Personal API in this process (the
//! application the binary runs) and the bare server, and alternates runs of
//! the built-in load client against each, taking the median.

mod bare;
mod import;
mod load;
mod mcp;
mod memory;
mod parsers;
mod reenrich;
mod schedule;
mod workers;

use anyhow::{Context as _, bail};
use memory::{memory_mib, reset_peak};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tributary_app::Config;
use tributary_domain::ids::AccountId;
use tributary_http::server::{Application, Interface, Parts};
use tributary_providers::Registry;
use tributary_storage::Database;
use tributary_storage::testing::empty_account;
use tributary_storage::testing::{
    GENERATED_MERCHANTS, TestDatabase, insert_generated_transactions,
};

const USAGE: &str = "\
tributary-bench [--backend sqlite|postgres|both] [--rows N[,N…]] [--seconds S] [--rounds R] [--connections C] [--import N[,N…]]
                [--reenrich N[,N…]] [--parsers R] [--python PATH]
                [--workers K[,K…]] [--sync-connections N] [--latency-ms L] [--concurrency C]
                [--schedule N[,N…]]

  --backend      which storage to measure [default: both; postgres needs TRIBUTARY_TEST_POSTGRES_URL
                 or a server at postgres://postgres@127.0.0.1:5432/test]
  --rows         transactions in the measured account, e.g. 10000,1000000; 0 skips the read path [default: 470,10000]
  --seconds      length of each run [default: 5]
  --rounds       runs per server, alternating; the median counts [default: 3]
  --connections  keep-alive connections of the load client [default: 16]
  --import       transactions in the generated OFX file read and stored beside a raw bulk insert
                 of the same rows; 0 skips it [default: 100000]
  --reenrich     transactions in an account whose stored rows a new rule is applied to by the
                 workers' batches, while another thread reads; 0 skips it [default: 0]
  --parsers      rounds of the per-file comparison of the MT940 and OFX readers (read and store)
                 with the Python parsers mt-940 and ofxtools (read alone); 0 skips it [default: 0]
  --python       the Python that has mt-940 and ofxtools [default: python3; `make bench` makes
                 target/bench-venv with both]
  --workers      scale-out on PostgreSQL: for each count K, K `tributary worker` processes (built
                 next to this binary) run one schedule tick of --sync-connections connections to a
                 local SimpleFIN fake answering after --latency-ms; then K threads claim from
                 100,000 queued jobs; e.g. 1,2,4 [default: none]
  --sync-connections  connections synced per worker count [default: 200]
  --latency-ms   the fake provider's answer time [default: 200]
  --concurrency  syncs each worker runs at once (TRIBUTARY_WORKER_CONCURRENCY) [default: 16]
  --schedule     the scheduler at scale on PostgreSQL: for each count N, N connections due at once
                 (generated, not synced), and the time of its statements: a batch of due
                 connections, an enqueue, a claim with N queued; e.g. 1000,100000,1000000 [default: none]
";

#[derive(Debug)]
struct Options {
    backends: Vec<String>,
    rows: Vec<usize>,
    seconds: u64,
    rounds: usize,
    connections: usize,
    imports: Vec<usize>,
    reenrich: Vec<usize>,
    parser_rounds: usize,
    python: String,
    workers: Vec<usize>,
    sync_connections: usize,
    latency: Duration,
    concurrency: usize,
    schedule: Vec<usize>,
}

impl Options {
    fn parse() -> anyhow::Result<Self> {
        let mut options = Options {
            backends: vec!["sqlite".into(), "postgres".into()],
            rows: vec![470, 10_000],
            seconds: 5,
            rounds: 3,
            connections: 16,
            imports: vec![100_000],
            reenrich: Vec::new(),
            parser_rounds: 0,
            python: "python3".into(),
            workers: Vec::new(),
            sync_connections: 200,
            latency: Duration::from_millis(200),
            concurrency: tributary_app::config::DEFAULT_WORKER_CONCURRENCY,
            schedule: Vec::new(),
        };
        let mut args = std::env::args().skip(1);
        while let Some(flag) = args.next() {
            if flag == "--help" || flag == "-h" {
                print!("{USAGE}");
                std::process::exit(0);
            }
            let value = args
                .next()
                .with_context(|| format!("{flag} needs a value\n{USAGE}"))?;
            match flag.as_str() {
                "--backend" => {
                    options.backends = match value.as_str() {
                        "both" => vec!["sqlite".into(), "postgres".into()],
                        "sqlite" | "postgres" => vec![value],
                        other => bail!("--backend: `{other}` is not sqlite, postgres or both"),
                    }
                }
                "--rows" => {
                    options.rows = value
                        .split(',')
                        .map(|n| n.trim().replace('_', "").parse())
                        .filter(|n| *n != Ok(0))
                        .collect::<Result<_, _>>()
                        .with_context(|| format!("--rows: `{value}` is not a list of counts"))?;
                }
                "--seconds" => options.seconds = value.parse().context("--seconds")?,
                "--rounds" => options.rounds = value.parse().context("--rounds")?,
                "--connections" => options.connections = value.parse().context("--connections")?,
                "--import" => {
                    options.imports = value
                        .split(',')
                        .map(|n| n.trim().replace('_', "").parse())
                        .filter(|n| *n != Ok(0))
                        .collect::<Result<_, _>>()
                        .with_context(|| format!("--import: `{value}` is not a list of counts"))?;
                }
                "--reenrich" => {
                    options.reenrich = value
                        .split(',')
                        .map(|n| n.trim().replace('_', "").parse())
                        .filter(|n| *n != Ok(0))
                        .collect::<Result<_, _>>()
                        .with_context(|| {
                            format!("--reenrich: `{value}` is not a list of counts")
                        })?;
                }
                "--parsers" => options.parser_rounds = value.parse().context("--parsers")?,
                "--python" => options.python = value,
                "--workers" => {
                    options.workers = value
                        .split(',')
                        .map(|n| n.trim().parse())
                        .filter(|n| *n != Ok(0))
                        .collect::<Result<_, _>>()
                        .with_context(|| format!("--workers: `{value}` is not a list of counts"))?;
                }
                "--sync-connections" => {
                    options.sync_connections = value.parse().context("--sync-connections")?
                }
                "--latency-ms" => {
                    options.latency = Duration::from_millis(value.parse().context("--latency-ms")?)
                }
                "--concurrency" => options.concurrency = value.parse().context("--concurrency")?,
                "--schedule" => {
                    options.schedule = value
                        .split(',')
                        .map(|n| n.trim().replace('_', "").parse())
                        .filter(|n| *n != Ok(0))
                        .collect::<Result<_, _>>()
                        .with_context(|| {
                            format!("--schedule: `{value}` is not a list of counts")
                        })?;
                }
                other => bail!("unknown option {other}\n{USAGE}"),
            }
        }
        Ok(options)
    }
}

fn main() -> anyhow::Result<()> {
    if let Ok(url) = std::env::var(SERVE_DATABASE) {
        return serve(url);
    }
    if let Ok(spec) = std::env::var(IMPORT_IN_CHILD) {
        return import_row(&spec);
    }
    let options = Options::parse()?;
    actix_web::rt::System::new().block_on(run(options))
}

async fn run(options: Options) -> anyhow::Result<()> {
    println!(
        "| backend | rows | request | Tributary req/s | bare req/s | ratio | p50 µs | p99 µs | p99.9 µs |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    let mut mcp_rows = Vec::new();
    let mut steady_rows = Vec::new();
    for backend in &options.backends {
        for &rows in &options.rows {
            let database = match backend.as_str() {
                "sqlite" => TestDatabase::sqlite(),
                _ => TestDatabase::postgres()
                    .context("no PostgreSQL server answers (set TRIBUTARY_TEST_POSTGRES_URL)")?,
            };
            let tables = measure(&options, backend, rows, database).await?;
            mcp_rows.extend(tables.mcp);
            steady_rows.extend(tables.steady);
        }
    }
    if !steady_rows.is_empty() {
        println!();
        println!(
            "| backend | rows | request | most req/s | sent req/s (half) | p50 µs | p99 µs | p99.9 µs | bare p99 µs, same rate |"
        );
        println!("|---|---|---|---|---|---|---|---|---|");
        for row in steady_rows {
            println!("{row}");
        }
    }
    if !mcp_rows.is_empty() {
        println!();
        println!(
            "| backend | rows | MCP tool | MCP req/s | p50 µs | p99 µs | REST req/s | p50 µs | p99 µs | MCP / REST |"
        );
        println!("|---|---|---|---|---|---|---|---|---|---|");
        for row in mcp_rows {
            println!("{row}");
        }
    }
    if !options.imports.is_empty() {
        println!();
        println!(
            "| backend | transactions | first pass s | import s | raw insert s | import / raw | rows/s | peak RSS MiB | enrichment s | enrichment / import |"
        );
        println!("|---|---|---|---|---|---|---|---|---|---|");
    }
    for backend in &options.backends {
        for &rows in &options.imports {
            // Each in a process of its own, so that its peak RSS is its own.
            let measured = std::process::Command::new(std::env::current_exe()?)
                .env(IMPORT_IN_CHILD, format!("{backend}:{rows}"))
                .output()
                .context("running the import measurement")?;
            anyhow::ensure!(
                measured.status.success(),
                "the import measurement failed: {}",
                String::from_utf8_lossy(&measured.stderr)
            );
            print!("{}", String::from_utf8_lossy(&measured.stdout));
        }
    }
    if !options.reenrich.is_empty() {
        reenrich_table(&options)?;
    }
    if options.parser_rounds > 0 {
        parser_table(&options)?;
    }
    if !options.workers.is_empty() {
        let (workers, connections, latency, concurrency) = (
            options.workers.clone(),
            options.sync_connections,
            options.latency,
            options.concurrency,
        );
        // Worker processes and a fake bank of its own: off this runtime.
        tokio::task::spawn_blocking(move || {
            workers_table(&workers, connections, latency, concurrency)
        })
        .await??;
    }
    if !options.schedule.is_empty() {
        let counts = options.schedule.clone();
        tokio::task::spawn_blocking(move || schedule_table(&counts)).await??;
    }
    Ok(())
}

/// The scheduler's statements with many connections due, as a table.
fn schedule_table(counts: &[usize]) -> anyhow::Result<()> {
    println!();
    println!(
        "| connections due | due batch p50 / p99 ms | enqueue p50 / p99 ms | claim p50 / p99 ms (all queued) | whole-table reads |"
    );
    println!("|---|---|---|---|---|");
    let ms = |d: Duration| {
        let micros = d.as_micros();
        format!("{}.{:02}", micros / 1000, micros % 1000 / 10)
    };
    for &count in counts {
        let m = schedule::measure(count)?;
        println!(
            "| {} | {} / {} | {} / {} | {} / {} | {} |",
            m.connections,
            ms(m.due.0),
            ms(m.due.1),
            ms(m.enqueue.0),
            ms(m.enqueue.1),
            ms(m.claim.0),
            ms(m.claim.1),
            if m.scans.is_empty() {
                "none".to_owned()
            } else {
                m.scans.join("; ")
            },
        );
    }
    Ok(())
}

/// Scale-out with `tributary worker` processes, as a table.
fn workers_table(
    counts: &[usize],
    connections: usize,
    latency: Duration,
    concurrency: usize,
) -> anyhow::Result<()> {
    println!();
    println!(
        "| workers | connections | syncs/s | vs the first | missed | doubled | database connections | claim p50 ms | claim p99 ms ({}k queued) |",
        workers::DEEP_QUEUE / 1000
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    let mut one = None;
    for &count in counts {
        let m = workers::measure(count, connections, latency, concurrency)?;
        // The first count measured is the base (1 in the usual run).
        let base = *one.get_or_insert(m.milli_syncs_per_second);
        let ms = |d: Duration| {
            let micros = d.as_micros();
            format!("{}.{:02}", micros / 1000, micros % 1000 / 10)
        };
        println!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            m.workers,
            m.connections,
            per_mille(m.milli_syncs_per_second),
            per_mille(m.milli_syncs_per_second * 1000 / base.max(1)),
            m.missed,
            m.doubled,
            m.most_database_connections,
            ms(m.claim_p50),
            ms(m.claim_p99),
        );
    }
    Ok(())
}

/// Applying a new rule to stored rows, as a table.
fn reenrich_table(options: &Options) -> anyhow::Result<()> {
    println!();
    println!(
        "| backend | transactions | changed | batches | whole s | rows/s | longest batch ms | newest 100 p50 / max ms, alone | the same while the batches run |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    let ms = |d: Duration| format!("{}.{:01}", d.as_millis(), d.as_micros() % 1000 / 100);
    for backend in &options.backends {
        for &rows in &options.reenrich {
            let database = match backend.as_str() {
                "sqlite" => TestDatabase::sqlite(),
                _ => TestDatabase::postgres()
                    .context("no PostgreSQL server answers (set TRIBUTARY_TEST_POSTGRES_URL)")?,
            };
            let m = reenrich::measure(&database, rows)?;
            let rows_per_second = u128::try_from(m.rows).unwrap_or(u128::MAX) * 1_000_000
                / m.whole.as_micros().max(1);
            println!(
                "| {backend} | {} | {} | {} | {:.1} | {rows_per_second} | {} | {} / {} | {} / {} |",
                m.rows,
                m.changed,
                m.batches,
                m.whole.as_secs_f64(),
                ms(m.longest_batch),
                ms(m.reads_alone.0),
                ms(m.reads_alone.1),
                ms(m.reads_meanwhile.0),
                ms(m.reads_meanwhile.1),
            );
        }
    }
    Ok(())
}

/// Thousandths as a decimal.
fn per_mille(value: u128) -> String {
    format!("{}.{:03}", value / 1000, value % 1000)
}

/// The per-file reader comparison, as a table.
fn parser_table(options: &Options) -> anyhow::Result<()> {
    println!();
    println!(
        "| format | files | Tributary read files/s | ratio | Tributary import (read + store) files/s | ratio | Python read files/s | smallest import lead (file) | read by Python, refused by Tributary |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    for c in parsers::compare(&options.python, options.parser_rounds)? {
        let files = u128::try_from(c.files).unwrap_or(u128::MAX);
        let per_second = |total: std::time::Duration| files * 1_000_000 / total.as_micros().max(1);
        let lead = |ours: std::time::Duration| {
            per_mille(c.python.as_nanos() * 1000 / ours.as_nanos().max(1))
        };
        println!(
            "| {} | {} | {} | {} | {} | {} | {} | {} ({}) | {} |",
            c.format,
            c.files,
            per_second(c.read),
            lead(c.read),
            per_second(c.import),
            lead(c.import),
            per_second(c.python),
            per_mille(c.worst.1),
            c.worst.0,
            if c.refused.is_empty() {
                "none".to_owned()
            } else {
                c.refused.join(", ")
            },
        );
    }
    Ok(())
}

/// One request of the table.
struct Probe {
    name: &'static str,
    path: String,
    headers: Vec<(&'static str, String)>,
    expect: u16,
}

/// The rows of the tables a data set adds after the first: MCP beside
/// REST, and latency at a steady half of the most a request was served.
struct Tables {
    mcp: Vec<String>,
    steady: Vec<String>,
}

/// The requests whose latency is measured at a steady rate too.
const STEADY_PROBES: [&str; 2] = ["accounts", "newest 100"];

/// One data set on one backend: every request of the table, against both
/// servers.
async fn measure(
    options: &Options,
    backend: &str,
    rows: usize,
    database: TestDatabase,
) -> anyhow::Result<Tables> {
    let seeding = Instant::now();
    let db = database.db().clone();
    let Seeded {
        key,
        dashboard_session,
        account,
    } = tokio::task::spawn_blocking(move || seed(&db, rows)).await??;
    eprintln!(
        "-- {backend}: {rows} transactions seeded in {:.1?}",
        seeding.elapsed()
    );
    let server = ServerProcess::start(&database)?;
    let tributary = server.addr;
    let idle = server.memory()?;
    let auth = ("x-api-key", key.clone());

    let transactions = format!("/api/v1/accounts/{account}/transactions");
    let probe = |name, path: String| Probe {
        name,
        path,
        headers: vec![auth.clone()],
        expect: 200,
    };
    let cookie = (
        "cookie",
        format!(
            "{}={dashboard_session}",
            tributary_http::web::dashboard::DASHBOARD_COOKIE
        ),
    );
    let page = |name, path: String| Probe {
        name,
        path,
        headers: vec![cookie.clone()],
        expect: 200,
    };
    // A search for a merchant on every sixth row: a page's worth of
    // matches is found among the newest rows.
    let merchant = GENERATED_MERCHANTS[0].to_lowercase().replace(' ', "+");
    let mut probes = vec![
        probe("accounts", "/api/v1/accounts".to_owned()),
        probe("newest 100", format!("{transactions}?limit=100")),
        // The overview reads every posted row of the last 25 months (net
        // worth, a year of spending, what recurs).
        page("dashboard overview", "/".to_owned()),
        page("dashboard account page", format!("/accounts/{account}")),
        page(
            "dashboard search",
            format!("/accounts/{account}?q={merchant}"),
        ),
        // Text on no row: without an index, every row of the account is
        // read to find that out.
        page(
            "dashboard search, no match",
            format!("/accounts/{account}?q=bookshop"),
        ),
    ];
    // Under load, a whole list only while it is one a client reads at once;
    // a bigger one is measured once below (first byte, memory).
    if rows <= 10_000 {
        probes.push(probe("full list", transactions.clone()));
    }

    // The bare server answers each path with what Tributary answered.
    let mut answers = HashMap::new();
    for probe in &probes {
        let fetched = fetch(tributary, &probe.path, &probe.headers).await?;
        answers.insert(
            probe.path.clone(),
            bare::Stored {
                body: fetched.body,
                content_type: "application/json".to_owned(),
                etag: fetched.etag,
            },
        );
    }
    // A client that asks again with the ETag it got, the data unchanged.
    let listing = probes
        .iter()
        .rev()
        .find(|p| p.path.starts_with(&transactions))
        .map(|p| p.path.clone())
        .unwrap_or_default();
    let etag = answers
        .get(&listing)
        .and_then(|stored| stored.etag.clone())
        .context("the listing has no ETag")?;
    probes.push(Probe {
        name: "unchanged (If-None-Match)",
        path: listing,
        headers: vec![auth.clone(), ("if-none-match", etag)],
        expect: 304,
    });
    let (bare_server, bare) = bare::start(Arc::new(answers))?;

    let mut steady_rows = Vec::new();
    for probe in &probes {
        let headers: Vec<(&str, &str)> = probe
            .headers
            .iter()
            .map(|(n, v)| (*n, v.as_str()))
            .collect();
        let request = load::request(&probe.path, &headers);
        let mut ours = Vec::new();
        let mut theirs = Vec::new();
        for _ in 0..options.rounds {
            let duration = Duration::from_secs(options.seconds);
            let connections = options.connections;
            ours.push(load::drive(tributary, &request, probe.expect, connections, duration).await?);
            theirs.push(load::drive(bare, &request, probe.expect, connections, duration).await?);
        }
        let ours = median(ours);
        let theirs = median(theirs);
        if STEADY_PROBES.contains(&probe.name) {
            // Half the most it served, sent on a fixed schedule.
            let rate = (ours.per_second() / 2).max(1);
            let duration = Duration::from_secs(options.seconds);
            let at_rate = |server| {
                load::drive_at_rate(
                    server,
                    &request,
                    probe.expect,
                    options.connections,
                    rate,
                    duration,
                )
            };
            let steady = at_rate(tributary).await?;
            // The bare server at the same rate: what the machine and the
            // load client alone add to a p99 on these two cores.
            let floor = at_rate(bare).await?;
            steady_rows.push(format!(
                "| {backend} | {rows} | {} | {} | {} | {} | {} | {} | {} |",
                probe.name,
                ours.per_second(),
                steady.per_second(),
                steady.percentile(500),
                steady.percentile(990),
                steady.percentile(999),
                floor.percentile(990),
            ));
        }
        let ratio_permille = ours.per_second() * 1000 / theirs.per_second().max(1);
        println!(
            "| {backend} | {rows} | {} | {} | {} | {}.{:03} | {} | {} | {} |",
            probe.name,
            ours.per_second(),
            theirs.per_second(),
            ratio_permille / 1000,
            ratio_permille % 1000,
            ours.percentile(500),
            ours.percentile(990),
            ours.percentile(999),
        );
    }
    let loaded = server.memory()?;

    // The whole list once, streamed: when its first byte arrives, how long
    // the whole takes, and the server's peak memory meanwhile.
    server.reset_peak()?;
    let whole = fetch(tributary, &transactions, &[auth]).await?;
    let streamed = server.memory()?;
    eprintln!(
        "-- {backend} {rows}: server RSS idle {} MiB, after the load {} MiB; full list of {} bytes: \
         first byte {} ms, whole {} ms, peak RSS {} MiB",
        idle.rss_mib,
        loaded.rss_mib,
        whole.body.len(),
        whole.first_byte.as_millis(),
        whole.whole.as_millis(),
        streamed.peak_mib,
    );
    // The dashboard's worst search: text on no row, so every row of the
    // account is read to find that out.
    let nowhere = format!("/accounts/{account}?q=card+payment+0%3C");
    let searched = fetch(tributary, &nowhere, &[cookie]).await?;
    eprintln!(
        "-- {backend} {rows}: dashboard search matching no row: {} ms",
        searched.whole.as_millis()
    );
    bare_server.stop(true).await;
    // Like the whole list, the MCP tools (one of which sums every row) are
    // compared while a client would read such an account at once.
    let mcp = if rows <= 10_000 {
        mcp::compare(
            tributary,
            &key,
            account,
            (backend, rows),
            (options.rounds, options.seconds, options.connections),
        )
        .await?
    } else {
        Vec::new()
    };
    Ok(Tables {
        mcp,
        steady: steady_rows,
    })
}

/// A GET that must answer 200.
async fn fetch(
    addr: SocketAddr,
    path: &str,
    headers: &[(&'static str, String)],
) -> anyhow::Result<load::Fetched> {
    let headers: Vec<(&str, &str)> = headers.iter().map(|(n, v)| (*n, v.as_str())).collect();
    let fetched = load::fetch(addr, &load::request(path, &headers)).await?;
    if fetched.status != 200 {
        bail!(
            "{path} answered {}: {}",
            fetched.status,
            String::from_utf8_lossy(&fetched.body)
        );
    }
    Ok(fetched)
}

/// The run with the median throughput.
fn median(mut runs: Vec<load::Measured>) -> load::Measured {
    runs.sort_by_key(load::Measured::per_second);
    runs.swap_remove(runs.len() / 2)
}

/// What a measurement reads with: the seeded user's API key and dashboard
/// session, and their account.
struct Seeded {
    key: String,
    dashboard_session: String,
    account: AccountId,
}

/// A user with one account of `rows` generated transactions, an API key
/// and a signed-in dashboard session.
fn seed(db: &Database, rows: usize) -> anyhow::Result<Seeded> {
    let now = chrono::Utc::now();
    let (user, account) = empty_account(db, "bench@example.com", now.naive_utc())?;
    insert_generated_transactions(db, account, rows, now.date_naive())?;
    let conn = &mut *db.conn()?;
    let key = tributary_auth::api_keys::issue(conn, user, "bench", None, now)?;
    let dashboard_session = tributary_auth::dashboard::start_session(conn, user, now.naive_utc())?;
    Ok(Seeded {
        key: key.plain_text,
        dashboard_session,
        account,
    })
}

/// Set in an import measurement's environment: `backend:transactions`.
const IMPORT_IN_CHILD: &str = "TRIBUTARY_BENCH_IMPORT";

/// One import measurement, printed as a row of the import table.
fn import_row(spec: &str) -> anyhow::Result<()> {
    let (backend, rows) = spec.split_once(':').context("backend:transactions")?;
    let rows: usize = rows.parse()?;
    let m = import::measure(backend, rows)?;
    let per_mille = m.import.as_micros() * 1000 / m.raw.as_micros().max(1);
    let per_second = u128::from(u64::try_from(rows).unwrap_or(u64::MAX)) * 1_000_000
        / m.import.as_micros().max(1);
    let enrichment_per_mille = m.enrichment.as_micros() * 1000 / m.import.as_micros().max(1);
    println!(
        "| {backend} | {rows} | {:.2} | {:.2} | {:.2} | {}.{:03} | {per_second} | {} | {:.2} | {}.{:03} |",
        m.first_pass.as_secs_f64(),
        m.import.as_secs_f64(),
        m.raw.as_secs_f64(),
        per_mille / 1000,
        per_mille % 1000,
        m.peak_rss_mib,
        m.enrichment.as_secs_f64(),
        enrichment_per_mille / 1000,
        enrichment_per_mille % 1000,
    );
    Ok(())
}

/// Set in the server process's environment: the database it serves.
const SERVE_DATABASE: &str = "TRIBUTARY_BENCH_SERVE_DATABASE";

/// The Personal API in a process of its own (this executable again), so
/// that its memory is the server's alone.
struct ServerProcess {
    child: std::process::Child,
    addr: SocketAddr,
}

/// A process's resident memory, now and at its peak, in MiB.
struct Memory {
    rss_mib: u64,
    peak_mib: u64,
}

impl ServerProcess {
    fn start(database: &TestDatabase) -> anyhow::Result<Self> {
        use std::io::BufRead as _;
        let mut child = std::process::Command::new(std::env::current_exe()?)
            .env(SERVE_DATABASE, database.url())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .context("starting the server process")?;
        let mut line = String::new();
        let stdout = child.stdout.take().context("the server's stdout")?;
        std::io::BufReader::new(stdout).read_line(&mut line)?;
        let addr = line
            .trim()
            .parse()
            .with_context(|| format!("the server process said `{}`", line.trim()))?;
        Ok(Self { child, addr })
    }

    /// VmRSS and VmHWM from /proc.
    fn memory(&self) -> anyhow::Result<Memory> {
        let pid = self.child.id().to_string();
        Ok(Memory {
            rss_mib: memory_mib(&pid, "VmRSS:")?,
            peak_mib: memory_mib(&pid, "VmHWM:")?,
        })
    }

    /// Starts VmHWM again from the present RSS (Linux `clear_refs` 5).
    fn reset_peak(&self) -> anyhow::Result<()> {
        reset_peak(&self.child.id().to_string())
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The server process: the Personal API over the given database,
/// assembled as the binary assembles it, on a free loopback port, which it
/// prints; it runs until killed.
fn serve(url: String) -> anyhow::Result<()> {
    let key = tributary_auth::keyring::generate_key();
    let config = Config::from_lookup(|name| match name {
        "TRIBUTARY_DATABASE_URL" => Some(url.clone()),
        "TRIBUTARY_BIND" => Some("127.0.0.1:0".into()),
        "TRIBUTARY_DEMO" | "TRIBUTARY_EMBEDDED_WORKER" => Some("0".into()),
        "TRIBUTARY_SECRET_KEY" => Some(key.clone()),
        _ => None,
    })?;
    // The bench measures the work of a tool call, not the per-credential
    // limit that stops a runaway assistant (docs/mcp.md).
    let config = Config {
        mcp_requests_per_minute: u32::MAX,
        ..config
    };
    actix_web::rt::System::new().block_on(async move {
        let parts = Parts {
            registry: Some(Registry::default()),
            ..Parts::default()
        };
        let started = Application::build(Interface::Personal, config, parts)?.bind()?;
        println!("{}", started.addrs[0]);
        started.server.await?;
        Ok(())
    })
}
