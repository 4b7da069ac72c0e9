//! `/healthz`: the process answers. `/readyz`: it can reach its database.

use crate::error::ApiError;
use crate::routes;
use crate::state::AppState;
use actix_web::{HttpResponse, web};

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.service(routes::get("/healthz", healthz))
        .service(routes::get("/readyz", readyz));
}

async fn healthz() -> HttpResponse {
    HttpResponse::Ok().json(serde_json::json!({ "status": "ok" }))
}

async fn readyz(state: web::Data<AppState>) -> Result<HttpResponse, ApiError> {
    let db = state.db.clone();
    web::block(move || db.ping()).await??;
    Ok(HttpResponse::Ok().json(serde_json::json!({ "status": "ready" })))
}
