//! Every response carries `x-request-id`; error bodies repeat it as
//! `request_id`, and server-side logs of a failure name it, so a user's report
//! leads to the log line.

use actix_web::HttpMessage;
use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{HeaderName, HeaderValue};
use actix_web::middleware::Next;
use rand::Rng as _;

pub const HEADER: HeaderName = HeaderName::from_static("x-request-id");

tokio::task_local! {
    static CURRENT: String;
}

#[derive(Debug, Clone)]
pub struct RequestId(pub String);

/// The id of the request being handled, when called while handling one.
pub fn current() -> Option<String> {
    CURRENT.try_with(Clone::clone).ok()
}

/// A new id, for a request that brought none (or an unusable one).
pub(crate) fn generate() -> String {
    let mut bytes = [0u8; 12];
    rand::rng().fill_bytes(&mut bytes);
    format!("req_{}", hex::encode(bytes))
}

/// A caller-supplied id is kept when it is short and plain (so it can be
/// correlated upstream); anything else is replaced.
fn acceptable(id: &str) -> bool {
    (1..=64).contains(&id.len())
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

pub async fn middleware(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<impl MessageBody + 'static>, actix_web::Error> {
    let id = req
        .headers()
        .get(&HEADER)
        .and_then(|v| v.to_str().ok())
        .filter(|v| acceptable(v))
        .map_or_else(generate, str::to_owned);
    req.extensions_mut().insert(RequestId(id.clone()));
    let mut response = CURRENT.scope(id.clone(), next.call(req)).await?;
    if let Ok(value) = HeaderValue::from_str(&id) {
        response.headers_mut().insert(HEADER, value);
    }
    Ok(response)
}

#[cfg(test)]
mod tests {
    #[test]
    fn only_plain_short_ids_are_kept() {
        assert!(super::acceptable("abc-123_x.y"));
        assert!(!super::acceptable(""));
        assert!(!super::acceptable("has space"));
        assert!(!super::acceptable(&"a".repeat(65)));
        assert!(super::generate().starts_with("req_"));
    }
}
