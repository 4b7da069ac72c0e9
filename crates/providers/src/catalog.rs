//! The connectors this build has, by their descriptions, and what is known
//! of every provider id (the statement formats' too).

use crate::connector::Connector;
use crate::description::{Constructor, Description, Environment, SettingError, SetupError};
use std::fmt;
use std::sync::Arc;
use tributary_domain::model::Provider;
use tributary_outbound::Guard;

/// Every connector of this build, in the order the bank list shows them.
pub const CATALOG: &[&Description] = crate::CONNECTORS;

/// The description of `provider`'s connector; `None` for the statement
/// formats and for ids no connector of this build serves.
pub fn describe(provider: Provider) -> Option<&'static Description> {
    CATALOG.iter().copied().find(|d| d.provider == provider)
}

/// Whether accounts of `provider` may have investment holdings: its
/// connector says so, or it is a statement format that carries positions
/// (OFX investment statements, through the generic upload too).
pub fn reports_holdings(provider: Provider) -> bool {
    match describe(provider) {
        Some(description) => description.reports.holdings,
        None => provider.statement_holdings().unwrap_or(false),
    }
}

/// Whether accounts of `provider` may have investment activity (buys,
/// sells, income as such): its connector says so, or it is a statement
/// format that carries it (OFX investment statements, through the generic
/// upload too).
pub fn reports_investment_activity(provider: Provider) -> bool {
    match describe(provider) {
        Some(description) => description.reports.investment_activity,
        None => provider.statement_holdings().unwrap_or(false),
    }
}

/// A connector its settings configure, not built yet.
#[derive(Clone)]
pub struct Configured {
    pub description: &'static Description,
    constructor: Constructor,
}

impl fmt::Debug for Configured {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The constructor holds the provider's secrets.
        f.debug_struct("Configured")
            .field("provider", &self.description.provider)
            .finish_non_exhaustive()
    }
}

impl Configured {
    /// Builds the connector (blocking: it may make an HTTP client).
    pub fn build(&self, outbound: &Guard) -> Result<Arc<dyn Connector>, SetupError> {
        (self.constructor)(outbound)
    }
}

/// Every connector of the catalog that `lookup`'s environment configures
/// (and those that need no configuration), in the catalog's order; the
/// first setting that cannot be used, named.
pub fn configure(lookup: &dyn Fn(&str) -> Option<String>) -> Result<Vec<Configured>, SettingError> {
    let environment = Environment::new(lookup);
    let mut configured = Vec::new();
    for description in CATALOG {
        if let Some(constructor) = (description.configure)(&environment)? {
            configured.push(Configured {
                description,
                constructor,
            });
        }
    }
    Ok(configured)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn every_connector_has_its_own_id_name_and_flags() {
        let ids: HashSet<_> = CATALOG.iter().map(|d| d.provider).collect();
        assert_eq!(ids.len(), CATALOG.len(), "two connectors share an id");
        for description in CATALOG {
            assert!(description.provider.is_synced(), "{}", description.provider);
            assert!(!description.name.is_empty());
            let mut flags = HashSet::new();
            for field in description.connect.fields {
                if let Some(flag) = field.flag {
                    assert!(
                        flags.insert(flag),
                        "{}: --{flag} twice",
                        description.provider
                    );
                    assert!(!["user", "redirect"].contains(&flag), "{flag} is taken");
                }
            }
        }
    }

    #[test]
    fn without_settings_the_connectors_that_need_none_are_configured() {
        let configured = configure(&|_| None).unwrap();
        let ids: Vec<_> = configured.iter().map(|c| c.description.provider).collect();
        assert_eq!(
            ids,
            [
                crate::sandbox::PROVIDER,
                crate::simplefin::PROVIDER,
                crate::akahu::PROVIDER,
                crate::up::PROVIDER,
                crate::starling::PROVIDER,
                crate::ibkr::PROVIDER,
                crate::bunq::PROVIDER,
                crate::pluggy::PROVIDER
            ]
        );
    }

    #[test]
    fn a_half_given_pair_of_settings_is_named() {
        let err =
            configure(&|name| (name == "TRIBUTARY_GOCARDLESS_SECRET_ID").then(|| "id".to_owned()))
                .unwrap_err();
        assert_eq!(err.name, "TRIBUTARY_GOCARDLESS_SECRET_ID");
        let err = configure(&|name| match name {
            "TRIBUTARY_PLAID_CLIENT_ID" | "TRIBUTARY_PLAID_SECRET" => Some("x".to_owned()),
            "TRIBUTARY_PLAID_COUNTRIES" => Some("USA".to_owned()),
            _ => None,
        })
        .unwrap_err();
        assert_eq!(err.name, "TRIBUTARY_PLAID_COUNTRIES");
        assert_eq!(err.value.as_deref(), Some("USA"));
    }

    #[test]
    fn holdings_are_known_for_connectors_and_statement_formats() {
        assert!(reports_holdings(Provider::OFX));
        assert!(!reports_holdings(Provider::CAMT));
        for description in CATALOG {
            assert_eq!(
                reports_holdings(description.provider),
                description.reports.holdings
            );
        }
        assert!(!reports_holdings(Provider::new("unknown")));
    }
}
