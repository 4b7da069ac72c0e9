//! The Platform interface server (integrators' apps). For now it serves only
//! the health checks; the interface itself is a later issue. Configuration
//! comes from the environment (see `--help`).

use tributary_http::server::{self, Interface};

#[actix_web::main]
async fn main() -> std::process::ExitCode {
    server::main(Interface::Platform).await
}
