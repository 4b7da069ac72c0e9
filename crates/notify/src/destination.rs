//! Where a webhook may be delivered. A URL's host is resolved once, every
//! address it resolves to is checked, and the request then goes to those
//! checked addresses only (so a name cannot resolve to a public address
//! for the check and to a private one for the request). Loopback, private,
//! link-local (cloud metadata at 169.254.169.254 among them), shared,
//! multicast and reserved ranges are refused unless the operator allows
//! private destinations (`TRIBUTARY_WEBHOOKS_ALLOW_PRIVATE=1`, for tests
//! and home labs). Nothing is connected to before the check.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, ToSocketAddrs};
use url::Url;

/// Why a destination is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error("the URL must use https (or http)")]
    Scheme,
    #[error("the URL has no host")]
    NoHost,
    #[error("the URL may not carry a user name or password")]
    Credentials,
    #[error("{0} does not resolve")]
    Unresolvable(String),
    #[error("{host} resolves to {ip}, an address inside a private network")]
    Private { host: String, ip: IpAddr },
}

/// Checks `url`'s form (before anything is stored).
pub fn check_form(url: &Url) -> Result<(), Refusal> {
    if !matches!(url.scheme(), "https" | "http") {
        return Err(Refusal::Scheme);
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(Refusal::NoHost);
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(Refusal::Credentials);
    }
    Ok(())
}

/// The addresses a delivery to `url` may connect to: every address the
/// host resolves to, each checked; refused when any is private (unless
/// `allow_private`).
pub fn resolve(url: &Url, allow_private: bool) -> Result<Vec<SocketAddr>, Refusal> {
    check_form(url)?;
    let host = url.host_str().ok_or(Refusal::NoHost)?;
    let port = url.port_or_known_default().ok_or(Refusal::Scheme)?;
    // `[::1]` arrives bracketed; a literal address needs no lookup.
    let literal = host.trim_start_matches('[').trim_end_matches(']');
    let addrs: Vec<SocketAddr> = match literal.parse::<IpAddr>() {
        Ok(ip) => vec![SocketAddr::new(ip, port)],
        Err(_) => (host, port)
            .to_socket_addrs()
            .map_err(|_| Refusal::Unresolvable(host.to_owned()))?
            .collect(),
    };
    if addrs.is_empty() {
        return Err(Refusal::Unresolvable(host.to_owned()));
    }
    if !allow_private && let Some(addr) = addrs.iter().find(|a| is_private(a.ip())) {
        return Err(Refusal::Private {
            host: host.to_owned(),
            ip: addr.ip(),
        });
    }
    Ok(addrs)
}

/// Whether `ip` lies in a range a webhook must not reach from this server.
pub fn is_private(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => private_v4(v4),
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return private_v4(v4);
            }
            let segments = v6.segments();
            // NAT64 (64:ff9b::/96) carries an IPv4 address in its last 32 bits.
            if segments[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
                let o = v6.octets();
                return private_v4(Ipv4Addr::new(o[12], o[13], o[14], o[15]));
            }
            v6.is_unspecified()
                || v6.is_loopback()
                || v6.is_multicast()
                // Unique local fc00::/7 (fd00:ec2::254, a cloud metadata
                // address, among them), link-local fe80::/10.
                || (segments[0] & 0xfe00) == 0xfc00
                || (segments[0] & 0xffc0) == 0xfe80
                // IPv4-compatible ::a.b.c.d (deprecated) and documentation.
                || (segments[..6] == [0; 6] && v6 != Ipv6Addr::UNSPECIFIED)
                || (segments[0] == 0x2001 && segments[1] == 0x0db8)
        }
    }
}

fn private_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    ip.is_unspecified()
        || ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || ip.is_broadcast()
        || ip.is_multicast()
        || a == 0
        // Shared address space (carrier-grade NAT), 100.64.0.0/10.
        || (a == 100 && (64..128).contains(&b))
        // IETF protocol assignments, 192.0.0.0/24; benchmarking 198.18.0.0/15.
        || (a == 192 && b == 0 && c == 0)
        || (a == 198 && (b == 18 || b == 19))
        // Reserved 240.0.0.0/4.
        || a >= 240
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(url: &str) -> bool {
        matches!(
            resolve(&Url::parse(url).unwrap(), false),
            Err(Refusal::Private { .. })
        )
    }

    #[test]
    fn private_networks_and_metadata_are_refused_without_connecting() {
        for url in [
            "http://127.0.0.1/hook",
            "http://[::1]:8080/hook",
            "http://169.254.169.254/latest/meta-data",
            "http://10.0.0.1/",
            "http://172.16.5.4/",
            "http://192.168.1.10/",
            "http://100.64.0.1/",
            "http://0.0.0.0/",
            "http://[::ffff:127.0.0.1]/",
            "http://[fd00:ec2::254]/",
            "http://[fe80::1]/",
            "http://[64:ff9b::a00:1]/",
            "http://localhost:9/",
        ] {
            assert!(refused(url), "{url}");
        }
        assert!(resolve(&Url::parse("http://127.0.0.1:9/").unwrap(), true).is_ok());
        assert!(!is_private("93.184.216.34".parse().unwrap()));
        assert!(!is_private(
            "2606:2800:220:1:248:1893:25c8:1946".parse().unwrap()
        ));
    }

    #[test]
    fn only_plain_web_urls_without_credentials() {
        for (url, refusal) in [
            ("ftp://example.com/", Refusal::Scheme),
            ("https://user:pw@example.com/", Refusal::Credentials),
        ] {
            assert_eq!(check_form(&Url::parse(url).unwrap()), Err(refusal));
        }
    }
}
