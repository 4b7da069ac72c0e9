//! What a worker runs: syncs, and its chore of sending the webhooks and
//! mail notices that are due; and a worker on a thread of its own, for the
//! servers that embed one.

use crate::config::Config;
use std::sync::Arc;
use tributary_domain::clock::Clock;
use tributary_notify::deliver::Deliverer;
use tributary_notify::mail::Mailer;
use tributary_notify::notices::NoticeSender;
use tributary_providers::sync::SyncEngine;
use tributary_providers::worker::{Chore, StopSignal, Worker, worker_id};
use tributary_storage::Database;

/// The webhook sender the workers run, with the configured keyring.
pub fn deliverer(
    config: &Config,
    db: &Database,
    clock: Arc<dyn Clock>,
) -> anyhow::Result<Deliverer> {
    Ok(Deliverer::new(
        db.clone(),
        clock,
        Arc::new(config.keyring()?),
        &config.outbound_guard(),
    )?
    .with_lease(config.sync_policy.lease))
}

/// What the workers send besides syncing: the webhooks due, and the mail
/// notices due.
pub fn outbound_chore(deliverer: Deliverer, notices: NoticeSender) -> Chore {
    Box::new(move || {
        if let Err(err) = deliverer.run_due() {
            log::error!("sending webhooks failed: {err}");
        }
        if let Err(err) = notices.run_due() {
            log::error!("mailing notices failed: {err}");
        }
    })
}

/// The worker's chore with the configured keyring and mailer.
pub fn worker_chore(
    config: &Config,
    db: &Database,
    clock: Arc<dyn Clock>,
    mailer: Arc<dyn Mailer>,
) -> anyhow::Result<Chore> {
    Ok(outbound_chore(
        deliverer(config, db, clock.clone())?,
        NoticeSender::new(db.clone(), clock, mailer),
    ))
}

/// A worker running on its own thread, stopped and joined on drop.
#[derive(Debug)]
pub struct BackgroundWorker {
    stop: StopSignal,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl BackgroundWorker {
    /// Starts a worker named after `role` (the binary it runs in).
    pub fn start(
        engine: SyncEngine,
        chore: Chore,
        poll: std::time::Duration,
        role: &str,
    ) -> std::io::Result<Self> {
        let stop = StopSignal::default();
        let worker = Worker::new(engine, worker_id(role), poll).with_chore(chore);
        let signal = stop.clone();
        let thread = std::thread::Builder::new()
            .name("sync-worker".into())
            .spawn(move || worker.run(&signal))?;
        Ok(Self {
            stop,
            thread: Some(thread),
        })
    }
}

impl Drop for BackgroundWorker {
    fn drop(&mut self) {
        self.stop.stop();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
