//! `make bench`: Tributary's read path measured beside a bare actix-web
//! server that sends the same bytes from memory, in the same run, so every
//! figure is a ratio that holds on another machine (docs/performance.md).
//!
//! For each backend and data set it seeds one account with N generated
//! transactions, starts the real Personal API in this process (the
//! application the binary runs) and the bare server, and alternates runs of
//! the built-in load client against each, taking the median.

mod bare;
mod load;

use anyhow::{Context as _, bail};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tributary_domain::access::Viewer;
use tributary_domain::ids::{AccountId, UserId};
use tributary_domain::model::{AccountKind, Provider};
use tributary_domain::snapshot::{ProviderSnapshot, SnapshotAccount, SnapshotInstitution};
use tributary_http::Config;
use tributary_http::server::{Application, Interface, Parts};
use tributary_providers::Registry;
use tributary_storage::connections::{self, NewConnection};
use tributary_storage::testing::{TestDatabase, insert_generated_transactions};
use tributary_storage::{Database, read, sync_apply, users};

const USAGE: &str = "\
tributary-bench [--backend sqlite|postgres|both] [--rows N[,N…]] [--seconds S] [--rounds R] [--connections C]

  --backend      which storage to measure [default: both; postgres needs TRIBUTARY_TEST_POSTGRES_URL
                 or a server at postgres://postgres@127.0.0.1:5432/test]
  --rows         transactions in the measured account, e.g. 10000,1000000 [default: 470,10000]
  --seconds      length of each run [default: 5]
  --rounds       runs per server, alternating; the median counts [default: 3]
  --connections  keep-alive connections of the load client [default: 16]
";

#[derive(Debug)]
struct Options {
    backends: Vec<String>,
    rows: Vec<usize>,
    seconds: u64,
    rounds: usize,
    connections: usize,
}

impl Options {
    fn parse() -> anyhow::Result<Self> {
        let mut options = Options {
            backends: vec!["sqlite".into(), "postgres".into()],
            rows: vec![470, 10_000],
            seconds: 5,
            rounds: 3,
            connections: 16,
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
                        .collect::<Result<_, _>>()
                        .with_context(|| format!("--rows: `{value}` is not a list of counts"))?;
                }
                "--seconds" => options.seconds = value.parse().context("--seconds")?,
                "--rounds" => options.rounds = value.parse().context("--rounds")?,
                "--connections" => options.connections = value.parse().context("--connections")?,
                other => bail!("unknown option {other}\n{USAGE}"),
            }
        }
        Ok(options)
    }
}

fn main() -> anyhow::Result<()> {
    let options = Options::parse()?;
    actix_web::rt::System::new().block_on(run(options))
}

async fn run(options: Options) -> anyhow::Result<()> {
    println!(
        "| backend | rows | request | Tributary req/s | bare req/s | ratio | p50 µs | p99 µs | p99.9 µs |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    for backend in &options.backends {
        for &rows in &options.rows {
            let database = match backend.as_str() {
                "sqlite" => TestDatabase::sqlite(),
                _ => TestDatabase::postgres()
                    .context("no PostgreSQL server answers (set TRIBUTARY_TEST_POSTGRES_URL)")?,
            };
            measure(&options, backend, rows, database).await?;
        }
    }
    Ok(())
}

/// One data set on one backend: every request of the table, against both
/// servers.
async fn measure(
    options: &Options,
    backend: &str,
    rows: usize,
    database: TestDatabase,
) -> anyhow::Result<()> {
    let seeding = Instant::now();
    let db = database.db().clone();
    let (key, account) = tokio::task::spawn_blocking(move || seed(&db, rows)).await??;
    eprintln!(
        "-- {backend}: {rows} transactions seeded in {:.1?}",
        seeding.elapsed()
    );
    let (server, tributary) = serve(&database)?;

    let transactions = format!("/api/v1/accounts/{account}/transactions");
    let mut requests = vec![
        ("accounts".to_owned(), "/api/v1/accounts".to_owned()),
        ("newest 100".to_owned(), format!("{transactions}?limit=100")),
    ];
    // A whole list is measured only while it is a list a client would read
    // at once; past that, paging is the way (and #13's streaming).
    if rows <= 10_000 {
        requests.push(("full list".to_owned(), transactions.clone()));
    }

    // The bare server answers each path with what Tributary answered.
    let mut answers = HashMap::new();
    for (_, path) in &requests {
        let (status, body) =
            load::fetch(tributary, &load::request(path, &[("x-api-key", &key)])).await?;
        if status != 200 {
            bail!(
                "{path} answered {status}: {}",
                String::from_utf8_lossy(&body)
            );
        }
        answers.insert(path.clone(), (body, "application/json".to_owned()));
    }
    let (bare_server, bare) = bare::start(Arc::new(answers))?;

    for (name, path) in &requests {
        let request = load::request(path, &[("x-api-key", &key)]);
        let mut ours = Vec::new();
        let mut theirs = Vec::new();
        for _ in 0..options.rounds {
            let duration = Duration::from_secs(options.seconds);
            ours.push(load::drive(tributary, &request, options.connections, duration).await?);
            theirs.push(load::drive(bare, &request, options.connections, duration).await?);
        }
        let ours = median(ours);
        let theirs = median(theirs);
        let ratio_permille = ours.per_second() * 1000 / theirs.per_second().max(1);
        println!(
            "| {backend} | {rows} | {name} | {} | {} | {}.{:03} | {} | {} | {} |",
            ours.per_second(),
            theirs.per_second(),
            ratio_permille / 1000,
            ratio_permille % 1000,
            ours.percentile(500),
            ours.percentile(990),
            ours.percentile(999),
        );
    }
    bare_server.stop(true).await;
    server.stop(true).await;
    Ok(())
}

/// The run with the median throughput.
fn median(mut runs: Vec<load::Measured>) -> load::Measured {
    runs.sort_by_key(load::Measured::per_second);
    runs.swap_remove(runs.len() / 2)
}

/// A user with one account of `rows` generated transactions; their API key
/// and the account's id.
fn seed(db: &Database, rows: usize) -> anyhow::Result<(String, AccountId)> {
    let now = chrono::Utc::now();
    let mut conn = db.conn()?;
    let user = users::create_personal_user(&mut conn, "bench@example.com", now.naive_utc())?;
    let institution = SnapshotInstitution {
        provider_institution_id: "bench".into(),
        name: "Bench Bank".into(),
        logo_url: None,
    };
    let connection = connections::unscheduled_connection(
        &mut conn,
        &NewConnection {
            user_id: user.id,
            provider: Provider::Csv,
            institution: &institution,
            settings: &serde_json::json!({}),
            sealed_credentials: None,
            consent_expires_at: None,
            now: now.naive_utc(),
        },
    )?;
    let snapshot = ProviderSnapshot {
        institution,
        accounts: vec![SnapshotAccount {
            provider_account_id: "bench-checking".into(),
            name: "Checking".into(),
            kind: AccountKind::Checking,
            currency: "EUR".into(),
            mask: Some("0042".into()),
            balance: None,
            transactions: Vec::new(),
            holdings: None,
        }],
        notices: Vec::new(),
        pending_match: None,
        complete: false,
    };
    sync_apply::apply_snapshot(&mut conn, connection.id, &snapshot, now.naive_utc())?;
    let account = only_account(&mut conn, user.id)?;
    drop(conn);
    insert_generated_transactions(db, account, rows, now.date_naive())?;
    let key = tributary_auth::api_keys::issue(&mut *db.conn()?, user.id, "bench", None, now)?;
    Ok((key.plain_text, account))
}

fn only_account(
    conn: &mut tributary_storage::AnyConnection,
    user: UserId,
) -> anyhow::Result<AccountId> {
    read::list_accounts(conn, &Viewer::whole_user(user))?
        .first()
        .map(|account| account.id)
        .context("the seeded account is missing")
}

/// The Personal API over `database`, assembled as the binary assembles it,
/// on a free loopback port.
fn serve(database: &TestDatabase) -> anyhow::Result<(actix_web::dev::ServerHandle, SocketAddr)> {
    let url = database.url();
    let key = tributary_auth::keyring::generate_key();
    let config = Config::from_lookup(|name| match name {
        "TRIBUTARY_DATABASE_URL" => Some(url.clone()),
        "TRIBUTARY_BIND" => Some("127.0.0.1:0".into()),
        "TRIBUTARY_DEMO" | "TRIBUTARY_EMBEDDED_WORKER" => Some("0".into()),
        "TRIBUTARY_SECRET_KEY" => Some(key.clone()),
        _ => None,
    })?;
    let parts = Parts {
        database: Some(database.db().clone()),
        registry: Some(Registry::default()),
        ..Parts::default()
    };
    let started = Application::build(Interface::Personal, config, parts)?.bind()?;
    let handle = started.server.handle();
    let addr = started.addrs[0];
    actix_web::rt::spawn(started.server);
    Ok((handle, addr))
}
