//! The one way an end-to-end test runs on every backend: a fresh database
//! of each kind (SQLite file, PostgreSQL clone of the migrated template), a
//! real server on a free port over it, the scenario, and the server stopped.

use crate::TestServer;
use crate::platform::PlatformServer;
use std::future::Future;
use tributary_notify::mail::DevOutbox;
use tributary_storage::testing::TestDatabase;

/// A server a test drives: started over a fresh database, stopped after.
pub trait Served: Sized {
    fn serve(database: TestDatabase) -> Self;
    fn stop(self) -> impl Future<Output = ()>;
}

impl Served for TestServer {
    fn serve(database: TestDatabase) -> Self {
        crate::start(database)
    }
    async fn stop(self) {
        TestServer::stop(self).await;
    }
}

impl Served for PlatformServer {
    fn serve(database: TestDatabase) -> Self {
        crate::platform::start_platform(database)
    }
    async fn stop(self) {
        PlatformServer::stop(self).await;
    }
}

/// The Platform API with its browser pages and the development outbox the
/// sign-in codes go to.
#[derive(Debug)]
pub struct WithPages {
    pub server: PlatformServer,
    pub outbox: DevOutbox,
}

impl Served for WithPages {
    fn serve(database: TestDatabase) -> Self {
        let (server, outbox) = crate::platform::start_platform_with_pages(database);
        Self { server, outbox }
    }
    async fn stop(self) {
        self.server.stop().await;
    }
}

/// Runs `scenario` against a fresh server of kind `S` on every backend,
/// naming the backend first so a failure says where it happened.
pub async fn on_every_backend<S, F, Fut>(scenario: F)
where
    S: Served,
    F: Fn(S) -> Fut,
    Fut: Future<Output = S>,
{
    for database in TestDatabase::all() {
        eprintln!("-- on {:?}", database.backend());
        scenario(S::serve(database)).await.stop().await;
    }
}

/// [`on_every_backend`] with the Personal API (each test file imports the
/// entry point it needs as `on_every_backend`).
pub async fn personal<F, Fut>(scenario: F)
where
    F: Fn(TestServer) -> Fut,
    Fut: Future<Output = TestServer>,
{
    on_every_backend(scenario).await;
}

/// [`on_every_backend`] with the Platform API.
pub async fn platform<F, Fut>(scenario: F)
where
    F: Fn(PlatformServer) -> Fut,
    Fut: Future<Output = PlatformServer>,
{
    on_every_backend(scenario).await;
}

/// [`on_every_backend`] with the Platform API's pages; the scenario gets
/// the server and the outbox.
pub async fn with_pages<F, Fut>(scenario: F)
where
    F: Fn(PlatformServer, DevOutbox) -> Fut,
    Fut: Future<Output = PlatformServer>,
{
    on_every_backend(|pages: WithPages| {
        let outbox = pages.outbox.clone();
        let running = scenario(pages.server, pages.outbox);
        async move {
            WithPages {
                server: running.await,
                outbox,
            }
        }
    })
    .await;
}
