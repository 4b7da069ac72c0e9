//! Sign-in by a code sent by e-mail. The person becomes the app's user with
//! that address: the same user the app may have registered with POST /users.

use super::page::{PageError, render, render_with, see_other};
use super::session::{self, Session, next_step, with_conn};
use crate::state::AppState;
use crate::web::mailer::deliver;
use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
use askama::Template;
use serde::Deserialize;
use tributary_auth::oauth;
use tributary_auth::sign_in::{self, SignInError};
use tributary_domain::email::normalize_email;
use tributary_notify::mail::Mail;
use tributary_storage::apps::{self, NewAppUser};
use tributary_storage::sign_in_codes::{CodeBinding, SignInSurface, latest_sign_in_code};

#[derive(Template)]
#[template(path = "sign_in.html")]
struct SignInPage<'a> {
    title: &'a str,
    app_name: &'a str,
    csrf: &'a str,
    email: &'a str,
    error: Option<&'a str>,
}

#[derive(Template)]
#[template(path = "verify.html")]
struct VerifyPage<'a> {
    title: &'a str,
    app_name: &'a str,
    csrf: &'a str,
    email: &'a str,
    error: Option<&'a str>,
}

#[derive(Deserialize)]
pub(super) struct EmailForm {
    pub csrf: String,
    pub email: String,
}

#[derive(Deserialize)]
pub(super) struct CodeForm {
    csrf: String,
    code: String,
}

fn sign_in_page(
    session: &Session,
    email: &str,
    error: Option<&str>,
    status: StatusCode,
) -> Result<HttpResponse, PageError> {
    render_with(
        status,
        &SignInPage {
            title: "Sign in",
            app_name: &session.app.name,
            csrf: &session.csrf(),
            email,
            error,
        },
    )
}

pub(super) async fn form(
    req: HttpRequest,
    state: web::Data<AppState>,
) -> Result<HttpResponse, PageError> {
    let session = session::load(&req, &state).await?;
    if session.user.is_some() {
        return Ok(see_other(next_step(&session).path()));
    }
    let hint = session.record.login_hint.clone().unwrap_or_default();
    sign_in_page(&session, &hint, None, StatusCode::OK)
}

pub(super) async fn send_code(
    req: HttpRequest,
    state: web::Data<AppState>,
    form: web::Form<EmailForm>,
) -> Result<HttpResponse, PageError> {
    let session = session::load(&req, &state).await?;
    session.check_csrf(&form.csrf)?;
    let email = match normalize_email(&form.email) {
        Ok(email) => email,
        Err(err) => {
            return sign_in_page(
                &session,
                &form.email,
                Some(&err.to_string()),
                StatusCode::BAD_REQUEST,
            );
        }
    };
    let (binding, ip, now) = (
        CodeBinding::WebSession(session.record.id),
        state.client_ip(&req),
        state.clock.now().naive_utc(),
    );
    let address = email.clone();
    let issued = with_conn(&state, move |conn| {
        match sign_in::issue(conn, SignInSurface::Authorize, &binding, &address, &ip, now) {
            Ok(code) => Ok(Ok(code)),
            Err(SignInError::Storage(err)) => Err(err.into()),
            Err(refused) => Ok(Err(refused.to_string())),
        }
    })
    .await?;
    let code = match issued {
        Ok(code) => code,
        Err(refused) => {
            return sign_in_page(
                &session,
                &email,
                Some(&refused),
                StatusCode::TOO_MANY_REQUESTS,
            );
        }
    };
    let mail = Mail::sign_in_code(&email, &code, &session.app.name);
    if !deliver(state.mailer.clone(), mail).await {
        return sign_in_page(
            &session,
            &email,
            Some("The code could not be sent. Check the address and try again in a moment."),
            StatusCode::BAD_GATEWAY,
        );
    }
    Ok(see_other("/connect/verify"))
}

pub(super) async fn verify_form(
    req: HttpRequest,
    state: web::Data<AppState>,
) -> Result<HttpResponse, PageError> {
    let session = session::load(&req, &state).await?;
    let binding = CodeBinding::WebSession(session.record.id);
    let email = with_conn(&state, move |conn| Ok(latest_sign_in_code(conn, &binding)?))
        .await?
        .map(|c| c.email);
    let Some(email) = email else {
        return Ok(see_other("/connect/sign-in"));
    };
    render(&VerifyPage {
        title: "Enter your code",
        app_name: &session.app.name,
        csrf: &session.csrf(),
        email: &email,
        error: None,
    })
}

pub(super) async fn verify(
    req: HttpRequest,
    state: web::Data<AppState>,
    form: web::Form<CodeForm>,
) -> Result<HttpResponse, PageError> {
    let mut session = session::load(&req, &state).await?;
    session.check_csrf(&form.csrf)?;
    let session_id = session.record.id;
    let (binding, app_id, now) = (
        CodeBinding::WebSession(session_id),
        session.app.id,
        state.clock.now().naive_utc(),
    );
    let typed = form.code.clone();
    let outcome = with_conn(&state, move |conn| {
        let email = match sign_in::verify(conn, &binding, &typed, now) {
            Ok(email) => email,
            Err(SignInError::Storage(err)) => return Err(err.into()),
            Err(refused) => {
                let email = latest_sign_in_code(conn, &binding)?.map(|c| c.email);
                return Ok(Err((refused.to_string(), email)));
            }
        };
        let (user, _) = apps::create_or_get_app_user(
            conn,
            &NewAppUser {
                app_id,
                email: &email,
                public_id: &oauth::new_user_public_id(),
                external_user_id: None,
                max_accounts: None,
                now,
            },
        )?;
        tributary_storage::web_sessions::set_session_user(conn, session_id, user.id)?;
        Ok(Ok(user))
    })
    .await?;
    match outcome {
        Ok(user) => {
            session.user = Some(user);
            Ok(see_other(next_step(&session).path()))
        }
        Err((message, email)) => render_with(
            StatusCode::BAD_REQUEST,
            &VerifyPage {
                title: "Enter your code",
                app_name: &session.app.name,
                csrf: &session.csrf(),
                email: email.as_deref().unwrap_or_default(),
                error: Some(&message),
            },
        ),
    }
}
