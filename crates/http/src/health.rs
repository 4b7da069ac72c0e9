//! `/healthz`: the process answers. `/readyz`: it can reach its database.

use crate::error::ApiError;
use crate::openapi::responses;
use crate::routes::Operation;
use crate::state::AppState;
use actix_web::{HttpResponse, web};

/// The health endpoints (no credentials).
pub fn operations() -> Vec<Operation> {
    vec![
        Operation::new::<__path_healthz, _, _>(healthz),
        Operation::new::<__path_readyz, _, _>(readyz),
    ]
}

/// `{"status": "ok"}` or `{"status": "ready"}`.
#[derive(serde::Serialize, utoipa::ToSchema)]
pub(crate) struct Health {
    #[schema(examples("ok"))]
    status: &'static str,
}

#[utoipa::path(
    get,
    path = "/healthz",
    tag = "Health",
    summary = "Liveness",
    description = "The process answers.",
    security(()),
    responses((status = 200, description = "`ok`.", body = Health))
)]
async fn healthz() -> HttpResponse {
    HttpResponse::Ok().json(Health { status: "ok" })
}

#[utoipa::path(
    get,
    path = "/readyz",
    tag = "Health",
    summary = "Readiness",
    description = "The server can reach its database.",
    security(()),
    responses(
        (status = 200, description = "`ready`.", body = Health),
        (status = 503, response = responses::Unavailable),
    )
)]
async fn readyz(state: web::Data<AppState>) -> Result<HttpResponse, ApiError> {
    let db = state.db.clone();
    web::block(move || db.ping()).await??;
    Ok(HttpResponse::Ok().json(Health { status: "ready" }))
}
