//! Signing in to the dashboard by e-mailed code: the signed-out page asks
//! for an address, a 6-digit code goes there (to the log without SMTP),
//! and typing it in the same browser opens a session. Before sign-in the
//! browser holds a random token in a cookie of its own: codes are bound to
//! it and the forms' CSRF token derives from it.

use super::session::start;
use crate::state::AppState;
use crate::web::mailer::{Mail, deliver};
use crate::web::page::{PageError, render_with, see_other};
use crate::web::session::with_conn;
use crate::web::sign_in::EmailForm;
use actix_web::cookie::{Cookie, SameSite};
use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
use askama::Template;
use serde::Deserialize;
use tributary_auth::dashboard as access;
use tributary_auth::sign_in::SignInError;
use tributary_auth::web_session::{csrf_matches, csrf_token};
use tributary_domain::email::normalize_email;

/// The signed-out browser's token; not the session cookie, which a person
/// only has once signed in.
const SIGN_IN_COOKIE: &str = "tributary_dashboard_sign_in";

fn cookie(state: &AppState, token: String) -> Cookie<'static> {
    Cookie::build(SIGN_IN_COOKIE, token)
        .path("/")
        .http_only(true)
        .same_site(SameSite::Lax)
        .secure(state.serves_tls())
        .max_age(actix_web::cookie::time::Duration::seconds(
            access::BROWSER_TOKEN_TTL.num_seconds(),
        ))
        .finish()
}

#[derive(Template)]
#[template(path = "dashboard_sign_in.html")]
struct SignInPage<'a> {
    title: &'a str,
    csrf: &'a str,
    email: &'a str,
    error: Option<&'a str>,
}

#[derive(Template)]
#[template(path = "dashboard_verify.html")]
struct VerifyPage<'a> {
    title: &'a str,
    csrf: &'a str,
    email: &'a str,
    error: Option<&'a str>,
}

/// The browser's token from its cookie, when it has a well-formed one.
fn browser_token(req: &HttpRequest) -> Option<String> {
    req.cookie(SIGN_IN_COOKIE)
        .map(|c| c.value().to_owned())
        .filter(|token| token.starts_with(access::BROWSER_PREFIX))
}

/// The token a form came with, its CSRF token checked.
fn checked_token(req: &HttpRequest, csrf: &str) -> Result<String, PageError> {
    let token = browser_token(req).ok_or_else(|| {
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

/// The signed-out page at `/`: the address form, and the ways to get a
/// sign-in link. A browser without a token gets one.
pub(super) async fn page(
    req: &HttpRequest,
    state: &web::Data<AppState>,
) -> Result<HttpResponse, PageError> {
    let (token, fresh) = match browser_token(req) {
        Some(token) => (token, false),
        None => (access::new_browser_token(), true),
    };
    let mut response = sign_in_page(&token, "", None, StatusCode::OK)?;
    if fresh {
        response
            .add_cookie(&cookie(state, token))
            .map_err(PageError::internal)?;
    }
    Ok(response)
}

fn sign_in_page(
    token: &str,
    email: &str,
    error: Option<&str>,
    status: StatusCode,
) -> Result<HttpResponse, PageError> {
    render_with(
        status,
        &SignInPage {
            title: "Sign in to Tributary",
            csrf: &csrf_token(token),
            email,
            error,
        },
    )
}

fn verify_page(
    token: &str,
    email: &str,
    error: Option<&str>,
    status: StatusCode,
) -> Result<HttpResponse, PageError> {
    render_with(
        status,
        &VerifyPage {
            title: "Enter your code",
            csrf: &csrf_token(token),
            email,
            error,
        },
    )
}

/// `POST /sign-in`: mails a code when the address has a user here, and
/// answers alike when it does not.
pub(super) async fn send_code(
    req: HttpRequest,
    state: web::Data<AppState>,
    form: web::Form<EmailForm>,
) -> Result<HttpResponse, PageError> {
    let token = checked_token(&req, &form.csrf)?;
    let email = match normalize_email(&form.email) {
        Ok(email) => email,
        Err(err) => {
            let message = format!("E-mail address: {err}");
            return sign_in_page(&token, &form.email, Some(&message), StatusCode::BAD_REQUEST);
        }
    };
    let (ip, now) = (state.client_ip(&req), state.clock.now().naive_utc());
    let (browser, address) = (token.clone(), email.clone());
    let issued = with_conn(&state, move |conn| {
        match access::issue_code(conn, &browser, &address, &ip, now) {
            Ok(code) => Ok(Ok(code)),
            Err(SignInError::Storage(err)) => Err(err.into()),
            Err(refused) => Ok(Err(refused.to_string())),
        }
    })
    .await?;
    match issued {
        Err(refused) => sign_in_page(
            &token,
            &email,
            Some(&refused),
            StatusCode::TOO_MANY_REQUESTS,
        ),
        Ok(None) => verify_page(&token, &email, None, StatusCode::OK),
        Ok(Some(code)) => {
            let mail = Mail::sign_in_code(&email, &code, "your Tributary dashboard");
            if !deliver(state.mailer.clone(), mail).await? {
                return sign_in_page(
                    &token,
                    &email,
                    Some("The code could not be sent. Try again in a moment."),
                    StatusCode::BAD_GATEWAY,
                );
            }
            verify_page(&token, &email, None, StatusCode::OK)
        }
    }
}

#[derive(Deserialize)]
pub(super) struct CodeForm {
    csrf: String,
    code: String,
    /// The address the code went to, shown again after a wrong code; the
    /// code itself decides who signs in.
    #[serde(default)]
    email: String,
}

/// `POST /sign-in/code`: a right code opens a session.
pub(super) async fn verify(
    req: HttpRequest,
    state: web::Data<AppState>,
    form: web::Form<CodeForm>,
) -> Result<HttpResponse, PageError> {
    let token = checked_token(&req, &form.csrf)?;
    let now = state.clock.now().naive_utc();
    let (browser, typed) = (token.clone(), form.code.clone());
    let outcome = with_conn(&state, move |conn| {
        match access::verify_code(conn, &browser, &typed, now) {
            Ok(user) => Ok(Ok(access::start_session(conn, user, now)?)),
            Err(SignInError::Storage(err)) => Err(err.into()),
            // No code for this browser (an address without a user, say)
            // reads as a wrong one.
            Err(SignInError::NoCode) => Ok(Err(
                "That code is not right. Check the mail, or ask for a new code.".to_owned(),
            )),
            Err(refused) => Ok(Err(refused.to_string())),
        }
    })
    .await?;
    match outcome {
        Ok(session) => {
            let mut response = see_other("/");
            let mut spent = cookie(&state, String::new());
            spent.make_removal();
            response.add_cookie(&spent).map_err(PageError::internal)?;
            start(&state, &mut response, session)?;
            Ok(response)
        }
        Err(message) => verify_page(
            &token,
            form.email.trim(),
            Some(&message),
            StatusCode::BAD_REQUEST,
        ),
    }
}
