//! Signing in to a dashboard (the Personal one, the developers') by
//! e-mailed code: the signed-out page asks for an address, a 6-digit code
//! goes there (to the log without SMTP), and typing it in the same browser
//! opens a session. Before sign-in the browser holds a random token in a
//! cookie of its own: codes are bound to it and the forms' CSRF token
//! derives from it. Each dashboard says who may sign in and where its
//! sessions go by implementing [`CodeSignIn`].

use crate::state::AppState;
use crate::web::mailer::deliver;
use crate::web::page::{PageError, render_with, see_other};
use crate::web::session::{token_cookie, with_conn};
use crate::web::sign_in::EmailForm;
use actix_web::cookie::Cookie;
use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
use askama::Template;
use chrono::NaiveDateTime;
use serde::Deserialize;
use tributary_auth::dashboard::BROWSER_TOKEN_TTL;
use tributary_auth::sign_in::SignInError;
use tributary_auth::web_session::{csrf_matches, csrf_token};
use tributary_domain::email::normalize_email;
use tributary_notify::mail::Mail;
use tributary_storage::AnyConnection;

/// One dashboard's sign-in by code.
pub(in crate::web) trait CodeSignIn: 'static {
    /// The signed-out browser's cookie; not the session cookie, which a
    /// person only has once signed in.
    const COOKIE: &'static str;
    /// The prefix of that cookie's token.
    const BROWSER_PREFIX: &'static str;
    /// The dashboard's root: forms post to `{ROOT}/sign-in` and
    /// `{ROOT}/sign-in/code`; a new session lands on [`Self::HOME`].
    const ROOT: &'static str;
    const HOME: &'static str;
    /// The signed-out page's title.
    const TITLE: &'static str;
    /// The signed-out page's first paragraph.
    const INTRO: &'static str;
    /// What the mailed code opens ("your Tributary dashboard").
    const PURPOSE: &'static str;
    /// Whether the signed-out page tells of one-time sign-in links.
    const OFFERS_LINKS: bool;

    fn new_browser_token() -> String;

    /// A code for `email` bound to `browser`; `None` (and no mail) when the
    /// address may not sign in here. Both are answered alike.
    fn issue_code(
        conn: &mut AnyConnection,
        state: &AppState,
        browser: &str,
        email: &str,
        ip: &str,
        now: NaiveDateTime,
    ) -> Result<Option<String>, SignInError>;

    /// Checks a typed code for `browser` and opens a session: its token.
    fn open_session(
        conn: &mut AnyConnection,
        state: &AppState,
        browser: &str,
        typed: &str,
        now: NaiveDateTime,
    ) -> Result<String, SignInError>;

    /// Gives the browser the cookie of a session just opened.
    /// Where a person goes once signed in (a page that sent them to sign
    /// in may bring them back).
    fn after_sign_in(_req: &HttpRequest) -> String {
        Self::HOME.to_owned()
    }

    fn set_session_cookie(
        state: &AppState,
        response: &mut HttpResponse,
        session_token: String,
    ) -> Result<(), PageError>;
}

fn cookie<S: CodeSignIn>(state: &AppState, token: String) -> Cookie<'static> {
    let path = if S::ROOT.is_empty() { "/" } else { S::ROOT };
    token_cookie(state, S::COOKIE, path, BROWSER_TOKEN_TTL, token)
}

#[derive(Template)]
#[template(path = "code_sign_in.html")]
struct SignInPage<'a> {
    title: &'a str,
    intro: &'a str,
    root: &'a str,
    offers_links: bool,
    csrf: &'a str,
    email: &'a str,
    error: Option<&'a str>,
}

#[derive(Template)]
#[template(path = "code_verify.html")]
struct VerifyPage<'a> {
    title: &'a str,
    root: &'a str,
    home: &'a str,
    csrf: &'a str,
    email: &'a str,
    error: Option<&'a str>,
}

/// The browser's token from its cookie, when it has a well-formed one.
fn browser_token<S: CodeSignIn>(req: &HttpRequest) -> Option<String> {
    req.cookie(S::COOKIE)
        .map(|c| c.value().to_owned())
        .filter(|token| token.starts_with(S::BROWSER_PREFIX))
}

/// The token a form came with, its CSRF token checked.
fn checked_token<S: CodeSignIn>(req: &HttpRequest, csrf: &str) -> Result<String, PageError> {
    let token = browser_token::<S>(req).ok_or_else(|| {
        PageError::bad_request(
            "Your browser did not keep the sign-in cookie. Allow cookies for this site, then open the dashboard again.",
        )
    })?;
    if csrf_matches(&token, csrf) {
        Ok(token)
    } else {
        Err(PageError::forged())
    }
}

/// The signed-out page: the address form (and, where offered, the ways to
/// get a sign-in link). A browser without a token gets one.
pub(in crate::web) async fn page<S: CodeSignIn>(
    req: &HttpRequest,
    state: &web::Data<AppState>,
) -> Result<HttpResponse, PageError> {
    let (token, fresh) = match browser_token::<S>(req) {
        Some(token) => (token, false),
        None => (S::new_browser_token(), true),
    };
    let mut response = sign_in_page::<S>(&token, "", None, StatusCode::OK)?;
    if fresh {
        response
            .add_cookie(&cookie::<S>(state, token))
            .map_err(PageError::internal)?;
    }
    Ok(response)
}

fn sign_in_page<S: CodeSignIn>(
    token: &str,
    email: &str,
    error: Option<&str>,
    status: StatusCode,
) -> Result<HttpResponse, PageError> {
    render_with(
        status,
        &SignInPage {
            title: S::TITLE,
            intro: S::INTRO,
            root: S::ROOT,
            offers_links: S::OFFERS_LINKS,
            csrf: &csrf_token(token),
            email,
            error,
        },
    )
}

fn verify_page<S: CodeSignIn>(
    token: &str,
    email: &str,
    error: Option<&str>,
    status: StatusCode,
) -> Result<HttpResponse, PageError> {
    render_with(
        status,
        &VerifyPage {
            title: "Enter your code",
            root: S::ROOT,
            home: S::HOME,
            csrf: &csrf_token(token),
            email,
            error,
        },
    )
}

/// `POST {ROOT}/sign-in`: mails a code when the address may sign in here,
/// and answers alike when it may not.
pub(in crate::web) async fn send_code<S: CodeSignIn>(
    req: HttpRequest,
    state: web::Data<AppState>,
    form: web::Form<EmailForm>,
) -> Result<HttpResponse, PageError> {
    let token = checked_token::<S>(&req, &form.csrf)?;
    let email = match normalize_email(&form.email) {
        Ok(email) => email,
        Err(err) => {
            let message = format!("E-mail address: {err}");
            return sign_in_page::<S>(&token, &form.email, Some(&message), StatusCode::BAD_REQUEST);
        }
    };
    let (ip, now) = (state.client_ip(&req), state.clock.now().naive_utc());
    let (browser, address) = (token.clone(), email.clone());
    let shared = state.clone();
    let issued = with_conn(&state, move |conn| {
        match S::issue_code(conn, &shared, &browser, &address, &ip, now) {
            Ok(code) => Ok(Ok(code)),
            Err(SignInError::Storage(err)) => Err(err.into()),
            Err(refused) => Ok(Err(refused.to_string())),
        }
    })
    .await?;
    match issued {
        Err(refused) => sign_in_page::<S>(
            &token,
            &email,
            Some(&refused),
            StatusCode::TOO_MANY_REQUESTS,
        ),
        Ok(None) => verify_page::<S>(&token, &email, None, StatusCode::OK),
        Ok(Some(code)) => {
            let mail = Mail::sign_in_code(&email, &code, S::PURPOSE);
            if !deliver(state.mailer.clone(), mail).await {
                return sign_in_page::<S>(
                    &token,
                    &email,
                    Some("The code could not be sent. Try again in a moment."),
                    StatusCode::BAD_GATEWAY,
                );
            }
            verify_page::<S>(&token, &email, None, StatusCode::OK)
        }
    }
}

#[derive(Deserialize)]
pub(in crate::web) struct CodeForm {
    csrf: String,
    code: String,
    /// The address the code went to, shown again after a wrong code; the
    /// code itself decides who signs in.
    #[serde(default)]
    email: String,
}

/// `POST {ROOT}/sign-in/code`: a right code opens a session.
pub(in crate::web) async fn verify<S: CodeSignIn>(
    req: HttpRequest,
    state: web::Data<AppState>,
    form: web::Form<CodeForm>,
) -> Result<HttpResponse, PageError> {
    let token = checked_token::<S>(&req, &form.csrf)?;
    let now = state.clock.now().naive_utc();
    let (browser, typed) = (token.clone(), form.code.clone());
    let shared = state.clone();
    let outcome = with_conn(&state, move |conn| {
        match S::open_session(conn, &shared, &browser, &typed, now) {
            Ok(session) => Ok(Ok(session)),
            Err(SignInError::Storage(err)) => Err(err.into()),
            // No code for this browser (an address that may not sign in,
            // say) reads as a wrong one.
            Err(SignInError::NoCode) => Ok(Err(
                "That code is not right. Check the mail, or ask for a new code.".to_owned(),
            )),
            Err(refused) => Ok(Err(refused.to_string())),
        }
    })
    .await?;
    match outcome {
        Ok(session) => {
            let mut response = see_other(&S::after_sign_in(&req));
            let mut spent = cookie::<S>(&state, String::new());
            spent.make_removal();
            response.add_cookie(&spent).map_err(PageError::internal)?;
            S::set_session_cookie(&state, &mut response, session)?;
            Ok(response)
        }
        Err(message) => verify_page::<S>(
            &token,
            form.email.trim(),
            Some(&message),
            StatusCode::BAD_REQUEST,
        ),
    }
}
