//! Rendering pages and error pages.

use super::header::Header;
use crate::fault::{Fault, FaultKind};
use crate::request_id;
use actix_web::http::StatusCode;
use actix_web::http::header;
use actix_web::{HttpResponse, ResponseError};
use askama::Template;
use std::fmt;

/// A stored time as the pages show it, or `otherwise` when there is none.
pub(super) fn when(time: Option<chrono::NaiveDateTime>, otherwise: &str) -> String {
    time.map(|t| t.format("%Y-%m-%d %H:%M UTC").to_string())
        .unwrap_or_else(|| otherwise.to_owned())
}

/// `text` escaped for HTML, for markup built in Rust (charts, amounts,
/// the reference's prose) that templates then write with `|safe`.
pub(super) fn escape_html(text: &str) -> String {
    askama::filters::escape(text, askama::filters::Html)
        .map(|escaped| escaped.to_string())
        .unwrap_or_default()
}

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
    header: Header,
    message: &'a str,
    request_id: &'a str,
    /// Where "Go back" leads, when the page knows a way.
    back: Option<&'a str>,
}

impl ErrorPage<'_> {
    fn html(&self) -> String {
        self.render()
            .unwrap_or_else(|_| format!("{}: {}", self.title, self.message))
    }
}

/// The error page's HTML, for answers written outside any route (and so
/// outside any surface: the brand only).
pub(crate) fn error_page_html(title: &str, message: &str, request_id: &str) -> String {
    ErrorPage {
        title,
        header: Header::Brand,
        message,
        request_id,
        back: None,
    }
    .html()
}

/// An error shown as a page: a title and plain words, never internals.
#[derive(Debug)]
pub(super) struct PageError {
    status: StatusCode,
    title: &'static str,
    message: String,
    /// A server-side failure: logged with the request id, never shown.
    /// Boxed: most errors have none, and a `Result` stays small.
    fault: Option<Box<Fault>>,
    /// Seconds to wait before trying again, for a busy answer.
    retry_after: Option<u64>,
}

impl PageError {
    pub(super) fn new(status: StatusCode, title: &'static str, message: impl Into<String>) -> Self {
        Self {
            status,
            title,
            message: message.into(),
            fault: None,
            retry_after: None,
        }
    }

    /// A provider call that could not start now (docs/operations.md#outbound-requests).
    pub(super) fn busy(busy: crate::provider_calls::Busy) -> Self {
        use crate::provider_calls::{Busy, RETRY_AFTER_SECONDS};
        let (status, message) = match busy {
            Busy::User => (
                StatusCode::TOO_MANY_REQUESTS,
                "You are already connecting other banks. Wait until they finish, then try again.",
            ),
            Busy::Server => (
                StatusCode::SERVICE_UNAVAILABLE,
                "Too many banks are being connected right now. Try again in a moment.",
            ),
        };
        Self {
            retry_after: Some(RETRY_AFTER_SECONDS),
            ..Self::new(status, "Busy", message)
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
        Fault::internal(cause).into()
    }

    /// The page again, inside its surface: `header` in the bar and a link
    /// back ([`super::surface`] knows both; [`ResponseError`] has no
    /// request to learn them from). The fault, if any, was logged with the
    /// first rendering; the reference is the same request id.
    pub(super) fn page_html(&self, header: Header, back: &str) -> String {
        let request_id = request_id::current().unwrap_or_else(|| "unknown".to_owned());
        ErrorPage {
            title: self.title,
            header,
            message: &self.message,
            request_id: &request_id,
            back: Some(back),
        }
        .html()
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

impl From<Fault> for PageError {
    fn from(fault: Fault) -> Self {
        let (title, message) = match fault.kind {
            FaultKind::Unavailable => ("Busy", "The service is busy. Try again in a moment."),
            FaultKind::StorageFull => (
                "Out of space",
                "The service cannot store anything right now; nothing was changed. Try again later.",
            ),
            FaultKind::Internal => (
                "Something went wrong",
                "Something went wrong on our side. Try again in a moment.",
            ),
        };
        Self {
            status: fault.status(),
            title,
            message: message.into(),
            fault: Some(Box::new(fault)),
            retry_after: None,
        }
    }
}

impl From<tributary_storage::StorageError> for PageError {
    fn from(err: tributary_storage::StorageError) -> Self {
        Fault::from(err).into()
    }
}

impl From<crate::provider_calls::CallError> for PageError {
    fn from(err: crate::provider_calls::CallError) -> Self {
        match err {
            crate::provider_calls::CallError::Busy(busy) => Self::busy(busy),
            crate::provider_calls::CallError::Failed(why) => Self::internal(why),
        }
    }
}

impl From<actix_web::error::BlockingError> for PageError {
    fn from(err: actix_web::error::BlockingError) -> Self {
        Fault::from(err).into()
    }
}

impl ResponseError for PageError {
    fn status_code(&self) -> StatusCode {
        self.status
    }

    fn error_response(&self) -> HttpResponse {
        let request_id = match &self.fault {
            Some(fault) => fault.log(),
            None => request_id::current().unwrap_or_else(|| "unknown".to_owned()),
        };
        // The brand only: `surface::navigate` renders the page again with
        // its surface's navigation once it sees the request.
        let body = ErrorPage {
            title: self.title,
            header: Header::Brand,
            message: &self.message,
            request_id: &request_id,
            back: None,
        }
        .html();
        let mut response = HttpResponse::build(self.status);
        let retry_after = self
            .retry_after
            .or_else(|| self.fault.as_ref().and_then(|fault| fault.retry_after()));
        if let Some(seconds) = retry_after {
            response.insert_header((actix_web::http::header::RETRY_AFTER, seconds.to_string()));
        }
        response.content_type("text/html; charset=utf-8").body(body)
    }
}
