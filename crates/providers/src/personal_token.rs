//! What the banks a person connects with their own personal access token
//! share (Up, Starling, Interactive Brokers' Flex token, bunq's API key):
//! no aggregator and nothing for the operator to configure but the API's
//! root; one form field for the token; the token
//! checked at once, before anything is stored, and kept sealed; a sync
//! without a kept token needing the person.

use crate::connector::{ConnectRequest, ConnectorError, FetchContext, Prepared};
use crate::description::{
    Answers, Constructor, Environment, Field, Input, SetupError, constructor,
};
use serde_json::json;
use std::time::Duration;
use tributary_domain::snapshot::SnapshotInstitution;

/// The connect form's one field: the token, kept out of shell history.
pub(crate) const fn token_field(label: &'static str, help: &'static str) -> Field {
    Field {
        name: "token",
        flag: Some("token"),
        label,
        help,
        input: Input::Secret {
            autocomplete: "off",
        },
        required: true,
        default: None,
        remembered_as: None,
    }
}

/// Where a token bank's API is, and how long it may take.
#[derive(Debug, Clone)]
pub struct TokenBankConfig {
    pub base_url: String,
    pub timeout: Duration,
}

/// How a token bank's connector is made from its configuration.
pub(crate) type Build<C> = fn(TokenBankConfig) -> Result<C, reqwest::Error>;

/// Always offered: the API root from `variable`, else `default`.
pub(crate) fn configure<C: crate::Connector + 'static>(
    env: &Environment<'_>,
    (variable, default): (&str, &str),
    (bank, build): (&'static str, Build<C>),
) -> Option<Constructor> {
    let config = TokenBankConfig {
        base_url: env.get(variable).unwrap_or_else(|| default.to_owned()),
        timeout: crate::connector::PROVIDER_TIMEOUT,
    };
    constructor(move || build(config.clone()).map_err(|err| SetupError::new(bank, err)))
}

/// The form's answer as a connect request; `missing` when it is blank.
pub(crate) fn request_from(
    answers: &Answers<'_>,
    missing: &'static str,
) -> Result<ConnectRequest, &'static str> {
    let token = answers.get("token").trim();
    if token.is_empty() {
        return Err(missing);
    }
    Ok(ConnectRequest {
        settings: json!({}),
        secret: Some(token.to_owned()),
    })
}

/// The token a connect request carries; `bank` and what it calls the
/// token (`personal access token`) name it when it is missing.
pub(crate) fn given(
    request: &ConnectRequest,
    (bank, token): (&str, &str),
) -> Result<String, ConnectorError> {
    request
        .secret
        .as_deref()
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(str::to_owned)
        .ok_or_else(|| {
            ConnectorError::InvalidCredentials(format!("connecting {bank} needs your {token}"))
        })
}

/// A token checked by `check` (a call any valid token may make): a token
/// the bank refuses is the person's wrong input, said at once as
/// `refused` with the bank's own reason; the checked token is kept sealed.
pub(crate) fn prepare(
    token: String,
    check: impl FnOnce(&str) -> Result<(), ConnectorError>,
    refused: &str,
    institution: SnapshotInstitution,
) -> Result<Prepared, ConnectorError> {
    check(&token)
        .map_err(|err| err.refused_at_connect(|reason| format!("{refused} ({reason})")))?;
    Ok(Prepared {
        institution,
        settings: json!({}),
        credentials: Some(token),
        consent: None,
    })
}

/// The sealed token a sync reads with.
pub(crate) fn kept<'a>(context: &FetchContext<'a>) -> Result<&'a str, ConnectorError> {
    context.credentials.ok_or_else(|| {
        ConnectorError::ReauthRequired("no personal access token is kept: connect again".into())
    })
}
