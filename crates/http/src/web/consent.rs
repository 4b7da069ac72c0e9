//! Consent: the page names the app and what it will read; approving issues
//! the authorization code and sends the browser back to the app with it,
//! denying sends it back with `error=access_denied`. Either way the browser
//! session ends here.

use super::authorize::back_to_the_app;
use super::banks::user_lines;
use super::csp::Policy;
use super::page::{PageError, render, see_other};
use super::session::{self, Session, removal, with_conn};
use super::session::{NextStep, next_step};
use crate::state::AppState;
use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
use askama::Template;
use serde::Deserialize;
use tributary_auth::oauth;
use tributary_domain::model::PkceMethod;

#[derive(Template)]
#[template(path = "consent.html")]
struct ConsentPage<'a> {
    title: &'a str,
    app_name: &'a str,
    csrf: &'a str,
    email: &'a str,
    connections: Vec<super::banks::ConnectionLine>,
}

#[derive(Deserialize)]
pub(super) struct Decision {
    csrf: String,
    decision: String,
}

/// An authorization session of a signed-in (and, where users pay, paid)
/// user; anything else has no business here.
async fn consenting_session(
    req: &HttpRequest,
    state: &web::Data<AppState>,
) -> Result<Session, PageError> {
    let session = session::load(req, state).await?;
    if session.is_portal() || session.record.redirect_uri.is_none() {
        return Err(PageError::not_found());
    }
    session.user()?;
    Ok(session)
}

pub(super) async fn page(
    req: HttpRequest,
    state: web::Data<AppState>,
) -> Result<HttpResponse, PageError> {
    let session = consenting_session(&req, &state).await?;
    if next_step(&session) != NextStep::Banks {
        return Ok(see_other(next_step(&session).path()));
    }
    let user = session.user()?;
    let connections = user_lines(&state, user.id).await?;
    if connections.iter().all(|c| c.accounts.is_empty()) {
        return Ok(see_other("/connect/banks"));
    }
    let page = render(&ConsentPage {
        title: "Share your data",
        app_name: &session.app.name,
        csrf: &session.csrf(),
        email: &user.email,
        connections,
    })?;
    // Allow and Deny both end in a redirect to the app's redirect_uri.
    let redirect_uri = session.record.redirect_uri.as_deref().unwrap_or_default();
    Ok(Policy::strict().form_action_to(redirect_uri).apply(page))
}

pub(super) async fn decide(
    req: HttpRequest,
    state: web::Data<AppState>,
    form: web::Form<Decision>,
) -> Result<HttpResponse, PageError> {
    let session = consenting_session(&req, &state).await?;
    session.check_csrf(&form.csrf)?;
    let redirect_uri = session.record.redirect_uri.clone().unwrap_or_default();
    let client_state = session.record.client_state.clone();
    let approve = match form.decision.as_str() {
        "approve" => true,
        "deny" => false,
        _ => return Err(PageError::bad_request("Choose Allow or Deny.")),
    };
    if approve && next_step(&session) != NextStep::Banks {
        return Err(PageError::new(
            StatusCode::PAYMENT_REQUIRED,
            "Subscribe first",
            format!("{} asks you to subscribe first.", session.app.name),
        ));
    }
    let user_id = session.user()?.id;
    let now = state.clock.now().naive_utc();
    let (app, record) = (session.app.clone(), session.record.clone());
    let uri = redirect_uri.clone();
    let code = with_conn(&state, move |conn| {
        let code = if approve {
            let challenge = record
                .code_challenge
                .as_deref()
                .zip(record.code_challenge_method.map(PkceMethod::as_str));
            Some(
                oauth::issue_code(conn, &app, (user_id, None), &uri, challenge, now).map_err(
                    |err| {
                        match err {
                            oauth::OAuthError::Storage(err) => err.into(),
                            // The app changed its registration meanwhile.
                            other => PageError::bad_request(format!(
                                "{} cannot receive your consent: {other}.",
                                app.name
                            )),
                        }
                    },
                )?,
            )
        } else {
            None
        };
        tributary_storage::web_sessions::delete_session(conn, record.id)?;
        Ok(code)
    })
    .await?;
    let mut pairs: Vec<(&str, &str)> = match &code {
        Some(code) => vec![("code", code.as_str())],
        None => vec![
            ("error", "access_denied"),
            ("error_description", "the user denied access"),
        ],
    };
    if let Some(client_state) = &client_state {
        pairs.push(("state", client_state.as_str()));
    }
    let issuer = crate::platform::metadata::issuer(&state, &req);
    let mut response = back_to_the_app(&redirect_uri, &issuer, &pairs);
    response
        .add_removal_cookie(&removal(&state))
        .map_err(PageError::internal)?;
    Ok(response)
}
