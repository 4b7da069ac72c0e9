//! The registry of connectors and the sync engine over it.

use crate::config::Config;
use std::sync::Arc;
use tributary_domain::clock::Clock;
use tributary_outbound::Guard;
use tributary_providers::Registry;
use tributary_providers::akahu::AkahuConnector;
use tributary_providers::enablebanking::EnableBankingConnector;
use tributary_providers::gocardless::GoCardlessConnector;
use tributary_providers::plaid::PlaidConnector;
use tributary_providers::snaptrade::SnapTradeConnector;
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

/// Every provider's connector: the built-in ones, Akahu (its personal apps
/// need no configuration), and GoCardless, Enable Banking, Plaid and
/// SnapTrade when their credentials are configured. Those whose addresses
/// users give (SimpleFIN) reach only what `outbound` allows; the others'
/// API roots are the operator's to set.
pub fn providers(config: &Config, outbound: &Guard) -> anyhow::Result<Registry> {
    let mut registry = Registry::with_defaults(outbound);
    if let Some(gocardless) = &config.gocardless {
        registry.register(Arc::new(GoCardlessConnector::new(
            gocardless.connector_config(),
        )?));
    }
    if let Some(enablebanking) = &config.enablebanking {
        registry.register(Arc::new(
            EnableBankingConnector::new(enablebanking.connector_config()?)
                .map_err(|err| anyhow::anyhow!("TRIBUTARY_ENABLEBANKING_KEY_FILE: {err}"))?,
        ));
    }
    if let Some(plaid) = &config.plaid {
        registry.register(Arc::new(PlaidConnector::new(plaid.connector_config())?));
    }
    registry.register(Arc::new(AkahuConnector::new(
        config.akahu.connector_config(),
    )?));
    if let Some(snaptrade) = &config.snaptrade {
        registry.register(Arc::new(SnapTradeConnector::new(
            snaptrade.connector_config(),
        )?));
    }
    Ok(registry)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tributary_domain::model::Provider;

    #[test]
    fn gocardless_connector_is_registered_only_when_configured() {
        let unconfigured = Config::from_lookup(|_| None).unwrap();
        assert!(
            providers(&unconfigured, &unconfigured.outbound_guard())
                .unwrap()
                .get(Provider::GoCardless)
                .is_none()
        );

        let configured = Config::from_lookup(|name| match name {
            "TRIBUTARY_GOCARDLESS_SECRET_ID" => Some("id".to_owned()),
            "TRIBUTARY_GOCARDLESS_SECRET_KEY" => Some("key".to_owned()),
            _ => None,
        })
        .unwrap();
        let registry = providers(&configured, &configured.outbound_guard()).unwrap();
        assert!(registry.get(Provider::GoCardless).is_some());
        assert!(registry.get(Provider::Sandbox).is_some());
    }
}
