//! Dashboard sessions in the browser: the cookie, the signed-in user, the
//! CSRF check, signing in with a link and signing out.

use super::super::header::Header;
use super::super::page::{PageError, see_other};
use super::super::session::{CsrfForm, token_cookie, with_conn};
use super::super::visitor::{Detour, Visitor};
use crate::state::AppState;
use actix_web::cookie::Cookie;
use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
use tributary_auth::dashboard as access;
use tributary_auth::web_session::{csrf_matches, csrf_token};
use tributary_domain::ids::ConnectionId;
use tributary_storage::dashboard::DashboardSessionRecord;
use tributary_storage::users::{self, UserRecord};

/// Not the browser flow's cookie: a person may be signed in to both.
pub const DASHBOARD_COOKIE: &str = "tributary_dashboard";

/// For the whole site, until the session's absolute expiry.
fn cookie(state: &AppState, token: String) -> Cookie<'static> {
    token_cookie(
        state,
        DASHBOARD_COOKIE,
        "/",
        access::SESSION_LIFETIME,
        token,
    )
}

/// Where a person goes after signing in, when a page sent them to sign in
/// first (an assistant's consent page): for 15 minutes, and only there.
const RETURN_COOKIE: &str = "tributary_dashboard_return";

/// The cookie that brings the person back to `path` after signing in (an
/// empty `path`: the cookie's removal). The path is kept base64url-encoded:
/// a query string may hold what a cookie value may not.
pub(super) fn return_cookie(state: &AppState, path: &str) -> Cookie<'static> {
    use base64::Engine as _;
    let mut cookie = token_cookie(
        state,
        RETURN_COOKIE,
        "/",
        chrono::Duration::minutes(15),
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(path),
    );
    if path.is_empty() {
        cookie.make_removal();
    }
    cookie
}

/// Where to go after signing in: back to the consent page a return cookie
/// names, else the overview. Nothing else is taken from the cookie, so it
/// cannot send anyone elsewhere.
pub(super) fn after_sign_in(req: &HttpRequest) -> String {
    use base64::Engine as _;
    req.cookie(RETURN_COOKIE)
        .and_then(|c| {
            base64::engine::general_purpose::URL_SAFE_NO_PAD
                .decode(c.value())
                .ok()
        })
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .filter(|path| {
            path.strip_prefix(crate::mcp::oauth::AUTHORIZE_PATH)
                .is_some_and(|rest| rest.starts_with('?'))
        })
        .unwrap_or_else(|| "/".to_owned())
}

/// A signed-in request: the user, and the token their forms' CSRF token
/// derives from.
#[derive(Debug)]
pub(in crate::web) struct SignedIn {
    token: String,
    session: DashboardSessionRecord,
    pub user: UserRecord,
}

impl SignedIn {
    pub fn csrf(&self) -> String {
        csrf_token(&self.token)
    }

    /// Refuses a form whose CSRF token is not this session's.
    pub fn check_csrf(&self, presented: &str) -> Result<(), PageError> {
        if csrf_matches(&self.token, presented) {
            Ok(())
        } else {
            Err(PageError::forged())
        }
    }
}

/// The signed-in user behind the request's cookie, if any.
pub(super) async fn current(
    req: &HttpRequest,
    state: &web::Data<AppState>,
) -> Result<Option<SignedIn>, PageError> {
    let Some(token) = req.cookie(DASHBOARD_COOKIE).map(|c| c.value().to_owned()) else {
        return Ok(None);
    };
    let now = state.clock.now().naive_utc();
    with_conn(state, move |conn| {
        let Some(session) = access::find_session(conn, &token, now)? else {
            return Ok(None);
        };
        let user = users::get_user(conn, session.user_id)?;
        Ok(Some(SignedIn {
            token,
            session,
            user,
        }))
    })
    .await
}

/// The signed-in user, or the "signed out" page.
pub(super) async fn required(
    req: &HttpRequest,
    state: &web::Data<AppState>,
) -> Result<SignedIn, PageError> {
    current(req, state).await?.ok_or_else(signed_out)
}

/// A signed-in form: the user, with the form's CSRF token checked.
pub(super) async fn form(
    req: &HttpRequest,
    state: &web::Data<AppState>,
    csrf: &str,
) -> Result<SignedIn, PageError> {
    let signed_in = required(req, state).await?;
    signed_in.check_csrf(csrf)?;
    Ok(signed_in)
}

fn signed_out() -> PageError {
    PageError::new(
        StatusCode::UNAUTHORIZED,
        "You are signed out",
        "Your dashboard session has ended. Open the dashboard's address to sign in again.",
    )
}

/// `GET /sign-in/link/{token}`: a valid link opens a session and leaves
/// the address bar at once (redirect to the overview).
pub(super) async fn open_link(
    req: HttpRequest,
    state: web::Data<AppState>,
    path: web::Path<String>,
) -> Result<HttpResponse, PageError> {
    let token = path.into_inner();
    let now = state.clock.now().naive_utc();
    let session = with_conn(&state, move |conn| {
        let Some(user) = access::use_login_link(conn, &token, now)? else {
            return Ok(None);
        };
        Ok(Some(access::start_session(conn, user, now)?))
    })
    .await?;
    let Some(session) = session else {
        return Err(PageError::new(
            StatusCode::NOT_FOUND,
            "This sign-in link does not work",
            "A sign-in link works once and for 15 minutes. Ask for a new one: whoever runs this server types `tributary users login-link YOUR-EMAIL`.",
        ));
    };
    let mut response = see_other(&after_sign_in(&req));
    start(&state, &mut response, session)?;
    response
        .add_cookie(&return_cookie(&state, ""))
        .map_err(PageError::internal)?;
    Ok(response)
}

/// Gives the browser the cookie of a session just opened.
pub(super) fn start(
    state: &AppState,
    response: &mut HttpResponse,
    session_token: String,
) -> Result<(), PageError> {
    response
        .add_cookie(&cookie(state, session_token))
        .map_err(PageError::internal)
}

/// `POST /sign-out`: the session ends on the server and in the browser.
pub(super) async fn sign_out(
    req: HttpRequest,
    state: web::Data<AppState>,
    form: web::Form<CsrfForm>,
) -> Result<HttpResponse, PageError> {
    let signed_in = self::form(&req, &state, &form.csrf).await?;
    let token = signed_in.token;
    with_conn(&state, move |conn| Ok(access::end_session(conn, &token)?)).await?;
    let mut removal = cookie(&state, String::new());
    removal.make_removal();
    let mut response = see_other("/");
    response.add_cookie(&removal).map_err(PageError::internal)?;
    Ok(response)
}

/// The dashboard uses the browser flow's connection pages (add a bank,
/// upload a statement, re-authenticate, remove) as its own: they speak for
/// no app, lead back to the overview, and need no checkout.
impl Visitor for SignedIn {
    async fn load(req: &HttpRequest, state: &web::Data<AppState>) -> Result<Self, PageError> {
        required(req, state).await
    }

    fn user(&self) -> &UserRecord {
        &self.user
    }

    fn csrf(&self) -> String {
        SignedIn::csrf(self)
    }

    fn check_csrf(&self, presented: &str) -> Result<(), PageError> {
        SignedIn::check_csrf(self, presented)
    }

    fn header(&self) -> Header {
        Header::Dashboard {
            email: self.user.email.clone(),
            csrf: SignedIn::csrf(self),
        }
    }

    fn detour(&self) -> Option<Detour> {
        None
    }

    fn limit_holder(&self) -> String {
        "this server".to_owned()
    }

    fn continue_to(&self) -> &'static str {
        "/"
    }

    fn continue_label(&self) -> &'static str {
        "Back to your money"
    }

    fn home(&self) -> &'static str {
        "/"
    }

    fn awaiting_consent(&self) -> Option<ConnectionId> {
        self.session.pending_connection_id
    }

    async fn remember_consent(
        &self,
        state: &web::Data<AppState>,
        connection: Option<ConnectionId>,
    ) -> Result<(), PageError> {
        let session_id = self.session.id;
        with_conn(state, move |conn| {
            Ok(tributary_storage::dashboard::set_pending_connection(
                conn, session_id, connection,
            )?)
        })
        .await
    }
}
