//! A person lets a program read their accounts: an API key in the
//! dashboard, a SimpleFIN setup token in the dashboard or an app's portal.
//! Each is created with a name and, optionally, the accounts it may read
//! (checkboxes named `account`; none ticked: every account). One form
//! reader and one way to list the choices and describe a scope, so the
//! pages cannot drift apart.

use super::banks::kind_in_words;
use super::page::PageError;
use tributary_domain::ids::AccountId;
use tributary_domain::text::{MAX_NAME_CHARS, check_name};
use tributary_storage::StorageError;
use tributary_storage::read::AccountView;

/// One account a person may tick on the form.
pub(super) struct AccountChoice {
    pub id: AccountId,
    pub label: String,
}

/// The accounts as the form offers them: name, bank, kind and currency, so
/// two "Checking" accounts can be told apart.
pub(super) fn choices(accounts: &[AccountView]) -> Vec<AccountChoice> {
    accounts
        .iter()
        .map(|a| AccountChoice {
            id: a.id,
            label: format!(
                "{} ({}, {}, {})",
                a.name,
                a.institution_name,
                kind_in_words(a.kind),
                a.currency
            ),
        })
        .collect()
}

/// What a destination reads, in words: "every account" or the accounts'
/// names.
pub(super) fn in_words(scope: Option<&[AccountId]>, accounts: &[AccountView]) -> String {
    let Some(ids) = scope else {
        return "every account".to_owned();
    };
    ids.iter()
        .map(|id| {
            accounts
                .iter()
                .find(|a| a.id == *id)
                .map(|a| a.name.clone())
                .unwrap_or_else(|| format!("account {id}"))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// A submitted "new destination" form.
pub(super) struct ScopedForm {
    pub csrf: String,
    pub name: String,
    /// `None`: every account, now and later.
    pub scope: Option<Vec<AccountId>>,
}

impl ScopedForm {
    /// Reads the raw form body (the `account` field repeats, which a serde
    /// form cannot carry). The CSRF token is left for the caller to check.
    pub fn parse(body: &[u8]) -> Result<Self, PageError> {
        let mut name = String::new();
        let mut csrf = String::new();
        let mut scope = Vec::new();
        for (field, value) in url::form_urlencoded::parse(body) {
            match field.as_ref() {
                "name" => name = value.trim().to_owned(),
                "csrf" => csrf = value.into_owned(),
                "account" => scope.push(value.parse::<AccountId>().map_err(|_| {
                    PageError::bad_request(
                        "Accounts: one of the chosen accounts is not an account id.",
                    )
                })?),
                _ => {}
            }
        }
        scope.sort();
        scope.dedup();
        Ok(Self {
            csrf,
            name,
            scope: (!scope.is_empty()).then_some(scope),
        })
    }

    /// The name, when it is one a person can tell apart later and that
    /// shows as what it is (`tributary_domain::text::check_name`); `what`
    /// names the thing in the refusal ("key").
    pub fn checked_name(&self, what: &str) -> Result<&str, PageError> {
        check_name(&self.name, MAX_NAME_CHARS).map_err(|why| {
            PageError::bad_request(format!(
                "Name: {why}, so you can tell the {what} apart later."
            ))
        })
    }
}

/// Storage refuses a scope naming an account that is not the user's (or
/// no longer exists); the page says so about the field.
pub(super) fn refused(err: StorageError) -> PageError {
    match err {
        StorageError::InvalidReference(_) => PageError::bad_request(
            "Accounts: one of the chosen accounts is not yours, or no longer exists.",
        ),
        other => other.into(),
    }
}
