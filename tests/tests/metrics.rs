//! `/metrics` end to end, on both backends: who may scrape (the token on the
//! main address, anyone on the loopback metrics address, nobody when neither
//! is configured), what a scrape holds after real requests, and that it
//! holds nothing personal.

// Test code: a failed unwrap is a failed test, with its message.
#![allow(clippy::unwrap_used)]

use reqwest::{Client, StatusCode};
use tributary_e2e::{clock, sandbox_registry, seed, test_config};
use tributary_http::server::{self, Application, Interface, Parts};
use tributary_storage::testing::TestDatabase;

const TOKEN: &str = "metrics-token-0123456789abcdef";

/// The value of the sample whose line starts with `series` (name and labels).
fn sample(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find_map(|line| line.strip_prefix(series)?.strip_prefix(' '))
        .map(|value| value.trim().parse().unwrap())
}

#[actix_web::test]
async fn metrics_count_requests_and_read_the_database_for_whoever_may_scrape() {
    for database in TestDatabase::all() {
        eprintln!("-- on {:?}", database.backend());
        let clock = clock();
        let world = seed(&database, clock.clone());
        let mut config = test_config(&database, None);
        config.metrics.token = Some(tributary_app::config::Secret(TOKEN.to_owned()));
        config.metrics.bind = Some("127.0.0.1:0".parse().unwrap());
        let parts = Parts {
            clock: Some(clock.clone()),
            database: Some(database.db().clone()),
            registry: Some(sandbox_registry()),
            ..Parts::default()
        };
        let started = Application::build(Interface::Personal, config, parts)
            .and_then(Application::bind)
            .unwrap();
        let base = server::local_url(started.addrs[0]);
        let loopback = server::local_url(started.metrics_addr.unwrap());
        let handle = started.server.handle();
        actix_web::rt::spawn(started.server);
        let client = Client::new();
        let get = |url: String| client.get(url);

        // Who may scrape.
        let anonymous = get(format!("{base}/metrics")).send().await.unwrap();
        assert_eq!(anonymous.status(), StatusCode::UNAUTHORIZED);
        let wrong = get(format!("{base}/metrics"))
            .bearer_auth("metrics-token-0123456789abcdeX")
            .send()
            .await
            .unwrap();
        assert_eq!(wrong.status(), StatusCode::UNAUTHORIZED);
        let local = get(format!("{loopback}/metrics")).send().await.unwrap();
        assert_eq!(local.status(), StatusCode::OK);
        assert!(
            local.headers()["content-type"]
                .to_str()
                .unwrap()
                .starts_with("application/openmetrics-text")
        );
        // The metrics address serves nothing else.
        let elsewhere = get(format!("{loopback}/api/v1/accounts"))
            .header("x-api-key", &world.alice_key)
            .send()
            .await
            .unwrap();
        assert_eq!(elsewhere.status(), StatusCode::NOT_FOUND);

        // Real traffic: a read, a 404 on a route, a path no route serves.
        let accounts = get(format!("{base}/api/v1/accounts"))
            .header("x-api-key", &world.alice_key)
            .send()
            .await
            .unwrap();
        assert_eq!(accounts.status(), StatusCode::OK);
        let missing = get(format!("{base}/api/v1/accounts/987654/balance"))
            .header("x-api-key", &world.alice_key)
            .send()
            .await
            .unwrap();
        assert_eq!(missing.status(), StatusCode::NOT_FOUND);
        let probe = get(format!("{base}/wp-admin/setup-config.php"))
            .send()
            .await
            .unwrap();
        assert_eq!(probe.status(), StatusCode::NOT_FOUND);

        clock.advance(chrono::Duration::seconds(3600));
        let scraped = get(format!("{base}/metrics"))
            .bearer_auth(TOKEN)
            .send()
            .await
            .unwrap();
        assert_eq!(scraped.status(), StatusCode::OK);
        assert_eq!(scraped.headers()["cache-control"], "no-store");
        let text = scraped.text().await.unwrap();

        let requests = |route: &str, status: u16| {
            sample(
                &text,
                &format!(
                    "tributary_http_requests_total{{route=\"{route}\",method=\"GET\",status=\"{status}\"}}"
                ),
            )
        };
        assert_eq!(requests("/api/v1/accounts", 200), Some(1.0), "{text}");
        assert_eq!(
            requests("/api/v1/accounts/{accountId}/balance", 404),
            Some(1.0),
            "{text}"
        );
        assert_eq!(requests("unmatched", 404), Some(1.0), "{text}");
        assert_eq!(requests("/metrics", 401), Some(2.0), "{text}");
        assert_eq!(
            sample(
                &text,
                "tributary_http_request_duration_seconds_count{route=\"/api/v1/accounts\",method=\"GET\",status=\"200\"}"
            ),
            Some(1.0),
            "{text}"
        );
        assert!(sample(&text, "tributary_db_pool_checkouts_total").unwrap() >= 3.0);
        assert!(sample(&text, "tributary_db_pool_connections").unwrap() >= 1.0);
        assert_eq!(sample(&text, "tributary_database_up"), Some(1.0));
        // The seed synced each sandbox connection once, through a job.
        assert_eq!(
            sample(&text, "tributary_sync_jobs{status=\"succeeded\"}"),
            Some(2.0),
            "{text}"
        );
        // Synced at the seed's time; the clock has moved an hour since.
        assert_eq!(
            sample(
                &text,
                &format!(
                    "tributary_connection_since_last_sync_seconds{{connection_id=\"{}\",provider=\"sandbox\",status=\"ACTIVE\"}}",
                    world.alice_sandbox_connection
                )
            ),
            Some(3600.0),
            "{text}"
        );
        // Statement imports are not synced and have no age.
        assert!(!text.contains(&format!(
            "connection_id=\"{}\"",
            world.alice_imported_connection
        )));
        // Nothing personal, no raw paths.
        for private in ["alice@example.com", "bob@example.com", "wp-admin", "987654"] {
            assert!(!text.contains(private), "{private} in the metrics");
        }
        for key in &world.issued_keys {
            assert!(!text.contains(key.as_str()));
        }
        assert!(text.ends_with("# EOF\n"));
        handle.stop(true).await;
    }
}

#[actix_web::test]
async fn without_a_token_or_address_metrics_are_not_served() {
    let server = tributary_e2e::start(TestDatabase::sqlite());
    let answer = Client::new()
        .get(server.url("/metrics"))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), StatusCode::NOT_FOUND);
    server.stop().await;
}
