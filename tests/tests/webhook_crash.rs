//! A `tributary worker` process killed with SIGKILL in the middle of a
//! webhook delivery (its receiver holds the request open): the event stays
//! in the outbox, and a second worker delivers it, with the same
//! `webhook-id`, once the first one's lease ends. On SQLite and PostgreSQL.
//! The test follows the receiver's lines; it never sleeps.

// Test code: a failed unwrap is a failed test, with its message.
#![allow(clippy::unwrap_used)]

use serde_json::json;
use std::process::{Child, Command, Stdio};
use tributary_auth::keyring::{Keyring, generate_key};
use tributary_domain::model::WebhookEventType;
use tributary_e2e::webhooks::Receiver;
use tributary_notify::deliver::seal_secret;
use tributary_notify::signing::SigningSecret;
use tributary_storage::testing::TestDatabase;
use tributary_storage::webhooks::{self, EndpointOwner, NewEndpoint, NewEvent};

/// A worker process, killed and reaped when dropped.
struct WorkerProcess(Child);

impl Drop for WorkerProcess {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start_worker(database_url: &str, key: &str) -> WorkerProcess {
    WorkerProcess(
        Command::new(env!("CARGO_BIN_EXE_tributary-cli"))
            .arg("worker")
            .env("TRIBUTARY_DATABASE_URL", database_url)
            .env("TRIBUTARY_SECRET_KEY", key)
            .env("TRIBUTARY_OUTBOUND_ALLOW_PRIVATE", "1")
            .env("TRIBUTARY_WORKER_LEASE_SECS", "2")
            .env("TRIBUTARY_WORKER_POLL_SECS", "1")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    )
}

#[test]
fn a_worker_killed_mid_delivery_loses_no_event() {
    for database in TestDatabase::all() {
        eprintln!("-- on {:?}", database.backend());
        let key = generate_key();
        let keyring = Keyring::new(&key, &[]).unwrap();
        let mut receiver = Receiver::start(std::path::Path::new(env!("CARGO_TARGET_TMPDIR")));
        let secret = SigningSecret::generate();
        let now = chrono::Utc::now().naive_utc();
        let endpoint = {
            let conn = &mut *database.db().conn().unwrap();
            let user =
                tributary_storage::users::create_personal_user(conn, "kill@example.com", now)
                    .unwrap();
            let owner = EndpointOwner::User(user.id);
            let endpoint = webhooks::create_endpoint(
                conn,
                &NewEndpoint {
                    owner,
                    url: &receiver.url,
                    event_types: WebhookEventType::ALL,
                    secret_sealed: &seal_secret(&keyring, owner, &secret),
                    now,
                },
            )
            .unwrap();
            webhooks::record_event(
                conn,
                &NewEvent {
                    user_id: user.id,
                    event_type: WebhookEventType::SyncFailed,
                    payload: &json!({"type": "sync.failed", "data": {"connection_id": 1}}),
                    once_key: None,
                    now,
                },
            )
            .unwrap()
            .unwrap();
            endpoint
        };
        // The first delivery is held open; the worker is killed while it waits.
        receiver.configure(json!({"secrets": [secret.to_text()], "hold_first": 1}));
        let url = database.url();
        let first = start_worker(&url, &key);
        let held = receiver.next();
        let webhook_id = held["held"].as_str().unwrap().to_owned();
        let mut first = first;
        first.0.kill().unwrap();
        first.0.wait().unwrap();
        let log =
            webhooks::delivery_log(&mut database.db().conn().unwrap(), endpoint.id, 10).unwrap();
        assert_eq!(log[0].status.as_str(), "pending", "kept in the outbox");

        // Another worker sends it again once the lease ends.
        let _second = start_worker(&url, &key);
        let delivered = receiver.next();
        assert_eq!(delivered["id"], webhook_id.as_str(), "the same webhook-id");
        assert_eq!(delivered["answered"], 204);
        assert_eq!(delivered["verified"], json!([true]));
        // The worker records the answer just after the receiver sends it.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        let log = loop {
            let log = webhooks::delivery_log(&mut database.db().conn().unwrap(), endpoint.id, 10)
                .unwrap();
            if log[0].status.as_str() != "pending" || std::time::Instant::now() > deadline {
                break log;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        };
        assert_eq!(
            (log.len(), log[0].status.as_str(), log[0].attempts),
            (1, "delivered", 2)
        );
    }
}
