//! Who is reading: the user behind a credential and, for a restricted
//! credential, the only accounts it may see.

use crate::ids::{AccountId, UserId};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Viewer {
    pub user_id: UserId,
    /// `None`: every account of the user. `Some`: only these account ids;
    /// any other account is invisible (absent from lists, 404 by id).
    pub account_scope: Option<Vec<AccountId>>,
}

impl Viewer {
    pub fn whole_user(user_id: UserId) -> Self {
        Self {
            user_id,
            account_scope: None,
        }
    }

    pub fn may_see_account(&self, account_id: AccountId) -> bool {
        self.account_scope
            .as_ref()
            .is_none_or(|scope| scope.contains(&account_id))
    }
}
