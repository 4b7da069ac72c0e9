//! The Platform API builds, starts and answers its health checks.

// Test code: a failed unwrap is a failed test, with its message.
#![allow(clippy::unwrap_used)]

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// The server process, killed if the test ends before it stops it.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[tokio::test]
async fn starts_and_answers_health_checks() {
    let dir = tempfile::tempdir().unwrap();
    let log_path = dir.path().join("server.log");
    let log = std::fs::File::create(&log_path).unwrap();
    let mut server = Server(
        Command::new(env!("CARGO_BIN_EXE_platform-api"))
            .current_dir(dir.path())
            .env_remove("TRIBUTARY_DATABASE_URL")
            .env("TRIBUTARY_BIND", "127.0.0.1:0")
            .stdout(Stdio::piped())
            .stderr(Stdio::from(log))
            .spawn()
            .expect("start platform-api"),
    );
    let stdout = server.0.stdout.take().unwrap();
    let (first, first_line) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut lines = BufReader::new(stdout).lines();
        let _ = first.send(lines.next());
        for _ in lines {}
    });
    let listening = first_line
        .recv_timeout(Duration::from_secs(120))
        .expect("platform-api printed a line")
        .expect("a line")
        .expect("text");
    let url = listening
        .strip_prefix("Tributary Platform API listening on ")
        .and_then(|rest| rest.split(' ').next())
        .expect("listening line")
        .to_owned();
    for path in ["/healthz", "/readyz"] {
        let response = reqwest::get(format!("{url}{path}")).await.unwrap();
        assert_eq!(response.status(), 200, "{path}");
    }
    let missing = reqwest::get(format!("{url}/api/v1/accounts"))
        .await
        .unwrap();
    assert_eq!(
        missing.status(),
        404,
        "the Personal interface is not served here"
    );
    let body: serde_json::Value = missing.json().await.unwrap();
    assert_eq!(body["code"], "NOT_FOUND");
    // The access log names neither a portal link's secret nor a query's
    // values (the authorize link carries the user's e-mail address).
    let secret_paths = [
        "/portal/tps_SECRETportal0123456789",
        "/api/platform/oauth/authorize?client_id=app_x&login_hint=ada%40example.com&state=SECRETstate",
    ];
    for path in secret_paths {
        reqwest::get(format!("{url}{path}")).await.unwrap();
    }
    // Nor a SimpleFIN claim token (in the path) or Access URL password (in
    // the Basic credentials).
    let client = reqwest::Client::new();
    let claim = client
        .post(format!("{url}/simplefin/claim/sfc_SECRETclaim0123456789"))
        .send()
        .await
        .unwrap();
    assert_eq!(claim.status(), 403);
    let read = client
        .get(format!("{url}/simplefin/accounts"))
        .basic_auth("sfu_someone", Some("sfp_SECRETpassword0123456789"))
        .send()
        .await
        .unwrap();
    assert_eq!(read.status(), 403);
    Command::new("kill")
        .arg("-TERM")
        .arg(server.0.id().to_string())
        .status()
        .unwrap();
    assert!(server.0.wait().unwrap().success());
    let log = std::fs::read_to_string(&log_path).unwrap();
    assert!(log.contains(r#""GET /portal/tps_…""#), "{log}");
    assert!(log.contains(r#""POST /simplefin/claim/sfc_…""#), "{log}");
    assert!(
        log.contains("/oauth/authorize?client_id=…&login_hint=…&state=…"),
        "{log}"
    );
    // Request and worker ids are random hex, so "ada" alone could appear by
    // chance ("…bada…"); the address is what must never be there.
    for secret in ["SECRET", "ada@", "ada%40", "example.com"] {
        assert!(!log.contains(secret), "`{secret}` in the log:\n{log}");
    }
}
