//! A failure of the SimpleFIN surface, in the protocol's terms.

use crate::fault::Fault;
use actix_web::http::StatusCode;
use actix_web::http::header;
use actix_web::{HttpResponse, ResponseError};
use serde::Serialize;
use tributary_storage::StorageError;

/// A failure of the SimpleFIN surface, rendered as the protocol's clients
/// read it: the status they branch on, and the message in `errors`.
#[derive(Debug)]
pub struct SimpleFinError {
    status: StatusCode,
    code: ErrorCode,
    pub(crate) message: String,
    retry_after: Option<u64>,
    fault: Option<Fault>,
}

impl SimpleFinError {
    pub(super) fn new(status: StatusCode, code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            status,
            code,
            message: message.into(),
            retry_after: None,
            fault: None,
        }
    }

    /// With `Retry-After`, in seconds.
    pub(super) fn retrying_after(mut self, seconds: u64) -> Self {
        self.retry_after = Some(seconds);
        self
    }

    pub(crate) fn bad_request(message: String) -> Self {
        Self::new(StatusCode::BAD_REQUEST, ErrorCode::Api, message)
    }

    /// The protocol's answer to credentials that do not open the data.
    pub(super) fn forbidden(message: &str) -> Self {
        Self::new(StatusCode::FORBIDDEN, ErrorCode::Auth, message)
    }
}

impl std::fmt::Display for SimpleFinError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} {:?}: {}",
            self.status.as_u16(),
            self.code,
            self.message
        )
    }
}

impl From<StorageError> for SimpleFinError {
    fn from(err: StorageError) -> Self {
        Fault::from(err).into()
    }
}

impl From<actix_web::error::BlockingError> for SimpleFinError {
    fn from(err: actix_web::error::BlockingError) -> Self {
        Fault::from(err).into()
    }
}

impl From<Fault> for SimpleFinError {
    fn from(fault: Fault) -> Self {
        Self {
            status: fault.status(),
            code: ErrorCode::General,
            message: fault.kind.message().to_owned(),
            retry_after: fault.retry_after(),
            fault: Some(fault),
        }
    }
}

impl ResponseError for SimpleFinError {
    fn status_code(&self) -> StatusCode {
        self.status
    }

    fn error_response(&self) -> HttpResponse {
        if let Some(fault) = &self.fault {
            fault.log();
        }
        let mut response = HttpResponse::build(self.status);
        if let Some(seconds) = self.retry_after {
            response.insert_header((header::RETRY_AFTER, seconds.to_string()));
        }
        response.json(serde_json::json!({
            "errors": [self.message],
            "errlist": [ErrorItem::general(self.code, self.message.clone())],
            "accounts": [],
        }))
    }
}

/// The error codes of protocol version 2, and only those: a client falls
/// back from an unknown subcode to its prefix, so a code of our own would
/// tell it no more than `gen.`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum ErrorCode {
    /// A general error (the server's own failure).
    #[serde(rename = "gen.")]
    General,
    /// How the API is used: a malformed parameter, a window that was
    /// capped, the daily budget spent. Meant for the developer.
    #[serde(rename = "gen.api")]
    Api,
    /// The Access URL's credentials open nothing.
    #[serde(rename = "gen.auth")]
    Auth,
    /// A connection that is not working, for another reason than sign-in.
    #[serde(rename = "con.")]
    Connection,
    /// The bank wants the user to sign in again.
    #[serde(rename = "con.auth")]
    ConnectionAuth,
    /// The account could not be updated; its stored data is still listed.
    #[serde(rename = "act.failed")]
    AccountFailed,
}

/// One entry of `errlist`. `message` repeats `msg`: the protocol's table
/// names `msg`, its quickstart example `message`, and clients were written
/// from both.
#[derive(Debug, Serialize)]
pub struct ErrorItem {
    pub code: ErrorCode,
    pub msg: String,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) conn_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) account_id: Option<String>,
}

impl ErrorItem {
    pub fn general(code: ErrorCode, msg: String) -> Self {
        Self {
            code,
            message: msg.clone(),
            msg,
            conn_id: None,
            account_id: None,
        }
    }
}
