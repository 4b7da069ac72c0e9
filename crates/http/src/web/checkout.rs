//! Checkout for apps whose users pay: start a checkout at the processor,
//! send the browser there, and on its return ask the processor whether it
//! was paid before recording the subscription on the user. Also the test
//! processor's own card page.

use super::csp::Policy;
use super::page::{PageError, render_with, see_other};
use super::session::{self, CsrfForm, Session, with_conn};
use super::session::{NextStep, next_step};
use crate::state::AppState;
use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
use askama::Template;
use serde::Deserialize;
use std::sync::Arc;
use tributary_domain::model::CheckoutStatus;
use tributary_providers::payments::{
    self, CheckoutRequest, CheckoutState, PaymentError, PaymentProcessor, TEST_CARD_DECLINED,
    TEST_CARD_PAID, TestProcessor,
};
use tributary_storage::checkouts;

#[derive(Template)]
#[template(path = "checkout.html")]
struct CheckoutPage<'a> {
    title: &'a str,
    app_name: &'a str,
    csrf: &'a str,
    error: Option<&'a str>,
}

#[derive(Template)]
#[template(path = "test_checkout.html")]
struct TestCheckoutPage<'a> {
    title: &'a str,
    app_name: &'a str,
    csrf: &'a str,
    checkout_id: &'a str,
    paid_card: &'a str,
    declined_card: &'a str,
    error: Option<&'a str>,
}

#[derive(Deserialize)]
pub(super) struct CardForm {
    csrf: String,
    card_number: String,
}

fn processor(state: &AppState) -> Result<Arc<dyn PaymentProcessor>, PageError> {
    state.payments.clone().ok_or_else(|| {
        PageError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "Payments are not available",
            "This app asks its users to pay, and this service takes no payments yet. Tell the app's makers.",
        )
    })
}

fn checkout_page(
    session: &Session,
    error: Option<&str>,
    status: StatusCode,
) -> Result<HttpResponse, PageError> {
    let page = render_with(
        status,
        &CheckoutPage {
            title: "Subscribe",
            app_name: &session.app.name,
            csrf: &session.csrf(),
            error,
        },
    )?;
    // Subscribing redirects to the payment processor's checkout page.
    Ok(Policy::strict().form_action_to_any_https_site().apply(page))
}

fn payment_trouble(err: &PaymentError) -> String {
    log::warn!("checkout failed: {err}");
    match err {
        PaymentError::Rejected(why) => {
            format!("The payment processor refused the checkout: {why}.")
        }
        _ => "The payment processor cannot be reached right now. Try again in a moment.".to_owned(),
    }
}

pub(super) async fn page(
    req: HttpRequest,
    state: web::Data<AppState>,
) -> Result<HttpResponse, PageError> {
    let session = session::load(&req, &state).await?;
    session.user()?;
    if next_step(&session) != NextStep::Checkout {
        return Ok(see_other(next_step(&session).path()));
    }
    // Said before the user is asked to subscribe, not after the click.
    processor(&state)?;
    checkout_page(&session, None, StatusCode::OK)
}

pub(super) async fn start(
    req: HttpRequest,
    state: web::Data<AppState>,
    form: web::Form<CsrfForm>,
) -> Result<HttpResponse, PageError> {
    let session = session::load(&req, &state).await?;
    session.check_csrf(&form.csrf)?;
    let user = session.user()?.clone();
    let processor = processor(&state)?;
    let request = CheckoutRequest {
        user_id: user.id,
        email: user.email.clone(),
        return_url: state.absolute_url(&req, "/connect/checkout/return"),
        cancel_url: state.absolute_url(&req, "/connect/checkout"),
    };
    let now = state.clock.now().naive_utc();
    let db = state.db.clone();
    // The processor is an outside service: waited on off the database's threads.
    let started = state
        .provider_calls
        .run(user.id, move || {
            payments::start_checkout(&db, &*processor, &request, now)
        })
        .await?;
    match started {
        Ok(started) => Ok(see_other(&started.url)),
        Err(err) => checkout_page(
            &session,
            Some(&payment_trouble(&err)),
            StatusCode::BAD_GATEWAY,
        ),
    }
}

/// The browser is back from the processor: the processor, not the browser,
/// says whether the user's latest checkout was paid.
pub(super) async fn come_back(
    req: HttpRequest,
    state: web::Data<AppState>,
) -> Result<HttpResponse, PageError> {
    let mut session = session::load(&req, &state).await?;
    let user_id = session.user()?.id;
    let processor = processor(&state)?;
    let now = state.clock.now().naive_utc();
    let db = state.db.clone();
    let outcome = state
        .provider_calls
        .run(user_id, move || {
            payments::confirm_latest_checkout(&db, &*processor, user_id, now)
        })
        .await?;
    match outcome {
        Ok(CheckoutState::Paid { .. }) => {
            if let Some(user) = session.user.as_mut() {
                user.subscribed_at = Some(now);
            }
            Ok(see_other(next_step(&session).path()))
        }
        Ok(CheckoutState::Declined) => checkout_page(
            &session,
            Some("The payment was declined. Try again with another card."),
            StatusCode::PAYMENT_REQUIRED,
        ),
        Ok(CheckoutState::Open) => checkout_page(
            &session,
            Some("The payment was not completed. Subscribe to continue."),
            StatusCode::PAYMENT_REQUIRED,
        ),
        Err(err) => checkout_page(
            &session,
            Some(&payment_trouble(&err)),
            StatusCode::BAD_GATEWAY,
        ),
    }
}

/// The test processor's card page: only when the test processor is the one
/// configured, and only for the session's own open checkout.
async fn test_checkout(
    req: &HttpRequest,
    state: &web::Data<AppState>,
    checkout_id: String,
) -> Result<(Session, TestProcessor), PageError> {
    let is_test = state
        .payments
        .as_ref()
        .is_some_and(|p| p.kind() == TestProcessor::KIND);
    if !is_test {
        return Err(PageError::not_found());
    }
    let session = session::load(req, state).await?;
    let user_id = session.user()?.id;
    let lookup = checkout_id.clone();
    let owned = with_conn(state, move |conn| {
        Ok(
            checkouts::find_checkout(conn, TestProcessor::KIND, &lookup)?
                .is_some_and(|c| c.user_id == user_id && c.status != CheckoutStatus::Paid),
        )
    })
    .await?;
    if !owned {
        return Err(PageError::not_found());
    }
    Ok((session, TestProcessor::new(state.db.clone())))
}

fn test_page(
    session: &Session,
    checkout_id: &str,
    error: Option<&str>,
    status: StatusCode,
) -> Result<HttpResponse, PageError> {
    render_with(
        status,
        &TestCheckoutPage {
            title: "Test checkout",
            app_name: &session.app.name,
            csrf: &session.csrf(),
            checkout_id,
            paid_card: TEST_CARD_PAID,
            declined_card: TEST_CARD_DECLINED,
            error,
        },
    )
}

pub(super) async fn test_page_get(
    req: HttpRequest,
    state: web::Data<AppState>,
    path: web::Path<String>,
) -> Result<HttpResponse, PageError> {
    let checkout_id = path.into_inner();
    let (session, _) = test_checkout(&req, &state, checkout_id.clone()).await?;
    test_page(&session, &checkout_id, None, StatusCode::OK)
}

pub(super) async fn test_pay(
    req: HttpRequest,
    state: web::Data<AppState>,
    path: web::Path<String>,
    form: web::Form<CardForm>,
) -> Result<HttpResponse, PageError> {
    let checkout_id = path.into_inner();
    let (session, processor) = test_checkout(&req, &state, checkout_id.clone()).await?;
    session.check_csrf(&form.csrf)?;
    let now = state.clock.now().naive_utc();
    let (id, card) = (checkout_id.clone(), form.card_number.clone());
    let paid = web::block(move || processor.pay(&id, &card, now))
        .await?
        .map_err(PageError::internal)?;
    if paid {
        Ok(see_other("/connect/checkout/return"))
    } else {
        test_page(
            &session,
            &checkout_id,
            Some("Your card was declined."),
            StatusCode::PAYMENT_REQUIRED,
        )
    }
}
