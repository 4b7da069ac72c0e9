use std::sync::Arc;
use tributary_domain::clock::Clock;
use tributary_storage::Database;

/// Shared by every request handler; cheap to clone.
#[derive(Debug, Clone)]
pub struct AppState {
    pub db: Database,
    pub clock: Arc<dyn Clock>,
    /// The address users reach this server at (`TRIBUTARY_PUBLIC_URL`), for
    /// links it hands out; `None`: taken from each request's Host.
    pub public_url: Option<String>,
}
