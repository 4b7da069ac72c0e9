//! What every HTTP connector does the same way: send a request (no answer
//! in time, or no connection, is transient), read the JSON of a success (no
//! JSON content type, an empty body or one that does not parse is an answer
//! we cannot use), and hand any other answer to the provider's own rule,
//! which knows how it words a refusal.

use crate::connector::ConnectorError;
use reqwest::StatusCode;
use reqwest::blocking::{Client, RequestBuilder, Response};
use reqwest::header::HeaderMap;
use std::time::Duration;

/// `err` and its causes, one after the other.
pub(crate) fn causes(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut cause = err.source();
    while let Some(next) = cause {
        text.push_str(": ");
        text.push_str(&next.to_string());
        cause = next.source();
    }
    text
}

/// A provider's answer that is not a success, for its own rule to read.
#[derive(Debug)]
pub(crate) struct Refusal<'a> {
    /// What was asked (`the account balances`).
    pub what: &'a str,
    pub status: StatusCode,
    pub headers: &'a HeaderMap,
    pub body: &'a str,
}

impl Refusal<'_> {
    /// The first of `names` that holds a whole number of seconds.
    pub fn seconds_header(&self, names: &[&str]) -> Option<Duration> {
        names.iter().find_map(|name| {
            let value = self.headers.get(*name)?.to_str().ok()?;
            value.trim().parse::<u64>().ok().map(Duration::from_secs)
        })
    }
}

/// An HTTP client that speaks for one provider (its name in every error).
#[derive(Debug, Clone)]
pub(crate) struct ProviderHttp {
    pub provider: &'static str,
    pub client: Client,
}

impl ProviderHttp {
    pub fn new(provider: &'static str, timeout: Duration) -> Result<Self, reqwest::Error> {
        Self::new_with(provider, timeout, |builder| builder)
    }

    /// A client `more` adds to (a client certificate, say).
    pub fn new_with(
        provider: &'static str,
        timeout: Duration,
        more: impl FnOnce(reqwest::blocking::ClientBuilder) -> reqwest::blocking::ClientBuilder,
    ) -> Result<Self, reqwest::Error> {
        let client = more(
            Client::builder()
                .timeout(timeout)
                .user_agent(concat!("tributary/", env!("CARGO_PKG_VERSION"))),
        )
        .build()?;
        Ok(Self { provider, client })
    }

    /// Sends `request`; a timeout or a failed connection is transient.
    pub fn send(&self, request: RequestBuilder, what: &str) -> Result<Response, ConnectorError> {
        let provider = self.provider;
        request.send().map_err(|err| {
            let reason = if err.is_timeout() {
                format!("{provider} did not answer {what} in time")
            } else {
                // The cause (a TLS alert, a refused connection) is down the
                // chain; the request's address is not said.
                format!(
                    "could not reach {provider} for {what}: {}",
                    causes(&err.without_url())
                )
            };
            ConnectorError::Unavailable {
                reason,
                retry_after: None,
            }
        })
    }

    /// The JSON body of a successful answer; any other answer as the error
    /// `refused` makes of it.
    pub fn json<T: serde::de::DeserializeOwned>(
        &self,
        response: Response,
        what: &str,
        refused: impl FnOnce(&Refusal<'_>) -> ConnectorError,
    ) -> Result<T, ConnectorError> {
        let (_, body) = self.json_body(response, what, refused)?;
        self.parse(&body, what)
    }

    /// `body` read as `T`; a body that does not parse is an answer we
    /// cannot use.
    pub fn parse<T: serde::de::DeserializeOwned>(
        &self,
        body: &[u8],
        what: &str,
    ) -> Result<T, ConnectorError> {
        serde_json::from_slice(body).map_err(|err| {
            ConnectorError::Protocol(format!(
                "{}'s answer to {what} does not parse: {err}",
                self.provider
            ))
        })
    }

    /// The headers and the unparsed JSON body of a successful answer, for
    /// a provider that signs its bodies; any other answer as the error
    /// `refused` makes of it.
    pub fn json_body(
        &self,
        response: Response,
        what: &str,
        refused: impl FnOnce(&Refusal<'_>) -> ConnectorError,
    ) -> Result<(HeaderMap, bytes::Bytes), ConnectorError> {
        let provider = self.provider;
        let status = response.status();
        if !status.is_success() {
            let headers = response.headers().clone();
            let body = response.text().unwrap_or_default();
            return Err(refused(&Refusal {
                what,
                status,
                headers: &headers,
                body: &body,
            }));
        }
        let headers = response.headers().clone();
        let is_json = headers
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.to_ascii_lowercase().contains("json"));
        if !is_json {
            return Err(ConnectorError::Protocol(format!(
                "{provider} answered {what} without a JSON content type"
            )));
        }
        let body = response.bytes().map_err(|e| ConnectorError::Unavailable {
            reason: format!("reading {provider}'s answer to {what}: {}", e.without_url()),
            retry_after: None,
        })?;
        if body.is_empty() {
            return Err(ConnectorError::Protocol(format!(
                "{provider} answered {what} with an empty body"
            )));
        }
        Ok((headers, body))
    }
}
