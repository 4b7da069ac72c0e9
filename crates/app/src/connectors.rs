//! The registry of connectors and the sync engine over it.

use crate::config::Config;
use std::sync::Arc;
use tributary_domain::clock::Clock;
use tributary_outbound::Guard;
use tributary_providers::Registry;
use tributary_providers::sync::SyncEngine;
use tributary_storage::Database;

/// The sync engine as configured: every provider's connector, the credential
/// keyring, the sync policy.
pub fn sync_engine(
    config: &Config,
    db: &Database,
    clock: Arc<dyn Clock>,
) -> anyhow::Result<SyncEngine> {
    engine_over(
        config,
        db,
        clock,
        providers(config, &config.outbound_guard())?,
    )
}

/// A sync engine over `registry` with the configured keyring and policy.
pub fn engine_over(
    config: &Config,
    db: &Database,
    clock: Arc<dyn Clock>,
    registry: Registry,
) -> anyhow::Result<SyncEngine> {
    let keyring = config.keyring()?;
    Ok(
        SyncEngine::with_policy(db.clone(), registry, clock, config.sync_policy.clone())
            .with_sealer(Arc::new(keyring)),
    )
}

/// Every connector the configuration enables, built (blocking: they make
/// HTTP clients). Those whose addresses users give (SimpleFIN) reach only
/// what `outbound` allows; the others' API roots are the operator's to set.
pub fn providers(config: &Config, outbound: &Guard) -> anyhow::Result<Registry> {
    Ok(Registry::build(&config.connectors, outbound)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tributary_providers::{gocardless, sandbox};

    #[test]
    fn gocardless_connector_is_registered_only_when_configured() {
        let unconfigured = Config::from_lookup(|_| None).unwrap();
        assert!(
            providers(&unconfigured, &unconfigured.outbound_guard())
                .unwrap()
                .get(gocardless::PROVIDER)
                .is_none()
        );

        let configured = Config::from_lookup(|name| match name {
            "TRIBUTARY_GOCARDLESS_SECRET_ID" => Some("id".to_owned()),
            "TRIBUTARY_GOCARDLESS_SECRET_KEY" => Some("key".to_owned()),
            _ => None,
        })
        .unwrap();
        let registry = providers(&configured, &configured.outbound_guard()).unwrap();
        assert!(registry.get(gocardless::PROVIDER).is_some());
        assert!(registry.get(sandbox::PROVIDER).is_some());
    }
}
