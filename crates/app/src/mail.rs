//! The configured mailer.

use crate::config::Config;
use std::sync::Arc;
use tributary_notify::mail::{DevOutbox, Mailer, SmtpMailer};

/// SMTP when configured, else the development outbox (the log).
pub fn mailer(config: &Config) -> anyhow::Result<Arc<dyn Mailer>> {
    Ok(match &config.smtp_url {
        Some(url) => Arc::new(
            SmtpMailer::new(&url.0, &config.mail_from)
                .map_err(|err| anyhow::anyhow!("TRIBUTARY_SMTP_URL: {err}"))?,
        ),
        None => {
            log::warn!(
                "TRIBUTARY_SMTP_URL is not set: sign-in codes and notices are written to this log, not mailed"
            );
            Arc::new(DevOutbox::default())
        }
    })
}
