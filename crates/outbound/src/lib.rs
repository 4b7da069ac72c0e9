//! The one guard every outbound request a user can aim goes through:
//! SimpleFIN claim and access URLs, webhook URLs, and any provider address
//! a user can set (docs/operations.md#outbound-requests). A provider's base
//! URL set by the operator is the operator's to choose and is not guarded.
//!
//! The rules: only `http`/`https`; the host is resolved once,
//! asynchronously, off the caller's threads and within [`RESOLVE_TIMEOUT`]
//! ([`lookup`]); every address it resolves to must be on the public internet
//! ([`address`]), else the request is refused before anything is connected
//! to; the connection then goes to the checked addresses only (the client's
//! resolver *is* the check, so a name cannot answer one address to the check
//! and another to the connection); each redirect hop is checked the same
//! way; no proxy from the environment stands in between. Refusals say what
//! was refused and name the operator's switch for home labs,
//! `TRIBUTARY_OUTBOUND_ALLOW_PRIVATE`; they never say anything the far side
//! answered.

pub mod address;
mod client;
pub mod lookup;

pub use client::{GuardedClient, Redirects, refusal_in};

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;
use url::Url;

/// How long a name may take to resolve.
pub const RESOLVE_TIMEOUT: Duration = Duration::from_secs(5);

/// The operator's switch that lets user-aimed requests reach private
/// networks (tests, home labs with a SimpleFIN server on the LAN).
pub const ALLOW_PRIVATE_VARIABLE: &str = "TRIBUTARY_OUTBOUND_ALLOW_PRIVATE";

/// Why an outbound request was not made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error("the URL must use https (or http)")]
    Scheme,
    #[error("the URL has no host")]
    NoHost,
    #[error("{0} does not resolve")]
    Unresolvable(String),
    #[error(
        "{0} is inside a private or reserved network, where this server sends nothing (its operator can allow that with TRIBUTARY_OUTBOUND_ALLOW_PRIVATE=1)"
    )]
    Private(String),
    #[error("too many redirects")]
    TooManyRedirects,
}

/// Which addresses outside the public internet the operator lets
/// user-aimed requests reach (`TRIBUTARY_OUTBOUND_ALLOW_PRIVATE`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum PrivateAllowance {
    /// None: the public internet only.
    #[default]
    None,
    /// These addresses (a home lab's SimpleFIN server, say), nothing else.
    Only(Vec<IpAddr>),
    /// Every address (tests, a home lab that trusts its whole network).
    All,
}

impl PrivateAllowance {
    /// Reads the variable's value: `1`/`true`/`on` (every address),
    /// `0`/`false`/`off` or empty (none), or a comma-separated list of IP
    /// addresses.
    pub fn parse(value: &str) -> Result<Self, String> {
        let value = value.trim();
        match value.to_ascii_lowercase().as_str() {
            "" | "0" | "false" | "off" | "no" => return Ok(Self::None),
            "1" | "true" | "on" | "yes" => return Ok(Self::All),
            _ => {}
        }
        value
            .split(',')
            .map(|part| {
                let part = part.trim();
                literal_ip(part).ok_or_else(|| {
                    format!("{part:?} is not an IP address (expected 1, 0, or a comma-separated list of IP addresses)")
                })
            })
            .collect::<Result<_, _>>()
            .map(Self::Only)
    }

    fn allows(&self, ip: IpAddr) -> bool {
        match self {
            Self::None => false,
            Self::Only(ips) => ips.contains(&ip) || ips.contains(&canonical(ip)),
            Self::All => true,
        }
    }
}

/// An IPv4-mapped IPv6 address as the IPv4 address it is.
fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    }
}

/// Where user-aimed requests may go. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Guard {
    allow_private: PrivateAllowance,
    lookup: Arc<dyn lookup::Lookup>,
    resolve_timeout: Duration,
}

impl Guard {
    /// The system resolver; private destinations allowed only when the
    /// operator says so.
    pub fn new(allow_private: PrivateAllowance) -> Self {
        Self {
            allow_private,
            lookup: Arc::new(lookup::SystemLookup::default()),
            resolve_timeout: RESOLVE_TIMEOUT,
        }
    }

    /// Resolves names with `lookup` instead of the system (tests).
    pub fn with_lookup(mut self, lookup: Arc<dyn lookup::Lookup>) -> Self {
        self.lookup = lookup;
        self
    }

    pub fn with_resolve_timeout(mut self, timeout: Duration) -> Self {
        self.resolve_timeout = timeout;
        self
    }

    /// Which private destinations are allowed (`TRIBUTARY_OUTBOUND_ALLOW_PRIVATE`).
    pub fn private_allowance(&self) -> &PrivateAllowance {
        &self.allow_private
    }

    /// What can be checked of `url` without a lookup: its scheme, its host,
    /// and the address when the host is one. A named host is checked when
    /// it is resolved.
    pub fn check_url(&self, url: &Url) -> Result<(), Refusal> {
        if !matches!(url.scheme(), "https" | "http") {
            return Err(Refusal::Scheme);
        }
        let host = url
            .host_str()
            .filter(|h| !h.is_empty())
            .ok_or(Refusal::NoHost)?;
        match literal_ip(host) {
            Some(ip) => self.check_address(host, ip),
            None => Ok(()),
        }
    }

    /// The addresses a request to `url` may connect to: every address its
    /// host resolves to, each checked. Nothing is connected to.
    pub async fn resolve(&self, url: &Url) -> Result<Vec<SocketAddr>, Refusal> {
        self.check_url(url)?;
        let host = url.host_str().ok_or(Refusal::NoHost)?;
        let port = url.port_or_known_default().ok_or(Refusal::Scheme)?;
        if let Some(ip) = literal_ip(host) {
            return Ok(vec![SocketAddr::new(ip, port)]);
        }
        self.resolve_host(host, port).await
    }

    /// [`Guard::resolve`] for code with no async runtime of its own (the CLI).
    pub fn resolve_blocking(&self, url: &Url) -> Result<Vec<SocketAddr>, Refusal> {
        let host = || url.host_str().unwrap_or_default().to_owned();
        tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .map_err(|_| Refusal::Unresolvable(host()))?
            .block_on(self.resolve(url))
    }

    /// Resolves a named host and checks every address.
    async fn resolve_host(&self, host: &str, port: u16) -> Result<Vec<SocketAddr>, Refusal> {
        let unresolvable = || Refusal::Unresolvable(host.to_owned());
        let addrs = tokio::time::timeout(self.resolve_timeout, self.lookup.lookup(host, port))
            .await
            .map_err(|_| unresolvable())?
            .map_err(|_| unresolvable())?;
        if addrs.is_empty() {
            return Err(unresolvable());
        }
        for addr in &addrs {
            self.check_address(host, addr.ip())?;
        }
        Ok(addrs)
    }

    fn check_address(&self, host: &str, ip: IpAddr) -> Result<(), Refusal> {
        if address::is_forbidden(ip) && !self.allow_private.allows(ip) {
            return Err(Refusal::Private(host.to_owned()));
        }
        Ok(())
    }
}

/// The address a URL's host spells, if it spells one (`[::1]` arrives
/// bracketed).
fn literal_ip(host: &str) -> Option<IpAddr> {
    host.trim_start_matches('[')
        .trim_end_matches(']')
        .parse()
        .ok()
}
