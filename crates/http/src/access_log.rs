//! The access log: one line a request with the client, method, path, status,
//! size, time and request id — never headers (they carry credentials), never
//! a secret in a path (portal links), never a query string's values (the
//! authorize link carries e-mail addresses and `state`).

use actix_web::dev::ServiceRequest;
use actix_web::middleware::Logger;

/// Prefixes of the secrets Tributary puts in paths and that clients may
/// misplace there: portal sessions, codes, keys, tokens, client secrets,
/// checkout sessions (the test processor's card page, Stripe's ids), and
/// SimpleFIN claim tokens and access passwords, dashboard sign-in links.
const SECRET_PREFIXES: [&str; 12] = [
    "tps_", "tac_", "trb_", "tat_", "trt_", "tcs_", "test_cs_", "cs_", "sfc_", "sfp_", "tdl_",
    "tds_",
];

pub fn logger() -> Logger {
    Logger::new(r#"%a "%{request}xi" %s %b %Dms %{x-request-id}o"#)
        .custom_request_replace("request", request_line)
}

fn request_line(req: &ServiceRequest) -> String {
    format!(
        "{} {}",
        req.method(),
        redact(req.path(), req.query_string())
    )
}

/// The path with secret segments cut to their prefix, and the query with
/// each value replaced by `…` (the names say what was asked).
pub fn redact(path: &str, query: &str) -> String {
    let path: Vec<String> = path
        .split('/')
        .map(|segment| {
            match SECRET_PREFIXES
                .iter()
                .find(|prefix| segment.starts_with(*prefix))
            {
                Some(prefix) => format!("{prefix}…"),
                None => segment.to_owned(),
            }
        })
        .collect();
    let mut line = path.join("/");
    if !query.is_empty() {
        let names: Vec<&str> = query
            .split('&')
            .map(|pair| pair.split('=').next().unwrap_or_default())
            .collect();
        line.push('?');
        line.push_str(
            &names
                .iter()
                .map(|n| format!("{n}=…"))
                .collect::<Vec<_>>()
                .join("&"),
        );
    }
    line
}

#[cfg(test)]
mod tests {
    use super::redact;

    #[test]
    fn secrets_in_paths_and_query_values_never_reach_the_log() {
        assert_eq!(redact("/portal/tps_3JbM0aFz9", ""), "/portal/tps_…");
        assert_eq!(
            redact("/checkout/test/test_cs_9f8e7d", ""),
            "/checkout/test/test_cs_…"
        );
        let line = redact(
            "/api/platform/oauth/authorize",
            "client_id=app_1&redirect_uri=https%3A%2F%2Fx&state=s3cret&login_hint=ada%40example.com",
        );
        assert_eq!(
            line,
            "/api/platform/oauth/authorize?client_id=…&redirect_uri=…&state=…&login_hint=…"
        );
        assert!(!line.contains("ada") && !line.contains("s3cret"));
        assert_eq!(
            redact("/api/v1/accounts/3/transactions", ""),
            "/api/v1/accounts/3/transactions"
        );
    }
}
