//! What one sync changed.

/// What one sync changed, for logs, the CLI and the job record (read back
/// by the pages that say what a sync did; a field missing from an older
/// record reads as zero).
#[derive(Debug, Default, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
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
    pub investment_transactions_added: usize,
    pub investment_transactions_updated: usize,
}

impl std::ops::AddAssign for SyncSummary {
    fn add_assign(&mut self, other: Self) {
        self.accounts_created += other.accounts_created;
        self.accounts_seen += other.accounts_seen;
        self.transactions_added += other.transactions_added;
        self.transactions_updated += other.transactions_updated;
        self.transactions_removed += other.transactions_removed;
        self.transactions_unchanged += other.transactions_unchanged;
        self.posted_from_pending += other.posted_from_pending;
        self.balances_recorded += other.balances_recorded;
        self.holdings_replaced += other.holdings_replaced;
        self.investment_transactions_added += other.investment_transactions_added;
        self.investment_transactions_updated += other.investment_transactions_updated;
    }
}
