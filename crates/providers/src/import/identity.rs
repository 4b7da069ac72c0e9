//! How an entry of a statement file gets an id that is the same on every
//! import of that file and unique within its account.

use sha2::{Digest, Sha256};
use std::collections::HashMap;
use tributary_domain::money::Decimal;

/// What identifies one entry of a statement, for its provider id.
#[derive(Debug, Clone)]
pub(crate) struct EntryIdentity {
    /// A reference the format guarantees unique within the account for the
    /// account's life: camt's entry `AcctSvcrRef`, OFX's `FITID`, a CSV
    /// profile's bank id column. MT940 references are not (banks reuse
    /// them across statements), and neither are placeholders.
    pub reference: Option<String>,
    pub date: chrono::NaiveDate,
    pub amount: Decimal,
    /// Everything else the entry says: counterparty, texts, references
    /// that are not unique.
    pub text: String,
}

/// References that stand for "none" (SWIFT's `NONREF`, SEPA's
/// `NOTPROVIDED`, a bare `EREF` key): never an identity.
pub(crate) fn is_placeholder(reference: &str) -> bool {
    let reference = reference.trim();
    reference.is_empty()
        || reference.chars().all(|c| c == '0')
        || [
            "NONREF",
            "NOTPROVIDED",
            "NOT PROVIDED",
            "EREF",
            "NONE",
            "N/A",
        ]
        .iter()
        .any(|p| reference.eq_ignore_ascii_case(p))
}

/// Provider ids for a statement's entries, unique within the account and
/// the same on every import of the same statement:
///
/// - an entry with a guaranteed-unique reference (given once in the
///   statement) is that reference with its date and amount, so a reference
///   that comes back with another date or amount is another transaction,
///   never an overwrite;
/// - any other entry is a hash of account, date, amount and text, numbered
///   by its position among identical twins (`#2`, `#3`…), so two real twins
///   stay two and a re-import finds both again.
pub(crate) fn entry_ids(account: &str, entries: &[EntryIdentity], prefix: &str) -> Vec<String> {
    fn usable(entry: &EntryIdentity) -> Option<&str> {
        entry.reference.as_deref().filter(|r| !is_placeholder(r))
    }
    let mut given: HashMap<&str, usize> = HashMap::new();
    for reference in entries.iter().filter_map(usable) {
        *given.entry(reference).or_default() += 1;
    }
    let mut seen: HashMap<String, usize> = HashMap::new();
    entries
        .iter()
        .map(|entry| {
            let base = match usable(entry) {
                Some(r) if given.get(r) == Some(&1) => {
                    format!("{prefix}{r}@{}/{}", entry.date, entry.amount)
                }
                _ => {
                    let content = format!(
                        "{account}\u{1f}{}\u{1f}{}\u{1f}{}",
                        entry.date, entry.amount, entry.text
                    );
                    let digest = Sha256::digest(content.as_bytes());
                    let hex: String = digest[..12].iter().map(|b| format!("{b:02x}")).collect();
                    format!("{prefix}h:{hex}")
                }
            };
            let n = seen.entry(base.clone()).or_default();
            *n += 1;
            if *n == 1 { base } else { format!("{base}#{n}") }
        })
        .collect()
}

/// The text part of an entry's identity: its parts that are present.
pub(crate) fn identity_text(parts: &[Option<&str>]) -> String {
    parts
        .iter()
        .map(|p| p.unwrap_or_default().trim())
        .collect::<Vec<_>>()
        .join("\u{1f}")
}
