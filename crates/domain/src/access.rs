//! Who is reading: the user behind a credential and, for a restricted
//! credential, the only accounts it may see.

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Viewer {
    pub user_id: i64,
    /// `None`: every account of the user. `Some`: only these account ids;
    /// any other account is invisible (absent from lists, 404 by id).
    pub account_scope: Option<Vec<i64>>,
}

impl Viewer {
    pub fn whole_user(user_id: i64) -> Self {
        Self {
            user_id,
            account_scope: None,
        }
    }

    pub fn may_see_account(&self, account_id: i64) -> bool {
        self.account_scope
            .as_ref()
            .is_none_or(|scope| scope.contains(&account_id))
    }
}
