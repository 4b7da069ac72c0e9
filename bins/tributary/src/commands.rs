//! What each subcommand does. Output is for people: plain lines and tables.

use crate::cli::{
    Cli, Command, ConnectionsCommand, KeysCommand, SecretsCommand, SyncArgs, UsersCommand,
};
use crate::connect::{self, ConnectCommand};
use crate::support::{find_user, public_base, report, when};
use crate::terminal::shown;
use anyhow::{Context as _, bail};
use std::sync::Arc;
use tributary_app::config::Config;
use tributary_app::connectors::{providers, sync_engine};
use tributary_app::database::open_database;
use tributary_app::links::reachable_base;
use tributary_auth::api_keys;
use tributary_domain::clock::{Clock, SystemClock};
use tributary_domain::email::normalize_email;
use tributary_domain::ids::{AccountId, ApiKeyId, ConnectionId};
use tributary_domain::model::SyncJobKind;
use tributary_providers::sync::SyncEngine;
use tributary_providers::worker::{StopSignal, Worker, worker_id};
use tributary_storage::{
    Database, DatabaseUrl, PoolOptions, StorageError, api_keys as key_store, connections, users,
};

pub fn run(cli: Cli) -> anyhow::Result<()> {
    let url =
        DatabaseUrl::parse(&cli.database_url).context("TRIBUTARY_DATABASE_URL / --database-url")?;
    if needs_database(&cli.command) {
        check_exists(&url, cli.create || matches!(cli.command, Command::Migrate))?;
        eprintln!("tributary: using the database {url}");
    }
    let mut config = Config::from_env()?;
    config.database_url = url.clone();
    config.pool = pool_for(&cli.command, config.pool, config.worker_concurrency);
    let clock: Arc<dyn Clock> = Arc::new(SystemClock);
    // Every command but `migrate` wants a migrated database.
    let open = || open_database(&config);
    match cli.command {
        Command::Migrate => migrate(&url),
        Command::Users(UsersCommand::Create { email }) => {
            create_user(&open()?, clock.as_ref(), &email)
        }
        Command::Users(UsersCommand::List) => list_users(&open()?),
        Command::Users(UsersCommand::Delete { email, yes }) => delete_user(&open()?, &email, yes),
        Command::Users(UsersCommand::LoginLink { email, url }) => {
            let url = url.unwrap_or_else(|| reachable_base(&config));
            login_link(&open()?, clock.as_ref(), &email, &url)
        }
        Command::Keys(KeysCommand::Create {
            user,
            name,
            accounts,
        }) => create_key(&open()?, clock.as_ref(), &user, &name, &accounts),
        Command::Keys(KeysCommand::List { user }) => list_keys(&open()?, &user),
        Command::Keys(KeysCommand::Revoke { id }) => revoke_key(&open()?, clock.as_ref(), id),
        Command::Connect(ConnectCommand::Provider {
            connector,
            user,
            redirect,
            values,
        }) => {
            let db = open()?;
            let engine = sync_engine(&config, &db, clock)?;
            connect::connect(&db, &engine, &user, connector, redirect.as_deref(), &values)
        }
        Command::Connect(ConnectCommand::Finish(args)) => {
            let db = open()?;
            connect::finish(&sync_engine(&config, &db, clock)?, &args)
        }
        Command::Connections(ConnectionsCommand::List { user }) => {
            list_connections(&open()?, user.as_deref())
        }
        Command::Connections(ConnectionsCommand::Disconnect { id }) => {
            disconnect(&open()?, clock.as_ref(), id)
        }
        Command::Sync(args) => {
            let db = open()?;
            sync(&db, &sync_engine(&config, &db, clock)?, &args)
        }
        Command::Import {
            files,
            user,
            format,
            profile,
            account,
            new_account,
            currency,
        } => import(
            &open()?,
            clock.as_ref(),
            &files,
            &user,
            format.as_deref(),
            profile.as_deref(),
            import_target(account, new_account.as_deref(), currency.as_deref())?,
        ),
        Command::Apps(command) => crate::apps::run(&open()?, clock.as_ref(), command),
        Command::Developers(command) => crate::developers::run(&open()?, clock.as_ref(), command),
        Command::Simplefin(command) => {
            crate::simplefin::run(&open()?, clock.as_ref(), command, &reachable_base(&config))
        }
        Command::Webhooks(command) => {
            crate::webhooks::run(&open()?, &config, clock.as_ref(), command)
        }
        Command::Rules(command) => crate::rules::run(&open()?, clock.as_ref(), command),
        Command::Institutions { country } => {
            let registry = providers(&config, &config.outbound_guard())?;
            connect::list_institutions(&registry, &country)
        }
        Command::Worker => {
            let db = open()?;
            let mailer = tributary_app::mail::mailer(&config)?;
            let chore = tributary_app::workers::worker_chore(&config, &db, clock.clone(), mailer)?;
            let engine = sync_engine(&config, &db, clock)?;
            run_worker(engine, chore, config.worker_poll, config.worker_concurrency)
        }
        Command::Secrets(SecretsCommand::GenerateKey) => {
            println!("{}", tributary_auth::keyring::generate_key());
            Ok(())
        }
        Command::Secrets(SecretsCommand::Rotate) => {
            rotate_secrets(&open()?, &config, clock.as_ref())
        }
    }
}

/// Whether `command` reads or writes the database (`secrets
/// generate-key` and `institutions` do not).
fn needs_database(command: &Command) -> bool {
    !matches!(
        command,
        Command::Secrets(SecretsCommand::GenerateKey) | Command::Institutions { .. }
    )
}

/// A SQLite file that does not exist is refused unless `create` (run from
/// another directory, the default `sqlite://tributary.db` would otherwise
/// make an empty database there, and the next command would find nothing).
fn check_exists(url: &DatabaseUrl, create: bool) -> anyhow::Result<()> {
    if let DatabaseUrl::Sqlite(path) = url
        && !create
        && !path.exists()
    {
        bail!(
            "there is no database at {url}: run this where the server's database is, point TRIBUTARY_DATABASE_URL (or --database-url) at it, or make a new one with `tributary migrate` (or --create)"
        );
    }
    Ok(())
}

/// Connections a command may hold. `worker` runs jobs all day and keeps the
/// configured pool, with room for each of its `lanes` (syncs at once) and
/// two more (lease heartbeats, the round's chores); every other command
/// does one thing and needs one connection, two while a sync's lease
/// heartbeat beats beside it. (Eight per invocation let 40 parallel
/// invocations exhaust PostgreSQL's 100.)
fn pool_for(command: &Command, configured: PoolOptions, lanes: usize) -> PoolOptions {
    match command {
        Command::Worker => PoolOptions {
            max_size: configured
                .max_size
                .max(u32::try_from(lanes).unwrap_or(u32::MAX).saturating_add(2)),
            ..configured
        },
        _ => PoolOptions {
            max_size: configured.max_size.min(ONE_SHOT_POOL_SIZE),
            ..configured
        },
    }
}

const ONE_SHOT_POOL_SIZE: u32 = 2;

fn migrate(url: &DatabaseUrl) -> anyhow::Result<()> {
    let options = PoolOptions {
        max_size: 1,
        ..PoolOptions::default()
    };
    let db = Database::connect(url, &options).with_context(|| format!("opening {url}"))?;
    let applied = db.migrate()?;
    if applied.is_empty() {
        println!("{url}: up to date, no migration pending.");
    }
    for name in applied {
        println!("{url}: applied {name}");
    }
    Ok(())
}

fn create_user(db: &Database, clock: &dyn Clock, email: &str) -> anyhow::Result<()> {
    let email = normalize_email(email)?;
    match users::create_personal_user(&mut *db.conn()?, &email, clock.now().naive_utc()) {
        Ok(user) => {
            println!("Created user {} (id {}).", shown(&user.email), user.id);
            Ok(())
        }
        Err(StorageError::Conflict(_)) => bail!("user {email} already exists"),
        Err(err) => Err(err.into()),
    }
}

fn login_link(db: &Database, clock: &dyn Clock, email: &str, url: &str) -> anyhow::Result<()> {
    let base = public_base(url)?;
    let user = find_user(db, email)?;
    let token = tributary_auth::dashboard::issue_login_link(
        &mut *db.conn()?,
        user.id,
        clock.now().naive_utc(),
    )?;
    println!(
        "Sign-in link for {} (works once, for {} minutes):",
        shown(&user.email),
        tributary_auth::dashboard::LOGIN_LINK_TTL.num_minutes()
    );
    println!("{base}{}/{token}", tributary_app::links::SIGN_IN_LINK_PATH);
    Ok(())
}

/// `users delete`: a Personal user and all their data, when `--yes` says
/// so.
fn delete_user(db: &Database, email: &str, yes: bool) -> anyhow::Result<()> {
    let user = find_user(db, email)?;
    if !yes {
        bail!(
            "this deletes {} and all their data (connections, accounts, transactions, keys); run it again with --yes to go ahead",
            shown(&user.email)
        );
    }
    tributary_storage::apps::delete_user(&mut *db.conn()?, user.id)?;
    println!("Deleted user {} and all their data.", shown(&user.email));
    Ok(())
}

fn list_users(db: &Database) -> anyhow::Result<()> {
    let all = users::list_users(&mut *db.conn()?)?;
    println!("{:>6}  {:<40}  {:<8}  CREATED (UTC)", "ID", "EMAIL", "APP");
    for user in all {
        let app = user
            .app_id
            .map_or_else(|| "-".to_owned(), |id| id.to_string());
        println!(
            "{:>6}  {:<40}  {:<8}  {}",
            user.id,
            shown(&user.email),
            app,
            user.created_at.format("%Y-%m-%d %H:%M")
        );
    }
    Ok(())
}

fn create_key(
    db: &Database,
    clock: &dyn Clock,
    email: &str,
    name: &str,
    accounts: &[AccountId],
) -> anyhow::Result<()> {
    let name = crate::terminal::name(name)?;
    let user = find_user(db, email)?;
    let scope = (!accounts.is_empty()).then_some(accounts);
    let issued = api_keys::issue(&mut *db.conn()?, user.id, &name, scope, clock.now())?;
    println!(
        "Created API key {} \"{}\" for {}.",
        issued.record.id,
        shown(&issued.record.name),
        shown(&user.email)
    );
    if let Some(scope) = scope {
        println!("It can read only accounts {scope:?}.");
    }
    println!("Key (shown only now; Tributary keeps only its hash):");
    println!("{}", issued.plain_text);
    Ok(())
}

fn list_keys(db: &Database, email: &str) -> anyhow::Result<()> {
    let user = find_user(db, email)?;
    let keys = key_store::list_for_user(&mut *db.conn()?, user.id)?;
    println!(
        "{:>6}  {:<20}  {:<16}  {:<16}  {:<16}  ACCOUNTS",
        "ID", "NAME", "CREATED (UTC)", "LAST USED", "REVOKED"
    );
    for (key, scope) in keys {
        let accounts = scope.map_or_else(|| "all".to_owned(), |ids| format!("{ids:?}"));
        println!(
            "{:>6}  {:<20}  {:<16}  {:<16}  {:<16}  {accounts}",
            key.id,
            shown(&key.name),
            when(Some(key.created_at)),
            when(key.last_used_at),
            when(key.revoked_at)
        );
    }
    Ok(())
}

fn revoke_key(db: &Database, clock: &dyn Clock, id: ApiKeyId) -> anyhow::Result<()> {
    match key_store::revoke(&mut *db.conn()?, id, clock.now().naive_utc()) {
        Ok(key_store::Revocation {
            key,
            revoked_now: false,
        }) => {
            let since = key
                .revoked_at
                .map(|at| at.format("%Y-%m-%d %H:%M UTC").to_string())
                .unwrap_or_default();
            println!(
                "API key {} \"{}\" was already revoked ({since}); nothing changed.",
                key.id,
                shown(&key.name)
            );
            Ok(())
        }
        Ok(key_store::Revocation { key, .. }) => {
            println!(
                "API key {} \"{}\" is revoked; requests with it now answer 401.",
                key.id,
                shown(&key.name)
            );
            Ok(())
        }
        Err(StorageError::NotFound) => bail!("no API key with id {id}"),
        Err(err) => Err(err.into()),
    }
}

fn disconnect(db: &Database, clock: &dyn Clock, id: ConnectionId) -> anyhow::Result<()> {
    let conn = &mut *db.conn()?;
    let connection = match tributary_storage::connections::get_connection(conn, id) {
        Ok(connection) => connection,
        Err(StorageError::NotFound) => bail!("no connection with id {id}"),
        Err(err) => return Err(err.into()),
    };
    tributary_providers::sync::disconnect(conn, &connection, clock.now().naive_utc())?;
    println!(
        "Connection {id} ({}) is disconnected: it is no longer synced, and its accounts and transactions stay.",
        shown(&connection.institution_name)
    );
    Ok(())
}

/// Where `tributary import` puts statements naming no account, from its
/// `--account`, `--new-account` and `--currency` (clap lets only these
/// combinations through).
fn import_target(
    account: Option<AccountId>,
    new_account: Option<&str>,
    currency: Option<&str>,
) -> anyhow::Result<tributary_providers::import::ImportTarget> {
    use tributary_providers::import::ImportTarget;
    Ok(match (account, new_account, currency) {
        (Some(id), _, _) => ImportTarget::Account(id),
        (None, Some(name), Some(currency)) => ImportTarget::new_account(name, currency)
            .map_err(|why| anyhow::anyhow!("{}: {why}", target_flag(why.field())))?,
        _ => ImportTarget::Automatic,
    })
}

/// The flag of `tributary import` a target's refusal is about.
fn target_flag(field: tributary_providers::import::TargetField) -> &'static str {
    use tributary_providers::import::TargetField;
    match field {
        TargetField::Account => "--account",
        TargetField::NewAccountName => "--new-account",
        TargetField::NewAccountCurrency => "--currency",
    }
}

/// Imports each file on its own: a file that does not read changes nothing
/// and is reported with where it went wrong; the others are imported.
/// Statements naming no account go to `target`; a new account is made by
/// the first file that has some, and the files after it go into it.
fn import(
    db: &Database,
    clock: &dyn Clock,
    files: &[std::path::PathBuf],
    email: &str,
    format: Option<&str>,
    profile: Option<&std::path::Path>,
    target: tributary_providers::import::ImportTarget,
) -> anyhow::Result<()> {
    use tributary_providers::import::{self, Format, ImportSummary, ImportTarget, StoreError};
    let user = find_user(db, email)?;
    // A target that cannot be is said once, with the accounts there are.
    if let Err(err) = import::check_target(&mut *db.conn()?, user.id, &target) {
        let StoreError::Target(why) = err else {
            return Err(err.into());
        };
        let accounts = tributary_storage::read::imported_accounts(&mut *db.conn()?, user.id)?;
        let listed = if accounts.is_empty() {
            format!("{email} has none yet")
        } else {
            let each: Vec<String> = accounts
                .iter()
                .map(|a| format!("{} \"{}\" ({})", a.id, shown(&a.name), a.currency))
                .collect();
            format!("{email}'s are {}", each.join(", "))
        };
        bail!(
            "{}: {why} ({listed}); nothing was imported",
            target_flag(why.field())
        );
    }
    let mut target = target;
    let format = format
        .map(|name| {
            Format::parse_name(name).with_context(|| {
                format!("--format {name}: supported formats are: camt, mt940, ofx, csv")
            })
        })
        .transpose()?;
    let profile: Option<import::csv::CsvProfile> = profile
        .map(|path| -> anyhow::Result<_> {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("--profile {}", path.display()))?;
            serde_json::from_str(&text)
                .with_context(|| format!("--profile {}: not a CSV profile", path.display()))
        })
        .transpose()?;
    let reading = import::Reading { format, profile };
    let bar = indicatif::ProgressBar::new(files.len() as u64).with_style(
        indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} files  {msg}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let mut total = ImportSummary::default();
    let mut failed = 0;
    for file in files {
        bar.set_message(file.display().to_string());
        // Each file is an import of its own (`import::read_files`), so one
        // that does not read leaves the others imported.
        let outcome = if reads_in_passes(file, &reading) {
            import_in_passes(db, clock, user.id, file, &target)
        } else {
            import_whole(db, clock, user.id, file, &reading, &target)
        };
        bar.suspend(|| match outcome {
            Ok(summary) => {
                println!(
                    "{}: {} statement(s), {} account(s); {} new, {} updated, {} skipped (already stored).",
                    file.display(),
                    summary.statements,
                    summary.accounts,
                    summary.added,
                    summary.updated,
                    summary.unchanged
                );
                if !summary.activity.is_none() {
                    println!(
                        "  investment activity: {} new, {} updated",
                        summary.activity.added, summary.activity.updated
                    );
                }
                for note in &summary.notes {
                    println!("  note: {}", shown(note));
                }
                if let Some(account) = summary.target_account {
                    println!("  statements naming no account went into account {account}");
                    // The account is made once; the next files go into it.
                    target = ImportTarget::Account(account);
                }
                total.statements += summary.statements;
                total.added += summary.added;
                total.updated += summary.updated;
                total.unchanged += summary.unchanged;
            }
            Err(err) => {
                eprintln!(
                    "{}: {} (nothing of this file was stored)",
                    file.display(),
                    shown(&err)
                );
                failed += 1;
            }
        });
        bar.inc(1);
    }
    bar.finish_and_clear();
    println!(
        "Imported {} of {} file(s): {} statements; transactions {} new, {} updated, {} skipped.",
        files.len() - failed,
        files.len(),
        total.statements,
        total.added,
        total.updated,
        total.unchanged
    );
    if failed > 0 {
        bail!("{failed} file(s) could not be imported");
    }
    Ok(())
}

/// Whether `file` is imported from disk in two passes, in memory that does
/// not grow with it: OFX files (named so, or found so by their first
/// bytes) are. Other formats are read whole.
fn reads_in_passes(file: &std::path::Path, reading: &tributary_providers::import::Reading) -> bool {
    use std::io::Read as _;
    use tributary_providers::import::{Format, sniff};
    if reading.profile.is_some() {
        return false;
    }
    match reading.format {
        Some(format) => format == Format::Ofx,
        None => {
            let mut head = Vec::with_capacity(2000);
            let read = std::fs::File::open(file)
                .and_then(|f| f.take(2000).read_to_end(&mut head))
                .is_ok();
            read && sniff(&head) == Some(Format::Ofx)
        }
    }
}

/// The sentence for an import that stored nothing.
fn import_refusal(err: tributary_providers::import::StoreError) -> String {
    use tributary_providers::import::StoreError;
    match err {
        StoreError::Target(why) => format!("{}: {why}", target_flag(why.field())),
        StoreError::Storage(err) => err.to_string(),
    }
}

/// Reads the file whole, then stores its statements.
fn import_whole(
    db: &Database,
    clock: &dyn Clock,
    user: tributary_domain::ids::UserId,
    file: &std::path::Path,
    reading: &tributary_providers::import::Reading,
    target: &tributary_providers::import::ImportTarget,
) -> Result<tributary_providers::import::ImportSummary, String> {
    use tributary_providers::import;
    let bytes = std::fs::read(file).map_err(|err| err.to_string())?;
    let one = import::StatementFile {
        name: file.display().to_string(),
        bytes,
    };
    let statements = import::read_files(vec![one], reading).map_err(|unreadable| {
        let err = unreadable.reason;
        if err.wants_format_or_profile() {
            format!("{err}: name it with --format, or give a CSV --profile")
        } else {
            err.to_string()
        }
    })?;
    let conn = &mut *db.conn().map_err(|e| e.to_string())?;
    import::store_into(conn, user, statements, target, clock.now().naive_utc())
        .map_err(import_refusal)
}

/// Imports the file in two passes from disk (`reads_in_passes`).
fn import_in_passes(
    db: &Database,
    clock: &dyn Clock,
    user: tributary_domain::ids::UserId,
    file: &std::path::Path,
    target: &tributary_providers::import::ImportTarget,
) -> Result<tributary_providers::import::ImportSummary, String> {
    use tributary_providers::import::{self, FileImportError};
    let conn = &mut *db.conn().map_err(|e| e.to_string())?;
    import::store_ofx_file(conn, user, file, target, clock.now().naive_utc()).map_err(|err| {
        match err {
            FileImportError::Unreadable(err) => err.to_string(),
            FileImportError::Store(err) => import_refusal(err),
        }
    })
}

/// Runs a worker until SIGINT or SIGTERM.
fn run_worker(
    engine: SyncEngine,
    chore: tributary_providers::worker::Chore,
    poll: std::time::Duration,
    concurrency: usize,
) -> anyhow::Result<()> {
    let worker = Worker::new(engine, worker_id("worker"), poll)
        .with_chore(chore)
        .with_concurrency(concurrency);
    let stop = StopSignal::default();
    stop_on_termination(stop.clone())?;
    println!(
        "Worker {} running up to {concurrency} syncs at once; SIGINT or SIGTERM stops it after the syncs it runs.",
        worker.id()
    );
    worker.run(&stop);
    Ok(())
}

/// Signals `stop` on SIGINT or SIGTERM, from a small signal-watching runtime.
fn stop_on_termination(stop: StopSignal) -> anyhow::Result<()> {
    use tokio::signal::unix::{SignalKind, signal};
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build()?;
    let (mut interrupt, mut terminate) = runtime.block_on(async {
        Ok::<_, std::io::Error>((
            signal(SignalKind::interrupt())?,
            signal(SignalKind::terminate())?,
        ))
    })?;
    std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            runtime.block_on(async {
                tokio::select! {
                    _ = interrupt.recv() => {}
                    _ = terminate.recv() => {}
                }
            });
            stop.stop();
        })?;
    Ok(())
}

/// Re-seals every stored credential with the current key.
fn rotate_secrets(db: &Database, config: &Config, clock: &dyn Clock) -> anyhow::Result<()> {
    let keyring = config.keyring()?;
    let conn = &mut *db.conn()?;
    let (mut resealed, mut current) = (0, 0);
    for stored in connections::all_sealed_credentials(conn)? {
        let (id, sealed) = (stored.connection_id, stored.sealed);
        if !keyring.needs_reseal(&sealed) {
            current += 1;
            continue;
        }
        let context = tributary_domain::secrets::credentials_context(
            stored.user_id,
            stored.provider.as_str(),
        );
        let plain = keyring
            .open(&sealed, &context)
            .with_context(|| format!("connection {id}"))?;
        connections::set_sealed_credentials(
            conn,
            id,
            Some(&keyring.seal(&plain, &context)),
            clock.now().naive_utc(),
        )?;
        resealed += 1;
    }
    println!("Re-sealed {resealed} credential(s) with the current key; {current} already used it.");
    println!(
        "Once every process runs with the new key, TRIBUTARY_SECRET_KEY_PREVIOUS can be removed."
    );
    Ok(())
}

fn list_connections(db: &Database, email: Option<&str>) -> anyhow::Result<()> {
    let user_id = email.map(|e| find_user(db, e)).transpose()?.map(|u| u.id);
    let all = connections::list_connections(&mut *db.conn()?, user_id)?;
    println!(
        "{:>6}  {:>6}  {:<10}  {:<28}  {:<16}  {:<17}  REASON",
        "ID", "USER", "PROVIDER", "INSTITUTION", "STATUS", "LAST SYNC (UTC)"
    );
    for c in all {
        let last = c.last_synced_at.map_or_else(
            || "never".to_owned(),
            |t| t.format("%Y-%m-%d %H:%M").to_string(),
        );
        println!(
            "{:>6}  {:>6}  {:<10}  {:<28}  {:<16}  {:<17}  {}",
            c.id,
            c.user_id,
            c.provider,
            shown(&c.institution_name),
            c.status,
            last,
            shown(&c.status_reason.unwrap_or_default())
        );
    }
    Ok(())
}

fn sync(db: &Database, engine: &SyncEngine, args: &SyncArgs) -> anyhow::Result<()> {
    if let Some(id) = args.connection {
        return report(
            id,
            engine.sync_now(id, SyncJobKind::OnDemand, &worker_id("cli")),
        );
    }
    let user_id = args
        .user
        .as_deref()
        .map(|e| find_user(db, e))
        .transpose()?
        .map(|u| u.id);
    let targets = engine.connections_to_sync(user_id)?;
    if targets.is_empty() {
        println!("No connections to sync.");
    }
    // A bar on a terminal; nothing extra when the output is piped or logged.
    let bar = indicatif::ProgressBar::new(targets.len() as u64).with_style(
        indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} connections  {msg}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let worker = worker_id("cli");
    let mut failures = 0;
    for id in targets {
        bar.set_message(format!("syncing connection {id}"));
        let result = engine.sync_now(id, SyncJobKind::OnDemand, &worker);
        let synced = bar.suspend(|| match result {
            // `report` leaves these to its caller, which says them once.
            Err(err) => {
                println!("Connection {id}: {err}");
                false
            }
            outcome => report(id, outcome).is_ok(),
        });
        if !synced {
            failures += 1;
        }
        bar.inc(1);
    }
    bar.finish_and_clear();
    if failures > 0 {
        bail!("{failures} connection(s) failed to sync");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_shot_commands_hold_at_most_two_connections_and_the_worker_one_for_each_lane() {
        let configured = PoolOptions {
            max_size: 8,
            ..PoolOptions::default()
        };
        let one_shots = [
            Command::Users(UsersCommand::List),
            Command::Sync(crate::cli::SyncArgs {
                user: None,
                connection: Some(ConnectionId::new(1)),
                all: false,
            }),
            Command::Connections(ConnectionsCommand::List { user: None }),
        ];
        for command in &one_shots {
            assert_eq!(pool_for(command, configured.clone(), 16).max_size, 2);
        }
        assert_eq!(
            pool_for(&Command::Worker, configured.clone(), 4).max_size,
            8
        );
        assert_eq!(pool_for(&Command::Worker, configured, 16).max_size, 18);
    }
}
