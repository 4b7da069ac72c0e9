//! The unpaged transaction listing, streamed: existing clients ask for an
//! account's whole history in one response, which can be a million rows.
//! The rows are read in batches from one held read snapshot (so the list is
//! one consistent state, as if read at once) and each batch is written to
//! the client before the next is read: the first byte leaves after one
//! batch and memory stays at one batch, whatever the account holds.
//!
//! The shape is the contract's `{"transactions": [...], "total": N}`, with
//! `total` after the list (JSON objects are unordered; it is counted as the
//! rows go out). A failure after the first byte cannot change the status
//! any more: the connection is closed mid-body, which every client reports
//! as an incomplete response rather than taking a shorter list for whole.

use crate::wire;
use actix_web::web::{self, Bytes};
use futures_util::stream::{self, Stream, StreamExt as _};
use std::io::Write as _;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tributary_domain::access::Viewer;
use tributary_domain::ids::AccountId;
use tributary_storage::read::{self, TransactionFilter, TransactionPosition};
use tributary_storage::{HeldSnapshot, StorageError};

/// Rows read and sent at a time: about 75 KB of JSON.
const BATCH_ROWS: i64 = 500;

/// How many listings may stream at once. Each holds a pooled connection
/// for as long as its client takes to read, and its batches wait for a
/// blocking thread like any request; were every connection held by a
/// stream, the threads would all wait for a connection and the streams for
/// a thread. So streams get a quarter of the pool (at least one), and
/// requests that answer at once always have the rest.
#[derive(Debug, Clone)]
pub struct StreamSlots(Arc<Semaphore>);

impl StreamSlots {
    pub fn for_pool(connections: u32) -> Self {
        let slots = usize::try_from(connections / 4).unwrap_or(1).max(1);
        Self(Arc::new(Semaphore::new(slots)))
    }

    /// A slot, if one is free now.
    pub fn try_take(&self) -> Option<OwnedSemaphorePermit> {
        self.0.clone().try_acquire_owned().ok()
    }

    /// A slot, waiting up to `wait` for one (then the database counts as
    /// busy: 503 with Retry-After, as when no connection is free).
    pub async fn take(&self, wait: Duration) -> Result<OwnedSemaphorePermit, StorageError> {
        let busy = || StorageError::Unavailable("every listing stream slot is in use".into());
        tokio::time::timeout(wait, self.0.clone().acquire_owned())
            .await
            .map_err(|_| busy())?
            .map_err(|_| busy())
    }
}

/// Where a streamed listing is: rows after `after` come next.
#[derive(Debug)]
pub struct Listing {
    snapshot: HeldSnapshot,
    /// Held from the second batch on (see [`StreamSlots`]); given back
    /// when the listing ends or is dropped.
    slot: Option<OwnedSemaphorePermit>,
    /// Who reads: what the rows show of other accounts depends on it.
    viewer: Viewer,
    account_id: AccountId,
    filter: TransactionFilter,
    after: Option<TransactionPosition>,
    sent: i64,
}

/// What one batch produced: its bytes, and the listing when rows remain.
#[derive(Debug)]
pub struct Batch {
    pub bytes: Bytes,
    pub rest: Option<Listing>,
}

impl Listing {
    /// A listing of `account_id`'s transactions read from `snapshot` (in
    /// which the caller has already checked the viewer may see them).
    pub fn new(
        snapshot: HeldSnapshot,
        viewer: Viewer,
        account_id: AccountId,
        filter: TransactionFilter,
    ) -> Self {
        Self {
            snapshot,
            slot: None,
            viewer,
            account_id,
            filter,
            after: None,
            sent: 0,
        }
    }

    /// Whether the listing may go on past its first batch (which ended
    /// without reading everything): with a stream slot, it does; without,
    /// its snapshot ends and the caller waits for a slot and starts again.
    pub fn continue_with(
        mut self,
        slot: Option<OwnedSemaphorePermit>,
    ) -> Result<Option<Self>, StorageError> {
        match slot {
            Some(slot) => {
                self.slot = Some(slot);
                Ok(Some(self))
            }
            None => {
                self.snapshot.finish()?;
                Ok(None)
            }
        }
    }

    /// Reads and writes the next batch (the first one opens the object, the
    /// last one closes it and ends the snapshot). Blocking.
    pub fn next_batch(mut self) -> Result<Batch, StorageError> {
        let rows = read::list_transactions(
            self.snapshot.conn(),
            self.account_id,
            &self.filter,
            Some(BATCH_ROWS),
            self.after,
        )?;
        let (read, last) = (rows.len(), rows.last().map(|r| (r.date, r.id)));
        let mut out = Vec::with_capacity(read * 160 + 32);
        if self.after.is_none() {
            out.extend_from_slice(b"{\"transactions\":[");
        }
        for row in rows {
            if self.sent > 0 {
                out.push(b',');
            }
            let row = row.seen_by(&self.viewer);
            serde_json::to_writer(&mut out, &wire::Transaction(&row))
                .map_err(|err| StorageError::Corrupt(format!("writing a transaction: {err}")))?;
            self.sent += 1;
        }
        if (read as i64) < BATCH_ROWS {
            // Writing to a Vec cannot fail.
            let _ = write!(out, "],\"total\":{}}}", self.sent);
            self.snapshot.finish()?;
            return Ok(Batch {
                bytes: out.into(),
                rest: None,
            });
        }
        self.after = last.map(|(date, id)| TransactionPosition { date, id });
        Ok(Batch {
            bytes: out.into(),
            rest: Some(self),
        })
    }
}

/// The body: `first` (already read, so that a failure before any byte got
/// the error envelope), then every further batch, each read off the async
/// runtime when the client has taken the one before.
pub fn body(first: Batch) -> impl Stream<Item = Result<Bytes, StorageError>> {
    let rest = stream::unfold(first.rest, |listing| async move {
        let listing = listing?;
        let read = web::block(move || listing.next_batch())
            .await
            .map_err(|err| StorageError::Unavailable(err.to_string()))
            .and_then(|read| read);
        match read {
            Ok(batch) => Some((Ok(batch.bytes), batch.rest)),
            Err(err) => {
                log::error!("a streamed transaction listing stopped: {err}");
                Some((Err(err), None))
            }
        }
    });
    stream::once(async move { Ok(first.bytes) }).chain(rest)
}
