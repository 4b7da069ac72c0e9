//! `GET /connected-apps`, `GET|POST /connected-apps/{id}/revoke`: the
//! assistants a person let read their accounts over MCP (docs/mcp.md,
//! "OAuth"), each with the accounts it reads, when it was connected and
//! last used; revoking one (after a page that asks first) ends every token
//! it holds at once.

use super::assistant_consent::destination;
use super::session;
use crate::state::AppState;
use crate::web::account_scope;
use crate::web::confirm::Ask;
use crate::web::page::{PageError, render, see_other, when};
use crate::web::session::{CsrfForm, with_conn};
use actix_web::{HttpRequest, HttpResponse, web};
use askama::Template;
use tributary_domain::access::Viewer;
use tributary_domain::ids::GrantId;
use tributary_storage::{AnyConnection, mcp_clients, read};

pub(super) const PATH: &str = "/connected-apps";

pub(super) struct AppLine {
    pub id: GrantId,
    pub name: String,
    /// Where its codes went: the redirect URIs' hosts.
    pub sends_to: String,
    pub reads: String,
    pub connected: String,
    pub last_used: String,
}

#[derive(Template)]
#[template(path = "dashboard_connected_apps.html")]
struct ConnectedAppsPage<'a> {
    title: &'a str,
    email: &'a str,
    csrf: &'a str,
    mcp_url: &'a str,
    apps: Vec<AppLine>,
}

pub(super) async fn page(
    req: HttpRequest,
    state: web::Data<AppState>,
) -> Result<HttpResponse, PageError> {
    let signed_in = session::required(&req, &state).await?;
    let user_id = signed_in.user.id;
    let apps = with_conn(&state, move |conn| {
        let accounts = read::list_accounts(conn, &Viewer::whole_user(user_id))?;
        Ok(mcp_clients::connected_apps(conn, user_id)?
            .into_iter()
            .map(|app| AppLine {
                id: app.grant.id,
                sends_to: app
                    .redirect_uris
                    .iter()
                    .map(|uri| destination(uri))
                    .collect::<Vec<_>>()
                    .join(", "),
                reads: account_scope::in_words(Some(&app.accounts), &accounts),
                name: app.client_name,
                connected: when(Some(app.grant.created_at), "never"),
                last_used: when(app.grant.last_used_at, "never"),
            })
            .collect::<Vec<_>>())
    })
    .await?;
    render(&ConnectedAppsPage {
        title: "Connected apps",
        email: &signed_in.user.email,
        csrf: &signed_in.csrf(),
        mcp_url: &state.absolute_url(&req, crate::mcp::PATH),
        apps,
    })
}

/// `GET /connected-apps/{id}/revoke`: asks first, about an assistant the
/// person let in.
pub(super) async fn revoke_form(
    req: HttpRequest,
    state: web::Data<AppState>,
    path: web::Path<String>,
) -> Result<HttpResponse, PageError> {
    let name_of = |conn: &mut AnyConnection, user, id: GrantId| {
        Ok(mcp_clients::connected_apps(conn, user)?
            .into_iter()
            .find(|app| app.grant.id == id)
            .map(|app| app.client_name))
    };
    let ask = |name| Ask {
        title: "Revoke a connected app",
        question: format!("Revoke {name}?"),
        consequence: "It stops reading your accounts at once: every token it holds stops working. To use it again, connect it again and choose what it may read.",
        button: "Revoke access",
        button_id: "revoke",
        danger: true,
        keep: "Keep it",
    };
    super::ask_about_own(&req, &state, &path, name_of, ask, PATH).await
}

/// `POST /connected-apps/{id}/revoke`.
pub(super) async fn revoke(
    req: HttpRequest,
    state: web::Data<AppState>,
    path: web::Path<String>,
    form: web::Form<CsrfForm>,
) -> Result<HttpResponse, PageError> {
    let signed_in = session::form(&req, &state, &form.csrf).await?;
    let id: GrantId = path.parse().map_err(|_| PageError::not_found())?;
    let user_id = signed_in.user.id;
    let now = state.clock.now().naive_utc();
    let revoked = with_conn(&state, move |conn| {
        Ok(mcp_clients::revoke_grant(conn, user_id, id, now)?)
    })
    .await?;
    // Another person's grant is as absent as a made-up one.
    if !revoked {
        return Err(PageError::not_found());
    }
    Ok(see_other(PATH))
}
