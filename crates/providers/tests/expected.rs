//! Every row of `../shared/testdata/EXPECTED.tsv` (counts and sums from
//! independent parsers): `import` rows store exactly those figures on both
//! backends, and importing the file again adds no transaction and no
//! balance row; `reject` rows fail with a reason.

// Test code: a failed unwrap is a failed test, with its message.
#![allow(clippy::unwrap_used)]

use chrono::{TimeZone, Utc};
use tributary_domain::access::Viewer;
use tributary_domain::ids::UserId;
use tributary_domain::money::Decimal;
use tributary_providers::import::{self, csv::CsvProfile};
use tributary_storage::read::{self, TransactionFilter};
use tributary_storage::testing::{on_every_backend, testdata, testdata_bytes};
use tributary_storage::{Database, users};

struct Row {
    file: String,
    expect_import: bool,
    transactions: usize,
    sum: Decimal,
    note: String,
}

fn rows() -> Vec<Row> {
    testdata("EXPECTED.tsv")
        .lines()
        .filter(|line| !line.starts_with('#') && !line.starts_with("file\t"))
        .filter(|line| !line.trim().is_empty())
        .map(|line| {
            let cells: Vec<&str> = line.split('\t').collect();
            Row {
                file: cells[0].to_owned(),
                expect_import: cells[2] == "import",
                transactions: cells[3].parse().unwrap_or(0),
                sum: cells[4].parse().unwrap_or_default(),
                note: cells.get(6).copied().unwrap_or_default().to_owned(),
            }
        })
        .collect()
}

/// The profile a row's note asks for (card charges written positive).
fn profile(row: &Row) -> Option<CsvProfile> {
    row.note.contains("money out positive").then(|| {
        serde_json::from_value(serde_json::json!({
            "date": "Date",
            "amount": "Amount",
            "payee": "Merchant Name",
            "money_out_positive": true
        }))
        .unwrap()
    })
}

fn now() -> chrono::NaiveDateTime {
    Utc.with_ymd_and_hms(2026, 11, 22, 12, 0, 0)
        .unwrap()
        .naive_utc()
}

/// (transactions, their sum, balance rows) stored for the user.
fn stored(db: &Database, user: UserId) -> (usize, Decimal, usize) {
    let conn = &mut *db.conn().unwrap();
    let all = TransactionFilter {
        include_pending: true,
        ..Default::default()
    };
    let (mut count, mut sum, mut balances) = (0, Decimal::ZERO, 0);
    for account in read::list_accounts(conn, &Viewer::whole_user(user)).unwrap() {
        let transactions = read::list_transactions(conn, account.id, &all, None, None).unwrap();
        count += transactions.len();
        sum += transactions.iter().map(|t| t.amount).sum::<Decimal>();
        balances += read::balance_history(conn, account.id).unwrap().len();
    }
    (count, sum, balances)
}

#[test]
fn every_expected_row_imports_with_its_figures_or_is_refused_clearly() {
    let rows = rows();
    assert!(rows.len() > 100, "EXPECTED.tsv read");
    on_every_backend(|db| {
        let mut wrong = Vec::new();
        for (n, row) in rows.iter().enumerate() {
            let bytes = testdata_bytes(&row.file);
            let profile = profile(row);
            let parsed = import::parse_with_profile(&bytes, None, profile.as_ref());
            if !row.expect_import {
                match parsed {
                    Err(reason) if !reason.to_string().is_empty() => {}
                    Err(_) => wrong.push(format!("{}: refused without a reason", row.file)),
                    Ok(statements) => wrong.push(format!(
                        "{}: read {} statements, expected a refusal",
                        row.file,
                        statements.len()
                    )),
                }
                continue;
            }
            let statements = match parsed {
                Ok(statements) => statements,
                Err(reason) => {
                    wrong.push(format!("{}: refused: {reason}", row.file));
                    continue;
                }
            };
            let user = users::create_personal_user(
                &mut db.conn().unwrap(),
                &format!("row{n}@example.com"),
                now(),
            )
            .unwrap()
            .id;
            import::store(&mut db.conn().unwrap(), user, statements.clone(), now()).unwrap();
            let first = stored(db, user);
            if (first.0, first.1) != (row.transactions, row.sum) {
                wrong.push(format!(
                    "{}: stored {} transactions summing {}, expected {} summing {}",
                    row.file, first.0, first.1, row.transactions, row.sum
                ));
            }
            import::store(&mut db.conn().unwrap(), user, statements, now()).unwrap();
            let again = stored(db, user);
            if again != first {
                wrong.push(format!(
                    "{}: importing again changed {first:?} to {again:?}",
                    row.file
                ));
            }
        }
        assert!(
            wrong.is_empty(),
            "{} of {} rows disagree:\n{}",
            wrong.len(),
            rows.len(),
            wrong.join("\n")
        );
    });
}
