//! Rendering pages and error pages.

use crate::request_id;
use actix_web::http::StatusCode;
use actix_web::http::header;
use actix_web::{HttpResponse, ResponseError};
use askama::Template;
use std::fmt;

/// A rendered page.
pub(super) fn render(template: &impl Template) -> Result<HttpResponse, PageError> {
    render_with(StatusCode::OK, template)
}

pub(super) fn render_with(
    status: StatusCode,
    template: &impl Template,
) -> Result<HttpResponse, PageError> {
    let html = template.render().map_err(PageError::internal)?;
    Ok(HttpResponse::build(status)
        .content_type("text/html; charset=utf-8")
        .body(html))
}

/// `303 See Other`: after a form post, the browser fetches `location` with GET.
pub(super) fn see_other(location: &str) -> HttpResponse {
    HttpResponse::SeeOther()
        .insert_header((header::LOCATION, location))
        .finish()
}

/// `302 Found`: the redirect back to an app's `redirect_uri`, as the
/// contract shows it.
pub(super) fn found(location: &str) -> HttpResponse {
    HttpResponse::Found()
        .insert_header((header::LOCATION, location))
        .finish()
}

#[derive(Template)]
#[template(path = "error.html")]
struct ErrorPage<'a> {
    title: &'a str,
    message: &'a str,
    request_id: &'a str,
}

/// The error page's HTML, for answers written outside any route.
pub(crate) fn error_page_html(title: &str, message: &str, request_id: &str) -> String {
    ErrorPage {
        title,
        message,
        request_id,
    }
    .render()
    .unwrap_or_else(|_| format!("{title}: {message}"))
}

/// An error shown as a page: a title and plain words, never internals.
#[derive(Debug)]
pub(super) struct PageError {
    status: StatusCode,
    title: &'static str,
    message: String,
    cause: Option<String>,
}

impl PageError {
    pub(super) fn new(status: StatusCode, title: &'static str, message: impl Into<String>) -> Self {
        Self {
            status,
            title,
            message: message.into(),
            cause: None,
        }
    }

    pub(super) fn bad_request(message: impl Into<String>) -> Self {
        Self::new(
            StatusCode::BAD_REQUEST,
            "This request cannot be served",
            message,
        )
    }

    pub(super) fn session_ended() -> Self {
        Self::new(
            StatusCode::UNAUTHORIZED,
            "Your session has ended",
            "This page belongs to a sign-in that has ended or never started here. Go back to the app and start again.",
        )
    }

    pub(super) fn forged() -> Self {
        Self::new(
            StatusCode::FORBIDDEN,
            "This form has expired",
            "The form was not sent from this session's page. Go back, reload the page and try again.",
        )
    }

    pub(super) fn not_found() -> Self {
        Self::new(
            StatusCode::NOT_FOUND,
            "Not found",
            "There is nothing here for you.",
        )
    }

    pub(super) fn internal(cause: impl fmt::Display) -> Self {
        Self {
            status: StatusCode::INTERNAL_SERVER_ERROR,
            title: "Something went wrong",
            message: "Something went wrong on our side. Try again in a moment.".into(),
            cause: Some(cause.to_string()),
        }
    }
}

impl fmt::Display for PageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {}: {}",
            self.status.as_u16(),
            self.title,
            self.message
        )
    }
}

impl From<tributary_storage::StorageError> for PageError {
    fn from(err: tributary_storage::StorageError) -> Self {
        match err {
            tributary_storage::StorageError::Unavailable(cause) => Self {
                status: StatusCode::SERVICE_UNAVAILABLE,
                title: "Busy",
                message: "The service is busy. Try again in a moment.".into(),
                cause: Some(cause),
            },
            tributary_storage::StorageError::Full(cause) => Self {
                status: StatusCode::SERVICE_UNAVAILABLE,
                title: "Out of space",
                message: "The service cannot store anything right now; nothing was changed. Try again later.".into(),
                cause: Some(cause),
            },
            other => Self::internal(other),
        }
    }
}

impl From<actix_web::error::BlockingError> for PageError {
    fn from(err: actix_web::error::BlockingError) -> Self {
        Self::internal(err)
    }
}

impl ResponseError for PageError {
    fn status_code(&self) -> StatusCode {
        self.status
    }

    fn error_response(&self) -> HttpResponse {
        let request_id = request_id::current().unwrap_or_else(|| "unknown".to_owned());
        if let Some(cause) = &self.cause {
            log::error!(
                "request {request_id} failed with {}: {cause}",
                self.status.as_u16()
            );
        }
        let page = ErrorPage {
            title: self.title,
            message: &self.message,
            request_id: &request_id,
        };
        let body = page
            .render()
            .unwrap_or_else(|_| format!("{}: {}", self.title, self.message));
        HttpResponse::build(self.status)
            .content_type("text/html; charset=utf-8")
            .body(body)
    }
}
