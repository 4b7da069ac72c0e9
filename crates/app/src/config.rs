//! Configuration from `TRIBUTARY_*` environment variables, read once at start
//! and passed down. With nothing set, a binary runs on `sqlite://tributary.db`
//! at 127.0.0.1:8080. `--help` lists every variable
//! ([`environment_help`]).

use std::time::Duration;
use tributary_domain::schedule::SyncPolicy;
use tributary_storage::{Backend, DatabaseUrl, PoolOptions, StorageError};

pub const DEFAULT_DATABASE_URL: &str = "sqlite://tributary.db";
pub const DEFAULT_BIND: &str = "127.0.0.1:8080";

/// The environment variables a process reads, for `--help`: the general
/// ones, then each connector's (from its description), then the rest.
pub fn environment_help() -> String {
    let mut help = String::from(GENERAL_HELP);
    for description in tributary_providers::catalog::CATALOG {
        for variable in description.environment {
            help.push_str(&help_line(variable.names, variable.help));
        }
    }
    help.push_str(SERVICES_HELP);
    help
}

/// `  NAME  help`: the help starts in one column after short names, two
/// spaces after long ones.
fn help_line(names: &str, help: &str) -> String {
    const COLUMN: usize = 26;
    if names.len() + 2 <= COLUMN {
        format!("  {names:<COLUMN$}{help}\n")
    } else {
        format!("  {names}  {help}\n")
    }
}

const GENERAL_HELP: &str = "\
Configuration (environment variables):
  TRIBUTARY_DATABASE_URL    sqlite://PATH or postgres://USER@HOST/DB [default: sqlite://tributary.db]
  TRIBUTARY_BIND            address to listen on, host:port [default: 127.0.0.1:8080]
  TRIBUTARY_DEMO            seed demo data on a fresh database: personal-api a demo user, platform-api a demo app [default: on for SQLite, off for PostgreSQL]
  TRIBUTARY_DB_POOL_SIZE    database connections per server or worker [default: 8]
  TRIBUTARY_DB_TIMEOUT_SECS seconds to wait for a free connection before answering 503 [default: 5]
  TRIBUTARY_SECRET_KEY      base64 key sealing provider credentials [required with PostgreSQL; SQLite: a PATH.key file]
  TRIBUTARY_SECRET_KEY_PREVIOUS  comma-separated older keys, kept during a key rotation
  TRIBUTARY_EMBEDDED_WORKER run the sync worker inside the server [default: on for SQLite, off for PostgreSQL]
  TRIBUTARY_SYNC_INTERVAL_SECS   time between scheduled syncs of a connection [default: 21600]
  TRIBUTARY_WORKER_LEASE_SECS    how long a worker holds a job before others may take it over [default: 600]
  TRIBUTARY_WORKER_POLL_SECS     how often an idle worker looks for due work [default: 5]
  TRIBUTARY_WORKER_CONCURRENCY   syncs a worker runs at once; a server's embedded worker runs at most half its pool (docs/operations.md) [default: 16]
  TRIBUTARY_PROVIDER_LIMITS      syncs all workers together may run per provider, at once and per period: `plaid=concurrent:8,rate:600/1m simplefin=rate:100/1h` (docs/operations.md) [default: none]
  TRIBUTARY_TOMBSTONE_RETENTION_DAYS  how long the change feed keeps removals; older cursors must start again [default: 400]
  TRIBUTARY_RETAIN_CREDENTIALS_DAYS  days used, expired or revoked OAuth tokens, codes and portal links are kept; a refresh token replayed within them revokes its family [default: 30]
  TRIBUTARY_RETAIN_WEBHOOKS_DAYS     days ended webhook deliveries and their events are kept [default: 30]
  TRIBUTARY_RETAIN_SYNC_JOBS         finished sync jobs kept per connection, newest first [default: 20]
  TRIBUTARY_RETAIN_FAILED_SYNC_JOBS_DAYS  days failed sync jobs are kept [default: 30]
  TRIBUTARY_PUBLIC_URL      how users reach this server, for every URL it hands out; set it on any server others reach [default: the request's Host]
";

/// Syncs a worker runs at once unless `TRIBUTARY_WORKER_CONCURRENCY` says
/// otherwise: a sync mostly waits for its provider (docs/operations.md).
pub const DEFAULT_WORKER_CONCURRENCY: usize = 16;

const SERVICES_HELP: &str = "\
  TRIBUTARY_SIMPLEFIN_DAILY_REQUESTS  personal-api: requests a day each SimpleFIN destination may make (docs/simplefin.md) [default: 24]
  TRIBUTARY_MCP_REQUESTS_PER_MINUTE  personal-api: MCP tool calls a minute each key or assistant may make (docs/mcp.md) [default: 120]
  TRIBUTARY_SIMPLEFIN_MAX_WINDOW_DAYS  personal-api: how many days back one SimpleFIN request may reach; an older start-date is moved up, with a warning [default: none: as far as asked]
  TRIBUTARY_BEHIND_PROXY    one reverse proxy in front: take the client's address from the last X-Forwarded-For entry, and URLs from its forwarded host and scheme [default: off]
  TRIBUTARY_SMTP_URL        SMTP server for sign-in codes and notices, e.g. smtps://USER:PASSWORD@HOST [default: none: mail goes to the log]
  TRIBUTARY_MAIL_FROM       sender of mail [default: Tributary <no-reply@localhost>]
  TRIBUTARY_PAYMENTS        checkout for apps whose users pay: stripe, or test (test cards; never where real users pay) [default: none]
  TRIBUTARY_STRIPE_SECRET_KEY, TRIBUTARY_STRIPE_PRICE_ID  Stripe Checkout, with TRIBUTARY_PAYMENTS=stripe
  TRIBUTARY_STRIPE_URL      Stripe's API root [default: https://api.stripe.com]
  TRIBUTARY_OUTBOUND_ALLOW_PRIVATE  requests users aim (SimpleFIN setup tokens and access URLs, webhooks) may reach these private addresses (comma-separated IPs), or any with 1; webhooks may then use http (tests, home labs; docs/operations.md) [default: off: public addresses only]
  TRIBUTARY_DEVELOPER_SIGNUP  platform-api: who may sign up at /developers: open (anyone who receives the code), or closed (only `tributary developers add`) [default: closed]
  TRIBUTARY_METRICS_TOKEN   serve Prometheus metrics at /metrics to `Authorization: Bearer <token>` (16 characters or more) [default: none]
  TRIBUTARY_METRICS_BIND    also serve /metrics, without a token, on this loopback address, e.g. 127.0.0.1:9464 [default: none]
  RUST_LOG                  log filter, e.g. info or tributary_http=debug [default: info]
(The test suite's own variables, TRIBUTARY_TEST_POSTGRES_URL, TRIBUTARY_REQUIRE_POSTGRES and
TRIBUTARY_REQUIRE_BROWSER, are in the README.)";

/// A configuration value that must never be printed.
#[derive(Clone, Default)]
pub struct Secret(pub String);

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("<redacted>")
    }
}

#[derive(Debug, Clone)]
pub struct Config {
    pub database_url: DatabaseUrl,
    /// `host:port` to listen on; port 0 picks a free port.
    pub bind: String,
    /// Seed a demo user with a synced sandbox connection when the database
    /// has no users. Default: on for SQLite, off for PostgreSQL.
    pub seed_demo: bool,
    pub pool: PoolOptions,
    /// Key sealing provider credentials (base64 of 32 bytes). Required with
    /// PostgreSQL; with SQLite, a key file beside the database otherwise.
    pub secret_key: Option<Secret>,
    /// Older keys that still open values sealed before a rotation.
    pub previous_secret_keys: Vec<Secret>,
    /// Run a sync worker inside the server. Default: on for SQLite (one
    /// process owns the file), off for PostgreSQL (run `tributary worker`).
    pub embedded_worker: bool,
    pub sync_policy: SyncPolicy,
    /// How often an idle worker looks for due work.
    pub worker_poll: Duration,
    /// How many syncs a worker runs at once.
    pub worker_concurrency: usize,
    /// The connectors the environment configures (each reads its own
    /// variables: providers::description), built when a process starts.
    pub connectors: Vec<tributary_providers::catalog::Configured>,
    /// How users reach this server (links in portal sessions); from the
    /// request's Host when unset.
    pub public_url: Option<String>,
    /// SMTP server for sign-in codes; `None`: the development outbox (log).
    pub smtp_url: Option<Secret>,
    /// One reverse proxy in front: the client's address is the last
    /// `X-Forwarded-For` entry (the one the proxy added), for per-IP limits.
    pub behind_proxy: bool,
    pub mail_from: String,
    pub payments: PaymentsSettings,
    pub metrics: MetricsAccess,
    /// Requests a day each SimpleFIN destination may make.
    pub simplefin_daily_requests: i32,
    /// MCP tool calls a minute each credential may make.
    pub mcp_requests_per_minute: u32,
    /// How many days back one SimpleFIN request may reach; `None`: as far
    /// as the client asks (the owner's history is theirs).
    pub simplefin_max_window_days: Option<u32>,
    /// Who may sign up to the developer dashboard (platform-api).
    pub developer_signup: tributary_auth::developers::Signup,
    /// Which private addresses requests users aim may reach (tests, home
    /// labs): `TRIBUTARY_OUTBOUND_ALLOW_PRIVATE`.
    pub outbound_allow_private: tributary_outbound::PrivateAllowance,
}

impl Config {
    /// The guard every request a user can aim goes through
    /// (docs/operations.md#outbound-requests).
    pub fn outbound_guard(&self) -> tributary_outbound::Guard {
        tributary_outbound::Guard::new(self.outbound_allow_private.clone())
    }
}

/// A count from 1 to 100,000 in variable `name`, if set.
fn count_in<T>(
    lookup: &impl Fn(&str) -> Option<String>,
    name: &'static str,
    reason: &'static str,
) -> Result<Option<T>, ConfigError>
where
    T: std::str::FromStr + PartialOrd + From<u8> + TryFrom<u32>,
{
    let Some(value) = lookup(name) else {
        return Ok(None);
    };
    let range = T::from(1)..=T::try_from(100_000).map_err(|_| ConfigError::Invalid {
        name,
        value: value.clone(),
        reason,
    })?;
    match value.trim().parse::<T>() {
        Ok(n) if range.contains(&n) => Ok(Some(n)),
        _ => Err(ConfigError::Invalid {
            name,
            value,
            reason,
        }),
    }
}

/// Like the SimpleFIN Bridge, which expects apps to ask at most 24 times a
/// day.
pub const DEFAULT_SIMPLEFIN_DAILY_REQUESTS: i32 = 24;
/// MCP tool calls a minute one credential may make: an assistant
/// answering one question makes a handful, so this stops a runaway loop,
/// not a person.
pub const DEFAULT_MCP_REQUESTS_PER_MINUTE: u32 = 120;

/// Who may read the Prometheus metrics (docs/operations.md). With neither
/// set, `/metrics` is not served.
#[derive(Debug, Clone, Default)]
pub struct MetricsAccess {
    /// `GET /metrics` on the main address answers this bearer token.
    pub token: Option<Secret>,
    /// A loopback address that serves `/metrics` alone, without a token.
    pub bind: Option<std::net::SocketAddr>,
}

/// Shorter tokens could be guessed by a scraper-shaped brute force.
const MIN_METRICS_TOKEN_CHARS: usize = 16;

impl MetricsAccess {
    fn from_lookup(lookup: &impl Fn(&str) -> Option<String>) -> Result<Self, ConfigError> {
        let token = lookup("TRIBUTARY_METRICS_TOKEN")
            .map(|t| t.trim().to_owned())
            .filter(|t| !t.is_empty());
        if token
            .as_ref()
            .is_some_and(|t| t.chars().count() < MIN_METRICS_TOKEN_CHARS)
        {
            return Err(ConfigError::Invalid {
                name: "TRIBUTARY_METRICS_TOKEN",
                value: "<redacted>".into(),
                reason: "expected 16 characters or more",
            });
        }
        let bind = lookup("TRIBUTARY_METRICS_BIND")
            .filter(|b| !b.trim().is_empty())
            .map(|value| {
                value
                    .trim()
                    .parse::<std::net::SocketAddr>()
                    .ok()
                    .filter(|addr| addr.ip().is_loopback())
                    .ok_or(ConfigError::Invalid {
                        name: "TRIBUTARY_METRICS_BIND",
                        value,
                        reason: "expected a loopback address and port such as 127.0.0.1:9464 (metrics without a token are for this machine only)",
                    })
            })
            .transpose()?;
        Ok(Self {
            token: token.map(Secret),
            bind,
        })
    }
}

/// Which checkout apps whose users pay get.
#[derive(Debug, Clone, Default)]
pub enum PaymentsSettings {
    /// User-pays apps cannot take new users: their page says so.
    #[default]
    None,
    /// The built-in test processor (test cards only).
    Test,
    Stripe {
        api_base: String,
        secret_key: Secret,
        price_id: String,
    },
}

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// Not a `#[source]`: the message already holds the reason, and a
    /// chain printed with `{:#}` would say it twice.
    #[error("TRIBUTARY_DATABASE_URL: {0}")]
    DatabaseUrl(StorageError),
    #[error("{name}: {reason}, got `{value}`")]
    Invalid {
        name: &'static str,
        value: String,
        reason: &'static str,
    },
    /// A connector's setting.
    #[error(transparent)]
    Connector(#[from] tributary_providers::description::SettingError),
    /// `TRIBUTARY_PROVIDER_LIMITS` (the message names the entry).
    #[error(transparent)]
    ProviderLimits(#[from] tributary_domain::provider_limits::LimitsError),
}

impl From<StorageError> for ConfigError {
    fn from(err: StorageError) -> Self {
        ConfigError::DatabaseUrl(err)
    }
}

/// `TRIBUTARY_PROVIDER_LIMITS`, each named provider one Tributary has a
/// connector for: a misspelt name would leave the provider unlimited.
fn provider_limits(
    text: &str,
) -> Result<
    std::collections::BTreeMap<
        tributary_domain::model::Provider,
        tributary_domain::provider_limits::ProviderLimits,
    >,
    ConfigError,
> {
    let limits = tributary_domain::provider_limits::parse(text)?;
    if let Some(unknown) = limits
        .keys()
        .find(|p| tributary_providers::catalog::describe(**p).is_none())
    {
        let known: Vec<&str> = tributary_providers::catalog::CATALOG
            .iter()
            .map(|d| d.provider.as_str())
            .collect();
        return Err(tributary_domain::provider_limits::LimitsError {
            entry: unknown.to_string(),
            reason: format!(
                "no connector is called that (there are {})",
                known.join(", ")
            ),
        }
        .into());
    }
    Ok(limits)
}

/// `TRIBUTARY_OUTBOUND_ALLOW_PRIVATE`, or its older name from when only
/// webhooks were guarded, `TRIBUTARY_WEBHOOKS_ALLOW_PRIVATE` (a yes or no).
fn outbound_allowance(
    lookup: &impl Fn(&str) -> Option<String>,
) -> Result<tributary_outbound::PrivateAllowance, ConfigError> {
    const NAME: &str = tributary_outbound::ALLOW_PRIVATE_VARIABLE;
    const OLD_NAME: &str = "TRIBUTARY_WEBHOOKS_ALLOW_PRIVATE";
    if let Some(value) = lookup(NAME) {
        return tributary_outbound::PrivateAllowance::parse(&value).map_err(|_| {
            ConfigError::Invalid {
                name: NAME,
                value,
                reason: "expected 1, 0, or a comma-separated list of IP addresses",
            }
        });
    }
    let Some(value) = lookup(OLD_NAME) else {
        return Ok(tributary_outbound::PrivateAllowance::None);
    };
    log::warn!("{OLD_NAME} is read as {NAME}, which now guards SimpleFIN too: rename it");
    Ok(if parse_bool(OLD_NAME, &value)? {
        tributary_outbound::PrivateAllowance::All
    } else {
        tributary_outbound::PrivateAllowance::None
    })
}

fn parse_bool(name: &'static str, value: &str) -> Result<bool, ConfigError> {
    match value.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Ok(true),
        "0" | "false" | "no" | "off" => Ok(false),
        _ => Err(ConfigError::Invalid {
            name,
            value: value.to_owned(),
            reason: "expected true or false",
        }),
    }
}

/// An optional whole number of seconds within `min..=max`.
fn seconds(
    lookup: &impl Fn(&str) -> Option<String>,
    name: &'static str,
    min: u64,
    max: u64,
) -> Result<Option<Duration>, ConfigError> {
    Ok(whole_number(
        lookup,
        name,
        (min, max),
        "expected a whole number of seconds in the allowed range",
    )?
    .map(Duration::from_secs))
}

/// A whole number from `min` to `max` in `name`, if set.
fn whole_number(
    lookup: &impl Fn(&str) -> Option<String>,
    name: &'static str,
    (min, max): (u64, u64),
    reason: &'static str,
) -> Result<Option<u64>, ConfigError> {
    lookup(name)
        .map(|value| {
            value
                .trim()
                .parse::<u64>()
                .ok()
                .filter(|n| (min..=max).contains(n))
                .ok_or(ConfigError::Invalid {
                    name,
                    value,
                    reason,
                })
        })
        .transpose()
}

/// The retention settings (docs/operations.md, "Retention"), each within
/// its range, over the defaults.
fn retention(
    lookup: &impl Fn(&str) -> Option<String>,
) -> Result<tributary_domain::retention::Retention, ConfigError> {
    let days = |name| {
        whole_number(
            lookup,
            name,
            (1, 3650),
            "expected a number of days from 1 to 3650",
        )
        .map(|d| d.map(|d| Duration::from_secs(d * 24 * 3600)))
    };
    let mut retention = tributary_domain::retention::Retention::default();
    if let Some(kept) = days("TRIBUTARY_RETAIN_CREDENTIALS_DAYS")? {
        retention.credentials = kept;
    }
    if let Some(kept) = days("TRIBUTARY_RETAIN_WEBHOOKS_DAYS")? {
        retention.webhooks = kept;
    }
    if let Some(kept) = days("TRIBUTARY_RETAIN_FAILED_SYNC_JOBS_DAYS")? {
        retention.failed_sync_jobs = kept;
    }
    if let Some(count) = whole_number(
        lookup,
        "TRIBUTARY_RETAIN_SYNC_JOBS",
        (1, 100_000),
        "expected a number of jobs from 1 to 100000",
    )? {
        retention.sync_jobs_per_connection = u32::try_from(count).unwrap_or(u32::MAX);
    }
    Ok(retention)
}

impl Config {
    /// The keyring sealing provider credentials: from `TRIBUTARY_SECRET_KEY`
    /// (and `_PREVIOUS`), else, on SQLite only, from a key file kept beside
    /// the database (created with mode 0600 on first use).
    pub fn keyring(&self) -> anyhow::Result<tributary_auth::keyring::Keyring> {
        use tributary_auth::keyring::Keyring;
        match (&self.secret_key, &self.database_url) {
            (Some(key), _) => {
                let previous: Vec<&str> = self
                    .previous_secret_keys
                    .iter()
                    .map(|k| k.0.as_str())
                    .collect();
                Ok(Keyring::new(&key.0, &previous)?)
            }
            (None, DatabaseUrl::Sqlite(path)) => {
                let mut key_file = path.clone().into_os_string();
                key_file.push(".key");
                Ok(Keyring::from_key_file(std::path::Path::new(&key_file))?)
            }
            (None, DatabaseUrl::Postgres(_)) => anyhow::bail!(
                "TRIBUTARY_SECRET_KEY is required with PostgreSQL (it seals provider credentials); \
                 make one with `tributary secrets generate-key`"
            ),
        }
    }

    pub fn from_env() -> Result<Self, ConfigError> {
        Self::from_lookup(|name| std::env::var(name).ok())
    }

    /// Reads configuration through `lookup` (the environment, or a map in tests).
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, ConfigError> {
        let database_url = DatabaseUrl::parse(
            &lookup("TRIBUTARY_DATABASE_URL").unwrap_or_else(|| DEFAULT_DATABASE_URL.to_owned()),
        )?;
        let bind = lookup("TRIBUTARY_BIND").unwrap_or_else(|| DEFAULT_BIND.to_owned());
        let seed_demo = match lookup("TRIBUTARY_DEMO") {
            Some(value) => parse_bool("TRIBUTARY_DEMO", &value)?,
            None => database_url.backend() == Backend::Sqlite,
        };
        let mut pool = PoolOptions::default();
        if let Some(value) = lookup("TRIBUTARY_DB_POOL_SIZE") {
            pool.max_size = value
                .trim()
                .parse()
                .ok()
                .filter(|n| (1..=512).contains(n))
                .ok_or(ConfigError::Invalid {
                    name: "TRIBUTARY_DB_POOL_SIZE",
                    value,
                    reason: "expected a number from 1 to 512",
                })?;
        }
        if let Some(value) = lookup("TRIBUTARY_DB_TIMEOUT_SECS") {
            let secs: u64 = value
                .trim()
                .parse()
                .ok()
                .filter(|n| (1..=300).contains(n))
                .ok_or(ConfigError::Invalid {
                    name: "TRIBUTARY_DB_TIMEOUT_SECS",
                    value,
                    reason: "expected a number of seconds from 1 to 300",
                })?;
            pool.connection_timeout = Duration::from_secs(secs);
        }
        let is_sqlite = database_url.backend() == Backend::Sqlite;
        let embedded_worker = match lookup("TRIBUTARY_EMBEDDED_WORKER") {
            Some(value) => parse_bool("TRIBUTARY_EMBEDDED_WORKER", &value)?,
            None => is_sqlite,
        };
        let mut sync_policy = SyncPolicy::default();
        if let Some(secs) = seconds(&lookup, "TRIBUTARY_SYNC_INTERVAL_SECS", 60, 7 * 24 * 3600)? {
            sync_policy.interval = secs;
        }
        if let Some(secs) = seconds(&lookup, "TRIBUTARY_WORKER_LEASE_SECS", 1, 24 * 3600)? {
            sync_policy.lease = secs;
        }
        if let Some(value) = lookup("TRIBUTARY_TOMBSTONE_RETENTION_DAYS") {
            let days: u64 = value
                .trim()
                .parse()
                .ok()
                .filter(|n| (400..=36_500).contains(n))
                .ok_or(ConfigError::Invalid {
                    name: "TRIBUTARY_TOMBSTONE_RETENTION_DAYS",
                    value,
                    reason: "expected a number of days from 400 to 36500",
                })?;
            sync_policy.tombstone_retention = Duration::from_secs(days * 24 * 3600);
        }
        sync_policy.retention = retention(&lookup)?;
        if let Some(limits) = lookup("TRIBUTARY_PROVIDER_LIMITS") {
            sync_policy.provider_limits = provider_limits(&limits)?;
        }
        let worker_poll = seconds(&lookup, "TRIBUTARY_WORKER_POLL_SECS", 1, 3600)?
            .unwrap_or(Duration::from_secs(5));
        let worker_concurrency = match lookup("TRIBUTARY_WORKER_CONCURRENCY") {
            Some(value) => value
                .trim()
                .parse()
                .ok()
                .filter(|n| (1..=256).contains(n))
                .ok_or(ConfigError::Invalid {
                    name: "TRIBUTARY_WORKER_CONCURRENCY",
                    value,
                    reason: "expected a number of syncs from 1 to 256",
                })?,
            None => DEFAULT_WORKER_CONCURRENCY,
        };
        let secret_key = lookup("TRIBUTARY_SECRET_KEY")
            .filter(|k| !k.trim().is_empty())
            .map(Secret);
        let previous_secret_keys = lookup("TRIBUTARY_SECRET_KEY_PREVIOUS")
            .map(|keys| {
                keys.split(',')
                    .map(str::trim)
                    .filter(|k| !k.is_empty())
                    .map(|k| Secret(k.to_owned()))
                    .collect()
            })
            .unwrap_or_default();
        let connectors = tributary_providers::catalog::configure(&lookup)?;
        let public_url = lookup("TRIBUTARY_PUBLIC_URL")
            .map(|u| u.trim().trim_end_matches('/').to_owned())
            .filter(|u| !u.is_empty());
        if let Some(url) = &public_url
            && !(url.starts_with("https://") || url.starts_with("http://"))
        {
            return Err(ConfigError::Invalid {
                name: "TRIBUTARY_PUBLIC_URL",
                value: url.clone(),
                reason: "expected an http(s) URL",
            });
        }
        let behind_proxy = match lookup("TRIBUTARY_BEHIND_PROXY") {
            Some(value) => parse_bool("TRIBUTARY_BEHIND_PROXY", &value)?,
            None => false,
        };
        let smtp_url = lookup("TRIBUTARY_SMTP_URL")
            .filter(|u| !u.trim().is_empty())
            .map(Secret);
        let mail_from = lookup("TRIBUTARY_MAIL_FROM")
            .unwrap_or_else(|| "Tributary <no-reply@localhost>".to_owned());
        let payments = match lookup("TRIBUTARY_PAYMENTS").as_deref() {
            None | Some("") | Some("none") => PaymentsSettings::None,
            Some("test") => PaymentsSettings::Test,
            Some("stripe") => PaymentsSettings::Stripe {
                api_base: lookup("TRIBUTARY_STRIPE_URL")
                    .unwrap_or_else(|| "https://api.stripe.com".to_owned()),
                secret_key: Secret(lookup("TRIBUTARY_STRIPE_SECRET_KEY").ok_or(
                    ConfigError::Invalid {
                        name: "TRIBUTARY_STRIPE_SECRET_KEY",
                        value: String::new(),
                        reason: "required with TRIBUTARY_PAYMENTS=stripe",
                    },
                )?),
                price_id: lookup("TRIBUTARY_STRIPE_PRICE_ID").ok_or(ConfigError::Invalid {
                    name: "TRIBUTARY_STRIPE_PRICE_ID",
                    value: String::new(),
                    reason: "required with TRIBUTARY_PAYMENTS=stripe",
                })?,
            },
            Some(other) => {
                return Err(ConfigError::Invalid {
                    name: "TRIBUTARY_PAYMENTS",
                    value: other.to_owned(),
                    reason: "expected stripe, test or none",
                });
            }
        };
        let metrics = MetricsAccess::from_lookup(&lookup)?;
        let simplefin_daily_requests = count_in(
            &lookup,
            "TRIBUTARY_SIMPLEFIN_DAILY_REQUESTS",
            "expected a number of requests from 1 to 100000",
        )?
        .unwrap_or(DEFAULT_SIMPLEFIN_DAILY_REQUESTS);
        let mcp_requests_per_minute = count_in(
            &lookup,
            "TRIBUTARY_MCP_REQUESTS_PER_MINUTE",
            "expected a number of requests from 1 to 100000",
        )?
        .unwrap_or(DEFAULT_MCP_REQUESTS_PER_MINUTE);
        let simplefin_max_window_days = count_in(
            &lookup,
            "TRIBUTARY_SIMPLEFIN_MAX_WINDOW_DAYS",
            "expected a number of days from 1 to 100000",
        )?;
        let developer_signup = match lookup("TRIBUTARY_DEVELOPER_SIGNUP")
            .map(|v| v.trim().to_ascii_lowercase())
            .as_deref()
        {
            None | Some("closed") => tributary_auth::developers::Signup::Closed,
            Some("open") => tributary_auth::developers::Signup::Open,
            Some(other) => {
                return Err(ConfigError::Invalid {
                    name: "TRIBUTARY_DEVELOPER_SIGNUP",
                    value: other.to_owned(),
                    reason: "expected open or closed",
                });
            }
        };
        let outbound_allow_private = outbound_allowance(&lookup)?;
        Ok(Config {
            outbound_allow_private,
            developer_signup,
            simplefin_daily_requests,
            mcp_requests_per_minute,
            simplefin_max_window_days,
            metrics,
            behind_proxy,
            smtp_url,
            mail_from,
            payments,
            public_url,
            connectors,
            database_url,
            bind,
            seed_demo,
            pool,
            secret_key,
            previous_secret_keys,
            embedded_worker,
            sync_policy,
            worker_poll,
            worker_concurrency,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn config(vars: &[(&str, &str)]) -> Result<Config, ConfigError> {
        let map: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Config::from_lookup(|name| map.get(name).cloned())
    }

    #[test]
    fn nothing_set_means_local_sqlite_with_demo_data() {
        let c = config(&[]).unwrap();
        assert_eq!(c.database_url, DatabaseUrl::Sqlite("tributary.db".into()));
        assert_eq!(c.bind, "127.0.0.1:8080");
        assert!(c.seed_demo);
    }

    #[test]
    fn postgres_gets_no_demo_data_unless_asked() {
        assert!(
            !config(&[("TRIBUTARY_DATABASE_URL", "postgres://u@h/db")])
                .unwrap()
                .seed_demo
        );
        assert!(
            config(&[
                ("TRIBUTARY_DATABASE_URL", "postgres://u@h/db"),
                ("TRIBUTARY_DEMO", "1")
            ])
            .unwrap()
            .seed_demo
        );
    }

    #[test]
    fn retention_has_defaults_and_takes_each_setting_within_its_range() {
        let default = config(&[]).unwrap().sync_policy.retention;
        assert_eq!(default, tributary_domain::retention::Retention::default());
        let set = config(&[
            ("TRIBUTARY_RETAIN_CREDENTIALS_DAYS", "7"),
            ("TRIBUTARY_RETAIN_WEBHOOKS_DAYS", "90"),
            ("TRIBUTARY_RETAIN_SYNC_JOBS", "5"),
            ("TRIBUTARY_RETAIN_FAILED_SYNC_JOBS_DAYS", "365"),
        ])
        .unwrap()
        .sync_policy
        .retention;
        assert_eq!(set.credentials, Duration::from_secs(7 * 24 * 3600));
        assert_eq!(set.webhooks, Duration::from_secs(90 * 24 * 3600));
        assert_eq!(set.sync_jobs_per_connection, 5);
        assert_eq!(set.failed_sync_jobs, Duration::from_secs(365 * 24 * 3600));
        for (name, value) in [
            ("TRIBUTARY_RETAIN_CREDENTIALS_DAYS", "0"),
            ("TRIBUTARY_RETAIN_SYNC_JOBS", "0"),
            ("TRIBUTARY_RETAIN_WEBHOOKS_DAYS", "a month"),
        ] {
            let err = config(&[(name, value)]).unwrap_err().to_string();
            assert!(err.starts_with(name), "{err}");
        }
    }

    #[test]
    fn provider_limits_are_read_per_provider_and_a_bad_entry_is_named() {
        assert!(config(&[]).unwrap().sync_policy.provider_limits.is_empty());
        let limits = config(&[(
            "TRIBUTARY_PROVIDER_LIMITS",
            "plaid=concurrent:8,rate:600/1m",
        )])
        .unwrap()
        .sync_policy
        .provider_limits;
        assert_eq!(
            limits[&tributary_providers::plaid::PROVIDER].concurrent,
            Some(8)
        );
        let err = config(&[("TRIBUTARY_PROVIDER_LIMITS", "plaid=rate:600")])
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("TRIBUTARY_PROVIDER_LIMITS: `plaid=rate:600`"),
            "{err}"
        );
        let err = config(&[("TRIBUTARY_PROVIDER_LIMITS", "plaidd=concurrent:8")])
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("`plaidd`") && err.contains("no connector is called that"),
            "{err}"
        );
    }

    #[test]
    fn bad_values_name_the_variable() {
        let err = config(&[("TRIBUTARY_DATABASE_URL", "mysql://x")])
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("TRIBUTARY_DATABASE_URL:"), "{err}");
        let err = config(&[("TRIBUTARY_DEVELOPER_SIGNUP", "sometimes")])
            .unwrap_err()
            .to_string();
        assert!(err.contains("TRIBUTARY_DEVELOPER_SIGNUP") && err.contains("sometimes"));
        assert_eq!(
            config(&[]).unwrap().developer_signup,
            tributary_auth::developers::Signup::Closed,
            "closed unless the operator opens it"
        );
        assert_eq!(
            config(&[("TRIBUTARY_DEVELOPER_SIGNUP", "Open")])
                .unwrap()
                .developer_signup,
            tributary_auth::developers::Signup::Open
        );
        let err = config(&[("TRIBUTARY_DEMO", "perhaps")])
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("TRIBUTARY_DEMO") && err.contains("perhaps"),
            "{err}"
        );
        let err = config(&[("TRIBUTARY_DB_POOL_SIZE", "0")])
            .unwrap_err()
            .to_string();
        assert!(err.contains("TRIBUTARY_DB_POOL_SIZE"), "{err}");
    }

    #[test]
    fn simplefin_counts_are_bounded_and_the_window_uncapped_by_default() {
        let c = config(&[]).unwrap();
        assert_eq!(
            (c.simplefin_daily_requests, c.simplefin_max_window_days),
            (24, None)
        );
        let c = config(&[
            ("TRIBUTARY_SIMPLEFIN_DAILY_REQUESTS", "100"),
            ("TRIBUTARY_SIMPLEFIN_MAX_WINDOW_DAYS", " 400 "),
        ])
        .unwrap();
        assert_eq!(
            (c.simplefin_daily_requests, c.simplefin_max_window_days),
            (100, Some(400))
        );
        for bad in ["0", "-5", "100001", "a year"] {
            let err = config(&[("TRIBUTARY_SIMPLEFIN_MAX_WINDOW_DAYS", bad)])
                .unwrap_err()
                .to_string();
            assert!(
                err.starts_with("TRIBUTARY_SIMPLEFIN_MAX_WINDOW_DAYS:") && err.contains(bad),
                "{err}"
            );
        }
    }

    #[test]
    fn payments_are_off_unless_chosen_and_stripe_needs_its_key_and_price() {
        assert!(matches!(
            config(&[]).unwrap().payments,
            PaymentsSettings::None
        ));
        assert!(matches!(
            config(&[("TRIBUTARY_PAYMENTS", "test")]).unwrap().payments,
            PaymentsSettings::Test
        ));
        let err = config(&[("TRIBUTARY_PAYMENTS", "stripe")])
            .unwrap_err()
            .to_string();
        assert!(err.contains("TRIBUTARY_STRIPE_SECRET_KEY"), "{err}");
        let stripe = config(&[
            ("TRIBUTARY_PAYMENTS", "stripe"),
            ("TRIBUTARY_STRIPE_SECRET_KEY", "sk_live_secret"),
            ("TRIBUTARY_STRIPE_PRICE_ID", "price_1"),
        ])
        .unwrap();
        assert!(matches!(
            &stripe.payments,
            PaymentsSettings::Stripe { api_base, price_id, .. }
                if api_base == "https://api.stripe.com" && price_id == "price_1"
        ));
        assert!(!format!("{stripe:?}").contains("sk_live_secret"));
        let err = config(&[("TRIBUTARY_PAYMENTS", "paypal")])
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("TRIBUTARY_PAYMENTS") && err.contains("paypal"),
            "{err}"
        );
    }

    #[test]
    fn smtp_url_is_a_secret() {
        let c = config(&[("TRIBUTARY_SMTP_URL", "smtps://u:hunter2@mail.example")]).unwrap();
        assert!(c.smtp_url.is_some());
        assert!(!format!("{c:?}").contains("hunter2"));
        assert_eq!(c.mail_from, "Tributary <no-reply@localhost>");
    }

    #[test]
    fn metrics_need_a_long_token_or_a_loopback_address() {
        let none = config(&[]).unwrap().metrics;
        assert!(none.token.is_none() && none.bind.is_none());
        let err = config(&[("TRIBUTARY_METRICS_TOKEN", "short")])
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("TRIBUTARY_METRICS_TOKEN") && !err.contains("short"),
            "{err}"
        );
        let token = config(&[("TRIBUTARY_METRICS_TOKEN", "scrape-me-0123456789")]).unwrap();
        assert!(!format!("{token:?}").contains("scrape-me"));
        for public in [
            "0.0.0.0:9464",
            "192.0.2.7:9464",
            "[::]:9464",
            "localhost:9464",
        ] {
            let err = config(&[("TRIBUTARY_METRICS_BIND", public)])
                .unwrap_err()
                .to_string();
            assert!(err.contains("loopback"), "{public}: {err}");
        }
        for local in ["127.0.0.1:9464", "[::1]:0"] {
            let bind = config(&[("TRIBUTARY_METRICS_BIND", local)])
                .unwrap()
                .metrics
                .bind;
            assert_eq!(bind, Some(local.parse().unwrap()));
        }
    }
}
