//! The configured payment processor.

use crate::config::{Config, PaymentsSettings};
use std::sync::Arc;
use tributary_providers::payments::{PaymentProcessor, StripeProcessor, TestProcessor};
use tributary_storage::Database;

/// The configured payment processor, if any.
pub fn payments(config: &Config, db: &Database) -> Option<Arc<dyn PaymentProcessor>> {
    match &config.payments {
        PaymentsSettings::None => {
            log::warn!(
                "TRIBUTARY_PAYMENTS is not set: users of apps whose users pay are told \"Payments are not available\" and cannot connect banks"
            );
            None
        }
        PaymentsSettings::Test => {
            log::warn!("TRIBUTARY_PAYMENTS=test: checkouts accept the test card and take no money");
            Some(Arc::new(TestProcessor::new(db.clone())))
        }
        PaymentsSettings::Stripe {
            api_base,
            secret_key,
            price_id,
        } => Some(Arc::new(StripeProcessor {
            api_base: api_base.clone(),
            secret_key: secret_key.0.clone(),
            price_id: price_id.clone(),
            timeout: tributary_providers::connector::PROVIDER_TIMEOUT,
        })),
    }
}
