//! Credentials: API keys, apps' client secrets and the OAuth 2
//! authorization server (codes, token pairs, portal sessions), the keyring
//! that seals provider credentials at rest, e-mailed sign-in codes and
//! browser sessions. Rules are functions over records and a clock;
//! persistence goes through `tributary-storage`.

pub mod api_keys;
pub mod cache;
pub mod dashboard;
pub mod developers;
pub mod keyring;
pub mod mcp;
pub mod oauth;
pub mod secret;
pub mod sign_in;
pub mod signed_in;
pub mod simplefin;
pub mod web_session;
