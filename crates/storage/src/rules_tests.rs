//! A person's rules, on both backends: applied by the workers to what is
//! stored (in batches, with progress; the feed says `modified` once per
//! row that changed, nothing for the rest) and by every later sync as it
//! stores rows; and the tables' own re-enrichment of old rows.

use crate::changes::{self, FeedEntry, FeedPage};
use crate::read::{self, TransactionFilter, TransactionRecord};
use crate::reenrich::{self, BATCH_ROWS};
use crate::rules::{self, RuleChangeError};
use crate::schema::{enrichment_tables, transactions};
use crate::testing::on_every_backend;
use crate::tests::{account, now, snapshot, transaction, user_with_connection};
use crate::{AnyConnection, Database, sync_apply};
use diesel::prelude::*;
use tributary_domain::access::Viewer;
use tributary_domain::changes::FeedPosition;
use tributary_domain::enrich::rules::{Actions, Conditions, Rule};
use tributary_domain::enrich::{Source, TABLES_VERSION};
use tributary_domain::ids::{ConnectionId, UserId};
use tributary_domain::model::Provider;
use tributary_domain::snapshot::SnapshotTransaction;
use tributary_domain::taxonomy::Subcategory;

fn card(id: &str, day: u32, text: &str) -> SnapshotTransaction {
    let mut t = transaction(id, day, "-4.50");
    t.merchant = None;
    t.description = Some(text.into());
    t
}

fn history() -> Vec<SnapshotTransaction> {
    vec![
        card("bb1", 1, "CARD 4411 SQ *BLUE BOTTLE 12/03 OAKLAND CA"),
        card("other", 2, "CARD 4411 TST* SOMEWHERE ELSE 12/04"),
        card("bb2", 3, "CARD 4411 SQ *BLUE BOTTLE 12/05 OAKLAND CA"),
    ]
}

fn sync(conn: &mut AnyConnection, connection: ConnectionId, records: Vec<SnapshotTransaction>) {
    sync_apply::apply_snapshot(
        conn,
        connection,
        &snapshot(vec![account("a", records)]),
        now(),
    )
    .unwrap();
}

/// Every row of the user, by provider id.
fn rows(conn: &mut AnyConnection, user: UserId) -> Vec<TransactionRecord> {
    let filter = TransactionFilter {
        include_pending: true,
        ..Default::default()
    };
    let mut rows: Vec<TransactionRecord> = read::list_accounts(conn, &Viewer::whole_user(user))
        .unwrap()
        .into_iter()
        .flat_map(|a| read::list_transactions(conn, a.id, &filter, None, None).unwrap())
        .collect();
    rows.sort_by(|a, b| a.provider_transaction_id.cmp(&b.provider_transaction_id));
    rows
}

/// The feed past `after`: (provider id, added) of each entry, and where
/// it ends.
fn feed(
    conn: &mut AnyConnection,
    user: UserId,
    after: FeedPosition,
) -> (Vec<(String, bool)>, FeedPosition) {
    let (mut seen, mut end) = (Vec::new(), after);
    loop {
        let FeedPage::Changes { entries, has_more } =
            changes::read_feed(conn, &Viewer::whole_user(user), None, end, 500).unwrap()
        else {
            panic!("the position expired");
        };
        end = entries.last().map_or(end, FeedEntry::position);
        seen.extend(entries.into_iter().map(|entry| match entry {
            FeedEntry::Current { record, added, .. } => (record.provider_transaction_id, added),
            FeedEntry::Removed { .. } => panic!("nothing was removed"),
        }));
        if !has_more {
            return (seen, end);
        }
    }
}

/// Advances runs until none is under way; how many batches it took.
fn run_all(conn: &mut AnyConnection) -> usize {
    let mut batches = 0;
    while reenrich::advance(conn, now()).unwrap().is_some() {
        batches += 1;
        assert!(batches < 1_000, "runs never finish");
    }
    batches
}

fn coffee_rule() -> Rule {
    Rule {
        when: Conditions {
            merchant: Some("blue bottle".into()),
            ..Conditions::default()
        },
        then: Actions {
            merchant: Some("Blue Bottle Coffee".into()),
            subcategory: Subcategory::from_id("groceries.specialty"),
        },
    }
}

#[test]
fn a_rule_applies_to_history_once_and_to_every_later_sync() {
    on_every_backend(|db: &Database| {
        let conn = &mut *db.conn().unwrap();
        let (user, connection) =
            user_with_connection(conn, "rules@example.com", Provider::new("sandbox"));
        sync(conn, connection, history());
        let (_, end) = feed(conn, user, FeedPosition::default());
        let before = rows(conn, user);

        let rule = rules::create(conn, user, &coffee_rule(), now()).unwrap();
        assert_eq!(rules::list(conn, user).unwrap(), vec![rule.clone()]);
        // Asked for, not yet done: the request itself changes no row.
        let progress = reenrich::progress(conn, user).unwrap().unwrap();
        assert_eq!((progress.checked, progress.total), (0, 3));
        assert_eq!(progress.finished_at, None);
        assert_eq!(rows(conn, user), before);

        assert_eq!(run_all(conn), 1);
        let progress = reenrich::progress(conn, user).unwrap().unwrap();
        assert_eq!((progress.checked, progress.changed), (3, 2));
        assert!(progress.finished_at.is_some());
        let after = rows(conn, user);
        for row in &after {
            let ruled = row.provider_transaction_id.starts_with("bb");
            assert_eq!(
                row.category_source.as_deref() == Some(Source::Rule.as_str()),
                ruled,
                "{row:?}"
            );
            if ruled {
                assert_eq!(row.clean_merchant.as_deref(), Some("Blue Bottle Coffee"));
                assert_eq!(row.subcategory.as_deref(), Some("groceries.specialty"));
            }
        }
        // The feed: the two rows the rule changed, modified, once each.
        let (seen, end) = feed(conn, user, end);
        assert_eq!(
            seen,
            vec![("bb1".to_owned(), false), ("bb2".to_owned(), false)]
        );

        // The same rule written again changes nothing: no run starts
        // over, and the feed says nothing.
        rules::replace(conn, user, rule.id, &coffee_rule(), now())
            .unwrap()
            .unwrap();
        assert_eq!(run_all(conn), 0);
        let (seen, end) = feed(conn, user, end);
        assert_eq!(seen, vec![]);

        // A later sync stores a new matching row with the rule applied.
        let mut more = history();
        more.push(card("bb3", 4, "CARD 4411 SQ *BLUE BOTTLE 12/06 OAKLAND CA"));
        sync(conn, connection, more);
        let new = rows(conn, user)
            .into_iter()
            .find(|r| r.provider_transaction_id == "bb3")
            .unwrap();
        assert_eq!(new.category_source.as_deref(), Some("rule"));
        assert_eq!(new.clean_merchant.as_deref(), Some("Blue Bottle Coffee"));
        let (seen, end) = feed(conn, user, end);
        assert_eq!(seen, vec![("bb3".to_owned(), true)]);

        // Deleting the rule gives the tables' answers back.
        assert!(rules::delete(conn, user, rule.id, now()).unwrap());
        assert!(!rules::delete(conn, user, rule.id, now()).unwrap());
        run_all(conn);
        let back = rows(conn, user);
        assert!(
            back.iter()
                .all(|r| r.category_source.as_deref() != Some("rule"))
        );
        let bb1 = |rows: &[TransactionRecord]| {
            rows.iter()
                .find(|r| r.provider_transaction_id == "bb1")
                .cloned()
        };
        assert_eq!(bb1(&back), bb1(&before));
        let (seen, _) = feed(conn, user, end);
        assert_eq!(seen.len(), 3, "{seen:?}");
        assert!(seen.iter().all(|(_, added)| !added));
    });
}

#[test]
fn a_long_history_is_enriched_again_in_batches_with_progress() {
    on_every_backend(|db: &Database| {
        let conn = &mut *db.conn().unwrap();
        let (user, connection) =
            user_with_connection(conn, "batches@example.com", Provider::new("sandbox"));
        let count = BATCH_ROWS as usize * 2 + 250;
        let records: Vec<SnapshotTransaction> = (0..count)
            .map(|i| {
                let text = if i % 10 == 0 {
                    "CARD SQ *BLUE BOTTLE OAKLAND"
                } else {
                    "CARD TST* ANOTHER PLACE"
                };
                card(&format!("t{i}"), 1 + (i % 28) as u32, text)
            })
            .collect();
        // Two accounts: the run walks one, then the other.
        let (first, second) = records.split_at(count / 3);
        sync_apply::apply_snapshot(
            conn,
            connection,
            &snapshot(vec![
                account("a", first.to_vec()),
                account("b", second.to_vec()),
            ]),
            now(),
        )
        .unwrap();
        let (_, end) = feed(conn, user, FeedPosition::default());
        rules::create(conn, user, &coffee_rule(), now()).unwrap();
        let mut checked = Vec::new();
        while let Some(step) = reenrich::advance(conn, now()).unwrap() {
            checked.push(step.checked);
            let progress = reenrich::progress(conn, user).unwrap().unwrap();
            assert_eq!(progress.checked, checked.iter().sum::<usize>() as i64);
            assert_eq!(progress.finished_at.is_some(), step.finished);
        }
        assert_eq!(checked.iter().sum::<usize>(), count);
        assert!(checked.iter().all(|&n| n as i64 <= BATCH_ROWS));
        assert!(checked.len() >= 3, "{checked:?}");
        let progress = reenrich::progress(conn, user).unwrap().unwrap();
        assert_eq!(
            (progress.total, progress.changed),
            (count as i64, count as i64 / 10)
        );
        let (seen, _) = feed(conn, user, end);
        assert_eq!(seen.len(), count / 10);
        let mut ids: Vec<&String> = seen.iter().map(|(id, _)| id).collect();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), count / 10, "a row reported twice");
    });
}

#[test]
fn rows_stored_before_enrichment_or_under_older_tables_are_enriched_again() {
    on_every_backend(|db: &Database| {
        let conn = &mut *db.conn().unwrap();
        let (user, connection) =
            user_with_connection(conn, "tables@example.com", Provider::new("sandbox"));
        sync(conn, connection, history());
        let enriched = rows(conn, user);
        // As a row stored before enrichment reads.
        diesel::update(transactions::table)
            .set((
                transactions::clean_merchant.eq(None::<String>),
                transactions::subcategory.eq(None::<String>),
                transactions::category_source.eq(None::<String>),
                transactions::enriched_version.eq(0),
            ))
            .execute(conn)
            .unwrap();
        // As a database migrated from before enrichment reads.
        diesel::update(enrichment_tables::table)
            .set(enrichment_tables::version.eq(0))
            .execute(conn)
            .unwrap();
        assert_eq!(reenrich::request_for_new_tables(conn, now()).unwrap(), 1);
        assert_eq!(reenrich::request_for_new_tables(conn, now()).unwrap(), 0);
        run_all(conn);
        let again = rows(conn, user);
        let shown = |rows: &[TransactionRecord]| -> Vec<(Option<String>, Option<String>)> {
            rows.iter()
                .map(|r| (r.clean_merchant.clone(), r.subcategory.clone()))
                .collect()
        };
        assert_eq!(shown(&again), shown(&enriched));
        let versions: Vec<i32> = transactions::table
            .select(transactions::enriched_version)
            .load(conn)
            .unwrap();
        assert!(versions.iter().all(|&v| v == TABLES_VERSION));
    });
}

#[test]
fn a_rule_names_only_the_persons_own_accounts() {
    on_every_backend(|db: &Database| {
        let conn = &mut *db.conn().unwrap();
        let (alice, connection) =
            user_with_connection(conn, "alice-rules@example.com", Provider::new("sandbox"));
        let (bob, bob_connection) =
            user_with_connection(conn, "bob-rules@example.com", Provider::new("sandbox"));
        sync(conn, connection, history());
        sync(conn, bob_connection, history());
        let bobs = rows(conn, bob)[0].account_id;
        let mut rule = coffee_rule();
        rule.when.account_id = Some(bobs.get());
        assert!(matches!(
            rules::create(conn, alice, &rule, now()),
            Err(RuleChangeError::UnknownAccount(_))
        ));
        assert_eq!(rules::list(conn, alice).unwrap(), vec![]);
        // Nor can one person's rule be changed or deleted by another.
        let kept = rules::create(conn, bob, &rule, now()).unwrap();
        assert!(!rules::delete(conn, alice, kept.id, now()).unwrap());
        rule.when.account_id = None;
        assert!(
            rules::replace(conn, alice, kept.id, &rule, now())
                .unwrap()
                .is_none()
        );
        assert_eq!(rules::list(conn, bob).unwrap(), vec![kept]);
    });
}

#[test]
fn a_rule_written_while_syncs_store_rows_reaches_every_row() {
    on_every_backend(|db: &Database| {
        let (user, connection) = {
            let conn = &mut *db.conn().unwrap();
            user_with_connection(conn, "race@example.com", Provider::new("sandbox"))
        };
        // Syncs keep adding matching rows while the rule is written: each
        // row is stored either after the rule (and the sync applies it) or
        // before the run that the rule asked for reads it.
        std::thread::scope(|scope| {
            let syncing = scope.spawn(|| {
                let conn = &mut *db.conn().unwrap();
                let mut records = Vec::new();
                for i in 0..20 {
                    records.push(card(&format!("bb{i}"), 1 + i % 28, "SQ *BLUE BOTTLE"));
                    sync(conn, connection, records.clone());
                }
            });
            let conn = &mut *db.conn().unwrap();
            rules::create(conn, user, &coffee_rule(), now()).unwrap();
            syncing.join().unwrap();
        });
        let conn = &mut *db.conn().unwrap();
        run_all(conn);
        let stored = rows(conn, user);
        assert_eq!(stored.len(), 20);
        for row in stored {
            assert_eq!(row.category_source.as_deref(), Some("rule"), "{row:?}");
        }
    });
}
