//! Outbound messages: webhook deliveries (docs/changes.md#webhooks) and
//! mail (sign-in codes, and notices: docs/changes.md#notices). Events
//! are written to an outbox by storage in the same transaction as the change
//! that caused them; a [`deliver::Deliverer`], run by the sync workers,
//! claims the deliveries that are due, signs them per Standard Webhooks
//! ([`signing`]), refuses destinations inside private networks
//! ([`destination`]), and retries on the standard's schedule ([`retry`]).
//! Notices go the same way: written by storage in the change's transaction,
//! mailed by a [`notices::NoticeSender`] the workers run.

pub mod deliver;
pub mod destination;
pub mod mail;
pub mod notices;
pub mod retry;
pub mod signing;
