//! The HTTP surfaces of both servers: the error envelope, request ids,
//! authentication extractors, the data endpoints (one implementation behind
//! either authentication scheme), SimpleFIN, the browser pages, health
//! checks, and binding a server. Configuration and the rest of a process's
//! wiring are `tributary-app`'s.

pub mod access_log;
pub mod auth;
pub mod conditional;
pub mod connections;
pub mod control_characters;
pub mod data;
pub mod error;
pub mod fault;
pub mod feed;
pub mod health;
pub mod imports;
pub mod interface;
pub mod malformed;
pub mod mcp;
pub mod metrics;
pub mod openapi;
mod origin;
pub mod platform;
pub mod provider_calls;
pub mod provider_webhooks;
pub mod recurring;
pub mod request_id;
pub mod response_cache;
pub mod routes;
pub mod rules;
pub mod server;
pub mod simplefin;
pub mod spending;
pub mod state;
pub mod transaction_stream;
pub mod web;
pub mod webhooks;
mod wire;

pub use error::ApiError;
pub use state::AppState;
