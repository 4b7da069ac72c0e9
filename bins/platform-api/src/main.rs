//! The Platform interface server (integrators' apps). For now it serves only
//! the health checks; the interface itself is a later issue. Configuration
//! comes from the environment (see `--help`).

use std::process::ExitCode;
use tributary_http::config::{Config, ENVIRONMENT_HELP};
use tributary_http::server::{self, Interface};

#[actix_web::main]
async fn main() -> ExitCode {
    clap::Command::new("platform-api")
        .version(env!("CARGO_PKG_VERSION"))
        .about("Tributary Platform API: serves integrators' apps under /api/platform (currently /healthz and /readyz only).")
        .after_help(ENVIRONMENT_HELP)
        .get_matches();
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("info")).init();
    let outcome = match Config::from_env() {
        Ok(config) => server::run(Interface::Platform, config).await,
        Err(err) => Err(err.into()),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("platform-api: {err:#}");
            ExitCode::FAILURE
        }
    }
}
