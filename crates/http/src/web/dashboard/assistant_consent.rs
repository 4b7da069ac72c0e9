//! `GET|POST /mcp/oauth/authorize`: an assistant that connects to `/mcp`
//! by URL sends the person here (docs/mcp.md, "OAuth"). The client and its
//! redirect URI are checked first, then the rest of the request (PKCE
//! S256, `response_type`, `resource`). Every failure is a page naming the
//! RFC 6749 §4.1.2.1 error, never a redirect: anyone may register a client
//! with any https redirect URI, so an error redirect from a link nobody
//! clicked through would make this server an open redirector (RFC 9700
//! §4.11.2). A person not signed in to the dashboard signs in and comes
//! back here; a signed-in person sees the assistant's name and where it
//! will be sent, ticks the accounts it may read, and allows or denies;
//! only that decision sends the browser to the assistant.

use super::session::{self, SignedIn};
use super::sign_in::PersonalSignIn;
use crate::mcp::oauth::{self as authorization, AUTHORIZE_PATH};
use crate::state::AppState;
use crate::web::account_scope::{self, AccountChoice};
use crate::web::authorize::back_to_the_app;
use crate::web::csp::Policy;
use crate::web::page::{PageError, render};
use crate::web::session::with_conn;
use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
use askama::Template;
use std::collections::HashMap;
use tributary_auth::oauth::OAuthError;
use tributary_domain::access::Viewer;
use tributary_domain::ids::AccountId;
use tributary_storage::apps::{self, AppRecord};
use tributary_storage::read;

#[derive(Template)]
#[template(path = "dashboard_assistant_consent.html")]
struct ConsentPage<'a> {
    title: &'a str,
    email: &'a str,
    csrf: &'a str,
    client_name: &'a str,
    /// Where the browser goes next: the redirect URI's host (or its
    /// scheme, for an app's own `cursor://…`).
    destination: &'a str,
    accounts: Vec<AccountChoice>,
    /// The authorization request, carried through the form.
    ask: &'a [(&'static str, String)],
    error: Option<&'a str>,
}

/// The parameters of an authorization request this page reads.
const PARAMETERS: [&str; 8] = [
    "response_type",
    "client_id",
    "redirect_uri",
    "code_challenge",
    "code_challenge_method",
    "state",
    "resource",
    "scope",
];

/// An authorization request whose client and redirect URI are known good.
struct Trusted {
    client: AppRecord,
    redirect_uri: String,
    state: Option<String>,
    challenge: String,
    /// The request's parameters, for the form to carry.
    ask: Vec<(&'static str, String)>,
}

/// The parameters of `pairs` (a query string or a form), each at most once
/// (RFC 6749 §3.1); the form's own fields are left to the caller.
fn parameters<'a>(
    pairs: impl Iterator<Item = (std::borrow::Cow<'a, str>, std::borrow::Cow<'a, str>)>,
) -> Result<HashMap<&'static str, String>, PageError> {
    let mut found = HashMap::new();
    for (name, value) in pairs {
        let Some(known) = PARAMETERS.iter().find(|p| **p == name) else {
            continue;
        };
        if found.insert(*known, value.into_owned()).is_some() {
            return Err(PageError::bad_request(format!(
                "The link names `{name}` twice: the assistant that sent you here built it wrongly."
            )));
        }
    }
    Ok(found)
}

/// Checks the request in `params`, the client and its redirect URI first.
async fn check(
    req: &HttpRequest,
    state: &web::Data<AppState>,
    params: HashMap<&'static str, String>,
) -> Result<Trusted, PageError> {
    let client_id = params.get("client_id").cloned().ok_or_else(|| {
        PageError::bad_request(
            "The link is missing `client_id`: the assistant that sent you here built it wrongly.",
        )
    })?;
    let now = state.clock.now().naive_utc();
    let (client, uris) = with_conn(state, move |conn| {
        let Some(client) = tributary_auth::mcp::find_client(conn, &client_id, now)? else {
            return Ok(None);
        };
        let uris = apps::redirect_uris(conn, client.id)?;
        Ok(Some((client, uris)))
    })
    .await?
    .ok_or_else(|| {
        PageError::bad_request(
            "No assistant is registered here with this `client_id` (an unused registration expires after a day): connect the assistant again.",
        )
    })?;
    let redirect_uri = match params.get("redirect_uri") {
        Some(uri) if uris.contains(uri) => uri.clone(),
        Some(_) => {
            return Err(PageError::bad_request(format!(
                "The link's `redirect_uri` is not one {} registered, so you are not sent there.",
                client.name
            )));
        }
        // RFC 6749 §3.1.2.3: optional when only one is registered.
        None if uris.len() == 1 => uris[0].clone(),
        None => {
            return Err(PageError::bad_request(
                "The link is missing `redirect_uri`: the assistant that sent you here built it wrongly.",
            ));
        }
    };
    let refused = |error: &str, description: &str| {
        PageError::bad_request(format!(
            "{} asked for something this server does not do ({error}: {description}). Go back to the assistant and connect it again; if this repeats, it does not support Tributary yet.",
            client.name
        ))
    };
    if params.get("response_type").map(String::as_str) != Some("code") {
        return Err(refused(
            "unsupported_response_type",
            "response_type must be code",
        ));
    }
    let challenge = params.get("code_challenge").cloned().unwrap_or_default();
    let method = params
        .get("code_challenge_method")
        .cloned()
        .unwrap_or_default();
    if let Err(err) = tributary_auth::oauth::check_pkce(&client, Some((&challenge, &method))) {
        return Err(refused(
            "invalid_request",
            &format!("PKCE with S256 is required: {err}"),
        ));
    }
    if let Some(resource) = params.get("resource")
        && !authorization::names_this_resource(state, req, resource)
    {
        return Err(refused(
            "invalid_target",
            "resource must be this server's /mcp: its tokens are for it alone",
        ));
    }
    let client_state = params.get("state").cloned();
    let mut ask: Vec<(&'static str, String)> = params.into_iter().collect();
    ask.sort();
    Ok(Trusted {
        client,
        redirect_uri,
        state: client_state,
        challenge,
        ask,
    })
}

/// Where a redirect URI sends the browser, in words a person checks: its
/// host, or its scheme for an app's own (`cursor:`).
pub(super) fn destination(redirect_uri: &str) -> String {
    match url::Url::parse(redirect_uri) {
        Ok(url) => match url.host_str() {
            Some(host) => host.to_owned(),
            None => format!("{}:", url.scheme()),
        },
        Err(_) => redirect_uri.to_owned(),
    }
}

async fn show(
    state: &web::Data<AppState>,
    signed_in: &SignedIn,
    trusted: &Trusted,
    error: Option<&str>,
    status: StatusCode,
) -> Result<HttpResponse, PageError> {
    let user_id = signed_in.user.id;
    let accounts = with_conn(state, move |conn| {
        Ok(read::list_accounts(conn, &Viewer::whole_user(user_id))?)
    })
    .await?;
    let mut page = render(&ConsentPage {
        title: "Connect an assistant",
        email: &signed_in.user.email,
        csrf: &signed_in.csrf(),
        client_name: &trusted.client.name,
        destination: &destination(&trusted.redirect_uri),
        accounts: account_scope::choices(&accounts),
        ask: &trusted.ask,
        error,
    })?;
    *page.status_mut() = status;
    // Allow and Deny both end in a redirect to the assistant.
    Ok(Policy::strict()
        .form_action_to(&trusted.redirect_uri)
        .apply(page))
}

/// `GET /mcp/oauth/authorize`.
pub(super) async fn page(
    req: HttpRequest,
    state: web::Data<AppState>,
) -> Result<HttpResponse, PageError> {
    let params = parameters(url::form_urlencoded::parse(req.query_string().as_bytes()))?;
    let trusted = check(&req, &state, params).await?;
    let Some(signed_in) = session::current(&req, &state).await? else {
        // Sign in first, then back here.
        let mut response = crate::web::code_sign_in::page::<PersonalSignIn>(&req, &state).await?;
        let back_here = format!("{AUTHORIZE_PATH}?{}", req.query_string());
        response
            .add_cookie(&session::return_cookie(&state, &back_here))
            .map_err(PageError::internal)?;
        return Ok(response);
    };
    show(&state, &signed_in, &trusted, None, StatusCode::OK).await
}

/// `POST /mcp/oauth/authorize`: `csrf`, `decision` (`allow` or `deny`),
/// `account` once per account chosen, and the request's parameters.
pub(super) async fn decide(
    req: HttpRequest,
    state: web::Data<AppState>,
    body: web::Bytes,
) -> Result<HttpResponse, PageError> {
    let mut csrf = String::new();
    let mut decision = String::new();
    let mut chosen: Vec<AccountId> = Vec::new();
    for (field, value) in url::form_urlencoded::parse(&body) {
        match field.as_ref() {
            "csrf" => csrf = value.into_owned(),
            "decision" => decision = value.into_owned(),
            "account" => chosen.push(value.parse().map_err(|_| {
                PageError::bad_request("Accounts: one of the chosen accounts is not an account id.")
            })?),
            _ => {}
        }
    }
    let signed_in = session::form(&req, &state, &csrf).await?;
    let params = parameters(url::form_urlencoded::parse(&body))?;
    let trusted = check(&req, &state, params).await?;
    let issuer = authorization::issuer(&state, &req);
    let mut pairs: Vec<(&str, String)> = Vec::new();
    match decision.as_str() {
        "deny" => {
            pairs.push(("error", "access_denied".into()));
            pairs.push(("error_description", "the person denied access".into()));
        }
        "allow" if chosen.is_empty() => {
            return show(
                &state,
                &signed_in,
                &trusted,
                Some("Choose at least one account the assistant may read."),
                StatusCode::BAD_REQUEST,
            )
            .await;
        }
        "allow" => {
            let user_id = signed_in.user.id;
            let now = state.clock.now().naive_utc();
            let (client, uri, challenge) = (
                trusted.client.clone(),
                trusted.redirect_uri.clone(),
                trusted.challenge.clone(),
            );
            let code = with_conn(&state, move |conn| {
                tributary_auth::mcp::consent(
                    conn,
                    &client,
                    user_id,
                    &chosen,
                    &uri,
                    (&challenge, "S256"),
                    now,
                )
                .map_err(|err| match err {
                    OAuthError::Storage(err) => account_scope::refused(err),
                    other => PageError::bad_request(format!(
                        "{} cannot receive your consent: {other}.",
                        client.name
                    )),
                })
            })
            .await?;
            pairs.push(("code", code));
        }
        _ => return Err(PageError::bad_request("Choose Allow or Deny.")),
    }
    if let Some(client_state) = &trusted.state {
        pairs.push(("state", client_state.clone()));
    }
    let pairs: Vec<(&str, &str)> = pairs.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let mut response = back_to_the_app(&trusted.redirect_uri, &issuer, &pairs);
    response
        .add_removal_cookie(&session::return_cookie(&state, ""))
        .map_err(PageError::internal)?;
    Ok(response)
}
