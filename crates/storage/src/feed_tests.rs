//! The change feed on both backends: what each kind of change reads as, a
//! mirror kept through the feed alone while syncs of one user's two
//! connections run at once, and purged tombstones expiring old positions.

use crate::changes::{self, FeedEntry, FeedPage};
use crate::read::{self, TransactionFilter, TransactionRecord};
use crate::testing::on_every_backend;
use crate::tests::{account, connect, now, snapshot, transaction, user_with_connection};
use crate::{AnyConnection, Database, sync_apply};
use std::collections::BTreeMap;
use tributary_domain::access::Viewer;
use tributary_domain::changes::FeedPosition;
use tributary_domain::ids::{ConnectionId, TransactionId};
use tributary_domain::model::Provider;
use tributary_domain::snapshot::SnapshotTransaction;

/// A client's copy of a user's transactions, kept through the feed alone.
#[derive(Debug, Default)]
struct Mirror {
    at: FeedPosition,
    rows: BTreeMap<TransactionId, TransactionRecord>,
}

/// What one read of the feed said, counted.
#[derive(Debug, Default, PartialEq)]
struct Read {
    added: Vec<TransactionId>,
    modified: Vec<TransactionId>,
    removed: Vec<TransactionId>,
}

impl Mirror {
    /// Reads the feed `count` at a time until it has nothing more.
    fn catch_up(&mut self, conn: &mut AnyConnection, viewer: &Viewer, count: i64) -> Read {
        let mut read = Read::default();
        loop {
            let FeedPage::Changes { entries, has_more } =
                changes::read_feed(conn, viewer, None, self.at, count).unwrap()
            else {
                panic!("the position expired");
            };
            assert!(entries.len() <= count as usize);
            for entry in entries {
                assert!(
                    self.at < entry.position(),
                    "every entry lies past the position"
                );
                self.at = entry.position();
                match entry {
                    FeedEntry::Current { record, added, .. } => {
                        let known = self.rows.insert(record.id, (*record).clone()).is_some();
                        assert_eq!(added, !known, "added exactly when new to the reader");
                        if added {
                            read.added.push(record.id);
                        } else {
                            read.modified.push(record.id);
                        }
                    }
                    FeedEntry::Removed { id, .. } => {
                        self.rows.remove(&id);
                        read.removed.push(id);
                    }
                }
            }
            if !has_more {
                return read;
            }
        }
    }
}

/// Every transaction the viewer may see, pending included, by id.
fn stored(conn: &mut AnyConnection, viewer: &Viewer) -> BTreeMap<TransactionId, TransactionRecord> {
    let all = TransactionFilter {
        include_pending: true,
        ..Default::default()
    };
    read::list_accounts(conn, viewer)
        .unwrap()
        .into_iter()
        .flat_map(|a| read::list_transactions(conn, a.id, &all, None, None).unwrap())
        .map(|t| (t.id, t))
        .collect()
}

fn pending(id: &str, day: u32, amount: &str) -> SnapshotTransaction {
    let mut t = transaction(id, day, amount);
    t.is_pending = true;
    t
}

fn sync(conn: &mut AnyConnection, connection: ConnectionId, txs: Vec<SnapshotTransaction>) {
    sync_apply::apply_snapshot(conn, connection, &snapshot(vec![account("a", txs)]), now())
        .unwrap();
}

#[test]
fn each_kind_of_change_reads_as_the_client_needs_it() {
    on_every_backend(|db: &Database| {
        let conn = &mut *db.conn().unwrap();
        let (user, connection) =
            user_with_connection(conn, "feed@example.com", Provider::new("sandbox"));
        let viewer = Viewer::whole_user(user);
        let mut mirror = Mirror::default();
        assert_eq!(mirror.catch_up(conn, &viewer, 100), Read::default());

        sync(
            conn,
            connection,
            vec![
                transaction("t1", 1, "-10.00"),
                transaction("t2", 2, "-20.00"),
                pending("p1", 3, "-30.00"),
                pending("p2", 3, "-5.00"),
            ],
        );
        let first = mirror.catch_up(conn, &viewer, 100);
        assert_eq!((first.added.len(), first.modified.len()), (4, 0));
        let id_of = |mirror: &Mirror, provider_id: &str| {
            *mirror
                .rows
                .iter()
                .find(|(_, r)| r.provider_transaction_id == provider_id)
                .unwrap()
                .0
        };
        let (p1, p2, t2) = (
            id_of(&mirror, "p1"),
            id_of(&mirror, "p2"),
            id_of(&mirror, "t2"),
        );

        // The same snapshot again changes nothing.
        sync(
            conn,
            connection,
            vec![
                transaction("t1", 1, "-10.00"),
                transaction("t2", 2, "-20.00"),
                pending("p1", 3, "-30.00"),
                pending("p2", 3, "-5.00"),
            ],
        );
        assert_eq!(mirror.catch_up(conn, &viewer, 100), Read::default());

        // p1 posts (same id, modified), p2 vanishes (removed), t2 is
        // corrected (modified), t3 is new (added).
        let mut posted = transaction("t4", 4, "-31.50");
        posted.pending_provider_id = Some("p1".into());
        sync(
            conn,
            connection,
            vec![
                transaction("t1", 1, "-10.00"),
                transaction("t2", 2, "-21.00"),
                posted,
                transaction("t3", 4, "-1.00"),
            ],
        );
        let second = mirror.catch_up(conn, &viewer, 1);
        let mut modified = second.modified.clone();
        modified.sort();
        let mut expected = vec![p1, t2];
        expected.sort();
        assert_eq!(modified, expected, "{second:?}");
        assert_eq!(second.removed, [p2]);
        assert_eq!(second.added.len(), 1);
        assert!(!mirror.rows[&p1].is_pending, "posted, same id");
        assert_eq!(mirror.rows, stored(conn, &viewer));

        // A key scoped to another account sees none of this.
        let other = connect(conn, user, Provider::new("sandbox"));
        sync_apply::apply_snapshot(
            conn,
            other,
            &snapshot(vec![account("b", vec![transaction("b1", 5, "-2.00")])]),
            now(),
        )
        .unwrap();
        let b = read::list_accounts(conn, &viewer)
            .unwrap()
            .into_iter()
            .find(|a| a.connection_id == other)
            .unwrap()
            .id;
        let scoped = Viewer {
            user_id: user,
            account_scope: Some(vec![b]),
        };
        let mut scoped_mirror = Mirror::default();
        scoped_mirror.catch_up(conn, &scoped, 100);
        assert_eq!(scoped_mirror.rows, stored(conn, &scoped));
        assert_eq!(scoped_mirror.rows.len(), 1);

        // Removing a connection removes its transactions from the feed.
        assert!(crate::connections::delete_connection(conn, user, connection, now()).unwrap());
        let gone = mirror.catch_up(conn, &viewer, 2);
        assert_eq!(gone.removed.len(), 4, "{gone:?}");
        assert_eq!(mirror.rows, stored(conn, &viewer));
        // The scoped reader's account was not touched.
        assert_eq!(scoped_mirror.catch_up(conn, &scoped, 100), Read::default());
    });
}

#[test]
fn a_mirror_kept_through_the_feed_equals_the_data_while_two_connections_sync_at_once() {
    on_every_backend(|db: &Database| {
        let (user, first, second) = {
            let conn = &mut *db.conn().unwrap();
            let (user, first) =
                user_with_connection(conn, "race@example.com", Provider::new("sandbox"));
            (user, first, connect(conn, user, Provider::new("sandbox")))
        };
        let viewer = Viewer::whole_user(user);
        const ROUNDS: u32 = 12;
        // Each round of a connection: a pending that posts, a row that
        // vanishes, a corrected amount, new rows.
        let round = |name: &str, n: u32| -> Vec<SnapshotTransaction> {
            let mut txs: Vec<SnapshotTransaction> = (0..=n)
                .map(|k| transaction(&format!("{name}-t{k}"), 1 + k % 27, &format!("-{k}.00")))
                .collect();
            txs[0].amount = tributary_domain::money::parse_decimal(&format!("-{n}.50")).unwrap();
            txs.push(pending(&format!("{name}-p{n}"), 28, "-7.00"));
            if n > 0 {
                let mut posted = transaction(&format!("{name}-posted{n}"), 28, "-7.25");
                posted.pending_provider_id = Some(format!("{name}-p{}", n - 1));
                txs.push(posted);
            }
            if n % 3 == 1 {
                txs.retain(|t| t.provider_id != format!("{name}-t1"));
            }
            txs
        };
        let writer = |connection: ConnectionId, name: &'static str| {
            let db = db.clone();
            move || {
                for n in 0..ROUNDS {
                    let conn = &mut *db.conn().unwrap();
                    sync(conn, connection, round(name, n));
                }
            }
        };
        let done = std::sync::atomic::AtomicBool::new(false);
        let mut mirror = Mirror::default();
        std::thread::scope(|scope| {
            let a = scope.spawn(writer(first, "a"));
            let b = scope.spawn(writer(second, "b"));
            let reader = scope.spawn(|| {
                let conn = &mut *db.conn().unwrap();
                let mut reads = 0;
                while !done.load(std::sync::atomic::Ordering::SeqCst) {
                    mirror.catch_up(conn, &viewer, 3);
                    reads += 1;
                }
                reads
            });
            a.join().unwrap();
            b.join().unwrap();
            done.store(true, std::sync::atomic::Ordering::SeqCst);
            assert!(reader.join().unwrap() > 0);
        });
        let conn = &mut *db.conn().unwrap();
        mirror.catch_up(conn, &viewer, 3);
        let expected = stored(conn, &viewer);
        assert!(expected.len() > 2 * ROUNDS as usize);
        assert_eq!(mirror.rows, expected, "nothing missed, nothing twice");
    });
}

#[test]
fn purged_tombstones_expire_older_positions_but_not_the_start() {
    on_every_backend(|db: &Database| {
        let conn = &mut *db.conn().unwrap();
        let (user, connection) =
            user_with_connection(conn, "purge@example.com", Provider::new("sandbox"));
        let viewer = Viewer::whole_user(user);
        sync(conn, connection, vec![pending("p1", 1, "-1.00")]);
        let mut mirror = Mirror::default();
        mirror.catch_up(conn, &viewer, 100);
        let old_position = mirror.at;
        sync(conn, connection, vec![transaction("t1", 2, "-2.00")]);
        mirror.catch_up(conn, &viewer, 100);
        assert!(
            mirror
                .rows
                .values()
                .all(|r| r.provider_transaction_id == "t1")
        );

        // Not yet old enough: kept.
        assert_eq!(
            changes::purge_tombstones(conn, now() - chrono::Duration::days(1)).unwrap(),
            0
        );
        assert!(matches!(
            changes::read_feed(conn, &viewer, None, old_position, 100).unwrap(),
            FeedPage::Changes { .. }
        ));
        assert_eq!(
            changes::purge_tombstones(conn, now() + chrono::Duration::days(1)).unwrap(),
            1
        );
        assert_eq!(
            changes::read_feed(conn, &viewer, None, old_position, 100).unwrap(),
            FeedPage::Expired
        );
        // The reader who read past the removal, and a new one, go on.
        assert!(matches!(
            changes::read_feed(conn, &viewer, None, mirror.at, 100).unwrap(),
            FeedPage::Changes { .. }
        ));
        let mut fresh = Mirror::default();
        fresh.catch_up(conn, &viewer, 100);
        assert_eq!(fresh.rows, stored(conn, &viewer));
    });
}
