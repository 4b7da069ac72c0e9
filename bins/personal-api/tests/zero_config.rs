//! The binary as a new user runs it: no configuration, an empty directory.

// Test code: a failed unwrap is a failed test, with its message.
#![allow(clippy::unwrap_used)]

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// Starts the binary in `dir` (with `env` besides); returns it and a
/// channel of its stdout lines.
fn spawn(dir: &std::path::Path, env: &[(&str, &str)]) -> (Child, mpsc::Receiver<String>) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_personal-api"))
        .current_dir(dir)
        .env_remove("TRIBUTARY_DATABASE_URL")
        .env_remove("TRIBUTARY_DEMO")
        .env("TRIBUTARY_BIND", "127.0.0.1:0")
        .envs(env.iter().copied())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start personal-api");
    let stdout = child.stdout.take().expect("stdout");
    let (lines, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if lines.send(line).is_err() {
                break;
            }
        }
    });
    (child, receiver)
}

fn next_line(lines: &mpsc::Receiver<String>, starting: &str) -> String {
    loop {
        let line = lines
            .recv_timeout(Duration::from_secs(120))
            .expect("personal-api kept printing");
        if line.starts_with(starting) {
            return line;
        }
    }
}

fn terminate(child: &mut Child) -> std::process::ExitStatus {
    let status = Command::new("kill")
        .arg("-TERM")
        .arg(child.id().to_string())
        .status()
        .expect("kill");
    assert!(status.success());
    child.wait().expect("wait for personal-api")
}

#[tokio::test]
async fn first_start_seeds_a_demo_and_prints_a_working_curl_line() {
    let dir = tempfile::tempdir().unwrap();
    let (mut child, lines) = spawn(dir.path(), &[]);
    let listening = next_line(&lines, "Tributary Personal API listening on ");
    assert!(listening.contains("sqlite://tributary.db"), "{listening}");
    let try_line = next_line(&lines, "Try: curl ");
    assert!(
        dir.path().join("tributary.db").exists(),
        "the SQLite file is created in the working directory"
    );

    // Run the printed line's request: `curl -H 'x-api-key: KEY' URL`.
    let key = try_line
        .split("x-api-key: ")
        .nth(1)
        .and_then(|rest| rest.split('\'').next())
        .expect("key in the curl line");
    let url = try_line
        .rsplit(' ')
        .next()
        .expect("URL at the end of the curl line");
    assert!(key.starts_with("trb_"));
    let body: serde_json::Value = reqwest::Client::new()
        .get(url)
        .header("x-api-key", key)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let total = body["total"].as_u64().unwrap();
    assert!((3..=5).contains(&total), "{body}");
    assert_eq!(body["accounts"][0]["provider"], "sandbox");

    let status = terminate(&mut child);
    assert!(status.success(), "SIGTERM shuts down cleanly: {status:?}");

    // A second start finds its users and seeds nothing, printing no key.
    let (mut again, lines) = spawn(dir.path(), &[]);
    next_line(&lines, "Tributary Personal API listening on ");
    let status = terminate(&mut again);
    assert!(status.success());
    // Everything it printed, to the end of its output (it has exited, so
    // the reader sees end of file), not only what arrived so far.
    let rest: Vec<String> =
        std::iter::from_fn(|| lines.recv_timeout(Duration::from_secs(60)).ok()).collect();
    assert!(rest.iter().all(|line| !line.contains("trb_")), "{rest:?}");
}

#[test]
fn a_bad_database_url_fails_at_once_with_the_reason() {
    let output = Command::new(env!("CARGO_BIN_EXE_personal-api"))
        .env("TRIBUTARY_DATABASE_URL", "mysql://root@localhost/x")
        .output()
        .expect("run personal-api");
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("TRIBUTARY_DATABASE_URL") && stderr.contains("mysql"),
        "{stderr}"
    );
    assert_eq!(stderr.matches("mysql").count(), 1, "said once: {stderr}");
}

#[test]
fn help_lists_the_configuration() {
    let output = Command::new(env!("CARGO_BIN_EXE_personal-api"))
        .arg("--help")
        .output()
        .unwrap();
    assert!(output.status.success());
    let text = String::from_utf8_lossy(&output.stdout);
    for variable in ["TRIBUTARY_DATABASE_URL", "TRIBUTARY_BIND", "TRIBUTARY_DEMO"] {
        assert!(text.contains(variable), "{variable} in --help");
    }
}

/// Killed and reaped when dropped, so that a failed assertion does not
/// leave the server running.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The threads of `pid` with this name (`/proc/PID/task/*/comm`).
fn threads_named(pid: u32, name: &str) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .unwrap()
        .filter(|task| {
            let comm = task.as_ref().unwrap().path().join("comm");
            std::fs::read_to_string(comm).is_ok_and(|comm| comm.trim() == name)
        })
        .count()
}

/// A burst of concurrent requests does not grow the blocking pool past the
/// connection pool: every extra thread took a malloc arena of its own, and
/// RSS crept up under load (bench/soak.py).
#[tokio::test]
async fn concurrent_requests_use_no_more_blocking_threads_than_connections() {
    let dir = tempfile::tempdir().unwrap();
    let (child, lines) = spawn(dir.path(), &[("TRIBUTARY_DB_POOL_SIZE", "2")]);
    let server = Running(child);
    let try_line = next_line(&lines, "Try: curl ");
    let key = try_line
        .split("x-api-key: ")
        .nth(1)
        .and_then(|rest| rest.split('\'').next())
        .unwrap()
        .to_owned();
    let url = try_line.rsplit(' ').next().unwrap().to_owned();
    let client = reqwest::Client::new();
    let burst: Vec<_> = (0..64)
        .map(|_| {
            let request = client.get(&url).header("x-api-key", &key).send();
            tokio::spawn(async move { request.await.map(|r| r.status()) })
        })
        .collect();
    for answer in burst {
        assert_eq!(answer.await.unwrap().unwrap(), reqwest::StatusCode::OK);
    }
    // Idle blocking threads live on for 10 s: the burst's are still here,
    // and the one that opened the database and seeded the demo at start.
    let blocking = threads_named(server.0.id(), "tokio-rt-worker");
    assert!(
        (1..=3).contains(&blocking),
        "{blocking} blocking threads for 2 connections (and the start-up's)"
    );
}
