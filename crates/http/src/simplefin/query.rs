//! The query of `GET /accounts`, validated: the protocol's parameters
//! (`start-date`, `end-date` as epoch seconds, start inclusive and end
//! exclusive; `pending=1`; `account=` repeatable; `balances-only=1`) and the
//! version the client asks for.

use super::error::SimpleFinError;
use chrono::{DateTime, Days, NaiveDate, Utc};
use tributary_storage::read::TransactionFilter;

/// The protocol version an answer is shaped for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Version {
    /// `errors` as strings, each account with its `org`.
    V1,
    /// `errlist` with codes, `connections`, each account with its `conn_id`.
    V2,
}

/// How far back a request without `start-date` reaches, like the SimpleFIN
/// Bridge. A `start-date` is honoured as asked: on a self-hosted server the
/// owner's history is theirs, and most clients ignore the warning a cap
/// would give. The operator may cap it (`TRIBUTARY_SIMPLEFIN_MAX_WINDOW_DAYS`).
pub const DEFAULT_WINDOW_DAYS: u32 = 90;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccountsQuery {
    pub version: Version,
    /// Inclusive dates of the transactions to send.
    pub from: NaiveDate,
    pub to: Option<NaiveDate>,
    pub include_pending: bool,
    /// `account=` ids as sent; empty: every account.
    pub accounts: Vec<String>,
    pub balances_only: bool,
    /// Set when `start-date` reached further back than the operator's cap.
    pub capped: Option<Capped>,
}

/// A `start-date` moved up to the operator's cap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Capped {
    pub from: NaiveDate,
    pub max_window_days: u32,
}

impl AccountsQuery {
    /// `max_window_days`: how far before its `end-date` (or today) a
    /// request may reach; `None`: no cap.
    pub fn parse(
        query: &str,
        now: DateTime<Utc>,
        max_window_days: Option<u32>,
    ) -> Result<Self, SimpleFinError> {
        let mut start = None;
        let mut end = None;
        let mut include_pending = false;
        let mut accounts = Vec::new();
        let mut balances_only = false;
        let mut version = Version::V1;
        for (name, value) in url::form_urlencoded::parse(query.as_bytes()) {
            match name.as_ref() {
                "start-date" => start = Some(epoch("start-date", &value)?),
                "end-date" => end = Some(epoch("end-date", &value)?),
                "pending" => include_pending = flag("pending", &value)?,
                "balances-only" => balances_only = flag("balances-only", &value)?,
                "account" => accounts.push(value.into_owned()),
                "version" => version = parse_version(&value)?,
                // Parameters of later protocol versions are not errors.
                _ => {}
            }
        }
        // Start inclusive: the first date whose midnight is at or after it.
        let from = start.map(|start| {
            let date = start.date_naive();
            if start == date.and_time(chrono::NaiveTime::MIN).and_utc() {
                date
            } else {
                date + Days::new(1)
            }
        });
        // End exclusive: the last date whose midnight is before it.
        let to = end.map(|end| (end - chrono::Duration::seconds(1)).date_naive());
        let reference = to.unwrap_or(now.date_naive());
        let days_back = |days: u32| {
            reference
                .checked_sub_days(Days::new(days.into()))
                .unwrap_or(NaiveDate::MIN)
        };
        let default_days =
            max_window_days.map_or(DEFAULT_WINDOW_DAYS, |cap| cap.min(DEFAULT_WINDOW_DAYS));
        let (from, capped) = match (from, max_window_days) {
            (None, _) => (days_back(default_days), None),
            (Some(from), Some(cap)) if from < days_back(cap) => {
                let earliest = days_back(cap);
                (
                    earliest,
                    Some(Capped {
                        from: earliest,
                        max_window_days: cap,
                    }),
                )
            }
            (Some(from), _) => (from, None),
        };
        Ok(Self {
            version,
            from,
            to,
            include_pending,
            accounts,
            balances_only,
            capped,
        })
    }

    pub fn filter(&self) -> TransactionFilter {
        TransactionFilter {
            include_pending: self.include_pending,
            from: Some(self.from),
            to: self.to,
        }
    }
}

fn epoch(name: &str, raw: &str) -> Result<DateTime<Utc>, SimpleFinError> {
    raw.trim()
        .parse::<i64>()
        .ok()
        .and_then(|seconds| DateTime::from_timestamp(seconds, 0))
        .ok_or_else(|| {
            SimpleFinError::bad_request(format!(
                "`{name}` must be a Unix timestamp in seconds, got `{raw}`."
            ))
        })
}

fn flag(name: &str, raw: &str) -> Result<bool, SimpleFinError> {
    match raw.trim() {
        "1" | "true" => Ok(true),
        "0" | "false" | "" => Ok(false),
        _ => Err(SimpleFinError::bad_request(format!(
            "`{name}` must be 1 or 0, got `{raw}`."
        ))),
    }
}

/// `version=2` (or `2.0`) asks for the second version; `1…` or none, the
/// first. The protocol publishes version prefixes at `/info`.
fn parse_version(raw: &str) -> Result<Version, SimpleFinError> {
    let major = raw.trim().split('.').next().unwrap_or_default();
    match major {
        "1" => Ok(Version::V1),
        "2" => Ok(Version::V2),
        _ => Err(SimpleFinError::bad_request(format!(
            "`version` must be one of the versions /info lists (1, 2), got `{raw}`."
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now() -> DateTime<Utc> {
        DateTime::parse_from_rfc3339("2026-11-24T10:00:00Z")
            .unwrap()
            .with_timezone(&Utc)
    }

    fn date(text: &str) -> NaiveDate {
        NaiveDate::parse_from_str(text, "%Y-%m-%d").unwrap()
    }

    fn epoch_of(text: &str) -> i64 {
        DateTime::parse_from_rfc3339(text).unwrap().timestamp()
    }

    #[test]
    fn start_is_inclusive_and_end_exclusive_at_day_granularity() {
        let q = AccountsQuery::parse(
            &format!(
                "start-date={}&end-date={}",
                epoch_of("2026-11-01T00:00:00Z"),
                epoch_of("2026-11-10T00:00:00Z")
            ),
            now(),
            None,
        )
        .unwrap();
        assert_eq!(
            (q.from, q.to),
            (date("2026-11-01"), Some(date("2026-11-09")))
        );
        // A start after midnight excludes that day's midnight; an end after
        // midnight includes its day.
        let q = AccountsQuery::parse(
            &format!(
                "start-date={}&end-date={}",
                epoch_of("2026-11-01T00:00:01Z"),
                epoch_of("2026-11-10T00:00:01Z")
            ),
            now(),
            None,
        )
        .unwrap();
        assert_eq!(
            (q.from, q.to),
            (date("2026-11-02"), Some(date("2026-11-10")))
        );
    }

    #[test]
    fn parameters_of_the_protocol_are_read_and_repeated_accounts_kept() {
        let q = AccountsQuery::parse(
            "pending=1&account=ACT-1&account=ACT-2&balances-only=1&version=2&x-later=ok",
            now(),
            None,
        )
        .unwrap();
        assert!(q.include_pending && q.balances_only);
        assert_eq!(q.accounts, ["ACT-1", "ACT-2"]);
        assert_eq!(q.version, Version::V2);
        let q = AccountsQuery::parse("", now(), None).unwrap();
        assert_eq!(q.version, Version::V1);
        assert!(!q.include_pending && !q.balances_only);
        assert_eq!(q.from, date("2026-08-26"));
        assert_eq!(q.capped, None);
    }

    #[test]
    fn a_start_date_is_honoured_as_asked_without_a_cap() {
        let q = AccountsQuery::parse(
            &format!("start-date={}", epoch_of("2025-10-21T00:00:00Z")),
            now(),
            None,
        )
        .unwrap();
        assert_eq!((q.from, q.capped), (date("2025-10-21"), None));
        // The epoch itself: everything, nothing capped.
        let q = AccountsQuery::parse("start-date=0", now(), None).unwrap();
        assert_eq!((q.from, q.capped), (date("1970-01-01"), None));
    }

    #[test]
    fn the_operators_cap_moves_an_older_start_up_and_says_so() {
        let q = AccountsQuery::parse("start-date=0", now(), Some(365)).unwrap();
        let capped = Capped {
            from: date("2025-11-24"),
            max_window_days: 365,
        };
        assert_eq!((q.from, q.capped), (date("2025-11-24"), Some(capped)));
        // Within the cap: as asked.
        let q = AccountsQuery::parse(
            &format!("start-date={}", epoch_of("2026-01-01T00:00:00Z")),
            now(),
            Some(365),
        )
        .unwrap();
        assert_eq!((q.from, q.capped), (date("2026-01-01"), None));
        // Without start-date a cap under 90 days is the default window.
        let q = AccountsQuery::parse("", now(), Some(30)).unwrap();
        assert_eq!((q.from, q.capped), (date("2026-10-25"), None));
    }

    #[test]
    fn malformed_parameters_name_themselves() {
        for (query, name) in [
            ("start-date=yesterday", "start-date"),
            ("end-date=1.5", "end-date"),
            ("pending=yes", "pending"),
            ("version=9", "version"),
        ] {
            let err = AccountsQuery::parse(query, now(), None).unwrap_err();
            assert!(err.message.contains(name), "{query}: {}", err.message);
        }
    }
}
