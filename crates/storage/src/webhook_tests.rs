//! Webhook storage on both backends: an event reaches the endpoints that
//! listen for it, a delivery a worker lost to another (its lease ran out)
//! records nothing, disabling cancels what is pending, and a consent's
//! reminders are written once each; and the mail notices beside them.

use crate::notices::{self, NoticeOutcome, Recipient};
use crate::testing::on_every_backend;
use crate::tests::{now, user_with_connection};
use crate::webhooks::{self, AttemptOutcome, EndpointOwner, NewEndpoint};
use crate::{Database, connections};
use chrono::Duration;
use tributary_domain::model::{Provider, WebhookEventType};
use tributary_domain::notice::{Notice, ReminderStage};

fn endpoint(conn: &mut crate::AnyConnection, owner: EndpointOwner, types: &[WebhookEventType]) {
    webhooks::create_endpoint(
        conn,
        &NewEndpoint {
            owner,
            url: "https://hooks.example/in",
            event_types: types,
            secret_sealed: "sealed",
            now: now(),
        },
    )
    .unwrap();
}

#[test]
fn deliveries_are_fenced_by_their_lease_and_cancelled_with_their_endpoint() {
    on_every_backend(|db: &Database| {
        let conn = &mut *db.conn().unwrap();
        let (user, connection) =
            user_with_connection(conn, "hooks@example.com", Provider::new("sandbox"));
        let owner = EndpointOwner::User(user);
        endpoint(conn, owner, &[WebhookEventType::ConnectionStatusChanged]);
        endpoint(conn, owner, &[WebhookEventType::SyncFailed]);
        // A status change reaches the first endpoint only.
        connections::disconnect(conn, connection, now()).unwrap();
        let lease = now() + Duration::minutes(1);
        let first = webhooks::claim_due(conn, now(), lease, 10).unwrap();
        assert_eq!(first.len(), 1);
        assert_eq!(
            first[0].endpoint.event_types,
            [WebhookEventType::ConnectionStatusChanged]
        );
        assert!(
            first[0].payload.contains(r#""new_status":"DISCONNECTED""#),
            "{}",
            first[0].payload
        );
        // Held: nobody else gets it before the lease ends.
        assert!(
            webhooks::claim_due(conn, now(), lease, 10)
                .unwrap()
                .is_empty()
        );
        // The lease ends; another worker takes it, the first records nothing.
        let later = lease + Duration::seconds(1);
        let second = webhooks::claim_due(conn, later, later + Duration::minutes(1), 10).unwrap();
        assert_eq!((second.len(), second[0].attempts), (1, 2));
        assert_eq!(second[0].message_id, first[0].message_id);
        let delivered = AttemptOutcome::Delivered { status: 204 };
        assert!(!webhooks::record_attempt(conn, &first[0], &delivered, later).unwrap());
        let retry = AttemptOutcome::Retry {
            at: later + Duration::minutes(5),
            status: Some(500),
            error: "answered 500".into(),
        };
        assert!(webhooks::record_attempt(conn, &second[0], &retry, later).unwrap());
        let endpoint_id = second[0].endpoint.id;
        assert!(
            webhooks::get_endpoint(conn, endpoint_id)
                .unwrap()
                .failing_since
                .is_some()
        );
        // Disabled: the pending retry is cancelled and nothing more is due.
        webhooks::set_enabled(conn, owner, endpoint_id, Some("by hand"), later).unwrap();
        let log = webhooks::delivery_log(conn, endpoint_id, 10).unwrap();
        assert_eq!(log[0].status.as_str(), "cancelled");
        assert!(
            webhooks::claim_due(
                conn,
                later + Duration::days(1),
                later + Duration::days(2),
                10
            )
            .unwrap()
            .is_empty()
        );
    });
}

#[test]
fn a_consents_reminders_are_written_once_each_a_week_and_a_day_before() {
    on_every_backend(|db: &Database| {
        let conn = &mut *db.conn().unwrap();
        let (user, connection) =
            user_with_connection(conn, "consent@example.com", Provider::new("sandbox"));
        endpoint(
            conn,
            EndpointOwner::User(user),
            &[WebhookEventType::ConnectionConsentExpiring],
        );
        let expires = now() + Duration::days(10);
        crate::testing::set_consent_expiry(conn, connection, expires);
        assert_eq!(
            connections::announce_expiring_consents(conn, now()).unwrap(),
            0
        );
        let week_before = expires - Duration::days(6);
        assert_eq!(
            connections::announce_expiring_consents(conn, week_before).unwrap(),
            1
        );
        assert_eq!(
            connections::announce_expiring_consents(conn, week_before).unwrap(),
            0
        );
        let day_before = expires - Duration::hours(20);
        assert_eq!(
            connections::announce_expiring_consents(conn, day_before).unwrap(),
            1
        );
        assert_eq!(
            connections::announce_expiring_consents(conn, day_before).unwrap(),
            0
        );
        let due =
            webhooks::claim_due(conn, day_before, day_before + Duration::minutes(1), 10).unwrap();
        let notices: Vec<bool> = due
            .iter()
            .map(|d| d.payload.contains(r#""notice":"1d""#))
            .collect();
        assert_eq!(notices.len(), 2);
        assert_eq!(notices.iter().filter(|n| **n).count(), 1);
    });
}

/// The notices waiting to be mailed at `at`: (address, notice).
fn mail_due(conn: &mut crate::AnyConnection, at: chrono::NaiveDateTime) -> Vec<(String, Notice)> {
    notices::claim_due(conn, at, at + Duration::minutes(1), 10)
        .unwrap()
        .into_iter()
        .map(|n| (n.to, n.notice))
        .collect()
}

#[test]
fn a_consents_reminders_are_mailed_once_each_with_or_without_a_webhook() {
    on_every_backend(|db: &Database| {
        let conn = &mut *db.conn().unwrap();
        let (_, connection) =
            user_with_connection(conn, "mailed@example.com", Provider::new("sandbox"));
        let expires = now() + Duration::days(10);
        crate::testing::set_consent_expiry(conn, connection, expires);
        let week_before = expires - Duration::days(6);
        for _ in 0..2 {
            connections::announce_expiring_consents(conn, week_before).unwrap();
        }
        let due = mail_due(conn, week_before);
        assert_eq!(due.len(), 1, "once, though no endpoint listens: {due:?}");
        assert_eq!(due[0].0, "mailed@example.com");
        assert!(matches!(
            &due[0].1,
            Notice::ConsentExpiring { connection_id, expires_at, stage: ReminderStage::WeekBefore, institution }
                if *connection_id == connection && *expires_at == expires && !institution.is_empty()
        ));
        // Sent a day later: done, and the same reminder is not written again.
        let claimed = notices::claim_due(
            conn,
            week_before + Duration::minutes(2),
            week_before + Duration::minutes(3),
            10,
        )
        .unwrap();
        assert_eq!(claimed.len(), 1, "the lease ran out: claimed again");
        assert_eq!(claimed[0].attempts, 2);
        assert!(
            notices::record_outcome(conn, &claimed[0], &NoticeOutcome::Sent, week_before).unwrap()
        );
        connections::announce_expiring_consents(conn, week_before + Duration::hours(1)).unwrap();
        assert!(mail_due(conn, week_before + Duration::hours(2)).is_empty());
        let day_before = expires - Duration::hours(20);
        connections::announce_expiring_consents(conn, day_before).unwrap();
        let due = mail_due(conn, day_before);
        assert!(
            matches!(
                &due[..],
                [(
                    _,
                    Notice::ConsentExpiring {
                        stage: ReminderStage::DayBefore,
                        ..
                    }
                )]
            ),
            "{due:?}"
        );
        // Kept while a reminder could repeat, then purged.
        assert_eq!(notices::purge_done(conn, week_before).unwrap(), 0);
        assert_eq!(
            notices::purge_done(conn, week_before + notices::DONE_KEPT).unwrap(),
            1
        );
    });
}

#[test]
fn a_notice_lost_to_another_worker_records_nothing_and_retries_wait() {
    on_every_backend(|db: &Database| {
        let conn = &mut *db.conn().unwrap();
        let (user, _) = user_with_connection(conn, "lease@example.com", Provider::new("sandbox"));
        let notice = Notice::EndpointDisabled {
            endpoint_id: tributary_domain::ids::WebhookEndpointId::new(1),
            url: "https://hooks.example/in".into(),
            reason: "answered 410".into(),
        };
        assert!(notices::record(conn, Recipient::User(user), &notice, None, now()).unwrap());
        let lease = now() + Duration::minutes(1);
        let first = notices::claim_due(conn, now(), lease, 10).unwrap();
        assert!(
            notices::claim_due(conn, now(), lease, 10)
                .unwrap()
                .is_empty()
        );
        let later = lease + Duration::seconds(1);
        let second = notices::claim_due(conn, later, later + Duration::minutes(1), 10).unwrap();
        assert!(!notices::record_outcome(conn, &first[0], &NoticeOutcome::Sent, later).unwrap());
        let retry = NoticeOutcome::Retry {
            at: later + Duration::minutes(5),
            error: "the SMTP server refused".into(),
        };
        assert!(notices::record_outcome(conn, &second[0], &retry, later).unwrap());
        assert!(mail_due(conn, later + Duration::minutes(4)).is_empty());
        assert_eq!(mail_due(conn, later + Duration::minutes(5)).len(), 1);
        // Erasing the user takes their notices with them.
        crate::apps::delete_user(conn, user).unwrap();
        assert!(mail_due(conn, later + Duration::days(1)).is_empty());
    });
}

#[test]
fn a_disabled_endpoints_owner_is_told_a_user_or_the_apps_developer() {
    on_every_backend(|db: &Database| {
        let conn = &mut *db.conn().unwrap();
        let (user, connection) =
            user_with_connection(conn, "owner@example.com", Provider::new("sandbox"));
        let owned = crate::tests::app_named(conn, "owned-app");
        let operators = crate::tests::app_named(conn, "operators-app");
        let (developer, _) = crate::developers::add(conn, "dev@example.com", now()).unwrap();
        crate::developers::set_owner(conn, owned.id, developer.id).unwrap();
        for owner in [
            EndpointOwner::User(user),
            EndpointOwner::App(owned.id),
            EndpointOwner::App(operators.id),
        ] {
            endpoint(conn, owner, &[WebhookEventType::ConnectionStatusChanged]);
        }
        // Each endpoint hears of one disconnection: the Personal user's, and
        // one of each app's users.
        let mut disconnected = vec![connection];
        for (app, email) in [
            (owned.id, "owned@example.com"),
            (operators.id, "op@example.com"),
        ] {
            let (app_user, _) = crate::apps::create_or_get_app_user(
                conn,
                &crate::apps::NewAppUser {
                    app_id: app,
                    email,
                    public_id: &format!("usr_{}", app.get()),
                    external_user_id: None,
                    max_accounts: None,
                    now: now(),
                },
            )
            .unwrap();
            disconnected.push(crate::tests::connect(
                conn,
                app_user.id,
                Provider::new("sandbox"),
            ));
        }
        for connection in disconnected {
            connections::disconnect(conn, connection, now()).unwrap();
        }
        let claimed = webhooks::claim_due(conn, now(), now() + Duration::minutes(1), 10).unwrap();
        assert_eq!(claimed.len(), 3, "{claimed:?}");
        for delivery in &claimed {
            let gone = AttemptOutcome::DisableEndpoint {
                status: Some(410),
                error: "answered 410".into(),
                reason: "the receiver answered 410 Gone".into(),
            };
            assert!(webhooks::record_attempt(conn, delivery, &gone, now()).unwrap());
        }
        let mut told: Vec<String> = mail_due(conn, now())
            .into_iter()
            .map(|(to, notice)| {
                assert!(
                    matches!(&notice, Notice::EndpointDisabled { url, reason, .. }
                        if url == "https://hooks.example/in" && reason.contains("410")),
                    "{notice:?}"
                );
                to
            })
            .collect();
        told.sort();
        assert_eq!(told, ["dev@example.com", "owner@example.com"]);
    });
}
