//! Interactive Brokers through its Flex Web Service (version 3), with the
//! person's own Flex token and the id of a Flex query they made in Client
//! Portal: no aggregator, nothing for the operator to configure
//! (docs/providers.md, "Interactive Brokers").
//!
//! - `prepare`: the token and query are checked at once: `SendRequest`
//!   answers a reference code for a token and query it accepts, an error
//!   code for one it does not. The token is sealed; the query id is a
//!   setting.
//! - `fetch`: `SendRequest`, then `GetStatement` with the reference code,
//!   asked again a few times while IBKR says the statement is still being
//!   made; the statement (`statement.rs`) gives the accounts.

mod statement;

use crate::connector::{
    ConnectRequest, ConnectorError, FetchContext, HttpAnswer, Prepared,
};
use crate::description::{
    Answers, Connect, Constructor, Description, Environment, Field, Input, Reports,
    ReturnAddress, SettingError, SetupError, Variable, constructor,
};
use crate::import::xml::{self, Element};
use crate::personal_token;
use crate::provider_http::ProviderHttp;
use serde_json::{Value, json};
use std::time::Duration;
use tributary_domain::model::Provider;
use tributary_domain::snapshot::*;

pub const PROVIDER: Provider = Provider::new("ibkr");

pub const DESCRIPTION: Description = Description {
    provider: PROVIDER,
    name: "Interactive Brokers",
    summary: "Interactive Brokers: positions, trades, dividends, interest and fees from a Flex query, with your Flex Web Service token.",
    reports: Reports::INVESTMENTS,
    connect: Connect {
        fields: &[
            personal_token::token_field(
                "Flex Web Service token",
                "Your Flex Web Service token from Client Portal (\"-\" reads it from standard input, keeping it out of the shell history).",
            ),
            Field {
                name: "query_id",
                flag: Some("query-id"),
                label: "Flex query id",
                help: "The id of your Activity Flex query (Client Portal, Performance & Reports, Flex Queries).",
                input: Input::Text { autocomplete: "off" },
                required: true,
                default: None,
                remembered_as: Some("query_id"),
            },
        ],
        note: Some("In Client Portal (Performance & Reports, Flex Queries): make an Activity Flex query with Account Information, Open Positions, Trades, Cash Transactions, Cash Report and Net Asset Value, dates as yyyyMMdd, for the last 365 days; then, under Flex Web Service, make a token. Both are checked at once; the token is kept sealed."),
        hands_off: false,
        picks_institution: false,
        return_address: ReturnAddress::Never,
        finish_on_return: false,
        command_help: "Connect your Interactive Brokers accounts with a Flex Web Service token (--token, or - to paste it) and an Activity Flex query's id (--query-id), then sync.",
        request: request_from,
    },
    environment: &[Variable {
        names: "TRIBUTARY_IBKR_FLEX_URL",
        help: "its Flex Web Service root [default: https://ndcdyn.interactivebrokers.com/AccountManagement/FlexWebService]",
    }],
    configure,
};

pub const DEFAULT_BASE_URL: &str =
    "https://ndcdyn.interactivebrokers.com/AccountManagement/FlexWebService";
/// How often `GetStatement` is asked in all while the statement is being
/// made, and how long apart: IBKR takes ten requests a minute per token,
/// and a sync makes at most seven.
const STATEMENT_TRIES: u32 = 6;
const STATEMENT_WAIT: Duration = Duration::from_secs(5);
/// A statement document larger than this is refused, read no further (a
/// year of a busy account is a few megabytes).
const MAX_STATEMENT_BYTES: u64 = 32 * 1024 * 1024;

/// Always offered: a person's own token needs no configuration.
fn configure(env: &Environment<'_>) -> Result<Option<Constructor>, SettingError> {
    let config = IbkrConfig {
        base_url: env
            .get("TRIBUTARY_IBKR_FLEX_URL")
            .unwrap_or_else(|| DEFAULT_BASE_URL.to_owned()),
        timeout: crate::connector::PROVIDER_TIMEOUT,
        statement_wait: STATEMENT_WAIT,
    };
    Ok(constructor(move || {
        IbkrConnector::new(config.clone()).map_err(|err| SetupError::new("Interactive Brokers", err))
    }))
}

fn request_from(answers: &Answers<'_>) -> Result<ConnectRequest, &'static str> {
    let query_id = answers.get("query_id").trim();
    if query_id.is_empty() || !query_id.chars().all(|c| c.is_ascii_digit()) {
        return Err("Give the id of your Flex query: the number Client Portal shows beside it.");
    }
    let mut request = personal_token::request_from(answers, "Paste your Flex Web Service token.")?;
    request.settings = json!({ "query_id": query_id });
    Ok(request)
}

#[derive(Debug, Clone)]
pub struct IbkrConfig {
    pub base_url: String,
    pub timeout: Duration,
    /// Between two asks for a statement still being made.
    pub statement_wait: Duration,
}

#[derive(Debug)]
pub struct IbkrConnector {
    config: IbkrConfig,
    http: ProviderHttp,
}

/// What IBKR's error code means for the connection (the Flex Web Service
/// guide's list).
enum Failure {
    /// The statement is still being made: ask again shortly.
    NotYet,
    /// Try again later, without the person.
    Later,
    /// The person must give a new token or query.
    NeedsPerson,
}

fn failure(code: u32) -> Failure {
    match code {
        // Being made; the server under heavy load.
        1009 | 1019 => Failure::NotYet,
        // A query of a kind the service no longer takes, an inactive
        // service account, the token expired, an IP restriction, the query
        // or the token invalid, an account invalid; a request the service
        // cannot validate (the token's form).
        1010..=1016 | 1020 => Failure::NeedsPerson,
        // Not available or not ready yet, too many requests, could not be
        // made or retrieved now, a reference code it lost; an unknown
        // code, too.
        _ => Failure::Later,
    }
}

/// A `FlexStatementResponse`: the reference code of a statement asked for,
/// or why not.
struct Answer {
    reference: Option<String>,
    /// Where to ask for the statement.
    url: Option<String>,
    error: Option<(u32, String)>,
}

fn answer_of(response: &Element) -> Option<Answer> {
    if response.name != "FlexStatementResponse" {
        return None;
    }
    let text = |name: &str| response.text_at(name).map(str::to_owned);
    Some(Answer {
        reference: text("ReferenceCode"),
        url: text("Url"),
        error: text("ErrorCode").map(|code| {
            (
                code.parse().unwrap_or(0),
                text("ErrorMessage").unwrap_or_default(),
            )
        }),
    })
}

impl IbkrConnector {
    pub fn new(config: IbkrConfig) -> Result<Self, reqwest::Error> {
        let http = ProviderHttp::new("Interactive Brokers", config.timeout)?;
        Ok(Self { config, http })
    }

    /// `GET {url}?t=…&q=…&v=3`, parsed.
    fn get(&self, url: &str, (token, q): (&str, &str), what: &str) -> Result<Element, ConnectorError> {
        let mut response = self.http.send(
            self.http
                .client
                .get(url)
                .query(&[("t", token), ("q", q), ("v", "3")]),
            what,
        )?;
        let status = response.status();
        if !status.is_success() {
            let answer = HttpAnswer {
                provider: "Interactive Brokers",
                what,
                status,
                detail: "",
                retry_after: None,
            };
            return Err(answer.error(|_| None));
        }
        let too_large = || {
            ConnectorError::Protocol(format!(
                "Interactive Brokers answered {what} with more than {} MB",
                MAX_STATEMENT_BYTES / (1024 * 1024)
            ))
        };
        if response.content_length().is_some_and(|n| n > MAX_STATEMENT_BYTES) {
            return Err(too_large());
        }
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(
            &mut std::io::Read::take(&mut response, MAX_STATEMENT_BYTES + 1),
            &mut bytes,
        )
        .map_err(|err| ConnectorError::Unavailable {
            // An I/O error of the body names no URL.
            reason: format!("Interactive Brokers' answer to {what} broke off: {err}"),
            retry_after: None,
        })?;
        if bytes.len() as u64 > MAX_STATEMENT_BYTES {
            return Err(too_large());
        }
        xml::parse(&xml::decode(&bytes)).map_err(|err| {
            ConnectorError::Protocol(format!(
                "Interactive Brokers answered {what} with XML that does not read: {err}"
            ))
        })
    }

    /// A service's address below the configured root.
    fn service(&self, name: &str) -> String {
        format!("{}/{name}", self.config.base_url.trim_end_matches('/'))
    }

    /// Where IBKR says to ask for the statement: its `Url` when that is on
    /// IBKR's own service (https, `interactivebrokers.com`) or the
    /// configured root's origin; else the token is not sent there.
    fn statement_url(&self, given: Option<&str>) -> Result<String, ConnectorError> {
        let Some(given) = given else {
            return Ok(self.service("GetStatement"));
        };
        let trusted = url::Url::parse(given).is_ok_and(|url| {
            let ibkr = url.scheme() == "https"
                && url.host_str().is_some_and(|host| {
                    host == "interactivebrokers.com" || host.ends_with(".interactivebrokers.com")
                });
            let configured = url::Url::parse(&self.config.base_url)
                .is_ok_and(|root| root.origin() == url.origin());
            ibkr || configured
        });
        if trusted {
            Ok(given.to_owned())
        } else {
            Err(ConnectorError::Protocol(format!(
                "Interactive Brokers said to fetch the statement from {given}, which is not its Flex Web Service"
            )))
        }
    }

    /// Asks for the query's statement: its reference code, and where to
    /// fetch it.
    fn send_request(&self, token: &str, query_id: &str) -> Result<(String, String), ConnectorError> {
        let document = self.get(
            &self.service("SendRequest"),
            (token, query_id),
            "the statement request",
        )?;
        let answer = answer_of(&document).ok_or_else(|| {
            ConnectorError::Protocol(
                "Interactive Brokers answered the statement request with something other than a FlexStatementResponse".into(),
            )
        })?;
        if let Some((code, message)) = answer.error {
            return Err(refused(code, &message));
        }
        let reference = answer.reference.ok_or_else(|| {
            ConnectorError::Protocol(
                "Interactive Brokers accepted the statement request but gave no reference code"
                    .into(),
            )
        })?;
        Ok((reference, self.statement_url(answer.url.as_deref())?))
    }

    /// The statement of `reference` at `url`, asked again while it is
    /// being made.
    fn statement(&self, token: &str, (reference, url): (&str, &str)) -> Result<Element, ConnectorError> {
        let mut attempt = 1;
        loop {
            let document = self.get(url, (token, reference), "the statement")?;
            let Some(answer) = answer_of(&document) else {
                return Ok(document);
            };
            let Some((code, message)) = answer.error else {
                return Err(ConnectorError::Protocol(
                    "Interactive Brokers answered the statement with neither a statement nor an error code".into(),
                ));
            };
            match failure(code) {
                Failure::NotYet if attempt < STATEMENT_TRIES => {
                    std::thread::sleep(self.config.statement_wait);
                    attempt += 1;
                }
                _ => return Err(refused(code, &message)),
            }
        }
    }
}

/// IBKR's error code `code` as the error it means.
fn refused(code: u32, message: &str) -> ConnectorError {
    match failure(code) {
        Failure::NeedsPerson => ConnectorError::ReauthRequired(format!(
            "Interactive Brokers refused the Flex token or query ({code}: {message}): make a new one (or check the query) in Client Portal and connect again"
        )),
        Failure::NotYet | Failure::Later => ConnectorError::Unavailable {
            reason: format!("Interactive Brokers could not give the statement now ({code}: {message})"),
            // IBKR allows ten requests a minute per token.
            retry_after: Some(Duration::from_secs(60)),
        },
    }
}

fn query_id(settings: &Value) -> Result<&str, ConnectorError> {
    settings["query_id"]
        .as_str()
        .ok_or_else(|| ConnectorError::ReauthRequired("no Flex query id is kept: connect again".into()))
}

impl crate::connector::Connector for IbkrConnector {
    fn provider(&self) -> Provider {
        PROVIDER
    }

    fn prepare(&self, request: &ConnectRequest) -> Result<Prepared, ConnectorError> {
        let query = query_id(&request.settings)
            .map_err(|_| ConnectorError::InvalidCredentials("connecting Interactive Brokers needs your Flex query's id".into()))?
            .to_owned();
        let mut prepared = personal_token::prepare(
            personal_token::given(request, ("Interactive Brokers", "Flex token"))?,
            |token| self.send_request(token, &query).map(drop),
            "Interactive Brokers does not accept this Flex token and query id: check both in Client Portal (a token expires; make a new one there)",
            institution(),
        )?;
        prepared.settings = json!({ "query_id": query });
        Ok(prepared)
    }

    fn fetch(&self, context: &FetchContext<'_>) -> Result<ProviderSnapshot, ConnectorError> {
        let token = personal_token::kept(context)?;
        let (reference, url) = self.send_request(token, query_id(context.settings)?)?;
        let document = self.statement(token, (&reference, &url))?;
        Ok(ProviderSnapshot {
            institution: institution(),
            accounts: statement::accounts(&document, context.now)?,
            notices: Vec::new(),
            // Nothing is pending in a statement.
            pending_match: None,
            complete: true,
        })
    }
}

fn institution() -> SnapshotInstitution {
    SnapshotInstitution {
        provider_institution_id: "ibkr".into(),
        name: "Interactive Brokers".into(),
        logo_url: None,
    }
}
