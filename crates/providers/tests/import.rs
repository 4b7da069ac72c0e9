//! Statement import into real databases (SQLite file and PostgreSQL).

// Test code: a failed unwrap is a failed test, with its message.
#![allow(clippy::unwrap_used)]

use chrono::{TimeZone, Utc};
use tributary_domain::access::Viewer;
use tributary_domain::ids::UserId;
use tributary_domain::model::Provider;
use tributary_domain::money::Decimal;
use tributary_providers::import::{self, Format, samples};
use tributary_storage::read::{self, TransactionFilter};
use tributary_storage::testing::{dump_rows, on_every_backend, testdata_bytes};
use tributary_storage::{Database, users};

fn now() -> chrono::NaiveDateTime {
    Utc.with_ymd_and_hms(2026, 11, 21, 12, 0, 0)
        .unwrap()
        .naive_utc()
}

fn import_file(db: &Database, user: UserId, file: &str) -> Result<import::ImportSummary, String> {
    let statements = import::parse(&testdata_bytes(file), None).map_err(|e| e.to_string())?;
    import::store(&mut db.conn().unwrap(), user, statements, now()).map_err(|e| e.to_string())
}

/// (accounts, transactions, balance snapshots) of the user.
fn counts(db: &Database, user: UserId) -> (usize, i64, usize) {
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
        assert!(accounts.iter().all(|a| a.provider == Provider::FILE));
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
        assert!(
            matches!(&err, import::ImportError::Unreadable { format: Format::Camt, reason } if reason.to_string().contains("no statement")),
            "{err}"
        );
        let truncated = import::parse(&good[..good.len() / 2], None).unwrap_err();
        assert!(
            truncated.to_string().contains("byte"),
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

/// Every stored transaction of the user: (date, amount, description).
fn stored(db: &Database, user: UserId) -> Vec<(String, String, String)> {
    tributary_storage::testing::transaction_rows(db, user)
}

#[test]
fn a_daily_camt_series_imports_whole_in_any_order_with_twins_kept_apart() {
    // Day 1 and day 2 share an AcctSvcrRef-less twin pair (same amount,
    // same text) and a look-alike across days; day 3 repeats a reference.
    let series = [
        samples::daily_camt053(
            1,
            &[
                ("", "-12.50"),
                ("", "-12.50"),
                ("<AcctSvcrRef>R1</AcctSvcrRef>", "40.00"),
            ],
        ),
        samples::daily_camt053(
            2,
            &[
                ("", "-12.50"),
                ("<NtryRef>NONREF</NtryRef>", "-3.00"),
                ("<NtryRef>NONREF</NtryRef>", "-4.00"),
            ],
        ),
        samples::daily_camt053(
            3,
            &[
                ("<AcctSvcrRef>R1</AcctSvcrRef>", "40.00"),
                ("<AcctSvcrRef>R2</AcctSvcrRef>", "-1.00"),
            ],
        ),
    ];
    let expected_rows = 8;
    on_every_backend(|db| {
        let mut results = Vec::new();
        for (n, order) in [[0, 1, 2], [2, 0, 1], [1, 2, 0]].iter().enumerate() {
            let user = users::create_personal_user(
                &mut db.conn().unwrap(),
                &format!("series{n}@example.com"),
                now(),
            )
            .unwrap()
            .id;
            for index in order {
                let statements = import::parse(&series[*index], None).unwrap();
                import::store(&mut db.conn().unwrap(), user, statements, now()).unwrap();
            }
            results.push(stored(db, user));
        }
        // All files at once, then everything again: nothing changes.
        let user =
            users::create_personal_user(&mut db.conn().unwrap(), "series-all@example.com", now())
                .unwrap()
                .id;
        let all: Vec<import::Statement> = series
            .iter()
            .flat_map(|f| import::parse(f, None).unwrap())
            .collect();
        import::store(&mut db.conn().unwrap(), user, all.clone(), now()).unwrap();
        let again = import::store(&mut db.conn().unwrap(), user, all, now()).unwrap();
        assert_eq!((again.added, again.updated), (0, 0));
        results.push(stored(db, user));

        assert_eq!(results[0].len(), expected_rows, "{:#?}", results[0]);
        assert!(results.iter().all(|r| *r == results[0]), "{results:#?}");
        // Dated from the statement; labelled from the bank transaction code.
        assert!(
            results[0]
                .iter()
                .any(|(date, amount, description)| date == "2026-03-01"
                    && amount == "-12.50"
                    && description == "Batch of 3 transactions (ATSISK)")
        );
        let conn = &mut *db.conn().unwrap();
        let accounts = read::list_accounts(conn, &Viewer::whole_user(user)).unwrap();
        assert_eq!(accounts.len(), 1);
        assert_eq!(accounts[0].name, "Ada Lovelace");
        assert_eq!(
            read::balance_history(conn, accounts[0].id).unwrap().len(),
            3,
            "one balance a day"
        );
    });
}

#[test]
fn the_summary_says_which_date_was_used_and_which_balances_do_not_add_up() {
    on_every_backend(|db| {
        let user = users::create_personal_user(&mut db.conn().unwrap(), "notes@example.com", now())
            .unwrap()
            .id;
        let file = String::from_utf8(samples::daily_camt053(4, &[("", "-2.00")])).unwrap();
        // The bank's closing balance is 5.00 off.
        let off = file.replace(">998.00<", ">1003.00<");
        let statements = import::parse(off.as_bytes(), None).unwrap();
        let summary = import::store(&mut db.conn().unwrap(), user, statements, now()).unwrap();
        assert_eq!(summary.added, 1, "the file's entries import all the same");
        let notes = summary.notes.join("\n");
        assert!(
            notes.contains("dated 2026-03-04 from the closing balance's date"),
            "{notes}"
        );
        assert!(notes.contains("opening balance 1000.00 + entries -2.00 = 998.00, but the statement closes at 1003.00"), "{notes}");
    });
}

/// An MT940 statement of 2026-03-`day`: it opens at `opening`, books
/// `entry` and closes at `opening + entry`.
fn mt940_day(day: u32, opening: &str, entry: &str) -> String {
    let opening: Decimal = opening.parse().unwrap();
    let entry: Decimal = entry.parse().unwrap();
    // D/C mark and amount with a decimal comma, as field 60F/61/62F write them.
    let signed = |amount: Decimal| {
        let mark = if amount.is_sign_negative() { "D" } else { "C" };
        (mark, amount.abs().to_string().replace('.', ","))
    };
    let balance = |amount: Decimal| {
        let (mark, figure) = signed(amount);
        format!("{mark}2603{day:02}EUR{figure}")
    };
    let (entry_mark, entry_figure) = signed(entry);
    format!(
        ":20:DAY{day}\r\n:25:NL91ABNA0417164300\r\n:28C:{day}/1\r\n:60F:{}\r\n\
         :61:2603{day:02}{entry_mark}{entry_figure}NTRFNONREF\r\n:86:/NAME/Corner shop\r\n:62F:{}\r\n-\r\n",
        balance(opening),
        balance(opening + entry),
    )
}

#[test]
fn a_statement_that_does_not_open_on_the_previous_closing_is_noted() {
    let first = mt940_day(1, "100.00", "-10.00"); // closes at 90.00
    let second = mt940_day(2, "90.00", "-10.00"); // closes at 80.00
    let fourth = mt940_day(4, "75.00", "-5.00"); // the third day is missing
    let continuity = |summary: &import::ImportSummary| {
        summary
            .notes
            .iter()
            .filter(|n| n.contains("may be missing"))
            .cloned()
            .collect::<Vec<_>>()
    };
    on_every_backend(|db| {
        let user =
            users::create_personal_user(&mut db.conn().unwrap(), "continuity@example.com", now())
                .unwrap()
                .id;
        let import = |file: &str| {
            let statements = import::parse(file.as_bytes(), Some(Format::Mt940)).unwrap();
            import::store(&mut db.conn().unwrap(), user, statements, now()).unwrap()
        };
        assert_eq!(continuity(&import(&first)), Vec::<String>::new());
        let gap = continuity(&import(&fourth));
        assert_eq!(gap.len(), 1, "{gap:?}");
        assert!(
            gap[0].contains("opens at 75.00 on 2026-03-04, but the closing balance before it (2026-03-01) is 90.00 (a difference of -15.00)"),
            "{gap:?}"
        );
        assert_eq!(continuity(&import(&second)), Vec::<String>::new());
        // Again: each is compared with what precedes it, never with itself.
        assert_eq!(continuity(&import(&first)), Vec::<String>::new());
        assert_eq!(continuity(&import(&second)), Vec::<String>::new());
        let gap = continuity(&import(&fourth));
        assert!(
            gap[0].contains("(2026-03-02) is 80.00 (a difference of -5.00)"),
            "{gap:?}"
        );
        // Within one file too.
        let other =
            users::create_personal_user(&mut db.conn().unwrap(), "continuity2@example.com", now())
                .unwrap()
                .id;
        let statements =
            import::parse(format!("{first}{second}").as_bytes(), Some(Format::Mt940)).unwrap();
        let summary = import::store(&mut db.conn().unwrap(), other, statements, now()).unwrap();
        assert_eq!(continuity(&summary), Vec::<String>::new());
        let statements =
            import::parse(format!("{first}{fourth}").as_bytes(), Some(Format::Mt940)).unwrap();
        let summary = import::store(&mut db.conn().unwrap(), other, statements, now()).unwrap();
        assert_eq!(continuity(&summary).len(), 1, "{:?}", summary.notes);
    });
}

/// `tributary import` reads an OFX file from disk in two passes and writes
/// it a few thousand transactions at a time: the database ends exactly as
/// when the same file is read whole and stored (every row of every table),
/// on both backends, and importing it again changes nothing.
#[test]
fn an_ofx_file_from_disk_is_stored_as_the_same_file_read_whole() {
    let dir = tempfile::tempdir().unwrap();
    let generated = dir.path().join("generated.ofx");
    // 5,000 records: three writes of 2,000, twins and corrections across
    // them, and a NUL in a memo.
    std::fs::write(&generated, samples::ofx_with_every_rule(5_000, true)).unwrap();
    // A statement with a corrected record, one naming its account and
    // stating nothing, one naming none whose only record is deleted.
    let edges = dir.path().join("edges.ofx");
    std::fs::write(
        &edges,
        "OFXHEADER:100\nDATA:OFXSGML\n\n<OFX><BANKMSGSRSV1>\
         <STMTTRNRS><STMTRS><CURDEF>USD<BANKACCTFROM><ACCTID>111</BANKACCTFROM><BANKTRANLIST>\
         <STMTTRN><TRNTYPE>DEBIT<DTPOSTED>20260301<TRNAMT>-1.00<FITID>A<NAME>First</STMTTRN>\
         <STMTTRN><TRNTYPE>DEBIT<DTPOSTED>20260302<TRNAMT>-2.00<FITID>A2<CORRECTFITID>A<CORRECTACTION>REPLACE<NAME>Fixed</STMTTRN>\
         </BANKTRANLIST></STMTRS></STMTTRNRS>\
         <STMTTRNRS><STMTRS><CURDEF>USD<BANKACCTFROM><ACCTID>222</BANKACCTFROM></STMTRS></STMTTRNRS>\
         <STMTTRNRS><STMTRS><CURDEF>EUR<BANKTRANLIST>\
         <STMTTRN><TRNTYPE>DEBIT<DTPOSTED>20260301<TRNAMT>-3.00<FITID>R<NAME>Gone</STMTTRN>\
         <STMTTRN><TRNTYPE>DEBIT<DTPOSTED>20260301<TRNAMT>0<FITID>RD<CORRECTFITID>R<CORRECTACTION>DELETE</STMTTRN>\
         </BANKTRANLIST></STMTRS></STMTTRNRS></BANKMSGSRSV1></OFX>",
    )
    .unwrap();
    let mut files = vec![generated, edges];
    for file in [
        "ofxparse/fixtures/checking.ofx",
        "ofxparse/fixtures/investment_401k.ofx",
        "asgrim-ofxparser/fixtures/ofx-multiple-accounts-xml.ofx",
    ] {
        let path = dir.path().join(file.replace('/', "_"));
        std::fs::write(&path, testdata_bytes(file)).unwrap();
        files.push(path);
    }
    let whole_dbs = tributary_storage::testing::TestDatabase::all();
    let streamed_dbs = tributary_storage::testing::TestDatabase::all();
    for (whole, streamed) in whole_dbs.iter().zip(&streamed_dbs) {
        let (whole, streamed) = (whole.db(), streamed.db());
        let user = |db: &Database| {
            users::create_personal_user(&mut db.conn().unwrap(), "files@example.com", now())
                .unwrap()
                .id
        };
        let (whole_user, streamed_user) = (user(whole), user(streamed));
        for path in &files {
            let bytes = std::fs::read(path).unwrap();
            let statements = import::parse(&bytes, Some(Format::Ofx)).unwrap();
            let read_whole =
                import::store(&mut whole.conn().unwrap(), whole_user, statements, now()).unwrap();
            let from_disk = import::store_ofx_file(
                &mut streamed.conn().unwrap(),
                streamed_user,
                path,
                &import::ImportTarget::Automatic,
                now(),
            )
            .unwrap();
            assert_eq!(from_disk, read_whole, "{}", path.display());
            assert!(from_disk.added > 0, "{}", path.display());
        }
        // Every row but the migrations' (when each database was made).
        let rows = |db: &Database| -> Vec<String> {
            dump_rows(db)
                .lines()
                .filter(|row| !row.contains("\"run_on\""))
                .map(str::to_owned)
                .collect()
        };
        let (streamed_rows, whole_rows) = (rows(streamed), rows(whole));
        let differing: Vec<(&String, &String)> = streamed_rows
            .iter()
            .zip(&whole_rows)
            .filter(|(a, b)| a != b)
            .take(3)
            .collect();
        assert!(differing.is_empty(), "{differing:#?}");
        assert_eq!(streamed_rows.len(), whole_rows.len());
        // Again: nothing new, nothing changed.
        let again = import::store_ofx_file(
            &mut streamed.conn().unwrap(),
            streamed_user,
            &files[0],
            &import::ImportTarget::Automatic,
            now(),
        )
        .unwrap();
        assert_eq!((again.added, again.updated), (0, 0));
        assert_eq!(again.unchanged, 5_001);
        let statements =
            import::parse(&std::fs::read(&files[0]).unwrap(), Some(Format::Ofx)).unwrap();
        let again_whole =
            import::store(&mut whole.conn().unwrap(), whole_user, statements, now()).unwrap();
        assert_eq!(again, again_whole);

        // Into a new account the person names: the currency checked, the
        // rows and notes the same.
        let unnamed = dir.path().join("unnamed.ofx");
        std::fs::write(
            &unnamed,
            "OFXHEADER:100\nDATA:OFXSGML\n\n<OFX><BANKMSGSRSV1><STMTTRNRS><STMTRS><CURDEF>USD<BANKTRANLIST>\
             <STMTTRN><TRNTYPE>DEBIT<DTPOSTED>20260301<TRNAMT>-1.00<FITID>N1<NAME>Caf\0e</STMTTRN>\
             </BANKTRANLIST></STMTRS></STMTTRNRS></BANKMSGSRSV1></OFX>",
        )
        .unwrap();
        for currency in ["EUR", "USD"] {
            let target =
                import::ImportTarget::new_account(&format!("Cash {currency}"), currency).unwrap();
            let statements = import::parse(&std::fs::read(&unnamed).unwrap(), None).unwrap();
            let read_whole = import::store_into(
                &mut whole.conn().unwrap(),
                whole_user,
                statements,
                &target,
                now(),
            )
            .map_err(|e| e.to_string());
            let from_disk = import::store_ofx_file(
                &mut streamed.conn().unwrap(),
                streamed_user,
                &unnamed,
                &target,
                now(),
            )
            .map_err(|e| e.to_string());
            assert_eq!(from_disk, read_whole);
            assert_eq!(from_disk.is_ok(), currency == "USD", "{from_disk:?}");
        }
        assert_eq!(rows(streamed), rows(whole));
    }
}
