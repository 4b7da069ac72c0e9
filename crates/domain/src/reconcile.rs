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
//!    2b. Where the provider gives no link, a posted record that is new takes
//!    over a stored pending row the provider no longer lists when a
//!    [`PendingMatchRule`] accepts the pair: same currency and sign, amount
//!    within tolerance, posted 0 to `max_days` days after, descriptions
//!    sharing enough words (or, with no words, the very same amount). Of
//!    several candidates the closest amount, then the closest date, wins.
//!    A pending record whose posted replacement is already stored is ignored
//!    if a (stale) provider view still lists it.
//! 3. A stored pending record that the provider no longer lists, and that no
//!    posted record replaced, is removed (the authorisation was dropped).
//! 4. A stored posted record that the provider no longer lists is kept: the
//!    provider's window may simply not reach back that far.

use crate::ids::TransactionId;
use crate::money::Decimal;
pub use crate::pending_match::PendingMatchRule;
use crate::snapshot::SnapshotTransaction;
pub use crate::summary::SyncSummary;
use chrono::NaiveDate;
use std::collections::{HashMap, HashSet};

/// A transaction as stored, reduced to what reconciliation compares.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredTransaction {
    pub id: TransactionId,
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

/// What to do to one account's stored transactions. New records are
/// borrowed from the incoming list: a large statement is not copied again.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct TransactionChanges<'a> {
    pub insert: Vec<&'a SnapshotTransaction>,
    /// Rows to overwrite with the incoming record (`id`, record).
    pub update: Vec<(TransactionId, SnapshotTransaction)>,
    /// Pending rows that vanished.
    pub delete: Vec<TransactionId>,
    pub unchanged: usize,
    /// How many of `update` are pending rows that became posted.
    pub posted_from_pending: usize,
    /// Incoming records dropped because an earlier one had the same id.
    pub duplicates_ignored: usize,
}

fn words(merchant: Option<&str>, description: Option<&str>) -> HashSet<String> {
    [merchant, description]
        .into_iter()
        .flatten()
        .flat_map(|text| text.split(|c: char| !c.is_alphanumeric()))
        .filter(|w| w.chars().count() >= 3 && !w.chars().all(|c| c.is_ascii_digit()))
        .map(str::to_lowercase)
        .collect()
}

impl PendingMatchRule {
    /// How far `posted` is from `pending` (amount difference, days), when
    /// the rule accepts the pair.
    fn distance(
        &self,
        pending: &StoredTransaction,
        posted: &SnapshotTransaction,
    ) -> Option<(Decimal, i64)> {
        let days = (posted.date - pending.date).num_days();
        if pending.currency != posted.currency
            || !(0..=self.max_days).contains(&days)
            || pending.amount.is_sign_negative() != posted.amount.is_sign_negative()
        {
            return None;
        }
        let difference = (posted.amount - pending.amount).abs();
        let allowed = (pending.amount.abs() * Decimal::from(self.amount_tolerance_percent)
            / Decimal::ONE_HUNDRED)
            .max(self.amount_tolerance_min);
        if difference > allowed {
            return None;
        }
        let (a, b) = (
            words(pending.merchant.as_deref(), pending.description.as_deref()),
            words(posted.merchant.as_deref(), posted.description.as_deref()),
        );
        let similar = if a.is_empty() || b.is_empty() {
            // No words to compare: only an identical amount is evidence enough.
            difference.is_zero()
        } else {
            a.intersection(&b).count() * 100 >= self.min_similarity_percent * a.len().min(b.len())
        };
        similar.then_some((difference, days))
    }
}

/// The reconciler. `rule`: how to match posted records to pending ones where
/// the provider gives no link (`None`: only by the provider's link).
/// `complete`: the incoming list is the provider's whole
/// current view, so stored pending records missing from it have vanished
/// (rule 3); a partial view (a statement file) removes none.
pub fn reconcile<'a>(
    stored: &[StoredTransaction],
    incoming: &'a [SnapshotTransaction],
    rule: Option<&PendingMatchRule>,
    complete: bool,
) -> TransactionChanges<'a> {
    let mut changes = TransactionChanges::default();

    // Pending ids that have posted: a posted record in this snapshot says it
    // replaces them, or a stored posted row did. A stale view that still
    // lists one of them does not bring it back.
    let replaced_pending: HashSet<&str> = incoming
        .iter()
        .filter(|t| !t.is_pending)
        .filter_map(|t| t.pending_provider_id.as_deref())
        .chain(
            stored
                .iter()
                .filter(|t| !t.is_pending)
                .filter_map(|t| t.pending_provider_id.as_deref()),
        )
        .collect();

    let incoming_ids: HashSet<&str> = incoming.iter().map(|t| t.provider_id.as_str()).collect();
    let by_provider_id: HashMap<&str, &StoredTransaction> =
        stored.iter().map(|t| (t.provider_id.as_str(), t)).collect();
    let mut seen_incoming: HashSet<&str> = HashSet::new();
    let mut claimed_rows: HashSet<TransactionId> = HashSet::new();
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

    // Pass 2: new records, which may take over the pending row they replace:
    // by the provider's link, else (posted records only) by the rule.
    for record in by_link {
        let linked = (!record.is_pending)
            .then_some(record.pending_provider_id.as_deref())
            .flatten()
            .and_then(|pending_id| by_provider_id.get(pending_id).copied())
            .filter(|row| row.is_pending && !claimed_rows.contains(&row.id));
        let matched = match (linked, rule) {
            (Some(row), _) => Some(row),
            (None, Some(rule)) if !record.is_pending && record.pending_provider_id.is_none() => {
                stored
                    .iter()
                    .filter(|row| row.is_pending && !claimed_rows.contains(&row.id))
                    .filter(|row| !incoming_ids.contains(row.provider_id.as_str()))
                    .filter_map(|row| {
                        rule.distance(row, record)
                            .map(|distance| (distance, row.id, row))
                    })
                    .min_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)))
                    .map(|(_, _, row)| row)
            }
            _ => None,
        };
        match matched {
            Some(row) => {
                claimed_rows.insert(row.id);
                let mut posted = record.clone();
                posted
                    .pending_provider_id
                    .get_or_insert_with(|| row.provider_id.clone());
                changes.update.push((row.id, posted));
                changes.posted_from_pending += 1;
            }
            None => changes.insert.push(record),
        }
    }

    // Pass 3: pending rows nobody claimed have vanished.
    if complete {
        changes.delete = stored
            .iter()
            .filter(|row| row.is_pending && !claimed_rows.contains(&row.id))
            .map(|row| row.id)
            .collect();
    }
    changes
}

impl SyncSummary {
    pub fn absorb(&mut self, changes: &TransactionChanges<'_>) {
        self.transactions_added += changes.insert.len();
        self.transactions_updated += changes.update.len();
        self.transactions_removed += changes.delete.len();
        self.transactions_unchanged += changes.unchanged;
        self.posted_from_pending += changes.posted_from_pending;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::money::parse_decimal;

    /// [`TransactionChanges`] with the new records copied out, so that a
    /// test may pass its records inline.
    #[derive(Debug)]
    struct Changes {
        insert: Vec<SnapshotTransaction>,
        update: Vec<(TransactionId, SnapshotTransaction)>,
        delete: Vec<TransactionId>,
        unchanged: usize,
        posted_from_pending: usize,
        duplicates_ignored: usize,
    }

    fn owned(changes: TransactionChanges<'_>) -> Changes {
        Changes {
            insert: changes.insert.into_iter().cloned().collect(),
            update: changes.update,
            delete: changes.delete,
            unchanged: changes.unchanged,
            posted_from_pending: changes.posted_from_pending,
            duplicates_ignored: changes.duplicates_ignored,
        }
    }

    /// A provider's whole view, reconciled without the pending-match rule.
    fn reconcile_transactions(
        stored: &[StoredTransaction],
        incoming: &[SnapshotTransaction],
    ) -> Changes {
        owned(reconcile(stored, incoming, None, true))
    }

    /// A provider's whole view, reconciled with `rule`.
    fn reconcile_transactions_with(
        stored: &[StoredTransaction],
        incoming: &[SnapshotTransaction],
        rule: Option<&PendingMatchRule>,
    ) -> Changes {
        owned(reconcile(stored, incoming, rule, true))
    }

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
            hints: Default::default(),
        }
    }

    fn stored(id: i64, record: &SnapshotTransaction) -> StoredTransaction {
        StoredTransaction {
            id: TransactionId::new(id),
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
        assert_eq!(changes.update, vec![(TransactionId::new(7), after)]);
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
        assert_eq!(changes.update, vec![(TransactionId::new(3), posted)]);
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
        assert_eq!(changes.update, vec![(TransactionId::new(3), posted)]);
        assert!(changes.insert.is_empty() && changes.delete.is_empty());
    }

    #[test]
    fn a_stale_view_does_not_bring_back_a_pending_record_that_posted() {
        let mut posted = incoming("t1", false, "-23.00");
        posted.pending_provider_id = Some("p1".to_owned());
        let stale_pending = incoming("p1", true, "-20.00");
        let changes = reconcile_transactions(&[stored(3, &posted)], &[stale_pending]);
        assert!(
            changes.insert.is_empty() && changes.update.is_empty() && changes.delete.is_empty()
        );
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
        assert_eq!(changes.delete, vec![TransactionId::new(1)]);
    }

    #[test]
    fn vanished_pending_is_removed_and_vanished_posted_is_kept() {
        let pending = incoming("p1", true, "-20.00");
        let posted = incoming("t0", false, "-5.00");
        let changes = reconcile_transactions(&[stored(1, &pending), stored(2, &posted)], &[]);
        assert_eq!(changes.delete, vec![TransactionId::new(1)]);
    }

    #[test]
    fn a_partial_view_removes_no_pending_record() {
        let pending = incoming("p1", true, "-20.00");
        let other = incoming("t9", false, "-1.00");
        let changes = owned(reconcile(&[stored(1, &pending)], &[other], None, false));
        assert!(changes.delete.is_empty());
        assert_eq!(changes.insert.len(), 1);
    }

    #[test]
    fn duplicate_ids_in_one_snapshot_are_counted_once() {
        let a = incoming("a", false, "-1.00");
        let changes = reconcile_transactions(&[], &[a.clone(), a.clone()]);
        assert_eq!(changes.insert, vec![a]);
        assert_eq!(changes.duplicates_ignored, 1);
    }

    fn pending_row(
        id: i64,
        provider_id: &str,
        day: u32,
        amount: &str,
        merchant: &str,
    ) -> StoredTransaction {
        let mut record = incoming(provider_id, true, amount);
        record.date = NaiveDate::from_ymd_opt(2026, 11, day).unwrap();
        record.merchant = Some(merchant.to_owned());
        stored(id, &record)
    }

    fn posted(id: &str, day: u32, amount: &str, merchant: &str) -> SnapshotTransaction {
        let mut record = incoming(id, false, amount);
        record.date = NaiveDate::from_ymd_opt(2026, 11, day).unwrap();
        record.merchant = Some(merchant.to_owned());
        record
    }

    fn matched(rows: &[StoredTransaction], record: SnapshotTransaction) -> Option<i64> {
        let changes =
            reconcile_transactions_with(rows, &[record], Some(&PendingMatchRule::default()));
        changes.update.first().map(|(id, _)| id.get())
    }

    #[test]
    fn rule_matches_the_same_purchase_posted_later_with_a_tip() {
        let rows = [pending_row(
            5,
            "p",
            10,
            "-40.00",
            "THE CHEESECAKE FACTORY #123",
        )];
        let changes = reconcile_transactions_with(
            &rows,
            &[posted("t", 12, "-47.20", "Cheesecake Factory")],
            Some(&PendingMatchRule::default()),
        );
        assert_eq!(changes.update.len(), 1);
        assert_eq!(changes.update[0].0, TransactionId::new(5));
        assert_eq!(
            changes.update[0].1.pending_provider_id.as_deref(),
            Some("p"),
            "the link is recorded"
        );
        assert!(changes.insert.is_empty() && changes.delete.is_empty());
    }

    #[test]
    fn rule_needs_the_provider_to_have_dropped_the_pending_record() {
        let rows = [pending_row(5, "p", 10, "-40.00", "Shop")];
        let mut still_pending = incoming("p", true, "-40.00");
        still_pending.date = NaiveDate::from_ymd_opt(2026, 11, 10).unwrap();
        still_pending.merchant = Some("Shop".into());
        let changes = reconcile_transactions_with(
            &rows,
            &[still_pending, posted("t", 11, "-40.00", "Shop")],
            Some(&PendingMatchRule::default()),
        );
        assert_eq!(
            changes.insert.len(),
            1,
            "a second purchase, not the pending one posting"
        );
    }

    #[test]
    fn rule_rejects_what_is_not_the_same_purchase() {
        let row = || [pending_row(5, "p", 10, "-40.00", "Blue Bottle Coffee")];
        assert_eq!(
            matched(&row(), posted("t", 9, "-40.00", "Blue Bottle Coffee")),
            None,
            "posted before it was pending"
        );
        assert_eq!(
            matched(&row(), posted("t", 18, "-40.00", "Blue Bottle Coffee")),
            None,
            "more than 7 days later"
        );
        assert_eq!(
            matched(&row(), posted("t", 11, "-60.00", "Blue Bottle Coffee")),
            None,
            "amount beyond 25 %"
        );
        assert_eq!(
            matched(&row(), posted("t", 11, "40.00", "Blue Bottle Coffee")),
            None,
            "a refund is not the purchase"
        );
        assert_eq!(
            matched(&row(), posted("t", 11, "-40.00", "Shell Gas Station")),
            None,
            "another merchant"
        );
        let mut euro = posted("t", 11, "-40.00", "Blue Bottle Coffee");
        euro.currency = "EUR".into();
        assert_eq!(matched(&row(), euro), None, "another currency");
        let changes =
            reconcile_transactions(&row(), &[posted("t", 11, "-40.00", "Blue Bottle Coffee")]);
        assert!(changes.update.is_empty(), "without a rule only links match");
    }

    #[test]
    fn rule_accepts_each_limit_inclusively() {
        let rows = [pending_row(5, "p", 10, "-40.00", "Blue Bottle Coffee")];
        assert_eq!(
            matched(&rows, posted("t", 10, "-40.00", "Blue Bottle Coffee")),
            Some(5),
            "same day"
        );
        assert_eq!(
            matched(&rows, posted("t", 17, "-50.00", "Blue Bottle Coffee")),
            Some(5),
            "day 7, +25 %"
        );
        let small = [pending_row(6, "p", 10, "-2.00", "Parking Meter")];
        assert_eq!(
            matched(&small, posted("t", 11, "-3.00", "Parking")),
            Some(6),
            "the 1.00 minimum tolerance"
        );
    }

    #[test]
    fn rule_with_no_words_needs_the_same_amount() {
        let mut row = pending_row(5, "p", 10, "-12.00", "");
        row.merchant = None;
        let mut same = posted("t", 11, "-12.00", "");
        same.merchant = None;
        let mut other = posted("t", 11, "-12.50", "");
        other.merchant = None;
        assert_eq!(matched(std::slice::from_ref(&row), same), Some(5));
        assert_eq!(matched(&[row], other), None);
    }

    #[test]
    fn rule_picks_the_closest_of_several_candidates() {
        let rows = [
            pending_row(1, "p1", 10, "-30.00", "Amazon Marketplace"),
            pending_row(2, "p2", 10, "-32.00", "Amazon Marketplace"),
        ];
        assert_eq!(
            matched(&rows, posted("t", 11, "-32.00", "AMAZON MKTPLACE")),
            Some(2)
        );
    }
}
