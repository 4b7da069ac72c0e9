//! Turns between owners on both backends: an owner whose turns left the
//! queue unclaimed (retried) starts again level with the others, and a sync
//! asked for while a scheduled one waits its turn takes the waiting job out
//! of the turns.

use crate::schema::sync_jobs as jobs;
use crate::sync_jobs::{self, Enqueued};
use crate::testing::on_every_backend;
use crate::tests::{now, user_with_connection};
use crate::{AnyConnection, Database};
use chrono::Duration;
use diesel::prelude::*;
use tributary_domain::ids::{ConnectionId, SyncJobId};
use tributary_domain::model::{Provider, SyncJobKind};

const BANK: Provider = Provider::new("sandbox");

fn turn_of(conn: &mut AnyConnection, job: SyncJobId) -> Option<i64> {
    jobs::table
        .find(job.get())
        .select(jobs::turn)
        .first(conn)
        .unwrap()
}

fn scheduled(conn: &mut AnyConnection, connection: ConnectionId) -> Enqueued {
    sync_jobs::enqueue(conn, connection, SyncJobKind::Scheduled, now(), now()).unwrap()
}

#[test]
fn an_owner_whose_turns_were_retried_starts_level_with_the_others() {
    on_every_backend(|db: &Database| {
        let conn = &mut *db.conn().unwrap();
        let (busy, first) = user_with_connection(conn, "busy@example.com", BANK);
        let (_, quiet) = user_with_connection(conn, "quiet@example.com", BANK);
        let more: Vec<ConnectionId> = (0..2)
            .map(|_| crate::tests::connect(conn, busy, BANK))
            .collect();
        let busy_jobs: Vec<SyncJobId> = [first, more[0], more[1]]
            .into_iter()
            .map(|c| scheduled(conn, c).job_id)
            .collect();
        let quiet_job = scheduled(conn, quiet).job_id;
        let turns: Vec<Option<i64>> = busy_jobs.iter().map(|j| turn_of(conn, *j)).collect();
        assert_eq!(turns, [Some(0), Some(1), Some(2)]);
        assert_eq!(
            turn_of(conn, quiet_job),
            Some(0),
            "a newcomer starts where the queue is"
        );

        // Every job is claimed; the busy owner's last two fail and wait for
        // a retry (out of the turns), the rest end.
        let lease = now() + Duration::minutes(10);
        for _ in 0..4 {
            let job = sync_jobs::claim(conn, "w", now(), lease).unwrap().unwrap();
            if job.id == busy_jobs[1] || job.id == busy_jobs[2] {
                sync_jobs::retry_later(conn, &job, now() + Duration::hours(1), "down").unwrap();
            } else {
                sync_jobs::finish(
                    conn,
                    &job,
                    tributary_domain::model::SyncJobStatus::Succeeded,
                    None,
                    None,
                    now(),
                )
                .unwrap();
            }
        }
        // The next tick: the busy owner is not sent behind the turns its
        // retried jobs never used.
        let (_, later) = user_with_connection(conn, "later@example.com", BANK);
        let another = crate::tests::connect(conn, busy, BANK);
        let busy_next = scheduled(conn, another).job_id;
        let later_next = scheduled(conn, later).job_id;
        assert_eq!(turn_of(conn, busy_next), turn_of(conn, later_next));
    });
}

#[test]
fn a_sync_asked_for_takes_a_waiting_scheduled_job_out_of_the_turns() {
    on_every_backend(|db: &Database| {
        let conn = &mut *db.conn().unwrap();
        let (_, ahead) = user_with_connection(conn, "ahead@example.com", BANK);
        let (_, eager) = user_with_connection(conn, "eager@example.com", BANK);
        let ahead_job = scheduled(conn, ahead).job_id;
        let waiting = scheduled(conn, eager).job_id;
        assert!(turn_of(conn, waiting).is_some());
        let asked = sync_jobs::enqueue(conn, eager, SyncJobKind::OnDemand, now(), now()).unwrap();
        assert_eq!((asked.job_id, asked.created), (waiting, false));
        assert_eq!(turn_of(conn, waiting), None);
        let lease = now() + Duration::minutes(10);
        let first = sync_jobs::claim(conn, "w", now(), lease).unwrap().unwrap();
        assert_eq!(first.id, waiting, "ahead of {ahead_job}");
    });
}
