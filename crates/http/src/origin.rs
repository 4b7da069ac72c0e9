//! Where users reach this server, for the absolute URLs it hands out (the
//! OAuth metadata and `iss`, mail and portal links, return addresses given
//! to banks and payment processors, SimpleFIN access URLs).
//!
//! `TRIBUTARY_PUBLIC_URL` when the operator set it. Otherwise the request
//! says, and only what the operator vouches for counts: the forwarding
//! headers (`Forwarded`, `X-Forwarded-Host`, `X-Forwarded-Proto`) only with
//! `TRIBUTARY_BEHIND_PROXY`, since without a proxy anyone can send them;
//! else the `Host` header. A host that is not a plain `host[:port]` (a path,
//! credentials, spaces) is never put in a URL: the address the request came
//! in on is used instead. docs/operations.md, "Public address".

use actix_web::HttpRequest;
use actix_web::http::header;
use actix_web::http::uri::Authority;

/// `scheme://host[:port]` of the server as this request reached it.
pub(crate) fn request_origin(req: &HttpRequest, behind_proxy: bool) -> String {
    let (scheme, host) = if behind_proxy {
        let info = req.connection_info();
        (info.scheme().to_owned(), info.host().to_owned())
    } else {
        let scheme = if req.app_config().secure() {
            "https"
        } else {
            "http"
        };
        let host = req
            .headers()
            .get(header::HOST)
            .and_then(|value| value.to_str().ok())
            .map(str::to_owned)
            .or_else(|| req.uri().authority().map(ToString::to_string))
            .unwrap_or_default();
        (scheme.to_owned(), host)
    };
    let scheme = if scheme == "https" { "https" } else { "http" };
    let host = if is_plain_host(&host) {
        host
    } else {
        req.app_config().local_addr().to_string()
    };
    format!("{scheme}://{host}")
}

/// `host[:port]` and nothing else: no user info, path, query or spaces.
fn is_plain_host(host: &str) -> bool {
    !host.is_empty()
        && !host.contains('@')
        && host
            .parse::<Authority>()
            .is_ok_and(|authority| authority.as_str() == host)
}

/// The `host[:port]` of an absolute URL (`https://a.example:8443/x` gives
/// `a.example:8443`).
pub(crate) fn host_of(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    rest.split(['/', '?', '#']).next().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use actix_web::test::TestRequest;

    fn forged() -> TestRequest {
        TestRequest::default()
            .insert_header(("host", "tributary.example:8080"))
            .insert_header(("x-forwarded-host", "evil.example"))
            .insert_header(("x-forwarded-proto", "https"))
            .insert_header(("forwarded", "host=evil.example;proto=https"))
    }

    #[test]
    fn forwarding_headers_count_only_behind_a_proxy() {
        let req = forged().to_http_request();
        assert_eq!(request_origin(&req, false), "http://tributary.example:8080");
        assert_eq!(request_origin(&req, true), "https://evil.example");
    }

    #[test]
    fn a_host_that_is_more_than_a_host_is_not_put_in_a_url() {
        for host in [
            "evil.example/path",
            "user@evil.example",
            "a b",
            "evil.example?x",
        ] {
            let req = TestRequest::default()
                .insert_header(("host", host))
                .to_http_request();
            let origin = request_origin(&req, false);
            assert!(
                !origin.contains("evil") && !origin.contains(' '),
                "{host}: {origin}"
            );
        }
        let ipv6 = TestRequest::default()
            .insert_header(("host", "[::1]:8080"))
            .to_http_request();
        assert_eq!(request_origin(&ipv6, false), "http://[::1]:8080");
    }

    #[test]
    fn the_host_of_a_url_is_its_authority() {
        assert_eq!(host_of("https://a.example:8443/x?y"), "a.example:8443");
        assert_eq!(host_of("http://a.example"), "a.example");
    }
}
