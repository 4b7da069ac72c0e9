//! Which connector serves which provider.

use crate::connector::Connector;
use crate::sandbox::SandboxConnector;
use crate::simplefin::SimpleFinConnector;
use std::time::Duration;
use tributary_outbound::Guard;

/// How long a provider may take to answer one request.
pub const PROVIDER_TIMEOUT: Duration = Duration::from_secs(60);
use std::collections::HashMap;
use std::sync::Arc;
use tributary_domain::model::Provider;

#[derive(Debug, Clone, Default)]
pub struct Registry {
    connectors: HashMap<Provider, Arc<dyn Connector>>,
}

impl Registry {
    /// Every connector that needs no configuration; those whose requests a
    /// user aims (SimpleFIN) go through `outbound`.
    pub fn with_defaults(outbound: &Guard) -> Self {
        let mut registry = Registry::default();
        registry.register(Arc::new(SandboxConnector::default()));
        match SimpleFinConnector::new(PROVIDER_TIMEOUT, outbound) {
            Ok(simplefin) => registry.register(Arc::new(simplefin)),
            Err(err) => {
                log::error!("SimpleFIN is unavailable: its HTTP client did not start: {err}")
            }
        }
        registry
    }

    pub fn register(&mut self, connector: Arc<dyn Connector>) {
        self.connectors.insert(connector.provider(), connector);
    }

    pub fn get(&self, provider: Provider) -> Option<&Arc<dyn Connector>> {
        self.connectors.get(&provider)
    }
}
