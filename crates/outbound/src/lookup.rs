//! Name resolution that never holds a caller's thread. The system resolver
//! (`getaddrinfo`) blocks, and a name whose DNS never answers blocks it for
//! as long as the resolver's own retries last; run on an HTTP worker or on
//! the threads that do database work, two such names stalled every request
//! of every user. So each lookup runs on a thread of its own, at most
//! [`MAX_LOOKUPS`] at once, and the caller waits for it asynchronously, for
//! at most the guard's timeout. A lookup that outlives its caller ends on
//! its own thread and is dropped.

use std::fmt::Debug;
use std::future::Future;
use std::io;
use std::net::{SocketAddr, ToSocketAddrs};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Lookups running at once in one process; past it a lookup is refused
/// at once rather than queued behind names that do not answer.
pub const MAX_LOOKUPS: usize = 32;

/// The addresses a name resolves to (ports as asked).
pub type LookupFuture = Pin<Box<dyn Future<Output = io::Result<Vec<SocketAddr>>> + Send>>;

/// Resolves names. The system's resolver in production; tests bring one
/// that never answers, to show that nothing waits for it.
pub trait Lookup: Send + Sync + Debug {
    fn lookup(&self, host: &str, port: u16) -> LookupFuture;
}

/// The system resolver, on bounded threads of its own.
#[derive(Debug, Default)]
pub struct SystemLookup {
    running: Arc<AtomicUsize>,
}

impl Lookup for SystemLookup {
    fn lookup(&self, host: &str, port: u16) -> LookupFuture {
        let running = self.running.clone();
        if running.fetch_add(1, Ordering::SeqCst) >= MAX_LOOKUPS {
            running.fetch_sub(1, Ordering::SeqCst);
            return Box::pin(std::future::ready(Err(io::Error::new(
                io::ErrorKind::WouldBlock,
                "too many name lookups at once",
            ))));
        }
        let host = host.to_owned();
        let (sender, receiver) = tokio::sync::oneshot::channel();
        let spawned = std::thread::Builder::new()
            .name("outbound-lookup".into())
            .spawn(move || {
                let found = (host.as_str(), port)
                    .to_socket_addrs()
                    .map(Iterator::collect::<Vec<_>>);
                running.fetch_sub(1, Ordering::SeqCst);
                // The caller may have stopped waiting; then nobody reads it.
                let _ = sender.send(found);
            });
        match spawned {
            Ok(_) => Box::pin(async move {
                receiver
                    .await
                    .unwrap_or_else(|_| Err(io::Error::other("the lookup thread ended")))
            }),
            Err(err) => {
                self.running.fetch_sub(1, Ordering::SeqCst);
                Box::pin(std::future::ready(Err(err)))
            }
        }
    }
}
