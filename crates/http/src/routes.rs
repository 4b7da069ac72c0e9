//! Resources that answer as HTTP says: a GET endpoint answers HEAD too
//! (actix sends HEAD answers without their body), and a method an endpoint
//! does not serve gets 405 with `Allow` in the error envelope, not 404.

use crate::error::ApiError;
use actix_web::dev::HttpServiceFactory;
use actix_web::{FromRequest, Handler, HttpResponse, Resource, Responder, Route, web};

/// `path` served by `handler` on GET and HEAD.
pub fn get<F, Args>(path: &str, handler: F) -> Resource
where
    F: Handler<Args> + Clone,
    Args: FromRequest + 'static,
    F::Output: Responder + 'static,
{
    only(
        web::resource(path)
            .route(web::get().to(handler.clone()))
            .route(web::head().to(handler)),
        "GET, HEAD",
    )
}

/// `path` served by `route` (one method, `allow`).
pub fn one(path: &str, allow: &'static str, route: Route) -> impl HttpServiceFactory + 'static {
    only(web::resource(path).route(route), allow)
}

/// `resource`, answering every method it has no route for with 405.
pub fn only(resource: Resource, allow: &'static str) -> Resource {
    resource.default_service(web::to(move || async move {
        Err::<HttpResponse, _>(ApiError::method_not_allowed(allow))
    }))
}
