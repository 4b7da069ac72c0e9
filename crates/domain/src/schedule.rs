//! When to sync and when to retry: pure functions. Randomness comes in as a
//! per-mille number (0..1000) so the rules are testable without a random
//! source, and stay in integer arithmetic.

use std::time::Duration;

#[derive(Debug, Clone, PartialEq)]
pub struct SyncPolicy {
    /// Time between scheduled syncs of a connection.
    pub interval: Duration,
    /// Scheduled syncs are spread by up to this much, so connections created
    /// together do not all hit their providers at the same moment.
    pub jitter: Duration,
    /// First retry delay after a transient failure; doubles per attempt.
    pub retry_base: Duration,
    pub retry_cap: Duration,
    /// Attempts of one job before it fails for good (transient failures).
    pub max_attempts: i32,
    /// How long a worker holds a job before another may take it over.
    pub lease: Duration,
    /// How long the change feed keeps a removed transaction's tombstone;
    /// a cursor older than that must read again from the start.
    pub tombstone_retention: Duration,
    /// How long the rows that are not a person's data are kept.
    pub retention: crate::retention::Retention,
    /// The operator's limits per provider, across every worker; a provider
    /// not named here keeps its connector's own (`Connector::limits`).
    pub provider_limits:
        std::collections::BTreeMap<crate::model::Provider, crate::provider_limits::ProviderLimits>,
}

/// The least [`SyncPolicy::tombstone_retention`]: a client that syncs once
/// a year still reads every removal.
pub const MIN_TOMBSTONE_RETENTION: Duration = Duration::from_secs(400 * 24 * 3600);

impl Default for SyncPolicy {
    fn default() -> Self {
        SyncPolicy {
            interval: Duration::from_secs(6 * 3600),
            jitter: Duration::from_secs(15 * 60),
            retry_base: Duration::from_secs(30),
            retry_cap: Duration::from_secs(3600),
            max_attempts: 5,
            lease: Duration::from_secs(10 * 60),
            tombstone_retention: MIN_TOMBSTONE_RETENTION,
            retention: crate::retention::Retention::default(),
            provider_limits: std::collections::BTreeMap::new(),
        }
    }
}

impl SyncPolicy {
    /// Delay before the next scheduled sync: the interval plus a share of
    /// the jitter.
    pub fn next_sync_delay(&self, random_permille: u32) -> Duration {
        self.interval + self.jitter * random_permille.min(1000) / 1000
    }

    /// Delay before retrying after the `attempt`-th transient failure:
    /// exponential from `retry_base`, capped, ±20 % jitter, and never sooner
    /// than the provider's `Retry-After`.
    pub fn retry_delay(
        &self,
        attempt: i32,
        retry_after: Option<Duration>,
        random_permille: u32,
    ) -> Duration {
        let exponent = u32::try_from(attempt.saturating_sub(1).clamp(0, 20)).unwrap_or(0);
        let backoff = self
            .retry_base
            .saturating_mul(2u32.saturating_pow(exponent))
            .min(self.retry_cap);
        // 80 % to 120 % of the backoff.
        let jittered = backoff * (800 + random_permille.min(1000) * 2 / 5) / 1000;
        retry_after.map_or(jittered, |after| jittered.max(after))
    }
}

/// On-demand syncs of one connection are accepted at most this often.
pub const ON_DEMAND_MIN_INTERVAL: Duration = Duration::from_secs(60);

/// How long a client must wait before asking for another on-demand sync of
/// a connection last asked for at `last_request`; `None` when it may now.
pub fn on_demand_wait(
    last_request: Option<chrono::NaiveDateTime>,
    now: chrono::NaiveDateTime,
) -> Option<Duration> {
    let elapsed = (now - last_request?).to_std().unwrap_or(Duration::ZERO);
    ON_DEMAND_MIN_INTERVAL
        .checked_sub(elapsed)
        .filter(|wait| !wait.is_zero())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retries_back_off_exponentially_up_to_the_cap() {
        let policy = SyncPolicy::default();
        let middle = 500; // no jitter
        assert_eq!(policy.retry_delay(1, None, middle), Duration::from_secs(30));
        assert_eq!(policy.retry_delay(2, None, middle), Duration::from_secs(60));
        assert_eq!(
            policy.retry_delay(4, None, middle),
            Duration::from_secs(240)
        );
        assert_eq!(
            policy.retry_delay(30, None, middle),
            Duration::from_secs(3600)
        );
    }

    #[test]
    fn jitter_stays_within_twenty_percent() {
        let policy = SyncPolicy::default();
        assert_eq!(policy.retry_delay(1, None, 0), Duration::from_secs(24));
        assert_eq!(policy.retry_delay(1, None, 1000).as_secs(), 36);
    }

    #[test]
    fn retry_after_is_honoured_when_longer() {
        let policy = SyncPolicy::default();
        assert_eq!(
            policy.retry_delay(1, Some(Duration::from_secs(600)), 500),
            Duration::from_secs(600)
        );
        assert_eq!(
            policy.retry_delay(3, Some(Duration::from_secs(1)), 500),
            Duration::from_secs(120)
        );
    }

    #[test]
    fn scheduled_syncs_spread_over_the_jitter() {
        let policy = SyncPolicy::default();
        assert_eq!(policy.next_sync_delay(0), Duration::from_secs(6 * 3600));
        assert_eq!(
            policy.next_sync_delay(1000),
            Duration::from_secs(6 * 3600 + 900)
        );
    }

    #[test]
    fn on_demand_syncs_are_spaced() {
        let t = chrono::NaiveDate::from_ymd_opt(2026, 11, 21)
            .unwrap()
            .and_hms_opt(12, 0, 0)
            .unwrap();
        assert_eq!(on_demand_wait(None, t), None);
        assert_eq!(
            on_demand_wait(Some(t - chrono::Duration::seconds(20)), t),
            Some(Duration::from_secs(40))
        );
        assert_eq!(
            on_demand_wait(Some(t - chrono::Duration::seconds(60)), t),
            None
        );
        assert_eq!(
            on_demand_wait(Some(t - chrono::Duration::hours(2)), t),
            None
        );
    }
}
