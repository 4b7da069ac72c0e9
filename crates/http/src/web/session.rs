//! The session behind the cookie, loaded for each page, and its CSRF check.

use super::header::Header;
use super::page::PageError;
use super::visitor::{Detour, Visitor};
use crate::state::AppState;
use actix_web::cookie::{Cookie, SameSite};
use actix_web::http::StatusCode;
use actix_web::{HttpRequest, web};
use tributary_auth::web_session;
use tributary_domain::ids::ConnectionId;
use tributary_domain::model::{BillingModel, WebSessionPurpose};
use tributary_storage::AnyConnection;
use tributary_storage::apps::{self, AppRecord};
use tributary_storage::users::{self, UserRecord};
use tributary_storage::web_sessions::WebSessionRecord;

pub const SESSION_COOKIE: &str = "tributary_session";

/// The cookie naming a new session: HttpOnly, SameSite=Lax, Secure when the
/// public URL is https, for the whole site, expiring when the session does
/// (the browser forgets it then, instead of sending a dead token).
pub(super) fn cookie(state: &AppState, token: String) -> Cookie<'static> {
    token_cookie(
        state,
        SESSION_COOKIE,
        "/",
        web_session::WEB_SESSION_TTL,
        token,
    )
}

/// How every page cookie is made: `name` holding `token` for the pages
/// under `path`, HttpOnly, SameSite=Lax (a sign-in link or the flow's
/// first page is opened from elsewhere), Secure behind https, kept for
/// `lifetime`.
pub(super) fn token_cookie(
    state: &AppState,
    name: &'static str,
    path: &'static str,
    lifetime: chrono::Duration,
    token: String,
) -> Cookie<'static> {
    Cookie::build(name, token)
        .path(path)
        .http_only(true)
        .same_site(SameSite::Lax)
        .secure(state.serves_tls())
        .max_age(actix_web::cookie::time::Duration::seconds(
            lifetime.num_seconds(),
        ))
        .finish()
}

/// A cookie that removes the session cookie.
pub(super) fn removal(state: &AppState) -> Cookie<'static> {
    let mut cookie = cookie(state, String::new());
    cookie.make_removal();
    cookie
}

/// A form whose only field is the CSRF token (a button).
#[derive(Debug, serde::Deserialize)]
pub(super) struct CsrfForm {
    pub csrf: String,
}

/// The request's session, with its app and (once signed in) its user.
#[derive(Debug, Clone)]
pub(super) struct Session {
    /// The cookie's value: the CSRF token derives from it.
    token: String,
    pub record: WebSessionRecord,
    pub app: AppRecord,
    pub user: Option<UserRecord>,
}

impl Session {
    pub fn csrf(&self) -> String {
        web_session::csrf_token(&self.token)
    }

    /// Refuses a form whose CSRF token is not this session's.
    pub fn check_csrf(&self, presented: &str) -> Result<(), PageError> {
        if web_session::csrf_matches(&self.token, presented) {
            Ok(())
        } else {
            Err(PageError::forged())
        }
    }

    /// The signed-in user, or the "session ended" page.
    pub fn user(&self) -> Result<&UserRecord, PageError> {
        self.user.as_ref().ok_or_else(PageError::session_ended)
    }

    pub fn is_portal(&self) -> bool {
        self.record.purpose == WebSessionPurpose::Portal
    }

    /// The app the person is here for, as the pages' header names it.
    pub fn header(&self) -> Header {
        Header::App {
            app_name: self.app.name.clone(),
        }
    }

    /// Where this session's pages start: the portal, or the step of the
    /// authorization flow the person is at.
    pub fn home(&self) -> &'static str {
        if self.is_portal() {
            "/portal"
        } else if self.user.is_none() {
            "/connect/sign-in"
        } else {
            next_step(self).path()
        }
    }
}

/// Loads the session named by the request's cookie.
pub(super) async fn load(
    req: &HttpRequest,
    state: &web::Data<AppState>,
) -> Result<Session, PageError> {
    let token = req
        .cookie(SESSION_COOKIE)
        .map(|c| c.value().to_owned())
        .ok_or_else(PageError::session_ended)?;
    let db = state.db.clone();
    let now = state.clock.now().naive_utc();
    web::block(move || -> Result<Session, PageError> {
        let mut conn = db.conn()?;
        let record =
            web_session::find(&mut conn, &token, now)?.ok_or_else(PageError::session_ended)?;
        let app = apps::get_app(&mut conn, record.app_id)?;
        let user = record
            .user_id
            .map(|id| users::get_user(&mut conn, id))
            .transpose()?;
        Ok(Session {
            token,
            record,
            app,
            user,
        })
    })
    .await?
}

/// A signed-in person in an app's authorization flow or portal, on the
/// connection pages.
#[derive(Debug, Clone)]
pub(super) struct FlowVisitor {
    pub session: Session,
    user: UserRecord,
}

impl Visitor for FlowVisitor {
    async fn load(req: &HttpRequest, state: &web::Data<AppState>) -> Result<Self, PageError> {
        let session = load(req, state).await?;
        let user = session.user()?.clone();
        Ok(Self { session, user })
    }

    fn user(&self) -> &UserRecord {
        &self.user
    }

    fn csrf(&self) -> String {
        self.session.csrf()
    }

    fn check_csrf(&self, presented: &str) -> Result<(), PageError> {
        self.session.check_csrf(presented)
    }

    fn header(&self) -> Header {
        self.session.header()
    }

    fn detour(&self) -> Option<Detour> {
        match next_step(&self.session) {
            NextStep::Banks => None,
            other => Some(Detour {
                path: other.path(),
                refusal: PageError::new(
                    StatusCode::PAYMENT_REQUIRED,
                    "Subscribe first",
                    format!(
                        "{} asks you to subscribe before connecting a bank.",
                        self.session.app.name
                    ),
                ),
            }),
        }
    }

    fn limit_holder(&self) -> String {
        self.session.app.name.clone()
    }

    fn continue_to(&self) -> &'static str {
        if self.session.is_portal() {
            "/portal"
        } else {
            "/connect/consent"
        }
    }

    fn home(&self) -> &'static str {
        if self.session.is_portal() {
            "/portal"
        } else {
            "/connect/banks"
        }
    }

    fn awaiting_consent(&self) -> Option<ConnectionId> {
        self.session.record.pending_connection_id
    }

    async fn remember_consent(
        &self,
        state: &web::Data<AppState>,
        connection: Option<ConnectionId>,
    ) -> Result<(), PageError> {
        let session_id = self.session.record.id;
        with_conn(state, move |conn| {
            Ok(tributary_storage::web_sessions::set_pending_connection(
                conn, session_id, connection,
            )?)
        })
        .await
    }
}

/// Runs blocking database work for a page off the async runtime.
pub(super) async fn with_conn<T: Send + 'static>(
    state: &web::Data<AppState>,
    work: impl FnOnce(&mut AnyConnection) -> Result<T, PageError> + Send + 'static,
) -> Result<T, PageError> {
    crate::fault::with_conn(state, work).await
}

/// Where a signed-in person goes next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum NextStep {
    /// The app's users pay, and this one has not yet.
    Checkout,
    /// Connect banks (and, in the authorization flow, consent).
    Banks,
}

impl NextStep {
    pub fn path(self) -> &'static str {
        match self {
            NextStep::Checkout => "/connect/checkout",
            NextStep::Banks => "/connect/banks",
        }
    }
}

pub(super) fn next_step(session: &Session) -> NextStep {
    let paid = session
        .user
        .as_ref()
        .is_some_and(|u| u.subscribed_at.is_some());
    if session.app.billing_model == BillingModel::User && !paid {
        NextStep::Checkout
    } else {
        NextStep::Banks
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use tributary_domain::clock::SystemClock;
    use tributary_storage::testing::TestDatabase;

    #[test]
    fn the_session_cookie_is_http_only_lax_and_secure_behind_https() {
        let database = TestDatabase::sqlite();
        let plain = AppState::new(database.db().clone(), Arc::new(SystemClock), None);
        let tls = AppState::new(
            database.db().clone(),
            Arc::new(SystemClock),
            Some("https://bank.example.com".into()),
        );
        for (state, secure) in [(&plain, false), (&tls, true)] {
            let made = cookie(state, "tws_x".into());
            assert_eq!(made.http_only(), Some(true));
            assert_eq!(made.same_site(), Some(SameSite::Lax));
            assert_eq!(made.secure(), Some(secure));
            assert_eq!(made.path(), Some("/"));
            assert_eq!(
                made.max_age().map(|age| age.whole_seconds()),
                Some(3600),
                "the session's hour"
            );
            let gone = removal(state);
            assert_eq!(gone.value(), "");
            assert!(gone.max_age().is_some_and(|age| age.is_zero()));
        }
    }
}
