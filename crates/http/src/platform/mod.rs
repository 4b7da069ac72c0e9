//! The Platform interface, under `/api/platform`: integrators' apps manage
//! their users (HTTP Basic), exchange OAuth grants for tokens, and read each
//! user's data with bearer tokens through the same handlers as the Personal
//! interface.

pub(crate) mod metadata;
pub(crate) mod oauth;
pub(crate) mod portal;
pub(crate) mod users;

use crate::routes::Operation;

/// At the server's root: the OAuth metadata (RFC 8414).
pub fn root_operations() -> Vec<Operation> {
    vec![Operation::new::<metadata::__path_metadata, _, _>(
        metadata::metadata,
    )]
}

/// Under `/api/platform`: the authorization (a browser page), token and
/// revocation endpoints.
pub fn oauth_operations() -> Vec<Operation> {
    vec![
        crate::web::authorize::operation(),
        Operation::new::<oauth::__path_token, _, _>(oauth::token),
        Operation::new::<oauth::__path_revoke, _, _>(oauth::revoke),
    ]
}

/// Under `/api/platform/v1`: the app's users, and portal links.
pub fn user_operations() -> Vec<Operation> {
    vec![
        Operation::new::<users::__path_create_or_get, _, _>(users::create_or_get),
        Operation::new::<users::__path_update, _, _>(users::update),
        Operation::new::<users::__path_delete, _, _>(users::delete),
        Operation::new::<portal::__path_create, _, _>(portal::create),
    ]
}
