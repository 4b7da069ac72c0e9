//! SimpleFIN access in the portal: an app's user lets a budgeting app that
//! speaks SimpleFIN read their data. Creating one shows its setup token
//! once; the list says which are claimed, when each was last used, and
//! revokes them.

use super::page::{PageError, render, see_other, when};
use super::session::{self, CsrfForm, Session, with_conn};
use crate::state::AppState;
use actix_web::{HttpRequest, HttpResponse, web};
use askama::Template;
use serde::Deserialize;
use tributary_auth::simplefin as access;
use tributary_domain::ids::{SimpleFinDestinationId, UserId};
use tributary_storage::simplefin::{self as store, DestinationRecord};

/// The longest destination name a form takes.
const NAME_MAX_CHARS: usize = 100;

/// One destination as the portal lists it.
pub(super) struct DestinationLine {
    pub id: SimpleFinDestinationId,
    pub name: String,
    /// "waiting to be claimed", "in use", "expired unclaimed" or "revoked".
    pub state: &'static str,
    pub created: String,
    pub last_used: String,
    pub revocable: bool,
}

impl DestinationLine {
    fn new(record: DestinationRecord, now: chrono::NaiveDateTime) -> Self {
        let state = if record.revoked_at.is_some() {
            "revoked"
        } else if record.claimed_at.is_some() {
            "in use"
        } else if record.claim_expires_at <= now {
            "expired unclaimed"
        } else {
            "waiting to be claimed"
        };
        Self {
            id: record.id,
            name: record.name,
            state,
            created: when(Some(record.created_at), "never"),
            last_used: when(record.last_used_at, "never"),
            revocable: record.revoked_at.is_none(),
        }
    }
}

/// The user's destinations, oldest first.
pub(super) async fn destination_lines(
    state: &web::Data<AppState>,
    user_id: UserId,
) -> Result<Vec<DestinationLine>, PageError> {
    let now = state.clock.now().naive_utc();
    with_conn(state, move |conn| {
        Ok(store::list_for_user(conn, user_id)?
            .into_iter()
            .map(|(record, _)| DestinationLine::new(record, now))
            .collect())
    })
    .await
}

/// A portal session with a signed-in user, its CSRF token checked.
async fn portal_form(
    req: &HttpRequest,
    state: &web::Data<AppState>,
    csrf: &str,
) -> Result<(Session, UserId), PageError> {
    let session = session::load(req, state).await?;
    if !session.is_portal() {
        return Err(PageError::session_ended());
    }
    session.check_csrf(csrf)?;
    let user_id = session.user()?.id;
    Ok((session, user_id))
}

#[derive(Debug, Deserialize)]
pub(super) struct CreateForm {
    csrf: String,
    name: String,
}

#[derive(Template)]
#[template(path = "simplefin_token.html")]
struct TokenPage<'a> {
    title: &'a str,
    app_name: &'a str,
    name: &'a str,
    setup_token: &'a str,
    expires: &'a str,
}

pub(super) async fn create(
    req: HttpRequest,
    state: web::Data<AppState>,
    form: web::Form<CreateForm>,
) -> Result<HttpResponse, PageError> {
    let (session, user_id) = portal_form(&req, &state, &form.csrf).await?;
    let name = form.name.trim().to_owned();
    if name.is_empty() || name.chars().count() > NAME_MAX_CHARS {
        return Err(PageError::bad_request(format!(
            "Name: give the app a name of 1 to {NAME_MAX_CHARS} characters, so you can tell it apart later."
        )));
    }
    let claim_root = state.absolute_url(&req, &format!("{}/claim", crate::simplefin::ROOT));
    let now = state.clock.now();
    let (issued_name, setup_token, expires) = with_conn(&state, move |conn| {
        let issued = access::create(conn, user_id, &name, None, &claim_root, now)
            .map_err(PageError::internal)?;
        Ok((
            issued.record.name,
            issued.setup_token,
            when(Some(issued.record.claim_expires_at), "never"),
        ))
    })
    .await?;
    render(&TokenPage {
        title: "Your SimpleFIN setup token",
        app_name: &session.app.name,
        name: &issued_name,
        setup_token: &setup_token,
        expires: &expires,
    })
}

pub(super) async fn revoke(
    req: HttpRequest,
    state: web::Data<AppState>,
    path: web::Path<String>,
    form: web::Form<CsrfForm>,
) -> Result<HttpResponse, PageError> {
    let (_, user_id) = portal_form(&req, &state, &form.csrf).await?;
    let id: SimpleFinDestinationId = path.parse().map_err(|_| PageError::not_found())?;
    let now = state.clock.now().naive_utc();
    with_conn(&state, move |conn| {
        // Only the user's own: another user's id is as absent as a made-up one.
        if store::owner_of(conn, id)? != Some(user_id) {
            return Err(PageError::not_found());
        }
        store::revoke(conn, id, now)?;
        Ok(())
    })
    .await?;
    Ok(see_other("/portal#simplefin"))
}
