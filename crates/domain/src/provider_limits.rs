//! How hard all workers together may press one provider
//! (docs/operations.md, "Provider limits"): at most so many syncs at once,
//! and at most so many started in any period. A sync over either waits in
//! the queue for the moment it may run; it never fails for it.
//!
//! The operator sets them in `TRIBUTARY_PROVIDER_LIMITS`, entries separated
//! by spaces or semicolons, each `provider=concurrent:K,rate:R/PERIOD`
//! (either part may be left out), PERIOD a whole number of seconds,
//! minutes, hours or days (`30s`, `1m`, `1h`, `1d`):
//! `plaid=concurrent:8,rate:600/1m simplefin=rate:100/1h`.

use crate::model::Provider;
use std::collections::BTreeMap;
use std::time::Duration;

/// At most `syncs` syncs started in any `per`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rate {
    pub syncs: u32,
    pub per: Duration,
}

/// One provider's limits; `None` leaves that side unlimited.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ProviderLimits {
    /// Syncs of the provider running at once, across every worker.
    pub concurrent: Option<u32>,
    pub rate: Option<Rate>,
}

impl ProviderLimits {
    pub fn is_unlimited(&self) -> bool {
        self.concurrent.is_none() && self.rate.is_none()
    }
}

/// An entry of `TRIBUTARY_PROVIDER_LIMITS` that does not read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "TRIBUTARY_PROVIDER_LIMITS: `{entry}`: {reason} (expected provider=concurrent:K,rate:R/PERIOD, e.g. plaid=concurrent:8,rate:600/1m)"
)]
pub struct LimitsError {
    pub entry: String,
    pub reason: String,
}

/// The most syncs at once or per period one setting may allow.
const MOST: u32 = 1_000_000;
/// The longest period: a day, as the providers' own quotas count.
const LONGEST: Duration = Duration::from_secs(24 * 3600);

/// Reads `TRIBUTARY_PROVIDER_LIMITS`.
pub fn parse(text: &str) -> Result<BTreeMap<Provider, ProviderLimits>, LimitsError> {
    let mut limits = BTreeMap::new();
    for entry in text
        .split(|c: char| c.is_whitespace() || c == ';')
        .filter(|e| !e.is_empty())
    {
        let fail = |reason: String| LimitsError {
            entry: entry.to_owned(),
            reason,
        };
        let (provider, parts) = entry
            .split_once('=')
            .ok_or_else(|| fail("no `=` after the provider".into()))?;
        let provider: Provider = provider
            .parse()
            .map_err(|_| fail(format!("`{provider}` is not a provider's name")))?;
        let mut these = ProviderLimits::default();
        for part in parts.split(',').filter(|p| !p.is_empty()) {
            match part.split_once(':') {
                Some(("concurrent", count)) if these.concurrent.is_none() => {
                    these.concurrent = Some(count_of(count).map_err(|r| fail(r.into()))?);
                }
                Some(("rate", rate)) if these.rate.is_none() => {
                    let (syncs, per) = rate
                        .split_once('/')
                        .ok_or_else(|| fail("a rate is R/PERIOD".into()))?;
                    these.rate = Some(Rate {
                        syncs: count_of(syncs).map_err(|r| fail(r.into()))?,
                        per: period_of(per).map_err(|r| fail(r.into()))?,
                    });
                }
                Some(("concurrent" | "rate", _)) => {
                    return Err(fail(format!("`{part}` is given twice")));
                }
                _ => {
                    return Err(fail(format!(
                        "`{part}` is neither concurrent:K nor rate:R/PERIOD"
                    )));
                }
            }
        }
        if these.is_unlimited() {
            return Err(fail("no limit given".into()));
        }
        if limits.insert(provider, these).is_some() {
            return Err(fail(format!("{provider} is named twice")));
        }
    }
    Ok(limits)
}

fn count_of(text: &str) -> Result<u32, &'static str> {
    text.parse()
        .ok()
        .filter(|n| (1..=MOST).contains(n))
        .ok_or("a count is a whole number from 1 to 1000000")
}

fn period_of(text: &str) -> Result<Duration, &'static str> {
    const WRONG: &str =
        "a period is a whole number with s, m, h or d, at most a day (30s, 1m, 1h, 1d)";
    let unit = match text.chars().last() {
        Some('s') => 1,
        Some('m') => 60,
        Some('h') => 3600,
        Some('d') => 24 * 3600,
        _ => return Err(WRONG),
    };
    let count: u64 = text[..text.len() - 1].parse().map_err(|_| WRONG)?;
    let period = Duration::from_secs(count.checked_mul(unit).ok_or(WRONG)?);
    if period.is_zero() || period > LONGEST {
        return Err(WRONG);
    }
    Ok(period)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn provider(name: &str) -> Provider {
        name.parse().unwrap()
    }

    #[test]
    fn reads_each_provider_s_limits() {
        let limits =
            parse(" plaid=concurrent:8,rate:600/1m;simplefin=rate:24/1d  akahu=concurrent:2 ")
                .unwrap();
        assert_eq!(limits.len(), 3);
        assert_eq!(
            limits[&provider("plaid")],
            ProviderLimits {
                concurrent: Some(8),
                rate: Some(Rate {
                    syncs: 600,
                    per: Duration::from_secs(60)
                }),
            }
        );
        assert_eq!(
            limits[&provider("simplefin")].rate.unwrap().per,
            Duration::from_secs(86_400)
        );
        assert_eq!(limits[&provider("akahu")].rate, None);
        assert!(parse("").unwrap().is_empty());
    }

    #[test]
    fn a_wrong_entry_is_named_with_what_is_wrong() {
        for (text, says) in [
            ("plaid", "no `=`"),
            ("Plaid!=concurrent:1", "not a provider"),
            ("plaid=", "no limit given"),
            ("plaid=concurrent:0", "from 1 to 1000000"),
            ("plaid=concurrent:many", "from 1 to 1000000"),
            ("plaid=rate:5", "R/PERIOD"),
            ("plaid=rate:5/2w", "s, m, h or d"),
            ("plaid=rate:5/0s", "s, m, h or d"),
            ("plaid=rate:5/2d", "at most a day"),
            ("plaid=rate:5/99999999999999999999d", "s, m, h or d"),
            ("plaid=speed:5", "neither"),
            ("plaid=concurrent:1,concurrent:2", "twice"),
            ("plaid=concurrent:1 plaid=concurrent:2", "named twice"),
        ] {
            let err = parse(text).unwrap_err().to_string();
            assert!(err.contains(says), "{text}: {err}");
            assert!(err.contains("TRIBUTARY_PROVIDER_LIMITS"), "{err}");
        }
    }
}
