//! The MCP request limit: at most N tool calls a minute per credential
//! (`TRIBUTARY_MCP_REQUESTS_PER_MINUTE`), counted in fixed one-minute
//! windows in this process. It is there to stop a runaway assistant loop
//! from taking the database from everyone else, not to meter anyone: a
//! second process counts on its own, so N is per process.

use chrono::{DateTime, Duration, Utc};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

/// Windows tracked before the ended ones are dropped: only checked
/// credentials are counted, so this bounds bookkeeping, not callers.
const PRUNE_ABOVE: usize = 10_000;

#[derive(Debug, Clone)]
pub struct RequestLimit {
    per_minute: u32,
    windows: Arc<Mutex<HashMap<String, Window>>>,
}

#[derive(Debug, Clone, Copy)]
struct Window {
    started: DateTime<Utc>,
    requests: u32,
}

impl RequestLimit {
    pub fn per_minute(per_minute: u32) -> Self {
        Self {
            per_minute: per_minute.max(1),
            windows: Arc::default(),
        }
    }

    /// Requests a minute each credential may make.
    pub fn allowed(&self) -> u32 {
        self.per_minute
    }

    /// Counts `calls` tool calls of `caller` at `now`; `Err(seconds)` to
    /// wait when they would go beyond the caller's minute (none is counted
    /// then).
    pub(crate) fn admit(&self, caller: &str, calls: u32, now: DateTime<Utc>) -> Result<(), u64> {
        let minute = Duration::minutes(1);
        let mut windows = self.windows.lock().unwrap_or_else(PoisonError::into_inner);
        if windows.len() > PRUNE_ABOVE {
            windows.retain(|_, w| now - w.started < minute);
        }
        let window = windows.entry(caller.to_owned()).or_insert(Window {
            started: now,
            requests: 0,
        });
        if now - window.started >= minute || now < window.started {
            *window = Window {
                started: now,
                requests: 0,
            };
        }
        if window.requests.saturating_add(calls) > self.per_minute {
            let left = (window.started + minute - now).num_seconds();
            return Err(u64::try_from(left).unwrap_or(0).max(1));
        }
        window.requests += calls;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_credential_has_its_own_minute() {
        let limit = RequestLimit::per_minute(2);
        let t0 = DateTime::from_timestamp(1_800_000_000, 0).unwrap();
        assert!(limit.admit("key:1", 1, t0).is_ok());
        assert_eq!(
            limit.admit("key:1", 2, t0),
            Err(60),
            "a batch beyond the limit"
        );
        assert!(limit.admit("key:1", 1, t0).is_ok());
        assert_eq!(limit.admit("key:1", 1, t0 + Duration::seconds(20)), Err(40));
        assert!(
            limit.admit("key:2", 1, t0).is_ok(),
            "another key counts apart"
        );
        assert!(limit.admit("key:1", 2, t0 + Duration::seconds(60)).is_ok());
    }
}
