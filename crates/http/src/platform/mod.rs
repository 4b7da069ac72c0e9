//! The Platform interface, under `/api/platform`: integrators' apps manage
//! their users (HTTP Basic), exchange OAuth grants for tokens, and read each
//! user's data with bearer tokens through the same handlers as the Personal
//! interface.

mod metadata;
mod oauth;
mod portal;
mod users;

use crate::auth::BearerToken;
use crate::{data, routes};
use actix_web::web;

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.service(routes::get(metadata::PATH, metadata::metadata));
    cfg.service(
        web::scope("/api/platform")
            .service(routes::one(
                "/oauth/token",
                "POST",
                web::post().to(oauth::token),
            ))
            .service(routes::one(
                "/oauth/revoke",
                "POST",
                web::post().to(oauth::revoke),
            ))
            .service(web::scope("/oauth").configure(crate::web::configure_authorize))
            .service(
                web::scope("/v1")
                    .service(routes::one(
                        "/users",
                        "POST",
                        web::post().to(users::create_or_get),
                    ))
                    .service(routes::only(
                        web::resource("/users/{user_id}")
                            .route(web::put().to(users::update))
                            .route(web::delete().to(users::delete)),
                        "PUT, DELETE",
                    ))
                    .service(routes::one(
                        "/portal_sessions",
                        "POST",
                        web::post().to(portal::create),
                    ))
                    // The Personal interface's endpoints, for the user the
                    // bearer token stands for (same handlers, same rules).
                    .configure(data::configure::<BearerToken>)
                    .configure(crate::connections::configure::<BearerToken>)
                    .configure(crate::imports::configure::<BearerToken>),
            ),
    );
}
