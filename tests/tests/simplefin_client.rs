//! Third-party SimpleFIN clients against the real `personal-api`, on both
//! backends: Home Assistant's simplefin4py claims a setup token and reads
//! the Account Set as Home Assistant does, and pysimplefin reads it with the
//! protocol's parameters (pending, balances-only, account=, a date window).
//! Both come from PyPI, installed by this test into a virtualenv under the
//! target directory on first run; the Python side is
//! `tests/simplefin_clients/drive.py`, which prints what each library
//! parsed. The test fails, never skips, when they cannot be installed.
//! A long history (400 days) is read as far back as asked, by both.

// Test code: a failed unwrap is a failed test, with its message.
#![allow(clippy::unwrap_used)]

use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;
use tributary_e2e::TestServer;
use tributary_e2e::harness::personal as on_every_backend;
use tributary_e2e::simplefin::{
    assert_exact_amounts, epoch, post_the_pending_bakery, revoke_all, setup_token,
};

/// The client versions this test was written against.
const SIMPLEFIN4PY: &str = "simplefin4py==0.0.18";
/// pysimplefin 0.2 declares Python >= 3.13 but its code runs on 3.11 (the
/// Python this machine and Debian 12 have); pip is told to install it anyway.
const PYSIMPLEFIN: &str = "pysimplefin==0.2";

/// The virtualenv's Python, with both clients importable; made on first use.
fn client_python() -> PathBuf {
    tributary_e2e::python::venv(
        &Path::new(env!("CARGO_TARGET_TMPDIR")).join("simplefin-clients-venv"),
        "import simplefin4py, pysimplefin",
        &[&[SIMPLEFIN4PY], &["--ignore-requires-python", PYSIMPLEFIN]],
    )
}

/// Runs `drive.py` with `args`; what the library parsed, as JSON.
async fn drive(python: &Path, args: &[&str]) -> Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("simplefin_clients/drive.py");
    let mut command = Command::new(python);
    command.arg(script).args(args);
    let output = actix_web::rt::task::spawn_blocking(move || command.output())
        .await
        .unwrap()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "drive.py {:?} failed:\n{stdout}\n{}",
        args.first(),
        String::from_utf8_lossy(&output.stderr)
    );
    // The answer is the last line: simplefin4py prints an exception's
    // message before it raises it.
    let answer = stdout.lines().last().unwrap_or_default();
    serde_json::from_str(answer).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

/// pysimplefin's `get_data` with these parameters.
async fn read(python: &Path, access_url: &str, params: Value) -> Value {
    drive(python, &["read", access_url, &params.to_string()]).await
}

fn account<'a>(read: &'a Value, id: &str) -> &'a Value {
    read["accounts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["id"] == id)
        .unwrap_or_else(|| panic!("{id} in {read}"))
}

fn transactions(account: &Value) -> &Vec<Value> {
    account["transactions"].as_array().unwrap()
}

#[actix_web::test]
async fn third_party_clients_claim_and_read_tributary() {
    let python = client_python();
    on_every_backend(|server: TestServer| {
        let python = python.clone();
        async move {
            let world = &server.world;
            let giro = format!("ACT-{}", world.alice_imported);
            let token = setup_token(&server, None);

            // Home Assistant's client: claim once; a second claim is refused.
            let claimed = drive(&python, &["claim", &token]).await;
            let access_url = claimed["access_url"].as_str().unwrap().to_owned();
            let again = drive(&python, &["claim", &token]).await;
            assert_eq!(again["error"], "SimpleFinClaimError", "{again}");

            // It reads every account of alice, exact amounts and balances.
            let all = drive(&python, &["read-all", &access_url]).await;
            let accounts = all["accounts"].as_array().unwrap();
            assert_eq!(
                accounts.len(),
                world.alice_sandbox_accounts.len() + 1,
                "{all}"
            );
            assert!(
                !all.to_string()
                    .contains(&format!("\"ACT-{}\"", world.bob_account)),
                "bob's account is not alice's: {all}"
            );
            let giro_read = account(&all, &giro);
            assert_eq!(giro_read["org"], "Credit Union");
            assert_eq!(giro_read["currency"], "EUR");
            assert_eq!(giro_read["balance"], "1000.50");
            assert_eq!(giro_read["available_balance"], "1000.50");
            assert_eq!(giro_read["possible_error"], false);
            assert_exact_amounts(transactions(giro_read));
            assert_eq!(transactions(giro_read)[0]["posted"], epoch("2026-11-01"));

            // pysimplefin with pending=1: the pending payment is there...
            let only_giro = json!({"account": [giro], "pending": true});
            let before = read(&python, &access_url, only_giro.clone()).await;
            let before_giro = account(&before, &giro);
            let pending: Vec<&Value> = transactions(before_giro)
                .iter()
                .filter(|t| t["pending"] == true)
                .collect();
            assert_eq!(pending.len(), 1, "{before}");
            let pending_id = pending[0]["id"].clone();
            // ...and once it posts, the client sees the same id, not a second row.
            post_the_pending_bakery(&server);
            let after = read(&python, &access_url, only_giro).await;
            let after_giro = account(&after, &giro);
            assert_eq!(
                transactions(after_giro).len(),
                transactions(before_giro).len(),
                "{after}"
            );
            let posted: Vec<&Value> = transactions(after_giro)
                .iter()
                .filter(|t| t["id"] == pending_id)
                .collect();
            assert_eq!(posted.len(), 1, "{after}");
            assert_eq!(posted[0]["pending"], false);
            assert_eq!(posted[0]["amount"], "-42.10");

            // balances-only: every account, balances, no transactions.
            let balances = read(&python, &access_url, json!({"balances_only": true})).await;
            assert_eq!(
                balances["accounts"].as_array().unwrap().len(),
                accounts.len()
            );
            assert!(
                balances["accounts"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .all(|a| transactions(a).is_empty()),
                "{balances}"
            );
            assert_eq!(account(&balances, &giro)["balance"], "1000.50");

            // account= names alice's account and bob's: only alice's answers.
            let filtered = read(
                &python,
                &access_url,
                json!({"account": [giro, format!("ACT-{}", world.bob_account)]}),
            )
            .await;
            let ids: Vec<&Value> = filtered["accounts"]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| &a["id"])
                .collect();
            assert_eq!(ids, [&json!(giro)], "{filtered}");

            // A date window: start inclusive, end exclusive.
            let window = read(
                &python,
                &access_url,
                json!({
                    "account": [giro],
                    "start": epoch("2026-11-02"),
                    "end": epoch("2026-11-03"),
                }),
            )
            .await;
            let in_window = transactions(account(&window, &giro));
            assert_eq!(in_window.len(), 1, "{window}");
            assert_eq!(in_window[0]["posted"], epoch("2026-11-02"));
            assert_eq!(in_window[0]["amount"], "-0.10");

            // Revoked: both clients are refused.
            revoke_all(&server);
            let refused = drive(&python, &["read-all", &access_url]).await;
            assert_eq!(refused["error"], "SimpleFinAuthError", "{refused}");
            let refused = read(&python, &access_url, json!({})).await;
            assert_eq!(refused["status"], 403, "{refused}");
            server
        }
    })
    .await;
}

/// Days before the server's today of the long history's rows, and their
/// amounts (unique in the world, so they are found in any account).
const HISTORY: [(u64, &str); 4] = [
    (399, "-399.39"),
    (200, "-200.39"),
    (95, "-95.39"),
    (10, "-10.39"),
];

/// Imports alice's long history (a CSV statement) as of the server's clock.
fn import_long_history(server: &TestServer) -> chrono::NaiveDate {
    use tributary_domain::clock::Clock;
    let now = server.clock.now();
    let today = now.date_naive();
    let rows: String = HISTORY
        .iter()
        .map(|(days, amount)| format!("{},Old rent,{amount}\n", today - chrono::Days::new(*days)))
        .collect();
    let csv = format!("Date,Description,Amount\n{rows}");
    let statements = tributary_providers::import::parse(csv.as_bytes(), None).unwrap();
    let conn = &mut *server.database.db().conn().unwrap();
    let alice = tributary_storage::users::find_personal_user(conn, "alice@example.com")
        .unwrap()
        .unwrap()
        .id;
    tributary_providers::import::store(conn, alice, statements, now.naive_utc()).unwrap();
    today
}

/// The long history's amounts a client read, in any account.
fn history_read(read: &Value) -> Vec<String> {
    let wanted: Vec<&str> = HISTORY.iter().map(|(_, amount)| *amount).collect();
    let mut amounts: Vec<String> = read["accounts"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|a| transactions(a).iter())
        .filter_map(|t| t["amount"].as_str())
        .filter(|amount| wanted.contains(amount))
        .map(str::to_owned)
        .collect();
    amounts.sort();
    amounts
}

#[actix_web::test]
async fn a_long_history_is_read_as_far_back_as_asked() {
    let python = client_python();
    on_every_backend(|server: TestServer| {
        let python = python.clone();
        async move {
            let today = import_long_history(&server);
            let since = |days: u64| {
                (today - chrono::Days::new(days))
                    .and_time(chrono::NaiveTime::MIN)
                    .and_utc()
                    .timestamp()
            };
            let token = setup_token(&server, None);
            let claimed = drive(&python, &["claim", &token]).await;
            let access_url = claimed["access_url"].as_str().unwrap().to_owned();
            let everything = ["-10.39", "-200.39", "-399.39", "-95.39"];

            // 400 days asked, 400 days answered, without a warning.
            let start = since(400).to_string();
            let all = drive(&python, &["read-all", &access_url, &start]).await;
            assert_eq!(history_read(&all), everything, "{all}");
            assert!(!all["errors"].to_string().contains("capped"), "{all}");
            let all = read(&python, &access_url, json!({"start": since(400)})).await;
            assert_eq!(history_read(&all), everything, "{all}");
            assert_eq!(all["warnings"], json!([]), "{all}");
            // A window starting 300 days back leaves out what is older.
            let part = read(&python, &access_url, json!({"start": since(300)})).await;
            assert_eq!(
                history_read(&part),
                ["-10.39", "-200.39", "-95.39"],
                "{part}"
            );
            // Without start-date: the last 90 days, as the Bridge sends.
            let recent = drive(&python, &["read-all", &access_url]).await;
            assert_eq!(history_read(&recent), ["-10.39"], "{recent}");
            server
        }
    })
    .await;
}
