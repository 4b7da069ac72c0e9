//! Developer dashboard sessions in the browser: signing in by e-mailed
//! code (only added developers while sign-up is closed), the cookie, the
//! signed-in developer, the CSRF check and signing out.

use crate::state::AppState;
use crate::web::code_sign_in::CodeSignIn;
use crate::web::header::Header;
use crate::web::page::{PageError, see_other};
use crate::web::session::{CsrfForm, token_cookie, with_conn};
use actix_web::cookie::Cookie;
use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
use chrono::NaiveDateTime;
use tributary_app::links::DEVELOPERS_ROOT as ROOT;
use tributary_auth::developers::{self as access, DeveloperSessions};
use tributary_auth::sign_in::SignInError;
use tributary_auth::signed_in;
use tributary_auth::web_session::{csrf_matches, csrf_token};
use tributary_storage::AnyConnection;
use tributary_storage::developers::{self as store, DeveloperRecord};

/// Not the Personal dashboard's or the browser flow's cookie, and only
/// sent to `/developers`.
pub const DEVELOPER_COOKIE: &str = "tributary_developer";

/// For `/developers` only, until the session's absolute expiry.
fn cookie(state: &AppState, token: String) -> Cookie<'static> {
    token_cookie(
        state,
        DEVELOPER_COOKIE,
        ROOT,
        signed_in::SESSION_LIFETIME,
        token,
    )
}

/// A signed-in request: the developer, and the token their forms' CSRF
/// token derives from.
#[derive(Debug)]
pub(super) struct Developer {
    token: String,
    pub record: DeveloperRecord,
}

impl Developer {
    pub fn csrf(&self) -> String {
        csrf_token(&self.token)
    }

    /// The developer dashboard's navigation, for the pages that show it
    /// through `_header.html` (confirmations, errors).
    pub fn header(&self) -> Header {
        Header::Developers {
            email: self.record.email.clone(),
            csrf: self.csrf(),
        }
    }

    /// The signed-in developer behind the request's cookie, if any.
    pub async fn current(
        req: &HttpRequest,
        state: &web::Data<AppState>,
    ) -> Result<Option<Self>, PageError> {
        let Some(token) = req.cookie(DEVELOPER_COOKIE).map(|c| c.value().to_owned()) else {
            return Ok(None);
        };
        let now = state.clock.now().naive_utc();
        with_conn(state, move |conn| {
            let Some(session) = signed_in::find::<DeveloperSessions>(conn, &token, now)? else {
                return Ok(None);
            };
            let record = store::get(conn, session.developer_id)?;
            Ok(Some(Developer { token, record }))
        })
        .await
    }

    /// The signed-in developer, or the "signed out" page.
    pub async fn required(
        req: &HttpRequest,
        state: &web::Data<AppState>,
    ) -> Result<Self, PageError> {
        Self::current(req, state).await?.ok_or_else(|| {
            PageError::new(
                StatusCode::UNAUTHORIZED,
                "You are signed out",
                "Your developer session has ended. Open /developers to sign in again.",
            )
        })
    }

    /// A signed-in form: the developer, with the form's CSRF token checked.
    pub async fn form(
        req: &HttpRequest,
        state: &web::Data<AppState>,
        csrf: &str,
    ) -> Result<Self, PageError> {
        let developer = Self::required(req, state).await?;
        if csrf_matches(&developer.token, csrf) {
            Ok(developer)
        } else {
            Err(PageError::forged())
        }
    }
}

/// `POST /developers/sign-out`: the session ends on the server and in the
/// browser.
pub(super) async fn sign_out(
    req: HttpRequest,
    state: web::Data<AppState>,
    form: web::Form<CsrfForm>,
) -> Result<HttpResponse, PageError> {
    let developer = Developer::form(&req, &state, &form.csrf).await?;
    let token = developer.token;
    with_conn(&state, move |conn| {
        Ok(signed_in::end::<DeveloperSessions>(conn, &token)?)
    })
    .await?;
    let mut removal = cookie(&state, String::new());
    removal.make_removal();
    let mut response = see_other(ROOT);
    response.add_cookie(&removal).map_err(PageError::internal)?;
    Ok(response)
}

/// Developers sign in by code; who may is `TRIBUTARY_DEVELOPER_SIGNUP`.
pub(super) struct DeveloperSignIn;

impl CodeSignIn for DeveloperSignIn {
    const COOKIE: &'static str = "tributary_developer_sign_in";
    const BROWSER_PREFIX: &'static str = access::BROWSER_PREFIX;
    const ROOT: &'static str = ROOT;
    const HOME: &'static str = ROOT;
    const TITLE: &'static str = "Tributary for developers";
    const INTRO: &'static str = "Create and manage the apps that connect your users' banks through this server's Platform API.";
    const PURPOSE: &'static str = "the Tributary developer dashboard";
    const OFFERS_LINKS: bool = false;

    fn new_browser_token() -> String {
        access::new_browser_token()
    }

    fn issue_code(
        conn: &mut AnyConnection,
        state: &AppState,
        browser: &str,
        email: &str,
        ip: &str,
        now: NaiveDateTime,
    ) -> Result<Option<String>, SignInError> {
        access::issue_code(conn, browser, email, ip, state.developer_signup, now)
    }

    fn open_session(
        conn: &mut AnyConnection,
        state: &AppState,
        browser: &str,
        typed: &str,
        now: NaiveDateTime,
    ) -> Result<String, SignInError> {
        let developer = access::verify_code(conn, browser, typed, state.developer_signup, now)?;
        Ok(signed_in::start::<DeveloperSessions>(conn, developer, now)?)
    }

    fn set_session_cookie(
        state: &AppState,
        response: &mut HttpResponse,
        session_token: String,
    ) -> Result<(), PageError> {
        response
            .add_cookie(&cookie(state, session_token))
            .map_err(PageError::internal)
    }
}
