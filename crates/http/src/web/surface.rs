//! Which browser surface a page belongs to, and what its error pages show
//! so that nobody is left at a dead end: that surface's navigation and a
//! way back.
//!
//! A [`PageError`] becomes a page where no request is known
//! (`ResponseError::error_response`), so it is first rendered with the
//! brand only. This middleware sees the answer together with its request,
//! and renders the same message again inside its surface. The surface is
//! decided here, in one place, from the server's interface and the path:
//! the connection pages under `/connect` serve both servers, so a handler
//! could not say by itself whose they are.

use super::header::Header;
use super::page::PageError;
use super::{dashboard, developers, session};
use crate::interface::Interface;
use crate::state::AppState;
use actix_web::body::{BoxBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::{Method, header};
use actix_web::middleware::Next;
use actix_web::{HttpRequest, ResponseError as _, web};

/// The browser surfaces, each with its own navigation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Surface {
    /// personal-api's pages: the Personal dashboard, the connection pages
    /// it uses and an assistant's consent page.
    Dashboard,
    /// platform-api's `/developers`.
    Developers,
    /// platform-api's pages for an app's users: the authorization flow,
    /// the connection pages and the portal.
    Platform,
}

impl Surface {
    fn of(interface: Interface, path: &str) -> Self {
        let developers = path
            .strip_prefix(developers::ROOT)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'));
        match interface {
            Interface::Personal => Surface::Dashboard,
            Interface::Platform if developers => Surface::Developers,
            Interface::Platform => Surface::Platform,
        }
    }

    /// Where the surface starts, for a visitor the page does not know.
    fn home(self) -> (&'static str, &'static str) {
        match self {
            Surface::Dashboard => ("Dashboard", "/"),
            Surface::Developers => ("Developer dashboard", developers::ROOT),
            Surface::Platform => ("Your bank connections", "/portal"),
        }
    }

    /// The header for the person behind the request, and where their
    /// surface starts; without a session, the home link alone.
    async fn header(
        self,
        req: &HttpRequest,
        state: &web::Data<AppState>,
    ) -> Result<Option<(Header, &'static str)>, PageError> {
        Ok(match self {
            Surface::Dashboard => dashboard::navigation(req, state)
                .await?
                .map(|header| (header, "/")),
            Surface::Developers => developers::navigation(req, state)
                .await?
                .map(|header| (header, developers::ROOT)),
            Surface::Platform => {
                // An error may be the refusal of a missing or ended
                // session itself: then there is no header to show.
                let session = session::load(req, state).await.ok();
                session.map(|session| (session.header(), session.home()))
            }
        })
    }
}

/// The middleware: a page error's body rendered again with its surface's
/// header and a way back; every other answer as it is.
pub(crate) async fn navigate(
    interface: Interface,
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, actix_web::Error> {
    let surface = Surface::of(interface, req.path());
    let response = next.call(req).await?.map_into_boxed_body();
    let Some(error) = response
        .response()
        .error()
        .and_then(|error| error.as_error::<PageError>())
    else {
        return Ok(response);
    };
    let request = response.request();
    // A failure on our side may be the database itself: the page then
    // does not wait on it again, and shows the home link alone.
    let known = match request.app_data::<web::Data<AppState>>() {
        Some(state) if !error.status_code().is_server_error() => {
            surface.header(request, state).await.ok().flatten()
        }
        _ => None,
    };
    let (header, home) = known.unwrap_or_else(|| {
        let (label, href) = surface.home();
        (Header::Home { label, href }, href)
    });
    let back = way_back(request, home);
    let body = error.page_html(header, &back);
    Ok(response.map_body(|_, _| BoxBody::new(body)))
}

/// Where "Go back" leads: the page the person came from when it is one of
/// this server's (its path and query only, so the link cannot lead
/// elsewhere), else `home`. Pages send the address they are at to this
/// server alone (`Referrer-Policy: same-origin`, `resource.rs`). Going
/// back to the very page that failed would only fail again.
fn way_back(req: &HttpRequest, home: &str) -> String {
    let Some(state) = req.app_data::<web::Data<AppState>>() else {
        return home.to_owned();
    };
    let came_from = req
        .headers()
        .get(header::REFERER)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| url::Url::parse(value).ok());
    let here = url::Url::parse(&state.base_url(req)).ok();
    let (Some(came_from), Some(here)) = (came_from, here) else {
        return home.to_owned();
    };
    if came_from.origin() != here.origin() {
        return home.to_owned();
    }
    let back = match came_from.query() {
        Some(query) => format!("{}?{query}", came_from.path()),
        None => came_from.path().to_owned(),
    };
    let this_page = req.uri().path_and_query().map(|p| p.as_str());
    if req.method() == Method::GET && this_page == Some(back.as_str()) {
        return home.to_owned();
    }
    back
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_surface_is_the_interface_s_and_on_platform_api_the_path_s() {
        use Interface::{Personal, Platform};
        assert_eq!(Surface::of(Personal, "/connect/banks"), Surface::Dashboard);
        assert_eq!(Surface::of(Personal, "/keys/1/revoke"), Surface::Dashboard);
        assert_eq!(Surface::of(Platform, "/connect/banks"), Surface::Platform);
        assert_eq!(Surface::of(Platform, "/portal"), Surface::Platform);
        assert_eq!(Surface::of(Platform, "/developers"), Surface::Developers);
        assert_eq!(
            Surface::of(Platform, "/developers/apps/1"),
            Surface::Developers
        );
        assert_eq!(Surface::of(Platform, "/developersx"), Surface::Platform);
    }
}
