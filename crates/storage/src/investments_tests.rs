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
use diesel::prelude::*;
use tributary_domain::access::Viewer;
use tributary_domain::model::{AccountKind, InvestmentKind, Provider};
use tributary_domain::money::{Decimal, parse_decimal};
use tributary_domain::snapshot::{
    Security, SnapshotAccount, SnapshotHolding, SnapshotInvestmentTransaction,
};

fn dec(text: &str) -> Decimal {
    parse_decimal(text).unwrap()
}

pub(crate) fn apple() -> Security {
    Security {
        name: "Apple Inc.".into(),
        currency: "USD".into(),
        ticker: Some("AAPL".into()),
        figi: None,
        cusip: Some("037833100".into()),
        isin: Some("US0378331005".into()),
    }
}

pub(crate) fn buy(id: &str, day: u32, units: &str, amount: &str) -> SnapshotInvestmentTransaction {
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

pub(crate) fn fee(id: &str, day: u32) -> SnapshotInvestmentTransaction {
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

pub(crate) fn brokerage(activity: Vec<SnapshotInvestmentTransaction>) -> SnapshotAccount {
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

/// A security's description is what the owner's own sources said: a second
/// user's file naming the same ISIN otherwise renames the first user's
/// holdings. Each user's rows go with the user.
#[test]
fn a_security_named_by_one_user_is_not_renamed_for_another() {
    on_every_backend(|db| {
        let conn = &mut *db.conn().unwrap();
        let holding = |security: Security| SnapshotHolding {
            security,
            quantity: dec("10"),
            price: dec("180.25"),
            value: dec("1802.50"),
            value_in_account_currency: None,
            cost_basis: None,
            currency: "USD".into(),
            raw: serde_json::json!({}),
        };
        let (first, first_connection) =
            user_with_connection(conn, "first@example.com", Provider::new("sandbox"));
        let (second, second_connection) =
            user_with_connection(conn, "second@example.com", Provider::new("sandbox"));
        let first_account = SnapshotAccount {
            holdings: Some(vec![holding(apple())]),
            ..brokerage(vec![buy("t1", 3, "10", "-1807.45")])
        };
        apply_snapshot(
            conn,
            first_connection,
            &snapshot(vec![first_account]),
            now(),
        )
        .unwrap();
        let renamed = Security {
            name: "Notes only the second user may read".into(),
            ticker: Some("MINE".into()),
            ..apple()
        };
        let mut second_buy = buy("t9", 4, "1", "-180.25");
        second_buy.security = Some(renamed.clone());
        let second_account = SnapshotAccount {
            holdings: Some(vec![holding(renamed.clone())]),
            ..brokerage(vec![second_buy])
        };
        apply_snapshot(
            conn,
            second_connection,
            &snapshot(vec![second_account]),
            now(),
        )
        .unwrap();

        let seen_by = |conn: &mut crate::AnyConnection, user| {
            let account = read::list_accounts(conn, &Viewer::whole_user(user)).unwrap()[0].id;
            let held = read::list_holdings(conn, account).unwrap();
            let traded = list(conn, account, (None, None), None).unwrap();
            (
                held[0].security.clone(),
                traded[0].security.clone().unwrap(),
            )
        };
        assert_eq!(seen_by(conn, first), (apple(), apple()));
        assert_eq!(seen_by(conn, second), (renamed.clone(), renamed));

        crate::apps::delete_user(conn, second).unwrap();
        assert_eq!(seen_by(conn, first), (apple(), apple()));
        let left: i64 = crate::schema::securities::table
            .count()
            .get_result(conn)
            .unwrap();
        assert_eq!(left, 1, "the second user's security went with them");
        // A removed connection's securities go with it.
        crate::connections::delete_connection(conn, first, first_connection, now()).unwrap();
        let left: i64 = crate::schema::securities::table
            .count()
            .get_result(conn)
            .unwrap();
        assert_eq!(left, 0, "no holding or activity names it any more");
    });
}

/// Migration 000033 on data written before it: one shared row per security
/// becomes one row per user whose holdings or activity use it (a user with
/// both, and with two accounts, gets one), every reference follows, a row
/// nobody uses goes, and undoing it folds them back.
#[test]
fn securities_shared_before_migration_33_become_each_users_own() {
    const PER_USER: &str = "20261220000033";
    on_every_backend(|db| {
        let (first, second) = {
            let conn = &mut *db.conn().unwrap();
            let (first, first_connection) =
                user_with_connection(conn, "first@example.com", Provider::new("sandbox"));
            let (second, second_connection) =
                user_with_connection(conn, "second@example.com", Provider::new("sandbox"));
            let held = || SnapshotHolding {
                security: apple(),
                quantity: dec("10"),
                price: dec("180.25"),
                value: dec("1802.50"),
                value_in_account_currency: None,
                cost_basis: None,
                currency: "USD".into(),
                raw: serde_json::json!({}),
            };
            // The first user holds and trades Apple in two accounts.
            let mut other = SnapshotAccount {
                holdings: Some(vec![held()]),
                ..brokerage(vec![buy("t2", 4, "1", "-180.25")])
            };
            other.provider_account_id = "B2".into();
            let accounts = vec![
                SnapshotAccount {
                    holdings: Some(vec![held()]),
                    ..brokerage(vec![buy("t1", 3, "10", "-1807.45"), fee("f1", 5)])
                },
                other,
            ];
            apply_snapshot(conn, first_connection, &snapshot(accounts), now()).unwrap();
            // The second only trades it.
            let activity = vec![buy("t1", 3, "10", "-1807.45")];
            apply_snapshot(
                conn,
                second_connection,
                &snapshot(vec![brokerage(activity)]),
                now(),
            )
            .unwrap();
            (first, second)
        };
        let query = |db: &crate::Database, sql: &str| -> Vec<String> {
            let conn = &mut *db.conn().unwrap();
            diesel::sql_query(sql)
                .load::<Key>(conn)
                .unwrap()
                .into_iter()
                .map(|k| k.key)
                .collect()
        };
        let keys = |db| {
            query(
                db,
                "SELECT identity_key AS key FROM securities ORDER BY identity_key",
            )
        };
        // Each holding and activity row with the key of the security it names.
        let references = |db| {
            query(
                db,
                "SELECT s.identity_key AS key FROM holdings h JOIN securities s ON s.id = h.security_id \
                 UNION ALL SELECT s.identity_key FROM investment_transactions t \
                 JOIN securities s ON s.id = t.security_id ORDER BY 1",
            )
        };
        let isin = "isin:US0378331005";
        let (mine, theirs) = (
            format!("user:{first}:{isin}"),
            format!("user:{second}:{isin}"),
        );
        assert_eq!(keys(db), [mine.clone(), theirs.clone()]);
        let per_user = [vec![mine.clone(); 4], vec![theirs.clone()]].concat();
        assert_eq!(references(db), per_user);

        db.revert_migrations_from(PER_USER).unwrap();
        assert_eq!(keys(db), [isin.to_owned()], "one shared row before 000033");
        assert_eq!(references(db), vec![isin.to_owned(); 5]);
        // A shared row nobody uses.
        diesel::sql_query(
            "INSERT INTO securities (identity_key, name, currency) VALUES ('isin:XS0000000009', 'Unused', 'EUR')",
        )
        .execute(&mut *db.conn().unwrap())
        .unwrap();

        db.migrate().unwrap();
        assert_eq!(keys(db), [mine, theirs], "the unused row is gone");
        assert_eq!(references(db), per_user);
        let conn = &mut *db.conn().unwrap();
        for user in [first, second] {
            for account in read::list_accounts(conn, &Viewer::whole_user(user)).unwrap() {
                let stored = list(conn, account.id, (None, None), None).unwrap();
                assert!(stored.iter().any(|t| t.security.as_ref() == Some(&apple())));
            }
        }
    });
}

#[derive(QueryableByName)]
struct Key {
    #[diesel(sql_type = diesel::sql_types::Text)]
    key: String,
}
