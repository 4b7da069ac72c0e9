//! API keys in the dashboard: create one with a name and an optional
//! account scope (shown once, with a ready curl line), list them with when
//! each was created and last used, revoke one.

use super::session::{self, SignedIn};
use crate::state::AppState;
use crate::web::account_scope::{self, AccountChoice, ScopedForm};
use crate::web::confirm::Ask;
use crate::web::page::{PageError, render, see_other, when};
use crate::web::session::with_conn;
use actix_web::{HttpRequest, HttpResponse, web};
use askama::Template;
use tributary_auth::api_keys::{self, ApiKeyError};
use tributary_domain::access::Viewer;
use tributary_domain::ids::{ApiKeyId, UserId};
use tributary_storage::api_keys as store;
use tributary_storage::{AnyConnection, read};

pub(super) struct KeyLine {
    pub id: ApiKeyId,
    pub name: String,
    pub scope: String,
    pub created: String,
    pub last_used: String,
    pub revoked: Option<String>,
}

#[derive(Template)]
#[template(path = "dashboard_keys.html")]
struct KeysPage<'a> {
    title: &'a str,
    email: &'a str,
    csrf: &'a str,
    keys: Vec<KeyLine>,
    accounts: Vec<AccountChoice>,
}

#[derive(Template)]
#[template(path = "dashboard_key_created.html")]
struct CreatedPage<'a> {
    title: &'a str,
    email: &'a str,
    csrf: &'a str,
    name: &'a str,
    key: &'a str,
    curl: &'a str,
}

/// The user's keys (newest first) and accounts, for the page.
fn gather(
    conn: &mut tributary_storage::AnyConnection,
    user_id: UserId,
) -> Result<(Vec<KeyLine>, Vec<AccountChoice>), PageError> {
    let accounts = read::list_accounts(conn, &Viewer::whole_user(user_id))?;
    let mut keys: Vec<KeyLine> = store::list_for_user(conn, user_id)?
        .into_iter()
        .map(|(key, scope)| KeyLine {
            id: key.id,
            scope: account_scope::in_words(scope.as_deref(), &accounts),
            name: key.name,
            created: when(Some(key.created_at), "never"),
            last_used: when(key.last_used_at, "never"),
            revoked: key.revoked_at.map(|t| when(Some(t), "never")),
        })
        .collect();
    keys.reverse();
    Ok((keys, account_scope::choices(&accounts)))
}

async fn show(
    state: &web::Data<AppState>,
    signed_in: &SignedIn,
) -> Result<HttpResponse, PageError> {
    let user_id = signed_in.user.id;
    let (keys, accounts) = with_conn(state, move |conn| gather(conn, user_id)).await?;
    render(&KeysPage {
        title: "API keys",
        email: &signed_in.user.email,
        csrf: &signed_in.csrf(),
        keys,
        accounts,
    })
}

pub(super) async fn list(
    req: HttpRequest,
    state: web::Data<AppState>,
) -> Result<HttpResponse, PageError> {
    let signed_in = session::required(&req, &state).await?;
    show(&state, &signed_in).await
}

/// `POST /keys`: `name`, `csrf`, and `account` once per scoped account
/// (none: every account).
pub(super) async fn create(
    req: HttpRequest,
    state: web::Data<AppState>,
    body: web::Bytes,
) -> Result<HttpResponse, PageError> {
    let form = ScopedForm::parse(&body)?;
    let signed_in = session::form(&req, &state, &form.csrf).await?;
    let name = form.checked_name("key")?.to_owned();
    let user_id = signed_in.user.id;
    let now = state.clock.now();
    let key_name = name.clone();
    let issued = with_conn(&state, move |conn| {
        api_keys::issue(conn, user_id, &key_name, form.scope.as_deref(), now).map_err(|err| {
            match err {
                ApiKeyError::Storage(err) => account_scope::refused(err),
                other => PageError::internal(other),
            }
        })
    })
    .await?;
    let curl = format!(
        "curl -H 'x-api-key: {}' {}",
        issued.plain_text,
        state.absolute_url(&req, "/api/v1/accounts")
    );
    render(&CreatedPage {
        title: "Your new API key",
        email: &signed_in.user.email,
        csrf: &signed_in.csrf(),
        name: &name,
        key: &issued.plain_text,
        curl: &curl,
    })
}

/// `GET /keys/{id}/revoke`: asks first, about a live key of the person's.
pub(super) async fn revoke_form(
    req: HttpRequest,
    state: web::Data<AppState>,
    path: web::Path<String>,
) -> Result<HttpResponse, PageError> {
    let name_of = |conn: &mut AnyConnection, user, id: ApiKeyId| {
        Ok(store::list_for_user(conn, user)?
            .into_iter()
            .find(|(key, _)| key.id == id && key.revoked_at.is_none())
            .map(|(key, _)| key.name))
    };
    let ask = |name| Ask {
        title: "Revoke an API key",
        question: format!("Revoke the key “{name}”?"),
        consequence: "Programs that read your accounts with it are refused from now on; give them a new key to read again. A revoked key cannot be brought back.",
        button: "Revoke the key",
        button_id: "revoke",
        danger: true,
        keep: "Keep it",
    };
    super::ask_about_own(&req, &state, &path, name_of, ask, "/keys").await
}

/// `POST /keys/{id}/revoke`.
pub(super) async fn revoke(
    req: HttpRequest,
    state: web::Data<AppState>,
    path: web::Path<String>,
    form: web::Form<crate::web::session::CsrfForm>,
) -> Result<HttpResponse, PageError> {
    let signed_in = session::form(&req, &state, &form.csrf).await?;
    let id: ApiKeyId = path.parse().map_err(|_| PageError::not_found())?;
    let user_id = signed_in.user.id;
    let now = state.clock.now().naive_utc();
    with_conn(&state, move |conn| {
        // Only the user's own: another user's key is as absent as a made-up one.
        if store::owner_of(conn, id)? != Some(user_id) {
            return Err(PageError::not_found());
        }
        store::revoke(conn, id, now)?;
        Ok(())
    })
    .await?;
    Ok(see_other("/keys"))
}
