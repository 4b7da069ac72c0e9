//! The sandbox provider: a deterministic fake bank that every new user can
//! connect to, used by the zero-config demo, by tests and by benchmarks.
//!
//! The data depends only on a seed fixed when the connection is made (from
//! the user's e-mail and the sandbox username), the date, and the time of the
//! previous sync; see docs/sandbox.md. Special usernames trigger failures.

mod activity;
mod generator;
mod securities;
pub mod texts;

use crate::connector::{ConnectRequest, Connector, ConnectorError, FetchContext, Prepared};
use crate::description::{
    Answers, Connect, Description, Environment, Field, Input, Reports, ReturnAddress, constructor,
};
use sha2::{Digest, Sha256};
use std::sync::Arc;
use std::time::Duration;
use tributary_domain::model::Provider;
use tributary_domain::snapshot::{ProviderSnapshot, SnapshotInstitution};

pub const PROVIDER: Provider = Provider::new("sandbox");

pub const DESCRIPTION: Description = Description {
    provider: PROVIDER,
    name: INSTITUTION_NAME,
    summary: "A test bank with realistic accounts and transactions. Username user_good, any password.",
    reports: Reports::INVESTMENTS,
    connect: Connect {
        fields: &[
            Field {
                name: "username",
                flag: Some("username"),
                label: "Username",
                help: "Sandbox username; special ones trigger failures (docs/sandbox.md).",
                input: Input::Text {
                    autocomplete: "username",
                },
                required: true,
                default: Some(USER_GOOD),
                remembered_as: Some("username"),
            },
            // Any password: the sandbox signs in as a bank's form would.
            Field {
                name: "password",
                flag: None,
                label: "Password",
                help: "",
                input: Input::Secret {
                    autocomplete: "current-password",
                },
                required: false,
                default: None,
                remembered_as: None,
            },
        ],
        note: None,
        hands_off: false,
        picks_institution: false,
        return_address: ReturnAddress::Never,
        finish_on_return: false,
        command_help: "Connect the deterministic sandbox bank and sync it (see docs/sandbox.md).",
        request: request_from,
    },
    environment: &[],
    configure,
};

fn configure(
    _: &Environment<'_>,
) -> Result<Option<crate::description::Constructor>, crate::description::SettingError> {
    Ok(constructor(|| Ok(SandboxConnector::default())))
}

fn request_from(answers: &Answers<'_>) -> Result<ConnectRequest, &'static str> {
    match answers.get("username") {
        "" => Err("Enter the sandbox username (user_good connects)."),
        username => Ok(connect_request(answers.email, username)),
    }
}

/// A connect request for the sandbox as `username`, for `email`'s user.
pub fn connect_request(email: &str, username: &str) -> ConnectRequest {
    ConnectRequest {
        settings: connection_settings(email, username),
        secret: None,
    }
}

/// Connects and syncs normally.
pub const USER_GOOD: &str = "user_good";
/// Refused when connecting, as a wrong password would be.
pub const USER_BAD_CREDENTIALS: &str = "user_bad_credentials";
/// Connects; every sync then asks for re-authentication.
pub const USER_REAUTH_REQUIRED: &str = "user_reauth_required";
/// Connects; every sync then fails as if the bank were down.
pub const USER_PROVIDER_DOWN: &str = "user_provider_down";
/// Connects and syncs normally, after a delay (see `SandboxConnector::slow_delay`).
pub const USER_SLOW: &str = "user_slow";

pub const INSTITUTION_ID: &str = "tributary_sandbox_bank";
pub const INSTITUTION_NAME: &str = "Tributary Sandbox Bank";

/// Settings stored on a sandbox connection: nothing in them is secret.
pub fn connection_settings(email: &str, username: &str) -> serde_json::Value {
    let digest = Sha256::digest(format!("sandbox\0{email}\0{username}").as_bytes());
    let mut seed = [0u8; 8];
    seed.copy_from_slice(&digest[..8]);
    serde_json::json!({ "username": username, "seed": u64::from_be_bytes(seed) })
}

type Pause = Arc<dyn Fn(Duration) + Send + Sync>;

#[derive(Clone)]
pub struct SandboxConnector {
    /// How long `user_slow` takes to answer.
    pub slow_delay: Duration,
    pause: Pause,
}

impl std::fmt::Debug for SandboxConnector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SandboxConnector")
            .field("slow_delay", &self.slow_delay)
            .finish_non_exhaustive()
    }
}

impl Default for SandboxConnector {
    fn default() -> Self {
        Self {
            slow_delay: Duration::from_secs(10),
            pause: Arc::new(std::thread::sleep),
        }
    }
}

impl SandboxConnector {
    /// A sandbox whose `user_slow` delay goes through `pause` (tests record it
    /// instead of waiting).
    pub fn with_pause(
        slow_delay: Duration,
        pause: impl Fn(Duration) + Send + Sync + 'static,
    ) -> Self {
        Self {
            slow_delay,
            pause: Arc::new(pause),
        }
    }
}

fn institution() -> SnapshotInstitution {
    SnapshotInstitution {
        provider_institution_id: INSTITUTION_ID.to_owned(),
        name: INSTITUTION_NAME.to_owned(),
        logo_url: None,
    }
}

struct Settings<'a> {
    username: &'a str,
    seed: u64,
}

fn read_settings(settings: &serde_json::Value) -> Result<Settings<'_>, ConnectorError> {
    let username = settings
        .get("username")
        .and_then(|v| v.as_str())
        .ok_or_else(|| ConnectorError::Misconfigured("sandbox settings lack `username`".into()))?;
    let seed = settings
        .get("seed")
        .and_then(|v| v.as_u64())
        .ok_or_else(|| {
            ConnectorError::Misconfigured("sandbox settings lack a numeric `seed`".into())
        })?;
    Ok(Settings { username, seed })
}

impl Connector for SandboxConnector {
    fn provider(&self) -> Provider {
        PROVIDER
    }

    fn prepare(&self, request: &ConnectRequest) -> Result<Prepared, ConnectorError> {
        let settings = read_settings(&request.settings)?;
        if settings.username == USER_BAD_CREDENTIALS {
            return Err(ConnectorError::InvalidCredentials(format!(
                "the sandbox refuses `{USER_BAD_CREDENTIALS}`, as a bank refuses a wrong password"
            )));
        }
        Ok(Prepared {
            institution: institution(),
            settings: request.settings.clone(),
            credentials: None,
            consent: None,
        })
    }

    fn fetch(&self, context: &FetchContext<'_>) -> Result<ProviderSnapshot, ConnectorError> {
        let settings = read_settings(context.settings)?;
        match settings.username {
            USER_BAD_CREDENTIALS => {
                return Err(ConnectorError::InvalidCredentials(
                    "the sandbox password was changed".into(),
                ));
            }
            USER_REAUTH_REQUIRED => {
                return Err(ConnectorError::ReauthRequired(
                    "the sandbox bank asks the user to log in again".into(),
                ));
            }
            USER_PROVIDER_DOWN => {
                return Err(ConnectorError::Unavailable {
                    reason: "the sandbox bank answered 503 Service Unavailable".into(),
                    retry_after: Some(Duration::from_secs(300)),
                });
            }
            USER_SLOW => (self.pause)(self.slow_delay),
            _ => {}
        }
        Ok(ProviderSnapshot {
            institution: institution(),
            accounts: generator::generate(settings.seed, context.now, context.last_synced_at),
            notices: Vec::new(),
            pending_match: None,
            complete: true,
        })
    }
}

#[cfg(test)]
mod tests;
