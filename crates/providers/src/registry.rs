//! Which connector serves which provider.

use crate::catalog::{self, Configured};
use crate::connector::Connector;
use crate::description::SetupError;
use std::collections::HashMap;
use std::sync::Arc;
use tributary_domain::model::Provider;
use tributary_outbound::Guard;

#[derive(Debug, Clone, Default)]
pub struct Registry {
    connectors: HashMap<Provider, Arc<dyn Connector>>,
}

impl Registry {
    /// Builds every configured connector (blocking: they make HTTP
    /// clients); those whose requests a user aims (SimpleFIN) go through
    /// `outbound`.
    pub fn build(configured: &[Configured], outbound: &Guard) -> Result<Self, SetupError> {
        let mut registry = Registry::default();
        for connector in configured {
            registry.register(connector.build(outbound)?);
        }
        Ok(registry)
    }

    /// Every connector that needs no configuration (the sandbox, SimpleFIN,
    /// and those whose people bring their own app's tokens).
    pub fn with_defaults(outbound: &Guard) -> Self {
        let configured = catalog::configure(&|_| None).unwrap_or_default();
        Registry::build(&configured, outbound).unwrap_or_else(|err| {
            log::error!("a connector that needs no configuration did not start: {err}");
            Registry::default()
        })
    }

    pub fn register(&mut self, connector: Arc<dyn Connector>) {
        self.connectors.insert(connector.provider(), connector);
    }

    pub fn get(&self, provider: Provider) -> Option<&Arc<dyn Connector>> {
        self.connectors.get(&provider)
    }
}
