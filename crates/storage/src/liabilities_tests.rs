//! A card's terms on both backends: stored as the provider states them,
//! kept when a later snapshot says nothing of them, replaced when it
//! states others, read with the account.

use crate::read::{self, AccountLiability};
use crate::sync_apply::apply_snapshot;
use crate::testing::on_every_backend;
use crate::tests::{account, date, now, snapshot, user_with_connection};
use chrono::Duration;
use tributary_domain::access::Viewer;
use tributary_domain::model::{AccountKind, Provider};
use tributary_domain::money::parse_decimal;
use tributary_domain::snapshot::{SnapshotAccount, SnapshotLiability};

fn card(liability: Option<SnapshotLiability>) -> SnapshotAccount {
    SnapshotAccount {
        kind: AccountKind::CreditCard,
        liability,
        ..account("C1", Vec::new())
    }
}

fn terms(limit: &str, minimum: &str, due: u32) -> SnapshotLiability {
    SnapshotLiability {
        credit_limit: Some(parse_decimal(limit).unwrap()),
        minimum_payment: Some(parse_decimal(minimum).unwrap()),
        next_payment_due: Some(date(due)),
        last_statement_balance: None,
    }
}

#[test]
fn a_cards_terms_are_kept_until_the_provider_states_others() {
    on_every_backend(|db| {
        let conn = &mut *db.conn().unwrap();
        let (user, connection) =
            user_with_connection(conn, "card@example.com", Provider::new("sandbox"));
        let stored = |conn: &mut crate::AnyConnection| {
            read::list_accounts(conn, &Viewer::whole_user(user)).unwrap()[0]
                .liability
                .clone()
        };
        apply_snapshot(conn, connection, &snapshot(vec![card(None)]), now()).unwrap();
        assert!(!stored(conn).is_stated(), "none stated, none stored");

        let first = terms("2000.00", "25.00", 25);
        apply_snapshot(
            conn,
            connection,
            &snapshot(vec![card(Some(first.clone()))]),
            now() + Duration::hours(1),
        )
        .unwrap();
        let expected = AccountLiability {
            credit_limit: first.credit_limit,
            minimum_payment: first.minimum_payment,
            next_payment_due: first.next_payment_due,
            last_statement_balance: None,
        };
        assert_eq!(stored(conn), expected);

        // A snapshot that says nothing of them keeps them.
        apply_snapshot(
            conn,
            connection,
            &snapshot(vec![card(None)]),
            now() + Duration::hours(2),
        )
        .unwrap();
        assert_eq!(stored(conn), expected);

        // Other terms replace them whole.
        let later = SnapshotLiability {
            last_statement_balance: Some(parse_decimal("412.50").unwrap()),
            ..terms("2500.00", "30.00", 28)
        };
        apply_snapshot(
            conn,
            connection,
            &snapshot(vec![card(Some(later.clone()))]),
            now() + Duration::hours(3),
        )
        .unwrap();
        let found = stored(conn);
        assert_eq!(found.credit_limit, later.credit_limit);
        assert_eq!(found.last_statement_balance.unwrap().to_string(), "412.50");
        assert_eq!(found.next_payment_due, Some(date(28)));
    });
}
