//! Running a sync: fetch a snapshot from the connection's provider (holding
//! no database connection while waiting on it), then let storage reconcile
//! and apply it in one transaction. Every run leaves a `sync_jobs` row.

use crate::connector::{ConnectorError, FetchContext};
use crate::registry::Registry;
use std::sync::Arc;
use tributary_domain::clock::Clock;
use tributary_domain::model::{ConnectionStatus, Provider, SyncJobKind, SyncJobStatus};
use tributary_domain::reconcile::SyncSummary;
use tributary_storage::connections::{self, ConnectionRecord, NewConnection};
use tributary_storage::{Database, StorageError, sync_apply, sync_jobs};

#[derive(Debug, thiserror::Error)]
pub enum SyncError {
    #[error(transparent)]
    Storage(#[from] StorageError),
    #[error("no connector is configured for provider `{0}`")]
    NoConnector(Provider),
    /// Connecting failed at the provider; nothing was stored.
    #[error(transparent)]
    Connect(ConnectorError),
    #[error("connection {0} is disconnected; connect it again to sync")]
    Disconnected(i64),
}

/// How a sync ended when the machinery itself worked.
#[derive(Debug, Clone, PartialEq)]
pub enum SyncOutcome {
    Synced {
        job_id: i64,
        summary: SyncSummary,
    },
    /// The provider failed; the connection's status and reason say why.
    ProviderFailed {
        job_id: i64,
        error: ConnectorError,
    },
}

/// A connection id and how its sync went.
pub type ConnectionSyncResult = (i64, Result<SyncOutcome, SyncError>);

#[derive(Debug, Clone)]
pub struct SyncEngine {
    db: Database,
    registry: Registry,
    clock: Arc<dyn Clock>,
}

impl SyncEngine {
    pub fn new(db: Database, registry: Registry, clock: Arc<dyn Clock>) -> Self {
        Self {
            db,
            registry,
            clock,
        }
    }

    /// Checks the settings with the provider and stores a new connection
    /// (not yet synced).
    pub fn connect(
        &self,
        user_id: i64,
        provider: Provider,
        settings: &serde_json::Value,
    ) -> Result<ConnectionRecord, SyncError> {
        let connector = self
            .registry
            .get(provider)
            .ok_or(SyncError::NoConnector(provider))?;
        let institution = connector.prepare(settings).map_err(SyncError::Connect)?;
        let mut conn = self.db.conn()?;
        Ok(connections::create_connection(
            &mut conn,
            &NewConnection {
                user_id,
                provider,
                institution: &institution,
                settings,
                now: self.clock.now().naive_utc(),
            },
        )?)
    }

    pub fn sync_connection(
        &self,
        connection_id: i64,
        kind: SyncJobKind,
    ) -> Result<SyncOutcome, SyncError> {
        let (connection, job_id) = {
            let mut conn = self.db.conn()?;
            let connection = connections::get_connection(&mut conn, connection_id)?;
            if connection.status == ConnectionStatus::Disconnected {
                return Err(SyncError::Disconnected(connection_id));
            }
            let job_id =
                sync_jobs::start_job(&mut conn, connection_id, kind, self.clock.now().naive_utc())?;
            (connection, job_id)
        };
        let fetched = match self.registry.get(connection.provider) {
            Some(connector) => connector.fetch(&FetchContext {
                now: self.clock.now(),
                settings: &connection.settings,
                last_synced_at: connection.last_synced_at.map(|at| at.and_utc()),
            }),
            None => Err(ConnectorError::Misconfigured(format!(
                "no connector is configured for provider `{}`",
                connection.provider
            ))),
        };

        let mut conn = self.db.conn()?;
        let now = self.clock.now().naive_utc();
        match fetched {
            Ok(snapshot) => {
                match sync_apply::apply_snapshot(&mut conn, connection_id, &snapshot, now) {
                    Ok(summary) => {
                        let summary_json = serde_json::to_string(&summary).ok();
                        sync_jobs::finish_job(
                            &mut conn,
                            job_id,
                            SyncJobStatus::Succeeded,
                            summary_json.as_deref(),
                            None,
                            now,
                        )?;
                        log::info!("sync of connection {connection_id} done: {summary:?}");
                        Ok(SyncOutcome::Synced { job_id, summary })
                    }
                    Err(err) => {
                        log::error!(
                            "sync of connection {connection_id} could not be stored: {err}"
                        );
                        sync_jobs::finish_job(
                            &mut conn,
                            job_id,
                            SyncJobStatus::Failed,
                            None,
                            Some("storing the snapshot failed"),
                            now,
                        )?;
                        Err(err.into())
                    }
                }
            }
            Err(error) => {
                let reason = error.to_string();
                log::warn!("sync of connection {connection_id} failed at the provider: {reason}");
                connections::record_failure(
                    &mut conn,
                    connection_id,
                    error.connection_status(),
                    &reason,
                    now,
                )?;
                sync_jobs::finish_job(
                    &mut conn,
                    job_id,
                    SyncJobStatus::Failed,
                    None,
                    Some(&reason),
                    now,
                )?;
                Ok(SyncOutcome::ProviderFailed { job_id, error })
            }
        }
    }

    /// Syncs every connection of a user (or of everyone), one after another.
    pub fn sync_all(
        &self,
        user_id: Option<i64>,
        kind: SyncJobKind,
    ) -> Result<Vec<ConnectionSyncResult>, SyncError> {
        let targets = connections::list_connections(&mut *self.db.conn()?, user_id)?;
        Ok(targets
            .into_iter()
            .filter(|c| c.status != ConnectionStatus::Disconnected)
            .map(|c| (c.id, self.sync_connection(c.id, kind)))
            .collect())
    }
}
