//! HTTP as clients of a data API expect it: data responses are compressed
//! when the client accepts it, are `Cache-Control: private, no-cache` (a
//! shared cache must not keep one person's bank data; a client's own cache
//! revalidates), and a listing carries a strong `ETag` derived from the
//! data's version, so `If-None-Match` answers 304 before a row is read.
//!
//! Only the data endpoints are compressed: the pages and the token
//! endpoint carry secrets (CSRF tokens, bearer tokens) next to text a
//! requester chose, the mix that compression turns into a leak (BREACH).

use actix_web::body::MessageBody;
use actix_web::dev::{HttpServiceFactory, ServiceRequest, ServiceResponse};
use actix_web::http::header::{self, EntityTag, HeaderValue, IfNoneMatch};
use actix_web::middleware::{Compress, Next, from_fn};
use actix_web::{HttpMessage, HttpRequest, HttpResponse, Resource};

/// `Cache-Control` of every data response.
pub const PRIVATE_NO_CACHE: &str = "private, no-cache";

/// `resource` as a data endpoint: compressed on request, never kept by a
/// shared cache, its `ETag` naming the content coding it was sent in.
pub fn data_resource(resource: Resource) -> impl HttpServiceFactory {
    resource
        .wrap(Compress::default())
        .wrap(from_fn(tag_encoded_representation))
        .wrap(from_fn(private_no_cache))
}

async fn private_no_cache(
    req: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    let mut res = next.call(req).await?;
    if !res.headers().contains_key(header::CACHE_CONTROL) {
        res.headers_mut().insert(
            header::CACHE_CONTROL,
            HeaderValue::from_static(PRIVATE_NO_CACHE),
        );
    }
    Ok(res)
}

/// A strong ETag names one representation: the gzip bytes of a listing are
/// another representation than its plain bytes, so the coding joins the
/// tag (`"…+gzip"`: `+` appears in no listing tag), as RFC 9110 §8.8.3 asks. [`not_modified`] accepts
/// either form back.
async fn tag_encoded_representation(
    req: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    let mut res = next.call(req).await?;
    let headers = res.headers_mut();
    let coding = headers
        .get(header::CONTENT_ENCODING)
        .and_then(|v| v.to_str().ok())
        .filter(|coding| *coding != "identity")
        .map(str::to_owned);
    let tag = headers
        .get(header::ETAG)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<EntityTag>().ok())
        .filter(|tag| !tag.weak);
    if let (Some(coding), Some(tag)) = (coding, tag) {
        let encoded = EntityTag::new_strong(format!("{}+{coding}", tag.tag()));
        if let Ok(value) = HeaderValue::from_str(&encoded.to_string()) {
            headers.insert(header::ETAG, value);
        }
    }
    Ok(res)
}

/// The entity tag of a listing: which account, which version of its
/// transactions, which query, and which release wrote the JSON (a release
/// that writes it differently must not be told "not modified").
pub fn listing_tag(account: i64, version: i64, query: &str) -> EntityTag {
    EntityTag::new_strong(format!(
        "{}.{account}.{version}.{query}",
        env!("CARGO_PKG_VERSION")
    ))
}

/// The request's `If-None-Match`, read before the work that finds the
/// current tag (which runs off the async runtime, where the request cannot
/// go).
pub fn if_none_match(req: &HttpRequest) -> Option<IfNoneMatch> {
    req.get_header::<IfNoneMatch>()
}

/// The tag the client sent that names `current` (in any content coding, by
/// the weak comparison RFC 9110 §13.1.2 prescribes for `If-None-Match`):
/// its copy is current.
pub fn matching(sent: Option<&IfNoneMatch>, current: &EntityTag) -> Option<EntityTag> {
    match sent? {
        IfNoneMatch::Any => Some(current.clone()),
        IfNoneMatch::Items(items) => items
            .iter()
            .find(|sent| {
                let tag = sent.tag();
                tag == current.tag()
                    || tag
                        .strip_prefix(current.tag())
                        .is_some_and(|rest| rest.starts_with('+'))
            })
            .cloned(),
    }
}

/// 304, naming the representation the client holds.
pub fn not_modified(matched: &EntityTag) -> HttpResponse {
    HttpResponse::NotModified()
        .insert_header((header::ETAG, matched.to_string()))
        .finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use actix_web::test::TestRequest;

    fn sent(value: &str) -> Option<IfNoneMatch> {
        if_none_match(
            &TestRequest::default()
                .insert_header((header::IF_NONE_MATCH, value))
                .to_http_request(),
        )
    }

    #[test]
    fn a_listing_tag_matches_in_any_coding_and_nothing_else() {
        let current = listing_tag(7, 41, "p0");
        let plain = current.to_string();
        let gzip = format!("\"{}+gzip\"", current.tag());
        for value in [plain.clone(), gzip, format!("W/{plain}"), "*".into()] {
            assert!(
                matching(sent(&value).as_ref(), &current).is_some(),
                "{value}"
            );
        }
        let older = listing_tag(7, 40, "p0").to_string();
        let other_query = listing_tag(7, 41, "p1").to_string();
        let longer_version = listing_tag(7, 411, "p0").to_string();
        for value in [older, other_query, longer_version] {
            assert!(
                matching(sent(&value).as_ref(), &current).is_none(),
                "{value}"
            );
        }
        assert!(matching(None, &current).is_none());
    }
}
