//! Providers: the [`Connector`] trait every data source implements, the
//! sources themselves (one module each, each with its [`Description`]), and
//! the sync engine that runs a connector and hands its snapshot to storage.

mod bank_day;
pub mod catalog;
pub mod connector;
pub mod description;
pub mod import;
mod mask;
pub mod payments;
mod personal_token;
mod provider_http;
pub mod provider_webhook;
mod psd2;
pub mod registry;
pub mod sync;
pub mod worker;

/// Declares each connector's module and lists its description in
/// [`catalog::CATALOG`], in the order the bank list shows them.
macro_rules! connectors {
    ($($module:ident),+ $(,)?) => {
        $(pub mod $module;)+
        /// Every connector of this build.
        pub(crate) const CONNECTORS: &[&description::Description] = &[$(&$module::DESCRIPTION),+];
    };
}

// Adding a provider: its module, and its line here (docs/architecture.md,
// "Adding a provider").
connectors! {
    sandbox,
    simplefin,
    gocardless,
    enablebanking,
    plaid,
    snaptrade,
    akahu,
    up,
    starling,
    ibkr,
    truelayer,
    bunq,
    teller,
    pluggy,
}

pub use connector::{
    AuthorizationReturn, ConnectRequest, ConnectWidget, Connector, ConnectorError, ConsentEnd,
    FetchContext, InstitutionChoice, Prepared,
};
pub use description::Description;
pub use registry::Registry;
