//! Enrichment as stored, on both backends: written with the transaction in
//! the same change, kept through a re-import that changes nothing, and
//! served by the change feed with the row.

use crate::changes::{self, FeedEntry, FeedPage};
use crate::read::{self, TransactionFilter, TransactionRecord};
use crate::testing::on_every_backend;
use crate::tests::{account, connect, now, snapshot, transaction, user_with_connection};
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

/// The feed past `after`: each entry's position, provider id, and whether
/// it was added.
fn feed_after(
    conn: &mut AnyConnection,
    viewer: &Viewer,
    after: FeedPosition,
) -> Vec<(FeedPosition, String, bool)> {
    let FeedPage::Changes { entries, .. } =
        changes::read_feed(conn, viewer, None, after, 100).unwrap()
    else {
        panic!("the position expired");
    };
    entries
        .into_iter()
        .map(|entry| match entry {
            FeedEntry::Current {
                record,
                added,
                position,
            } => (position, record.provider_transaction_id, added),
            FeedEntry::Removed { .. } => panic!("nothing was removed"),
        })
        .collect()
}

/// The transfer columns of every row of the user, by provider id.
fn transfers_of(conn: &mut AnyConnection, viewer: &Viewer) -> Vec<(String, Option<i64>, String)> {
    let mut rows: Vec<(String, Option<i64>, String)> = all(conn, viewer)
        .into_iter()
        .map(|r| {
            let shown = r.shown_subcategory().map(|s| s.id).unwrap_or_default();
            (
                r.provider_transaction_id,
                r.transfer_account_id,
                shown.to_owned(),
            )
        })
        .collect();
    rows.sort();
    rows
}

#[test]
fn a_transfer_between_two_connections_pairs_and_comes_apart_when_it_changes() {
    on_every_backend(|db: &Database| {
        let conn = &mut *db.conn().unwrap();
        let (user, checking) =
            user_with_connection(conn, "transfer@example.com", Provider::new("sandbox"));
        let savings = connect(conn, user, Provider::new("sandbox"));
        let viewer = Viewer::whole_user(user);
        let mut out = transaction("out", 3, "-250.00");
        out.description = Some("Overboeking".into());
        let lunch = transaction("lunch", 3, "-12.00");
        sync_apply::apply_snapshot(
            conn,
            checking,
            &snapshot(vec![account("checking", vec![out, lunch])]),
            now(),
        )
        .unwrap();
        let seen = feed_after(conn, &viewer, FeedPosition::default());
        let position = seen.last().unwrap().0;
        crate::webhooks::create_endpoint(
            conn,
            &crate::webhooks::NewEndpoint {
                owner: crate::webhooks::EndpointOwner::User(user),
                url: "https://hooks.example/in",
                event_types: &[tributary_domain::model::WebhookEventType::TransactionsUpdated],
                secret_sealed: "sealed",
                now: now(),
            },
        )
        .unwrap();
        // The other side arrives two days later, through another connection.
        let arrival = transaction("in", 5, "250.00");
        sync_apply::apply_snapshot(
            conn,
            savings,
            &snapshot(vec![account("savings", vec![arrival.clone()])]),
            now(),
        )
        .unwrap();
        let ids: std::collections::HashMap<String, i64> = read::list_accounts(conn, &viewer)
            .unwrap()
            .into_iter()
            .map(|a| (a.name.clone(), a.id.get()))
            .collect();
        let (checking_id, savings_id) = (ids["Account checking"], ids["Account savings"]);
        assert_eq!(
            transfers_of(conn, &viewer),
            vec![
                (
                    "in".into(),
                    Some(checking_id),
                    "transfer.own_accounts".into()
                ),
                ("lunch".into(), None, "other.uncategorized".into()),
                (
                    "out".into(),
                    Some(savings_id),
                    "transfer.own_accounts".into()
                ),
            ]
        );
        // The first side, written by the earlier change, is `modified` in
        // the feed by the second.
        let changes: Vec<(String, bool)> = feed_after(conn, &viewer, position)
            .into_iter()
            .map(|(_, id, added)| (id, added))
            .collect();
        assert_eq!(changes, vec![("out".into(), false), ("in".into(), true)]);
        // The event of that sync names both accounts: a reader of the
        // checking account only is told its row changed.
        let payload: String = {
            use crate::schema::webhook_events;
            use diesel::prelude::*;
            webhook_events::table
                .order(webhook_events::id.desc())
                .select(webhook_events::payload)
                .first(conn)
                .unwrap()
        };
        let payload: serde_json::Value = serde_json::from_str(&payload).unwrap();
        let mut named: Vec<i64> = payload["data"]["account_ids"]
            .as_array()
            .unwrap_or_else(|| panic!("{payload}"))
            .iter()
            .map(|id| id.as_str().unwrap().parse().unwrap())
            .collect();
        named.sort();
        let mut both = vec![checking_id, savings_id];
        both.sort();
        assert_eq!(named, both, "{payload}");

        // The arrival corrected to another amount: the pair comes apart.
        let mut corrected = arrival;
        corrected.amount = tributary_domain::money::parse_decimal("25.00").unwrap();
        sync_apply::apply_snapshot(
            conn,
            savings,
            &snapshot(vec![account("savings", vec![corrected])]),
            now(),
        )
        .unwrap();
        assert!(
            transfers_of(conn, &viewer)
                .iter()
                .all(|(_, account, shown)| account.is_none() && !shown.starts_with("transfer.")),
            "{:?}",
            transfers_of(conn, &viewer)
        );

        // Paired again with a pending arrival, which then is gone from the
        // bank's view: its partner is no transfer any more.
        let mut again = transaction("in2", 4, "250.00");
        again.is_pending = true;
        sync_apply::apply_snapshot(
            conn,
            savings,
            &snapshot(vec![account("savings", vec![again])]),
            now(),
        )
        .unwrap();
        assert_eq!(
            transfers_of(conn, &viewer)
                .iter()
                .filter(|(_, account, _)| account.is_some())
                .count(),
            2
        );
        sync_apply::apply_snapshot(
            conn,
            savings,
            &snapshot(vec![account("savings", Vec::new())]),
            now(),
        )
        .unwrap();
        assert!(
            transfers_of(conn, &viewer)
                .iter()
                .all(|(_, account, _)| account.is_none())
        );
    });
}
