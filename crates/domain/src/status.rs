//! Why a connection is in its status, as a code with its parameters, so
//! that each surface (the JSON API, the pages, the CLI) renders it in its
//! own words instead of reading another surface's sentence.

use serde::{Deserialize, Serialize};

/// Adding accounts would pass a user's account limit; nothing was stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct AccountLimitExceeded {
    pub limit: i32,
    pub existing: i64,
    pub adding: usize,
}

impl AccountLimitExceeded {
    /// As the integrator or the operator reads it.
    pub fn describe(&self) -> String {
        format!(
            "this user may have {} accounts; they have {} and this connection would add {}",
            self.limit, self.existing, self.adding
        )
    }

    /// As the person whose accounts they are reads it.
    pub fn describe_to_user(&self) -> String {
        format!(
            "you may have {} accounts; you have {} and this connection would add {}",
            self.limit, self.existing, self.adding
        )
    }
}

/// A connection's status detail, stored as JSON tagged by its code.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "code")]
pub enum StatusDetail {
    #[serde(rename = "ACCOUNT_LIMIT_REACHED")]
    AccountLimitReached(AccountLimitExceeded),
}

impl StatusDetail {
    pub fn code(&self) -> &'static str {
        match self {
            StatusDetail::AccountLimitReached(_) => "ACCOUNT_LIMIT_REACHED",
        }
    }

    /// The connection's `status_reason` on the JSON API: the code, then the
    /// sentence (`ACCOUNT_LIMIT_REACHED: this user may have 3 accounts; …`).
    pub fn reason(&self) -> String {
        match self {
            StatusDetail::AccountLimitReached(limit) => {
                format!("{}: {}", self.code(), limit.describe())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_detail_is_stored_as_json_tagged_by_its_code() {
        let detail = StatusDetail::AccountLimitReached(AccountLimitExceeded {
            limit: 3,
            existing: 1,
            adding: 4,
        });
        let json = serde_json::to_string(&detail).unwrap();
        assert_eq!(
            json,
            r#"{"code":"ACCOUNT_LIMIT_REACHED","limit":3,"existing":1,"adding":4}"#
        );
        assert_eq!(serde_json::from_str::<StatusDetail>(&json).unwrap(), detail);
        assert_eq!(
            detail.reason(),
            "ACCOUNT_LIMIT_REACHED: this user may have 3 accounts; they have 1 and this connection would add 4"
        );
    }
}
