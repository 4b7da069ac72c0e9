//! The sync reconciler: stored transactions of one account + the provider's
//! current list -> the changes that make storage match the provider.
//!
//! Rules (docs/architecture.md, "How a sync flows"):
//! 1. Transactions are keyed by provider id within their account. An incoming
//!    record whose id is stored updates that row when any field differs, and
//!    is otherwise left alone: a re-fetch never duplicates.
//! 2. A posted record that names the pending record it replaces (the provider
//!    link) takes over that pending row: the row keeps its Tributary id, gets
//!    the posted provider id, and remembers the pending provider id. Clients
//!    that stored the pending transaction therefore see it turn posted instead
//!    of seeing a second copy. If the provider still lists the replaced
//!    pending record, that copy is ignored.
//! 3. A stored pending record that the provider no longer lists, and that no
//!    posted record replaced, is removed (the authorisation was dropped).
//! 4. A stored posted record that the provider no longer lists is kept: the
//!    provider's window may simply not reach back that far.

use crate::money::Decimal;
use crate::snapshot::SnapshotTransaction;
use chrono::NaiveDate;
use std::collections::{HashMap, HashSet};

/// A transaction as stored, reduced to what reconciliation compares.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredTransaction {
    pub id: i64,
    pub provider_id: String,
    pub pending_provider_id: Option<String>,
    pub is_pending: bool,
    pub date: NaiveDate,
    pub amount: Decimal,
    pub currency: String,
    pub merchant: Option<String>,
    pub description: Option<String>,
}

impl StoredTransaction {
    fn differs_from(&self, incoming: &SnapshotTransaction) -> bool {
        self.provider_id != incoming.provider_id
            || self.is_pending != incoming.is_pending
            || self.date != incoming.date
            // Compare digits and scale: `1.0` and `1.00` are both kept as given.
            || self.amount.to_string() != incoming.amount.to_string()
            || self.currency != incoming.currency
            || self.merchant != incoming.merchant
            || self.description != incoming.description
            || (incoming.pending_provider_id.is_some()
                && self.pending_provider_id != incoming.pending_provider_id)
    }
}

/// What to do to one account's stored transactions.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct TransactionChanges {
    pub insert: Vec<SnapshotTransaction>,
    /// Rows to overwrite with the incoming record (`id`, record).
    pub update: Vec<(i64, SnapshotTransaction)>,
    /// Pending rows that vanished.
    pub delete: Vec<i64>,
    pub unchanged: usize,
    /// How many of `update` are pending rows that became posted.
    pub posted_from_pending: usize,
    /// Incoming records dropped because an earlier one had the same id.
    pub duplicates_ignored: usize,
}

pub fn reconcile_transactions(
    stored: &[StoredTransaction],
    incoming: &[SnapshotTransaction],
) -> TransactionChanges {
    let mut changes = TransactionChanges::default();

    // Pending ids that a posted record in this snapshot says it replaces.
    let replaced_pending: HashSet<&str> = incoming
        .iter()
        .filter(|t| !t.is_pending)
        .filter_map(|t| t.pending_provider_id.as_deref())
        .collect();

    let by_provider_id: HashMap<&str, &StoredTransaction> =
        stored.iter().map(|t| (t.provider_id.as_str(), t)).collect();
    let mut seen_incoming: HashSet<&str> = HashSet::new();
    let mut claimed_rows: HashSet<i64> = HashSet::new();
    let mut by_link: Vec<&SnapshotTransaction> = Vec::new();

    // Pass 1: records whose provider id is already stored.
    for record in incoming {
        if !seen_incoming.insert(record.provider_id.as_str()) {
            changes.duplicates_ignored += 1;
            continue;
        }
        if record.is_pending && replaced_pending.contains(record.provider_id.as_str()) {
            continue;
        }
        match by_provider_id.get(record.provider_id.as_str()) {
            Some(row) => {
                claimed_rows.insert(row.id);
                if row.differs_from(record) {
                    let mut updated = record.clone();
                    // A later record without the link keeps the one stored.
                    if updated.pending_provider_id.is_none() {
                        updated.pending_provider_id = row.pending_provider_id.clone();
                    }
                    changes.update.push((row.id, updated));
                } else {
                    changes.unchanged += 1;
                }
            }
            None => by_link.push(record),
        }
    }

    // Pass 2: new records, which may take over the pending row they replace.
    for record in by_link {
        let replaced_row = (!record.is_pending)
            .then_some(record.pending_provider_id.as_deref())
            .flatten()
            .and_then(|pending_id| by_provider_id.get(pending_id))
            .filter(|row| row.is_pending && !claimed_rows.contains(&row.id));
        match replaced_row {
            Some(row) => {
                claimed_rows.insert(row.id);
                changes.update.push((row.id, record.clone()));
                changes.posted_from_pending += 1;
            }
            None => changes.insert.push(record.clone()),
        }
    }

    // Pass 3: pending rows nobody claimed have vanished.
    changes.delete = stored
        .iter()
        .filter(|row| row.is_pending && !claimed_rows.contains(&row.id))
        .map(|row| row.id)
        .collect();
    changes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::money::parse_decimal;

    fn incoming(id: &str, pending: bool, amount: &str) -> SnapshotTransaction {
        SnapshotTransaction {
            provider_id: id.to_owned(),
            pending_provider_id: None,
            is_pending: pending,
            date: NaiveDate::from_ymd_opt(2026, 11, 20).unwrap(),
            amount: parse_decimal(amount).unwrap(),
            currency: "USD".to_owned(),
            merchant: Some("Blue Bottle Coffee".to_owned()),
            description: None,
        }
    }

    fn stored(id: i64, record: &SnapshotTransaction) -> StoredTransaction {
        StoredTransaction {
            id,
            provider_id: record.provider_id.clone(),
            pending_provider_id: record.pending_provider_id.clone(),
            is_pending: record.is_pending,
            date: record.date,
            amount: record.amount,
            currency: record.currency.clone(),
            merchant: record.merchant.clone(),
            description: record.description.clone(),
        }
    }

    #[test]
    fn first_sync_inserts_everything() {
        let records = vec![incoming("a", false, "-4.50"), incoming("b", true, "-12.00")];
        let changes = reconcile_transactions(&[], &records);
        assert_eq!(changes.insert, records);
        assert!(changes.update.is_empty() && changes.delete.is_empty());
    }

    #[test]
    fn refetching_the_same_records_changes_nothing() {
        let records = vec![incoming("a", false, "-4.50"), incoming("b", true, "-12.00")];
        let rows = vec![stored(1, &records[0]), stored(2, &records[1])];
        let changes = reconcile_transactions(&rows, &records);
        assert_eq!(changes.unchanged, 2);
        assert!(
            changes.insert.is_empty() && changes.update.is_empty() && changes.delete.is_empty()
        );
    }

    #[test]
    fn a_changed_record_is_updated_in_place() {
        let before = incoming("a", false, "-4.50");
        let mut after = before.clone();
        after.description = Some("corrected".to_owned());
        let changes = reconcile_transactions(&[stored(7, &before)], &[after.clone()]);
        assert_eq!(changes.update, vec![(7, after)]);
    }

    #[test]
    fn a_change_of_scale_alone_counts_as_a_change() {
        let before = incoming("a", false, "-4.5");
        let after = incoming("a", false, "-4.50");
        let changes = reconcile_transactions(&[stored(7, &before)], &[after]);
        assert_eq!(changes.update.len(), 1);
    }

    #[test]
    fn an_update_without_the_link_keeps_the_stored_link() {
        let mut before = incoming("t1", false, "-23.00");
        before.pending_provider_id = Some("p1".to_owned());
        let mut after = incoming("t1", false, "-23.00");
        after.description = Some("corrected".to_owned());
        let changes = reconcile_transactions(&[stored(3, &before)], &[after]);
        assert_eq!(
            changes.update[0].1.pending_provider_id.as_deref(),
            Some("p1")
        );
    }

    #[test]
    fn posted_record_takes_over_its_linked_pending_row() {
        let pending = incoming("p1", true, "-20.00");
        let mut posted = incoming("t1", false, "-23.00");
        posted.pending_provider_id = Some("p1".to_owned());
        let changes = reconcile_transactions(&[stored(3, &pending)], &[posted.clone()]);
        assert_eq!(changes.update, vec![(3, posted)]);
        assert_eq!(changes.posted_from_pending, 1);
        assert!(changes.insert.is_empty() && changes.delete.is_empty());
    }

    #[test]
    fn pending_still_listed_beside_its_posted_record_is_not_kept_twice() {
        let pending = incoming("p1", true, "-20.00");
        let mut posted = incoming("t1", false, "-20.00");
        posted.pending_provider_id = Some("p1".to_owned());
        let changes =
            reconcile_transactions(&[stored(3, &pending)], &[pending.clone(), posted.clone()]);
        assert_eq!(changes.update, vec![(3, posted)]);
        assert!(changes.insert.is_empty() && changes.delete.is_empty());
    }

    #[test]
    fn link_to_a_pending_never_stored_inserts_the_posted_record() {
        let mut posted = incoming("t1", false, "-20.00");
        posted.pending_provider_id = Some("p-unknown".to_owned());
        let changes = reconcile_transactions(&[], &[posted.clone()]);
        assert_eq!(changes.insert, vec![posted]);
    }

    #[test]
    fn link_to_a_posted_row_is_not_a_replacement() {
        let other = incoming("x", false, "-1.00");
        let mut posted = incoming("t1", false, "-20.00");
        posted.pending_provider_id = Some("x".to_owned());
        let changes =
            reconcile_transactions(&[stored(1, &other)], &[other.clone(), posted.clone()]);
        assert_eq!(changes.insert, vec![posted]);
        assert_eq!(changes.unchanged, 1);
    }

    #[test]
    fn posted_already_stored_and_its_pending_too_removes_the_pending() {
        // A crash or an older Tributary may have stored both.
        let pending = incoming("p1", true, "-20.00");
        let mut posted = incoming("t1", false, "-20.00");
        posted.pending_provider_id = Some("p1".to_owned());
        let changes = reconcile_transactions(
            &[stored(1, &pending), stored(2, &posted)],
            &[posted.clone()],
        );
        assert_eq!(changes.unchanged, 1);
        assert_eq!(changes.delete, vec![1]);
    }

    #[test]
    fn vanished_pending_is_removed_and_vanished_posted_is_kept() {
        let pending = incoming("p1", true, "-20.00");
        let posted = incoming("t0", false, "-5.00");
        let changes = reconcile_transactions(&[stored(1, &pending), stored(2, &posted)], &[]);
        assert_eq!(changes.delete, vec![1]);
    }

    #[test]
    fn duplicate_ids_in_one_snapshot_are_counted_once() {
        let a = incoming("a", false, "-1.00");
        let changes = reconcile_transactions(&[], &[a.clone(), a.clone()]);
        assert_eq!(changes.insert, vec![a]);
        assert_eq!(changes.duplicates_ignored, 1);
    }
}

/// What one sync changed, for logs, the CLI and the job record.
#[derive(Debug, Default, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SyncSummary {
    pub accounts_created: usize,
    pub accounts_seen: usize,
    pub transactions_added: usize,
    pub transactions_updated: usize,
    pub transactions_removed: usize,
    pub transactions_unchanged: usize,
    pub posted_from_pending: usize,
    pub balances_recorded: usize,
    pub holdings_replaced: usize,
}

impl SyncSummary {
    pub fn absorb(&mut self, changes: &TransactionChanges) {
        self.transactions_added += changes.insert.len();
        self.transactions_updated += changes.update.len();
        self.transactions_removed += changes.delete.len();
        self.transactions_unchanged += changes.unchanged;
        self.posted_from_pending += changes.posted_from_pending;
    }
}
