//! HTTP clients whose every connection goes through the [`Guard`]: the
//! guard is the client's resolver (so the connection is made to exactly the
//! addresses it checked), an address spelled in the URL is checked before
//! the request is built (the resolver never sees those), and so is each
//! redirect hop.

use crate::{Guard, Refusal};
use reqwest::Method;
use reqwest::blocking::{ClientBuilder, RequestBuilder};
use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use std::sync::Arc;
use url::Url;

/// Redirects followed at most, each checked.
const MAX_REDIRECTS: usize = 5;

/// What a guarded client does with a redirect.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Redirects {
    /// The 3xx answer is the answer (webhooks: the receiver is the URL).
    NotFollowed,
    /// Each hop is checked like the first URL, at most five.
    FollowedWhenAllowed,
}

/// A blocking client (connectors run on worker threads) that reaches only
/// what the guard allows.
#[derive(Debug, Clone)]
pub struct GuardedClient {
    client: reqwest::blocking::Client,
    guard: Guard,
}

impl Guard {
    /// Finishes `builder` (its timeout, user agent, …) into a guarded
    /// client: the guard resolves, redirects are refused or checked, and
    /// proxies from the environment are not used (a proxy would resolve
    /// for us).
    pub fn blocking_client(
        &self,
        builder: ClientBuilder,
        redirects: Redirects,
    ) -> reqwest::Result<GuardedClient> {
        let policy = match redirects {
            Redirects::NotFollowed => reqwest::redirect::Policy::none(),
            Redirects::FollowedWhenAllowed => {
                let hops = self.clone();
                reqwest::redirect::Policy::custom(move |attempt| {
                    if attempt.previous().len() > MAX_REDIRECTS {
                        return attempt.error(Refusal::TooManyRedirects);
                    }
                    match hops.check_url(attempt.url()) {
                        Ok(()) => attempt.follow(),
                        Err(refusal) => attempt.error(refusal),
                    }
                })
            }
        };
        let client = builder
            .no_proxy()
            .dns_resolver(Arc::new(GuardedResolver(self.clone())))
            .redirect(policy)
            .build()?;
        Ok(GuardedClient {
            client,
            guard: self.clone(),
        })
    }
}

impl GuardedClient {
    /// A request to `url`, once what can be checked before a lookup holds.
    pub fn request(&self, method: Method, url: Url) -> Result<RequestBuilder, Refusal> {
        self.guard.check_url(&url)?;
        Ok(self.client.request(method, url))
    }

    /// The guard this client reaches through.
    pub fn guard(&self) -> &Guard {
        &self.guard
    }

    pub fn get(&self, url: Url) -> Result<RequestBuilder, Refusal> {
        self.request(Method::GET, url)
    }

    pub fn post(&self, url: Url) -> Result<RequestBuilder, Refusal> {
        self.request(Method::POST, url)
    }
}

/// The guard's refusal behind a failed request, if that is why it failed
/// (a refused name or redirect hop).
pub fn refusal_in(err: &reqwest::Error) -> Option<Refusal> {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(err);
    while let Some(current) = source {
        if let Some(refusal) = current.downcast_ref::<Refusal>() {
            return Some(refusal.clone());
        }
        source = current.source();
    }
    None
}

/// The guard as reqwest's resolver.
#[derive(Debug)]
struct GuardedResolver(Guard);

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let guard = self.0.clone();
        Box::pin(async move {
            // The port is set by the connector; 0 here.
            let addrs = guard.resolve_host(name.as_str(), 0).await?;
            Ok(Box::new(addrs.into_iter()) as Addrs)
        })
    }
}
