//! Retention on both backends: finished sync jobs beyond the newest kept
//! per connection go, failed ones after their period, queued ones never;
//! ended webhook deliveries and their events go after theirs, pending
//! ones and "once" events stay.

use crate::retention::{self, BATCH};
use crate::schema::{sync_jobs, webhook_deliveries, webhook_events};
use crate::testing::{on_every_backend, row_count};
use crate::tests::{now, user_with_connection};
use crate::webhooks::{self, AttemptOutcome, EndpointOwner, NewEndpoint};
use crate::{Database, connections};
use chrono::Duration;
use diesel::prelude::*;
use tributary_domain::model::{Provider, SyncJobKind, SyncJobStatus, WebhookEventType};
use tributary_domain::retention::Retention;

#[test]
fn finished_jobs_keep_the_newest_per_connection_and_failures_for_a_period() {
    on_every_backend(|db: &Database| {
        let conn = &mut *db.conn().unwrap();
        let (_, busy) = user_with_connection(conn, "busy@example.com", Provider::new("sandbox"));
        let (_, quiet) = user_with_connection(conn, "quiet@example.com", Provider::new("sandbox"));
        // More finished jobs than one batch, a failure, and one queued.
        let finished = BATCH + 30;
        conn.atomically(|conn| {
            for i in 0..finished {
                diesel::insert_into(sync_jobs::table)
                    .values((
                        sync_jobs::connection_id.eq(busy.get()),
                        sync_jobs::kind.eq(SyncJobKind::Scheduled.as_str()),
                        sync_jobs::status.eq(SyncJobStatus::Succeeded.as_str()),
                        sync_jobs::run_after.eq(now()),
                        sync_jobs::finished_at.eq(Some(now() + Duration::minutes(i))),
                        sync_jobs::created_at.eq(now()),
                    ))
                    .execute(conn)?;
            }
            Ok(())
        })
        .unwrap();
        diesel::insert_into(sync_jobs::table)
            .values((
                sync_jobs::connection_id.eq(busy.get()),
                sync_jobs::kind.eq(SyncJobKind::OnDemand.as_str()),
                sync_jobs::status.eq(SyncJobStatus::Failed.as_str()),
                sync_jobs::run_after.eq(now()),
                sync_jobs::finished_at.eq(Some(now())),
                sync_jobs::created_at.eq(now()),
            ))
            .execute(conn)
            .unwrap();
        crate::sync_jobs::enqueue(conn, busy, SyncJobKind::Scheduled, now(), now()).unwrap();
        crate::sync_jobs::enqueue(conn, quiet, SyncJobKind::Scheduled, now(), now()).unwrap();

        let retention = Retention::default();
        let purged = retention::purge(conn, &retention, now()).unwrap();
        assert_eq!(
            purged.sync_jobs as i64,
            finished - i64::from(retention.sync_jobs_per_connection)
        );
        let left: Vec<(String, Option<chrono::NaiveDateTime>)> = sync_jobs::table
            .filter(sync_jobs::connection_id.eq(busy.get()))
            .order(sync_jobs::id)
            .select((sync_jobs::status, sync_jobs::finished_at))
            .load(conn)
            .unwrap();
        let kept: Vec<_> = left.iter().filter(|(s, _)| s == "succeeded").collect();
        assert_eq!(kept.len() as u32, retention.sync_jobs_per_connection);
        assert_eq!(
            kept.first().unwrap().1,
            Some(now() + Duration::minutes(finished - 20)),
            "the newest are kept"
        );
        assert!(left.iter().any(|(s, _)| s == "failed"));
        assert!(left.iter().any(|(s, _)| s == "queued"));
        assert_eq!(row_count(db, "sync_jobs"), 20 + 1 + 2);

        // The failure's period over: it goes; the rest stay.
        let later = now() + Duration::days(31);
        let purged = retention::purge(conn, &retention, later).unwrap();
        assert_eq!(purged.sync_jobs, 1);
        assert_eq!(row_count(db, "sync_jobs"), 20 + 2);
    });
}

#[test]
fn ended_deliveries_and_their_events_go_after_their_period() {
    on_every_backend(|db: &Database| {
        let conn = &mut *db.conn().unwrap();
        let (user, connection) =
            user_with_connection(conn, "hooked@example.com", Provider::new("sandbox"));
        webhooks::create_endpoint(
            conn,
            &NewEndpoint {
                owner: EndpointOwner::User(user),
                url: "https://hooks.example/in",
                event_types: &[WebhookEventType::ConnectionStatusChanged],
                secret_sealed: "sealed",
                now: now(),
            },
        )
        .unwrap();
        // Two events: one delivered, one still pending.
        connections::disconnect(conn, connection, now()).unwrap();
        let lease = now() + Duration::minutes(1);
        let claimed = webhooks::claim_due(conn, now(), lease, 10).unwrap();
        let delivered = AttemptOutcome::Delivered { status: 204 };
        assert!(webhooks::record_attempt(conn, &claimed[0], &delivered, now()).unwrap());
        crate::connections::record_failure(
            conn,
            connection,
            tributary_domain::model::ConnectionStatus::Error,
            "down",
            None,
            now(),
        )
        .unwrap();
        assert_eq!(row_count(db, "webhook_events"), 2);

        let retention = Retention::default();
        let early = retention::purge(conn, &retention, now() + Duration::days(29)).unwrap();
        assert_eq!((early.deliveries, early.events), (0, 0));
        let purged = retention::purge(conn, &retention, now() + Duration::days(31)).unwrap();
        assert_eq!((purged.deliveries, purged.events), (1, 1), "{purged:?}");
        let pending: i64 = webhook_deliveries::table.count().get_result(conn).unwrap();
        assert_eq!(pending, 1, "the pending delivery stays");
        let events: i64 = webhook_events::table.count().get_result(conn).unwrap();
        assert_eq!(events, 1, "and its event");
    });
}
