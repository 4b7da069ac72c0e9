use std::ops::Deref;
use std::sync::Arc;
use tributary_domain::clock::Clock;
use tributary_notify::mail::{DevOutbox, Mailer};
use tributary_providers::payments::PaymentProcessor;
use tributary_providers::sync::SyncEngine;
use tributary_storage::Database;

/// Shared by every request handler; cheap to clone.
#[derive(Debug, Clone)]
pub struct AppState {
    pub db: Database,
    pub clock: Arc<dyn Clock>,
    /// The address users reach this server at (`TRIBUTARY_PUBLIC_URL`), for
    /// links it hands out; `None`: taken from each request's Host.
    pub public_url: Option<String>,
    /// Connects banks from the browser pages; `None` where pages cannot.
    pub engine: Option<Engine>,
    pub mailer: Arc<dyn Mailer>,
    /// Checkout for apps whose users pay; `None`: not configured.
    pub payments: Option<Arc<dyn PaymentProcessor>>,
    /// Trust the last `X-Forwarded-For` entry as the client's address.
    pub behind_proxy: bool,
    /// Listings being streamed, each holding a connection.
    pub streams: crate::transaction_stream::StreamSlots,
    /// Counted by every request; read at `/metrics`.
    pub metrics: Arc<crate::metrics::Metrics>,
    /// Requests a day each SimpleFIN destination may make.
    pub simplefin_daily_requests: i32,
    /// How many MCP requests each credential may make a minute, and what
    /// each has made (docs/mcp.md).
    pub mcp_limit: crate::mcp::RequestLimit,
    /// How far back one SimpleFIN request may reach (`None`: no cap).
    pub simplefin_max_window_days: Option<u32>,
    /// Who may sign up to the developer dashboard.
    pub developer_signup: tributary_auth::developers::Signup,
    /// Seals webhook signing secrets; `None` where webhooks cannot be made.
    pub sealer: Option<Arc<dyn tributary_domain::secrets::Sealer>>,
    /// The guard webhook URLs are checked with at registration
    /// (docs/operations.md#outbound-requests).
    pub outbound: tributary_outbound::Guard,
    /// Threads of their own for handlers that wait on providers (connects),
    /// so that a slow provider holds none of the database work's.
    pub provider_calls: crate::provider_calls::ProviderCalls,
    /// Credentials and accounts' versions known without the database.
    pub caches: tributary_app::caches::Caches,
    /// Data responses kept while the data they show is unchanged.
    pub responses: Arc<crate::response_cache::ResponseCache>,
}

impl AppState {
    /// A state with no sync engine, no payments, and the development outbox.
    pub fn new(db: Database, clock: Arc<dyn Clock>, public_url: Option<String>) -> Self {
        Self {
            streams: crate::transaction_stream::StreamSlots::for_pool(db.max_connections()),
            caches: tributary_app::caches::Caches::for_database(&db),
            responses: Arc::new(crate::response_cache::ResponseCache::new(
                db.freshness().clone(),
            )),
            db,
            clock,
            public_url,
            engine: None,
            mailer: Arc::new(DevOutbox::default()),
            payments: None,
            behind_proxy: false,
            metrics: Arc::new(crate::metrics::Metrics::new(&Default::default())),
            simplefin_daily_requests: tributary_app::config::DEFAULT_SIMPLEFIN_DAILY_REQUESTS,
            simplefin_max_window_days: None,
            mcp_limit: crate::mcp::RequestLimit::per_minute(
                tributary_app::config::DEFAULT_MCP_REQUESTS_PER_MINUTE,
            ),
            developer_signup: tributary_auth::developers::Signup::Closed,
            sealer: None,
            outbound: tributary_outbound::Guard::new(Default::default()),
            provider_calls: Default::default(),
        }
    }

    pub fn with_metrics(mut self, access: &tributary_app::config::MetricsAccess) -> Self {
        self.metrics = Arc::new(crate::metrics::Metrics::new(access));
        self
    }

    pub fn with_engine(mut self, engine: SyncEngine) -> Self {
        self.engine = Some(Engine(Arc::new(DropOffRuntime(Some(engine)))));
        self
    }

    pub fn with_mailer(mut self, mailer: Arc<dyn Mailer>) -> Self {
        self.mailer = mailer;
        self
    }

    pub fn with_payments(mut self, payments: Arc<dyn PaymentProcessor>) -> Self {
        self.payments = Some(payments);
        self
    }

    /// The address users reach this server at, without a trailing slash:
    /// `TRIBUTARY_PUBLIC_URL`, else as the request reached it (forwarding
    /// headers only behind a proxy: [`crate::origin`]).
    pub fn base_url(&self, req: &actix_web::HttpRequest) -> String {
        match &self.public_url {
            Some(base) => base.clone(),
            None => crate::origin::request_origin(req, self.behind_proxy),
        }
    }

    /// The absolute URL of `path` on this server, as users reach it
    /// ([`Self::base_url`]). Every absolute URL the server hands out is
    /// made here.
    pub fn absolute_url(&self, req: &actix_web::HttpRequest, path: &str) -> String {
        format!("{}{path}", self.base_url(req))
    }

    /// The `host[:port]` users reach this server at ([`Self::base_url`]).
    pub fn public_host(&self, req: &actix_web::HttpRequest) -> String {
        crate::origin::host_of(&self.base_url(req)).to_owned()
    }

    /// Whether the absolute URLs this server hands out are the operator's
    /// (`TRIBUTARY_PUBLIC_URL`) rather than read from each request: only
    /// then may a shared cache keep an answer holding them.
    pub fn has_public_url(&self) -> bool {
        self.public_url.is_some()
    }

    /// The client's IP address, for per-IP limits: the peer, or behind a
    /// proxy the address that proxy appended to `X-Forwarded-For` (entries
    /// before it come from the client and may be forged).
    pub fn client_ip(&self, req: &actix_web::HttpRequest) -> String {
        let forwarded = self
            .behind_proxy
            .then(|| req.headers().get_all("x-forwarded-for").last())
            .flatten()
            .and_then(|value| value.to_str().ok())
            .and_then(|list| list.rsplit(',').next())
            .map(|ip| ip.trim().to_owned())
            .filter(|ip| ip.parse::<std::net::IpAddr>().is_ok());
        forwarded
            .or_else(|| req.peer_addr().map(|a| a.ip().to_string()))
            .unwrap_or_else(|| "unknown".to_owned())
    }

    /// Whether cookies must be `Secure`: the public URL is https.
    pub fn serves_tls(&self) -> bool {
        self.public_url
            .as_deref()
            .is_some_and(|url| url.starts_with("https://"))
    }
}

/// The sync engine as the HTTP layer holds it. Its connectors own blocking
/// HTTP clients, which panic when dropped on an async runtime thread, and
/// the last clone of the state is dropped on one: the engine is dropped on
/// a thread of its own instead.
#[derive(Debug, Clone)]
pub struct Engine(Arc<DropOffRuntime>);

#[derive(Debug)]
struct DropOffRuntime(Option<SyncEngine>);

impl Drop for DropOffRuntime {
    fn drop(&mut self) {
        if let Some(engine) = self.0.take() {
            let _ = std::thread::spawn(move || drop(engine)).join();
        }
    }
}

impl Deref for Engine {
    type Target = SyncEngine;
    fn deref(&self) -> &SyncEngine {
        self.0
            .0
            .as_ref()
            .expect("the engine is only taken out when dropped")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use actix_web::test::TestRequest;
    use tributary_domain::clock::SystemClock;
    use tributary_storage::testing::TestDatabase;

    #[test]
    fn the_client_ip_comes_from_the_proxy_only_when_one_is_trusted() {
        let database = TestDatabase::sqlite();
        let mut state = AppState::new(database.db().clone(), Arc::new(SystemClock), None);
        let req = TestRequest::default()
            .peer_addr("10.0.0.5:40000".parse().expect("address"))
            .insert_header(("x-forwarded-for", "6.6.6.6, 203.0.113.9"))
            .to_http_request();
        assert_eq!(
            state.client_ip(&req),
            "10.0.0.5",
            "headers are not trusted by default"
        );
        state.behind_proxy = true;
        assert_eq!(
            state.client_ip(&req),
            "203.0.113.9",
            "the entry the proxy appended"
        );
        let garbled = TestRequest::default()
            .peer_addr("10.0.0.5:40000".parse().expect("address"))
            .insert_header(("x-forwarded-for", "not-an-ip"))
            .to_http_request();
        assert_eq!(state.client_ip(&garbled), "10.0.0.5");
    }
}
