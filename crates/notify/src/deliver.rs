//! Sending webhooks: a worker claims the deliveries that are due (each
//! under a lease, so one killed mid-send loses nothing: another takes the
//! delivery when the lease ends, with the same `webhook-id`), signs each
//! per Standard Webhooks with the endpoint's secret (and the previous one
//! while a rotation overlaps), posts it to the checked addresses of its
//! URL, and records what happened: delivered on a 2xx; the endpoint
//! disabled on a 410 or after three days of failures; otherwise tried again
//! on the schedule of [`crate::retry`], sooner or later as a `Retry-After`
//! on a 429, 502 or 504 asks.

use crate::retry;
use crate::signing::{SigningSecret, signature_header};
use chrono::NaiveDateTime;
use rand::RngExt as _;
use std::sync::Arc;
use std::time::Duration;
use tributary_domain::clock::Clock;
use tributary_domain::secrets::Sealer;
use tributary_outbound::{Guard, GuardedClient, Redirects};
use tributary_storage::webhooks::{self, AttemptOutcome, ClaimedDelivery, EndpointOwner};
use tributary_storage::{Database, StorageError};
use url::Url;

/// How long a receiver has to answer.
pub const TIMEOUT: Duration = Duration::from_secs(15);
/// An endpoint failing this long is disabled.
pub const FAILING_FOR: chrono::Duration = chrono::Duration::days(3);
/// After a rotation, how long the previous secret signs too.
pub const ROTATION_OVERLAP: chrono::Duration = chrono::Duration::hours(24);
/// Deliveries one worker claims at once.
const BATCH: i64 = 20;

/// The context a webhook secret is sealed under: its owner, so a sealed
/// secret copied to another owner's row does not open.
pub fn secret_context(owner: EndpointOwner) -> String {
    match owner {
        EndpointOwner::User(user) => format!("tributary/webhooks/user/{user}"),
        EndpointOwner::App(app) => format!("tributary/webhooks/app/{app}"),
    }
}

/// Seals a new secret for `owner`'s endpoint, as stored.
pub fn seal_secret(sealer: &dyn Sealer, owner: EndpointOwner, secret: &SigningSecret) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD
        .encode(sealer.seal(secret.to_text().as_bytes(), &secret_context(owner)))
}

fn open_secret(
    sealer: &dyn Sealer,
    owner: EndpointOwner,
    sealed: &str,
) -> Result<SigningSecret, String> {
    use base64::Engine as _;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(sealed)
        .map_err(|err| format!("the sealed secret is not base64: {err}"))?;
    let text = sealer.open(&bytes, &secret_context(owner))?;
    let text = String::from_utf8(text).map_err(|_| "the secret is not text".to_owned())?;
    SigningSecret::parse(&text).map_err(|err| err.to_string())
}

#[derive(Debug, thiserror::Error)]
pub enum DeliveryError {
    #[error(transparent)]
    Storage(#[from] StorageError),
}

/// Sends due webhooks; run by the sync workers.
#[derive(Debug, Clone)]
pub struct Deliverer {
    db: Database,
    clock: Arc<dyn Clock>,
    sealer: Arc<dyn Sealer>,
    /// Reaches only what the outbound guard allows, without following
    /// redirects.
    client: GuardedClient,
    /// How long a worker holds a delivery it is sending.
    lease: Duration,
}

impl Deliverer {
    /// A deliverer to where `guard` allows (docs/operations.md#outbound-requests).
    /// Makes a blocking HTTP client: call it off the async runtime.
    pub fn new(
        db: Database,
        clock: Arc<dyn Clock>,
        sealer: Arc<dyn Sealer>,
        guard: &Guard,
    ) -> Result<Self, reqwest::Error> {
        Ok(Deliverer {
            db,
            clock,
            sealer,
            client: client(guard)?,
            lease: TIMEOUT * 4,
        })
    }

    /// At least the receiver's timeout: a lease shorter than a send would
    /// let a second worker send while the first still waits.
    pub fn with_lease(mut self, lease: Duration) -> Self {
        self.lease = lease.max(TIMEOUT + Duration::from_secs(1));
        self
    }

    fn now(&self) -> NaiveDateTime {
        self.clock.now().naive_utc()
    }

    /// Claims and sends what is due, until nothing is; how many were sent.
    pub fn run_due(&self) -> Result<usize, DeliveryError> {
        let mut sent = 0;
        loop {
            let now = self.now();
            let lease_until = now
                + chrono::Duration::from_std(self.lease).unwrap_or(chrono::Duration::minutes(1));
            let claimed = webhooks::claim_due(&mut *self.db.conn()?, now, lease_until, BATCH)?;
            if claimed.is_empty() {
                return Ok(sent);
            }
            for delivery in claimed {
                let outcome = self.attempt(&delivery);
                let recorded = webhooks::record_attempt(
                    &mut *self.db.conn()?,
                    &delivery,
                    &outcome,
                    self.now(),
                )?;
                if !recorded {
                    log::warn!(
                        "webhook delivery {} was taken over by another worker",
                        delivery.id
                    );
                }
                if let AttemptOutcome::DisableEndpoint { reason, .. } = &outcome {
                    log::warn!(
                        "webhook endpoint {} disabled: {reason}",
                        delivery.endpoint.id
                    );
                }
                sent += 1;
            }
        }
    }

    /// One attempt, and what follows from it.
    fn attempt(&self, delivery: &ClaimedDelivery) -> AttemptOutcome {
        let (status, error, retry_after) = match self.post(delivery) {
            Ok(Answer::Success(status)) => return AttemptOutcome::Delivered { status },
            Ok(Answer::Gone) => {
                return AttemptOutcome::DisableEndpoint {
                    status: Some(410),
                    error: "410 Gone".into(),
                    reason: "the receiver answered 410 Gone".into(),
                };
            }
            Ok(Answer::Failure {
                status,
                retry_after,
            }) => (Some(status), format!("answered {status}"), retry_after),
            Err(error) => (None, error, None),
        };
        let now = self.now();
        if delivery
            .endpoint
            .failing_since
            .is_some_and(|since| now - since >= FAILING_FOR)
        {
            return AttemptOutcome::DisableEndpoint {
                status,
                error,
                reason: "every delivery failed for 3 days".into(),
            };
        }
        let attempts = u32::try_from(delivery.attempts).unwrap_or(u32::MAX);
        match retry::next_delay(attempts, retry_after, rand::rng().random_range(0..1000)) {
            Some(delay) => AttemptOutcome::Retry {
                at: now + chrono::Duration::from_std(delay).unwrap_or(chrono::Duration::days(1)),
                status,
                error,
            },
            None => AttemptOutcome::GivenUp { status, error },
        }
    }

    /// The secrets that sign now: the current one, and the previous one
    /// while the rotation's overlap lasts.
    fn secrets(&self, delivery: &ClaimedDelivery) -> Result<Vec<SigningSecret>, String> {
        let owner = delivery.endpoint.owner;
        let mut secrets = vec![open_secret(
            self.sealer.as_ref(),
            owner,
            &delivery.endpoint.secret_sealed,
        )?];
        if let Some((sealed, until)) = &delivery.endpoint.previous_secret
            && self.now() < *until
        {
            secrets.push(open_secret(self.sealer.as_ref(), owner, sealed)?);
        }
        Ok(secrets)
    }

    fn post(&self, delivery: &ClaimedDelivery) -> Result<Answer, String> {
        let url = Url::parse(&delivery.endpoint.url).map_err(|err| err.to_string())?;
        let secrets = self.secrets(delivery)?;
        let timestamp = self.clock.now().timestamp();
        let body = delivery.payload.as_bytes();
        let signature = signature_header(
            &secrets.iter().collect::<Vec<_>>(),
            &delivery.message_id,
            timestamp,
            body,
        );
        // The guard checks the address before anything is connected to
        // (again at every delivery: a name may resolve elsewhere now); the
        // request then goes to the checked addresses only.
        let response = self
            .client
            .post(url)
            .map_err(|refusal| refusal.to_string())?
            .header("content-type", "application/json")
            .header("webhook-id", &delivery.message_id)
            .header("webhook-timestamp", timestamp.to_string())
            .header("webhook-signature", signature)
            .body(body.to_vec())
            .send()
            .map_err(|err| match tributary_outbound::refusal_in(&err) {
                Some(refusal) => refusal.to_string(),
                // One text for a refused connection, a reset, a TLS failure
                // and silence: the log an owner reads says nothing of what
                // answered at an address (docs/operations.md#outbound-requests).
                None => format!(
                    "no answer (no connection, or none within {} s)",
                    TIMEOUT.as_secs()
                ),
            })?;
        let status = response.status();
        Ok(if status.is_success() {
            Answer::Success(i32::from(status.as_u16()))
        } else if status.as_u16() == 410 {
            Answer::Gone
        } else {
            let retry_after = matches!(status.as_u16(), 429 | 502 | 504)
                .then(|| response.headers().get("retry-after"))
                .flatten()
                .and_then(|value| value.to_str().ok())
                .and_then(|value| value.trim().parse::<u64>().ok())
                .map(Duration::from_secs);
            Answer::Failure {
                status: i32::from(status.as_u16()),
                retry_after,
            }
        })
    }
}

/// The receivers' client: the guard's, no redirects followed.
fn client(guard: &Guard) -> Result<GuardedClient, reqwest::Error> {
    guard.blocking_client(
        reqwest::blocking::Client::builder()
            .timeout(TIMEOUT)
            .user_agent(concat!("Tributary-Webhooks/", env!("CARGO_PKG_VERSION"))),
        Redirects::NotFollowed,
    )
}

/// What a receiver answered.
enum Answer {
    Success(i32),
    Gone,
    Failure {
        status: i32,
        retry_after: Option<Duration>,
    },
}
