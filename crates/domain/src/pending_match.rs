//! The rule that recognises the pending record a posted one replaces when
//! the provider gives no link (rule 2b of [`crate::reconcile`]). Its own
//! module so that connectors' snapshots can carry it without importing the
//! reconciler; the matching itself lives with the reconciler.

use crate::money::Decimal;

/// How to recognise, when the provider gives no link, the pending record a
/// posted one replaces (rule 2b in the module documentation).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingMatchRule {
    /// The posted amount may differ from the pending one by this share of
    /// it, in percent (tips, final fuel amounts, currency conversion)…
    pub amount_tolerance_percent: u32,
    /// …or by this much, whichever is more.
    pub amount_tolerance_min: Decimal,
    /// The posted date is on or after the pending date, and at most this
    /// many days later.
    pub max_days: i64,
    /// Words shared by the two descriptions (merchant and description,
    /// lower-cased, words of 3+ letters, numbers ignored), as a percentage of
    /// the shorter one's words.
    pub min_similarity_percent: usize,
}

impl Default for PendingMatchRule {
    fn default() -> Self {
        PendingMatchRule {
            amount_tolerance_percent: 25,
            amount_tolerance_min: Decimal::ONE,
            max_days: 7,
            min_similarity_percent: 50,
        }
    }
}
