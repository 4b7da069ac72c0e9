//! Budgeting apps at `/budgeting-apps`: the person's SimpleFIN
//! destinations, listed, created (the setup token shown once) and revoked
//! with the portal's handlers.

use super::session::{self, SignedIn};
use crate::state::AppState;
use crate::web::page::{PageError, render};
use crate::web::simplefin::{DestinationHolder, Destinations, destinations};
use actix_web::{HttpRequest, HttpResponse, web};
use askama::Template;

/// Where the page is, and where its forms post.
pub(super) const PATH: &str = "/budgeting-apps";

impl DestinationHolder for SignedIn {
    const LIST: &'static str = PATH;
}

#[derive(Template)]
#[template(path = "dashboard_budgeting_apps.html")]
struct BudgetingAppsPage<'a> {
    title: &'a str,
    email: &'a str,
    csrf: &'a str,
    destinations: Destinations,
    simplefin_form: &'a str,
}

pub(super) async fn page(
    req: HttpRequest,
    state: web::Data<AppState>,
) -> Result<HttpResponse, PageError> {
    let signed_in = session::required(&req, &state).await?;
    let destinations = destinations(&state, signed_in.user.id).await?;
    render(&BudgetingAppsPage {
        title: "Budgeting apps",
        email: &signed_in.user.email,
        csrf: &signed_in.csrf(),
        destinations,
        simplefin_form: PATH,
    })
}
