//! Webhook storage on both backends: an event reaches the endpoints that
//! listen for it, a delivery a worker lost to another (its lease ran out)
//! records nothing, disabling cancels what is pending, and a consent's
//! reminders are written once each.

use crate::testing::on_every_backend;
use crate::tests::{now, user_with_connection};
use crate::webhooks::{self, AttemptOutcome, EndpointOwner, NewEndpoint};
use crate::{Database, connections};
use chrono::Duration;
use tributary_domain::model::{Provider, WebhookEventType};

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
        let (user, connection) = user_with_connection(conn, "hooks@example.com", Provider::Sandbox);
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
            user_with_connection(conn, "consent@example.com", Provider::Sandbox);
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
