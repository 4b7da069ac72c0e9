//! API keys in the dashboard: create one with a name and an optional
//! account scope (shown once, with a ready curl line), list them with when
//! each was created and last used, revoke one.

use super::session::{self, SignedIn};
use crate::state::AppState;
use crate::web::banks::kind_in_words;
use crate::web::page::{PageError, render, see_other, when};
use crate::web::session::with_conn;
use actix_web::{HttpRequest, HttpResponse, web};
use askama::Template;
use tributary_auth::api_keys::{self, ApiKeyError};
use tributary_domain::access::Viewer;
use tributary_domain::ids::{AccountId, ApiKeyId, UserId};
use tributary_storage::api_keys as store;
use tributary_storage::{StorageError, read};

/// The longest key name a form takes.
const NAME_MAX_CHARS: usize = 100;

pub(super) struct KeyLine {
    pub id: ApiKeyId,
    pub name: String,
    pub scope: String,
    pub created: String,
    pub last_used: String,
    pub revoked: Option<String>,
}

pub(super) struct AccountChoice {
    pub id: AccountId,
    pub label: String,
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
    let label = |id: AccountId| {
        accounts
            .iter()
            .find(|a| a.id == id)
            .map(|a| a.name.clone())
            .unwrap_or_else(|| format!("account {id}"))
    };
    let mut keys: Vec<KeyLine> = store::list_for_user(conn, user_id)?
        .into_iter()
        .map(|(key, scope)| KeyLine {
            id: key.id,
            scope: match scope {
                None => "every account".to_owned(),
                Some(ids) => ids.into_iter().map(label).collect::<Vec<_>>().join(", "),
            },
            name: key.name,
            created: when(Some(key.created_at), "never"),
            last_used: when(key.last_used_at, "never"),
            revoked: key.revoked_at.map(|t| when(Some(t), "never")),
        })
        .collect();
    keys.reverse();
    let choices = accounts
        .iter()
        .map(|a| AccountChoice {
            id: a.id,
            label: format!(
                "{} ({}, {}, {})",
                a.name,
                a.institution_name,
                kind_in_words(a.kind),
                a.currency
            ),
        })
        .collect();
    Ok((keys, choices))
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
/// (none: every account). Read from the raw body, since a field repeats.
pub(super) async fn create(
    req: HttpRequest,
    state: web::Data<AppState>,
    body: web::Bytes,
) -> Result<HttpResponse, PageError> {
    let mut name = None;
    let mut csrf = String::new();
    let mut scope = Vec::new();
    for (field, value) in url::form_urlencoded::parse(&body) {
        match field.as_ref() {
            "name" => name = Some(value.trim().to_owned()),
            "csrf" => csrf = value.into_owned(),
            "account" => scope.push(value.parse::<AccountId>().map_err(|_| {
                PageError::bad_request("Accounts: one of the chosen accounts is not an account id.")
            })?),
            _ => {}
        }
    }
    let signed_in = session::form(&req, &state, &csrf).await?;
    let name = name.unwrap_or_default();
    if name.is_empty() || name.chars().count() > NAME_MAX_CHARS {
        return Err(PageError::bad_request(format!(
            "Name: give the key a name of 1 to {NAME_MAX_CHARS} characters, so you can tell it apart later."
        )));
    }
    let user_id = signed_in.user.id;
    let now = state.clock.now();
    let key_name = name.clone();
    let issued = with_conn(&state, move |conn| {
        let scope = (!scope.is_empty()).then_some(scope);
        // Storage refuses a scope naming an account that is not the user's.
        api_keys::issue(conn, user_id, &key_name, scope.as_deref(), now).map_err(|err| match err {
            ApiKeyError::Storage(StorageError::InvalidReference(_)) => PageError::bad_request(
                "Accounts: one of the chosen accounts is not yours, or no longer exists.",
            ),
            other => PageError::internal(other),
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
