//! The Personal interface server: one person reads their own data with an
//! API key. All configuration comes from the environment (see `--help`).

use std::process::ExitCode;
use tributary_http::config::{Config, ENVIRONMENT_HELP};
use tributary_http::server::{self, Interface};

#[actix_web::main]
async fn main() -> ExitCode {
    clap::Command::new("personal-api")
        .version(env!("CARGO_PKG_VERSION"))
        .about("Tributary Personal API: serves /api/v1 (accounts, transactions, balances, holdings) to API-key holders.")
        .after_help(ENVIRONMENT_HELP)
        .get_matches();
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("info")).init();
    let outcome = match Config::from_env() {
        Ok(config) => server::run(Interface::Personal, config).await,
        Err(err) => Err(err.into()),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("personal-api: {err:#}");
            ExitCode::FAILURE
        }
    }
}
