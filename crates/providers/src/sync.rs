//! The sync engine. Every sync is a job in the `sync_jobs` queue: the
//! scheduler enqueues due connections, users enqueue on-demand syncs, and a
//! worker claims a job, fetches the provider's snapshot (holding no database
//! connection while it waits on the provider), and stores the result in one
//! transaction fenced by its lease. Failures set the connection's status:
//! transient ones are retried with backoff, credential ones are not.

use crate::connector::{
    AuthorizationReturn, ConnectRequest, ConnectorError, FetchContext, InstitutionChoice,
};
use crate::registry::Registry;
use chrono::{DateTime, NaiveDateTime, Utc};
use rand::RngExt as _;
use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;
use tributary_domain::clock::Clock;
use tributary_domain::ids::{ConnectionId, SyncJobId, UserId};
use tributary_domain::model::{ConnectionStatus, Provider, SyncJobKind, SyncJobStatus};
use tributary_domain::reconcile::SyncSummary;
use tributary_domain::schedule::{SyncPolicy, on_demand_wait};
use tributary_domain::secrets::{Sealer, credentials_context};
use tributary_domain::snapshot::ProviderSnapshot;
use tributary_domain::status::StatusDetail;
use tributary_storage::AnyConnection;
use tributary_storage::account_choice::{self, Choosable};
use tributary_storage::connections::{self, ConnectionRecord, NewConnection};
use tributary_storage::job_outcomes::{self, DailyQuota, Failure};
use tributary_storage::provider_limits::{self, Admission};
use tributary_storage::sync_jobs::{self, ClaimedJob};
use tributary_storage::{Database, StorageError, read, sync_apply};

/// What the connection holds that a fetch's window depends on
/// ([`FetchContext`]).
struct Held {
    oldest_pending: Option<chrono::NaiveDate>,
    /// The provider's ids of its accounts.
    accounts: HashSet<String>,
    /// The accounts the person chose to share; `None`: all.
    chosen: Option<std::collections::BTreeSet<String>>,
}

/// Why a provider's webhook was not applied.
#[derive(Debug, thiserror::Error)]
pub enum WebhookError {
    #[error(transparent)]
    Refused(crate::provider_webhook::WebhookRefusal),
    #[error(transparent)]
    Storage(#[from] StorageError),
}

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
    Disconnected(ConnectionId),
    #[error(
        "connection {0} holds imported statements, which are not synced: import new files instead"
    )]
    NotSynced(ConnectionId),
    /// An on-demand sync was asked for within a minute of the last one.
    #[error("connection {connection_id} was synced on request less than a minute ago")]
    RateLimited {
        connection_id: ConnectionId,
        /// How long until a request is accepted.
        wait: std::time::Duration,
    },
    #[error(
        "this provider keeps credentials, and no secret key is configured (TRIBUTARY_SECRET_KEY)"
    )]
    NoSecretKey,
    #[error("the stored credentials do not open: {0}")]
    CredentialsDoNotOpen(String),
    #[error("connection {connection_id} is being synced by another worker (job {job_id})")]
    AlreadyRunning {
        connection_id: ConnectionId,
        job_id: SyncJobId,
    },
}

/// How a job ended when the machinery itself worked.
#[derive(Debug, Clone, PartialEq)]
pub enum SyncOutcome {
    Synced {
        job_id: SyncJobId,
        summary: SyncSummary,
    },
    /// The provider failed; the connection's status and reason say why.
    /// `retry_at` is set when the job went back to the queue.
    ProviderFailed {
        job_id: SyncJobId,
        error: ConnectorError,
        retry_at: Option<NaiveDateTime>,
    },
    /// The worker's lease expired and another worker took the job over;
    /// this worker stored nothing.
    LeaseLost { job_id: SyncJobId },
    /// A limit held the job back before anything was sent (the provider's
    /// daily quota per connection, or its limits across all workers): it
    /// waits in the queue until `until`.
    Deferred {
        job_id: SyncJobId,
        until: NaiveDateTime,
    },
    /// The job was claimed more often than the policy allows (its workers
    /// stopped or lost it before storing anything): it failed for good with
    /// `reason`, which the connection shows.
    GaveUp { job_id: SyncJobId, reason: String },
}

/// The most due connections one scheduling pass queues; the rest wait for
/// the next pass (a worker's next round), so a pass over a million due
/// connections does not keep its lanes idle meanwhile.
pub const SCHEDULED_PER_PASS: usize = 20_000;

#[derive(Debug, Clone)]
pub struct SyncEngine {
    db: Database,
    registry: Registry,
    clock: Arc<dyn Clock>,
    policy: SyncPolicy,
    /// Seals and opens provider credentials; `None` when no key is
    /// configured (connections with credentials then cannot be made).
    sealer: Option<Arc<dyn Sealer>>,
}

fn at(time: DateTime<Utc>, plus: Duration) -> NaiveDateTime {
    (time + chrono::Duration::from_std(plus).unwrap_or(chrono::Duration::MAX)).naive_utc()
}

fn random_permille() -> u32 {
    rand::rng().random_range(0..1000)
}

impl SyncEngine {
    pub fn new(db: Database, registry: Registry, clock: Arc<dyn Clock>) -> Self {
        Self::with_policy(db, registry, clock, SyncPolicy::default())
    }

    pub fn with_policy(
        db: Database,
        registry: Registry,
        clock: Arc<dyn Clock>,
        policy: SyncPolicy,
    ) -> Self {
        Self {
            db,
            registry,
            clock,
            policy,
            sealer: None,
        }
    }

    pub fn with_sealer(mut self, sealer: Arc<dyn Sealer>) -> Self {
        self.sealer = Some(sealer);
        self
    }

    pub fn database(&self) -> &Database {
        &self.db
    }

    pub fn policy(&self) -> &SyncPolicy {
        &self.policy
    }

    /// Checks the request with the provider and stores a new connection
    /// (credentials sealed), due for its first sync now.
    pub fn connect(
        &self,
        user_id: UserId,
        provider: Provider,
        request: &ConnectRequest,
    ) -> Result<ConnectionRecord, SyncError> {
        let connector = self
            .registry
            .get(provider)
            .ok_or(SyncError::NoConnector(provider))?;
        let prepared = connector.prepare(request).map_err(SyncError::Connect)?;
        let sealed = self.seal(user_id, provider, prepared.credentials.as_deref())?;
        let mut conn = self.db.conn()?;
        Ok(connections::create_connection(
            &mut conn,
            &NewConnection {
                user_id,
                provider,
                institution: &prepared.institution,
                settings: &prepared.settings,
                sealed_credentials: sealed.as_deref(),
                consent_expires_at: prepared
                    .consent
                    .map(|end| end.at(self.clock.now()).naive_utc()),
                now: self.clock.now().naive_utc(),
            },
        )?)
    }

    /// Re-authenticates a connection (REAUTH_REQUIRED, say): checks the new
    /// request with the provider, replaces settings and credentials, keeps
    /// the data, and makes the connection due for a sync now.
    pub fn reconnect(
        &self,
        connection_id: ConnectionId,
        request: &ConnectRequest,
    ) -> Result<ConnectionRecord, SyncError> {
        let (connection, connector) = self.connection_with_connector(connection_id)?;
        let existing = self.open_credentials(&connection)?;
        let prepared = connector
            .prepare_again(request, existing.as_deref())
            .map_err(SyncError::Connect)?;
        self.store_prepared(&connection, &prepared)
    }

    /// The connection and its provider's connector.
    fn connection_with_connector(
        &self,
        connection_id: ConnectionId,
    ) -> Result<(ConnectionRecord, Arc<dyn crate::Connector>), SyncError> {
        let connection = connections::get_connection(&mut *self.db.conn()?, connection_id)?;
        let provider = connection.provider;
        let connector = self
            .registry
            .get(provider)
            .ok_or(SyncError::NoConnector(provider))?
            .clone();
        Ok((connection, connector))
    }

    /// Replaces a connection's settings, credentials (sealed) and consent
    /// end with what the provider prepared.
    fn store_prepared(
        &self,
        connection: &ConnectionRecord,
        prepared: &crate::connector::Prepared,
    ) -> Result<ConnectionRecord, SyncError> {
        let sealed = self.seal(
            connection.user_id,
            connection.provider,
            prepared.credentials.as_deref(),
        )?;
        let now = self.clock.now();
        Ok(connections::replace_credentials(
            &mut *self.db.conn()?,
            connection.id,
            &prepared.institution,
            &prepared.settings,
            sealed.as_deref(),
            prepared.consent.map(|end| end.at(now).naive_utc()),
            now.naive_utc(),
        )?)
    }

    /// Finishes a connection whose user came back from their bank: the
    /// connector exchanges what the return carried (Enable Banking's code
    /// for a session), and the new settings, sealed credentials and consent
    /// end are stored. A provider with nothing to exchange changes nothing.
    pub fn complete_authorization(
        &self,
        connection_id: ConnectionId,
        returned: &AuthorizationReturn,
    ) -> Result<ConnectionRecord, SyncError> {
        let (connection, connector) = self.connection_with_connector(connection_id)?;
        let credentials = self.open_credentials(&connection)?;
        let Some(prepared) = connector
            .complete(&connection.settings, credentials.as_deref(), returned)
            .map_err(SyncError::Connect)?
        else {
            return Ok(connection);
        };
        self.store_prepared(&connection, &prepared)
    }

    /// The banks `provider` reaches in `country` (empty for providers that
    /// connect one way).
    pub fn institutions(
        &self,
        provider: Provider,
        country: &str,
    ) -> Result<Vec<InstitutionChoice>, SyncError> {
        let connector = self
            .registry
            .get(provider)
            .ok_or(SyncError::NoConnector(provider))?;
        connector.institutions(country).map_err(SyncError::Connect)
    }

    /// The provider's enrollment script for `person`'s connect page, if
    /// its connector offers one (`repairing`: the settings of the
    /// connection signed in to again). It may call the provider.
    pub fn connect_widget(
        &self,
        provider: Provider,
        repairing: Option<&serde_json::Value>,
        person: UserId,
    ) -> Result<Option<crate::connector::ConnectWidget>, SyncError> {
        match self.registry.get(provider) {
            Some(connector) => connector
                .connect_widget(repairing, person)
                .map_err(SyncError::Connect),
            None => Ok(None),
        }
    }

    /// The script that opens `provider`'s enrollment script, if its
    /// connector offers one.
    pub fn connect_launcher(&self, provider: Provider) -> Option<&'static str> {
        self.registry.get(provider)?.connect_launcher()
    }

    /// A webhook `provider` sent: checked by its connector, then applied
    /// (connections the bank disconnected need the person). How many
    /// connections it changed.
    pub fn receive_webhook(
        &self,
        provider: Provider,
        inbound: &crate::provider_webhook::InboundWebhook<'_>,
    ) -> Result<usize, WebhookError> {
        use crate::provider_webhook::{ProviderEvent, WebhookRefusal};
        let connector = self
            .registry
            .get(provider)
            .ok_or(WebhookError::Refused(WebhookRefusal::NotTaken))?;
        match connector.webhook(inbound).map_err(WebhookError::Refused)? {
            ProviderEvent::Nothing => Ok(0),
            ProviderEvent::NeedsPerson {
                setting,
                value,
                reason,
            } => {
                let now = inbound.now.naive_utc();
                // All or none: a retry after a failure counts nothing twice.
                let changed = self.db.conn()?.atomically(|conn| {
                    let concerned = connections::with_setting(conn, provider, (setting, &value))?;
                    for id in &concerned {
                        connections::record_failure(
                            conn,
                            *id,
                            ConnectionStatus::ReauthRequired,
                            &reason,
                            None,
                            now,
                        )?;
                    }
                    Ok(concerned.len())
                })?;
                Ok(changed)
            }
        }
    }

    /// Whether a connector for `provider` is configured.
    pub fn supports(&self, provider: Provider) -> bool {
        self.registry.get(provider).is_some()
    }

    fn seal(
        &self,
        user_id: UserId,
        provider: Provider,
        credentials: Option<&str>,
    ) -> Result<Option<Vec<u8>>, SyncError> {
        match (credentials, &self.sealer) {
            (None, _) => Ok(None),
            (Some(credentials), Some(sealer)) => Ok(Some(sealer.seal(
                credentials.as_bytes(),
                &credentials_context(user_id, provider.as_str()),
            ))),
            (Some(_), None) => Err(SyncError::NoSecretKey),
        }
    }

    /// Seals and stores credentials the provider replaced mid-fetch, in
    /// place of `opened` (what the fetch began with) and only of them: a
    /// re-authentication that completed meanwhile, or another worker's
    /// newer exchange, is not overwritten (the swap compares the stored
    /// bytes).
    fn keep_credentials(
        &self,
        connection: &ConnectionRecord,
        opened: Option<&str>,
        fresh: &str,
    ) -> Result<(), SyncError> {
        let conn = &mut *self.db.conn()?;
        let stored = connections::sealed_credentials(conn, connection.id)?;
        let still_opened = match &stored {
            Some(sealed) => self.open_sealed(connection, sealed)?.as_deref() == opened,
            None => opened.is_none(),
        };
        // Sealed only when it will be swapped in: a newer re-authentication
        // is kept as it is.
        let swapped = still_opened && {
            let sealed = self.seal(connection.user_id, connection.provider, Some(fresh))?;
            connections::swap_sealed_credentials(
                conn,
                connection.id,
                (stored.as_deref(), sealed.as_deref()),
                self.clock.now().naive_utc(),
            )?
        };
        if !swapped {
            log::warn!(
                "connection {}: the provider's new credentials were not kept, newer ones are stored",
                connection.id
            );
        }
        Ok(())
    }

    /// The connection's credentials, opened for one fetch.
    fn open_credentials(&self, connection: &ConnectionRecord) -> Result<Option<String>, SyncError> {
        let Some(sealed) = connections::sealed_credentials(&mut *self.db.conn()?, connection.id)?
        else {
            return Ok(None);
        };
        self.open_sealed(connection, &sealed)
    }

    fn open_sealed(
        &self,
        connection: &ConnectionRecord,
        sealed: &[u8],
    ) -> Result<Option<String>, SyncError> {
        let sealer = self.sealer.as_ref().ok_or(SyncError::NoSecretKey)?;
        let opened = sealer
            .open(
                sealed,
                &credentials_context(connection.user_id, connection.provider.as_str()),
            )
            .map_err(SyncError::CredentialsDoNotOpen)?;
        String::from_utf8(opened)
            .map(Some)
            .map_err(|_| SyncError::CredentialsDoNotOpen("they are not text".into()))
    }

    /// Asks for a sync of the connection now, by [`request_sync`]'s rule, as
    /// the operator.
    pub fn request_sync(
        &self,
        connection_id: ConnectionId,
        kind: SyncJobKind,
    ) -> Result<RequestedSync, SyncError> {
        let mut conn = self.db.conn()?;
        let connection = connections::get_connection(&mut conn, connection_id)?;
        request_sync(
            &mut conn,
            &connection,
            kind,
            Requester::Operator,
            self.clock.now().naive_utc(),
        )
    }

    /// Stops syncing a connection and keeps its data: see [`disconnect`].
    pub fn disconnect(&self, connection_id: ConnectionId) -> Result<ConnectionRecord, SyncError> {
        let mut conn = self.db.conn()?;
        let connection = connections::get_connection(&mut conn, connection_id)?;
        disconnect(&mut conn, &connection, self.clock.now().naive_utc())
    }

    /// Enqueues due connections and pushes their next sync one interval
    /// (plus jitter) ahead; returns how many jobs were queued. Every due
    /// connection up to [`SCHEDULED_PER_PASS`] is queued before any is
    /// claimed, so owners take turns over all of them (`sync_jobs`), not
    /// only over the first batch.
    pub fn schedule_due(&self) -> Result<usize, SyncError> {
        const BATCH: usize = 500;
        let mut conn = self.db.conn()?;
        let now = self.clock.now();
        let mut queued = 0;
        let mut seen = 0;
        while seen < SCHEDULED_PER_PASS {
            let due = connections::due_for_sync(&mut conn, now.naive_utc(), BATCH)?;
            seen += due.len();
            for &connection_id in &due {
                let enqueued = sync_jobs::enqueue(
                    &mut conn,
                    connection_id,
                    SyncJobKind::Scheduled,
                    now.naive_utc(),
                    now.naive_utc(),
                )?;
                queued += usize::from(enqueued.created);
                let next = at(now, self.policy.next_sync_delay(random_permille()));
                connections::set_next_sync(&mut conn, connection_id, next)?;
            }
            if due.len() < BATCH {
                break;
            }
        }
        let reminded = connections::announce_expiring_consents(&mut conn, now.naive_utc())?;
        if reminded > 0 {
            log::info!("{reminded} consent expiry reminder(s) written");
        }
        Ok(queued)
    }

    /// Deletes the change feed's tombstones older than the policy keeps
    /// them (`tributary_storage::changes`); how many.
    pub fn purge_tombstones(&self) -> Result<usize, SyncError> {
        let kept = chrono::Duration::from_std(self.policy.tombstone_retention)
            .unwrap_or(chrono::Duration::days(36_500));
        let before = self.clock.now().naive_utc() - kept;
        Ok(tributary_storage::changes::purge_tombstones(
            &mut *self.db.conn()?,
            before,
        )?)
    }

    /// Deletes what the policy's retention no longer keeps: used and
    /// expired credentials, ended webhook deliveries and their events,
    /// old sync jobs (`tributary_storage::retention`).
    pub fn purge_retained(&self) -> Result<tributary_storage::retention::Purged, SyncError> {
        Ok(tributary_storage::retention::purge(
            &mut *self.db.conn()?,
            &self.policy.retention,
            self.clock.now().naive_utc(),
        )?)
    }

    /// Claims the next due job for `worker` (`sync_jobs::claim`).
    pub fn claim_next(&self, worker: &str) -> Result<Option<ClaimedJob>, SyncError> {
        let now = self.clock.now();
        Ok(sync_jobs::claim(
            &mut *self.db.conn()?,
            worker,
            now.naive_utc(),
            at(now, self.policy.lease),
        )?)
    }

    /// Syncs one connection right here: queues (or finds) its job, claims
    /// it and runs it.
    pub fn sync_now(
        &self,
        connection_id: ConnectionId,
        kind: SyncJobKind,
        worker: &str,
    ) -> Result<SyncOutcome, SyncError> {
        let requested = self.request_sync(connection_id, kind)?;
        let now = self.clock.now();
        let claimed = sync_jobs::claim_job(
            &mut *self.db.conn()?,
            requested.job_id,
            worker,
            now.naive_utc(),
            at(now, self.policy.lease),
        )?;
        match claimed {
            Some(job) => self.run_job(&job),
            None => Err(SyncError::AlreadyRunning {
                connection_id,
                job_id: requested.job_id,
            }),
        }
    }

    /// The connections of a user (or of everyone) that can be synced: all
    /// but the disconnected ones.
    pub fn connections_to_sync(
        &self,
        user_id: Option<UserId>,
    ) -> Result<Vec<ConnectionId>, SyncError> {
        let all = connections::list_connections(&mut *self.db.conn()?, user_id)?;
        Ok(all
            .into_iter()
            .filter(|c| c.status != ConnectionStatus::Disconnected && c.provider.is_synced())
            .map(|c| c.id)
            .collect())
    }

    /// Runs a claimed job to its end: prepare (attempts, credentials, the
    /// provider's daily quota), fetch the snapshot, record the outcome.
    pub fn run_job(&self, job: &ClaimedJob) -> Result<SyncOutcome, SyncError> {
        let (connection, credentials) = match self.prepare(job)? {
            Prepared::Ready {
                connection,
                credentials,
            } => (connection, credentials),
            Prepared::Done(outcome) => return Ok(outcome),
        };
        let held = {
            let conn = &mut *self.db.conn()?;
            Held {
                oldest_pending: read::oldest_pending(conn, connection.id)?,
                accounts: read::provider_account_ids(conn, connection.id)?,
                chosen: account_choice::chosen(conn, connection.id)?,
            }
        };
        let fetched = self
            .fetch(job, &connection, credentials.as_deref(), &held)
            .and_then(
                |snapshot| match unexpected(connection.provider, &snapshot) {
                    Some(unexpected) => Err(ConnectorError::Misconfigured(format!(
                        "provider {} reported {unexpected} but is not described as reporting them",
                        connection.provider
                    ))),
                    None => Ok(snapshot),
                },
            );
        match fetched {
            Ok(snapshot) => self.record_snapshot(job, &snapshot),
            Err(error) => self.record_provider_failure(job, error),
        }
    }

    /// What a job needs before the provider is asked, or the outcome that
    /// ends it here: too many attempts, or the daily quota used up.
    fn prepare(&self, job: &ClaimedJob) -> Result<Prepared, SyncError> {
        // Every claim counts an attempt, takeovers of an expired lease too:
        // a job that never gets to store its result stops cycling here.
        if job.attempts > self.policy.max_attempts {
            let reason = format!(
                "the sync did not finish in {} attempts: each time, its worker stopped or lost \
                 the job before storing the result",
                self.policy.max_attempts
            );
            log::warn!("job {}: {reason}", job.id);
            self.end_in_error(job, &reason)?;
            return Ok(Prepared::Done(SyncOutcome::GaveUp {
                job_id: job.id,
                reason,
            }));
        }
        let connection = connections::get_connection(&mut *self.db.conn()?, job.connection_id)?;
        let credentials = match self.open_credentials(&connection) {
            Ok(credentials) => credentials,
            Err(err) => {
                self.end_in_error(job, &err.to_string())?;
                return Err(err);
            }
        };
        // `None`: the provider has no limits across workers.
        let admission = match self.admit(job, connection.provider)? {
            None => None,
            Some(Admission::Admitted(admission)) => Some(admission),
            Some(Admission::Deferred { until }) => {
                log::info!(
                    "job {}: {} is at its limit; deferred to {until} UTC",
                    job.id,
                    connection.provider
                );
                return Ok(Prepared::Done(SyncOutcome::Deferred {
                    job_id: job.id,
                    until,
                }));
            }
        };
        if let Some(limit) = self
            .registry
            .get(connection.provider)
            .and_then(|c| c.daily_sync_limit())
        {
            let now = self.clock.now();
            let today = now.date_naive();
            let until = today
                .succ_opt()
                .unwrap_or(today)
                .and_time(chrono::NaiveTime::MIN);
            let reason = format!(
                "sync deferred to {until} UTC: {} allows {limit} syncs a day per connection",
                connection.provider
            );
            let quota = DailyQuota {
                limit,
                today,
                next_window: until,
                reason: &reason,
            };
            if !job_outcomes::take_quota_or_defer(
                &mut *self.db.conn()?,
                job,
                quota,
                now.naive_utc(),
            )? {
                log::info!("job {}: {reason}", job.id);
                // Not sent after all: the provider's rate has its place back.
                if let Some(admission) = admission {
                    provider_limits::release(&mut *self.db.conn()?, admission)?;
                }
                return Ok(Prepared::Done(SyncOutcome::Deferred {
                    job_id: job.id,
                    until,
                }));
            }
        }
        Ok(Prepared::Ready {
            connection,
            credentials,
        })
    }

    /// Lets the job through to its provider under the provider's limits
    /// across all workers (the operator's, else the connector's own), or
    /// puts it back in the queue; `None` when the provider has none.
    fn admit(&self, job: &ClaimedJob, provider: Provider) -> Result<Option<Admission>, SyncError> {
        let limits = match self.policy.provider_limits.get(&provider) {
            Some(limits) => *limits,
            None => self
                .registry
                .get(provider)
                .map(|c| c.limits())
                .unwrap_or_default(),
        };
        if limits.is_unlimited() {
            return Ok(None);
        }
        Ok(Some(provider_limits::admit_or_defer(
            &mut *self.db.conn()?,
            job,
            provider,
            &limits,
            self.clock.now().naive_utc(),
        )?))
    }

    /// Ends a job that cannot run as failed, with `reason` on its connection
    /// (status ERROR).
    fn end_in_error(&self, job: &ClaimedJob, reason: &str) -> Result<(), SyncError> {
        let failure = Failure {
            status: ConnectionStatus::Error,
            reason,
            detail: None,
        };
        let now = self.clock.now().naive_utc();
        job_outcomes::fail(&mut *self.db.conn()?, job, failure, None, now)?;
        Ok(())
    }

    /// Asks the provider, renewing the job's lease meanwhile.
    fn fetch(
        &self,
        job: &ClaimedJob,
        connection: &ConnectionRecord,
        credentials: Option<&str>,
        held: &Held,
    ) -> Result<ProviderSnapshot, ConnectorError> {
        let keep = |fresh: &str| {
            self.keep_credentials(connection, credentials, fresh)
                .map_err(|err| ConnectorError::Unavailable {
                    reason: format!("keeping the provider's new credentials: {err}"),
                    retry_after: None,
                })
        };
        match self.registry.get(connection.provider) {
            Some(connector) => self.with_heartbeat(job, || {
                connector.fetch(&FetchContext {
                    now: self.clock.now(),
                    settings: &connection.settings,
                    credentials,
                    last_synced_at: connection.last_synced_at.map(|at| at.and_utc()),
                    oldest_pending: held.oldest_pending,
                    stored_accounts: &held.accounts,
                    chosen_accounts: held.chosen.as_ref(),
                    keep_credentials: Some(&keep),
                })
            }),
            None => Err(ConnectorError::Misconfigured(format!(
                "no connector is configured for provider `{}`",
                connection.provider
            ))),
        }
    }

    /// Stores a fetched snapshot for the job (if it still holds the lease).
    fn record_snapshot(
        &self,
        job: &ClaimedJob,
        snapshot: &ProviderSnapshot,
    ) -> Result<SyncOutcome, SyncError> {
        let now = self.clock.now();
        let mut conn = self.db.conn()?;
        let next_sync = at(now, self.policy.next_sync_delay(random_permille()));
        let lease_until = at(now, self.policy.lease);
        match sync_apply::apply_for_job(
            &mut conn,
            job,
            snapshot,
            now.naive_utc(),
            lease_until,
            next_sync,
        ) {
            Ok(Some(summary)) => {
                log::info!(
                    "job {} synced connection {}: {summary:?}",
                    job.id,
                    job.connection_id
                );
                Ok(SyncOutcome::Synced {
                    job_id: job.id,
                    summary,
                })
            }
            Ok(None) => {
                log::warn!(
                    "job {}: lease lost to another worker; its result was not stored",
                    job.id
                );
                Ok(SyncOutcome::LeaseLost { job_id: job.id })
            }
            Err(err @ StorageError::AccountLimit(limit)) => {
                // The user's limit, not a fault: say so on the connection,
                // and keep what was found for the person to choose from.
                let found: Vec<Choosable> = snapshot.accounts.iter().map(Choosable::of).collect();
                account_choice::offer(&mut conn, job.connection_id, &found)?;
                let detail = StatusDetail::AccountLimitReached(limit);
                let reason = detail.reason();
                log::warn!("job {}: {reason}", job.id);
                let failure = Failure {
                    status: ConnectionStatus::Error,
                    reason: &reason,
                    detail: Some(&detail),
                };
                job_outcomes::fail(&mut conn, job, failure, None, now.naive_utc())?;
                Err(err.into())
            }
            Err(err) => {
                log::error!(
                    "job {}: storing the snapshot of connection {} failed: {err}",
                    job.id,
                    job.connection_id
                );
                sync_jobs::finish(
                    &mut conn,
                    job,
                    SyncJobStatus::Failed,
                    None,
                    Some("storing the snapshot failed"),
                    now.naive_utc(),
                )?;
                Err(err.into())
            }
        }
    }

    /// Records a provider's failure on the connection, and retries the job
    /// later when the failure is transient and attempts remain.
    fn record_provider_failure(
        &self,
        job: &ClaimedJob,
        error: ConnectorError,
    ) -> Result<SyncOutcome, SyncError> {
        let now = self.clock.now();
        let reason = error.to_string();
        let retry_at =
            (error.is_transient() && job.attempts < self.policy.max_attempts).then(|| {
                let retry_after = match &error {
                    ConnectorError::Unavailable { retry_after, .. } => *retry_after,
                    _ => None,
                };
                at(
                    now,
                    self.policy
                        .retry_delay(job.attempts, retry_after, random_permille()),
                )
            });
        match retry_at {
            Some(when) => log::warn!(
                "job {} (attempt {}) failed, retrying at {when}: {reason}",
                job.id,
                job.attempts
            ),
            None => log::warn!(
                "job {} (attempt {}) failed for good: {reason}",
                job.id,
                job.attempts
            ),
        }
        let failure = Failure {
            status: error.connection_status(),
            reason: &reason,
            detail: None,
        };
        job_outcomes::fail(
            &mut *self.db.conn()?,
            job,
            failure,
            retry_at,
            now.naive_utc(),
        )?;
        Ok(SyncOutcome::ProviderFailed {
            job_id: job.id,
            error,
            retry_at,
        })
    }
}

/// The result of [`SyncEngine::prepare`].
enum Prepared {
    Ready {
        connection: ConnectionRecord,
        credentials: Option<String>,
    },
    Done(SyncOutcome),
}

impl SyncEngine {
    /// Runs `work` (a provider fetch, which may take longer than a lease)
    /// while a heartbeat renews `job`'s lease every third of the lease, so
    /// no other worker takes over a job that is still being worked on. The
    /// heartbeat stops when `work` returns or when the lease turns out lost.
    fn with_heartbeat<T>(&self, job: &ClaimedJob, work: impl FnOnce() -> T) -> T {
        let (done, finished) = std::sync::mpsc::channel::<()>();
        let interval = self.policy.lease / 3;
        std::thread::scope(|scope| {
            scope.spawn(move || {
                // Wakes every `interval` until `done` is dropped.
                while finished
                    .recv_timeout(interval)
                    .is_err_and(|e| e == std::sync::mpsc::RecvTimeoutError::Timeout)
                {
                    let lease_until = at(self.clock.now(), self.policy.lease);
                    let renewed = self
                        .db
                        .conn()
                        .and_then(|mut conn| sync_jobs::renew_lease(&mut conn, job, lease_until));
                    match renewed {
                        Ok(true) => {}
                        Ok(false) => {
                            log::warn!("job {}: lease lost while the provider was asked", job.id);
                            break;
                        }
                        // The next beat tries again; the store fences anyway.
                        Err(err) => log::warn!("job {}: renewing the lease failed: {err}", job.id),
                    }
                }
            });
            let result = work();
            drop(done);
            result
        })
    }
}

/// What `snapshot` holds that `provider` is not described as reporting
/// (holdings, investment activity), if anything: a connector that sends
/// what it says it never does is a bug to see, not data to store.
fn unexpected(provider: Provider, snapshot: &ProviderSnapshot) -> Option<&'static str> {
    let accounts = &snapshot.accounts;
    if !crate::catalog::reports_holdings(provider) && accounts.iter().any(|a| a.holdings.is_some())
    {
        Some("holdings")
    } else if !crate::catalog::reports_investment_activity(provider)
        && accounts
            .iter()
            .any(|a| !a.investment_transactions.is_empty())
    {
        Some("investment activity")
    } else {
        None
    }
}

/// The job that answers a request to sync `connection` now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequestedSync {
    pub job_id: SyncJobId,
    pub status: SyncJobStatus,
    /// False when the connection already had a queued or running job, which
    /// answers the request instead.
    pub created: bool,
}

/// Who asks for a sync.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Requester {
    /// A client of the APIs or the pages: held to one on-demand sync a
    /// minute per connection, so that no client spends a provider's quota.
    Client,
    /// The operator (the CLI, the engine's own `sync_now`), who runs the
    /// server and answers for its quotas.
    Operator,
}

/// The one rule for asking a sync now, whoever asks (the APIs, the pages,
/// the CLI, the engine's `sync_now`): a disconnected connection or one of
/// imported statements is refused; a queued or running job answers as it
/// is; a client's on-demand request within a minute of the last one is
/// refused with the wait; else a job is queued.
pub fn request_sync(
    conn: &mut AnyConnection,
    connection: &ConnectionRecord,
    kind: SyncJobKind,
    requester: Requester,
    now: NaiveDateTime,
) -> Result<RequestedSync, SyncError> {
    if connection.status == ConnectionStatus::Disconnected {
        return Err(SyncError::Disconnected(connection.id));
    }
    if !connection.provider.is_synced() {
        return Err(SyncError::NotSynced(connection.id));
    }
    if let Some(job) = sync_jobs::active_job(conn, connection.id)? {
        return Ok(RequestedSync {
            job_id: job.id,
            status: job.status,
            created: false,
        });
    }
    if kind == SyncJobKind::OnDemand
        && requester == Requester::Client
        && let Some(wait) = on_demand_wait(sync_jobs::last_on_demand_at(conn, connection.id)?, now)
    {
        return Err(SyncError::RateLimited {
            connection_id: connection.id,
            wait,
        });
    }
    let enqueued = sync_jobs::enqueue(conn, connection.id, kind, now, now)?;
    Ok(RequestedSync {
        job_id: enqueued.job_id,
        status: SyncJobStatus::Queued,
        created: enqueued.created,
    })
}

/// The one rule for disconnecting (the API, the portal and the CLI use it):
/// a synced connection stops syncing — nothing is scheduled and on-demand
/// syncs answer `Disconnected` — and keeps its data; signing in to the bank
/// again ([`SyncEngine::reconnect`]) makes it active. Statement imports are
/// never synced, so there is nothing to disconnect.
pub fn disconnect(
    conn: &mut tributary_storage::AnyConnection,
    connection: &ConnectionRecord,
    now: NaiveDateTime,
) -> Result<ConnectionRecord, SyncError> {
    if !connection.provider.is_synced() {
        return Err(SyncError::NotSynced(connection.id));
    }
    Ok(connections::disconnect(conn, connection.id, now)?)
}
