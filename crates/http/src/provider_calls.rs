//! Where request handlers wait on providers. A provider's first answer
//! (SimpleFIN's claim, a bank's list, a code exchanged) may take up to the
//! providers' 60-second timeout. On the handlers' blocking pool, which is
//! as small as the database pool because it does the database work, eight
//! connects to a claim URL that never answered held every thread of it, and
//! every user's reads waited. So provider calls run on threads of their
//! own: at most [`MAX_RUNNING`] at once in a process, and at most
//! [`PER_USER`] for one user; past either, the request is answered at once
//! (429 for the user, 503 for the server) instead of queued.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tributary_domain::ids::UserId;

/// Provider calls running at once in one process.
pub const MAX_RUNNING: usize = 32;
/// Provider calls one user may have running at once (connecting two banks
/// in two tabs is fine; a script hammering connects is not).
pub const PER_USER: usize = 2;
/// What a busy answer asks the client to wait, in seconds.
pub const RETRY_AFTER_SECONDS: u64 = 10;

/// Why a provider call did not start.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Busy {
    #[error("this user already has {PER_USER} provider calls running")]
    User,
    #[error("{MAX_RUNNING} provider calls are running")]
    Server,
}

/// The threads provider calls run on. Cheap to clone.
#[derive(Debug, Clone)]
pub struct ProviderCalls {
    running: Arc<Semaphore>,
    per_user: Arc<Mutex<HashMap<UserId, usize>>>,
}

impl Default for ProviderCalls {
    fn default() -> Self {
        Self {
            running: Arc::new(Semaphore::new(MAX_RUNNING)),
            per_user: Arc::default(),
        }
    }
}

impl ProviderCalls {
    /// Runs `call` for `user` on a thread of its own and waits for it
    /// without holding any of the server's threads. The call's places are
    /// held until it ends, even when the request that started it is gone.
    pub async fn run<T: Send + 'static>(
        &self,
        user: UserId,
        call: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, CallError> {
        let user_slot = self.user_slot(user)?;
        let permit = self
            .running
            .clone()
            .try_acquire_owned()
            .map_err(|_| CallError::Busy(Busy::Server))?;
        let (sender, receiver) = tokio::sync::oneshot::channel();
        std::thread::Builder::new()
            .name("provider-call".into())
            .spawn(move || {
                let held: (UserSlot, OwnedSemaphorePermit) = (user_slot, permit);
                let result = call();
                // Given back before the answer, so that whoever reads it
                // may start another call at once.
                drop(held);
                let _ = sender.send(result);
            })
            .map_err(|err| CallError::Failed(err.to_string()))?;
        receiver
            .await
            .map_err(|_| CallError::Failed("the provider call ended without an answer".into()))
    }

    fn user_slot(&self, user: UserId) -> Result<UserSlot, CallError> {
        let mut counts = self.per_user.lock().unwrap_or_else(|p| p.into_inner());
        let count = counts.entry(user).or_default();
        if *count >= PER_USER {
            return Err(CallError::Busy(Busy::User));
        }
        *count += 1;
        Ok(UserSlot {
            user,
            counts: self.per_user.clone(),
        })
    }
}

/// Why a provider call gave no result.
#[derive(Debug, thiserror::Error)]
pub enum CallError {
    #[error(transparent)]
    Busy(Busy),
    /// The thread could not start, or panicked.
    #[error("{0}")]
    Failed(String),
}

/// One of a user's places, given back when its call ends.
struct UserSlot {
    user: UserId,
    counts: Arc<Mutex<HashMap<UserId, usize>>>,
}

impl Drop for UserSlot {
    fn drop(&mut self) {
        let mut counts = self.counts.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(count) = counts.get_mut(&self.user) {
            *count -= 1;
            if *count == 0 {
                counts.remove(&self.user);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    #[actix_web::test]
    async fn one_user_holds_at_most_their_share_and_gets_it_back() {
        let calls = ProviderCalls::default();
        let (alice, bob) = (UserId::new(1), UserId::new(2));
        let (release, hold) = mpsc::channel::<()>();
        let hold = Arc::new(Mutex::new(hold));
        let (started, mut running) = tokio::sync::mpsc::unbounded_channel();
        let mut waiting = Vec::new();
        for _ in 0..PER_USER {
            let (calls, hold, started) = (calls.clone(), hold.clone(), started.clone());
            waiting.push(actix_web::rt::spawn(async move {
                calls
                    .run(alice, move || {
                        let _ = started.send(());
                        let _ = hold.lock().map(|h| h.recv());
                    })
                    .await
            }));
        }
        for _ in 0..PER_USER {
            running.recv().await.expect("a call started");
        }
        // Both of alice's calls are running: a third is refused at once.
        assert!(matches!(
            calls.run(alice, || ()).await,
            Err(CallError::Busy(Busy::User))
        ));
        // Bob is not held up by alice.
        assert_eq!(calls.run(bob, || 7).await.ok(), Some(7));
        for _ in 0..PER_USER {
            release.send(()).expect("release");
        }
        for call in waiting {
            call.await.expect("joined").expect("ran");
        }
        assert_eq!(calls.run(alice, || 1).await.ok(), Some(1));
    }
}
