//! The portal: a user opens the single-use link an app created with POST
//! /v1/portal_sessions, and manages their connections (add, sync again,
//! re-authenticate, remove) in a browser session. The link's secret leaves
//! the address bar at once: the page redirects to `/portal`.

use super::banks::user_lines;
use super::page::{PageError, render, see_other};
use super::session::{self, cookie, with_conn};
use crate::state::AppState;
use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
use askama::Template;
use tributary_auth::oauth::{self, PortalError};
use tributary_auth::web_session;

#[derive(Template)]
#[template(path = "portal.html")]
struct PortalPage<'a> {
    title: &'a str,
    app_name: &'a str,
    email: &'a str,
    connections: Vec<super::banks::ConnectionLine>,
    csrf: &'a str,
    destinations: super::simplefin::Destinations,
    /// Where the SimpleFIN forms post.
    simplefin_form: &'a str,
}

pub(super) async fn open(
    state: web::Data<AppState>,
    path: web::Path<String>,
) -> Result<HttpResponse, PageError> {
    let token = path.into_inner();
    let now = state.clock.now().naive_utc();
    let session_token = with_conn(&state, move |conn| {
        let portal = oauth::consume_portal_session(conn, &token, now).map_err(|err| match err {
            PortalError::Storage(err) => err.into(),
            refused => PageError::new(
                StatusCode::NOT_FOUND,
                "This link does not work",
                refused.to_string(),
            ),
        })?;
        Ok(web_session::start_portal(
            conn,
            portal.app_id,
            portal.user_id,
            now,
        )?)
    })
    .await?;
    let mut response = see_other("/portal");
    response
        .add_cookie(&cookie(&state, session_token))
        .map_err(PageError::internal)?;
    Ok(response)
}

pub(super) async fn home(
    req: HttpRequest,
    state: web::Data<AppState>,
) -> Result<HttpResponse, PageError> {
    let session = session::load(&req, &state).await?;
    if !session.is_portal() {
        return Err(PageError::session_ended());
    }
    let user = session.user()?;
    let connections = user_lines(&state, user.id).await?;
    let destinations = super::simplefin::destinations(&state, user.id).await?;
    render(&PortalPage {
        title: "Your bank connections",
        app_name: &session.app.name,
        email: &user.email,
        connections,
        csrf: &session.csrf(),
        destinations,
        simplefin_form: "/portal/simplefin",
    })
}
