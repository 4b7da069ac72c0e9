//! SimpleFIN destinations in the portal and the dashboard: a person lets a
//! budgeting app that speaks SimpleFIN read their data. Creating one shows
//! its setup token once; the list says which are claimed, when each was
//! last used, and revokes them after a page that asks first.

use super::account_scope::{self, AccountChoice, ScopedForm};
use super::confirm::{Ask, ask_first};
use super::header::Header;
use super::page::{PageError, render, see_other, when};
use super::session::{CsrfForm, FlowVisitor, with_conn};
use super::visitor::Visitor;
use crate::state::AppState;
use actix_web::{HttpRequest, HttpResponse, web};
use askama::Template;
use tributary_auth::simplefin::{self as access, SimpleFinAuthError};
use tributary_domain::access::Viewer;
use tributary_domain::ids::{SimpleFinDestinationId, UserId};
use tributary_storage::read::{self, AccountView};
use tributary_storage::simplefin::{self as store, DestinationRecord};

/// One destination as the portal lists it.
pub(super) struct DestinationLine {
    pub id: SimpleFinDestinationId,
    pub name: String,
    /// Which accounts it reads, in words.
    pub scope: String,
    /// "waiting to be claimed", "in use", "expired unclaimed" or "revoked".
    pub state: &'static str,
    pub created: String,
    pub last_used: String,
    pub revocable: bool,
}

impl DestinationLine {
    fn new(
        record: DestinationRecord,
        scope: Option<Vec<tributary_domain::ids::AccountId>>,
        accounts: &[AccountView],
        now: chrono::NaiveDateTime,
    ) -> Self {
        let state = if record.revoked_at.is_some() {
            "revoked"
        } else if record.claimed_at.is_some() {
            "in use"
        } else if record.claim_expires_at <= now {
            "expired unclaimed"
        } else {
            "waiting to be claimed"
        };
        Self {
            id: record.id,
            name: record.name,
            scope: account_scope::in_words(scope.as_deref(), accounts),
            state,
            created: when(Some(record.created_at), "never"),
            last_used: when(record.last_used_at, "never"),
            revocable: record.revoked_at.is_none(),
        }
    }
}

/// What the SimpleFIN part of a page shows: the destinations, and the
/// accounts a new one may be limited to.
pub(super) struct Destinations {
    /// Oldest first.
    pub lines: Vec<DestinationLine>,
    pub accounts: Vec<AccountChoice>,
}

/// The user's destinations and accounts.
pub(super) async fn destinations(
    state: &web::Data<AppState>,
    user_id: UserId,
) -> Result<Destinations, PageError> {
    let now = state.clock.now().naive_utc();
    with_conn(state, move |conn| {
        let accounts = read::list_accounts(conn, &Viewer::whole_user(user_id))?;
        let lines = store::list_for_user(conn, user_id)?
            .into_iter()
            .map(|(record, scope)| DestinationLine::new(record, scope, &accounts, now))
            .collect();
        Ok(Destinations {
            lines,
            accounts: account_scope::choices(&accounts),
        })
    })
    .await
}

/// Who manages SimpleFIN destinations on the pages: a person in an app's
/// portal, or in their own dashboard.
pub(super) trait DestinationHolder: Visitor {
    /// Where the list of destinations is, to come back to.
    const LIST: &'static str;

    /// Whether this visitor may manage destinations where they are.
    fn may_hold_destinations(&self) -> bool {
        true
    }
}

/// In the portal only, not in the authorization flow.
impl DestinationHolder for FlowVisitor {
    const LIST: &'static str = "/portal#simplefin";

    fn may_hold_destinations(&self) -> bool {
        self.session.is_portal()
    }
}

/// The visitor behind a page, when they may manage destinations.
async fn holder<V: DestinationHolder>(
    req: &HttpRequest,
    state: &web::Data<AppState>,
) -> Result<V, PageError> {
    let visitor = V::load(req, state).await?;
    if !visitor.may_hold_destinations() {
        return Err(PageError::session_ended());
    }
    Ok(visitor)
}

/// The visitor behind a form, when they may manage destinations, with the
/// form's CSRF token checked.
async fn holder_of_form<V: DestinationHolder>(
    req: &HttpRequest,
    state: &web::Data<AppState>,
    csrf: &str,
) -> Result<V, PageError> {
    let visitor: V = holder(req, state).await?;
    visitor.check_csrf(csrf)?;
    Ok(visitor)
}

#[derive(Template)]
#[template(path = "simplefin_token.html")]
struct TokenPage<'a> {
    title: &'a str,
    header: Header,
    list: &'a str,
    name: &'a str,
    setup_token: &'a str,
    expires: &'a str,
}

/// `name`, `csrf`, and `account` once per account the app may read (none:
/// every account).
pub(super) async fn create<V: DestinationHolder>(
    req: HttpRequest,
    state: web::Data<AppState>,
    body: web::Bytes,
) -> Result<HttpResponse, PageError> {
    let form = ScopedForm::parse(&body)?;
    let visitor: V = holder_of_form(&req, &state, &form.csrf).await?;
    let user_id = visitor.user().id;
    let name = form.checked_name("app")?.to_owned();
    let claim_root = state.absolute_url(&req, &format!("{}/claim", crate::simplefin::ROOT));
    let now = state.clock.now();
    let (issued_name, setup_token, expires) = with_conn(&state, move |conn| {
        let issued = access::create(
            conn,
            user_id,
            &name,
            form.scope.as_deref(),
            &claim_root,
            now,
        )
        .map_err(|err| match err {
            SimpleFinAuthError::Storage(err) => account_scope::refused(err),
            other => PageError::internal(other),
        })?;
        Ok((
            issued.record.name,
            issued.setup_token,
            when(Some(issued.record.claim_expires_at), "never"),
        ))
    })
    .await?;
    render(&TokenPage {
        title: "Your SimpleFIN setup token",
        header: visitor.header(),
        list: V::LIST,
        name: &issued_name,
        setup_token: &setup_token,
        expires: &expires,
    })
}

/// `GET …/{id}/revoke`: asks first. Found among the visitor's own live
/// destinations: another person's, a revoked one and a made-up id are all
/// absent.
pub(super) async fn revoke_form<V: DestinationHolder>(
    req: HttpRequest,
    state: web::Data<AppState>,
    path: web::Path<String>,
) -> Result<HttpResponse, PageError> {
    let visitor: V = holder(&req, &state).await?;
    let id: SimpleFinDestinationId = path.parse().map_err(|_| PageError::not_found())?;
    let user_id = visitor.user().id;
    let name = with_conn(&state, move |conn| {
        store::list_for_user(conn, user_id)?
            .into_iter()
            .find(|(record, _)| record.id == id && record.revoked_at.is_none())
            .map(|(record, _)| record.name)
            .ok_or_else(PageError::not_found)
    })
    .await?;
    let ask = Ask {
        title: "Revoke a budgeting app",
        question: format!("Revoke {name}?"),
        consequence: "It can no longer read your accounts over SimpleFIN, and its setup token cannot be claimed any more. To use it again, create a new setup token.",
        button: "Revoke access",
        button_id: "revoke",
        danger: true,
        keep: "Keep it",
    };
    ask_first(&req, visitor.header(), &visitor.csrf(), &ask, V::LIST)
}

/// `POST …/{id}/revoke`.
pub(super) async fn revoke<V: DestinationHolder>(
    req: HttpRequest,
    state: web::Data<AppState>,
    path: web::Path<String>,
    form: web::Form<CsrfForm>,
) -> Result<HttpResponse, PageError> {
    let user_id = holder_of_form::<V>(&req, &state, &form.csrf)
        .await?
        .user()
        .id;
    let id: SimpleFinDestinationId = path.parse().map_err(|_| PageError::not_found())?;
    let now = state.clock.now().naive_utc();
    with_conn(&state, move |conn| {
        // Only the user's own: another user's id is as absent as a made-up one.
        if store::owner_of(conn, id)? != Some(user_id) {
            return Err(PageError::not_found());
        }
        store::revoke(conn, id, now)?;
        Ok(())
    })
    .await?;
    Ok(see_other(V::LIST))
}
