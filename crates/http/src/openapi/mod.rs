//! The OpenAPI 3.1 documents of both interfaces (docs/api-reference.md),
//! served at `/api/v1/openapi.json` and `/api/platform/openapi.json`, and
//! the reference page made from them.
//!
//! The documents are made from the same [`Operation`] lists that the
//! servers route (`data::operations`, ...): an endpoint is described by the
//! `#[utoipa::path]` annotation on its handler, and routed at the path and
//! method that annotation gives, so a route cannot be missing from its
//! document or the other way round.

pub(crate) mod responses;
mod text_rule;

use crate::interface::Interface;
use crate::routes::Operation;
use crate::{
    connections, data, feed, health, imports, platform, recurring, rules, spending, webhooks,
};
use actix_web::{HttpRequest, HttpResponse};
use std::sync::OnceLock;
use utoipa::OpenApi as _;
use utoipa::openapi::OpenApi;
use utoipa::openapi::security::{
    ApiKey, ApiKeyValue, AuthorizationCode, Flow, HttpAuthScheme, HttpBuilder, OAuth2, Scopes,
    SecurityRequirement, SecurityScheme,
};

/// Where each interface serves its document.
pub const PERSONAL_DOCUMENT: &str = "/api/v1/openapi.json";
pub const PLATFORM_DOCUMENT: &str = "/api/platform/openapi.json";

/// The security schemes' names in the documents.
pub const API_KEY: &str = "apiKey";
pub const BEARER: &str = "bearer";
pub const APP_BASIC: &str = "appBasic";
pub const OAUTH: &str = "oauth2";

#[derive(utoipa::OpenApi)]
#[openapi(
    components(
        responses(
            responses::Unauthorized,
            responses::AppUnauthorized,
            responses::Unavailable,
            responses::NotModified,
            responses::ControlCharacter,
        ),
    ),
    tags(
        (name = "Accounts", description = "Accounts, their transactions, balances and holdings."),
        (name = "Insights", description = "What transactions mean together: spending totals, recurring streams, and your own rules for merchants and categories (docs/enrichment.md)."),
        (name = "Connections", description = "The links to banks and providers that accounts come from."),
        (name = "Imports", description = "Statement files (camt, MT940, OFX/QFX, CSV)."),
        (name = "Webhooks", description = "Endpoints that receive signed events (docs/changes.md#webhooks)."),
        (name = "Health", description = "Whether the server and its database answer."),
        (name = "Reference", description = "This document, and the page made from it."),
    )
)]
struct Shared;

/// What only the Platform's document has.
#[derive(utoipa::OpenApi)]
#[openapi(tags(
    (name = "Users", description = "The app's users, and links to their portal."),
    (name = "OAuth", description = "A user's consent (authorization code with PKCE) and the tokens it yields."),
))]
struct PlatformOnly;

/// The document of `interface`, from its routed operations.
pub fn document(interface: Interface) -> OpenApi {
    let mut doc = Shared::openapi();
    let (title, description) = match interface {
        Interface::Personal => (
            "Tributary Personal API",
            "One person's accounts, transactions, balances and holdings, read with an API key made in the dashboard (`x-api-key`). Errors: docs/errors.md.",
        ),
        Interface::Platform => (
            "Tributary Platform API",
            "Integrators' apps: manage users with the app's credentials (HTTP Basic), get a user's consent with OAuth 2 (authorization code with PKCE), then read that user's data with the bearer token. Errors: docs/errors.md and docs/platform.md.",
        ),
    };
    doc.info.title = title.to_owned();
    doc.info.description = Some(description.to_owned());
    doc.info.version = env!("CARGO_PKG_VERSION").to_owned();
    if interface == Interface::Platform {
        doc.merge(PlatformOnly::openapi());
    }
    let components = doc.components.get_or_insert_with(Default::default);
    match interface {
        Interface::Personal => {
            components.add_security_scheme(
                API_KEY,
                SecurityScheme::ApiKey(ApiKey::Header(ApiKeyValue::with_description(
                    "x-api-key",
                    "An API key (`trb_…`) made in the dashboard or with `tributary keys create`.",
                ))),
            );
            doc.security = Some(vec![SecurityRequirement::new::<_, _, &str>(API_KEY, [])]);
        }
        Interface::Platform => {
            components.add_security_scheme(
                BEARER,
                SecurityScheme::Http(
                    HttpBuilder::new()
                        .scheme(HttpAuthScheme::Bearer)
                        .description(Some(
                            "A user's access token (`tat_…`) from the token endpoint; it reads that user's data.",
                        ))
                        .build(),
                ),
            );
            components.add_security_scheme(
                APP_BASIC,
                SecurityScheme::Http(
                    HttpBuilder::new()
                        .scheme(HttpAuthScheme::Basic)
                        .description(Some("The app's client id and client secret."))
                        .build(),
                ),
            );
            components.add_security_scheme(
                OAUTH,
                SecurityScheme::OAuth2(OAuth2::with_description(
                    [Flow::AuthorizationCode(AuthorizationCode::new(
                        "/api/platform/oauth/authorize",
                        "/api/platform/oauth/token",
                        Scopes::new(),
                    ))],
                    "Authorization code with PKCE (S256; required of public clients). The access token this yields is the `bearer` scheme's.",
                )),
            );
            doc.security = Some(vec![SecurityRequirement::new::<_, _, &str>(BEARER, [])]);
        }
    }
    for (root, operations) in routed(interface) {
        for operation in operations {
            let components = doc.components.get_or_insert_with(Default::default);
            for (name, schema) in operation.schemas {
                components.schemas.entry(name).or_insert(schema);
            }
            for (path, item) in operation.described.paths {
                let full = format!("{root}{path}");
                match doc.paths.paths.get_mut(&full) {
                    Some(existing) => existing.merge_operations(item),
                    None => {
                        doc.paths.paths.insert(full, item);
                    }
                }
            }
        }
    }
    text_rule::describe(&mut doc);
    doc
}

/// Every operation `interface` routes, under the root it is mounted at.
pub fn routed(interface: Interface) -> Vec<(&'static str, Vec<Operation>)> {
    use crate::auth::{ApiKey as Key, BearerToken};
    let mut routed = vec![("", health::operations())];
    match interface {
        Interface::Personal => {
            let mut api = data::operations::<Key>();
            api.extend(feed::operations::<Key>());
            api.extend(spending::operations::<Key>());
            api.extend(recurring::operations::<Key>());
            api.extend(rules::operations::<Key>());
            api.extend(webhooks::operations::<Key>());
            api.extend(connections::operations::<Key>());
            api.extend(imports::operations::<Key>());
            api.extend(reference_operations());
            routed.push(("/api/v1", api));
        }
        Interface::Platform => {
            routed.push(("", platform::root_operations()));
            let mut oauth = platform::oauth_operations();
            oauth.extend(reference_operations());
            routed.push(("/api/platform", oauth));
            let mut api = platform::user_operations();
            api.extend(data::operations::<BearerToken>());
            api.extend(feed::operations::<BearerToken>());
            api.extend(spending::operations::<BearerToken>());
            api.extend(recurring::operations::<BearerToken>());
            api.extend(rules::operations::<BearerToken>());
            api.extend(
                webhooks::operations::<crate::auth::AppClient>()
                    .into_iter()
                    .map(|operation| operation.secured_by(APP_BASIC)),
            );
            api.extend(connections::operations::<BearerToken>());
            api.extend(imports::operations::<BearerToken>());
            routed.push(("/api/platform/v1", api));
        }
    }
    routed
}

/// The document and its reference page, beside the interface's endpoints.
fn reference_operations() -> Vec<Operation> {
    vec![
        Operation::new::<__path_openapi_json, _, _>(openapi_json),
        crate::web::reference::operation(),
    ]
}

/// Which interface a request to a reference endpoint is for, by where it
/// was sent: the Platform's are under `/api/platform`.
pub(crate) fn interface_of(req: &HttpRequest) -> Interface {
    if req.path().starts_with("/api/platform/") {
        Interface::Platform
    } else {
        Interface::Personal
    }
}

/// The interface's document as JSON, made once.
pub fn document_json(interface: Interface) -> &'static str {
    static PERSONAL: OnceLock<String> = OnceLock::new();
    static PLATFORM: OnceLock<String> = OnceLock::new();
    let cell = match interface {
        Interface::Personal => &PERSONAL,
        Interface::Platform => &PLATFORM,
    };
    cell.get_or_init(|| {
        serde_json::to_string_pretty(&document(interface))
            .unwrap_or_else(|err| format!("{{\"error\": \"{err}\"}}"))
    })
}

#[utoipa::path(
    get,
    path = "/openapi.json",
    tag = "Reference",
    summary = "This document",
    description = "The interface's OpenAPI 3.1 document, made from the server's own routes.",
    security(()),
    responses((status = 200, description = "The document.", body = Object))
)]
async fn openapi_json(req: HttpRequest) -> HttpResponse {
    HttpResponse::Ok()
        .content_type("application/json")
        .insert_header(("Cache-Control", "public, max-age=300"))
        .body(document_json(interface_of(&req)))
}
