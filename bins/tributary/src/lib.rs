//! `tributary`: the admin command line. Migrations, users, API keys,
//! connections and syncs, against the database in TRIBUTARY_DATABASE_URL.
//!
//! A library with a one-line binary (`src/main.rs`), so that the end-to-end
//! tests, which also run the web servers, can build the same command line
//! as a binary of their own while this package links no web stack.

mod apps;
mod cli;
mod commands;
mod connect;
mod developers;
mod rules;
mod simplefin;
mod support;
mod terminal;
mod webhooks;

use clap::Parser as _;
use std::process::ExitCode;

/// The whole command line: parse, run, and the exit code.
pub fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    // Warnings, and what the worker does with each job (one line a job):
    // `RUST_LOG` says otherwise.
    env_logger::Builder::from_env(
        env_logger::Env::default().default_filter_or("warn,tributary_providers::worker=info"),
    )
    .init();
    match commands::run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            // An error may quote what a user typed or a bank sent.
            let said = format!("{err:#}");
            let lines: Vec<_> = said.lines().map(terminal::shown).collect();
            eprintln!("tributary: {}", lines.join("\n"));
            ExitCode::FAILURE
        }
    }
}
