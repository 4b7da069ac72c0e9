//! Test support: every storage test runs on a temporary SQLite file and on a
//! throwaway PostgreSQL database, created for the test and dropped after it.
//!
//! PostgreSQL is found at `TRIBUTARY_TEST_POSTGRES_URL` (default
//! `postgres://postgres@127.0.0.1:5432/test`). When no server answers, the
//! PostgreSQL half is skipped with a message, unless
//! `TRIBUTARY_REQUIRE_POSTGRES=1`, which turns the skip into a failure.

use crate::db::{AnyConnection, Backend, Database, DatabaseUrl, PoolOptions};
use diesel::connection::SimpleConnection;
use rand::RngExt as _;
use std::time::Duration;
use tributary_domain::ids::{AccountId, UserId};

pub const DEFAULT_POSTGRES_URL: &str = "postgres://postgres@127.0.0.1:5432/test";

/// A migrated, empty database that is removed when dropped.
#[derive(Debug)]
pub struct TestDatabase {
    db: Option<Database>,
    url: DatabaseUrl,
    cleanup: Cleanup,
}

#[derive(Debug)]
enum Cleanup {
    Sqlite(#[allow(dead_code)] tempfile::TempDir),
    Postgres { admin_url: String, name: String },
}

impl TestDatabase {
    pub fn db(&self) -> &Database {
        self.db.as_ref().expect("database is present until drop")
    }

    pub fn backend(&self) -> Backend {
        self.url.backend()
    }

    /// The URL, as `TRIBUTARY_DATABASE_URL` would carry it.
    pub fn url(&self) -> String {
        match &self.url {
            DatabaseUrl::Sqlite(path) => format!("sqlite://{}", path.display()),
            DatabaseUrl::Postgres(url) => url.clone(),
        }
    }

    /// A temporary SQLite file, migrated.
    pub fn sqlite() -> TestDatabase {
        let dir = tempfile::tempdir().expect("temporary directory");
        let url = DatabaseUrl::Sqlite(dir.path().join("tributary.db"));
        let db = Database::connect(&url, &test_pool_options()).expect("open SQLite test database");
        db.migrate().expect("migrate SQLite test database");
        TestDatabase {
            db: Some(db),
            url,
            cleanup: Cleanup::Sqlite(dir),
        }
    }

    /// A fresh PostgreSQL database, migrated; `None` (after saying so) when
    /// no server answers and PostgreSQL is not required.
    pub fn postgres() -> Option<TestDatabase> {
        let admin_url = std::env::var("TRIBUTARY_TEST_POSTGRES_URL")
            .unwrap_or_else(|_| DEFAULT_POSTGRES_URL.to_owned());
        let mut admin = match DatabaseUrl::parse(&admin_url).and_then(|url| url.establish()) {
            Ok(conn) => conn,
            Err(err) => {
                if postgres_required() {
                    panic!(
                        "PostgreSQL is required (TRIBUTARY_REQUIRE_POSTGRES=1) but unreachable: {err}"
                    );
                }
                announce_skip(&err);
                return None;
            }
        };
        let name = format!("tributary_test_{:016x}", rand::rng().random::<u64>());
        clone_migrated_template(&mut admin, &admin_url, &name);
        let test_url = with_database_name(&admin_url, &name);
        let url = DatabaseUrl::parse(&test_url).expect("test database URL");
        let db =
            Database::connect(&url, &test_pool_options()).expect("open PostgreSQL test database");
        assert!(
            !db.has_pending_migrations().expect("read the migrations"),
            "the template is migrated"
        );
        Some(TestDatabase {
            db: Some(db),
            url,
            cleanup: Cleanup::Postgres { admin_url, name },
        })
    }

    /// PostgreSQL only: stops (`false`: existing sessions are ended, new
    /// ones refused, as when the server goes away) or resumes accepting
    /// connections to this database.
    pub fn set_postgres_accepting(&self, accept: bool) {
        let Cleanup::Postgres { admin_url, name } = &self.cleanup else {
            panic!("set_postgres_accepting is for PostgreSQL test databases");
        };
        let mut admin = DatabaseUrl::parse(admin_url)
            .and_then(|url| url.establish())
            .expect("admin connection");
        admin
            .batch_execute(&format!(
                "ALTER DATABASE {name} WITH ALLOW_CONNECTIONS {accept}"
            ))
            .expect("alter database");
        if !accept {
            admin
                .batch_execute(&format!(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{name}'"
                ))
                .expect("end sessions");
        }
    }

    /// SQLite always, PostgreSQL when reachable (or required).
    pub fn all() -> Vec<TestDatabase> {
        let mut all = vec![TestDatabase::sqlite()];
        all.extend(TestDatabase::postgres());
        all
    }
}

impl Drop for TestDatabase {
    fn drop(&mut self) {
        // Close the pool before dropping the database it points at.
        self.db.take();
        if let Cleanup::Postgres { admin_url, name } = &self.cleanup
            && let Ok(mut admin) = DatabaseUrl::parse(admin_url).and_then(|url| url.establish())
        {
            // Best effort: a leftover test database is harmless.
            let _ = admin.batch_execute(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"));
        }
    }
}

/// Runs `test` on every backend, naming the backend if it panics.
pub fn on_every_backend(test: impl Fn(&Database)) {
    for database in TestDatabase::all() {
        eprintln!("-- on {:?}", database.backend());
        test(database.db());
    }
}

/// Says once per test process, past libtest's output capture (which hides
/// `eprintln!` of passing tests), that the PostgreSQL halves were skipped.
fn announce_skip(err: &dyn std::fmt::Display) {
    use std::io::Write as _;
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED: the PostgreSQL half of the storage tests in this binary ({}); \
             set TRIBUTARY_REQUIRE_POSTGRES=1 to fail instead",
            err.to_string().trim()
        );
    });
}

/// Creates the database `name` as a copy of a migrated template (`CREATE
/// DATABASE … TEMPLATE`), which is much faster than migrating each test
/// database. The template is named after the migrations' contents, so a
/// changed migration builds a new one; it is built under a name of its own
/// and renamed once migrated, so a build cut short is never cloned. An
/// advisory lock serialises building and cloning across test processes
/// (PostgreSQL refuses to copy a template that another session is using).
fn clone_migrated_template(admin: &mut AnyConnection, admin_url: &str, name: &str) {
    use diesel::RunQueryDsl;
    use diesel::sql_types::{Bool, Text};

    #[derive(diesel::QueryableByName)]
    struct Exists {
        #[diesel(sql_type = Bool)]
        exists: bool,
    }

    const LOCK: i64 = 0x7472_6962_7574; // "tribut"
    let template = format!("tributary_template_{:016x}", migrations_fingerprint());
    let AnyConnection::Postgresql(pg) = admin else {
        panic!("the admin connection is PostgreSQL");
    };
    pg.batch_execute(&format!("SELECT pg_advisory_lock({LOCK})"))
        .expect("take the template lock");
    let exists =
        diesel::sql_query("SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1) AS exists")
            .bind::<Text, _>(&template)
            .get_result::<Exists>(pg)
            .expect("look for the template")
            .exists;
    if !exists {
        let building = format!("{template}_building");
        // One statement a call: neither runs inside a transaction block.
        pg.batch_execute(&format!("DROP DATABASE IF EXISTS {building} WITH (FORCE)"))
            .expect("drop a template build cut short");
        pg.batch_execute(&format!("CREATE DATABASE {building}"))
            .expect("create the template");
        let url =
            DatabaseUrl::parse(&with_database_name(admin_url, &building)).expect("template URL");
        let db = Database::connect(&url, &test_pool_options()).expect("open the template");
        db.migrate().expect("migrate the template");
        // No session may stay connected to a template being copied.
        drop(db);
        pg.batch_execute(&format!("ALTER DATABASE {building} RENAME TO {template}"))
            .expect("name the template");
    }
    let cloned = pg.batch_execute(&format!("CREATE DATABASE {name} TEMPLATE {template}"));
    pg.batch_execute(&format!("SELECT pg_advisory_unlock({LOCK})"))
        .expect("release the template lock");
    cloned.expect("create the test database from the template");
}

/// A hash of the PostgreSQL migrations' names and contents.
fn migrations_fingerprint() -> u64 {
    use std::hash::{DefaultHasher, Hash as _, Hasher as _};
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../migrations/postgres");
    let mut files: Vec<std::path::PathBuf> = std::fs::read_dir(&root)
        .expect("the PostgreSQL migrations")
        .flat_map(|dir| std::fs::read_dir(dir.expect("a migration").path()).expect("a migration"))
        .map(|file| file.expect("a migration file").path())
        .collect();
    files.sort();
    let mut hasher = DefaultHasher::new();
    for file in files {
        file.strip_prefix(&root).unwrap_or(&file).hash(&mut hasher);
        std::fs::read(&file)
            .expect("a migration file")
            .hash(&mut hasher);
    }
    hasher.finish()
}

fn postgres_required() -> bool {
    std::env::var("TRIBUTARY_REQUIRE_POSTGRES").is_ok_and(|v| v == "1")
}

fn test_pool_options() -> PoolOptions {
    PoolOptions {
        max_size: 4,
        connection_timeout: Duration::from_secs(10),
        sqlite_busy_timeout: Duration::from_secs(10),
    }
}

/// `postgres://u@h:5432/test?x=y` with `test` replaced by `name`.
fn with_database_name(url: &str, name: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((base, query)) => (base, Some(query)),
        None => (url, None),
    };
    let scheme_end = base.find("://").map_or(0, |i| i + 3);
    let host_and_path = &base[scheme_end..];
    let host = host_and_path
        .split_once('/')
        .map_or(host_and_path, |(host, _)| host);
    let mut out = format!("{}{host}/{name}", &base[..scheme_end]);
    if let Some(query) = query {
        out.push('?');
        out.push_str(query);
    }
    out
}

/// Every stored row of every table as text (for SQLite, the raw bytes of the
/// database file and its write-ahead log), so a test can search the whole
/// database for something that must not be there.
pub fn dump(db: &Database) -> String {
    use diesel::RunQueryDsl;
    use diesel::sql_types::Text;

    #[derive(diesel::QueryableByName)]
    struct Line {
        #[diesel(sql_type = Text)]
        line: String,
    }

    let mut conn = db.conn().expect("connection for dump");
    match &mut *conn {
        AnyConnection::Sqlite(_) => {
            let DatabaseUrl::Sqlite(path) = db.url() else {
                unreachable!("SQLite connection on a PostgreSQL URL")
            };
            let mut bytes = std::fs::read(path).expect("read SQLite file");
            let mut wal = path.clone().into_os_string();
            wal.push("-wal");
            if let Ok(more) = std::fs::read(&wal) {
                bytes.extend(more);
            }
            String::from_utf8_lossy(&bytes).into_owned()
        }
        AnyConnection::Postgresql(pg) => {
            let tables: Vec<Line> = diesel::sql_query(
                "SELECT table_name::text AS line FROM information_schema.tables WHERE table_schema = 'public'",
            )
            .load(pg)
            .expect("list tables");
            let mut out = String::new();
            for table in tables {
                let rows: Vec<Line> = diesel::sql_query(format!(
                    "SELECT row_to_json(t)::text AS line FROM \"{}\" t",
                    table.line
                ))
                .load(pg)
                .expect("dump table");
                for row in rows {
                    out.push_str(&row.line);
                    out.push('\n');
                }
            }
            out
        }
    }
}

/// Every stored transaction of the user, pending ones too, as (date,
/// amount, description), sorted: what two ways of importing the same files
/// must agree on.
pub fn transaction_rows(db: &Database, user_id: UserId) -> Vec<(String, String, String)> {
    use crate::read::{self, TransactionFilter};
    let conn = &mut *db.conn().expect("connection for reading");
    let all = TransactionFilter {
        include_pending: true,
        ..Default::default()
    };
    let viewer = tributary_domain::access::Viewer::whole_user(user_id);
    let mut rows = Vec::new();
    for account in read::list_accounts(conn, &viewer).expect("accounts") {
        for t in read::list_transactions(conn, account.id, &all, None, None).expect("transactions")
        {
            rows.push((
                t.date.to_string(),
                t.amount.to_string(),
                t.description.unwrap_or_default(),
            ));
        }
    }
    rows.sort();
    rows
}

/// How many rows `table` holds (a table of the schema, named by the test).
pub fn row_count(db: &Database, table: &str) -> i64 {
    use diesel::RunQueryDsl;
    #[derive(diesel::QueryableByName)]
    struct Count {
        #[diesel(sql_type = diesel::sql_types::BigInt)]
        n: i64,
    }
    let mut conn = db.conn().expect("connection for a count");
    let query = format!("SELECT COUNT(*) AS n FROM {table}");
    let counted: Count = match &mut *conn {
        crate::db::AnyConnection::Sqlite(c) => diesel::sql_query(query).get_result(c),
        crate::db::AnyConnection::Postgresql(c) => diesel::sql_query(query).get_result(c),
    }
    .unwrap_or_else(|err| panic!("count rows of {table}: {err}"));
    counted.n
}

/// Every row of every table as JSON text, on either backend: what the
/// database holds as data (unlike [`dump`], not the bytes of freed pages).
pub fn dump_rows(db: &Database) -> String {
    use diesel::RunQueryDsl;
    use diesel::sql_types::Text;

    #[derive(diesel::QueryableByName)]
    struct Line {
        #[diesel(sql_type = Text)]
        line: String,
    }

    let mut conn = db.conn().expect("connection for dump");
    let mut out = String::new();
    match &mut *conn {
        AnyConnection::Sqlite(c) => {
            let tables: Vec<Line> = diesel::sql_query(
                // Not the text index (`transactions_text` and its shadow
                // tables): it reads `transactions`, and what it keeps of
                // them is trigrams in binary pages.
                "SELECT name AS line FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' \
                 AND name NOT LIKE 'transactions_text%'",
            )
            .load(c)
            .expect("list tables");
            for table in tables {
                let columns: Vec<Line> = diesel::sql_query(format!(
                    "SELECT name AS line FROM pragma_table_info('{}')",
                    table.line
                ))
                .load(c)
                .expect("list columns");
                let fields: Vec<String> = columns
                    .iter()
                    .map(|col| format!("'{0}', \"{0}\"", col.line))
                    .collect();
                let rows: Vec<Line> = diesel::sql_query(format!(
                    "SELECT json_object({}) AS line FROM \"{}\"",
                    fields.join(", "),
                    table.line
                ))
                .load(c)
                .expect("dump table");
                for row in rows {
                    out.push_str(&row.line);
                    out.push('\n');
                }
            }
        }
        AnyConnection::Postgresql(_) => {
            drop(conn);
            return dump(db);
        }
    }
    out
}

/// The shared test data: `../shared/testdata` beside the repository, or
/// `TRIBUTARY_TESTDATA`.
pub fn testdata_root() -> std::path::PathBuf {
    std::env::var_os("TRIBUTARY_TESTDATA").map_or_else(
        || std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/testdata"),
        std::path::PathBuf::from,
    )
}

/// The bytes of a file under the shared test data (`../shared/testdata`
/// beside the repository, or `TRIBUTARY_TESTDATA`), read at run time.
pub fn testdata_bytes(relative: &str) -> Vec<u8> {
    let root = testdata_root();
    let path = root.join(relative);
    std::fs::read(&path).unwrap_or_else(|err| {
        panic!(
            "test data {} is missing ({err}): the tests expect ../shared/testdata beside the repository, \
             or TRIBUTARY_TESTDATA pointing at it",
            path.display()
        )
    })
}

/// The files under `dir` of the shared test data (recursively) whose
/// extension is one of `extensions`, as paths relative to the test data,
/// sorted.
pub fn testdata_files(dir: &str, extensions: &[&str]) -> Vec<String> {
    let root = testdata_root();
    let mut files = Vec::new();
    let mut pending = vec![root.join(dir)];
    while let Some(folder) = pending.pop() {
        let entries = std::fs::read_dir(&folder)
            .unwrap_or_else(|err| panic!("test data folder {} ({err})", folder.display()));
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                pending.push(path);
            } else if path
                .extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| extensions.contains(&e))
            {
                files.push(
                    path.strip_prefix(&root)
                        .unwrap_or(&path)
                        .to_string_lossy()
                        .into_owned(),
                );
            }
        }
    }
    files.sort();
    files
}

/// The text of a UTF-8 file under the shared test data.
pub fn testdata(relative: &str) -> String {
    String::from_utf8(testdata_bytes(relative))
        .unwrap_or_else(|_| panic!("test data {relative} is not UTF-8"))
}

/// Makes every insert and update fail as a full disk does on each backend
/// (SQLite: "database or disk is full"; PostgreSQL: SQLSTATE 53100
/// `disk_full`, "No space left on device"), by a trigger on every table.
/// Reads and deletes still work, as on a real full disk.
pub fn simulate_full_disk(db: &Database) {
    use diesel::RunQueryDsl;
    use diesel::connection::SimpleConnection;
    use diesel::sql_types::Text;

    #[derive(diesel::QueryableByName)]
    struct Table {
        #[diesel(sql_type = Text)]
        name: String,
    }

    let mut conn = db.conn().expect("connection");
    match &mut *conn {
        AnyConnection::Sqlite(c) => {
            // Not the text index (`transactions_text` and its shadow
            // tables): a virtual table takes no trigger, and every write to
            // it comes from a write to `transactions`, which fails first.
            let tables: Vec<Table> = diesel::sql_query(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' \
                 AND name NOT LIKE 'transactions_text%'",
            )
            .load(c)
            .expect("tables");
            for Table { name } in tables {
                for event in ["INSERT", "UPDATE"] {
                    c.batch_execute(&format!(
                        "CREATE TRIGGER full_{event}_{name} BEFORE {event} ON \"{name}\" \
                         BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END;"
                    ))
                    .expect("trigger");
                }
            }
        }
        AnyConnection::Postgresql(c) => {
            c.batch_execute(
                "CREATE FUNCTION simulated_disk_full() RETURNS trigger LANGUAGE plpgsql AS $$ \
                 BEGIN RAISE EXCEPTION 'could not extend file \"base/1/2\": No space left on device' \
                 USING ERRCODE = 'disk_full'; END $$;",
            )
            .expect("function");
            let tables: Vec<Table> = diesel::sql_query(
                "SELECT table_name::text AS name FROM information_schema.tables \
                 WHERE table_schema = 'public' AND table_type = 'BASE TABLE'",
            )
            .load(c)
            .expect("tables");
            for Table { name } in tables {
                c.batch_execute(&format!(
                    "CREATE TRIGGER simulated_disk_full BEFORE INSERT OR UPDATE ON \"{name}\" \
                     FOR EACH ROW EXECUTE FUNCTION simulated_disk_full()"
                ))
                .expect("trigger");
            }
        }
    }
}

/// The payees of generated transactions.
pub const GENERATED_MERCHANTS: [&str; 6] = [
    "Corner Grocery",
    "City Transit",
    "Coffee Roasters",
    "Pharmacy Plus",
    "Book Nook",
    "Fuel Stop",
];

/// Inserts `count` generated posted transactions into `account`, a handful a
/// day going back from `newest`, with the multi-row inserts a sync uses, in
/// batches (memory stays flat at any count): the benchmark's data sets.
pub fn insert_generated_transactions(
    db: &Database,
    account: tributary_domain::ids::AccountId,
    count: usize,
    newest: chrono::NaiveDate,
) -> crate::StorageResult<()> {
    use tributary_domain::money::Decimal;
    use tributary_domain::snapshot::SnapshotTransaction;
    const BATCH: usize = 10_000;
    const PER_DAY: usize = 7;
    let mut conn = db.conn()?;
    let now = chrono::Utc::now().naive_utc();
    let mut next = 0;
    while next < count {
        let batch: Vec<SnapshotTransaction> = (next..count.min(next + BATCH))
            .map(|n| {
                let days = i64::try_from(n / PER_DAY).unwrap_or(i64::MAX);
                let merchant = GENERATED_MERCHANTS[n % GENERATED_MERCHANTS.len()];
                SnapshotTransaction {
                    // Calls with another `newest` add rows of their own.
                    provider_id: format!("gen-{newest}-{n}"),
                    pending_provider_id: None,
                    is_pending: false,
                    date: newest - chrono::Duration::days(days),
                    amount: -Decimal::new(i64::try_from(n % 9_973).unwrap_or(1) + 101, 2),
                    currency: "EUR".into(),
                    merchant: Some(merchant.into()),
                    description: Some(format!("{merchant} card payment {n}")),
                    hints: Default::default(),
                }
            })
            .collect();
        insert_batch(&mut conn, account, &batch, now)?;
        next += batch.len();
    }
    Ok(())
}

/// Sets when a connection's consent at its provider ends.
pub fn set_consent_expiry(
    conn: &mut AnyConnection,
    connection: tributary_domain::ids::ConnectionId,
    at: chrono::NaiveDateTime,
) {
    use crate::schema::connections;
    use diesel::prelude::*;
    diesel::update(connections::table.find(connection.get()))
        .set(connections::consent_expires_at.eq(Some(at)))
        .execute(conn)
        .expect("consent expiry set");
}

/// Makes every pending webhook delivery due at once (and releases its
/// lease): the tests' stand-in for the retry schedule's waits.
pub fn webhook_deliveries_due(db: &Database) {
    use crate::schema::webhook_deliveries;
    use diesel::prelude::*;
    diesel::update(webhook_deliveries::table.filter(webhook_deliveries::status.eq("pending")))
        .set((
            webhook_deliveries::next_attempt_at.eq(chrono::DateTime::UNIX_EPOCH.naive_utc()),
            webhook_deliveries::lease_until.eq(None::<chrono::NaiveDateTime>),
        ))
        .execute(&mut *db.conn().expect("a connection"))
        .expect("deliveries made due");
}

/// Inserts `rows` into `account` as they are, with the multi-row inserts a
/// sync uses, in one transaction: no reconciling, no parsing (the
/// benchmark's raw-insert baseline for imports).
pub fn insert_transactions(
    db: &Database,
    account: tributary_domain::ids::AccountId,
    rows: &[tributary_domain::snapshot::SnapshotTransaction],
) -> crate::StorageResult<()> {
    insert_batch(
        &mut *db.conn()?,
        account,
        rows,
        chrono::Utc::now().naive_utc(),
    )
}

fn insert_batch(
    conn: &mut crate::AnyConnection,
    account: tributary_domain::ids::AccountId,
    rows: &[tributary_domain::snapshot::SnapshotTransaction],
    now: chrono::NaiveDateTime,
) -> crate::StorageResult<()> {
    conn.atomically(|conn| {
        use diesel::prelude::*;
        let user_id: i64 = crate::schema::accounts::table
            .find(account.get())
            .select(crate::schema::accounts::user_id)
            .first(conn)?;
        let seq = crate::changes::next_seq(conn, UserId::new(user_id))?;
        let rules = crate::rules::load(conn, UserId::new(user_id))?;
        Ok(crate::backend::insert_transactions(
            conn,
            (account, &rules),
            rows,
            seq,
            now,
        )?)
    })
}

/// A posted transaction as a statement or provider would give it: an id,
/// a day, an amount and a description, nothing more.
pub fn posted_row(
    provider_id: &str,
    date: chrono::NaiveDate,
    amount: tributary_domain::money::Decimal,
    currency: &str,
    description: &str,
) -> tributary_domain::snapshot::SnapshotTransaction {
    tributary_domain::snapshot::SnapshotTransaction {
        provider_id: provider_id.into(),
        pending_provider_id: None,
        is_pending: false,
        date,
        amount,
        currency: currency.into(),
        merchant: None,
        description: Some(description.into()),
        hints: Default::default(),
    }
}

/// A new user with one empty checking account (a statement connection of
/// its own): the user and the account.
pub fn empty_account(
    db: &Database,
    email: &str,
    now: chrono::NaiveDateTime,
) -> crate::StorageResult<(UserId, AccountId)> {
    use crate::connections::{self, NewConnection};
    use crate::{sync_apply, users};
    use tributary_domain::model::{AccountKind, Provider};
    use tributary_domain::snapshot::{ProviderSnapshot, SnapshotAccount, SnapshotInstitution};
    let mut conn = db.conn()?;
    let user = users::create_personal_user(&mut conn, email, now)?;
    let institution = SnapshotInstitution {
        provider_institution_id: "bench".into(),
        name: "Bench Bank".into(),
        logo_url: None,
    };
    let connection = connections::unscheduled_connection(
        &mut conn,
        &NewConnection {
            user_id: user.id,
            provider: Provider::CSV,
            institution: &institution,
            settings: &serde_json::json!({}),
            sealed_credentials: None,
            consent_expires_at: None,
            now,
        },
    )?;
    let snapshot = ProviderSnapshot {
        institution,
        accounts: vec![SnapshotAccount {
            balance_history: Vec::new(),
            institution: None,
            provider_account_id: "bench-checking".into(),
            name: "Checking".into(),
            kind: AccountKind::Checking,
            currency: "EUR".into(),
            mask: Some("0042".into()),
            balance: None,
            transactions: Vec::new(),
            investment_transactions: Vec::new(),
            liability: None,
            holdings: None,
        }],
        notices: Vec::new(),
        pending_match: None,
        complete: false,
    };
    sync_apply::apply_snapshot(&mut conn, connection.id, &snapshot, now)?;
    let account = only_account(&mut conn, user.id)?;
    Ok((user.id, account))
}

/// The user's one account.
fn only_account(conn: &mut AnyConnection, user: UserId) -> crate::StorageResult<AccountId> {
    use tributary_domain::access::Viewer;
    Ok(crate::read::list_accounts(conn, &Viewer::whole_user(user))?
        .first()
        .map(|account| account.id)
        .expect("the seeded account is there"))
}

/// Waits, without sleeping, until `moved` holds (at most 10 s); how long
/// that took.
pub fn until(moved: impl Fn() -> bool) -> Duration {
    let started = std::time::Instant::now();
    while !moved() {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "nothing moved in 10 s"
        );
        std::thread::yield_now();
    }
    started.elapsed()
}

/// Starts `db`'s watcher of other processes' writes and waits until it
/// has connected: it then moves both epochs once (what happened before it
/// watched is unknown), which a test must not take for a write, nor see
/// end what it just cached.
pub fn watching(db: &Database) {
    let unwatched = db.freshness().peek();
    let _ = (db.freshness().credentials(), db.freshness().data());
    until(|| db.freshness().peek() != unwatched);
}

#[cfg(test)]
mod tests {
    #[test]
    fn database_name_is_replaced_and_the_rest_kept() {
        assert_eq!(
            super::with_database_name(
                "postgres://postgres@127.0.0.1:5432/test?sslmode=disable",
                "t1"
            ),
            "postgres://postgres@127.0.0.1:5432/t1?sslmode=disable"
        );
        assert_eq!(
            super::with_database_name("postgres://h", "t1"),
            "postgres://h/t1"
        );
    }
}
