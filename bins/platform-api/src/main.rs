//! The Platform interface server: integrators' apps register users, exchange
//! OAuth 2 grants for tokens and read each user's data with bearer tokens.
//! Configuration comes from the environment (see `--help`).

use tributary_http::server::{self, Interface};

#[actix_web::main]
async fn main() -> std::process::ExitCode {
    server::main(Interface::Platform).await
}
