//! Investment activity on both backends: written beside the account's
//! transactions by a sync, kept once per provider id (a re-sync changes
//! nothing, a changed record is updated in place, one not seen again stays),
//! read newest first with its security and between dates.

use crate::investments::{InvestmentTransactionView, list};
use crate::read;
use crate::sync_apply::apply_snapshot;
use crate::testing::on_every_backend;
use crate::tests::{account, date, now, snapshot, user_with_connection};
use chrono::Duration;
use tributary_domain::access::Viewer;
use tributary_domain::model::{AccountKind, InvestmentKind, Provider};
use tributary_domain::money::{Decimal, parse_decimal};
use tributary_domain::snapshot::{Security, SnapshotAccount, SnapshotInvestmentTransaction};

fn dec(text: &str) -> Decimal {
    parse_decimal(text).unwrap()
}

fn apple() -> Security {
    Security {
        name: "Apple Inc.".into(),
        currency: "USD".into(),
        ticker: Some("AAPL".into()),
        figi: None,
        cusip: Some("037833100".into()),
        isin: Some("US0378331005".into()),
    }
}

fn buy(id: &str, day: u32, units: &str, amount: &str) -> SnapshotInvestmentTransaction {
    SnapshotInvestmentTransaction {
        provider_id: id.into(),
        date: date(day),
        kind: InvestmentKind::Buy,
        subtype: Some("BUYSTOCK".into()),
        security: Some(apple()),
        quantity: Some(dec(units)),
        price: Some(dec("180.25")),
        amount: dec(amount),
        fees: Some(dec("4.95")),
        currency: "USD".into(),
        description: Some("Bought".into()),
        raw: serde_json::json!({"FITID": id}),
    }
}

fn fee(id: &str, day: u32) -> SnapshotInvestmentTransaction {
    SnapshotInvestmentTransaction {
        provider_id: id.into(),
        date: date(day),
        kind: InvestmentKind::Fee,
        subtype: None,
        security: None,
        quantity: None,
        price: None,
        amount: dec("-12.00"),
        fees: None,
        currency: "USD".into(),
        description: None,
        raw: serde_json::json!({}),
    }
}

fn brokerage(activity: Vec<SnapshotInvestmentTransaction>) -> SnapshotAccount {
    SnapshotAccount {
        kind: AccountKind::Brokerage,
        investment_transactions: activity,
        ..account("B1", Vec::new())
    }
}

fn summary_of(views: &[InvestmentTransactionView]) -> Vec<(String, String, Option<String>)> {
    views
        .iter()
        .map(|v| {
            (
                v.provider_id.clone(),
                v.amount.to_string(),
                v.quantity.map(|q| q.to_string()),
            )
        })
        .collect()
}

#[test]
fn activity_is_kept_once_per_id_updated_in_place_and_read_newest_first() {
    on_every_backend(|db| {
        let conn = &mut *db.conn().unwrap();
        let (user, connection) =
            user_with_connection(conn, "investor@example.com", Provider::new("sandbox"));
        let first = vec![buy("t1", 3, "10", "-1807.45"), fee("f1", 5)];
        let done = apply_snapshot(
            conn,
            connection,
            &snapshot(vec![brokerage(first.clone())]),
            now(),
        )
        .unwrap();
        assert_eq!(
            (
                done.investment_transactions_added,
                done.investment_transactions_updated
            ),
            (2, 0)
        );
        let account_id = read::list_accounts(conn, &Viewer::whole_user(user)).unwrap()[0].id;
        let stored = list(conn, account_id, (None, None), None).unwrap();
        assert_eq!(
            summary_of(&stored),
            [
                ("f1".into(), "-12.00".into(), None),
                ("t1".into(), "-1807.45".into(), Some("10".into())),
            ]
        );
        assert_eq!(stored[1].security.as_ref(), Some(&apple()));
        assert_eq!(stored[1].fees, Some(dec("4.95")));
        assert_eq!(stored[1].raw, serde_json::json!({"FITID": "t1"}));
        assert_eq!(stored[0].security, None);

        // The same again: nothing written.
        let again = apply_snapshot(
            conn,
            connection,
            &snapshot(vec![brokerage(first)]),
            now() + Duration::hours(1),
        )
        .unwrap();
        assert_eq!(
            (
                again.investment_transactions_added,
                again.investment_transactions_updated
            ),
            (0, 0)
        );
        assert_eq!(list(conn, account_id, (None, None), None).unwrap(), stored);

        // A corrected record is updated under its id (same row id); one not
        // seen again stays; a new one is added.
        let corrected = apply_snapshot(
            conn,
            connection,
            &snapshot(vec![brokerage(vec![
                buy("t1", 3, "11", "-1987.70"),
                buy("t2", 9, "1", "-180.25"),
            ])]),
            now() + Duration::hours(2),
        )
        .unwrap();
        assert_eq!(
            (
                corrected.investment_transactions_added,
                corrected.investment_transactions_updated
            ),
            (1, 1)
        );
        let after = list(conn, account_id, (None, None), None).unwrap();
        assert_eq!(
            summary_of(&after),
            [
                ("t2".into(), "-180.25".into(), Some("1".into())),
                ("f1".into(), "-12.00".into(), None),
                ("t1".into(), "-1987.70".into(), Some("11".into())),
            ]
        );
        assert_eq!(after[2].id, stored[1].id, "updated in place");

        // Between dates, inclusive.
        let between = list(conn, account_id, (Some(date(4)), Some(date(9))), None).unwrap();
        assert_eq!(
            between
                .iter()
                .map(|v| v.provider_id.as_str())
                .collect::<Vec<_>>(),
            ["t2", "f1"]
        );
        assert!(
            list(conn, account_id, (Some(date(10)), None), None)
                .unwrap()
                .is_empty()
        );
        // The newest where a limit is given; the count counts them all.
        let newest = list(conn, account_id, (None, None), Some(2)).unwrap();
        assert_eq!(
            newest
                .iter()
                .map(|v| v.provider_id.as_str())
                .collect::<Vec<_>>(),
            ["t2", "f1"]
        );
        let mut count = |from| crate::investments::count(conn, account_id, (from, None)).unwrap();
        assert_eq!((count(None), count(Some(date(4)))), (3, 2));
    });
}

#[test]
fn one_id_twice_in_one_sync_is_one_record_and_the_first_counts() {
    on_every_backend(|db| {
        let conn = &mut *db.conn().unwrap();
        let (user, connection) =
            user_with_connection(conn, "twice@example.com", Provider::new("sandbox"));
        let done = apply_snapshot(
            conn,
            connection,
            &snapshot(vec![brokerage(vec![
                buy("t1", 3, "10", "-1807.45"),
                buy("t1", 3, "12", "-2168.95"),
            ])]),
            now(),
        )
        .unwrap();
        assert_eq!(
            (
                done.investment_transactions_added,
                done.investment_transactions_updated
            ),
            (1, 0)
        );
        let account_id = read::list_accounts(conn, &Viewer::whole_user(user)).unwrap()[0].id;
        assert_eq!(
            summary_of(&list(conn, account_id, (None, None), None).unwrap()),
            [("t1".into(), "-1807.45".into(), Some("10".into()))]
        );
    });
}
