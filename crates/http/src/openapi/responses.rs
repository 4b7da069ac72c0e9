//! Answers many operations share, described once and referred to from
//! each operation's `responses(...)` (`#/components/responses/...`).

#![allow(dead_code)] // the types are read only by the derives

use crate::error::Envelope;
use utoipa::ToResponse;

/// No credentials, or not valid. Personal: `MISSING_CREDENTIALS`,
/// `MALFORMED_API_KEY`, `INVALID_API_KEY`, `API_KEY_REVOKED`. Platform:
/// `MISSING_CREDENTIALS`, `INVALID_ACCESS_TOKEN`, `ACCESS_TOKEN_EXPIRED`
/// (with `WWW-Authenticate: Bearer error="invalid_token"`: refresh).
#[derive(ToResponse)]
pub struct Unauthorized<'a>(Envelope<'a>);

/// App credentials (HTTP Basic: client id and secret) missing or not
/// valid: `MISSING_CREDENTIALS`, `INVALID_CLIENT`.
#[derive(ToResponse)]
pub struct AppUnauthorized<'a>(Envelope<'a>);

/// `DATABASE_UNAVAILABLE` (try again after `Retry-After`), or
/// `STORAGE_FULL` for a write (rolled back whole).
#[derive(ToResponse)]
pub struct Unavailable<'a>(Envelope<'a>);

/// `CONTROL_CHARACTER`: the path, a parameter, the Basic credentials or a
/// body field holds a control character (docs/errors.md). Any operation
/// may answer it; see `document`.
#[derive(ToResponse)]
pub struct ControlCharacter<'a>(Envelope<'a>);

/// Not modified: `If-None-Match` named the current `ETag`; no body.
#[derive(ToResponse)]
pub struct NotModified;
