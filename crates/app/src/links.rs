//! Paths the servers serve and other processes link to: the CLI prints
//! sign-in links and SimpleFIN addresses, the servers' greetings print the
//! developer dashboard. One constant each, so a link never drifts from the
//! route it names.

/// The Personal dashboard's one-time sign-in link: `{base}{SIGN_IN_LINK_PATH}/{token}`.
pub const SIGN_IN_LINK_PATH: &str = "/sign-in/link";

/// The root of the SimpleFIN server both interfaces serve.
pub const SIMPLEFIN_ROOT: &str = "/simplefin";

/// The developer dashboard (the Platform interface).
pub const DEVELOPERS_ROOT: &str = "/developers";

/// Where people reach a server this configuration runs, for links other
/// processes print (the CLI's sign-in links, SimpleFIN setup tokens):
/// `TRIBUTARY_PUBLIC_URL`, else `TRIBUTARY_BIND` (an address that listens
/// on every interface, `0.0.0.0` or `[::]`, as this machine's loopback).
pub fn reachable_base(config: &crate::Config) -> String {
    if let Some(url) = &config.public_url {
        return url.trim_end_matches('/').to_owned();
    }
    match config.bind.parse::<std::net::SocketAddr>() {
        Ok(addr) if addr.ip().is_unspecified() => {
            let loopback: std::net::IpAddr = if addr.is_ipv4() {
                std::net::Ipv4Addr::LOCALHOST.into()
            } else {
                std::net::Ipv6Addr::LOCALHOST.into()
            };
            format!(
                "http://{}",
                std::net::SocketAddr::new(loopback, addr.port())
            )
        }
        Ok(addr) => format!("http://{addr}"),
        // A host name and port (`localhost:8080`).
        Err(_) => format!("http://{}", config.bind),
    }
}
