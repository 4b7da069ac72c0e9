//! Text search through the index finds exactly what reading every row
//! finds, page by page, on both backends; the SQLite index stays in step
//! with every insert, update and delete.

use crate::read::{self, TransactionFilter, TransactionPosition, TransactionRecord};
use crate::schema::transactions;
use crate::testing::{TestDatabase, empty_account, insert_transactions};
use crate::{AnyConnection, Backend};
use chrono::{Duration, NaiveDate};
use diesel::prelude::*;
use tributary_domain::ids::AccountId;
use tributary_domain::money::Decimal;
use tributary_domain::snapshot::SnapshotTransaction;

/// Row `i` of the account, oldest first: a frequent text, a rare one far
/// back (only the index finds it quickly), LIKE's wildcards as text.
fn row(i: usize) -> SnapshotTransaction {
    let (description, merchant) = match i {
        _ if i % 400 == 7 => (
            Some("CARD PAYMENT".to_owned()),
            Some("Rare Bookshop".to_owned()),
        ),
        _ if i.is_multiple_of(3) => (Some(format!("Coffee Corner #{i}")), None),
        13 => (Some("100%_juice".to_owned()), None),
        _ => (
            Some("Groceries".to_owned()),
            Some("Fresh Market".to_owned()),
        ),
    };
    SnapshotTransaction {
        provider_id: format!("row-{i}"),
        pending_provider_id: None,
        is_pending: false,
        date: NaiveDate::from_ymd_opt(2022, 1, 1).unwrap() + Duration::days((i / 2) as i64),
        amount: Decimal::new(-100 - i as i64, 2),
        currency: "EUR".into(),
        merchant,
        description,
        hints: Default::default(),
    }
}

const ROWS: usize = 1_500;

/// Every row of every page `page` gives, asked for `limit` at a time from
/// the position the last page ended at.
fn all_pages(
    limit: i64,
    mut page: impl FnMut(Option<TransactionPosition>) -> Vec<TransactionRecord>,
) -> Vec<TransactionRecord> {
    let mut found = Vec::new();
    let mut after = None;
    loop {
        let rows = page(after);
        let full = rows.len() as i64 == limit;
        after = rows.last().map(|last| TransactionPosition {
            date: last.date,
            id: last.id,
        });
        found.extend(rows);
        if !full {
            return found;
        }
    }
}

/// Every page of a search of one account, by provider id.
fn searched(
    conn: &mut AnyConnection,
    account: AccountId,
    filter: &TransactionFilter,
    text: &str,
    limit: i64,
) -> Vec<String> {
    all_pages(limit, |after| {
        read::search_transactions(conn, account, filter, text, limit, after).unwrap()
    })
    .into_iter()
    .map(|t| t.provider_transaction_id)
    .collect()
}

/// What reading every row finds: the text in the description or
/// merchant, ASCII letters in any case (what SQLite's `lower` folds; the
/// texts here are ASCII, so PostgreSQL agrees).
fn by_reading(rows: &[TransactionRecord], filter: &TransactionFilter, text: &str) -> Vec<String> {
    let text = text.to_ascii_lowercase();
    let contains = |field: &Option<String>| {
        field
            .as_deref()
            .is_some_and(|f| f.to_ascii_lowercase().contains(&text))
    };
    rows.iter()
        .filter(|t| filter.from.is_none_or(|from| t.date >= from))
        .filter(|t| contains(&t.description) || contains(&t.merchant))
        .map(|t| t.provider_transaction_id.clone())
        .collect()
}

#[test]
fn an_indexed_search_finds_what_reading_every_row_finds() {
    for database in TestDatabase::all() {
        eprintln!("-- on {:?}", database.backend());
        let db = database.db();
        let now = chrono::Utc::now().naive_utc();
        let (_, account) = empty_account(db, "search@example.com", now).unwrap();
        let rows: Vec<SnapshotTransaction> = (0..ROWS).map(row).collect();
        insert_transactions(db, account, &rows).unwrap();
        let conn = &mut *db.conn().unwrap();
        let everything = TransactionFilter::default();
        let stored = read::list_transactions(conn, account, &everything, None, None).unwrap();
        assert_eq!(stored.len(), ROWS);

        let recent = TransactionFilter {
            from: Some(NaiveDate::from_ymd_opt(2022, 9, 1).unwrap()),
            ..TransactionFilter::default()
        };
        for filter in [&everything, &recent] {
            for text in [
                "coffee",        // a third of the rows: found among the newest
                "rare bookshop", // one row in 400: the index finds it
                "RARE",          // in any case
                "bookshop",      // in the merchant only
                "no such words", // nowhere
                "co",            // too short for the index
                "0%_j",          // LIKE's wildcards, searched for as typed
                "r #1",          // across a space and a sign
                "\"quoted\"",    // FTS5's own syntax, searched for as typed
            ] {
                let expected = by_reading(&stored, filter, text);
                for limit in [7, 50] {
                    assert_eq!(
                        searched(conn, account, filter, text, limit),
                        expected,
                        "{text:?}, pages of {limit}, from {:?}",
                        filter.from
                    );
                }
            }
        }
        assert_eq!(by_reading(&stored, &everything, "rare bookshop").len(), 4);

        // Texts changed and rows removed: the index follows.
        diesel::update(
            transactions::table.filter(transactions::provider_transaction_id.eq("row-407")),
        )
        .set(transactions::merchant.eq("Second-hand Books"))
        .execute(conn)
        .unwrap();
        diesel::delete(
            transactions::table.filter(transactions::provider_transaction_id.eq("row-807")),
        )
        .execute(conn)
        .unwrap();
        assert_eq!(
            searched(conn, account, &everything, "rare bookshop", 10),
            ["row-1207", "row-7"]
        );
        assert_eq!(
            searched(conn, account, &everything, "second-hand", 10),
            ["row-407"]
        );
        if database.backend() == Backend::Sqlite {
            // FTS5 compares its index with the table it indexes.
            diesel::sql_query(
                "INSERT INTO transactions_text (transactions_text, rank) VALUES ('integrity-check', 1)",
            )
            .execute(conn)
            .unwrap();
        }
    }
}

#[test]
fn pages_across_accounts_merge_each_accounts_newest_first() {
    for database in TestDatabase::all() {
        eprintln!("-- on {:?}", database.backend());
        let db = database.db();
        let now = chrono::Utc::now().naive_utc();
        let (_, first) = empty_account(db, "one@example.com", now).unwrap();
        let (_, second) = empty_account(db, "two@example.com", now).unwrap();
        // Interleaved days, and days both accounts share.
        insert_transactions(db, first, &(0..900).map(row).collect::<Vec<_>>()).unwrap();
        insert_transactions(
            db,
            second,
            &(300..1_200).step_by(2).map(row).collect::<Vec<_>>(),
        )
        .unwrap();
        let conn = &mut *db.conn().unwrap();
        let everything = TransactionFilter::default();
        let mut all: Vec<TransactionRecord> = [first, second]
            .iter()
            .flat_map(|&a| read::list_transactions(conn, a, &everything, None, None).unwrap())
            .collect();
        all.sort_by_key(|t| std::cmp::Reverse((t.date, t.id)));
        for text in [None, Some("coffee"), Some("rare bookshop")] {
            let expected: Vec<i64> = all
                .iter()
                .filter(|t| {
                    text.is_none_or(|text| {
                        !by_reading(std::slice::from_ref(t), &everything, text).is_empty()
                    })
                })
                .map(|t| t.id.get())
                .collect();
            let found: Vec<i64> = all_pages(7, |after| {
                read::transactions_of_accounts(conn, &[first, second], &everything, text, 7, after)
                    .unwrap()
            })
            .iter()
            .map(|t| t.id.get())
            .collect();
            assert_eq!(found, expected, "{text:?}");
        }
    }
}
