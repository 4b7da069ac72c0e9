//! SQLite writers of one process take turns, in the order they asked
//! (docs/architecture.md, "SQLite writers take turns").
//!
//! SQLite lets one connection write at a time. A writer that finds the
//! lock taken sleeps and tries again until its busy timeout, and nothing
//! orders the sleepers: a thread that commits and begins its next write at
//! once can keep a waiting one out for longer than the timeout. Two sync
//! workers on one file did exactly that, and a sync failed with "database
//! is locked" although the database was only busy with the other worker.
//!
//! So within a process every SQLite write (a writing transaction from its
//! `BEGIN` to its end, or one write outside a transaction) first waits
//! here for its turn, first come first served; the connection's
//! instrumentation ([`crate::freshness`]'s write watch) takes and gives
//! back the turn, so no writer can skip the queue. Other processes on the
//! same file still meet SQLite's lock and busy timeout. A writer that has
//! waited its whole patience (the busy timeout) goes on to SQLite's lock
//! anyway, and a turn held longer than the patience is taken over by the
//! next writer: a turn that is never given back (a transaction SQLite
//! ended by itself, on a full disk, without diesel saying so) costs one
//! wait, not one per write. PostgreSQL locks rows, not the database: it
//! takes no turns.

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// One SQLite database's queue of writers in this process.
#[derive(Debug)]
pub(crate) struct WriteTurns {
    queue: Mutex<Queue>,
    moved: Condvar,
    /// How long a writer waits for its turn before it goes on without one.
    patience: Duration,
}

#[derive(Debug, Default)]
struct Queue {
    /// The ticket the next writer to ask gets.
    next_ticket: u64,
    /// Tickets of writers waiting, oldest first.
    waiting: VecDeque<u64>,
    /// The writer holding the turn: its ticket, and since when.
    holder: Option<(u64, Instant)>,
}

impl Queue {
    /// When a held turn may be taken over (its holder's patience is over);
    /// `None` when nobody holds it.
    fn free_at(&self, patience: Duration) -> Option<Instant> {
        self.holder.map(|(_, since)| since + patience)
    }
}

/// The turn to write; given back when dropped.
#[derive(Debug)]
pub(crate) struct WriteTurn {
    turns: Arc<WriteTurns>,
    ticket: u64,
}

impl WriteTurns {
    pub(crate) fn new(patience: Duration) -> Arc<Self> {
        Arc::new(Self {
            queue: Mutex::default(),
            moved: Condvar::new(),
            patience,
        })
    }

    fn queue(&self) -> MutexGuard<'_, Queue> {
        // The queue's invariants hold between statements; a panic elsewhere
        // while it was locked leaves it usable.
        self.queue.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Waits until every writer that asked earlier has had its turn and
    /// the turn is free, then takes it; `None` after waiting the whole
    /// patience.
    pub(crate) fn take(self: &Arc<Self>) -> Option<WriteTurn> {
        let deadline = Instant::now() + self.patience;
        let mut queue = self.queue();
        let ticket = queue.next_ticket;
        queue.next_ticket += 1;
        queue.waiting.push_back(ticket);
        loop {
            let now = Instant::now();
            let free_at = queue.free_at(self.patience);
            if free_at.is_none_or(|at| at <= now) && queue.waiting.front() == Some(&ticket) {
                queue.waiting.pop_front();
                queue.holder = Some((ticket, now));
                return Some(WriteTurn {
                    turns: self.clone(),
                    ticket,
                });
            }
            if now >= deadline {
                queue.waiting.retain(|waiting| *waiting != ticket);
                // The writer behind this one may be next now.
                self.moved.notify_all();
                return None;
            }
            // Woken when the turn is given back or the queue moves; else
            // when the holder's patience or this writer's is over.
            let until = free_at
                .filter(|at| *at > now)
                .map_or(deadline, |at| at.min(deadline));
            queue = self
                .moved
                .wait_timeout(queue, until - now)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }
}

impl Drop for WriteTurn {
    fn drop(&mut self) {
        let mut queue = self.turns.queue();
        // A turn taken over (held past its patience) is no longer this
        // writer's to give back.
        if queue
            .holder
            .is_some_and(|(ticket, _)| ticket == self.ticket)
        {
            queue.holder = None;
            self.turns.moved.notify_all();
        }
    }
}

/// A connection's part in the queue: takes the turn before a write and
/// gives it back when the write (or its transaction) has ended.
#[derive(Debug)]
pub(crate) struct TurnTaker {
    turns: Arc<WriteTurns>,
    held: Option<WriteTurn>,
}

impl TurnTaker {
    pub(crate) fn new(turns: Arc<WriteTurns>) -> Self {
        Self { turns, held: None }
    }

    /// Before a statement outside a transaction, or a transaction's
    /// `BEGIN`, runs: one that writes, or begins a transaction that may,
    /// waits for its turn. Nothing of this connection holds the turn
    /// rightly at that point: one still held is given back first (its
    /// transaction ended without diesel reporting the end).
    pub(crate) fn before(&mut self, writes: bool) {
        self.held = None;
        if writes {
            self.held = self.turns.take();
        }
    }

    /// After a statement has finished: outside a transaction the turn
    /// goes back (the write, or the transaction, has ended).
    pub(crate) fn after(&mut self, in_transaction: bool) {
        if !in_transaction {
            self.held = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    #[test]
    fn writers_get_the_turn_in_the_order_they_asked() {
        let turns = WriteTurns::new(Duration::from_secs(30));
        let first = turns.take().unwrap();
        let (asked, order) = mpsc::channel();
        std::thread::scope(|scope| {
            let mut waiting = Vec::new();
            for writer in 0..4 {
                let turns = &turns;
                let asked = asked.clone();
                let (queued, is_queued) = mpsc::channel();
                waiting.push(scope.spawn(move || {
                    // Queue in order: each writer asks only after the one
                    // before it is waiting.
                    queued.send(()).unwrap();
                    let turn = turns.take().unwrap();
                    asked.send(writer).unwrap();
                    drop(turn);
                }));
                is_queued.recv().unwrap();
                while turns.queue().waiting.len() < writer + 1 {
                    std::thread::yield_now();
                }
            }
            drop(first);
            for handle in waiting {
                handle.join().unwrap();
            }
        });
        drop(asked);
        assert_eq!(order.iter().collect::<Vec<_>>(), [0, 1, 2, 3]);
    }

    #[test]
    fn a_turn_held_past_the_patience_is_taken_over_once() {
        let turns = WriteTurns::new(Duration::from_millis(20));
        let forgotten = turns.take().unwrap();
        // The next writer waits out the holder's patience, then takes over.
        let started = Instant::now();
        let next = turns.take().expect("taken over");
        assert!(started.elapsed() >= Duration::from_millis(15));
        assert!(turns.queue().waiting.is_empty());
        // The forgotten turn, given back late, does not free the new one.
        drop(forgotten);
        assert!(turns.queue().holder.is_some());
        drop(next);
        assert!(turns.queue().holder.is_none(), "the turn was given back");
    }
}
