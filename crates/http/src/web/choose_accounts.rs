//! Choosing which of a connection's accounts to share, at
//! `/connect/connections/{id}/accounts`: after a first sync found more
//! accounts than the person may have (nothing was stored; what was found
//! is offered), or at any time to stop sharing some. The choice holds for
//! every later sync (`tributary_storage::account_choice`).

use super::banks::kind_in_words;
use super::connect::sync_in_background;
use super::connections::open;
use super::header::Header;
use super::page::{PageError, render_with, see_other};
use super::session::with_conn;
use super::visitor::Visitor;
use crate::state::AppState;
use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
use askama::Template;
use std::collections::BTreeSet;
use tributary_storage::StorageError;
use tributary_storage::account_choice::{self, Choosable};
use tributary_storage::connections::ConnectionRecord;

/// One account on the form.
struct Choice {
    /// The provider's account id, the checkbox's value.
    value: String,
    label: String,
    checked: bool,
}

#[derive(Template)]
#[template(path = "choose_accounts.html")]
struct ChoosePage<'a> {
    title: &'a str,
    header: Header,
    csrf: &'a str,
    connection: &'a ConnectionRecord,
    choices: Vec<Choice>,
    /// How many may be chosen, when a limit applies, and whose it is.
    allowance: Option<(i64, String)>,
    error: Option<String>,
}

fn label(account: &Choosable) -> String {
    let mask = account
        .mask
        .as_ref()
        .map(|m| format!(" ····{m}"))
        .unwrap_or_default();
    format!(
        "{}{mask} ({}, {})",
        account.name,
        kind_in_words(account.kind),
        account.currency
    )
}

async fn page(
    state: &web::Data<AppState>,
    visitor: &impl Visitor,
    connection: &ConnectionRecord,
    ticked: Option<&BTreeSet<String>>,
    error: Option<String>,
    status: StatusCode,
) -> Result<HttpResponse, PageError> {
    let (user, id) = (visitor.user().id, connection.id);
    let (choices, allowance) = with_conn(state, move |conn| {
        Ok((
            account_choice::choices(conn, id)?,
            account_choice::allowance(conn, user, id)?,
        ))
    })
    .await?;
    let choices = choices
        .into_iter()
        .map(|(account, shared)| Choice {
            checked: ticked.map_or(shared, |t| t.contains(&account.id)),
            label: label(&account),
            value: account.id,
        })
        .collect();
    render_with(
        status,
        &ChoosePage {
            title: "Choose the accounts to share",
            header: visitor.header(),
            csrf: &visitor.csrf(),
            connection,
            choices,
            allowance: allowance.map(|n| (n, visitor.limit_holder())),
            error,
        },
    )
}

pub(super) async fn form<V: Visitor>(
    req: HttpRequest,
    state: web::Data<AppState>,
    path: web::Path<String>,
) -> Result<HttpResponse, PageError> {
    let (visitor, connection) = open::<V>(&req, &state, &path, None).await?;
    page(&state, &visitor, &connection, None, None, StatusCode::OK).await
}

/// The form's post: the CSRF token and a repeated `account` field (a
/// serde form cannot carry a repeated field, so the body is read here).
pub(super) async fn choose<V: Visitor>(
    req: HttpRequest,
    state: web::Data<AppState>,
    path: web::Path<String>,
    body: web::Bytes,
) -> Result<HttpResponse, PageError> {
    let mut csrf = String::new();
    let mut chosen = BTreeSet::new();
    for (field, value) in url::form_urlencoded::parse(&body) {
        match field.as_ref() {
            "csrf" => csrf = value.into_owned(),
            "account" => {
                chosen.insert(value.into_owned());
            }
            _ => {}
        }
    }
    let (visitor, connection) = open::<V>(&req, &state, &path, Some(&csrf)).await?;
    if chosen.is_empty() {
        let why = "Accounts: choose at least one, or remove the connection instead.";
        let status = StatusCode::BAD_REQUEST;
        return page(
            &state,
            &visitor,
            &connection,
            Some(&chosen),
            Some(why.into()),
            status,
        )
        .await;
    }
    let (user, id, now) = (
        visitor.user().id,
        connection.id,
        state.clock.now().naive_utc(),
    );
    let to_store = chosen.clone();
    let stored = with_conn(&state, move |conn| {
        Ok(account_choice::choose(conn, user, id, &to_store, now))
    })
    .await?;
    let why = match stored {
        Ok(()) => {
            sync_in_background(&state, connection.id).await;
            return Ok(see_other(&format!("/connect/progress/{}", connection.id)));
        }
        Err(StorageError::AccountLimit(limit)) => format!(
            "Accounts: you chose {}, and {} allows {} more.",
            limit.adding,
            visitor.limit_holder(),
            i64::from(limit.limit) - limit.existing
        ),
        Err(StorageError::InvalidReference(_)) => {
            "Accounts: one of the chosen accounts is not this connection's.".to_owned()
        }
        Err(err) => return Err(PageError::from(err)),
    };
    let status = StatusCode::BAD_REQUEST;
    page(
        &state,
        &visitor,
        &connection,
        Some(&chosen),
        Some(why),
        status,
    )
    .await
}
