//! The contract between the sync engine and a data source.
//!
//! Connectors are synchronous: a sync runs on a worker thread (never on the
//! async HTTP runtime), between two short database transactions, and holds no
//! pooled database connection while it waits on the provider.

use chrono::{DateTime, Utc};
use std::fmt;
use std::time::Duration;
use tributary_domain::model::{ConnectionStatus, Provider};
use tributary_domain::snapshot::{ProviderSnapshot, SnapshotInstitution};

/// What a connector knows about the connection it fetches for.
#[derive(Debug, Clone)]
pub struct FetchContext<'a> {
    pub now: DateTime<Utc>,
    /// The connection's non-secret settings, as `connect` stored them.
    pub settings: &'a serde_json::Value,
    /// The end of the previous successful sync, if any.
    pub last_synced_at: Option<DateTime<Utc>>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConnectorError {
    /// The credentials are wrong; retrying will not help.
    #[error("the provider rejected the credentials: {0}")]
    InvalidCredentials(String),
    /// The user must log in at the provider again (expired consent, MFA…).
    #[error("the provider asks the user to re-authenticate: {0}")]
    ReauthRequired(String),
    /// A transient failure (outage, timeout, 5xx, 429); worth retrying.
    #[error("the provider is unavailable: {reason}")]
    Unavailable {
        reason: String,
        retry_after: Option<Duration>,
    },
    /// The connection's stored settings are unusable.
    #[error("the connection is misconfigured: {0}")]
    Misconfigured(String),
    /// The provider answered something we cannot read.
    #[error("the provider sent an unexpected answer: {0}")]
    Protocol(String),
}

impl ConnectorError {
    /// The connection status a sync that failed this way leaves behind.
    pub fn connection_status(&self) -> ConnectionStatus {
        match self {
            ConnectorError::InvalidCredentials(_) | ConnectorError::ReauthRequired(_) => {
                ConnectionStatus::ReauthRequired
            }
            ConnectorError::Unavailable { .. }
            | ConnectorError::Misconfigured(_)
            | ConnectorError::Protocol(_) => ConnectionStatus::Error,
        }
    }

    /// Whether retrying later may succeed without the user doing anything.
    pub fn is_transient(&self) -> bool {
        matches!(self, ConnectorError::Unavailable { .. })
    }
}

pub trait Connector: Send + Sync + fmt::Debug {
    fn provider(&self) -> Provider;

    /// Checks new connection settings before anything is stored, and names
    /// the institution the connection will point at.
    fn prepare(&self, settings: &serde_json::Value) -> Result<SnapshotInstitution, ConnectorError>;

    /// The provider's current view of the connection.
    fn fetch(&self, context: &FetchContext<'_>) -> Result<ProviderSnapshot, ConnectorError>;
}
