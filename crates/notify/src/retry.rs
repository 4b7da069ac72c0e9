//! When a failed delivery is tried again: the Standard Webhooks schedule
//! (immediately, then 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h and
//! 24 h after each failure), each delay stretched by up to a tenth at
//! random so endpoints that failed together are not retried together.
//! Randomness comes in as a per-mille number, so the rule is testable.

use std::time::Duration;

const MINUTE: u64 = 60;
const HOUR: u64 = 3600;

/// The delay before attempt `n + 1`, after `n` attempts (the first is
/// immediate).
const SCHEDULE: [u64; 10] = [
    0,
    5,
    5 * MINUTE,
    30 * MINUTE,
    2 * HOUR,
    5 * HOUR,
    10 * HOUR,
    14 * HOUR,
    20 * HOUR,
    24 * HOUR,
];

/// Attempts a delivery gets before it is given up.
pub const MAX_ATTEMPTS: u32 = SCHEDULE.len() as u32;

/// The longest `Retry-After` a receiver may ask for.
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(24 * HOUR);

/// After `attempts` failed attempts, how long until the next; `None` once
/// the schedule is spent. `retry_after` (from a 429, 502 or 504) wins over
/// the schedule, up to [`MAX_RETRY_AFTER`].
pub fn next_delay(
    attempts: u32,
    retry_after: Option<Duration>,
    random_permille: u32,
) -> Option<Duration> {
    let base = *SCHEDULE.get(usize::try_from(attempts).ok()?)?;
    if let Some(asked) = retry_after {
        return Some(asked.min(MAX_RETRY_AFTER));
    }
    let jitter = base * u64::from(random_permille.min(1000)) / 10_000;
    Some(Duration::from_secs(base + jitter))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn follows_the_standards_schedule_with_jitter_and_gives_up_after_it() {
        assert_eq!(next_delay(1, None, 0), Some(Duration::from_secs(5)));
        assert_eq!(next_delay(2, None, 0), Some(Duration::from_secs(300)));
        assert_eq!(next_delay(9, None, 0), Some(Duration::from_secs(86_400)));
        assert_eq!(next_delay(9, None, 1000), Some(Duration::from_secs(95_040)));
        assert_eq!(next_delay(10, None, 0), None);
        assert_eq!(
            next_delay(3, Some(Duration::from_secs(7)), 500),
            Some(Duration::from_secs(7))
        );
        assert_eq!(
            next_delay(3, Some(Duration::from_secs(10 * 86_400)), 0),
            Some(MAX_RETRY_AFTER)
        );
        assert_eq!(next_delay(10, Some(Duration::from_secs(1)), 0), None);
    }
}
