//! Sign-in codes and browser sessions over real databases (SQLite and
//! PostgreSQL): lifetimes, attempts, send limits, binding to one session.

// Test code: a failed unwrap is a failed test, with its message.
#![allow(clippy::unwrap_used)]

use chrono::{Duration, NaiveDate, NaiveDateTime};
use tributary_auth::sign_in::{self, MAX_SENDS_PER_ADDRESS, MAX_SENDS_PER_IP, SignInError};
use tributary_auth::web_session::{self, AuthorizationRequest};
use tributary_domain::model::BillingModel;
use tributary_storage::AnyConnection;
use tributary_storage::apps::{self, NewApp};
use tributary_storage::sign_in_codes::CodeBinding;
use tributary_storage::testing::on_every_backend;

fn noon() -> NaiveDateTime {
    NaiveDate::from_ymd_opt(2026, 11, 21)
        .unwrap()
        .and_hms_opt(12, 0, 0)
        .unwrap()
}

/// A new app and an authorization session of it: (cookie token, what its
/// codes are bound to).
fn session(conn: &mut AnyConnection) -> (String, CodeBinding) {
    let app = apps::create_app(
        conn,
        &NewApp {
            client_id: &tributary_auth::oauth::new_client_id(),
            name: "app",
            client_secret_hash: None,
            billing_model: BillingModel::Integrator,
            default_max_accounts: None,
            redirect_uris: &["https://app.example/cb".to_owned()],
            now: noon(),
        },
    )
    .unwrap();
    let token = web_session::start_authorization(
        conn,
        app.id,
        &AuthorizationRequest {
            redirect_uri: "https://app.example/cb",
            state: Some("s"),
            ip: "10.9.9.9",
            ..AuthorizationRequest::default()
        },
        noon(),
    )
    .unwrap();
    let id = web_session::find(conn, &token, noon()).unwrap().unwrap().id;
    (token, CodeBinding::WebSession(id))
}

#[test]
fn a_code_signs_in_once_within_ten_minutes_in_its_own_session() {
    on_every_backend(|db| {
        let mut conn = db.conn().unwrap();
        let (_, first) = session(&mut conn);
        let (_, second) = session(&mut conn);
        let code =
            sign_in::issue(&mut conn, &first, "ana@example.com", "10.0.0.1", noon()).unwrap();
        assert_eq!(code.len(), 6);
        assert!(code.chars().all(|c| c.is_ascii_digit()));

        // The code of one session does nothing in another.
        assert!(matches!(
            sign_in::verify(&mut conn, &second, &code, noon()),
            Err(SignInError::NoCode)
        ));
        // Spaces a person types are ignored; the code works once.
        let spaced = format!("{} {}", &code[..3], &code[3..]);
        let email =
            sign_in::verify(&mut conn, &first, &spaced, noon() + Duration::minutes(9)).unwrap();
        assert_eq!(email, "ana@example.com");
        assert!(matches!(
            sign_in::verify(&mut conn, &first, &code, noon() + Duration::minutes(9)),
            Err(SignInError::Expired)
        ));

        // Ten minutes later a code no longer works.
        let late =
            sign_in::issue(&mut conn, &first, "ana@example.com", "10.0.0.1", noon()).unwrap();
        assert!(matches!(
            sign_in::verify(&mut conn, &first, &late, noon() + Duration::minutes(10)),
            Err(SignInError::Expired)
        ));
    });
}

#[test]
fn five_wrong_attempts_void_the_code_and_a_new_code_voids_the_old_one() {
    on_every_backend(|db| {
        let mut conn = db.conn().unwrap();
        let (_, id) = session(&mut conn);
        let code = sign_in::issue(&mut conn, &id, "bo@example.com", "10.0.0.2", noon()).unwrap();
        let wrong = if code == "000000" { "000001" } else { "000000" };
        for remaining in (1..=4).rev() {
            match sign_in::verify(&mut conn, &id, wrong, noon()) {
                Err(SignInError::Wrong { remaining: left }) => assert_eq!(left, remaining),
                other => panic!("expected Wrong, got {other:?}"),
            }
        }
        assert!(matches!(
            sign_in::verify(&mut conn, &id, wrong, noon()),
            Err(SignInError::TooManyAttempts)
        ));
        assert!(matches!(
            sign_in::verify(&mut conn, &id, &code, noon()),
            Err(SignInError::TooManyAttempts)
        ));

        let old = sign_in::issue(&mut conn, &id, "bo@example.com", "10.0.0.2", noon()).unwrap();
        let new = sign_in::issue(&mut conn, &id, "bo@example.com", "10.0.0.2", noon()).unwrap();
        if old != new {
            assert!(
                sign_in::verify(&mut conn, &id, &old, noon()).is_err(),
                "the older code is void"
            );
        }
        assert_eq!(
            sign_in::verify(&mut conn, &id, &new, noon()).unwrap(),
            "bo@example.com"
        );
    });
}

#[test]
fn sends_are_limited_per_address_and_per_ip_for_an_hour() {
    on_every_backend(|db| {
        let mut conn = db.conn().unwrap();
        let (_, id) = session(&mut conn);
        for _ in 0..MAX_SENDS_PER_ADDRESS {
            sign_in::issue(&mut conn, &id, "cy@example.com", "10.0.0.3", noon()).unwrap();
        }
        assert!(matches!(
            sign_in::issue(&mut conn, &id, "cy@example.com", "10.0.0.4", noon()),
            Err(SignInError::AddressRateLimited)
        ));
        // An hour later the address may receive codes again.
        sign_in::issue(
            &mut conn,
            &id,
            "cy@example.com",
            "10.0.0.4",
            noon() + Duration::hours(1),
        )
        .unwrap();

        let ip = "192.0.2.7";
        for n in 0..MAX_SENDS_PER_IP {
            sign_in::issue(&mut conn, &id, &format!("user{n}@example.com"), ip, noon()).unwrap();
        }
        assert!(matches!(
            sign_in::issue(&mut conn, &id, "fresh@example.com", ip, noon()),
            Err(SignInError::IpRateLimited)
        ));
    });
}

#[test]
fn sessions_end_after_an_hour_and_only_their_token_opens_them() {
    on_every_backend(|db| {
        let mut conn = db.conn().unwrap();
        let (token, id) = session(&mut conn);
        let found = web_session::find(&mut conn, &token, noon() + Duration::minutes(59)).unwrap();
        assert_eq!(found.map(|s| CodeBinding::WebSession(s.id)), Some(id));
        assert!(
            web_session::find(&mut conn, &token, noon() + Duration::hours(1))
                .unwrap()
                .is_none()
        );
        // The same token with its last character changed (to another one).
        let (head, last) = token.split_at(token.len() - 1);
        let forged = format!("{head}{}", if last == "A" { "B" } else { "A" });
        assert_ne!(forged, token);
        assert!(
            web_session::find(&mut conn, &forged, noon())
                .unwrap()
                .is_none()
        );
        assert!(
            web_session::find(&mut conn, "not-a-token", noon())
                .unwrap()
                .is_none()
        );
    });
}

#[test]
fn starting_a_session_purges_ended_sessions_and_day_old_codes() {
    on_every_backend(|db| {
        let mut conn = db.conn().unwrap();
        let (old_token, old_id) = session(&mut conn);
        sign_in::issue(&mut conn, &old_id, "old@example.com", "10.0.0.9", noon()).unwrap();
        // A day and a bit later another session starts.
        let later = noon() + Duration::hours(25);
        let app_id = web_session::find(&mut conn, &old_token, noon())
            .unwrap()
            .unwrap()
            .app_id;
        web_session::start_authorization(
            &mut conn,
            app_id,
            &AuthorizationRequest {
                redirect_uri: "https://app.example/cb",
                ip: "10.9.9.9",
                ..AuthorizationRequest::default()
            },
            later,
        )
        .unwrap();
        assert!(
            web_session::find(&mut conn, &old_token, noon())
                .unwrap()
                .is_none(),
            "the ended session is gone"
        );
        // The code went with it (as counted by the send limit over any window).
        let (to_address, _) = tributary_storage::sign_in_codes::sign_in_codes_sent_since(
            &mut conn,
            "old@example.com",
            "x",
            noon() - Duration::hours(1),
        )
        .unwrap();
        assert_eq!(to_address, 0);
    });
}

#[test]
fn one_ip_address_may_start_only_so_many_authorizations_an_hour() {
    on_every_backend(|db| {
        let mut conn = db.conn().unwrap();
        let (token, _) = session(&mut conn);
        let app_id = web_session::find(&mut conn, &token, noon())
            .unwrap()
            .unwrap()
            .app_id;
        let start = |conn: &mut AnyConnection, ip: &str, at: NaiveDateTime| {
            web_session::start_authorization(
                conn,
                app_id,
                &AuthorizationRequest {
                    redirect_uri: "https://app.example/cb",
                    ip,
                    ..AuthorizationRequest::default()
                },
                at,
            )
        };
        // `session` started one from 10.9.9.9 already.
        for _ in 1..web_session::MAX_STARTS_PER_IP {
            start(&mut conn, "10.9.9.9", noon()).unwrap();
        }
        assert!(matches!(
            start(&mut conn, "10.9.9.9", noon()),
            Err(web_session::StartError::RateLimited)
        ));
        start(&mut conn, "10.9.9.10", noon()).unwrap();
        start(&mut conn, "10.9.9.9", noon() + Duration::hours(1)).unwrap();
    });
}
