//! Storage: the one diesel schema for SQLite and PostgreSQL, embedded
//! migrations, the connection pool and the repositories. Every SQL statement
//! of Tributary lives in this crate.

mod backend;
mod columns;
pub mod connection;
pub mod db;
pub mod error;
pub mod freshness;
pub mod investment_feed;
pub mod investments;
pub mod schema;
mod write_turns;

pub mod account_choice;
pub mod account_versions;
pub mod api_keys;
pub mod app_users;
pub mod apps;
pub mod changes;
pub mod checkouts;
pub mod connections;
pub mod dashboard;
pub mod developers;
pub mod job_outcomes;
pub mod mcp_clients;
pub mod notices;
pub mod oauth;
pub mod posted;
pub mod provider_limits;
pub mod read;
pub mod reenrich;
pub mod respell;
pub mod retention;
pub mod rules;
pub mod sign_in_codes;
pub mod simplefin;
pub mod stats;
pub mod sync_apply;
pub mod sync_jobs;
mod transfers;
pub mod users;
pub mod web_sessions;
pub mod webhooks;

#[cfg(any(test, feature = "testing"))]
pub mod queue_load;
#[cfg(any(test, feature = "testing"))]
pub mod testing;

pub use db::{AnyConnection, Backend, Database, DatabaseUrl, HeldSnapshot, PoolOptions, PoolUse};
pub use error::StorageError;

pub type StorageResult<T> = Result<T, StorageError>;

#[cfg(test)]
mod enrichment_tests;
#[cfg(test)]
mod feed_tests;
#[cfg(test)]
mod freshness_tests;
#[cfg(test)]
mod investment_feed_tests;
#[cfg(test)]
mod investments_tests;
#[cfg(test)]
mod liabilities_tests;
#[cfg(test)]
mod provider_limits_tests;
#[cfg(test)]
mod retention_tests;
#[cfg(test)]
mod rules_tests;
#[cfg(test)]
mod search_tests;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod turns_tests;
#[cfg(test)]
mod webhook_tests;
#[cfg(test)]
mod write_turns_tests;
