//! `GET /api/platform/oauth/authorize`: checks the app and its redirect URI
//! first (a failure there is a page, never a redirect, so nobody can bounce
//! users to an address the app did not register), then the rest of the
//! request (failures redirect back with RFC 6749 §4.1.2.1 `error=`), then
//! starts the browser session and sends the person to sign in.

use super::page::{PageError, found, see_other};
use super::session::{cookie, with_conn};
use crate::platform::metadata::issuer;
use crate::state::AppState;
use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
use std::collections::HashMap;
use tributary_auth::oauth::{self, OAuthStore as _};
use tributary_auth::web_session::{self, AuthorizationRequest, StartError};

/// An authorization response (RFC 6749 §4.1.2 and §4.1.2.1): back to the
/// app's `redirect_uri` with `pairs` added to its query (what it had is
/// kept) and `iss`, this server's issuer (RFC 9207), so that a client
/// talking to several authorization servers knows which one answered.
pub(super) fn back_to_the_app(
    redirect_uri: &str,
    issuer: &str,
    pairs: &[(&str, &str)],
) -> HttpResponse {
    let location = match url::Url::parse(redirect_uri) {
        Ok(mut url) => {
            {
                let mut query = url.query_pairs_mut();
                for (name, value) in pairs {
                    query.append_pair(name, value);
                }
                query.append_pair("iss", issuer);
            }
            url.into()
        }
        // Registered URIs are validated absolute URLs; this is unreachable
        // for them, and never used for anything else.
        Err(_) => redirect_uri.to_owned(),
    };
    found(&location)
}

fn error_redirect(
    redirect_uri: &str,
    issuer: &str,
    state: Option<&str>,
    error: &str,
    description: &str,
) -> HttpResponse {
    let mut pairs = vec![("error", error), ("error_description", description)];
    if let Some(state) = state {
        pairs.push(("state", state));
    }
    back_to_the_app(redirect_uri, issuer, &pairs)
}

#[utoipa::path(
    get,
    path = "/oauth/authorize",
    operation_id = "authorize",
    tag = "OAuth",
    summary = "Start the authorization flow (a browser page)",
    description = "Send the user's browser here. They sign in by e-mailed code, connect a bank and consent; the browser then returns to `redirect_uri` with `code` and `state` (or `error`), and `iss`, the issuer of the metadata (RFC 9207): check it before redeeming the code. A link that cannot be trusted to redirect (unknown client, unregistered `redirect_uri`) answers an HTML page saying so.",
    security(()),
    params(
        ("response_type" = String, Query, description = "`code`."),
        ("client_id" = String, Query, description = "The app's client id.", min_length = 1),
        ("redirect_uri" = String, Query, description = "One of the app's registered redirect URIs, exactly.", min_length = 1),
        ("state" = Option<String>, Query, description = "Returned as sent."),
        ("code_challenge" = Option<String>, Query, description = "PKCE: BASE64URL(SHA-256(code_verifier)); required of public clients."),
        ("code_challenge_method" = Option<String>, Query, description = "`S256`."),
        ("scope" = Option<String>, Query, description = "Ignored: a grant reads the user's accounts."),
    ),
    responses(
        (status = 303, description = "On to sign-in, a Tributary page (`Location`)."),
        (status = 302, description = "Back to `redirect_uri` with `error` (`invalid_request`, `unsupported_response_type`, ...), `state` and `iss` (RFC 9207), as RFC 6749 §4.1.2.1 says."),
        (status = 400, description = "An HTML page: the link is missing `client_id` or `redirect_uri`, or they do not match a registered app, so it cannot be trusted to redirect.", content_type = "text/html", body = String),
    )
)]
pub(super) async fn start(
    req: HttpRequest,
    state: web::Data<AppState>,
    query: web::Query<HashMap<String, String>>,
) -> Result<HttpResponse, PageError> {
    let query = query.into_inner();
    let param = |name: &str| {
        query
            .get(name)
            .map(String::as_str)
            .filter(|v| !v.is_empty())
    };
    let client_id = param("client_id")
        .ok_or_else(|| {
            PageError::bad_request(
                "The link is missing `client_id`: the app that sent you here built it wrongly.",
            )
        })?
        .to_owned();
    let redirect_uri = param("redirect_uri")
        .ok_or_else(|| {
            PageError::bad_request(
                "The link is missing `redirect_uri`: the app that sent you here built it wrongly.",
            )
        })?
        .to_owned();
    let lookup_uri = redirect_uri.clone();
    let app = with_conn(&state, move |conn| {
        let app = conn.find_app(&client_id)?.ok_or_else(|| {
            PageError::new(
                StatusCode::BAD_REQUEST,
                "Unknown app",
                "The app that sent you here is not registered with this service.",
            )
        })?;
        if !conn.redirect_uris(app.id)?.contains(&lookup_uri) {
            return Err(PageError::new(
                StatusCode::BAD_REQUEST,
                "Unregistered return address",
                format!(
                    "{} asked to send you back to an address it has not registered, so you are not sent there.",
                    app.name
                ),
            ));
        }
        Ok(app)
    })
    .await?;

    let client_state = param("state");
    let issuer = issuer(&state, &req);
    if let Some(kind) = param("response_type").filter(|t| *t != "code") {
        return Ok(error_redirect(
            &redirect_uri,
            &issuer,
            client_state,
            "unsupported_response_type",
            &format!("response_type `{kind}` is not supported: use code"),
        ));
    }
    let Some(client_state) = client_state else {
        return Ok(error_redirect(
            &redirect_uri,
            &issuer,
            None,
            "invalid_request",
            "state is required",
        ));
    };
    let challenge = match (param("code_challenge"), param("code_challenge_method")) {
        (Some(challenge), method) => Some((challenge, method.unwrap_or("plain"))),
        (None, Some(_)) => {
            return Ok(error_redirect(
                &redirect_uri,
                &issuer,
                Some(client_state),
                "invalid_request",
                "code_challenge_method was sent without code_challenge",
            ));
        }
        (None, None) => None,
    };
    let challenge = match oauth::check_pkce(&app, challenge) {
        Ok(checked) => checked,
        Err(err) => {
            return Ok(error_redirect(
                &redirect_uri,
                &issuer,
                Some(client_state),
                err.code(),
                &err.to_string(),
            ));
        }
    };

    let request = (
        redirect_uri.clone(),
        client_state.to_owned(),
        challenge.map(|(c, method)| (c.to_owned(), method)),
        param("email").map(str::to_owned),
        state.client_ip(&req),
    );
    let now = state.clock.now().naive_utc();
    let token = with_conn(&state, move |conn| {
        let (redirect_uri, client_state, challenge, login_hint, ip) = &request;
        web_session::start_authorization(
            conn,
            app.id,
            &AuthorizationRequest {
                redirect_uri,
                state: Some(client_state),
                code_challenge: challenge.as_ref().map(|(c, method)| (c.as_str(), *method)),
                login_hint: login_hint.as_deref(),
                ip,
            },
            now,
        )
        .map_err(|err| match err {
            StartError::Storage(err) => err.into(),
            limited @ StartError::RateLimited => PageError::new(
                StatusCode::TOO_MANY_REQUESTS,
                "Too many sign-ins",
                limited.to_string(),
            ),
        })
    })
    .await?;
    let mut response = see_other("/connect/sign-in");
    response
        .add_cookie(&cookie(&state, token))
        .map_err(PageError::internal)?;
    Ok(response)
}

/// The authorization endpoint, `/oauth/authorize` under `/api/platform`:
/// the browser flow's first page, in the Platform's OpenAPI document.
pub(crate) fn operation() -> crate::routes::Operation {
    crate::routes::Operation::new::<__path_start, _, _>(start).page()
}
