//! How an entry of a statement file gets an id that is the same on every
//! import of that file and unique within its account.

use sha2::{Digest, Sha256};
use std::collections::{HashMap, HashSet};
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
///
/// [`ReferenceCensus`] and [`EntryIds`] are the same rule for a statement
/// read twice instead of held whole (a file too large for memory).
pub(crate) fn entry_ids(account: &str, entries: &[EntryIdentity], prefix: &str) -> Vec<String> {
    let mut census = ReferenceCensus::default();
    for entry in entries {
        census.count(entry);
    }
    let repeated = census.finish();
    let mut ids = EntryIds::new(account, prefix, &repeated);
    entries.iter().map(|entry| ids.next(entry)).collect()
}

/// The usable reference of an entry: not a placeholder.
fn usable(entry: &EntryIdentity) -> Option<&str> {
    entry.reference.as_deref().filter(|r| !is_placeholder(r))
}

/// 128 bits of SHA-256: what the census and the twin count keep of a
/// reference or an id instead of its text (16 bytes however long it is).
/// Two texts sharing one would only make two unique references count as
/// given twice (both then identified by their content) or two distinct
/// entries count as twins (the second numbered `#2`): never one entry
/// taking another's id.
type Digest16 = [u8; 16];

fn digest16(text: &str) -> Digest16 {
    let full = Sha256::digest(text.as_bytes());
    let mut out = [0u8; 16];
    out.copy_from_slice(&full[..16]);
    out
}

/// A first pass over a statement's entries: which references it gives
/// more than once. Memory is 16 bytes an entry until [`Self::finish`].
#[derive(Debug, Default)]
pub(crate) struct ReferenceCensus {
    references: Vec<Digest16>,
}

impl ReferenceCensus {
    pub(crate) fn count(&mut self, entry: &EntryIdentity) {
        if let Some(reference) = usable(entry) {
            self.references.push(digest16(reference));
        }
    }

    /// The references given more than once (usually none).
    pub(crate) fn finish(mut self) -> RepeatedReferences {
        self.references.sort_unstable();
        let repeated = self
            .references
            .windows(2)
            .filter(|pair| pair[0] == pair[1])
            .map(|pair| pair[0])
            .collect();
        RepeatedReferences(repeated)
    }
}

/// What [`ReferenceCensus`] found: the references a statement gives more
/// than once, which therefore identify none of their entries.
#[derive(Debug, Default)]
pub(crate) struct RepeatedReferences(HashSet<Digest16>);

/// The second pass: each entry's id, in statement order. Only entries
/// identified by their content are remembered (to number twins); an entry
/// with a unique reference has an id no other entry can have.
#[derive(Debug)]
pub(crate) struct EntryIds<'a> {
    account: &'a str,
    prefix: &'a str,
    repeated: &'a RepeatedReferences,
    twins: HashMap<[u8; 12], u32>,
}

impl<'a> EntryIds<'a> {
    pub(crate) fn new(account: &'a str, prefix: &'a str, repeated: &'a RepeatedReferences) -> Self {
        EntryIds {
            account,
            prefix,
            repeated,
            twins: HashMap::new(),
        }
    }

    pub(crate) fn next(&mut self, entry: &EntryIdentity) -> String {
        let prefix = self.prefix;
        if let Some(r) = usable(entry)
            && !self.repeated.0.contains(&digest16(r))
        {
            // Contains `@`, which no content id does: never a twin.
            return format!("{prefix}{r}@{}/{}", entry.date, entry.amount);
        }
        let content = format!(
            "{}\u{1f}{}\u{1f}{}\u{1f}{}",
            self.account, entry.date, entry.amount, entry.text
        );
        let digest = Sha256::digest(content.as_bytes());
        let mut short = [0u8; 12];
        short.copy_from_slice(&digest[..12]);
        let hex: String = short.iter().map(|b| format!("{b:02x}")).collect();
        let n = self.twins.entry(short).or_default();
        *n += 1;
        if *n == 1 {
            format!("{prefix}h:{hex}")
        } else {
            format!("{prefix}h:{hex}#{n}")
        }
    }
}

/// The text part of an entry's identity: its parts that are present.
pub(crate) fn identity_text(parts: &[Option<&str>]) -> String {
    parts
        .iter()
        .map(|p| p.unwrap_or_default().trim())
        .collect::<Vec<_>>()
        .join("\u{1f}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(reference: Option<&str>, day: u32, amount: &str, text: &str) -> EntryIdentity {
        EntryIdentity {
            reference: reference.map(str::to_owned),
            date: chrono::NaiveDate::from_ymd_opt(2026, 11, day).unwrap_or_default(),
            amount: amount.parse().unwrap_or_default(),
            text: text.to_owned(),
        }
    }

    #[test]
    fn unique_references_name_their_entry_and_the_rest_are_numbered_twins() {
        let entries = [
            entry(Some("A1"), 2, "-5.00", "coffee"),
            entry(Some("R"), 3, "-1.00", "x"),
            entry(Some("R"), 4, "-1.00", "y"),
            entry(None, 5, "-2.50", "bread"),
            entry(Some("NONREF"), 5, "-2.50", "bread"),
            entry(None, 6, "-2.50", "bread"),
        ];
        let ids = entry_ids("DE00", &entries, "p:");
        assert_eq!(ids[0], "p:A1@2026-11-02/-5.00");
        // A reference given twice identifies neither entry.
        assert!(ids[1].starts_with("p:h:") && ids[2].starts_with("p:h:"));
        assert_ne!(ids[1], ids[2]);
        // Identical content: twins, numbered in order; a placeholder is no
        // reference.
        assert!(ids[3].starts_with("p:h:") && !ids[3].contains('#'));
        assert_eq!(ids[4], format!("{}#2", ids[3]));
        assert!(!ids[5].contains('#'), "another date is not a twin");
        let unique: HashSet<&String> = ids.iter().collect();
        assert_eq!(unique.len(), ids.len());
    }

    #[test]
    fn two_passes_give_what_one_gives() {
        let entries: Vec<EntryIdentity> = (0..50)
            .map(|n| {
                let reference = (n % 7 != 0).then(|| format!("F{}", n % 40));
                entry(reference.as_deref(), 1 + n % 3, "-1.00", "same")
            })
            .collect();
        let whole = entry_ids("acct", &entries, "");
        let mut census = ReferenceCensus::default();
        entries.iter().for_each(|e| census.count(e));
        let repeated = census.finish();
        let mut streamed = EntryIds::new("acct", "", &repeated);
        let again: Vec<String> = entries.iter().map(|e| streamed.next(e)).collect();
        assert_eq!(whole, again);
        let unique: HashSet<&String> = whole.iter().collect();
        assert_eq!(unique.len(), whole.len(), "every entry has its own id");
    }
}
