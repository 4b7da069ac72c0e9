//! The epochs caches trust (`freshness`): this process's writes move them
//! as they commit, other processes' within a second, on both backends.

use crate::api_keys::{self, NewApiKey};
use crate::db::{Database, PoolOptions};
use crate::freshness::Epoch;
use crate::testing::{TestDatabase, empty_account, insert_transactions, posted_row};
use crate::{AnyConnection, StorageError};
use chrono::NaiveDate;
use std::time::Duration;
use tributary_domain::ids::ApiKeyId;
use tributary_domain::money::Decimal;
use tributary_domain::snapshot::SnapshotTransaction;

fn now() -> chrono::NaiveDateTime {
    chrono::Utc::now().naive_utc()
}

fn epochs(db: &Database) -> (Epoch, Epoch) {
    (db.freshness().credentials(), db.freshness().data())
}

fn a_key(conn: &mut AnyConnection, user: tributary_domain::ids::UserId) -> ApiKeyId {
    api_keys::insert_api_key(
        conn,
        &NewApiKey {
            user_id: user,
            name: "cached",
            key_hash: &format!("{:064x}", rand::random::<u128>()),
            account_scope: None,
            now: now(),
        },
    )
    .unwrap()
    .id
}

fn a_row(id: &str) -> SnapshotTransaction {
    posted_row(
        id,
        NaiveDate::from_ymd_opt(2026, 11, 2).unwrap(),
        Decimal::new(-1250, 2),
        "EUR",
        "Corner Shop",
    )
}

use crate::testing::{until, watching};

#[test]
fn this_process_writes_move_the_epochs_as_they_commit() {
    for database in TestDatabase::all() {
        eprintln!("-- on {:?}", database.backend());
        let db = database.db();
        let (user, account) = empty_account(db, "fresh@example.com", now()).unwrap();
        let mut conn = db.conn().unwrap();
        let key = a_key(&mut conn, user);
        watching(db);

        // Reads move nothing.
        let before = epochs(db);
        crate::read::list_accounts(
            &mut conn,
            &tributary_domain::access::Viewer::whole_user(user),
        )
        .unwrap();
        assert_eq!(epochs(db), before);

        // Recording a key's use changes no credential, nor any data.
        api_keys::touch_last_used(&mut conn, key, now()).unwrap();
        assert_eq!(epochs(db), before, "a key's last use");

        // A revocation moves the credentials' epoch (and data's) once it
        // has committed; not while its transaction is open.
        let inside = conn
            .atomically(|conn| {
                api_keys::revoke(conn, key, now())?;
                Ok::<_, StorageError>(epochs(db))
            })
            .unwrap();
        assert_eq!(inside, before, "nothing moves before the commit");
        let revoked = epochs(db);
        assert_ne!(revoked.0, before.0, "credentials moved at the commit");

        // A rolled-back write moves nothing.
        let failed: Result<(), StorageError> = conn.atomically(|conn| {
            let another = a_key(conn, user);
            api_keys::revoke(conn, another, now())?;
            Err(StorageError::Conflict("rolled back".into()))
        });
        assert!(failed.is_err());
        assert_eq!(epochs(db), revoked, "a rollback");

        // A write outside a transaction to a table no credential depends
        // on moves data's epoch alone.
        let before = epochs(db);
        let connection = crate::connections::list_connections(&mut conn, Some(user)).unwrap()[0].id;
        crate::connections::set_next_sync(&mut conn, connection, now()).unwrap();
        let renamed = epochs(db);
        assert_eq!(renamed.0, before.0, "no credential changed");
        assert_ne!(renamed.1, before.1, "data moved");

        // A writing transaction counts as changing everything.
        drop(conn);
        insert_transactions(db, account, &[a_row("t-1")]).unwrap();
        let inserted = epochs(db);
        assert_ne!(inserted.0, renamed.0);
        assert_ne!(inserted.1, renamed.1);

        // A read snapshot changes nothing.
        let mut conn = db.conn().unwrap();
        conn.read_snapshot(|conn| {
            crate::read::list_accounts(conn, &tributary_domain::access::Viewer::whole_user(user))
        })
        .unwrap();
        assert_eq!(epochs(db), inserted, "a read snapshot");
    }
}

#[test]
fn another_process_writes_are_seen_within_a_second() {
    for database in TestDatabase::all() {
        eprintln!("-- on {:?}", database.backend());
        let db = database.db();
        let (user, account) = empty_account(db, "other@example.com", now()).unwrap();
        let key = a_key(&mut db.conn().unwrap(), user);
        watching(db);

        // The other process: a pool of its own on the same database, so
        // nothing it does reaches this one's epochs but through the
        // database.
        let other = Database::connect(db.url(), &PoolOptions::default()).unwrap();
        let before = epochs(db);
        api_keys::revoke(&mut other.conn().unwrap(), key, now()).unwrap();
        let took = until(|| epochs(db).0 != before.0);
        assert!(
            took < Duration::from_secs(1),
            "credentials seen after {took:?}"
        );

        let before = epochs(db);
        insert_transactions(&other, account, &[a_row("t-2")]).unwrap();
        let took = until(|| epochs(db).1 != before.1);
        assert!(took < Duration::from_secs(1), "data seen after {took:?}");
    }
}
