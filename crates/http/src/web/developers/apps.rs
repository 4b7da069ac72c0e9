//! A developer's apps: the list and the form that creates one, an app's
//! page (client id, redirect URIs added and removed, the secret rotated),
//! and deleting an app with everything of its users. Every page and form
//! finds the app through [`owned`], so another developer's app, the
//! operator's and a made-up id all answer the same 404.

use super::session::Developer;
use crate::state::AppState;
use crate::web::confirm::{Ask, ask_first_posting};
use crate::web::page::{PageError, render, render_with, see_other, when};
use crate::web::session::{CsrfForm, with_conn};
use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
use askama::Template;
use serde::Deserialize;
use tributary_app::links::DEVELOPERS_ROOT as ROOT;
use tributary_auth::oauth::{new_client_id, new_client_secret, validate_redirect_uri};
use tributary_domain::ids::AppId;
use tributary_domain::model::BillingModel;
use tributary_domain::text::{MAX_NAME_CHARS, check_name};
use tributary_storage::apps::{self, AppRecord, NewApp, RedirectUriAdded, RedirectUriRemoved};
use tributary_storage::developers;

/// Redirect URIs one app may register from the dashboard.
const MAX_REDIRECT_URIS: usize = 20;

/// What the pages show of an app.
pub(super) struct AppLine {
    pub id: AppId,
    pub name: String,
    pub client_id: String,
    pub kind: &'static str,
    pub billing: &'static str,
    pub limit: String,
    pub created: String,
}

impl From<&AppRecord> for AppLine {
    fn from(app: &AppRecord) -> Self {
        AppLine {
            id: app.id,
            name: app.name.clone(),
            client_id: app.client_id.clone(),
            kind: if app.is_public {
                "public (PKCE, no secret)"
            } else {
                "confidential"
            },
            billing: match app.billing_model {
                BillingModel::Integrator => "you pay for your users",
                BillingModel::User => "each user pays",
            },
            limit: match (app.billing_model, app.default_max_accounts) {
                (BillingModel::Integrator, Some(max)) => format!("{max} accounts a user"),
                _ => "no limit".to_owned(),
            },
            created: when(Some(app.created_at), "-"),
        }
    }
}

/// A page that shows a refusal answers 400, else 200.
fn refused_if(error: Option<&str>) -> StatusCode {
    if error.is_some() {
        StatusCode::BAD_REQUEST
    } else {
        StatusCode::OK
    }
}

/// The app `id` (a path segment) when `developer` owns it, else 404.
pub(super) async fn owned(
    state: &web::Data<AppState>,
    developer: &Developer,
    id: &str,
) -> Result<AppRecord, PageError> {
    let id: AppId = id.parse().map_err(|_| PageError::not_found())?;
    let developer_id = developer.record.id;
    with_conn(state, move |conn| {
        developers::owned_app(conn, developer_id, id)?.ok_or_else(PageError::not_found)
    })
    .await
}

/// The create form's fields as typed, to show again with a refusal.
#[derive(Debug, Default, Deserialize)]
pub(super) struct NewAppForm {
    csrf: String,
    #[serde(default)]
    name: String,
    /// One per line.
    #[serde(default)]
    redirect_uris: String,
    /// `confidential` or `public`.
    #[serde(default)]
    client_type: String,
    /// `integrator` or `user`.
    #[serde(default)]
    billing: String,
    /// Empty: no limit.
    #[serde(default)]
    max_accounts: String,
}

/// A create form that passed every check.
struct CheckedApp {
    name: String,
    redirect_uris: Vec<String>,
    public: bool,
    billing: BillingModel,
    max_accounts: Option<i32>,
}

impl NewAppForm {
    /// The app the form describes, or a refusal naming the field.
    fn check(&self) -> Result<CheckedApp, String> {
        let name = check_name(&self.name, MAX_NAME_CHARS).map_err(|why| format!("Name: {why}."))?;
        let redirect_uris: Vec<String> = self
            .redirect_uris
            .lines()
            .map(str::trim)
            .filter(|line| !line.is_empty())
            .map(str::to_owned)
            .collect();
        if redirect_uris.is_empty() {
            return Err("Redirect URIs: give at least one, where the authorization flow returns to your app.".to_owned());
        }
        if redirect_uris.len() > MAX_REDIRECT_URIS {
            return Err(format!("Redirect URIs: at most {MAX_REDIRECT_URIS}."));
        }
        for uri in &redirect_uris {
            validate_redirect_uri(uri).map_err(|why| format!("Redirect URIs: {why}."))?;
        }
        let public = match self.client_type.as_str() {
            "confidential" => false,
            "public" => true,
            _ => return Err("Client type: choose confidential or public.".to_owned()),
        };
        let billing: BillingModel = self
            .billing
            .parse()
            .map_err(|_| "Who pays: choose you (integrator) or each user.".to_owned())?;
        let max_accounts = match self.max_accounts.trim() {
            "" => None,
            typed => Some(typed.parse::<i32>().ok().filter(|n| *n >= 0).ok_or(
                "Accounts a user may connect: a whole number from 0, or empty for no limit.",
            )?),
        };
        Ok(CheckedApp {
            name: name.to_owned(),
            redirect_uris,
            public,
            billing,
            max_accounts,
        })
    }
}

#[derive(Template)]
#[template(path = "developers_home.html")]
struct HomePage<'a> {
    title: &'a str,
    email: &'a str,
    csrf: &'a str,
    apps: Vec<AppLine>,
    form: &'a NewAppForm,
    error: Option<&'a str>,
}

async fn home(
    state: &web::Data<AppState>,
    developer: &Developer,
    form: &NewAppForm,
    error: Option<&str>,
) -> Result<HttpResponse, PageError> {
    let developer_id = developer.record.id;
    let apps = with_conn(state, move |conn| {
        Ok(developers::apps_of(conn, developer_id)?)
    })
    .await?;
    render_with(
        refused_if(error),
        &HomePage {
            title: "Your apps",
            email: &developer.record.email,
            csrf: &developer.csrf(),
            apps: apps.iter().map(AppLine::from).collect(),
            form,
            error,
        },
    )
}

/// `GET /developers`: the developer's apps and the form that creates one,
/// or how to sign in.
pub(super) async fn list(
    req: HttpRequest,
    state: web::Data<AppState>,
) -> Result<HttpResponse, PageError> {
    match Developer::current(&req, &state).await? {
        Some(developer) => {
            let blank = NewAppForm {
                client_type: "confidential".to_owned(),
                billing: "integrator".to_owned(),
                ..NewAppForm::default()
            };
            home(&state, &developer, &blank, None).await
        }
        None => {
            crate::web::code_sign_in::page::<super::session::DeveloperSignIn>(&req, &state).await
        }
    }
}

#[derive(Template)]
#[template(path = "developers_secret.html")]
struct SecretPage<'a> {
    title: &'a str,
    email: &'a str,
    csrf: &'a str,
    app: AppLine,
    /// `None` for a public app.
    secret: Option<&'a str>,
}

fn secret_page(
    developer: &Developer,
    title: &str,
    app: &AppRecord,
    secret: Option<&str>,
) -> Result<HttpResponse, PageError> {
    render(&SecretPage {
        title,
        email: &developer.record.email,
        csrf: &developer.csrf(),
        app: AppLine::from(app),
        secret,
    })
}

/// `POST /developers/apps`: creates the app; its client id and secret are
/// shown once.
pub(super) async fn create(
    req: HttpRequest,
    state: web::Data<AppState>,
    form: web::Form<NewAppForm>,
) -> Result<HttpResponse, PageError> {
    let developer = Developer::form(&req, &state, &form.csrf).await?;
    let checked = match form.check() {
        Ok(checked) => checked,
        Err(why) => return home(&state, &developer, &form, Some(&why)).await,
    };
    let developer_id = developer.record.id;
    let now = state.clock.now().naive_utc();
    let secret = (!checked.public).then(new_client_secret);
    let hash = secret.as_ref().map(|(_, hash)| hash.clone());
    let app = with_conn(&state, move |conn| {
        Ok(developers::create_owned_app(
            conn,
            developer_id,
            &NewApp {
                client_id: &new_client_id(),
                name: &checked.name,
                client_secret_hash: hash.as_deref(),
                billing_model: checked.billing,
                default_max_accounts: checked.max_accounts,
                redirect_uris: &checked.redirect_uris,
                now,
            },
        )?)
    })
    .await?;
    secret_page(
        &developer,
        "Your new app",
        &app,
        secret.as_ref().map(|(plain, _)| plain.as_str()),
    )
}

/// A registered redirect URI, and the page that asks before removing it.
pub(super) struct RedirectUriLine {
    pub uri: String,
    pub remove: String,
}

impl RedirectUriLine {
    fn new(app: AppId, uri: String) -> Self {
        let query = url::form_urlencoded::Serializer::new(String::new())
            .append_pair("uri", &uri)
            .finish();
        Self {
            remove: format!("{ROOT}/apps/{app}/redirect-uris/remove?{query}"),
            uri,
        }
    }
}

#[derive(Template)]
#[template(path = "developers_app.html")]
struct AppPage<'a> {
    title: &'a str,
    email: &'a str,
    csrf: &'a str,
    app: AppLine,
    is_public: bool,
    redirect_uris: Vec<RedirectUriLine>,
    users: i64,
    authorize_example: String,
    error: Option<&'a str>,
}

async fn app_page(
    req: &HttpRequest,
    state: &web::Data<AppState>,
    developer: &Developer,
    app: AppRecord,
    error: Option<&str>,
) -> Result<HttpResponse, PageError> {
    let app_id = app.id;
    let (redirect_uris, users) = with_conn(state, move |conn| {
        Ok((
            apps::redirect_uris(conn, app_id)?,
            developers::count_app_users(conn, app_id)?,
        ))
    })
    .await?;
    let authorize_example = tributary_app::demo::authorize_link(
        &state.absolute_url(req, ""),
        &app.client_id,
        redirect_uris.first().map_or("", String::as_str),
    );
    render_with(
        refused_if(error),
        &AppPage {
            title: &app.name,
            email: &developer.record.email,
            csrf: &developer.csrf(),
            is_public: app.is_public,
            redirect_uris: redirect_uris
                .into_iter()
                .map(|uri| RedirectUriLine::new(app.id, uri))
                .collect(),
            app: AppLine::from(&app),
            users,
            authorize_example,
            error,
        },
    )
}

/// `GET /developers/apps/{id}`.
pub(super) async fn page(
    req: HttpRequest,
    state: web::Data<AppState>,
    path: web::Path<String>,
) -> Result<HttpResponse, PageError> {
    let developer = Developer::required(&req, &state).await?;
    let app = owned(&state, &developer, &path).await?;
    app_page(&req, &state, &developer, app, None).await
}

/// `GET /developers/apps/{id}/secret`: asks first, since the app's
/// server is cut off until it holds the new secret.
pub(super) async fn rotate_secret_form(
    req: HttpRequest,
    state: web::Data<AppState>,
    path: web::Path<String>,
) -> Result<HttpResponse, PageError> {
    let developer = Developer::required(&req, &state).await?;
    let app = owned(&state, &developer, &path).await?;
    if app.is_public {
        return Err(no_secret());
    }
    let ask = Ask {
        title: "Rotate the client secret",
        question: format!("Rotate the secret of {}?", app.name),
        consequence: "A new secret is made and shown once. The old one stops working at once: your server cannot exchange codes or refresh tokens until it uses the new one.",
        button: "Rotate the secret",
        button_id: "rotate",
        danger: true,
        keep: "Keep the current secret",
    };
    ask_about(&req, &developer, &app, &ask, &[])
}

/// The page that asks `ask` about `app` (its form also posting
/// `fields`); "Keep it" returns to the app's page.
fn ask_about(
    req: &HttpRequest,
    developer: &Developer,
    app: &AppRecord,
    ask: &Ask,
    fields: &[(&str, &str)],
) -> Result<HttpResponse, PageError> {
    let back = format!("{ROOT}/apps/{}", app.id);
    ask_first_posting(
        req,
        developer.header(),
        &developer.csrf(),
        ask,
        &back,
        fields,
    )
}

fn no_secret() -> PageError {
    PageError::bad_request("This is a public app: it has no secret to rotate.")
}

/// `POST /developers/apps/{id}/secret`: a new secret, shown once; the old
/// one stops working at once.
pub(super) async fn rotate_secret(
    req: HttpRequest,
    state: web::Data<AppState>,
    path: web::Path<String>,
    form: web::Form<CsrfForm>,
) -> Result<HttpResponse, PageError> {
    let developer = Developer::form(&req, &state, &form.csrf).await?;
    let app = owned(&state, &developer, &path).await?;
    if app.is_public {
        return Err(no_secret());
    }
    let (secret, hash) = new_client_secret();
    let app_id = app.id;
    with_conn(&state, move |conn| {
        Ok(apps::set_secret_hash(conn, app_id, &hash)?)
    })
    .await?;
    secret_page(&developer, "A new client secret", &app, Some(&secret))
}

#[derive(Deserialize)]
pub(super) struct RedirectUriForm {
    csrf: String,
    #[serde(default)]
    uri: String,
}

/// `POST /developers/apps/{id}/redirect-uris`: registers one more.
pub(super) async fn add_redirect_uri(
    req: HttpRequest,
    state: web::Data<AppState>,
    path: web::Path<String>,
    form: web::Form<RedirectUriForm>,
) -> Result<HttpResponse, PageError> {
    let developer = Developer::form(&req, &state, &form.csrf).await?;
    let app = owned(&state, &developer, &path).await?;
    let uri = form.uri.trim().to_owned();
    if let Err(why) = validate_redirect_uri(&uri) {
        let message = format!("Redirect URI: {why}.");
        return app_page(&req, &state, &developer, app, Some(&message)).await;
    }
    let (app_id, now) = (app.id, state.clock.now().naive_utc());
    let added = with_conn(&state, move |conn| {
        Ok(apps::add_redirect_uri_up_to(
            conn,
            app_id,
            &uri,
            MAX_REDIRECT_URIS,
            now,
        )?)
    })
    .await?;
    if added == RedirectUriAdded::Full {
        let message =
            format!("Redirect URI: an app has at most {MAX_REDIRECT_URIS}; remove one first.");
        return app_page(&req, &state, &developer, app, Some(&message)).await;
    }
    // Added, or already there: what was asked for holds.
    Ok(see_other(&format!("{ROOT}/apps/{}", app.id)))
}

/// `POST /developers/apps/{id}/redirect-uris/remove`: an app keeps at
/// least one.
pub(super) async fn remove_redirect_uri(
    req: HttpRequest,
    state: web::Data<AppState>,
    path: web::Path<String>,
    form: web::Form<RedirectUriForm>,
) -> Result<HttpResponse, PageError> {
    let developer = Developer::form(&req, &state, &form.csrf).await?;
    let app = owned(&state, &developer, &path).await?;
    let (app_id, uri) = (app.id, form.uri.clone());
    let removed = with_conn(&state, move |conn| {
        Ok(apps::remove_redirect_uri_keeping_one(conn, app_id, &uri)?)
    })
    .await?;
    match removed {
        RedirectUriRemoved::Removed => Ok(see_other(&format!("{ROOT}/apps/{}", app.id))),
        RedirectUriRemoved::NotRegistered => Err(PageError::not_found()),
        RedirectUriRemoved::LastOne => {
            app_page(&req, &state, &developer, app, Some(KEEPS_ONE)).await
        }
    }
}

const KEEPS_ONE: &str =
    "Redirect URIs: an app keeps at least one; add the new one before removing the last.";

#[derive(Deserialize)]
pub(super) struct RedirectUriQuery {
    #[serde(default)]
    uri: String,
}

/// `GET /developers/apps/{id}/redirect-uris/remove?uri=`: asks first; the
/// last one is refused here already, as the form would refuse it.
pub(super) async fn remove_redirect_uri_form(
    req: HttpRequest,
    state: web::Data<AppState>,
    path: web::Path<String>,
    query: web::Query<RedirectUriQuery>,
) -> Result<HttpResponse, PageError> {
    let developer = Developer::required(&req, &state).await?;
    let app = owned(&state, &developer, &path).await?;
    let app_id = app.id;
    let registered = with_conn(&state, move |conn| Ok(apps::redirect_uris(conn, app_id)?)).await?;
    if !registered.contains(&query.uri) {
        return Err(PageError::not_found());
    }
    if registered.len() == 1 {
        return app_page(&req, &state, &developer, app, Some(KEEPS_ONE)).await;
    }
    let ask = Ask {
        title: "Remove a redirect URI",
        question: format!("Remove {} from {}?", query.uri, app.name),
        consequence: "The authorization flow no longer returns there: an authorization link that names it is refused, and so is a code exchange that names it.",
        button: "Remove the redirect URI",
        button_id: "remove-uri",
        danger: true,
        keep: "Keep it",
    };
    ask_about(&req, &developer, &app, &ask, &[("uri", &query.uri)])
}

/// `GET /developers/apps/{id}/delete`: asks first.
pub(super) async fn delete_form(
    req: HttpRequest,
    state: web::Data<AppState>,
    path: web::Path<String>,
) -> Result<HttpResponse, PageError> {
    let developer = Developer::required(&req, &state).await?;
    let app = owned(&state, &developer, &path).await?;
    let ask = Ask {
        title: "Delete an app",
        question: format!("Delete {}?", app.name),
        consequence: "Its client id and secret stop working at once, and every user of the app is erased with their connections, accounts, transactions and tokens. This cannot be undone.",
        button: "Delete the app and its users",
        button_id: "delete-app",
        danger: true,
        keep: "Keep it",
    };
    ask_about(&req, &developer, &app, &ask, &[])
}

/// `POST /developers/apps/{id}/delete`.
pub(super) async fn delete(
    req: HttpRequest,
    state: web::Data<AppState>,
    path: web::Path<String>,
    form: web::Form<CsrfForm>,
) -> Result<HttpResponse, PageError> {
    let developer = Developer::form(&req, &state, &form.csrf).await?;
    let id: AppId = path.parse().map_err(|_| PageError::not_found())?;
    let developer_id = developer.record.id;
    // The owner is checked in the statement that deletes.
    let deleted = with_conn(&state, move |conn| {
        Ok(developers::delete_owned_app(conn, developer_id, id)?)
    })
    .await?;
    if !deleted {
        return Err(PageError::not_found());
    }
    Ok(see_other(ROOT))
}
