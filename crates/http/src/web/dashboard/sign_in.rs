//! Who signs in to the Personal dashboard by e-mailed code: Personal users
//! (see [`crate::web::code_sign_in`]); sessions are the dashboard's own.

use super::session::start;
use crate::state::AppState;
use crate::web::code_sign_in::CodeSignIn;
use crate::web::page::PageError;
use actix_web::HttpResponse;
use chrono::NaiveDateTime;
use tributary_auth::dashboard as access;
use tributary_auth::sign_in::SignInError;
use tributary_storage::AnyConnection;

pub(in crate::web) struct PersonalSignIn;

impl CodeSignIn for PersonalSignIn {
    const COOKIE: &'static str = "tributary_dashboard_sign_in";
    const BROWSER_PREFIX: &'static str = access::BROWSER_PREFIX;
    const ROOT: &'static str = "";
    const HOME: &'static str = "/";
    const TITLE: &'static str = "Sign in to Tributary";
    const INTRO: &'static str = "This is your own Tributary.";
    const PURPOSE: &'static str = "your Tributary dashboard";
    const OFFERS_LINKS: bool = true;

    fn new_browser_token() -> String {
        access::new_browser_token()
    }

    fn issue_code(
        conn: &mut AnyConnection,
        _state: &AppState,
        browser: &str,
        email: &str,
        ip: &str,
        now: NaiveDateTime,
    ) -> Result<Option<String>, SignInError> {
        access::issue_code(conn, browser, email, ip, now)
    }

    fn open_session(
        conn: &mut AnyConnection,
        _state: &AppState,
        browser: &str,
        typed: &str,
        now: NaiveDateTime,
    ) -> Result<String, SignInError> {
        let user = access::verify_code(conn, browser, typed, now)?;
        Ok(access::start_session(conn, user, now)?)
    }

    fn after_sign_in(req: &actix_web::HttpRequest) -> String {
        super::session::after_sign_in(req)
    }

    fn set_session_cookie(
        state: &AppState,
        response: &mut HttpResponse,
        session_token: String,
    ) -> Result<(), PageError> {
        start(state, response, session_token)?;
        // Whoever was sent to sign in is back where they were going.
        response
            .add_cookie(&super::session::return_cookie(state, ""))
            .map_err(PageError::internal)
    }
}
