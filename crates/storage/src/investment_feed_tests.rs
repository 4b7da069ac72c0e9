//! Investment activity's change feed on both backends: a reader that
//! applies every page holds exactly the stored activity (added once,
//! modified in place, removed with its connection), a re-sync adds nothing,
//! each change is announced with a cursor of this feed, and purged
//! tombstones expire older cursors.

use crate::changes::{FeedEntry, FeedPage};
use crate::investment_feed::{ActivityPage, read_feed};
use crate::investments_tests::{apple, brokerage, buy, fee};
use crate::sync_apply::apply_snapshot;
use crate::testing::on_every_backend;
use crate::tests::{account, now, snapshot, user_with_connection};
use crate::{AnyConnection, Database, investments, read};
use chrono::Duration;
use diesel::prelude::*;
use std::collections::BTreeMap;
use tributary_domain::access::Viewer;
use tributary_domain::changes::{Feed, FeedCursor, FeedPosition};
use tributary_domain::model::{Provider, WebhookEventType};
use tributary_domain::snapshot::{SnapshotAccount, SnapshotHolding};

/// A reader's copy: provider id and amount by row id.
#[derive(Default)]
struct Mirror {
    rows: BTreeMap<i64, (String, String)>,
    at: FeedPosition,
}

impl Mirror {
    /// Reads every page past where it stands, `count` at a time, and
    /// returns what it met: (provider id or removed id, added/modified/
    /// removed).
    fn catch_up(
        &mut self,
        conn: &mut AnyConnection,
        viewer: &Viewer,
        count: i64,
    ) -> Vec<(String, &'static str)> {
        let mut met = Vec::new();
        loop {
            let FeedPage::Changes { entries, has_more } =
                read_feed(conn, viewer, None, self.at, count).unwrap()
            else {
                panic!("the cursor expired");
            };
            for entry in entries {
                self.at = entry.position();
                match entry {
                    FeedEntry::Current { record, added, .. } => {
                        met.push((
                            record.provider_id.clone(),
                            if added { "added" } else { "modified" },
                        ));
                        self.rows
                            .insert(record.id, (record.provider_id, record.amount.to_string()));
                    }
                    FeedEntry::Removed { id, .. } => {
                        met.push((id.to_string(), "removed"));
                        self.rows.remove(&id);
                    }
                }
            }
            if !has_more {
                return met;
            }
        }
    }
}

/// What storage holds, as the mirror keeps it.
fn stored(conn: &mut AnyConnection, viewer: &Viewer) -> BTreeMap<i64, (String, String)> {
    let mut rows = BTreeMap::new();
    for account in read::list_accounts(conn, viewer).unwrap() {
        for view in investments::list(conn, account.id, (None, None), None).unwrap() {
            rows.insert(view.id, (view.provider_id, view.amount.to_string()));
        }
    }
    rows
}

/// Ten units of `security`, as a position.
fn held(security: tributary_domain::snapshot::Security) -> SnapshotHolding {
    SnapshotHolding {
        security,
        quantity: "10".parse().unwrap(),
        price: "180.25".parse().unwrap(),
        value: "1802.50".parse().unwrap(),
        value_in_account_currency: None,
        cost_basis: None,
        currency: "USD".into(),
        raw: serde_json::json!({}),
    }
}

/// The newest outbox event's type and data.
fn last_event(conn: &mut AnyConnection) -> serde_json::Value {
    use crate::schema::webhook_events;
    let payload: String = webhook_events::table
        .order(webhook_events::id.desc())
        .select(webhook_events::payload)
        .first(conn)
        .unwrap();
    serde_json::from_str(&payload).unwrap()
}

#[test]
fn a_reader_of_the_activity_feed_keeps_an_exact_copy() {
    on_every_backend(|db: &Database| {
        let conn = &mut *db.conn().unwrap();
        let (user, connection) =
            user_with_connection(conn, "feed-investor@example.com", Provider::new("sandbox"));
        let (stranger, theirs) =
            user_with_connection(conn, "someone-else@example.com", Provider::new("sandbox"));
        let viewer = Viewer::whole_user(user);
        crate::webhooks::create_endpoint(
            conn,
            &crate::webhooks::NewEndpoint {
                owner: crate::webhooks::EndpointOwner::User(user),
                url: "https://hooks.example/in",
                event_types: &[WebhookEventType::InvestmentTransactionsUpdated],
                secret_sealed: "sealed",
                now: now(),
            },
        )
        .unwrap();
        let first = vec![
            buy("t1", 3, "10", "-1807.45"),
            fee("f1", 5),
            buy("t2", 6, "1", "-185.20"),
        ];
        apply_snapshot(
            conn,
            connection,
            &snapshot(vec![brokerage(first.clone())]),
            now(),
        )
        .unwrap();
        apply_snapshot(
            conn,
            theirs,
            &snapshot(vec![brokerage(first.clone())]),
            now(),
        )
        .unwrap();

        // One row a page: every record once, as added.
        let mut mirror = Mirror::default();
        let met = mirror.catch_up(conn, &viewer, 1);
        assert_eq!(
            met,
            [
                ("t1".into(), "added"),
                ("f1".into(), "added"),
                ("t2".into(), "added")
            ]
        );
        assert_eq!(mirror.rows, stored(conn, &viewer));
        // The sync was announced with a cursor of this feed, from just
        // before it: it reads the same three.
        let event = last_event(conn);
        assert_eq!(event["type"], "investment_transactions.updated", "{event}");
        assert_eq!(
            (
                event["data"]["added"].clone(),
                event["data"]["modified"].clone()
            ),
            (3.into(), 0.into())
        );
        let cursor = FeedCursor::parse(event["data"]["cursor"].as_str().unwrap()).unwrap();
        assert_eq!(
            cursor.fingerprint,
            FeedCursor::fingerprint_of(Feed::InvestmentTransactions, &viewer, None)
        );
        let ActivityPage::Changes { entries, .. } =
            read_feed(conn, &viewer, None, cursor.position, 100).unwrap()
        else {
            panic!("expired");
        };
        assert_eq!(entries.len(), 3);

        // The same again: nothing past the reader.
        apply_snapshot(
            conn,
            connection,
            &snapshot(vec![brokerage(first.clone())]),
            now() + Duration::hours(1),
        )
        .unwrap();
        assert_eq!(mirror.catch_up(conn, &viewer, 100), []);

        // A corrected record is modified in place; a new one is added.
        let mut corrected = first.clone();
        corrected[0] = buy("t1", 3, "10", "-1807.50");
        corrected.push(fee("f2", 7));
        apply_snapshot(
            conn,
            connection,
            &snapshot(vec![brokerage(corrected)]),
            now() + Duration::hours(2),
        )
        .unwrap();
        assert_eq!(
            mirror.catch_up(conn, &viewer, 100),
            [("t1".into(), "modified"), ("f2".into(), "added")]
        );
        assert_eq!(mirror.rows, stored(conn, &viewer));
        assert_eq!(mirror.rows.len(), 4);

        // A reader starting now meets each addition once (and, two a
        // page, the correction too, past where t1 was added).
        let mut late = Mirror::default();
        let met = late.catch_up(conn, &viewer, 2);
        let added: Vec<&str> = met
            .iter()
            .filter(|(_, what)| *what == "added")
            .map(|(id, _)| id.as_str())
            .collect();
        assert_eq!(added, ["t1", "f1", "t2", "f2"], "{met:?}");
        assert_eq!(late.rows, mirror.rows);

        // The connection removed: every record removed, nothing else.
        let before_removal = mirror.at;
        assert!(
            crate::connections::delete_connection(
                conn,
                user,
                connection,
                now() + Duration::hours(3)
            )
            .unwrap()
        );
        let met = mirror.catch_up(conn, &viewer, 100);
        assert_eq!(met.len(), 4, "{met:?}");
        assert!(met.iter().all(|(_, what)| *what == "removed"), "{met:?}");
        assert!(mirror.rows.is_empty());

        // The other user's activity was never in this feed, and is still
        // theirs.
        let mut other = Mirror::default();
        assert_eq!(
            other
                .catch_up(conn, &Viewer::whole_user(stranger), 100)
                .len(),
            3
        );

        // Purged tombstones expire cursors from before them.
        let purged = crate::changes::purge_tombstones(conn, now() + Duration::days(1)).unwrap();
        assert_eq!(purged, 4);
        assert_eq!(
            read_feed(conn, &viewer, None, before_removal, 100).unwrap(),
            FeedPage::Expired
        );
        assert_eq!(
            read_feed(conn, &viewer, None, mirror.at, 100).unwrap(),
            FeedPage::Changes {
                entries: Vec::new(),
                has_more: false
            }
        );
    });
}

#[test]
fn a_security_renamed_elsewhere_comes_back_modified() {
    on_every_backend(|db: &Database| {
        let conn = &mut *db.conn().unwrap();
        let (user, connection) =
            user_with_connection(conn, "renamed@example.com", Provider::new("sandbox"));
        let viewer = Viewer::whole_user(user);
        apply_snapshot(
            conn,
            connection,
            &snapshot(vec![brokerage(vec![buy("t1", 3, "10", "-1807.45")])]),
            now(),
        )
        .unwrap();
        let mut mirror = Mirror::default();
        assert_eq!(mirror.catch_up(conn, &viewer, 100).len(), 1);

        // Another account of the same user holds the same ISIN under a new
        // name (a sync that reads only that account): the record of the
        // first account carries it, and is told.
        let mut renamed = apple();
        renamed.name = "Apple Incorporated".into();
        let other = SnapshotAccount {
            holdings: Some(vec![held(renamed)]),
            ..account("B2", Vec::new())
        };
        let done = apply_snapshot(
            conn,
            connection,
            &snapshot(vec![other]),
            now() + Duration::hours(1),
        )
        .unwrap();
        assert_eq!(done.investment_transactions_updated, 1);
        assert_eq!(
            mirror.catch_up(conn, &viewer, 100),
            [("t1".into(), "modified")]
        );
        let ActivityPage::Changes { entries, .. } =
            read_feed(conn, &viewer, None, FeedPosition::START, 100).unwrap()
        else {
            panic!("expired");
        };
        let FeedEntry::Current { record, .. } = &entries[0] else {
            panic!("{entries:?}");
        };
        assert_eq!(record.security.as_ref().unwrap().name, "Apple Incorporated");
        // The first account's source names it its own way again: that is
        // a change too; the same once more is none.
        for (hour, restated) in [(2, 1), (3, 0)] {
            let again = apply_snapshot(
                conn,
                connection,
                &snapshot(vec![brokerage(vec![buy("t1", 3, "10", "-1807.45")])]),
                now() + Duration::hours(hour),
            )
            .unwrap();
            assert_eq!(
                again.investment_transactions_updated, restated,
                "hour {hour}"
            );
        }
    });
}

#[test]
fn two_sources_of_one_sync_naming_a_security_apart_restate_nothing() {
    on_every_backend(|db: &Database| {
        let conn = &mut *db.conn().unwrap();
        let (_, connection) =
            user_with_connection(conn, "two-names@example.com", Provider::new("sandbox"));
        // The positions call it one thing, the activity another: the first
        // to state it names it for the sync, every sync.
        let mut other_name = apple();
        other_name.name = "APPLE INC COM".into();
        let account = SnapshotAccount {
            holdings: Some(vec![held(other_name)]),
            ..brokerage(vec![buy("t1", 3, "10", "-1807.45")])
        };
        for hour in 0..3 {
            let done = apply_snapshot(
                conn,
                connection,
                &snapshot(vec![account.clone()]),
                now() + Duration::hours(hour),
            )
            .unwrap();
            let expected = if hour == 0 { (1, 0) } else { (0, 0) };
            assert_eq!(
                (
                    done.investment_transactions_added,
                    done.investment_transactions_updated
                ),
                expected,
                "sync {hour}"
            );
        }
    });
}
