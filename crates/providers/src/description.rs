//! What a connector says of itself, in its own module: its id and name,
//! what data it reports, how a person connects it (the form's fields, which
//! are also the command line's flags), the environment variables it reads,
//! and how it is built from them. The registry, the pages' bank list and
//! bank form, `tributary connect` and the servers' `--help` read this one
//! description, so that adding a provider is its module and one line in the
//! catalog (docs/architecture.md, "Adding a provider").

use crate::connector::{ConnectRequest, Connector};
use std::fmt;
use std::sync::Arc;
use tributary_domain::ids::UserId;
use tributary_domain::model::Provider;
use tributary_outbound::Guard;

/// A connector, described.
#[derive(Debug)]
pub struct Description {
    pub provider: Provider,
    /// The name people know it by (`Plaid`).
    pub name: &'static str,
    /// One sentence for the bank list: whom it reaches and how.
    pub summary: &'static str,
    pub reports: Reports,
    pub connect: Connect,
    /// Its environment variables, as `--help` lists them.
    pub environment: &'static [Variable],
    /// Reads its settings: `Ok(None)` when it is not configured (and so not
    /// offered), an error naming the variable when a setting is wrong. The
    /// connector itself is built later, by the [`Constructor`], off the
    /// async runtime (connectors hold blocking HTTP clients).
    pub configure: fn(&Environment<'_>) -> Result<Option<Constructor>, SettingError>,
}

/// Builds a configured connector; requests users aim go through the guard.
pub type Constructor = Arc<dyn Fn(&Guard) -> Result<Arc<dyn Connector>, SetupError> + Send + Sync>;

/// What data a provider reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reports {
    pub transactions: bool,
    pub balances: bool,
    /// Investment positions (`GET /accounts/{id}/holdings`; other providers'
    /// accounts answer `HOLDINGS_NOT_SUPPORTED`).
    pub holdings: bool,
    /// Buys, sells, dividends, fees as such (not only as cash transactions).
    pub investment_activity: bool,
}

impl Reports {
    /// A bank's accounts: their transactions and balances.
    pub const ACCOUNTS: Reports = Reports {
        transactions: true,
        balances: true,
        holdings: false,
        investment_activity: false,
    };

    /// Accounts, and the positions of investment accounts.
    pub const ACCOUNTS_AND_HOLDINGS: Reports = Reports {
        holdings: true,
        ..Reports::ACCOUNTS
    };

    /// Accounts, and the positions and activity of investment accounts.
    pub const INVESTMENTS: Reports = Reports {
        investment_activity: true,
        ..Reports::ACCOUNTS_AND_HOLDINGS
    };
}

/// How a person connects: the fields they fill in (the page's inputs and
/// the command line's flags), and whether they go on to another site.
#[derive(Debug)]
pub struct Connect {
    pub fields: &'static [Field],
    /// A paragraph under the fields (where to find them, what happens next).
    pub note: Option<&'static str>,
    /// Whether connecting may send the person on to another site (their
    /// bank, the aggregator's pages) straight from the form's post.
    pub hands_off: bool,
    /// For providers that reach many banks: the person finds theirs by
    /// country and name (the `institution_id` field is asked for directly
    /// only when signing in again).
    pub picks_institution: bool,
    /// Whether the connector needs the address the person comes back to.
    pub return_address: ReturnAddress,
    /// After the person comes back: `tributary connect finish` takes the
    /// address they came back to (true), or the provider learns of the
    /// consent itself and `tributary sync` fetches (false).
    pub finish_on_return: bool,
    /// `tributary connect <id> --help`.
    pub command_help: &'static str,
    /// The connector's request from what the person gave; `Err`: what is
    /// missing or wrong, in words for them.
    pub request: fn(&Answers<'_>) -> Result<ConnectRequest, &'static str>,
}

impl Connect {
    /// The field a connection remembers and the forms fill in again (on a
    /// refusal, when signing in again); never a secret.
    pub fn remembered_field(&self) -> Option<&'static Field> {
        self.fields
            .iter()
            .find(|f| f.remembered_as.is_some() && !f.input.is_secret())
    }

    /// The remembered field when it names a login (typed in as a
    /// `username`, in HTML's autocomplete words): two connections
    /// remembering the same value are the same login, and would sync the
    /// same accounts twice. A bank chosen (an institution id) is not: one
    /// person may have two logins at one bank.
    pub fn login_field(&self) -> Option<&'static Field> {
        self.remembered_field().filter(|f| {
            matches!(
                f.input,
                Input::Text {
                    autocomplete: "username"
                }
            )
        })
    }
}

/// Whether a connector needs a return address (the page gives its own; the
/// command line takes `--redirect`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReturnAddress {
    Never,
    /// The command line's `--redirect` is required, or defaults to this.
    Always {
        default: Option<&'static str>,
    },
    /// Only for one way of connecting (signing in at the provider, where
    /// the other way is a person's own app tokens).
    Sometimes,
}

/// One thing a person gives to connect.
#[derive(Debug)]
pub struct Field {
    /// The form field's name and id, and the key [`Answers::get`] takes.
    pub name: &'static str,
    /// The command line's flag (`--institution`); `None`: the page only.
    pub flag: Option<&'static str>,
    pub label: &'static str,
    /// The command line's help for the flag.
    pub help: &'static str,
    pub input: Input,
    /// Must be given (the page marks it required; the command line too,
    /// unless it has a default).
    pub required: bool,
    /// The command line's default.
    pub default: Option<&'static str>,
    /// The connection setting that fills it in again when the person signs
    /// in again (never a secret).
    pub remembered_as: Option<&'static str>,
}

/// How a field is typed in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Input {
    /// Plain text, with the `autocomplete` hint browsers read.
    Text { autocomplete: &'static str },
    /// A secret: masked on the page; on the command line `-` reads it from
    /// standard input, keeping it out of the shell history.
    Secret { autocomplete: &'static str },
    /// A long secret pasted whole (a setup token).
    LongSecret,
}

impl Input {
    pub fn is_secret(self) -> bool {
        !matches!(self, Input::Text { .. })
    }

    /// Masked as it is typed.
    pub fn is_masked(self) -> bool {
        matches!(self, Input::Secret { .. })
    }

    /// Pasted into a box of several lines.
    pub fn is_long(self) -> bool {
        matches!(self, Input::LongSecret)
    }

    /// The page's `autocomplete` hint.
    pub fn autocomplete(self) -> &'static str {
        match self {
            Input::Text { autocomplete } | Input::Secret { autocomplete } => autocomplete,
            Input::LongSecret => "off",
        }
    }
}

/// What a person gave, by field name, with who they are and where they
/// come back to.
#[derive(Debug)]
pub struct Answers<'a> {
    /// Who is connecting: the surface's signed-in person, never a field
    /// (Pluggy Connect checks the item it made was made for them).
    pub user: UserId,
    /// Their e-mail address (the sandbox derives its accounts from it).
    pub email: &'a str,
    /// Where the bank or aggregator sends them back, when the surface has one.
    pub return_address: Option<&'a str>,
    values: Vec<(&'a str, &'a str)>,
}

impl<'a> Answers<'a> {
    pub fn new(user: UserId, email: &'a str, return_address: Option<&'a str>) -> Self {
        Self {
            user,
            email,
            return_address,
            values: Vec::new(),
        }
    }

    /// Adds a field's value.
    pub fn with(mut self, name: &'a str, value: &'a str) -> Self {
        self.values.push((name, value));
        self
    }

    /// A field's value, trimmed; empty when not given.
    pub fn get(&self, name: &str) -> &'a str {
        self.values
            .iter()
            .rev()
            .find(|(n, _)| *n == name)
            .map_or("", |(_, v)| v.trim())
    }
}

/// One line of `--help`'s environment list.
#[derive(Debug, Clone, Copy)]
pub struct Variable {
    /// The variable, or variables that go together (`A, B`).
    pub names: &'static str,
    pub help: &'static str,
}

/// The environment a connector reads its settings from.
pub struct Environment<'a> {
    lookup: &'a dyn Fn(&str) -> Option<String>,
}

impl fmt::Debug for Environment<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Environment")
    }
}

impl<'a> Environment<'a> {
    pub fn new(lookup: &'a dyn Fn(&str) -> Option<String>) -> Self {
        Self { lookup }
    }

    pub fn get(&self, name: &str) -> Option<String> {
        (self.lookup)(name)
    }

    /// Two settings that go together (an id and its secret): both, or
    /// neither.
    pub fn both_or_neither(
        &self,
        first: &'static str,
        second: &'static str,
    ) -> Result<Option<(String, String)>, SettingError> {
        match (self.get(first), self.get(second)) {
            (Some(a), Some(b)) => Ok(Some((a, b))),
            (None, None) => Ok(None),
            _ => Err(SettingError {
                name: first,
                value: None,
                reason: format!("set both {first} and {second}, or neither"),
            }),
        }
    }
}

/// A setting that cannot be used: which, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{name}: {reason}{}", value.as_ref().map(|v| format!(", got `{v}`")).unwrap_or_default())]
pub struct SettingError {
    pub name: &'static str,
    /// What was given, when it is no secret.
    pub value: Option<String>,
    pub reason: String,
}

/// A configured connector that could not be built (its HTTP client, its
/// key file).
#[derive(Debug, thiserror::Error)]
#[error("{provider}: {reason}")]
pub struct SetupError {
    pub provider: &'static str,
    pub reason: String,
}

impl SetupError {
    pub fn new(provider: &'static str, reason: impl fmt::Display) -> Self {
        Self {
            provider,
            reason: reason.to_string(),
        }
    }
}

/// The constructor of a connector whose requests no user aims (its API
/// root is the operator's), so it needs no guard.
pub fn constructor<C: Connector + 'static>(
    build: impl Fn() -> Result<C, SetupError> + Send + Sync + 'static,
) -> Option<Constructor> {
    Some(Arc::new(move |_: &Guard| {
        build().map(|c| Arc::new(c) as Arc<dyn Connector>)
    }))
}

/// The connect request of a provider whose person chooses and consents on
/// the provider's own pages: only where it sends them back.
pub fn return_only(answers: &Answers<'_>) -> Result<ConnectRequest, &'static str> {
    let redirect = answers
        .return_address
        .ok_or("Give the address the provider sends the person back to (--redirect).")?;
    Ok(ConnectRequest {
        settings: serde_json::json!({ "redirect": redirect }),
        secret: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_trimmed_and_empty_when_missing() {
        let answers = Answers::new(UserId::new(1), "a@example.com", None).with("token", "  t  ");
        assert_eq!(answers.get("token"), "t");
        assert_eq!(answers.get("other"), "");
    }

    #[test]
    fn settings_that_go_together_are_both_or_neither() {
        let lookup = |name: &str| (name == "A").then(|| "a".to_owned());
        let env = Environment::new(&lookup);
        let err = env.both_or_neither("A", "B").unwrap_err();
        assert_eq!(err.name, "A");
        assert!(err.to_string().contains("set both A and B"), "{err}");
        let none = |_: &str| None;
        assert_eq!(Environment::new(&none).both_or_neither("A", "B"), Ok(None));
    }
}
