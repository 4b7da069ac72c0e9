//! How every page is served, whatever its route: its security headers,
//! the pages' answers to a form or an address that does not parse, and to
//! a request refused before any route ran.

use super::{csp, page};
use actix_web::middleware::DefaultHeaders;
use actix_web::{HttpResponse, web};

/// A form that does not parse (a field missing or malformed) is answered
/// with a page naming the field, like every other refusal.
pub(super) fn form_config() -> web::FormConfig {
    web::FormConfig::default().error_handler(|err, _req| {
        page::PageError::bad_request(format!(
            "The form could not be read ({err}). Go back, reload the page and try again."
        ))
        .into()
    })
}

pub(super) fn query_config() -> web::QueryConfig {
    web::QueryConfig::default().error_handler(|err, _req| {
        page::PageError::bad_request(format!("The address could not be read ({err}).")).into()
    })
}

/// The headers on every page's answer besides its policy ([`csp`]).
const SECURITY_HEADERS: [(&str, &str); 4] = [
    ("X-Frame-Options", "DENY"),
    ("X-Content-Type-Options", "nosniff"),
    // A page's address goes with the next request to this server alone
    // (an error page's "Go back" leads there: `surface.rs`), never to
    // another site.
    ("Referrer-Policy", "same-origin"),
    ("Cache-Control", "no-store"),
];

pub(super) fn security_headers() -> DefaultHeaders {
    // A page that needs more sets its own policy ([`csp`]); this one is kept.
    SECURITY_HEADERS.into_iter().fold(
        DefaultHeaders::new().add(("Content-Security-Policy", csp::Policy::strict().value())),
        DefaultHeaders::add,
    )
}

/// The error page for a request refused before any page's route ran
/// (`crate::control_characters`), with the pages' security headers.
pub(crate) fn refusal_page(message: String) -> HttpResponse {
    use actix_web::ResponseError as _;
    use actix_web::http::header::TryIntoHeaderPair as _;
    let mut response = page::PageError::bad_request(message).error_response();
    let policy = csp::Policy::strict().value();
    let headers =
        std::iter::once(("Content-Security-Policy", policy.as_str())).chain(SECURITY_HEADERS);
    for pair in headers {
        if let Ok((name, value)) = pair.try_into_pair() {
            response.headers_mut().insert(name, value);
        }
    }
    response
}

/// `resource` as a page: the pages' security headers on every answer.
pub(crate) fn page_resource(
    resource: actix_web::Resource,
) -> impl actix_web::dev::HttpServiceFactory {
    resource.wrap(security_headers())
}

/// No page at this address.
pub(super) async fn no_page() -> Result<HttpResponse, page::PageError> {
    Err(page::PageError::not_found())
}
