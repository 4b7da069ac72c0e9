//! The Platform interface, under `/api/platform`: integrators' apps manage
//! their users (HTTP Basic), exchange OAuth grants for tokens, and read each
//! user's data with bearer tokens through the same handlers as the Personal
//! interface.

mod oauth;
mod portal;
mod users;

use crate::auth::BearerViewer;
use crate::data;
use actix_web::web;

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.service(
        web::scope("/api/platform")
            .route("/oauth/token", web::post().to(oauth::token))
            .route("/oauth/revoke", web::post().to(oauth::revoke))
            .service(web::scope("/oauth").configure(crate::web::configure_authorize))
            .service(
                web::scope("/v1")
                    .route("/users", web::post().to(users::create_or_get))
                    .route("/users/{user_id}", web::put().to(users::update))
                    .route("/users/{user_id}", web::delete().to(users::delete))
                    .route("/portal_sessions", web::post().to(portal::create))
                    .configure(data::configure::<BearerViewer>),
            ),
    );
}
