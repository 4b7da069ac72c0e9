//! The metrics' HTTP side: the middleware that records each request, and
//! `GET /metrics` with or without a token.

use super::{CONTENT_TYPE, DatabaseView};
use crate::error::ApiError;
use crate::state::AppState;
use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header;
use actix_web::middleware::Next;
use actix_web::{HttpRequest, HttpResponse, web};
use std::time::Instant;
use tributary_auth::secret;

/// Records every request's route, status and time. The outermost
/// middleware, so that it sees the status the client gets.
pub async fn record(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    let started = Instant::now();
    let state = req.app_data::<web::Data<AppState>>().cloned();
    let method = req.method().clone();
    let answered = next.call(req).await;
    if let Some(state) = state {
        let (route, status) = match &answered {
            Ok(res) => (res.request().match_pattern(), res.status()),
            Err(err) => (None, err.as_response_error().status_code()),
        };
        let route = route.unwrap_or_else(|| "unmatched".to_owned());
        state
            .metrics
            .observe_request(route, &method, status, started.elapsed());
    }
    answered
}

/// `GET /metrics` on the main address: with the configured bearer token;
/// not served (404, as any unknown path) when no token is configured.
pub async fn scrape_with_token(
    state: web::Data<AppState>,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    let Some(expected) = &state.metrics.token_hash else {
        return crate::error::no_route().await;
    };
    let presented = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.trim().split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map(|(_, token)| token.trim())
        .unwrap_or_default();
    // Compared as hashes in constant time: a scraper that guesses learns
    // nothing from how long a refusal took, not even the token's length.
    if !secret::matches_hash(presented, expected) {
        return Err(ApiError::unauthorized(
            "INVALID_METRICS_TOKEN",
            "Send the metrics token as Authorization: Bearer <TRIBUTARY_METRICS_TOKEN>.",
        ));
    }
    scrape(state).await
}

/// `GET /metrics` on the loopback-only metrics address.
pub async fn scrape(state: web::Data<AppState>) -> Result<HttpResponse, ApiError> {
    let pool = state.db.pool_use();
    let (db, now) = (state.db.clone(), state.clock.now().naive_utc());
    let database = web::block(move || DatabaseView::read(&db, now)).await?;
    Ok(HttpResponse::Ok()
        .content_type(CONTENT_TYPE)
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .body(state.metrics.render(pool, database)))
}
