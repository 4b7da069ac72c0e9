//! The Personal interface server: one person reads their own data with an
//! API key. All configuration comes from the environment (see `--help`).

use tributary_http::server::{self, Interface};

#[actix_web::main]
async fn main() -> std::process::ExitCode {
    server::main(Interface::Personal).await
}
