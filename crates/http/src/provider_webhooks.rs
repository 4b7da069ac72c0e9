//! `POST /providers/{provider}/webhook`: webhooks providers send this
//! server (Teller's `enrollment.disconnected`), on both servers. The
//! provider's connector checks the signature and says what happened; the
//! sync engine applies it (docs/providers.md, "Webhooks from providers").
//! The answer says accepted (204) or why not, never which connections.

use crate::error::ApiError;
use crate::state::AppState;
use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
use tributary_domain::model::Provider;
use tributary_providers::provider_webhook::{InboundWebhook, WebhookRefusal};
use tributary_providers::sync::WebhookError;

/// The largest webhook body taken (Teller's events are well under 1 KiB).
pub const MAX_BODY: usize = 64 * 1024;

pub async fn receive(
    req: HttpRequest,
    state: web::Data<AppState>,
    provider: web::Path<String>,
    body: web::Bytes,
) -> Result<HttpResponse, ApiError> {
    let not_taken = || {
        ApiError::not_found(
            "WEBHOOK_NOT_TAKEN",
            "this server takes no webhooks from this provider",
        )
    };
    let provider: Provider = provider.parse().map_err(|_| not_taken())?;
    let engine = state.engine.clone().ok_or_else(not_taken)?;
    let headers: Vec<(String, String)> = req
        .headers()
        .iter()
        .filter_map(|(name, value)| {
            Some((name.as_str().to_owned(), value.to_str().ok()?.to_owned()))
        })
        .collect();
    let now = state.clock.now();
    let outcome = web::block(move || {
        let header = |name: &str| {
            headers
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case(name))
                .map(|(_, v)| v.clone())
        };
        engine.receive_webhook(
            provider,
            &InboundWebhook {
                header: &header,
                body: &body,
                now,
            },
        )
    })
    .await
    .map_err(ApiError::internal)?;
    match outcome {
        Ok(_) => Ok(HttpResponse::NoContent().finish()),
        Err(WebhookError::Refused(WebhookRefusal::NotTaken)) => Err(not_taken()),
        Err(WebhookError::Refused(refused @ WebhookRefusal::Unsigned(_))) => Err(ApiError::new(
            StatusCode::UNAUTHORIZED,
            "WEBHOOK_SIGNATURE_INVALID",
            refused.to_string(),
        )),
        Err(WebhookError::Refused(refused @ WebhookRefusal::Malformed(_))) => Err(
            ApiError::bad_request("WEBHOOK_MALFORMED", refused.to_string()),
        ),
        Err(WebhookError::Storage(err)) => Err(ApiError::internal(err)),
    }
}
