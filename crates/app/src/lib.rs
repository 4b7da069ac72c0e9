//! The composition root of every Tributary process (`personal-api`,
//! `platform-api`, `tributary`): the configuration read from the
//! environment, and the parts built from it: the database, the registry of
//! connectors and the sync engine, the background worker and its chores,
//! the mailer, the payment processor, the caches, the demo data.
//!
//! Nothing here knows HTTP: the servers (`tributary-http`) and the CLI build
//! their processes from these parts, so the CLI links no web stack.
//! docs/architecture.md, "Crates".

pub mod caches;
pub mod config;
pub mod connectors;
pub mod database;
pub mod demo;
pub mod links;
pub mod mail;
pub mod payments;
pub mod workers;

pub use config::Config;
