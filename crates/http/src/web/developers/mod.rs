//! The developer dashboard (docs/platform.md#developer-dashboard), served
//! by `platform-api` under `/developers`: integrators sign in by e-mailed
//! code (who may sign up is `TRIBUTARY_DEVELOPER_SIGNUP`), create apps
//! (the client secret shown once), rotate secrets, manage redirect URIs,
//! delete apps, and see and erase their apps' users. Built like the other
//! pages: askama, no JavaScript, CSRF on every form, the same security
//! headers. Rotating, removing, deleting and erasing each ask first, on a
//! page at the action's own address (`web::confirm`). A developer sees
//! only their own apps; apps made with `tributary apps` are the operator's
//! and appear to no developer.
//!
//! - `GET /developers`: the apps and the create form, or how to sign in;
//! - `POST /developers/sign-in`, `POST /developers/sign-in/code`,
//!   `POST /developers/sign-out`;
//! - `POST /developers/apps`: create;
//! - `GET /developers/apps/{id}`: an app;
//! - `GET|POST /developers/apps/{id}/secret`: rotate the secret;
//! - `POST /developers/apps/{id}/redirect-uris`: add one;
//! - `GET|POST /developers/apps/{id}/redirect-uris/remove?uri=`;
//! - `GET|POST /developers/apps/{id}/delete`;
//! - `GET /developers/apps/{id}/users?q=`: the app's users;
//! - `GET|POST /developers/apps/{id}/users/{user_id}/erase`.

mod apps;
mod session;
mod users;

use super::code_sign_in;
use super::header::Header;
use super::page::PageError;
use super::resource::{form_config, no_page, query_config, security_headers};
use crate::state::AppState;
use actix_web::{HttpRequest, web};
use session::{Developer, DeveloperSignIn};

pub use session::DEVELOPER_COOKIE;

/// Where the developer dashboard lives on platform-api.
pub use tributary_app::links::DEVELOPERS_ROOT as ROOT;

pub(super) fn configure(cfg: &mut web::ServiceConfig) {
    cfg.service(
        web::scope(ROOT)
            .app_data(form_config())
            .app_data(query_config())
            .wrap(security_headers())
            .default_service(web::to(no_page))
            .route("", web::get().to(apps::list))
            .route(
                "/sign-in",
                web::post().to(code_sign_in::send_code::<DeveloperSignIn>),
            )
            .route(
                "/sign-in/code",
                web::post().to(code_sign_in::verify::<DeveloperSignIn>),
            )
            .route("/sign-out", web::post().to(session::sign_out))
            .route("/apps", web::post().to(apps::create))
            .route("/apps/{id}", web::get().to(apps::page))
            .route("/apps/{id}/secret", web::get().to(apps::rotate_secret_form))
            .route("/apps/{id}/secret", web::post().to(apps::rotate_secret))
            .route(
                "/apps/{id}/redirect-uris",
                web::post().to(apps::add_redirect_uri),
            )
            .route(
                "/apps/{id}/redirect-uris/remove",
                web::get().to(apps::remove_redirect_uri_form),
            )
            .route(
                "/apps/{id}/redirect-uris/remove",
                web::post().to(apps::remove_redirect_uri),
            )
            .route("/apps/{id}/delete", web::get().to(apps::delete_form))
            .route("/apps/{id}/delete", web::post().to(apps::delete))
            .route("/apps/{id}/users", web::get().to(users::list))
            .route(
                "/apps/{id}/users/{user}/erase",
                web::get().to(users::erase_form),
            )
            .route(
                "/apps/{id}/users/{user}/erase",
                web::post().to(users::erase),
            ),
    );
}

/// The developer dashboard's navigation for the developer behind the
/// request, when signed in: what its error pages show (`web::surface`).
pub(super) async fn navigation(
    req: &HttpRequest,
    state: &web::Data<AppState>,
) -> Result<Option<Header>, PageError> {
    Ok(Developer::current(req, state)
        .await?
        .map(|developer| developer.header()))
}
