//! Outbound messages: webhook deliveries (docs/changes.md#webhooks). Events
//! are written to an outbox by storage in the same transaction as the change
//! that caused them; a [`deliver::Deliverer`], run by the sync workers,
//! claims the deliveries that are due, signs them per Standard Webhooks
//! ([`signing`]), refuses destinations inside private networks
//! ([`destination`]), and retries on the standard's schedule ([`retry`]).

pub mod deliver;
pub mod destination;
pub mod retry;
pub mod signing;
