//! What the open banking aggregators (GoCardless, Enable Banking,
//! TrueLayer) share, since they pass on what banks give under PSD2: record
//! ids that are optional or not unique, balances in a typed list, and a
//! connection that starts with the bank chosen and a `state` used once.

use crate::connector::ConnectorError;
use chrono::{DateTime, NaiveDate, Utc};
use serde::Serialize;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use tributary_domain::money::Decimal;
use tributary_domain::snapshot::{SnapshotBalance, SnapshotInstitution};

/// The connect request of a PSD2 aggregator: the bank the person chose
/// (by country and name, or by its id), and where it sends them back.
pub(crate) fn bank_request(
    answers: &crate::description::Answers<'_>,
) -> Result<crate::connector::ConnectRequest, &'static str> {
    let institution = answers.get("institution_id");
    if institution.is_empty() {
        return Err("Choose your bank: find it by its country and name.");
    }
    let redirect = answers
        .return_address
        .ok_or("Give the address the bank sends the person back to (--redirect).")?;
    Ok(crate::connector::ConnectRequest {
        settings: serde_json::json!({ "institution_id": institution, "redirect": redirect }),
        secret: None,
    })
}

/// A balance of a typed list, as a provider spells it.
pub(crate) trait TypedBalance {
    fn balance_type(&self) -> &str;
    fn currency(&self) -> &str;
    fn reference_date(&self) -> Option<NaiveDate>;
}

/// The current balance (the first of `booked` types the list holds, else
/// the first listed) and the available one (the first of `available`),
/// each read by `amount`.
pub(crate) fn pick_balance<B: TypedBalance>(
    items: &[B],
    (booked, available): (&[&str], &[&str]),
    amount: impl Fn(&B) -> Result<Decimal, ConnectorError>,
    now: DateTime<Utc>,
) -> Result<Option<SnapshotBalance>, ConnectorError> {
    let find = |types: &[&str]| {
        types
            .iter()
            .find_map(|t| items.iter().find(|b| b.balance_type() == *t))
    };
    let Some(current) = find(booked).or(items.first()) else {
        return Ok(None);
    };
    Ok(Some(SnapshotBalance {
        current: amount(current)?,
        available: find(available).map(&amount).transpose()?,
        currency: current.currency().to_owned(),
        as_of: current
            .reference_date()
            .map_or(now, |d| d.and_time(chrono::NaiveTime::MIN).and_utc()),
    }))
}

/// Provider ids for records whose bank-given id is optional or not unique
/// (GoCardless's `transactionId`, Enable Banking's `entry_reference`). Two
/// distinct entries must never become one row, and the same entry must get
/// the same id on every sync.
///
/// An id for each of `items`: the bank's own (`own_id`) where it gives one
/// and it is unique in the list; else `{prefix}h:` and a hash of the
/// record's content, numbered (`#2`, `#3`) when identical records repeat.
pub(crate) fn record_ids<T: Serialize>(
    items: &[T],
    own_id: impl Fn(&T) -> Option<&str>,
    prefix: &str,
) -> Vec<String> {
    let mut given: HashMap<&str, usize> = HashMap::new();
    for item in items {
        if let Some(id) = own_id(item) {
            *given.entry(id).or_default() += 1;
        }
    }
    let mut seen: HashMap<String, usize> = HashMap::new();
    items
        .iter()
        .map(|item| {
            let base = match own_id(item) {
                Some(id) if given.get(id) == Some(&1) => id.to_owned(),
                _ => {
                    let content = serde_json::to_string(item).unwrap_or_default();
                    let digest = Sha256::digest(content.as_bytes());
                    format!("{prefix}h:{}", hex_string(&digest[..12]))
                }
            };
            let n = seen.entry(base.clone()).or_default();
            *n += 1;
            if *n == 1 { base } else { format!("{base}#{n}") }
        })
        .collect()
}

/// The bank as `prepare` found it and kept it in the connection's
/// settings (`institution_id`, `_name`, `_logo`; the bank list is not asked
/// again).
pub(crate) fn kept_institution(settings: &serde_json::Value) -> SnapshotInstitution {
    let setting = |name: &str| settings.get(name).and_then(serde_json::Value::as_str);
    let id = setting("institution_id").unwrap_or_default();
    SnapshotInstitution {
        provider_institution_id: id.to_owned(),
        name: setting("institution_name").unwrap_or(id).to_owned(),
        logo_url: setting("institution_logo").map(str::to_owned),
    }
}

/// The connection's settings once the person came back: the `state` and
/// the `link` are used once (a second return with them is refused).
pub(crate) fn returned_once(settings: &serde_json::Value) -> serde_json::Value {
    let mut settings = settings.clone();
    if let Some(map) = settings.as_object_mut() {
        map.remove("state");
        map.remove("link");
    }
    settings
}

/// The start of the next UTC day: when a bank's daily allowance of
/// unattended reads returns.
pub(crate) fn until_tomorrow(now: DateTime<Utc>) -> std::time::Duration {
    let tomorrow = (now.date_naive() + chrono::Days::new(1))
        .and_time(chrono::NaiveTime::MIN)
        .and_utc();
    (tomorrow - now)
        .to_std()
        .unwrap_or(std::time::Duration::from_secs(3600))
}

pub(crate) fn hex_string(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize)]
    struct Entry {
        id: Option<&'static str>,
        amount: &'static str,
    }

    #[test]
    fn own_ids_where_unique_hashes_elsewhere_and_repeats_numbered() {
        let entries = [
            Entry {
                id: Some("A"),
                amount: "1",
            },
            Entry {
                id: Some("B"),
                amount: "2",
            },
            Entry {
                id: Some("B"),
                amount: "3",
            },
            Entry {
                id: None,
                amount: "4",
            },
            Entry {
                id: None,
                amount: "4",
            },
        ];
        let ids = record_ids(&entries, |e| e.id, "p:");
        assert_eq!(ids[0], "A");
        assert!(ids[1].starts_with("p:h:") && ids[2].starts_with("p:h:"));
        assert_ne!(ids[1], ids[2], "a shared bank id is no id");
        assert_eq!(ids[4], format!("{}#2", ids[3]), "twins stay two");
        assert_eq!(ids, record_ids(&entries, |e| e.id, "p:"), "stable");
    }
}
