//! What several commands share: finding a user, reading a secret given as
//! `-`, printing times, and reporting a sync.

use crate::terminal::shown;
use anyhow::{Context as _, bail};
use tributary_domain::email::normalize_email;
use tributary_domain::ids::ConnectionId;
use tributary_providers::sync::{SyncError, SyncOutcome};
use tributary_storage::users::UserRecord;
use tributary_storage::{Database, users};

/// The argument itself, or standard input's first line for "-".
pub(crate) fn read_secret_argument(argument: &str) -> anyhow::Result<String> {
    if argument != "-" {
        return Ok(argument.to_owned());
    }
    let mut line = String::new();
    std::io::stdin()
        .read_line(&mut line)
        .context("reading the setup token from standard input")?;
    Ok(line.trim().to_owned())
}

pub(crate) fn find_user(db: &Database, email: &str) -> anyhow::Result<UserRecord> {
    let email = normalize_email(email)?;
    users::find_personal_user(&mut *db.conn()?, &email)?.with_context(|| {
        format!("no user {email}; create it with `tributary users create {email}`")
    })
}

/// `url` as the base of links this server answers, without a trailing `/`.
pub(crate) fn public_base(url: &str) -> anyhow::Result<&str> {
    let base = url.trim().trim_end_matches('/');
    if !(base.starts_with("https://") || base.starts_with("http://")) {
        bail!("--url must be an http(s) URL, got `{base}`");
    }
    Ok(base)
}

/// A time in a table: minutes, UTC; `-` for none.
pub(crate) fn when(time: Option<chrono::NaiveDateTime>) -> String {
    time.map_or_else(
        || "-".to_owned(),
        |t| t.format("%Y-%m-%d %H:%M").to_string(),
    )
}

/// Prints how one sync went; an error when it failed. A sync that could
/// not start (no such connection) is only returned, not printed.
pub(crate) fn report(
    connection_id: ConnectionId,
    result: Result<SyncOutcome, SyncError>,
) -> anyhow::Result<()> {
    match result {
        Ok(SyncOutcome::Synced { summary: s, .. }) => {
            println!(
                "Connection {connection_id}: synced {} accounts ({} new); transactions {} new, {} updated ({} pending now posted), {} removed, {} unchanged; {} holdings.",
                s.accounts_seen,
                s.accounts_created,
                s.transactions_added,
                s.transactions_updated,
                s.posted_from_pending,
                s.transactions_removed,
                s.transactions_unchanged,
                s.holdings_replaced
            );
            Ok(())
        }
        Ok(SyncOutcome::ProviderFailed {
            error, retry_at, ..
        }) => {
            let retry = retry_at.map_or_else(String::new, |at| {
                format!(
                    " (a worker retries at {} UTC)",
                    at.format("%Y-%m-%d %H:%M:%S")
                )
            });
            println!(
                "Connection {connection_id}: failed, now {}: {}{retry}",
                error.connection_status(),
                shown(&error.to_string())
            );
            bail!("connection {connection_id} failed to sync")
        }
        Ok(SyncOutcome::Deferred { until, .. }) => {
            println!(
                "Connection {connection_id}: deferred to {until} UTC (held back by the provider's limits or the connection's daily quota); a worker runs it then."
            );
            Ok(())
        }
        Ok(SyncOutcome::LeaseLost { job_id }) => {
            println!(
                "Connection {connection_id}: job {job_id} was taken over by another worker; nothing stored here."
            );
            bail!("connection {connection_id}: sync taken over")
        }
        Ok(SyncOutcome::GaveUp { reason, .. }) => {
            println!(
                "Connection {connection_id}: failed, now ERROR: {}",
                shown(&reason.to_string())
            );
            bail!("connection {connection_id} failed to sync")
        }
        // Not printed here: the caller says it (once).
        Err(err) => Err(anyhow::Error::from(err).context(format!("connection {connection_id}"))),
    }
}
