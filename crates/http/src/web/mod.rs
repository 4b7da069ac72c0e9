//! The pages people see in a browser: the OAuth authorization flow (sign in
//! by e-mailed code, checkout when users pay, connect a bank, consent) and
//! the portal. Server-rendered (askama), one stylesheet; every page works
//! without JavaScript (one small script only updates the sync progress page
//! in place; where the operator set up Teller Connect or Pluggy Connect,
//! that bank's form offers it with the provider's script beside the form,
//! which works without).
//!
//! Every page runs in a server-side session named by an HttpOnly cookie;
//! every form carries the session's CSRF token; every response carries a
//! strict Content-Security-Policy, `X-Frame-Options: DENY`, a same-origin
//! referrer policy and no-store. No secret appears in a URL except the
//! final authorization code. Whatever erases or revokes asks first
//! ([`confirm`]); every error page keeps its surface's navigation and a
//! way back ([`surface`]).

mod account_scope;
pub(crate) mod authorize;
mod banks;
mod checkout;
mod choose_accounts;
mod code_sign_in;
mod confirm;
mod connect;
mod connections;
mod consent;
mod csp;
pub mod dashboard;
mod demo_callback;
pub mod developers;
mod header;
mod landing;
pub(crate) mod mailer;
mod money;
mod page;
pub(crate) use page::error_page_html;
mod portal;
pub(crate) mod reference;
pub(crate) mod resource;
mod session;
mod sign_in;
mod simplefin;
pub(crate) mod surface;
mod visitor;

use actix_web::{HttpResponse, web};

use resource::{form_config, no_page, query_config, security_headers};
pub use session::SESSION_COOKIE;

/// The pages after the authorization endpoint, and the portal.
pub fn configure_pages(cfg: &mut web::ServiceConfig) {
    static_files(cfg);
    cfg.service(
        web::resource("/")
            .wrap(security_headers())
            .route(web::get().to(landing::page))
            .route(web::head().to(landing::page)),
    );
    // Before `/developers` itself: the demo callback page is the server's,
    // not a developer's.
    cfg.service(
        web::resource(tributary_app::demo::DEMO_CALLBACK_PATH)
            .app_data(query_config())
            .wrap(security_headers())
            .route(web::get().to(demo_callback::page)),
    );
    cfg.configure(developers::configure);
    cfg.service(
        web::scope("/connect")
            .default_service(web::to(no_page))
            .app_data(form_config())
            .app_data(query_config())
            .wrap(security_headers())
            .route("/sign-in", web::get().to(sign_in::form))
            .route("/sign-in", web::post().to(sign_in::send_code))
            .route("/verify", web::get().to(sign_in::verify_form))
            .route("/verify", web::post().to(sign_in::verify))
            .route("/checkout", web::get().to(checkout::page))
            .route("/checkout", web::post().to(checkout::start))
            .route("/checkout/return", web::get().to(checkout::come_back))
            .configure(connection_pages::<session::FlowVisitor>)
            .route("/consent", web::get().to(consent::page))
            .route("/consent", web::post().to(consent::decide)),
    )
    .service(
        web::scope("/checkout/test")
            .default_service(web::to(no_page))
            .app_data(form_config())
            .wrap(security_headers())
            .route("/{id}", web::get().to(checkout::test_page_get))
            .route("/{id}", web::post().to(checkout::test_pay)),
    )
    .service(
        web::scope("/portal")
            .default_service(web::to(no_page))
            .wrap(security_headers())
            .route("", web::get().to(portal::home))
            .route(
                "/simplefin",
                web::post().to(simplefin::create::<session::FlowVisitor>),
            )
            .route(
                "/simplefin/{id}/revoke",
                web::get().to(simplefin::revoke_form::<session::FlowVisitor>),
            )
            .route(
                "/simplefin/{id}/revoke",
                web::post().to(simplefin::revoke::<session::FlowVisitor>),
            )
            .route("/{token}", web::get().to(portal::open)),
    );
}

/// The connection pages under `/connect`, for one kind of visitor: the
/// bank list, a bank's form, the statement upload, a sync's progress,
/// trying again, re-authenticating, choosing the accounts shared,
/// disconnecting and removing.
fn connection_pages<V: visitor::Visitor>(cfg: &mut web::ServiceConfig) {
    cfg.route("/banks", web::get().to(banks::list::<V>))
        .route("/banks/upload", web::post().to(connect::upload::<V>))
        .route("/banks/{kind}", web::get().to(connect::form::<V>))
        .route("/banks/{kind}", web::post().to(connect::connect::<V>))
        .route(
            "/{provider}/return",
            web::get().to(connect::bank_return::<V>),
        )
        .route("/progress/{id}", web::get().to(connections::progress::<V>))
        .route(
            "/progress/{id}/retry",
            web::post().to(connections::retry::<V>),
        )
        .route(
            "/connections/{id}/remove",
            web::get().to(connections::remove_form::<V>),
        )
        .route(
            "/connections/{id}/remove",
            web::post().to(connections::remove::<V>),
        )
        .route(
            "/connections/{id}/disconnect",
            web::get().to(connections::disconnect_form::<V>),
        )
        .route(
            "/connections/{id}/disconnect",
            web::post().to(connections::disconnect::<V>),
        )
        .route(
            "/connections/{id}/reauth",
            web::get().to(connections::reauth_form::<V>),
        )
        .route(
            "/connections/{id}/reauth",
            web::post().to(connections::reauth::<V>),
        )
        .route(
            "/connections/{id}/accounts",
            web::get().to(choose_accounts::form::<V>),
        )
        .route(
            "/connections/{id}/accounts",
            web::post().to(choose_accounts::choose::<V>),
        );
}

/// The pages' stylesheet and script, on both servers.
fn static_files(cfg: &mut web::ServiceConfig) {
    cfg.service(
        web::resource("/static/tributary.css")
            .route(web::get().to(stylesheet))
            .route(web::head().to(stylesheet)),
    )
    .service(
        web::resource("/static/progress.js")
            .route(web::get().to(progress_script))
            .route(web::head().to(progress_script)),
    )
    .service(
        web::resource("/static/connect/{file}")
            .route(web::get().to(connect_launcher))
            .route(web::head().to(connect_launcher)),
    )
    // Browsers ask for it on their own; one small SVG (Chromium and
    // Firefox read an SVG here by its content type).
    .service(
        web::resource("/favicon.ico")
            .route(web::get().to(favicon))
            .route(web::head().to(favicon)),
    );
}

async fn favicon() -> HttpResponse {
    static_file("image/svg+xml", include_str!("../../static/favicon.svg"))
}

fn static_file(content_type: &str, body: &'static str) -> HttpResponse {
    HttpResponse::Ok()
        .content_type(content_type)
        .insert_header(("Cache-Control", "public, max-age=3600"))
        .insert_header(("X-Content-Type-Options", "nosniff"))
        .body(body)
}

async fn stylesheet() -> HttpResponse {
    static_file(
        "text/css; charset=utf-8",
        include_str!("../../static/tributary.css"),
    )
}

/// `/static/connect/{provider}.js`: the script that opens a provider's own
/// enrollment script on its connect page, where its connector offers one.
async fn connect_launcher(
    state: web::Data<crate::state::AppState>,
    file: web::Path<String>,
) -> HttpResponse {
    let launcher = file
        .strip_suffix(".js")
        .and_then(|name| name.parse::<tributary_domain::model::Provider>().ok())
        .and_then(|provider| state.engine.as_ref()?.connect_launcher(provider));
    match launcher {
        Some(script) => static_file("text/javascript; charset=utf-8", script),
        None => HttpResponse::NotFound().finish(),
    }
}

async fn progress_script() -> HttpResponse {
    static_file(
        "text/javascript; charset=utf-8",
        include_str!("../../static/progress.js"),
    )
}
