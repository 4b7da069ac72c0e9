//! The sync engine over real databases (SQLite file and PostgreSQL).

// Test code: a failed unwrap is a failed test, with its message.
#![allow(clippy::unwrap_used)]

use chrono::{Duration, TimeZone, Utc};
use std::sync::Arc;
use tributary_domain::access::Viewer;
use tributary_domain::clock::{Clock, ManualClock};
use tributary_domain::ids::{ConnectionId, UserId};
use tributary_domain::model::{ConnectionStatus, SyncJobKind, SyncJobStatus};
use tributary_providers::sandbox;
use tributary_providers::sync::{SyncEngine, SyncError, SyncOutcome};
use tributary_providers::{ConnectorError, Registry};
use tributary_storage::read::{self, TransactionFilter};
use tributary_storage::testing::on_every_backend;
use tributary_storage::{Database, connections, sync_jobs, users};

/// An engine on a clock stopped at 2026-11-21 08:00 UTC, and a new user.
fn engine_and_user(db: &Database, email: &str) -> (SyncEngine, Arc<ManualClock>, UserId) {
    let clock = Arc::new(ManualClock::new(
        Utc.with_ymd_and_hms(2026, 11, 21, 8, 0, 0).unwrap(),
    ));
    let engine = SyncEngine::new(
        db.clone(),
        Registry::with_defaults(&tributary_outbound::Guard::new(Default::default())),
        clock.clone(),
    );
    let user = users::create_personal_user(&mut db.conn().unwrap(), email, clock.now().naive_utc())
        .unwrap();
    (engine, clock, user.id)
}

/// `engine_and_user` plus a sandbox connection as `username` (not synced);
/// returns (engine, clock, user id, connection id).
fn setup(db: &Database, username: &str) -> (SyncEngine, Arc<ManualClock>, UserId, ConnectionId) {
    let email = format!("{username}@example.com");
    let (engine, clock, user) = engine_and_user(db, &email);
    let settings = sandbox::connect_request(&email, username);
    let connection = engine
        .connect(user, tributary_providers::sandbox::PROVIDER, &settings)
        .unwrap();
    (engine, clock, user, connection.id)
}

/// (posted, pending) transaction counts over all of the user's accounts.
fn counts(db: &Database, user_id: UserId) -> (i64, i64) {
    let conn = &mut *db.conn().unwrap();
    let mut posted = 0;
    let mut all = 0;
    for account in read::list_accounts(conn, &Viewer::whole_user(user_id)).unwrap() {
        posted +=
            read::count_transactions(conn, account.id, &TransactionFilter::default()).unwrap();
        all += read::count_transactions(
            conn,
            account.id,
            &TransactionFilter {
                include_pending: true,
                ..Default::default()
            },
        )
        .unwrap();
    }
    (posted, all - posted)
}

#[test]
fn resyncing_never_duplicates_and_pending_posts_once() {
    on_every_backend(|db| {
        let (engine, clock, user, connection) = setup(db, sandbox::USER_GOOD);
        let SyncOutcome::Synced { summary: first, .. } = engine
            .sync_now(connection, SyncJobKind::Initial, "test-worker")
            .unwrap()
        else {
            panic!("first sync failed")
        };
        let (posted, pending) = counts(db, user);
        assert!(pending > 0, "the sandbox shows recent purchases as pending");
        assert_eq!(first.transactions_added as i64, posted + pending);

        clock.advance(Duration::minutes(10));
        let SyncOutcome::Synced {
            summary: second, ..
        } = engine
            .sync_now(connection, SyncJobKind::OnDemand, "test-worker")
            .unwrap()
        else {
            panic!("second sync failed")
        };
        assert_eq!(second.transactions_added, 0);
        assert_eq!(second.posted_from_pending as i64, pending);
        assert_eq!(
            counts(db, user),
            (posted + pending, 0),
            "each pending now appears once, posted"
        );

        clock.advance(Duration::minutes(10));
        let SyncOutcome::Synced { summary: third, .. } = engine
            .sync_now(connection, SyncJobKind::OnDemand, "test-worker")
            .unwrap()
        else {
            panic!("third sync failed")
        };
        assert_eq!(
            (
                third.transactions_added,
                third.transactions_updated,
                third.transactions_removed
            ),
            (0, 0, 0)
        );
        assert_eq!(counts(db, user), (posted + pending, 0));

        let conn = &mut *db.conn().unwrap();
        let jobs = sync_jobs::jobs_of_connection(conn, connection).unwrap();
        assert_eq!(jobs.len(), 3);
        assert!(
            jobs.iter()
                .all(|j| j.status == SyncJobStatus::Succeeded && j.summary.is_some())
        );
        let record = connections::get_connection(conn, connection).unwrap();
        assert_eq!(record.status, ConnectionStatus::Active);
        assert_eq!(record.last_synced_at, Some(clock.now().naive_utc()));
        // The sandbox states a day-end balance for a year of past Sundays
        // and month-ends on every sync: kept once each.
        let day_end = chrono::NaiveTime::from_hms_opt(23, 59, 59).unwrap();
        for account in read::list_accounts(conn, &Viewer::whole_user(user)).unwrap() {
            let history = read::balance_history(conn, account.id).unwrap();
            let stated: Vec<_> = history
                .iter()
                .filter(|b| b.as_of.time() == day_end)
                .collect();
            let days: std::collections::BTreeSet<_> = stated.iter().map(|b| b.as_of).collect();
            assert_eq!(stated.len(), days.len(), "each past day once");
            assert!(days.len() >= 60, "{} past days", days.len());
            assert_eq!(
                history.len() - stated.len(),
                3,
                "one current balance snapshot per sync"
            );
        }
    });
}

#[test]
fn a_new_day_brings_new_transactions_without_touching_old_ones() {
    on_every_backend(|db| {
        let (engine, clock, user, connection) = setup(db, sandbox::USER_GOOD);
        engine
            .sync_now(connection, SyncJobKind::Initial, "test-worker")
            .unwrap();
        clock.advance(Duration::minutes(5));
        engine
            .sync_now(connection, SyncJobKind::OnDemand, "test-worker")
            .unwrap();
        let before = counts(db, user);
        clock.advance(Duration::days(3));
        let SyncOutcome::Synced { summary, .. } = engine
            .sync_now(connection, SyncJobKind::Scheduled, "test-worker")
            .unwrap()
        else {
            panic!("sync failed")
        };
        assert!(summary.transactions_added > 0);
        assert_eq!(summary.transactions_removed, 0);
        let after = counts(db, user);
        assert!(after.0 + after.1 > before.0 + before.1);
    });
}

#[test]
fn provider_failures_set_the_connection_status_and_reason() {
    on_every_backend(|db| {
        for (username, status, transient) in [
            (
                sandbox::USER_REAUTH_REQUIRED,
                ConnectionStatus::ReauthRequired,
                false,
            ),
            (sandbox::USER_PROVIDER_DOWN, ConnectionStatus::Error, true),
        ] {
            let (engine, clock, user, connection) = setup(db, username);
            let outcome = engine
                .sync_now(connection, SyncJobKind::Initial, "test-worker")
                .unwrap();
            let SyncOutcome::ProviderFailed {
                error, retry_at, ..
            } = outcome
            else {
                panic!("{username} should fail")
            };
            assert_eq!(error.is_transient(), transient);
            // Transient failures go back to the queue, after the provider's
            // Retry-After (300 s) at least; credential failures do not.
            assert_eq!(retry_at.is_some(), transient, "{username}");
            if let Some(retry_at) = retry_at {
                assert!(retry_at >= (clock.now() + Duration::seconds(300)).naive_utc());
            }
            let conn = &mut *db.conn().unwrap();
            let record = connections::get_connection(conn, connection).unwrap();
            assert_eq!(record.status, status, "{username}");
            assert_eq!(record.consecutive_failures, 1);
            assert!(
                record
                    .status_reason
                    .as_deref()
                    .is_some_and(|r| !r.is_empty())
            );
            assert!(
                read::list_accounts(conn, &Viewer::whole_user(user))
                    .unwrap()
                    .is_empty()
            );
            let jobs = sync_jobs::jobs_of_connection(conn, connection).unwrap();
            assert_eq!(jobs.len(), 1);
            assert_eq!(
                jobs[0].status,
                if transient {
                    SyncJobStatus::Queued
                } else {
                    SyncJobStatus::Failed
                },
                "{username}"
            );
            assert!(jobs[0].error.is_some());
        }
    });
}

#[test]
fn bad_credentials_store_no_connection() {
    on_every_backend(|db| {
        let (engine, _clock, user) = engine_and_user(db, "bad@example.com");
        let settings = sandbox::connect_request("bad@example.com", sandbox::USER_BAD_CREDENTIALS);
        let err = engine
            .connect(user, tributary_providers::sandbox::PROVIDER, &settings)
            .unwrap_err();
        assert!(
            matches!(
                err,
                SyncError::Connect(ConnectorError::InvalidCredentials(_))
            ),
            "{err}"
        );
        assert!(
            connections::list_connections(&mut db.conn().unwrap(), Some(user))
                .unwrap()
                .is_empty()
        );
    });
}
