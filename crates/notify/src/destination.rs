//! Where a webhook may be registered: an `https` URL (`http` too where the
//! operator allows private destinations, for tests and home labs) without
//! credentials in it, whose host the outbound guard allows
//! (docs/operations.md#outbound-requests). The guard checks again at every
//! delivery, since a name may resolve elsewhere later.

use tributary_outbound::{Guard, PrivateAllowance};
use url::Url;

/// Why a webhook URL is refused, in words for its owner.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UrlRefusal {
    #[error("not a URL ({0})")]
    NotAUrl(String),
    /// The switch that allows http is named: a home lab's receiver is
    /// usually plain http on a private address.
    #[error(
        "must use https (http is accepted where the operator allows private destinations: TRIBUTARY_OUTBOUND_ALLOW_PRIVATE)"
    )]
    NotHttps,
    #[error("may not carry a user name or password")]
    Credentials,
    #[error(transparent)]
    Guard(#[from] tributary_outbound::Refusal),
}

/// The URL's form: checked before any lookup.
fn parse(guard: &Guard, raw: &str) -> Result<Url, UrlRefusal> {
    let url = Url::parse(raw.trim()).map_err(|err| UrlRefusal::NotAUrl(err.to_string()))?;
    let plain_http_allowed = *guard.private_allowance() != PrivateAllowance::None;
    if url.scheme() != "https" && !(plain_http_allowed && url.scheme() == "http") {
        return Err(UrlRefusal::NotHttps);
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(UrlRefusal::Credentials);
    }
    guard.check_url(&url)?;
    Ok(url)
}

/// Checks a URL an owner registers (the HTTP interfaces): its form, then
/// its host's addresses, resolved off the server's threads. Nothing is
/// connected to.
pub async fn check(guard: &Guard, raw: &str) -> Result<Url, UrlRefusal> {
    let url = parse(guard, raw)?;
    guard.resolve(&url).await?;
    Ok(url)
}

/// [`check`] for the CLI.
pub fn check_blocking(guard: &Guard, raw: &str) -> Result<Url, UrlRefusal> {
    let url = parse(guard, raw)?;
    guard.resolve_blocking(&url)?;
    Ok(url)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_https_urls_without_credentials() {
        let guard = Guard::new(PrivateAllowance::None);
        for (url, refusal) in [
            ("ftp://example.com/", UrlRefusal::NotHttps),
            ("http://example.com/", UrlRefusal::NotHttps),
            ("https://user:pw@example.com/", UrlRefusal::Credentials),
        ] {
            assert_eq!(check_blocking(&guard, url), Err(refusal), "{url}");
        }
        assert!(matches!(
            check_blocking(&guard, "https://[::1]:8443/hook"),
            Err(UrlRefusal::Guard(tributary_outbound::Refusal::Private(_)))
        ));
        let lab = Guard::new(PrivateAllowance::All);
        assert!(check_blocking(&lab, "http://127.0.0.1:9/hook").is_ok());
    }
}
