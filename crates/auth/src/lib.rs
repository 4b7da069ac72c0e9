//! Credentials: API keys now; client credentials, the OAuth 2 authorization
//! server and secret encryption at rest join here. Rules are pure functions
//! over records and a clock; persistence goes through `tributary-storage`.

pub mod api_keys;
pub mod keyring;
pub mod oauth;
pub mod secret;
pub mod sign_in;
pub mod web_session;
