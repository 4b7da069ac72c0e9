//! Statement import into real databases (SQLite file and PostgreSQL).

// Test code: a failed unwrap is a failed test, with its message.
#![allow(clippy::unwrap_used)]

use chrono::{TimeZone, Utc};
use tributary_domain::access::Viewer;
use tributary_domain::model::Provider;
use tributary_providers::import::{self, Format};
use tributary_storage::read::{self, TransactionFilter};
use tributary_storage::testing::{dump_rows, on_every_backend, testdata_bytes};
use tributary_storage::{Database, users};

fn now() -> chrono::NaiveDateTime {
    Utc.with_ymd_and_hms(2026, 11, 21, 12, 0, 0)
        .unwrap()
        .naive_utc()
}

fn import_file(db: &Database, user: i64, file: &str) -> Result<import::ImportSummary, String> {
    let statements = import::parse(&testdata_bytes(file), None)?;
    import::store(&mut db.conn().unwrap(), user, statements, now()).map_err(|e| e.to_string())
}

/// (accounts, transactions, balance snapshots) of the user.
fn counts(db: &Database, user: i64) -> (usize, i64, usize) {
    let conn = &mut *db.conn().unwrap();
    let accounts = read::list_accounts(conn, &Viewer::whole_user(user)).unwrap();
    let all = TransactionFilter {
        include_pending: true,
        ..Default::default()
    };
    let transactions = accounts
        .iter()
        .map(|a| read::count_transactions(conn, a.id, &all).unwrap())
        .sum();
    let balances = accounts
        .iter()
        .map(|a| read::balance_history(conn, a.id).unwrap().len())
        .sum();
    (accounts.len(), transactions, balances)
}

#[test]
fn importing_twice_changes_nothing_and_statements_become_balance_history() {
    on_every_backend(|db| {
        let user = users::create_personal_user(&mut db.conn().unwrap(), "files@example.com", now())
            .unwrap()
            .id;
        let files = [
            "genkgo-camt/data/camt053.v2.multi.statement.xml",
            "mt940-wolph/jejik/abnamro.sta",
            "actualbudget/camt/camt.latin1.xml",
            "ofxparse/fixtures/checking.ofx",
            "ofxparse/fixtures/investment_401k.ofx",
        ];
        for file in files {
            let summary = import_file(db, user, file).unwrap();
            assert!(summary.added > 0, "{file}");
        }
        let after_first = counts(db, user);
        for file in files {
            let summary = import_file(db, user, file).unwrap();
            assert_eq!((summary.added, summary.updated), (0, 0), "{file}");
        }
        let after_second = counts(db, user);
        assert_eq!(after_first.0, after_second.0);
        assert_eq!(after_first.1, after_second.1, "no transaction twice");

        let conn = &mut *db.conn().unwrap();
        let accounts = read::list_accounts(conn, &Viewer::whole_user(user)).unwrap();
        assert!(accounts.iter().all(|a| a.provider == Provider::File));
        let camt = accounts
            .iter()
            .find(|a| a.mask.as_deref() == Some("6890"))
            .unwrap();
        let history = read::balance_history(conn, camt.id).unwrap();
        // One row per date, however often the file was imported: its two
        // statements both close on 2014-12-31, and the later one's closing
        // balance is the day's.
        let closing: Vec<String> = history
            .iter()
            .map(|b| format!("{} {}", b.as_of.date(), b.amount))
            .collect();
        assert_eq!(closing, ["2014-12-31 20.00"]);

        // The OFX investment statement's positions are the account's holdings.
        let brokerage = accounts
            .iter()
            .find(|a| a.kind == tributary_domain::model::AccountKind::Brokerage)
            .unwrap_or_else(|| panic!("{accounts:?}"));
        let holdings = read::list_holdings(conn, brokerage.id).unwrap();
        assert!(holdings.len() >= 2);
        assert!(
            holdings
                .iter()
                .any(|h| h.security.ticker.as_deref() == Some("FOO"))
        );
    });
}

#[test]
fn a_file_that_does_not_read_changes_nothing() {
    on_every_backend(|db| {
        let user =
            users::create_personal_user(&mut db.conn().unwrap(), "broken@example.com", now())
                .unwrap()
                .id;
        import_file(db, user, "genkgo-camt/data/camt053.v2.minimal.xml").unwrap();
        let before = dump_rows(db);
        let good = testdata_bytes("genkgo-camt/data/camt053.v2.multi.statement.xml");
        for broken in [
            &good[..good.len() / 2],
            b"\x00\x01\x02 random bytes",
            "é".repeat(10).as_bytes(),
        ] {
            assert!(import::parse(broken, Some(Format::Camt)).is_err());
        }
        let err = import::parse(
            &testdata_bytes("genkgo-camt/data/camt053.v2.wrong.xml"),
            None,
        )
        .unwrap_err();
        assert!(err.contains("no statement"), "{err}");
        let truncated = import::parse(&good[..good.len() / 2], None).unwrap_err();
        assert!(
            truncated.contains("byte"),
            "the error says where: {truncated}"
        );
        assert_eq!(dump_rows(db), before, "nothing was written");
    });
}

#[test]
fn every_readable_file_imports_and_a_second_import_changes_no_count() {
    on_every_backend(|db| {
        let user =
            users::create_personal_user(&mut db.conn().unwrap(), "everything@example.com", now())
                .unwrap()
                .id;
        let mut imported = 0;
        let files =
            tributary_storage::testing::testdata_files("", &["xml", "sta", "txt", "ofx", "qfx"]);
        for file in &files {
            // Files meant to be broken fail to read (tested per format).
            if let Ok(statements) = import::parse(&testdata_bytes(file), None) {
                import::store(&mut db.conn().unwrap(), user, statements, now())
                    .unwrap_or_else(|e| panic!("{file}: {e}"));
                imported += 1;
            }
        }
        assert!(
            imported >= 100,
            "{imported} of {} files imported",
            files.len()
        );
        let first = counts(db, user);
        for file in &files {
            if let Ok(statements) = import::parse(&testdata_bytes(file), None) {
                let summary =
                    import::store(&mut db.conn().unwrap(), user, statements, now()).unwrap();
                // Several fixtures share an account and FITIDs with other
                // memos, so a second pass may rewrite text; it adds nothing.
                assert_eq!(summary.added, 0, "{file}");
            }
        }
        let second = counts(db, user);
        assert_eq!((first.0, first.1), (second.0, second.1));
    });
}

#[test]
fn syncing_everything_leaves_the_statement_connection_alone() {
    use tributary_domain::model::SyncJobKind;
    use tributary_providers::sync::{SyncEngine, SyncError};
    on_every_backend(|db| {
        let user =
            users::create_personal_user(&mut db.conn().unwrap(), "nosync@example.com", now())
                .unwrap()
                .id;
        import_file(db, user, "mt940-wolph/jejik/abnamro.sta").unwrap();
        let clock = std::sync::Arc::new(tributary_domain::clock::ManualClock::new(
            Utc.with_ymd_and_hms(2026, 11, 21, 13, 0, 0).unwrap(),
        ));
        let engine = SyncEngine::new(db.clone(), tributary_providers::Registry::default(), clock);
        assert!(engine.connections_to_sync(Some(user)).unwrap().is_empty());
        assert_eq!(engine.schedule_due().unwrap(), 0, "never scheduled");
        let connection =
            tributary_storage::connections::list_connections(&mut db.conn().unwrap(), Some(user))
                .unwrap()[0]
                .id;
        let err = engine
            .request_sync(connection, SyncJobKind::OnDemand)
            .unwrap_err();
        assert!(matches!(err, SyncError::NotSynced(_)), "{err}");
        let record =
            tributary_storage::connections::get_connection(&mut db.conn().unwrap(), connection)
                .unwrap();
        assert_eq!(
            record.status,
            tributary_domain::model::ConnectionStatus::Active
        );
    });
}
