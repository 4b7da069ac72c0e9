//! Resources that answer as HTTP says: a GET endpoint answers HEAD too
//! (actix sends HEAD answers without their body), and a method an endpoint
//! does not serve gets 405 with `Allow` in the error envelope, not 404.

use crate::error::ApiError;
use actix_web::dev::HttpServiceFactory;
use actix_web::{FromRequest, Handler, HttpResponse, Resource, Responder, Route, web};
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::Schema;

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

/// One operation of a JSON interface, made from its handler's
/// `#[utoipa::path]` annotation: actix serves the handler at the path and
/// with the method the annotation gives, and the interface's OpenAPI
/// document describes it from the same annotation. A module lists its
/// operations once ([`Operation`]s in a `Vec`); both the routes and the
/// document are made from that list, so neither can name an endpoint the
/// other lacks.
pub struct Operation {
    /// Relative to the interface's API root (`/accounts`), as annotated.
    pub path: String,
    pub method: actix_web::http::Method,
    /// The method's route; a GET's HEAD route beside it (actix sends a
    /// HEAD answer without its body).
    routes: Vec<Route>,
    /// The annotation's description of this one operation, its tag in it.
    pub described: utoipa::openapi::path::Paths,
    /// The schemas the description refers to, for the document's
    /// components.
    pub schemas: Vec<(String, RefOr<Schema>)>,
    kind: Kind,
}

/// What a resource is, for the middleware around it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// JSON answers as they are.
    Plain,
    /// A data endpoint: compressed on request, never kept by a shared
    /// cache, its `ETag` naming the content coding
    /// ([`crate::conditional::data_resource`]).
    Data,
    /// A browser page: the pages' security headers.
    Page,
}

impl std::fmt::Debug for Operation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.method, self.path)
    }
}

impl Operation {
    /// The operation `P` (the type `#[utoipa::path]` made for `handler`),
    /// served by `handler`.
    ///
    /// The tag and the referenced schemas come through the two traits
    /// `#[utoipa::path]` implements for the routers utoipa maintains
    /// (utoipa-axum, utoipa-actix-web), which read them the same way.
    pub fn new<P, F, Args>(handler: F) -> Self
    where
        P: utoipa::Path + utoipa::__dev::Tags<'static> + utoipa::__dev::SchemaReferences,
        F: Handler<Args> + Clone,
        Args: FromRequest + 'static,
        F::Output: Responder + 'static,
    {
        use utoipa::openapi::path::HttpMethod;
        let methods = P::methods();
        // One method per annotation: a path with several methods is
        // several annotations, grouped again by `serve`.
        let [method] = methods.as_slice() else {
            panic!("{}: annotate one method per handler", P::path());
        };
        let method = match method {
            HttpMethod::Get => actix_web::http::Method::GET,
            HttpMethod::Post => actix_web::http::Method::POST,
            HttpMethod::Put => actix_web::http::Method::PUT,
            HttpMethod::Delete => actix_web::http::Method::DELETE,
            HttpMethod::Patch => actix_web::http::Method::PATCH,
            HttpMethod::Head => actix_web::http::Method::HEAD,
            HttpMethod::Options => actix_web::http::Method::OPTIONS,
            HttpMethod::Trace => actix_web::http::Method::TRACE,
        };
        let mut routes = vec![web::method(method.clone()).to(handler.clone())];
        if method == actix_web::http::Method::GET {
            routes.push(web::head().to(handler));
        }
        let mut described = utoipa::openapi::path::PathsBuilder::new()
            .path_from::<P>()
            .build();
        let tags: Vec<String> = P::tags().into_iter().map(str::to_owned).collect();
        for operation in operations_in(&mut described) {
            operation.tags = Some(tags.clone());
        }
        let mut schemas = Vec::new();
        P::schemas(&mut schemas);
        Self {
            path: P::path(),
            routes,
            method,
            described,
            schemas,
            kind: Kind::Plain,
        }
    }

    /// The operation behind the security scheme `scheme` instead of the
    /// document's default (the same handler mounted on both interfaces,
    /// each with its own credentials).
    pub fn secured_by(mut self, scheme: &str) -> Self {
        use utoipa::openapi::security::SecurityRequirement;
        for operation in operations_in(&mut self.described) {
            operation.security = Some(vec![SecurityRequirement::new::<_, _, &str>(scheme, [])]);
        }
        self
    }

    /// A data endpoint (see [`Kind::Data`]).
    pub fn data(mut self) -> Self {
        self.kind = Kind::Data;
        self
    }

    /// A browser page (see [`Kind::Page`]).
    pub fn page(mut self) -> Self {
        self.kind = Kind::Page;
        self
    }

    /// Whether this operation is a browser page.
    pub fn is_page(&self) -> bool {
        self.kind == Kind::Page
    }
}

/// Every operation `paths` describes, to annotate.
pub(crate) fn operations_in(
    paths: &mut utoipa::openapi::path::Paths,
) -> impl Iterator<Item = &mut utoipa::openapi::path::Operation> {
    paths.paths.values_mut().flat_map(|item| {
        [
            &mut item.get,
            &mut item.post,
            &mut item.put,
            &mut item.delete,
            &mut item.patch,
            &mut item.head,
        ]
        .into_iter()
        .flatten()
    })
}

/// Serves `operations` under `root` (`/api/v1`): one resource per path, a
/// GET answering HEAD too, and every other method answered with 405 naming
/// the methods the path has.
pub fn serve(cfg: &mut web::ServiceConfig, root: &str, operations: Vec<Operation>) {
    let mut by_path: Vec<(String, Vec<Operation>)> = Vec::new();
    for operation in operations {
        match by_path.iter_mut().find(|(path, _)| *path == operation.path) {
            Some((_, same)) => same.push(operation),
            None => by_path.push((operation.path.clone(), vec![operation])),
        }
    }
    for (path, operations) in by_path {
        let kind = operations[0].kind;
        assert!(
            operations.iter().all(|o| o.kind == kind),
            "{root}{path}: one kind of resource per path"
        );
        let mut allow: Vec<String> = Vec::new();
        let mut resource = web::resource(format!("{root}{path}"));
        for operation in operations {
            allow.push(operation.method.to_string());
            if operation.method == actix_web::http::Method::GET {
                allow.push("HEAD".to_owned());
            }
            for route in operation.routes {
                resource = resource.route(route);
            }
        }
        let allow = allow.join(", ");
        resource = resource.default_service(web::to(move || {
            let allow = allow.clone();
            async move { Err::<HttpResponse, _>(ApiError::method_not_allowed(allow)) }
        }));
        match kind {
            Kind::Plain => cfg.service(resource),
            Kind::Data => cfg.service(crate::conditional::data_resource(resource)),
            Kind::Page => cfg.service(crate::web::resource::page_resource(resource)),
        };
    }
}
