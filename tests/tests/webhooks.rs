//! Webhooks end to end, on SQLite and PostgreSQL: endpoints registered
//! over the API, events written by real changes (a statement import, a
//! disconnection), delivered by the workers' deliverer to a receiver that
//! verifies every delivery with the Standard Webhooks reference library
//! (PyPI `standardwebhooks`): retries with the same `webhook-id`, a secret
//! rotation with both signatures, a 410 that disables the endpoint, the
//! delivery log and a replay; the SSRF guard refusing private addresses;
//! the mail notices beside them (a disabled endpoint, a consent's end).

// Test code: a failed unwrap is a failed test, with its message.
#![allow(clippy::unwrap_used)]

use reqwest::{Client, StatusCode};
use serde_json::{Value, json};
use tributary_domain::clock::Clock as _;
use tributary_e2e::webhooks::Receiver;
use tributary_e2e::{TestServer, json_answer, start_configured};
use tributary_storage::testing::{TestDatabase, testdata_bytes};

fn api(server: &TestServer, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
    Client::new()
        .request(method, server.url(&format!("/api/v1{path}")))
        .header("x-api-key", &server.world.alice_key)
}

async fn import(server: &TestServer, name: &str) {
    let form = reqwest::multipart::Form::new().part(
        "files",
        reqwest::multipart::Part::bytes(testdata_bytes(name)).file_name("statement.ofx"),
    );
    let answer = api(server, reqwest::Method::POST, "/imports")
        .multipart(form)
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), StatusCode::OK);
}

/// Alice disconnects her sandbox bank: a `connection.status_changed`.
async fn disconnect_the_sandbox(server: &TestServer) {
    let path = format!(
        "/connections/{}/disconnect",
        server.world.alice_sandbox_connection
    );
    let answer = api(server, reqwest::Method::POST, &path)
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), StatusCode::OK);
}

/// A server whose webhooks may go to loopback, with its clock at the real
/// time (the receiver checks each delivery's timestamp against its own).
fn server(database: TestDatabase) -> TestServer {
    let server = start_configured(database, Vec::new(), |config| {
        config.outbound_allow_private = tributary_outbound::PrivateAllowance::All;
    });
    server.clock.set(chrono::Utc::now());
    server
}

#[actix_web::test]
async fn deliveries_verify_with_the_reference_library_retry_with_one_id_and_rotate() {
    for database in TestDatabase::all() {
        eprintln!("-- on {:?}", database.backend());
        let server = server(database);
        let mut receiver = Receiver::start(std::path::Path::new(env!("CARGO_TARGET_TMPDIR")));
        let created = json_answer(
            api(&server, reqwest::Method::POST, "/webhooks").json(&json!({
                "url": receiver.url,
                "event_types": ["transactions.updated", "connection.status_changed"],
            })),
        )
        .await;
        let secret = created["secret"].as_str().unwrap().to_owned();
        assert!(secret.starts_with("whsec_"), "{created}");
        let id = created["id"].as_str().unwrap().to_owned();
        // Never shown again, nor stored in the clear.
        let listed = json_answer(api(&server, reqwest::Method::GET, "/webhooks")).await;
        assert_eq!(listed["total"], 1);
        assert!(!listed.to_string().contains(&secret));
        assert!(!tributary_storage::testing::dump(server.database.db()).contains(&secret[6..]));

        // The receiver fails three times, then takes it.
        receiver.configure(json!({"secrets": [secret], "fail_first": 3}));
        import(&server, "ofxparse/fixtures/checking.ofx").await;
        let mut heard = Vec::new();
        for _ in 0..4 {
            assert_eq!(server.deliver_webhooks().await, 1);
            heard.push(receiver.next());
            server.webhooks_due_now();
        }
        assert_eq!(server.deliver_webhooks().await, 0, "delivered once");
        assert!(receiver.try_next().is_none());
        let ids: Vec<&Value> = heard.iter().map(|h| &h["id"]).collect();
        assert!(ids.iter().all(|i| *i == ids[0]), "one webhook-id: {ids:?}");
        assert!(
            heard.iter().all(|h| h["verified"] == json!([true])),
            "{heard:?}"
        );
        let answered: Vec<&Value> = heard.iter().map(|h| &h["answered"]).collect();
        assert_eq!(
            answered,
            [&json!(500), &json!(500), &json!(500), &json!(204)]
        );
        let event = &heard[3]["body"];
        assert_eq!(event["type"], "transactions.updated");
        assert!(event["data"]["added"].as_u64().unwrap() > 0, "{event}");
        // The event's cursor reads exactly this change.
        let feed = json_answer(api(
            &server,
            reqwest::Method::GET,
            &format!(
                "/transactions/sync?cursor={}",
                event["data"]["cursor"].as_str().unwrap()
            ),
        ))
        .await;
        assert_eq!(
            feed["added"].as_array().unwrap().len() as u64,
            event["data"]["added"].as_u64().unwrap(),
            "{feed}"
        );
        let log = json_answer(api(
            &server,
            reqwest::Method::GET,
            &format!("/webhooks/{id}/deliveries"),
        ))
        .await;
        let line = &log["deliveries"][0];
        assert_eq!(
            (&line["status"], &line["attempts"]),
            (&json!("delivered"), &json!(4))
        );
        assert_eq!(line["webhook_id"], heard[0]["id"]);

        // A rotation: for a day every delivery carries both signatures.
        let rotated = json_answer(api(
            &server,
            reqwest::Method::POST,
            &format!("/webhooks/{id}/rotate_secret"),
        ))
        .await;
        let new_secret = rotated["secret"].as_str().unwrap().to_owned();
        assert_ne!(new_secret, secret);
        receiver.configure(json!({"secrets": [secret, new_secret]}));
        disconnect_the_sandbox(&server).await;
        assert_eq!(server.deliver_webhooks().await, 1);
        let rotation = receiver.next();
        assert_eq!(rotation["verified"], json!([true, true]), "{rotation}");
        assert_eq!(rotation["signatures"].as_array().unwrap().len(), 2);
        assert_eq!(rotation["body"]["type"], "connection.status_changed");
        assert_eq!(rotation["body"]["data"]["new_status"], "DISCONNECTED");
        // Past the overlap only the new secret signs. (The clock is a day
        // ahead, so the receiver's own check refuses the timestamp: the
        // signature is checked here, with the reference scheme.)
        server.clock.advance(chrono::Duration::hours(25));
        let replayed = api(
            &server,
            reqwest::Method::POST,
            &format!(
                "/webhooks/{id}/deliveries/{}/replay",
                log["deliveries"][0]["id"].as_str().unwrap()
            ),
        )
        .send()
        .await
        .unwrap();
        assert_eq!(replayed.status(), StatusCode::ACCEPTED);
        assert_eq!(server.deliver_webhooks().await, 1);
        let again = receiver.next();
        assert_eq!(again["id"], heard[0]["id"], "a replay keeps the webhook-id");
        let signatures = again["signatures"].as_array().unwrap();
        assert_eq!(signatures.len(), 1);
        let expected = tributary_notify::signing::SigningSecret::parse(&new_secret)
            .unwrap()
            .sign(
                again["id"].as_str().unwrap(),
                again["timestamp"].as_str().unwrap().parse().unwrap(),
                again["raw"].as_str().unwrap().as_bytes(),
            );
        assert_eq!(signatures[0], expected);
        server.stop().await;
    }
}

#[actix_web::test]
async fn a_receiver_answering_410_disables_its_endpoint() {
    for database in TestDatabase::all() {
        eprintln!("-- on {:?}", database.backend());
        let server = server(database);
        let mut gone = Receiver::start(std::path::Path::new(env!("CARGO_TARGET_TMPDIR")));
        let created = json_answer(
            api(&server, reqwest::Method::POST, "/webhooks").json(&json!({"url": gone.url})),
        )
        .await;
        gone.configure(json!({"secrets": [created["secret"]], "status": 410}));
        import(&server, "ofxparse/fixtures/checking.ofx").await;
        assert_eq!(server.deliver_webhooks().await, 1);
        assert_eq!(gone.next()["answered"], 410);
        let listed = json_answer(api(&server, reqwest::Method::GET, "/webhooks")).await;
        let endpoint = &listed["webhooks"][0];
        assert_eq!(endpoint["enabled"], false, "{listed}");
        assert!(
            endpoint["disabled_reason"]
                .as_str()
                .unwrap()
                .contains("410")
        );
        // No more deliveries to it. An endpoint that fails for three days
        // is disabled too.
        let mut failing = Receiver::start(std::path::Path::new(env!("CARGO_TARGET_TMPDIR")));
        let created = json_answer(
            api(&server, reqwest::Method::POST, "/webhooks").json(&json!({"url": failing.url})),
        )
        .await;
        failing.configure(json!({"secrets": [created["secret"]], "status": 503}));
        disconnect_the_sandbox(&server).await;
        assert_eq!(
            server.deliver_webhooks().await,
            1,
            "to the failing one only"
        );
        assert_eq!(failing.next()["answered"], 503);
        assert!(gone.try_next().is_none());
        server.clock.advance(chrono::Duration::days(3));
        server.webhooks_due_now();
        assert_eq!(server.deliver_webhooks().await, 1);
        assert_eq!(failing.next()["answered"], 503);
        let listed = json_answer(api(&server, reqwest::Method::GET, "/webhooks")).await;
        let endpoint = &listed["webhooks"][1];
        assert_eq!(endpoint["enabled"], false, "{listed}");
        assert!(
            endpoint["disabled_reason"]
                .as_str()
                .unwrap()
                .contains("3 days")
        );
        server.webhooks_due_now();
        assert_eq!(server.deliver_webhooks().await, 0);
        // Alice is told of both, by mail, once each.
        assert_eq!(server.send_notices().await, 2);
        assert_eq!(server.send_notices().await, 0);
        let told: Vec<_> = server
            .outbox
            .messages()
            .into_iter()
            .filter(|m| m.to == "alice@example.com")
            .collect();
        assert_eq!(told.len(), 2, "{told:?}");
        for (mail, (url, why)) in told
            .iter()
            .zip([(&gone.url, "410"), (&failing.url, "3 days")])
        {
            assert_eq!(mail.subject, format!("Webhooks to {url} are stopped"));
            assert!(mail.body.contains(why), "{}", mail.body);
        }
        server.stop().await;
    }
}

#[actix_web::test]
async fn a_consent_about_to_end_is_announced_and_mailed_once_a_week_and_a_day_before() {
    for database in TestDatabase::all() {
        eprintln!("-- on {:?}", database.backend());
        let server = server(database);
        let mut receiver = Receiver::start(std::path::Path::new(env!("CARGO_TARGET_TMPDIR")));
        let created =
            json_answer(api(&server, reqwest::Method::POST, "/webhooks").json(
                &json!({"url": receiver.url, "event_types": ["connection.consent_expiring"]}),
            ))
            .await;
        receiver.configure(json!({"secrets": [created["secret"]], "status": 204}));
        let connection = server.world.alice_sandbox_connection;
        let expires = server.clock.now().naive_utc() + chrono::Duration::days(6);
        tributary_storage::testing::set_consent_expiry(
            &mut server.database.db().conn().unwrap(),
            connection,
            expires,
        );
        for _ in 0..2 {
            server.schedule_due().await;
        }
        assert_eq!(server.deliver_webhooks().await, 1);
        let delivered = receiver.next();
        assert_eq!(delivered["verified"], json!([true]), "{delivered}");
        let data = &delivered["body"]["data"];
        assert_eq!(data["connection_id"], json!(connection.get()));
        assert_eq!(data["notice"], "7d");
        assert_eq!(server.send_notices().await, 1);
        let mail = server.outbox.last_to("alice@example.com").unwrap();
        assert!(
            mail.subject.starts_with("Your connection to ") && mail.subject.contains(" ends on "),
            "{mail:?}"
        );
        // The day before: one more of each; then nothing, however often
        // the scheduler runs.
        server
            .clock
            .advance(chrono::Duration::days(5) + chrono::Duration::hours(1));
        for _ in 0..2 {
            server.schedule_due().await;
        }
        assert_eq!(server.deliver_webhooks().await, 1);
        // (Signed five days on by the test's clock: the receiver's tolerance
        // refuses the timestamp, so only the payload is read here.)
        assert_eq!(receiver.next()["body"]["data"]["notice"], "1d");
        assert_eq!(server.send_notices().await, 1);
        assert!(
            server
                .outbox
                .last_to("alice@example.com")
                .unwrap()
                .subject
                .ends_with(" ends tomorrow")
        );
        server.schedule_due().await;
        assert_eq!(server.deliver_webhooks().await, 0);
        assert_eq!(server.send_notices().await, 0);
        server.stop().await;
    }
}

#[actix_web::test]
async fn private_addresses_are_refused_unless_allowed_and_only_the_owner_sees_an_endpoint() {
    tributary_e2e::harness::personal(|server| async move {
        for url in [
            "http://127.0.0.1/hook",
            "http://[::1]/hook",
            "http://169.254.169.254/latest/meta-data",
            "http://10.0.0.1/hook",
            "https://127.0.0.1/hook",
            "https://localhost/hook",
            "https://[::1]:8443/hook",
            "https://169.254.169.254/",
            "https://10.0.0.1/",
        ] {
            let answer = api(&server, reqwest::Method::POST, "/webhooks")
                .json(&json!({"url": url}))
                .send()
                .await
                .unwrap();
            assert_eq!(answer.status(), StatusCode::BAD_REQUEST, "{url}");
            let body: Value = answer.json().await.unwrap();
            assert_eq!(body["code"], "INVALID_WEBHOOK_URL", "{url}: {body}");
        }
        for (body, code) in [
            (
                json!({"url": "https://93.184.216.34/x", "event_types": ["nope"]}),
                "INVALID_EVENT_TYPE",
            ),
            (
                json!({"url": "https://93.184.216.34/x", "event_types": []}),
                "INVALID_EVENT_TYPE",
            ),
            (json!({"link": "https://93.184.216.34/x"}), "INVALID_BODY"),
        ] {
            let answer =
                json_answer(api(&server, reqwest::Method::POST, "/webhooks").json(&body)).await;
            assert_eq!(answer["code"], code, "{answer}");
        }
        // A key limited to some accounts may not manage webhooks.
        let scoped = Client::new()
            .get(server.url("/api/v1/webhooks"))
            .header("x-api-key", &server.world.alice_scoped_key)
            .send()
            .await
            .unwrap();
        assert_eq!(scoped.status(), StatusCode::FORBIDDEN);
        assert_eq!(
            scoped.json::<Value>().await.unwrap()["code"],
            "KEY_RESTRICTED"
        );
        // The guard refuses at delivery too, without connecting: a worker
        // not allowed private addresses never reaches a loopback receiver.
        let mut receiver = Receiver::start(std::path::Path::new(env!("CARGO_TARGET_TMPDIR")));
        let registered = {
            let conn = &mut *server.database.db().conn().unwrap();
            let sealer = server.config.keyring().unwrap();
            let secret = tributary_notify::signing::SigningSecret::generate();
            let owner = tributary_storage::webhooks::EndpointOwner::User(
                tributary_storage::connections::get_connection(
                    conn,
                    server.world.alice_imported_connection,
                )
                .unwrap()
                .user_id,
            );
            tributary_storage::webhooks::create_endpoint(
                conn,
                &tributary_storage::webhooks::NewEndpoint {
                    owner,
                    url: &receiver.url,
                    event_types: tributary_domain::model::WebhookEventType::ALL,
                    secret_sealed: &tributary_notify::deliver::seal_secret(&sealer, owner, &secret),
                    now: chrono::Utc::now().naive_utc(),
                },
            )
            .unwrap();
            secret
        };
        receiver.configure(json!({"secrets": [registered.to_text()]}));
        import(&server, "ofxparse/fixtures/checking.ofx").await;
        assert_eq!(server.deliver_webhooks().await, 1);
        assert!(
            receiver.try_next().is_none(),
            "nothing reached the receiver"
        );
        let listed = json_answer(api(&server, reqwest::Method::GET, "/webhooks")).await;
        let id = listed["webhooks"][0]["id"].as_str().unwrap().to_owned();
        let log = json_answer(api(
            &server,
            reqwest::Method::GET,
            &format!("/webhooks/{id}/deliveries"),
        ))
        .await;
        let error = log["deliveries"][0]["last_error"].as_str().unwrap();
        assert!(
            error.contains("private or reserved network")
                && error.contains("TRIBUTARY_OUTBOUND_ALLOW_PRIVATE"),
            "{error}"
        );
        // Bob sees none of Alice's endpoints, and cannot touch them.
        let bob = |method: reqwest::Method, path: String| {
            Client::new()
                .request(method, server.url(&format!("/api/v1{path}")))
                .header("x-api-key", &server.world.bob_key)
                .send()
        };
        let bobs = bob(reqwest::Method::GET, "/webhooks".into()).await.unwrap();
        assert_eq!(bobs.json::<Value>().await.unwrap()["total"], 0);
        for (method, path) in [
            (reqwest::Method::DELETE, format!("/webhooks/{id}")),
            (
                reqwest::Method::POST,
                format!("/webhooks/{id}/rotate_secret"),
            ),
            (reqwest::Method::GET, format!("/webhooks/{id}/deliveries")),
            (
                reqwest::Method::POST,
                format!("/webhooks/{id}/deliveries/1/replay"),
            ),
        ] {
            let answer = bob(method, path.clone()).await.unwrap();
            assert_eq!(answer.status(), StatusCode::NOT_FOUND, "{path}");
            let body: Value = answer.json().await.unwrap();
            assert_eq!(body["code"], "WEBHOOK_NOT_FOUND", "{path}");
        }
        // At most ten endpoints an owner.
        for n in 0..9 {
            let made = api(&server, reqwest::Method::POST, "/webhooks")
                .json(&json!({"url": format!("https://93.184.216.34/hook/{n}")}))
                .send()
                .await
                .unwrap();
            assert_eq!(made.status(), StatusCode::CREATED);
        }
        let eleventh = json_answer(
            api(&server, reqwest::Method::POST, "/webhooks")
                .json(&json!({"url": "https://93.184.216.34/hook/11"})),
        )
        .await;
        assert_eq!(eleventh["code"], "TOO_MANY_WEBHOOKS", "{eleventh}");
        // The owner disables and enables it again.
        let disabled = json_answer(
            api(&server, reqwest::Method::PATCH, &format!("/webhooks/{id}"))
                .json(&json!({"enabled": false})),
        )
        .await;
        assert_eq!(
            (&disabled["enabled"], &disabled["disabled_reason"]),
            (&json!(false), &json!("disabled by its owner"))
        );
        let enabled = json_answer(
            api(&server, reqwest::Method::PATCH, &format!("/webhooks/{id}"))
                .json(&json!({"enabled": true})),
        )
        .await;
        assert_eq!(enabled["enabled"], true);
        let deleted = api(&server, reqwest::Method::DELETE, &format!("/webhooks/{id}"))
            .send()
            .await
            .unwrap();
        assert_eq!(deleted.status(), StatusCode::NO_CONTENT);
        server
    })
    .await;
}

#[actix_web::test]
async fn an_app_hears_about_its_users_with_its_client_credentials() {
    tributary_e2e::harness::platform(|server| async move {
        let as_app = |app: &tributary_e2e::platform::TestApp, method: reqwest::Method, path: &str| {
            Client::new()
                .request(method, server.url(&format!("/api/platform/v1{path}")))
                .basic_auth(app.client_id(), Some(app.secret()))
        };
        let created = json_answer(
            as_app(&server.app_a, reqwest::Method::POST, "/webhooks")
                .json(&json!({"url": "https://93.184.216.34/hook", "event_types": ["transactions.updated"]})),
        )
        .await;
        let id = created["id"].as_str().unwrap().to_owned();
        assert!(created["secret"].as_str().unwrap().starts_with("whsec_"));
        // A user of app A imports a statement: one delivery for app A.
        let (token, _) =
            tributary_e2e::platform::user_with_statement(&server, "heard@example.com").await;
        let log = json_answer(as_app(
            &server.app_a,
            reqwest::Method::GET,
            &format!("/webhooks/{id}/deliveries"),
        ))
        .await;
        let deliveries = log["deliveries"].as_array().unwrap();
        assert_eq!(deliveries.len(), 1, "{log}");
        assert_eq!(
            (&deliveries[0]["event_type"], &deliveries[0]["status"]),
            (&json!("transactions.updated"), &json!("pending"))
        );
        // App B sees none of it; a user's bearer token manages no webhooks.
        let other = as_app(&server.app_b, reqwest::Method::GET, &format!("/webhooks/{id}/deliveries"))
            .send()
            .await
            .unwrap();
        assert_eq!(other.status(), StatusCode::NOT_FOUND);
        let bearer = Client::new()
            .get(server.url("/api/platform/v1/webhooks"))
            .bearer_auth(&token)
            .send()
            .await
            .unwrap();
        assert_eq!(bearer.status(), StatusCode::UNAUTHORIZED);
        server
    })
    .await;
}
