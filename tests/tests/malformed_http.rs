//! Requests the HTTP codec refuses before any route runs, sent over raw TCP
//! to both real servers: every answer on an API path is the JSON envelope
//! (with `x-request-id`), on a browser page the HTML error page, and the
//! server keeps serving.

// Test code: a failed unwrap is a failed test, with its message.
#![allow(clippy::unwrap_used)]

use serde_json::Value;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tributary_e2e::platform::start_platform;
use tributary_e2e::start;
use tributary_storage::testing::TestDatabase;

/// The answer to `request` on a fresh connection: (status, headers, body).
async fn raw(base_url: &str, request: &[u8]) -> (u16, String, String) {
    let address = base_url.trim_start_matches("http://");
    let mut stream = tokio::net::TcpStream::connect(address).await.unwrap();
    // The server may answer and close before it read everything we send.
    let _ = stream.write_all(request).await;
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer).await;
    let text = String::from_utf8_lossy(&answer).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or_else(|| {
        panic!(
            "no answer at all to {:?}",
            String::from_utf8_lossy(&request[..request.len().min(120)])
        )
    });
    let status = head[9..12].parse().unwrap();
    (status, head.to_ascii_lowercase(), body.to_owned())
}

/// The requests the review sent, for `path` (a GET or POST target).
fn malformed(path: &str) -> Vec<(&'static str, Vec<u8>)> {
    let big_header = "a".repeat(40 * 1024);
    let big_query = "q".repeat(100 * 1024);
    vec![
        ("huge headers", format!("GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\nX-Big: {big_header}\r\n\r\n").into_bytes()),
        ("100 KB query", format!("GET {path}?q={big_query} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").into_bytes()),
        ("control character in Host", format!("GET {path} HTTP/1.1\r\nConnection: close\r\nHost: a\x01b\r\n\r\n").into_bytes()),
        (
            "Content-Length with Transfer-Encoding",
            format!("POST {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n").into_bytes(),
        ),
        ("negative Content-Length", format!("POST {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: -1\r\n\r\n").into_bytes()),
        (
            "overflowing Content-Length",
            format!("POST {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 99999999999999999999999\r\n\r\n").into_bytes(),
        ),
        (
            "malformed chunked body",
            format!("POST {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/x-www-form-urlencoded\r\nTransfer-Encoding: chunked\r\n\r\nZZ\r\nxx\r\n0\r\n\r\n").into_bytes(),
        ),
    ]
}

/// Asserts the envelope and returns its `code`.
fn assert_envelope(what: &str, status: u16, head: &str, body: &str) -> String {
    assert!((400..600).contains(&status), "{what}: {status}");
    assert!(
        head.contains("content-type: application/json"),
        "{what}: {head}"
    );
    let id = head
        .split("x-request-id: ")
        .nth(1)
        .and_then(|rest| rest.split("\r\n").next())
        .unwrap_or_else(|| panic!("{what}: no x-request-id in {head}"));
    let body: Value =
        serde_json::from_str(body).unwrap_or_else(|err| panic!("{what}: {err}: {body:?}"));
    assert_eq!(body["request_id"], id, "{what}");
    assert!(
        body["code"].as_str().is_some_and(|c| !c.is_empty()),
        "{what}: {body}"
    );
    assert!(
        body["message"].as_str().is_some_and(|m| !m.is_empty()),
        "{what}: {body}"
    );
    assert!(body["error"].is_string(), "{what}: {body}");
    body["code"].as_str().unwrap_or_default().to_owned()
}

/// Every malformed request on each of `paths` gets the envelope.
async fn assert_envelopes(base_url: &str, paths: &[&str]) {
    for path in paths {
        for (what, request) in malformed(path) {
            let (status, head, body) = raw(base_url, &request).await;
            let code = assert_envelope(&format!("{what} on {path}"), status, &head, &body);
            // What the codec refuses, by its documented code (40 KB of
            // headers are within the limit: HEADERS_TOO_LARGE is tested below).
            let expected = match what {
                "negative Content-Length" | "Content-Length with Transfer-Encoding" => {
                    Some("MALFORMED_REQUEST")
                }
                _ => None,
            };
            if let Some(expected) = expected {
                assert_eq!(code, expected, "{what} on {path}");
            }
        }
    }
}

async fn assert_still_serving(base_url: &str) {
    let (status, _, _) = raw(
        base_url,
        b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    )
    .await;
    assert_eq!(status, 200, "still serving");
}

#[actix_web::test]
async fn malformed_requests_get_the_envelope_on_the_personal_api() {
    let server = start(TestDatabase::sqlite());
    assert_envelopes(&server.base_url, &["/api/v1/accounts", "/api/v1/imports"]).await;
    assert_still_serving(&server.base_url).await;
    server.stop().await;
}

#[actix_web::test]
async fn malformed_requests_get_the_envelope_on_api_paths_and_a_page_on_pages_of_the_platform() {
    let server = start_platform(TestDatabase::sqlite());
    assert_envelopes(
        &server.base_url,
        &["/api/platform/v1/accounts", "/api/platform/oauth/token"],
    )
    .await;
    for (what, request) in malformed("/connect/banks") {
        let (status, head, body) = raw(&server.base_url, &request).await;
        assert!((400..600).contains(&status), "{what}");
        assert!(head.contains("content-type: text/html"), "{what}: {head}");
        assert!(
            body.contains("<html") && body.contains("Reference: req_"),
            "{what}: {body}"
        );
    }
    assert_still_serving(&server.base_url).await;
    server.stop().await;
}
