//! API keys through the CLI, on both backends.

// Test code: a failed unwrap is a failed test, with its message.
#![allow(clippy::unwrap_used)]

use std::io::Write as _;
use std::process::Command;
use tributary_storage::testing::TestDatabase;

/// Runs `tributary` on `database_url`: (success, stdout, stderr).
fn tributary(database_url: &str, args: &[&str]) -> (bool, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_tributary"))
        .args(args)
        .env("TRIBUTARY_DATABASE_URL", database_url)
        .output()
        .unwrap();
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn revoking_a_key_twice_says_the_second_time_changed_nothing() {
    for database in TestDatabase::all() {
        let _ = writeln!(std::io::stderr(), "-- on {:?}", database.backend());
        let url = database.url();
        assert!(tributary(&url, &["users", "create", "keys@example.com"]).0);
        let (created, out, err) = tributary(
            &url,
            &[
                "keys",
                "create",
                "--user",
                "keys@example.com",
                "--name",
                "app",
            ],
        );
        assert!(created, "{out}{err}");
        let id = out
            .split_whitespace()
            .skip_while(|word| *word != "key")
            .nth(1)
            .and_then(|word| {
                word.trim_matches(|c: char| !c.is_ascii_digit())
                    .parse::<i64>()
                    .ok()
            })
            .unwrap_or_else(|| panic!("a key id in {out:?}"));
        let (revoked, first, _) = tributary(&url, &["keys", "revoke", &id.to_string()]);
        assert!(revoked);
        assert!(first.contains("is revoked;"), "{first}");
        let (again, second, _) = tributary(&url, &["keys", "revoke", &id.to_string()]);
        assert!(again);
        assert!(
            second.contains("was already revoked") && second.contains("nothing changed"),
            "{second}"
        );
        let (missing, _, err) = tributary(&url, &["keys", "revoke", "999999"]);
        assert!(!missing);
        assert!(err.contains("no API key with id 999999"), "{err}");
    }
}

#[test]
fn syncing_a_missing_connection_says_so_once() {
    let database = TestDatabase::sqlite();
    let output = Command::new(env!("CARGO_BIN_EXE_tributary"))
        .args(["sync", "--connection", "999"])
        .env("TRIBUTARY_DATABASE_URL", database.url())
        .output()
        .unwrap();
    assert!(!output.status.success());
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(said.matches("999").count(), 1, "{said}");
}
