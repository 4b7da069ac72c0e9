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
use tributary_storage::sign_in_codes::{CodeBinding, SignInSurface};
use tributary_storage::testing::on_every_backend;

const AUTHORIZE: SignInSurface = SignInSurface::Authorize;

fn noon() -> NaiveDateTime {
    NaiveDate::from_ymd_opt(2026, 11, 21)
        .unwrap()
        .and_hms_opt(12, 0, 0)
        .unwrap()
}

/// A code for `email` asked for through `surface` from `ip` at noon.
fn send(
    conn: &mut AnyConnection,
    surface: SignInSurface,
    binding: &CodeBinding,
    email: &str,
    ip: &str,
) -> Result<String, SignInError> {
    sign_in::issue(conn, surface, binding, email, ip, noon())
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
        let code = send(&mut conn, AUTHORIZE, &first, "ana@example.com", "10.0.0.1").unwrap();
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
        let late = send(&mut conn, AUTHORIZE, &first, "ana@example.com", "10.0.0.1").unwrap();
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
        let code = send(&mut conn, AUTHORIZE, &id, "bo@example.com", "10.0.0.2").unwrap();
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

        let old = send(&mut conn, AUTHORIZE, &id, "bo@example.com", "10.0.0.2").unwrap();
        let new = send(&mut conn, AUTHORIZE, &id, "bo@example.com", "10.0.0.2").unwrap();
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
            send(&mut conn, AUTHORIZE, &id, "cy@example.com", "10.0.0.3").unwrap();
        }
        assert!(matches!(
            send(&mut conn, AUTHORIZE, &id, "cy@example.com", "10.0.0.3"),
            Err(SignInError::AddressRateLimited)
        ));
        // An hour later the address may receive codes again.
        sign_in::issue(
            &mut conn,
            AUTHORIZE,
            &id,
            "cy@example.com",
            "10.0.0.3",
            noon() + Duration::hours(1),
        )
        .unwrap();

        let ip = "192.0.2.7";
        for n in 0..MAX_SENDS_PER_IP {
            send(
                &mut conn,
                AUTHORIZE,
                &id,
                &format!("user{n}@example.com"),
                ip,
            )
            .unwrap();
        }
        assert!(matches!(
            send(&mut conn, AUTHORIZE, &id, "fresh@example.com", ip),
            Err(SignInError::IpRateLimited)
        ));
    });
}

#[test]
fn a_stranger_spends_only_their_own_budgets_never_the_persons() {
    on_every_backend(|db| {
        let mut conn = db.conn().unwrap();
        let (_, id) = session(&mut conn);
        let browser = CodeBinding::Browser("a browser's hash".to_owned());
        let (stranger, person) = ("198.51.100.66", "203.0.113.5");
        // The stranger uses up the address's budget on every surface, and
        // their own address's.
        for surface in [
            SignInSurface::Authorize,
            SignInSurface::Dashboard,
            SignInSurface::Developers,
        ] {
            for _ in 0..MAX_SENDS_PER_ADDRESS {
                send(&mut conn, surface, &id, "dee@example.com", stranger).unwrap();
            }
            assert!(matches!(
                send(&mut conn, surface, &id, "dee@example.com", stranger),
                Err(SignInError::AddressRateLimited)
            ));
        }
        for n in MAX_SENDS_PER_ADDRESS..MAX_SENDS_PER_IP {
            send(
                &mut conn,
                AUTHORIZE,
                &id,
                &format!("other{n}@example.com"),
                stranger,
            )
            .unwrap();
        }
        assert!(matches!(
            send(&mut conn, AUTHORIZE, &id, "new@example.com", stranger),
            Err(SignInError::IpRateLimited)
        ));
        // The person, from their own network, still gets codes everywhere.
        for surface in [
            SignInSurface::Authorize,
            SignInSurface::Dashboard,
            SignInSurface::Developers,
        ] {
            send(&mut conn, surface, &browser, "dee@example.com", person).unwrap();
        }
    });
}

#[test]
fn each_surface_has_budgets_of_its_own() {
    on_every_backend(|db| {
        let mut conn = db.conn().unwrap();
        let (_, id) = session(&mut conn);
        let browser = CodeBinding::Browser("the person's browser".to_owned());
        let ip = "203.0.113.9";
        // Five codes through apps' authorization pages from the person's
        // own network leave the dashboard's budget whole.
        for _ in 0..MAX_SENDS_PER_ADDRESS {
            send(&mut conn, AUTHORIZE, &id, "eve@example.com", ip).unwrap();
        }
        for _ in 0..MAX_SENDS_PER_ADDRESS {
            send(
                &mut conn,
                SignInSurface::Dashboard,
                &browser,
                "eve@example.com",
                ip,
            )
            .unwrap();
        }
        assert!(matches!(
            send(
                &mut conn,
                SignInSurface::Dashboard,
                &browser,
                "eve@example.com",
                ip
            ),
            Err(SignInError::AddressRateLimited)
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
        send(&mut conn, AUTHORIZE, &old_id, "old@example.com", "10.0.0.9").unwrap();
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
        let counted = tributary_storage::sign_in_codes::sign_in_codes_sent_since(
            &mut conn,
            AUTHORIZE,
            "old@example.com",
            "10.0.0.9",
            noon() - Duration::hours(1),
        )
        .unwrap();
        assert_eq!((counted.to_address_from_ip, counted.from_ip), (0, 0));
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

#[test]
fn the_dashboards_limits_do_not_tell_who_has_an_account() {
    on_every_backend(|db| {
        let mut conn = db.conn().unwrap();
        tributary_storage::users::create_personal_user(&mut conn, "has@example.com", noon())
            .unwrap();
        tributary_storage::developers::add(&mut conn, "has@example.com", noon()).unwrap();
        // What six requests from one IP answer: a code (or none) five
        // times, then the address's limit; the same with or without an
        // account.
        let answers =
            |conn: &mut AnyConnection, email: &str, ip: &str| -> Vec<Result<bool, String>> {
                (0..=MAX_SENDS_PER_ADDRESS)
                    .flat_map(|_| {
                        let dashboard = tributary_auth::dashboard::issue_code(
                            conn,
                            &tributary_auth::dashboard::new_browser_token(),
                            email,
                            ip,
                            noon(),
                        );
                        let developers = tributary_auth::developers::issue_code(
                            conn,
                            &tributary_auth::developers::new_browser_token(),
                            email,
                            ip,
                            tributary_auth::developers::Signup::Closed,
                            noon(),
                        );
                        [dashboard, developers]
                    })
                    .map(|answer| {
                        answer
                            .map(|code| code.is_some())
                            .map_err(|err| err.to_string())
                    })
                    .collect()
            };
        let existing = answers(&mut conn, "has@example.com", "10.1.1.1");
        let nobody = answers(&mut conn, "nobody@example.com", "10.1.1.1");
        let limited = SignInError::AddressRateLimited.to_string();
        assert_eq!(
            existing
                .iter()
                .filter(|a| **a == Err(limited.clone()))
                .count(),
            2
        );
        assert_eq!(
            existing.iter().map(Result::is_ok).collect::<Vec<_>>(),
            nobody.iter().map(Result::is_ok).collect::<Vec<_>>(),
            "the same limits: {existing:?} / {nobody:?}"
        );
        assert_eq!(
            existing.iter().filter(|a| **a == Ok(true)).count(),
            10,
            "mailed to the account"
        );
        assert!(
            nobody.iter().all(|a| *a != Ok(true)),
            "nothing mailed to nobody"
        );
    });
}
