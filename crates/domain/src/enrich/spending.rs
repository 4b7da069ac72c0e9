//! Spending totals (docs/enrichment.md, "Spending"): what went out, per
//! category, merchant or month and per currency, with refunds netted (money
//! back at a shop counts against that shop's category) and without what is
//! not spending: income, and transfers between one's own accounts or to
//! one's credit card.

use super::Posted;
use crate::taxonomy::{Category, Subcategory};
use chrono::Datelike;
use rust_decimal::Decimal;
use std::collections::BTreeMap;

/// What the totals are grouped by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupBy {
    Category,
    Merchant,
    Month,
}

impl GroupBy {
    pub const NAMES: [&'static str; 3] = ["category", "merchant", "month"];

    pub fn parse(name: &str) -> Option<GroupBy> {
        Some(match name {
            "category" => GroupBy::Category,
            "merchant" => GroupBy::Merchant,
            "month" => GroupBy::Month,
            _ => return None,
        })
    }
}

/// Whether a transaction of this subcategory is spending (or a refund of
/// it): not income, not a transfer between one's own accounts or to one's
/// credit card. A row not yet enriched counts: nothing says it is not.
pub fn counts(subcategory: Option<&Subcategory>) -> bool {
    match subcategory {
        None => true,
        Some(s) => {
            s.category != Category::Income
                && !matches!(
                    s.id,
                    "transfer.own_accounts" | "transfer.credit_card_payment"
                )
        }
    }
}

/// One group's total in one currency.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Total {
    /// The category's name, the merchant, or the month (`YYYY-MM`);
    /// `None` for transactions without one.
    pub key: Option<String>,
    pub currency: String,
    /// Money out less money back: positive when more went out.
    pub spent: Decimal,
    pub transactions: u64,
}

/// Totals, added to one transaction at a time (so that a long history is
/// read in pages).
#[derive(Debug, Clone)]
pub struct Totals {
    by: GroupBy,
    groups: BTreeMap<(String, Option<String>), (Decimal, u64)>,
}

impl Totals {
    pub fn new(by: GroupBy) -> Self {
        Totals {
            by,
            groups: BTreeMap::new(),
        }
    }

    /// Counts `spend` in, when it is spending.
    pub fn add(&mut self, spend: &Posted) {
        if !counts(spend.subcategory) {
            return;
        }
        let key = match self.by {
            GroupBy::Category => spend.subcategory.map(|s| s.category.name().to_owned()),
            GroupBy::Merchant => spend.merchant.clone(),
            GroupBy::Month => Some(format!(
                "{:04}-{:02}",
                spend.date.year(),
                spend.date.month()
            )),
        };
        let entry = self
            .groups
            .entry((spend.currency.clone(), key))
            .or_insert((Decimal::ZERO, 0));
        entry.0 -= spend.amount;
        entry.1 += 1;
    }

    /// The groups: by currency, then the most spent first (months in
    /// order).
    pub fn groups(self) -> Vec<Total> {
        let by = self.by;
        let mut totals: Vec<Total> = self
            .groups
            .into_iter()
            .map(|((currency, key), (spent, transactions))| Total {
                key,
                currency,
                spent: spent.normalize(),
                transactions,
            })
            .collect();
        totals.sort_by(|a, b| {
            a.currency.cmp(&b.currency).then_with(|| match by {
                GroupBy::Month => a.key.cmp(&b.key),
                _ => b.spent.cmp(&a.spent).then_with(|| a.key.cmp(&b.key)),
            })
        });
        totals
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spend(day: u32, amount: i64, merchant: &'static str, subcategory: &'static str) -> Posted {
        Posted {
            id: 0,
            account_id: 1,
            date: chrono::NaiveDate::from_ymd_opt(
                2026,
                if day > 30 { 11 } else { 10 },
                day.min(30),
            )
            .unwrap(),
            amount: Decimal::new(amount, 2),
            currency: "EUR".into(),
            merchant: Some(merchant.into()),
            subcategory: Subcategory::from_id(subcategory),
        }
    }

    #[test]
    fn refunds_net_and_transfers_and_income_are_left_out() {
        let mut totals = Totals::new(GroupBy::Category);
        for s in [
            spend(1, -5000, "Zalando", "shopping.clothing"),
            spend(3, 2000, "Zalando", "shopping.clothing"),
            spend(2, -1250, "Albert Heijn", "groceries.supermarkets"),
            spend(4, -40000, "Savings", "transfer.own_accounts"),
            spend(5, -90000, "Visa", "transfer.credit_card_payment"),
            spend(6, 300000, "Acme", "income.salary"),
            spend(7, -1500, "Anna", "transfer.to_others"),
        ] {
            totals.add(&s);
        }
        let groups: Vec<(Option<String>, String, u64)> = totals
            .groups()
            .into_iter()
            .map(|t| (t.key, t.spent.to_string(), t.transactions))
            .collect();
        assert_eq!(
            groups,
            vec![
                (Some("Shopping".into()), "30".into(), 2),
                (Some("Transfer".into()), "15".into(), 1),
                (Some("Groceries".into()), "12.5".into(), 1),
            ]
        );
    }

    #[test]
    fn months_come_in_order_and_currencies_apart() {
        let mut totals = Totals::new(GroupBy::Month);
        totals.add(&spend(31, -100, "A", "shopping.other"));
        totals.add(&spend(2, -300, "A", "shopping.other"));
        let mut dollars = spend(2, -700, "A", "shopping.other");
        dollars.currency = "USD".into();
        totals.add(&dollars);
        let groups: Vec<(String, Option<String>)> = totals
            .groups()
            .into_iter()
            .map(|t| (t.currency, t.key))
            .collect();
        assert_eq!(
            groups,
            vec![
                ("EUR".into(), Some("2026-10".into())),
                ("EUR".into(), Some("2026-11".into())),
                ("USD".into(), Some("2026-10".into())),
            ]
        );
    }
}
