//! Transfers between a person's own accounts (docs/enrichment.md,
//! "Transfers"): money that leaves one account and arrives in another is
//! neither spending nor income. Two transactions pair when they are in
//! different accounts of the same person, in the same currency, for
//! exactly opposite amounts, booked at most [`WINDOW_DAYS`] apart, and
//! neither is paired already. Where several could pair, the nearest in date
//! wins, then the oldest row.

use crate::model::AccountKind;
use chrono::NaiveDate;
use rust_decimal::Decimal;
use std::collections::{HashMap, HashSet};

/// How many days a transfer may take to arrive (weekends, bank holidays,
/// the other bank's cut-off).
pub const WINDOW_DAYS: i64 = 4;

/// A transaction as pairing reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    pub id: i64,
    pub account_id: i64,
    pub date: NaiveDate,
    pub amount: Decimal,
    pub currency: String,
}

/// Pairs each of `new` with a candidate of `pool` (which may hold `new`'s
/// own rows: two new rows pair with each other). Returns the pairs, each
/// once, the new row first.
pub fn pair(new: &[Candidate], pool: &[Candidate]) -> Vec<(i64, i64)> {
    let mut by_amount: HashMap<(&str, Decimal), Vec<&Candidate>> = HashMap::new();
    for candidate in pool.iter().filter(|c| !c.amount.is_zero()) {
        by_amount
            .entry((candidate.currency.as_str(), candidate.amount.normalize()))
            .or_default()
            .push(candidate);
    }
    let mut ordered: Vec<&Candidate> = new.iter().filter(|c| !c.amount.is_zero()).collect();
    ordered.sort_by_key(|c| (c.date, c.id));
    let mut paired: HashSet<i64> = HashSet::new();
    let mut pairs = Vec::new();
    for row in ordered {
        if paired.contains(&row.id) {
            continue;
        }
        let Some(opposite) = by_amount.get(&(row.currency.as_str(), (-row.amount).normalize()))
        else {
            continue;
        };
        let best = opposite
            .iter()
            .filter(|c| {
                c.account_id != row.account_id
                    && !paired.contains(&c.id)
                    && (c.date - row.date).num_days().abs() <= WINDOW_DAYS
            })
            .min_by_key(|c| ((c.date - row.date).num_days().abs(), c.id));
        if let Some(other) = best {
            paired.insert(row.id);
            paired.insert(other.id);
            pairs.push((row.id, other.id));
        }
    }
    pairs
}

/// The subcategory of a pair between accounts of these kinds: paying off
/// a credit card, else a transfer between one's own accounts.
pub fn subcategory(kinds: [Option<AccountKind>; 2]) -> &'static str {
    if kinds.contains(&Some(AccountKind::CreditCard)) {
        "transfer.credit_card_payment"
    } else {
        "transfer.own_accounts"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(id: i64, account_id: i64, day: u32, amount: i64) -> Candidate {
        Candidate {
            id,
            account_id,
            date: NaiveDate::from_ymd_opt(2026, 3, day).unwrap(),
            amount: Decimal::new(amount, 2),
            currency: "EUR".into(),
        }
    }

    #[test]
    fn opposite_amounts_in_two_accounts_within_the_window_pair() {
        let pool = [row(1, 10, 2, -5000), row(2, 20, 5, 5000)];
        assert_eq!(pair(&pool, &pool), vec![(1, 2)]);
    }

    #[test]
    fn what_is_not_a_transfer_does_not_pair() {
        // Same account, too far apart, another currency, not opposite, zero.
        let mut other_currency = row(6, 20, 2, 5000);
        other_currency.currency = "USD".into();
        for partner in [
            row(2, 10, 2, 5000),
            row(3, 20, 7, 5000),
            other_currency,
            row(4, 20, 2, -5000),
            row(5, 20, 2, 4999),
        ] {
            let pool = [row(1, 10, 2, -5000), partner.clone()];
            assert_eq!(pair(&pool, &pool), vec![], "{partner:?}");
        }
        let zero = [row(1, 10, 2, 0), row(2, 20, 2, 0)];
        assert_eq!(pair(&zero, &zero), vec![]);
    }

    #[test]
    fn each_row_pairs_once_and_the_nearest_wins() {
        // Two transfers of the same amount a week apart: each pairs with
        // its own arrival, not the other's.
        let pool = [
            row(1, 10, 1, -2000),
            row(2, 20, 2, 2000),
            row(3, 10, 8, -2000),
            row(4, 20, 9, 2000),
        ];
        assert_eq!(pair(&pool, &pool), vec![(1, 2), (3, 4)]);
        // An already paired row (left out of the pool) is not taken again.
        assert_eq!(
            pair(&[row(5, 10, 2, -2000)], &[row(6, 20, 3, 2000)]),
            vec![(5, 6)]
        );
        let three = [row(1, 10, 5, -100), row(2, 20, 3, 100), row(3, 30, 6, 100)];
        assert_eq!(pair(&three[..1], &three), vec![(1, 3)]);
    }

    #[test]
    fn a_credit_card_side_makes_it_a_card_payment() {
        assert_eq!(
            subcategory([Some(AccountKind::Checking), Some(AccountKind::CreditCard)]),
            "transfer.credit_card_payment"
        );
        assert_eq!(
            subcategory([Some(AccountKind::Checking), Some(AccountKind::Savings)]),
            "transfer.own_accounts"
        );
    }
}
