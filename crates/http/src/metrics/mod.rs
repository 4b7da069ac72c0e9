//! Prometheus metrics (OpenMetrics text) at `GET /metrics`, for the
//! operator: requests by route and status with their latency, the database
//! pool's use and wait, sync jobs by status, seconds since each connection's
//! last successful sync, and imported transactions.
//!
//! A request only adds to in-memory counters (the [`serve::record`]
//! middleware);
//! everything read from the database is read when the endpoint is scraped.
//! Who may scrape is the operator's choice ([`MetricsAccess`]): a bearer
//! token on the main address, or a separate loopback-only address without
//! one; with neither, `/metrics` is not served. Labels carry no user, no
//! e-mail, no institution: route patterns (never raw paths), methods,
//! statuses, providers and connection ids.

pub mod serve;

use actix_web::http::{Method, StatusCode};
use chrono::NaiveDateTime;
use prometheus_client::encoding::{EncodeLabelSet, text};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::{Registry, Unit};
use std::sync::atomic::AtomicU64;
use std::time::Duration;
use tributary_app::config::MetricsAccess;
use tributary_auth::secret;
use tributary_storage::stats::{self, ConnectionFreshness};
use tributary_storage::{Database, PoolUse, StorageError};

pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    /// The route's pattern, e.g. `/api/v1/accounts/{accountId}/transactions`;
    /// `unmatched` for paths no route serves, so a scanner cannot grow the
    /// label set.
    route: String,
    method: &'static str,
    status: u16,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ImportLabels {
    /// `added`, `updated` or `unchanged`.
    outcome: &'static str,
}

type LatencyFamily = Family<RequestLabels, Histogram, fn() -> Histogram>;

fn latency_histogram() -> Histogram {
    // 0.5 ms to about 8 s.
    Histogram::new(exponential_buckets(0.0005, 2.0, 15))
}

/// The in-process metrics, shared by every worker of a server.
#[derive(Debug)]
pub struct Metrics {
    registry: Registry,
    requests: Family<RequestLabels, Counter>,
    latency: LatencyFamily,
    imported: Family<ImportLabels, Counter>,
    /// The SHA-256 of `TRIBUTARY_METRICS_TOKEN`, when one is configured.
    token_hash: Option<String>,
}

impl Metrics {
    pub fn new(access: &MetricsAccess) -> Self {
        let mut registry = Registry::with_prefix("tributary");
        let requests = Family::<RequestLabels, Counter>::default();
        registry.register(
            "http_requests",
            "HTTP requests answered, by route pattern, method and status",
            requests.clone(),
        );
        let latency = LatencyFamily::new_with_constructor(latency_histogram);
        registry.register_with_unit(
            "http_request_duration",
            "Time from a request's arrival to its response head (a streamed body may go on)",
            Unit::Seconds,
            latency.clone(),
        );
        let imported = Family::<ImportLabels, Counter>::default();
        registry.register(
            "imported_transactions",
            "Transactions in statement files imported through this server, by what the import did with them",
            imported.clone(),
        );
        Self {
            registry,
            requests,
            latency,
            imported,
            token_hash: access.token.as_ref().map(|token| secret::hash(&token.0)),
        }
    }

    fn observe_request(&self, route: String, method: &Method, status: StatusCode, took: Duration) {
        let labels = RequestLabels {
            route,
            method: method_label(method),
            status: status.as_u16(),
        };
        self.latency
            .get_or_create(&labels)
            .observe(took.as_secs_f64());
        self.requests.get_or_create(&labels).inc();
    }

    /// Counts what an import did.
    pub fn imported(&self, added: usize, updated: usize, unchanged: usize) {
        for (outcome, count) in [
            ("added", added),
            ("updated", updated),
            ("unchanged", unchanged),
        ] {
            self.imported
                .get_or_create(&ImportLabels { outcome })
                .inc_by(count as u64);
        }
    }

    /// The text a scrape answers: the in-process metrics, then what was
    /// read from the database now.
    fn render(&self, pool: PoolUse, database: Result<DatabaseView, StorageError>) -> String {
        let mut scraped = Registry::with_prefix("tributary");
        register_pool(&mut scraped, pool);
        let up = Gauge::<i64>::default();
        scraped.register(
            "database_up",
            "1 when the scrape could read the database, 0 when it could not",
            up.clone(),
        );
        match database {
            Ok(view) => {
                up.set(1);
                view.register(&mut scraped);
            }
            Err(err) => log::warn!("metrics: the database could not be read: {err}"),
        }
        let mut out = String::new();
        // Writing into a String cannot fail.
        let _ = text::encode_registry(&mut out, &self.registry);
        let _ = text::encode_registry(&mut out, &scraped);
        let _ = text::encode_eof(&mut out);
        out
    }
}

/// A fixed set, so that a client sending made-up methods cannot grow the
/// label set.
fn method_label(method: &Method) -> &'static str {
    match *method {
        Method::GET => "GET",
        Method::HEAD => "HEAD",
        Method::POST => "POST",
        Method::PUT => "PUT",
        Method::PATCH => "PATCH",
        Method::DELETE => "DELETE",
        Method::OPTIONS => "OPTIONS",
        _ => "other",
    }
}

fn register_pool(registry: &mut Registry, pool: PoolUse) {
    let gauge = |value: u32| {
        let g = Gauge::<i64>::default();
        g.set(i64::from(value));
        g
    };
    let counter = |value: u64| {
        let c = Counter::<u64>::default();
        c.inc_by(value);
        c
    };
    registry.register(
        "db_pool_connections",
        "Database connections the pool holds open now",
        gauge(pool.open),
    );
    registry.register(
        "db_pool_idle_connections",
        "Open database connections no request is using",
        gauge(pool.idle),
    );
    registry.register(
        "db_pool_max_connections",
        "The most connections the pool opens (TRIBUTARY_DB_POOL_SIZE)",
        gauge(pool.max),
    );
    registry.register(
        "db_pool_checkouts",
        "Connections handed out by the pool since start",
        counter(pool.served),
    );
    registry.register(
        "db_pool_checkout_timeouts",
        "Checkouts that found no free connection in time (answered 503)",
        counter(pool.timed_out),
    );
    let waited = Counter::<f64, AtomicU64>::default();
    waited.inc_by(pool.waited.as_secs_f64());
    registry.register_with_unit(
        "db_pool_wait",
        "Time checkouts spent waiting for a connection, in all (divide by checkouts for the mean)",
        Unit::Seconds,
        waited,
    );
}

/// What a scrape reads from the database.
#[derive(Debug)]
pub(crate) struct DatabaseView {
    jobs: Vec<(String, i64)>,
    connections: Vec<ConnectionFreshness>,
    now: NaiveDateTime,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct JobLabels {
    status: String,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ConnectionLabels {
    connection_id: i64,
    provider: String,
    status: String,
}

impl DatabaseView {
    pub(crate) fn read(db: &Database, now: NaiveDateTime) -> Result<Self, StorageError> {
        let mut conn = db.conn()?;
        Ok(Self {
            jobs: stats::sync_jobs_by_status(&mut conn)?,
            connections: stats::connection_freshness(&mut conn)?,
            now,
        })
    }

    fn register(self, registry: &mut Registry) {
        let jobs = Family::<JobLabels, Gauge>::default();
        for (status, count) in self.jobs {
            jobs.get_or_create(&JobLabels { status }).set(count);
        }
        registry.register(
            "sync_jobs",
            "Sync jobs by status: queued is the queue's depth; succeeded and failed count every job since the database began",
            jobs,
        );
        let since_sync = Family::<ConnectionLabels, Gauge>::default();
        for connection in self.connections {
            // A connection that never synced has no age to report.
            let Some(last) = connection.last_synced_at else {
                continue;
            };
            since_sync
                .get_or_create(&ConnectionLabels {
                    connection_id: connection.id,
                    provider: connection.provider,
                    status: connection.status,
                })
                .set((self.now - last).num_seconds().max(0));
        }
        registry.register_with_unit(
            "connection_since_last_sync",
            "Seconds since each synced connection's last successful sync",
            Unit::Seconds,
            since_sync,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pool() -> PoolUse {
        PoolUse {
            open: 3,
            idle: 2,
            max: 8,
            served: 41,
            timed_out: 1,
            waited: Duration::from_millis(1500),
        }
    }

    #[test]
    fn imports_and_an_unreadable_database_are_reported() {
        let metrics = Metrics::new(&MetricsAccess::default());
        metrics.imported(2, 1, 0);
        metrics.imported(3, 0, 5);
        let text = metrics.render(
            pool(),
            Err(StorageError::Unavailable("connection refused".into())),
        );
        for line in [
            "tributary_imported_transactions_total{outcome=\"added\"} 5",
            "tributary_imported_transactions_total{outcome=\"updated\"} 1",
            "tributary_imported_transactions_total{outcome=\"unchanged\"} 5",
            "tributary_database_up 0",
            "tributary_db_pool_max_connections 8",
            "tributary_db_pool_idle_connections 2",
            "tributary_db_pool_checkouts_total 41",
            "tributary_db_pool_checkout_timeouts_total 1",
            "tributary_db_pool_wait_seconds_total 1.5",
        ] {
            assert!(
                text.lines().any(|l| l == line),
                "{line} missing from\n{text}"
            );
        }
        assert!(!text.contains("tributary_sync_jobs"));
        assert_eq!(text.matches("# EOF").count(), 1);
    }

    #[test]
    fn made_up_methods_share_one_label() {
        let metrics = Metrics::new(&MetricsAccess::default());
        for method in ["BREW", "PROPFIND", "X-ANYTHING"] {
            metrics.observe_request(
                "unmatched".into(),
                &Method::from_bytes(method.as_bytes()).unwrap(),
                StatusCode::METHOD_NOT_ALLOWED,
                Duration::from_millis(1),
            );
        }
        let text = metrics.render(pool(), Err(StorageError::Unavailable(String::new())));
        assert!(text.contains(
            "tributary_http_requests_total{route=\"unmatched\",method=\"other\",status=\"405\"} 3"
        ));
        assert!(!text.contains("BREW"));
    }
}
