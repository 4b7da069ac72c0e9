//! The one rule for the text a request carries, on every surface of both
//! servers (docs/errors.md, `CONTROL_CHARACTER`): no C0 control character
//! (U+0000–U+001F) in the path, a query parameter, the HTTP Basic
//! credentials, or a field (name or value) of a form-encoded or JSON body;
//! tab, line feed and carriage return are text in a body's fields only
//! (the redirect URIs a developer types one per line). The rule itself is
//! `tributary_domain::text::refused_control`.
//!
//! Checked here, in a middleware before any route, rather than in each
//! handler: PostgreSQL cannot store NUL in text and answered 500 where
//! SQLite stored it, on a dozen surfaces, and a new endpoint is covered
//! without anyone remembering. Header values need no check: the HTTP
//! parser refuses control characters in them (`crate::malformed`), and the
//! Basic credentials are the one header Tributary decodes. Multipart
//! uploads are checked where they are read (`crate::imports::read_upload`):
//! their plain fields by this rule, their files are statements, whose
//! readers drop NUL and say so (docs/imports.md).
//!
//! A refusal is 400 naming the field, in the surface's own shape: the
//! JSON envelope under `/api/`, RFC 6749's body at the token and
//! revocation endpoints, the SimpleFIN protocol's `errlist`, the error page
//! elsewhere.

use crate::error::ApiError;
use actix_web::ResponseError as _;
use actix_web::body::{BoxBody, MessageBody};
use actix_web::dev::{Decompress, Payload, ServiceRequest, ServiceResponse};
use actix_web::error::PayloadError;
use actix_web::http::header;
use actix_web::middleware::Next;
use actix_web::web::{Bytes, BytesMut};
use actix_web::{HttpMessage as _, HttpResponse};
use futures_util::StreamExt as _;
use futures_util::stream;
use std::fmt;
use tributary_domain::text::{LineBreaks, code_point, refused_control};

/// The most a body is read for checking: what the handlers' extractors
/// take at most (actix's 256 KiB). A larger body is passed on unread; its
/// handler refuses it as too large.
const CHECKED_BODY_BYTES: usize = 256 * 1024;

/// Where in a request a refused character was.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Place {
    Path,
    Query(String),
    BodyField(String),
    BasicClientId,
    BasicSecret,
}

/// A control character where the rule refuses it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Refusal {
    pub place: Place,
    pub character: char,
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let place = match &self.place {
            Place::Path => "The address (its path)".to_owned(),
            Place::Query(name) => format!("The query parameter `{}`", name.escape_debug()),
            Place::BodyField(name) => format!("`{}`", name.escape_debug()),
            Place::BasicClientId => "The client id of the Basic credentials".to_owned(),
            Place::BasicSecret => "The client secret of the Basic credentials".to_owned(),
        };
        let breaks = match self.place {
            Place::BodyField(_) => " other than tab and line breaks",
            _ => "",
        };
        write!(
            f,
            "{place} holds the control character {}; Tributary accepts no control characters{breaks} there.",
            code_point(self.character)
        )
    }
}

/// The first refused character of one piece of text at `place`.
fn check(text: &str, place: impl FnOnce() -> Place) -> Result<(), Refusal> {
    match refused_control(text, LineBreaks::Refused) {
        Some(character) => Err(Refusal {
            place: place(),
            character,
        }),
        None => Ok(()),
    }
}

/// The path, percent-decoded (path parameters are read decoded).
fn check_path(path: &str) -> Result<(), Refusal> {
    let decoded = percent_encoding::percent_decode_str(path).decode_utf8_lossy();
    check(&decoded, || Place::Path)
}

/// Each query parameter's name and value, decoded.
fn check_query(query: &str) -> Result<(), Refusal> {
    for (name, value) in url::form_urlencoded::parse(query.as_bytes()) {
        check(&name, || Place::Query(name.to_string()))?;
        check(&value, || Place::Query(name.to_string()))?;
    }
    Ok(())
}

/// The client id and secret of an HTTP Basic header, decoded.
fn check_basic(req: &actix_web::HttpRequest) -> Result<(), Refusal> {
    if let Some(Ok((id, secret))) = crate::auth::basic_credentials(req) {
        check(&id, || Place::BasicClientId)?;
        check(&secret, || Place::BasicSecret)?;
    }
    Ok(())
}

/// Every field of a body: a JSON document when the body is one (some
/// handlers read JSON whatever the `Content-Type`), otherwise form-encoded
/// (the OAuth endpoints read any other body as a form).
pub(crate) fn check_body(body: &[u8]) -> Result<(), Refusal> {
    match serde_json::from_slice::<serde_json::Value>(body) {
        Ok(document) => check_json(&document, &mut String::new()),
        Err(_) => {
            for (name, value) in url::form_urlencoded::parse(body) {
                check_field(&name, &name)?;
                check_field(&value, &name)?;
            }
            Ok(())
        }
    }
}

/// One field of a body: tab and line breaks are text there.
pub(crate) fn check_field(text: &str, field: &str) -> Result<(), Refusal> {
    match refused_control(text, LineBreaks::Allowed) {
        Some(character) => Err(Refusal {
            place: Place::BodyField(field.to_owned()),
            character,
        }),
        None => Ok(()),
    }
}

/// Every key and string of a JSON document; `at` is where `value` is
/// (`limits.max_accounts`, `event_types[1]`), named in a refusal.
fn check_json(value: &serde_json::Value, at: &mut String) -> Result<(), Refusal> {
    use serde_json::Value;
    let named = |at: &str| if at.is_empty() { "the body" } else { at }.to_owned();
    match value {
        Value::String(text) => check_field(text, &named(at)),
        Value::Array(items) => {
            for (index, item) in items.iter().enumerate() {
                let before = at.len();
                at.push_str(&format!("[{index}]"));
                check_json(item, at)?;
                at.truncate(before);
            }
            Ok(())
        }
        Value::Object(fields) => {
            for (key, item) in fields {
                let before = at.len();
                if !at.is_empty() {
                    at.push('.');
                }
                at.push_str(key);
                check_field(key, &named(at))?;
                check_json(item, at)?;
                at.truncate(before);
            }
            Ok(())
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => Ok(()),
    }
}

/// What answers a request, for the shape of its refusal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Surface {
    /// The JSON interfaces, health checks, metrics: the envelope.
    Api,
    /// The token and revocation endpoints: RFC 6749 §5.2.
    OAuthToken,
    /// `/simplefin`: the protocol's `errors` and `errlist`.
    SimpleFin,
    /// Everything a browser shows: the error page.
    Page,
}

/// The browser pages under `/api/` (the authorization endpoint and the
/// reference pages); a unit test keeps this list equal to the routed page
/// operations.
const PAGES_UNDER_API: [&str; 3] = [
    "/api/platform/oauth/authorize",
    "/api/v1/docs",
    "/api/platform/docs",
];

/// The endpoints that answer in RFC 6749's terms.
const OAUTH_TOKEN_ENDPOINTS: [&str; 2] =
    ["/api/platform/oauth/token", "/api/platform/oauth/revoke"];

impl Surface {
    fn of(path: &str) -> Surface {
        let path = path.trim_end_matches('/');
        if PAGES_UNDER_API.contains(&path) {
            Surface::Page
        } else if OAUTH_TOKEN_ENDPOINTS.contains(&path) {
            Surface::OAuthToken
        } else if path == crate::simplefin::ROOT
            || path.starts_with(&format!("{}/", crate::simplefin::ROOT))
        {
            Surface::SimpleFin
        } else if path.starts_with("/api/")
            || ["/healthz", "/readyz", "/metrics"].contains(&path)
            || path.starts_with("/.well-known/")
        {
            Surface::Api
        } else {
            Surface::Page
        }
    }

    fn refuse(self, refusal: &Refusal) -> HttpResponse {
        let message = refusal.to_string();
        match self {
            Surface::Api => ApiError::bad_request("CONTROL_CHARACTER", message).error_response(),
            Surface::OAuthToken => crate::platform::oauth::invalid_request(message),
            Surface::SimpleFin => {
                crate::simplefin::SimpleFinError::bad_request(message).error_response()
            }
            Surface::Page => crate::web::resource::refusal_page(message),
        }
    }
}

/// The middleware: every request passes the rule before its route runs.
pub async fn refuse(
    mut req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, actix_web::Error> {
    let mut checked = check_path(req.path())
        .and_then(|()| check_query(req.query_string()))
        .and_then(|()| check_basic(req.request()));
    if checked.is_ok() && has_checked_body(&req) {
        let (raw, rest) = read_prefix(req.take_payload()).await;
        if rest.is_complete() {
            checked = match decoded(&raw, &req).await {
                Some(body) => check_body(&body),
                None => Ok(()),
            };
        }
        req.set_payload(replay(raw, rest));
    }
    match checked {
        Ok(()) => Ok(next.call(req).await?.map_into_boxed_body()),
        Err(refusal) => {
            log::info!("{} {}: refused: {refusal}", req.method(), req.path());
            let answer = Surface::of(req.path()).refuse(&refusal);
            Ok(req.into_response(answer))
        }
    }
}

/// Whether the request's body is one this rule reads: not a multipart
/// upload (read by `imports::read_upload`), and not announced larger than
/// any handler takes.
fn has_checked_body(req: &ServiceRequest) -> bool {
    let headers = req.headers();
    let multipart = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim().to_ascii_lowercase().starts_with("multipart/"));
    let too_large = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<usize>().ok())
        .is_some_and(|length| length > CHECKED_BODY_BYTES);
    !multipart && !too_large
}

/// What is left of a body after its first [`CHECKED_BODY_BYTES`].
enum Rest {
    /// Read to its end.
    Nothing,
    /// The body did not read (a broken chunk): its handler is told.
    Failed(PayloadError),
    /// Longer than any handler takes: not checked, passed on.
    More(Payload),
}

impl Rest {
    fn is_complete(&self) -> bool {
        matches!(self, Rest::Nothing)
    }
}

/// Reads the body up to just over [`CHECKED_BODY_BYTES`].
async fn read_prefix(mut payload: Payload) -> (Bytes, Rest) {
    let mut read = BytesMut::new();
    while let Some(chunk) = payload.next().await {
        match chunk {
            Ok(chunk) => read.extend_from_slice(&chunk),
            Err(err) => return (read.freeze(), Rest::Failed(err)),
        }
        if read.len() > CHECKED_BODY_BYTES {
            return (read.freeze(), Rest::More(payload));
        }
    }
    (read.freeze(), Rest::Nothing)
}

/// The body as its handler will read it: decompressed per its
/// `Content-Encoding`, as actix's extractors do. `None` when it does not
/// decompress, or is larger decompressed than any handler takes (the
/// handler refuses it either way).
async fn decoded(raw: &Bytes, req: &ServiceRequest) -> Option<Bytes> {
    if !req.headers().contains_key(header::CONTENT_ENCODING) {
        return Some(raw.clone());
    }
    let source = stream::iter([Ok::<_, PayloadError>(raw.clone())]);
    let mut decoder = Decompress::from_headers(source, req.headers());
    let mut body = BytesMut::new();
    while let Some(chunk) = decoder.next().await {
        body.extend_from_slice(&chunk.ok()?);
        if body.len() > CHECKED_BODY_BYTES {
            return None;
        }
    }
    Some(body.freeze())
}

/// The body for the handler: what was read, then the rest as it comes.
fn replay(read: Bytes, rest: Rest) -> Payload {
    let read = stream::iter([Ok::<_, PayloadError>(read)]);
    let stream = match rest {
        Rest::Nothing => read.boxed_local(),
        Rest::Failed(err) => read.chain(stream::iter([Err(err)])).boxed_local(),
        Rest::More(payload) => read.chain(payload).boxed_local(),
    };
    Payload::Stream { payload: stream }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused_at(result: Result<(), Refusal>) -> (Place, char) {
        let refusal = result.expect_err("refused");
        (refusal.place, refusal.character)
    }

    #[test]
    fn query_parameters_are_checked_decoded_by_name() {
        assert_eq!(check_query("q=caf%C3%A9&limit=10"), Ok(()));
        assert_eq!(
            refused_at(check_query("limit=10&q=a%00b")),
            (Place::Query("q".into()), '\0')
        );
        assert_eq!(
            refused_at(check_query("q=one%0Atwo")),
            (Place::Query("q".into()), '\n')
        );
        assert_eq!(
            refused_at(check_query("bad%1Bname=1")),
            (Place::Query("bad\u{1b}name".into()), '\u{1b}')
        );
    }

    #[test]
    fn the_path_is_checked_decoded() {
        assert_eq!(check_path("/api/v1/accounts/12"), Ok(()));
        assert_eq!(
            refused_at(check_path("/api/platform/v1/users/usr_%00")),
            (Place::Path, '\0')
        );
    }

    #[test]
    fn json_bodies_name_the_field_where_the_character_is() {
        let body = br#"{"email": "a@example.com", "limits": {"max_accounts": 2}, "event_types": ["x", "y\u0000"]}"#;
        assert_eq!(
            refused_at(check_body(body)),
            (Place::BodyField("event_types[1]".into()), '\0')
        );
        assert_eq!(
            refused_at(check_body(br#"{"external_user_id": "\u001b[31m"}"#)),
            (Place::BodyField("external_user_id".into()), '\u{1b}')
        );
        assert_eq!(
            refused_at(check_body(br#"{"a\u0000": 1}"#)),
            (Place::BodyField("a\0".into()), '\0')
        );
        assert_eq!(
            refused_at(check_body(br#""\u0007""#)),
            (Place::BodyField("the body".into()), '\u{7}')
        );
        assert_eq!(check_body(br#"{"note": "two\nlines\tand a tab"}"#), Ok(()));
    }

    #[test]
    fn other_bodies_are_read_as_forms() {
        assert_eq!(
            check_body(b"redirect_uris=https%3A%2F%2Fa%0D%0Ahttps%3A%2F%2Fb"),
            Ok(())
        );
        assert_eq!(
            refused_at(check_body(b"grant_type=refresh_token&client_id=app%00")),
            (Place::BodyField("client_id".into()), '\0')
        );
        assert_eq!(check_body(b""), Ok(()));
    }

    #[test]
    fn refusals_name_the_field_and_the_character_never_the_character_itself() {
        let refusal = Refusal {
            place: Place::Query("q\u{1b}".into()),
            character: '\u{1b}',
        };
        let message = refusal.to_string();
        assert!(message.contains("`q\\u{1b}`"), "{message}");
        assert!(message.contains("U+001B"), "{message}");
        assert!(!message.chars().any(char::is_control), "{message}");
    }

    /// The surfaces by path: every page the servers route under `/api/`
    /// is a page here, and nothing else there is.
    #[test]
    fn each_routed_operation_is_refused_in_its_own_shape() {
        use crate::interface::Interface;
        for interface in [Interface::Personal, Interface::Platform] {
            for (root, operations) in crate::openapi::routed(interface) {
                for operation in operations {
                    let path = format!("{root}{}", operation.path);
                    let expected = if operation.is_page() {
                        Surface::Page
                    } else if path.ends_with("/oauth/token") || path.ends_with("/oauth/revoke") {
                        Surface::OAuthToken
                    } else {
                        Surface::Api
                    };
                    assert_eq!(Surface::of(&path), expected, "{path}");
                }
            }
        }
        assert_eq!(Surface::of("/simplefin/accounts"), Surface::SimpleFin);
        assert_eq!(Surface::of("/keys"), Surface::Page);
        assert_eq!(Surface::of("/connect/banks"), Surface::Page);
    }
}
