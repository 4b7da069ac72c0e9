//! The day a bank's own customers see a transaction on, where its API
//! writes times in UTC: a card payment at 00:30 on a summer morning
//! belongs to that morning, not to the day before. The zones are embedded
//! at build time (jiff's `static`), so none is looked up at run time.

use crate::connector::ConnectorError;
use chrono::{DateTime, NaiveDate, Utc};

/// The day at `at` in `zone`; `provider` names who sent a time out of range.
pub(crate) fn day_in(
    zone: &jiff::tz::TimeZone,
    at: DateTime<Utc>,
    provider: &str,
) -> Result<NaiveDate, ConnectorError> {
    let out_of_range =
        || ConnectorError::Protocol(format!("{provider} sent a time out of range ({at})"));
    let local = jiff::Timestamp::from_second(at.timestamp())
        .map_err(|_| out_of_range())?
        .to_zoned(zone.clone())
        .date();
    NaiveDate::from_ymd_opt(
        i32::from(local.year()),
        u32::try_from(local.month()).map_err(|_| out_of_range())?,
        u32::try_from(local.day()).map_err(|_| out_of_range())?,
    )
    .ok_or_else(out_of_range)
}
