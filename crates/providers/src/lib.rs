//! Providers: the [`Connector`] trait every data source implements, the
//! sources themselves (one module each), and the sync engine that runs a
//! connector and hands its snapshot to storage.

pub mod akahu;
pub mod connector;
pub mod enablebanking;
pub mod gocardless;
pub mod import;
pub mod payments;
pub mod plaid;
mod provider_http;
mod psd2;
pub mod registry;
pub mod sandbox;
pub mod simplefin;
pub mod snaptrade;
pub mod sync;
pub mod worker;

pub use connector::{
    AuthorizationReturn, ConnectRequest, Connector, ConnectorError, ConsentEnd, FetchContext,
    InstitutionChoice, Prepared,
};
pub use registry::Registry;
