//! Writers of one process on one database, where one of them writes
//! without pause (`write_turns`): the other still gets to write within a
//! short busy timeout, on both backends.

use crate::db::{Database, PoolOptions};
use crate::testing::TestDatabase;
use crate::users;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

fn now() -> chrono::NaiveDateTime {
    chrono::Utc::now().naive_utc()
}

#[test]
fn a_writer_behind_one_that_never_pauses_still_gets_to_write() {
    for database in TestDatabase::all() {
        eprintln!("-- on {:?}", database.backend());
        // A busy timeout shorter than the busy writer's run of
        // transactions: SQLite's busy handler alone (it sleeps and tries
        // again, in no order) leaves the other writer out.
        let options = PoolOptions {
            sqlite_busy_timeout: Duration::from_millis(250),
            ..PoolOptions::default()
        };
        let db = &Database::connect(database.db().url(), &options).unwrap();
        let done = &AtomicBool::new(false);
        std::thread::scope(|scope| {
            // Begins its next transaction the moment the last one commits.
            let (wrote, first_batch) = std::sync::mpsc::channel();
            let busy = scope.spawn(move || {
                let mut conn = db.conn().unwrap();
                let mut batch = 0;
                while !done.load(Ordering::Relaxed) {
                    conn.atomically(|conn| {
                        for n in 0..200 {
                            users::create_personal_user(
                                conn,
                                &format!("busy-{batch}-{n}@example.com"),
                                now(),
                            )?;
                        }
                        Ok(())
                    })
                    .unwrap();
                    batch += 1;
                    let _ = wrote.send(());
                }
            });
            // The other writer starts once the busy one is under way.
            first_batch.recv().unwrap();
            let mut conn = db.conn().unwrap();
            let mut refused = Vec::new();
            for n in 0..10 {
                if let Err(err) = conn.atomically(|conn| {
                    users::create_personal_user(conn, &format!("unit-{n}@example.com"), now())
                }) {
                    refused.push(format!("unit of work {n}: {err}"));
                }
                if let Err(err) =
                    users::create_personal_user(&mut conn, &format!("lone-{n}@example.com"), now())
                {
                    refused.push(format!("lone write {n}: {err}"));
                }
            }
            done.store(true, Ordering::Relaxed);
            busy.join().unwrap();
            assert_eq!(refused, Vec::<String>::new(), "writes that waited in vain");
        });
    }
}
