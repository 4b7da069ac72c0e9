//! Provider limits on both backends: the concurrency cap counts running
//! admitted syncs only, the rate counts admissions in a sliding window, and
//! a held-back job goes back to the queue for the moment it may run,
//! without spending an attempt.

use crate::provider_limits::{Admission, FULL_RETRY, admit_or_defer, release};
use crate::sync_jobs::{self, ClaimedJob};
use crate::testing::on_every_backend;
use crate::tests::{now, user_with_connection};
use crate::{AnyConnection, Database};
use chrono::{Duration, NaiveDateTime};
use tributary_domain::model::{Provider, SyncJobKind, SyncJobStatus};
use tributary_domain::provider_limits::{ProviderLimits, Rate};

const BANK: Provider = Provider::new("sandbox");

/// A job of a new connection of `BANK`, queued and claimed at `at`.
fn claimed(conn: &mut AnyConnection, n: usize, at: NaiveDateTime) -> ClaimedJob {
    let (_, connection) = user_with_connection(conn, &format!("limits{n}@example.com"), BANK);
    let job = sync_jobs::enqueue(conn, connection, SyncJobKind::OnDemand, at, at)
        .unwrap()
        .job_id;
    sync_jobs::claim_job(conn, job, "worker", at, at + Duration::minutes(10))
        .unwrap()
        .unwrap()
}

#[test]
fn at_most_k_run_at_once_and_a_held_back_job_waits_without_spending_an_attempt() {
    on_every_backend(|db: &Database| {
        let conn = &mut *db.conn().unwrap();
        let limits = ProviderLimits {
            concurrent: Some(2),
            rate: None,
        };
        let t = now();
        let first = claimed(conn, 0, t);
        let second = claimed(conn, 1, t);
        let third = claimed(conn, 2, t);
        for job in [&first, &second] {
            assert!(matches!(
                admit_or_defer(conn, job, BANK, &limits, t).unwrap(),
                Admission::Admitted(_)
            ));
        }
        assert_eq!(
            admit_or_defer(conn, &third, BANK, &limits, t).unwrap(),
            Admission::Deferred {
                until: t + FULL_RETRY
            }
        );
        let waiting = sync_jobs::get_job(conn, third.id).unwrap();
        assert_eq!(waiting.status, SyncJobStatus::Queued);
        assert_eq!(waiting.run_after, t + FULL_RETRY);
        assert_eq!(waiting.attempts, 0, "held back: no attempt spent");
        // Another provider is not held back by this one's syncs.
        let other = Provider::new("simplefin");
        let elsewhere = claimed(conn, 3, t);
        assert!(matches!(
            admit_or_defer(conn, &elsewhere, other, &limits, t).unwrap(),
            Admission::Admitted(_)
        ));

        // One ends: its place is free, and the waiting job, claimed again
        // once due, takes it.
        sync_jobs::finish(conn, &first, SyncJobStatus::Succeeded, None, None, t).unwrap();
        let later = t + FULL_RETRY;
        let third = sync_jobs::claim_job(
            conn,
            third.id,
            "worker",
            later,
            later + Duration::minutes(30),
        )
        .unwrap()
        .unwrap();
        assert_eq!(third.attempts, 1);
        assert!(matches!(
            admit_or_defer(conn, &third, BANK, &limits, later).unwrap(),
            Admission::Admitted(_)
        ));
        // A sync whose worker died (lease expired) holds no place.
        let after_lease = t + Duration::minutes(11);
        let fourth = claimed(conn, 4, after_lease);
        let fifth = claimed(conn, 5, after_lease);
        assert!(
            matches!(
                admit_or_defer(conn, &fourth, BANK, &limits, after_lease).unwrap(),
                Admission::Admitted(_)
            ),
            "second's lease ran out: only third still runs"
        );
        assert!(matches!(
            admit_or_defer(conn, &fifth, BANK, &limits, after_lease).unwrap(),
            Admission::Deferred { .. }
        ));
    });
}

#[test]
fn at_most_r_start_in_any_period_and_the_next_waits_for_the_oldest_to_leave() {
    on_every_backend(|db: &Database| {
        let conn = &mut *db.conn().unwrap();
        let limits = ProviderLimits {
            concurrent: None,
            rate: Some(Rate {
                syncs: 3,
                per: std::time::Duration::from_secs(60),
            }),
        };
        let t = now();
        // Three admitted at t, t+10 s, t+20 s (each finished at once).
        for n in 0..3 {
            let at = t + Duration::seconds(10 * n);
            let job = claimed(conn, usize::try_from(n).unwrap(), at);
            assert!(matches!(
                admit_or_defer(conn, &job, BANK, &limits, at).unwrap(),
                Admission::Admitted(_)
            ));
            sync_jobs::finish(conn, &job, SyncJobStatus::Succeeded, None, None, at).unwrap();
        }
        // The fourth, at t+30 s, waits until the first leaves the window;
        // the fifth, behind it, one share of the rate later (60 s / 3).
        let at = t + Duration::seconds(30);
        let fourth = claimed(conn, 3, at);
        assert_eq!(
            admit_or_defer(conn, &fourth, BANK, &limits, at).unwrap(),
            Admission::Deferred {
                until: t + Duration::seconds(60)
            }
        );
        let fifth = claimed(conn, 4, at);
        assert_eq!(
            admit_or_defer(conn, &fifth, BANK, &limits, at).unwrap(),
            Admission::Deferred {
                until: t + Duration::seconds(80)
            }
        );
        let at = t + Duration::seconds(60);
        let fourth =
            sync_jobs::claim_job(conn, fourth.id, "worker", at, at + Duration::minutes(10))
                .unwrap()
                .unwrap();
        assert!(matches!(
            admit_or_defer(conn, &fourth, BANK, &limits, at).unwrap(),
            Admission::Admitted(_)
        ));
        // Now t+10, t+20 and t+60 fill the window: a newcomer could go at
        // t+70, but waits behind the fifth, for the slot after it.
        let sixth = claimed(conn, 5, at);
        assert_eq!(
            admit_or_defer(conn, &sixth, BANK, &limits, at).unwrap(),
            Admission::Deferred {
                until: t + Duration::seconds(100)
            }
        );
        // An admission given back (the sync was not sent) frees its place.
        let at = t + Duration::seconds(80);
        let fifth = sync_jobs::claim_job(conn, fifth.id, "worker", at, at + Duration::minutes(10))
            .unwrap()
            .unwrap();
        let Admission::Admitted(admission) =
            admit_or_defer(conn, &fifth, BANK, &limits, at).unwrap()
        else {
            panic!("the fifth's slot came");
        };
        // With another let through, t+60 and twice t+80 fill the window.
        let filler = claimed(conn, 6, at);
        assert!(matches!(
            admit_or_defer(conn, &filler, BANK, &limits, at).unwrap(),
            Admission::Admitted(_)
        ));
        release(conn, admission).unwrap();
        let seventh = claimed(conn, 7, at);
        assert!(matches!(
            admit_or_defer(conn, &seventh, BANK, &limits, at).unwrap(),
            Admission::Admitted(_)
        ));
    });
}
