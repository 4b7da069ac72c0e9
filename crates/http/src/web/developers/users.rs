//! An app's users in the developer dashboard: who they are (e-mail,
//! external id, the id the app knows them by), their connections with
//! status and last sync, the accounts they use against their limit; a
//! search; erasing one after a confirm page.

use super::apps::owned;
use super::session::Developer;
use crate::state::AppState;
use crate::web::confirm::{Ask, ask_first};
use crate::web::page::{PageError, render, see_other, when};
use crate::web::session::{CsrfForm, with_conn};
use actix_web::{HttpRequest, HttpResponse, web};
use askama::Template;
use serde::Deserialize;
use tributary_app::links::DEVELOPERS_ROOT as ROOT;
use tributary_domain::ids::AppId;
use tributary_storage::app_users::{self, AppUserLine};
use tributary_storage::apps::{self, AppRecord};
use tributary_storage::users::UserRecord;

/// Users one page lists; a search finds the others.
const PAGE_SIZE: i64 = 100;
/// The longest search the form takes.
const MAX_SEARCH: usize = 200;

pub(super) struct ConnectionLine {
    pub institution: String,
    pub provider: String,
    pub status: String,
    pub last_sync: String,
}

pub(super) struct UserLine {
    pub public_id: String,
    pub email: String,
    pub external_id: String,
    pub connections: Vec<ConnectionLine>,
    /// "2 of 6", "2 (no limit)".
    pub accounts: String,
    pub created: String,
}

impl UserLine {
    fn new(line: AppUserLine, app: &AppRecord) -> Self {
        let limit = apps::effective_account_limit(line.user.max_accounts, app);
        UserLine {
            public_id: line.user.public_id.clone().unwrap_or_default(),
            external_id: line.user.external_user_id.clone().unwrap_or_default(),
            connections: line
                .connections
                .iter()
                .map(|c| ConnectionLine {
                    institution: c.institution_name.clone(),
                    provider: c.provider.as_str().to_owned(),
                    status: c.status.as_str().to_owned(),
                    last_sync: when(c.last_synced_at, "never"),
                })
                .collect(),
            accounts: match limit {
                Some(max) => format!("{} of {max}", line.accounts),
                None => format!("{} (no limit)", line.accounts),
            },
            created: when(Some(line.user.created_at), "-"),
            email: line.user.email,
        }
    }
}

#[derive(Template)]
#[template(path = "developers_users.html")]
struct UsersPage<'a> {
    title: &'a str,
    email: &'a str,
    csrf: &'a str,
    app_id: AppId,
    app_name: &'a str,
    search: &'a str,
    users: Vec<UserLine>,
    page_size: i64,
}

#[derive(Deserialize)]
pub(super) struct SearchQuery {
    #[serde(default)]
    q: String,
}

/// `GET /developers/apps/{id}/users?q=`: newest first; `q` matches the
/// e-mail, external id or user id in any case.
pub(super) async fn list(
    req: HttpRequest,
    state: web::Data<AppState>,
    path: web::Path<String>,
    query: web::Query<SearchQuery>,
) -> Result<HttpResponse, PageError> {
    let developer = Developer::required(&req, &state).await?;
    let app = owned(&state, &developer, &path).await?;
    let search = query.q.trim().to_owned();
    if search.chars().count() > MAX_SEARCH {
        return Err(PageError::bad_request(format!(
            "Search: at most {MAX_SEARCH} characters."
        )));
    }
    let (app_id, text) = (app.id, search.clone());
    let found = with_conn(&state, move |conn| {
        let text = (!text.is_empty()).then_some(text.as_str());
        Ok(app_users::app_users(conn, app_id, text, PAGE_SIZE)?)
    })
    .await?;
    render(&UsersPage {
        title: "Users",
        email: &developer.record.email,
        csrf: &developer.csrf(),
        app_id: app.id,
        app_name: &app.name,
        search: &search,
        users: found.into_iter().map(|l| UserLine::new(l, &app)).collect(),
        page_size: PAGE_SIZE,
    })
}

/// The user the app knows as `public_id`, when the app is the developer's.
async fn owned_user(
    state: &web::Data<AppState>,
    developer: &Developer,
    path: &(String, String),
) -> Result<(AppRecord, UserRecord), PageError> {
    let app = owned(state, developer, &path.0).await?;
    let (app_id, public_id) = (app.id, path.1.clone());
    let user = with_conn(state, move |conn| {
        apps::find_app_user(conn, app_id, &public_id)?.ok_or_else(PageError::not_found)
    })
    .await?;
    Ok((app, user))
}

/// `GET /developers/apps/{id}/users/{user_id}/erase`: asks first.
pub(super) async fn erase_form(
    req: HttpRequest,
    state: web::Data<AppState>,
    path: web::Path<(String, String)>,
) -> Result<HttpResponse, PageError> {
    let developer = Developer::required(&req, &state).await?;
    let (app, user) = owned_user(&state, &developer, &path).await?;
    let ask = Ask {
        title: "Erase a user",
        question: format!("Erase {} from {}?", user.email, app.name),
        consequence: "Their connections, accounts, transactions, balances, holdings and tokens are erased from this server, and your app can no longer read them. This cannot be undone.",
        button: "Erase the user",
        button_id: "erase-user",
        danger: true,
        keep: "Keep it",
    };
    let back = format!("{ROOT}/apps/{}/users", app.id);
    ask_first(&req, developer.header(), &developer.csrf(), &ask, &back)
}

/// `POST /developers/apps/{id}/users/{user_id}/erase`.
pub(super) async fn erase(
    req: HttpRequest,
    state: web::Data<AppState>,
    path: web::Path<(String, String)>,
    form: web::Form<CsrfForm>,
) -> Result<HttpResponse, PageError> {
    let developer = Developer::form(&req, &state, &form.csrf).await?;
    let (app, user) = owned_user(&state, &developer, &path).await?;
    let user_id = user.id;
    with_conn(&state, move |conn| Ok(apps::delete_user(conn, user_id)?)).await?;
    Ok(see_other(&format!("{ROOT}/apps/{}/users", app.id)))
}
