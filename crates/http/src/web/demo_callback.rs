//! `/developers/demo/callback`: where the demo app's authorization codes
//! come back to (the quickstart of a first `platform-api` start,
//! docs/platform.md). The page does what an integrator's backend does with
//! a code: it redeems it for a token pair (in-process, as the demo app, whose
//! secret the server does not keep), then shows the accounts the token
//! reads and a curl line with the access token, so a newcomer sees the whole
//! flow end to end. It answers only for the demo app's codes.

use super::page::{PageError, render};
use super::session::with_conn;
use crate::state::AppState;
use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
use askama::Template;
use serde::Deserialize;
use tributary_app::demo::{self, DEMO_CALLBACK_PATH};
use tributary_auth::oauth::{self, OAuthError};
use tributary_domain::access::Viewer;
use tributary_storage::{apps, read};

#[derive(Debug, Deserialize)]
pub(super) struct Callback {
    code: Option<String>,
    error: Option<String>,
    error_description: Option<String>,
}

pub(super) struct AccountLine {
    pub name: String,
    pub institution: String,
    pub kind: &'static str,
    pub balance: String,
}

#[derive(Template)]
#[template(path = "demo_callback.html")]
struct CallbackPage<'a> {
    title: &'a str,
    accounts: Vec<AccountLine>,
    access_token: &'a str,
    expires_in: i64,
    curl: &'a str,
    again: &'a str,
}

pub(super) async fn page(
    req: HttpRequest,
    state: web::Data<AppState>,
    query: web::Query<Callback>,
) -> Result<HttpResponse, PageError> {
    let query = query.into_inner();
    let now = state.clock.now().naive_utc();
    let base = state.absolute_url(&req, "");
    // The demo app, and the redirect URI its codes were issued for.
    let (app, redirect_uri) = with_conn(&state, |conn| {
        let app = apps::demo_app(conn)?.ok_or_else(PageError::not_found)?;
        let redirect_uri = apps::redirect_uris(conn, app.id)?
            .into_iter()
            .find(|uri| uri.ends_with(DEMO_CALLBACK_PATH))
            .ok_or_else(PageError::not_found)?;
        Ok((app, redirect_uri))
    })
    .await?;
    let again = demo::authorize_link(&base, &app.client_id, &redirect_uri);
    if let Some(error) = query.error {
        return Err(PageError::new(
            StatusCode::BAD_REQUEST,
            "The authorization did not finish",
            format!(
                "Tributary sent the demo app `{error}`{}. Start again: {again}",
                query
                    .error_description
                    .map(|d| format!(" ({d})"))
                    .unwrap_or_default()
            ),
        ));
    }
    let code = query.code.ok_or_else(|| {
        PageError::bad_request(format!(
            "This page takes the `code` Tributary sends the demo app. Start the flow here: {again}"
        ))
    })?;
    let (pair, accounts) = with_conn(&state, move |conn| {
        let pair = oauth::redeem_code(conn, &app, &code, &redirect_uri, None, now).map_err(
            |err| match err {
                OAuthError::Storage(err) => err.into(),
                refused => PageError::bad_request(format!(
                    "The code was not accepted ({refused}): codes work once and for a few minutes. Start again from the authorization link."
                )),
            },
        )?;
        let viewer = Viewer::whole_user(pair.user_id);
        let mut lines = Vec::new();
        for account in read::list_accounts(conn, &viewer)? {
            let balance = read::latest_balance(conn, account.id)?
                .map(|b| format!("{} {}", b.amount, b.currency))
                .unwrap_or_else(|| "not synced yet".to_owned());
            lines.push(AccountLine {
                name: account.name,
                institution: account.institution_name,
                kind: super::banks::kind_in_words(account.kind),
                balance,
            });
        }
        Ok((pair, lines))
    })
    .await?;
    let curl = format!(
        "curl -H 'Authorization: Bearer {}' {base}/api/platform/v1/accounts",
        pair.access_token
    );
    render(&CallbackPage {
        title: "The demo app is connected",
        accounts,
        access_token: &pair.access_token,
        expires_in: pair.expires_in,
        curl: &curl,
        again: &again,
    })
}
