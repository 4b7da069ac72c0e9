//! Enrichment as stored, on both backends: written with the transaction in
//! the same change, kept through a re-import that changes nothing, and
//! served by the change feed with the row.

use crate::changes::{self, FeedEntry, FeedPage};
use crate::read::{self, TransactionFilter, TransactionRecord};
use crate::testing::on_every_backend;
use crate::tests::{account, now, snapshot, transaction, user_with_connection};
use crate::{AnyConnection, Database, sync_apply};
use tributary_domain::access::Viewer;
use tributary_domain::changes::FeedPosition;
use tributary_domain::enrich::hints::{CategoryHint, Hints};
use tributary_domain::ids::ConnectionId;
use tributary_domain::model::Provider;
use tributary_domain::snapshot::SnapshotTransaction;

fn records() -> Vec<SnapshotTransaction> {
    let mut card = transaction("card", 1, "-4.50");
    card.merchant = None;
    card.description = Some("CARD 4411 SQ *BLUE BOTTLE 12/03 OAKLAND CA".into());
    let mut coded = transaction("coded", 2, "-30.00");
    coded.merchant = Some("TRATTORIA DA MARIO SRL".into());
    coded.hints = Hints(vec![CategoryHint::Mcc(5812)]);
    let mut textless = transaction("textless", 3, "-1.00");
    textless.merchant = None;
    vec![card, coded, textless]
}

fn all(conn: &mut AnyConnection, viewer: &Viewer) -> Vec<TransactionRecord> {
    let filter = TransactionFilter {
        include_pending: true,
        ..Default::default()
    };
    let mut rows: Vec<TransactionRecord> = read::list_accounts(conn, viewer)
        .unwrap()
        .into_iter()
        .flat_map(|a| read::list_transactions(conn, a.id, &filter, None, None).unwrap())
        .collect();
    rows.sort_by_key(|r| r.date);
    rows
}

fn sync(conn: &mut AnyConnection, connection: ConnectionId) {
    sync_apply::apply_snapshot(
        conn,
        connection,
        &snapshot(vec![account("a", records())]),
        now(),
    )
    .unwrap();
}

#[test]
fn enrichment_is_stored_with_the_transaction_and_a_reimport_changes_nothing() {
    on_every_backend(|db: &Database| {
        let conn = &mut *db.conn().unwrap();
        let (user, connection) =
            user_with_connection(conn, "enrich@example.com", Provider::new("sandbox"));
        let viewer = Viewer::whole_user(user);
        sync(conn, connection);
        let rows = all(conn, &viewer);
        let seen: Vec<(Option<&str>, Option<&str>)> = rows
            .iter()
            .map(|r| (r.clean_merchant.as_deref(), r.subcategory.as_deref()))
            .collect();
        assert_eq!(
            seen,
            vec![
                (Some("Blue Bottle"), Some("food_and_drink.cafes")),
                (
                    Some("Trattoria da Mario"),
                    Some("food_and_drink.restaurants")
                ),
                (None, Some("other.uncategorized")),
            ]
        );
        // The raw text stays as the bank sent it.
        assert_eq!(rows[1].merchant.as_deref(), Some("TRATTORIA DA MARIO SRL"));

        // The feed carries the enriched rows, each added once.
        let FeedPage::Changes { entries, .. } =
            changes::read_feed(conn, &viewer, None, FeedPosition::default(), 100).unwrap()
        else {
            panic!("the feed's start expired");
        };
        let fed: Vec<Option<String>> = entries
            .into_iter()
            .map(|entry| match entry {
                FeedEntry::Current { record, added, .. } => {
                    assert!(added);
                    record.subcategory
                }
                FeedEntry::Removed { .. } => panic!("nothing was removed"),
            })
            .collect();
        assert_eq!(fed.len(), 3);
        assert!(fed.iter().all(Option::is_some));

        // Syncing the same records again changes nothing.
        let again = sync_apply::apply_snapshot(
            conn,
            connection,
            &snapshot(vec![account("a", records())]),
            now(),
        )
        .unwrap();
        assert_eq!(
            (again.transactions_added, again.transactions_updated),
            (0, 0)
        );
        assert_eq!(all(conn, &viewer), rows);
    });
}
