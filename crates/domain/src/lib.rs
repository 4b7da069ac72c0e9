//! Pure types and rules of Tributary: no IO, no database, no HTTP.
//!
//! Everything here is deterministic and unit-testable: money is exact
//! ([`Decimal`]), time is passed in ([`clock::Clock`]), and the sync
//! reconciler ([`reconcile`]) is a function from stored state and a provider
//! snapshot to the changes that storage applies in one transaction.

pub mod access;
pub mod changes;
pub mod clock;
pub mod email;
pub mod enrich;
pub mod ids;
pub mod model;
pub mod money;
pub mod net_worth;
pub mod notice;
pub mod pending_match;
pub mod provider_limits;
pub mod reconcile;
pub mod retention;
pub mod schedule;
pub mod secrets;
pub mod snapshot;
pub mod status;
pub mod summary;
pub mod taxonomy;
pub mod text;
pub mod webhook_event;

pub use money::Decimal;
