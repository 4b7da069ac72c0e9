//! Webhook endpoints over the API (docs/changes.md#webhooks): a Personal
//! user registers them with an API key (`/api/v1/webhooks`), an app with
//! its client credentials (`/api/platform/v1/webhooks`, HTTP Basic) for
//! all its users. The signing secret is shown once, at creation and at each
//! rotation; it is stored sealed. An endpoint's delivery log is readable,
//! and a delivery can be sent again.

use crate::auth::{self, ApiKey, AppClient};
use crate::error::{ApiError, Envelope};
use crate::openapi::responses;
use crate::routes::Operation;
use crate::state::AppState;
use actix_web::http::StatusCode;
use actix_web::{FromRequest, HttpResponse, web};
use chrono::NaiveDateTime;
use serde::{Deserialize, Serialize};
use std::future::Future;
use tributary_domain::ids::{WebhookDeliveryId, WebhookEndpointId};
use tributary_domain::model::WebhookEventType;
use tributary_notify::deliver::{ROTATION_OVERLAP, seal_secret};
use tributary_notify::destination;
use tributary_notify::signing::SigningSecret;
use tributary_storage::webhooks::{self as store, EndpointOwner, EndpointRecord};
use utoipa::ToSchema;

/// Endpoints one owner may register.
pub const MAX_ENDPOINTS: usize = 10;
/// Delivery log lines an answer holds.
const LOG_LINES: i64 = 100;

/// Who registers endpoints: the credential names the owner.
pub trait Owner: FromRequest<Error = ApiError> + Send + 'static {
    fn owner(
        self,
        state: &web::Data<AppState>,
    ) -> impl Future<Output = Result<EndpointOwner, ApiError>>;
}

impl Owner for ApiKey {
    async fn owner(self, state: &web::Data<AppState>) -> Result<EndpointOwner, ApiError> {
        let viewer = auth::as_viewer(state, self, |_, viewer| Ok(viewer)).await?;
        if viewer.account_scope.is_some() {
            // Events name every account: a key limited to some may not.
            return Err(ApiError::new(
                StatusCode::FORBIDDEN,
                "KEY_RESTRICTED",
                "A key limited to some accounts cannot manage webhooks; use a key for every account.",
            ));
        }
        Ok(EndpointOwner::User(viewer.user_id))
    }
}

impl Owner for AppClient {
    async fn owner(self, _state: &web::Data<AppState>) -> Result<EndpointOwner, ApiError> {
        Ok(EndpointOwner::App(self.0.id))
    }
}

/// The webhook operations, for owners `O`.
pub fn operations<O: Owner>() -> Vec<Operation> {
    vec![
        Operation::new::<__path_create, _, _>(create::<O>),
        Operation::new::<__path_list, _, _>(list::<O>),
        Operation::new::<__path_update, _, _>(update::<O>),
        Operation::new::<__path_delete, _, _>(delete::<O>),
        Operation::new::<__path_rotate_secret, _, _>(rotate_secret::<O>),
        Operation::new::<__path_deliveries, _, _>(deliveries::<O>),
        Operation::new::<__path_replay, _, _>(replay::<O>),
    ]
}

/// An endpoint as the API shows it (never its secret).
#[derive(Serialize, ToSchema)]
pub(crate) struct Endpoint {
    #[schema(examples("3"))]
    id: String,
    url: String,
    #[schema(value_type = Vec<String>, examples(json!(["transactions.updated"])))]
    event_types: Vec<&'static str>,
    enabled: bool,
    /// Why it is disabled: by its owner, a 410, or three days of failures.
    disabled_reason: Option<String>,
    #[schema(value_type = String, format = DateTime)]
    created_at: String,
}

/// A stored UTC time as the API writes it (RFC 3339, seconds, `Z`).
pub(crate) fn time(t: NaiveDateTime) -> String {
    t.and_utc()
        .to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

impl From<EndpointRecord> for Endpoint {
    fn from(e: EndpointRecord) -> Self {
        Endpoint {
            id: e.id.to_string(),
            url: e.url,
            event_types: e.event_types.iter().map(|t| t.as_str()).collect(),
            enabled: e.enabled,
            disabled_reason: e.disabled_reason,
            created_at: time(e.created_at),
        }
    }
}

/// An endpoint with its signing secret, shown this once.
#[derive(Serialize, ToSchema)]
pub(crate) struct EndpointWithSecret {
    #[serde(flatten)]
    endpoint: Endpoint,
    /// `whsec_…`: verify every delivery's `webhook-signature` with it.
    #[schema(examples("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"))]
    secret: String,
}

#[derive(Serialize, ToSchema)]
pub(crate) struct EndpointList {
    webhooks: Vec<Endpoint>,
    total: usize,
}

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct NewEndpoint {
    /// Where deliveries are posted: https (http only where the operator
    /// allows private destinations).
    url: String,
    /// The event types to send (every type when absent).
    #[schema(value_type = Option<Vec<String>>)]
    event_types: Option<Vec<String>>,
}

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct EndpointChange {
    enabled: bool,
}

fn endpoint_not_found() -> ApiError {
    ApiError::not_found(
        "WEBHOOK_NOT_FOUND",
        "No webhook endpoint with this id is yours.",
    )
}

fn parse_id<T: std::str::FromStr>(raw: &str) -> Result<T, ApiError> {
    raw.parse().map_err(|_| endpoint_not_found())
}

fn json_body<T: serde::de::DeserializeOwned>(body: &[u8]) -> Result<T, ApiError> {
    serde_json::from_slice(body).map_err(|err| {
        ApiError::bad_request("INVALID_BODY", format!("The body does not read: {err}."))
    })
}

/// Checks a URL an owner registers: its form, and that the outbound guard
/// allows its addresses, resolved off this worker's threads and within the
/// guard's timeout (a name whose DNS never answers holds nothing here).
/// Nothing is connected to.
async fn check_url(state: &AppState, raw: &str) -> Result<String, ApiError> {
    destination::check(&state.outbound, raw)
        .await
        .map(|url| url.to_string())
        .map_err(|why| ApiError::bad_request("INVALID_WEBHOOK_URL", format!("`url`: {why}.")))
}

fn event_types(asked: Option<Vec<String>>) -> Result<Vec<WebhookEventType>, ApiError> {
    let Some(asked) = asked else {
        return Ok(WebhookEventType::ALL.to_vec());
    };
    if asked.is_empty() {
        return Err(ApiError::bad_request(
            "INVALID_EVENT_TYPE",
            "`event_types` names no type; leave it out for every type.",
        ));
    }
    let mut types = Vec::new();
    for name in asked {
        let t: WebhookEventType = name.parse().map_err(|_| {
            let known: Vec<&str> = WebhookEventType::ALL.iter().map(|t| t.as_str()).collect();
            ApiError::bad_request(
                "INVALID_EVENT_TYPE",
                format!(
                    "`event_types`: `{name}` is not one of {}.",
                    known.join(", ")
                ),
            )
        })?;
        if !types.contains(&t) {
            types.push(t);
        }
    }
    Ok(types)
}

fn sealer(
    state: &AppState,
) -> Result<std::sync::Arc<dyn tributary_domain::secrets::Sealer>, ApiError> {
    state
        .sealer
        .clone()
        .ok_or_else(|| ApiError::internal("no key seals webhook secrets on this server"))
}

#[utoipa::path(
    post,
    path = "/webhooks",
    operation_id = "create_webhook",
    tag = "Webhooks",
    summary = "Register a webhook endpoint",
    description = "Events (docs/changes.md#events) are posted to `url`, signed per Standard Webhooks with the secret this answer shows once.",
    request_body = NewEndpoint,
    responses(
        (status = 201, description = "Registered; `secret` is shown only now.", body = EndpointWithSecret, links(
            ("deliveries" = (operation_id = "webhook_deliveries", parameters(("id" = "$response.body#/id")), description = "Its delivery log.")),
        )),
        (status = 400, description = "`INVALID_BODY`, `INVALID_WEBHOOK_URL` (not https, or resolving to a private address), `INVALID_EVENT_TYPE`, `TOO_MANY_WEBHOOKS`.", body = Envelope),
        (status = 401, response = responses::Unauthorized),
        (status = 403, description = "`KEY_RESTRICTED`: a key limited to some accounts.", body = Envelope),
        (status = 503, response = responses::Unavailable),
    )
)]
async fn create<O: Owner>(
    credential: O,
    state: web::Data<AppState>,
    body: web::Bytes,
) -> Result<HttpResponse, ApiError> {
    let owner = credential.owner(&state).await?;
    let asked: NewEndpoint = json_body(&body)?;
    let url = check_url(&state, &asked.url).await?;
    let types = event_types(asked.event_types)?;
    let secret = SigningSecret::generate();
    let sealed = seal_secret(sealer(&state)?.as_ref(), owner, &secret);
    let now = state.clock.now().naive_utc();
    let endpoint = crate::data::with_conn(&state, move |conn| {
        if store::list_endpoints(conn, owner)?.len() >= MAX_ENDPOINTS {
            return Err(ApiError::bad_request(
                "TOO_MANY_WEBHOOKS",
                format!("At most {MAX_ENDPOINTS} webhook endpoints; delete one first."),
            ));
        }
        Ok(store::create_endpoint(
            conn,
            &store::NewEndpoint {
                owner,
                url: &url,
                event_types: &types,
                secret_sealed: &sealed,
                now,
            },
        )?)
    })
    .await?;
    Ok(HttpResponse::Created()
        .insert_header(("Cache-Control", "no-store"))
        .json(EndpointWithSecret {
            endpoint: endpoint.into(),
            secret: secret.to_text(),
        }))
}

#[utoipa::path(
    get,
    path = "/webhooks",
    operation_id = "list_webhooks",
    tag = "Webhooks",
    summary = "List webhook endpoints",
    responses(
        (status = 200, description = "The endpoints.", body = EndpointList),
        (status = 401, response = responses::Unauthorized),
        (status = 403, description = "`KEY_RESTRICTED`.", body = Envelope),
        (status = 503, response = responses::Unavailable),
    )
)]
async fn list<O: Owner>(
    credential: O,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ApiError> {
    let owner = credential.owner(&state).await?;
    let endpoints =
        crate::data::with_conn(&state, move |conn| Ok(store::list_endpoints(conn, owner)?)).await?;
    let webhooks: Vec<Endpoint> = endpoints.into_iter().map(Into::into).collect();
    Ok(HttpResponse::Ok().json(EndpointList {
        total: webhooks.len(),
        webhooks,
    }))
}

#[utoipa::path(
    patch,
    path = "/webhooks/{id}",
    operation_id = "update_webhook",
    tag = "Webhooks",
    summary = "Enable or disable a webhook endpoint",
    description = "Disabling cancels its pending deliveries; enabling starts it afresh.",
    params(("id" = String, Path, description = "The endpoint's id.")),
    request_body = EndpointChange,
    responses(
        (status = 200, description = "The endpoint.", body = Endpoint),
        (status = 400, description = "`INVALID_BODY`.", body = Envelope),
        (status = 401, response = responses::Unauthorized),
        (status = 403, description = "`KEY_RESTRICTED`.", body = Envelope),
        (status = 404, description = "`WEBHOOK_NOT_FOUND`.", body = Envelope),
        (status = 503, response = responses::Unavailable),
    )
)]
async fn update<O: Owner>(
    credential: O,
    state: web::Data<AppState>,
    path: web::Path<String>,
    body: web::Bytes,
) -> Result<HttpResponse, ApiError> {
    let owner = credential.owner(&state).await?;
    let id: WebhookEndpointId = parse_id(&path)?;
    let change: EndpointChange = json_body(&body)?;
    let now = state.clock.now().naive_utc();
    let reason = (!change.enabled).then_some("disabled by its owner");
    let endpoint = crate::data::with_conn(&state, move |conn| {
        store::set_enabled(conn, owner, id, reason, now)?.ok_or_else(endpoint_not_found)
    })
    .await?;
    Ok(HttpResponse::Ok().json(Endpoint::from(endpoint)))
}

#[utoipa::path(
    delete,
    path = "/webhooks/{id}",
    operation_id = "delete_webhook",
    tag = "Webhooks",
    summary = "Delete a webhook endpoint",
    params(("id" = String, Path, description = "The endpoint's id.")),
    responses(
        (status = 204, description = "Deleted, with its deliveries."),
        (status = 401, response = responses::Unauthorized),
        (status = 403, description = "`KEY_RESTRICTED`.", body = Envelope),
        (status = 404, description = "`WEBHOOK_NOT_FOUND`.", body = Envelope),
        (status = 503, response = responses::Unavailable),
    )
)]
async fn delete<O: Owner>(
    credential: O,
    state: web::Data<AppState>,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let owner = credential.owner(&state).await?;
    let id: WebhookEndpointId = parse_id(&path)?;
    let deleted = crate::data::with_conn(&state, move |conn| {
        Ok(store::delete_endpoint(conn, owner, id)?)
    })
    .await?;
    if !deleted {
        return Err(endpoint_not_found());
    }
    Ok(HttpResponse::NoContent().finish())
}

#[derive(Serialize, ToSchema)]
pub(crate) struct RotatedSecret {
    /// The new `whsec_…`, shown only now.
    secret: String,
    /// Until then deliveries carry a signature with the previous secret too.
    #[schema(value_type = String, format = DateTime)]
    previous_secret_valid_until: String,
}

#[utoipa::path(
    post,
    path = "/webhooks/{id}/rotate_secret",
    operation_id = "rotate_webhook_secret",
    tag = "Webhooks",
    summary = "Rotate a webhook endpoint's signing secret",
    description = "Makes a new secret (shown once). For 24 hours every delivery carries two signatures, one with each secret, so receivers switch without losing any.",
    params(("id" = String, Path, description = "The endpoint's id.")),
    responses(
        (status = 200, description = "The new secret.", body = RotatedSecret),
        (status = 401, response = responses::Unauthorized),
        (status = 403, description = "`KEY_RESTRICTED`.", body = Envelope),
        (status = 404, description = "`WEBHOOK_NOT_FOUND`.", body = Envelope),
        (status = 503, response = responses::Unavailable),
    )
)]
async fn rotate_secret<O: Owner>(
    credential: O,
    state: web::Data<AppState>,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let owner = credential.owner(&state).await?;
    let id: WebhookEndpointId = parse_id(&path)?;
    let secret = SigningSecret::generate();
    let sealed = seal_secret(sealer(&state)?.as_ref(), owner, &secret);
    let now = state.clock.now().naive_utc();
    let until = now + ROTATION_OVERLAP;
    crate::data::with_conn(&state, move |conn| {
        store::rotate_secret(conn, owner, id, &sealed, until, now)?.ok_or_else(endpoint_not_found)
    })
    .await?;
    Ok(HttpResponse::Ok()
        .insert_header(("Cache-Control", "no-store"))
        .json(RotatedSecret {
            secret: secret.to_text(),
            previous_secret_valid_until: time(until),
        }))
}

/// One line of the delivery log.
#[derive(Serialize, ToSchema)]
pub(crate) struct Delivery {
    #[schema(examples("12"))]
    id: String,
    /// The `webhook-id` it is sent with (the same on every attempt).
    webhook_id: String,
    #[schema(examples("transactions.updated"))]
    event_type: &'static str,
    /// `pending`, `delivered`, `failed` (every attempt failed) or
    /// `cancelled` (the endpoint was disabled).
    #[schema(examples("delivered"))]
    status: &'static str,
    attempts: i32,
    /// The receiver's last answer, when it answered.
    last_status: Option<i32>,
    last_error: Option<String>,
    /// When a pending delivery is tried next.
    #[schema(value_type = Option<String>, format = DateTime)]
    next_attempt_at: Option<String>,
    #[schema(value_type = String, format = DateTime)]
    created_at: String,
    #[schema(value_type = Option<String>, format = DateTime)]
    delivered_at: Option<String>,
}

#[derive(Serialize, ToSchema)]
pub(crate) struct DeliveryLog {
    deliveries: Vec<Delivery>,
}

#[utoipa::path(
    get,
    path = "/webhooks/{id}/deliveries",
    operation_id = "webhook_deliveries",
    tag = "Webhooks",
    summary = "An endpoint's delivery log",
    description = "The newest 100 deliveries first: status, attempts, the last answer or error.",
    params(("id" = String, Path, description = "The endpoint's id.")),
    responses(
        (status = 200, description = "The log.", body = DeliveryLog),
        (status = 401, response = responses::Unauthorized),
        (status = 403, description = "`KEY_RESTRICTED`.", body = Envelope),
        (status = 404, description = "`WEBHOOK_NOT_FOUND`.", body = Envelope),
        (status = 503, response = responses::Unavailable),
    )
)]
async fn deliveries<O: Owner>(
    credential: O,
    state: web::Data<AppState>,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let owner = credential.owner(&state).await?;
    let id: WebhookEndpointId = parse_id(&path)?;
    let lines = crate::data::with_conn(&state, move |conn| {
        store::find_endpoint(conn, owner, id)?.ok_or_else(endpoint_not_found)?;
        Ok(store::delivery_log(conn, id, LOG_LINES)?)
    })
    .await?;
    let deliveries = lines
        .into_iter()
        .map(|line| Delivery {
            id: line.id.to_string(),
            webhook_id: line.message_id,
            event_type: line.event_type.as_str(),
            status: line.status.as_str(),
            attempts: line.attempts,
            last_status: line.last_status,
            last_error: line.last_error,
            next_attempt_at: (line.status == tributary_domain::model::DeliveryStatus::Pending)
                .then(|| time(line.next_attempt_at)),
            created_at: time(line.created_at),
            delivered_at: line.delivered_at.map(time),
        })
        .collect();
    Ok(HttpResponse::Ok().json(DeliveryLog { deliveries }))
}

#[utoipa::path(
    post,
    path = "/webhooks/{id}/deliveries/{delivery_id}/replay",
    operation_id = "replay_webhook_delivery",
    tag = "Webhooks",
    summary = "Send a delivery again",
    description = "Queues the delivery again (same `webhook-id`, a fresh schedule of attempts), whatever its status.",
    params(
        ("id" = String, Path, description = "The endpoint's id."),
        ("delivery_id" = String, Path, description = "The delivery's id, from the log."),
    ),
    responses(
        (status = 202, description = "Queued."),
        (status = 401, response = responses::Unauthorized),
        (status = 403, description = "`KEY_RESTRICTED`.", body = Envelope),
        (status = 404, description = "`WEBHOOK_NOT_FOUND` (the endpoint or the delivery).", body = Envelope),
        (status = 503, response = responses::Unavailable),
    )
)]
async fn replay<O: Owner>(
    credential: O,
    state: web::Data<AppState>,
    path: web::Path<(String, String)>,
) -> Result<HttpResponse, ApiError> {
    let owner = credential.owner(&state).await?;
    let id: WebhookEndpointId = parse_id(&path.0)?;
    let delivery: WebhookDeliveryId = parse_id(&path.1)?;
    let now = state.clock.now().naive_utc();
    crate::data::with_conn(&state, move |conn| {
        store::find_endpoint(conn, owner, id)?.ok_or_else(endpoint_not_found)?;
        if store::replay(conn, id, delivery, now)? {
            Ok(())
        } else {
            Err(endpoint_not_found())
        }
    })
    .await?;
    Ok(HttpResponse::Accepted().finish())
}
