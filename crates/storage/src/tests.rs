//! Storage tests; each runs on a temporary SQLite file and on a throwaway
//! PostgreSQL database (see `testing`).

use crate::api_keys::{self, NewApiKey};
use crate::app_users;
use crate::connections::{self, NewConnection};
use crate::read::{self, TransactionFilter, TransactionPosition};
use crate::testing::on_every_backend;
use crate::{AnyConnection, Database, StorageError, sync_apply, users};
use chrono::{NaiveDate, NaiveDateTime, TimeZone, Utc};
use diesel::connection::{Connection, Instrumentation, InstrumentationEvent, SimpleConnection};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use tributary_domain::access::Viewer;
use tributary_domain::ids::{ApiKeyId, ConnectionId, TransactionId, UserId};
use tributary_domain::model::{AccountKind, PaymentProcessorKind, Provider};
use tributary_domain::money::parse_decimal;
use tributary_domain::snapshot::*;

pub(crate) fn now() -> NaiveDateTime {
    Utc.with_ymd_and_hms(2026, 11, 21, 9, 30, 0)
        .unwrap()
        .naive_utc()
}

pub(crate) fn date(day: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(2026, 11, day).unwrap()
}

pub(crate) fn institution() -> SnapshotInstitution {
    SnapshotInstitution {
        provider_institution_id: "bank".into(),
        name: "Test Bank".into(),
        logo_url: Some("https://logo.example/bank.png".into()),
    }
}

pub(crate) fn transaction(id: &str, day: u32, amount: &str) -> SnapshotTransaction {
    SnapshotTransaction {
        provider_id: id.into(),
        pending_provider_id: None,
        is_pending: false,
        date: date(day),
        amount: parse_decimal(amount).unwrap(),
        currency: "USD".into(),
        merchant: Some("Shop".into()),
        description: None,
        hints: Default::default(),
    }
}

pub(crate) fn account(id: &str, transactions: Vec<SnapshotTransaction>) -> SnapshotAccount {
    SnapshotAccount {
        balance_history: Vec::new(),
        institution: None,
        provider_account_id: id.into(),
        name: format!("Account {id}"),
        kind: AccountKind::Checking,
        currency: "USD".into(),
        mask: Some("1234".into()),
        balance: Some(SnapshotBalance {
            current: parse_decimal("100.00").unwrap(),
            available: None,
            currency: "USD".into(),
            as_of: Utc.with_ymd_and_hms(2026, 11, 21, 9, 0, 0).unwrap(),
        }),
        transactions,
        investment_transactions: Vec::new(),
        liability: None,
        holdings: None,
    }
}

pub(crate) fn snapshot(accounts: Vec<SnapshotAccount>) -> ProviderSnapshot {
    ProviderSnapshot {
        institution: institution(),
        accounts,
        notices: Vec::new(),
        pending_match: None,
        complete: true,
    }
}

/// A user with one connection of `provider`; returns (user id, connection id).
pub(crate) fn user_with_connection(
    conn: &mut AnyConnection,
    email: &str,
    provider: Provider,
) -> (UserId, ConnectionId) {
    let user = users::create_personal_user(conn, email, now()).unwrap();
    (user.id, connect(conn, user.id, provider))
}

/// A new connection of `user_id` to the test institution.
pub(crate) fn connect(
    conn: &mut AnyConnection,
    user_id: UserId,
    provider: Provider,
) -> ConnectionId {
    connections::create_connection(
        conn,
        &NewConnection {
            user_id,
            provider,
            institution: &institution(),
            settings: &serde_json::json!({}),
            sealed_credentials: None,
            consent_expires_at: None,
            now: now(),
        },
    )
    .unwrap()
    .id
}

#[test]
fn amounts_come_back_with_the_same_digits() {
    on_every_backend(|db: &Database| {
        let conn = &mut *db.conn().unwrap();
        let (user, connection) =
            user_with_connection(conn, "exact@example.com", Provider::new("sandbox"));
        let amounts = ["12345678901234.56789", "-0.10", "0.1", "-1650.00"];
        let txns = amounts
            .iter()
            .enumerate()
            .map(|(i, a)| transaction(&format!("t{i}"), 1 + i as u32, a))
            .collect();
        sync_apply::apply_snapshot(conn, connection, &snapshot(vec![account("a", txns)]), now())
            .unwrap();
        let viewer = Viewer::whole_user(user);
        let acc = &read::list_accounts(conn, &viewer).unwrap()[0];
        let stored =
            read::list_transactions(conn, acc.id, &TransactionFilter::default(), None, None)
                .unwrap();
        let mut got: Vec<String> = stored.iter().map(|t| t.amount.to_string()).collect();
        got.reverse();
        assert_eq!(got, amounts);
    });
}

#[test]
fn reapplying_a_snapshot_changes_nothing() {
    on_every_backend(|db| {
        let conn = &mut *db.conn().unwrap();
        let (user, connection) =
            user_with_connection(conn, "twice@example.com", Provider::new("sandbox"));
        let snap = snapshot(vec![account(
            "a",
            vec![transaction("t1", 1, "-5.00"), transaction("t2", 2, "7.00")],
        )]);
        let first = sync_apply::apply_snapshot(conn, connection, &snap, now()).unwrap();
        assert_eq!((first.accounts_created, first.transactions_added), (1, 2));
        let second = sync_apply::apply_snapshot(conn, connection, &snap, now()).unwrap();
        assert_eq!(
            (
                second.accounts_created,
                second.transactions_added,
                second.transactions_unchanged
            ),
            (0, 0, 2)
        );
        let acc = read::list_accounts(conn, &Viewer::whole_user(user)).unwrap();
        assert_eq!(acc.len(), 1);
        let all = TransactionFilter {
            include_pending: true,
            ..Default::default()
        };
        assert_eq!(read::count_transactions(conn, acc[0].id, &all).unwrap(), 2);
        assert_eq!(
            read::balance_history(conn, acc[0].id).unwrap().len(),
            2,
            "each sync appends a balance"
        );
    });
}

#[test]
fn posted_record_replaces_its_pending_row_keeping_the_id() {
    on_every_backend(|db| {
        let conn = &mut *db.conn().unwrap();
        let (user, connection) =
            user_with_connection(conn, "pending@example.com", Provider::new("sandbox"));
        let mut pending = transaction("p1", 20, "-20.00");
        pending.is_pending = true;
        sync_apply::apply_snapshot(
            conn,
            connection,
            &snapshot(vec![account("a", vec![pending])]),
            now(),
        )
        .unwrap();
        let acc = read::list_accounts(conn, &Viewer::whole_user(user)).unwrap()[0].id;
        let all = TransactionFilter {
            include_pending: true,
            ..Default::default()
        };
        let before = read::list_transactions(conn, acc, &all, None, None).unwrap();

        let mut posted = transaction("t1", 21, "-23.40");
        posted.pending_provider_id = Some("p1".into());
        let summary = sync_apply::apply_snapshot(
            conn,
            connection,
            &snapshot(vec![account("a", vec![posted])]),
            now(),
        )
        .unwrap();
        assert_eq!(summary.posted_from_pending, 1);
        let after = read::list_transactions(conn, acc, &all, None, None).unwrap();
        assert_eq!(after.len(), 1);
        assert_eq!(after[0].id, before[0].id);
        assert!(!after[0].is_pending);
        assert_eq!(after[0].provider_transaction_id, "t1");
        assert_eq!(after[0].pending_provider_id.as_deref(), Some("p1"));
        assert_eq!(after[0].amount.to_string(), "-23.40");
    });
}

#[test]
fn a_failing_sync_leaves_the_previous_state_whole() {
    on_every_backend(|db| {
        let conn = &mut *db.conn().unwrap();
        // A CSV connection cannot carry holdings: storing them fails midway,
        // after the account and its transactions were written.
        let (user, connection) = user_with_connection(conn, "atomic@example.com", Provider::CSV);
        sync_apply::apply_snapshot(
            conn,
            connection,
            &snapshot(vec![account("a", vec![transaction("t1", 1, "-1.00")])]),
            now(),
        )
        .unwrap();
        let mut broken = account(
            "a",
            vec![transaction("t1", 1, "-1.00"), transaction("t2", 2, "-2.00")],
        );
        broken.holdings = Some(vec![]);
        let second = account("b", vec![transaction("x", 3, "9.00")]);
        let err =
            sync_apply::apply_snapshot(conn, connection, &snapshot(vec![second, broken]), now())
                .unwrap_err();
        assert!(matches!(err, StorageError::InvalidReference(_)), "{err}");
        let accounts = read::list_accounts(conn, &Viewer::whole_user(user)).unwrap();
        assert_eq!(accounts.len(), 1, "account b was rolled back");
        let all = TransactionFilter {
            include_pending: true,
            ..Default::default()
        };
        assert_eq!(
            read::count_transactions(conn, accounts[0].id, &all).unwrap(),
            1
        );
        assert_eq!(
            read::balance_history(conn, accounts[0].id).unwrap().len(),
            1
        );
    });
}

#[test]
fn accounts_of_others_and_out_of_scope_are_invisible() {
    on_every_backend(|db| {
        let conn = &mut *db.conn().unwrap();
        let (alice, c1) = user_with_connection(conn, "alice@example.com", Provider::new("sandbox"));
        let (bob, c2) = user_with_connection(conn, "bob@example.com", Provider::new("sandbox"));
        sync_apply::apply_snapshot(
            conn,
            c1,
            &snapshot(vec![account("a1", vec![]), account("a2", vec![])]),
            now(),
        )
        .unwrap();
        sync_apply::apply_snapshot(conn, c2, &snapshot(vec![account("b1", vec![])]), now())
            .unwrap();
        let alice_accounts = read::list_accounts(conn, &Viewer::whole_user(alice)).unwrap();
        let bob_account = read::list_accounts(conn, &Viewer::whole_user(bob)).unwrap()[0].id;
        assert_eq!(alice_accounts.len(), 2);
        assert_eq!(alice_accounts[0].institution_name, "Test Bank");
        assert_eq!(
            alice_accounts[0].institution_logo.as_deref(),
            Some("https://logo.example/bank.png")
        );
        assert!(
            read::find_account(conn, &Viewer::whole_user(alice), bob_account)
                .unwrap()
                .is_none()
        );
        let scoped = Viewer {
            user_id: alice,
            account_scope: Some(vec![alice_accounts[1].id]),
        };
        let visible = read::list_accounts(conn, &scoped).unwrap();
        assert_eq!(
            visible.iter().map(|a| a.id).collect::<Vec<_>>(),
            vec![alice_accounts[1].id]
        );
        assert!(
            read::find_account(conn, &scoped, alice_accounts[0].id)
                .unwrap()
                .is_none()
        );
        // A scope naming someone else's account still shows nothing of theirs.
        let sneaky = Viewer {
            user_id: alice,
            account_scope: Some(vec![bob_account]),
        };
        assert!(read::list_accounts(conn, &sneaky).unwrap().is_empty());
    });
}

#[test]
fn keyset_pages_stay_stable_while_rows_arrive() {
    on_every_backend(|db| {
        let conn = &mut *db.conn().unwrap();
        let (user, connection) =
            user_with_connection(conn, "pages@example.com", Provider::new("sandbox"));
        // Several rows share a date, so the id decides order within a day.
        let first: Vec<_> = (0..9)
            .map(|i| transaction(&format!("t{i}"), 1 + i / 3, "-1.00"))
            .collect();
        sync_apply::apply_snapshot(
            conn,
            connection,
            &snapshot(vec![account("a", first.clone())]),
            now(),
        )
        .unwrap();
        let acc = read::list_accounts(conn, &Viewer::whole_user(user)).unwrap()[0].id;
        let filter = TransactionFilter::default();
        let page1 = read::list_transactions(conn, acc, &filter, Some(4), None).unwrap();
        let last = page1.last().unwrap();

        // New rows arrive, newer and on the cursor's own date.
        let mut more = first.clone();
        more.push(transaction("new-late", 20, "-2.00"));
        more.push(transaction("new-same-day", last.date.day0() + 1, "-3.00"));
        sync_apply::apply_snapshot(conn, connection, &snapshot(vec![account("a", more)]), now())
            .unwrap();

        let mut seen: Vec<TransactionId> = page1.iter().map(|t| t.id).collect();
        let mut after = Some(TransactionPosition {
            date: last.date,
            id: last.id,
        });
        while let Some(position) = after {
            let page =
                read::list_transactions(conn, acc, &filter, Some(4), Some(position)).unwrap();
            seen.extend(page.iter().map(|t| t.id));
            after = (page.len() == 4).then(|| TransactionPosition {
                date: page[3].date,
                id: page[3].id,
            });
        }
        let original = read::list_transactions(conn, acc, &filter, None, None).unwrap();
        let original_ids: Vec<TransactionId> = original
            .iter()
            .filter(|t| t.provider_transaction_id.starts_with('t'))
            .map(|t| t.id)
            .collect();
        assert_eq!(
            seen, original_ids,
            "every original row exactly once, in order"
        );
    });
}

#[test]
fn a_search_matches_description_or_merchant_in_any_case_and_pages_newest_first() {
    on_every_backend(|db| {
        let conn = &mut *db.conn().unwrap();
        let (user, connection) =
            user_with_connection(conn, "search@example.com", Provider::new("sandbox"));
        let described = |id: &str, day: u32, merchant: Option<&str>, description: Option<&str>| {
            SnapshotTransaction {
                merchant: merchant.map(str::to_owned),
                description: description.map(str::to_owned),
                hints: Default::default(),
                ..transaction(id, day, "-1.00")
            }
        };
        let rows = vec![
            described("coffee-1", 1, Some("Coffee Corner"), None),
            described("coffee-2", 2, None, Some("COFFEE BEANS 1kg")),
            described("coffee-3", 3, Some("Bakery"), Some("coffee and cake")),
            described("juice", 4, None, Some("100% juice")),
            described("tea", 5, Some("tea_house"), None),
            described("teahouse", 6, Some("teaXhouse"), None),
            described("nothing", 7, None, None),
        ];
        sync_apply::apply_snapshot(conn, connection, &snapshot(vec![account("a", rows)]), now())
            .unwrap();
        let acc = read::list_accounts(conn, &Viewer::whole_user(user)).unwrap()[0].id;
        let filter = TransactionFilter::default();
        let found = |conn: &mut AnyConnection, text: &str, limit, after| -> Vec<String> {
            read::search_transactions(conn, acc, &filter, text, limit, after)
                .unwrap()
                .into_iter()
                .map(|t| t.provider_transaction_id)
                .collect()
        };
        assert_eq!(
            found(conn, "coffee", 10, None),
            ["coffee-3", "coffee-2", "coffee-1"]
        );
        // LIKE's wildcards are searched for as typed.
        assert_eq!(found(conn, "0%", 10, None), ["juice"]);
        assert_eq!(found(conn, "a_h", 10, None), ["tea"]);
        assert!(found(conn, "no such words", 10, None).is_empty());
        // Pages: after the second match comes the third, then nothing.
        let first_two = read::search_transactions(conn, acc, &filter, "Coffee", 2, None).unwrap();
        let last = first_two.last().unwrap();
        let position = TransactionPosition {
            date: last.date,
            id: last.id,
        };
        assert_eq!(found(conn, "coffee", 2, Some(position)), ["coffee-1"]);
        // Dates bound a search as they bound a listing.
        let bounded = TransactionFilter {
            from: Some(date(2)),
            to: Some(date(2)),
            ..TransactionFilter::default()
        };
        let in_range = read::search_transactions(conn, acc, &bounded, "coffee", 10, None).unwrap();
        assert_eq!(in_range.len(), 1);
        assert_eq!(in_range[0].provider_transaction_id, "coffee-2");
    });
}

use chrono::Datelike;

#[derive(Clone, Default)]
struct QueryCounter(Arc<AtomicUsize>);

impl Instrumentation for QueryCounter {
    fn on_connection_event(&mut self, event: InstrumentationEvent<'_>) {
        if let InstrumentationEvent::StartQuery { .. } = event {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }
}

#[test]
fn each_read_is_one_query_whatever_the_row_count() {
    on_every_backend(|db| {
        let conn = &mut *db.conn().unwrap();
        let (user, connection) =
            user_with_connection(conn, "queries@example.com", Provider::new("sandbox"));
        let many: Vec<_> = (0..50)
            .map(|i| transaction(&format!("t{i}"), 1 + i % 28, "-1.00"))
            .collect();
        let accounts: Vec<_> = (0..5)
            .map(|i| account(&format!("a{i}"), many.clone()))
            .collect();
        sync_apply::apply_snapshot(conn, connection, &snapshot(accounts), now()).unwrap();
        let viewer = Viewer::whole_user(user);
        let id = read::list_accounts(conn, &viewer).unwrap()[0].id;

        let counter = QueryCounter::default();
        conn.set_instrumentation(counter.clone());
        let mut count = |f: &mut dyn FnMut(&mut AnyConnection)| {
            counter.0.store(0, Ordering::SeqCst);
            f(conn);
            counter.0.load(Ordering::SeqCst)
        };
        assert_eq!(
            count(&mut |c| assert_eq!(read::list_accounts(c, &viewer).unwrap().len(), 5)),
            1
        );
        assert_eq!(
            count(&mut |c| assert!(read::find_account(c, &viewer, id).unwrap().is_some())),
            1
        );
        assert_eq!(
            count(&mut |c| assert_eq!(
                read::list_transactions(c, id, &TransactionFilter::default(), None, None)
                    .unwrap()
                    .len(),
                50
            )),
            1
        );
        assert_eq!(
            count(&mut |c| assert!(read::latest_balance(c, id).unwrap().is_some())),
            1
        );
        assert_eq!(
            count(&mut |c| assert!(read::list_holdings(c, id).unwrap().is_empty())),
            1
        );
        assert_eq!(
            count(&mut |c| assert_eq!(read::balance_histories(c, user).unwrap().len(), 5)),
            1
        );
    });
}

#[test]
fn api_keys_are_stored_as_hashes_with_their_scope() {
    on_every_backend(|db| {
        let conn = &mut *db.conn().unwrap();
        let (user, connection) =
            user_with_connection(conn, "keys@example.com", Provider::new("sandbox"));
        let (other, other_connection) =
            user_with_connection(conn, "other@example.com", Provider::new("sandbox"));
        sync_apply::apply_snapshot(
            conn,
            connection,
            &snapshot(vec![account("a", vec![])]),
            now(),
        )
        .unwrap();
        sync_apply::apply_snapshot(
            conn,
            other_connection,
            &snapshot(vec![account("b", vec![])]),
            now(),
        )
        .unwrap();
        let mine = read::list_accounts(conn, &Viewer::whole_user(user)).unwrap()[0].id;
        let theirs = read::list_accounts(conn, &Viewer::whole_user(other)).unwrap()[0].id;

        let hash = "a".repeat(64);
        let scope = [mine];
        let key = api_keys::insert_api_key(
            conn,
            &NewApiKey {
                user_id: user,
                name: "budget app",
                key_hash: &hash,
                account_scope: Some(&scope),
                now: now(),
            },
        )
        .unwrap();
        let (found, found_scope) = api_keys::find_by_hash(conn, &hash).unwrap().unwrap();
        assert_eq!(found, key);
        assert_eq!(found_scope, Some(vec![mine]));
        assert!(
            api_keys::find_by_hash(conn, &"b".repeat(64))
                .unwrap()
                .is_none()
        );

        let err = api_keys::insert_api_key(
            conn,
            &NewApiKey {
                user_id: user,
                name: "x",
                key_hash: &"c".repeat(64),
                account_scope: Some(&[theirs]),
                now: now(),
            },
        )
        .unwrap_err();
        assert!(
            err.to_string().contains(&format!("account {theirs}")),
            "{err}"
        );
        assert!(
            api_keys::find_by_hash(conn, &"c".repeat(64))
                .unwrap()
                .is_none(),
            "nothing half-written"
        );

        let revoked = api_keys::revoke(conn, key.id, now()).unwrap();
        assert_eq!(revoked.key.revoked_at, Some(now()));
        assert!(revoked.revoked_now);
        let again = api_keys::revoke(conn, key.id, now() + chrono::Duration::hours(1)).unwrap();
        assert_eq!(again.key.revoked_at, Some(now()), "the first time is kept");
        assert!(!again.revoked_now);
        assert!(matches!(
            api_keys::revoke(conn, ApiKeyId::new(9_999), now()),
            Err(StorageError::NotFound)
        ));
    });
}

#[test]
fn one_personal_user_per_email() {
    on_every_backend(|db| {
        let conn = &mut *db.conn().unwrap();
        users::create_personal_user(conn, "same@example.com", now()).unwrap();
        let err = users::create_personal_user(conn, "same@example.com", now()).unwrap_err();
        assert!(matches!(err, StorageError::Conflict(_)), "{err}");
        assert_eq!(users::count_users(conn).unwrap(), 1);
    });
}

#[test]
fn foreign_keys_are_enforced() {
    on_every_backend(|db| {
        let conn = &mut *db.conn().unwrap();
        let err = users::get_user(conn, UserId::new(42)).unwrap_err();
        assert!(matches!(err, StorageError::NotFound));
        let err = connections::create_connection(
            conn,
            &NewConnection {
                user_id: UserId::new(42),
                provider: Provider::new("sandbox"),
                institution: &institution(),
                settings: &serde_json::json!({}),
                sealed_credentials: None,
                consent_expires_at: None,
                now: now(),
            },
        )
        .unwrap_err();
        assert!(matches!(err, StorageError::Query(_)), "{err}");
    });
}

#[test]
fn a_connection_is_erased_only_by_its_owner_and_takes_its_data_along() {
    on_every_backend(|db| {
        let conn = &mut *db.conn().unwrap();
        let (owner, connection) =
            user_with_connection(conn, "owner@example.com", Provider::new("sandbox"));
        let (other, _) = user_with_connection(conn, "other@example.com", Provider::new("sandbox"));
        let snap = snapshot(vec![account("a", vec![transaction("t1", 2, "-5.00")])]);
        sync_apply::apply_snapshot(conn, connection, &snap, now()).unwrap();
        assert_eq!(
            crate::read::account_summaries(conn, owner).unwrap().len(),
            1
        );

        assert!(!crate::connections::delete_connection(conn, other, connection, now()).unwrap());
        let kept = crate::read::account_summaries(conn, owner).unwrap();
        assert_eq!(kept.len(), 1, "another user's delete changes nothing");
        assert_eq!(kept[0].connection_id, connection);
        assert_eq!(kept[0].kind, AccountKind::Checking);

        assert!(crate::connections::delete_connection(conn, owner, connection, now()).unwrap());
        assert!(
            crate::read::account_summaries(conn, owner)
                .unwrap()
                .is_empty()
        );
        let account_id = kept[0].id;
        assert!(
            read::find_account(conn, &Viewer::whole_user(owner), account_id)
                .unwrap()
                .is_none()
        );
        assert!(
            connections::list_connections(conn, Some(owner))
                .unwrap()
                .is_empty()
        );
    });
}

#[test]
fn checkouts_and_subscriptions_are_recorded_on_the_user() {
    on_every_backend(|db| {
        let conn = &mut *db.conn().unwrap();
        let user = users::create_personal_user(conn, "payer@example.com", now()).unwrap();
        assert_eq!(user.subscribed_at, None);
        crate::checkouts::insert_checkout(
            conn,
            user.id,
            PaymentProcessorKind::Stripe,
            "cs_1",
            now(),
        )
        .unwrap();
        crate::checkouts::insert_checkout(
            conn,
            user.id,
            PaymentProcessorKind::Stripe,
            "cs_2",
            now(),
        )
        .unwrap();
        let duplicate = crate::checkouts::insert_checkout(
            conn,
            user.id,
            PaymentProcessorKind::Stripe,
            "cs_2",
            now(),
        );
        assert!(
            duplicate.is_err(),
            "a processor's checkout id is recorded once"
        );
        let latest = crate::checkouts::latest_checkout(conn, user.id)
            .unwrap()
            .unwrap();
        assert_eq!(
            (latest.external_id.as_str(), latest.status.as_str()),
            ("cs_2", "open")
        );
        crate::checkouts::set_checkout_status(
            conn,
            latest.id,
            tributary_domain::model::CheckoutStatus::Paid,
            Some("sub_9"),
            now(),
        )
        .unwrap();
        crate::checkouts::record_subscription(
            conn,
            user.id,
            PaymentProcessorKind::Stripe,
            "sub_9",
            now(),
        )
        .unwrap();
        let found = crate::checkouts::find_checkout(conn, PaymentProcessorKind::Stripe, "cs_2")
            .unwrap()
            .unwrap();
        assert_eq!(found.subscription_reference.as_deref(), Some("sub_9"));
        assert!(
            crate::checkouts::find_checkout(conn, PaymentProcessorKind::Test, "cs_2")
                .unwrap()
                .is_none()
        );
        assert_eq!(
            users::get_user(conn, user.id).unwrap().subscribed_at,
            Some(now())
        );
    });
}

#[test]
fn reads_in_one_snapshot_agree_while_a_writer_commits_between_them() {
    on_every_backend(|db: &Database| {
        let (account_id, connection) = {
            let conn = &mut *db.conn().unwrap();
            let (user, connection) =
                user_with_connection(conn, "snapshot@example.com", Provider::new("sandbox"));
            let first = snapshot(vec![account("a", vec![transaction("t1", 1, "-1.00")])]);
            sync_apply::apply_snapshot(conn, connection, &first, now()).unwrap();
            let viewer = Viewer::whole_user(user);
            (
                read::list_accounts(conn, &viewer).unwrap()[0].id,
                connection,
            )
        };
        let all = TransactionFilter::default();
        let reader = &mut *db.conn().unwrap();
        let (listed, counted) = reader
            .read_snapshot(|conn| {
                let listed = read::list_transactions(conn, account_id, &all, Some(100), None)?;
                // Another connection commits a sync between the two reads.
                let writer = &mut *db.conn()?;
                let second = snapshot(vec![account(
                    "a",
                    vec![transaction("t1", 1, "-1.00"), transaction("t2", 2, "-2.00")],
                )]);
                sync_apply::apply_snapshot(writer, connection, &second, now())?;
                let counted = read::count_transactions(conn, account_id, &all)?;
                Ok::<_, StorageError>((listed.len() as i64, counted))
            })
            .unwrap();
        assert_eq!(
            (listed, counted),
            (1, 1),
            "both reads see the same snapshot"
        );
        assert_eq!(
            read::count_transactions(reader, account_id, &all).unwrap(),
            2
        );
    });
}

#[test]
fn on_sqlite_a_unit_of_work_holds_the_write_lock_from_its_first_read() {
    // A deferred SQLite transaction that reads, then writes after another
    // connection committed, fails at once with "database is locked" (no
    // busy wait): a sync or an import racing an API key's last-use update
    // answered 500. `atomically` begins IMMEDIATE, so no writer can slip in
    // between. (PostgreSQL has no such failure: writers take row locks.)
    let database = crate::testing::TestDatabase::sqlite();
    let db = database.db();
    let conn = &mut *db.conn().unwrap();
    let (_, connection) = user_with_connection(conn, "lock@example.com", Provider::new("sandbox"));
    conn.atomically(|conn| {
        connections::get_connection(conn, connection)?;
        let other = &mut *db.conn().unwrap();
        other.batch_execute("PRAGMA busy_timeout = 0").unwrap();
        let err = other.batch_execute("BEGIN IMMEDIATE").unwrap_err();
        assert!(err.to_string().contains("locked"), "{err}");
        Ok(())
    })
    .unwrap();
}

/// The two migration trees describe the same tables, columns, nullability
/// and indexes by name: a migration added to one tree only fails here. The
/// text index is each backend's own by design (migration `text_search`:
/// an FTS5 table on SQLite, trigram indexes on PostgreSQL) and is left out.
#[test]
fn both_migration_trees_build_the_same_schema() {
    use crate::Backend;
    use crate::testing::TestDatabase;
    use diesel::RunQueryDsl;
    use diesel::sql_types::Text;

    #[derive(diesel::QueryableByName)]
    struct Line {
        #[diesel(sql_type = Text)]
        line: String,
    }

    let schema = |database: &TestDatabase| -> Vec<String> {
        let mut conn = database.db().conn().unwrap();
        let query = match database.backend() {
            Backend::Sqlite => {
                "SELECT m.name || '.' || c.name || CASE WHEN c.\"notnull\" = 1 OR c.pk > 0 THEN ' not null' ELSE '' END AS line \
                 FROM sqlite_master m JOIN pragma_table_info(m.name) c \
                 WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%' AND m.name <> '__diesel_schema_migrations' \
                 AND m.name NOT LIKE 'transactions_text%' \
                 UNION SELECT 'index ' || name AS line FROM sqlite_master \
                 WHERE type = 'index' AND name NOT LIKE 'sqlite_autoindex_%'"
            }
            Backend::Postgres => {
                "SELECT table_name || '.' || column_name || CASE WHEN is_nullable = 'NO' THEN ' not null' ELSE '' END AS line \
                 FROM information_schema.columns \
                 WHERE table_schema = 'public' AND table_name <> '__diesel_schema_migrations' \
                 UNION SELECT 'index ' || indexname AS line FROM pg_indexes \
                 WHERE schemaname = 'public' AND indexname NOT LIKE '%_pkey' AND indexname NOT LIKE '%_key' \
                 AND indexname NOT IN ('transactions_description_text', 'transactions_merchant_text')"
            }
        };
        let mut lines: Vec<String> = match &mut *conn {
            AnyConnection::Sqlite(c) => diesel::sql_query(query).load::<Line>(c),
            AnyConnection::Postgresql(c) => diesel::sql_query(query).load::<Line>(c),
        }
        .unwrap()
        .into_iter()
        .map(|l| l.line)
        .collect();
        lines.sort();
        lines
    };
    let sqlite = schema(&TestDatabase::sqlite());
    let Some(postgres) = TestDatabase::postgres() else {
        return;
    };
    let postgres = schema(&postgres);
    assert!(sqlite.len() > 50, "{sqlite:?}");
    let only = |a: &[String], b: &[String]| -> Vec<String> {
        a.iter().filter(|l| !b.contains(l)).cloned().collect()
    };
    assert_eq!(
        (only(&sqlite, &postgres), only(&postgres, &sqlite)),
        (Vec::new(), Vec::new()),
        "(only in SQLite, only in PostgreSQL)"
    );
}

/// The tally the database keeps on the account, beside a row-by-row count.
fn tally_and_counts(conn: &mut AnyConnection, user: UserId) -> (read::TransactionTally, i64, i64) {
    let account = read::list_accounts(conn, &Viewer::whole_user(user)).unwrap()[0].clone();
    let posted = read::count_transactions(conn, account.id, &TransactionFilter::default()).unwrap();
    let all = TransactionFilter {
        include_pending: true,
        ..Default::default()
    };
    let all = read::count_transactions(conn, account.id, &all).unwrap();
    (account.transactions, posted, all)
}

#[test]
fn the_tally_follows_every_insert_update_and_delete() {
    on_every_backend(|db| {
        let conn = &mut *db.conn().unwrap();
        let (user, connection) =
            user_with_connection(conn, "tally@example.com", Provider::new("sandbox"));
        let mut pending = transaction("p1", 3, "-5.00");
        pending.is_pending = true;
        let mut vanishing = transaction("p2", 3, "-7.00");
        vanishing.is_pending = true;
        let first = snapshot(vec![account(
            "a",
            vec![
                transaction("t1", 1, "-1.00"),
                transaction("t2", 2, "-2.00"),
                pending,
                vanishing,
            ],
        )]);
        sync_apply::apply_snapshot(conn, connection, &first, now()).unwrap();
        let (tally, posted, all) = tally_and_counts(conn, user);
        assert_eq!((tally.posted, tally.pending), (2, 2));
        assert_eq!((posted, all), (2, 4));

        // The same snapshot again changes no row, so neither the tally nor
        // the version.
        sync_apply::apply_snapshot(conn, connection, &first, now()).unwrap();
        assert_eq!(tally_and_counts(conn, user).0, tally);

        // p1 posts (an update of its row), p2 is gone (a delete).
        let mut posted_record = transaction("t3", 4, "-5.10");
        posted_record.pending_provider_id = Some("p1".into());
        let second = snapshot(vec![account(
            "a",
            vec![
                transaction("t1", 1, "-1.00"),
                transaction("t2", 2, "-2.00"),
                posted_record,
            ],
        )]);
        let summary = sync_apply::apply_snapshot(conn, connection, &second, now()).unwrap();
        assert_eq!(summary.posted_from_pending, 1);
        let (after, posted, all) = tally_and_counts(conn, user);
        assert_eq!((after.posted, after.pending), (3, 0));
        assert_eq!((posted, all), (3, 3));
        assert!(after.version > tally.version, "{after:?} after {tally:?}");

        // Multi-row inserts (PostgreSQL counts them once per statement).
        let account_id = read::list_accounts(conn, &Viewer::whole_user(user)).unwrap()[0].id;
        crate::testing::insert_generated_transactions(db, account_id, 1_234, date(30)).unwrap();
        let (bulk, posted, all) = tally_and_counts(conn, user);
        assert_eq!((bulk.posted, bulk.pending), (1_237, 0));
        assert_eq!((posted, all), (1_237, 1_237));
        assert!(bulk.version > after.version);
    });
}

#[test]
fn concurrent_imports_into_one_account_add_up_in_its_tally() {
    on_every_backend(|db| {
        let user = {
            let conn = &mut *db.conn().unwrap();
            let (user, connection) =
                user_with_connection(conn, "race@example.com", Provider::new("sandbox"));
            sync_apply::apply_snapshot(
                conn,
                connection,
                &snapshot(vec![account("a", vec![])]),
                now(),
            )
            .unwrap();
            (user, connection)
        };
        // Statement files (incomplete snapshots) each add their own rows.
        std::thread::scope(|scope| {
            for writer in 0..4 {
                scope.spawn(move || {
                    let conn = &mut *db.conn().unwrap();
                    for file in 0..5 {
                        let rows = (0..20)
                            .map(|n| transaction(&format!("w{writer}-f{file}-{n}"), 1 + n, "-1.00"))
                            .collect();
                        let mut statement = snapshot(vec![account("a", rows)]);
                        statement.complete = false;
                        sync_apply::apply_snapshot(conn, user.1, &statement, now()).unwrap();
                    }
                });
            }
        });
        let conn = &mut *db.conn().unwrap();
        let (tally, posted, all) = tally_and_counts(conn, user.0);
        assert_eq!(
            (tally.posted, tally.pending, posted, all),
            (400, 0, 400, 400)
        );
    });
}

#[test]
fn a_held_snapshot_reads_one_state_and_an_abandoned_one_is_not_reused() {
    on_every_backend(|db| {
        let options = crate::PoolOptions {
            max_size: 1,
            ..Default::default()
        };
        let single = Database::connect(db.url(), &options).unwrap();
        let (user, connection) = {
            let conn = &mut *db.conn().unwrap();
            let (user, connection) =
                user_with_connection(conn, "held@example.com", Provider::new("sandbox"));
            let first = snapshot(vec![account("a", vec![transaction("t1", 1, "-1.00")])]);
            sync_apply::apply_snapshot(conn, connection, &first, now()).unwrap();
            (user, connection)
        };
        let mut held = crate::HeldSnapshot::open(&single).unwrap();
        assert_eq!(tally_and_counts(held.conn(), user).1, 1);
        {
            let writer = &mut *db.conn().unwrap();
            let second = snapshot(vec![account(
                "a",
                vec![transaction("t1", 1, "-1.00"), transaction("t2", 2, "-2.00")],
            )]);
            sync_apply::apply_snapshot(writer, connection, &second, now()).unwrap();
        }
        assert_eq!(
            tally_and_counts(held.conn(), user).1,
            1,
            "still the first state"
        );
        drop(held);
        // The pool's one connection had a transaction open: it was
        // discarded, so this one sees the present.
        {
            let conn = &mut *single.conn().unwrap();
            assert_eq!(tally_and_counts(conn, user).1, 2);
        }
        let mut held = crate::HeldSnapshot::open(&single).unwrap();
        assert_eq!(tally_and_counts(held.conn(), user).1, 2);
        held.finish().unwrap();
    });
}

#[test]
fn a_connection_the_server_dropped_fails_once_and_is_replaced() {
    let Some(database) = crate::testing::TestDatabase::postgres() else {
        return;
    };
    let options = crate::PoolOptions {
        max_size: 1,
        ..Default::default()
    };
    let single = Database::connect(database.db().url(), &options).unwrap();
    let pid: i32 = {
        let conn = &mut *single.conn().unwrap();
        diesel::RunQueryDsl::get_result(
            diesel::select(diesel::dsl::sql::<diesel::sql_types::Integer>(
                "pg_backend_pid()",
            )),
            conn,
        )
        .unwrap()
    };
    {
        let other = &mut *database.db().conn().unwrap();
        other
            .batch_execute(&format!("SELECT pg_terminate_backend({pid})"))
            .unwrap();
    }
    let failed = {
        let conn = &mut *single.conn().unwrap();
        read::count_transactions(
            conn,
            tributary_domain::ids::AccountId::new(1),
            &TransactionFilter::default(),
        )
    };
    assert!(
        matches!(failed, Err(StorageError::Unavailable(_))),
        "{failed:?}"
    );
    let conn = &mut *single.conn().unwrap();
    assert_eq!(
        read::count_transactions(
            conn,
            tributary_domain::ids::AccountId::new(1),
            &TransactionFilter::default()
        )
        .unwrap(),
        0
    );
}

#[test]
fn sqlite_keeps_prepared_statements() {
    // See .cargo/config.toml: without the planner stability guarantee every
    // statement with a bound LIMIT is prepared again on each execution.
    let database = crate::testing::TestDatabase::sqlite();
    let conn = &mut *database.db().conn().unwrap();
    #[derive(diesel::QueryableByName)]
    struct CompileOption {
        #[diesel(sql_type = diesel::sql_types::Text)]
        compile_options: String,
    }
    let options: Vec<CompileOption> =
        diesel::RunQueryDsl::load(diesel::sql_query("PRAGMA compile_options"), conn).unwrap();
    assert!(
        options.iter().any(|o| o.compile_options == "ENABLE_QPSG"),
        "the bundled SQLite was built without SQLITE_ENABLE_QPSG"
    );
}

#[test]
fn a_sync_reads_only_the_stored_rows_it_can_change_and_ends_as_a_full_read_would() {
    on_every_backend(|db| {
        let conn = &mut *db.conn().unwrap();
        let (user, connection) =
            user_with_connection(conn, "history@example.com", Provider::new("sandbox"));
        let history: Vec<_> = (0..300)
            .map(|i| transaction(&format!("h{i}"), 1 + i % 28, "-1.00"))
            .collect();
        let mut pending = transaction("p1", 20, "-20.00");
        pending.is_pending = true;
        let mut other_pending = transaction("p2", 21, "-3.00");
        other_pending.is_pending = true;
        let mut first = history.clone();
        first.extend([pending.clone(), other_pending.clone()]);
        sync_apply::apply_snapshot(
            conn,
            connection,
            &snapshot(vec![account("a", first)]),
            now(),
        )
        .unwrap();
        let mut posted = transaction("t1", 21, "-23.40");
        posted.pending_provider_id = Some("p1".into());
        sync_apply::apply_snapshot(
            conn,
            connection,
            &snapshot(vec![account(
                "a",
                vec![posted.clone(), other_pending.clone()],
            )]),
            now(),
        )
        .unwrap();
        let acc = read::list_accounts(conn, &Viewer::whole_user(user)).unwrap()[0].id;

        // A stale view that still lists p1, a corrected old record, a new one.
        let mut corrected = history[5].clone();
        corrected.description = Some("corrected".into());
        let incoming = vec![
            pending.clone(),
            posted.clone(),
            corrected.clone(),
            transaction("n1", 22, "-9.99"),
        ];
        let read_back: std::collections::BTreeSet<String> =
            sync_apply::stored_for(conn, acc, &incoming)
                .unwrap()
                .into_iter()
                .map(|t| t.provider_id)
                .collect();
        assert_eq!(
            read_back,
            ["h5", "p2", "t1"].map(String::from).into(),
            "the pending rows, the rows named, and the row that replaced a listed pending id"
        );

        let summary = sync_apply::apply_snapshot(
            conn,
            connection,
            &snapshot(vec![account("a", incoming)]),
            now(),
        )
        .unwrap();
        assert_eq!(
            (
                summary.transactions_added,
                summary.transactions_updated,
                summary.transactions_unchanged,
                summary.transactions_removed
            ),
            (1, 1, 1, 1),
            "n1 added, h5 corrected, t1 as it was, p2 vanished; the stale p1 ignored"
        );
        let all = TransactionFilter {
            include_pending: true,
            ..Default::default()
        };
        let rows = read::list_transactions(conn, acc, &all, None, None).unwrap();
        assert_eq!(rows.len(), 302, "300 of history, t1 (once p1), n1");
        let h5 = rows
            .iter()
            .find(|r| r.provider_transaction_id == "h5")
            .unwrap();
        assert_eq!(h5.description.as_deref(), Some("corrected"));
    });
}

pub(crate) fn app_named(conn: &mut AnyConnection, client_id: &str) -> crate::apps::AppRecord {
    crate::apps::create_app(
        conn,
        &crate::apps::NewApp {
            client_id,
            name: client_id,
            client_secret_hash: Some("hash"),
            billing_model: tributary_domain::model::BillingModel::Integrator,
            default_max_accounts: None,
            redirect_uris: &[],
            now: now(),
        },
    )
    .unwrap()
}

#[test]
fn a_developer_sees_only_their_own_apps() {
    use crate::developers;
    on_every_backend(|db: &Database| {
        let conn = &mut *db.conn().unwrap();
        let (ada, made) = developers::add(conn, "ada@example.com", now()).unwrap();
        assert!(made);
        let (again, made) = developers::add(conn, "ada@example.com", now()).unwrap();
        assert!(!made, "an address is one developer");
        assert_eq!(again.id, ada.id);
        let (bob, _) = developers::add(conn, "bob@example.com", now()).unwrap();
        let adas = app_named(conn, "app_ada");
        let operators = app_named(conn, "app_operator");
        assert_eq!(developers::owner_of(conn, adas.id).unwrap(), None);
        developers::set_owner(conn, adas.id, ada.id).unwrap();
        assert_eq!(developers::owner_of(conn, adas.id).unwrap(), Some(ada.id));
        let ids =
            |apps: Vec<crate::apps::AppRecord>| apps.into_iter().map(|a| a.id).collect::<Vec<_>>();
        assert_eq!(ids(developers::apps_of(conn, ada.id).unwrap()), [adas.id]);
        assert!(developers::apps_of(conn, bob.id).unwrap().is_empty());
        // Another developer's app and the operator's read as missing.
        assert!(
            developers::owned_app(conn, bob.id, adas.id)
                .unwrap()
                .is_none()
        );
        assert!(
            developers::owned_app(conn, ada.id, operators.id)
                .unwrap()
                .is_none()
        );
        assert_eq!(
            developers::owned_app(conn, ada.id, adas.id)
                .unwrap()
                .map(|a| a.id),
            Some(adas.id)
        );
        // Owners change by replacing the row, never by adding a second.
        developers::set_owner(conn, adas.id, bob.id).unwrap();
        assert!(developers::apps_of(conn, ada.id).unwrap().is_empty());
        assert_eq!(ids(developers::apps_of(conn, bob.id).unwrap()), [adas.id]);
        assert_eq!(
            developers::list(conn)
                .unwrap()
                .iter()
                .map(|d| d.email.as_str())
                .collect::<Vec<_>>(),
            ["ada@example.com", "bob@example.com"]
        );
    });
}

#[test]
fn developer_sessions_are_found_by_hash_and_purged_after_expiry() {
    use crate::developers;
    on_every_backend(|db: &Database| {
        let conn = &mut *db.conn().unwrap();
        let (ada, _) = developers::add(conn, "ada@example.com", now()).unwrap();
        let expires = now() + chrono::Duration::hours(12);
        developers::insert_session(conn, "hash-1", ada.id, expires, now()).unwrap();
        let session = developers::find_session(conn, "hash-1").unwrap().unwrap();
        assert_eq!(session.developer_id, ada.id);
        assert!(developers::find_session(conn, "hash-2").unwrap().is_none());
        let later = now() + chrono::Duration::minutes(5);
        developers::touch_session(conn, session.id, later).unwrap();
        assert_eq!(
            developers::find_session(conn, "hash-1")
                .unwrap()
                .unwrap()
                .last_seen_at,
            later
        );
        developers::purge_expired(conn, expires - chrono::Duration::seconds(1)).unwrap();
        assert!(developers::find_session(conn, "hash-1").unwrap().is_some());
        developers::purge_expired(conn, expires + chrono::Duration::seconds(1)).unwrap();
        assert!(developers::find_session(conn, "hash-1").unwrap().is_none());
        developers::insert_session(conn, "hash-3", ada.id, expires, now()).unwrap();
        let id = developers::find_session(conn, "hash-3")
            .unwrap()
            .unwrap()
            .id;
        developers::delete_session(conn, id).unwrap();
        assert!(developers::find_session(conn, "hash-3").unwrap().is_none());
    });
}

#[test]
fn concurrent_sign_ups_of_one_address_make_one_developer() {
    use crate::developers;
    on_every_backend(|db: &Database| {
        let made: Vec<bool> = std::thread::scope(|scope| {
            let racers: Vec<_> = (0..4)
                .map(|_| {
                    let db = db.clone();
                    scope.spawn(move || {
                        let conn = &mut *db.conn().unwrap();
                        developers::add(conn, "race@example.com", now()).unwrap().1
                    })
                })
                .collect();
            racers.into_iter().map(|r| r.join().unwrap()).collect()
        });
        assert_eq!(made.iter().filter(|m| **m).count(), 1, "{made:?}");
        let conn = &mut *db.conn().unwrap();
        assert_eq!(developers::list(conn).unwrap().len(), 1);
    });
}

#[test]
fn a_developer_lists_searches_and_deletes_only_their_own_apps_users() {
    use crate::apps::{self, NewAppUser};
    use crate::developers;
    on_every_backend(|db: &Database| {
        let conn = &mut *db.conn().unwrap();
        let (ada, _) = developers::add(conn, "ada@example.com", now()).unwrap();
        let (bob, _) = developers::add(conn, "bob@example.com", now()).unwrap();
        let uris = ["https://ada.example/cb".to_owned()];
        let adas = developers::create_owned_app(
            conn,
            ada.id,
            &apps::NewApp {
                client_id: "app_ada",
                name: "Ada's app",
                client_secret_hash: Some("hash"),
                billing_model: tributary_domain::model::BillingModel::Integrator,
                default_max_accounts: Some(3),
                redirect_uris: &uris,
                now: now(),
            },
        )
        .unwrap();
        assert_eq!(developers::owner_of(conn, adas.id).unwrap(), Some(ada.id));
        assert_eq!(apps::redirect_uris(conn, adas.id).unwrap(), uris);
        let user = |conn: &mut AnyConnection, email: &str, external: Option<&str>| {
            apps::create_or_get_app_user(
                conn,
                &NewAppUser {
                    app_id: adas.id,
                    email,
                    public_id: &format!("usr_{}", email.replace(['@', '.'], "")),
                    external_user_id: external,
                    max_accounts: None,
                    now: now(),
                },
            )
            .unwrap()
            .0
        };
        let first = user(conn, "first@example.com", Some("CUST-100%"));
        let second = user(conn, "second@example.com", None);
        connect(conn, second.id, Provider::new("sandbox"));
        let emails = |lines: Vec<app_users::AppUserLine>| {
            lines
                .into_iter()
                .map(|l| (l.user.email, l.connections.len(), l.accounts))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            emails(app_users::app_users(conn, adas.id, None, 50).unwrap()),
            [
                ("second@example.com".to_owned(), 1, 0),
                ("first@example.com".to_owned(), 0, 0)
            ],
            "newest first, with their connections"
        );
        // Any case, and `%` taken literally.
        for search in ["FIRST", "cust-100%", "usr_firstexample"] {
            assert_eq!(
                emails(app_users::app_users(conn, adas.id, Some(search), 50).unwrap()),
                [("first@example.com".to_owned(), 0, 0)],
                "{search}"
            );
        }
        assert!(
            app_users::app_users(conn, adas.id, Some("%%"), 50)
                .unwrap()
                .is_empty()
        );
        assert_eq!(
            apps::effective_account_limit(None, &adas),
            Some(3),
            "the app's default when the integrator pays"
        );
        assert_eq!(apps::effective_account_limit(Some(1), &adas), Some(1));

        crate::sign_in_codes::insert_sign_in_code(
            conn,
            &crate::sign_in_codes::NewSignInCode {
                surface: crate::sign_in_codes::SignInSurface::Dashboard,
                binding: &crate::sign_in_codes::CodeBinding::Browser("browser-hash".to_owned()),
                email: "first@example.com",
                ip: "10.0.0.1",
                code_hash: "code-hash",
                expires_at: now() + chrono::Duration::minutes(10),
                now: now(),
            },
        )
        .unwrap();
        assert!(crate::testing::dump_rows(db).contains("first@example.com"));

        // Bob cannot delete Ada's app; Ada deletes it with its users.
        assert!(!developers::delete_owned_app(conn, bob.id, adas.id).unwrap());
        assert!(apps::find_by_client_id(conn, "app_ada").unwrap().is_some());
        assert!(developers::delete_owned_app(conn, ada.id, adas.id).unwrap());
        assert!(apps::find_by_client_id(conn, "app_ada").unwrap().is_none());
        for gone in [first.id, second.id] {
            assert!(matches!(
                users::get_user(conn, gone),
                Err(StorageError::NotFound)
            ));
        }
        assert!(
            connections::list_connections(conn, None)
                .unwrap()
                .is_empty()
        );
        assert!(
            !crate::testing::dump_rows(db).contains("first@example.com"),
            "nothing of the users' addresses is left"
        );
    });
}

#[test]
fn concurrent_removals_of_an_apps_last_two_redirect_uris_leave_one() {
    use crate::apps::{self, RedirectUriAdded, RedirectUriRemoved};
    on_every_backend(|db: &Database| {
        for round in 0..5 {
            let app = app_named(&mut db.conn().unwrap(), &format!("app_race_{round}"));
            let uris = ["https://a.example/cb", "https://b.example/cb"];
            for uri in uris {
                apps::add_redirect_uri(&mut db.conn().unwrap(), app.id, uri, now()).unwrap();
            }
            let barrier = std::sync::Barrier::new(uris.len());
            let outcomes: Vec<RedirectUriRemoved> = std::thread::scope(|scope| {
                let racers: Vec<_> = uris
                    .iter()
                    .map(|uri| {
                        let (db, barrier) = (db.clone(), &barrier);
                        scope.spawn(move || {
                            let conn = &mut *db.conn().unwrap();
                            barrier.wait();
                            apps::remove_redirect_uri_keeping_one(conn, app.id, uri).unwrap()
                        })
                    })
                    .collect();
                racers.into_iter().map(|r| r.join().unwrap()).collect()
            });
            let conn = &mut *db.conn().unwrap();
            assert_eq!(apps::redirect_uris(conn, app.id).unwrap().len(), 1);
            assert_eq!(
                outcomes
                    .iter()
                    .filter(|o| **o == RedirectUriRemoved::Removed)
                    .count(),
                1,
                "{outcomes:?}"
            );
            assert!(outcomes.contains(&RedirectUriRemoved::LastOne));
        }

        // Concurrent adds stop at the limit.
        let app = app_named(&mut db.conn().unwrap(), "app_full");
        let added: Vec<RedirectUriAdded> = std::thread::scope(|scope| {
            let racers: Vec<_> = (0..4)
                .map(|n| {
                    let db = db.clone();
                    scope.spawn(move || {
                        let conn = &mut *db.conn().unwrap();
                        let uri = format!("https://{n}.example/cb");
                        apps::add_redirect_uri_up_to(conn, app.id, &uri, 2, now()).unwrap()
                    })
                })
                .collect();
            racers.into_iter().map(|r| r.join().unwrap()).collect()
        });
        let conn = &mut *db.conn().unwrap();
        assert_eq!(apps::redirect_uris(conn, app.id).unwrap().len(), 2);
        assert_eq!(
            added
                .iter()
                .filter(|a| **a == RedirectUriAdded::Added)
                .count(),
            2,
            "{added:?}"
        );
        assert_eq!(
            apps::add_redirect_uri_up_to(conn, app.id, "https://0.example/cb", 2, now()).unwrap(),
            if added[0] == RedirectUriAdded::Added {
                RedirectUriAdded::AlreadyRegistered
            } else {
                RedirectUriAdded::Full
            }
        );
    });
}

#[test]
fn each_account_is_at_its_own_bank_behind_one_aggregator_connection() {
    on_every_backend(|db: &Database| {
        let conn = &mut *db.conn().unwrap();
        let (user, connection) =
            user_with_connection(conn, "banks@example.com", Provider::new("simplefin"));
        let bank = |id: &str, name: &str| SnapshotInstitution {
            provider_institution_id: id.into(),
            name: name.into(),
            logo_url: None,
        };
        let mut snap = snapshot(vec![
            SnapshotAccount {
                institution: Some(bank("domain:go.example", "The Bank of Go")),
                ..account("a", Vec::new())
            },
            SnapshotAccount {
                balance_history: Vec::new(),
                // Another bank of the same name: a second institution.
                institution: Some(bank("domain:go-too.example", "The Bank of Go")),
                ..account("b", Vec::new())
            },
            account("c", Vec::new()),
        ]);
        sync_apply::apply_snapshot(conn, connection, &snap, now()).unwrap();
        let banks = |conn: &mut AnyConnection| -> Vec<(String, String, Option<String>)> {
            read::list_accounts(conn, &Viewer::whole_user(user))
                .unwrap()
                .into_iter()
                .map(|a| (a.name, a.institution_name, a.institution_logo))
                .collect()
        };
        let logo = Some("https://logo.example/bank.png".to_owned());
        assert_eq!(
            banks(conn),
            [
                ("Account a".into(), "The Bank of Go".into(), None),
                ("Account b".into(), "The Bank of Go".into(), None),
                ("Account c".into(), "Test Bank".into(), logo),
            ]
        );
        assert_eq!(
            crate::testing::row_count(db, "institutions"),
            3,
            "the two banks of one name stay two"
        );
        // The bridge moves an account to its own bank: the next sync says so.
        snap.accounts[2].institution = Some(bank("domain:credit.example", "Example Credit Union"));
        sync_apply::apply_snapshot(conn, connection, &snap, now()).unwrap();
        assert_eq!(banks(conn)[2].1, "Example Credit Union");
    });
}

#[test]
fn sealed_credentials_are_swapped_only_in_place_of_those_read() {
    on_every_backend(|db| {
        let conn = &mut *db.conn().unwrap();
        let (_, connection) =
            user_with_connection(conn, "swap@example.com", Provider::new("sandbox"));
        let stored =
            |conn: &mut AnyConnection| connections::sealed_credentials(conn, connection).unwrap();
        connections::set_sealed_credentials(conn, connection, Some(b"first"), now()).unwrap();
        // Something else replaced what a sync read: its token is not kept.
        for expected in [Some(&b"other"[..]), None] {
            assert!(
                !connections::swap_sealed_credentials(
                    conn,
                    connection,
                    (expected, Some(b"late")),
                    now()
                )
                .unwrap()
            );
            assert_eq!(stored(conn).as_deref(), Some(&b"first"[..]));
        }
        assert!(
            connections::swap_sealed_credentials(
                conn,
                connection,
                (Some(b"first"), Some(b"second")),
                now()
            )
            .unwrap()
        );
        assert_eq!(stored(conn).as_deref(), Some(&b"second"[..]));
    });
}
