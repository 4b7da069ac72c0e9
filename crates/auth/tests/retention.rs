//! OAuth tokens, codes and portal links past their retention are purged,
//! on SQLite and PostgreSQL: after 10,000 refreshes and the retention
//! period, the token table holds only the family still in use, a revoked
//! family is gone, and so are a stale code and portal link.

// Test code: a failed unwrap is a failed test, with its message.
#![allow(clippy::unwrap_used)]

use chrono::{Duration, NaiveDate, NaiveDateTime};
use diesel::prelude::*;
use tributary_auth::oauth::{self, issue_pair, new_family};
use tributary_domain::model::BillingModel;
use tributary_domain::retention::Retention;
use tributary_storage::apps::{self, NewApp};
use tributary_storage::retention;
use tributary_storage::schema::oauth_tokens;
use tributary_storage::testing::on_every_backend;
use tributary_storage::users;

fn start() -> NaiveDateTime {
    NaiveDate::from_ymd_opt(2026, 1, 1)
        .unwrap()
        .and_hms_opt(0, 0, 0)
        .unwrap()
}

const REFRESHES: i64 = 10_000;

#[test]
fn after_ten_thousand_refreshes_and_the_retention_only_the_live_family_is_left() {
    on_every_backend(|db| {
        let conn = &mut *db.conn().unwrap();
        let app = apps::create_app(
            conn,
            &NewApp {
                client_id: &oauth::new_client_id(),
                name: "app",
                client_secret_hash: None,
                billing_model: BillingModel::Integrator,
                default_max_accounts: None,
                redirect_uris: &["https://app.example/cb".to_owned()],
                now: start(),
            },
        )
        .unwrap();
        let user = users::create_personal_user(conn, "rotating@example.com", start()).unwrap();
        let live = new_family();
        let mut pair = issue_pair(conn, (app.id, user.id, None), &live, start()).unwrap();
        // Another family, revoked on the first day.
        let revoked = new_family();
        let gone = issue_pair(conn, (app.id, user.id, None), &revoked, start()).unwrap();
        oauth::revoke(conn, &app, &gone.refresh_token, start()).unwrap();

        // A code never redeemed and a portal link never opened.
        let challenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";
        oauth::issue_code(
            conn,
            &app,
            (user.id, None),
            "https://app.example/cb",
            Some((challenge, "S256")),
            start(),
        )
        .unwrap();
        oauth::create_portal_session(conn, app.id, user.id, start()).unwrap();

        let mut now = start();
        for _ in 0..REFRESHES {
            now += Duration::minutes(1);
            pair = oauth::refresh(conn, &app, &pair.refresh_token, now).unwrap();
        }
        let rows =
            |conn: &mut tributary_storage::AnyConnection| -> Vec<(String, Option<NaiveDateTime>)> {
                oauth_tokens::table
                    .select((oauth_tokens::family, oauth_tokens::used_at))
                    .load(conn)
                    .unwrap()
            };
        assert_eq!(rows(conn).len() as i64, 2 * (REFRESHES + 2));

        // Nothing is past the retention yet: a purge now keeps every row.
        let retention_period = Retention::default();
        let purged = retention::purge(conn, &retention_period, now).unwrap();
        assert_eq!(purged.total(), 0, "{purged:?}");

        // The retention period after the last access token expired, the
        // app refreshes once more.
        let kept = Duration::from_std(retention_period.credentials).unwrap();
        now += oauth::ACCESS_TOKEN_TTL + kept + Duration::minutes(1);
        let live_pair = oauth::refresh(conn, &app, &pair.refresh_token, now).unwrap();
        let purged = retention::purge(conn, &retention_period, now).unwrap();
        let left = rows(conn);
        assert!(
            left.iter().all(|(family, _)| *family == live),
            "only the live family: {left:?}"
        );
        // Its new pair, and the refresh token just used (a replay of it
        // within the retention revokes the family).
        assert_eq!(left.len(), 3, "{left:?}");
        assert_eq!(purged.tokens as i64, 2 * (REFRESHES + 2) - 1);
        assert_eq!((purged.codes, purged.portal_links), (1, 1), "{purged:?}");
        let replayed = oauth::refresh(conn, &app, &pair.refresh_token, now);
        assert!(replayed.is_err());
        assert!(
            oauth::refresh(conn, &app, &live_pair.refresh_token, now).is_err(),
            "the replay revoked the family"
        );
    });
}
