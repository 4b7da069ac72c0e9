//! `GET /` on `platform-api`: what this server is, for a person who opens
//! its address in a browser, with the ways on (the developer dashboard,
//! the API reference, the OAuth metadata), instead of the JSON 404 an API
//! path without a route answers.

use super::page::{PageError, render};
use actix_web::HttpResponse;
use askama::Template;

#[derive(Template)]
#[template(path = "landing.html")]
struct Landing<'a> {
    title: &'a str,
}

pub(super) async fn page() -> Result<HttpResponse, PageError> {
    render(&Landing {
        title: "Tributary Platform API",
    })
}
