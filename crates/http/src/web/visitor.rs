//! Who is using the connection pages (the bank list, a bank's form, the
//! statement upload, a sync's progress, re-authenticating, removing): a
//! person in an app's authorization flow or portal on `platform-api`, or a
//! person in their own dashboard on `personal-api`. The pages and the rules
//! are the same; what differs is whom the header names, where "continue"
//! leads, and where a bank's return is remembered.

use super::header::Header;
use super::page::PageError;
use crate::state::AppState;
use actix_web::{HttpRequest, web};
use tributary_domain::ids::ConnectionId;
use tributary_storage::users::UserRecord;

/// A page to see first, and the refusal of a form posted before it was.
#[derive(Debug)]
pub(super) struct Detour {
    pub path: &'static str,
    pub refusal: PageError,
}

/// A signed-in person on the connection pages.
pub(super) trait Visitor: Sized + 'static {
    /// The visitor behind the request's cookie, signed in, or the page
    /// saying their session ended.
    async fn load(req: &HttpRequest, state: &web::Data<AppState>) -> Result<Self, PageError>;

    fn user(&self) -> &UserRecord;

    fn csrf(&self) -> String;

    /// Refuses a form whose CSRF token is not this visitor's.
    fn check_csrf(&self, presented: &str) -> Result<(), PageError>;

    fn header(&self) -> Header;

    /// A page the person must see before they may connect a bank (the
    /// app's checkout), if any.
    fn detour(&self) -> Option<Detour>;

    /// Who sets the account limit, for "as many accounts as … allows".
    fn limit_holder(&self) -> String;

    /// Where "continue" leads once banks are connected.
    fn continue_to(&self) -> &'static str;

    /// What the button to [`Visitor::continue_to`] says: an app's flow
    /// goes on to the consent; the dashboard goes back to its overview.
    fn continue_label(&self) -> &'static str {
        "Continue"
    }

    /// Where the person returns after removing or disconnecting.
    fn home(&self) -> &'static str;

    /// The connection whose bank consent the person is giving
    /// (GoCardless), remembered until they come back from their bank.
    fn awaiting_consent(&self) -> Option<ConnectionId>;

    async fn remember_consent(
        &self,
        state: &web::Data<AppState>,
        connection: Option<ConnectionId>,
    ) -> Result<(), PageError>;
}

/// A visitor who may connect a bank now.
pub(super) async fn connecting<V: Visitor>(
    req: &HttpRequest,
    state: &web::Data<AppState>,
) -> Result<V, PageError> {
    let visitor = V::load(req, state).await?;
    match visitor.detour() {
        Some(detour) => Err(detour.refusal),
        None => Ok(visitor),
    }
}
